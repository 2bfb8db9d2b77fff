//! Payload decoding per routing id (spec §6): values for records, and the facts the
//! validator and the world-state fold need (`Sem`).
//!
//! Every read is bounds-checked through [`Cur`]; an array is allocated only after its byte
//! length was checked against the payload.

use crate::formats::cursor::Cursor;
use crate::model::{Array, ArrayData, Entity, Field, Value};
use crate::report::Severity;

use super::codes::*;
use super::names;

/// Routing ids (spec §4).
pub const R_SERVER_INFO: u16 = 1;
pub const R_CONTROL: u16 = 2;
pub const R_COLLATED: u16 = 3;
pub const R_MESH: u16 = 4;
pub const R_CAMERA: u16 = 5;
pub const R_CATEGORY: u16 = 6;
pub const R_MATERIAL: u16 = 7;
pub const R_SHAPE_FIRST: u16 = 64;
pub const R_MESH_SHAPE: u16 = 72;
pub const R_MESH_SET: u16 = 73;
pub const R_POINT_CLOUD: u16 = 74;
pub const R_TEXT3D: u16 = 75;
pub const R_TEXT2D: u16 = 76;
pub const R_POSE: u16 = 77;
pub const R_SHAPE_LAST: u16 = 77;

/// Control message ids (spec §6.2).
pub const C_FRAME: u16 = 1;
pub const C_COORDINATE_FRAME: u16 = 2;
pub const C_FRAME_COUNT: u16 = 3;
pub const C_FORCE_FLUSH: u16 = 4;
pub const C_RESET: u16 = 5;
pub const C_KEYFRAME: u16 = 6;
pub const C_END: u16 = 7;

/// Shape message ids.
pub const S_CREATE: u16 = 1;
pub const S_UPDATE: u16 = 2;
pub const S_DESTROY: u16 = 3;
pub const S_DATA: u16 = 4;

/// Mesh resource message ids (spec §6.9).
pub const M_DESTROY: u16 = 1;
pub const M_CREATE: u16 = 2;
pub const M_REDEFINE: u16 = 9;
pub const M_FINALISE: u16 = 10;

pub const ATTR_F32: usize = 44;
pub const ATTR_F64: usize = 84;

/// ObjectFlag bits of 0.3/0.4 (update bits are the same in 0.2).
pub const F_DOUBLE: u16 = 1;
pub const F_REPLACE: u16 = 16;
pub const F_MULTI: u16 = 32;
pub const F_UPDATE_MODE: u16 = 512;
pub const F_POSITION: u16 = 1024;
pub const F_ROTATION: u16 = 2048;
pub const F_SCALE: u16 = 4096;
pub const F_COLOUR: u16 = 8192;

/// A bounds-checked big-endian cursor: the shared [`Cursor`], a read past the end `None`.
pub struct Cur<'a>(Cursor<'a>);

impl<'a> Cur<'a> {
    #[inline]
    pub fn new(b: &'a [u8]) -> Cur<'a> {
        Cur(Cursor::new(b))
    }
    #[inline]
    pub fn remaining(&self) -> usize {
        self.0.remaining()
    }
    #[inline]
    pub fn pos(&self) -> usize {
        self.0.pos()
    }
    /// Length of the whole payload, read or not.
    #[inline]
    pub fn payload_len(&self) -> usize {
        self.0.bytes().len()
    }
    /// The bytes not yet read.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        self.0.rest()
    }
    #[inline]
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        self.0.take(n).ok()
    }
    #[inline]
    pub fn u8(&mut self) -> Option<u8> {
        self.0.u8().ok()
    }
    #[inline]
    pub fn u16(&mut self) -> Option<u16> {
        self.0.u16_be().ok()
    }
    #[inline]
    pub fn u32(&mut self) -> Option<u32> {
        self.0.u32_be().ok()
    }
    #[inline]
    pub fn u64(&mut self) -> Option<u64> {
        self.0.u64_be().ok()
    }
    #[inline]
    pub fn f32(&mut self) -> Option<f32> {
        self.0.f32_be().ok()
    }
    #[inline]
    pub fn f64(&mut self) -> Option<f64> {
        self.0.f64_be().ok()
    }
    /// A float of the given width, widened.
    #[inline]
    pub fn real(&mut self, dp: bool) -> Option<f64> {
        if dp {
            self.f64()
        } else {
            self.f32().map(f64::from)
        }
    }
}

/// Object attributes (spec §6.6), widened to f64; `dp` says what the wire held.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Attrs {
    pub colour: u32,
    pub position: [f64; 3],
    pub rotation: [f64; 4],
    pub scale: [f64; 3],
    pub dp: bool,
}

impl Attrs {
    pub fn read(c: &mut Cur, dp: bool) -> Option<Attrs> {
        let colour = c.u32()?;
        let mut v = [0f64; 10];
        for x in &mut v {
            *x = c.real(dp)?;
        }
        Some(Attrs {
            colour,
            position: [v[0], v[1], v[2]],
            rotation: [v[3], v[4], v[5], v[6]],
            scale: [v[7], v[8], v[9]],
            dp,
        })
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.colour.to_be_bytes());
        let all = self
            .position
            .iter()
            .chain(&self.rotation)
            .chain(&self.scale);
        for x in all {
            if self.dp {
                out.extend_from_slice(&x.to_be_bytes());
            } else {
                out.extend_from_slice(&(*x as f32).to_be_bytes());
            }
        }
    }

    pub fn finite(&self) -> bool {
        self.position
            .iter()
            .chain(&self.rotation)
            .chain(&self.scale)
            .all(|x| x.is_finite())
    }

    fn fields(&self, out: &mut Vec<Field>) {
        out.push((
            "colour".to_string(),
            Value::Array(Array::flat(ArrayData::U8(
                self.colour.to_be_bytes().to_vec(),
            ))),
        ));
        out.push(("position".to_string(), reals(&self.position, self.dp)));
        out.push(("rotation".to_string(), reals(&self.rotation, self.dp)));
        out.push(("scale".to_string(), reals(&self.scale, self.dp)));
    }
}

fn reals(v: &[f64], dp: bool) -> Value {
    Value::Array(Array::flat(if dp {
        ArrayData::F64(v.to_vec())
    } else {
        ArrayData::F32(v.iter().map(|x| *x as f32).collect())
    }))
}

/// Attribute blocks of several children as [n,4] colours and [n,3]/[n,4]/[n,3] arrays.
fn blocks_fields(blocks: &[Attrs], dp: bool, prefix: &str, out: &mut Vec<Field>) {
    let n = blocks.len();
    let colours: Vec<u8> = blocks.iter().flat_map(|a| a.colour.to_be_bytes()).collect();
    let arr = |data: ArrayData, w: usize| Array::with_shape(data, vec![n, w]).map(Value::Array);
    let pick = |f: &dyn Fn(&Attrs) -> Vec<f64>, w: usize| -> Option<Value> {
        let flat: Vec<f64> = blocks.iter().flat_map(f).collect();
        if dp {
            arr(ArrayData::F64(flat), w)
        } else {
            arr(ArrayData::F32(flat.iter().map(|x| *x as f32).collect()), w)
        }
    };
    let fields = [
        ("colours", arr(ArrayData::U8(colours), 4)),
        ("positions", pick(&|a| a.position.to_vec(), 3)),
        ("rotations", pick(&|a| a.rotation.to_vec(), 4)),
        ("scales", pick(&|a| a.scale.to_vec(), 3)),
    ];
    for (k, v) in fields {
        if let Some(v) = v {
            out.push((format!("{prefix}{k}"), v));
        }
    }
}

/// What the validator and the world-state fold need from a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Sem {
    None,
    ServerInfo {
        time_unit: u64,
        frame_time: u32,
        coordinate_frame: u8,
    },
    Control {
        id: u16,
        flags: u32,
        value32: u32,
        value64: u64,
    },
    Category {
        id: u16,
        parent: u16,
        name: String,
    },
    Camera {
        id: u8,
    },
    ShapeCreate {
        id: u32,
        flags: u16,
        attrs: Attrs,
        /// (total children, children in this message) of a multi-shape.
        multi: Option<(u32, u32)>,
        /// Mesh resources referenced (MeshSet parts, PointCloud).
        resources: Vec<u32>,
    },
    ShapeUpdate {
        id: u32,
        flags: u16,
        attrs: Attrs,
    },
    ShapeDestroy {
        id: u32,
    },
    ShapeData {
        id: u32,
        /// Multi-shape children carried.
        children: Option<u32>,
    },
    MeshCreate {
        id: u32,
        vertices: u32,
        indices: u32,
    },
    MeshComponent {
        id: u32,
        message: u16,
    },
    MeshDestroy {
        id: u32,
    },
}

/// A problem met while decoding one payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    pub severity: Severity,
    pub code: &'static str,
    pub message: String,
}

fn note(severity: Severity, code: &'static str, message: impl Into<String>) -> Note {
    Note {
        severity,
        code,
        message: message.into(),
    }
}

/// The decoded form of one message.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub entity: Option<Entity>,
    pub values: Vec<Field>,
    pub sem: Sem,
    pub notes: Vec<Note>,
}

/// What decoding needs beyond the payload.
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    pub version_minor: u16,
    /// Build values (otherwise only `Sem`, entity and notes).
    pub values: bool,
    /// Precision of the shape a Data message belongs to, when known.
    pub data_dp: Option<bool>,
}

impl Ctx {
    fn legacy(&self) -> bool {
        self.version_minor < 3
    }
}

struct Dec<'a> {
    ctx: Ctx,
    routing: u16,
    message: u16,
    c: Cur<'a>,
    out: Decoded,
}

impl Dec<'_> {
    fn put(&mut self, key: &str, v: Value) {
        if self.ctx.values {
            self.out.values.push((key.to_string(), v));
        }
    }
    fn uint(&mut self, key: &str, v: impl Into<u64>) {
        self.put(key, Value::UInt(v.into()));
    }
    fn note(&mut self, n: Note) {
        self.out.notes.push(n);
    }
    fn short(&mut self) {
        let len = self.c.payload_len();
        self.note(note(
            Severity::Error,
            PAYLOAD_SHORT,
            format!(
                "{} payload of {len} bytes is shorter than its layout requires",
                names::message_name(self.routing, self.message)
            ),
        ));
    }
    fn check_long(&mut self) {
        let left = self.c.remaining();
        if left > 0 {
            self.note(note(
                Severity::Warning,
                PAYLOAD_LONG,
                format!(
                    "{left} bytes left over after a fully decoded {} payload",
                    names::message_name(self.routing, self.message)
                ),
            ));
        }
    }
    fn text(&mut self, key: &str, bytes: &[u8]) -> String {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                let s = s.to_string();
                self.put(key, Value::Str(s.clone()));
                s
            }
            Err(_) => {
                self.note(note(
                    Severity::Warning,
                    INVALID_UTF8,
                    format!("{key} is not UTF-8"),
                ));
                let s = String::from_utf8_lossy(bytes).into_owned();
                self.put(key, Value::Str(s.clone()));
                s
            }
        }
    }
    fn opaque(&mut self) {
        if self.ctx.values {
            let rest = self.c.take(self.c.remaining()).unwrap_or_default().to_vec();
            self.put("payload", Value::Array(Array::flat(ArrayData::U8(rest))));
        }
    }
}

/// Decodes one payload.
pub fn decode(routing: u16, message: u16, payload: &[u8], ctx: Ctx) -> Decoded {
    let mut d = Dec {
        ctx,
        routing,
        message,
        c: Cur::new(payload),
        out: Decoded {
            entity: None,
            // One allocation for the usual dozen fields instead of growing step by step.
            values: if ctx.values {
                Vec::with_capacity(12)
            } else {
                Vec::new()
            },
            sem: Sem::None,
            notes: Vec::new(),
        },
    };
    d.put(
        "message",
        Value::Str(names::message_name(routing, message).to_string()),
    );
    let known = match routing {
        R_SERVER_INFO => message == 0 && server_info(&mut d).known_or_short(&mut d),
        R_CONTROL => (1..=7).contains(&message) && control(&mut d).known_or_short(&mut d),
        R_CATEGORY => message == 0 && category(&mut d).known_or_short(&mut d),
        R_CAMERA => message == 0 && camera(&mut d),
        R_MESH => (1..=10).contains(&message) && mesh(&mut d).known_or_short(&mut d),
        R_MATERIAL => {
            d.opaque();
            true
        }
        R_SHAPE_FIRST..=R_SHAPE_LAST => {
            (1..=4).contains(&message) && shape(&mut d).known_or_short(&mut d)
        }
        _ => {
            d.put("routing_id", Value::UInt(routing.into()));
            d.opaque();
            true
        }
    };
    if !known {
        d.note(note(
            Severity::Warning,
            UNKNOWN_MESSAGE,
            format!("message id {message} is unknown for routing id {routing}"),
        ));
        d.c = Cur::new(payload);
        d.opaque();
    }
    d.out
}

trait ShortExt {
    fn known_or_short(self, d: &mut Dec) -> bool;
}

impl ShortExt for Option<()> {
    /// A known message: a payload cut short is reported (and the message still counts as known).
    fn known_or_short(self, d: &mut Dec) -> bool {
        match self {
            Some(()) => d.check_long(),
            None => d.short(),
        }
        true
    }
}

fn server_info(d: &mut Dec) -> Option<()> {
    let time_unit = d.c.u64()?;
    let frame_time = d.c.u32()?;
    let cf = d.c.u8()?;
    d.uint("time_unit", time_unit);
    d.uint("default_frame_time", frame_time);
    d.uint("coordinate_frame", cf);
    // The reserved bytes (35 or 31) are not decoded.
    d.c.take(d.c.remaining());
    d.out.sem = Sem::ServerInfo {
        time_unit,
        frame_time,
        coordinate_frame: cf,
    };
    Some(())
}

fn control(d: &mut Dec) -> Option<()> {
    let flags = d.c.u32()?;
    let value32 = d.c.u32()?;
    let value64 = d.c.u64()?;
    d.uint("control_flags", flags);
    if d.ctx.values && d.message == C_FRAME {
        let mut names = Vec::new();
        if flags & 1 != 0 {
            names.push(Value::Str("Persist".into()));
        }
        if flags & 2 != 0 {
            names.push(Value::Str("Flush".into()));
        }
        d.put("control_flag_names", Value::List(names));
    }
    d.uint("value32", value32);
    d.uint("value64", value64);
    d.out.sem = Sem::Control {
        id: d.message,
        flags,
        value32,
        value64,
    };
    Some(())
}

fn category(d: &mut Dec) -> Option<()> {
    let id = d.c.u16()?;
    let parent = d.c.u16()?;
    let active = d.c.u16()?;
    let len = d.c.u16()?;
    let bytes = d.c.take(len as usize)?;
    d.out.entity = Some(id.into());
    d.uint("category_id", id);
    d.uint("parent_id", parent);
    d.put("default_active", Value::Bool(active != 0));
    let name = d.text("name", bytes);
    d.out.sem = Sem::Category { id, parent, name };
    Some(())
}

fn camera(d: &mut Dec) -> bool {
    let len = d.c.remaining();
    let variant = match len {
        52 => "52 bytes (C# core)",
        54 => "54 bytes (csiro-robotics C++ core)",
        56 => "56 bytes (KazNX C++ core)",
        _ => {
            d.note(note(
                Severity::Warning,
                CAMERA_LAYOUT,
                format!(
                    "Camera payload of {len} bytes matches no layout (52, 54 or 56): kept opaque"
                ),
            ));
            d.opaque();
            return true;
        }
    };
    d.note(note(
        Severity::Info,
        CAMERA_LAYOUT,
        format!("Camera layout: {variant}"),
    ));
    let (Some(id), Some(flags)) = (d.c.u8(), d.c.u8()) else {
        return true;
    };
    d.out.entity = Some(id.into());
    d.out.sem = Sem::Camera { id };
    d.uint("camera_id", id);
    d.uint("flags", flags);
    match len {
        52 => {
            d.c.take(2);
        }
        54 => {
            d.c.take(4);
        }
        _ => {
            let cf = d.c.u16().unwrap_or(0);
            d.uint("coordinate_frame", cf);
            d.c.take(4);
        }
    }
    if flags & 1 != 0 {
        d.opaque();
        return true;
    }
    let mut v = [0f32; 12];
    for x in &mut v {
        *x = d.c.f32().unwrap_or(0.0);
    }
    let f3 = |a: &[f32]| Value::Array(Array::flat(ArrayData::F32(a.to_vec())));
    d.put("position", f3(&v[0..3]));
    d.put("facing", f3(&v[3..6]));
    d.put("up", f3(&v[6..9]));
    d.put("near_clip", Value::Float(v[9].into()));
    d.put("far_clip", Value::Float(v[10].into()));
    d.put("fov", Value::Float(v[11].into()));
    true
}

/// Element sizes of DataBuffer content types 1..=12 (0 = None is unknown).
fn content_size(t: u8) -> Option<usize> {
    Some(match t {
        1 | 2 => 1,
        3 | 4 | 11 => 2,
        5 | 6 | 9 | 12 => 4,
        7 | 8 | 10 => 8,
        _ => return None,
    })
}

/// A DataBuffer (spec §6.10): (offset, count, component_count, values as [count, comp]).
fn data_buffer(d: &mut Dec) -> Option<(u32, u16, u8)> {
    let offset = d.c.u32()?;
    let count = d.c.u16()?;
    let comp = d.c.u8()?;
    let ctype = d.c.u8()?;
    let Some(size) = content_size(ctype) else {
        d.note(note(
            Severity::Error,
            MESH_DATA,
            format!("DataBuffer content type {ctype} is unknown"),
        ));
        d.opaque();
        return Some((offset, count, comp));
    };
    let (unit, origin) = quantisation(d, ctype, comp)?;
    let n = count as usize * comp as usize;
    let bytes = d.c.take(n * size)?;
    d.uint("offset", offset);
    if d.ctx.values {
        let data = buffer_values(ctype, bytes, comp, unit, &origin);
        let shape = vec![count as usize, comp as usize];
        if let Some(a) = Array::with_shape(data, shape) {
            d.put("data", Value::Array(a));
        }
        d.put(
            "content_type",
            Value::Str(names::content_type(ctype).into()),
        );
    }
    Some((offset, count, comp))
}

/// The unit and per-component origin of a quantised DataBuffer (content types 11 and
/// 12); 1 and none for the others.
fn quantisation(d: &mut Dec, ctype: u8, comp: u8) -> Option<(f64, Vec<f64>)> {
    Some(match ctype {
        11 => {
            let u = d.c.f32()?.into();
            let mut o = Vec::with_capacity(comp as usize);
            for _ in 0..comp {
                o.push(d.c.f32()?.into());
            }
            (u, o)
        }
        12 => {
            let u = d.c.f64()?;
            let mut o = Vec::with_capacity(comp as usize);
            for _ in 0..comp {
                o.push(d.c.f64()?);
            }
            (u, o)
        }
        _ => (1.0, Vec::new()),
    })
}

/// A DataBuffer's values from its big-endian `bytes`, quantised ones restored with
/// `unit` and `origin`.
fn buffer_values(ctype: u8, bytes: &[u8], comp: u8, unit: f64, origin: &[f64]) -> ArrayData {
    match ctype {
        1 => ArrayData::I8(bytes.iter().map(|b| *b as i8).collect()),
        2 => ArrayData::U8(bytes.to_vec()),
        3 => ArrayData::I16(
            bytes
                .chunks_exact(2)
                .map(|b| i16::from_be_bytes([b[0], b[1]]))
                .collect(),
        ),
        4 => ArrayData::U16(
            bytes
                .chunks_exact(2)
                .map(|b| u16::from_be_bytes([b[0], b[1]]))
                .collect(),
        ),
        5 => ArrayData::I32(
            bytes
                .chunks_exact(4)
                .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ),
        6 => ArrayData::U32(
            bytes
                .chunks_exact(4)
                .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ),
        7 => ArrayData::I64(
            bytes
                .chunks_exact(8)
                .map(|b| i64::from_be_bytes(b.try_into().unwrap_or_default()))
                .collect(),
        ),
        8 => ArrayData::U64(
            bytes
                .chunks_exact(8)
                .map(|b| u64::from_be_bytes(b.try_into().unwrap_or_default()))
                .collect(),
        ),
        9 => ArrayData::F32(
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_be_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ),
        10 => ArrayData::F64(
            bytes
                .chunks_exact(8)
                .map(|b| f64::from_be_bytes(b.try_into().unwrap_or_default()))
                .collect(),
        ),
        11 => ArrayData::F32(
            bytes
                .chunks_exact(2)
                .enumerate()
                .map(|(i, b)| {
                    let o = origin.get(i % comp.max(1) as usize).copied().unwrap_or(0.0);
                    (f64::from(i16::from_be_bytes([b[0], b[1]])) * unit + o) as f32
                })
                .collect(),
        ),
        _ => ArrayData::F64(
            bytes
                .chunks_exact(4)
                .enumerate()
                .map(|(i, b)| {
                    let o = origin.get(i % comp.max(1) as usize).copied().unwrap_or(0.0);
                    f64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])) * unit + o
                })
                .collect(),
        ),
    }
}

fn mesh(d: &mut Dec) -> Option<()> {
    let id = d.c.u32()?;
    d.out.entity = Some(id.into());
    d.uint("mesh_id", id);
    match d.message {
        M_DESTROY => d.out.sem = Sem::MeshDestroy { id },
        M_CREATE | M_REDEFINE => {
            let vertices = d.c.u32()?;
            let indices = d.c.u32()?;
            let (flags, draw_type, attrs) = if d.ctx.legacy() {
                // 0.1/0.2: no flags field; attributes always f32.
                let draw_type = d.c.u8()?;
                (0, draw_type, Attrs::read(&mut d.c, false)?)
            } else {
                let flags = d.c.u16()?;
                let draw_type = d.c.u8()?;
                (flags, draw_type, Attrs::read(&mut d.c, flags & 1 != 0)?)
            };
            d.uint("vertex_count", vertices);
            d.uint("index_count", indices);
            d.uint("flags", flags);
            d.uint("draw_type", draw_type);
            if d.ctx.values {
                attrs.fields(&mut d.out.values);
            }
            if flags & 2 != 0 {
                let scale = d.c.f32()?;
                d.put("draw_scale", Value::Float(scale.into()));
            }
            d.out.sem = Sem::MeshCreate {
                id,
                vertices,
                indices,
            };
        }
        3..=7 => {
            d.out.sem = Sem::MeshComponent {
                id,
                message: d.message,
            };
            if d.ctx.legacy() {
                d.opaque();
                return Some(());
            }
            let (_, _, comp) = data_buffer(d)?;
            let want: &[u8] = match d.message {
                3 | 6 => &[3],
                7 => &[2],
                5 => &[1, 4],
                _ => &[],
            };
            if !want.is_empty() && !want.contains(&comp) {
                d.note(note(
                    Severity::Error,
                    MESH_DATA,
                    format!(
                        "{} DataBuffer has {comp} components per element",
                        names::message_name(d.routing, d.message)
                    ),
                ));
            }
        }
        M_FINALISE => {
            let flags = d.c.u16()?;
            d.uint("flags", flags);
            d.out.sem = Sem::MeshComponent {
                id,
                message: d.message,
            };
        }
        _ => {
            // SetMaterial (8): never implemented anywhere.
            d.out.sem = Sem::MeshComponent {
                id,
                message: d.message,
            };
            d.opaque();
        }
    }
    Some(())
}

/// Whether a shape's flags say double precision, by version (0.1/0.2 have none).
fn dp_flag(ctx: Ctx, flags: u16) -> bool {
    !ctx.legacy() && flags & F_DOUBLE != 0
}

/// The MultiShape flag bit by version.
fn multi_flag(ctx: Ctx) -> u16 {
    match ctx.version_minor {
        0 | 1 => 0,
        2 => 16,
        _ => F_MULTI,
    }
}

fn is_simple(routing: u16) -> bool {
    (64..=71).contains(&routing) || routing == R_POSE
}

fn shape(d: &mut Dec) -> Option<()> {
    let ctx = d.ctx;
    let id = d.c.u32()?;
    d.out.entity = Some(id.into());
    d.uint("object_id", id);
    match d.message {
        S_CREATE => shape_create(d, id),
        S_UPDATE => {
            let flags = d.c.u16()?;
            let mut dp = dp_flag(ctx, flags);
            let len = d.c.payload_len();
            if ctx.version_minor == 3 && flags & 64 != 0 && !dp && len >= 6 + ATTR_F64 {
                dp = true;
                d.note(note(
                    Severity::Warning,
                    DOUBLE_PRECISION_64,
                    "Update decoded as double precision by flag 64 (mid-2020 0.3 writers)",
                ));
            }
            let attrs = Attrs::read(&mut d.c, dp)?;
            d.uint("flags", flags);
            flag_names(d, flags);
            if d.ctx.values {
                attrs.fields(&mut d.out.values);
            }
            d.out.sem = Sem::ShapeUpdate { id, flags, attrs };
            Some(())
        }
        S_DESTROY => {
            d.out.sem = Sem::ShapeDestroy { id };
            Some(())
        }
        _ => shape_data(d, id),
    }
}

fn flag_names(d: &mut Dec, flags: u16) {
    if d.ctx.values {
        let names = names::flag_names(d.ctx.version_minor, d.routing, flags)
            .into_iter()
            .map(|n| Value::Str(n.into()))
            .collect();
        d.put("flag_names", Value::List(names));
    }
}

fn read_blocks(c: &mut Cur, n: usize, dp: bool) -> Option<Vec<Attrs>> {
    let size = if dp { ATTR_F64 } else { ATTR_F32 };
    if n.checked_mul(size)? > c.remaining() {
        return None;
    }
    (0..n).map(|_| Attrs::read(c, dp)).collect()
}

fn shape_create(d: &mut Dec, id: u32) -> Option<()> {
    let category = d.c.u16()?;
    let flags = d.c.u16()?;
    let _reserved = d.c.u16()?;
    let dp = create_precision(d, flags);
    let attrs = Attrs::read(&mut d.c, dp)?;
    d.uint("category", category);
    d.uint("flags", flags);
    flag_names(d, flags);
    if d.ctx.values {
        attrs.fields(&mut d.out.values);
    }
    let mut multi = None;
    let mut resources = Vec::new();
    if is_multi_shape(d, flags, dp) {
        multi = Some(multi_shape(d, dp)?);
    } else {
        resources = create_tail(d, dp)?;
    }
    if !attrs.finite() {
        d.note(nonfinite());
    }
    d.out.sem = Sem::ShapeCreate {
        id,
        flags,
        attrs,
        multi,
        resources,
    };
    Some(())
}

/// Whether a Create's attributes are double precision: by its flags, or by flag 64 where
/// mid-2020 0.3 writers set it and the payload's length agrees.
fn create_precision(d: &mut Dec, flags: u16) -> bool {
    let ctx = d.ctx;
    let len = d.c.payload_len();
    let dp = dp_flag(ctx, flags);
    if ctx.version_minor == 3
        && flags & 64 != 0
        && !dp
        && d.routing != R_MESH_SET
        && len >= 10 + ATTR_F64
        && (is_simple(d.routing) && len != 10 + ATTR_F32)
    {
        d.note(note(
            Severity::Warning,
            DOUBLE_PRECISION_64,
            "Create decoded as double precision by flag 64 (mid-2020 0.3 writers)",
        ));
        return true;
    }
    dp
}

/// Whether the rest of a Create is a MultiShape: flagged, or a simple shape whose rest
/// has exactly a MultiShape's layout although the flag is clear.
fn is_multi_shape(d: &mut Dec, flags: u16, dp: bool) -> bool {
    let asize = if dp { ATTR_F64 } else { ATTR_F32 };
    let multi_bit = multi_flag(d.ctx);
    let flagged = multi_bit != 0 && flags & multi_bit != 0;
    let extra = d.c.remaining();
    let unflagged = !flagged && is_simple(d.routing) && extra > 0 && {
        // Tolerance 9: total u32, in_this_message u16, then exactly that many blocks.
        let mut peek = Cur::new(d.c.rest());
        match (peek.u32(), peek.u16()) {
            (Some(total), Some(n)) => extra == 6 + n as usize * asize && total >= n as u32,
            _ => false,
        }
    };
    if unflagged {
        d.note(note(
            Severity::Info,
            MULTISHAPE_FLAG_MISSING,
            "a Create decoded as a MultiShape although its MultiShape flag is clear (C++ library bug)",
        ));
    }
    flagged || unflagged
}

/// A MultiShape's children: (total over all messages, how many in this one).
fn multi_shape(d: &mut Dec, dp: bool) -> Option<(u32, u32)> {
    let total = d.c.u32()?;
    let n = d.c.u16()?;
    let blocks = read_blocks(&mut d.c, n as usize, dp)?;
    d.uint("total_count", total);
    if d.ctx.values {
        let mut f = Vec::new();
        blocks_fields(&blocks, dp, "child_", &mut f);
        d.out.values.extend(f);
    }
    if blocks.iter().any(|b| !b.finite()) {
        d.note(nonfinite());
    }
    Some((total, n as u32))
}

/// What a Create of a complex shape carries after its attributes; the ids of the
/// resources it uses.
fn create_tail(d: &mut Dec, dp: bool) -> Option<Vec<u32>> {
    let mut resources = Vec::new();
    match d.routing {
        R_TEXT3D | R_TEXT2D => {
            let n = d.c.u16()?;
            let bytes = d.c.take(n as usize)?;
            d.text("text", bytes);
        }
        R_MESH_SHAPE => {
            let vertices = d.c.u32()?;
            let indices = d.c.u32()?;
            d.uint("vertex_count", vertices);
            d.uint("index_count", indices);
            if d.ctx.version_minor >= 2 {
                let s = d.c.f32()?;
                d.put("draw_scale", Value::Float(s.into()));
            }
            let topology = d.c.u8()?;
            d.uint("topology", topology);
        }
        R_MESH_SET => mesh_set_parts(d, dp, &mut resources)?,
        R_POINT_CLOUD => {
            let mesh = d.c.u32()?;
            let indices = d.c.u32()?;
            resources.push(mesh);
            d.uint("mesh_id", mesh);
            d.uint("index_count", indices);
            if d.ctx.version_minor >= 2 {
                let s = d.c.f32()?;
                d.put("point_size", Value::Float(s.into()));
            } else {
                let s = d.c.u8()?;
                d.put("point_size", Value::Float(s.into()));
            }
        }
        _ => {}
    }
    Some(resources)
}

/// A MeshSet's parts: each a mesh resource id and its transform.
fn mesh_set_parts(d: &mut Dec, dp: bool, resources: &mut Vec<u32>) -> Option<()> {
    let asize = if dp { ATTR_F64 } else { ATTR_F32 };
    let parts = d.c.u16()? as usize;
    let size = 4 + asize;
    if parts.checked_mul(size)? > d.c.remaining() {
        return None;
    }
    let mut blocks = Vec::with_capacity(parts);
    for _ in 0..parts {
        resources.push(d.c.u32()?);
        blocks.push(Attrs::read(&mut d.c, dp)?);
    }
    if d.ctx.values {
        d.put(
            "part_resource_ids",
            Value::Array(Array::flat(ArrayData::U32(resources.clone()))),
        );
        let mut f = Vec::new();
        blocks_fields(&blocks, dp, "part_", &mut f);
        d.out.values.extend(f);
    }
    Some(())
}

fn nonfinite() -> Note {
    note(
        Severity::Info,
        NONFINITE_ATTRIBUTE,
        "NaN or infinity in attributes",
    )
}

fn shape_data(d: &mut Dec, id: u32) -> Option<()> {
    let ctx = d.ctx;
    match d.routing {
        R_MESH_SHAPE | R_POINT_CLOUD if ctx.legacy() => {
            d.out.sem = Sem::ShapeData { id, children: None };
            d.opaque();
        }
        R_MESH_SHAPE => {
            let data_type = d.c.u16()?;
            d.uint("data_type", data_type);
            d.put(
                "data_type_name",
                Value::Str(names::mesh_data_type(data_type).into()),
            );
            d.out.sem = Sem::ShapeData { id, children: None };
            if data_type == 0xFFFF {
                // End: offset u32 and count u16, both 0.
                let _ = d.c.u32()?;
                let _ = d.c.u16()?;
                return Some(());
            }
            let (_, _, comp) = data_buffer(d)?;
            let want = match data_type {
                0 | 2 => Some(3),
                _ => None,
            };
            if want.is_some_and(|w| w != comp) || data_type > 3 {
                d.note(note(
                    Severity::Error,
                    MESH_DATA,
                    format!("MeshShape data type {data_type} with {comp} components per element"),
                ));
            }
        }
        R_POINT_CLOUD => {
            d.out.sem = Sem::ShapeData { id, children: None };
            data_buffer(d)?;
        }
        _ => {
            // Multi-shape children (any simple shape), or opaque data.
            let n = d.c.u16()? as usize;
            let left = d.c.remaining();
            let dp = ctx.data_dp.unwrap_or(n > 0 && left == n * ATTR_F64);
            let blocks = read_blocks(&mut d.c, n, dp)?;
            if d.ctx.values {
                let mut f = Vec::new();
                blocks_fields(&blocks, dp, "child_", &mut f);
                d.out.values.extend(f);
            }
            d.out.sem = Sem::ShapeData {
                id,
                children: Some(n as u32),
            };
        }
    }
    Some(())
}
