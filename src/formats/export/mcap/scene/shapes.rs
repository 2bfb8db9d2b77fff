//! 3es shapes → `foxglove.SceneUpdate`: a `Create` or `Update` of a shape on channel
//! `3es/<shape>` becomes a scene entity `<shape>/<object id>` in frame `world`, a `Destroy`
//! its deletion. Spheres, boxes, cylinders, cones, arrows and 3D text have a Foxglove
//! primitive; capsules are drawn as cylinders; meshes are drawn by `meshes.rs`; the rest
//! (planes, stars, poses, point clouds, screen text, multi-shape data) has none, and each
//! such record is counted in the loss report (its values stay in the JSON topic).
//!
//! 3es semantics kept: an `Update` with the `UpdateMode` flag changes only the attributes
//! its flags name; a transient shape (object id 0) lasts one frame, so it is deleted when
//! the frame after the one that showed it ends (`3es/control` `Frame`).

use foldhash::HashMap;

use foxglove::messages::{
    ArrowPrimitive, Color, CubePrimitive, CylinderPrimitive, Pose, Quaternion, SceneEntity,
    SpherePrimitive, TextPrimitive, Timestamp, Vector3,
};

use super::fixed;
use super::frame::Changes;
use crate::model::{Channel, Record, Value};
use crate::report::LossReport;

/// The channels of 3es (shapes, meshes, control, reset: [`super::reads`]).
pub(super) const PREFIX: &str = "3es/";
const FRAME: &str = "world";

/// What 3es says of a shape: position, rotation (x, y, z, w), scale, colour (RGBA bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Attributes {
    pub position: [f64; 3],
    pub rotation: [f64; 4],
    pub scale: [f64; 3],
    pub colour: [f64; 4],
}

impl Default for Attributes {
    fn default() -> Self {
        Attributes {
            position: [0.0; 3],
            rotation: [0.0, 0.0, 0.0, 1.0],
            scale: [1.0; 3],
            colour: [255.0; 4],
        }
    }
}

#[derive(Default)]
pub struct Shapes {
    /// Attributes of each persistent shape, by entity id.
    held: HashMap<String, Attributes>,
    /// Transient shapes of the frame being built, and of the frame shown.
    building: Vec<String>,
    shown: Vec<String>,
}

impl Shapes {
    pub fn record(
        &mut self,
        channel: &Channel,
        record: &Record,
        stamp: Timestamp,
        changes: &mut Changes,
        loss: &mut LossReport,
    ) {
        let Some(shape) = channel.name.strip_prefix(PREFIX) else {
            return;
        };
        let message = match record.get("message") {
            Some(Value::Str(m)) => m.as_str(),
            _ => return,
        };
        if matches!(shape, "mesh" | "mesh_shape" | "mesh_set") {
            // Drawn by meshes.rs (vertex data comes over several records).
            return;
        }
        if shape == "control" {
            if message == "Frame" {
                self.end_frame(stamp, changes);
            }
            return;
        }
        let Some(Value::UInt(_) | Value::Int(_)) = record.get("object_id") else {
            // Categories, server info, resets: no shape of their own.
            return;
        };
        let object = match record.get("object_id") {
            Some(Value::UInt(u)) => *u,
            Some(Value::Int(i)) => *i as u64,
            _ => 0,
        };
        let id = format!("{shape}/{object}");
        match message {
            "Destroy" => {
                self.held.remove(&id);
                changes.delete(stamp, id);
            }
            "Create" | "Update" => {
                let mut attributes = self.held.get(&id).copied().unwrap_or_default();
                apply(&mut attributes, record, message == "Update");
                let Some(entity) = entity(shape, &id, &attributes, record, stamp) else {
                    loss.add(&channel.name, "3d", no_counterpart(shape));
                    return;
                };
                if shape == "capsule" {
                    loss.add(&channel.name, "3d", "capsule drawn as a cylinder");
                }
                if object == 0 {
                    // Transient shapes of one frame share the id space: number them.
                    let id = format!("{id}/{}", self.building.len());
                    self.building.push(id.clone());
                    changes.draw(SceneEntity { id, ..entity }, Vec::new());
                } else {
                    self.held.insert(id, attributes);
                    changes.draw(entity, Vec::new());
                }
            }
            _ => loss.add(
                &channel.name,
                "3d",
                "shape data message not drawn in /3es/scene",
            ),
        }
    }

    /// A 3es Reset: every shape goes (the caller deletes the entities).
    pub fn reset(&mut self) {
        *self = Shapes::default();
    }

    /// The end of a frame: the transient shapes of the frame shown until now go.
    fn end_frame(&mut self, stamp: Timestamp, changes: &mut Changes) {
        let gone = std::mem::replace(&mut self.shown, std::mem::take(&mut self.building));
        for id in gone {
            changes.expire(stamp, id);
        }
    }
}

fn no_counterpart(shape: &str) -> &'static str {
    match shape {
        "text2d" => "screen-space text has no Foxglove 3D primitive",
        _ => "shape has no Foxglove primitive",
    }
}

/// Takes the attributes a record gives: all of them, or for an `Update` in update mode
/// only those its flags name.
pub(super) fn apply(a: &mut Attributes, record: &Record, update: bool) {
    let flags: Vec<&str> = match record.get("flag_names") {
        Some(Value::List(items)) => items
            .iter()
            .filter_map(|v| match v {
                Value::Str(s) => Some(s.as_str()),
                _ => None,
            })
            .collect(),
        Some(Value::Array(a)) => match &a.data {
            crate::model::ArrayData::Str(v) => v.iter().map(String::as_str).collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    let partial = update && flags.contains(&"UpdateMode");
    let takes = |name: &str| !partial || flags.contains(&name);
    if takes("Position") {
        if let Some(p) = record.get("position").and_then(fixed::<3>) {
            a.position = p;
        }
    }
    if takes("Rotation") {
        if let Some(r) = record.get("rotation").and_then(fixed::<4>) {
            a.rotation = r;
        }
    }
    if takes("Scale") {
        if let Some(s) = record.get("scale").and_then(fixed::<3>) {
            a.scale = s;
        }
    }
    if takes("Colour") {
        if let Some(c) = record.get("colour").and_then(fixed::<4>) {
            a.colour = c;
        }
    }
}

fn flag(record: &Record, name: &str) -> bool {
    match record.get("flag_names") {
        Some(Value::List(items)) => items.iter().any(|v| *v == Value::Str(name.into())),
        Some(Value::Array(a)) => match &a.data {
            crate::model::ArrayData::Str(v) => v.iter().any(|s| s == name),
            _ => false,
        },
        _ => false,
    }
}

fn pose(position: [f64; 3], [x, y, z, w]: [f64; 4]) -> Option<Pose> {
    let [px, py, pz] = position;
    Some(Pose {
        position: Some(Vector3 {
            x: px,
            y: py,
            z: pz,
        }),
        orientation: Some(Quaternion { x, y, z, w }),
    })
}

fn vector([x, y, z]: [f64; 3]) -> Option<Vector3> {
    Some(Vector3 { x, y, z })
}

fn color(c: [f64; 4]) -> Option<Color> {
    Some(Color {
        r: c[0] / 255.0,
        g: c[1] / 255.0,
        b: c[2] / 255.0,
        a: c[3] / 255.0,
    })
}

/// Hamilton product a · b of (x, y, z, w) quaternions.
fn multiply(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

/// The Foxglove entity of a shape, `None` for a shape Foxglove has no primitive for.
///
/// 3es sizes: a sphere's scale is its radius; a box's its full extents; a cylinder's,
/// cone's and capsule's (radius, radius, length) along the shape's Z axis, as Foxglove's
/// cylinder; an arrow points along its Z axis with length scale.z and radius scale.x,
/// where Foxglove's points along X (rotated here by -90° about Y).
fn entity(
    shape: &str,
    id: &str,
    a: &Attributes,
    record: &Record,
    stamp: Timestamp,
) -> Option<SceneEntity> {
    let mut e = SceneEntity {
        timestamp: Some(stamp),
        frame_id: FRAME.into(),
        id: id.into(),
        ..SceneEntity::default()
    };
    let [sx, sy, sz] = a.scale;
    match shape {
        "sphere" => e.spheres.push(SpherePrimitive {
            pose: pose(a.position, a.rotation),
            size: vector([2.0 * sx, 2.0 * sy, 2.0 * sz]),
            color: color(a.colour),
        }),
        "box" => e.cubes.push(CubePrimitive {
            pose: pose(a.position, a.rotation),
            size: vector(a.scale),
            color: color(a.colour),
        }),
        "cylinder" | "capsule" | "cone" => e.cylinders.push(CylinderPrimitive {
            pose: pose(a.position, a.rotation),
            size: vector([2.0 * sx, 2.0 * sy, sz]),
            bottom_scale: 1.0,
            top_scale: if shape == "cone" { 0.0 } else { 1.0 },
            color: color(a.colour),
        }),
        "arrow" => {
            let h = std::f64::consts::FRAC_1_SQRT_2;
            e.arrows.push(ArrowPrimitive {
                pose: pose(a.position, multiply(a.rotation, [0.0, -h, 0.0, h])),
                shaft_length: 0.8 * sz,
                shaft_diameter: 2.0 * sx,
                head_length: 0.2 * sz,
                head_diameter: 4.0 * sx,
                color: color(a.colour),
            })
        }
        "text3d" | "text2d" => {
            if shape == "text2d" && !flag(record, "WorldSpace") {
                return None;
            }
            let text = match record.get("text") {
                Some(Value::Str(t)) => t.clone(),
                _ => String::new(),
            };
            e.texts.push(TextPrimitive {
                pose: pose(a.position, a.rotation),
                billboard: shape == "text2d" || flag(record, "ScreenFacing"),
                font_size: sz.max(sx).max(sy),
                scale_invariant: false,
                color: color(a.colour),
                text,
            })
        }
        _ => return None,
    }
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arrow_along_z_points_along_foxglove_x_rotated_onto_z() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let q = multiply([0.0, 0.0, 0.0, 1.0], [0.0, -h, 0.0, h]);
        // Rotate +X by q: a rotation of -90° about Y takes X to +Z.
        let [x, y, z, w] = q;
        let v = [1.0, 0.0, 0.0];
        // v' = v + 2w(q × v) + 2 q × (q × v)
        let cross = |a: [f64; 3], b: [f64; 3]| {
            [
                a[1] * b[2] - a[2] * b[1],
                a[2] * b[0] - a[0] * b[2],
                a[0] * b[1] - a[1] * b[0],
            ]
        };
        let u = [x, y, z];
        let t = cross(u, v);
        let t2 = cross(u, t);
        let r: Vec<f64> = (0..3)
            .map(|i| v[i] + 2.0 * w * t[i] + 2.0 * t2[i])
            .collect();
        assert!((r[0]).abs() < 1e-12 && r[1].abs() < 1e-12 && (r[2] - 1.0).abs() < 1e-12);
    }
}
