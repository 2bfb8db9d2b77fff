//! k-way merge of several sources into one timeline, one buffered record per input.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::path::Path;

use crate::formats::{Conflict, ReadError, Source, Unreadable};
use crate::model::{Channel, ChannelId, Composition, Epoch, Header, Nanos, Record};
use crate::report::Findings;

/// Order of channels on equal times: a frame before the state that goes with it.
fn tie_rank(composition: Composition) -> u8 {
    match composition {
        Composition::FrameDelta => 0,
        Composition::StateDelta => 1,
        Composition::SampleHold | Composition::Independent => 2,
    }
}

/// The merged id of an input's channel: the channel of the same name and composition,
/// added when there is none.
fn merged_id(header: &mut Header, c: &Channel) -> ChannelId {
    match header.channel_id(&c.name) {
        Some(id) if header.channels[id as usize].composition == c.composition => id,
        _ => header.add_channel(c.clone()),
    }
}

struct Input {
    source: Box<dyn Source>,
    /// Added to each record's time: where this input's time zero lies on the merged axis.
    offset: Nanos,
    /// Merged channel id of each of this input's channels.
    channels: Vec<ChannelId>,
    head: Option<Record>,
}

/// Records of every input in time order; on equal times frame-delta records first, then
/// input order. Within one input, file order is kept even where its times decrease.
///
/// Frame-delta streams of different inputs cannot interleave (their deltas would corrupt
/// each other's aggregates): they are concatenated, the first record of each later input
/// becomes a reset, and an overlap is an error.
pub struct Merged {
    inputs: Vec<Input>,
    header: Header,
    heap: BinaryHeap<Reverse<(Nanos, u8, usize)>>,
    primed: bool,
    /// Input currently writing each frame-delta channel, and the time it started.
    frame_owner: Vec<Option<(usize, Nanos)>>,
    /// (channel, input) pairs whose frames have been followed by another input's.
    frames_closed: HashSet<(ChannelId, usize)>,
}

impl Merged {
    pub fn new(sources: Vec<Box<dyn Source>>) -> Merged {
        let mut header = match sources.first() {
            Some(s) => s.header().clone(),
            None => Header::new("empty", ""),
        };
        header.channels.clear();
        let mut formats: Vec<&str> = Vec::new();
        for s in &sources {
            if !formats.contains(&s.header().format.as_str()) {
                formats.push(&s.header().format);
            }
        }
        header.format = formats.join("+");
        let mut inputs = Vec::new();
        for source in sources {
            let channels = source
                .header()
                .channels
                .iter()
                .map(|c| merged_id(&mut header, c))
                .collect();
            for (k, v) in &source.header().metadata {
                header
                    .metadata
                    .entry(k.clone())
                    .or_insert_with(|| v.clone());
            }
            inputs.push(Input {
                source,
                offset: 0,
                channels,
                head: None,
            });
        }
        let channels = header.channels.len();
        Merged {
            inputs,
            header,
            heap: BinaryHeap::new(),
            primed: false,
            frame_owner: vec![None; channels],
            frames_closed: HashSet::new(),
        }
    }

    /// Like [`Merged::new`], lining the inputs up in time: inputs that all have an epoch are
    /// aligned on it (the merged origin is the earliest; later inputs' times move by the
    /// difference); with `starts`, or when no input has one, every input's time zero is the
    /// same instant. Inputs with and without an epoch are refused unless `starts`.
    pub fn aligned(sources: Vec<Box<dyn Source>>, starts: bool) -> Result<Merged, ReadError> {
        let mut merged = Merged::new(sources);
        let epochs: Vec<Option<Epoch>> = merged
            .inputs
            .iter()
            .map(|i| i.source.header().origin.epoch)
            .collect();
        if starts {
            merged.header.origin.epoch = None;
            merged.header.origin.system = Some("the start of each input".into());
            return Ok(merged);
        }
        if epochs.iter().all(Option::is_none) {
            return Ok(merged);
        }
        if let Some(i) = epochs.iter().position(Option::is_none) {
            let with = epochs.iter().position(Option::is_some).unwrap_or(0);
            return Err(ReadError::Conflict(Conflict::StartMissing {
                with: merged.path(with),
                without: merged.path(i),
            }));
        }
        let earliest = epochs.iter().flatten().min_by_key(|e| e.unix_ns).copied();
        let Some(earliest) = earliest else {
            return Ok(merged);
        };
        // Unix time is UTC without its leap seconds (none since 2016): one clock to line up.
        let systems: Vec<Option<&str>> = merged
            .inputs
            .iter()
            .map(|i| match i.source.header().origin.system.as_deref() {
                Some("unix") => Some("UTC"),
                system => system,
            })
            .collect();
        if systems.iter().any(|s| *s != systems[0]) {
            return Err(ReadError::Conflict(Conflict::TimeSystems(
                systems.iter().map(|s| s.map(str::to_string)).collect(),
            )));
        }
        for (input, epoch) in merged.inputs.iter_mut().zip(&epochs) {
            if let Some(e) = epoch {
                input.offset = e.unix_ns.saturating_sub(earliest.unix_ns);
            }
        }
        merged.header.origin.epoch = Some(earliest);
        Ok(merged)
    }

    /// Reads the next record of input `i` into its head and the heap.
    fn pull(&mut self, i: usize) -> Result<(), ReadError> {
        let input = &mut self.inputs[i];
        match input.source.next().transpose()? {
            Some(mut record) => {
                if record.channel as usize >= input.channels.len() {
                    // Channels the input discovered while reading join the merged header.
                    for c in input
                        .source
                        .header()
                        .channels
                        .get(input.channels.len()..)
                        .unwrap_or_default()
                    {
                        input.channels.push(merged_id(&mut self.header, c));
                    }
                    self.frame_owner.resize(self.header.channels.len(), None);
                }
                let Some(&id) = input.channels.get(record.channel as usize) else {
                    // A reader's fault, not the command line's: an error (exit 1).
                    return Err(ReadError::Unsupported(Unreadable::UndeclaredChannel {
                        input: self.path(i),
                        channel: record.channel,
                    }));
                };
                record.channel = id;
                record.shift_time(input.offset);
                let rank = tie_rank(self.header.channels[record.channel as usize].composition);
                self.heap.push(Reverse((record.time, rank, i)));
                input.head = Some(record);
            }
            None => input.head = None,
        }
        Ok(())
    }

    fn path(&self, i: usize) -> String {
        self.inputs[i]
            .source
            .findings()
            .first()
            .map(|(p, _)| p.display().to_string())
            .unwrap_or_default()
    }

    fn advance(&mut self) -> Result<Option<Record>, ReadError> {
        if !self.primed {
            self.primed = true;
            for i in 0..self.inputs.len() {
                self.pull(i)?;
            }
        }
        let Some(Reverse((_, _, i))) = self.heap.pop() else {
            return Ok(None);
        };
        let Some(mut record) = self.inputs[i].head.take() else {
            return Ok(None);
        };
        self.pull(i)?;
        let c = record.channel;
        if self.header.channels[c as usize].composition == Composition::FrameDelta {
            if self.frames_closed.contains(&(c, i)) {
                let (owner, since) = self.frame_owner[c as usize].unwrap_or((i, record.time));
                return Err(ReadError::Conflict(Conflict::FramesOverlap {
                    owner: self.path(owner),
                    since,
                    other: self.path(i),
                    at: record.time,
                }));
            }
            match self.frame_owner[c as usize] {
                Some((owner, _)) if owner != i => {
                    self.frames_closed.insert((c, owner));
                    self.frame_owner[c as usize] = Some((i, record.time));
                    if record.frame != Some(0) {
                        record.frame = Some(0);
                        record.raw = None;
                    }
                }
                None => self.frame_owner[c as usize] = Some((i, record.time)),
                Some(_) => {}
            }
        }
        Ok(Some(record))
    }
}

impl Iterator for Merged {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.advance().transpose()
    }
}

impl Source for Merged {
    fn header(&self) -> &Header {
        &self.header
    }

    fn findings(&self) -> Vec<(&Path, &Findings)> {
        self.inputs
            .iter()
            .flat_map(|i| i.source.findings())
            .collect()
    }

    fn progress(&self) -> (u64, u64) {
        self.inputs.iter().fold((0, 0), |(d, t), i| {
            let (a, b) = i.source.progress();
            (d + a, t + b)
        })
    }

    fn select_channels(&mut self, wanted: &[bool]) {
        for input in &mut self.inputs {
            let own: Vec<bool> = input
                .channels
                .iter()
                .map(|&id| wanted.get(id as usize).copied().unwrap_or(true))
                .collect();
            input.source.select_channels(&own);
        }
    }
}
