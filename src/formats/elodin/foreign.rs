//! The Elodin family's mapping of any other family's recording, done by the writer itself
//! (`mapping.rs` says why it is no stage): one archetype per channel, or per entity for the
//! channels that are its components (Icarus signals share one, [`Group`]), sample-and-hold
//! per tick. See docs/formats/elodin.md for the mapping and what it cannot carry.

use std::collections::HashMap;

use serde_json::{json, Map, Value as Json};

use super::assets::{Assets, EntityMetadata};
use super::dir::NAMES_ARCHETYPE;
use super::metadata::{safe_file_stem, Component, Primitive};
use super::parquet_out::{widening, Cell, Table, Tables};
use super::writer::{write_file, GLOBALS, NO_TICKS, WORLD_POS};
use crate::formats::{Unsupported, WriteError, WriteReport};
use crate::model::{
    ArrayData, Channel, Composition, DType, Entity, FieldSpec, Folded, Header, Record, Value,
    QUATERNION_WXYZ,
};

/// Numeric elements as f64 (exact for every type a position or quaternion has).
fn as_f64s(data: &ArrayData) -> Option<Vec<f64>> {
    Some(match data {
        ArrayData::F64(v) => v.clone(),
        ArrayData::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
        ArrayData::I32(v) => v.iter().map(|&x| f64::from(x)).collect(),
        _ => return None,
    })
}

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

pub(super) struct Foreign {
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
    pub(super) fn new(header: &Header) -> Foreign {
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
    pub(super) fn add_channel(&mut self, channel: &Channel) {
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

    pub(super) fn write(
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

    pub(super) fn finish(
        mut self,
        tables: &Tables,
        report: &mut WriteReport,
    ) -> Result<(), WriteError> {
        let world = tables.dir();
        if self.cur_time.is_none() {
            return Err(WriteError::Unsupported(Unsupported::Limit(NO_TICKS)));
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
