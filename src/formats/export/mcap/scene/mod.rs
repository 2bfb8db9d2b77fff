//! Foxglove 3D content beside the JSON topics, from the model alone (channel names, field
//! names and semantics): NanoVer particles as `foxglove.PointCloud` on `/particles`, bodies
//! and components with a position or attitude as `foxglove.FrameTransforms` on `/tf`, 3es
//! shapes as `foxglove.SceneUpdate` on `/3es/scene`. The JSON topic of every channel keeps
//! every value; what has no 3D counterpart is counted in the loss report.

mod geometry;
mod meshes;
mod particles;
mod shapes;
mod transforms;

use foxglove::messages::scene_entity_deletion::Type as DeletionType;
use foxglove::messages::{
    FrameTransforms, PointCloud, SceneEntityDeletion, SceneUpdate, Timestamp,
};
use foxglove::{Encode, Schema};

use crate::model::pose::{fixed, floats};
use crate::model::{Channel, FieldSpec, Header, Record, Value};
use crate::report::LossReport;

/// The channel of 3es Control/Reset records.
const RESET: &str = "3es/reset";

/// A Foxglove topic simrec writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Topic3d {
    Particles,
    Transforms,
    Scene,
}

impl Topic3d {
    pub fn name(self) -> &'static str {
        match self {
            Topic3d::Particles => "/particles",
            Topic3d::Transforms => "/tf",
            Topic3d::Scene => "/3es/scene",
        }
    }

    /// The protobuf schema (a FileDescriptorSet) the foxglove crate ships for the topic.
    pub fn schema(self) -> Schema {
        let (schema, name) = match self {
            Topic3d::Particles => (PointCloud::get_schema(), "foxglove.PointCloud"),
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
}

impl Scene {
    pub fn new(header: &Header) -> Scene {
        Scene {
            particles: particles::Particles::default(),
            transforms: transforms::Transforms::new(header),
            shapes: shapes::Shapes::default(),
            meshes: meshes::Meshes::default(),
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
        if let Some(m) = self.particles.record(channel, record, stamp) {
            out.push((Topic3d::Particles, m));
        }
        if let Some(m) = self.transforms.record(record, stamp) {
            out.push((Topic3d::Transforms, m));
        }
        if let Some(m) = self.shapes.record(channel, record, stamp, loss) {
            out.push((Topic3d::Scene, m));
        }
        if let Some(m) = self.meshes.record(channel, record, stamp, loss) {
            out.push((Topic3d::Scene, m));
        }
        if channel.name == RESET {
            // A 3es Reset clears the scene (spec §6.2): every entity on the topic goes.
            self.shapes.reset();
            self.meshes.reset();
            out.push((
                Topic3d::Scene,
                encode(&SceneUpdate {
                    deletions: vec![SceneEntityDeletion {
                        timestamp: Some(stamp),
                        r#type: DeletionType::All as i32,
                        id: String::new(),
                    }],
                    entities: Vec::new(),
                }),
            ));
        }
    }

    /// What the user should know about the 3D topics (nothing was lost by it).
    pub fn notes(&self) -> Vec<String> {
        self.particles.notes()
    }
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
