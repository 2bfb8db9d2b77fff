//! Rules over the sequence of records (spec §9, "Time" and "Content"): checked as the
//! reader goes, with state bounded by the number of keys, never by the file length.

use std::collections::BTreeSet;

use super::codes::*;
use super::Stream;
use crate::model::{Field, Value};
use crate::report::{Finding, Findings, Severity};

/// Upstream's plausibility limit between consecutive records.
const JUMP_LIMIT_US: u64 = 120_000_000;

/// Counts that must agree in the aggregate frame: (count key, array whose rows it counts).
const COUNTS: [(&str, &str); 3] = [
    ("particle.count", "particle.positions"),
    ("residue.count", "residue.names"),
    ("chain.count", "chain.names"),
];

pub struct StreamChecker {
    stream: Stream,
    previous_ts: Option<u64>,
    /// Last non-zero frame index since the last reset.
    previous_frame: Option<u32>,
    /// Aggregate of the count keys and their arrays' lengths: (count, length).
    counts: [(Option<f64>, Option<usize>); 3],
    state_keys: BTreeSet<String>,
}

impl StreamChecker {
    pub fn new(stream: Stream) -> StreamChecker {
        StreamChecker {
            stream,
            previous_ts: None,
            previous_frame: None,
            counts: [(None, None); 3],
            state_keys: BTreeSet::new(),
        }
    }

    /// Checks one record; `fields` is `None` when payloads are not decoded.
    pub fn observe(
        &mut self,
        offset: u64,
        index: u64,
        ts: u64,
        frame: Option<u32>,
        fields: Option<&[Field]>,
        out: &mut Findings,
    ) {
        let at = |f: Finding| f.at(offset, index);
        if let Some(prev) = self.previous_ts {
            if ts < prev {
                out.push(at(Finding::new(
                    Severity::Warning,
                    TIMESTAMP_DECREASE,
                    format!("timestamp {ts} µs is lower than the previous record's {prev} µs"),
                )
                .hint(
                    "records keep file order; `simrec recover` never drops them for their time",
                )));
            } else if ts == prev {
                out.push(at(Finding::new(
                    Severity::Info,
                    TIMESTAMP_TIE,
                    format!("timestamp {ts} µs equals the previous record's"),
                )));
            } else if ts - prev > JUMP_LIMIT_US {
                out.push(at(Finding::new(
                    Severity::Warning,
                    TIMESTAMP_JUMP,
                    format!(
                        "timestamp jumps {:.3} s after the previous record (more than 120 s)",
                        (ts - prev) as f64 / 1e6
                    ),
                )));
            }
        } else if self.stream == Stream::Frames && frame != Some(0) {
            out.push(at(Finding::new(
                Severity::Info,
                FIRST_FRAME_NOT_RESET,
                format!("the first frame has frame_index {} (a recorder that joined a running server); read as a reset", frame.unwrap_or(0)),
            )));
        }
        self.previous_ts = Some(ts);
        match self.stream {
            Stream::Frames => self.frame(frame, fields, out, at),
            Stream::State => self.state(fields, out, at),
        }
    }

    fn frame(
        &mut self,
        frame: Option<u32>,
        fields: Option<&[Field]>,
        out: &mut Findings,
        at: impl Fn(Finding) -> Finding,
    ) {
        let frame = frame.unwrap_or(0);
        let reset = frame == 0;
        if reset {
            self.previous_frame = None;
            self.counts = [(None, None); 3];
        } else {
            if let Some(prev) = self.previous_frame {
                if frame < prev {
                    out.push(at(Finding::new(
                        Severity::Warning,
                        FRAME_INDEX_DECREASE,
                        format!("frame_index {frame} is lower than the previous {prev} with no reset in between"),
                    )));
                }
            }
            self.previous_frame = Some(frame);
        }
        let Some(fields) = fields else { return };
        let mut touched = reset;
        for (key, value) in fields {
            for (slot, (count_key, array_key)) in self.counts.iter_mut().zip(COUNTS) {
                if key == count_key {
                    slot.0 = match value {
                        Value::Float(n) => Some(*n),
                        _ => None,
                    };
                    touched = true;
                } else if key == array_key {
                    // Rows: particles for [N,3] positions, names for 1-D arrays.
                    slot.1 = match value {
                        Value::Array(a) => a.shape.first().copied(),
                        _ => None,
                    };
                    touched = true;
                }
            }
        }
        if !touched {
            return;
        }
        for ((count, len), (count_key, array_key)) in self.counts.iter().zip(COUNTS) {
            if let (Some(c), Some(n)) = (count, len) {
                if *c != *n as f64 {
                    out.push(at(Finding::new(
                        Severity::Warning,
                        COUNT_MISMATCH,
                        format!("`{count_key}` is {c} but `{array_key}` has {n}"),
                    )));
                }
            }
        }
    }

    fn state(
        &mut self,
        fields: Option<&[Field]>,
        out: &mut Findings,
        at: impl Fn(Finding) -> Finding,
    ) {
        let Some(fields) = fields else { return };
        for (key, value) in fields {
            if *value == Value::Removed {
                if !self.state_keys.remove(key) {
                    out.push(at(Finding::new(
                        Severity::Info,
                        REMOVE_ABSENT,
                        format!("removal of `{key}`, which is not in the state"),
                    )));
                }
            } else if !self.state_keys.contains(key) {
                self.state_keys.insert(key.clone());
            }
        }
    }
}
