//! Bodies and components → `foxglove.FrameTransforms`: one child frame per entity under
//! `world`, updated by each record that carries its position or attitude ([`Pose`]).
//!
//! An entity's frame is its name, or the header's name for its number (Elodin's, shared by
//! its archetypes). A number the header does not name counts within its channel only (a
//! 3es sphere 1 is not mesh resource 1): its frame is `<channel>/<number>`.
//!
//! Foxglove's quaternions are (x, y, z, w). A frame's missing part holds at zero
//! translation or the identity rotation until a record gives it.

use foldhash::HashMap;

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

/// A child frame: its message as last written, kept to be written again with what a
/// record changes (rather than made anew, its name copied, for every record).
struct Frame {
    message: FrameTransforms,
}

impl Frame {
    fn new(child: String) -> Frame {
        let transform = FrameTransform {
            timestamp: None,
            parent_frame_id: PARENT.into(),
            child_frame_id: child,
            translation: Some(Vector3 {
                x: 0.0,
                y: 0.0,
                z: 0.0,
            }),
            rotation: Some(Quaternion {
                x: 0.0,
                y: 0.0,
                z: 0.0,
                w: 1.0,
            }),
        };
        Frame {
            message: FrameTransforms {
                transforms: vec![transform],
            },
        }
    }
}

pub struct Transforms {
    /// Per channel id: the names of its fields declared as scalar-first quaternions.
    quaternions: Vec<Vec<String>>,
    /// Names of numbered entities, when the header's metadata lists them (Elodin's).
    names: std::collections::HashMap<u64, String>,
    /// Child frames, one per name.
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
            of_entity: HashMap::default(),
            of_name: HashMap::default(),
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
                    frames.push(Frame::new(child));
                    frames.len() - 1
                });
                self.of_entity.insert(owner, i);
                i
            }
        };
        let frame = self.frames.get_mut(index)?;
        let transform = frame.message.transforms.first_mut()?;
        if let Some([x, y, z]) = translation {
            transform.translation = Some(Vector3 { x, y, z });
        }
        if let Some([x, y, z, w]) = rotation {
            transform.rotation = Some(Quaternion { x, y, z, w });
        }
        transform.timestamp = Some(stamp);
        Some(encode(&frame.message))
    }
}
