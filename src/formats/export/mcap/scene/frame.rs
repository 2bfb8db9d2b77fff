//! The changes of one 3es frame, merged: every shape and mesh entity drawn or deleted in
//! the frame goes into one `foxglove.SceneUpdate`, and the points of the point meshes alive
//! into one `foxglove.PointCloud`, both written when the frame ends (`3es/control` `Frame`)
//! — a reader gets one message per frame, not one per shape.
//!
//! Foxglove applies an update's deletions before its entities, so merging keeps 3es's
//! order: an entity destroyed in its frame leaves the pending entities, and a transient of
//! the frame before (whose id a new transient may reuse) only adds its deletion.

use std::collections::BTreeMap;

use foldhash::{HashMap, HashSet};

use bytes::Bytes;
use foxglove::messages::packed_element_field::NumericType;
use foxglove::messages::scene_entity_deletion::Type as DeletionType;
use foxglove::messages::{PointCloud, SceneEntity, SceneEntityDeletion, SceneUpdate, Timestamp};

use super::particles::field;
use super::{encode, Topic3d};

/// A point of a point mesh, in world coordinates, with its colour (RGBA bytes).
pub type Point = ([f64; 3], [u8; 4]);

const FRAME: &str = "world";

#[derive(Default)]
pub struct Changes {
    /// The deletions of the frame's update; its entities are `drawn`.
    update: SceneUpdate,
    /// The entities of the frame's update in the order last drawn: an entity drawn again
    /// leaves its place (`None`) for the end, found by id without a scan of the frame's
    /// entities (docs/performance.md, "MCAP, protobuf").
    drawn: Vec<Option<SceneEntity>>,
    at: HashMap<String, usize>,
    /// The points of each live point mesh, by entity id, in id order.
    clouds: BTreeMap<String, Vec<Point>>,
    /// Entity ids whose points were given in this frame (a transient of the frame before
    /// with the same id no longer owns them).
    fresh: HashSet<String>,
    clouds_changed: bool,
}

impl Changes {
    /// An entity drawn (again): its primitives, and its points (point meshes).
    pub fn draw(&mut self, entity: SceneEntity, points: Vec<Point>) {
        let id = entity.id.clone();
        if !points.is_empty() {
            self.clouds.insert(id.clone(), points);
            self.fresh.insert(id.clone());
            self.clouds_changed = true;
        } else if self.clouds.remove(&id).is_some() {
            self.clouds_changed = true;
        }
        self.undraw(&id);
        if has_primitives(&entity) {
            self.at.insert(id, self.drawn.len());
            self.drawn.push(Some(entity));
        }
    }

    /// The entity `id` leaves the frame's update.
    fn undraw(&mut self, id: &str) {
        if let Some(i) = self.at.remove(id) {
            self.drawn[i] = None;
        }
    }

    /// An entity deleted in this frame (a Destroy): drawn earlier in the frame, it is not
    /// drawn at all.
    pub fn delete(&mut self, stamp: Timestamp, id: String) {
        self.undraw(&id);
        self.fresh.remove(&id);
        if self.clouds.remove(&id).is_some() {
            self.clouds_changed = true;
        }
        self.update.deletions.push(deletion(stamp, id));
    }

    /// A transient entity of the frame before goes; one of this frame may have its id.
    pub fn expire(&mut self, stamp: Timestamp, id: String) {
        if !self.fresh.contains(&id) && self.clouds.remove(&id).is_some() {
            self.clouds_changed = true;
        }
        self.update.deletions.push(deletion(stamp, id));
    }

    /// A 3es Reset: every entity goes, and what the frame drew before it.
    pub fn clear(&mut self, stamp: Timestamp) {
        self.drawn.clear();
        self.at.clear();
        self.update.deletions.clear();
        self.update.deletions.push(SceneEntityDeletion {
            timestamp: Some(stamp),
            r#type: DeletionType::All as i32,
            id: String::new(),
        });
        self.clouds_changed |= !self.clouds.is_empty();
        self.clouds.clear();
        self.fresh.clear();
    }

    /// The frame's messages, if it changed anything: one SceneUpdate, and the point cloud
    /// of every live point mesh (empty when the last one went).
    pub fn end(&mut self, stamp: Timestamp, out: &mut Vec<(Topic3d, Vec<u8>)>) {
        let mut update = std::mem::take(&mut self.update);
        update.entities = self.drawn.drain(..).flatten().collect();
        self.at.clear();
        if !update.entities.is_empty() || !update.deletions.is_empty() {
            out.push((Topic3d::Scene, encode(&update)));
        }
        if std::mem::take(&mut self.clouds_changed) {
            out.push((Topic3d::Points, encode(&self.cloud(stamp))));
        }
        self.fresh.clear();
    }

    /// x, y, z float64 (the vertices after their transforms), then red, green, blue, alpha.
    fn cloud(&self, stamp: Timestamp) -> PointCloud {
        let mut fields = vec![
            field("x", 0, NumericType::Float64),
            field("y", 8, NumericType::Float64),
            field("z", 16, NumericType::Float64),
        ];
        for (i, name) in ["red", "green", "blue", "alpha"].iter().enumerate() {
            fields.push(field(name, 24 + i as u32, NumericType::Uint8));
        }
        let n: usize = self.clouds.values().map(Vec::len).sum();
        let mut data = Vec::with_capacity(n * 28);
        for (p, rgba) in self.clouds.values().flatten() {
            for x in p {
                data.extend_from_slice(&x.to_le_bytes());
            }
            data.extend_from_slice(rgba);
        }
        PointCloud {
            timestamp: Some(stamp),
            frame_id: FRAME.into(),
            pose: None,
            point_stride: 28,
            fields,
            data: Bytes::from(data),
        }
    }
}

pub fn deletion(stamp: Timestamp, id: String) -> SceneEntityDeletion {
    SceneEntityDeletion {
        timestamp: Some(stamp),
        r#type: DeletionType::MatchingId as i32,
        id,
    }
}

fn has_primitives(e: &SceneEntity) -> bool {
    !(e.arrows.is_empty()
        && e.cubes.is_empty()
        && e.spheres.is_empty()
        && e.cylinders.is_empty()
        && e.lines.is_empty()
        && e.triangles.is_empty()
        && e.texts.is_empty()
        && e.models.is_empty())
}
