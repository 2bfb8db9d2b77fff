//! Event bodies (spec §6): exactly one MessagePack map with string keys, decoded with rmpv
//! into model values (each msgpack type its own value: float32 stays `F32`, bin `Bytes`,
//! ext `Ext`), and encoded back with rmp.

use rmp::encode as enc;
use rmpv::ValueRef;

use crate::model::{Array, ArrayData, Field, Value};
use crate::report::LossReport;

/// Nesting deeper than this is refused (a body is a .NET object, not a deep tree).
const MAX_DEPTH: usize = 64;

/// The body's fields, or why it is not one msgpack map with string keys.
pub fn decode(body: &[u8]) -> Result<Vec<Field>, String> {
    let mut rest = body;
    let top = rmpv::decode::read_value_ref_with_max_depth(&mut rest, MAX_DEPTH)
        .map_err(|e| format!("not MessagePack: {e}"))?;
    if !rest.is_empty() {
        return Err(format!(
            "{} bytes after the body's MessagePack value",
            rest.len()
        ));
    }
    let ValueRef::Map(entries) = top else {
        return Err("the body is MessagePack but not a map".into());
    };
    let mut fields = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        let ValueRef::String(k) = k else {
            return Err("a body key is not a string".into());
        };
        let Some(k) = k.into_str() else {
            return Err("a body key is not valid UTF-8".into());
        };
        fields.push((k.to_string(), value(v)?));
    }
    Ok(fields)
}

fn value(v: ValueRef) -> Result<Value, String> {
    Ok(match v {
        ValueRef::Nil => Value::Null,
        ValueRef::Boolean(b) => Value::Bool(b),
        ValueRef::Integer(i) => match i.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::UInt(i.as_u64().unwrap_or_default()),
        },
        ValueRef::F32(x) => Value::F32(x),
        ValueRef::F64(x) => Value::Float(x),
        ValueRef::String(s) => match s.into_str() {
            Some(s) => Value::Str(s.to_string()),
            None => return Err("a string is not valid UTF-8".into()),
        },
        ValueRef::Binary(b) => Value::Bytes(b.to_vec()),
        // A list of floats of one width (a Vector3, a Quaternion) is a typed array.
        ValueRef::Array(items)
            if !items.is_empty() && items.iter().all(|x| matches!(x, ValueRef::F64(_))) =>
        {
            let xs = items
                .iter()
                .map(|x| if let ValueRef::F64(x) = x { *x } else { 0.0 })
                .collect();
            Value::Array(Array::flat(ArrayData::F64(xs)))
        }
        ValueRef::Array(items)
            if !items.is_empty() && items.iter().all(|x| matches!(x, ValueRef::F32(_))) =>
        {
            let xs = items
                .iter()
                .map(|x| if let ValueRef::F32(x) = x { *x } else { 0.0 })
                .collect();
            Value::Array(Array::flat(ArrayData::F32(xs)))
        }
        ValueRef::Array(items) => {
            Value::List(items.into_iter().map(value).collect::<Result<_, _>>()?)
        }
        ValueRef::Map(entries) => {
            let strings = entries
                .iter()
                .all(|(k, _)| matches!(k, ValueRef::String(s) if s.as_str().is_some()));
            if strings {
                let mut m = Vec::with_capacity(entries.len());
                for (k, v) in entries {
                    let k = match k {
                        ValueRef::String(s) => s.into_str().unwrap_or_default().to_string(),
                        _ => String::new(),
                    };
                    m.push((k, value(v)?));
                }
                Value::Map(m)
            } else {
                let mut d = Vec::with_capacity(entries.len());
                for (k, v) in entries {
                    d.push((value(k)?, value(v)?));
                }
                Value::Dict(d)
            }
        }
        ValueRef::Ext(t, b) => Value::Ext {
            type_id: t,
            bytes: b.to_vec(),
        },
    })
}

/// The numbers of a list as f64 when every element is a number (a Vector3 or Quaternion
/// written with integers); `None` for a typed array (already one) or anything else.
pub fn numbers(v: &Value) -> Option<Array> {
    match v {
        Value::List(items) => {
            if items.iter().all(|x| matches!(x, Value::F32(_))) && !items.is_empty() {
                let xs = items
                    .iter()
                    .map(|x| if let Value::F32(x) = x { *x } else { 0.0 })
                    .collect();
                return Some(Array::flat(ArrayData::F32(xs)));
            }
            let xs = items
                .iter()
                .map(|x| match x {
                    Value::Float(x) => Some(*x),
                    Value::F32(x) => Some(*x as f64),
                    Value::Int(i) => Some(*i as f64),
                    Value::UInt(u) => Some(*u as f64),
                    _ => None,
                })
                .collect::<Option<Vec<f64>>>()?;
            Some(Array::flat(ArrayData::F64(xs)))
        }
        _ => None,
    }
}

/// Writing to a Vec cannot fail.
fn ok<T, E>(r: Result<T, E>) {
    let _ = r;
}

/// Encodes `fields` as one msgpack map; what msgpack cannot hold (`Removed`) is left out
/// and counted in `loss` under `channel`.
pub fn encode(out: &mut Vec<u8>, fields: &[(&str, &Value)], channel: &str, loss: &mut LossReport) {
    let kept: Vec<&(&str, &Value)> = fields
        .iter()
        .filter(|(k, v)| {
            let removed = matches!(v, Value::Removed);
            if removed {
                loss.add(channel, k, "a removal marker has no MessagePack form");
            }
            !removed
        })
        .collect();
    ok(enc::write_map_len(out, kept.len() as u32));
    for (k, v) in kept {
        ok(enc::write_str(out, k));
        encode_value(out, v);
    }
}

fn encode_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null | Value::Removed => ok(enc::write_nil(out)),
        Value::Bool(b) => ok(enc::write_bool(out, *b)),
        Value::Int(i) => ok(enc::write_sint(out, *i)),
        Value::UInt(u) => ok(enc::write_uint(out, *u)),
        Value::Float(x) => ok(enc::write_f64(out, *x)),
        Value::F32(x) => ok(enc::write_f32(out, *x)),
        Value::Str(s) => ok(enc::write_str(out, s)),
        Value::Bytes(b) => ok(enc::write_bin(out, b)),
        Value::Ext { type_id, bytes } => {
            ok(enc::write_ext_meta(out, bytes.len() as u32, *type_id));
            out.extend_from_slice(bytes);
        }
        Value::List(items) => {
            ok(enc::write_array_len(out, items.len() as u32));
            for x in items {
                encode_value(out, x);
            }
        }
        Value::Map(fields) => {
            ok(enc::write_map_len(out, fields.len() as u32));
            for (k, x) in fields {
                ok(enc::write_str(out, k));
                encode_value(out, x);
            }
        }
        Value::Dict(entries) => {
            ok(enc::write_map_len(out, entries.len() as u32));
            for (k, x) in entries {
                encode_value(out, k);
                encode_value(out, x);
            }
        }
        Value::Array(a) => encode_array(out, a, &a.checked_shape(), 0),
    }
}

/// A typed array as nested msgpack arrays by its shape (row-major).
fn encode_array(out: &mut Vec<u8>, a: &Array, shape: &[usize], start: usize) {
    let Some((&n, inner)) = shape.split_first() else {
        element(out, &a.data, start);
        return;
    };
    let stride: usize = inner.iter().product();
    ok(enc::write_array_len(out, n as u32));
    for i in 0..n {
        if inner.is_empty() {
            element(out, &a.data, start + i);
        } else {
            encode_array(out, a, inner, start + i * stride);
        }
    }
}

fn element(out: &mut Vec<u8>, d: &ArrayData, i: usize) {
    match d {
        ArrayData::Bool(v) => ok(enc::write_bool(out, v[i])),
        ArrayData::U8(v) => ok(enc::write_uint(out, v[i].into())),
        ArrayData::U16(v) => ok(enc::write_uint(out, v[i].into())),
        ArrayData::U32(v) => ok(enc::write_uint(out, v[i].into())),
        ArrayData::U64(v) => ok(enc::write_uint(out, v[i])),
        ArrayData::I8(v) => ok(enc::write_sint(out, v[i].into())),
        ArrayData::I16(v) => ok(enc::write_sint(out, v[i].into())),
        ArrayData::I32(v) => ok(enc::write_sint(out, v[i].into())),
        ArrayData::I64(v) => ok(enc::write_sint(out, v[i])),
        ArrayData::F32(v) => ok(enc::write_f32(out, v[i])),
        ArrayData::F64(v) => ok(enc::write_f64(out, v[i])),
        ArrayData::Str(v) => ok(enc::write_str(out, &v[i])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_chapter_body_decodes_and_encodes_to_its_bytes() {
        let bytes = b"\x81\xa4name\xa5Intro";
        let fields = decode(bytes).unwrap();
        assert_eq!(
            fields,
            vec![("name".to_string(), Value::Str("Intro".into()))]
        );
        let mut out = Vec::new();
        let mut loss = LossReport::default();
        let refs: Vec<(&str, &Value)> = fields.iter().map(|(k, v)| (k.as_str(), v)).collect();
        encode(&mut out, &refs, "xrec.Chapter", &mut loss);
        assert_eq!(out, bytes);
        assert!(decode(b"\x81\xa4name\xa5Intro\x00")
            .unwrap_err()
            .contains("1 bytes after"));
        assert!(decode(b"\x91\x01").is_err());
        assert!(decode(b"\x81\x01\x02").is_err());
    }
}
