//! Writing Icarus's CSV export exactly (spec §C1, §C2): `time` and the dotted scalar names,
//! composites expanded in storage order, one row per frame, every value as `%.15g`, LF.
//!
//! The columns are laid out at `create` from the channels' declared fields (the pipeline
//! completes them first: `WriterTraits::needs_schema`). A frame is the records of one instant:
//! a row ends when the time changes, when the frame value changes, or when a signal that
//! already has a value in it comes again. A signal without a record in a frame holds its
//! previous value; before its first record it is `nan`, counted as loss. The context records
//! a window opens with (`CONTEXT_GROUP`) set held values and make no row.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::g15::G15;
use super::names;
use crate::formats::format::TimeColumn;
use crate::formats::icarus::common::{entity_and_field, expanded_names, Kind, SignalType};
use crate::formats::output::{self, Outputs};
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::time_scale::{self, TimeFormat};
use crate::model::{
    ArrayData, Channel, Composition, DType, Entity, Epoch, FieldSpec, Header, Nanos, Record, Value,
    CONTEXT_GROUP, QUATERNION_WXYZ, QUATERNION_XYZW,
};

/// What a CSV output of no frames holds (`--csv-style`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CsvStyle {
    /// The header line.
    #[default]
    Icarus,
    /// Nothing, as Icarus writes it.
    IcarusStrict,
}

/// How an Icarus CSV is written.
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvWriteOptions {
    pub style: CsvStyle,
    pub time: TimeColumn,
}

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
    F32,
    I32,
    Integer,
    Bool,
}

const TALLIES: usize = 9;

impl Tally {
    const ALL: [Tally; TALLIES] = [
        Tally::Digits,
        Tally::Int,
        Tally::Mismatch,
        Tally::NotYet,
        Tally::NoColumn,
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

    /// Column names for `signal`, in storage order: a flattened array's elements by the
    /// names the format gives them when it names each one (Elodin's `world_pos.qx`).
    fn names(self, signal: &str, shape: &[usize], elements: Option<&[String]>) -> Vec<String> {
        match self {
            Columns::Signal(ty) => expanded_names(signal, ty),
            Columns::Flat { xyzw: true, .. } => ["x", "y", "z", "w"]
                .iter()
                .map(|c| format!("{signal}.{c}"))
                .collect(),
            Columns::Flat { count, .. } => match elements {
                Some(e) if e.len() == count => e.iter().map(|e| format!("{signal}.{e}")).collect(),
                _ => flat_names(signal, shape),
            },
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

/// A declared field that has columns, before they are given to an entity.
struct FieldPlan {
    name: String,
    /// `None`: a type the format has no column for.
    ty: Option<Columns>,
    shape: Vec<usize>,
    elements: Option<Vec<String>>,
}

/// What the records of one channel fill.
struct Plan {
    /// The channel's columns are named by the channel alone, not `channel.field` (one Icarus
    /// signal, spec §A10).
    one_signal: bool,
    holds: bool,
    fields: Vec<FieldPlan>,
}

/// The columns of one field of one entity, expanded.
struct Group {
    /// Index of its first column.
    first: usize,
    counts: [u64; TALLIES],
}

/// The columns of one entity of a channel (or of its records without an entity): one group
/// per field of the plan.
struct EntityColumns {
    groups: Vec<Group>,
    /// Laid out when the header was written for a channel that had no record yet, in case
    /// its records have no entity; if they all have one, a rewritten file leaves it out.
    assumed: bool,
    used: bool,
}

/// A channel's columns, per entity in the order they were met.
struct Entities {
    name: String,
    plan: Plan,
    sets: Vec<EntityColumns>,
    index: HashMap<Option<Entity>, usize>,
    /// The set the last record went to, with that record's entity: the next record of the
    /// same entity finds it without hashing (Icarus's names are shared `Arc`s).
    last: Option<(usize, Option<Entity>)>,
}

/// A channel's place in the file.
enum Layout {
    Entities(Entities),
    /// No column: the channel's name, why its records are lost, and how many were.
    Dropped(String, &'static str, u64),
}

/// A cell's text, kept until the value changes (formatted once per record, not per row).
#[derive(Clone, Copy)]
struct Cell {
    text: G15,
    /// Set in the current row.
    fresh: bool,
}

/// Every column of the file, in the order its cells are written.
#[derive(Default)]
struct Row {
    cells: Vec<Cell>,
    names: Vec<String>,
    /// Per column: whether its value holds until the next record (sample-and-hold channels,
    /// Icarus's signals) or is written only in rows at its records' times (an empty cell
    /// elsewhere: frames, state, events, of every other source).
    holds: Vec<bool>,
    /// Held columns not yet given a value (written as `nan`), and how many there are.
    unset: Vec<bool>,
    unset_left: usize,
}

impl Row {
    fn push(&mut self, name: String, holds: bool) {
        self.cells.push(Cell {
            text: G15::new(f64::NAN),
            fresh: false,
        });
        self.names.push(name);
        self.holds.push(holds);
        // Only a held column is written (as `nan`) before its first value; counting only
        // those keeps the per-row tally away when nothing holds (thousands of 3es shapes).
        self.unset.push(holds);
        self.unset_left += usize::from(holds);
    }

    /// Keeps only the columns at `order`, in that order (renumbering is the caller's).
    fn reorder(&mut self, order: &[usize]) {
        self.cells = order.iter().map(|&i| self.cells[i]).collect();
        self.names = order
            .iter()
            .map(|&i| std::mem::take(&mut self.names[i]))
            .collect();
        self.holds = order.iter().map(|&i| self.holds[i]).collect();
        self.unset = order.iter().map(|&i| self.unset[i]).collect();
        self.unset_left = self.unset.iter().filter(|u| **u).count();
    }
}

pub struct CsvWriter {
    out: BufWriter<File>,
    /// The temporary file being written (renamed onto the target at commit).
    temp: PathBuf,
    path: PathBuf,
    strict: bool,
    /// The absolute start the `time` column shows its times from (`--time utc`).
    utc: Option<Epoch>,
    /// Channel layouts, by channel id.
    channels: Vec<Layout>,
    row: Row,
    /// Bytes of the header line as written (0 before it is).
    header_bytes: u64,
    /// Columns were added after the header was written (an entity met late): the file is
    /// rewritten at the end with every column in its place.
    widened: bool,
    /// The current row: time (and in seconds, the source's own when it has them), frame
    /// value, whether anything is in it.
    time: Nanos,
    seconds: f64,
    frame: Option<i64>,
    open: bool,
    rows: u64,
    /// Rows whose time did not survive `%.15g`.
    time_lost: u64,
    line: Vec<u8>,
    report: WriteReport,
}

/// Whether the channel's name already names the entity (an Icarus signal `Nav.x` of the
/// component `Nav`), or the entity has no name: its columns then carry no entity segment.
fn implied(channel: &str, entity: &Option<Entity>) -> bool {
    match entity {
        Some(Entity::Name(e)) if e.is_empty() => true,
        Some(Entity::Name(e)) => channel
            .strip_prefix(&**e)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.')),
        _ => false,
    }
}

/// The same entity, recognised by address first.
fn same_entity(a: &Option<Entity>, b: &Option<Entity>) -> bool {
    match (a, b) {
        (Some(Entity::Name(x)), Some(Entity::Name(y))) => Arc::ptr_eq(x, y) || x == y,
        _ => a == b,
    }
}

impl Entities {
    /// The signal name of field `f` for `entity`: the channel's name, then the entity, then
    /// the field's name unless the channel is one signal.
    fn signal(&self, f: &FieldPlan, entity: Option<&Entity>) -> String {
        let mut name = self.name.clone();
        if let Some(e) = entity {
            name.push('.');
            name.push_str(&e.to_string());
        }
        if !self.plan.one_signal {
            name.push('.');
            name.push_str(&f.name);
        }
        name
    }
}

impl CsvWriter {
    pub fn create(
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
        options: CsvWriteOptions,
    ) -> Result<CsvWriter, WriteError> {
        let utc = options.time.epoch(header)?;
        let strict = options.style == CsvStyle::IcarusStrict;
        // A path, not a stream: a file whose columns grow after its header is written is
        // read back and rewritten at the end (standard output is spooled to allow it).
        let temp = outputs.create_path(target)?;
        let file = File::create(&temp).map_err(|e| WriteError::io(target, e))?;
        let icarus = header.format.starts_with("icar");
        let channels = header
            .channels
            .iter()
            .map(|c| Self::plan(c, icarus))
            .collect();
        Ok(CsvWriter {
            out: BufWriter::with_capacity(1 << 20, file),
            temp,
            path: target.to_path_buf(),
            strict,
            utc,
            channels,
            row: Row::default(),
            header_bytes: 0,
            widened: false,
            time: 0,
            seconds: 0.0,
            frame: None,
            open: false,
            rows: 0,
            time_lost: 0,
            line: Vec::with_capacity(1 << 16),
            report: WriteReport::default(),
        })
    }

    /// The columns every entity of `channel` gets: one group per field that has a type the
    /// format can hold.
    fn plan(channel: &Channel, icarus: bool) -> Layout {
        // Icarus declares every field; another source may leave some undeclared (a key
        // whose values were never typed, such as NanoVer's string lists): those fields have
        // no column, the channel's other fields do.
        let complete = |f: &FieldSpec| f.is_complete();
        let usable = if icarus {
            channel.fields.iter().all(complete)
        } else {
            channel.fields.iter().any(complete)
        };
        if channel.fields.is_empty() || !usable {
            let why = "fields not declared with type and shape before the first record: no column";
            return Layout::Dropped(channel.name.clone(), why, 0);
        }
        let (_, last) = entity_and_field(&channel.name);
        let fields = channel
            .fields
            .iter()
            .map(|f| FieldPlan {
                name: f.name.clone(),
                ty: Columns::of_field(f, icarus),
                shape: f.shape.clone().unwrap_or_default(),
                elements: f.elements.clone(),
            })
            .collect();
        Layout::Entities(Entities {
            name: channel.name.clone(),
            plan: Plan {
                one_signal: channel.fields.len() == 1 && last == channel.fields[0].name,
                holds: channel.composition == Composition::SampleHold,
                fields,
            },
            sets: Vec::new(),
            index: HashMap::new(),
            last: None,
        })
    }

    /// Columns for `entity` of channel `c`, appended to the row.
    fn add_set(&mut self, c: usize, entity: Option<Entity>, assumed: bool) -> usize {
        let Some(Layout::Entities(e)) = self.channels.get_mut(c) else {
            return 0;
        };
        let mut groups = Vec::with_capacity(e.plan.fields.len());
        for f in &e.plan.fields {
            let mut counts = [0; TALLIES];
            let first = self.row.cells.len();
            if let Some(ty) = f.ty {
                let signal = e.signal(f, entity.as_ref());
                for column in ty.names(&signal, &f.shape, f.elements.as_deref()) {
                    if names::needs_quotes(&column) {
                        self.report.warnings.push(format!(
                            "column `{}` holds a comma, a quote or a line break: quoted per RFC 4180, \
                             which Icarus's own names never need",
                            column.escape_debug()
                        ));
                    }
                    self.row.push(column, e.plan.holds);
                }
                if e.plan.holds {
                    // The rows already written get `nan` in these columns.
                    counts[Tally::NotYet as usize] = self.rows;
                }
            }
            groups.push(Group { first, counts });
        }
        let s = e.sets.len();
        e.sets.push(EntityColumns {
            groups,
            assumed,
            used: false,
        });
        e.index.insert(entity, s);
        if self.header_bytes > 0 {
            self.widened = true;
        }
        s
    }

    /// The set of columns of `entity` in channel `c`, made when the entity is new.
    fn set_for(&mut self, c: usize, entity: &Option<Entity>) -> usize {
        let Some(Layout::Entities(e)) = self.channels.get_mut(c) else {
            return 0;
        };
        if let Some((s, last)) = &e.last {
            if same_entity(last, entity) {
                return *s;
            }
        }
        let key = if entity.is_none() || implied(&e.name, entity) {
            None
        } else {
            entity.clone()
        };
        let found = e.index.get(&key).copied();
        let s = match found {
            Some(s) => s,
            None => self.add_set(c, key, false),
        };
        if let Some(Layout::Entities(e)) = self.channels.get_mut(c) {
            e.last = Some((s, entity.clone()));
        }
        s
    }

    /// The columns channel by channel, each channel's entities in the order they were met,
    /// leaving out the assumed sets that no record used in a channel that has others.
    fn column_order(&self, leave_out_unused: bool) -> Vec<usize> {
        let mut order = Vec::with_capacity(self.row.cells.len());
        for layout in &self.channels {
            let Layout::Entities(e) = layout else {
                continue;
            };
            for set in &e.sets {
                if leave_out_unused && set.assumed && !set.used && e.sets.len() > 1 {
                    continue;
                }
                for (g, f) in set.groups.iter().zip(&e.plan.fields) {
                    let n = f.ty.map_or(0, Columns::count);
                    order.extend(g.first..g.first + n);
                }
            }
        }
        order
    }

    /// Before the first row: columns for the channels that had no record yet, then every
    /// column in channel order, and the header line.
    fn write_header(&mut self) -> Result<(), WriteError> {
        for c in 0..self.channels.len() {
            if matches!(&self.channels[c], Layout::Entities(e) if e.sets.is_empty()) {
                self.add_set(c, None, true);
            }
        }
        let order = self.column_order(false);
        let mut new_index = vec![0; self.row.cells.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new;
        }
        for layout in &mut self.channels {
            if let Layout::Entities(e) = layout {
                for g in e.sets.iter_mut().flat_map(|s| s.groups.iter_mut()) {
                    g.first = new_index.get(g.first).copied().unwrap_or(g.first);
                }
            }
        }
        self.row.reorder(&order);
        let line = header_line(self.row.names.iter());
        self.out
            .write_all(&line)
            .map_err(|e| WriteError::io(&self.path, e))?;
        self.header_bytes = line.len() as u64;
        Ok(())
    }

    /// Ends the current row: writes it (and the header before the first).
    fn end_row(&mut self) -> Result<(), WriteError> {
        if !self.open {
            return Ok(());
        }
        if self.rows == 0 {
            self.write_header()?;
        }
        let line = &mut self.line;
        line.clear();
        match &self.utc {
            Some(epoch) => {
                let utc = time_scale::show(TimeFormat::Utc, Some(epoch), self.time, Some(9));
                line.extend_from_slice(utc.unwrap_or_default().as_bytes());
            }
            None => {
                let seconds = self.seconds;
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
            }
        }
        for (cell, &holds) in self.row.cells.iter_mut().zip(&self.row.holds) {
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
        if self.row.unset_left > 0 {
            // Columns still without a value were written as nan.
            for layout in &mut self.channels {
                let Layout::Entities(e) = layout else {
                    continue;
                };
                for set in &mut e.sets {
                    for (g, f) in set.groups.iter_mut().zip(&e.plan.fields) {
                        if f.ty.is_some() && e.plan.holds && self.row.unset[g.first] {
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
    fn starts_row(&self, record: &Record, e: &Entities, set: &EntityColumns) -> bool {
        self.time != record.time
            || matches!((self.frame, record.frame), (Some(a), Some(b)) if a != b)
            || record.values.iter().any(|(key, _)| {
                e.plan
                    .fields
                    .iter()
                    .position(|f| f.name == *key)
                    .is_some_and(|i| {
                        e.plan.fields[i].ty.is_some() && self.row.cells[set.groups[i].first].fresh
                    })
            })
    }

    /// Rewrites the file with every column in its place: the header's, then those added
    /// later (each row written before a column existed gets `nan` there if it holds, else an
    /// empty cell), channel by channel.
    fn rewrite(&mut self) -> Result<(), WriteError> {
        let order = self.column_order(true);
        let io = |e| WriteError::io(&self.path, e);
        self.out.flush().map_err(io)?;
        let mut input = BufReader::with_capacity(1 << 20, File::open(&self.temp).map_err(io)?);
        input.seek(SeekFrom::Start(self.header_bytes)).map_err(io)?;
        let (file, scratch) = output::scratch_beside(&self.temp)?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        out.write_all(&header_line(order.iter().map(|&i| &self.row.names[i])))
            .map_err(io)?;
        let pad: Vec<&[u8]> = self
            .row
            .holds
            .iter()
            .map(|&h| if h { &b"nan"[..] } else { &b""[..] })
            .collect();
        let (mut line, mut cells, mut next) = (Vec::new(), Vec::new(), Vec::new());
        loop {
            line.clear();
            if input.read_until(b'\n', &mut line).map_err(io)? == 0 {
                break;
            }
            // Body cells are numbers or empty: never quoted, so a comma always ends one.
            let body = line.strip_suffix(b"\n").unwrap_or(&line);
            cells.clear();
            let mut start = 0;
            for end in memchr::memchr_iter(b',', body).chain([body.len()]) {
                cells.push(start..end);
                start = end + 1;
            }
            let cell = |i: usize| {
                cells
                    .get(i)
                    .map(|r: &std::ops::Range<usize>| &body[r.clone()])
            };
            next.clear();
            next.extend_from_slice(cell(0).unwrap_or_default());
            for &i in &order {
                next.push(b',');
                next.extend_from_slice(cell(i + 1).unwrap_or(pad[i]));
            }
            next.push(b'\n');
            out.write_all(&next).map_err(io)?;
        }
        out.flush().map_err(io)?;
        drop(out);
        output::replace_with_scratch(scratch, &self.temp)
    }
}

/// `time` and the column names, quoted where they must be, and LF.
fn header_line<'a>(columns: impl Iterator<Item = &'a String>) -> Vec<u8> {
    let mut line = b"time".to_vec();
    for name in columns {
        line.push(b',');
        names::push_name(&mut line, name);
    }
    line.push(b'\n');
    line
}

/// Sets the cells of one group from a value; returns the tallies it made (a bit each).
fn set_cells(cells: &mut [Cell], ty: Columns, first: usize, value: &Value) -> u16 {
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
        // The columns are planned from the header's fields: a channel met later has none.
        self.channels.push(Layout::Dropped(
            channel.name.clone(),
            "channel announced after the header was laid out: no column",
            0,
        ));
        Ok(())
    }

    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        let c = record.channel as usize;
        match self.channels.get_mut(c) {
            None => {
                self.report
                    .loss
                    .add("?", "*", "record of a channel the writer was not told of");
                return Ok(());
            }
            Some(Layout::Dropped(_, _, records)) => {
                *records += 1;
                return Ok(());
            }
            Some(Layout::Entities(_)) => {}
        }
        let s = self.set_for(c, &record.entity);
        let new_row = match &self.channels[c] {
            Layout::Entities(e) => self.open && self.starts_row(record, e, &e.sets[s]),
            Layout::Dropped(..) => false,
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
            self.seconds = record.seconds();
            self.frame = record.frame;
        }
        let Some(Layout::Entities(e)) = self.channels.get_mut(c) else {
            return Ok(());
        };
        let set = &mut e.sets[s];
        set.used = true;
        for (key, value) in &record.values {
            let Some(i) = e.plan.fields.iter().position(|f| f.name == *key) else {
                self.report
                    .loss
                    .add(&e.name, key, "field not declared by its channel: no column");
                continue;
            };
            let g = &mut set.groups[i];
            let tallies = match e.plan.fields[i].ty {
                None => Tally::NoColumn.bit(),
                Some(ty) => {
                    let row = &mut self.row;
                    let tallies = set_cells(&mut row.cells, ty, g.first, value);
                    let columns = g.first..g.first + ty.count();
                    for cell in &mut row.cells[columns.clone()] {
                        cell.fresh = !context;
                    }
                    for unset in &mut row.unset[columns] {
                        if *unset {
                            *unset = false;
                            row.unset_left -= 1;
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
                self.write_header()?;
                self.report.warnings.push(
                    "no frames: wrote the header line alone (Icarus writes an empty file; \
                     --csv-style icarus-strict does too)"
                        .into(),
                );
            }
        }
        if self.widened {
            self.rewrite()?;
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
        for layout in &self.channels {
            match layout {
                Layout::Dropped(name, why, n) => loss.add_n(name, "*", why, *n),
                Layout::Entities(e) => {
                    let kept = e
                        .sets
                        .iter()
                        .filter(|s| !(s.assumed && !s.used && e.sets.len() > 1));
                    for (i, f) in e.plan.fields.iter().enumerate() {
                        for t in Tally::ALL {
                            let n = kept.clone().map(|s| s.groups[i].counts[t as usize]).sum();
                            if t.lost() {
                                loss.add_n(&e.name, &f.name, t.text(), n);
                            } else {
                                loss.widen_n(&e.name, &f.name, t.text(), n);
                            }
                        }
                    }
                }
            }
        }
        Ok(self.report)
    }
}
