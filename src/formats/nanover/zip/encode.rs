//! Model records to message parts (spec §10, §13): packed keys as bins of their table
//! dtype, forced-int keys as integers, everything else as plain msgpack.

use super::keys::{self, Packed, Rows};
use super::message::PartKind;
use super::msgpack::Encoder;
use crate::model::{Array, ArrayData, DType, Field, Value};

/// What a message could not hold: (field, reason) pairs for the loss report.
pub type Lost = Vec<(String, &'static str)>;

/// Appends one part's value (the map under `frame`, `state` or `command`).
/// `body` is scratch space, reused across calls (a frame map is encoded there first, as
/// its entry count is known only at the end).
pub fn part(
    enc: &mut Encoder,
    body: &mut Encoder,
    kind: PartKind,
    frame: Option<i64>,
    fields: &[Field],
    lost: &mut Lost,
) {
    match kind {
        PartKind::Frame => frame_map(enc, body, frame, fields, lost),
        PartKind::State => state_map(enc, fields),
        PartKind::Command => {
            enc.map_len(fields.len() as u32);
            for (k, v) in fields {
                enc.str(k);
                enc.value(v);
            }
        }
    }
}

fn frame_map(
    enc: &mut Encoder,
    body: &mut Encoder,
    frame: Option<i64>,
    fields: &[Field],
    lost: &mut Lost,
) {
    body.clear();
    let mut n = 0u32;
    let mut index_written = false;
    for (key, value) in fields {
        if key == keys::FRAME_INDEX {
            if let Some(i) = frame {
                // The record's frame index wins over a value of the same name, in its place.
                body.str(key);
                body.int(i);
                n += 1;
                index_written = true;
                continue;
            }
        }
        if *value == Value::Removed {
            lost.push((key.clone(), "a removal has no place in a frame; dropped"));
            continue;
        }
        match (keys::packed(key), value) {
            (Some(p), Value::Array(a)) => match packed_bytes(p, a) {
                Ok((bytes, narrowed)) => {
                    if narrowed {
                        lost.push((key.clone(), packed_note(p.dtype)));
                    }
                    body.str(key);
                    body.bin_len(bytes.len() as u32);
                    body.raw(&bytes);
                }
                Err(reason) => {
                    lost.push((key.clone(), reason));
                    continue;
                }
            },
            (None, v) if keys::forced_int(key) => {
                body.str(key);
                match v {
                    Value::Float(x) if x.is_finite() && x.abs() < 9.2e18 => {
                        if x.fract() != 0.0 {
                            lost.push((key.clone(), "non-integral number truncated to an integer"));
                        }
                        body.int(x.trunc() as i64);
                    }
                    other => body.value(other),
                }
            }
            (_, v) => {
                body.str(key);
                body.value(v);
            }
        }
        n += 1;
    }
    if let (Some(i), false) = (frame, index_written) {
        body.str(keys::FRAME_INDEX);
        body.int(i);
        n += 1;
    }
    enc.map_len(n);
    enc.raw(body.as_slice());
}

fn packed_note(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "values rounded to float32",
        _ => "non-integral values truncated to integers",
    }
}

/// The little-endian bytes of `a` as the table dtype, and whether any value changed.
fn packed_bytes(p: Packed, a: &Array) -> Result<(Vec<u8>, bool), &'static str> {
    let len = a.len();
    let fits = match p.rows {
        Rows::Box3 => len == 9,
        r => len.is_multiple_of(r.width()),
    };
    if !fits {
        return Err("element count does not fit the key's row width; key left out");
    }
    let mut out = Vec::with_capacity(len * p.itemsize());
    // Arrays already in the table dtype are copied without conversion.
    match (&a.data, p.dtype) {
        (ArrayData::F32(v), DType::F32) => {
            v.iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
            return Ok((out, false));
        }
        (ArrayData::U32(v), DType::U32) => {
            v.iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
            return Ok((out, false));
        }
        (ArrayData::U8(v), DType::U8) => return Ok((v.clone(), false)),
        _ => {}
    }
    let mut narrowed = false;
    match p.dtype {
        DType::F32 => {
            for x in floats(&a.data)? {
                let y = x as f32;
                narrowed |= f64::from(y) != x && !x.is_nan();
                out.extend_from_slice(&y.to_le_bytes());
            }
        }
        dtype => {
            let max = if dtype == DType::U8 {
                255.0
            } else {
                u32::MAX as f64
            };
            for x in floats(&a.data)? {
                let t = x.trunc();
                if !(0.0..=max).contains(&t) {
                    return Err("values outside the key's integer dtype; key left out");
                }
                narrowed |= t != x;
                if dtype == DType::U8 {
                    out.push(t as u8);
                } else {
                    out.extend_from_slice(&(t as u32).to_le_bytes());
                }
            }
        }
    }
    Ok((out, narrowed))
}

/// Elements as f64 (exact for every dtype a NanoVer key can hold, except u64/i64 beyond
/// 2^53, which no table dtype can hold anyway).
fn floats(data: &ArrayData) -> Result<Vec<f64>, &'static str> {
    Ok(match data {
        ArrayData::F32(v) => v.iter().map(|x| f64::from(*x)).collect(),
        ArrayData::F64(v) => v.clone(),
        ArrayData::U8(v) => v.iter().map(|x| f64::from(*x)).collect(),
        ArrayData::U16(v) => v.iter().map(|x| f64::from(*x)).collect(),
        ArrayData::U32(v) => v.iter().map(|x| f64::from(*x)).collect(),
        ArrayData::U64(v) => v.iter().map(|x| *x as f64).collect(),
        ArrayData::I8(v) => v.iter().map(|x| f64::from(*x)).collect(),
        ArrayData::I16(v) => v.iter().map(|x| f64::from(*x)).collect(),
        ArrayData::I32(v) => v.iter().map(|x| f64::from(*x)).collect(),
        ArrayData::I64(v) => v.iter().map(|x| *x as f64).collect(),
        ArrayData::Bool(v) => v.iter().map(|x| f64::from(u8::from(*x))).collect(),
        ArrayData::Str(_) => return Err("a string array cannot be a packed key; key left out"),
    })
}

/// `{"updates": {...}, "removals": [...]}`: `Removed` values are the removals.
fn state_map(enc: &mut Encoder, fields: &[Field]) {
    let removals: Vec<&str> = fields
        .iter()
        .filter(|(_, v)| *v == Value::Removed)
        .map(|(k, _)| k.as_str())
        .collect();
    enc.map_len(2);
    enc.str("updates");
    enc.map_len((fields.len() - removals.len()) as u32);
    for (k, v) in fields.iter().filter(|(_, v)| *v != Value::Removed) {
        enc.str(k);
        enc.value(v);
    }
    enc.str("removals");
    enc.array_len(removals.len() as u32);
    for k in removals {
        enc.str(k);
    }
}
