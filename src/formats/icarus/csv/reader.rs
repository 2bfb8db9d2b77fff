//! Reading an Icarus CSV export (spec §C2): one channel per column after `time`, one record
//! per row in every channel, every cell a double. The file is streamed line by line through
//! one reused buffer, and records handed back through `recycle` are written over for the
//! next row, so a 1 GB file reads in bounded memory without an allocation per value. Each
//! line is read on its own (`row.rs`), then checked against the rows before it here
//! ([`CsvReader::take_row`]), which the read by blocks (`blocks.rs`) calls too.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::cells::NotANumber;
use super::checks::{self, on_row, NonFinite, Steps};
use super::codes;
use super::lines::{Line, LineAt, Lines};
use super::names;
use super::row::{Note, Parsed, RowShape};
use crate::formats::frames::{le_bytes, FrameLayout, FrameSignal, Packed};
use crate::formats::icarus::common::entity_and_field;
use crate::formats::input;
use crate::formats::{ReadError, ReadOptions, Source};
use crate::model::{
    Channel, ChannelKind, Composition, DType, Entity, FieldSpec, Header, Nanos, Record, Value,
};
use crate::report::{Fact, Finding, Findings, Severity};

/// Format name in headers.
pub const FORMAT: &str = "icarus-csv";

/// Bytes read from the file per refill.
const READ_BUFFER: usize = 1 << 20;

/// The header line may be at most this long: it names every column once.
const MAX_HEADER: usize = 64 << 20;

/// A data row's longest plausible cell: `-1.2345678901234567e-308` and its comma, with room.
const MAX_CELL: usize = 64;

/// Spare records kept per channel for reuse (callers hand each back before the next).
const SPARE: usize = 2;

/// One column: its channel's field name and entity (spec §A10).
struct Column {
    field: String,
    entity: Option<Entity>,
}

pub struct CsvReader {
    path: PathBuf,
    options: ReadOptions,
    lines: Lines,
    total: u64,
    header: Header,
    /// Signal column names, in file order (the header's cells after `time`).
    names: Vec<String>,
    columns: Vec<Column>,
    line: Vec<u8>,
    /// The value cells of `line` that need a word.
    notes: Vec<Note>,
    /// Rows after the header so far (damaged ones included), and those read as frames.
    rows: u64,
    kept_rows: u64,
    /// The current row: its index, time (and in seconds, as the file gives it) and values
    /// (packed as a frame's block: a little-endian double per column), and the next column
    /// to hand out.
    row: u64,
    time: Nanos,
    seconds: f64,
    values: Vec<u8>,
    next_column: usize,
    /// The previous row's time (seconds) for §C3's rules, and the last time handed out.
    previous: Option<f64>,
    last_time: Option<Nanos>,
    steps: Steps,
    nonfinite: Vec<NonFinite>,
    spare: Vec<Vec<Record>>,
    findings: Findings,
    done: bool,
}

impl CsvReader {
    pub fn open(path: &Path, options: ReadOptions) -> Result<CsvReader, ReadError> {
        let file = if path == Path::new("-") {
            let mut file = input::stdin_file().map_err(|e| ReadError::from(e).in_file(path))?;
            file.seek(SeekFrom::Start(0))
                .map_err(|e| ReadError::from(e).in_file(path))?;
            file
        } else {
            File::open(path).map_err(|e| ReadError::from(e).in_file(path))?
        };
        let total = file
            .metadata()
            .map_err(|e| ReadError::from(e).in_file(path))?
            .len();
        let input = Box::new(BufReader::with_capacity(READ_BUFFER, file));
        CsvReader::new(input, total, &input::display_name(path), options)
    }

    /// A reader over bytes in memory (tests, fuzzing).
    pub fn from_bytes(
        bytes: Vec<u8>,
        path: &Path,
        options: ReadOptions,
    ) -> Result<CsvReader, ReadError> {
        let total = bytes.len() as u64;
        CsvReader::new(Box::new(Cursor::new(bytes)), total, path, options)
    }

    fn new(
        input: Box<dyn BufRead>,
        total: u64,
        path: &Path,
        options: ReadOptions,
    ) -> Result<CsvReader, ReadError> {
        let mut header = Header::new(FORMAT, "1");
        // Icarus writes plain MET seconds and no epoch (spec §A8, §C2).
        header.origin.system = Some("MET".into());
        let mut reader = CsvReader {
            path: path.to_path_buf(),
            options,
            lines: Lines::new(input),
            total,
            header,
            names: Vec::new(),
            columns: Vec::new(),
            line: Vec::new(),
            notes: Vec::new(),
            rows: 0,
            kept_rows: 0,
            row: 0,
            time: 0,
            seconds: 0.0,
            values: Vec::new(),
            next_column: 0,
            previous: None,
            last_time: None,
            steps: Steps::default(),
            nonfinite: Vec::new(),
            spare: Vec::new(),
            findings: Findings::default(),
            done: false,
        };
        reader.read_header().map_err(|e| e.in_file(path))?;
        Ok(reader)
    }

    /// The header line (several lines when a quoted name holds a line break). A zero-byte
    /// file is a recording without frames: what Icarus writes for one.
    fn read_header(&mut self) -> Result<(), ReadError> {
        let mut text = Vec::new();
        loop {
            self.line.clear();
            match self.read_line(MAX_HEADER)? {
                Line::End if text.is_empty() && self.lines.count() == 0 => {
                    self.done = true;
                    return Ok(());
                }
                Line::End => break,
                Line::TooLong(_, n) => {
                    return Err(ReadError::invalid(
                        Finding::new(
                            Severity::Error,
                            codes::HEADER,
                            format!("the header line is {n} bytes long, more than the {MAX_HEADER} simrec reads"),
                        )
                        .offset(0),
                    ))
                }
                Line::Read(at) => {
                    if at.no > 1 {
                        text.push(b'\n');
                    }
                    text.extend_from_slice(&self.line);
                    if !names::quote_open(&text) {
                        break;
                    }
                }
            }
        }
        let mut cells = names::split_header(&text);
        if cells.first().map(String::as_str) != Some("time") {
            let first = cells.first().cloned().unwrap_or_default();
            let shown: String = first.chars().take(40).collect();
            return Err(ReadError::invalid(
                Finding::new(
                    Severity::Error,
                    codes::HEADER,
                    format!(
                        "line 1: the header starts with `{shown}`, not the cell `time` that every Icarus CSV export starts with"
                    ),
                )
                .offset(0),
            ));
        }
        cells.remove(0);
        let mut earlier: HashSet<&str> = HashSet::with_capacity(cells.len());
        for (i, name) in cells.iter().enumerate() {
            if !earlier.insert(name) {
                self.findings.push(
                    Finding::new(
                        Severity::Warning,
                        codes::DUPLICATE_COLUMN,
                        format!(
                            "line 1: column {} is named `{name}` like an earlier column; both are channels of that name",
                            i + 2
                        ),
                    )
                    .offset(0),
                );
            }
            let (entity, field) = entity_and_field(name);
            let mut channel = Channel::new(name, ChannelKind::Signals, Composition::SampleHold);
            channel
                .fields
                .push(FieldSpec::typed(field, DType::F64, &[]));
            channel.declares_all = true;
            self.header.add_channel(channel);
            self.columns.push(Column {
                field: field.to_string(),
                entity: entity.map(|e| Entity::Name(Arc::from(e))),
            });
        }
        self.values = vec![0; cells.len() * 8];
        self.spare = (0..cells.len()).map(|_| Vec::new()).collect();
        if self.options.deep {
            self.nonfinite = vec![NonFinite::default(); cells.len()];
        }
        self.names = cells;
        Ok(())
    }

    /// Appends the next line to `self.line` ([`Lines::read`]).
    fn read_line(&mut self, limit: usize) -> Result<Line, ReadError> {
        (self.lines)
            .read(&mut self.line, limit)
            .map_err(|e| ReadError::from(e).in_file(&self.path))
    }

    /// Appends the next line to `into` ([`Lines::read`]).
    pub(super) fn read_into(
        &mut self,
        into: &mut Vec<u8>,
        limit: usize,
    ) -> Result<Line, ReadError> {
        (self.lines)
            .read(into, limit)
            .map_err(|e| ReadError::from(e).in_file(&self.path))
    }

    /// The file's name, as errors give it.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Keeps a finding; in a strict read an error ends the read.
    fn report(&mut self, finding: Finding) -> Result<(), ReadError> {
        if finding.severity == Severity::Error && !self.options.lenient {
            return Err(ReadError::invalid(finding).in_file(&self.path));
        }
        self.findings.push(finding);
        Ok(())
    }

    /// A finding about the row of the line `line`, at byte `at`.
    fn row_finding(
        &self,
        severity: Severity,
        code: &'static str,
        line: LineAt,
        at: u64,
        what: String,
    ) -> Finding {
        on_row(severity, code, line.no, at, self.rows, what)
    }

    /// A row skipped for `why` (an error of `code` at the line's start), counted as read:
    /// false, none to hand out.
    fn skip_row(
        &mut self,
        code: &'static str,
        line: LineAt,
        why: String,
    ) -> Result<bool, ReadError> {
        let finding = self.row_finding(Severity::Error, code, line, line.start, why);
        self.rows += 1;
        self.report(finding)?;
        Ok(false)
    }

    /// How a line is read on its own ([`RowShape::parse`]), and the longest a row may be.
    pub(super) fn row_shape(&self) -> (RowShape, usize) {
        let width = self.columns.len() + 1;
        let shape = RowShape {
            width,
            decode: self.options.decode,
            deep: self.options.deep,
        };
        (shape, 64 + width.saturating_mul(MAX_CELL))
    }

    /// Reads rows until one can be handed out (true) or the file ends (false).
    fn read_row(&mut self) -> Result<bool, ReadError> {
        let (shape, limit) = self.row_shape();
        loop {
            self.line.clear();
            let (at, parsed) = match self.read_line(limit)? {
                Line::End => return Ok(false),
                Line::TooLong(at, n) => (at, Parsed::TooLong(n)),
                Line::Read(at) => {
                    self.notes.clear();
                    (
                        at,
                        shape.parse(&self.line, &mut self.values, &mut self.notes),
                    )
                }
            };
            let (line, notes) = (
                std::mem::take(&mut self.line),
                std::mem::take(&mut self.notes),
            );
            let kept = self.take_row(&line, at, parsed, &notes);
            (self.line, self.notes) = (line, notes);
            if kept? {
                return Ok(true);
            }
        }
    }

    /// Takes the next row, read on its own as `parsed` from `line` (at `at`, its value cells
    /// that need a word in `notes`), through the checks against the rows before it: true
    /// when it is read as a frame (its values are the ones parsed with it), false when it is
    /// damaged (reported and skipped: a row with the wrong number of cells, or whose time
    /// is unusable or goes back); in a strict read an error ends the read.
    pub(super) fn take_row(
        &mut self,
        line: &[u8],
        at: LineAt,
        parsed: Parsed,
        notes: &[Note],
    ) -> Result<bool, ReadError> {
        let width = self.columns.len() + 1;
        let row_index = self.rows;
        let (time_end, time) = match parsed {
            Parsed::Row { time_end, time } => (time_end, time),
            Parsed::TooLong(n) => {
                let why =
                    format!("{n} bytes, longer than any row of {width} numbers could be; skipped");
                return self.skip_row(codes::LINE_LENGTH, at, why);
            }
            Parsed::Cells(cells) => {
                let why = format!(
                    "{cells} cells where the header has {width} (time and {} signals); row skipped",
                    width - 1
                );
                return self.skip_row(codes::COLUMNS, at, why);
            }
        };
        let Some((seconds, time)) = self.row_time(&line[..time_end], time, at)? else {
            self.rows += 1;
            return Ok(false);
        };
        if self.options.decode {
            self.take_values(line, notes, at, time, row_index)?;
        }
        self.rows += 1;
        if let Some(last) = self.last_time {
            self.steps.observe(time.saturating_sub(last));
        }
        self.last_time = Some(time);
        self.previous = Some(seconds);
        self.row = row_index;
        self.time = time;
        self.seconds = seconds;
        self.next_column = 0;
        self.kept_rows += 1;
        Ok(true)
    }

    /// The row's time from its cell (`parsed` as [`super::cells::parse`] read it): seconds and
    /// nanoseconds, or `None` (reported) when the row cannot be read as a frame: an empty,
    /// non-numeric, non-finite or out-of-range time, or one lower than the previous row's.
    fn row_time(
        &mut self,
        cell: &[u8],
        parsed: Result<f64, NotANumber>,
        line: LineAt,
    ) -> Result<Option<(f64, Nanos)>, ReadError> {
        let at = line.start;
        // The cell as text, for messages only (no allocation on the way of a good row).
        let shown = |cell: &[u8]| String::from_utf8_lossy(&cell[..cell.len().min(40)]).into_owned();
        let seconds = match parsed {
            Ok(t) if !cell.is_empty() && t.is_finite() && (t * 1e9).round().abs() < 9.2e18 => t,
            parsed => {
                let what = match parsed {
                    _ if cell.is_empty() => "the time cell is empty".to_string(),
                    Err(_) => format!("the time `{}` is not a number", shown(cell)),
                    Ok(t) if !t.is_finite() => format!("the time is {}", shown(cell)),
                    Ok(_) => format!(
                        "the time {} s is out of range (±292 years in nanoseconds)",
                        shown(cell)
                    ),
                };
                let f = self.row_finding(
                    Severity::Error,
                    codes::TIME,
                    line,
                    at,
                    format!("{what}; row skipped"),
                );
                // A row without a time breaks no ordering: the next row is compared with the
                // last time there was.
                self.report(f)?;
                return Ok(None);
            }
        };
        let ns = (seconds * 1e9).round() as Nanos;
        if let Some(previous) = self.previous {
            if seconds < previous {
                let f = self.row_finding(
                    Severity::Error,
                    codes::TIME,
                    line,
                    at,
                    format!(
                        "the time {} s is lower than the previous row's {}",
                        shown(cell),
                        super::g15::G15::new(previous).as_str()
                    ),
                );
                self.previous = Some(seconds);
                self.report(f)?;
                return Ok(self.in_order(ns).then_some((seconds, ns)));
            } else if seconds == previous {
                let f = self.row_finding(
                    Severity::Warning,
                    codes::TIME_EQUAL,
                    line,
                    at,
                    format!("the time {} s is the previous row's", shown(cell)),
                );
                self.report(f)?;
            }
        }
        if !self.in_order(ns) {
            // Above the previous row (which went back) but below a row already read as a
            // frame: skipped too, so that records stay in time order.
            let last = self.last_time.unwrap_or(ns) as f64 / 1e9;
            let f = self.row_finding(
                Severity::Error,
                codes::TIME,
                line,
                at,
                format!(
                    "the time {} s is lower than {} s, an earlier row's; row skipped",
                    shown(cell),
                    super::g15::G15::new(last).as_str()
                ),
            );
            self.previous = Some(seconds);
            self.report(f)?;
            return Ok(None);
        }
        Ok(Some((seconds, ns)))
    }

    /// Whether a row at `ns` keeps the records handed out in time order.
    fn in_order(&self, ns: Nanos) -> bool {
        self.last_time.is_none_or(|last| ns >= last)
    }

    /// Reports the value cells of a row read as a frame that need a word: one that is not
    /// a number (read as NaN), and (`--deep`) NaN and infinities, counted per column.
    fn take_values(
        &mut self,
        line: &[u8],
        notes: &[Note],
        at: LineAt,
        time: Nanos,
        row: u64,
    ) -> Result<(), ReadError> {
        for note in notes {
            let offset = at.start + note.start as u64;
            if note.bad {
                let cell = &line[note.start..note.end];
                let shown = String::from_utf8_lossy(&cell[..cell.len().min(40)]).into_owned();
                let f = self.row_finding(
                    Severity::Error,
                    codes::VALUE,
                    at,
                    offset,
                    format!(
                        "column {} ({}): `{shown}` is not a number; read as NaN",
                        note.column + 2,
                        self.names[note.column]
                    ),
                );
                self.report(f)?;
            }
            if let Some(n) = self.nonfinite.get_mut(note.column) {
                n.observe(note.value, row, offset, time);
            }
        }
        Ok(())
    }

    /// The record of column `c` in the current row, over a recycled one when there is one.
    fn record(&mut self, c: usize) -> Record {
        let column = &self.columns[c];
        let mut record = self.spare[c]
            .pop()
            .unwrap_or_else(|| Record::new(0, c as u32));
        record.time = self.time;
        record.exact_seconds = Some(self.seconds);
        record.channel = c as u32;
        record.frame = Some(self.row as i64);
        record.raw = None;
        record.group = None;
        if record.entity != column.entity {
            record.entity = column.entity.clone();
        }
        if self.options.decode {
            let value = Value::Float(f64::from_le_bytes(le_bytes(&self.values, 8 * c)));
            match record.values.as_mut_slice() {
                [(key, v)] if *key == column.field => *v = value,
                _ => {
                    record.values.clear();
                    record.values.push((column.field.clone(), value));
                }
            }
        } else {
            record.values.clear();
        }
        record
    }

    /// Reads the next row that can be handed out (true), or reaches the end (false, once,
    /// with the findings of the whole file; an error ends the read too).
    fn advance(&mut self) -> Result<bool, ReadError> {
        if self.done {
            return Ok(false);
        }
        let read = self.read_row();
        if !matches!(read, Ok(true)) {
            self.done = true;
        }
        if let Ok(false) = read {
            self.finish();
        }
        read
    }

    /// The layout of the frames: a float64 per column, in column order, each the one field
    /// of its channel; `None` for a file of no columns, whose record read gives no records.
    pub(super) fn frame_layout(&self) -> Option<FrameLayout> {
        if self.columns.is_empty() {
            return None;
        }
        let dynamics = (self.columns.iter().enumerate())
            .map(|(c, column)| FrameSignal {
                channel: c as u32,
                entity: column.entity.clone(),
                packed: Packed {
                    dtype: DType::F64,
                    shape: Vec::new(),
                    column_major: false,
                },
                offset: 8 * c,
            })
            .collect();
        Some(FrameLayout {
            dynamics,
            ..FrameLayout::default()
        })
    }

    /// The time of the row last read as a frame: seconds as the file gives them, and
    /// nanoseconds.
    pub(super) fn frame_time(&self) -> (f64, Nanos) {
        (self.seconds, self.time)
    }

    /// Whether every row so far was read as a frame, so that the frames' indices are the
    /// rows' (their records' frame values): a lenient read skips damaged rows.
    pub(super) fn no_row_skipped(&self) -> bool {
        self.rows == self.kept_rows
    }

    /// Findings that sum up the whole file, once it has been read.
    pub(super) fn finish(&mut self) {
        let found: Vec<Finding> = self
            .nonfinite
            .iter()
            .zip(&self.names)
            .filter_map(|(n, name)| n.finding(name))
            .collect();
        self.findings.extend(found);
    }
}

impl Iterator for CsvReader {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.next_column < self.columns.len() && self.kept_rows > 0 {
                let c = self.next_column;
                // A check-only read (`validate`) takes the row's times from one record: every
                // value was parsed and checked when the row was read.
                self.next_column = if self.options.check_only {
                    self.columns.len()
                } else {
                    c + 1
                };
                return Some(Ok(self.record(c)));
            }
            match self.advance() {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl Source for CsvReader {
    fn header(&self) -> &Header {
        &self.header
    }

    fn findings(&self) -> Vec<(&Path, &Findings)> {
        vec![(self.path.as_path(), &self.findings)]
    }

    fn progress(&self) -> (u64, u64) {
        (self.lines.offset().min(self.total), self.total)
    }

    fn facts(&self) -> Vec<Fact> {
        checks::facts(&self.names, self.rows, self.kept_rows, &self.steps)
    }

    fn recycle(&mut self, record: Record) {
        if let Some(spare) = self.spare.get_mut(record.channel as usize) {
            if spare.len() < SPARE {
                spare.push(record);
            }
        }
    }
}
