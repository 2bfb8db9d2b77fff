//! Any recording → NanoVer's model (docs/formats/mapping.md, "→ NanoVer"): the records of
//! one instant become one frame and one state update.
//!
//! - Everything with a position becomes a particle, in the order first met, named after its
//!   entity: an Elodin body's `world_pos`, a `position` of three numbers (an Icarus `Vec3`,
//!   a 3es shape, an XREC transform), and an Icarus CSV/HDF5 entity `….position` whose `x`,
//!   `y`, `z` come as scalars. `particle.positions` is float32 in nanometres: metres (the
//!   unit every other family uses unless a field declares another) times 1e9.
//! - A frame is written at every instant where a position changed; it carries every
//!   particle's position (those not moved hold theirs), and `particle.count`,
//!   `particle.names` and `particle.types` (the source channel: `body`, `3es/sphere`) when
//!   the set of particles grew. The first frame is a reset.
//! - Every other value goes to the shared state, one key per channel and entity:
//!   `simrec.<channel>[.<entity>]`, a map of the record's fields (a `position` taken into
//!   the particles is left out of it, `world_pos` stays whole: its attitude has no particle
//!   counterpart).

use std::collections::HashMap;
use std::sync::Arc;

use super::frame_fields;
use crate::formats::mapping::queued::{Queue, Queued};
use crate::formats::mapping::{flat_part, mapped_header, thing, thing_name, Part, Thing};
use crate::formats::mapping::{LossHandle, Mapping};
use crate::formats::{ReadError, Source};
use crate::model::pose::{entity_name, entity_names, fixed, POSITION, WORLD_POS};
use crate::model::{
    Array, ArrayData, Channel, ChannelKind, Composition, Entity, Field, Header, Record, Value,
};

/// Prefix of the state keys of values that are not positions.
pub const STATE_PREFIX: &str = "simrec.";

const FRAME: u32 = 0;
const STATE: u32 = 1;

/// How many nanometres one unit of a position is; `None` for a unit that is not a length
/// simrec knows.
fn nanometres_per(unit: &str) -> Option<f64> {
    Some(match unit {
        "m" => 1e9,
        "km" => 1e12,
        "cm" => 1e7,
        "mm" => 1e6,
        "um" | "µm" | "μm" => 1e3,
        "nm" => 1.0,
        "A" | "Å" | "angstrom" => 0.1,
        _ => return None,
    })
}

/// The family's [`Mapping`]: a recording of another family read as NanoVer's frames and state.
pub struct IntoNanover;

impl Mapping for IntoNanover {
    fn map<'a>(&self, source: Box<dyn Source + 'a>, loss: LossHandle) -> Box<dyn Source + 'a> {
        Box::new(ToNanover::new(source, loss))
    }
}

/// A source of any family, read as NanoVer's `frame` and `state` channels.
pub struct ToNanover<'a> {
    inner: Box<dyn Source + 'a>,
    header: Header,
    names: HashMap<u64, String>,
    /// Per source channel id: the scale to nanometres of its `position`/`world_pos`, and
    /// the loss reason to count for it.
    scales: Vec<(f64, String)>,
    particles: Vec<[f32; 3]>,
    particle_names: Vec<String>,
    /// The source channel each particle's position came from (`body`, `3es/sphere`).
    particle_types: Vec<String>,
    of_thing: HashMap<Thing, usize>,
    /// The instant being gathered.
    step: Option<i64>,
    moved: bool,
    grew: bool,
    state: Vec<Field>,
    state_index: HashMap<String, usize>,
    frames: i64,
    /// Instants written: the group of each one's frame and state update.
    instants: u64,
    queue: Queue,
    loss: LossHandle,
}

impl<'a> ToNanover<'a> {
    pub fn new(inner: Box<dyn Source + 'a>, loss: LossHandle) -> ToNanover<'a> {
        let source = inner.header();
        let mut header = mapped_header(source);
        let mut frame = Channel::new("frame", ChannelKind::Signals, Composition::FrameDelta);
        frame.fields = frame_fields();
        header.add_channel(frame);
        header.add_channel(Channel::new(
            "state",
            ChannelKind::Signals,
            Composition::StateDelta,
        ));
        ToNanover {
            names: entity_names(source),
            inner,
            header,
            scales: Vec::new(),
            particles: Vec::new(),
            particle_names: Vec::new(),
            particle_types: Vec::new(),
            of_thing: HashMap::new(),
            step: None,
            moved: false,
            grew: false,
            state: Vec::new(),
            state_index: HashMap::new(),
            frames: 0,
            instants: 0,
            queue: Queue::default(),
            loss,
        }
    }

    /// The scale of channel `id`'s positions to nanometres, and the loss reason naming it.
    fn scale(&mut self, id: u32) -> (f64, String) {
        let channels = &self.inner.header().channels;
        while self.scales.len() < channels.len() {
            let channel = &channels[self.scales.len()];
            let unit = [POSITION, WORLD_POS].iter().find_map(|name| {
                channel
                    .fields
                    .iter()
                    .find(|f| f.name == *name)
                    .and_then(|f| f.unit.clone())
            });
            self.scales.push(match unit.as_deref().map(|u| (u, nanometres_per(u))) {
                Some((u, Some(scale))) => (
                    scale,
                    format!("into particle.positions: {u} → nm (×{scale:e}), as float32"),
                ),
                Some((u, None)) => (
                    1.0,
                    format!("into particle.positions as float32, unit {u} kept (not a length simrec converts)"),
                ),
                None => (
                    1e9,
                    "into particle.positions: metres assumed → nm (×1e9), as float32".into(),
                ),
            });
        }
        self.scales
            .get(id as usize)
            .cloned()
            .unwrap_or((1e9, String::new()))
    }

    /// The particle of `thing`, added (named `name`) when first met.
    /// The particle of `thing` (of source channel `kind`), added (named `name`) when first
    /// met.
    fn particle(&mut self, thing: Thing, kind: &str, name: impl FnOnce() -> String) -> usize {
        if let Some(&i) = self.of_thing.get(&thing) {
            return i;
        }
        self.particles.push([0.0; 3]);
        self.particle_names.push(name());
        self.particle_types.push(kind.to_string());
        self.of_thing.insert(thing, self.particles.len() - 1);
        self.grew = true;
        self.particles.len() - 1
    }

    /// Takes one source record into the instant being gathered.
    fn gather(&mut self, record: Record) {
        let channel_name = self
            .inner
            .header()
            .channels
            .get(record.channel as usize)
            .map(|c| c.name.clone())
            .unwrap_or_else(|| format!("channel {}", record.channel));
        let mut rest: Vec<Field> = Vec::with_capacity(record.values.len());
        let flat = match flat_part(&record) {
            Some((owner, Part::Position(axis), v)) => Some((owner, axis, v)),
            _ => None,
        };
        for (key, value) in record.values {
            let whole = key == WORLD_POS;
            let position = if whole {
                fixed::<7>(&value).map(|[.., x, y, z]| [x, y, z])
            } else if key == POSITION {
                fixed::<3>(&value)
            } else {
                None
            };
            let Some(position) = position else {
                if flat.is_none() {
                    rest.push((key, value));
                }
                continue;
            };
            let name = match &record.entity {
                Some(entity) => thing_name(entity, &channel_name, &self.names),
                None => channel_name.clone(),
            };
            let (scale, reason) = self.scale(record.channel);
            let thing = thing(record.channel, record.entity.as_ref(), &channel_name);
            let i = self.particle(thing, &channel_name, || name);
            self.particles[i] = position.map(|v| (v * scale) as f32);
            self.moved = true;
            self.loss.borrow_mut().add(&channel_name, &key, &reason);
            if whole {
                rest.push((key, value));
            }
        }
        if let Some((owner, axis, v)) = flat {
            let (scale, reason) = self.scale(record.channel);
            let kind = channel_name.clone();
            let i = self.particle(Thing::Named(Arc::from(owner.as_str())), &kind, || owner);
            self.particles[i][axis] = (v * scale) as f32;
            self.moved = true;
            self.loss
                .borrow_mut()
                .add(&channel_name, ["x", "y", "z"][axis], &reason);
        }
        if !rest.is_empty() {
            let key = state_key(&channel_name, record.entity.as_ref(), &self.names);
            if self.state_index.contains_key(&key) {
                // A second record of the key at this instant (two 3es control messages):
                // the first goes in a state update of its own, so that neither is lost.
                self.flush_state(None);
            }
            self.state_index.insert(key.clone(), self.state.len());
            self.state.push((key, Value::Map(rest)));
        }
    }

    /// The state update gathered so far at this instant, queued (in `group`).
    fn flush_state(&mut self, group: Option<u64>) {
        if let (Some(time), false) = (self.step, self.state.is_empty()) {
            let mut state = Record::new(time, STATE);
            state.group = group;
            state.values = std::mem::take(&mut self.state);
            self.state_index.clear();
            self.queue.out.push_back(state);
        }
    }

    /// The frame and state update of the instant gathered, queued as one group: a
    /// `.nanover.zip` holds them in one message, as NanoVer's recorder does.
    fn flush(&mut self) {
        let Some(time) = self.step else { return };
        let group = Some(self.instants);
        self.instants += 1;
        if self.moved {
            let mut frame = Record::new(time, FRAME);
            frame.group = group;
            frame.frame = Some(self.frames);
            self.frames += 1;
            if self.grew {
                frame.values.push((
                    "particle.count".into(),
                    Value::UInt(self.particles.len() as u64),
                ));
                frame.values.push((
                    "particle.names".into(),
                    Value::Array(Array::flat(ArrayData::Str(self.particle_names.clone()))),
                ));
                frame.values.push((
                    "particle.types".into(),
                    Value::Array(Array::flat(ArrayData::Str(self.particle_types.clone()))),
                ));
            }
            let flat: Vec<f32> = self.particles.iter().flatten().copied().collect();
            let positions = Array::with_shape(ArrayData::F32(flat), vec![self.particles.len(), 3])
                .map(Value::Array)
                .unwrap_or(Value::Null);
            frame.values.push(("particle.positions".into(), positions));
            self.queue.out.push_back(frame);
        }
        self.flush_state(group);
        self.moved = false;
        self.grew = false;
    }
}

/// What an entity is called: its name, the header's name for its number, or the number.
fn label(entity: &Entity, names: &HashMap<u64, String>) -> String {
    match entity {
        Entity::Id(id) if !names.contains_key(id) => id.to_string(),
        _ => entity_name(entity, names),
    }
}

/// `simrec.<channel>`, then `.<entity>` unless the channel's name already starts with it
/// (an Icarus signal `Vehicle.Aero.alpha` of component `Vehicle.Aero`).
fn state_key(channel: &str, entity: Option<&Entity>, names: &HashMap<u64, String>) -> String {
    let mut key = format!("{STATE_PREFIX}{channel}");
    if let Some(entity) = entity {
        let name = label(entity, names);
        let owned = channel
            .strip_prefix(name.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'));
        if !owned {
            key.push('.');
            key.push_str(&name);
        }
    }
    key
}

impl Queued for ToNanover<'_> {
    fn queue(&mut self) -> &mut Queue {
        &mut self.queue
    }
    fn pull(&mut self) -> Option<Result<Record, ReadError>> {
        self.inner.next()
    }
    fn take(&mut self, record: Record) {
        if self.step != Some(record.time) {
            self.flush();
            self.step = Some(record.time);
        }
        self.gather(record);
    }
    fn end(&mut self) {
        self.flush();
        self.step = None;
    }
}

stage_source!(ToNanover, own, queued);
