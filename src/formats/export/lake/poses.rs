//! The `poses` table: one row per thing with a position or attitude per instant, found
//! through the model's position conventions (`model::pose`, `formats::mapping::flat_part`),
//! which every family's mappings use too: NanoVer's `particle.positions` (a row per
//! particle), Elodin's `world_pos`, a `position` of three numbers (Icarus `Vec3`, 3es
//! shapes, XREC transforms), declared quaternions, and Icarus CSV and HDF5 positions and
//! attitudes stored one number per signal. Positions are in metres (a declared unit is
//! converted; NanoVer's particles are nanometres).

use std::sync::Arc;

use arrow_array::builder::Float64Builder;
use arrow_array::{Array, ArrayRef, Int32Array, StringArray};

use super::file::{entity_text, Common, Place};
use crate::formats::mapping::{flat_part, Part};
use crate::model::pose::{fixed, floats, wxyz_fields, xyzw_fields, Pose, POSITION, WORLD_POS};
use crate::model::{Channel, Record};

/// NanoVer's particle positions, n × 3.
const PARTICLES: &str = "particle.positions";

/// Metres in one `unit` of length; `None` for a unit that is not a length simrec knows.
fn metres_per(unit: &str) -> Option<f64> {
    Some(match unit {
        "m" => 1.0,
        "km" => 1e3,
        "cm" => 1e-2,
        "mm" => 1e-3,
        "um" | "µm" | "μm" => 1e-6,
        "nm" => 1e-9,
        "A" | "Å" | "angstrom" => 1e-10,
        _ => return None,
    })
}

/// What a channel declares that says where its things are.
struct Declared {
    /// Names of scalar-first and scalar-last quaternion fields.
    wxyz: Vec<String>,
    xyzw: Vec<String>,
    /// Metres per unit of each position field with a declared length unit.
    scales: Vec<(String, f64)>,
}

impl Declared {
    fn of(channel: &Channel) -> Declared {
        Declared {
            wxyz: wxyz_fields(channel),
            xyzw: xyzw_fields(channel),
            scales: (channel.fields.iter())
                .filter_map(|f| Some((f.name.clone(), metres_per(f.unit.as_deref()?)?)))
                .collect(),
        }
    }

    /// Metres per unit of `key`; `default` when it declares none.
    fn scale(&self, key: &str, default: f64) -> f64 {
        (self.scales.iter().find(|(k, _)| k == key)).map_or(default, |&(_, s)| s)
    }
}

/// The `channel` column's dictionary: the channels' names, indexed by their ids.
fn channel_names(channels: &[Channel]) -> StringArray {
    channels.iter().map(|c| Some(c.name.as_str())).collect()
}

/// A thing whose position and attitude come one number per record (`flat_part`), gathered
/// until the time moves on.
struct Pending {
    owner: String,
    channel: String,
    frame: Option<i64>,
    parts: [Option<f64>; 7],
}

pub struct Poses {
    pub common: Common,
    coords: [Float64Builder; 7],
    declared: Vec<Declared>,
    pending: Vec<Pending>,
    pending_time: (i64, Option<i64>),
    /// NanoVer particles' entities, `"0"`, `"1"`, …, as many as a frame had at most: the
    /// `entity` column's dictionary, indexed by `particle_keys`.
    particles: StringArray,
    particle_keys: Int32Array,
    /// One axis of a frame's particle positions, in metres (appended as a slice: a
    /// value at a time was a large share of NanoVer's lake).
    axis: Vec<f64>,
    pub rows: usize,
}

impl Poses {
    pub fn new(common: Common, channels: &[Channel]) -> Poses {
        let mut poses = Poses {
            common,
            coords: std::array::from_fn(|_| Float64Builder::new()),
            declared: channels.iter().map(Declared::of).collect(),
            pending: Vec::new(),
            pending_time: (0, None),
            particles: StringArray::from(Vec::<&str>::new()),
            particle_keys: Int32Array::from(Vec::<i32>::new()),
            axis: Vec::new(),
            rows: 0,
        };
        poses.common.channels.dictionary(channel_names(channels));
        poses
    }

    pub fn add_channel(&mut self, channel: &Channel) {
        self.declared.push(Declared::of(channel));
        let names = self.common.channels.texts();
        let names = names
            .into_iter()
            .flatten()
            .chain([Some(channel.name.as_str())]);
        self.common.channels.dictionary(names.collect());
    }

    fn row(&mut self, place: &Place, parts: [Option<f64>; 7]) {
        self.common.push(place);
        for (builder, part) in self.coords.iter_mut().zip(parts) {
            builder.append_option(part);
        }
        self.rows += 1;
    }

    /// The rows `record` (of `channel`, at `time_utc`) gives.
    pub fn push(&mut self, record: &Record, channel: &Channel, time_utc: Option<i64>) {
        if record.time != self.pending_time.0 {
            self.flush_pending();
        }
        let Some(declared) = self.declared.get(record.channel as usize) else {
            return;
        };
        let mut number = itoa::Buffer::new();
        let entity = (record.entity.as_ref()).map(|e| entity_text(e, &mut number));
        let place = Place {
            time_ns: record.time,
            time_utc,
            channel: &channel.name,
            entity: Some(entity.unwrap_or(&channel.name)),
            frame: record.frame,
        };
        if let Some((owner, part, v)) = flat_part(record) {
            let index = match part {
                Part::Position(axis) => axis,
                Part::Attitude(i) => 3 + i,
            };
            self.pending_time = (record.time, time_utc);
            let found = self.pending.iter().position(|p| p.owner == owner);
            let i = found.unwrap_or_else(|| {
                self.pending.push(Pending {
                    owner,
                    channel: channel.name.clone(),
                    frame: record.frame,
                    parts: [None; 7],
                });
                self.pending.len() - 1
            });
            self.pending[i].parts[index] = Some(v);
            return;
        }
        if let Some(positions) = record.get(PARTICLES).and_then(floats) {
            // A frame's particles are appended column by column, their channel and entities
            // as indices (the label writer then compares no text): the entities are the same
            // numbers every frame.
            let scale = declared.scale(PARTICLES, 1e-9);
            let n = positions.len() / 3;
            let (Ok(channel), Ok(count)) = (i32::try_from(record.channel), i32::try_from(n)) else {
                return;
            };
            let common = &mut self.common;
            common.push_times(n, place.time_ns, place.time_utc, place.frame);
            common.channels.push_key_n(channel, n);
            if self.particles.len() < n {
                self.particles = (0..n)
                    .map(|i| Some(itoa::Buffer::new().format(i).to_string()))
                    .collect();
                self.particle_keys = (0..count).collect();
                common.entities.dictionary(self.particles.clone());
            }
            common.entities.push_keys(&self.particle_keys.slice(0, n));
            let [xyz @ .., _, _, _, _] = &mut self.coords;
            for (axis, builder) in xyz.iter_mut().enumerate() {
                self.axis.clear();
                (self.axis).extend(positions.chunks_exact(3).map(|p| p[axis] * scale));
                builder.append_slice(&self.axis);
            }
            self.coords[3..].iter_mut().for_each(|q| q.append_nulls(n));
            self.rows += n;
            return;
        }
        let mut pose = Pose::of(record, &declared.wxyz);
        for key in &declared.xyzw {
            if let Some(q) = record.get(key).and_then(fixed::<4>) {
                pose.rotation = Some(q);
            }
        }
        if pose.is_empty() {
            return;
        }
        let key = if record.get(WORLD_POS).is_some() {
            WORLD_POS
        } else {
            POSITION
        };
        let scale = declared.scale(key, 1.0);
        let t = pose.translation.map(|t| t.map(|x| x * scale));
        let r = pose.rotation;
        let parts = [
            t.map(|t| t[0]),
            t.map(|t| t[1]),
            t.map(|t| t[2]),
            r.map(|r| r[0]),
            r.map(|r| r[1]),
            r.map(|r| r[2]),
            r.map(|r| r[3]),
        ];
        self.row(&place, parts);
    }

    /// Elodin bodies' `world_pos` (quaternion then position) at one instant, a row each:
    /// what [`Poses::push`] makes of records whose one value is that array, without the
    /// records (a frame's bodies). `channels` are their channels' ids, `entities` keys into
    /// the texts given to [`Poses::bodies`].
    pub fn push_world_poses(
        &mut self,
        (time_ns, time_utc, frame): (i64, Option<i64>, Option<i64>),
        channels: &Int32Array,
        entities: &Int32Array,
        world_pos: &[[f64; 7]],
    ) {
        if time_ns != self.pending_time.0 {
            self.flush_pending();
        }
        let n = world_pos.len();
        self.common.push_times(n, time_ns, time_utc, frame);
        self.common.channels.push_keys(channels);
        self.common.entities.push_keys(entities);
        let declared = &self.declared;
        let scale = |c: i32| {
            let declared = usize::try_from(c).ok().and_then(|c| declared.get(c));
            declared.map_or(1.0, |d| d.scale(WORLD_POS, 1.0))
        };
        let bodies = || channels.values().iter().zip(world_pos);
        // The array's quaternion then position, into x, y, z, qx, qy, qz, qw.
        let [xyz @ .., qx, qy, qz, qw] = &mut self.coords;
        for (builder, element) in xyz.iter_mut().zip(4..) {
            self.axis.clear();
            (self.axis).extend(bodies().map(|(&c, p)| p[element] * scale(c)));
            builder.append_slice(&self.axis);
        }
        for (builder, element) in [qx, qy, qz, qw].into_iter().zip(0..) {
            self.axis.clear();
            (self.axis).extend(world_pos.iter().map(|p| p[element]));
            builder.append_slice(&self.axis);
        }
        self.rows += n;
    }

    /// The `entity` column's texts that [`Poses::push_world_poses`] indexes.
    pub fn bodies(&mut self, texts: StringArray) {
        self.common.entities.dictionary(texts);
    }

    /// Whether records like `record` (of `channel`) give rows, tried on this table (a probe
    /// of its own: it is left empty): that depends on their channel, keys and values'
    /// types, not on the numbers.
    pub fn gives_rows(&mut self, record: &Record, channel: &Channel) -> bool {
        self.push(record, channel, None);
        self.flush_pending();
        let gives = self.rows > 0;
        self.finish();
        gives
    }

    /// The things gathered from one number per record, one row each.
    pub fn flush_pending(&mut self) {
        let (time_ns, time_utc) = self.pending_time;
        for p in std::mem::take(&mut self.pending) {
            let mut parts = p.parts;
            // A quaternion is all four numbers or none.
            if parts[3..].iter().any(Option::is_none) {
                parts[3..].fill(None);
            }
            let place = Place {
                time_ns,
                time_utc,
                channel: &p.channel,
                entity: Some(&p.owner),
                frame: p.frame,
            };
            self.row(&place, parts);
        }
    }

    /// The batch's columns, in the schema's order.
    pub fn finish(&mut self) -> Vec<ArrayRef> {
        self.rows = 0;
        let mut columns = self.common.finish();
        for builder in &mut self.coords {
            columns.push(Arc::new(builder.finish()));
        }
        columns
    }
}
