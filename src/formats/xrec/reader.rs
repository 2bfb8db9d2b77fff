//! Reading an XREC-S file (spec §3–§14): the Start packet at open, a walk over packet
//! headers (the End's content, for writers, before any record), then Event packets one at a
//! time, one record per event. A query (time, create_frame or type) skips every packet whose
//! 40-byte bounds cannot hold a match without reading its events (spec §12).

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use globset::GlobSet;
use serde_json::{json, Map, Value as Json};

use super::body;
use super::codes::*;
use super::examine::*;
use super::inflate::{self, Inflating};
use super::layout::{
    self, Bounds, End, Event, PacketHeader, Start, BOUNDS_LEN, HEADER_LEN, SPAN_LEN,
};
use super::{HEADER_KEY, RAW};
use crate::formats::input::Input;
use crate::formats::{ReadError, ReadOptions, Source};
use crate::model::{
    Array, ArrayData, Channel, ChannelKind, Composition, Entity, Epoch, Field, FieldSpec, Header,
    RawBytes, Record, TimeOrigin, Value,
};
use crate::report::render::first_and_last;
use crate::report::{Fact, Finding, Findings, Severity};

/// Which events a reader returns (spec §12): record times in `[t0, t1)`, create_frame in
/// `[f0, f1)`, type names matching `types`; `shift` is taken off every record time (a
/// rebased slice).
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub t0: Option<i64>,
    pub t1: Option<i64>,
    pub f0: Option<i64>,
    pub f1: Option<i64>,
    pub types: Option<GlobSet>,
    pub shift: i64,
}

impl Query {
    fn is_whole(&self) -> bool {
        self.t0.is_none()
            && self.t1.is_none()
            && self.f0.is_none()
            && self.f1.is_none()
            && self.types.is_none()
    }

    /// Whether a packet with these bounds may hold an event the query keeps.
    fn overlaps(&self, b: &Bounds, begin_rtss: f64) -> bool {
        let (lo, hi) = (
            layout::record_time(b.rtss_begin, begin_rtss),
            layout::record_time(b.rtss_end, begin_rtss),
        );
        self.t0.is_none_or(|t0| hi >= t0)
            && self.t1.is_none_or(|t1| lo < t1)
            && self.f0.is_none_or(|f0| b.frame_end >= f0)
            && self.f1.is_none_or(|f1| b.frame_begin < f1)
    }

    fn keeps(&self, time: i64, frame: i64) -> bool {
        self.t0.is_none_or(|t0| time >= t0)
            && self.t1.is_none_or(|t1| time < t1)
            && self.f0.is_none_or(|f0| frame >= f0)
            && self.f1.is_none_or(|f1| frame < f1)
    }
}

/// What the header walk at open found: the End, and where framing stopped.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    pub end: Option<End>,
    /// Bytes from the file's start to the end of the last whole packet.
    pub framed: u64,
    pub packets: u64,
    /// Lowest and highest rtss bounds of the Event packets.
    pub rtss: Option<(f64, f64)>,
    /// The first [`WALK_INDEX_PACKETS`] packets as the walk read them, so that reading
    /// (a query above all) takes headers and bounds from here instead of reading them again:
    /// on a compressed file a second walk costs as much as the packets a query keeps.
    walked: Vec<Walked>,
    /// Bytes the walk read.
    bytes: u64,
}

/// A packet as the walk at open read it.
#[derive(Debug, Clone, Copy)]
struct Walked {
    offset: u64,
    header: PacketHeader,
    /// An Event packet's span, its counts 0 ([`Bounds::parse_span`]; `None` for other
    /// packets, or a payload too short for bounds).
    span: Option<Bounds>,
}

/// Packets whose header and bounds the walk keeps: 64 bytes each, 4 MiB at most (65,536
/// packets of the 1 MiB a writer puts in one are 64 GiB); packets beyond are read again.
const WALK_INDEX_PACKETS: usize = 1 << 16;

/// The Event packet whose events are being returned.
struct Packet {
    offset: u64,
    index: u64,
    bounds: Bounds,
    /// Where the next event starts in the area held (`XrecReader::area`), which begins
    /// `base` bytes into the events area of `len` bytes (0 unless inflating).
    at: usize,
    base: u64,
    len: u64,
    /// A large compressed area: decompressed as its events are read.
    inflating: Option<Inflating>,
    decoded: u32,
    frames: Option<(i64, i64)>,
    times: Option<(f64, f64)>,
    last_time: Option<f64>,
}

impl Packet {
    /// Passes over the rest of the area after an event that does not parse: its later
    /// events cannot be found.
    fn abandon(&mut self, held: usize) {
        self.base = self.len.saturating_sub(held as u64);
        self.at = held;
        self.decoded = self.bounds.event_count;
    }

    /// Moves past an event of `len` bytes (its body of `passed` bytes not held); where its
    /// bytes are in the area held, when they all are.
    fn step(&mut self, len: usize, passed: Option<usize>) -> Option<Range<usize>> {
        let held = len - passed.unwrap_or(0);
        let raw = passed.is_none().then_some(self.at..self.at + held);
        self.at += held;
        self.base += passed.unwrap_or(0) as u64;
        self.decoded += 1;
        raw
    }

    /// Counts an event into the packet's extent; whether its time goes back.
    fn track(&mut self, ev: &Event) -> bool {
        self.frames = minmax(self.frames, ev.create_frame);
        self.times = minmax(self.times, ev.create_time);
        let out_of_order = self.last_time.is_some_and(|t| ev.create_time < t);
        self.last_time = Some(ev.create_time);
        out_of_order
    }
}

/// Where an event is: its packet and its place in it, for its findings.
#[derive(Clone, Copy)]
struct EventAt {
    off: u64,
    index: u64,
    event: u32,
}

impl EventAt {
    fn place(self, f: Finding) -> Finding {
        Finding {
            message: format!("event {}: {}", self.event, f.message),
            ..f
        }
        .at(self.off, self.index)
    }
}

/// What the walk at open reads at a time: a packet's header and its Event span (more would
/// make a compressed file's walk a large share of what a query reads).
const WALK_READ: usize = HEADER_LEN + SPAN_LEN;

/// What a query reads at a time: a packet's header and its Event bounds, for the packets the
/// walk did not keep, then only the packets it decodes.
const QUERY_READ: usize = HEADER_LEN + BOUNDS_LEN;

/// An events area larger than this is decompressed as its events are read, one at a time
/// (the writers' areas are 1 MiB: those are held whole).
const INFLATE_ABOVE: u32 = 8 << 20;

/// Chapters the text of `inspect` names at each end of the list.
const FEW_CHAPTERS: usize = 10;

/// Entities seen, so that a transform's id is one shared string (bounded).
const ENTITY_CACHE: usize = 4096;

/// Records handed back through `Source::recycle` kept for reuse (callers hand each record
/// back before asking for the next, so one is usually all there is).
const SPARE: usize = 4;

pub struct XrecReader {
    path: PathBuf,
    input: Input,
    options: ReadOptions,
    header: Header,
    findings: Findings,
    start: Start,
    scan: Scan,
    query: Query,
    /// Some packets were skipped by the query: counts cannot be checked against the End.
    skipped: bool,
    pos: u64,
    /// Where reading stops: the file's end, or recover's cut.
    data_end: u64,
    /// The error recover cut the file at, reported when reading ends.
    cut: Option<Finding>,
    packet_index: u64,
    done: bool,
    end: Option<End>,
    packet: Option<Packet>,
    area: Vec<u8>,
    channels: HashMap<String, u32>,
    entities: HashMap<String, Arc<str>>,
    /// Records handed back, whose values, keys, buffers and raw bytes the next events reuse.
    spare: Vec<Record>,
    /// A transform's `id`, decoded aside (it becomes the entity, not a value).
    id: Value,
    prev_rtss_begin: Option<f64>,
    // What was read, for the End's counts and inspect's facts.
    event_packets: u64,
    extension_packets: u64,
    events: u64,
    per_type: Vec<u64>,
    frames: Option<(i64, i64)>,
    last_create_time: Option<f64>,
    chapters: Vec<(String, i64, i64)>,
    bytes_read: u64,
}

fn err(code: &'static str, message: impl Into<String>) -> Finding {
    Finding::new(Severity::Error, code, message)
}

fn minmax<T: PartialOrd + Copy>(m: Option<(T, T)>, x: T) -> Option<(T, T)> {
    Some(match m {
        None => (x, x),
        Some((lo, hi)) => (if x < lo { x } else { lo }, if x > hi { x } else { hi }),
    })
}

impl XrecReader {
    pub fn open(path: &Path, options: ReadOptions) -> Result<XrecReader, ReadError> {
        XrecReader::open_until(path, options, None)
    }

    /// The reader `recover` copies from (spec §16): the file as if it ended at the first
    /// packet with an error, found by a lenient pass that decodes everything first, so that
    /// every whole, valid packet before it is kept and nothing after it. That error is
    /// reported when reading ends.
    pub fn open_recover(path: &Path, options: ReadOptions) -> Result<XrecReader, ReadError> {
        let Some(first) = first_error(path, options)? else {
            return XrecReader::open(path, options);
        };
        let mut reader = XrecReader::open_until(path, options, Some(first.offset.unwrap_or(0)))?;
        // An error of the Start (at byte 0) is reported again at open; others lie past the cut.
        if first.offset.is_some_and(|at| at > 0) {
            reader.cut = Some(first);
        }
        Ok(reader)
    }

    /// A reader of the bytes before `cut` (the whole file without one).
    fn open_until(
        path: &Path,
        options: ReadOptions,
        cut: Option<u64>,
    ) -> Result<XrecReader, ReadError> {
        let io = |e: std::io::Error| ReadError::from(e).in_file(path);
        let input = Input::open(path).map_err(io)?;
        let walk = Input::open(path).map_err(io)?;
        XrecReader::new(path, input, walk, options, cut).map_err(|e| e.in_file(path))
    }

    /// A reader over bytes in memory (tests, the fuzzer).
    pub fn from_bytes(bytes: Vec<u8>, options: ReadOptions) -> Result<XrecReader, ReadError> {
        let walk = Input::from_bytes(bytes.clone());
        XrecReader::new(
            Path::new("memory"),
            Input::from_bytes(bytes),
            walk,
            options,
            None,
        )
    }

    fn new(
        path: &Path,
        input: Input,
        mut walk: Input,
        options: ReadOptions,
        cut: Option<u64>,
    ) -> Result<XrecReader, ReadError> {
        let len = input.len();
        if len == 0 {
            return Err(ReadError::invalid(err(
                EMPTY_FILE,
                "the file is empty (0 bytes)",
            )));
        }
        // The Start and the packet walk are read through `walk`, in small reads: a query
        // reads little more than the packets it keeps, and `input` starts at the first packet.
        walk.set_read_ahead(WALK_READ);
        let head_len = len.min(12) as usize;
        let head = walk.bytes(0, head_len)?.to_vec();
        if !layout::is_profile(&head, len) {
            return Err(ReadError::invalid(
                err(NOT_PROFILE, layout::NOT_PROFILE_TEXT).offset(0),
            ));
        }
        let start_len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
        let payload = walk.bytes(HEADER_LEN as u64, start_len)?;
        let mut found = Vec::new();
        let start =
            layout::parse_start(payload, &mut found).map_err(|f| ReadError::invalid(f.at(0, 0)))?;
        let mut findings = Findings::default();
        let first = (HEADER_LEN + start_len) as u64;
        for f in found {
            if f.severity == Severity::Error && !options.lenient {
                return Err(ReadError::invalid(f.at(0, 0)));
            }
            findings.push(f.at(0, 0));
        }
        // A damaged Start is where `recover` keeps nothing.
        let damaged = findings.count(Severity::Error) > 0;
        let data_end = cut.map_or(len, |c| c.min(len));
        let scan = scan(&mut walk, first, data_end, start.revision);
        let bytes_read = first + scan.bytes;
        let header = header(&start, &scan, len);
        Ok(XrecReader {
            path: path.to_path_buf(),
            input,
            options,
            header,
            findings,
            start,
            scan,
            query: Query::default(),
            skipped: false,
            pos: first,
            data_end,
            cut: None,
            packet_index: 1,
            done: damaged && options.until_damage,
            end: None,
            packet: None,
            area: Vec::new(),
            channels: HashMap::new(),
            entities: HashMap::new(),
            spare: Vec::new(),
            id: Value::Null,
            prev_rtss_begin: None,
            event_packets: 0,
            extension_packets: 0,
            events: 0,
            per_type: Vec::new(),
            frames: None,
            last_create_time: None,
            chapters: Vec::new(),
            bytes_read,
        })
    }

    /// Reads only what `query` keeps, skipping packets whose bounds cannot hold a match.
    pub fn with_query(mut self, query: Query) -> XrecReader {
        if query.shift != 0 {
            self.header.origin = self.header.origin.shifted(query.shift);
        }
        if !query.is_whole() {
            // Bounds and a few headers are all that is read of most packets.
            self.input.set_read_ahead(QUERY_READ);
        }
        self.query = query;
        self
    }

    /// Forgets the packets the walk at open kept, so that reading reads every header and
    /// bounds again, as it does past the kept ones (tests compare both ways).
    #[doc(hidden)]
    pub fn forget_walk(mut self) -> XrecReader {
        self.scan.walked.clear();
        self
    }

    /// Says in the header's metadata that this is a slice (a writer then makes a fresh End).
    pub fn mark_slice(&mut self, slice: Json) {
        if let Some(Json::Object(m)) = self.header.metadata.get_mut(HEADER_KEY) {
            m.insert("slice".into(), slice);
        }
    }

    /// Chapters met so far: (name, record time before any shift, create_frame).
    pub fn chapters(&self) -> &[(String, i64, i64)] {
        &self.chapters
    }

    pub fn start(&self) -> &Start {
        &self.start
    }

    pub fn packet_scan(&self) -> &Scan {
        &self.scan
    }

    /// Bytes read from the file so far, the Start and the walk at open included (what a
    /// query costs).
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Record time of an RTSS reading, before any shift.
    pub fn record_time(&self, t: f64) -> i64 {
        layout::record_time(t, self.start.begin_rtss)
    }

    /// Packet `index` at `off` as the walk at open read it, if it kept it.
    fn walked(&self, off: u64, index: u64) -> Option<Walked> {
        let i = usize::try_from(index.checked_sub(1)?).ok()?;
        self.scan.walked.get(i).filter(|w| w.offset == off).copied()
    }

    /// Records `f`; an error stops a strict reader, and ends a reader that reads up to the
    /// damage (`until_damage`) quietly.
    fn report(&mut self, f: Finding) -> Result<(), ReadError> {
        let error = f.severity == Severity::Error;
        if error && !self.options.lenient {
            self.done = true;
            self.findings.push(f.clone());
            return Err(ReadError::invalid(f).in_file(&self.path));
        }
        self.done |= error && self.options.until_damage;
        self.findings.push(f);
        Ok(())
    }

    /// Reads the next packet; false at the end of the file (or where reading must stop).
    fn next_packet(&mut self) -> Result<bool, ReadError> {
        let len = self.data_end;
        let (off, index) = (self.pos, self.packet_index);
        if off >= len {
            return Ok(false);
        }
        if len - off < HEADER_LEN as u64 {
            self.report(
                err(
                    TRUNCATED,
                    format!(
                        "the file ends {} bytes into a packet header (8 bytes)",
                        len - off
                    ),
                )
                .at(off, index)
                .hint("`simrec recover` keeps the whole packets before it"),
            )?;
            return Ok(false);
        }
        let h = match self.walked(off, index) {
            Some(w) => w.header,
            None => {
                self.bytes_read += HEADER_LEN as u64;
                PacketHeader::parse(self.input.bytes(off, HEADER_LEN)?)
            }
        };
        let payload_end = off + HEADER_LEN as u64 + h.payload_len as u64;
        if payload_end > len {
            self.report(
                err(
                    TRUNCATED,
                    format!(
                        "the packet's payload ({} bytes) runs {} bytes past the end of the file",
                        h.payload_len,
                        payload_end - len
                    ),
                )
                .at(off, index)
                .hint("`simrec recover` keeps the whole packets before it"),
            )?;
            return Ok(false);
        }
        self.pos = payload_end;
        self.packet_index += 1;
        if h.reserved != 0 {
            self.report(
                err(RESERVED, "the packet header's reserved field is not 0").at(off, index),
            )?;
        }
        if self.end.is_some() && h.kind != 0x80 && h.kind < 0x80 {
            self.report(err(ORDER, "a packet after the End packet").at(off, index))?;
        }
        match h.kind {
            layout::START => {
                self.report(err(ORDER, "a second Start packet").at(off, index))?;
            }
            layout::EVENT => self.event_packet(off, index, h)?,
            layout::END => self.end_packet(off, index, h)?,
            0x80..=0xff => {
                self.extension_packets += 1;
                self.report(
                    Finding::new(
                        Severity::Info,
                        EXTENSION_PACKET,
                        format!("extension packet type 0x{:02x} skipped", h.kind),
                    )
                    .at(off, index),
                )?;
            }
            other => {
                self.report(
                    err(
                        PACKET_TYPE,
                        format!("packet type 0x{other:02x} is reserved"),
                    )
                    .at(off, index),
                )?;
            }
        }
        Ok(true)
    }

    /// Whether the packet's payload is compressed; `None`: its flags are refused (reported),
    /// so the packet is skipped.
    fn flags(
        &mut self,
        off: u64,
        index: u64,
        h: PacketHeader,
        event: bool,
    ) -> Result<Option<bool>, ReadError> {
        if h.flags & !layout::FLAG_COMPRESSED != 0 {
            self.report(
                err(RESERVED, format!("undefined flag bits 0x{:02x}", h.flags)).at(off, index),
            )?;
        }
        let compressed = h.flags & layout::FLAG_COMPRESSED != 0;
        if compressed && (!event || self.start.compression == layout::CODEC_NONE) {
            let why = if event {
                "the events area is marked compressed but the Start packet names no codec"
            } else {
                "a Start or End packet is marked compressed"
            };
            self.report(err(COMPRESSED_WITHOUT_CODEC, why).at(off, index))?;
            return Ok(None);
        }
        Ok(Some(compressed))
    }

    fn end_packet(&mut self, off: u64, index: u64, h: PacketHeader) -> Result<(), ReadError> {
        if self.end.is_some() {
            self.report(err(ORDER, "a second End packet").at(off, index))?;
        }
        match self.flags(off, index, h, false) {
            Ok(None) => return Ok(()),
            Err(e) => return Err(e),
            Ok(Some(_)) => {}
        }
        let payload = self
            .input
            .bytes(off + HEADER_LEN as u64, h.payload_len as usize)?;
        self.bytes_read += h.payload_len as u64;
        let mut found = Vec::new();
        let end = match layout::parse_end(payload, self.start.revision, &mut found) {
            Ok(e) => e,
            Err(f) => return self.report(f.at(off, index)),
        };
        for f in found {
            self.report(f.at(off, index))?;
        }
        if !end.end_rtss.is_finite() {
            self.report(
                err(NONFINITE_TIME, format!("end_rtss is {}", end.end_rtss)).at(off, index),
            )?;
        }
        if !self.skipped && self.query.is_whole() {
            let (packets, events) = (self.event_packets, self.events);
            if end.event_packet_count as u64 != packets || end.event_count != events {
                self.report(
                    err(
                        END_COUNTS,
                        format!(
                            "the End packet counts {} Event packets and {} events; {packets} and {events} were read",
                            end.event_packet_count, end.event_count
                        ),
                    )
                    .at(off, index),
                )?;
            }
        }
        if let Some(last) = self.last_create_time {
            if end.end_rtss < last {
                self.report(
                    Finding::new(
                        Severity::Warning,
                        END_TIME,
                        format!(
                            "end_rtss {} is before the last event's create_time {last}",
                            end.end_rtss
                        ),
                    )
                    .at(off, index),
                )?;
            }
        }
        if end.end_unix_ns < self.start.begin_unix_ns {
            self.report(
                Finding::new(
                    Severity::Warning,
                    END_TIME,
                    "end_unix_ns is before begin_unix_ns",
                )
                .at(off, index),
            )?;
        }
        self.end = Some(end);
        Ok(())
    }

    fn event_packet(&mut self, off: u64, index: u64, h: PacketHeader) -> Result<(), ReadError> {
        let compressed = match self.flags(off, index, h, true) {
            Ok(None) => return Ok(()),
            Err(e) => return Err(e),
            Ok(Some(c)) => c,
        };
        if (h.payload_len as usize) < BOUNDS_LEN {
            return self.report(
                err(
                    PAYLOAD_SHORT,
                    format!(
                        "an Event payload of {} bytes: its bounds alone take 40",
                        h.payload_len
                    ),
                )
                .at(off, index),
            );
        }
        let walked = self.walked(off, index).and_then(|w| w.span);
        let b = match walked {
            Some(span) => span,
            None => self.bounds(off)?,
        };
        self.event_packets += 1;
        if let Some(f) = examine_finite_bounds(&b) {
            return self.report(f.at(off, index));
        }
        for f in [
            examine_bounds_order(&b),
            examine_packet_order(&b, self.prev_rtss_begin),
        ]
        .into_iter()
        .flatten()
        {
            self.report(f.at(off, index))?;
        }
        self.prev_rtss_begin = Some(b.rtss_begin);
        if !self.query.overlaps(&b, self.start.begin_rtss) {
            self.skipped = true;
            return Ok(());
        }
        // The walk kept the span only: the counts are read for the packets decoded.
        let b = match walked {
            Some(_) => self.bounds(off)?,
            None => b,
        };
        let area_len = h.payload_len as usize - BOUNDS_LEN;
        let refused = match compressed {
            true => examine_events_bytes(&b),
            false => examine_stored_area(area_len, &b),
        };
        if let Some(f) = refused {
            return self.report(f.at(off, index));
        }
        let inflating = match self.load_area(
            off + (HEADER_LEN + BOUNDS_LEN) as u64,
            area_len,
            &b,
            compressed,
        )? {
            Ok(inflating) => inflating,
            Err(f) => return self.report(f.at(off, index)),
        };
        if let Some(f) = examine_event_count(&b) {
            self.report(f.at(off, index))?;
        }
        self.packet = Some(Packet {
            offset: off,
            index,
            bounds: b,
            at: 0,
            base: 0,
            len: b.events_bytes as u64,
            inflating,
            decoded: 0,
            frames: None,
            times: None,
            last_time: None,
        });
        Ok(())
    }

    /// An Event packet's bounds, read from the file.
    fn bounds(&mut self, off: u64) -> Result<Bounds, ReadError> {
        self.bytes_read += BOUNDS_LEN as u64;
        Ok(Bounds::parse(
            self.input.bytes(off + HEADER_LEN as u64, BOUNDS_LEN)?,
        ))
    }

    /// Puts a packet's events area of `len` bytes at `off` into `area`, decompressed, or
    /// starts decompressing a large one (returned, to go on as its events are read); the
    /// finding that refuses the packet when the gzip member does not give the area.
    fn load_area(
        &mut self,
        off: u64,
        len: usize,
        b: &Bounds,
        compressed: bool,
    ) -> Result<Result<Option<Inflating>, Finding>, ReadError> {
        self.area.clear();
        let stored = self.input.bytes(off, len)?;
        self.bytes_read += len as u64;
        if !compressed {
            self.area.extend_from_slice(stored);
            return Ok(Ok(None));
        }
        let declared = b.events_bytes as usize;
        let mut inflating = None;
        let read = if b.events_bytes > INFLATE_ABOVE {
            // Counted first, so that a member that does not hold what the packet
            // declares is refused before any event, as when it is held whole.
            inflating = Some(Inflating::new(stored));
            inflate::length(stored, declared as u64 + 1).map(|n| n as usize)
        } else {
            inflate::exact(stored, declared, &mut self.area)
        };
        Ok(match examine_inflated(read, b) {
            Some(f) => Err(f),
            None => Ok(inflating),
        })
    }

    /// The checks that need every event of the packet (counts, tight bounds).
    fn finish_packet(&mut self, p: Packet) -> Result<(), ReadError> {
        let (off, index, b) = (p.offset, p.index, p.bounds);
        let read = p.base + p.at as u64;
        if p.decoded < b.event_count {
            // parse_event already said so (the area ended early).
        } else if read != p.len {
            self.report(
                err(
                    EVENT_COUNT,
                    format!(
                        "{} bytes of the events area follow the last of its {} events",
                        p.len - read,
                        b.event_count
                    ),
                )
                .at(off, index),
            )?;
        }
        if let (Some((f0, f1)), Some((t0, t1))) = (p.frames, p.times) {
            let tight =
                f0 == b.frame_begin && f1 == b.frame_end && t0 == b.rtss_begin && t1 == b.rtss_end;
            if !tight && self.query.is_whole() {
                self.report(
                    Finding::new(
                        Severity::Warning,
                        BOUNDS_LOOSE,
                        format!(
                            "bounds frames {}..{} rtss {}..{} are wider than the events' {f0}..{f1} and {t0}..{t1}",
                            b.frame_begin, b.frame_end, b.rtss_begin, b.rtss_end
                        ),
                    )
                    .at(off, index),
                )?;
            }
        }
        Ok(())
    }

    /// The end of the file: the End's absence is its own finding (spec §10).
    fn finish(&mut self) -> Result<(), ReadError> {
        if let Some(f) = self.cut.take() {
            self.findings.push(f);
        }
        if self.end.is_none() {
            self.report(
                Finding::new(
                    Severity::Warning,
                    NOT_FINISHED,
                    "no End packet: the recording was not finished cleanly",
                )
                .offset(self.pos.min(self.data_end))
                .hint("`simrec recover` appends an End marked as repaired"),
            )?;
        }
        Ok(())
    }

    fn channel(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.channels.get(name) {
            return id;
        }
        let mut channel = Channel::new(name, ChannelKind::Events, Composition::Independent);
        if name == super::TRANSFORM {
            // Units are the application's; the rotation is a Unity quaternion, x, y, z, w.
            channel.fields = vec![
                FieldSpec::new("position"),
                FieldSpec {
                    semantic: Some(super::QUATERNION_XYZW.into()),
                    ..FieldSpec::new("rotation")
                },
                FieldSpec::new("scale"),
            ];
        }
        let id = self.header.add_channel(channel);
        self.channels.insert(name.to_string(), id);
        self.per_type.push(0);
        id
    }

    fn entity(&mut self, name: &str) -> Entity {
        if let Some(e) = self.entities.get(name) {
            return Entity::Name(e.clone());
        }
        let e: Arc<str> = name.into();
        if self.entities.len() < ENTITY_CACHE {
            self.entities.insert(name.to_string(), e.clone());
        }
        Entity::Name(e)
    }

    /// The next event of the current packet as a record, `None` when it is filtered out or
    /// damaged (and reported).
    fn next_event(&mut self) -> Result<Option<Record>, ReadError> {
        let mut area = std::mem::take(&mut self.area);
        let r = self
            .inflate_event(&mut area)
            .and_then(|passed| self.event_in(&area, passed));
        self.area = area;
        r
    }

    /// Reading an area as it is decompressed: makes `area` hold the next event from its
    /// start, its body only when it is read (with values, or a chapter's); `Some(n)` when
    /// its body of `n` bytes was passed over instead. `None` when the whole area is held.
    fn inflate_event(&mut self, area: &mut Vec<u8>) -> Result<Option<usize>, ReadError> {
        let Some(p) = self.packet.as_mut() else {
            return Ok(None);
        };
        let Some(inflating) = p.inflating.as_mut() else {
            return Ok(None);
        };
        area.drain(..p.at);
        p.base += p.at as u64;
        p.at = 0;
        let (off, index, decode) = (p.offset, p.index, self.options.decode);
        let passed = (|| {
            inflating.fill(area, 2)?;
            let Some(&[a, b]) = area.get(..2) else {
                return Ok(None);
            };
            let name = usize::from(u16::from_le_bytes([a, b]));
            let head = layout::EVENT_FIXED + name;
            inflating.fill(area, head)?;
            let Some(body) = area.get(head - 4..head) else {
                return Ok(None);
            };
            let body = u32::from_le_bytes([body[0], body[1], body[2], body[3]]) as usize;
            if decode || area.get(2..2 + name) == Some(super::CHAPTER.as_bytes()) {
                inflating.fill(area, head + body)?;
                return Ok(None);
            }
            let held = body.min(area.len() - head);
            area.drain(head..head + held);
            inflating.skip((body - held) as u64)?;
            Ok(Some(body))
        })();
        passed.or_else(|e: std::io::Error| {
            // The member was decompressed whole when the packet was opened.
            let f = err(
                DECOMPRESS,
                format!("the gzip member does not decompress: {e}"),
            );
            self.report(f.at(off, index)).map(|()| None)
        })
    }

    /// The next event of the current packet, whose bytes start `area`'s unread part; its
    /// body passed over when `passed` says so (then it has no original bytes).
    fn event_in(
        &mut self,
        area: &[u8],
        passed: Option<usize>,
    ) -> Result<Option<Record>, ReadError> {
        let Some(p) = self.packet.as_mut() else {
            return Ok(None);
        };
        let (off, index, b) = (p.offset, p.index, p.bounds);
        let parsed = match passed {
            None => layout::parse_event(&area[p.at..]),
            Some(_) => layout::parse_event_head(&area[p.at..]),
        };
        let ev = match parsed {
            Ok(ev) => ev,
            Err(f) => {
                let at = EventAt {
                    off,
                    index,
                    event: p.decoded,
                };
                p.abandon(area.len());
                self.report(at.place(f))?;
                return Ok(None);
            }
        };
        let at = EventAt {
            off,
            index,
            event: p.decoded,
        };
        let raw_range = p.step(ev.len, passed);
        self.events += 1;
        if let Some(f) = examine_event(&ev) {
            self.report(at.place(f))?;
            return Ok(None);
        }
        let out_of_order = self.packet.as_mut().is_some_and(|p| p.track(&ev));
        for f in [
            examine_event_bounds(&ev, &b),
            examine_event_order(out_of_order),
        ]
        .into_iter()
        .flatten()
        {
            self.report(at.place(f))?;
        }
        self.frames = minmax(self.frames, ev.create_frame);
        self.last_create_time = Some(
            self.last_create_time
                .map_or(ev.create_time, |t| t.max(ev.create_time)),
        );
        let time = layout::record_time(ev.create_time, self.start.begin_rtss);
        let keep = self.query.keeps(time, ev.create_frame)
            && self
                .query
                .types
                .as_ref()
                .is_none_or(|g| g.is_match(ev.type_name));
        let chapter = ev.type_name == super::CHAPTER;
        if !keep && !chapter {
            return Ok(None);
        }
        let Some((mut record, id_at)) = self.decode_body(&ev, chapter, at)? else {
            return Ok(None);
        };
        if chapter {
            self.note_chapter(&record, time, ev.create_frame, at)?;
            if !keep {
                self.spare.push(record);
                return Ok(None);
            }
        }
        self.fill_record(&mut record, &ev, time);
        if self.options.decode {
            self.shape_well_known(&mut record, ev.type_name, id_at, at)?;
        }
        match raw_range {
            Some(range) => set_raw(&mut record.raw, &area[range]),
            None => record.raw = None,
        }
        Ok(Some(record))
    }

    /// A recycled record with the event's times and, when they are read, its body's
    /// values, and where the transform's id is among them; `None` when the body does not
    /// decode (reported).
    fn decode_body(
        &mut self,
        ev: &Event,
        chapter: bool,
        at: EventAt,
    ) -> Result<Option<(Record, Option<usize>)>, ReadError> {
        let mut record = self.spare.pop().unwrap_or_else(|| Record::new(0, 0));
        set_times(&mut record.values, ev.create_time, ev.capture_time);
        if !(self.options.decode || chapter) {
            record.values.truncate(TIMES);
            return Ok(Some((record, None)));
        }
        // A transform's id becomes the entity: it is decoded aside, not into the values.
        let transform = self.options.decode && ev.type_name == super::TRANSFORM;
        let aside = transform.then_some(("id", &mut self.id));
        match body::decode_into(ev.body, &mut record.values, TIMES, aside) {
            Ok(id_at) => Ok(Some((record, id_at))),
            Err(why) => {
                self.spare.push(record);
                self.report(at.place(err(BODY_DECODE, why)))?;
                Ok(None)
            }
        }
    }

    /// Keeps a chapter's name, time and frame for `inspect`; a chapter without one is
    /// reported.
    fn note_chapter(
        &mut self,
        record: &Record,
        time: i64,
        frame: i64,
        at: EventAt,
    ) -> Result<(), ReadError> {
        let name = body_fields(&record.values)
            .iter()
            .find_map(|(k, v)| match v {
                Value::Str(name) if k == "name" => Some(name),
                _ => None,
            });
        match name {
            Some(name) => {
                if self.chapters.len() < 100_000 {
                    self.chapters.push((name.clone(), time, frame));
                }
                Ok(())
            }
            None => self.report(at.place(Finding::new(
                Severity::Warning,
                WELL_KNOWN_BODY,
                "an xrec.Chapter body without a string `name`",
            ))),
        }
    }

    /// The record's time, channel and frame from the event (its channel counted).
    fn fill_record(&mut self, record: &mut Record, ev: &Event, time: i64) {
        let channel = self.channel(ev.type_name);
        self.per_type[channel as usize] += 1;
        record.time = time.saturating_sub(self.query.shift);
        // Seconds from the begin, as a writer of float seconds takes them back (exact when
        // the begin is at 0, as simrec writes sessions of other sources).
        record.exact_seconds =
            (self.query.shift == 0).then_some(ev.create_time - self.start.begin_rtss);
        record.channel = channel;
        record.frame = Some(ev.create_frame);
        record.entity = None;
        record.group = None;
    }

    /// A well-known event's body in its typed form (a transform's entity and arrays); what
    /// lacks from it is a warning.
    fn shape_well_known(
        &mut self,
        record: &mut Record,
        type_name: &str,
        id_at: Option<usize>,
        at: EventAt,
    ) -> Result<(), ReadError> {
        let problem = match type_name {
            super::TRANSFORM => self.transform(record, id_at),
            super::CLIENT_ENTER => missing(&record.values, &["ClientName", "ClientNumber"]),
            super::SCENE_GRAPH => missing(&record.values, &["ID", "Type", "Skipped"]),
            _ => None,
        };
        match problem {
            Some(problem) => self.report(at.place(Finding::new(
                Severity::Warning,
                WELL_KNOWN_BODY,
                format!("{type_name}: {problem}"),
            ))),
            None => Ok(()),
        }
    }

    /// A transform's id (decoded aside, at `id_at` among the body's fields) becomes the
    /// entity, and its vectors typed arrays (spec §14); what is wrong with its shape, for a
    /// warning.
    fn transform(&mut self, record: &mut Record, id_at: Option<usize>) -> Option<String> {
        let mut problem = None;
        match id_at {
            Some(i) => {
                let id = std::mem::replace(&mut self.id, Value::Null);
                record.entity = match &id {
                    Value::Str(s) => Some(self.entity(s)),
                    Value::Int(i) if *i >= 0 => Some(Entity::Id(*i as u64)),
                    Value::UInt(u) => Some(Entity::Id(*u)),
                    Value::Int(i) => Some(self.entity(&i.to_string())),
                    other => {
                        problem = Some(format!(
                            "id is a {}, not a string or an integer",
                            other.kind_name()
                        ));
                        None
                    }
                };
                if problem.is_some() {
                    // Not an entity: the id stays a value, in its place in the body.
                    let at = (TIMES + i).min(record.values.len());
                    record.values.insert(at, ("id".into(), id));
                } else {
                    // Kept for the next transform's id to be decoded into.
                    self.id = id;
                }
            }
            None => problem = Some("no id".into()),
        }
        let from = TIMES.min(record.values.len());
        let fields = &mut record.values[from..];
        let mut scale = false;
        for (key, n) in [("position", 3), ("rotation", 4), ("scale", 3)] {
            let Some((_, v)) = fields.iter_mut().find(|(k, _)| k == key) else {
                if key != "scale" {
                    problem.get_or_insert_with(|| format!("no {key}"));
                }
                continue;
            };
            scale |= key == "scale";
            match v {
                Value::Array(a) if a.shape.len() == 1 && a.len() == n => {}
                _ => match body::numbers(v) {
                    Some(a) if a.len() == n => *v = Value::Array(a),
                    _ => {
                        problem.get_or_insert_with(|| format!("{key} is not {n} numbers"));
                    }
                },
            }
        }
        if !scale {
            record.values.push((
                "scale".into(),
                Value::Array(Array::flat(ArrayData::F64(vec![1.0; 3]))),
            ));
        }
        problem
    }
}

/// The record values every event has, before its body's fields.
const TIMES: usize = 2;

/// Writes the two times every event has as its record's first values, keeping the keys a
/// recycled record already has there.
fn set_times(values: &mut Vec<Field>, create_time: f64, capture_time: f64) {
    for (i, (key, t)) in [("create_time", create_time), ("capture_time", capture_time)]
        .into_iter()
        .enumerate()
    {
        match values.get_mut(i) {
            Some((k, v)) if k == key => *v = Value::Float(t),
            _ => {
                values.truncate(i);
                values.push((key.to_string(), Value::Float(t)));
            }
        }
    }
}

/// The body's fields of a record's values (after the two times).
fn body_fields(values: &[Field]) -> &[Field] {
    values.get(TIMES..).unwrap_or_default()
}

/// The event's bytes as the record's original bytes, in the buffer a recycled record has.
fn set_raw(raw: &mut Option<Box<RawBytes>>, bytes: &[u8]) {
    match raw {
        Some(r) => {
            r.format = RAW;
            r.time_inside = false;
            r.bytes.clear();
            r.bytes.extend_from_slice(bytes);
        }
        None => *raw = Some(Box::new(RawBytes::new(RAW, bytes.to_vec()))),
    }
}

fn missing(values: &[Field], keys: &[&str]) -> Option<String> {
    let fields = body_fields(values);
    keys.iter()
        .find(|k| !fields.iter().any(|(f, _)| f == *k))
        .map(|k| format!("no {k}"))
}

/// The first error a lenient pass that decodes every body finds (where recover cuts).
fn first_error(path: &Path, options: ReadOptions) -> Result<Option<Finding>, ReadError> {
    let check = ReadOptions {
        decode: true,
        lenient: true,
        ..options
    };
    let mut pass = XrecReader::open(path, check)?;
    while let Some(record) = pass.next() {
        pass.recycle(record?);
    }
    let first = pass
        .findings
        .list()
        .iter()
        .find(|f| f.severity == Severity::Error);
    Ok(first.cloned())
}

/// Walks packet headers from `from` (after the Start) up to `end` to find the End and where
/// framing stops, reading 8 bytes per packet (and the 40 bounds bytes of Event packets).
fn scan(input: &mut Input, from: u64, end: u64, revision: u16) -> Scan {
    let len = end;
    let mut s = Scan {
        framed: from,
        packets: 1,
        ..Scan::default()
    };
    let mut pos = from;
    while len.saturating_sub(pos) >= HEADER_LEN as u64 {
        let Ok(b) = input.bytes(pos, HEADER_LEN) else {
            break;
        };
        let h = PacketHeader::parse(b);
        s.bytes += HEADER_LEN as u64;
        let end = pos + HEADER_LEN as u64 + h.payload_len as u64;
        if end > len {
            break;
        }
        let mut span = None;
        if h.kind == layout::END && s.end.is_none() {
            if let Ok(p) = input.bytes(pos + HEADER_LEN as u64, h.payload_len as usize) {
                s.bytes += p.len() as u64;
                s.end = layout::parse_end(p, revision, &mut Vec::new()).ok();
            }
        }
        if h.kind == layout::EVENT && h.payload_len as usize >= BOUNDS_LEN {
            if let Ok(p) = input.bytes(pos + HEADER_LEN as u64, SPAN_LEN) {
                s.bytes += SPAN_LEN as u64;
                let b = Bounds::parse_span(p);
                if b.rtss_begin.is_finite() && b.rtss_end.is_finite() {
                    s.rtss = minmax(minmax(s.rtss, b.rtss_begin), b.rtss_end);
                }
                span = Some(b);
            }
        }
        if s.walked.len() < WALK_INDEX_PACKETS {
            s.walked.push(Walked {
                offset: pos,
                header: h,
                span,
            });
        }
        s.packets += 1;
        pos = end;
        s.framed = end;
    }
    s
}

/// The header of a file: origin at begin_rtss, with begin_unix_ns as its UTC instant (Unix
/// time); the Start and End in the metadata under `xrec`, for writers.
fn header(start: &Start, scan: &Scan, file_bytes: u64) -> Header {
    let mut header = Header::new(super::NAME, format!("1.{}", start.revision));
    header.origin = TimeOrigin {
        epoch: Some(Epoch {
            unix_ns: start.begin_unix_ns,
            fraction_digits: fraction_digits(start.begin_unix_ns),
        }),
        system: Some("unix".into()),
    };
    let end = scan.end.as_ref().map(|e| {
        json!({
            "end_unix_ns": e.end_unix_ns,
            "end_rtss": e.end_rtss,
            "event_packet_count": e.event_packet_count,
            "event_count": e.event_count,
            "metadata": e.metadata.clone().map(Json::Object),
        })
    });
    let mut m = Map::new();
    m.insert("app_version".into(), json!(start.app_version));
    m.insert(
        "compression".into(),
        json!(layout::codec_name(start.compression)),
    );
    m.insert("begin_unix_ns".into(), json!(start.begin_unix_ns));
    m.insert("begin_rtss".into(), json!(start.begin_rtss));
    m.insert(
        "metadata".into(),
        start
            .metadata
            .clone()
            .map(Json::Object)
            .unwrap_or(Json::Null),
    );
    m.insert("end".into(), end.unwrap_or(Json::Null));
    m.insert("framed_bytes".into(), json!(scan.framed));
    m.insert("file_bytes".into(), json!(file_bytes));
    header.metadata.insert(HEADER_KEY.into(), Json::Object(m));
    header
}

/// The fewest fraction digits that show `ns` exactly.
fn fraction_digits(ns: i64) -> u8 {
    let mut rest = ns.rem_euclid(1_000_000_000);
    let mut digits = 9;
    while digits > 0 && rest % 10 == 0 {
        rest /= 10;
        digits -= 1;
    }
    digits
}

impl Iterator for XrecReader {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.done {
                return None;
            }
            if let Some(p) = &self.packet {
                if p.decoded < p.bounds.event_count {
                    match self.next_event() {
                        // The event that ended a read up to the damage is not returned.
                        Ok(Some(r)) if self.done => {
                            self.recycle(r);
                            return None;
                        }
                        Ok(Some(r)) => return Some(Ok(r)),
                        Ok(None) => continue,
                        Err(e) => return Some(Err(e)),
                    }
                }
                let Some(p) = self.packet.take() else {
                    continue;
                };
                if let Err(e) = self.finish_packet(p) {
                    return Some(Err(e));
                }
                continue;
            }
            match self.next_packet() {
                Ok(true) => continue,
                Ok(false) => {
                    let r = self.finish();
                    self.done = true;
                    if let Err(e) = r {
                        return Some(Err(e));
                    }
                    return None;
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

impl Source for XrecReader {
    fn header(&self) -> &Header {
        &self.header
    }

    fn findings(&self) -> Vec<(&Path, &Findings)> {
        vec![(self.path.as_path(), &self.findings)]
    }

    fn progress(&self) -> (u64, u64) {
        (self.pos.min(self.data_end), self.data_end)
    }

    fn recycle(&mut self, record: Record) {
        if self.spare.len() < SPARE {
            self.spare.push(record);
        }
    }

    fn facts(&self) -> Vec<Fact> {
        let s = &self.start;
        let begin = crate::model::time::iso8601(s.begin_unix_ns, None);
        let end = self.end.as_ref();
        let session = end.map(|e| layout::record_time(e.end_rtss, s.begin_rtss));
        let per_type: Map<String, Json> = self
            .header
            .channels
            .iter()
            .zip(&self.per_type)
            .map(|(c, n)| (c.name.clone(), json!(n)))
            .collect();
        let chapters: Vec<Json> = self
            .chapters
            .iter()
            .map(|(name, t, f)| json!({"name": name, "time_ns": t, "frame": f}))
            .collect();
        let packets = json!({
            "start": 1,
            "event": self.event_packets,
            "extension": self.extension_packets,
            "end": u64::from(end.is_some()),
        });
        let mut facts = vec![
            Fact::new("app_version", s.app_version.clone(), json!(s.app_version)),
            Fact::new(
                "xrec_version",
                format!("{}.{}", s.version, s.revision),
                json!({"version": s.version, "revision": s.revision}),
            ),
            Fact::new(
                "compression",
                layout::codec_name(s.compression),
                json!(layout::codec_name(s.compression)),
            ),
            Fact::new(
                "begin",
                begin.clone(),
                json!({"unix_ns": s.begin_unix_ns, "utc": begin, "rtss": s.begin_rtss}),
            ),
        ];
        facts.push(match end {
            Some(e) => {
                let t = crate::model::time::iso8601(e.end_unix_ns, None);
                Fact::new(
                    "end",
                    t.clone(),
                    json!({"unix_ns": e.end_unix_ns, "utc": t, "rtss": e.end_rtss}),
                )
            }
            None => Fact::new("end", "none (no End packet)", Json::Null),
        });
        facts.push(Fact::new(
            "session_duration_ns",
            session.map_or("null (no End packet)".into(), |d| d.to_string()),
            json!(session),
        ));
        facts.push(Fact::new(
            "finished_cleanly",
            if end.is_some() {
                "yes (End packet present)"
            } else {
                "no (no End packet)"
            },
            json!(end.is_some()),
        ));
        facts.push(Fact::from_json("packets", packets));
        facts.push(Fact::from_json("events_per_type", Json::Object(per_type)));
        facts.push(Fact::new(
            "frame_range",
            self.frames
                .map_or("none".into(), |(a, b)| format!("{a}..={b}")),
            self.frames.map_or(Json::Null, |(a, b)| json!([a, b])),
        ));
        facts.push(Fact::new(
            "chapters",
            if chapters.is_empty() {
                "none".to_string()
            } else {
                // Laying out a table cell costs more than its length: the first and last
                // few (the JSON has them all).
                let listed: Vec<String> = (self.chapters.iter())
                    .map(|(n, t, _)| format!("{n} at {t} ns"))
                    .collect();
                first_and_last(&listed, FEW_CHAPTERS, "chapters").join(", ")
            },
            Json::Array(chapters),
        ));
        if let Some(m) = &s.metadata {
            facts.push(Fact::from_json("start_metadata", Json::Object(m.clone())));
        }
        if let Some(m) = end.and_then(|e| e.metadata.as_ref()) {
            facts.push(Fact::from_json("end_metadata", Json::Object(m.clone())));
        }
        facts
    }
}
