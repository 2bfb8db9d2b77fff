//! Any recording → XREC's model (docs/formats/mapping.md, "→ XREC"): every record stays an
//! event of its channel's type, and the positions of things become `xrec.Transform` events,
//! XREC's tracked objects (spec §13: `id`, `position` [3], `rotation` [x, y, z, w],
//! `scale` [3]).
//!
//! - A record with a position or attitude (an Elodin `world_pos`, a `position`, a
//!   quaternion) gives a Transform of its thing; the fields taken are left out of its own
//!   event, which is written only when other fields remain. A 3es shape's `scale` is the
//!   Transform's scale.
//! - An Icarus CSV/HDF5 position or attitude stored as scalar signals is gathered over the
//!   instant: one Transform per thing per instant.
//! - NanoVer's particles are tracked objects: one Transform per particle per frame, named
//!   as `particle.names` names them (else `particle N`), nanometres to metres (×1e-9).
//! - Positions keep the source's axes and units (metres); a Transform without an attitude
//!   has the identity rotation, and scale [1, 1, 1].

use std::collections::HashMap;
use std::sync::Arc;

use crate::formats::mapping::queued::{Queue, Queued};
use crate::formats::mapping::{flat_part, mapped_header, thing, thing_name, Part, Thing};
use crate::formats::mapping::{LossHandle, Mapping};
use crate::formats::{ReadError, Source};
use crate::model::pose::{fixed, wxyz_fields, xyzw_fields, Pose, POSITION, WORLD_POS};
use crate::model::{
    Array, ArrayData, Channel, ChannelKind, Composition, Entity, Header, Record, Value,
};

/// The channel of Transform events: the first of the mapped header.
const TRANSFORM: u32 = 0;
const TRANSFORM_NAME: &str = "xrec.Transform";
const PARTICLES: &str = "particle.positions";
const PARTICLE_NAMES: &str = "particle.names";

/// When a record is: its time, exact seconds and frame value.
fn at(record: &Record) -> (i64, Option<f64>, Option<i64>) {
    (record.time, record.exact_seconds, record.frame)
}

/// One thing's pose at the instant being gathered.
struct Placed {
    name: String,
    position: [f64; 3],
    rotation: [f64; 4],
    scale: Option<[f64; 3]>,
}

/// The family's [`Mapping`]: a recording of another family read as XREC events.
pub struct IntoXrec;

impl Mapping for IntoXrec {
    fn map<'a>(&self, source: Box<dyn Source + 'a>, loss: LossHandle) -> Box<dyn Source + 'a> {
        Box::new(ToXrec::new(source, loss))
    }
}

/// A source of any family, read as XREC events with Transforms.
pub struct ToXrec<'a> {
    inner: Box<dyn Source + 'a>,
    header: Header,
    names: HashMap<u64, String>,
    quaternions: Vec<(Vec<String>, Vec<String>)>,
    /// Icarus scalar parts gathered at the instant, in the order first met.
    gathered: Vec<(Thing, Placed)>,
    /// Where each Icarus thing was last: a part moves one component.
    last: HashMap<Thing, ([f64; 3], [f64; 4])>,
    particle_names: Vec<String>,
    /// The instant being gathered, and the frame value and exact seconds of its first
    /// record.
    step: Option<i64>,
    step_frame: Option<i64>,
    step_seconds: Option<f64>,
    queue: Queue,
    loss: LossHandle,
}

impl<'a> ToXrec<'a> {
    pub fn new(inner: Box<dyn Source + 'a>, loss: LossHandle) -> ToXrec<'a> {
        let source = inner.header();
        let mut header = mapped_header(source);
        header.add_channel(Channel::new(
            TRANSFORM_NAME,
            ChannelKind::Events,
            Composition::Independent,
        ));
        let mut mapped = ToXrec {
            names: crate::model::pose::entity_names(source),
            inner,
            header,
            quaternions: Vec::new(),
            gathered: Vec::new(),
            last: HashMap::new(),
            particle_names: Vec::new(),
            step: None,
            step_frame: None,
            step_seconds: None,
            queue: Queue::default(),
            loss,
        };
        mapped.follow_channels();
        mapped
    }

    /// The source's channels, after the Transform channel (ids shifted by one), as they
    /// become known.
    fn follow_channels(&mut self) {
        let channels = &self.inner.header().channels;
        for c in channels.get(self.quaternions.len()..).unwrap_or_default() {
            self.quaternions.push((wxyz_fields(c), xyzw_fields(c)));
            self.header.add_channel(c.clone());
        }
    }

    /// A Transform at the time of `from` (a record, or the instant gathered).
    fn transform(&self, from: (i64, Option<f64>, Option<i64>), placed: &Placed) -> Record {
        let (time, exact_seconds, frame) = from;
        let mut r = Record::new(time, TRANSFORM);
        r.exact_seconds = exact_seconds;
        r.frame = frame;
        r.entity = Some(Entity::Name(Arc::from(placed.name.as_str())));
        let array = |v: &[f64]| Value::Array(Array::flat(ArrayData::F64(v.to_vec())));
        r.values = vec![
            ("position".into(), array(&placed.position)),
            ("rotation".into(), array(&placed.rotation)),
            ("scale".into(), array(&placed.scale.unwrap_or([1.0; 3]))),
        ];
        r
    }

    /// The Transforms gathered from Icarus parts at the instant, queued.
    fn end_instant(&mut self) {
        let Some(time) = self.step else { return };
        for (key, placed) in std::mem::take(&mut self.gathered) {
            self.last.insert(key, (placed.position, placed.rotation));
            let r = self.transform((time, self.step_seconds, self.step_frame), &placed);
            self.queue.out.push_back(r);
        }
    }

    fn gather(&mut self, mut record: Record) {
        self.follow_channels();
        let c = record.channel as usize;
        let channel = self
            .inner
            .header()
            .channels
            .get(c)
            .map_or_else(|| format!("channel {c}"), |ch| ch.name.clone());
        if let Some((owner, part, v)) = flat_part(&record) {
            let key = Thing::Named(Arc::from(owner.as_str()));
            let at = match self.gathered.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    let (position, rotation) = self
                        .last
                        .get(&key)
                        .copied()
                        .unwrap_or(([0.0; 3], [0.0, 0.0, 0.0, 1.0]));
                    self.gathered.push((
                        key,
                        Placed {
                            name: owner,
                            position,
                            rotation,
                            scale: None,
                        },
                    ));
                    self.gathered.len() - 1
                }
            };
            let placed = &mut self.gathered[at].1;
            match part {
                Part::Position(i) => placed.position[i] = v,
                Part::Attitude(i) => placed.rotation[i] = v,
            }
            return;
        }
        let (wxyz, xyzw) = self.quaternions.get(c).cloned().unwrap_or_default();
        let mut pose = Pose::of(&record, &wxyz);
        for key in &xyzw {
            if let Some(q) = record.get(key).and_then(fixed::<4>) {
                pose.rotation = Some(q);
            }
        }
        if let Some(Value::Array(Array { data, .. })) = record.get(PARTICLES) {
            self.particles(&record, &channel, data.clone());
        }
        if !pose.is_empty() {
            let key = thing(record.channel, record.entity.as_ref(), &channel);
            let name = match (&key, &record.entity) {
                (Thing::Named(n), _) => n.to_string(),
                (_, Some(e)) => thing_name(e, &channel, &self.names),
                _ => channel.clone(),
            };
            let placed = Placed {
                name,
                position: pose.translation.unwrap_or([0.0; 3]),
                rotation: pose.rotation.unwrap_or([0.0, 0.0, 0.0, 1.0]),
                scale: record.get("scale").and_then(fixed::<3>),
            };
            let r = self.transform(at(&record), &placed);
            self.queue.out.push_back(r);
            let taken = |k: &str| {
                k == WORLD_POS
                    || k == POSITION
                    || k == "scale"
                    || wxyz.iter().any(|q| q == k)
                    || xyzw.iter().any(|q| q == k)
            };
            record.values.retain(|(k, _)| !taken(k));
        }
        record.values.retain(|(k, _)| k != PARTICLES);
        if !record.values.is_empty() {
            record.channel += 1;
            record.raw = None;
            self.queue.out.push_back(record);
        }
    }

    /// One Transform per particle, in metres.
    fn particles(&mut self, record: &Record, channel: &str, data: ArrayData) {
        if let Some(Value::Array(Array {
            data: ArrayData::Str(names),
            ..
        })) = record.get(PARTICLE_NAMES)
        {
            self.particle_names = names.clone();
        }
        let flat: Vec<f64> = match data {
            ArrayData::F32(v) => v.iter().map(|&x| x as f64).collect(),
            ArrayData::F64(v) => v,
            _ => return,
        };
        self.loss.borrow_mut().add(
            channel,
            PARTICLES,
            "into xrec.Transform events, one per particle: nm → m (×1e-9)",
        );
        for (i, p) in flat.chunks_exact(3).enumerate() {
            let name = self
                .particle_names
                .get(i)
                .map_or_else(|| format!("particle {i}"), |n| format!("particle {i} {n}"));
            let placed = Placed {
                name,
                position: [p[0] * 1e-9, p[1] * 1e-9, p[2] * 1e-9],
                rotation: [0.0, 0.0, 0.0, 1.0],
                scale: None,
            };
            let r = self.transform(at(record), &placed);
            self.queue.out.push_back(r);
        }
    }
}

impl Queued for ToXrec<'_> {
    fn queue(&mut self) -> &mut Queue {
        &mut self.queue
    }
    fn pull(&mut self) -> Option<Result<Record, ReadError>> {
        self.inner.next()
    }
    fn take(&mut self, record: Record) {
        if self.step != Some(record.time) {
            self.end_instant();
            self.step = Some(record.time);
            self.step_frame = record.frame;
            self.step_seconds = record.exact_seconds;
        }
        self.gather(record);
    }
    fn end(&mut self) {
        self.end_instant();
    }
}

stage_source!(ToXrec, own, queued);
