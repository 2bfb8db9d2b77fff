//! Any recording → the Icarus model (docs/formats/mapping.md, "→ `.icarec`, Icarus HDF5"):
//! a signal holds one value per frame, so a channel whose records carry several entities (an
//! Elodin archetype, a 3es shape channel) becomes one channel per entity, named as Icarus
//! names a component's signals: `<entity>.<channel>` (`Ball.body`, so the signals are
//! `Ball.body.world_pos`…), `<channel>.<number>` for a numbered entity without a name
//! (`3es/sphere.1`). A channel without entities, or named after its entity already (an
//! Icarus signal `Vehicle.Nav.position` of `Vehicle.Nav`), keeps its name.
//!
//! Values take the shapes Icarus's signals have: an Elodin `world_pos` (`[qx, qy, qz, qw, x,
//! y, z]`) becomes a Vec3 `position` and a Quat `attitude` (scalar first, as Icarus stores
//! it); any other numeric array of up to [`FLATTEN`] elements whose shape is no signal type
//! becomes scalars `NAME_0`, `NAME_1`… (counted: "flattened"); an unsigned 64- or 32-bit
//! number becomes an int64 (counted where one does not fit).
//!
//! The records of the first instant are read ahead (at most [`AHEAD`]) so that the entities
//! met there have their channels before the writer lays out its signals; a later entity gets
//! its channel when met, its fields typed by its first record where the source did not
//! declare them, and the writer adds its signals then (values before it: NaN or 0, counted).

use std::collections::HashMap;

use crate::formats::mapping::learn;
use crate::formats::mapping::queued::{Queue, Queued};
use crate::formats::mapping::{mapped_header, Tally};
use crate::formats::mapping::{LossHandle, Mapping};
use crate::formats::{ReadError, Source};
use crate::model::pose::{entity_names, WORLD_POS};
use crate::model::{
    Array, ArrayData, Channel, ChannelKind, Composition, DType, Entity, Field, FieldSpec, Header,
    Record, Value, QUATERNION_WXYZ,
};

const FLATTENED: &str = "flattened: one scalar signal per element (NAME_0, NAME_1, …)";
const CLIPPED: &str = "an unsigned 64-bit number past int64's range: written as int64's largest";

/// Elements up to which an array of no signal shape becomes scalars.
pub const FLATTEN: usize = 16;

/// Records read ahead at most, for the first instant.
pub const AHEAD: usize = 4096;

/// The family's [`Mapping`]: a recording of another family read as Icarus's signals, one
/// channel per entity.
pub struct IntoIcarus;

impl Mapping for IntoIcarus {
    fn map<'a>(&self, source: Box<dyn Source + 'a>, loss: LossHandle) -> Box<dyn Source + 'a> {
        Box::new(PerEntity::new(source, loss))
    }
}

pub struct PerEntity<'a> {
    inner: Box<dyn Source + 'a>,
    header: Header,
    names: HashMap<u64, String>,
    /// Output channel of each (source channel, entity).
    routes: HashMap<(u32, Option<Entity>), u32>,
    queue: Queue,
    /// An error met reading the first instant ahead, handed on after its records.
    error: Option<ReadError>,
    /// Values flattened and clipped, per output channel and field.
    tallies: (Tally, Tally),
    loss: LossHandle,
}

impl<'a> PerEntity<'a> {
    pub fn new(inner: Box<dyn Source + 'a>, loss: LossHandle) -> PerEntity<'a> {
        let source = inner.header();
        let header = mapped_header(source);
        let mut mapped = PerEntity {
            names: entity_names(source),
            inner,
            header,
            routes: HashMap::new(),
            queue: Queue::default(),
            error: None,
            tallies: (Tally::default(), Tally::default()),
            loss,
        };
        mapped.read_first_instant();
        // A channel the first instant did not show is declared as it is, for its records
        // without an entity (NanoVer's `state` starting later).
        let channels = mapped.inner.header().channels.clone();
        for (c, channel) in channels.into_iter().enumerate() {
            let c = c as u32;
            if !mapped.routes.keys().any(|(from, _)| *from == c) {
                let id = mapped.header.add_channel(signal_channel(channel));
                mapped.routes.insert((c, None), id);
            }
        }
        mapped
    }

    /// Reads and routes the first instant's records (at most [`AHEAD`]).
    fn read_first_instant(&mut self) {
        let mut first = None;
        while self.queue.out.len() < AHEAD {
            match self.inner.next() {
                Some(Ok(record)) => {
                    let at = *first.get_or_insert(record.time);
                    let last = record.time != at;
                    Queued::take(self, record);
                    if last {
                        break;
                    }
                }
                Some(Err(e)) => {
                    self.error = Some(e);
                    break;
                }
                None => break,
            }
        }
    }

    /// Moves `record` to the channel of its (channel, entity), made when first met, with its
    /// values in the shapes of Icarus's signals.
    fn route(&mut self, record: &mut Record) {
        let key = (record.channel, record.entity.clone());
        let known = self.routes.get(&key).copied();
        let id = known.unwrap_or(self.header.channels.len() as u32);
        record.channel = id;
        record.raw = None;
        let values = std::mem::take(&mut record.values);
        let tallies = &mut self.tallies;
        for (key, value) in values {
            signal_values(key, value, &mut record.values, |field, why| {
                let tally = if why == FLATTENED {
                    &mut tallies.0
                } else {
                    &mut tallies.1
                };
                tally.add(id, field);
            });
        }
        if known.is_none() {
            let (from, entity) = key;
            let mut channel = self
                .inner
                .header()
                .channels
                .get(from as usize)
                .cloned()
                .unwrap_or_else(|| {
                    Channel::new(
                        format!("channel {from}"),
                        ChannelKind::Signals,
                        Composition::Independent,
                    )
                });
            if let Some(entity) = &entity {
                channel.name = per_entity(&channel.name, entity, &self.names);
            }
            let mut channel = signal_channel(channel);
            // What the source did not declare, the record shows (the look-ahead that types
            // the first instant's channels is over when a later entity comes).
            learn(&mut channel, record);
            self.header.add_channel(channel);
            self.routes.insert((from, entity), id);
        }
    }
}

/// `channel` with its field specs in the shapes of Icarus's signals ([`signal_values`]).
fn signal_channel(mut channel: Channel) -> Channel {
    let mut fields = Vec::with_capacity(channel.fields.len());
    for spec in std::mem::take(&mut channel.fields) {
        let n: Option<usize> = spec.shape.as_ref().map(|s| s.iter().product());
        let numeric = spec
            .dtype
            .is_some_and(|d| d != DType::Str && d != DType::Bool);
        match (spec.name.as_str(), spec.shape.as_deref()) {
            (WORLD_POS, Some([7])) => {
                let dtype = spec.dtype.unwrap_or(DType::F64);
                fields.push(FieldSpec::typed("position", dtype, &[3]).with_unit("m"));
                let mut attitude = FieldSpec::typed("attitude", dtype, &[4]);
                attitude.semantic = Some(QUATERNION_WXYZ.into());
                fields.push(attitude);
            }
            (_, Some([])) if matches!(spec.dtype, Some(DType::U64 | DType::U32)) => {
                fields.push(FieldSpec {
                    dtype: Some(DType::I64),
                    ..spec
                });
            }
            (_, Some(shape))
                if numeric && !signal_shape(shape) && n.is_some_and(|n| n <= FLATTEN) =>
            {
                // Elements as `element` gives them: floats as they are, integers as int64.
                let dtype = match spec.dtype {
                    Some(d @ (DType::F32 | DType::F64)) => d,
                    _ => DType::I64,
                };
                for i in 0..n.unwrap_or(0) {
                    fields.push(FieldSpec::typed(format!("{}_{i}", spec.name), dtype, &[]));
                }
            }
            _ => fields.push(spec),
        }
    }
    channel.fields = fields;
    channel
}

/// Whether a shape is one of Icarus's signal shapes: a scalar, a Vec3, a Quat or a Mat3.
fn signal_shape(shape: &[usize]) -> bool {
    matches!(shape, [] | [3] | [4] | [3, 3])
}

/// `key`'s value in the shapes of Icarus's signals, appended to `out`; what changes is told
/// to `lost` (field, reason).
fn signal_values(
    key: String,
    value: Value,
    out: &mut Vec<Field>,
    mut lost: impl FnMut(&str, &str),
) {
    // A 0-d array (an Elodin scalar component) is its one number; unsigned integers are
    // int64s, Icarus's widest integer.
    let value = match value {
        Value::Array(a) if a.checked_shape().is_empty() && a.len() == 1 => match &a.data {
            ArrayData::U64(v) => Value::UInt(v[0]),
            data => element(data, 0).unwrap_or(Value::Array(a)),
        },
        Value::Array(Array {
            data: ArrayData::U64(v),
            shape,
        }) => {
            let mut lossy = false;
            let ints: Vec<i64> = v
                .iter()
                .map(|&u| {
                    i64::try_from(u).unwrap_or_else(|_| {
                        lossy = true;
                        i64::MAX
                    })
                })
                .collect();
            if lossy {
                lost(
                    &key,
                    "an unsigned 64-bit number past int64's range: written as int64's largest",
                );
            }
            Value::Array(Array {
                data: ArrayData::I64(ints),
                shape,
            })
        }
        Value::Array(Array {
            data: ArrayData::U32(v),
            shape,
        }) => Value::Array(Array {
            data: ArrayData::I64(v.into_iter().map(i64::from).collect()),
            shape,
        }),
        other => other,
    };
    match value {
        Value::Array(Array { data, shape }) if key == WORLD_POS && data.len() == 7 => {
            let (position, attitude) = match data {
                ArrayData::F64(v) => (
                    ArrayData::F64(v[4..].to_vec()),
                    ArrayData::F64(vec![v[3], v[0], v[1], v[2]]),
                ),
                ArrayData::F32(v) => (
                    ArrayData::F32(v[4..].to_vec()),
                    ArrayData::F32(vec![v[3], v[0], v[1], v[2]]),
                ),
                other => {
                    out.push((key, Value::Array(Array { data: other, shape })));
                    return;
                }
            };
            out.push(("position".into(), Value::Array(Array::flat(position))));
            out.push(("attitude".into(), Value::Array(Array::flat(attitude))));
        }
        Value::UInt(u) => match i64::try_from(u) {
            Ok(i) => out.push((key, Value::Int(i))),
            Err(_) => {
                lost(
                    &key,
                    "an unsigned 64-bit number past int64's range: written as int64's largest",
                );
                out.push((key, Value::Int(i64::MAX)));
            }
        },
        Value::Array(a)
            if !signal_shape(&a.checked_shape()) && a.len() <= FLATTEN && !a.is_empty() =>
        {
            let numbers: Option<Vec<Value>> = (0..a.len()).map(|i| element(&a.data, i)).collect();
            match numbers {
                Some(numbers) => {
                    lost(
                        &key,
                        "flattened: one scalar signal per element (NAME_0, NAME_1, …)",
                    );
                    for (i, v) in numbers.into_iter().enumerate() {
                        out.push((format!("{key}_{i}"), v));
                    }
                }
                None => out.push((key, Value::Array(a))),
            }
        }
        other => out.push((key, other)),
    }
}

/// Element `i` of a numeric array as a scalar value (unsigned as int64 where it fits).
fn element(data: &ArrayData, i: usize) -> Option<Value> {
    Some(match data {
        ArrayData::F64(v) => Value::Float(v[i]),
        ArrayData::F32(v) => Value::F32(v[i]),
        ArrayData::I64(v) => Value::Int(v[i]),
        ArrayData::I32(v) => Value::Int(v[i] as i64),
        ArrayData::I16(v) => Value::Int(v[i] as i64),
        ArrayData::I8(v) => Value::Int(v[i] as i64),
        ArrayData::U32(v) => Value::Int(v[i] as i64),
        ArrayData::U16(v) => Value::Int(v[i] as i64),
        ArrayData::U8(v) => Value::Int(v[i] as i64),
        ArrayData::U64(v) => Value::Int(i64::try_from(v[i]).ok()?),
        ArrayData::Bool(_) | ArrayData::Str(_) => return None,
    })
}

/// The channel of `channel`'s records of `entity`.
fn per_entity(channel: &str, entity: &Entity, names: &HashMap<u64, String>) -> String {
    let name = match entity {
        Entity::Name(n) => n.to_string(),
        Entity::Id(id) => match names.get(id) {
            Some(n) => n.clone(),
            None => return format!("{channel}.{id}"),
        },
    };
    let owned = channel
        .strip_prefix(name.as_str())
        .is_some_and(|rest| rest.starts_with('.'));
    if owned {
        channel.to_string()
    } else {
        format!("{name}.{channel}")
    }
}

impl Queued for PerEntity<'_> {
    fn queue(&mut self) -> &mut Queue {
        &mut self.queue
    }
    fn pull(&mut self) -> Option<Result<Record, ReadError>> {
        match self.error.take() {
            Some(e) => Some(Err(e)),
            None => self.inner.next(),
        }
    }
    fn take(&mut self, mut record: Record) {
        self.route(&mut record);
        self.queue.out.push_back(record);
    }
    fn end(&mut self) {
        self.tallies.0.report(&self.header, FLATTENED, &self.loss);
        self.tallies.1.report(&self.header, CLIPPED, &self.loss);
    }
}

stage_source!(PerEntity, own, queued);

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn channels_are_named_per_entity_as_icarus_names_signals() {
        let names = HashMap::from([(0, "Ball".to_string())]);
        let named = |n: &str| Entity::Name(Arc::from(n));
        assert_eq!(per_entity("body", &Entity::Id(0), &names), "Ball.body");
        assert_eq!(
            per_entity("3es/sphere", &Entity::Id(7), &names),
            "3es/sphere.7"
        );
        assert_eq!(
            per_entity("Vehicle.Nav.position", &named("Vehicle.Nav"), &names),
            "Vehicle.Nav.position"
        );
        assert_eq!(
            per_entity("xrec.Transform", &named("cube"), &names),
            "cube.xrec.Transform"
        );
    }
}
