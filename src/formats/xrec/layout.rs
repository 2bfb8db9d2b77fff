//! The bytes of XREC-S 1.0 (spec `xrec.md` §2–§7): packet headers, the Start, Event bounds,
//! event records and End payloads, parsed from slices whose lengths were checked against
//! the file, and encoded back. No I/O here.

use serde_json::{Map, Value as Json};

use super::codes::*;
use crate::formats::cursor::{Cursor, OutOfBounds};
use crate::report::{Finding, Severity};

pub const HEADER_LEN: usize = 8;
/// Bounds, event count and events_bytes at the start of every Event payload (never compressed).
pub const BOUNDS_LEN: usize = 40;
/// The frame and rtss bounds: the first 32 bytes of the bounds, all a walk needs to place a
/// packet.
pub const SPAN_LEN: usize = 32;
pub const START_MIN: usize = 34;
pub const END_MIN: usize = 32;
/// An event record without its type name and body.
pub const EVENT_FIXED: usize = 30;
/// What a reader decompresses at most for one packet (spec §8).
pub const MAX_EVENTS_BYTES: u32 = 1 << 30;
/// Uncompressed events a writer puts in one packet (spec §10).
pub const PACKET_EVENTS_LIMIT: usize = 1 << 20;
pub const MAGIC: &[u8; 4] = b"XREC";
pub const FORMAT_VERSION: u16 = 1;
pub const FORMAT_REVISION: u16 = 0;

pub const START: u8 = 0x01;
pub const EVENT: u8 = 0x02;
pub const END: u8 = 0x03;
pub const FLAG_COMPRESSED: u8 = 0x01;

pub const CODEC_NONE: u8 = 0;
pub const CODEC_GZIP: u8 = 1;

pub fn codec_name(codec: u8) -> &'static str {
    match codec {
        CODEC_NONE => "none",
        CODEC_GZIP => "gzip",
        _ => "unknown",
    }
}

fn error(code: &'static str, message: impl Into<String>) -> Finding {
    Finding::new(Severity::Error, code, message)
}

/// A packet header (spec §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketHeader {
    pub kind: u8,
    pub flags: u8,
    pub reserved: u16,
    pub payload_len: u32,
}

impl PacketHeader {
    pub fn parse(b: &[u8]) -> PacketHeader {
        PacketHeader {
            kind: b[0],
            flags: b[1],
            reserved: u16::from_le_bytes([b[2], b[3]]),
            payload_len: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        }
    }

    pub fn encode(kind: u8, flags: u8, payload_len: u32) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0] = kind;
        b[1] = flags;
        b[4..8].copy_from_slice(&payload_len.to_le_bytes());
        b
    }
}

/// Whether `head` (the first bytes of a file of `file_len` bytes) starts like an XREC-S
/// file (spec §3, "Detection").
pub fn is_profile(head: &[u8], file_len: u64) -> bool {
    if head.len() < 12 || head[0] != START || head[1..4] != [0, 0, 0] || &head[8..12] != MAGIC {
        return false;
    }
    let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as u64;
    len >= START_MIN as u64 && len <= file_len.saturating_sub(HEADER_LEN as u64)
}

/// The message of `XREC_NOT_PROFILE`.
pub const NOT_PROFILE_TEXT: &str = "not an XREC-S (simrec profile) file; the native MAGES XREC byte layout is unpublished, so simrec cannot read it";

/// Reads fields in order from a payload, reporting a read past its end as `XREC_PAYLOAD_SHORT`.
pub struct Fields<'a> {
    c: Cursor<'a>,
    what: &'static str,
}

impl<'a> Fields<'a> {
    pub fn new(b: &'a [u8], what: &'static str) -> Fields<'a> {
        Fields {
            c: Cursor::new(b),
            what,
        }
    }

    fn short(&self, e: OutOfBounds) -> Finding {
        error(
            PAYLOAD_SHORT,
            format!(
                "the {} payload ends at byte {} of its {} while reading {} more bytes",
                self.what,
                e.at,
                e.at + e.available,
                e.wanted
            ),
        )
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Finding> {
        self.c.take(n).map_err(|e| self.short(e))
    }

    pub fn u8(&mut self) -> Result<u8, Finding> {
        self.c.u8().map_err(|e| self.short(e))
    }
    pub fn u16(&mut self) -> Result<u16, Finding> {
        self.c.u16_le().map_err(|e| self.short(e))
    }
    pub fn u32(&mut self) -> Result<u32, Finding> {
        self.c.u32_le().map_err(|e| self.short(e))
    }
    pub fn u64(&mut self) -> Result<u64, Finding> {
        self.c.u64_le().map_err(|e| self.short(e))
    }
    pub fn i64(&mut self) -> Result<i64, Finding> {
        self.c.i64_le().map_err(|e| self.short(e))
    }
    pub fn f64(&mut self) -> Result<f64, Finding> {
        self.c.f64_le().map_err(|e| self.short(e))
    }

    /// A `str16`.
    pub fn str16(&mut self, field: &str) -> Result<&'a str, Finding> {
        let n = self.u16()? as usize;
        let b = self.take(n)?;
        std::str::from_utf8(b).map_err(|_| {
            error(
                BAD_UTF8,
                format!("the {} payload's {field} is not valid UTF-8", self.what),
            )
        })
    }

    /// A `json32`: `None` for length 0.
    pub fn json32(&mut self) -> Result<Option<Map<String, Json>>, Finding> {
        let n = self.u32()? as usize;
        if n == 0 {
            return Ok(None);
        }
        let b = self.take(n)?;
        let text = std::str::from_utf8(b).map_err(|_| {
            error(
                BAD_UTF8,
                format!("the {} payload's metadata is not valid UTF-8", self.what),
            )
        })?;
        match serde_json::from_str::<Json>(text) {
            Ok(Json::Object(map)) => Ok(Some(map)),
            Ok(_) => Err(error(
                BAD_JSON,
                format!(
                    "the {} payload's metadata is JSON but not an object",
                    self.what
                ),
            )),
            Err(e) => Err(error(
                BAD_JSON,
                format!("the {} payload's metadata is not JSON: {e}", self.what),
            )),
        }
    }

    pub fn rest(&self) -> usize {
        self.c.remaining()
    }
}

/// The Start payload (spec §4).
#[derive(Debug, Clone, PartialEq)]
pub struct Start {
    pub version: u16,
    pub revision: u16,
    pub compression: u8,
    pub begin_unix_ns: i64,
    pub begin_rtss: f64,
    pub app_version: String,
    pub metadata: Option<Map<String, Json>>,
}

/// A Start payload, or the finding that makes the file unreadable; non-fatal findings are
/// pushed to `found`.
pub fn parse_start(payload: &[u8], found: &mut Vec<Finding>) -> Result<Start, Finding> {
    let mut f = Fields::new(payload, "Start");
    let magic = f.take(4)?;
    if magic != MAGIC {
        return Err(error(NOT_PROFILE, NOT_PROFILE_TEXT));
    }
    let version = f.u16()?;
    let revision = f.u16()?;
    if version != FORMAT_VERSION {
        return Err(error(
            VERSION,
            format!("format version {version}.{revision}: simrec reads XREC-S version 1 only"),
        ));
    }
    if revision > FORMAT_REVISION {
        found.push(Finding::new(
            Severity::Warning,
            REVISION,
            format!("format revision {revision} is newer than 1.0: fields simrec does not know are skipped"),
        ));
    }
    let compression = f.u8()?;
    if compression > CODEC_GZIP {
        return Err(error(
            BAD_CODEC,
            format!("compression code {compression}: XREC-S knows 0 (none) and 1 (gzip)"),
        ));
    }
    if f.take(3)? != [0, 0, 0] {
        found.push(error(
            RESERVED,
            "the Start payload's reserved bytes are not 0",
        ));
    }
    let begin_unix_ns = f.i64()?;
    let begin_rtss = f.f64()?;
    let app_version = f.str16("app_version")?.to_string();
    let metadata = f.json32()?;
    if !begin_rtss.is_finite() {
        return Err(error(
            NONFINITE_TIME,
            format!("begin_rtss is {begin_rtss}: record times cannot be computed"),
        ));
    }
    if revision == 0 && f.rest() > 0 {
        found.push(error(
            PAYLOAD_LONG,
            format!("{} bytes after the Start payload's fields", f.rest()),
        ));
    }
    Ok(Start {
        version,
        revision,
        compression,
        begin_unix_ns,
        begin_rtss,
        app_version,
        metadata,
    })
}

pub fn encode_start(s: &Start) -> Vec<u8> {
    let meta = json_bytes(&s.metadata);
    let mut p = Vec::with_capacity(START_MIN + s.app_version.len() + meta.len());
    p.extend_from_slice(MAGIC);
    p.extend_from_slice(&s.version.to_le_bytes());
    p.extend_from_slice(&s.revision.to_le_bytes());
    p.push(s.compression);
    p.extend_from_slice(&[0, 0, 0]);
    p.extend_from_slice(&s.begin_unix_ns.to_le_bytes());
    p.extend_from_slice(&s.begin_rtss.to_le_bytes());
    let app = truncated_str16(&s.app_version);
    p.extend_from_slice(&(app.len() as u16).to_le_bytes());
    p.extend_from_slice(app.as_bytes());
    p.extend_from_slice(&(meta.len() as u32).to_le_bytes());
    p.extend_from_slice(&meta);
    packet(START, 0, &p)
}

/// At most 65,535 bytes of `s`, cut at a character boundary.
pub fn truncated_str16(s: &str) -> &str {
    let mut n = s.len().min(u16::MAX as usize);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    &s[..n]
}

fn json_bytes(m: &Option<Map<String, Json>>) -> Vec<u8> {
    match m {
        Some(m) => serde_json::to_vec(m).unwrap_or_default(),
        None => Vec::new(),
    }
}

/// A whole packet: header and payload.
pub fn packet(kind: u8, flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(HEADER_LEN + payload.len());
    b.extend_from_slice(&PacketHeader::encode(kind, flags, payload.len() as u32));
    b.extend_from_slice(payload);
    b
}

/// An Event packet's bounds and counts (spec §5).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub frame_begin: i64,
    pub frame_end: i64,
    pub rtss_begin: f64,
    pub rtss_end: f64,
    pub event_count: u32,
    pub events_bytes: u32,
}

impl Bounds {
    pub fn parse(b: &[u8]) -> Bounds {
        let i = |o: usize| i64::from_le_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]));
        let u = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap_or([0; 4]));
        Bounds {
            frame_begin: i(0),
            frame_end: i(8),
            rtss_begin: f64::from_bits(i(16) as u64),
            rtss_end: f64::from_bits(i(24) as u64),
            event_count: u(32),
            events_bytes: u(36),
        }
    }

    /// The frame and rtss bounds from the first [`SPAN_LEN`] bytes, with counts 0.
    pub fn parse_span(b: &[u8]) -> Bounds {
        let mut full = [0u8; BOUNDS_LEN];
        let n = b.len().min(SPAN_LEN);
        full[..n].copy_from_slice(&b[..n]);
        Bounds::parse(&full)
    }

    pub fn encode(&self) -> [u8; BOUNDS_LEN] {
        let mut b = [0u8; BOUNDS_LEN];
        b[0..8].copy_from_slice(&self.frame_begin.to_le_bytes());
        b[8..16].copy_from_slice(&self.frame_end.to_le_bytes());
        b[16..24].copy_from_slice(&self.rtss_begin.to_le_bytes());
        b[24..32].copy_from_slice(&self.rtss_end.to_le_bytes());
        b[32..36].copy_from_slice(&self.event_count.to_le_bytes());
        b[36..40].copy_from_slice(&self.events_bytes.to_le_bytes());
        b
    }
}

/// One event record inside an events area (spec §6), borrowing the area.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    pub type_name: &'a str,
    pub create_frame: i64,
    pub create_time: f64,
    pub capture_time: f64,
    pub body: &'a [u8],
    /// Bytes of the whole record.
    pub len: usize,
}

/// Offset of create_time inside an event record whose type name has `name_len` bytes.
pub fn create_time_offset(name_len: usize) -> usize {
    2 + name_len + 8
}

/// The event record at the start of `area`.
pub fn parse_event(area: &[u8]) -> Result<Event<'_>, Finding> {
    let (mut ev, body_len) = head(area)?;
    ev.body = area
        .get(ev.len - body_len..ev.len)
        .ok_or_else(|| short_event(None))?;
    Ok(ev)
}

/// An event record's fields without its body (`body` empty), when the bytes hold no more
/// than its head; `len` is still the whole record's.
pub fn parse_event_head(area: &[u8]) -> Result<Event<'_>, Finding> {
    head(area).map(|(ev, _)| ev)
}

/// The fields before the body, and the body's length.
fn head(area: &[u8]) -> Result<(Event<'_>, usize), Finding> {
    let mut f = Fields::new(area, "Event");
    let short = |e: Finding| short_event(Some(e));
    let type_name = f.str16("type name").map_err(short)?;
    let create_frame = f.i64().map_err(short)?;
    let create_time = f.f64().map_err(short)?;
    let capture_time = f.f64().map_err(short)?;
    let body_len = f.u32().map_err(short)? as usize;
    let ev = Event {
        type_name,
        create_frame,
        create_time,
        capture_time,
        body: &[],
        len: EVENT_FIXED + type_name.len() + body_len,
    };
    Ok((ev, body_len))
}

/// The events area ending inside an event record (a payload too short), or `other`.
fn short_event(other: Option<Finding>) -> Finding {
    match other {
        Some(e) if e.code != PAYLOAD_SHORT => e,
        _ => error(
            EVENT_COUNT,
            "the events area ends inside an event record (fewer bytes than event_count events)",
        ),
    }
}

/// Appends an event record to `out`.
pub fn encode_event(
    out: &mut Vec<u8>,
    type_name: &str,
    create_frame: i64,
    create_time: f64,
    capture_time: f64,
    body: &[u8],
) {
    let name = truncated_str16(type_name);
    out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&create_frame.to_le_bytes());
    out.extend_from_slice(&create_time.to_le_bytes());
    out.extend_from_slice(&capture_time.to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(body);
}

/// The End payload (spec §7).
#[derive(Debug, Clone, PartialEq)]
pub struct End {
    pub end_unix_ns: i64,
    pub end_rtss: f64,
    pub event_packet_count: u32,
    pub event_count: u64,
    pub metadata: Option<Map<String, Json>>,
}

pub fn parse_end(payload: &[u8], revision: u16, found: &mut Vec<Finding>) -> Result<End, Finding> {
    let mut f = Fields::new(payload, "End");
    let end = End {
        end_unix_ns: f.i64()?,
        end_rtss: f.f64()?,
        event_packet_count: f.u32()?,
        event_count: f.u64()?,
        metadata: f.json32()?,
    };
    if revision == 0 && f.rest() > 0 {
        found.push(error(
            PAYLOAD_LONG,
            format!("{} bytes after the End payload's fields", f.rest()),
        ));
    }
    Ok(end)
}

pub fn encode_end(e: &End) -> Vec<u8> {
    let meta = json_bytes(&e.metadata);
    let mut p = Vec::with_capacity(END_MIN + meta.len());
    p.extend_from_slice(&e.end_unix_ns.to_le_bytes());
    p.extend_from_slice(&e.end_rtss.to_le_bytes());
    p.extend_from_slice(&e.event_packet_count.to_le_bytes());
    p.extend_from_slice(&e.event_count.to_le_bytes());
    p.extend_from_slice(&(meta.len() as u32).to_le_bytes());
    p.extend_from_slice(&meta);
    packet(END, 0, &p)
}

/// Record time of an RTSS reading: round((t − begin_rtss) × 10⁹) ns (spec §11), saturating.
pub fn record_time(t: f64, begin_rtss: f64) -> i64 {
    ((t - begin_rtss) * 1e9).round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_and_end_encode_as_the_spec_example() {
        let start = Start {
            version: 1,
            revision: 0,
            compression: 0,
            begin_unix_ns: 1_700_000_000_000_000_000,
            begin_rtss: 12.5,
            app_version: "1.0".into(),
            metadata: Some(Map::new()),
        };
        let bytes = encode_start(&start);
        assert_eq!(bytes.len(), 47);
        assert_eq!(&bytes[..12], b"\x01\0\0\0\x27\0\0\0XREC");
        let mut found = Vec::new();
        assert_eq!(parse_start(&bytes[8..], &mut found).unwrap(), start);
        assert!(found.is_empty());
        let end = End {
            end_unix_ns: 1_700_000_001_500_000_000,
            end_rtss: 14.0,
            event_packet_count: 1,
            event_count: 1,
            metadata: None,
        };
        let bytes = encode_end(&end);
        assert_eq!(bytes.len(), 40);
        assert_eq!(parse_end(&bytes[8..], 0, &mut found).unwrap(), end);
    }
}
