//! Model records to NanoVer payloads (spec §7, canonical form), counting what cannot be held.

use prost::Message as _;

use super::keys::{conventional, shape_for, ArrayKind};
use super::proto::{self, Kind, ProtoValue};
use crate::model::{Array, ArrayData, Field, Value};

/// What a payload could not hold: (field, reason) pairs for the loss report.
pub type Lost = Vec<(String, &'static str)>;

/// Encodes a `GetFrameResponse`: arrays go to `arrays`, everything else to `values`.
pub fn frame_payload(frame_index: u32, fields: &[Field], lost: &mut Lost) -> Vec<u8> {
    let mut frame = proto::FrameData::default();
    for (key, value) in fields {
        match value {
            Value::Array(a) => {
                if let Some(array) = value_array(key, a, lost) {
                    frame.arrays.push(proto::ArrayEntry {
                        key: key.clone(),
                        value: Some(array),
                    });
                }
            }
            Value::Removed => {
                lost.push((key.clone(), "a removal has no place in a frame; dropped"))
            }
            // A list of strings (names from a .nanover.zip) is a legacy string array.
            Value::List(items)
                if !items.is_empty() && items.iter().all(|v| matches!(v, Value::Str(_))) =>
            {
                let values = items
                    .iter()
                    .filter_map(|v| match v {
                        Value::Str(s) => Some(s.clone()),
                        _ => None,
                    })
                    .collect();
                frame.arrays.push(proto::ArrayEntry {
                    key: key.clone(),
                    value: Some(proto::ValueArray {
                        values: Some(proto::ValueArrayKind::StringValues(proto::StringArray {
                            values,
                        })),
                    }),
                });
            }
            other => frame.values.push(proto::ValueEntry {
                key: key.clone(),
                value: Some(proto_value(key, other, lost)),
            }),
        }
    }
    proto::GetFrameResponse {
        frame_index,
        frame: Some(frame),
    }
    .encode_to_vec()
}

/// Encodes a `StateUpdate`: `Removed` becomes a top-level null.
pub fn state_payload(fields: &[Field], lost: &mut Lost) -> Vec<u8> {
    let fields = fields
        .iter()
        .map(|(key, value)| {
            let value = match value {
                Value::Removed => null(),
                Value::Null => {
                    lost.push((key.clone(), "a top-level null reads back as a removal"));
                    null()
                }
                other => proto_value(key, other, lost),
            };
            proto::ValueEntry {
                key: key.clone(),
                value: Some(value),
            }
        })
        .collect();
    proto::StateUpdate {
        changed_keys: Some(proto::Struct { fields }),
    }
    .encode_to_vec()
}

fn null() -> ProtoValue {
    ProtoValue {
        kind: Some(Kind::NullValue(0)),
    }
}

/// Integers beyond 2^53 have no exact double.
const EXACT_DOUBLE_INT: u64 = 1 << 53;

fn number(key: &str, x: f64, magnitude: u64, lost: &mut Lost) -> ProtoValue {
    if magnitude > EXACT_DOUBLE_INT {
        lost.push((key.to_string(), "integer beyond 2^53 rounded to a double"));
    }
    ProtoValue {
        kind: Some(Kind::NumberValue(x)),
    }
}

/// A value as `google.protobuf.Value` (numbers are doubles there).
fn proto_value(key: &str, value: &Value, lost: &mut Lost) -> ProtoValue {
    let kind = match value {
        Value::Null => Kind::NullValue(0),
        Value::Removed => {
            lost.push((key.to_string(), "a nested removal marker written as null"));
            Kind::NullValue(0)
        }
        Value::Bool(b) => Kind::BoolValue(*b),
        Value::Int(i) => {
            lost.push((key.to_string(), "integer written as a double"));
            return number(key, *i as f64, i.unsigned_abs(), lost);
        }
        Value::UInt(u) => {
            lost.push((key.to_string(), "integer written as a double"));
            return number(key, *u as f64, *u, lost);
        }
        Value::Float(x) => Kind::NumberValue(*x),
        Value::F32(x) => Kind::NumberValue(f64::from(*x)),
        Value::Str(s) => Kind::StringValue(s.clone()),
        Value::Bytes(b) => {
            lost.push((key.to_string(), "bytes written as a list of numbers"));
            Kind::ListValue(proto::ListValue {
                values: b
                    .iter()
                    .map(|x| ProtoValue {
                        kind: Some(Kind::NumberValue(f64::from(*x))),
                    })
                    .collect(),
            })
        }
        Value::Ext { .. } => {
            lost.push((
                key.to_string(),
                "msgpack ext value: no protobuf form; written as null",
            ));
            Kind::NullValue(0)
        }
        Value::Dict(entries) => {
            lost.push((key.to_string(), "non-string map key written as its text"));
            Kind::StructValue(proto::Struct {
                fields: entries
                    .iter()
                    .map(|(k, v)| proto::ValueEntry {
                        key: match k {
                            Value::Str(s) => s.clone(),
                            other => crate::report::render::value_text(other),
                        },
                        value: Some(proto_value(key, v, lost)),
                    })
                    .collect(),
            })
        }
        Value::List(items) => Kind::ListValue(proto::ListValue {
            values: items.iter().map(|v| proto_value(key, v, lost)).collect(),
        }),
        Value::Map(fields) => Kind::StructValue(proto::Struct {
            fields: fields
                .iter()
                .map(|(k, v)| proto::ValueEntry {
                    key: k.clone(),
                    value: Some(proto_value(key, v, lost)),
                })
                .collect(),
        }),
        Value::Array(a) => {
            if !matches!(
                a.data,
                ArrayData::F32(_) | ArrayData::F64(_) | ArrayData::Str(_) | ArrayData::Bool(_)
            ) && !ints_fit_double(&a.data)
            {
                lost.push((key.to_string(), "integer beyond 2^53 rounded to a double"));
            }
            return nested_list(&a.checked_shape(), &a.data, 0);
        }
    };
    ProtoValue { kind: Some(kind) }
}

fn ints_fit_double(data: &ArrayData) -> bool {
    match data {
        ArrayData::U64(v) => v.iter().all(|x| *x <= EXACT_DOUBLE_INT),
        ArrayData::I64(v) => v.iter().all(|x| x.unsigned_abs() <= EXACT_DOUBLE_INT),
        _ => true,
    }
}

/// An n-d array as nested lists following its shape.
fn nested_list(dims: &[usize], data: &ArrayData, offset: usize) -> ProtoValue {
    let Some((&n, rest)) = dims.split_first() else {
        return element(data, offset);
    };
    let stride: usize = rest.iter().product();
    let values = (0..n)
        .map(|i| nested_list(rest, data, offset + i * stride))
        .collect();
    ProtoValue {
        kind: Some(Kind::ListValue(proto::ListValue { values })),
    }
}

fn element(data: &ArrayData, i: usize) -> ProtoValue {
    let kind = match data {
        ArrayData::Bool(v) => Kind::BoolValue(v[i]),
        ArrayData::Str(v) => Kind::StringValue(v[i].clone()),
        ArrayData::U8(v) => Kind::NumberValue(f64::from(v[i])),
        ArrayData::U16(v) => Kind::NumberValue(f64::from(v[i])),
        ArrayData::U32(v) => Kind::NumberValue(f64::from(v[i])),
        ArrayData::U64(v) => Kind::NumberValue(v[i] as f64),
        ArrayData::I8(v) => Kind::NumberValue(f64::from(v[i])),
        ArrayData::I16(v) => Kind::NumberValue(f64::from(v[i])),
        ArrayData::I32(v) => Kind::NumberValue(f64::from(v[i])),
        ArrayData::I64(v) => Kind::NumberValue(v[i] as f64),
        ArrayData::F32(v) => Kind::NumberValue(f64::from(v[i])),
        ArrayData::F64(v) => Kind::NumberValue(v[i]),
    };
    ProtoValue { kind: Some(kind) }
}

/// A typed array as a `ValueArray`, its kind chosen by dtype (not by content).
fn value_array(key: &str, a: &Array, lost: &mut Lost) -> Option<proto::ValueArray> {
    use proto::ValueArrayKind as K;
    if shape_for(key, a.len()).as_deref() != Some(a.shape.as_slice()) {
        lost.push((key.to_string(), "shape flattened (legacy arrays are 1-D)"));
    }
    if matches!(a.data, ArrayData::U8(_)) && conventional(key).is_none() {
        // Bytes under a key no table knows: a `.nanover.zip` bin, opaque (spec §14 of
        // nanover-zip.md). As indices they would come back as a uint32 array, not bytes.
        lost.push((
            key.to_string(),
            "opaque bytes (uint8 array under an unknown key) have no legacy kind; key dropped",
        ));
        return None;
    }
    let floats = |values| Some(K::FloatValues(proto::FloatArray { values }));
    let indices = |values| Some(K::IndexValues(proto::IndexArray { values }));
    // A key whose legacy kind is float (`bond.orders`) keeps it whatever dtype it has now.
    let float_key = conventional(key).is_some_and(|(kinds, _)| kinds[0] == ArrayKind::Float);
    let small_ints = match &a.data {
        ArrayData::U8(v) => Some(v.iter().map(|x| f32::from(*x)).collect()),
        ArrayData::U16(v) => Some(v.iter().map(|x| f32::from(*x)).collect()),
        _ => None,
    };
    if let (true, Some(values)) = (float_key, small_ints) {
        return Some(proto::ValueArray {
            values: floats(values),
        });
    }
    let kind = match &a.data {
        ArrayData::F32(v) => floats(v.clone()),
        ArrayData::F64(v) => {
            if v.iter().any(|x| f64::from(*x as f32) != *x && !x.is_nan()) {
                lost.push((key.to_string(), "float64 narrowed to float32"));
            }
            floats(v.iter().map(|x| *x as f32).collect())
        }
        ArrayData::Str(v) => Some(K::StringValues(proto::StringArray { values: v.clone() })),
        ArrayData::U8(v) => indices(v.iter().map(|x| u32::from(*x)).collect()),
        ArrayData::U16(v) => indices(v.iter().map(|x| u32::from(*x)).collect()),
        ArrayData::U32(v) => indices(v.clone()),
        ArrayData::Bool(v) => {
            lost.push((key.to_string(), "bool array stored as 0/1 indices"));
            indices(v.iter().map(|x| u32::from(*x)).collect())
        }
        ArrayData::U64(v) => narrowed(key, narrow(v), lost)?,
        ArrayData::I8(v) => narrowed(key, narrow(v), lost)?,
        ArrayData::I16(v) => narrowed(key, narrow(v), lost)?,
        ArrayData::I32(v) => narrowed(key, narrow(v), lost)?,
        ArrayData::I64(v) => narrowed(key, narrow(v), lost)?,
    };
    Some(proto::ValueArray { values: kind })
}

/// The elements as u32, if every one is an integer in range.
fn narrow<T: Copy>(v: &[T]) -> Option<Vec<u32>>
where
    u32: TryFrom<T>,
{
    v.iter().map(|x| u32::try_from(*x).ok()).collect()
}

fn narrowed(
    key: &str,
    values: Option<Vec<u32>>,
    lost: &mut Lost,
) -> Option<Option<proto::ValueArrayKind>> {
    match values {
        Some(values) => Some(Some(proto::ValueArrayKind::IndexValues(
            proto::IndexArray { values },
        ))),
        None => {
            lost.push((
                key.to_string(),
                "integers outside 0..2^32 cannot be index values; array dropped",
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;
    use crate::model::{Array, ArrayData};

    #[test]
    fn unknown_bytes_are_dropped_and_colours_kept_as_indices() {
        let colours = Array {
            shape: vec![2, 4],
            data: ArrayData::U8(vec![255, 0, 0, 255, 0, 255, 0, 128]),
        };
        let fields: Vec<Field> = vec![
            (
                "simrec.blob".into(),
                Value::Array(Array::flat(ArrayData::U8(vec![1, 2, 3]))),
            ),
            ("particle.colors".into(), Value::Array(colours)),
        ];
        let mut lost = Lost::new();
        let bytes = frame_payload(7, &fields, &mut lost);
        assert_eq!(
            lost,
            [(
                "simrec.blob".to_string(),
                "opaque bytes (uint8 array under an unknown key) have no legacy kind; key dropped"
            )]
        );
        let response = proto::GetFrameResponse::decode(&bytes[..]).unwrap();
        let frame = response.frame.unwrap();
        assert_eq!(frame.arrays.len(), 1);
        assert_eq!(frame.arrays[0].key, "particle.colors");
        assert_eq!(
            frame.arrays[0]
                .value
                .as_ref()
                .and_then(|v| v.values.clone()),
            Some(proto::ValueArrayKind::IndexValues(proto::IndexArray {
                values: vec![255, 0, 0, 255, 0, 255, 0, 128]
            }))
        );
    }
}
