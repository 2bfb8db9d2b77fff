//! Writing replay directories Elodin 0.10 loads (spec §6).
//!
//! From an Elodin source the archetypes, components and `assets.bin` of the source are
//! kept and every value is copied exactly; ticks are renumbered from the first one
//! written (a slice starts at tick 0). From any other source each channel becomes an
//! archetype, except the channels that are the components of one named entity (Icarus
//! signals), which share one ([`Group`]); see docs/formats/elodin.md for the mapping and what
//! it cannot carry.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value as Json};

use super::assets::{Assets, EntityMetadata};
use super::dir::{read_small, NAMES_ARCHETYPE};
use super::metadata::{self, safe_file_stem, Component, Primitive, UNSET_MAX_TICKS};
use super::parquet_out::{widening, Cell, Table, Tables};
use super::reader::HEADER_KEY;
use crate::formats::output::Outputs;
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::{
    ArrayData, Channel, Composition, DType, Entity, FieldSpec, Folded, Header, Record, Value,
    QUATERNION_WXYZ,
};

const GLOBALS: &str = "system_globals";
/// Elodin's spatial transform component: [qx, qy, qz, qw, x, y, z].
const WORLD_POS: &str = "world_pos";

/// Numeric elements as f64 (exact for every type a position or quaternion has).
fn as_f64s(data: &ArrayData) -> Option<Vec<f64>> {
    Some(match data {
        ArrayData::F64(v) => v.clone(),
        ArrayData::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
        ArrayData::I32(v) => v.iter().map(|&x| f64::from(x)).collect(),
        _ => return None,
    })
}

pub struct ElodinWriter {
    /// Before `tables`: its tables are dropped before the encoding threads they share.
    mode: Mode,
    /// The directory being filled (a temporary one beside the target), and the encoding
    /// threads and buffer budget of its tables.
    tables: Tables,
    report: WriteReport,
}

#[allow(clippy::large_enum_variant)]
enum Mode {
    Same(Same),
    Foreign(Foreign),
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    fs::write(path, bytes).map_err(|e| WriteError::io(path, e))
}

impl ElodinWriter {
    pub fn create(
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<ElodinWriter, WriteError> {
        let source = header
            .metadata
            .get(HEADER_KEY)
            .filter(|_| header.format == "elodin");
        let root = outputs.create_dir(target)?;
        let exec = source
            .and_then(|s| s.get("exec_dir"))
            .and_then(Json::as_str)
            .map(PathBuf::from);
        let world = match &exec {
            Some(exec) => {
                for sub in ["tick_exec", "startup_exec"] {
                    let from = exec.join(sub);
                    if from.is_dir() {
                        copy_tree(&from, &root.join(sub))
                            .map_err(|e| WriteError::io(&root.join(sub), e))?;
                    }
                }
                let w = root.join("world");
                fs::create_dir(&w).map_err(|e| WriteError::io(&w, e))?;
                w
            }
            None => root,
        };
        let mode = match source {
            Some(s) => Mode::Same(Same::new(s, header)?),
            None => Mode::Foreign(Foreign::new(header)),
        };
        Ok(ElodinWriter {
            mode,
            tables: Tables::new(world)?,
            report: WriteReport::default(),
        })
    }
}

impl Sink for ElodinWriter {
    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        match &mut self.mode {
            Mode::Same(s) => s.write(&self.tables, record, &mut self.report)?,
            Mode::Foreign(f) => f.write(&self.tables, record, &mut self.report)?,
        }
        self.report.records += 1;
        Ok(())
    }

    /// A channel announced mid-stream becomes an archetype like the others; an Elodin
    /// source announces none.
    fn add_channel(&mut self, channel: &Channel) -> Result<(), WriteError> {
        if let Mode::Foreign(f) = &mut self.mode {
            f.add_channel(channel);
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<WriteReport, WriteError> {
        let ElodinWriter {
            mode,
            tables,
            mut report,
        } = *self;
        match mode {
            Mode::Same(s) => s.finish(&tables, &mut report)?,
            Mode::Foreign(f) => f.finish(&tables, &mut report)?,
        }
        Ok(report)
    }
}

// ---------------------------------------------------------------------------------------
// Elodin to Elodin: the source's archetypes, exactly.

/// The value of `key` in `record` and its index, looking at index `hint` first (records of
/// one archetype carry their keys in the same order, so the hint is nearly always right).
fn value_of<'r>(record: &'r Record, key: &str, hint: usize) -> Option<(usize, &'r Value)> {
    match record.values.get(hint) {
        Some((k, v)) if k == key => Some((hint, v)),
        _ => record
            .values
            .iter()
            .position(|(k, _)| k == key)
            .map(|i| (i, &record.values[i].1)),
    }
}

struct SameArch {
    name: String,
    /// Per output component, where its value was in the last record.
    hints: Vec<usize>,
    declared: Vec<Component>,
    table: Option<Table>,
    /// Components of the table stored in a wider type, and why (counted per row).
    widened: Vec<(String, &'static str)>,
    first_tick: Option<u64>,
    first_entities: Vec<u64>,
    cur_tick: Option<u64>,
    cur_pos: usize,
}

struct Same {
    json: Map<String, Json>,
    /// World dirs whose `assets.bin` items make the output's, in order (one for a
    /// convert or slice; the inputs of a merge).
    assets_from: Vec<PathBuf>,
    source_ticks: Option<u64>,
    step_ns: i64,
    max_ticks: Option<u64>,
    /// Archetype of each input channel (by name), if it is one.
    archs: Vec<Option<SameArch>>,
    base: Option<u64>,
    last_tick: Option<u64>,
}

impl Same {
    fn new(source: &Json, header: &Header) -> Result<Same, WriteError> {
        let json = source
            .get("metadata")
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default();
        let bytes = serde_json::to_vec(&json).unwrap_or_default();
        let (meta, _) = metadata::parse(&bytes)
            .map_err(|f| WriteError::Invalid(format!("the source's metadata.json: {f}")))?;
        let archs = header
            .channels
            .iter()
            .map(|c| {
                meta.archetypes
                    .iter()
                    .find(|a| a.name == c.name)
                    .map(|a| SameArch {
                        name: a.name.clone(),
                        hints: Vec::new(),
                        declared: a.components.clone(),
                        table: None,
                        widened: Vec::new(),
                        first_tick: None,
                        first_entities: Vec::new(),
                        cur_tick: None,
                        cur_pos: 0,
                    })
            })
            .collect();
        let world = || {
            source
                .get("world_dir")
                .and_then(Json::as_str)
                .map(PathBuf::from)
        };
        let assets_from = match source.get("assets_from").and_then(Json::as_array) {
            Some(list) => list
                .iter()
                .filter_map(Json::as_str)
                .map(PathBuf::from)
                .collect(),
            None => world().into_iter().collect(),
        };
        Ok(Same {
            json,
            assets_from,
            source_ticks: source.get("ticks").and_then(Json::as_u64),
            step_ns: meta.step_ns,
            max_ticks: meta.max_ticks,
            archs,
            base: None,
            last_tick: None,
        })
    }

    fn write(
        &mut self,
        tables: &Tables,
        record: &Record,
        report: &mut WriteReport,
    ) -> Result<(), WriteError> {
        let Some(Some(arch)) = self.archs.get_mut(record.channel as usize) else {
            report.loss.add(
                &format!("channel {}", record.channel),
                "*",
                "not an archetype of the source replay",
            );
            return Ok(());
        };
        let tick = record
            .frame
            .and_then(|f| u64::try_from(f).ok())
            .unwrap_or_else(|| u64::try_from(record.time / self.step_ns.max(1)).unwrap_or(0));
        let base = *self.base.get_or_insert(tick);
        let Some(out_tick) = tick.checked_sub(base) else {
            report.loss.add(
                &arch.name,
                "*",
                "a row before the first tick written: dropped",
            );
            return Ok(());
        };
        let entity = record.entity.as_ref().and_then(Entity::id).unwrap_or(0);
        if arch.table.is_none() {
            // Components the first row carries (a key selection may have dropped some).
            let present: Vec<Component> = arch
                .declared
                .iter()
                .filter(|c| record.get(&c.name).is_some())
                .cloned()
                .collect();
            arch.widened = present
                .iter()
                .filter_map(|c| widening(c).map(|why| (c.name.clone(), why)))
                .collect();
            arch.table = Some(tables.create(&arch.name, present)?);
            arch.first_tick = Some(out_tick);
        }
        if arch.cur_tick != Some(out_tick) {
            arch.cur_tick = Some(out_tick);
            arch.cur_pos = 0;
        }
        if arch.first_tick == Some(out_tick) {
            arch.first_entities.push(entity);
        } else if arch.first_entities.get(arch.cur_pos) != Some(&entity) {
            report.loss.add(
                &arch.name,
                "*",
                "entity set or order differs from the first tick: row dropped",
            );
            return Ok(());
        }
        arch.cur_pos += 1;
        self.last_tick = Some(self.last_tick.map_or(out_tick, |t| t.max(out_tick)));
        let Some(table) = arch.table.as_mut() else {
            return Ok(());
        };
        let hints = &mut arch.hints;
        hints.resize(table.components.len(), 0);
        let value = |i: usize, c: &Component, hints: &mut Vec<usize>| {
            let found = value_of(record, &c.name, hints[i]);
            if let Some((at, _)) = found {
                hints[i] = at;
            }
            match found {
                Some((_, Value::Array(a))) if a.dtype() == c.primitive.dtype() => Some(&a.data),
                _ => None,
            }
        };
        let exact = table.push_with(out_tick, entity, |i, c| {
            if c.name == "simulation_tick" {
                return Cell::U64(out_tick);
            }
            value(i, c, hints).map_or(Cell::Zeros, Cell::Data)
        })?;
        for (name, why) in &arch.widened {
            report.loss.widen(&arch.name, name, why);
        }
        if !exact {
            for (i, c) in table.components.iter().enumerate() {
                let written = value(i, c, hints).is_some_and(|d| d.len() == c.elements);
                if c.name != "simulation_tick" && !written {
                    report.loss.add(
                        &arch.name,
                        &c.name,
                        "missing, or not the declared type and shape: zeros written",
                    );
                }
            }
        }
        Ok(())
    }

    fn finish(self, tables: &Tables, report: &mut WriteReport) -> Result<(), WriteError> {
        let world = tables.dir();
        let Some(last_tick) = self.last_tick else {
            return Err(WriteError::Unsupported(NO_TICKS.into()));
        };
        let mut json = self.json;
        // Archetype → its components as written (their stored types).
        let mut kept: BTreeMap<String, Vec<Component>> = BTreeMap::new();
        for arch in self.archs.into_iter().flatten() {
            match arch.table {
                Some(t) => {
                    kept.insert(arch.name.clone(), t.stored_components());
                    t.close()?;
                }
                // Elodin 0.10 cannot load an archetype without rows (its loader divides
                // each column into ticks): left out, and said so.
                None => report.loss.add(
                    &arch.name,
                    "*",
                    "no rows to write: the archetype is left out (Elodin cannot load an empty one)",
                ),
            }
        }
        if let Some(Json::Object(archetypes)) = json.get_mut("archetypes") {
            archetypes.retain(|name, _| kept.contains_key(name));
            for (name, list) in archetypes.iter_mut() {
                let (Json::Array(list), Some(keep)) = (list, kept.get(name)) else {
                    continue;
                };
                list.retain(|c| {
                    c.get("name")
                        .and_then(Json::as_str)
                        .is_some_and(|n| keep.iter().any(|k| k.name == n))
                });
                for c in list.iter_mut() {
                    let written = keep
                        .iter()
                        .find(|k| c.get("name").and_then(Json::as_str) == Some(k.name.as_str()));
                    if let (Some(k), Some(ty)) = (written, c.get_mut("component_type")) {
                        if ty.get("primitive_ty").and_then(Json::as_str) != Some(k.primitive.name())
                        {
                            ty["primitive_ty"] = json!(k.primitive.name());
                        }
                    }
                }
            }
        }
        let ticks = last_tick.saturating_add(1);
        let sliced = self.base.unwrap_or(0) != 0 || Some(ticks) != self.source_ticks;
        // The source's own metadata flavour is kept (a v0.9 replay stays v0.9: no
        // `default_playback_speed` beside its `output_time_step`); only `max_ticks`
        // follows a slice, where the source set it.
        if let Some(m) = self.max_ticks {
            if m != UNSET_MAX_TICKS && sliced {
                json.insert("max_ticks".into(), json!(ticks - 1));
            }
        }
        let text = serde_json::to_vec(&Json::Object(json)).unwrap_or_default();
        write_file(&world.join("metadata.json"), &text)?;
        write_file(
            &world.join("assets.bin"),
            &merged_assets(&self.assets_from)?,
        )?;
        Ok(())
    }
}

/// Why nothing can be written for a recording without records.
const NO_TICKS: &str = "the recording has no records: an Elodin replay needs at least one tick (Elodin 0.10 cannot load one without rows)";

/// `assets.bin` of the output: the items of each source world's store, in order (their
/// handles were shifted by the merge that listed several). One store is copied byte for
/// byte.
fn merged_assets(worlds: &[PathBuf]) -> Result<Vec<u8>, WriteError> {
    match worlds {
        [] => Ok(vec![0]),
        [one] => Ok(read_small(&one.join("assets.bin")).unwrap_or_else(|_| vec![0])),
        many => {
            let mut stores = Vec::new();
            for w in many {
                let path = w.join("assets.bin");
                let bytes = read_small(&path).map_err(|e| WriteError::io(&path, e))?;
                let store = Assets::parse(bytes)
                    .map_err(|e| WriteError::Invalid(format!("{}: {e}", path.display())))?;
                stores.push(store);
            }
            Ok(Assets::concat(&stores))
        }
    }
}

// ---------------------------------------------------------------------------------------
// Any other source: one archetype per channel (or per entity, for the channels that are its
// components), sample-and-hold per tick.

/// Elodin has no bool columns (its loader cannot build one): bools are stored as 0 or 1,
/// in U8 tensors, or U32 scalars (see `parquet_out::stored`).
const BOOL_TENSOR: &str = "bool stored as U8 0/1 (Elodin 0.10 cannot load bool columns)";
const BOOL_SCALAR: &str =
    "bool scalar stored as U32 0/1 (Elodin 0.10 cannot load bool, U8 or U16 scalar columns)";

/// A scalar in the dtype its component was declared with, when it holds exactly there (an
/// int32 signal's values arrive as `Value::Int`).
fn scalar_as(data: ArrayData, dtype: DType) -> ArrayData {
    let converted = match (&data, dtype) {
        (ArrayData::I64(v), DType::I32) => v
            .iter()
            .map(|&x| i32::try_from(x).ok())
            .collect::<Option<Vec<_>>>()
            .map(ArrayData::I32),
        (ArrayData::I64(v), DType::U32) => v
            .iter()
            .map(|&x| u32::try_from(x).ok())
            .collect::<Option<Vec<_>>>()
            .map(ArrayData::U32),
        (ArrayData::I64(v), DType::U64) => v
            .iter()
            .map(|&x| u64::try_from(x).ok())
            .collect::<Option<Vec<_>>>()
            .map(ArrayData::U64),
        (ArrayData::U64(v), DType::I64) => v
            .iter()
            .map(|&x| i64::try_from(x).ok())
            .collect::<Option<Vec<_>>>()
            .map(ArrayData::I64),
        (ArrayData::F32(v), DType::F64) => {
            Some(ArrayData::F64(v.iter().map(|&x| f64::from(x)).collect()))
        }
        _ => None,
    };
    converted.unwrap_or(data)
}

/// Copies `value` into `held` when it is of `held`'s type (the component's) and shape, or a
/// scalar that [`scalar_as`] turns into it (a signal's value, tick after tick): in `held`'s
/// buffer, where [`elements`] and [`scalar_as`] make a new one each time. `false` (nothing
/// changed) otherwise.
fn hold_in_place(held: &mut ArrayData, value: &Value, component: &Component) -> bool {
    fn set<T: Copy>(held: &mut [T], x: Option<T>) -> bool {
        match (held, x) {
            ([h], Some(x)) => {
                *h = x;
                true
            }
            _ => false,
        }
    }
    if let Value::Array(v) = value {
        return v.shape == component.shape
            && v.data.len() == component.elements
            && held.assign(&v.data);
    }
    if !component.shape.is_empty() {
        return false;
    }
    match (held, value) {
        (ArrayData::F64(h), Value::Float(x)) => set(h, Some(*x)),
        (ArrayData::F64(h), Value::F32(x)) => set(h, Some(f64::from(*x))),
        (ArrayData::F32(h), Value::F32(x)) => set(h, Some(*x)),
        (ArrayData::I64(h), Value::Int(x)) => set(h, Some(*x)),
        (ArrayData::I32(h), Value::Int(x)) => set(h, i32::try_from(*x).ok()),
        (ArrayData::U32(h), Value::Int(x)) => set(h, u32::try_from(*x).ok()),
        (ArrayData::U64(h), Value::Int(x)) => set(h, u64::try_from(*x).ok()),
        (ArrayData::U64(h), Value::UInt(x)) => set(h, Some(*x)),
        (ArrayData::I64(h), Value::UInt(x)) => set(h, i64::try_from(*x).ok()),
        _ => false,
    }
}

/// Whether [`elements`] takes the value (without copying it).
fn is_numeric(value: &Value) -> bool {
    match value {
        Value::Array(a) => a.dtype() != DType::Str,
        Value::Int(_) | Value::UInt(_) | Value::Float(_) | Value::F32(_) | Value::Bool(_) => true,
        _ => false,
    }
}

/// A value as Elodin elements: data, shape, and whether it had to change type.
fn elements(value: &Value) -> Option<(ArrayData, Vec<usize>, bool)> {
    Some(match value {
        Value::Array(a) if a.dtype() != crate::model::DType::Str => match &a.data {
            ArrayData::Bool(b) => (
                ArrayData::U8(b.iter().map(|&x| u8::from(x)).collect()),
                a.checked_shape(),
                true,
            ),
            d => (d.clone(), a.checked_shape(), false),
        },
        Value::Int(i) => (ArrayData::I64(vec![*i]), vec![], false),
        Value::UInt(u) => (ArrayData::U64(vec![*u]), vec![], false),
        Value::Float(f) => (ArrayData::F64(vec![*f]), vec![], false),
        Value::F32(f) => (ArrayData::F32(vec![*f]), vec![], false),
        Value::Bool(b) => (ArrayData::U8(vec![u8::from(*b)]), vec![], true),
        _ => return None,
    })
}

struct Slot {
    key: String,
    component: Component,
    /// Why its values are stored in a wider type than the source's, if they are.
    widened: Option<&'static str>,
    /// The last value written, per entity (held when a value is absent or does not fit).
    last: Vec<Option<ArrayData>>,
}

struct ForeignArch {
    channel: String,
    name: String,
    composition: Composition,
    /// Source entity (None: the channel itself) → folded values, in order of appearance.
    entities: Vec<(Option<Entity>, Folded)>,
    /// Where each entity is in `entities` (an archetype may have thousands: NanoVer's
    /// particles as bodies).
    slot_of: HashMap<Option<Entity>, usize>,
    /// Fields the source declared with type and shape: components even when the first tick
    /// does not carry them.
    declared: Vec<FieldSpec>,
    /// Fixed at the archetype's first tick.
    slots: Option<Vec<Slot>>,
    /// Entities written (a prefix of `entities`).
    written: usize,
    /// Their Elodin ids, found at the first row written (a named entity's is looked up by
    /// name, which at every row was a large share of the writer's time: docs/performance.md,
    /// "Figures from code comments").
    ids: Vec<u64>,
    out: Out,
    skip: bool,
    /// For a channel named `P.k`: `P` and `k`. It may share an archetype with the other
    /// channels of `P` (see [`Group`]).
    group_key: Option<(String, String)>,
}

/// Where a channel's rows go.
enum Out {
    /// Not started (no records yet, or no numeric values).
    None,
    /// An archetype of its own, a row per entity (boxed: a channel is usually neither).
    Own(Box<Table>),
    /// A component of the group's archetype (an index into `Foreign::groups`).
    Group(usize),
}

/// One archetype for the channels that are components of one named source entity: those
/// named `P.k` whose records all carry entity `P` and one value `k` (an Icarus signal
/// `Vehicle.Nav.position` is component `position` of entity `Vehicle.Nav`), one row per
/// tick with every component of `P`. Elodin's archetype is a set of components of the same
/// entities, and one table per signal made one Parquet file (and one encoder's memory) per
/// signal: 201 for a 200-signal recording, where its 21 entities need 21.
struct Group {
    entity: Entity,
    /// Its Elodin id, once its first row is written.
    id: Option<u64>,
    /// The member channels, in channel order.
    members: Vec<usize>,
    table: Table,
    /// Per component of the table, in its order: the member channel and its slot.
    cells: Vec<(usize, usize)>,
}

/// Elodin numbers its entities: a named source entity (an Icarus component, an XREC id
/// given as a string) gets `NAMED_ENTITIES` + its order of appearance.
const NAMED_ENTITIES: u64 = 1 << 48;
/// The own entity of a channel announced mid-stream: `LATE_CHANNELS` + its order among
/// them (ids of numbered source entities start after the channels known at the start).
const LATE_CHANNELS: u64 = 1 << 47;

struct Foreign {
    archs: Vec<ForeignArch>,
    groups: Vec<Group>,
    /// Archetype names in use.
    taken: Vec<String>,
    /// Named source entities, in order of appearance.
    named: Vec<Entity>,
    /// Channels known at the start: entity ids are laid out around this count.
    channels: u64,
    first_time: Option<i64>,
    cur_time: Option<i64>,
    tick: u64,
    step_ns: Option<i64>,
    used_names: Vec<String>,
    globals: Option<Table>,
    /// `world_pos` of the bodies found at the first tick (`None` until then, or when there
    /// are none).
    world_pos: Option<WorldPos>,
    bodies_sought: bool,
}

/// Elodin's `world_pos` ([qx, qy, qz, qw, x, y, z]) for each named entity that has a Vec3
/// component `position` and a scalar-first quaternion ([`QUATERNION_WXYZ`]): an Icarus
/// vehicle's `position` and attitude, from the values held at each tick.
struct WorldPos {
    table: Table,
    /// Per body: its entity id, and where its position and its quaternion are held.
    bodies: Vec<(u64, [Held; 2])>,
}

/// Where a value is held: archetype, entity index, slot.
type Held = (usize, usize, usize);

/// An archetype name (a file stem) made from `base`: characters other than ASCII letters,
/// digits and `_.-` become `_`, and `_<index>` follows when that is not a plain file name or
/// `taken` has it already (then `_` until it is new). The name is added to `taken`.
fn archetype_name(base: &str, index: usize, taken: &mut Vec<String>) -> String {
    let mut name: String = base
        .chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() || "_.-".contains(ch) {
                ch
            } else {
                '_'
            }
        })
        .collect();
    if !safe_file_stem(&name) || taken.contains(&name) {
        name = format!("{name}_{index}");
        while taken.contains(&name) {
            name.push('_');
        }
    }
    taken.push(name.clone());
    name
}

/// A named entity's Elodin id: `NAMED_ENTITIES` + its order of appearance in `named`.
fn named_id(named: &mut Vec<Entity>, entity: &Entity) -> u64 {
    let k = match named.iter().position(|n| n == entity) {
        Some(k) => k,
        None => {
            named.push(entity.clone());
            named.len() - 1
        }
    };
    NAMED_ENTITIES + k as u64
}

impl ForeignArch {
    /// The archetype for channel `index`, named after it unless `taken` has the name.
    fn new(index: usize, channel: &Channel, taken: &mut Vec<String>) -> ForeignArch {
        let name = archetype_name(&channel.name, index, taken);
        let group_key = channel
            .name
            .rsplit_once('.')
            .filter(|(entity, key)| !entity.is_empty() && !key.is_empty())
            .map(|(entity, key)| (entity.to_string(), key.to_string()));
        ForeignArch {
            channel: channel.name.clone(),
            name,
            composition: channel.composition,
            entities: Vec::new(),
            slot_of: HashMap::new(),
            declared: channel
                .fields
                .iter()
                .filter(|f| f.is_complete())
                .cloned()
                .collect(),
            slots: None,
            written: 0,
            ids: Vec::new(),
            out: Out::None,
            skip: false,
            group_key,
        }
    }
}

impl Foreign {
    fn new(header: &Header) -> Foreign {
        let mut taken: Vec<String> = vec![GLOBALS.into(), NAMES_ARCHETYPE.into()];
        let archs = header
            .channels
            .iter()
            .enumerate()
            .map(|(i, c)| ForeignArch::new(i, c, &mut taken))
            .collect();
        Foreign {
            archs,
            groups: Vec::new(),
            taken,
            named: Vec::new(),
            channels: header.channels.len() as u64,
            first_time: None,
            cur_time: None,
            tick: 0,
            step_ns: None,
            used_names: vec![
                "simulation_tick".into(),
                "simulation_time_step".into(),
                NAMES_ARCHETYPE.into(),
            ],
            globals: None,
            world_pos: None,
            bodies_sought: false,
        }
    }

    /// A channel the source announced mid-stream: an archetype like the others. Entity ids
    /// of the channels known at the start do not move; its own entity is
    /// [`LATE_CHANNELS`] + its order among the late ones.
    fn add_channel(&mut self, channel: &Channel) {
        let index = self.archs.len();
        self.archs
            .push(ForeignArch::new(index, channel, &mut self.taken));
    }

    /// The Elodin entity of the records of archetype `a` without an entity.
    fn channel_entity(&self, a: usize) -> u64 {
        match (a as u64).checked_sub(self.channels) {
            None => a as u64,
            Some(late) => LATE_CHANNELS + late,
        }
    }

    fn write(
        &mut self,
        tables: &Tables,
        record: &Record,
        report: &mut WriteReport,
    ) -> Result<(), WriteError> {
        let t = record.time;
        match self.cur_time {
            None => {
                self.first_time = Some(t);
                self.cur_time = Some(t);
            }
            Some(cur) if t > cur => {
                if self.step_ns.is_none() {
                    self.step_ns = Some(t - self.first_time.unwrap_or(cur));
                }
                self.close_tick(tables, report)?;
                self.cur_time = Some(t);
                self.tick += 1;
            }
            Some(_) => {}
        }
        let Some(arch) = self.archs.get_mut(record.channel as usize) else {
            return Ok(());
        };
        for (key, value) in &record.values {
            if *value == Value::Removed {
                continue;
            }
            if !is_numeric(value) {
                report
                    .loss
                    .add(&arch.channel, key, "not a number or numeric array");
            } else if let Some(slots) = &arch.slots {
                if !slots.iter().any(|s| s.key == *key) {
                    report.loss.add(
                        &arch.channel,
                        key,
                        "first seen after the channel's first tick: not written",
                    );
                }
            }
        }
        let slot = match arch.slot_of.get(&record.entity) {
            Some(&i) => i,
            None => {
                arch.entities
                    .push((record.entity.clone(), Folded::default()));
                arch.slot_of
                    .insert(record.entity.clone(), arch.entities.len() - 1);
                arch.entities.len() - 1
            }
        };
        arch.entities[slot].1.apply(arch.composition, record);
        Ok(())
    }

    /// Writes one row per (archetype, entity) for the tick that just ended.
    fn close_tick(&mut self, tables: &Tables, report: &mut WriteReport) -> Result<(), WriteError> {
        let tick = self.tick;
        let channels = self.channels;
        if let (Some(first), Some(cur), Some(step)) = (self.first_time, self.cur_time, self.step_ns)
        {
            let want = i64::try_from(tick).ok().and_then(|k| k.checked_mul(step));
            if want != Some(cur - first) {
                report.loss.add(
                    "(all channels)",
                    "time",
                    "not on the tick grid (tick × step): re-timed",
                );
            }
        }
        // The components of the channels whose first records came in this tick, in channel
        // order (a component name goes to the first channel that has it), before any of
        // their archetypes is made: a group's archetype needs all of its members'.
        let mut started = Vec::new();
        for a in 0..self.archs.len() {
            let arch = &self.archs[a];
            if arch.skip || arch.entities.is_empty() || arch.slots.is_some() {
                continue;
            }
            self.start_arch(a, report);
            if !self.archs[a].skip {
                started.push(a);
            }
        }
        for a in 0..self.archs.len() {
            if self.archs[a].skip || self.archs[a].slots.is_none() {
                continue;
            }
            if matches!(self.archs[a].out, Out::None) {
                self.open_archetype(tables, a, &started)?;
                if tick > 0 {
                    let (members, group) = match self.archs[a].out {
                        Out::Group(g) => (self.groups[g].members.clone(), Some(g)),
                        _ => (vec![a], None),
                    };
                    for &m in &members {
                        let arch = &self.archs[m];
                        report.loss.add_n(
                            &arch.channel,
                            "*",
                            "no value before the channel's first record: its first values are repeated",
                            tick * arch.written as u64,
                        );
                    }
                    for t in 0..tick {
                        for &m in &members {
                            self.write_rows(m, t, channels, report)?;
                        }
                        if let Some(g) = group {
                            self.push_group(g, t)?;
                        }
                    }
                }
            }
            self.write_rows(a, tick, channels, report)?;
        }
        for g in 0..self.groups.len() {
            self.push_group(g, tick)?;
        }
        // system_globals, every tick (the entity names are written at the end, when every
        // entity is known).
        let step_s = self.step_ns.unwrap_or(1_000_000_000) as f64 / 1e9;
        if self.globals.is_none() {
            self.globals = Some(tables.create(
                GLOBALS,
                vec![
                    scalar_component("simulation_tick", Primitive::U64),
                    scalar_component("simulation_time_step", Primitive::F64),
                ],
            )?);
        }
        if let Some(g) = self.globals.as_mut() {
            // Sorted by name: simulation_tick, simulation_time_step.
            g.push(tick, channels, &[Cell::U64(tick), Cell::F64(step_s)])?;
        }
        if !self.bodies_sought {
            self.bodies_sought = true;
            self.world_pos = self.find_bodies(tables)?;
        }
        if let Some(w) = self.world_pos.as_mut() {
            for (id, [pos, quat]) in &w.bodies {
                let held = |(a, i, s): Held| {
                    self.archs[a].slots.as_ref()?[s].last[i]
                        .as_ref()
                        .and_then(as_f64s)
                };
                let cell = match (held(*pos), held(*quat)) {
                    (Some(p), Some(q)) => {
                        ArrayData::F64(vec![q[1], q[2], q[3], q[0], p[0], p[1], p[2]])
                    }
                    _ => ArrayData::F64(vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]),
                };
                w.table.push(tick, *id, &[Cell::Data(&cell)])?;
            }
        }
        Ok(())
    }

    /// The bodies whose `world_pos` can be written: named entities with a Vec3 `position`
    /// and a scalar-first quaternion among the components laid out at the first tick.
    fn find_bodies(&mut self, tables: &Tables) -> Result<Option<WorldPos>, WriteError> {
        let mut found: Vec<(Entity, [Option<Held>; 2])> = Vec::new();
        for (a, arch) in self.archs.iter().enumerate() {
            let Some(slots) = &arch.slots else { continue };
            for (i, (entity, _)) in arch.entities.iter().enumerate().take(arch.written) {
                let Some(entity @ Entity::Name(_)) = entity else {
                    continue;
                };
                for (s, slot) in slots.iter().enumerate() {
                    let quaternion = arch.declared.iter().any(|f| {
                        f.name == slot.key && f.semantic.as_deref() == Some(QUATERNION_WXYZ)
                    });
                    let role = match (slot.component.shape.as_slice(), quaternion) {
                        ([3], false) if slot.key == "position" => 0,
                        ([4], true) => 1,
                        _ => continue,
                    };
                    let k = match found.iter().position(|(e, _)| e == entity) {
                        Some(k) => k,
                        None => {
                            found.push((entity.clone(), [None, None]));
                            found.len() - 1
                        }
                    };
                    found[k].1[role].get_or_insert((a, i, s));
                }
            }
        }
        let bodies: Vec<(u64, [Held; 2])> = found
            .into_iter()
            .filter_map(|(entity, [pos, quat])| {
                let k = self.named.iter().position(|n| *n == entity)?;
                Some((NAMED_ENTITIES + k as u64, [pos?, quat?]))
            })
            .collect();
        if bodies.is_empty() || self.used_names.iter().any(|n| n == WORLD_POS) {
            return Ok(None);
        }
        let mut name = WORLD_POS.to_string();
        while self.taken.contains(&name) {
            name.push('_');
        }
        self.taken.push(name.clone());
        self.used_names.push(WORLD_POS.into());
        let component = Component::new(WORLD_POS, Primitive::F64, vec![7])
            .unwrap_or_else(|| unreachable_component(WORLD_POS));
        Ok(Some(WorldPos {
            table: tables.create(&name, vec![component])?,
            bodies,
        }))
    }

    /// Every entity with a name, its id and its name, in id order: the channels known at the
    /// start, `Globals`, channels announced later, named source entities. Item `k` of
    /// `assets.bin` is the `k`-th of them.
    fn entity_names(&self) -> Vec<(u64, String)> {
        let start = self.channels as usize;
        let archs = self.archs.iter().enumerate();
        // A channel's own entity has rows only when some of its records had no entity.
        let own = |(a, arch): (usize, &ForeignArch)| {
            let used = arch.entities.iter().any(|(e, _)| e.is_none());
            used.then(|| (self.channel_entity(a), arch.channel.clone()))
        };
        let mut names: Vec<(u64, String)> = archs.clone().take(start).filter_map(own).collect();
        names.push((self.channels, "Globals".into()));
        names.extend(archs.skip(start).filter_map(own));
        names.extend(
            self.named
                .iter()
                .enumerate()
                .map(|(k, e)| (NAMED_ENTITIES + k as u64, e.to_string())),
        );
        names
    }

    /// Fixes channel `a`'s components (its slots) at its first tick; its archetype is made
    /// by [`Foreign::open_archetype`].
    fn start_arch(&mut self, a: usize, report: &mut WriteReport) {
        let arch = &mut self.archs[a];
        let mut slots: Vec<Slot> = Vec::new();
        // What the source declared (or the pipeline's look-ahead completed), then what the
        // first tick carries beyond it.
        let declared = arch.declared.iter().filter_map(|f| {
            let dtype = f.dtype.filter(|d| !matches!(d, DType::Bool | DType::Str))?;
            Some((f.name.clone(), dtype, f.shape.clone()?, false))
        });
        let carried: Vec<(String, DType, Vec<usize>, bool)> = arch
            .entities
            .iter()
            .flat_map(|(_, folded)| folded.fields())
            .filter_map(|(key, value)| {
                let (data, shape, from_bool) = elements(&value)?;
                Some((key, data.dtype(), shape, from_bool))
            })
            .collect();
        for (key, dtype, shape, from_bool) in declared.chain(carried) {
            if slots.iter().any(|s| s.key == key) {
                continue;
            }
            let Some(primitive) = Primitive::from_dtype(dtype) else {
                continue;
            };
            // A component name is Elodin's component id, one for all archetypes: a key another
            // channel has (`position` of two Icarus components) gets a prefix. For a channel
            // `P.k` whose key is `k` that is its own name (`Target.Nav.position`, what the
            // source calls the signal); otherwise its archetype's name.
            let used =
                |n: &str| self.used_names.iter().any(|u| u == n) || n == "tick" || n == "entity_id";
            let mut name = key.clone();
            if used(&name) {
                name = match &arch.group_key {
                    Some((_, k)) if *k == key && !used(&arch.name) => arch.name.clone(),
                    _ => format!("{}.{key}", arch.name),
                };
            }
            let Some(component) =
                Component::new(&name, primitive, shape).filter(|c| c.elements > 0)
            else {
                report
                    .loss
                    .add(&arch.channel, &key, "empty array: no component written");
                continue;
            };
            self.used_names.push(name);
            let widened = match (from_bool, component.shape.is_empty()) {
                (true, true) => Some(BOOL_SCALAR),
                (true, false) => Some(BOOL_TENSOR),
                (false, _) => widening(&component),
            };
            slots.push(Slot {
                key,
                component,
                widened,
                last: Vec::new(),
            });
        }
        if slots.is_empty() {
            arch.skip = true;
            report.loss.add(
                &arch.channel,
                "*",
                "no numeric values at its first tick: no archetype written",
            );
            return;
        }
        slots.sort_by(|x, y| x.component.name.cmp(&y.component.name));
        arch.written = arch.entities.len();
        for s in &mut slots {
            s.last = vec![None; arch.written];
        }
        arch.slots = Some(slots);
    }

    /// The channels that make one archetype with channel `a` (a [`Group`]), in channel
    /// order: of the channels that started in this tick (`started`), those named `P.k` for
    /// `a`'s `P` whose records all carried entity `P` and whose one component is `k`, each
    /// `k` once (a second channel of the same name keeps an archetype of its own). Empty when
    /// `a` is not such a channel, or when `P` has its archetype already (a channel of `P`
    /// whose first record comes after the others' keeps an archetype of its own: the group's
    /// components are fixed at its first row).
    fn group_of(&self, a: usize, started: &[usize]) -> Vec<usize> {
        let member = |b: usize| -> Option<(&str, &str)> {
            let arch = &self.archs[b];
            let (entity, key) = arch.group_key.as_ref()?;
            let one_entity = matches!(
                &arch.entities[..],
                [(Some(Entity::Name(e)), _)] if **e == **entity
            );
            let one_component = matches!(arch.slots.as_deref(), Some([s]) if s.key == *key);
            let free = matches!(arch.out, Out::None);
            (one_entity && one_component && free).then_some((entity.as_str(), key.as_str()))
        };
        let Some((entity, _)) = member(a) else {
            return Vec::new();
        };
        if self
            .groups
            .iter()
            .any(|g| matches!(&g.entity, Entity::Name(e) if **e == *entity))
        {
            return Vec::new();
        }
        let mut keys: Vec<&str> = Vec::new();
        let mut members = Vec::new();
        for &b in started {
            if let Some((e, k)) = member(b) {
                if e == entity && !keys.contains(&k) {
                    keys.push(k);
                    members.push(b);
                }
            }
        }
        members
    }

    /// Makes the archetype of channel `a`, started in this tick: its group's (with the other
    /// members, see [`Foreign::group_of`]) or its own.
    fn open_archetype(
        &mut self,
        tables: &Tables,
        a: usize,
        started: &[usize],
    ) -> Result<(), WriteError> {
        let members = self.group_of(a, started);
        let Some((entity, _)) = self.archs[a]
            .group_key
            .clone()
            .filter(|_| !members.is_empty())
        else {
            let arch = &mut self.archs[a];
            let components = arch
                .slots
                .iter()
                .flatten()
                .map(|s| s.component.clone())
                .collect();
            arch.out = Out::Own(Box::new(tables.create(&arch.name, components)?));
            return Ok(());
        };
        // The table sorts its components by name: the cells are put in that order here.
        let mut components: Vec<(Component, (usize, usize))> = members
            .iter()
            .flat_map(|&m| {
                let slots = self.archs[m].slots.iter().flatten();
                slots
                    .enumerate()
                    .map(move |(s, slot)| (slot.component.clone(), (m, s)))
            })
            .collect();
        components.sort_by(|x, y| x.0.name.cmp(&y.0.name));
        let (components, cells): (Vec<Component>, Vec<(usize, usize)>) =
            components.into_iter().unzip();
        let name = archetype_name(&entity, a, &mut self.taken);
        let table = tables.create(&name, components)?;
        let g = self.groups.len();
        for &m in &members {
            self.archs[m].out = Out::Group(g);
        }
        self.groups.push(Group {
            entity: Entity::Name(entity.into()),
            id: None,
            members,
            table,
            cells,
        });
        Ok(())
    }

    /// Writes group `g`'s row for `tick`: each member's value held for its entity (its
    /// [`Foreign::write_rows`] of the tick has updated it and counted what it lacked).
    fn push_group(&mut self, g: usize, tick: u64) -> Result<(), WriteError> {
        let group = &mut self.groups[g];
        let id = *group
            .id
            .get_or_insert_with(|| named_id(&mut self.named, &group.entity));
        let archs = &self.archs;
        let cells = &group.cells;
        group.table.push_with(tick, id, |i, _| {
            let held = cells
                .get(i)
                .and_then(|&(m, s)| archs[m].slots.as_ref()?.get(s)?.last.first()?.as_ref());
            held.map_or(Cell::Zeros, Cell::Data)
        })?;
        Ok(())
    }

    fn write_rows(
        &mut self,
        a: usize,
        tick: u64,
        channels: u64,
        report: &mut WriteReport,
    ) -> Result<(), WriteError> {
        for i in self.archs[a].ids.len()..self.archs[a].written {
            let id = match &self.archs[a].entities[i].0 {
                None => self.channel_entity(a),
                Some(Entity::Id(e)) => e.saturating_add(channels + 1),
                Some(named) => named_id(&mut self.named, named),
            };
            self.archs[a].ids.push(id);
        }
        let arch = &mut self.archs[a];
        let late = arch.entities.len() - arch.written;
        for _ in 0..late {
            report.loss.add(
                &arch.channel,
                "*",
                "entity first seen after the channel's first tick: not written",
            );
        }
        let Some(slots) = arch.slots.as_mut() else {
            return Ok(());
        };
        for (i, id) in arch.ids.iter().enumerate() {
            let folded = &arch.entities[i].1;
            for s in slots.iter_mut() {
                let current = folded.get(&s.key);
                if let (Some(value), Some(held)) = (current, s.last[i].as_mut()) {
                    if hold_in_place(held, value, &s.component) {
                        continue;
                    }
                }
                let fresh = current.and_then(elements).map(|(data, shape, b)| {
                    (scalar_as(data, s.component.primitive.dtype()), shape, b)
                });
                match fresh {
                    Some((data, shape, _))
                        if data.dtype() == s.component.primitive.dtype() && shape == s.component.shape =>
                    {
                        s.last[i] = Some(data);
                    }
                    Some((_, shape, _)) => report.loss.add(
                        &arch.channel,
                        &s.key,
                        &format!(
                            "shape {shape:?} or type differs from the first {}: previous value held",
                            s.component.type_text()
                        ),
                    ),
                    None => report
                        .loss
                        .add(&arch.channel, &s.key, "absent (removed or reset): previous value held"),
                }
            }
            for s in slots.iter() {
                if let Some(why) = s.widened {
                    report.loss.widen(&arch.channel, &s.key, why);
                }
            }
            // A group member's value goes into the group's row (`push_group`).
            if let Out::Own(table) = &mut arch.out {
                let cells: Vec<Cell<'_>> = slots
                    .iter()
                    .map(|s| match &s.last[i] {
                        Some(d) => Cell::Data(d),
                        None => Cell::Zeros,
                    })
                    .collect();
                table.push(tick, *id, &cells)?;
            }
        }
        Ok(())
    }

    fn finish(mut self, tables: &Tables, report: &mut WriteReport) -> Result<(), WriteError> {
        let world = tables.dir();
        if self.cur_time.is_none() {
            return Err(WriteError::Unsupported(NO_TICKS.into()));
        }
        if self.step_ns.is_none() {
            self.step_ns = Some(1_000_000_000);
        }
        self.close_tick(tables, report)?;
        let ticks = self.tick + 1;
        let step_ns = self.step_ns.unwrap_or(1_000_000_000).max(1);
        let mut archetypes = Map::new();
        let component_json = |c: &Component| {
            json!({
                "name": c.name,
                "component_type": {"primitive_ty": c.primitive.name(), "shape": c.shape},
                "tags": null,
                "asset": c.asset,
            })
        };
        let entity_names = self.entity_names();
        // A group's archetype is listed where its first member's own would have been.
        let mut groups: Vec<Option<Table>> =
            self.groups.into_iter().map(|g| Some(g.table)).collect();
        let mut tables_done = Vec::new();
        for a in self.archs {
            let table = match a.out {
                Out::Own(t) => Some(*t),
                Out::Group(g) => groups.get_mut(g).and_then(Option::take),
                Out::None => None,
            };
            tables_done.extend(table);
        }
        let world_pos = self.world_pos.map(|w| w.table);
        tables_done.extend(self.globals.into_iter().chain(world_pos));
        for t in tables_done {
            archetypes.insert(
                t.name.clone(),
                Json::Array(t.stored_components().iter().map(component_json).collect()),
            );
            t.close()?;
        }
        // The entity names last, once the other tables are closed and their buffers free.
        let mut handle = scalar_component(NAMES_ARCHETYPE, Primitive::U64);
        handle.asset = true;
        let mut names = tables.create(NAMES_ARCHETYPE, vec![handle])?;
        for tick in 0..ticks {
            for (item, (id, _)) in entity_names.iter().enumerate() {
                names.push(tick, *id, &[Cell::U64(item as u64)])?;
            }
        }
        archetypes.insert(
            names.name.clone(),
            Json::Array(
                names
                    .stored_components()
                    .iter()
                    .map(component_json)
                    .collect(),
            ),
        );
        names.close()?;
        let step_s = step_ns as f64 / 1e9;
        let meta = json!({
            "archetypes": archetypes,
            "sim_time_step": step_s,
            "run_time_step": step_s,
            "default_playback_speed": 1.0,
            "max_ticks": ticks.saturating_sub(1),
        });
        write_file(
            &world.join("metadata.json"),
            &serde_json::to_vec(&meta).unwrap_or_default(),
        )?;
        let assets = Assets::encode(
            &entity_names
                .into_iter()
                .map(|(_, name)| {
                    EntityMetadata {
                        name,
                        color: [1.0; 3],
                    }
                    .encode()
                })
                .collect::<Vec<_>>(),
        );
        write_file(&world.join("assets.bin"), &assets)?;
        Ok(())
    }
}

/// A scalar component of a name and primitive Elodin always accepts.
fn scalar_component(name: &str, primitive: Primitive) -> Component {
    Component::new(name, primitive, vec![]).unwrap_or_else(|| unreachable_component(name))
}

fn unreachable_component(name: &str) -> Component {
    Component {
        name: name.to_string(),
        primitive: Primitive::U64,
        shape: vec![],
        elements: 1,
        asset: false,
        tag_names: None,
    }
}
