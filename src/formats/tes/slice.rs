//! Slicing a capture by frames or time (spec §11.2): the kept frames, preceded by a
//! ServerInfo and the synthesised world state at the cut, so the slice plays back alone.
//! Reading stops at the end of the window.

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use super::decode;
use super::names;
use super::packet;
use super::packet_record;
use super::reader::{TesReader, DEFAULT_FRAME_TIME, DEFAULT_TIME_UNIT};
use super::walk;
use super::world::World;
use crate::formats::input::Input;
use crate::formats::{ReadError, ReadOptions, Source};
use crate::model::time::{outside, unordered, WindowRefusal};
use crate::model::{Header, Nanos, Record, TimeSpec};
use crate::report::{Finding, Findings, Severity};

/// Where a window starts or ends, resolved as far as a stream can.
#[derive(Debug, Clone, Copy)]
enum Bound {
    Frame(u64),
    Time(Nanos),
}

impl Bound {
    /// Whether a record in frame `frame` (its frame index, which a Reset's record does not
    /// carry) is at or past the bound.
    fn reached(self, r: &Record, frame: u64) -> bool {
        match self {
            Bound::Frame(n) => frame >= n,
            Bound::Time(t) => r.time >= t,
        }
    }
}

pub struct TesSlice {
    path: PathBuf,
    reader: TesReader,
    world: World,
    start: Bound,
    end: Option<Bound>,
    /// The window as asked, to name it.
    asked: (TimeSpec, Option<TimeSpec>),
    rebase: bool,
    decode: bool,
    queue: VecDeque<Record>,
    opened: bool,
    done: bool,
    base: (Nanos, u64),
    findings: Findings,
}

/// The capture's duration (µs), by a header walk.
fn duration_ns(path: &Path) -> Result<Nanos, ReadError> {
    let mut r = TesReader::open(
        path,
        ReadOptions {
            decode: false,
            lenient: true,
            ..ReadOptions::default()
        },
    )?;
    for item in r.by_ref() {
        item?;
    }
    Ok(r.stats
        .duration_us
        .saturating_mul(1000)
        .min(i64::MAX as u64) as i64)
}

fn bound(spec: TimeSpec, path: &Path) -> Result<Bound, ReadError> {
    Ok(match spec {
        TimeSpec::Frame(n) => Bound::Frame(n),
        TimeSpec::At(t) => Bound::Time(t),
        TimeSpec::FromEnd(d) => Bound::Time(duration_ns(path)?.saturating_sub(d).max(0)),
    })
}

impl TesSlice {
    pub fn open(
        path: &Path,
        start: Option<TimeSpec>,
        end: Option<TimeSpec>,
        rebase: bool,
        options: ReadOptions,
    ) -> Result<TesSlice, ReadError> {
        let asked = (start.unwrap_or(TimeSpec::Frame(0)), end);
        let start = match start {
            Some(s) => bound(s, path)?,
            None => Bound::Frame(0),
        };
        let end = end.map(|e| bound(e, path)).transpose()?;
        // The fast way: walk headers to the cut, read only what the world state needs.
        let cut = match start {
            Bound::Frame(n) if n > 0 => Some(walk::Cut::Frame(n)),
            Bound::Time(t) if t > 0 => Some(walk::Cut::TimeUs((t as u64).div_ceil(1000))),
            _ => None,
        };
        let folded = cut.and_then(|c| {
            let mut input = Input::open(path).ok()?;
            walk::fold_to(&mut input, c)
        });
        let (reader, world) = match folded {
            Some(f) => {
                let scene = f.world.packets();
                (TesReader::open_at(path, options, &f, &scene)?, f.world)
            }
            None => (TesReader::open(path, options)?, World::default()),
        };
        Ok(TesSlice {
            path: path.to_path_buf(),
            reader,
            world,
            start,
            end,
            asked,
            rebase,
            decode: options.decode,
            queue: VecDeque::new(),
            opened: false,
            done: false,
            base: (0, 0),
            findings: Findings::default(),
        })
    }

    /// A record for a synthesised packet, at the start of the window.
    fn synthesised(&self, p: Vec<u8>) -> Option<Record> {
        let (time, frame) = if self.rebase { (0, 0) } else { self.base };
        packet_record(p, self.decode, time, frame)
    }

    fn open_window(&mut self, first: Option<(Record, u64)>) {
        self.opened = true;
        if let Some((f, frame)) = &first {
            self.base = (f.time, *frame);
        }
        let (tu, ft, cf) = self.world.server_info.unwrap_or_else(|| {
            let m = &self.reader.header().metadata;
            (
                m.get("time_unit_us")
                    .and_then(|v| v.as_u64())
                    .filter(|t| *t > 0)
                    .unwrap_or(DEFAULT_TIME_UNIT),
                m.get("default_frame_time")
                    .and_then(|v| v.as_u64())
                    .map_or(DEFAULT_FRAME_TIME, |v| v as u32),
                m.get("coordinate_frame")
                    .and_then(|v| v.as_u64())
                    .map_or(0, |v| v as u8),
            )
        });
        let mut packets = vec![packet::build(
            decode::R_SERVER_INFO,
            0,
            &packet::server_info_payload(tu, ft, cf),
        )];
        packets.extend(self.world.packets());
        for p in packets {
            if let Some(r) = self.synthesised(p) {
                self.queue.push_back(r);
            }
        }
        if self.world.not_carried > 0 {
            self.findings.push(Finding::new(
                Severity::Warning,
                "TES_SLICE_NOT_CARRIED",
                format!(
                    "{} packets of user or unassigned routing ids before the cut cannot be folded into the world state",
                    self.world.not_carried
                ),
            ));
        }
        self.world = World::default();
        if let Some((f, _)) = first {
            self.keep(f);
        } else {
            self.done = true;
        }
    }

    /// Why the window is refused for ending where or before it starts, when its bounds are
    /// of two kinds (a frame and a time): known at `first`, the first record at or after the
    /// start (in frame `frame`).
    fn unordered(&self, first: &Record, frame: u64) -> Option<WindowRefusal> {
        let end = self.end?;
        if !end.reached(first, frame) {
            return None;
        }
        let start = match self.start {
            Bound::Time(t) => t,
            Bound::Frame(_) => first.time,
        };
        let order = match end {
            Bound::Time(e) => e.cmp(&start),
            // Frame m starts before `frame`, the first at or after the start.
            Bound::Frame(m) if m < frame => Ordering::Less,
            Bound::Frame(_) => first.time.cmp(&start),
        };
        let (asked_start, asked_end) = self.asked;
        unordered(asked_start, asked_end?, order)
    }

    fn keep(&mut self, mut r: Record) {
        if self.rebase {
            r.shift_time(-self.base.0);
            if r.channel != names::RESET_CHANNEL {
                let base = i64::try_from(self.base.1).unwrap_or(i64::MAX);
                r.frame = r.frame.map(|f| f - base.min(f));
            }
        }
        self.queue.push_back(r);
    }

    fn advance(&mut self) -> Result<Option<Record>, ReadError> {
        loop {
            if let Some(r) = self.queue.pop_front() {
                return Ok(Some(r));
            }
            if self.done {
                return Ok(None);
            }
            let next = self.reader.next().transpose()?;
            let frame = next.as_ref().map_or(0, |r| self.reader.frame_index(r));
            let past_end =
                |r: &Record, end: Option<Bound>| end.is_some_and(|e| e.reached(r, frame));
            match next {
                Some(r) if !self.opened && !self.start.reached(&r, frame) => {
                    if let Some(raw) = &r.raw {
                        self.world.apply(&raw.bytes);
                    }
                }
                Some(r) if !self.opened => {
                    if let Some(why) = self.unordered(&r, frame) {
                        return Err(why.into());
                    }
                    let first = (!past_end(&r, self.end)).then_some((r, frame));
                    let empty = first.is_none();
                    self.open_window(first);
                    self.done |= empty;
                }
                // The capture ends before the window starts.
                None if !self.opened => {
                    let (start, end) = self.asked;
                    return Err(outside(start, end).into());
                }
                None => self.done = true,
                Some(r) if past_end(&r, self.end) => self.done = true,
                Some(r) => self.keep(r),
            }
        }
    }
}

impl Iterator for TesSlice {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.advance().transpose()
    }
}

impl Source for TesSlice {
    fn header(&self) -> &Header {
        self.reader.header()
    }

    fn findings(&self) -> Vec<(&Path, &Findings)> {
        let mut v = self.reader.findings();
        v.push((self.path.as_path(), &self.findings));
        v
    }

    fn progress(&self) -> (u64, u64) {
        self.reader.progress()
    }
}
