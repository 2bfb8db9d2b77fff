//! Model values as Elodin DB bytes: a numeric value as a component's row (its elements in
//! the component's primitive type, little-endian, row-major), any record as a message's
//! payload (JSON text, or the bytes of a message read from a DB).

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde_json::{Map, Value as Json};

use super::layout::Primitive;
use crate::model::{Array, ArrayData, Field, Value};

/// The type and shape a value gives the component it starts: an array its own, a scalar
/// its type with shape `[]`; `None` for what is no number (Elodin has no strings).
pub fn schema_of(value: &Value) -> Option<(Primitive, Vec<usize>)> {
    Some(match value {
        Value::Array(a) => (Primitive::from_dtype(a.dtype())?, a.checked_shape()),
        Value::Bool(_) => (Primitive::Bool, Vec::new()),
        Value::Int(_) => (Primitive::I64, Vec::new()),
        Value::UInt(_) => (Primitive::U64, Vec::new()),
        Value::Float(_) => (Primitive::F64, Vec::new()),
        Value::F32(_) => (Primitive::F32, Vec::new()),
        _ => return None,
    })
}

/// Appends `value` as one row of `elements` elements of `prim`: an array of that type and
/// size as it is, a scalar where it holds exactly (an int32 signal's values arrive as
/// `Int`). `false`, with nothing appended, when it does not fit.
pub fn put_row(out: &mut Vec<u8>, value: &Value, prim: Primitive, elements: usize) -> bool {
    // On a little-endian host the elements are the row's bytes: one copy.
    #[cfg(target_endian = "little")]
    macro_rules! le {
        ($v:expr) => {{
            out.extend_from_slice(bytemuck::cast_slice(&$v[..]));
            true
        }};
    }
    #[cfg(target_endian = "big")]
    macro_rules! le {
        ($v:expr) => {{
            out.reserve($v.len() * prim.size());
            for x in $v {
                out.extend_from_slice(&x.to_le_bytes());
            }
            true
        }};
    }
    if let Value::Array(Array { data, .. }) = value {
        if data.len() != elements || Primitive::from_dtype(data.dtype()) != Some(prim) {
            return false;
        }
        return match data {
            ArrayData::Bool(v) => {
                out.extend(v.iter().map(|&b| u8::from(b)));
                true
            }
            ArrayData::U8(v) => {
                out.extend_from_slice(v);
                true
            }
            ArrayData::I8(v) => le!(v),
            ArrayData::U16(v) => le!(v),
            ArrayData::U32(v) => le!(v),
            ArrayData::U64(v) => le!(v),
            ArrayData::I16(v) => le!(v),
            ArrayData::I32(v) => le!(v),
            ArrayData::I64(v) => le!(v),
            ArrayData::F32(v) => le!(v),
            ArrayData::F64(v) => le!(v),
            ArrayData::Str(_) => false,
        };
    }
    if elements != 1 {
        return false;
    }
    scalar_bytes(value, prim).is_some_and(|(bytes, n)| {
        out.extend_from_slice(&bytes[..n]);
        true
    })
}

/// A scalar as `prim`'s bytes (and how many), when it holds there exactly.
fn scalar_bytes(value: &Value, prim: Primitive) -> Option<([u8; 8], usize)> {
    let mut out = [0; 8];
    let mut put = |b: &[u8]| {
        out[..b.len()].copy_from_slice(b);
        Some((out, b.len()))
    };
    let int: Option<i128> = match value {
        Value::Int(i) => Some((*i).into()),
        Value::UInt(u) => Some((*u).into()),
        _ => None,
    };
    match (value, prim, int) {
        (Value::Bool(b), Primitive::Bool, _) => put(&[u8::from(*b)]),
        (Value::Float(f), Primitive::F64, _) => put(&f.to_le_bytes()),
        (Value::Float(f), Primitive::F32, _) if f64::from(*f as f32) == *f => {
            put(&(*f as f32).to_le_bytes())
        }
        (Value::F32(f), Primitive::F32, _) => put(&f.to_le_bytes()),
        (Value::F32(f), Primitive::F64, _) => put(&f64::from(*f).to_le_bytes()),
        (_, Primitive::U8, Some(i)) => put(&u8::try_from(i).ok()?.to_le_bytes()),
        (_, Primitive::U16, Some(i)) => put(&u16::try_from(i).ok()?.to_le_bytes()),
        (_, Primitive::U32, Some(i)) => put(&u32::try_from(i).ok()?.to_le_bytes()),
        (_, Primitive::U64, Some(i)) => put(&u64::try_from(i).ok()?.to_le_bytes()),
        (_, Primitive::I8, Some(i)) => put(&i8::try_from(i).ok()?.to_le_bytes()),
        (_, Primitive::I16, Some(i)) => put(&i16::try_from(i).ok()?.to_le_bytes()),
        (_, Primitive::I32, Some(i)) => put(&i32::try_from(i).ok()?.to_le_bytes()),
        (_, Primitive::I64, Some(i)) => put(&i64::try_from(i).ok()?.to_le_bytes()),
        _ => None,
    }
}

/// The key of a message read from a DB (`reader.rs`): its payload, written back as it was.
pub const PAYLOAD: &str = "payload";

/// A record's values as one message: a DB message's own payload (text or bytes) as it
/// was; anything else as a JSON object of the values (bytes as base64 text, `Removed`
/// left out).
pub fn payload(values: &[Field]) -> Vec<u8> {
    match values {
        [(key, Value::Str(text))] if key == PAYLOAD => text.as_bytes().to_vec(),
        [(key, Value::Bytes(bytes))] if key == PAYLOAD => bytes.clone(),
        _ => {
            let object: Map<String, Json> = values
                .iter()
                .filter(|(_, v)| *v != Value::Removed)
                .map(|(k, v)| (k.clone(), json(v)))
                .collect();
            serde_json::to_vec(&Json::Object(object)).unwrap_or_default()
        }
    }
}

fn json(value: &Value) -> Json {
    match value {
        Value::Null | Value::Removed => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => (*i).into(),
        Value::UInt(u) => (*u).into(),
        Value::Float(f) => float(*f),
        Value::F32(f) => float(f64::from(*f)),
        Value::Str(s) => Json::String(s.clone()),
        Value::Bytes(b) | Value::Ext { bytes: b, .. } => Json::String(BASE64.encode(b)),
        Value::Array(a) => nested(a, &a.checked_shape(), 0).0,
        Value::List(items) => Json::Array(items.iter().map(json).collect()),
        Value::Map(fields) => {
            Json::Object(fields.iter().map(|(k, v)| (k.clone(), json(v))).collect())
        }
        Value::Dict(pairs) => Json::Array(
            pairs
                .iter()
                .map(|(k, v)| Json::Array(vec![json(k), json(v)]))
                .collect(),
        ),
    }
}

/// A float, or its name as text where JSON has no number for it (`NaN`, `inf`, `-inf`).
fn float(f: f64) -> Json {
    serde_json::Number::from_f64(f)
        .map(Json::Number)
        .unwrap_or_else(|| Json::String(format!("{f}")))
}

/// The array's elements from `at` nested by `shape` (row-major); with the next position.
fn nested(a: &Array, shape: &[usize], at: usize) -> (Json, usize) {
    match shape.split_first() {
        None => (element(&a.data, at), at + 1),
        Some((&n, rest)) => {
            let mut items = Vec::with_capacity(n);
            let mut at = at;
            for _ in 0..n {
                let (item, next) = nested(a, rest, at);
                items.push(item);
                at = next;
            }
            (Json::Array(items), at)
        }
    }
}

fn element(data: &ArrayData, i: usize) -> Json {
    match data {
        ArrayData::Bool(v) => v.get(i).map_or(Json::Null, |&b| Json::Bool(b)),
        ArrayData::U8(v) => v.get(i).map_or(Json::Null, |&x| x.into()),
        ArrayData::U16(v) => v.get(i).map_or(Json::Null, |&x| x.into()),
        ArrayData::U32(v) => v.get(i).map_or(Json::Null, |&x| x.into()),
        ArrayData::U64(v) => v.get(i).map_or(Json::Null, |&x| x.into()),
        ArrayData::I8(v) => v.get(i).map_or(Json::Null, |&x| x.into()),
        ArrayData::I16(v) => v.get(i).map_or(Json::Null, |&x| x.into()),
        ArrayData::I32(v) => v.get(i).map_or(Json::Null, |&x| x.into()),
        ArrayData::I64(v) => v.get(i).map_or(Json::Null, |&x| x.into()),
        ArrayData::F32(v) => v.get(i).map_or(Json::Null, |&x| float(f64::from(x))),
        ArrayData::F64(v) => v.get(i).map_or(Json::Null, |&x| float(x)),
        ArrayData::Str(v) => v.get(i).map_or(Json::Null, |s| Json::String(s.clone())),
    }
}
