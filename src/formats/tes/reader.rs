//! Reading `.3es` captures (spec §2, §3, §6.4, §7–§9, §13–§14): top-level framing with
//! marker resync, CRCs at both levels, whole-file gzip, collated expansion, frames and time,
//! and the validation rules, as one pull iterator of records (one per message).

use std::io::Read;
use std::path::{Path, PathBuf};

use super::codes::*;
use super::decode::{self, Ctx, Sem};
use super::packet::{self, PacketHeader, HEADER_LEN, MARKER};
use super::stats::Stats;
use super::stream::Layer;
use super::validate::Checker;
use super::{names, RAW_FORMAT};
use crate::formats::input::{display_name, Input};
use crate::formats::{ReadError, ReadOptions, Source};
use crate::model::Header;
use crate::model::{Entity, RawBytes, Record};
use crate::report::{Fact, Finding, Findings, Severity};

/// Largest decoded body accepted for an oversized collated packet (bounded memory).
const MAX_OVERSIZED: u32 = 64 << 20;
/// Bytes examined per step of a resync scan.
const SCAN_CHUNK: usize = 1 << 16;
/// How far the input reads ahead in a header walk.
const HEADER_WALK_READ_AHEAD: usize = 4 << 10;
/// The first packets among which a FrameCount is expected.
const HEADER_PACKETS: u64 = 5;

/// Defaults that apply until a ServerInfo says otherwise (spec §6.1).
pub const DEFAULT_TIME_UNIT: u64 = 1000;
pub const DEFAULT_FRAME_TIME: u32 = 33;

pub struct TesReader {
    path: PathBuf,
    layer: Layer,
    options: ReadOptions,
    /// A header walk ([`TesReader::header_walk`]).
    walk: bool,
    header: Header,
    /// Position of the next top-level packet in the current layer.
    pos: u64,
    /// Decoded body of the collated packet being expanded, and the next inner offset.
    body: Vec<u8>,
    body_pos: usize,
    /// File offset of the collated packet being expanded (or of the gzip start).
    body_top: u64,
    /// Frame index and start time (µs) of the current frame.
    frame: u64,
    time_us: u64,
    time_unit: u64,
    frame_time: u32,
    index: u64,
    findings: Findings,
    checker: Checker,
    pub(super) stats: Stats,
    version: Option<u16>,
    version_flags: [bool; 3],
    server_infos: u64,
    frame_counts: u64,
    end_seen: bool,
    end_reported: bool,
    records_since_frame: u64,
    pending: Option<ReadError>,
    done: bool,
    issues: Vec<super::validate::Issue>,
}

fn fatal(f: Finding) -> ReadError {
    ReadError::invalid(f)
}

/// The findings of one packet, each at its offset and index (and, in a collated packet,
/// its offset inside it).
struct PacketNotes {
    found: Vec<Finding>,
    at: u64,
    index: u64,
    inner: Option<usize>,
}

impl PacketNotes {
    fn push(&mut self, s: Severity, code: &'static str, m: String) {
        let m = match self.inner {
            Some(o) => format!("{m} (inner offset {o})"),
            None => m,
        };
        self.found
            .push(Finding::new(s, code, m).at(self.at, self.index));
    }
}

impl TesReader {
    pub fn open(path: &Path, options: ReadOptions) -> Result<TesReader, ReadError> {
        let walk = !options.decode && options.lenient;
        Self::open_walking(path, options, walk)
    }

    /// [`TesReader::open`] returning every packet whole without values, also when reading
    /// leniently (a merge maps the ids in every packet's bytes).
    pub(super) fn open_packets(path: &Path, options: ReadOptions) -> Result<TesReader, ReadError> {
        let options = ReadOptions {
            decode: false,
            ..options
        };
        Self::open_walking(path, options, false)
    }

    fn open_walking(path: &Path, options: ReadOptions, walk: bool) -> Result<TesReader, ReadError> {
        let name = display_name(path);
        let input = Input::open(path).map_err(|e| ReadError::from(e).in_file(&name))?;
        Self::from_input(input, &name, options, walk).map_err(|e| e.in_file(&name))
    }

    /// Reads from `at.pos`, the top-level packet that starts frame `at.frame` (found by a
    /// walk), with the timing in effect there; the validation state is seeded with the
    /// packets that rebuild the scene, so that records after the cut are checked against it.
    pub(super) fn open_at(
        path: &Path,
        options: ReadOptions,
        at: &super::walk::Folded,
        scene: &[Vec<u8>],
    ) -> Result<TesReader, ReadError> {
        let mut r = Self::open(path, options)?;
        r.pos = at.pos;
        r.frame = at.frame;
        r.time_us = at.time_us;
        r.time_unit = at.time_unit;
        r.frame_time = at.frame_time;
        r.stats.time_unit = at.time_unit;
        // Past the header packets: no "first packet" or "FrameCount" rules apply.
        r.index = HEADER_PACKETS + 1;
        r.server_infos = 1;
        r.frame_counts = 1;
        for p in scene {
            let Some(h) = PacketHeader::parse(p).filter(|h| h.packet_len() == p.len()) else {
                continue;
            };
            let start = h.payload_start();
            let payload = &p[start..start + h.payload_size as usize];
            let d = decode::decode(
                h.routing_id,
                h.message_id,
                payload,
                Ctx {
                    version_minor: h.version_minor.min(4),
                    values: false,
                    data_dp: None,
                },
            );
            r.checker
                .observe(h.routing_id, h.version_minor, &d.sem, 0, &mut r.issues);
            r.issues.clear();
        }
        Ok(r)
    }

    /// The index of the frame the record just returned belongs to: its `frame`, except for
    /// a Reset, whose record says 0 (a reset in simrec's model) while the reader is still
    /// in its frame.
    pub(super) fn frame_index(&self, r: &Record) -> u64 {
        if r.channel == names::RESET_CHANNEL {
            self.frame
        } else {
            r.frame.and_then(|f| u64::try_from(f).ok()).unwrap_or(0)
        }
    }

    /// Reads a capture held in memory; `name` is used in findings and errors.
    pub fn from_bytes(
        bytes: Vec<u8>,
        name: &Path,
        options: ReadOptions,
    ) -> Result<TesReader, ReadError> {
        let walk = !options.decode && options.lenient;
        Self::from_input(Input::from_bytes(bytes), name, options, walk).map_err(|e| e.in_file(name))
    }

    fn from_input(
        mut input: Input,
        name: &Path,
        options: ReadOptions,
        walk: bool,
    ) -> Result<TesReader, ReadError> {
        if input.is_empty() {
            return Err(fatal(
                Finding::new(Severity::Error, EMPTY_FILE, "the file is empty (0 bytes)").offset(0),
            ));
        }
        let n = input.len().min(HEADER_LEN as u64 + 13) as usize;
        let head = input.bytes(0, n)?.to_vec();
        let starts_gzip = head.starts_with(&[0x1f, 0x8b]);
        if !head.starts_with(&MARKER) && !starts_gzip && !options.lenient {
            return Err(fatal(
                Finding::new(
                    Severity::Error,
                    BAD_MARKER,
                    format!(
                        "not a 3es capture: bytes 0..4 are {}, not the packet marker 03 e5 5e 30",
                        hex(&head[..head.len().min(4)])
                    ),
                )
                .offset(0),
            ));
        }
        let mut header = super::header(head.get(7).map_or(4, |v| *v as u16));
        let (mut time_unit, mut frame_time) = (DEFAULT_TIME_UNIT, DEFAULT_FRAME_TIME);
        if let Some(h) = PacketHeader::parse(&head) {
            if h.routing_id == decode::R_SERVER_INFO && head.len() >= HEADER_LEN + 13 {
                let p = &head[HEADER_LEN..];
                let tu = u64::from_be_bytes(p[..8].try_into().unwrap_or_default());
                let ft = u32::from_be_bytes(p[8..12].try_into().unwrap_or_default());
                if tu > 0 {
                    time_unit = tu;
                }
                frame_time = ft;
                header.metadata.insert("time_unit_us".into(), tu.into());
                header
                    .metadata
                    .insert("default_frame_time".into(), ft.into());
                header
                    .metadata
                    .insert("coordinate_frame".into(), p[12].into());
            }
        }
        if walk {
            // A header walk skips the payloads of most large packets (mesh data): read a
            // little ahead so that their bytes are not read either.
            input.set_read_ahead(HEADER_WALK_READ_AHEAD);
        }
        Ok(TesReader {
            path: name.to_path_buf(),
            layer: Layer::Plain(input),
            options,
            walk,
            header,
            pos: 0,
            body: Vec::new(),
            body_pos: 0,
            body_top: 0,
            frame: 0,
            time_us: 0,
            time_unit,
            frame_time,
            index: 0,
            findings: Findings::default(),
            checker: Checker::default(),
            stats: Stats::default(),
            version: None,
            version_flags: [false; 3],
            server_infos: 0,
            frame_counts: 0,
            end_seen: false,
            end_reported: false,
            records_since_frame: 0,
            pending: None,
            done: false,
            issues: Vec::new(),
        })
    }

    /// A lenient read without values (`inspect` without --deep): packet headers, and the
    /// payloads that frames, time, FrameCount and the live scene need. CRCs and the other
    /// payloads are not looked at; `validate` and `inspect --deep` check them.
    fn header_walk(&self) -> bool {
        self.walk
    }

    /// Whether a payload can go undecoded when no values are wanted: shape updates, bulk
    /// mesh data and mesh resource components change neither frames nor the live scene.
    fn skippable(&self, routing: u16, message: u16) -> bool {
        !self.options.decode
            && match routing {
                decode::R_SHAPE_FIRST..=decode::R_SHAPE_LAST => {
                    message == decode::S_UPDATE
                        || (message == decode::S_DATA
                            && matches!(routing, decode::R_MESH_SHAPE | decode::R_POINT_CLOUD))
                }
                decode::R_MESH => (3..=8).contains(&message),
                _ => false,
            }
    }

    /// File offset to report for a position of the current layer.
    fn file_offset(&self, pos: u64) -> u64 {
        match &self.layer {
            Layer::Gzip(gz) => gz.start,
            _ => pos,
        }
    }

    /// ` (decoded offset N of the gzip stream)` when reading whole-file gzip.
    fn where_(&self, pos: u64) -> String {
        match &self.layer {
            Layer::Gzip(_) => format!(" (offset {pos} of the decoded gzip stream)"),
            _ => String::new(),
        }
    }

    /// Records a damage finding; strict reading stops at it.
    fn damage(&mut self, finding: Finding) -> Result<(), ReadError> {
        if finding.severity == Severity::Error && !self.options.lenient {
            self.findings.push(finding.clone());
            self.done = true;
            return Err(fatal(finding).in_file(&self.path));
        }
        self.findings.push(finding);
        Ok(())
    }

    fn advance(&mut self) -> Result<Option<Record>, ReadError> {
        loop {
            if let Some(e) = self.pending.take() {
                return Err(e);
            }
            if self.done {
                return Ok(None);
            }
            if self.body_pos < self.body.len() {
                if let Some(r) = self.next_inner()? {
                    return Ok(Some(r));
                }
                continue;
            }
            match self.next_top() {
                Ok(Some(r)) => return Ok(Some(r)),
                Ok(None) => {}
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            }
        }
    }

    /// Reads one top-level packet: a record, or `None` after a container or damage (or at
    /// the end, which sets `done`).
    fn next_top(&mut self) -> Result<Option<Record>, ReadError> {
        let pos = self.pos;
        if let Layer::Plain(_) = self.layer {
            if self.layer.fetch(pos, 2)? == [0x1f, 0x8b] {
                self.findings.push(
                    Finding::new(
                        Severity::Info,
                        FILE_GZIP,
                        "whole-file gzip starts here: the rest is one gzip stream (not seekable; the new C++ viewer cannot read it)",
                    )
                    .offset(pos),
                );
                self.stats.file_gzip_at = Some(pos);
                self.layer.switch_to_gzip(pos);
                self.pos = 0;
                return Ok(None);
            }
        }
        // The header and the first payload bytes (an object id), which is all a header walk
        // reads of most packets.
        let mut head_buf = [0u8; HEADER_LEN + 4];
        let got = {
            let b = self.layer.fetch(pos, HEADER_LEN + 4)?;
            head_buf[..b.len()].copy_from_slice(b);
            b.len()
        };
        let head = &head_buf[..got.min(HEADER_LEN)];
        self.gzip_error()?;
        if head.is_empty() {
            self.finish()?;
            return Ok(None);
        }
        let at = self.file_offset(pos);
        if head.len() < HEADER_LEN {
            let w = self.where_(pos);
            self.damage(
                Finding::new(
                    Severity::Error,
                    TRUNCATED_PACKET,
                    format!("the data ends {} bytes into a packet header{w}", head.len()),
                )
                .at(at, self.index),
            )?;
            self.finish()?;
            return Ok(None);
        }
        let Some(h) = PacketHeader::parse(head) else {
            let w = self.where_(pos);
            self.damage(
                Finding::new(
                    Severity::Error,
                    BAD_MARKER,
                    format!(
                        "no packet marker where a packet should start (found {}){w}",
                        hex(&head[..4])
                    ),
                )
                .at(at, self.index),
            )?;
            return self.resync(pos);
        };
        if !self.header_ok(&h, at, pos)? {
            return self.resync(pos);
        }
        if h.routing_id == decode::R_COLLATED && h.no_crc() {
            let first = self.layer.fetch(pos, HEADER_LEN + 8)?;
            if first.len() == HEADER_LEN + 8 {
                let ub = u32::from_be_bytes([first[20], first[21], first[22], first[23]]);
                if ub > 65535 {
                    return self.oversized(pos, at, ub);
                }
            }
        }
        let len = h.packet_len();
        if self.header_walk()
            && self.skippable(h.routing_id, h.message_id)
            && self
                .layer
                .plain_len()
                .is_some_and(|n| pos + len as u64 <= n)
        {
            // `inspect` needs the header and the object id of these: the rest is not read.
            self.pos = pos + len as u64;
            let head = &head_buf[..got.min(len)];
            if self.index > HEADER_PACKETS && (!self.end_seen || self.end_reported) {
                return Ok(Some(self.skipped(&h, head, at)));
            }
            return self.emit(head.to_vec(), &h, at, None).map(Some);
        }
        let packet = self.layer.fetch(pos, len)?.to_vec();
        self.gzip_error()?;
        if packet.len() < len {
            let w = self.where_(pos);
            self.damage(
                Finding::new(
                    Severity::Error,
                    TRUNCATED_PACKET,
                    format!(
                        "a {len}-byte packet runs past the end of the data ({} bytes left){w}",
                        packet.len()
                    ),
                )
                .at(at, self.index),
            )?;
            return self.resync(pos);
        }
        self.pos = pos + len as u64;
        self.check_crc(&h, &packet, at, None)?;
        if h.routing_id == decode::R_COLLATED {
            self.expand(&h, &packet, at)?;
            return Ok(None);
        }
        self.emit(packet, &h, at, None).map(Some)
    }

    /// Checks a gzip layer for a decoding error met while filling it.
    fn gzip_error(&mut self) -> Result<(), ReadError> {
        if let Layer::Gzip(gz) = &mut self.layer {
            if let Some((message, at)) = gz.error.take() {
                let start = gz.start;
                self.damage(
                    Finding::new(
                        Severity::Error,
                        GZIP_ERROR,
                        format!("the gzip stream that starts at byte {start} fails to decode near compressed byte {at}: {message}"),
                    )
                    .at(start, self.index),
                )?;
            }
        }
        Ok(())
    }

    /// Header fields that make a packet unreadable: false means resync.
    fn header_ok(&mut self, h: &PacketHeader, at: u64, pos: u64) -> Result<bool, ReadError> {
        let w = self.where_(pos);
        if h.version_major != 0 {
            self.damage(
                Finding::new(
                    Severity::Error,
                    VERSION_MAJOR,
                    format!("version_major is {} (only 0 exists){w}", h.version_major),
                )
                .at(at, self.index),
            )?;
            return Ok(false);
        }
        if h.payload_offset != 0 {
            self.damage(
                Finding::new(
                    Severity::Error,
                    PAYLOAD_OFFSET,
                    format!("payload_offset is {} (writers always write 0; upstream readers disagree on it){w}", h.payload_offset),
                )
                .at(at, self.index),
            )?;
            return Ok(false);
        }
        if h.flags & !packet::FLAG_NO_CRC != 0 {
            self.findings.push(
                Finding::new(
                    Severity::Warning,
                    UNKNOWN_HEADER_FLAGS,
                    format!("header flags {:#04x} set bits other than NoCrc{w}", h.flags),
                )
                .at(at, self.index),
            );
        }
        Ok(true)
    }

    fn check_crc(
        &mut self,
        h: &PacketHeader,
        packet: &[u8],
        at: u64,
        inner: Option<usize>,
    ) -> Result<(), ReadError> {
        if h.no_crc() {
            self.findings.push(
                Finding::new(Severity::Info, NOCRC_PACKET, "a packet without CRC (NoCrc)")
                    .at(at, self.index),
            );
            self.stats.no_crc += 1;
            return Ok(());
        }
        if self.header_walk() {
            // `inspect` without --deep: counts and frames only (validate checks CRCs).
            return Ok(());
        }
        if let Some((stored, computed)) = packet::crc_mismatch(h, packet) {
            let place = match inner {
                Some(o) => format!(" (inner packet at offset {o} of the collated body)"),
                None => self.where_(self.pos.saturating_sub(packet.len() as u64)),
            };
            self.damage(
                Finding::new(
                    Severity::Error,
                    CRC_MISMATCH,
                    format!("stored CRC {stored:#06x} but the packet's CRC is {computed:#06x}{place}"),
                )
                .at(at, self.index)
                .hint("the packet is kept by validate and inspect for counting; strict reading stops here"),
            )?;
        }
        Ok(())
    }

    /// Scans forward from `bad` for the next plausible packet (spec §9) and reports the span.
    fn resync(&mut self, bad: u64) -> Result<Option<Record>, ReadError> {
        let mut p = bad + 1;
        let found = loop {
            let chunk = self.layer.fetch(p, SCAN_CHUNK)?.to_vec();
            if chunk.len() < HEADER_LEN {
                break None;
            }
            let mut hit = None;
            for i in 0..=chunk.len() - HEADER_LEN {
                if chunk[i..i + 4] != MARKER {
                    continue;
                }
                let q = p + i as u64;
                if self.candidate(q)? {
                    hit = Some(q);
                    break;
                }
            }
            if hit.is_some() {
                break hit;
            }
            p += (chunk.len() - HEADER_LEN + 1) as u64;
        };
        let end = match found {
            Some(q) => q,
            None => {
                // Everything to the end of the data.
                let mut e = p;
                loop {
                    let n = self.layer.fetch(e, SCAN_CHUNK)?.len();
                    if n == 0 {
                        break;
                    }
                    e += n as u64;
                }
                e
            }
        };
        let w = self.where_(bad);
        let at = self.file_offset(bad);
        self.damage(
            Finding::new(
                Severity::Error,
                SKIPPED_BYTES,
                format!(
                    "{} bytes skipped to resynchronise ({}){w}",
                    end - bad,
                    if found.is_some() {
                        "up to the next valid packet"
                    } else {
                        "to the end of the data"
                    }
                ),
            )
            .at(at, self.index),
        )?;
        self.stats.skipped_bytes += end - bad;
        self.pos = end;
        if found.is_none() {
            self.gzip_error()?;
            self.finish()?;
        }
        Ok(None)
    }

    /// Whether a plausible packet starts at `q` (spec §9).
    fn candidate(&mut self, q: u64) -> Result<bool, ReadError> {
        let head = self.layer.fetch(q, HEADER_LEN)?;
        let Some(h) = PacketHeader::parse(head) else {
            return Ok(false);
        };
        if !h.plausible() {
            return Ok(false);
        }
        let len = h.packet_len();
        let packet = self.layer.fetch(q, len)?;
        Ok(packet.len() == len && packet::crc_mismatch(&h, packet).is_none())
    }

    /// Decodes a collated packet's body into `self.body` (spec §6.4).
    fn expand(&mut self, h: &PacketHeader, packet: &[u8], at: u64) -> Result<(), ReadError> {
        let start = h.payload_start();
        let payload = &packet[start..start + h.payload_size as usize];
        if payload.len() < 8 {
            self.damage(
                Finding::new(
                    Severity::Error,
                    PAYLOAD_SHORT,
                    format!(
                        "a CollatedPacket payload of {} bytes has no room for its 8-byte header",
                        payload.len()
                    ),
                )
                .at(at, self.index),
            )?;
            return Ok(());
        }
        let flags = packet::be16(payload, 0);
        let reserved = packet::be16(payload, 2);
        let ub = u32::from_be_bytes([payload[4], payload[5], payload[6], payload[7]]);
        self.collated_header(flags, reserved, at);
        self.decode_body(flags, &payload[8..], ub, at)?;
        Ok(())
    }

    fn collated_header(&mut self, flags: u16, reserved: u16, at: u64) {
        self.stats.collated += 1;
        if flags & 1 != 0 {
            self.stats.collated_gzip += 1;
        }
        if reserved != 0 || flags & !1 != 0 {
            self.findings.push(
                Finding::new(
                    Severity::Warning,
                    COLLATED_RESERVED,
                    format!("collated flags {flags:#06x}, reserved {reserved:#06x}: only the Compress bit is defined"),
                )
                .at(at, self.index),
            );
        }
    }

    fn decode_body(
        &mut self,
        flags: u16,
        stored: &[u8],
        ub: u32,
        at: u64,
    ) -> Result<(), ReadError> {
        self.body.clear();
        self.body_pos = 0;
        self.body_top = at;
        if flags & 1 != 0 {
            let limit = u64::from(ub).min(u64::from(MAX_OVERSIZED)) + 1;
            let mut dec = flate2::bufread::GzDecoder::new(stored).take(limit);
            if let Err(e) = dec.read_to_end(&mut self.body) {
                self.damage(
                    Finding::new(
                        Severity::Error,
                        GZIP_ERROR,
                        format!(
                            "the collated body's gzip member fails to decode after {} bytes: {e}",
                            self.body.len()
                        ),
                    )
                    .at(at, self.index),
                )?;
            }
        } else {
            self.body.extend_from_slice(stored);
        }
        if self.body.len() as u64 != u64::from(ub) {
            let n = self.body.len();
            self.damage(
                Finding::new(
                    Severity::Error,
                    COLLATED_SIZE,
                    format!(
                        "the collated body decodes to {n} bytes but uncompressed_bytes says {ub}"
                    ),
                )
                .at(at, self.index),
            )?;
        }
        Ok(())
    }

    /// An oversized file-only collated packet (spec §6.4): NoCrc, uncompressed_bytes > 65535,
    /// the body right after the collated header, payload_size ignored.
    fn oversized(&mut self, pos: u64, at: u64, ub: u32) -> Result<Option<Record>, ReadError> {
        let head = self.layer.fetch(pos, HEADER_LEN + 8)?.to_vec();
        let flags = packet::be16(&head, 16);
        let reserved = packet::be16(&head, 18);
        self.findings.push(
            Finding::new(
                Severity::Info,
                COLLATED_OVERSIZED,
                format!("an oversized file-only collated packet ({ub} decoded bytes)"),
            )
            .at(at, self.index),
        );
        if ub > MAX_OVERSIZED {
            self.damage(
                Finding::new(
                    Severity::Error,
                    COLLATED_SIZE,
                    format!("an oversized collated packet of {ub} bytes is beyond simrec's limit of {MAX_OVERSIZED}"),
                )
                .at(at, self.index),
            )?;
            return self.resync(pos);
        }
        self.collated_header(flags, reserved, at);
        let body_at = pos + HEADER_LEN as u64 + 8;
        if flags & 1 == 0 {
            let body = self.layer.fetch(body_at, ub as usize)?.to_vec();
            if body.len() < ub as usize {
                self.damage(
                    Finding::new(
                        Severity::Error,
                        TRUNCATED_PACKET,
                        format!("an oversized collated body of {ub} bytes runs past the end of the data"),
                    )
                    .at(at, self.index),
                )?;
                return self.resync(pos);
            }
            self.pos = body_at + u64::from(ub);
            self.decode_body(0, &body, ub, at)?;
        } else {
            // One gzip member, however long: decode it and see how much it used.
            let stored = self.layer.fetch(body_at, MAX_OVERSIZED as usize)?.to_vec();
            let mut dec = flate2::bufread::GzDecoder::new(&stored[..]);
            self.body.clear();
            let result = (&mut dec)
                .take(u64::from(ub) + 1)
                .read_to_end(&mut self.body);
            let used = stored.len() - dec.get_ref().len();
            if let Err(e) = result {
                self.damage(
                    Finding::new(
                        Severity::Error,
                        GZIP_ERROR,
                        format!("an oversized collated gzip member fails to decode: {e}"),
                    )
                    .at(at, self.index),
                )?;
                return self.resync(pos);
            }
            self.pos = body_at + used as u64;
            let body = std::mem::take(&mut self.body);
            self.decode_body(0, &body, ub, at)?;
        }
        Ok(None)
    }

    /// The next inner packet of the collated body; `None` after damage (the rest of the body
    /// is dropped: there is no resync inside a body) or a nested collated packet.
    fn next_inner(&mut self) -> Result<Option<Record>, ReadError> {
        let p = self.body_pos;
        let rest = self.body.len() - p;
        let at = self.body_top;
        let drop_rest = |r: &mut TesReader| r.body_pos = r.body.len();
        if rest < HEADER_LEN {
            drop_rest(self);
            self.damage(
                Finding::new(
                    Severity::Error,
                    COLLATED_SIZE,
                    format!("the collated body ends with {rest} bytes that are not a whole packet (inner offset {p})"),
                )
                .at(at, self.index),
            )?;
            return Ok(None);
        }
        let Some(h) = PacketHeader::parse(&self.body[p..p + HEADER_LEN]) else {
            drop_rest(self);
            self.damage(
                Finding::new(
                    Severity::Error,
                    BAD_MARKER,
                    format!("no packet marker at offset {p} of the collated body; the rest of the body is dropped"),
                )
                .at(at, self.index),
            )?;
            return Ok(None);
        };
        if !self.header_ok(&h, at, 0)? {
            drop_rest(self);
            return Ok(None);
        }
        let len = h.packet_len();
        if rest < len {
            drop_rest(self);
            self.damage(
                Finding::new(
                    Severity::Error,
                    TRUNCATED_PACKET,
                    format!("an inner packet of {len} bytes at offset {p} runs past the end of its collated body ({rest} bytes left)"),
                )
                .at(at, self.index),
            )?;
            return Ok(None);
        }
        self.body_pos = p + len;
        let packet = self.body[p..p + len].to_vec();
        self.check_crc(&h, &packet, at, Some(p))?;
        if h.routing_id == decode::R_COLLATED {
            self.damage(
                Finding::new(
                    Severity::Error,
                    COLLATED_NESTED,
                    format!("a CollatedPacket inside a collated body (offset {p}); skipped"),
                )
                .at(at, self.index),
            )?;
            return Ok(None);
        }
        self.emit(packet, &h, at, Some(p)).map(Some)
    }

    fn version_checks(&mut self, h: &PacketHeader, at: u64) {
        let v = h.version_minor;
        let first = *self.version.get_or_insert(v);
        // Each finding once; its message is only built then (this runs for every packet).
        let (index, flags, out) = (self.index, &mut self.version_flags, &mut self.findings);
        let mut once = |i: usize, code: &'static str, message: &dyn Fn() -> String| {
            if !flags[i] {
                flags[i] = true;
                out.push(Finding::new(Severity::Warning, code, message()).at(at, index));
            }
        };
        if v != first {
            once(0, VERSION_MIXED, &|| {
                format!("packets carry version 0.{first} and 0.{v}")
            });
        }
        if v < 3 {
            once(1, VERSION_LEGACY, &|| {
                format!("protocol 0.{v}: framed, flags decoded with that version's table, mesh payloads kept opaque")
            });
        } else if v > 4 {
            once(2, VERSION_NEWER, &|| {
                format!("protocol 0.{v} is newer than 0.4: decoded with the 0.4 rules")
            });
        }
    }

    /// The record of a packet a header walk skips (see `skippable`), from its header and first
    /// payload bytes: what `emit` does for it past the header packets (no rule applies to it
    /// there but the version checks), without the work `emit` needs for other packets.
    fn skipped(&mut self, h: &PacketHeader, head: &[u8], at: u64) -> Record {
        self.version_checks(h, at);
        self.index += 1;
        self.stats.count(
            h.routing_id,
            h.message_id,
            h.payload_size as usize,
            h.packet_len(),
        );
        self.records_since_frame += 1;
        let entity = head
            .get(HEADER_LEN..HEADER_LEN + 4)
            .filter(|_| h.payload_size >= 4)
            .map(|b| Entity::Id(u32::from_be_bytes([b[0], b[1], b[2], b[3]]).into()));
        Record {
            time: self.time_us.saturating_mul(1000).min(i64::MAX as u64) as i64,
            channel: names::channel_of(h.routing_id, h.message_id),
            entity,
            frame: Some(i64::try_from(self.frame).unwrap_or(i64::MAX)),
            values: Vec::new(),
            raw: None,
            exact_seconds: None,
            group: None,
        }
    }

    /// Turns one (non-collated) packet into a record, applying the validation rules.
    fn emit(
        &mut self,
        packet: Vec<u8>,
        h: &PacketHeader,
        at: u64,
        inner: Option<usize>,
    ) -> Result<Record, ReadError> {
        self.version_checks(h, at);
        let index = self.index;
        self.index += 1;
        let (routing, message) = (h.routing_id, h.message_id);
        let start = h.payload_start();
        // In a header walk a skippable packet comes as its header and first payload bytes.
        let whole = packet.len() == h.packet_len();
        let payload = &packet[start..(start + h.payload_size as usize).min(packet.len())];
        self.stats
            .count(routing, message, h.payload_size as usize, h.packet_len());
        let mut notes = PacketNotes {
            found: Vec::new(),
            at,
            index,
            inner,
        };
        self.examine_routing(routing, &mut notes);
        let d = self.decode_payload(h, payload);
        self.examine_decoded(&d, routing, h.version_minor, &mut notes);
        let record_frame = self.frame;
        let record_time = self.time_us.saturating_mul(1000).min(i64::MAX as u64) as i64;
        self.records_since_frame += 1;
        match d.sem {
            Sem::ServerInfo {
                time_unit,
                frame_time,
                coordinate_frame,
            } => {
                let info = (time_unit, frame_time, coordinate_frame);
                self.server_info(info, payload.len(), &mut notes);
            }
            Sem::Control {
                id, flags, value32, ..
            } => self.control(id, flags, value32, &mut notes),
            _ => {}
        }
        for f in notes.found {
            self.findings.push(f);
        }
        Ok(Record {
            time: record_time,
            channel: names::channel_of(routing, message),
            entity: d.entity,
            frame: Some(super::record_frame(routing, message, record_frame)),
            values: d.values,
            raw: whole.then(|| Box::new(RawBytes::new(RAW_FORMAT, packet))),
            exact_seconds: None,
            group: None,
        })
    }

    /// Packets after the End, and routing ids without a handler.
    fn examine_routing(&mut self, routing: u16, notes: &mut PacketNotes) {
        if self.end_seen && !self.end_reported {
            self.end_reported = true;
            notes.push(
                Severity::Info,
                END_NOT_LAST,
                "packets after an End control message".into(),
            );
        }
        match routing {
            0 | 8..=63 | 78..=2047 => notes.push(
                Severity::Warning,
                UNKNOWN_ROUTING,
                format!("routing id {routing} has no known handler (kept opaque)"),
            ),
            2048.. => notes.push(
                Severity::Info,
                UNKNOWN_ROUTING,
                format!("user routing id {routing} (kept opaque)"),
            ),
            _ => {}
        }
    }

    /// The payload's values and the facts the checks need; a skippable packet only its
    /// entity.
    fn decode_payload(&self, h: &PacketHeader, payload: &[u8]) -> decode::Decoded {
        let (routing, message) = (h.routing_id, h.message_id);
        if self.skippable(routing, message) {
            return decode::Decoded {
                entity: payload
                    .get(..4)
                    .map(|b| Entity::Id(u32::from_be_bytes([b[0], b[1], b[2], b[3]]).into())),
                values: Vec::new(),
                sem: Sem::None,
                notes: Vec::new(),
            };
        }
        let data_dp = if routing >= decode::R_SHAPE_FIRST
            && message == decode::S_DATA
            && payload.len() >= 4
        {
            self.checker.dp_of(
                routing,
                u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]),
            )
        } else {
            None
        };
        decode::decode(
            routing,
            message,
            payload,
            Ctx {
                version_minor: h.version_minor.min(4),
                values: self.options.decode,
                data_dp,
            },
        )
    }

    /// What decoding noted, the checker's rules over the stream of packets, and what the
    /// first packets must hold.
    fn examine_decoded(
        &mut self,
        d: &decode::Decoded,
        routing: u16,
        version: u16,
        notes: &mut PacketNotes,
    ) {
        for n in &d.notes {
            notes.push(n.severity, n.code, n.message.clone());
        }
        self.issues.clear();
        self.checker
            .observe(routing, version, &d.sem, notes.index, &mut self.issues);
        for (s, code, m) in self.issues.drain(..) {
            notes.push(s, code, m);
        }
        if notes.index == 0 && routing != decode::R_SERVER_INFO {
            notes.push(
                Severity::Warning,
                NO_SERVER_INFO,
                "the first packet is not a ServerInfo: defaults (1000 µs, 33, XYZ) apply until one appears".into(),
            );
        }
        if notes.index == HEADER_PACKETS && self.frame_counts == 0 {
            notes.push(
                Severity::Info,
                NO_FRAME_COUNT,
                format!("no FrameCount among the first {HEADER_PACKETS} packets"),
            );
        }
    }

    /// A ServerInfo of `size` bytes: checked, and its time unit and frame time taken.
    fn server_info(
        &mut self,
        (time_unit, frame_time, coordinate_frame): (u64, u32, u8),
        size: usize,
        notes: &mut PacketNotes,
    ) {
        if size != 48 {
            let s = if size == 44 {
                Severity::Info
            } else if size >= 13 {
                Severity::Warning
            } else {
                Severity::Error
            };
            notes.push(
                s,
                SERVER_INFO_SIZE,
                format!(
                    "ServerInfo payload of {size} bytes (48 expected{})",
                    if size == 44 {
                        "; 44 is what C# writers write"
                    } else {
                        ""
                    }
                ),
            );
        }
        self.server_infos += 1;
        if self.server_infos > 1 {
            let differs = time_unit != self.time_unit || frame_time != self.frame_time;
            notes.push(
                if differs { Severity::Warning } else { Severity::Info },
                SECOND_SERVER_INFO,
                format!("ServerInfo number {} (time_unit {time_unit} µs, default_frame_time {frame_time}); the later one is authoritative", self.server_infos),
            );
        }
        if time_unit == 0 {
            notes.push(
                Severity::Error,
                ZERO_TIME_UNIT,
                "ServerInfo time_unit is 0: the default 1000 µs is used".into(),
            );
            self.time_unit = DEFAULT_TIME_UNIT;
        } else {
            self.time_unit = time_unit;
        }
        self.frame_time = frame_time;
        if coordinate_frame > 11 {
            notes.push(
                Severity::Warning,
                COORDINATE_FRAME,
                format!("coordinate frame {coordinate_frame} is above 11"),
            );
        }
        self.stats.time_unit = self.time_unit;
    }

    /// A control message: a Frame moves time on; the others are counted or checked.
    fn control(&mut self, id: u16, flags: u32, value32: u32, notes: &mut PacketNotes) {
        match id {
            decode::C_FRAME => {
                if flags & 2 != 0 || value32 == u32::MAX {
                    notes.push(Severity::Info, UNITY_FRAME_FLAGS, format!("Frame with control flags {flags} and value32 {value32:#x} (Unity viewer recordings)"));
                }
                let units = if value32 == 0 || value32 == u32::MAX {
                    self.frame_time
                } else {
                    value32
                };
                let dur = u64::from(units).saturating_mul(self.time_unit);
                self.frame += 1;
                self.time_us = self.time_us.saturating_add(dur);
                self.records_since_frame = 0;
                self.stats.frames = self.frame;
                self.stats.duration_us = self.time_us;
            }
            decode::C_FRAME_COUNT => {
                self.frame_counts += 1;
                if self.frame_counts > 1 {
                    notes.push(
                        Severity::Info,
                        SECOND_FRAME_COUNT,
                        format!("a second FrameCount ({value32})"),
                    );
                } else {
                    self.stats.frame_count = Some(value32);
                    self.stats.frame_count_at = Some(notes.at);
                }
            }
            decode::C_COORDINATE_FRAME if value32 > 11 => {
                notes.push(
                    Severity::Warning,
                    COORDINATE_FRAME,
                    format!("coordinate frame {value32} is above 11"),
                );
            }
            decode::C_KEYFRAME => notes.push(
                Severity::Warning,
                KEYFRAME_IN_FILE,
                "a Keyframe control message (servers must not send it)".into(),
            ),
            decode::C_END => self.end_seen = true,
            decode::C_RESET => self.checker.reset(),
            _ => {}
        }
    }

    /// Rules checked when the data ends.
    fn finish(&mut self) -> Result<(), ReadError> {
        self.done = true;
        let at_end = self.index;
        if self.index > 0 && self.index <= HEADER_PACKETS && self.frame_counts == 0 {
            self.findings.push(
                Finding::new(
                    Severity::Info,
                    NO_FRAME_COUNT,
                    "no FrameCount among the first packets",
                )
                .offset(0),
            );
        }
        let frames = self.frame;
        if let (Some(v), Some(at)) = (self.stats.frame_count, self.stats.frame_count_at) {
            if u64::from(v) != frames {
                let (code, why) = if v <= 1 && frames > 1 {
                    (FRAME_COUNT_UNPATCHED, "the recording was not finalised")
                } else {
                    (FRAME_COUNT_MISMATCH, "it differs from the frames counted")
                };
                self.findings.push(
                    Finding::new(
                        Severity::Warning,
                        code,
                        format!("FrameCount says {v} but the capture has {frames} frames: {why}"),
                    )
                    .offset(at)
                    .hint("viewers take the larger; `simrec convert` writes a patched FrameCount"),
                );
            }
        }
        if self.records_since_frame > 0 && frames > 0 {
            self.findings.push(Finding::new(
                Severity::Info,
                UNTERMINATED_FRAME,
                format!(
                    "{} packets after the last Frame message (an unterminated frame {frames})",
                    self.records_since_frame
                ),
            ));
        }
        for (index, (s, code, m)) in self.checker.finish() {
            let mut f = Finding::new(s, code, m);
            f.record = Some(index.unwrap_or(at_end));
            self.findings.push(f);
        }
        self.stats.alive = self.checker.alive();
        self.stats.categories = self.checker.categories.clone();
        Ok(())
    }
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

impl Iterator for TesReader {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.advance().transpose()
    }
}

impl Source for TesReader {
    fn header(&self) -> &Header {
        &self.header
    }

    fn findings(&self) -> Vec<(&Path, &Findings)> {
        vec![(self.path.as_path(), &self.findings)]
    }

    fn progress(&self) -> (u64, u64) {
        self.layer.progress(self.pos)
    }

    fn facts(&self) -> Vec<Fact> {
        self.stats.facts()
    }
}
