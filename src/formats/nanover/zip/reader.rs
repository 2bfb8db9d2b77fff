//! Reading `.nanover.zip`: the index drives a finished archive (each message read where
//! its entry says); a crashed archive, or one whose index is damaged, is scanned message
//! by message when reading leniently (`recover`, `validate`, `inspect`).

use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};

use super::codes::*;
use super::container::{self, Layout, Member};
use super::index::{self, Entry, Types};
use super::message::{self, Note, PartKind};
use super::msgpack;
use super::stamps::{Clocks, Stamps};
use super::walk::{self, Stop, Walked};
use super::{header, RAW_FORMAT};
use crate::formats::input::Input;
use crate::formats::{ReadError, ReadOptions, Source};
use crate::model::{Field, Header, RawBytes, Record, Value};
use crate::report::{Fact, Finding, Findings, Severity};

/// A gap of more than this between entries is reported.
const JUMP_US: i64 = 120_000_000;
/// The largest message a scan will look for (bounds memory on a damaged length).
const MAX_SCAN_MESSAGE: usize = 1 << 30;
const HINT: &str = "run `simrec recover` to rewrite what can be read";

enum Mode {
    /// Entries still to read, parsed from the index member as they are needed.
    Indexed { entries: index::Entries },
    /// Messages one after another from `pos` to `end`, with timestamps kept from a damaged
    /// index where an entry covers exactly one message (offset → (length, timestamp)).
    Scan {
        pos: u64,
        end: u64,
        kept: HashMap<u64, (u64, i64)>,
        stamps: Stamps,
        why: Why,
    },
}

/// One message of a scan: held, to be decoded, or only walked.
enum Scanned {
    Held(Vec<u8>),
    Walked(Walked),
}

/// Why messages are scanned rather than read through the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    /// No index at all: the recorder did not close the archive.
    Unfinished,
    /// An index that cannot drive the read (undecodable, entries outside the member).
    Damaged,
    /// An index that lists fewer messages than the member holds.
    Short,
}

/// Facts about the container, for `inspect`.
#[derive(Debug, Clone, Default)]
struct ZipFacts {
    members: Vec<(Member, bool)>,
    entries: u64,
    contiguous: bool,
    unfinished: bool,
}

pub struct ZipReader {
    path: PathBuf,
    input: Input,
    header: Header,
    findings: Findings,
    options: ReadOptions,
    mode: Mode,
    data_offset: u64,
    member_size: u64,
    queue: VecDeque<Record>,
    ordinal: u64,
    consumed: u64,
    last_ts: Option<i64>,
    counts: Counts,
    facts: ZipFacts,
    done: bool,
}

impl ZipReader {
    pub fn open(path: &Path, options: ReadOptions) -> Result<ZipReader, ReadError> {
        let input = Input::open(path).map_err(|e| ReadError::from(e).in_file(path))?;
        ZipReader::new(path, input, options)
    }

    /// A reader over any input (files, or bytes in memory for tests and fuzzing).
    pub fn new(
        path: &Path,
        mut input: Input,
        options: ReadOptions,
    ) -> Result<ZipReader, ReadError> {
        let mut notes = Vec::new();
        let layout = container::read(&mut input, &mut notes)
            .map_err(|f| ReadError::invalid(f).in_file(path))?;
        let mut opening = Opening {
            path,
            lenient: options.lenient,
            findings: Findings::default(),
            facts: ZipFacts::default(),
        };
        for n in notes {
            opening.report(n)?;
        }
        let plan = match layout {
            Layout::Unfinished { data_offset } => opening.unfinished(&mut input, data_offset)?,
            Layout::Finished { messages, index } => {
                opening.finished(&mut input, messages, index)?
            }
        };
        // A scan cannot know its parts up front: it declares all three.
        let declared: Vec<PartKind> = match &plan.mode {
            Mode::Scan { .. } => PartKind::ALL.to_vec(),
            Mode::Indexed { .. } => PartKind::ALL
                .into_iter()
                .filter(|k| plan.types_seen.contains(*k))
                .collect(),
        };
        Ok(ZipReader {
            path: path.to_path_buf(),
            input,
            header: header(&declared),
            findings: opening.findings,
            options,
            mode: plan.mode,
            data_offset: plan.data_offset,
            member_size: plan.member_size,
            queue: VecDeque::new(),
            ordinal: 0,
            consumed: 0,
            last_ts: None,
            counts: Counts::default(),
            facts: opening.facts,
            done: false,
        })
    }

    fn report(&mut self, f: Finding) -> Result<(), ReadError> {
        keep_or_refuse(&mut self.findings, self.options.lenient, &self.path, f)
    }

    fn channel(&self, kind: PartKind) -> Option<u32> {
        self.header.channel_id(kind.name())
    }

    /// Reads the next message into the queue; `false` at the end.
    fn advance(&mut self) -> Result<bool, ReadError> {
        match &mut self.mode {
            Mode::Indexed { entries } => {
                // The survey at open parsed every entry: an error now means the file changed.
                let next = entries.next(&mut self.input).map_err(|e| {
                    ReadError::from(std::io::Error::other(e.what)).in_file(&self.path)
                })?;
                let Some(entry) = next else {
                    return Ok(false);
                };
                self.indexed(entry)?;
                Ok(true)
            }
            Mode::Scan { .. } => self.scanned(),
        }
    }

    fn indexed(&mut self, entry: Entry) -> Result<(), ReadError> {
        let ordinal = self.ordinal;
        self.ordinal += 1;
        let offset = self.data_offset + entry.offset;
        let ts = match entry.timestamp {
            Some(Ok(t)) if (0..=i64::MAX / 1000).contains(&t) => t,
            // check_entries reported it; reading leniently takes the previous time.
            _ => self.last_ts.unwrap_or(0),
        };
        self.last_ts = Some(ts);
        self.consumed = offset + entry.length;
        if !self.options.decode {
            self.bare_records(entry.types, entry.frame_index.as_ref(), ts);
            return Ok(());
        }
        let bytes = self
            .input
            .bytes(offset, entry.length as usize)
            .map_err(|e| ReadError::from(e).in_file(&self.path))?
            .to_vec();
        self.message(bytes, offset, ordinal, ts, Some(&entry))
    }

    /// Decodes one message into records, checking it against its index entry.
    fn message(
        &mut self,
        bytes: Vec<u8>,
        offset: u64,
        ordinal: u64,
        ts: i64,
        entry: Option<&Entry>,
    ) -> Result<(), ReadError> {
        let parts = match message::top_level(&bytes) {
            Ok(p) => p,
            Err(e) => {
                let code = if e.what.contains("not a map") || e.what.contains("not a string") {
                    MESSAGE_NOT_MAP
                } else {
                    MESSAGE_DECODE
                };
                return self.report(
                    Finding::new(
                        Severity::Error,
                        code,
                        format!("message {ordinal}: {}", e.what),
                    )
                    .at(offset + e.at as u64, ordinal),
                );
            }
        };
        self.examine_parts(&parts, entry, offset, ordinal)?;
        let mut notes: Vec<Note> = Vec::new();
        let mut records = self.part_records(&bytes, &parts, ordinal, ts, entry, &mut notes);
        for n in notes {
            self.report(
                Finding::new(
                    n.severity,
                    n.code,
                    format!("message {ordinal}: {}", n.message),
                )
                .at(offset + n.at as u64, ordinal),
            )?;
        }
        if let Some((last, rest)) = records.split_last_mut() {
            for r in rest {
                r.raw = Some(Box::new(RawBytes::new(RAW_FORMAT, bytes.clone())));
            }
            last.raw = Some(Box::new(RawBytes::new(RAW_FORMAT, bytes)));
        }
        self.queue.extend(records);
        Ok(())
    }

    /// A message's top-level keys: each a known part, and the parts its index entry lists.
    fn examine_parts(
        &mut self,
        parts: &[(String, Range<usize>)],
        entry: Option<&Entry>,
        offset: u64,
        ordinal: u64,
    ) -> Result<(), ReadError> {
        let mut types = Types::default();
        for (name, _) in parts {
            types.push(name);
            if PartKind::from_name(name).is_none() {
                self.report(Finding::new(Severity::Warning, UNKNOWN_PART, format!(
                    "top-level key `{name}` is not frame, state or command: kept in the message, not read")).at(offset, ordinal))?;
            }
        }
        if let Some(entry) = entry {
            if entry.types != types {
                self.report(Finding::new(Severity::Error, TYPES_MISMATCH, format!(
                    "the index lists parts {:?}, the message has {:?}: upstream readers skip what the index does not list",
                    entry.types.names(), types.names())).at(offset, ordinal))?;
            }
        }
        Ok(())
    }

    /// One record per known part the header declares, in frame, state, command order;
    /// a message of several parts groups them under its ordinal.
    fn part_records(
        &mut self,
        bytes: &[u8],
        parts: &[(String, Range<usize>)],
        ordinal: u64,
        ts: i64,
        entry: Option<&Entry>,
        notes: &mut Vec<Note>,
    ) -> Vec<Record> {
        let known = parts
            .iter()
            .filter(|(n, _)| PartKind::from_name(n).is_some())
            .count();
        let group = (known > 1).then_some(ordinal);
        let mut records = Vec::with_capacity(known);
        for kind in PartKind::ALL {
            let Some((_, range)) = parts.iter().find(|(n, _)| n == kind.name()) else {
                continue;
            };
            let range = range.clone();
            let mut record = Record::new(ts.saturating_mul(1000), 0);
            match kind {
                PartKind::Frame => {
                    let (fields, frame) = self.frame_part(bytes, range, entry, notes);
                    record.frame = frame.and_then(|f| i64::try_from(f).ok());
                    record.values = fields;
                }
                PartKind::State => record.values = message::state(bytes, range, notes),
                PartKind::Command => record.values = message::command(bytes, range, notes),
            }
            match self.channel(kind) {
                Some(c) => record.channel = c,
                // Declared from the index, which did not list this part (reported above).
                None => continue,
            }
            record.group = group;
            records.push(record);
        }
        records
    }

    /// The frame part's fields and frame number, checked against its index entry and
    /// the counts of the frames before it.
    fn frame_part(
        &mut self,
        bytes: &[u8],
        range: Range<usize>,
        entry: Option<&Entry>,
        notes: &mut Vec<Note>,
    ) -> (Vec<Field>, Option<u64>) {
        let (fields, frame) = message::frame(bytes, range.clone(), notes);
        let own = fields
            .iter()
            .find(|(k, _)| k == "frame.index")
            .map(|(_, v)| v);
        if own.is_none() {
            notes.push(Note {
                severity: Severity::Warning,
                code: FRAME_NO_INDEX,
                message: "a frame without `frame.index` (legal; it is not a reset)".into(),
                at: range.start,
            });
        }
        if let Some(entry) = entry {
            if entry.types.contains(PartKind::Frame) && entry.frame_index.as_ref() != own {
                notes.push(Note {
                    severity: Severity::Error,
                    code: FRAME_INDEX_MISMATCH,
                    message: format!(
                        "the index says frame.index {:?}, the frame has {:?}",
                        entry.frame_index, own
                    ),
                    at: range.start,
                });
            }
        }
        if let Some(f) = self.counts.observe(frame, &fields) {
            notes.push(Note {
                severity: Severity::Warning,
                code: COUNT_MISMATCH,
                message: f,
                at: range.start,
            });
        }
        (fields, frame)
    }

    /// The next message of a scan, with its synthesised timestamp.
    fn scanned(&mut self) -> Result<bool, ReadError> {
        let Mode::Scan { pos, end, .. } = &self.mode else {
            return Ok(false);
        };
        let (pos, end) = (*pos, *end);
        if pos >= end {
            self.finish_scan()?;
            return Ok(false);
        }
        let ordinal = self.ordinal;
        // A decoding read holds the message; a header walk (plain `inspect`) walks it
        // through the read window, whatever its size.
        let scanned = if self.options.decode {
            read_value(&mut self.input, pos, end)
                .map_err(Stop::Invalid)
                .and_then(|b| match msgpack::head(&b, 0) {
                    Ok((msgpack::Head::Map(_), _)) => Ok(Scanned::Held(b)),
                    _ => Err(Stop::NotMap),
                })
        } else {
            walk::walk(&mut self.input, pos, end).map(Scanned::Walked)
        };
        let scanned = match scanned {
            Ok(s) => s,
            Err(stop) => {
                let dropped = end - pos;
                let f = match stop {
                    Stop::Invalid(e) => Finding::new(Severity::Error, MESSAGE_DECODE, format!(
                        "message {ordinal}: {}; the scan stops here and drops the last {dropped} bytes", e.what
                    )).at(pos + e.at as u64, ordinal),
                    Stop::NotMap => Finding::new(Severity::Error, MESSAGE_NOT_MAP, format!(
                        "message {ordinal} is not a map; the scan stops here and drops the last {dropped} bytes"
                    )).at(pos, ordinal),
                };
                self.report(f)?;
                if let Mode::Scan { pos: p, .. } = &mut self.mode {
                    *p = end;
                }
                self.finish_scan()?;
                return Ok(false);
            }
        };
        let (len, clocks) = match &scanned {
            Scanned::Held(b) => (b.len() as u64, Clocks::of(b)),
            Scanned::Walked(w) => (w.len, w.clocks),
        };
        let relative = pos - self.data_offset;
        let Mode::Scan {
            pos: p,
            kept,
            stamps,
            ..
        } = &mut self.mode
        else {
            return Ok(false);
        };
        *p = pos + len;
        let from_index = match kept.get(&relative) {
            Some(&(l, t)) if l == len => Some(t),
            _ => None,
        };
        let stamp = stamps.next_with(clocks, from_index);
        let ts = stamp.micros;
        if let Some(was) = stamp.clamped_from {
            self.findings.push(Finding::new(Severity::Warning, TIMESTAMP_DECREASE, format!(
                "message {ordinal}: the synthesised timestamp {was} µs is below the previous {ts} µs; clamped to it")).at(pos, ordinal));
        }
        self.ordinal += 1;
        self.consumed = pos + len;
        match scanned {
            Scanned::Held(bytes) => self.message(bytes, pos, ordinal, ts, None)?,
            Scanned::Walked(w) => self.bare_records(w.types, w.frame_index.as_ref(), ts),
        }
        Ok(true)
    }

    /// Records without values, one per part, for a header walk.
    fn bare_records(&mut self, types: Types, frame_index: Option<&Value>, ts: i64) {
        for kind in types.iter() {
            if let Some(channel) = self.channel(kind) {
                let mut r = Record::new(ts.saturating_mul(1000), channel);
                if kind == PartKind::Frame {
                    r.frame = match frame_index {
                        Some(Value::Int(i)) => Some(*i),
                        _ => None,
                    };
                }
                self.queue.push_back(r);
            }
        }
    }

    /// The summary of a scan: why it ran and where its timestamps came from.
    fn finish_scan(&mut self) -> Result<(), ReadError> {
        let Mode::Scan {
            stamps, why, end, ..
        } = &mut self.mode
        else {
            return Ok(());
        };
        let s = std::mem::take(stamps);
        *end = 0;
        let why = *why;
        let what = match why {
            Why::Unfinished => "the recorder did not close this archive: no index and no central directory, so every timestamp was lost",
            Why::Damaged => "the index is damaged, so the messages were read one after another",
            Why::Short => "the index does not list every message, so the messages were read one after another and the index rebuilt from them",
        };
        let n = self.ordinal;
        let message = format!("{what}. Read {n} messages; timestamps: {}", s.summary());
        let code = if why == Why::Unfinished {
            UNFINISHED
        } else {
            TIMESTAMP_SYNTHESISED
        };
        self.findings
            .push(Finding::new(Severity::Error, code, message).offset(0));
        if s.derived + s.invented > 0 && why == Why::Unfinished {
            let clock = s
                .clock()
                .map_or("no clock".into(), |c| format!("`{}`", c.key()));
            self.findings.push(Finding::new(
                Severity::Warning,
                TIMESTAMP_SYNTHESISED,
                format!(
                    "{} timestamps derived from {clock}, {} invented",
                    s.derived, s.invented
                ),
            ));
        }
        Ok(())
    }
}

/// Aggregate counts against their arrays (spec §15 `NVZIP_COUNT_MISMATCH`).
#[derive(Default)]
struct Counts {
    count: [Option<i64>; 3],
    len: [Option<usize>; 3],
}

impl Counts {
    const COUNT_KEYS: [&'static str; 3] = ["particle.count", "residue.count", "chain.count"];

    fn observe(&mut self, frame: Option<u64>, fields: &[(String, Value)]) -> Option<String> {
        if frame == Some(0) {
            *self = Counts::default();
        }
        let mut touched = [false; 3];
        for (k, v) in fields {
            let slot = match k.as_str() {
                "particle.count" => (0, true),
                "residue.count" => (1, true),
                "chain.count" => (2, true),
                "particle.positions" | "particle.elements" => (0, false),
                "residue.names" => (1, false),
                "chain.names" => (2, false),
                _ => continue,
            };
            touched[slot.0] = true;
            match (slot.1, v) {
                (true, Value::Int(n)) => self.count[slot.0] = Some(*n),
                (false, Value::Array(a)) => self.len[slot.0] = a.shape.first().copied(),
                (false, Value::List(l)) => self.len[slot.0] = Some(l.len()),
                _ => {}
            }
        }
        (0..3).find_map(|i| match (touched[i], self.count[i], self.len[i]) {
            (true, Some(c), Some(l)) if c != l as i64 => Some(format!(
                "`{}` is {c} but the frame's arrays hold {l}",
                Self::COUNT_KEYS[i]
            )),
            _ => None,
        })
    }
}

impl Iterator for ZipReader {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.queue.pop_front() {
                return Some(Ok(r));
            }
            if self.done {
                return None;
            }
            match self.advance() {
                Ok(true) => {}
                Ok(false) => self.done = true,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

impl Source for ZipReader {
    fn header(&self) -> &Header {
        &self.header
    }
    fn findings(&self) -> Vec<(&Path, &Findings)> {
        vec![(self.path.as_path(), &self.findings)]
    }
    fn progress(&self) -> (u64, u64) {
        (self.consumed, self.input.len())
    }
    fn facts(&self) -> Vec<Fact> {
        let f = &self.facts;
        let members: Vec<Json> = f
            .members
            .iter()
            .map(|(m, ok)| {
                json!({
                    "name": m.name, "data_offset": m.data_offset, "size_bytes": m.size,
                    "compression": if m.method == container::STORED { "stored" } else { "deflated" },
                    "crc32": format!("{:08x}", m.crc), "crc_ok": ok,
                })
            })
            .collect();
        vec![
            Fact::from_json("messages", json!(self.ordinal_total())),
            Fact::from_json(
                "zip",
                json!({
                    "finished": !f.unfinished,
                    "members": members,
                    "index_entries": f.entries,
                    "index_contiguous": f.contiguous,
                    "messages_member_bytes": self.member_size,
                }),
            ),
        ]
    }
}

impl ZipReader {
    fn ordinal_total(&self) -> u64 {
        match &self.mode {
            Mode::Indexed { entries } => entries.total(),
            Mode::Scan { .. } => self.ordinal,
        }
    }
}

/// What opening gathers before the reader exists: its findings and the container's facts.
struct Opening<'a> {
    path: &'a Path,
    lenient: bool,
    findings: Findings,
    facts: ZipFacts,
}

/// How the reader will go through the messages member, and where that member is.
struct Plan {
    mode: Mode,
    data_offset: u64,
    member_size: u64,
    /// Every part the index lists (empty for a scan).
    types_seen: Types,
}

impl Opening<'_> {
    fn fail(&self, f: Finding) -> ReadError {
        refusal(self.path, f)
    }

    fn report(&mut self, f: Finding) -> Result<(), ReadError> {
        keep_or_refuse(&mut self.findings, self.lenient, self.path, f)
    }

    /// No index and no central directory: only a lenient read goes on, scanning.
    fn unfinished(&mut self, input: &mut Input, data_offset: u64) -> Result<Plan, ReadError> {
        let end = input.len();
        self.facts.unfinished = true;
        if !self.lenient {
            let n = count_messages(input, data_offset, end);
            return Err(self.fail(Finding::new(Severity::Error, UNFINISHED, format!(
                "the recorder did not close this archive: no index and no central directory. {} complete messages can be recovered; their timestamps are lost and would be synthesised",
                n
            )).offset(0)));
        }
        let scan = Mode::Scan {
            pos: data_offset,
            end,
            kept: HashMap::new(),
            stamps: Stamps::default(),
            why: Why::Unfinished,
        };
        Ok(Plan {
            mode: scan,
            data_offset,
            member_size: end - data_offset,
            types_seen: Types::default(),
        })
    }

    /// A closed archive: its members stored (inflated when they are not), their CRCs
    /// checked, then the index surveyed to choose between reading through it and scanning.
    fn finished(
        &mut self,
        input: &mut Input,
        messages: Member,
        index: Member,
    ) -> Result<Plan, ReadError> {
        let archived = [messages.clone(), index.clone()];
        let (messages, index) = if archived.iter().any(|m| m.method != container::STORED) {
            let (inflated, [m, i]) = container::inflate(input, [&messages, &index])
                .map_err(|f| ReadError::invalid(f).in_file(self.path))?;
            *input = inflated;
            (m, i)
        } else {
            (messages, index)
        };
        let crc_ok = self.examine_crcs(input, [&messages, &index])?;
        let [am, ai] = archived;
        self.facts.members = vec![(am, crc_ok[0]), (ai, crc_ok[1])];
        let (mode, types_seen) = self.indexed_or_scan(input, &messages, &index)?;
        Ok(Plan {
            mode,
            data_offset: messages.data_offset,
            member_size: messages.size,
            types_seen,
        })
    }

    /// Whether each member's bytes match the CRC-32 the archive holds for them.
    fn examine_crcs(
        &mut self,
        input: &mut Input,
        members: [&Member; 2],
    ) -> Result<[bool; 2], ReadError> {
        let mut crc_ok = [true, true];
        for (i, m) in members.into_iter().enumerate() {
            let crc = member_crc(input, m).map_err(|e| ReadError::from(e).in_file(self.path))?;
            if crc != m.crc {
                crc_ok[i] = false;
                self.report(Finding::new(Severity::Error, CRC_MISMATCH, format!(
                    "member `{}`: CRC-32 is {crc:08x}, the archive says {:08x}: its bytes changed after writing", m.name, m.crc
                )).offset(m.data_offset))?;
            }
        }
        Ok(crc_ok)
    }

    /// Reads through the index when its survey finds it whole; scans (keeping what
    /// timestamps it can) when it is broken or cannot be decoded; with every part the
    /// index lists.
    fn indexed_or_scan(
        &mut self,
        input: &mut Input,
        messages: &Member,
        index: &Member,
    ) -> Result<(Mode, Types), ReadError> {
        let survey = match survey(input, messages, index) {
            Ok(survey) => survey,
            Err(e) => {
                self.report(decode_error(e, index))?;
                let mode = scan(HashMap::new(), messages, Why::Damaged);
                return Ok((mode, Types::default()));
            }
        };
        self.facts.entries = survey.total;
        self.facts.contiguous = survey.contiguous;
        if !self.lenient {
            let list = survey.checks.list();
            if let Some(f) = list.iter().find(|f| f.severity == Severity::Error) {
                return Err(self.fail(f.clone()));
            }
        }
        self.findings.append(survey.checks);
        if let Some(why) = survey.broken {
            let kept =
                kept_stamps(input, index).map_err(|e| ReadError::from(e).in_file(self.path))?;
            Ok((scan(kept, messages, why), Types::default()))
        } else {
            let entries = index::Entries::open(input, index.data_offset, index.size)
                .map_err(|e| self.fail(decode_error(e, index)))?;
            Ok((Mode::Indexed { entries }, survey.types))
        }
    }
}

/// The file refused for `f`, with the hint to recover it.
fn refusal(path: &Path, f: Finding) -> ReadError {
    ReadError::invalid(f.hint(HINT)).in_file(path)
}

/// Keeps a finding; an error refuses the file unless reading leniently.
fn keep_or_refuse(
    findings: &mut Findings,
    lenient: bool,
    path: &Path,
    f: Finding,
) -> Result<(), ReadError> {
    if f.severity == Severity::Error && !lenient {
        return Err(refusal(path, f));
    }
    findings.push(f);
    Ok(())
}

/// What one walk over the whole index found, before any message is read.
struct Survey {
    total: u64,
    /// Every part the entries list.
    types: Types,
    contiguous: bool,
    /// Why the index cannot drive the read, if it cannot: an entry points outside the
    /// messages member, or the entries leave messages out.
    broken: Option<Why>,
    checks: Findings,
}

/// Walks the index once, checking each entry against the member and the previous entry;
/// memory follows one batch of entries, not the index.
fn survey(input: &mut Input, messages: &Member, index: &Member) -> Result<Survey, msgpack::Error> {
    let mut entries = index::Entries::open(input, index.data_offset, index.size)?;
    let mut out = Survey {
        total: entries.total(),
        types: Types::default(),
        contiguous: true,
        broken: None,
        checks: Findings::default(),
    };
    let (size, base) = (messages.size, messages.data_offset);
    let mut expected = 0u64;
    // The furthest any entry inside the member reaches.
    let mut covered = 0u64;
    let mut last: Option<i64> = None;
    let mut i = 0u64;
    while let Some(e) = entries.next(input)? {
        for k in e.types.iter() {
            if !out.types.contains(k) {
                out.types.push(k.name());
            }
        }
        let at = base + e.offset;
        let mut push = |severity, code, message: String| {
            out.checks
                .push(Finding::new(severity, code, message).at(at, i))
        };
        match e.offset.checked_add(e.length) {
            Some(end) if end <= size => covered = covered.max(end),
            _ => {
                out.broken = Some(Why::Damaged);
                push(
                    Severity::Error,
                    INDEX_OUT_OF_BOUNDS,
                    format!(
                        "entry {i} ({} bytes at {}) ends past the messages member ({size} bytes)",
                        e.length, e.offset
                    ),
                );
            }
        }
        if e.offset != expected {
            out.contiguous = false;
            push(
                Severity::Warning,
                INDEX_GAP,
                format!(
                    "entry {i} starts at {} where the previous one ended at {expected}",
                    e.offset
                ),
            );
        }
        expected = e.offset.saturating_add(e.length);
        match e.timestamp {
            None => push(
                Severity::Error,
                TIMESTAMP_MISSING,
                format!("entry {i} has no timestamp (upstream playback fails on it)"),
            ),
            Some(Err(what)) => push(
                Severity::Error,
                TIMESTAMP_TYPE,
                format!("entry {i}'s timestamp is {what}, not an integer number of microseconds"),
            ),
            Some(Ok(t)) if !(0..=i64::MAX / 1000).contains(&t) => push(
                Severity::Error,
                TIMESTAMP_TYPE,
                format!(
                "entry {i}'s timestamp {t} µs is negative or beyond what 64-bit nanoseconds hold"),
            ),
            Some(Ok(t)) => {
                match last {
                    Some(l) if t < l => push(
                        Severity::Warning,
                        TIMESTAMP_DECREASE,
                        format!("entry {i}'s timestamp {t} µs is below the previous {l} µs"),
                    ),
                    Some(l) if t - l > JUMP_US => push(
                        Severity::Warning,
                        TIMESTAMP_JUMP,
                        format!(
                            "entry {i} comes {:.1} s after the previous one",
                            (t - l) as f64 / 1e6
                        ),
                    ),
                    _ => {}
                }
                last = Some(t);
            }
        }
        i += 1;
    }
    if covered < size {
        // Messages the index does not list: upstream readers never see them.
        out.contiguous = false;
        out.broken = out.broken.or(Some(Why::Short));
        out.checks.push(
            Finding::new(
                Severity::Error,
                INDEX_SHORT,
                format!(
                    "the index lists {i} messages, which reach byte {covered} of the messages member; its last {} bytes are in no entry, so NanoVer never reads them (`simrec recover` rebuilds the index from the messages)",
                    size - covered
                ),
            )
            .at(base + covered, i),
        );
    } else if i > 0 && expected != size {
        out.contiguous = false;
        out.checks.push(
            Finding::new(
                Severity::Warning,
                INDEX_GAP,
                format!("the last entry ends at {expected}, the messages member at {size}"),
            )
            .at(base + expected.min(size), i - 1),
        );
    }
    Ok(out)
}

/// The finding for an index that cannot be parsed.
fn decode_error(e: msgpack::Error, index: &Member) -> Finding {
    Finding::new(
        Severity::Error,
        INDEX_DECODE,
        format!("the index cannot be read: {}", e.what),
    )
    .offset(index.data_offset + e.at as u64)
}

/// Timestamps of a damaged index, by message offset (offset → (length, timestamp)), for a
/// scan to keep where an entry covers exactly one message. Only damaged archives get here;
/// this map grows with the index.
fn kept_stamps(input: &mut Input, index: &Member) -> std::io::Result<HashMap<u64, (u64, i64)>> {
    let mut kept = HashMap::new();
    let bad = |e: msgpack::Error| std::io::Error::other(e.what);
    let mut entries = index::Entries::open(input, index.data_offset, index.size).map_err(bad)?;
    while let Some(e) = entries.next(input).map_err(bad)? {
        if let Some(Ok(t)) = e.timestamp {
            if (0..=i64::MAX / 1000).contains(&t) {
                kept.insert(e.offset, (e.length, t));
            }
        }
    }
    Ok(kept)
}

fn scan(kept: HashMap<u64, (u64, i64)>, messages: &Member, why: Why) -> Mode {
    Mode::Scan {
        pos: messages.data_offset,
        end: messages.data_offset + messages.size,
        kept,
        stamps: Stamps::default(),
        why,
    }
}

/// CRC-32 of a member's bytes, read in bounded chunks.
fn member_crc(input: &mut Input, m: &Member) -> std::io::Result<u32> {
    const CHUNK: u64 = 1 << 20;
    let mut h = crc32fast::Hasher::new();
    let mut at = m.data_offset;
    let end = m.data_offset + m.size;
    while at < end {
        let n = (end - at).min(CHUNK);
        h.update(input.bytes(at, n as usize)?);
        at += n;
    }
    Ok(h.finalize())
}

/// The bytes of the one msgpack value at `pos`, looking at growing windows so that
/// memory follows the message, not the file.
fn read_value(input: &mut Input, pos: u64, end: u64) -> Result<Vec<u8>, msgpack::Error> {
    let mut window = (1usize << 20).min((end - pos) as usize);
    loop {
        let bytes = input.bytes(pos, window).map_err(|e| msgpack::Error {
            at: 0,
            what: e.to_string(),
        })?;
        match msgpack::skip(bytes, 0) {
            Ok(len) => return Ok(bytes[..len].to_vec()),
            // Cut off by the window, perhaps: look again at a wider one.
            Err(_) if (window as u64) < end - pos && window < MAX_SCAN_MESSAGE => {
                window = (window * 4).min((end - pos) as usize).min(MAX_SCAN_MESSAGE);
            }
            Err(e) => return Err(e),
        }
    }
}

/// Complete messages from `pos` (for the error that tells what `recover` would keep),
/// walked through the read window.
fn count_messages(input: &mut Input, mut pos: u64, end: u64) -> u64 {
    let mut n = 0;
    while pos < end {
        match walk::walk(input, pos, end) {
            Ok(w) => {
                pos += w.len;
                n += 1;
            }
            Err(_) => break,
        }
    }
    n
}
