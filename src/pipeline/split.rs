//! Splitting a recording at each reset into parts that play on their own, as NanoVer's
//! `nanover-split-recording` does (spec nanover-zip §12).

use std::collections::{BTreeMap, HashMap};

use crate::formats::nanover::zip::RAW_FORMAT as NANOVER_ZIP;
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::{
    Channel, ChannelKind, Composition, Context, Field, Header, Nanos, Record, Value,
};

/// Group of the records that open a part (its reset frame and the full state).
const OPENING_GROUP: u64 = u64::MAX - 1;

/// Opens the sink of part `k`, whose records follow the header given.
type OpenPart<'a> = Box<dyn FnMut(usize, &Header) -> Result<Box<dyn Sink + 'a>, WriteError> + 'a>;

/// A state in the order upstream's `StateDictionary` (a Python dict) keeps it: an updated
/// key keeps its place, a new or re-added key goes last. The opening of a part lists the
/// state in this order, so that it is byte-identical to upstream's.
#[derive(Default)]
struct OrderedState {
    order: BTreeMap<u64, String>,
    values: HashMap<String, (u64, Value)>,
    next: u64,
}

impl OrderedState {
    fn apply(&mut self, fields: &[Field]) {
        for (key, value) in fields {
            if *value == Value::Removed {
                if let Some((seq, _)) = self.values.remove(key) {
                    self.order.remove(&seq);
                }
            } else if let Some((_, v)) = self.values.get_mut(key) {
                *v = value.clone();
            } else {
                self.order.insert(self.next, key.clone());
                self.values.insert(key.clone(), (self.next, value.clone()));
                self.next += 1;
            }
        }
    }

    fn fields(&self) -> Vec<Field> {
        self.order
            .values()
            .filter_map(|k| Some((k.clone(), self.values.get(k)?.1.clone())))
            .collect()
    }
}

/// A sink that writes part `k` through `open(k, header)`: part 0 holds what comes before
/// the first reset (only if there is anything); part k starts at the k-th reset with that
/// reset's frame and the full state at that moment, as one message at time 0, and the
/// following records rebased by the reset's time.
///
/// Two choices follow upstream, which re-packs every message it copies:
/// - the opening always has a state part, empty when there is no state, so a
///   `.nanover.zip` recording without a state channel gets one (`state`) in the parts'
///   header;
/// - `.nanover.zip` messages lose their original bytes, so the writer encodes them as
///   upstream re-packs them (list-encoded arrays of the known keys become binary, forced
///   integers become integers). Other formats' records keep their bytes.
pub struct SplitAtResets<'a> {
    open: OpenPart<'a>,
    header: Header,
    compositions: Vec<Composition>,
    channel_names: Vec<String>,
    state: Vec<OrderedState>,
    /// Values of sample-and-hold channels, carried into the opening of each part.
    held: Context,
    current: Option<Box<dyn Sink + 'a>>,
    resets: usize,
    base: Nanos,
    /// A reset waiting for the other parts of its message.
    opening: Option<(Record, Vec<Record>)>,
    report: WriteReport,
}

/// `header`, plus a `state` channel when it is a `.nanover.zip` recording without one
/// (upstream's reader starts every recording with an empty state; a legacy `.traj` read
/// alone keeps writing parts without a `.state`).
fn part_header(header: &Header) -> Header {
    let mut h = header.clone();
    let has = |c: Composition| h.channels.iter().any(|ch| ch.composition == c);
    if h.format == NANOVER_ZIP
        && has(Composition::FrameDelta)
        && !has(Composition::StateDelta)
        && h.channel_id("state").is_none()
    {
        h.add_channel(Channel::new(
            "state",
            ChannelKind::Signals,
            Composition::StateDelta,
        ));
    }
    h
}

impl<'a> SplitAtResets<'a> {
    pub fn new(
        header: &Header,
        open: impl FnMut(usize, &Header) -> Result<Box<dyn Sink + 'a>, WriteError> + 'a,
    ) -> SplitAtResets<'a> {
        let header = part_header(header);
        SplitAtResets {
            open: Box::new(open),
            compositions: header.channels.iter().map(|c| c.composition).collect(),
            channel_names: header.channels.iter().map(|c| c.name.clone()).collect(),
            state: header
                .channels
                .iter()
                .map(|_| OrderedState::default())
                .collect(),
            held: Context::default(),
            header,
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
            self.report.warnings.extend(r.warnings);
        }
        Ok(())
    }

    /// Opens part `part`, whose times count from `base` (its origin, and epoch, moved there).
    fn start(&mut self, part: usize, base: Nanos) -> Result<(), WriteError> {
        self.close()?;
        self.base = base;
        let mut header = self.header.clone();
        header.origin = header.origin.shifted(base);
        self.current = Some((self.open)(part, &header)?);
        Ok(())
    }

    fn emit(&mut self, mut record: Record) -> Result<(), WriteError> {
        if self.current.is_none() {
            self.start(0, 0)?;
        }
        record.shift_time(-self.base);
        if record.raw.as_ref().is_some_and(|r| r.format == NANOVER_ZIP) {
            record.raw = None;
        }
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
                self.state[c].apply(&r.values);
            }
            let mut record = Record::new(reset_time, c as u32);
            record.values = self.state[c].fields();
            record
                .values
                .extend(removals.into_iter().map(|k| (k, Value::Removed)));
            record.group = group;
            self.emit(record)?;
        }
        for mut r in self.held.records(&self.header, reset_time, |_, _| false) {
            r.group = group;
            self.emit(r)?;
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
                self.start(self.resets, record.time)?;
                self.opening = Some((record.clone(), Vec::new()));
                Ok(())
            }
            Some(Composition::StateDelta) => {
                if let Some(state) = self.state.get_mut(record.channel as usize) {
                    state.apply(&record.values);
                }
                self.emit(record.clone())
            }
            Some(Composition::SampleHold) => {
                self.held.apply(&self.header, record);
                self.emit(record.clone())
            }
            _ => self.emit(record.clone()),
        }
    }

    fn add_channel(&mut self, channel: &Channel) -> Result<(), WriteError> {
        self.header.add_channel(channel.clone());
        self.compositions.push(channel.composition);
        self.channel_names.push(channel.name.clone());
        self.state.push(OrderedState::default());
        match &mut self.current {
            Some(sink) => sink.add_channel(channel),
            None => Ok(()),
        }
    }

    fn finish(mut self: Box<Self>) -> Result<WriteReport, WriteError> {
        self.flush_opening()?;
        self.close()?;
        Ok(std::mem::take(&mut self.report))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_order_is_a_python_dicts() {
        let mut s = OrderedState::default();
        let f = |k: &str, v: Value| (k.to_string(), v);
        s.apply(&[
            f("b", Value::Int(1)),
            f("a", Value::Int(2)),
            f("c", Value::Int(3)),
        ]);
        s.apply(&[f("a", Value::Int(4)), f("b", Value::Removed)]);
        s.apply(&[f("b", Value::Int(5)), f("z", Value::Removed)]);
        assert_eq!(
            s.fields(),
            vec![
                f("a", Value::Int(4)),
                f("c", Value::Int(3)),
                f("b", Value::Int(5))
            ]
        );
    }
}
