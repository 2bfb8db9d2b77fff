//! Any recording → 3es's model (docs/formats/mapping.md, "→ 3es"): shapes a 3es viewer
//! plays, one 3es frame per instant of the source.
//!
//! - Everything with a position is a persistent shape, created when first met and updated
//!   whenever a record moves or turns it: a box when it has an attitude (an Elodin body, an
//!   Icarus component with a `Quat`, an XREC transform), else a sphere. Positions stay in
//!   metres (3es world units), in float64 when the source's are.
//! - NanoVer particles are a point cloud: a transient MeshShape of points in each frame,
//!   nanometres to metres (×1e-9), float32.
//! - Each source channel with shapes is a category named after it, so the viewer can hide it.
//! - A frame ends at every instant (whole microseconds: the capture's time unit is 1 µs),
//!   lasting until the next; a source starting after 0 begins with an empty frame.
//! - Every other value has no 3es counterpart and is counted as lost.

use std::collections::HashMap;

use super::encode::DOUBLE_PRECISION;
use crate::formats::mapping::queued::{Queue, Queued};
use crate::formats::mapping::{flat_part, thing, Part, Tally, Thing};
use crate::formats::mapping::{LossHandle, Mapping};
use crate::formats::{ReadError, Source};
use crate::model::pose::{fixed, wxyz_fields, xyzw_fields, Pose, POSITION, WORLD_POS};
use crate::model::{
    Array, ArrayData, Channel, ChannelKind, Composition, Entity, Header, Record, Value, MAPPED_FROM,
};

const CONTROL: u32 = 0;
const CATEGORY: u32 = 1;
const SPHERE: u32 = 2;
const BOX: u32 = 3;
const MESH_SHAPE: u32 = 4;
const CHANNELS: [&str; 5] = [
    "3es/control",
    "3es/category",
    "3es/sphere",
    "3es/box",
    "3es/mesh_shape",
];

/// Microseconds per 3es time unit.
const TIME_UNIT_US: u64 = 1;
/// The last frame's length, in time units (30 Hz).
const DEFAULT_FRAME_TIME: u64 = 33_333;
/// ObjectFlag UpdateMode and its components (spec §6.7).
const UPDATE_MODE: u64 = 512;
const UPDATE_POSITION: u64 = 1024;
const UPDATE_ROTATION: u64 = 2048;
/// A shape's size (scale), in metres.
const SIZE: f64 = 0.2;
/// Vertices per MeshShape Data message: 12 bytes each keeps it within a packet.
const VERTICES_PER_MESSAGE: usize = 4096;
/// The loss reason of a value that has no 3es counterpart.
const DROPPED: &str = "no 3es counterpart: dropped";
/// MeshShape topologies (spec §6.8).
const POINTS: u64 = 0;
const LINES: u64 = 1;
/// NanoVer's bonds: pairs of particle indices.
const BONDS: &str = "bond.pairs";
/// NanoVer's particle positions, nm.
const PARTICLES: &str = "particle.positions";
/// One colour per category, in turn (RGBA).
const PALETTE: [[u8; 4]; 8] = [
    [230, 25, 75, 255],
    [60, 180, 75, 255],
    [0, 130, 200, 255],
    [245, 130, 48, 255],
    [145, 30, 180, 255],
    [70, 240, 240, 255],
    [240, 50, 230, 255],
    [210, 245, 60, 255],
];

/// A shape made for one thing.
struct Shape {
    id: u32,
    /// Its channel: [`SPHERE`] or [`BOX`].
    kind: u32,
    /// The source channel whose category it is in.
    channel: u32,
    /// Attributes in float64.
    double: bool,
    /// Where it is, in metres, and its rotation (x, y, z, w).
    position: [f64; 3],
    rotation: [f64; 4],
    /// Its Create was written.
    created: bool,
    /// Placed or turned at the instant being gathered.
    moved: bool,
    turned: bool,
}

/// The family's [`Mapping`]: a recording of another family read as 3es shapes and frames.
pub struct IntoTes;

impl Mapping for IntoTes {
    fn map<'a>(&self, source: Box<dyn Source + 'a>, loss: LossHandle) -> Box<dyn Source + 'a> {
        Box::new(ToTes::new(source, loss))
    }
}

/// A source of any family, read as 3es shapes and frames.
pub struct ToTes<'a> {
    inner: Box<dyn Source + 'a>,
    header: Header,
    /// Per source channel: its scalar-first and scalar-last quaternion fields.
    quaternions: Vec<(Vec<String>, Vec<String>)>,
    /// Per source channel: whether its category was written.
    categories: Vec<bool>,
    shapes: HashMap<Thing, Shape>,
    /// The shapes placed at the instant being gathered, in the order first placed.
    dirty: Vec<Thing>,
    /// The instant being gathered, in whole microseconds.
    step: Option<i64>,
    /// NanoVer's particles at the latest instant, metres.
    cloud: Option<Vec<f32>>,
    /// NanoVer's bonds, as last given.
    bonds: Vec<(u32, u32)>,
    queue: Queue,
    /// Values with no 3es counterpart ([`DROPPED`]).
    dropped: Tally,
    loss: LossHandle,
}

impl<'a> ToTes<'a> {
    pub fn new(inner: Box<dyn Source + 'a>, loss: LossHandle) -> ToTes<'a> {
        let source = inner.header();
        let mut header = Header::new("3es", "0.4");
        header.origin = source.origin.clone();
        header
            .metadata
            .insert(MAPPED_FROM.into(), source.format.clone().into());
        header
            .metadata
            .insert("time_unit_us".into(), TIME_UNIT_US.into());
        header
            .metadata
            .insert("default_frame_time".into(), DEFAULT_FRAME_TIME.into());
        // Unity's axes (XREC): x right, y up, z forward, left-handed = 3es frame 7 (XZY);
        // every other family is right-handed with z up = frame 0 (XYZ).
        let frame = if source.format == "xrec" { 7 } else { 0 };
        header
            .metadata
            .insert("coordinate_frame".into(), frame.into());
        for name in CHANNELS {
            header.add_channel(Channel::new(
                name,
                ChannelKind::Events,
                Composition::Independent,
            ));
        }
        ToTes {
            inner,
            header,
            quaternions: Vec::new(),
            categories: Vec::new(),
            shapes: HashMap::new(),
            dirty: Vec::new(),
            step: None,
            cloud: None,
            bonds: Vec::new(),
            queue: Queue::default(),
            dropped: Tally::default(),
            loss,
        }
    }

    /// The source's channels known so far, with their quaternion fields.
    fn follow_channels(&mut self) {
        let channels = &self.inner.header().channels;
        while self.quaternions.len() < channels.len() {
            let c = &channels[self.quaternions.len()];
            self.quaternions.push((wxyz_fields(c), xyzw_fields(c)));
            self.categories.push(false);
        }
    }

    /// Ends the instant gathered: its shape messages, the point cloud, then a Frame lasting
    /// until `next` (µs; the default frame time at the end).
    fn end_instant(&mut self, next: Option<i64>) {
        let Some(step) = self.step else { return };
        let time = step * 1000;
        self.shape_messages(time);
        if let Some(cloud) = &self.cloud {
            let mut parts = mesh(time, POINTS, cloud);
            let n = (cloud.len() / 3) as u32;
            // Each bond a line between its two particles' positions.
            let ends: Vec<f32> = self
                .bonds
                .iter()
                .filter(|(a, b)| *a < n && *b < n)
                .flat_map(|&(a, b)| {
                    let (a, b) = (a as usize * 3, b as usize * 3);
                    cloud[a..a + 3].iter().chain(&cloud[b..b + 3]).copied()
                })
                .collect();
            if !ends.is_empty() {
                parts.extend(mesh(time, LINES, &ends));
            }
            self.queue.out.extend(parts);
        }
        let length = match next {
            Some(next) => (next - step) as u64 / TIME_UNIT_US,
            None => 0,
        };
        let value32 = u32::try_from(length).unwrap_or_else(|_| {
            self.loss.borrow_mut().add(
                "3es/control",
                "value32",
                "a frame longer than 2³² µs: cut to 71 minutes",
            );
            u32::MAX - 1
        });
        let frame = message(
            time,
            CONTROL,
            "Frame",
            vec![("value32", Value::UInt(value32 as u64))],
        );
        self.queue.out.push_back(frame);
    }

    /// The name of source channel `c`.
    fn header_name(&self, c: u32) -> String {
        self.inner
            .header()
            .channels
            .get(c as usize)
            .map_or_else(|| format!("channel {c}"), |ch| ch.name.clone())
    }

    /// Takes one source record into the instant being gathered.
    fn gather(&mut self, record: Record) {
        self.follow_channels();
        let c = record.channel as usize;
        let channel = self.header_name(record.channel);
        if record.time % 1000 != 0 {
            self.loss
                .borrow_mut()
                .add(&channel, "time", "time truncated to whole microseconds");
        }
        if let Some((owner, part, v)) = flat_part(&record) {
            // An Icarus CSV/HDF5 position or attitude component of the shape of NAME.
            self.place(
                Thing::Named(owner.into()),
                record.channel,
                Pose::default(),
                Some((part, v)),
                false,
            );
            return;
        }
        let (wxyz, xyzw) = self.quaternions.get(c).cloned().unwrap_or_default();
        let mut pose = Pose::of(&record, &wxyz);
        let mut double = false;
        for (key, value) in &record.values {
            let used = if key == PARTICLES {
                self.particles(&channel, value)
            } else if key == BONDS {
                self.bonds(value)
            } else if key == WORLD_POS || key == POSITION {
                double |= is_f64(value);
                pose.translation.is_some()
            } else if wxyz.contains(key) {
                pose.rotation.is_some()
            } else if xyzw.contains(key) {
                if let Some(q) = fixed::<4>(value) {
                    pose.rotation = Some(q);
                }
                pose.rotation.is_some()
            } else {
                false
            };
            if !used {
                self.dropped.add(record.channel, key);
            }
        }
        if pose.is_empty() {
            return;
        }
        let key = thing(record.channel, record.entity.as_ref(), &channel);
        self.place(key, record.channel, pose, None, double);
    }

    /// NanoVer's particle positions as the frame's point cloud; whether they were taken.
    fn particles(&mut self, channel: &str, value: &Value) -> bool {
        let Value::Array(Array { data, .. }) = value else {
            return false;
        };
        let cloud: Vec<f32> = match data {
            ArrayData::F32(v) => v.iter().map(|&x| (x as f64 * 1e-9) as f32).collect(),
            ArrayData::F64(v) => v.iter().map(|&x| (x * 1e-9) as f32).collect(),
            _ => return false,
        };
        self.loss.borrow_mut().add(
            channel,
            PARTICLES,
            "into a 3es point cloud (MeshShape points): nm → m (×1e-9), as float32",
        );
        self.cloud = Some(cloud);
        true
    }

    /// NanoVer's bonds, drawn as lines between their particles in each frame; whether they
    /// were taken.
    fn bonds(&mut self, value: &Value) -> bool {
        let Some(flat) = crate::model::pose::floats(value) else {
            return false;
        };
        self.bonds = flat
            .chunks_exact(2)
            .map(|p| (p[0] as u32, p[1] as u32))
            .collect();
        true
    }

    /// Creates, moves or turns the shape of `key` (of source channel `c`): to `pose`, or one
    /// component of its position or attitude (`part`). The instant's messages are made when it ends, one per
    /// shape, with where the shape ended up.
    fn place(&mut self, key: Thing, c: u32, pose: Pose, part: Option<(Part, f64)>, double: bool) {
        let shape = match self.shapes.get_mut(&key) {
            Some(shape) => shape,
            None => {
                let id = self.shapes.len() as u32 + 1;
                self.shapes.entry(key.clone()).or_insert(Shape {
                    id,
                    kind: SPHERE,
                    channel: c,
                    double,
                    position: [0.0; 3],
                    rotation: [0.0, 0.0, 0.0, 1.0],
                    created: false,
                    moved: false,
                    turned: false,
                })
            }
        };
        match part {
            Some((Part::Position(i), v)) => {
                shape.position[i] = v;
                shape.moved = true;
            }
            Some((Part::Attitude(i), v)) => {
                shape.rotation[i] = v;
                shape.turned = true;
            }
            None => {}
        }
        if let Some(p) = pose.translation {
            shape.position = p;
            shape.moved = true;
        }
        if let Some(r) = pose.rotation {
            shape.rotation = r;
            shape.turned = true;
        }
        if shape.turned && !shape.created {
            // Made a box when it has an attitude by the end of its first instant.
            shape.kind = BOX;
        }
        if !self.dirty.contains(&key) {
            self.dirty.push(key);
        }
    }

    /// The Create or Update of every shape placed at this instant, at `time`; a shape's
    /// first Create follows its channel's category.
    fn shape_messages(&mut self, time: i64) {
        for key in std::mem::take(&mut self.dirty) {
            let Some(shape) = self.shapes.get_mut(&key) else {
                continue;
            };
            let c = shape.channel as usize;
            let category = (c as u64 + 1).min(u16::MAX as u64);
            let double = shape.double;
            let mut values = vec![("object_id", Value::UInt(shape.id as u64))];
            let name = if shape.created {
                let mut flags = UPDATE_MODE;
                if shape.moved {
                    flags |= UPDATE_POSITION;
                    values.push(("position", vector(&shape.position, double)));
                }
                if shape.turned {
                    flags |= UPDATE_ROTATION;
                    values.push(("rotation", vector(&shape.rotation, double)));
                }
                if double {
                    flags |= DOUBLE_PRECISION as u64;
                }
                values.push(("flags", Value::UInt(flags)));
                "Update"
            } else {
                let colour = PALETTE[c % PALETTE.len()];
                values.extend([
                    ("category", Value::UInt(category)),
                    (
                        "flags",
                        Value::UInt(if double { DOUBLE_PRECISION as u64 } else { 0 }),
                    ),
                    (
                        "colour",
                        Value::Array(Array::flat(ArrayData::U8(colour.to_vec()))),
                    ),
                    ("position", vector(&shape.position, double)),
                    ("rotation", vector(&shape.rotation, double)),
                    ("scale", vector(&[SIZE; 3], double)),
                ]);
                "Create"
            };
            shape.created = true;
            shape.moved = false;
            shape.turned = false;
            let (id, kind) = (shape.id, shape.kind);
            if name == "Create" && !self.categories.get(c).copied().unwrap_or(true) {
                self.categories[c] = true;
                let channel = self
                    .inner
                    .header()
                    .channels
                    .get(c)
                    .map_or_else(|| format!("channel {c}"), |ch| ch.name.clone());
                self.queue.out.push_back(message(
                    time,
                    CATEGORY,
                    "Name",
                    vec![
                        ("category_id", Value::UInt(category)),
                        ("parent_id", Value::UInt(0)),
                        ("default_active", Value::Bool(true)),
                        ("name", Value::Str(channel)),
                    ],
                ));
            }
            let mut record = message(time, kind, name, values);
            record.entity = Some(Entity::Id(id as u64));
            self.queue.out.push_back(record);
        }
    }
}

/// A transient MeshShape of `vertices` (x, y, z each) drawn as `topology`: its Create, its
/// vertex Data in messages of at most [`VERTICES_PER_MESSAGE`], and the End.
fn mesh(time: i64, topology: u64, vertices: &[f32]) -> Vec<Record> {
    let create = message(
        time,
        MESH_SHAPE,
        "Create",
        vec![
            ("object_id", Value::UInt(0)),
            ("category", Value::UInt(0)),
            ("flags", Value::UInt(0)),
            ("vertex_count", Value::UInt((vertices.len() / 3) as u64)),
            ("index_count", Value::UInt(0)),
            ("topology", Value::UInt(topology)),
        ],
    );
    let mut parts = vec![create];
    for (k, chunk) in vertices.chunks(VERTICES_PER_MESSAGE * 3).enumerate() {
        parts.push(message(
            time,
            MESH_SHAPE,
            "Data",
            vec![
                ("object_id", Value::UInt(0)),
                ("data_type", Value::UInt(0)),
                ("offset", Value::UInt((k * VERTICES_PER_MESSAGE) as u64)),
                (
                    "data",
                    Value::Array(Array::flat(ArrayData::F32(chunk.to_vec()))),
                ),
            ],
        ));
    }
    parts.push(message(
        time,
        MESH_SHAPE,
        "Data",
        vec![
            ("object_id", Value::UInt(0)),
            ("data_type", Value::UInt(0xFFFF)),
        ],
    ));
    parts
}

/// A message of 3es channel `channel` at `time`.
fn message(time: i64, channel: u32, name: &str, values: Vec<(&str, Value)>) -> Record {
    let message = ("message", Value::Str(name.into()));
    Record::with_values(time, channel, std::iter::once(message).chain(values))
}

/// Numbers as an attribute array, in the shape's precision.
fn vector(v: &[f64], double: bool) -> Value {
    let data = if double {
        ArrayData::F64(v.to_vec())
    } else {
        ArrayData::F32(v.iter().map(|&x| x as f32).collect())
    };
    Value::Array(Array::flat(data))
}

fn is_f64(value: &Value) -> bool {
    matches!(
        value,
        Value::Array(Array {
            data: ArrayData::F64(_),
            ..
        }) | Value::Float(_)
    ) || matches!(value, Value::List(items) if items.iter().any(|v| matches!(v, Value::Float(_))))
}

impl Queued for ToTes<'_> {
    fn queue(&mut self) -> &mut Queue {
        &mut self.queue
    }
    fn pull(&mut self) -> Option<Result<Record, ReadError>> {
        self.inner.next()
    }
    fn take(&mut self, record: Record) {
        let us = record.time.div_euclid(1000);
        match self.step {
            Some(step) if step == us => {}
            Some(step) if us < step => {
                // 3es time only moves on (frames have durations): a record from before the
                // instant is shown in it.
                let channel = self.header_name(record.channel);
                self.loss.borrow_mut().add(
                    &channel,
                    "time",
                    "earlier than the record before it: shown in that record's frame",
                );
            }
            Some(_) => {
                self.end_instant(Some(us));
                self.step = Some(us);
            }
            None => {
                if us > 0 {
                    // An empty first frame up to the source's first instant.
                    self.step = Some(0);
                    self.end_instant(Some(us));
                }
                self.step = Some(us);
            }
        }
        self.gather(record);
    }
    fn end(&mut self) {
        self.end_instant(None);
        let header = self.inner.header();
        self.dropped.report(header, DROPPED, &self.loss);
    }
}

stage_source!(ToTes, own, queued);
