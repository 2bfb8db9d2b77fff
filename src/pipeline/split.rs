//! Splitting a recording at each reset into parts that play on their own, as NanoVer's
//! `nanover-split-recording` does (spec nanover-zip §12).

use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::{Composition, Folded, Header, Nanos, Record, Value};

/// Group of the records that open a part (its reset frame and the full state).
const OPENING_GROUP: u64 = u64::MAX - 1;

/// Opens the sink of part `k`.
type OpenPart<'a> = Box<dyn FnMut(usize) -> Result<Box<dyn Sink + 'a>, WriteError> + 'a>;

/// A sink that writes part `k` through `open(k)`: part 0 holds what comes before the
/// first reset (unchanged, and only if there is anything); part k starts at the k-th
/// reset with that reset's frame and the full state at that moment, at time 0, and the
/// following records rebased by the reset's time.
pub struct SplitAtResets<'a> {
    open: OpenPart<'a>,
    compositions: Vec<Composition>,
    channel_names: Vec<String>,
    state: Vec<Folded>,
    current: Option<Box<dyn Sink + 'a>>,
    resets: usize,
    base: Nanos,
    /// A reset waiting for the other parts of its message.
    opening: Option<(Record, Vec<Record>)>,
    report: WriteReport,
}

impl<'a> SplitAtResets<'a> {
    pub fn new(
        header: &Header,
        open: impl FnMut(usize) -> Result<Box<dyn Sink + 'a>, WriteError> + 'a,
    ) -> SplitAtResets<'a> {
        SplitAtResets {
            open: Box::new(open),
            compositions: header.channels.iter().map(|c| c.composition).collect(),
            channel_names: header.channels.iter().map(|c| c.name.clone()).collect(),
            state: vec![Folded::default(); header.channels.len()],
            current: None,
            resets: 0,
            base: 0,
            opening: None,
            report: WriteReport::default(),
        }
    }

    fn composition(&self, r: &Record) -> Option<Composition> {
        self.compositions.get(r.channel as usize).copied()
    }

    fn close(&mut self) -> Result<(), WriteError> {
        if let Some(sink) = self.current.take() {
            let r = sink.finish()?;
            self.report.records += r.records;
            self.report.verbatim += r.verbatim;
            self.report.loss.merge(&r.loss);
        }
        Ok(())
    }

    fn start(&mut self, part: usize) -> Result<(), WriteError> {
        self.close()?;
        self.current = Some((self.open)(part)?);
        Ok(())
    }

    fn emit(&mut self, mut record: Record) -> Result<(), WriteError> {
        if self.current.is_none() {
            self.start(0)?;
        }
        record.time -= self.base;
        match &mut self.current {
            Some(sink) => sink.write(&record),
            None => Ok(()),
        }
    }

    /// Writes the reset and the full state (folded before it, then its own message's state
    /// part applied) as one group at time 0.
    fn flush_opening(&mut self) -> Result<(), WriteError> {
        let Some((mut reset, extras)) = self.opening.take() else {
            return Ok(());
        };
        let mut own: Vec<Record> = Vec::new();
        let mut later: Vec<Record> = Vec::new();
        for r in extras {
            match self.composition(&r) {
                Some(Composition::StateDelta) => own.push(r),
                Some(Composition::Independent) => {
                    let channel = self.channel_names[r.channel as usize].clone();
                    self.report.loss.add(
                        &channel,
                        "*",
                        "part of a reset message: not carried into the opening of its split part",
                    );
                }
                _ => later.push(r),
            }
        }
        let states: Vec<usize> = (0..self.compositions.len())
            .filter(|&c| self.compositions[c] == Composition::StateDelta)
            .collect();
        let group = (!states.is_empty()).then_some(OPENING_GROUP);
        reset.group = group;
        let reset_time = reset.time;
        self.emit(reset)?;
        for c in states {
            let mut removals = Vec::new();
            for r in own.iter().filter(|r| r.channel as usize == c) {
                removals.extend(
                    r.values
                        .iter()
                        .filter(|(_, v)| *v == Value::Removed)
                        .map(|(k, _)| k.clone()),
                );
                self.state[c].apply(Composition::StateDelta, r);
            }
            let mut record = Record::new(reset_time, c as u32);
            record.values = self.state[c].fields();
            record
                .values
                .extend(removals.into_iter().map(|k| (k, Value::Removed)));
            record.group = group;
            self.emit(record)?;
        }
        for r in later {
            self.emit(r)?;
        }
        Ok(())
    }
}

impl Sink for SplitAtResets<'_> {
    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        if let Some((reset, extras)) = &mut self.opening {
            if record.group.is_some() && record.group == reset.group && record.time == reset.time {
                extras.push(record.clone());
                return Ok(());
            }
            self.flush_opening()?;
        }
        match self.composition(record) {
            Some(Composition::FrameDelta) if record.frame == Some(0) => {
                self.resets += 1;
                self.start(self.resets)?;
                self.base = record.time;
                self.opening = Some((record.clone(), Vec::new()));
                Ok(())
            }
            Some(Composition::StateDelta) => {
                self.state[record.channel as usize].apply(Composition::StateDelta, record);
                self.emit(record.clone())
            }
            _ => self.emit(record.clone()),
        }
    }

    fn finish(mut self: Box<Self>) -> Result<WriteReport, WriteError> {
        self.flush_opening()?;
        self.close()?;
        Ok(std::mem::take(&mut self.report))
    }
}
