//! Time windows `[start, end)` that carry their context: a slice that starts mid-recording
//! begins with the folded frame and the folded state at its start, so it plays on its own.

use std::collections::VecDeque;
use std::path::Path;

use crate::formats::{Conflict, ReadError, Source};
use crate::model::time::{outside, unordered_span};
use crate::model::{Composition, Context, Header, Nanos, Record, Seconds, TimeSpec};
use crate::report::Findings;

use super::frames::FrameCounter;

/// Group of the context records that open a window.
pub use crate::model::CONTEXT_GROUP;

/// A window resolved to times on the recording's axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: Nanos,
    pub end: Option<Nanos>,
}

/// Resolves time flags against a recording, walking it once (headers only) when a flag
/// needs frame times or the end. `#N` is the time of the frame at position N
/// ([`FrameCounter`]); `-5s` is 5 s before the last record.
pub fn resolve(
    start: Option<TimeSpec>,
    end: Option<TimeSpec>,
    walk: impl FnOnce() -> Result<Box<dyn Source>, ReadError>,
) -> Result<Span, ReadError> {
    let needs_walk =
        |s: &Option<TimeSpec>| matches!(s, Some(TimeSpec::Frame(_)) | Some(TimeSpec::FromEnd(_)));
    let mut frames: Vec<u64> = [start, end]
        .iter()
        .filter_map(|s| match s {
            Some(TimeSpec::Frame(n)) => Some(*n),
            _ => None,
        })
        .collect();
    frames.sort_unstable();
    let mut frame_times: Vec<(u64, Nanos)> = Vec::new();
    let mut last: Option<Nanos> = None;
    let mut counter = FrameCounter::default();
    if needs_walk(&start) || needs_walk(&end) {
        for record in walk()? {
            let record = record?;
            last = Some(last.map_or(record.time, |l| l.max(record.time)));
            let before = counter.frames();
            if let Some(n) = counter.observe(&record) {
                if counter.frames() > before && frames.contains(&n) {
                    frame_times.push((n, record.time));
                }
            }
        }
    }
    let frame_count = counter.frames();
    let at = |spec: TimeSpec, is_start: bool| -> Result<Option<Nanos>, ReadError> {
        Ok(match spec {
            TimeSpec::At(t) => Some(t),
            TimeSpec::FromEnd(d) => Some(last.unwrap_or(0).saturating_sub(d)),
            TimeSpec::Frame(n) => match frame_times.iter().find(|(k, _)| *k == n) {
                Some((_, t)) => Some(*t),
                None if is_start => {
                    return Err(ReadError::Conflict(Conflict::NoSuchFrame {
                        frame: n,
                        frames: frame_count,
                    }))
                }
                None => None,
            },
        })
    };
    let start = match start {
        Some(s) => at(s, true)?.unwrap_or(0),
        None => 0,
    };
    let end = match end {
        Some(e) => at(e, false)?,
        None => None,
    };
    if let Some(why) = unordered_span(start, end) {
        return Err(why.into());
    }
    Ok(Span { start, end })
}

/// Keeps records with `start <= time < end`, preceded by the context folded before `start`
/// (per channel and entity), on the recording's own axis or, with `rebase`, with times from
/// the window's start (its time origin, and its epoch, move there). A window that holds
/// nothing of the recording (after its last record, or ending at or before its first) is
/// refused when it would open.
///
/// Reading stops at the first record at or past `end`, so a slice near the start of a long
/// recording reads only what it needs. An input out of time order can therefore have
/// in-window records after that point; they are not examined.
pub struct Window<S> {
    inner: S,
    /// The inner header, with the origin moved to the window's start when rebasing.
    header: Header,
    span: Span,
    /// Whether a record before the start was read.
    before: bool,
    rebase: bool,
    folded: Context,
    queue: VecDeque<Record>,
    started: bool,
    done: bool,
}

impl<S: Source> Window<S> {
    pub fn new(inner: S, span: Span, rebase: bool) -> Window<S> {
        let mut header = inner.header().clone();
        if rebase {
            header.origin = header.origin.shifted(span.start);
        }
        Window {
            inner,
            header,
            span,
            before: false,
            rebase,
            folded: Context::default(),
            queue: VecDeque::new(),
            started: false,
            done: false,
        }
    }

    /// The records that open the window: the context folded before the start (as
    /// synthetic records at the start), then `first`, the first record at or after the
    /// start if it lies inside the window. On equal times frames come before state, as on
    /// the merged timeline (and as a written pair reads back).
    fn opening(&mut self, first: Option<Record>) -> Vec<Record> {
        let t0 = self.span.start;
        let header = &self.header;
        // A kept reset at exactly the start would discard the aggregate anyway.
        let reset_at_start = |channel, entity: Option<&_>| {
            first.as_ref().is_some_and(|f| {
                f.channel == channel
                    && f.entity.as_ref() == entity
                    && f.frame == Some(0)
                    && f.time == t0
                    && header.channel(channel).map(|c| c.composition)
                        == Some(Composition::FrameDelta)
            })
        };
        let mut out = self.folded.records(header, t0, reset_at_start);
        // Several context records at one time are one message where the output format
        // has such a thing (NanoVer's combined frame + state message); a lone one is marked
        // too, so that a flat writer (Icarus CSV) can tell the context from a frame, but it
        // is ordered as before (after a kept frame at the start).
        let lone = out.len() == 1;
        for r in &mut out {
            r.group = Some(CONTEXT_GROUP);
        }
        out.extend(first);
        // Frames before state on equal times, the context kept together ahead of the rest.
        let rank = |r: &Record| match r.group {
            Some(CONTEXT_GROUP) if !lone => 0,
            _ if header.channels[r.channel as usize].composition == Composition::FrameDelta => 1,
            _ => 2,
        };
        out.sort_by_key(|r| (r.time, rank(r)));
        self.folded = Context::default();
        out
    }

    fn advance(&mut self) -> Result<Option<Record>, ReadError> {
        loop {
            if let Some(mut r) = self.queue.pop_front() {
                if self.rebase {
                    r.shift_time(-self.span.start);
                }
                return Ok(Some(r));
            }
            if self.done {
                return Ok(None);
            }
            let next = self.inner.next().transpose()?;
            if next
                .as_ref()
                .is_some_and(|r| r.channel as usize >= self.header.channels.len())
            {
                let known = self.header.channels.len();
                let added = self
                    .inner
                    .header()
                    .channels
                    .get(known..)
                    .unwrap_or_default();
                self.header.channels.extend_from_slice(added);
            }
            let past_end = |t| self.span.end.is_some_and(|end| t >= end);
            if !self.started {
                match next {
                    Some(record) if record.time < self.span.start => {
                        self.before = true;
                        self.folded.apply(&self.header, &record);
                    }
                    // The window opens; one between two records holds no record of its own
                    // but carries the context at its start.
                    next => {
                        // Past the last record, or ending at or before the first: nothing of
                        // the recording is in it.
                        if next
                            .as_ref()
                            .is_none_or(|r| past_end(r.time) && !self.before)
                        {
                            let span = self.span;
                            return Err(outside(Seconds(span.start), span.end.map(Seconds)).into());
                        }
                        self.started = true;
                        let first = next.filter(|r| !past_end(r.time));
                        self.done = first.is_none();
                        let opening = self.opening(first);
                        self.queue.extend(opening);
                    }
                }
                continue;
            }
            match next {
                None => self.done = true,
                Some(r) if past_end(r.time) => self.done = true,
                // A record from before the window met after it opened (its input is out of
                // time order; validate reports that): not in the window.
                Some(r) if r.time < self.span.start => {}
                Some(r) => self.queue.push_back(r),
            }
        }
    }
}

impl<S: Source> Iterator for Window<S> {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.advance().transpose()
    }
}

impl<S: Source> Source for Window<S> {
    fn header(&self) -> &Header {
        &self.header
    }
    fn findings(&self) -> Vec<(&Path, &Findings)> {
        self.inner.findings()
    }
    fn progress(&self) -> (u64, u64) {
        self.inner.progress()
    }
    fn recycle(&mut self, record: Record) {
        self.inner.recycle(record)
    }
    fn select_channels(&mut self, wanted: &[bool]) {
        self.inner.select_channels(wanted)
    }
}
