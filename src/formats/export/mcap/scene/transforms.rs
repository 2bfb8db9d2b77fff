//! Bodies and components → `foxglove.FrameTransforms`: one child frame per entity under
//! `world`, updated by each record that carries its position or attitude ([`Pose`]).
//!
//! An entity's frame is its name, or the header's name for its number (Elodin's, shared by
//! its archetypes). A number the header does not name counts within its channel only (a
//! 3es sphere 1 is not mesh resource 1): its frame is `<channel>/<number>`.
//!
//! Foxglove's quaternions are (x, y, z, w). A frame's missing part holds at zero
//! translation or the identity rotation until a record gives it.

use std::collections::HashMap;

use foxglove::messages::{FrameTransform, FrameTransforms, Quaternion, Timestamp, Vector3};

use super::encode;
use crate::model::pose::{entity_name, entity_names, wxyz_fields, Pose, POSITION, WORLD_POS};
use crate::model::{Channel, Entity, Header, Record};

/// What a frame belongs to: a named or header-numbered entity, or a number of a channel.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Owner {
    Entity(Entity),
    Numbered(u32, u64),
}

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
    of_entity: HashMap<Owner, usize>,
    of_name: HashMap<String, usize>,
}

/// Whether a record of `channel` holding `key` may carry a pose ([`Pose::of`]).
pub(super) fn reads(channel: &Channel, key: &str) -> bool {
    key == WORLD_POS || key == POSITION || wxyz_fields(channel).iter().any(|f| f == key)
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
        self.quaternions.push(wxyz_fields(channel));
    }

    pub fn record(
        &mut self,
        channel: &Channel,
        record: &Record,
        stamp: Timestamp,
    ) -> Option<Vec<u8>> {
        let entity = record.entity.as_ref()?;
        let quaternions = self.quaternions.get(record.channel as usize);
        let Pose {
            translation,
            rotation,
        } = Pose::of(record, quaternions.map_or(&[][..], Vec::as_slice));
        if translation.is_none() && rotation.is_none() {
            return None;
        }
        let owner = match entity {
            Entity::Id(id) if !self.names.contains_key(id) => Owner::Numbered(record.channel, *id),
            _ => Owner::Entity(entity.clone()),
        };
        let index = match self.of_entity.get(&owner) {
            Some(&i) => i,
            None => {
                let child = match owner {
                    Owner::Numbered(_, id) => format!("{}/{id}", channel.name),
                    Owner::Entity(_) => entity_name(entity, &self.names),
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
                self.of_entity.insert(owner, i);
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
