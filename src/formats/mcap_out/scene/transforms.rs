//! Bodies and components → `foxglove.FrameTransforms`: one child frame per entity under
//! `world`, updated by each record that carries its position or attitude.
//!
//! - `world_pos` (7 numbers: Elodin's spatial transform) is a scalar-last quaternion
//!   `[qx, qy, qz, qw]` then the position `[x, y, z]`;
//! - a field declared with semantic [`QUATERNION_WXYZ`] (4 numbers: an Icarus `Quat`) is
//!   a scalar-first quaternion `[w, x, y, z]`;
//! - a field named `position` (3 numbers) is the position.
//!
//! Foxglove's quaternions are (x, y, z, w). A frame's missing part holds at zero
//! translation or the identity rotation until a record gives it.

use std::collections::HashMap;

use foxglove::messages::{FrameTransform, FrameTransforms, Quaternion, Timestamp, Vector3};
use serde_json::Value as Json;

use super::{encode, fixed};
use crate::model::{Channel, Entity, Header, Record, QUATERNION_WXYZ};

const WORLD_POS: &str = "world_pos";
const POSITION: &str = "position";
pub const PARENT: &str = "world";

struct Frame {
    child: String,
    translation: [f64; 3],
    rotation: [f64; 4],
}

pub struct Transforms {
    /// Per channel id: the names of its fields declared as scalar-first quaternions.
    quaternions: Vec<Vec<String>>,
    /// Names of numbered entities, when the header's metadata lists them (Elodin's).
    names: HashMap<u64, String>,
    /// Child frames: name, translation and rotation (x, y, z, w); one per name.
    frames: Vec<Frame>,
    /// The frame of each entity met (entities of one name share it), and of each name.
    of_entity: HashMap<Entity, usize>,
    of_name: HashMap<String, usize>,
}

impl Transforms {
    pub fn new(header: &Header) -> Transforms {
        Transforms {
            quaternions: Vec::new(),
            names: entity_names(header),
            frames: Vec::new(),
            of_entity: HashMap::new(),
            of_name: HashMap::new(),
        }
    }

    pub fn add_channel(&mut self, channel: &Channel) {
        self.quaternions.push(
            channel
                .fields
                .iter()
                .filter(|f| f.semantic.as_deref() == Some(QUATERNION_WXYZ))
                .map(|f| f.name.clone())
                .collect(),
        );
    }

    pub fn record(&mut self, record: &Record, stamp: Timestamp) -> Option<Vec<u8>> {
        let entity = record.entity.as_ref()?;
        let quaternions = self.quaternions.get(record.channel as usize);
        let mut translation = None;
        let mut rotation = None;
        for (key, value) in &record.values {
            if key == WORLD_POS {
                if let Some([qx, qy, qz, qw, x, y, z]) = fixed::<7>(value) {
                    rotation = Some([qx, qy, qz, qw]);
                    translation = Some([x, y, z]);
                }
            } else if key == POSITION {
                if let Some(p) = fixed::<3>(value) {
                    translation = Some(p);
                }
            } else if quaternions.is_some_and(|q| q.iter().any(|n| n == key)) {
                if let Some([w, x, y, z]) = fixed::<4>(value) {
                    rotation = Some([x, y, z, w]);
                }
            }
        }
        if translation.is_none() && rotation.is_none() {
            return None;
        }
        let index = match self.of_entity.get(entity) {
            Some(&i) => i,
            None => {
                let child = match entity {
                    Entity::Name(name) => name.to_string(),
                    Entity::Id(id) => self
                        .names
                        .get(id)
                        .cloned()
                        .unwrap_or_else(|| format!("entity {id}")),
                };
                let frames = &mut self.frames;
                let i = *self.of_name.entry(child.clone()).or_insert_with(|| {
                    frames.push(Frame {
                        child,
                        translation: [0.0; 3],
                        rotation: [0.0, 0.0, 0.0, 1.0],
                    });
                    frames.len() - 1
                });
                self.of_entity.insert(entity.clone(), i);
                i
            }
        };
        let frame = self.frames.get_mut(index)?;
        if let Some(t) = translation {
            frame.translation = t;
        }
        if let Some(r) = rotation {
            frame.rotation = r;
        }
        let ([x, y, z], [qx, qy, qz, qw]) = (frame.translation, frame.rotation);
        let child = frame.child.clone();
        Some(encode(&FrameTransforms {
            transforms: vec![FrameTransform {
                timestamp: Some(stamp),
                parent_frame_id: PARENT.into(),
                child_frame_id: child,
                translation: Some(Vector3 { x, y, z }),
                rotation: Some(Quaternion {
                    x: qx,
                    y: qy,
                    z: qz,
                    w: qw,
                }),
            }],
        }))
    }
}

/// `{"entities": {"0": "Ball", ...}}` under any key of the header's metadata (the Elodin
/// reader lists its entity names so).
fn entity_names(header: &Header) -> HashMap<u64, String> {
    let mut names = HashMap::new();
    for value in header.metadata.values() {
        if let Some(Json::Object(entities)) = value.get("entities") {
            for (id, name) in entities {
                if let (Ok(id), Json::String(name)) = (id.parse::<u64>(), name) {
                    names.insert(id, name.clone());
                }
            }
        }
    }
    names
}
