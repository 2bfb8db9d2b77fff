//! Reading `.traj` and `.state` files: framing, resynchronisation, length repair.

use std::path::{Path, PathBuf};

use super::codes::*;
use super::validate::StreamChecker;
use super::wire::{self, decodes_strictly, DecodeError, Decoder, Message, Note, Strictness};
use super::{Stream, MAGIC, RAW_FORMAT, RAW_FORMAT_V1};
use crate::formats::input::{display_name, Input};
use crate::formats::{ReadError, ReadOptions, Source};
use crate::model::{Field, Header, RawBytes, Record};
use crate::report::{Finding, Findings, Severity};

pub const FILE_HEADER_LEN: u64 = 16;
pub const RECORD_HEADER_LEN: u64 = 24;
/// Largest timestamp (µs) whose nanosecond count fits in an i64.
pub const MAX_TIMESTAMP_US: u64 = i64::MAX as u64 / 1000;

/// A parsed 24-byte record header.
#[derive(Debug, Clone, Copy)]
struct RecordHeader {
    ts: u64,
    ts_high: u64,
    len: u64,
}

/// A record whose payload failed to decode, waiting to see whether the header after
/// it is corrupt too (then its length field may be what is wrong).
struct Failed {
    offset: u64,
    index: u64,
    len: u64,
    ts: u64,
    finding: Finding,
}

pub struct LegacyReader {
    path: PathBuf,
    input: Input,
    stream: Stream,
    message: Message,
    options: ReadOptions,
    header: Header,
    pos: u64,
    next_index: u64,
    findings: Findings,
    checker: StreamChecker,
    failed: Option<Failed>,
    queued: Option<Record>,
    done: bool,
}

impl LegacyReader {
    /// Opens a `.traj` or `.state` file (`stream` from its name, or `None` to tell by content).
    pub fn open(
        path: &Path,
        stream: Option<Stream>,
        options: ReadOptions,
    ) -> Result<LegacyReader, ReadError> {
        Self::open_file(path, stream, options).map_err(|e| e.in_file(&display_name(path)))
    }

    /// Reads a file held in memory; `name` is used in findings and errors.
    pub fn from_bytes(
        bytes: Vec<u8>,
        name: &Path,
        stream: Option<Stream>,
        options: ReadOptions,
    ) -> Result<LegacyReader, ReadError> {
        Self::from_input(Input::from_bytes(bytes), name, stream, options)
            .map_err(|e| e.in_file(name))
    }

    fn open_file(
        path: &Path,
        stream: Option<Stream>,
        options: ReadOptions,
    ) -> Result<LegacyReader, ReadError> {
        Self::from_input(Input::open(path)?, path, stream, options)
    }

    fn from_input(
        mut input: Input,
        path: &Path,
        stream: Option<Stream>,
        options: ReadOptions,
    ) -> Result<LegacyReader, ReadError> {
        if !options.decode {
            input.set_read_ahead(4096);
        }
        let name = display_name(path);
        let len = input.len();
        let fatal = |f: Finding| Err(ReadError::invalid(f));
        if len == 0 {
            return fatal(
                Finding::new(Severity::Error, EMPTY_FILE, "the file is empty (0 bytes)").offset(0),
            );
        }
        if len < FILE_HEADER_LEN {
            return fatal(
                Finding::new(
                    Severity::Error,
                    TRUNCATED_FILE_HEADER,
                    format!("the file has {len} bytes: the 16-byte file header is cut short"),
                )
                .offset(0),
            );
        }
        let head = input.bytes(0, 16)?;
        let magic = u64_at(head, 0);
        let version = u64_at(head, 8);
        let mut findings = Findings::default();
        let (start, version, stream) = if magic != MAGIC {
            let Some(v1_stream) = v1_like(&mut input, stream)? else {
                return fatal(
                    Finding::new(
                        Severity::Error,
                        BAD_MAGIC,
                        format!("not a NanoVer recording: bytes 0..8 are {magic:#018x}, not the magic {MAGIC:#018x}"),
                    )
                    .offset(0),
                );
            };
            if options.assume_version != Some(1) {
                return fatal(
                    Finding::new(
                        Severity::Error,
                        V1_HEADERLESS,
                        "headerless version-1 file (narupa-rs before 2023-07-22)",
                    )
                    .offset(0)
                    .hint(format!(
                        "read it as version 1: simrec convert --nanover-version 1 {} -o OUT{}",
                        name.display(),
                        v1_stream.extension()
                    )),
                );
            }
            findings.push(
                Finding::new(
                    Severity::Info,
                    V1_HEADERLESS,
                    "headerless version-1 file, read as version 1 on request",
                )
                .offset(0),
            );
            (0, 1, v1_stream)
        } else {
            if version != 2 {
                return fatal(
                    Finding::new(
                        Severity::Error,
                        UNSUPPORTED_VERSION,
                        format!("format version {version} is not supported (only 2; version-1 files have no header)"),
                    )
                    .offset(8),
                );
            }
            let stream = match stream {
                Some(s) => s,
                None => stream_by_content(&mut input)?,
            };
            (FILE_HEADER_LEN, 2, stream)
        };
        if len == start && version == 2 {
            findings.push(
                Finding::new(
                    Severity::Warning,
                    NO_RECORDS,
                    "a valid header and no records (the recorder stopped before the first record)",
                )
                .offset(start),
            );
        }
        let message = match (stream, version) {
            (Stream::Frames, 1) => Message::FrameData,
            (Stream::Frames, _) => Message::FrameResponse,
            (Stream::State, _) => Message::StateUpdate,
        };
        Ok(LegacyReader {
            path: name,
            input,
            stream,
            message,
            options,
            header: super::header(stream, version),
            pos: start,
            next_index: 0,
            findings,
            checker: StreamChecker::new(stream),
            failed: None,
            queued: None,
            done: false,
        })
    }

    pub fn stream(&self) -> Stream {
        self.stream
    }

    /// Records an error: always kept; in strict mode it also stops reading.
    fn error(&mut self, finding: Finding) -> Result<(), ReadError> {
        self.findings.push(finding.clone());
        if self.options.lenient {
            Ok(())
        } else {
            self.done = true;
            Err(ReadError::invalid(finding))
        }
    }

    fn recover_hint(&self) -> String {
        let name = self.path.display();
        format!(
            "keep every intact record: simrec recover {name} -o FIXED{}",
            self.stream.extension()
        )
    }

    /// Damage at `offset` / record `index`: an error finding with the hint that gets past it.
    fn damage(&self, code: &'static str, offset: u64, index: u64, message: String) -> Finding {
        Finding::new(Severity::Error, code, message)
            .at(offset, index)
            .hint(self.recover_hint())
    }

    fn record_header(&mut self, pos: u64) -> Result<RecordHeader, ReadError> {
        let b = self.input.bytes(pos, RECORD_HEADER_LEN as usize)?;
        Ok(RecordHeader {
            ts: u64_at(b, 0),
            ts_high: u64_at(b, 8),
            len: u64_at(b, 16),
        })
    }

    fn advance(&mut self) -> Result<Option<Record>, ReadError> {
        loop {
            if let Some(r) = self.queued.take() {
                return Ok(Some(r));
            }
            if self.done {
                return Ok(None);
            }
            let len = self.input.len();
            let pos = self.pos;
            let index = self.next_index;
            let remaining = len - pos;
            if remaining == 0 {
                self.flush_failed(None)?;
                self.done = true;
                continue;
            }
            if remaining < RECORD_HEADER_LEN {
                self.flush_failed(None)?;
                self.done = true;
                let message =
                    format!("the file ends {remaining} bytes into a 24-byte record header");
                self.error(self.damage(TRUNCATED_RECORD_HEADER, pos, index, message))?;
                continue;
            }
            let h = self.record_header(pos)?;
            if h.ts_high != 0 {
                let next = self.find_candidate(pos + 1)?;
                let repaired = match next {
                    Some(p) => self.repair_failed(pos, p)?,
                    None => None,
                };
                self.flush_failed(repaired.as_ref().map(|r| r.1))?;
                let message = format!(
                    "corrupt record header: the upper 64 bits of the timestamp are {:#x}, not 0",
                    h.ts_high
                );
                self.error(self.damage(BAD_RECORD_HEADER, pos, index, message))?;
                let resume = next.unwrap_or(len);
                self.skipped(pos, resume)?;
                self.pos = resume;
                if let Some((record, _)) = repaired {
                    return Ok(Some(record));
                }
                continue;
            }
            self.flush_failed(None)?;
            if h.len > remaining - RECORD_HEADER_LEN {
                let present = remaining - RECORD_HEADER_LEN;
                let Some(p) = self.find_candidate(pos + 1)? else {
                    self.done = true;
                    let message = format!(
                        "the file ends inside this record: {} payload bytes claimed, {present} present",
                        h.len
                    );
                    self.error(self.damage(TRUNCATED_PAYLOAD, pos, index, message))?;
                    continue;
                };
                let claimed = h.len;
                if p >= pos + RECORD_HEADER_LEN {
                    let repaired_len = p - pos - RECORD_HEADER_LEN;
                    if let Some(record) = self.repaired_record(pos, index, h.ts, repaired_len)? {
                        let message = format!(
                            "corrupt length field: {claimed} payload bytes claimed, {present} present; \
                             the next record starts at byte {p}, so the length was repaired to {repaired_len} and the record kept"
                        );
                        self.error(self.damage(BAD_RECORD_SIZE, pos, index, message))?;
                        self.pos = p;
                        self.next_index += 1;
                        return Ok(Some(record));
                    }
                }
                let message = format!(
                    "corrupt length field: {claimed} payload bytes claimed, {present} present; a valid record follows at byte {p}"
                );
                self.error(self.damage(BAD_RECORD_SIZE, pos, index, message))?;
                self.skipped(pos, p)?;
                self.pos = p;
                continue;
            }
            self.pos = pos + RECORD_HEADER_LEN + h.len;
            self.next_index += 1;
            if h.ts > MAX_TIMESTAMP_US {
                let message = format!(
                    "timestamp {} µs does not fit signed 64-bit nanoseconds",
                    h.ts
                );
                self.error(self.damage(TIMESTAMP_RANGE, pos, index, message))?;
                continue;
            }
            match self.read_record(pos, index, h.ts, h.len)? {
                Ok(record) => return Ok(Some(record)),
                Err(e) => {
                    let message = format!("payload is not a valid {}: {e}", self.message.name());
                    let finding = self.damage(PAYLOAD_DECODE, pos, index, message);
                    if !self.options.lenient {
                        // Strict reading stops here; lenient reading waits to see the next header.
                        self.error(finding.clone())?;
                    }
                    self.failed = Some(Failed {
                        offset: pos,
                        index,
                        len: h.len,
                        ts: h.ts,
                        finding,
                    });
                }
            }
        }
    }

    /// Reports bytes skipped by a resync.
    fn skipped(&mut self, from: u64, to: u64) -> Result<(), ReadError> {
        if to <= from {
            return Ok(());
        }
        let message = format!(
            "{} bytes skipped (bytes {from}..{to}) to the next valid record",
            to - from
        );
        self.error(self.damage(SKIPPED_BYTES, from, self.next_index, message))
    }

    /// Emits the pending decode failure, noting a repair when there was one.
    fn flush_failed(&mut self, repaired_len: Option<u64>) -> Result<(), ReadError> {
        let Some(mut failed) = self.failed.take() else {
            return Ok(());
        };
        if let Some(n) = repaired_len {
            failed.finding.message.push_str(&format!(
                "; the header after it is corrupt and the next valid record starts {n} bytes after this header, \
                 so the length field ({} bytes) was repaired to {n} and the record kept",
                failed.len
            ));
        }
        self.error(failed.finding)
    }

    /// When the record just before the corrupt header at `bad` failed to decode, tries its
    /// bytes up to the next candidate `next` as its payload.
    fn repair_failed(&mut self, bad: u64, next: u64) -> Result<Option<(Record, u64)>, ReadError> {
        let Some(f) = &self.failed else {
            return Ok(None);
        };
        if f.offset + RECORD_HEADER_LEN + f.len != bad {
            return Ok(None);
        }
        let (offset, index, ts) = (f.offset, f.index, f.ts);
        let len = next - offset - RECORD_HEADER_LEN;
        Ok(self
            .repaired_record(offset, index, ts, len)?
            .map(|r| (r, len)))
    }

    /// The record at `offset` read with payload length `len`, if that payload decodes strictly.
    fn repaired_record(
        &mut self,
        offset: u64,
        index: u64,
        ts: u64,
        len: u64,
    ) -> Result<Option<Record>, ReadError> {
        let payload = self.input.bytes(offset + RECORD_HEADER_LEN, len as usize)?;
        if !decodes_strictly(payload, self.message) || ts > MAX_TIMESTAMP_US {
            return Ok(None);
        }
        match self.read_record(offset, index, ts, len)? {
            Ok(mut record) => {
                if let Some(raw) = &mut record.raw {
                    raw.bytes[16..24].copy_from_slice(&len.to_le_bytes());
                }
                Ok(Some(record))
            }
            Err(_) => Ok(None),
        }
    }

    /// The first candidate record at or after `from`.
    fn find_candidate(&mut self, from: u64) -> Result<Option<u64>, ReadError> {
        let len = self.input.len();
        let mut p = from;
        while p + RECORD_HEADER_LEN <= len {
            if is_candidate(&mut self.input, p, self.message)? {
                return Ok(Some(p));
            }
            p += 1;
        }
        Ok(None)
    }

    /// Reads and (when asked) decodes one complete record.
    fn read_record(
        &mut self,
        offset: u64,
        index: u64,
        ts: u64,
        len: u64,
    ) -> Result<Result<Record, DecodeError>, ReadError> {
        let mut record = Record::new((ts * 1000) as i64, 0);
        let payload_at = offset + RECORD_HEADER_LEN;
        if !self.options.decode {
            if self.stream == Stream::Frames {
                record.frame = Some(i64::from(match self.message {
                    Message::FrameData => index as u32,
                    _ => {
                        let peek = self
                            .input
                            .bytes(payload_at, (len as usize).min(wire::PEEK_LEN))?;
                        match wire::peek_frame_index(peek, len as usize) {
                            Some(i) => i,
                            None => {
                                let payload = self.input.bytes(payload_at, len as usize)?;
                                let mut notes = Vec::new();
                                match Decoder::new(Strictness::Lenient, &mut notes)
                                    .frame_response(payload)
                                {
                                    Ok(f) => f.frame_index,
                                    Err(e) => return Ok(Err(e)),
                                }
                            }
                        }
                    }
                }));
            }
            let frame = record.frame.map(|f| f as u32);
            self.checker
                .observe(offset, index, ts, frame, None, &mut self.findings);
            return Ok(Ok(record));
        }
        let bytes = self
            .input
            .bytes(offset, (RECORD_HEADER_LEN + len) as usize)?;
        let payload = &bytes[RECORD_HEADER_LEN as usize..];
        let mut notes = Vec::new();
        let mut decoder = Decoder::new(Strictness::Lenient, &mut notes);
        let decoded: Result<(Option<u32>, Vec<Field>), DecodeError> = match self.message {
            Message::FrameResponse => decoder
                .frame_response(payload)
                .map(|f| (Some(f.frame_index), f.fields)),
            // Version 1 has no frame index: record k is frame k, record 0 the reset.
            Message::FrameData => decoder.frame_data(payload).map(|f| (Some(index as u32), f)),
            Message::StateUpdate => decoder.state_update(payload).map(|f| (None, f)),
        };
        let (frame, fields) = match decoded {
            Ok(d) => d,
            Err(e) => return Ok(Err(e)),
        };
        let raw_format = if self.message == Message::FrameData {
            RAW_FORMAT_V1
        } else {
            RAW_FORMAT
        };
        record.raw = Some(Box::new(RawBytes::new(raw_format, bytes.to_vec())));
        record.frame = frame.map(i64::from);
        record.values = fields;
        for note in notes {
            self.findings.push(note_finding(note).at(offset, index));
        }
        self.checker.observe(
            offset,
            index,
            ts,
            frame,
            Some(&record.values),
            &mut self.findings,
        );
        Ok(Ok(record))
    }
}

impl Iterator for LegacyReader {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.advance()
            .map_err(|e| e.in_file(&self.path))
            .transpose()
    }
}

impl Source for LegacyReader {
    fn header(&self) -> &Header {
        &self.header
    }

    fn findings(&self) -> Vec<(&Path, &Findings)> {
        vec![(self.path.as_path(), &self.findings)]
    }

    fn progress(&self) -> (u64, u64) {
        (self.pos, self.input.len())
    }
}

fn note_finding(note: Note) -> Finding {
    match note {
        Note::UnknownField { message, field, pos } => Finding::new(
            Severity::Info,
            UNKNOWN_FIELD,
            format!("unknown field {field} in {message} skipped (payload byte {pos})"),
        ),
        Note::UnsetOneof { message, key } => Finding::new(
            Severity::Info,
            UNSET_ONEOF,
            format!("{message} for key `{key}` has no member set; read as empty"),
        ),
        Note::DuplicateKey { key } => Finding::new(
            Severity::Info,
            DUPLICATE_KEY,
            format!("key `{key}` appears more than once in one map; the last one wins"),
        ),
        Note::ArrayShape { key, len } => Finding::new(
            Severity::Warning,
            ARRAY_SHAPE,
            format!("`{key}` has {len} elements, which do not fit its conventional shape; kept 1-D"),
        ),
        Note::ArrayKind { key, stored, expected } => Finding::new(
            Severity::Warning,
            ARRAY_KIND,
            format!("`{key}` is stored as {stored}, expected {expected}"),
        ),
        Note::EmptyArrayKind { key, stored, expected } => Finding::new(
            Severity::Info,
            EMPTY_ARRAY_KIND,
            format!("empty `{key}` is stored as {stored} instead of {expected} (the Python writer's habit; harmless)"),
        ),
        Note::NonFinite { key, index } => Finding::new(
            Severity::Warning,
            NONFINITE_FLOAT,
            format!("non-finite float in `{key}` at element {index} (a sign of corrupted bytes)"),
        ),
    }
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Whether a plausible record of `message` starts at `p` (spec §10): upper timestamp half
/// zero, length inside the file, followed by end of file or another plausible header, and a
/// payload that decodes strictly. Timestamp order is not part of it.
///
/// simrec also asks for a non-empty payload and a timestamp that fits nanoseconds: every
/// upstream writer writes the message's field (`12 00` at least), and without these two
/// tests the last 24 bytes of a file cut inside a record can pass for an empty record
/// ending exactly at end of file. The cheap tests come first: resync calls this at every byte.
pub(super) fn is_candidate(input: &mut Input, p: u64, message: Message) -> Result<bool, ReadError> {
    let Some(end) = plausible_header(input, p)? else {
        return Ok(false);
    };
    if end != input.len() && plausible_header(input, end)?.is_none() {
        return Ok(false);
    }
    decodes_at(input, p, end, message)
}

/// The end of the record whose header is at `p`, if the header is plausible: upper timestamp
/// half zero, timestamp in range, a non-empty payload inside the file.
fn plausible_header(input: &mut Input, p: u64) -> Result<Option<u64>, ReadError> {
    let len = input.len();
    if p + RECORD_HEADER_LEN > len {
        return Ok(None);
    }
    let h = input.bytes(p, RECORD_HEADER_LEN as usize)?;
    let (ts, high, plen) = (u64_at(h, 0), u64_at(h, 8), u64_at(h, 16));
    let fits = plen <= len - p - RECORD_HEADER_LEN;
    Ok((high == 0 && plen > 0 && ts <= MAX_TIMESTAMP_US && fits)
        .then(|| p + RECORD_HEADER_LEN + plen))
}

fn decodes_at(input: &mut Input, p: u64, end: u64, message: Message) -> Result<bool, ReadError> {
    let payload = input.bytes(
        p + RECORD_HEADER_LEN,
        (end - p - RECORD_HEADER_LEN) as usize,
    )?;
    Ok(decodes_strictly(payload, message))
}

/// How many whole records in a row from `start` (up to `limit`) decode strictly as `message`.
fn candidate_run(
    input: &mut Input,
    start: u64,
    message: Message,
    limit: usize,
) -> Result<usize, ReadError> {
    let mut p = start;
    for n in 0..limit {
        match plausible_header(input, p)? {
            Some(end) if decodes_at(input, p, end, message)? => p = end,
            _ => return Ok(n),
        }
    }
    Ok(limit)
}

/// Records compared when telling streams apart by content: payloads of one type can
/// happen to decode as the other (a `StateUpdate` as a `FrameData`), a run of them rarely.
const SNIFF_RECORDS: usize = 16;

/// Picks the stream whose message decodes for the longer run of records from `start`;
/// `None` when neither decodes even once. Ties go to frames.
fn sniff(
    input: &mut Input,
    start: u64,
    frames: Message,
    tries: &[Stream],
) -> Result<Option<Stream>, ReadError> {
    let mut best: Option<(usize, Stream)> = None;
    for &s in tries {
        let message = match s {
            Stream::Frames => frames,
            Stream::State => Message::StateUpdate,
        };
        let run = candidate_run(input, start, message, SNIFF_RECORDS)?;
        if run > 0 && best.is_none_or(|(b, _)| run > b) {
            best = Some((run, s));
        }
    }
    Ok(best.map(|(_, s)| s))
}

/// Spec §1.4: whether a file without the magic is a headerless version-1 file, and of which
/// stream. Rule 5 (record 0 is a candidate) must hold; the run decides between the streams.
fn v1_like(input: &mut Input, stream: Option<Stream>) -> Result<Option<Stream>, ReadError> {
    let mut tries = Vec::new();
    for s in [Stream::Frames, Stream::State] {
        let message = if s == Stream::Frames {
            Message::FrameData
        } else {
            Message::StateUpdate
        };
        if stream.is_none_or(|want| want == s) && is_candidate(input, 0, message)? {
            tries.push(s);
        }
    }
    sniff(input, 0, Message::FrameData, &tries)
}

/// Tells a `.traj` from a `.state` by content, for inputs without the extension.
fn stream_by_content(input: &mut Input) -> Result<Stream, ReadError> {
    let both = [Stream::Frames, Stream::State];
    Ok(sniff(input, FILE_HEADER_LEN, Message::FrameResponse, &both)?.unwrap_or(Stream::Frames))
}
