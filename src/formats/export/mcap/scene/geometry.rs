//! 3es vertex data → Foxglove primitives: the vertices, indices, colours and normals of a
//! mesh shape or mesh resource, gathered from their `DataBuffer` messages, and drawn as
//! the primitive that fits the topology.
//!
//! - triangles → one `TriangleListPrimitive` (indexed, or consecutive vertex triples);
//! - lines → one `LinePrimitive` of type LINE_LIST (3es has no strip topology), thickness
//!   the draw scale in pixels (1 when 0), scale-invariant as 3es draws it;
//! - points → points of the frame's `foxglove.PointCloud` (`frame.rs`), in world
//!   coordinates: Foxglove's scene has no point primitive; 3es's point size in screen pixels
//!   is not carried (counted as loss);
//! - voxels → one cube per vertex, sized by the vertex's normal (3es sends the voxel half
//!   extents as normals, one for all or one per voxel), else 1 % of the voxels' extent;
//! - quads (reserved in 3es) and unknown topologies → nothing (loss).
//!
//! Bad data never panics: a buffer past the declared count or with a gap before it is
//! skipped, and triangles or segments with an index out of range or a non-finite vertex are
//! left out; each is counted as loss by the caller from the reasons returned.

use foxglove::messages::line_primitive::Type as LineType;
use foxglove::messages::{
    Color, CubePrimitive, LinePrimitive, Point3, Pose, Quaternion, SceneEntity,
    TriangleListPrimitive, Vector3,
};

use super::floats;
use super::frame::Point;
use crate::model::{Array, ArrayData, Value};

/// Which buffer a data message fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    Vertices,
    Indices,
    Normals,
    Colours,
    /// UVs (mesh resources only): Foxglove's primitives have no texture coordinates.
    Uvs,
}

/// An affine map as a 3 × 4 matrix (rotation and scale in the first three columns,
/// translation in the last): 3es transforms compose with scale, which a Foxglove pose
/// cannot hold, so vertices are mapped by it before the pose.
pub type Affine = [[f64; 4]; 3];

pub const IDENTITY: Affine = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
];

/// T · R · S of a 3es transform (position, rotation x, y, z, w, scale).
pub fn affine(position: [f64; 3], [x, y, z, w]: [f64; 4], scale: [f64; 3]) -> Affine {
    // The rotation matrix of the unit quaternion (normalised here: 3es does not require it).
    let n = (x * x + y * y + z * z + w * w).sqrt();
    let (x, y, z, w) = if n > 0.0 && n.is_finite() {
        (x / n, y / n, z / n, w / n)
    } else {
        (0.0, 0.0, 0.0, 1.0)
    };
    let r = [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - z * w),
            2.0 * (x * z + y * w),
        ],
        [
            2.0 * (x * y + z * w),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - x * w),
        ],
        [
            2.0 * (x * z - y * w),
            2.0 * (y * z + x * w),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ];
    let mut m = IDENTITY;
    for i in 0..3 {
        for j in 0..3 {
            m[i][j] = r[i][j] * scale[j];
        }
        m[i][3] = position[i];
    }
    m
}

/// a · b (b applied first).
pub fn compose(a: &Affine, b: &Affine) -> Affine {
    let mut m = [[0.0; 4]; 3];
    for i in 0..3 {
        for j in 0..4 {
            m[i][j] = (0..3).map(|k| a[i][k] * b[k][j]).sum::<f64>();
        }
        m[i][3] += a[i][3];
    }
    m
}

fn map(m: &Affine, p: [f64; 3]) -> [f64; 3] {
    if *m == IDENTITY {
        // Exact: the common case (no scale, no inner transform) keeps the source's numbers.
        return p;
    }
    let row = |r: &[f64; 4]| r[0] * p[0] + r[1] * p[1] + r[2] * p[2] + r[3];
    [row(&m[0]), row(&m[1]), row(&m[2])]
}

/// The linear part only (for extents, which do not move).
fn map_vector(m: &Affine, v: [f64; 3]) -> [f64; 3] {
    let row = |r: &[f64; 4]| (r[0] * v[0] + r[1] * v[1] + r[2] * v[2]).abs();
    [row(&m[0]), row(&m[1]), row(&m[2])]
}

/// Where drawn vertices go: mapped by `inner` into the entity's pose, which the primitives
/// carry (position and rotation x, y, z, w).
pub struct Placement {
    position: [f64; 3],
    rotation: [f64; 4],
    inner: Affine,
    /// The pose as an affine map, made once rather than for every point placed.
    outer: Affine,
}

impl Placement {
    pub fn new(position: [f64; 3], rotation: [f64; 4], inner: Affine) -> Placement {
        Placement {
            position,
            rotation,
            inner,
            outer: affine(position, rotation, [1.0; 3]),
        }
    }

    fn pose(&self) -> Option<Pose> {
        let [x, y, z] = self.position;
        let [qx, qy, qz, qw] = self.rotation;
        Some(Pose {
            position: Some(Vector3 { x, y, z }),
            orientation: Some(Quaternion {
                x: qx,
                y: qy,
                z: qz,
                w: qw,
            }),
        })
    }

    /// Where a point (already mapped by `inner`) is in the world.
    fn at(&self, p: [f64; 3]) -> [f64; 3] {
        let world = compose(
            &self.outer,
            &[
                [1.0, 0.0, 0.0, p[0]],
                [0.0, 1.0, 0.0, p[1]],
                [0.0, 0.0, 1.0, p[2]],
            ],
        );
        [world[0][3], world[1][3], world[2][3]]
    }

    /// The primitive pose of one point (cubes carry one each).
    fn pose_at(&self, p: [f64; 3]) -> Option<Pose> {
        let [x, y, z] = self.at(p);
        let mut pose = self.pose()?;
        pose.position = Some(Vector3 { x, y, z });
        Some(pose)
    }
}

/// Vertex data of one mesh, as received so far.
#[derive(Debug, Clone, Default)]
pub struct Geometry {
    /// 0 points, 1 lines, 2 triangles, 3 voxels, 4 quads (spec §6.8).
    pub topology: u64,
    /// Declared counts: buffers are never filled past them.
    pub vertex_count: u64,
    pub index_count: u64,
    /// Point size or line width in pixels; 0 is the viewer's default.
    pub draw_scale: f64,
    vertices: Vec<[f64; 3]>,
    indices: Vec<u64>,
    normals: Vec<[f64; 3]>,
    colours: Vec<[u8; 4]>,
}

impl Geometry {
    pub fn new(topology: u64, vertex_count: u64, index_count: u64, draw_scale: f64) -> Geometry {
        Geometry {
            topology,
            vertex_count,
            index_count,
            draw_scale,
            ..Geometry::default()
        }
    }

    /// Whether every declared vertex and index has arrived.
    pub fn is_full(&self) -> bool {
        self.vertex_count > 0
            && self.vertices.len() as u64 >= self.vertex_count
            && self.indices.len() as u64 >= self.index_count
    }

    /// New declared counts and topology (a resource's Redefine): data past them goes.
    pub fn redefine(&mut self, topology: u64, vertex_count: u64, index_count: u64) {
        self.topology = topology;
        self.vertex_count = vertex_count;
        self.index_count = index_count;
        let v = usize::try_from(vertex_count).unwrap_or(usize::MAX);
        self.vertices.truncate(v);
        self.normals.truncate(v);
        self.colours.truncate(v);
        self.indices
            .truncate(usize::try_from(index_count).unwrap_or(usize::MAX));
    }

    /// Writes a DataBuffer's elements (`data`, [count, components]) from element `offset`.
    /// Memory grows only with the elements received: a buffer that would leave a gap is
    /// skipped, one past the declared count is cut there. `Err` names what was skipped.
    pub fn write(
        &mut self,
        component: Component,
        offset: u64,
        data: &Value,
    ) -> Result<(), &'static str> {
        let Value::Array(array) = data else {
            return Err("mesh data without a decoded buffer not drawn");
        };
        let limit = match component {
            Component::Indices => self.index_count,
            Component::Uvs => return Err("mesh texture coordinates not drawn (no Foxglove UVs)"),
            _ => self.vertex_count,
        };
        let mut cut = false;
        match component {
            Component::Vertices | Component::Normals => {
                let items = triples(array).ok_or("mesh vertices or normals not 3 numbers each")?;
                let target = if component == Component::Vertices {
                    &mut self.vertices
                } else {
                    &mut self.normals
                };
                cut = place(target, offset, items, limit)?;
            }
            Component::Indices => {
                let items = integers(array).ok_or("mesh indices not integers")?;
                cut = place(&mut self.indices, offset, items, limit)?;
            }
            Component::Colours => {
                let items = colours(array).ok_or("mesh colours not u32 or 4 bytes each")?;
                cut = place(&mut self.colours, offset, items, limit)?;
            }
            Component::Uvs => {}
        }
        if cut {
            return Err("mesh data past the declared count skipped");
        }
        Ok(())
    }

    /// Appends this mesh's primitive(s) to `entity` (a point mesh's points to `points`),
    /// tinted by `tint` (RGBA 0–255) where the mesh has no per-vertex colours; pushes the
    /// reason of anything not drawn to `lost`.
    pub fn draw(
        &self,
        place: &Placement,
        tint: [f64; 4],
        entity: &mut SceneEntity,
        points_out: &mut Vec<Point>,
        lost: &mut Vec<&'static str>,
    ) {
        if (self.vertices.len() as u64) < self.vertex_count
            || (self.indices.len() as u64) < self.index_count
        {
            lost.push("mesh drawn with fewer vertices or indices than declared");
        }
        if !self.colours.is_empty() && self.colours.len() < self.vertices.len() {
            lost.push("vertices without a colour drawn in the shape colour");
        }
        if !self.normals.is_empty() && self.topology != 3 {
            lost.push("vertex normals not carried (Foxglove shades by its own)");
        }
        let points: Vec<[f64; 3]> = self
            .vertices
            .iter()
            .map(|&v| map(&place.inner, v))
            .collect();
        let finite = |i: u64| {
            usize::try_from(i)
                .ok()
                .and_then(|i| points.get(i))
                .is_some_and(|p| p.iter().all(|x| x.is_finite()))
        };
        match self.topology {
            1 | 2 => {
                let k = if self.topology == 2 { 3 } else { 2 };
                let (indices, dropped) = self.elements(k, &finite, points.len());
                if dropped {
                    lost.push(if k == 3 {
                        "triangles with an index out of range or a non-finite vertex left out"
                    } else {
                        "line segments with an index out of range or a non-finite vertex left out"
                    });
                }
                if indices.is_empty() && dropped {
                    // Nothing left to draw (empty indices would mean "every vertex in order").
                    return;
                }
                let colors = self.vertex_colours(tint, points.len());
                let color = colour(tint);
                let points: Vec<Point3> = points
                    .iter()
                    .map(|p| {
                        // Unreferenced when non-finite (left out of `indices` above).
                        let [x, y, z] = p.map(|c| if c.is_finite() { c } else { 0.0 });
                        Point3 { x, y, z }
                    })
                    .collect();
                if k == 3 {
                    entity.triangles.push(TriangleListPrimitive {
                        pose: place.pose(),
                        points,
                        color,
                        colors,
                        indices,
                    });
                } else {
                    entity.lines.push(LinePrimitive {
                        r#type: LineType::LineList as i32,
                        pose: place.pose(),
                        thickness: if self.draw_scale > 0.0 {
                            self.draw_scale
                        } else {
                            1.0
                        },
                        scale_invariant: true,
                        points,
                        color,
                        colors,
                        indices,
                    });
                }
            }
            0 | 3 => {
                let keep: Vec<usize> = (0..points.len()).filter(|&i| finite(i as u64)).collect();
                if keep.len() < points.len() {
                    lost.push("non-finite vertices left out");
                }
                if self.topology == 0 {
                    if self.draw_scale > 0.0 {
                        lost.push("point size (3es: pixels) not carried by the point cloud");
                    }
                    points_out.extend(keep.iter().map(|&i| {
                        let rgba = self.colours.get(i).copied().unwrap_or(tint.map(byte));
                        (place.at(points[i]), rgba)
                    }));
                    return;
                }
                let size = point_size(keep.iter().map(|&i| points[i]));
                for i in keep {
                    let half = match self.normals.as_slice() {
                        [one] => Some(*one),
                        many => many.get(i).copied(),
                    };
                    let extent =
                        half.map_or([size; 3], |h| map_vector(&place.inner, h).map(|x| 2.0 * x));
                    entity.cubes.push(CubePrimitive {
                        pose: place.pose_at(points[i]),
                        size: Some(vector(extent)),
                        color: colour(self.colours.get(i).map_or(tint, |c| c.map(f64::from))),
                    });
                }
            }
            4 => lost.push("quad meshes not drawn (reserved in 3es, no Foxglove primitive)"),
            _ => lost.push("mesh of an unknown topology not drawn"),
        }
    }

    /// Indices of the whole elements (`k` vertices each) whose vertices all exist and are
    /// finite; empty when every vertex is used in order (Foxglove's un-indexed form), and
    /// whether any element was left out.
    fn elements(&self, k: usize, ok: &dyn Fn(u64) -> bool, n: usize) -> (Vec<u32>, bool) {
        let index = |i: u64| u32::try_from(i).ok();
        if self.indices.is_empty() {
            let whole = n / k * k;
            if whole == n && (0..n as u64).all(ok) {
                return (Vec::new(), false);
            }
            let kept: Vec<u32> = (0..whole as u64)
                .collect::<Vec<_>>()
                .chunks_exact(k)
                .filter(|e| e.iter().all(|&i| ok(i)))
                .flat_map(|e| e.iter().filter_map(|&i| index(i)).collect::<Vec<_>>())
                .collect();
            let dropped = kept.len() < n;
            return (kept, dropped);
        }
        let chunks = self.indices.chunks_exact(k);
        let mut dropped = !chunks.remainder().is_empty();
        let mut kept = Vec::with_capacity(self.indices.len());
        for e in chunks {
            match e.iter().map(|&i| index(i).filter(|_| ok(i))).collect() {
                Some(e) => kept.extend::<Vec<u32>>(e),
                None => dropped = true,
            }
        }
        (kept, dropped)
    }

    /// One colour per point when the mesh has vertex colours (the tint for those missing).
    fn vertex_colours(&self, tint: [f64; 4], n: usize) -> Vec<Color> {
        if self.colours.is_empty() {
            return Vec::new();
        }
        (0..n)
            .filter_map(|i| colour(self.colours.get(i).map_or(tint, |c| c.map(f64::from))))
            .collect()
    }
}

/// Writes `items` at `offset` of `target`, at most `limit` elements in all; `Ok(true)` when
/// some were cut at the limit, `Err` when the offset would leave a gap.
fn place<T>(
    target: &mut Vec<T>,
    offset: u64,
    items: Vec<T>,
    limit: u64,
) -> Result<bool, &'static str> {
    let len = target.len() as u64;
    if offset > len {
        return Err("mesh data that leaves a gap before it skipped");
    }
    let room = usize::try_from(limit.saturating_sub(offset)).unwrap_or(usize::MAX);
    let cut = items.len() > room;
    let start = offset as usize; // ≤ len, so it fits
    for (k, item) in items.into_iter().take(room).enumerate() {
        match target.get_mut(start + k) {
            Some(slot) => *slot = item,
            None => target.push(item),
        }
    }
    Ok(cut)
}

fn triples(array: &Array) -> Option<Vec<[f64; 3]>> {
    if array.shape.get(1).copied().unwrap_or(3) != 3 {
        return None;
    }
    let flat = floats(&Value::Array(array.clone()))?;
    Some(flat.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect())
}

/// Integer elements; a negative index becomes one no vertex has.
fn integers(array: &Array) -> Option<Vec<u64>> {
    let neg = |x: i64| u64::try_from(x).unwrap_or(u64::MAX);
    Some(match &array.data {
        ArrayData::U8(v) => v.iter().map(|&x| x.into()).collect(),
        ArrayData::U16(v) => v.iter().map(|&x| x.into()).collect(),
        ArrayData::U32(v) => v.iter().map(|&x| x.into()).collect(),
        ArrayData::U64(v) => v.clone(),
        ArrayData::I8(v) => v.iter().map(|&x| neg(x.into())).collect(),
        ArrayData::I16(v) => v.iter().map(|&x| neg(x.into())).collect(),
        ArrayData::I32(v) => v.iter().map(|&x| neg(x.into())).collect(),
        ArrayData::I64(v) => v.iter().map(|&x| neg(x)).collect(),
        _ => return None,
    })
}

/// 3es colours (spec §6.11): a u32 `0xRRGGBBAA` per vertex, or 4 bytes R, G, B, A.
fn colours(array: &Array) -> Option<Vec<[u8; 4]>> {
    match (&array.data, array.shape.get(1).copied().unwrap_or(1)) {
        (ArrayData::U32(v), 1) => Some(v.iter().map(|c| c.to_be_bytes()).collect()),
        (ArrayData::U8(v), 4) => Some(
            v.chunks_exact(4)
                .map(|c| [c[0], c[1], c[2], c[3]])
                .collect(),
        ),
        _ => None,
    }
}

/// 1 % of the diagonal of the points' bounding box (0.01 when they coincide).
fn point_size(points: impl Iterator<Item = [f64; 3]>) -> f64 {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in points {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let d = (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>().sqrt();
    if d.is_finite() && d > 0.0 {
        d / 100.0
    } else {
        0.01
    }
}

fn vector([x, y, z]: [f64; 3]) -> Vector3 {
    Vector3 { x, y, z }
}

/// RGBA 0–255 → Foxglove's 0–1.
/// A 0–255 channel as a byte (a tint's product may have a fraction).
fn byte(x: f64) -> u8 {
    x.round().clamp(0.0, 255.0) as u8
}

pub fn colour(c: [f64; 4]) -> Option<Color> {
    Some(Color {
        r: c[0] / 255.0,
        g: c[1] / 255.0,
        b: c[2] / 255.0,
        a: c[3] / 255.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(data: ArrayData, shape: Vec<usize>) -> Value {
        Value::Array(Array::with_shape(data, shape).unwrap())
    }

    fn origin() -> Placement {
        Placement::new([0.0; 3], [0.0, 0.0, 0.0, 1.0], IDENTITY)
    }

    #[test]
    fn triangles_keep_their_indices_and_drop_bad_ones() {
        let mut g = Geometry::new(2, 3, 6, 0.0);
        let v = buffer(
            ArrayData::F32(vec![0., 0., 0., 1., 0., 0., 0., 1., 0.]),
            vec![3, 3],
        );
        g.write(Component::Vertices, 0, &v).unwrap();
        let i = buffer(ArrayData::U32(vec![0, 1, 2, 0, 1, 7]), vec![6, 1]);
        g.write(Component::Indices, 0, &i).unwrap();
        let mut e = SceneEntity::default();
        let mut lost = Vec::new();
        g.draw(&origin(), [255.0; 4], &mut e, &mut Vec::new(), &mut lost);
        assert_eq!(e.triangles[0].indices, [0, 1, 2]);
        assert_eq!(e.triangles[0].points.len(), 3);
        assert_eq!(lost.len(), 1, "{lost:?}");
    }

    #[test]
    fn data_past_the_count_or_after_a_gap_is_skipped() {
        let mut g = Geometry::new(2, 2, 0, 0.0);
        let v = buffer(ArrayData::F64(vec![0.; 9]), vec![3, 3]);
        assert!(g.write(Component::Vertices, 0, &v).is_err());
        assert_eq!(g.vertices.len(), 2);
        assert!(g.write(Component::Vertices, u64::MAX, &v).is_err());
        assert_eq!(g.vertices.len(), 2);
    }

    #[test]
    fn colours_are_rrggbbaa() {
        let c = buffer(ArrayData::U32(vec![0xff00_80ff]), vec![1, 1]);
        let Value::Array(a) = c else { unreachable!() };
        assert_eq!(colours(&a).unwrap(), [[255, 0, 128, 255]]);
    }

    #[test]
    fn nan_vertices_are_left_out_of_unindexed_triangles() {
        let mut g = Geometry::new(2, 6, 0, 0.0);
        let mut v = vec![0.0f32; 18];
        v[10] = f32::NAN;
        g.write(
            Component::Vertices,
            0,
            &buffer(ArrayData::F32(v), vec![6, 3]),
        )
        .unwrap();
        let mut e = SceneEntity::default();
        let mut lost = Vec::new();
        g.draw(&origin(), [255.0; 4], &mut e, &mut Vec::new(), &mut lost);
        assert_eq!(e.triangles[0].indices, [0, 1, 2]);
        assert!(!lost.is_empty());
    }

    #[test]
    fn affines_compose_translation_rotation_scale() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        // 90° about Z, scale 2, then moved by (1, 0, 0).
        let m = affine([1.0, 0.0, 0.0], [0.0, 0.0, h, h], [2.0; 3]);
        let p = map(&compose(&IDENTITY, &m), [1.0, 0.0, 0.0]);
        assert!((p[0] - 1.0).abs() < 1e-12 && (p[1] - 2.0).abs() < 1e-12 && p[2].abs() < 1e-12);
    }
}
