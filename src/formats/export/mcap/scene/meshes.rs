//! 3es meshes → `foxglove.SceneUpdate`: mesh shapes (`3es/mesh_shape`), mesh resources
//! (`3es/mesh`) and the mesh sets that draw them (`3es/mesh_set`). The primitives come from
//! [`geometry`](super::geometry); this module follows their lives.
//!
//! - A mesh shape's vertex data comes in `Data` messages after its `Create`: it is drawn at
//!   its `End` message, as entity `mesh_shape/<id>` (a transient one, id 0, as
//!   `mesh_shape/0/<n>`, deleted when the next frame ends, as other transient shapes are).
//!   An `Update` draws it again at its new pose; `Destroy` deletes it. The End message was
//!   added to 3es late, so a shape whose declared vertices and indices have all arrived is
//!   also drawn when its frame ends without one.
//! - A mesh resource is gathered from its `Create` and component messages and is complete at
//!   `Finalise`. A mesh set (entity `mesh_set/<id>`) draws the parts whose resources are
//!   complete; servers send resources lazily, in the frame after the set, so each set that
//!   uses a resource is drawn again when that resource is finalised (the user sees the set
//!   as soon as its mesh exists, as in 3es's viewer). A transient set is drawn with what is
//!   complete at its Create: its resources cannot arrive in its one frame.
//! - Memory: the vertex data of each live mesh shape and resource (what the capture holds
//!   alive: an Update must draw the whole mesh again); freed at Destroy and Reset, and a
//!   transient's at its End.

use foldhash::HashMap;

use foxglove::messages::{SceneEntity, Timestamp};

use super::floats;
use super::frame::{Changes, Point};
use super::geometry::{affine, compose, Affine, Component, Geometry, Placement};
use super::shapes::{apply, Attributes};
use crate::model::{Channel, Record, Value};
use crate::report::LossReport;

const FRAME: &str = "world";
const MESH_SHAPE: &str = "3es/mesh_shape";
const MESH_SET: &str = "3es/mesh_set";
const MESH: &str = "3es/mesh";
/// MeshShape data type of the End message (spec §6.8).
const END: u64 = 0xFFFF;

struct MeshShape {
    attributes: Attributes,
    geometry: Geometry,
    ended: bool,
}

struct Resource {
    geometry: Geometry,
    transform: Affine,
    tint: [f64; 4],
    finalised: bool,
}

struct Part {
    resource: u64,
    transform: Affine,
    colour: [f64; 4],
}

struct MeshSet {
    attributes: Attributes,
    parts: Vec<Part>,
    /// Whether every part has been drawn at some time (else its Destroy reports the rest).
    complete: bool,
}

#[derive(Default)]
pub struct Meshes {
    shapes: HashMap<u64, MeshShape>,
    /// The transient mesh shape whose Data messages are arriving (Data of id 0 belongs to
    /// the last transient Create).
    transient: Option<MeshShape>,
    /// Persistent mesh shapes not drawn yet (waiting for End or their frame's end).
    pending: Vec<u64>,
    resources: HashMap<u64, Resource>,
    sets: HashMap<u64, MeshSet>,
    /// Transient entities of the frame being built, and of the frame shown.
    building: Vec<String>,
    shown: Vec<String>,
}

impl Meshes {
    /// What a record of a mesh channel, or a frame end, changes in the scene.
    pub fn record(
        &mut self,
        channel: &Channel,
        record: &Record,
        stamp: Timestamp,
        changes: &mut Changes,
        loss: &mut LossReport,
    ) {
        let message = match record.get("message") {
            Some(Value::Str(m)) => m.as_str(),
            _ => return,
        };
        match channel.name.as_str() {
            MESH_SHAPE => self.mesh_shape(message, record, stamp, changes, loss),
            MESH_SET => self.mesh_set(message, record, stamp, changes, loss),
            MESH => self.resource(message, record, stamp, changes, loss),
            "3es/control" if message == "Frame" => {
                self.draw_complete(stamp, changes, loss);
                let gone = std::mem::replace(&mut self.shown, std::mem::take(&mut self.building));
                for id in gone {
                    changes.expire(stamp, id);
                }
            }
            _ => {}
        }
    }

    /// A 3es Reset: every mesh, resource and set goes (the caller deletes the entities).
    pub fn reset(&mut self) {
        *self = Meshes::default();
    }

    fn mesh_shape(
        &mut self,
        message: &str,
        record: &Record,
        stamp: Timestamp,
        changes: &mut Changes,
        loss: &mut LossReport,
    ) {
        let id = uint(record, "object_id");
        match message {
            "Create" => {
                let mut attributes = Attributes::default();
                apply(&mut attributes, record, false);
                let shape = MeshShape {
                    attributes,
                    geometry: Geometry::new(
                        uint(record, "topology"),
                        uint(record, "vertex_count"),
                        uint(record, "index_count"),
                        float(record, "draw_scale"),
                    ),
                    ended: false,
                };
                let replaced = if id == 0 {
                    self.transient.replace(shape)
                } else {
                    self.pending.push(id);
                    self.shapes.insert(id, shape)
                };
                if replaced.is_some_and(|s| !s.ended) {
                    loss.add(MESH_SHAPE, "3d", "mesh shape without End not drawn");
                }
            }
            "Data" => {
                let shape = if id == 0 {
                    self.transient.as_mut()
                } else {
                    self.shapes.get_mut(&id)
                };
                let Some(shape) = shape else {
                    loss.add(MESH_SHAPE, "3d", "mesh data for an unknown shape not drawn");
                    return;
                };
                let component = match uint(record, "data_type") {
                    END => None,
                    0 => Some(Component::Vertices),
                    1 => Some(Component::Indices),
                    2 => Some(Component::Normals),
                    3 => Some(Component::Colours),
                    _ => {
                        loss.add(MESH_SHAPE, "3d", "mesh data of an unknown type not drawn");
                        return;
                    }
                };
                if let Some(component) = component {
                    let data = record.get("data").unwrap_or(&Value::Null);
                    if let Err(why) = shape
                        .geometry
                        .write(component, uint(record, "offset"), data)
                    {
                        loss.add(MESH_SHAPE, "3d", why);
                    }
                    if !shape.ended {
                        return;
                    }
                }
                self.end(id, stamp, changes, loss);
            }
            "Update" => {
                if let Some(shape) = self.shapes.get_mut(&id) {
                    apply(&mut shape.attributes, record, true);
                    if shape.ended {
                        let (entity, points) =
                            draw_shape(shape, format!("mesh_shape/{id}"), stamp, loss);
                        changes.draw(entity, points);
                    }
                }
            }
            "Destroy" => {
                if self.shapes.remove(&id).is_some_and(|s| !s.ended) {
                    loss.add(MESH_SHAPE, "3d", "mesh shape without End not drawn");
                }
                changes.delete(stamp, format!("mesh_shape/{id}"));
            }
            _ => {}
        }
    }

    /// Draws mesh shape `id` (0: the transient one) as complete.
    fn end(&mut self, id: u64, stamp: Timestamp, changes: &mut Changes, loss: &mut LossReport) {
        if id == 0 {
            // A transient's data is needed no longer: it cannot be updated.
            if let Some(shape) = self.transient.take() {
                let entity_id = format!("mesh_shape/0/{}", self.building.len());
                self.building.push(entity_id.clone());
                let (entity, points) = draw_shape(&shape, entity_id, stamp, loss);
                changes.draw(entity, points);
            }
        } else if let Some(shape) = self.shapes.get_mut(&id) {
            shape.ended = true;
            let (entity, points) = draw_shape(shape, format!("mesh_shape/{id}"), stamp, loss);
            changes.draw(entity, points);
        }
    }

    /// At a frame's end: the mesh shapes of the frame whose data is complete though no End
    /// came (captures from before 3es had End) are drawn.
    fn draw_complete(&mut self, stamp: Timestamp, changes: &mut Changes, loss: &mut LossReport) {
        if self
            .transient
            .as_ref()
            .is_some_and(|s| s.geometry.is_full())
        {
            self.end(0, stamp, changes, loss);
        }
        for id in std::mem::take(&mut self.pending) {
            match self.shapes.get(&id) {
                Some(s) if s.ended => {}
                Some(s) if s.geometry.is_full() => self.end(id, stamp, changes, loss),
                Some(_) => self.pending.push(id),
                None => {}
            }
        }
    }

    fn mesh_set(
        &mut self,
        message: &str,
        record: &Record,
        stamp: Timestamp,
        changes: &mut Changes,
        loss: &mut LossReport,
    ) {
        let id = uint(record, "object_id");
        match message {
            "Create" => {
                let mut attributes = Attributes::default();
                apply(&mut attributes, record, false);
                let mut set = MeshSet {
                    attributes,
                    parts: parts(record),
                    complete: false,
                };
                let drawn = self.draw_set(&mut set, format!("mesh_set/{id}"), stamp, loss);
                if id == 0 {
                    if !set.complete {
                        loss.add(
                            MESH_SET,
                            "3d",
                            "transient mesh set part whose resource is not complete in its frame not drawn",
                        );
                    }
                    if let Some((mut entity, points)) = drawn {
                        entity.id = format!("mesh_set/0/{}", self.building.len());
                        self.building.push(entity.id.clone());
                        changes.draw(entity, points);
                    }
                } else {
                    if let Some((entity, points)) = drawn {
                        changes.draw(entity, points);
                    }
                    self.sets.insert(id, set);
                }
            }
            "Update" => {
                if let Some(mut set) = self.sets.remove(&id) {
                    apply(&mut set.attributes, record, true);
                    let drawn = self.draw_set(&mut set, format!("mesh_set/{id}"), stamp, loss);
                    if let Some((entity, points)) = drawn {
                        changes.draw(entity, points);
                    }
                    self.sets.insert(id, set);
                }
            }
            "Destroy" => {
                if self.sets.remove(&id).is_some_and(|s| !s.complete) {
                    loss.add(
                        MESH_SET,
                        "3d",
                        "mesh set part whose resource was never complete not drawn",
                    );
                }
                changes.delete(stamp, format!("mesh_set/{id}"));
            }
            _ => {}
        }
    }

    fn resource(
        &mut self,
        message: &str,
        record: &Record,
        stamp: Timestamp,
        changes: &mut Changes,
        loss: &mut LossReport,
    ) {
        let id = uint(record, "mesh_id");
        let component = match message {
            "Create" | "Redefine" => {
                let mut a = Attributes::default();
                apply(&mut a, record, false);
                let (topology, vertices, indices) = (
                    uint(record, "draw_type"),
                    uint(record, "vertex_count"),
                    uint(record, "index_count"),
                );
                let geometry = match self.resources.remove(&id) {
                    Some(mut r) if message == "Redefine" => {
                        r.geometry.redefine(topology, vertices, indices);
                        r.geometry
                    }
                    _ => Geometry::new(topology, vertices, indices, float(record, "draw_scale")),
                };
                self.resources.insert(
                    id,
                    Resource {
                        geometry,
                        transform: affine(a.position, a.rotation, a.scale),
                        tint: a.colour,
                        finalised: false,
                    },
                );
                return;
            }
            "Destroy" => {
                self.resources.remove(&id);
                return;
            }
            "Finalise" => {
                let Some(resource) = self.resources.get_mut(&id) else {
                    loss.add(MESH, "3d", "Finalise of an unknown mesh resource");
                    return;
                };
                resource.finalised = true;
                if uint(record, "flags") & 0xE != 0 {
                    loss.add(MESH, "3d", "Finalise colour by axis not applied");
                }
                // Every live set that uses it is drawn again, with this part now.
                let mut ids: Vec<u64> = self
                    .sets
                    .iter()
                    .filter(|(_, s)| s.parts.iter().any(|p| p.resource == id))
                    .map(|(&k, _)| k)
                    .collect();
                ids.sort_unstable();
                for k in ids {
                    if let Some(mut set) = self.sets.remove(&k) {
                        let drawn = self.draw_set(&mut set, format!("mesh_set/{k}"), stamp, loss);
                        if let Some((entity, points)) = drawn {
                            changes.draw(entity, points);
                        }
                        self.sets.insert(k, set);
                    }
                }
                return;
            }
            "Vertex" => Component::Vertices,
            "Index" => Component::Indices,
            "VertexColour" => Component::Colours,
            "Normal" => Component::Normals,
            "UV" => Component::Uvs,
            "SetMaterial" => {
                loss.add(MESH, "3d", "mesh material not drawn");
                return;
            }
            _ => return,
        };
        let Some(resource) = self.resources.get_mut(&id) else {
            loss.add(MESH, "3d", "mesh data for an unknown resource not drawn");
            return;
        };
        let data = record.get("data").unwrap_or(&Value::Null);
        if let Err(why) = resource
            .geometry
            .write(component, uint(record, "offset"), data)
        {
            loss.add(MESH, "3d", why);
        }
    }

    /// The set's entity (and points) with every part whose resource is finalised, `None`
    /// when none is.
    /// Part vertices: resource transform, then part transform, then the set's scale; the
    /// set's position and rotation are the primitives' pose.
    fn draw_set(
        &self,
        set: &mut MeshSet,
        id: String,
        stamp: Timestamp,
        loss: &mut LossReport,
    ) -> Option<(SceneEntity, Vec<Point>)> {
        let mut entity = entity(id, stamp);
        let mut points = Vec::new();
        let mut lost = Vec::new();
        let a = &set.attributes;
        let scale = affine([0.0; 3], [0.0, 0.0, 0.0, 1.0], a.scale);
        let mut drawn = 0;
        for part in &set.parts {
            let Some(r) = self.resources.get(&part.resource).filter(|r| r.finalised) else {
                continue;
            };
            let inner = compose(&scale, &compose(&part.transform, &r.transform));
            let place = Placement::new(a.position, a.rotation, inner);
            let tint = multiply(multiply(a.colour, part.colour), r.tint);
            r.geometry
                .draw(&place, tint, &mut entity, &mut points, &mut lost);
            drawn += 1;
        }
        report(MESH_SET, lost, loss);
        if drawn == set.parts.len() {
            set.complete = true;
        }
        (drawn > 0).then_some((entity, points))
    }
}

fn draw_shape(
    shape: &MeshShape,
    id: String,
    stamp: Timestamp,
    loss: &mut LossReport,
) -> (SceneEntity, Vec<Point>) {
    let mut entity = entity(id, stamp);
    let mut points = Vec::new();
    let a = &shape.attributes;
    let inner = affine([0.0; 3], [0.0, 0.0, 0.0, 1.0], a.scale);
    let place = Placement::new(a.position, a.rotation, inner);
    let mut lost = Vec::new();
    shape
        .geometry
        .draw(&place, a.colour, &mut entity, &mut points, &mut lost);
    report(MESH_SHAPE, lost, loss);
    (entity, points)
}

fn entity(id: String, stamp: Timestamp) -> SceneEntity {
    SceneEntity {
        timestamp: Some(stamp),
        frame_id: FRAME.into(),
        id,
        ..SceneEntity::default()
    }
}

/// Each reason once per drawn entity.
fn report(channel: &str, mut lost: Vec<&'static str>, loss: &mut LossReport) {
    lost.sort_unstable();
    lost.dedup();
    for why in lost {
        loss.add(channel, "3d", why);
    }
}

/// The parts of a MeshSet Create: `part_resource_ids` with `part_positions`,
/// `part_rotations`, `part_scales` and `part_colours` (identity where missing).
fn parts(record: &Record) -> Vec<Part> {
    let column = |key: &str| record.get(key).and_then(floats).unwrap_or_default();
    let ids = column("part_resource_ids");
    let (positions, rotations, scales, colours) = (
        column("part_positions"),
        column("part_rotations"),
        column("part_scales"),
        column("part_colours"),
    );
    let pick = |v: &[f64], i: usize, n: usize, default: &[f64]| -> Vec<f64> {
        v.get(i * n..i * n + n).unwrap_or(default).to_vec()
    };
    ids.iter()
        .enumerate()
        .map(|(i, &resource)| {
            let p = pick(&positions, i, 3, &[0.0; 3]);
            let r = pick(&rotations, i, 4, &[0.0, 0.0, 0.0, 1.0]);
            let s = pick(&scales, i, 3, &[1.0; 3]);
            let c = pick(&colours, i, 4, &[255.0; 4]);
            Part {
                resource: resource as u64,
                transform: affine(
                    [p[0], p[1], p[2]],
                    [r[0], r[1], r[2], r[3]],
                    [s[0], s[1], s[2]],
                ),
                colour: [c[0], c[1], c[2], c[3]],
            }
        })
        .collect()
}

/// Component-wise product of two RGBA 0–255 colours (a tint over a colour).
fn multiply(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    [0, 1, 2, 3].map(|k| a[k] * b[k] / 255.0)
}

fn uint(record: &Record, key: &str) -> u64 {
    match record.get(key) {
        Some(Value::UInt(u)) => *u,
        Some(Value::Int(i)) => u64::try_from(*i).unwrap_or(0),
        _ => 0,
    }
}

fn float(record: &Record, key: &str) -> f64 {
    match record.get(key) {
        Some(Value::Float(x)) if x.is_finite() => *x,
        Some(Value::F32(x)) if x.is_finite() => (*x).into(),
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use prost::Message as _;

    use super::super::Topic3d;
    use super::*;
    use crate::model::{Array, ArrayData, ChannelKind, Composition};
    use foxglove::messages::SceneUpdate;

    fn channel(name: &str) -> Channel {
        Channel::new(name, ChannelKind::Events, Composition::Independent)
    }

    fn record(values: Vec<(&str, Value)>) -> Record {
        Record::with_values(0, 0, values)
    }

    fn data(data_type: u64, offset: u64, array: ArrayData, width: usize) -> Record {
        let n = array_len(&array) / width;
        record(vec![
            ("message", Value::Str("Data".into())),
            ("object_id", Value::UInt(0)),
            ("data_type", Value::UInt(data_type)),
            ("offset", Value::UInt(offset)),
            (
                "data",
                Value::Array(Array::with_shape(array, vec![n, width]).unwrap()),
            ),
        ])
    }

    fn array_len(a: &ArrayData) -> usize {
        match a {
            ArrayData::F32(v) => v.len(),
            ArrayData::U32(v) => v.len(),
            _ => 0,
        }
    }

    /// Feeds `r` to `m`; at a frame end, the frame's SceneUpdate (if any).
    fn feed(
        m: &mut Meshes,
        changes: &mut Changes,
        name: &str,
        r: Record,
        loss: &mut LossReport,
    ) -> Option<SceneUpdate> {
        let stamp = Timestamp::new(0, 0);
        let frame_end = name == "3es/control";
        m.record(&channel(name), &r, stamp, changes, loss);
        let mut out = Vec::new();
        if frame_end {
            changes.end(stamp, &mut out);
        }
        out.iter()
            .find(|(t, _)| *t == Topic3d::Scene)
            .map(|(_, b)| SceneUpdate::decode(b.as_slice()).unwrap())
    }

    fn create_lines(vertices: u64, indices: u64) -> Record {
        record(vec![
            ("message", Value::Str("Create".into())),
            ("object_id", Value::UInt(0)),
            ("vertex_count", Value::UInt(vertices)),
            ("index_count", Value::UInt(indices)),
            ("topology", Value::UInt(1)),
        ])
    }

    #[test]
    fn a_transient_line_mesh_is_drawn_at_its_frame_end_and_deleted_a_frame_later() {
        let mut m = Meshes::default();
        let mut c = Changes::default();
        let mut loss = LossReport::default();
        assert!(feed(&mut m, &mut c, MESH_SHAPE, create_lines(2, 0), &mut loss).is_none());
        let v = data(0, 0, ArrayData::F32(vec![0.0, 0.0, 0.0, 1.0, 2.0, 3.0]), 3);
        assert!(feed(&mut m, &mut c, MESH_SHAPE, v, &mut loss).is_none());
        let end = record(vec![
            ("message", Value::Str("Data".into())),
            ("object_id", Value::UInt(0)),
            ("data_type", Value::UInt(END)),
        ]);
        assert!(feed(&mut m, &mut c, MESH_SHAPE, end, &mut loss).is_none());
        let frame = || record(vec![("message", Value::Str("Frame".into()))]);
        let u = feed(&mut m, &mut c, "3es/control", frame(), &mut loss).unwrap();
        let line = &u.entities[0].lines[0];
        assert_eq!(u.entities[0].id, "mesh_shape/0/0");
        assert_eq!(line.points.len(), 2);
        assert!(line.indices.is_empty());
        let u = feed(&mut m, &mut c, "3es/control", frame(), &mut loss).unwrap();
        assert_eq!(u.deletions[0].id, "mesh_shape/0/0");
        assert!(u.entities.is_empty());
        assert!(m.transient.is_none());
    }

    #[test]
    fn a_mesh_without_end_is_drawn_when_its_frame_ends_and_bad_offsets_are_loss() {
        let mut m = Meshes::default();
        let mut c = Changes::default();
        let mut loss = LossReport::default();
        feed(&mut m, &mut c, MESH_SHAPE, create_lines(2, 2), &mut loss);
        let v = data(0, 0, ArrayData::F32(vec![0.0; 6]), 3);
        feed(&mut m, &mut c, MESH_SHAPE, v, &mut loss);
        // Past the declared count and with a gap: skipped, counted.
        let far = data(1, 9, ArrayData::U32(vec![0, 1]), 1);
        feed(&mut m, &mut c, MESH_SHAPE, far, &mut loss);
        let i = data(1, 0, ArrayData::U32(vec![0, 5]), 1);
        feed(&mut m, &mut c, MESH_SHAPE, i, &mut loss);
        let frame = record(vec![("message", Value::Str("Frame".into()))]);
        // Index 5 is out of range: the one segment is left out, no line is drawn (an empty
        // index list would draw every vertex in order), and an entity without primitives
        // is not sent.
        assert!(feed(&mut m, &mut c, "3es/control", frame, &mut loss).is_none());
        assert!(!loss.is_empty());
    }
}
