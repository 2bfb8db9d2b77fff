//! Merging `.icarec` recordings (spec §A14): the two kinds the profile allows, and nothing
//! else.
//!
//! - **Continuation** (a warm start: run A, then run B from A's state): the schemas'
//!   checksums are equal; A's frames come first, then B's, which must start after A's last
//!   frame. Static signals are A's (B's are compared with them and a difference reported).
//! - **Union of signals**: disjoint signal names, identical frame times (bit for bit); each
//!   frame holds A's signals, then B's.

use std::path::{Path, PathBuf};

use super::reader::IcarecReader;
use crate::formats::{ReadError, ReadOptions, Source};
use crate::model::{ChannelId, Header, Record, Value};
use crate::report::{Finding, Findings, Severity};

pub const MERGE_STATIC_DIFFERS: &str = "ICAREC_MERGE_STATIC_DIFFERS";

pub fn open(paths: &[PathBuf], options: ReadOptions) -> Result<Box<dyn Source>, ReadError> {
    let readers = paths
        .iter()
        .map(|p| IcarecReader::open(p, options))
        .collect::<Result<Vec<_>, _>>()?;
    let checksums: Vec<&str> = readers
        .iter()
        .map(|r| r.schema.checksum.computed.as_str())
        .collect();
    if checksums.iter().all(|c| *c == checksums[0]) {
        return Ok(Box::new(Continuation::new(paths, readers)?));
    }
    let mut shared = Vec::new();
    for (i, a) in readers.iter().enumerate() {
        for b in &readers[i + 1..] {
            shared.extend(
                (a.schema.signals.iter())
                    .filter(|s| b.schema.signals.iter().any(|t| t.name == s.name))
                    .map(|s| s.name.clone()),
            );
        }
    }
    if shared.is_empty() {
        return Ok(Box::new(Union::new(paths, readers)?));
    }
    shared.dedup();
    Err(ReadError::family_conflict(
        MergeConflict::SchemasShareSignals {
            paths: [paths[0].clone(), paths[1].clone()],
            checksums: [checksums[0].to_string(), checksums[1].to_string()],
            shared,
        },
    ))
}

/// Inputs read one after another.
struct Continuation {
    readers: Vec<IcarecReader>,
    /// Added to each input's times: where its time zero lies on the first input's axis.
    shifts: Vec<i64>,
    current: usize,
    header: Header,
    /// Added to the frame values of the current input (the frames before it).
    frame_offset: i64,
    next_offset: i64,
    /// Static signals' values from the first input, by channel.
    statics: Vec<Option<Value>>,
    findings: Findings,
    path: PathBuf,
}

impl Continuation {
    fn new(paths: &[PathBuf], mut readers: Vec<IcarecReader>) -> Result<Continuation, ReadError> {
        let header = readers[0].header().clone();
        let shifts = shifts(paths, &readers)?;
        let mut previous: Option<(usize, i64)> = None;
        for (i, r) in readers.iter_mut().enumerate() {
            let Some((first, last)) = r.time_span()? else {
                continue;
            };
            let (first, last) = (first + shifts[i], last + shifts[i]);
            if let Some((p, p_last)) = previous {
                if p_last >= first {
                    return Err(ReadError::family_conflict(MergeConflict::NotAfter {
                        path: paths[i].clone(),
                        continues: paths[p].clone(),
                        first,
                        previous_last: p_last,
                    }));
                }
            }
            previous = Some((i, last));
        }
        let channels = header.channels.len();
        Ok(Continuation {
            readers,
            shifts,
            current: 0,
            header,
            frame_offset: 0,
            next_offset: 0,
            statics: vec![None; channels],
            findings: Findings::default(),
            path: paths[0].clone(),
        })
    }

    fn is_static(&self, channel: ChannelId) -> bool {
        (self.header.channels.get(channel as usize))
            .and_then(|c| c.fields.first())
            .is_some_and(|f| f.is_static)
    }
}

impl Iterator for Continuation {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let reader = self.readers.get_mut(self.current)?;
            let Some(item) = reader.next() else {
                self.current += 1;
                self.frame_offset = self.next_offset;
                continue;
            };
            let mut record = match item {
                Ok(r) => r,
                Err(e) => return Some(Err(e)),
            };
            let shift = self.shifts[self.current];
            if shift != 0 {
                record.time += shift;
                // The frame's bytes hold the time on the input's own axis.
                record.raw = None;
            }
            if let Some(f) = record.frame {
                self.next_offset = self.next_offset.max(self.frame_offset + f + 1);
                record.frame = Some(self.frame_offset + f);
            }
            if self.is_static(record.channel) {
                let slot = &mut self.statics[record.channel as usize];
                let value = record.values.first().map(|(_, v)| v.clone());
                if self.current == 0 {
                    *slot = value;
                } else {
                    if *slot != value {
                        let name = &self.header.channels[record.channel as usize].name;
                        self.findings.push(Finding::new(
                            Severity::Warning,
                            MERGE_STATIC_DIFFERS,
                            format!(
                                "static signal {name} differs in input {}: the first input's \
                                 value is kept",
                                self.current + 1
                            ),
                        ));
                    }
                    self.readers[self.current].recycle(record);
                    continue;
                }
            }
            return Some(Ok(record));
        }
    }
}

impl Source for Continuation {
    fn header(&self) -> &Header {
        &self.header
    }
    fn findings(&self) -> Vec<(&Path, &Findings)> {
        let mut all: Vec<(&Path, &Findings)> =
            self.readers.iter().flat_map(|r| r.findings()).collect();
        all.push((self.path.as_path(), &self.findings));
        all
    }
    fn progress(&self) -> (u64, u64) {
        sum_progress(&self.readers)
    }
}

/// Inputs read side by side, frame by frame.
struct Union {
    readers: Vec<IcarecReader>,
    shifts: Vec<i64>,
    header: Header,
    /// First merged channel id of each input.
    offsets: Vec<ChannelId>,
    /// The next record of each input, read ahead.
    heads: Vec<Option<Record>>,
    /// The frame being emitted (time), and which input is emitting.
    frame_time: Option<i64>,
    input: usize,
    paths: Vec<PathBuf>,
    started: bool,
}

impl Union {
    fn new(paths: &[PathBuf], readers: Vec<IcarecReader>) -> Result<Union, ReadError> {
        let shifts = shifts(paths, &readers)?;
        let mut header = readers[0].header().clone();
        let mut offsets = Vec::with_capacity(readers.len());
        for (i, r) in readers.iter().enumerate() {
            offsets.push(if i == 0 {
                0
            } else {
                header.channels.len() as ChannelId
            });
            if i > 0 {
                header.channels.extend(r.header().channels.iter().cloned());
            }
        }
        Ok(Union {
            heads: (0..readers.len()).map(|_| None).collect(),
            readers,
            shifts,
            header,
            offsets,
            frame_time: None,
            input: 0,
            paths: paths.to_vec(),
            started: false,
        })
    }

    fn pull(&mut self, i: usize) -> Result<(), ReadError> {
        self.heads[i] = self.readers[i].next().transpose()?;
        if let Some(r) = &mut self.heads[i] {
            r.time += self.shifts[i];
        }
        Ok(())
    }
}

impl Iterator for Union {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if !self.started {
            self.started = true;
            for i in 0..self.readers.len() {
                if let Err(e) = self.pull(i) {
                    return Some(Err(e));
                }
            }
        }
        loop {
            // A frame: the first input's records at its time, then each other input's.
            let time = match self.frame_time {
                Some(t) => t,
                None => {
                    let first = self.heads[0].as_ref().map(|r| r.time);
                    for i in 1..self.heads.len() {
                        let other = self.heads[i].as_ref().map(|r| r.time);
                        if other != first {
                            return Some(Err(ReadError::family_conflict(
                                MergeConflict::FrameTimes {
                                    paths: [self.paths[0].clone(), self.paths[i].clone()],
                                    first,
                                    other,
                                },
                            )));
                        }
                    }
                    let t = first?;
                    self.frame_time = Some(t);
                    self.input = 0;
                    t
                }
            };
            let i = self.input;
            match self.heads[i].take() {
                Some(mut record) if record.time == time => {
                    if let Err(e) = self.pull(i) {
                        return Some(Err(e));
                    }
                    record.channel += self.offsets[i];
                    // The merged layout is not any input's: their bytes do not fit it.
                    record.raw = None;
                    return Some(Ok(record));
                }
                head => {
                    self.heads[i] = head;
                    self.input += 1;
                    if self.input == self.readers.len() {
                        self.frame_time = None;
                    }
                }
            }
        }
    }
}

impl Source for Union {
    fn header(&self) -> &Header {
        &self.header
    }
    fn findings(&self) -> Vec<(&Path, &Findings)> {
        self.readers.iter().flat_map(|r| r.findings()).collect()
    }
    fn progress(&self) -> (u64, u64) {
        sum_progress(&self.readers)
    }
}

/// Where each input's time zero lies on the first input's time axis: the same origin, or
/// epochs in one time system (spec §A8); anything else cannot be lined up.
fn shifts(paths: &[PathBuf], readers: &[IcarecReader]) -> Result<Vec<i64>, ReadError> {
    let first = &readers[0].header().origin;
    readers
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let origin = &r.header().origin;
            if origin == first {
                return Ok(0);
            }
            match (first.epoch, origin.epoch) {
                (Some(a), Some(b)) if origin.system == first.system => {
                    Ok(b.unix_ns.saturating_sub(a.unix_ns))
                }
                _ => Err(ReadError::family_conflict(MergeConflict::Origins([
                    paths[0].clone(),
                    paths[i].clone(),
                ]))),
            }
        })
        .collect()
}

fn sum_progress(readers: &[IcarecReader]) -> (u64, u64) {
    readers
        .iter()
        .map(|r| r.progress())
        .fold((0, 0), |(a, b), (c, d)| (a + c, b + d))
}

/// Why .icarec inputs cannot be merged.
#[derive(Debug, thiserror::Error)]
enum MergeConflict {
    #[error(
        "{} and {} cannot be merged: their schemas differ ({} and {}) and they share signals \
         ({}); a continuation needs the same schema, a union disjoint signals",
        paths[0].display(), paths[1].display(), checksums[0], checksums[1], shared.join(", ")
    )]
    SchemasShareSignals {
        paths: [PathBuf; 2],
        checksums: [String; 2],
        shared: Vec<String>,
    },
    /// A continuation's input starts at `first`, not after `previous_last` of the one it
    /// continues.
    #[error(
        "{} continues {} but starts at {} s, not after its last frame at {} s; cut the first \
         with `simrec slice --end` before merging",
        path.display(), continues.display(), as_seconds(*first), as_seconds(*previous_last)
    )]
    NotAfter {
        path: PathBuf,
        continues: PathBuf,
        first: i64,
        previous_last: i64,
    },
    /// A union's inputs have frames at different times (`None`: the input has ended).
    #[error(
        "{} and {} cannot be merged as a union of signals: their frame times differ ({} \
         against {})",
        paths[0].display(), paths[1].display(), frame_time(*first), frame_time(*other)
    )]
    FrameTimes {
        paths: [PathBuf; 2],
        first: Option<i64>,
        other: Option<i64>,
    },
    #[error(
        "{} and {} cannot be lined up in time: their origins differ and are not two epochs in \
         one time system",
        .0[0].display(), .0[1].display()
    )]
    Origins([PathBuf; 2]),
}

/// Nanoseconds as the merge's messages say them: plain seconds, as many digits as needed.
fn as_seconds(ns: i64) -> f64 {
    ns as f64 / 1e9
}

fn frame_time(t: Option<i64>) -> String {
    t.map_or("the end".into(), |t| format!("{} s", as_seconds(t)))
}
