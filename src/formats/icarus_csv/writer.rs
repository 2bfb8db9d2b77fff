//! Writing Icarus's CSV export exactly (spec §C1, §C2): `time` and the dotted scalar names,
//! composites expanded in storage order, one row per frame, every value as `%.15g`, LF.
//!
//! The columns are laid out at `create` from the channels' declared fields (the pipeline
//! completes them first: `Format::needs_schema`). A frame is the records of one instant:
//! a row ends when the time changes, when the frame value changes, or when a signal that
//! already has a value in it comes again. A signal without a record in a frame holds its
//! previous value; before its first record it is `nan`, counted as loss.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::g15::G15;
use super::names;
use crate::formats::icarus_common::{entity_and_field, expanded_names, SignalType};
use crate::formats::output::{Destination, Outputs};
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::{ArrayData, Channel, DType, Entity, FieldSpec, Header, Nanos, Record, Value};

/// Writer setting ([`Outputs::set`]) of `--csv-style`.
pub const STYLE_KEY: &str = "icarus_csv.style";

/// `--csv-style` values, the default first: `icarus-strict` writes Icarus's empty file for
/// a recording without frames, where `icarus` writes the header alone.
pub const STYLES: &[&str] = &["icarus", "icarus-strict"];

/// Largest integer every smaller one of which is exact as a double.
const EXACT_INT: u64 = 1 << 53;

const LOST_DIGITS: &str = "double needs more than 15 significant digits (%.15g)";
const LOST_INT: &str = "integer not exact as a 15-digit double";
const NOT_YET: &str = "no value before its first record: written as nan";
const WIDE_F32: &str = "float32 written as double";
const MISMATCH: &str = "value does not match the declared type: written as nan";

/// A group of columns: one field of one channel, expanded.
struct Group {
    field: String,
    ty: SignalType,
    /// Index of its first column among the signal columns.
    first: usize,
    /// The entity whose values it holds (the first seen): the CSV has one column per signal.
    entity: Option<Option<Entity>>,
}

/// A channel's place in the file.
enum Layout {
    Groups(Vec<Group>),
    /// No column: why its records are lost.
    Dropped(&'static str),
}

/// A cell's text, kept until the value changes (formatted once per record, not per row).
#[derive(Clone, Copy)]
struct Cell {
    text: G15,
    /// Set in the current row.
    fresh: bool,
}

pub struct CsvWriter {
    out: Destination,
    path: PathBuf,
    strict: bool,
    /// Channel names and their layout, by channel id.
    channels: Vec<(String, Layout)>,
    header_line: Vec<u8>,
    cells: Vec<Cell>,
    /// Columns not yet given a value (written as `nan`), for the loss report.
    unset: Vec<bool>,
    /// The current row: time, frame value, whether anything is in it.
    time: Nanos,
    frame: Option<i64>,
    open: bool,
    rows: u64,
    line: Vec<u8>,
    /// Reasons of the current record, counted once per record.
    reasons: Vec<(&'static str, bool)>,
    report: WriteReport,
}

/// The name of field `f` of `channel` as a signal: the channel's name when the channel is
/// one Icarus signal (its only field is its last name segment, spec §A10), else
/// `channel.field`.
fn signal_name(channel: &Channel, field: &FieldSpec) -> String {
    let (_, last) = entity_and_field(&channel.name);
    if channel.fields.len() == 1 && last == field.name {
        channel.name.clone()
    } else {
        format!("{}.{}", channel.name, field.name)
    }
}

impl CsvWriter {
    pub fn create(
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<CsvWriter, WriteError> {
        let strict = match outputs.setting(STYLE_KEY) {
            None | Some("icarus") => false,
            Some("icarus-strict") => true,
            Some(other) => {
                return Err(WriteError::Unsupported(format!(
                    "unknown CSV style `{other}` (one of: {})",
                    STYLES.join(", ")
                )))
            }
        };
        let mut writer = CsvWriter {
            out: outputs.create(target)?,
            path: target.to_path_buf(),
            strict,
            channels: Vec::new(),
            header_line: b"time".to_vec(),
            cells: Vec::new(),
            unset: Vec::new(),
            time: 0,
            frame: None,
            open: false,
            rows: 0,
            line: Vec::with_capacity(1 << 16),
            reasons: Vec::new(),
            report: WriteReport::default(),
        };
        for channel in &header.channels {
            writer.lay_out(channel);
        }
        Ok(writer)
    }

    /// Columns for every field of `channel` that has a type the format can hold.
    fn lay_out(&mut self, channel: &Channel) {
        if channel.fields.is_empty() || !channel.fields.iter().all(FieldSpec::is_complete) {
            let why = "fields not declared with type and shape before the first record: no column";
            self.channels
                .push((channel.name.clone(), Layout::Dropped(why)));
            return;
        }
        let mut groups = Vec::new();
        for field in &channel.fields {
            let Some(ty) = SignalType::of_field(field) else {
                // Counted per record: a string or a map has no CSV column.
                groups.push(Group {
                    field: field.name.clone(),
                    ty: SignalType::scalar(crate::formats::icarus_common::Element::Double),
                    first: usize::MAX,
                    entity: None,
                });
                continue;
            };
            let name = signal_name(channel, field);
            let first = self.cells.len();
            for column in expanded_names(&name, ty) {
                if names::needs_quotes(&column) {
                    self.report.warnings.push(format!(
                        "column `{}` holds a comma, a quote or a line break: quoted per RFC 4180, \
                         which Icarus's own names never need",
                        column.escape_debug()
                    ));
                }
                self.header_line.push(b',');
                names::push_name(&mut self.header_line, &column);
                self.cells.push(Cell {
                    text: G15::new(f64::NAN),
                    fresh: false,
                });
                self.unset.push(true);
            }
            groups.push(Group {
                field: field.name.clone(),
                ty,
                first,
                entity: None,
            });
        }
        self.channels
            .push((channel.name.clone(), Layout::Groups(groups)));
    }

    /// Ends the current row: writes it (and the header before the first).
    fn end_row(&mut self) -> Result<(), WriteError> {
        if !self.open {
            return Ok(());
        }
        if self.rows == 0 {
            self.header_line.push(b'\n');
            self.out
                .write_all(&self.header_line)
                .map_err(|e| WriteError::io(&self.path, e))?;
        }
        let line = &mut self.line;
        line.clear();
        let seconds = self.time as f64 / 1e9;
        let time = G15::new(seconds);
        line.extend_from_slice(time.as_bytes());
        let time_exact = if time.exact() {
            (seconds * 1e9).round() as Nanos == self.time
        } else {
            time.as_str()
                .parse::<f64>()
                .is_ok_and(|t| (t * 1e9).round() as Nanos == self.time)
        };
        if !time_exact {
            self.report.loss.add(
                "time",
                "time",
                "time in seconds needs more than 15 significant digits (%.15g)",
            );
        }
        for cell in &mut self.cells {
            line.push(b',');
            line.extend_from_slice(cell.text.as_bytes());
            cell.fresh = false;
        }
        line.push(b'\n');
        self.out
            .write_all(line)
            .map_err(|e| WriteError::io(&self.path, e))?;
        // Columns still without a value were written as nan.
        for (name, layout) in &self.channels {
            if let Layout::Groups(groups) = layout {
                for g in groups.iter().filter(|g| g.first != usize::MAX) {
                    if self.unset[g.first] {
                        self.report.loss.add(name, &g.field, NOT_YET);
                    }
                }
            }
        }
        self.rows += 1;
        self.open = false;
        Ok(())
    }

    /// Sets the cells of one group from a value; the reasons go to `reasons`.
    fn set(
        cells: &mut [Cell],
        unset: &mut [bool],
        g: &Group,
        value: &Value,
        reasons: &mut Vec<(&'static str, bool)>,
    ) {
        let n = g.ty.count();
        let columns = g.first..g.first + n;
        let mut put = |i: usize, x: f64, exact: bool, widened: Option<&'static str>| {
            let text = G15::new(x);
            cells[g.first + i].text = text;
            if !exact {
                reasons.push((LOST_INT, true));
            } else if !(text.exact() || widened == Some(WIDE_F32) && f32_survives(x, &text)) {
                reasons.push((LOST_DIGITS, true));
            } else if let Some(w) = widened {
                reasons.push((w, false));
            }
        };
        let fits = match value {
            Value::Float(x) if n == 1 => {
                put(0, *x, true, None);
                true
            }
            Value::F32(x) if n == 1 => {
                put(0, f64::from(*x), true, Some(WIDE_F32));
                true
            }
            Value::Int(i) if n == 1 => {
                let (x, exact) = int(*i);
                put(0, x, exact, Some(int_widening(g.ty)));
                true
            }
            Value::UInt(u) if n == 1 => {
                put(0, *u as f64, *u <= EXACT_INT, Some(int_widening(g.ty)));
                true
            }
            Value::Bool(b) if n == 1 => {
                put(
                    0,
                    f64::from(u8::from(*b)),
                    true,
                    Some("bool written as 0/1"),
                );
                true
            }
            Value::Array(a) if a.len() == n => (0..n).all(|i| {
                // Storage order: a Mat3's column i is the model's element model_index(i).
                match element(&a.data, g.ty.model_index(i)) {
                    Some((x, exact, widened)) => {
                        put(i, x, exact, widened);
                        true
                    }
                    None => false,
                }
            }),
            _ => false,
        };
        if !fits {
            for c in columns.clone() {
                cells[c].text = G15::new(f64::NAN);
            }
            reasons.push((MISMATCH, true));
        }
        for c in columns {
            cells[c].fresh = true;
            unset[c] = false;
        }
    }
}

/// Whether a float32 (`x`, widened) reads back as the same float32 from its text: 15 digits
/// are more than the 9 a float32 needs, so it does, though the double read back is not
/// `x` itself (0.7854f32 prints as 0.785399973392487).
fn f32_survives(x: f64, text: &G15) -> bool {
    text.as_str()
        .parse::<f64>()
        .is_ok_and(|back| back as f32 == x as f32)
}

/// An i64 as a double, and whether it is exact.
fn int(i: i64) -> (f64, bool) {
    (i as f64, i.unsigned_abs() <= EXACT_INT)
}

fn int_widening(ty: SignalType) -> &'static str {
    match ty.element.dtype() {
        DType::I32 => "int32 written as double",
        DType::Bool => "bool written as 0/1",
        _ => "integer written as double",
    }
}

/// Element `i` of an array as a double: the value, whether it is exact as a double, and the
/// widening it is; `None` for strings.
fn element(data: &ArrayData, i: usize) -> Option<(f64, bool, Option<&'static str>)> {
    let int = Some("integer written as double");
    Some(match data {
        ArrayData::F64(v) => (v[i], true, None),
        ArrayData::F32(v) => (f64::from(v[i]), true, Some(WIDE_F32)),
        ArrayData::Bool(v) => (f64::from(u8::from(v[i])), true, Some("bool written as 0/1")),
        ArrayData::I8(v) => (f64::from(v[i]), true, int),
        ArrayData::I16(v) => (f64::from(v[i]), true, int),
        ArrayData::I32(v) => (f64::from(v[i]), true, Some("int32 written as double")),
        ArrayData::I64(v) => {
            let (x, exact) = self::int(v[i]);
            (x, exact, int)
        }
        ArrayData::U8(v) => (f64::from(v[i]), true, int),
        ArrayData::U16(v) => (f64::from(v[i]), true, int),
        ArrayData::U32(v) => (f64::from(v[i]), true, int),
        ArrayData::U64(v) => (v[i] as f64, v[i] <= EXACT_INT, int),
        ArrayData::Str(_) => return None,
    })
}

impl Sink for CsvWriter {
    fn add_channel(&mut self, channel: &Channel) -> Result<(), WriteError> {
        // The header is laid out before the first record: a channel met later has no column.
        self.channels.push((
            channel.name.clone(),
            Layout::Dropped("channel announced after the header was laid out: no column"),
        ));
        Ok(())
    }

    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        let Some((name, layout)) = self.channels.get(record.channel as usize) else {
            self.report
                .loss
                .add("?", "*", "record of a channel the writer was not told of");
            return Ok(());
        };
        let groups = match layout {
            Layout::Dropped(why) => {
                self.report.loss.add(name, "*", why);
                return Ok(());
            }
            Layout::Groups(groups) => groups,
        };
        // Does this record start a new row?
        let new_frame = self.time != record.time
            || matches!((self.frame, record.frame), (Some(a), Some(b)) if a != b)
            || record.values.iter().any(|(key, _)| {
                groups
                    .iter()
                    .find(|g| g.field == *key && g.first != usize::MAX)
                    .is_some_and(|g| {
                        self.cells[g.first].fresh
                            && g.entity.as_ref().is_none_or(|e| *e == record.entity)
                    })
            });
        if self.open && new_frame {
            self.end_row()?;
        }
        let Some((name, Layout::Groups(groups))) = self.channels.get_mut(record.channel as usize)
        else {
            return Ok(());
        };
        if !self.open {
            self.open = true;
            self.time = record.time;
            self.frame = record.frame;
        }
        self.reasons.clear();
        for (key, value) in &record.values {
            let Some(g) = groups.iter_mut().find(|g| g.field == *key) else {
                self.report
                    .loss
                    .add(name, key, "field not declared by its channel: no column");
                continue;
            };
            if g.first == usize::MAX {
                self.report.loss.add(
                    name,
                    key,
                    "no CSV column for this type (strings, maps, other shapes)",
                );
                continue;
            }
            match &g.entity {
                None => g.entity = Some(record.entity.clone()),
                Some(e) if *e != record.entity => {
                    self.report.loss.add(
                        name,
                        key,
                        "another entity of the channel: the CSV has one column per signal",
                    );
                    continue;
                }
                Some(_) => {}
            }
            CsvWriter::set(
                &mut self.cells,
                &mut self.unset,
                g,
                value,
                &mut self.reasons,
            );
            self.reasons.sort_unstable();
            self.reasons.dedup();
            for (reason, lost) in self.reasons.drain(..) {
                if lost {
                    self.report.loss.add(name, key, reason);
                } else {
                    self.report.loss.widen(name, key, reason);
                }
            }
        }
        self.report.records += 1;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<WriteReport, WriteError> {
        self.end_row()?;
        if self.rows == 0 {
            if self.strict {
                self.report.warnings.push(
                    "no frames: wrote an empty file, as Icarus does (--csv-style icarus-strict)"
                        .into(),
                );
            } else {
                self.header_line.push(b'\n');
                self.out
                    .write_all(&self.header_line)
                    .map_err(|e| WriteError::io(&self.path, e))?;
                self.report.warnings.push(
                    "no frames: wrote the header line alone (Icarus writes an empty file; \
                     --csv-style icarus-strict does too)"
                        .into(),
                );
            }
        }
        self.out
            .flush()
            .map_err(|e| WriteError::io(&self.path, e))?;
        Ok(self.report)
    }
}
