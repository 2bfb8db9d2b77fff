//! Foxglove 3D content beside the recording's own topics, from the model alone (channel
//! names, field names and semantics): NanoVer particles as `foxglove.PointCloud` on
//! `/particles`, bodies and components with a position or attitude as
//! `foxglove.FrameTransforms` on `/tf`, 3es shapes as one `foxglove.SceneUpdate` per frame
//! on `/3es/scene` and 3es point meshes as one `foxglove.PointCloud` per frame on
//! `/3es/points`. The channel's own topic keeps every value; what has no 3D counterpart is
//! counted in the loss report.

mod frame;
mod geometry;
mod meshes;
mod particles;
mod shapes;
mod transforms;

use foxglove::messages::{FrameTransforms, PointCloud, SceneUpdate, Timestamp};
use foxglove::{Encode, Schema};

use frame::Changes;

use crate::model::pose::{fixed, floats};
use crate::model::{Channel, FieldSpec, Header, Record, Value};
use crate::report::LossReport;

/// The channel of 3es Control/Reset records.
const RESET: &str = "3es/reset";
/// The channel whose `Frame` message ends a 3es frame.
const CONTROL: &str = "3es/control";

/// A Foxglove topic simrec writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Topic3d {
    Particles,
    Transforms,
    Scene,
    Points,
}

impl Topic3d {
    pub fn name(self) -> &'static str {
        match self {
            Topic3d::Particles => "/particles",
            Topic3d::Transforms => "/tf",
            Topic3d::Scene => "/3es/scene",
            Topic3d::Points => "/3es/points",
        }
    }

    /// The protobuf schema (a FileDescriptorSet) the foxglove crate ships for the topic.
    pub fn schema(self) -> Schema {
        let (schema, name) = match self {
            Topic3d::Particles | Topic3d::Points => {
                (PointCloud::get_schema(), "foxglove.PointCloud")
            }
            Topic3d::Transforms => (FrameTransforms::get_schema(), "foxglove.FrameTransforms"),
            Topic3d::Scene => (SceneUpdate::get_schema(), "foxglove.SceneUpdate"),
        };
        schema.unwrap_or_else(|| Schema::new(name, "protobuf", Vec::new()))
    }
}

/// The mappings, each watching the records it knows.
pub struct Scene {
    particles: particles::Particles,
    transforms: transforms::Transforms,
    shapes: shapes::Shapes,
    meshes: meshes::Meshes,
    /// What the 3es frame being read changes, written when it ends.
    changes: Changes,
    /// The log time of the last record, for the changes of a frame the recording cuts off.
    last: u64,
}

impl Scene {
    pub fn new(header: &Header) -> Scene {
        Scene {
            particles: particles::Particles::default(),
            transforms: transforms::Transforms::new(header),
            shapes: shapes::Shapes::default(),
            meshes: meshes::Meshes::default(),
            changes: Changes::default(),
            last: 0,
        }
    }

    /// A channel the writer added (in channel id order).
    pub fn add_channel(&mut self, channel: &Channel) {
        self.transforms.add_channel(channel);
    }

    /// Foxglove messages for `record` (of `channel`, logged at `log_time`), appended to `out`.
    pub fn record(
        &mut self,
        channel: &Channel,
        record: &Record,
        log_time: u64,
        out: &mut Vec<(Topic3d, Vec<u8>)>,
        loss: &mut LossReport,
    ) {
        let stamp = timestamp(log_time);
        self.last = log_time;
        if let Some(m) = self.particles.record(channel, record, stamp) {
            out.push((Topic3d::Particles, m));
        }
        if let Some(m) = self.transforms.record(channel, record, stamp) {
            out.push((Topic3d::Transforms, m));
        }
        let changes = &mut self.changes;
        self.shapes.record(channel, record, stamp, changes, loss);
        self.meshes.record(channel, record, stamp, changes, loss);
        if channel.name == RESET {
            // A 3es Reset clears the scene (spec §6.2): every entity on the topic goes.
            self.shapes.reset();
            self.meshes.reset();
            changes.clear(stamp);
        }
        let frame_end = matches!(record.get("message"), Some(Value::Str(m)) if m == "Frame");
        if channel.name == CONTROL && frame_end {
            changes.end(stamp, out);
        }
    }

    /// A record [`reads`] says nothing of, logged at `log_time`, given in place of its
    /// record: the time is the one a cut-off frame's changes are written at.
    pub fn skip(&mut self, log_time: u64) {
        self.last = log_time;
    }

    /// The changes of a frame that never ended, and the log time to write them at.
    pub fn finish(&mut self, out: &mut Vec<(Topic3d, Vec<u8>)>) -> u64 {
        self.changes.end(timestamp(self.last), out);
        self.last
    }

    /// What the user should know about the 3D topics (nothing was lost by it).
    pub fn notes(&self) -> Vec<String> {
        self.particles.notes()
    }
}

/// Whether a record of `channel` holding a value under `key` may draw or change the scene:
/// when not, [`Scene::record`] of it only notes its time (a frame writer gives such
/// records to [`Scene::skip`] instead, `frames.rs`).
pub fn reads(channel: &Channel, key: &str) -> bool {
    channel.name.starts_with(shapes::PREFIX)
        || particles::reads(channel, key)
        || transforms::reads(channel, key)
}

/// Whether a field's values are all drawn on a 3D topic (NanoVer's positions on
/// `/particles`), so that the topic of its channel need not carry them again.
pub fn carried(spec: &FieldSpec) -> bool {
    spec.name == particles::POSITIONS
}

/// Whether a record's value is one [`carried`] on a 3D topic.
pub fn carries(key: &str, value: &Value) -> bool {
    key == particles::POSITIONS && matches!(value, Value::Array(_))
}

fn timestamp(log_time: u64) -> Timestamp {
    let sec = u32::try_from(log_time / 1_000_000_000).unwrap_or(u32::MAX);
    Timestamp::new(sec, (log_time % 1_000_000_000) as u32)
}

/// A protobuf message's bytes.
fn encode(message: &impl prost::Message) -> Vec<u8> {
    message.encode_to_vec()
}
