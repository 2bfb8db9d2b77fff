//! Recordings of one family read in the model of another, for a writer that takes only its
//! own family's channels (docs/formats/mapping.md).

pub mod elodin;
pub mod icarus;
pub mod nanover;
pub mod tes;
pub mod xrec;

use std::sync::Arc;

pub use elodin::ToElodin;
pub use icarus::PerEntity;
pub use nanover::ToNanover;
pub use tes::ToTes;
pub use xrec::ToXrec;

use crate::formats::{Family, Format, Source};
use std::collections::HashMap;

use crate::model::pose::{entity_name, number};
use crate::model::{Entity, Header, Record, MAPPED_FROM};

use super::ordered::InTimeOrder;
use super::resample::Resample;
use super::LossHandle;

/// `source` as the writer of `format` takes it: in time order where the writer needs it,
/// on a grid of `resample` nanoseconds when asked, and in the model of its family when the
/// source is of another; what that changes is counted in `loss`. A source of the format's
/// own family passes as it is (copied as recorded) unless resampled.
pub fn adapt<'a>(
    source: &'a mut dyn Source,
    format: &dyn Format,
    resample: Option<i64>,
    loss: &LossHandle,
) -> Box<dyn Source + 'a> {
    let from = source.header().format.clone();
    let own =
        format.names().contains(&from.as_str()) || format.family().is_some_and(|f| f.holds(&from));
    let mut source: Box<dyn Source + 'a> = Box::new(source);
    if own && resample.is_none() {
        return source;
    }
    if format.needs_time_order() || resample.is_some() {
        source = Box::new(InTimeOrder::new(source, loss.clone()));
    }
    if let Some(step) = resample {
        source = Box::new(Resample::new(source, step, loss.clone()));
    }
    if own {
        return source;
    }
    match format.family() {
        Some(Family::NanoVer) => Box::new(ToNanover::new(source, loss.clone())),
        Some(Family::Tes) => Box::new(ToTes::new(source, loss.clone())),
        Some(Family::Xrec) => Box::new(ToXrec::new(source, loss.clone())),
        Some(Family::Icarus) => Box::new(PerEntity::new(source, loss.clone())),
        // The Elodin writer maps other families itself; NanoVer's particles become bodies.
        Some(Family::Elodin) if Family::NanoVer.holds(&from) => {
            Box::new(ToElodin::new(source, loss.clone()))
        }
        Some(Family::Elodin) | None => source,
    }
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
