//! What the families' mappings share (each family's `mapping.rs` reads recordings of other
//! families in its model, docs/formats/mapping.md): the `Mapping` seam the registry finds
//! a writer's mapping through, the loss handle they count into, their record queue, and
//! the helpers that name things and split flat positions.

pub mod queued;

use std::collections::HashMap;
use std::sync::Arc;

use super::family::Family;
use super::Source;
use crate::model::pose::{entity_name, number};
use crate::model::{Channel, DType, Entity, FieldSpec, Header, Record, Value, MAPPED_FROM};

/// What the stages between a source and a writer changed (a mapping, `pipeline::adapt`),
/// shared with the run that reports it.
pub type LossHandle = std::rc::Rc<std::cell::RefCell<crate::report::LossReport>>;

/// How a recording of another family is read in a family's model: the stage
/// `pipeline::adapt` puts between a source and a writer that takes its family's model
/// (`WriterTraits::takes_family_model`). A family declares its mapping in its `FAMILY`.
pub trait Mapping: Sync {
    /// Whether a recording of family `from` (`None`: of no one family, as a merge of
    /// several) goes through the stage. Every one by default.
    fn maps(&self, from: Option<&Family>) -> bool {
        let _ = from;
        true
    }

    /// `source` read in the family's model, counting what that changes in `loss`.
    fn map<'a>(&self, source: Box<dyn Source + 'a>, loss: LossHandle) -> Box<dyn Source + 'a>;
}

/// The header of a stage that maps `source` into another family's channels: its format,
/// origin and metadata, with [`MAPPED_FROM`] naming the source's format, and no channels.
pub fn mapped_header(source: &Header) -> Header {
    let mut header = source.clone();
    header.channels.clear();
    header
        .metadata
        .insert(MAPPED_FROM.into(), source.format.clone().into());
    header
}

/// Records counted per source channel and field for one loss reason, without a lookup in
/// the loss report for each (a mapping may drop a value of every record), moved into the
/// report at the end.
#[derive(Debug, Default)]
pub struct Tally(Vec<Vec<(String, u64)>>);

impl Tally {
    pub fn add(&mut self, channel: u32, field: &str) {
        let c = channel as usize;
        if self.0.len() <= c {
            self.0.resize_with(c + 1, Vec::new);
        }
        match self.0[c].iter_mut().find(|(f, _)| f == field) {
            Some((_, n)) => *n += 1,
            None => self.0[c].push((field.to_string(), 1)),
        }
    }

    /// Moves the counts into `loss` under `reason`, naming channels from `header`.
    pub fn report(&mut self, header: &Header, reason: &str, loss: &LossHandle) {
        let mut loss = loss.borrow_mut();
        for (c, fields) in std::mem::take(&mut self.0).into_iter().enumerate() {
            let name = header
                .channels
                .get(c)
                .map_or_else(|| format!("channel {c}"), |ch| ch.name.clone());
            for (field, n) in fields {
                loss.add_n(&name, &field, reason, n);
            }
        }
    }
}

/// What a particle or shape stands for: a named entity is one thing on every channel (an
/// Icarus component's position and attitude signals, an XREC object), a numbered one only
/// within its channel (a 3es sphere and box may both be object 1).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Thing {
    Named(Arc<str>),
    Numbered(u32, u64),
}

/// The thing a record of channel `channel` (named `name`) is about; a record without an
/// entity is about its channel.
pub fn thing(channel: u32, entity: Option<&Entity>, name: &str) -> Thing {
    match entity {
        Some(Entity::Name(n)) => Thing::Named(n.clone()),
        Some(Entity::Id(id)) => Thing::Numbered(channel, *id),
        None => Thing::Named(Arc::from(name)),
    }
}

/// The name of a thing of entity `entity` on channel `channel`: the entity's name, the
/// header's name for its number, or `<channel> <number>` for a number with no name (a 3es
/// shape's object id).
pub fn thing_name(entity: &Entity, channel: &str, names: &HashMap<u64, String>) -> String {
    match entity {
        Entity::Id(id) if !names.contains_key(id) => format!("{channel} {id}"),
        _ => entity_name(entity, names),
    }
}

/// One component of a position or attitude that an Icarus CSV or HDF5 file stores as a
/// scalar signal of its own.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Part {
    /// `x`, `y` or `z` of `NAME.position`: 0, 1, 2.
    Position(usize),
    /// `w`, `x`, `y` or `z` of the quaternion `NAME.attitude`, as its index in scalar-last
    /// order (x, y, z, w): 3, 0, 1, 2.
    Attitude(usize),
}

/// The record of entity `NAME.position` (or `NAME.attitude`) holding one number `x`, `y`,
/// `z` (or `w`) gives (NAME, the part, the value).
pub fn flat_part(record: &Record) -> Option<(String, Part, f64)> {
    let Some(Entity::Name(entity)) = &record.entity else {
        return None;
    };
    let [(key, value)] = record.values.as_slice() else {
        return None;
    };
    let value = number(value)?;
    if let Some(owner) = entity.strip_suffix(".position") {
        let axis = ["x", "y", "z"].iter().position(|a| a == key)?;
        return Some((owner.to_string(), Part::Position(axis), value));
    }
    let owner = entity.strip_suffix(".attitude")?;
    let index = ["x", "y", "z", "w"].iter().position(|a| a == key)?;
    Some((owner.to_string(), Part::Attitude(index), value))
}

/// The dtype and shape a value fixes, when it has them (not a map, list, bytes or null; an
/// empty array says nothing about the shape of later ones).
fn typed(value: &Value) -> Option<(DType, Vec<usize>)> {
    Some(match value {
        Value::Bool(_) => (DType::Bool, vec![]),
        Value::Int(_) => (DType::I64, vec![]),
        Value::UInt(_) => (DType::U64, vec![]),
        Value::Float(_) => (DType::F64, vec![]),
        Value::F32(_) => (DType::F32, vec![]),
        Value::Str(_) => (DType::Str, vec![]),
        Value::Array(a) if !a.data.is_empty() => (a.dtype(), a.shape.clone()),
        _ => return None,
    })
}

/// Fills in `channel`'s specs from one record's values: a field it lacks is added, a field
/// without type or shape takes the value's. The first value seen decides.
pub(crate) fn learn(channel: &mut Channel, record: &Record) {
    for (key, value) in &record.values {
        let Some((dtype, shape)) = typed(value) else {
            continue;
        };
        match channel.fields.iter_mut().find(|f| f.name == *key) {
            Some(spec) => {
                spec.dtype.get_or_insert(dtype);
                spec.shape.get_or_insert(shape);
            }
            None => channel
                .fields
                .push(FieldSpec::typed(key.clone(), dtype, &shape)),
        }
    }
}
