//! Writing Icarus's CSV export exactly (spec §C1, §C2): `time` and the dotted scalar names,
//! composites expanded in storage order, one row per frame, every value as `%.15g`, LF.
//!
//! The columns are laid out at `create` from the channels' declared fields (the pipeline
//! completes them first: `Format::needs_schema`). A frame is the records of one instant:
//! a row ends when the time changes, when the frame value changes, or when a signal that
//! already has a value in it comes again. A signal without a record in a frame holds its
//! previous value; before its first record it is `nan`, counted as loss. The context records
//! a window opens with (`CONTEXT_GROUP`) set held values and make no row.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::g15::G15;
use super::names;
use crate::formats::icarus_common::{entity_and_field, expanded_names, Kind, SignalType};
use crate::formats::output::{Destination, Outputs};
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::{
    ArrayData, Channel, Composition, DType, Entity, FieldSpec, Header, Nanos, Record, Value,
    CONTEXT_GROUP, QUATERNION_WXYZ, QUATERNION_XYZW,
};

/// Writer setting ([`Outputs::set`]) of `--csv-style`.
pub const STYLE_KEY: &str = "icarus_csv.style";

/// `--csv-style` values, the default first: `icarus-strict` writes Icarus's empty file for
/// a recording without frames, where `icarus` writes the header alone.
pub const STYLES: &[&str] = &["icarus", "icarus-strict"];

/// Largest integer every smaller one of which is exact as a double.
const EXACT_INT: u64 = 1 << 53;

/// What happened to a record's value in one group, tallied per group (a loss on every value
/// of a large file then costs a counter, not a map lookup) and reported at `finish`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tally {
    Digits,
    Int,
    Mismatch,
    NotYet,
    NoColumn,
    OtherEntity,
    F32,
    I32,
    Integer,
    Bool,
}

const TALLIES: usize = 10;

impl Tally {
    const ALL: [Tally; TALLIES] = [
        Tally::Digits,
        Tally::Int,
        Tally::Mismatch,
        Tally::NotYet,
        Tally::NoColumn,
        Tally::OtherEntity,
        Tally::F32,
        Tally::I32,
        Tally::Integer,
        Tally::Bool,
    ];

    fn text(self) -> &'static str {
        match self {
            Tally::Digits => "double needs more than 15 significant digits (%.15g)",
            Tally::Int => "integer not exact as a 15-digit double",
            Tally::Mismatch => "value does not match the declared type: written as nan",
            Tally::NotYet => "no value before its first record: written as nan",
            Tally::NoColumn => "no CSV column for this type (strings, maps, other shapes)",
            Tally::OtherEntity => {
                "another entity of the channel: the CSV has one column per signal"
            }
            Tally::F32 => "float32 written as double",
            Tally::I32 => "int32 written as double",
            Tally::Integer => "integer written as double",
            Tally::Bool => "bool written as 0/1",
        }
    }

    /// Loss (exit 3), or an exact widening (exit 0).
    fn lost(self) -> bool {
        !matches!(self, Tally::F32 | Tally::I32 | Tally::Integer | Tally::Bool)
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// How a field's value spreads over its columns.
#[derive(Debug, Clone, Copy)]
enum Columns {
    /// An Icarus signal type: scalar, Vec3, Quat (scalar first), Mat3 (column-major).
    Signal(SignalType),
    /// Any other numeric array, flattened row-major (`particle.positions[12].y`); `xyzw`: a
    /// scalar-last quaternion, its columns named `.x .y .z .w`.
    Flat {
        count: usize,
        dtype: DType,
        xyzw: bool,
    },
}

impl Columns {
    fn count(self) -> usize {
        match self {
            Columns::Signal(ty) => ty.count(),
            Columns::Flat { count, .. } => count,
        }
    }

    fn model_index(self, i: usize) -> usize {
        match self {
            Columns::Signal(ty) => ty.model_index(i),
            Columns::Flat { .. } => i,
        }
    }

    fn dtype(self) -> DType {
        match self {
            Columns::Signal(ty) => ty.element.dtype(),
            Columns::Flat { dtype, .. } => dtype,
        }
    }

    /// The columns of a declared field: its Icarus signal type, else (any source) a numeric
    /// array flattened. A 4-vector is a scalar-first quaternion (`.w .x .y .z`) only when the
    /// source is Icarus or declares it so, a scalar-last one (`.x .y .z .w`, in storage
    /// order) when declared so (an XREC rotation); other 4-vectors (3es rotations) are
    /// flattened as `[0]`..`[3]`.
    fn of_field(field: &FieldSpec, icarus: bool) -> Option<Columns> {
        let wxyz = icarus || field.semantic.as_deref() == Some(QUATERNION_WXYZ);
        match SignalType::of_field(field) {
            Some(ty) if ty.kind != Kind::Quat || wxyz => return Some(Columns::Signal(ty)),
            _ => {}
        }
        let dtype = field.dtype.filter(|d| *d != DType::Str)?;
        let shape = field.shape.as_deref()?;
        let count = shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .filter(|&n| n > 0)?;
        let xyzw = count == 4 && field.semantic.as_deref() == Some(QUATERNION_XYZW);
        Some(Columns::Flat { count, dtype, xyzw })
    }

    /// Column names for `signal`, in storage order.
    fn names(self, signal: &str, shape: &[usize]) -> Vec<String> {
        match self {
            Columns::Signal(ty) => expanded_names(signal, ty),
            Columns::Flat { xyzw: true, .. } => ["x", "y", "z", "w"]
                .iter()
                .map(|c| format!("{signal}.{c}"))
                .collect(),
            Columns::Flat { .. } => flat_names(signal, shape),
        }
    }
}

/// Names of a flattened array's elements, row-major: `v[0]`…; an array of 3-vectors
/// (`[N, 3]`) as `v[0].x`, `v[0].y`, `v[0].z`…; other shapes `m[0][1]`.
fn flat_names(signal: &str, shape: &[usize]) -> Vec<String> {
    let mut names = vec![signal.to_string()];
    let last = shape.len().saturating_sub(1);
    for (d, &n) in shape.iter().enumerate() {
        let xyz = d == last && d > 0 && n == 3;
        names = names
            .iter()
            .flat_map(|prefix| {
                (0..n).map(move |i| {
                    if xyz {
                        format!("{prefix}.{}", ["x", "y", "z"][i])
                    } else {
                        format!("{prefix}[{i}]")
                    }
                })
            })
            .collect();
    }
    names
}

/// A group of columns: one field of one channel, expanded.
struct Group {
    field: String,
    /// `None`: a type the format has no column for.
    ty: Option<Columns>,
    /// Index of its first column among the signal columns.
    first: usize,
    /// The entity whose values it holds (the first seen): the CSV has one column per signal.
    entity: Option<Option<Entity>>,
    counts: [u64; TALLIES],
}

/// A channel's place in the file.
enum Layout {
    Groups(Vec<Group>),
    /// No column: why its records are lost, and how many were.
    Dropped(&'static str, u64),
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
    /// Per column: whether its value holds until the next record (sample-and-hold channels,
    /// Icarus's signals) or is written only in rows at its records' times (an empty cell
    /// elsewhere: frames, state, events, of every other source).
    holds: Vec<bool>,
    /// Whether the source is Icarus (its 4-vectors are scalar-first quaternions).
    icarus: bool,
    /// Columns not yet given a value (written as `nan`), and how many there are.
    unset: Vec<bool>,
    unset_left: usize,
    /// The current row: time, frame value, whether anything is in it.
    time: Nanos,
    frame: Option<i64>,
    open: bool,
    rows: u64,
    /// Rows whose time did not survive `%.15g`.
    time_lost: u64,
    line: Vec<u8>,
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
            holds: Vec::new(),
            icarus: header.format.starts_with("icar"),
            unset: Vec::new(),
            unset_left: 0,
            time: 0,
            frame: None,
            open: false,
            rows: 0,
            time_lost: 0,
            line: Vec::with_capacity(1 << 16),
            report: WriteReport::default(),
        };
        for channel in &header.channels {
            writer.lay_out(channel);
        }
        Ok(writer)
    }

    /// Columns for every field of `channel` that has a type the format can hold.
    fn lay_out(&mut self, channel: &Channel) {
        // Icarus declares every field; another source may leave some undeclared (a key
        // whose values were never typed, such as NanoVer's string lists): those fields have
        // no column, the channel's other fields do.
        let complete = |f: &FieldSpec| f.is_complete();
        let usable = if self.icarus {
            channel.fields.iter().all(complete)
        } else {
            channel.fields.iter().any(complete)
        };
        if channel.fields.is_empty() || !usable {
            let why = "fields not declared with type and shape before the first record: no column";
            self.channels
                .push((channel.name.clone(), Layout::Dropped(why, 0)));
            return;
        }
        let mut groups = Vec::new();
        for field in &channel.fields {
            let ty = Columns::of_field(field, self.icarus);
            let first = self.cells.len();
            let holds = channel.composition == Composition::SampleHold;
            if let Some(ty) = ty {
                let shape = field.shape.as_deref().unwrap_or_default();
                for column in ty.names(&signal_name(channel, field), shape) {
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
                    self.holds.push(holds);
                    self.unset.push(true);
                    self.unset_left += 1;
                }
            }
            groups.push(Group {
                field: field.name.clone(),
                ty,
                first,
                entity: None,
                counts: [0; TALLIES],
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
        let back = if time.exact() {
            Some(seconds)
        } else {
            time.as_str().parse::<f64>().ok()
        };
        if back.is_none_or(|t| (t * 1e9).round() as Nanos != self.time) {
            self.time_lost += 1;
        }
        for (cell, &holds) in self.cells.iter_mut().zip(&self.holds) {
            line.push(b',');
            if holds || cell.fresh {
                line.extend_from_slice(cell.text.as_bytes());
            }
            cell.fresh = false;
        }
        line.push(b'\n');
        self.out
            .write_all(line)
            .map_err(|e| WriteError::io(&self.path, e))?;
        if self.unset_left > 0 {
            // Columns still without a value were written as nan.
            for (_, layout) in &mut self.channels {
                if let Layout::Groups(groups) = layout {
                    for g in groups.iter_mut() {
                        if g.ty.is_some() && self.holds[g.first] && self.unset[g.first] {
                            g.counts[Tally::NotYet as usize] += 1;
                        }
                    }
                }
            }
        }
        self.rows += 1;
        self.open = false;
        Ok(())
    }

    /// Whether `record` belongs in a new row: its time or frame value differs from the
    /// row's, or it brings a value for a signal the row already has.
    fn starts_row(&self, record: &Record, groups: &[Group]) -> bool {
        self.time != record.time
            || matches!((self.frame, record.frame), (Some(a), Some(b)) if a != b)
            || record.values.iter().any(|(key, _)| {
                groups.iter().find(|g| g.field == *key).is_some_and(|g| {
                    g.ty.is_some()
                        && self.cells[g.first].fresh
                        && g.entity.as_ref().is_none_or(|e| *e == record.entity)
                })
            })
    }
}

/// Sets the cells of one group from a value; returns the tallies it made (a bit each).
fn set(cells: &mut [Cell], ty: Columns, first: usize, value: &Value) -> u16 {
    let n = ty.count();
    let mut tallies = 0u16;
    let mut put = |i: usize, x: f64, exact: bool, widened: Option<Tally>| {
        let text = G15::new(x);
        cells[first + i].text = text;
        tallies |= if !exact {
            Tally::Int.bit()
        } else if !(text.exact() || widened == Some(Tally::F32) && f32_survives(x, &text)) {
            Tally::Digits.bit()
        } else {
            widened.map_or(0, Tally::bit)
        };
    };
    let fits = match value {
        Value::Float(x) if n == 1 => {
            put(0, *x, true, None);
            true
        }
        Value::F32(x) if n == 1 => {
            put(0, f64::from(*x), true, Some(Tally::F32));
            true
        }
        Value::Int(i) if n == 1 => {
            let (x, exact) = int(*i);
            put(0, x, exact, Some(int_widening(ty)));
            true
        }
        Value::UInt(u) if n == 1 => {
            put(0, *u as f64, *u <= EXACT_INT, Some(int_widening(ty)));
            true
        }
        Value::Bool(b) if n == 1 => {
            put(0, f64::from(u8::from(*b)), true, Some(Tally::Bool));
            true
        }
        // Storage order: a Mat3's column i is the model's element model_index(i).
        Value::Array(a) if a.len() == n => {
            (0..n).all(|i| match element(&a.data, ty.model_index(i)) {
                Some((x, exact, widened)) => {
                    put(i, x, exact, widened);
                    true
                }
                None => false,
            })
        }
        _ => false,
    };
    if !fits {
        for cell in &mut cells[first..first + n] {
            cell.text = G15::new(f64::NAN);
        }
        return Tally::Mismatch.bit();
    }
    tallies
}

/// Whether a float32 (`x`, widened) reads back as the same float32 from its text: 15 digits
/// are more than the 9 a float32 needs, so it does, though the double read back is not
/// `x` itself (0.1f32 prints as 0.100000001490116).
fn f32_survives(x: f64, text: &G15) -> bool {
    text.as_str()
        .parse::<f64>()
        .is_ok_and(|back| back as f32 == x as f32)
}

/// An i64 as a double, and whether it is exact.
fn int(i: i64) -> (f64, bool) {
    (i as f64, i.unsigned_abs() <= EXACT_INT)
}

fn int_widening(ty: Columns) -> Tally {
    match ty.dtype() {
        DType::I32 => Tally::I32,
        DType::Bool => Tally::Bool,
        _ => Tally::Integer,
    }
}

/// Element `i` of an array as a double: the value, whether it is exact as a double, and the
/// widening it is; `None` for strings.
fn element(data: &ArrayData, i: usize) -> Option<(f64, bool, Option<Tally>)> {
    let int = Some(Tally::Integer);
    Some(match data {
        ArrayData::F64(v) => (v[i], true, None),
        ArrayData::F32(v) => (f64::from(v[i]), true, Some(Tally::F32)),
        ArrayData::Bool(v) => (f64::from(u8::from(v[i])), true, Some(Tally::Bool)),
        ArrayData::I8(v) => (f64::from(v[i]), true, int),
        ArrayData::I16(v) => (f64::from(v[i]), true, int),
        ArrayData::I32(v) => (f64::from(v[i]), true, Some(Tally::I32)),
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
            Layout::Dropped(
                "channel announced after the header was laid out: no column",
                0,
            ),
        ));
        Ok(())
    }

    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        let c = record.channel as usize;
        let new_row = match self.channels.get(c) {
            None => {
                self.report
                    .loss
                    .add("?", "*", "record of a channel the writer was not told of");
                return Ok(());
            }
            Some((_, Layout::Dropped(..))) => {
                if let Some((_, Layout::Dropped(_, records))) = self.channels.get_mut(c) {
                    *records += 1;
                }
                return Ok(());
            }
            Some((_, Layout::Groups(groups))) => self.open && self.starts_row(record, groups),
        };
        if new_row {
            self.end_row()?;
        }
        // The context a window opens with is the values held at its start, not a frame: it
        // sets them and makes no row (so a slice that starts on a frame holds that frame
        // once, and one that starts between frames starts at the next).
        let context = record.group == Some(CONTEXT_GROUP) && !self.open;
        if !self.open && !context {
            self.open = true;
            self.time = record.time;
            self.frame = record.frame;
        }
        let Some((name, Layout::Groups(groups))) = self.channels.get_mut(c) else {
            return Ok(());
        };
        for (key, value) in &record.values {
            let Some(g) = groups.iter_mut().find(|g| g.field == *key) else {
                self.report
                    .loss
                    .add(name, key, "field not declared by its channel: no column");
                continue;
            };
            let tallies = match (&g.entity, g.ty) {
                (_, None) => Tally::NoColumn.bit(),
                (Some(owner), _) if *owner != record.entity => Tally::OtherEntity.bit(),
                (_, Some(ty)) => {
                    g.entity.get_or_insert_with(|| record.entity.clone());
                    let tallies = set(&mut self.cells, ty, g.first, value);
                    let columns = g.first..g.first + ty.count();
                    for cell in &mut self.cells[columns.clone()] {
                        cell.fresh = !context;
                    }
                    for unset in &mut self.unset[columns] {
                        if *unset {
                            *unset = false;
                            self.unset_left -= 1;
                        }
                    }
                    tallies
                }
            };
            for t in Tally::ALL {
                if tallies & t.bit() != 0 {
                    g.counts[t as usize] += 1;
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
        let loss = &mut self.report.loss;
        loss.add_n(
            "time",
            "time",
            "time in seconds needs more than 15 significant digits (%.15g)",
            self.time_lost,
        );
        for (name, layout) in &self.channels {
            match layout {
                Layout::Dropped(why, n) => loss.add_n(name, "*", why, *n),
                Layout::Groups(groups) => {
                    for g in groups {
                        for t in Tally::ALL {
                            let n = g.counts[t as usize];
                            if t.lost() {
                                loss.add_n(name, &g.field, t.text(), n);
                            } else {
                                loss.widen_n(name, &g.field, t.text(), n);
                            }
                        }
                    }
                }
            }
        }
        Ok(self.report)
    }
}
