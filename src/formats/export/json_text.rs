//! Model values as JSON text, shared by the writers whose output is JSON (JSON Lines, and
//! the JSON messages of MCAP). Numbers are the shortest text that reads back to the same
//! value of their own width (float32 elements as float32), so nothing is rounded; what JSON
//! cannot hold is written in its nearest form and named in `lost`.
//!
//! Speed matters here (a NanoVer frame is thousands of floats): floats are formatted by
//! zmij into a stack buffer, arrays are walked one innermost row at a time with the dtype
//! matched once per row, and nothing is allocated per value.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

use crate::model::time_scale::{self, TimeFormat};
use crate::model::{Array, ArrayData, Entity, Epoch, Record, Value};

/// Fields of one record that could not be written exactly: (field, reason).
pub type Lost = Vec<(String, &'static str)>;

/// A record as one JSON object: `{"time_ns": 8445000, "channel": "frame", "frame": 2,
/// "entity": 3, "values": {...}, "removed": [...]}`, time as integer nanoseconds (and, from
/// `utc`, as ISO-8601 UTC: `"time_utc": "2026-03-01T12:00:00.008445000Z"`), the channel
/// only when given, frame and entity only when the record has them, and keys a state
/// record removes listed under `removed` (only when there are some).
pub fn record(
    line: &mut Vec<u8>,
    record: &Record,
    channel: Option<&str>,
    utc: Option<&Epoch>,
    lost: &mut Lost,
) {
    line.extend_from_slice(b"{\"time_ns\":");
    int(line, record.time);
    if let Some(text) =
        utc.and_then(|e| time_scale::show(TimeFormat::Utc, Some(e), record.time, Some(9)))
    {
        line.extend_from_slice(b",\"time_utc\":");
        string(line, &text);
    }
    if let Some(channel) = channel {
        line.extend_from_slice(b",\"channel\":");
        string(line, channel);
    }
    if let Some(frame) = record.frame {
        line.extend_from_slice(b",\"frame\":");
        int(line, frame);
    }
    match &record.entity {
        Some(Entity::Id(id)) => {
            line.extend_from_slice(b",\"entity\":");
            int(line, *id);
        }
        Some(Entity::Name(name)) => {
            line.extend_from_slice(b",\"entity\":");
            string(line, name);
        }
        None => {}
    }
    line.extend_from_slice(b",\"values\":{");
    let mut first = true;
    for (key, v) in &record.values {
        if *v == Value::Removed {
            continue;
        }
        if !first {
            line.push(b',');
        }
        first = false;
        string(line, key);
        line.push(b':');
        value(line, key, v, lost);
    }
    line.push(b'}');
    let mut removed = record
        .values
        .iter()
        .filter(|(_, v)| *v == Value::Removed)
        .peekable();
    if removed.peek().is_some() {
        line.extend_from_slice(b",\"removed\":[");
        for (i, (key, _)) in removed.enumerate() {
            if i > 0 {
                line.push(b',');
            }
            string(line, key);
        }
        line.push(b']');
    }
    line.push(b'}');
}

/// A JSON string, escaped.
pub fn string(line: &mut Vec<u8>, s: &str) {
    // Writing a &str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *line, s);
}

pub fn int(line: &mut Vec<u8>, i: impl itoa::Integer) {
    line.extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
}

/// Any value, under field `key` (named in `lost` when it is not written exactly).
pub fn value(line: &mut Vec<u8>, key: &str, value: &Value, lost: &mut Lost) {
    match value {
        Value::Null => line.extend_from_slice(b"null"),
        Value::Removed => {
            lost.push((key.to_string(), "nested removal marker written as null"));
            line.extend_from_slice(b"null");
        }
        Value::Bool(b) => line.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Int(i) => int(line, *i),
        Value::UInt(u) => int(line, *u),
        Value::Float(x) => {
            let mut buf = zmij::Buffer::new();
            float(line, &mut buf, key, *x, lost)
        }
        Value::F32(x) => {
            let mut buf = zmij::Buffer::new();
            float(line, &mut buf, key, *x, lost)
        }
        Value::Str(s) => string(line, s),
        Value::Bytes(b) => {
            lost.push((key.to_string(), "bytes written as a base64 string"));
            string(line, &BASE64.encode(b));
        }
        Value::Ext { type_id, bytes } => {
            lost.push((key.to_string(), "msgpack ext written as {type, base64}"));
            line.extend_from_slice(b"{\"type\":");
            int(line, *type_id);
            line.extend_from_slice(b",\"base64\":");
            string(line, &BASE64.encode(bytes));
            line.push(b'}');
        }
        Value::Dict(entries) => {
            lost.push((
                key.to_string(),
                "non-string map key written as its JSON text",
            ));
            line.push(b'{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                match k {
                    Value::Str(s) => string(line, s),
                    _ => {
                        let mut text = Vec::new();
                        self::value(&mut text, key, k, lost);
                        string(line, &String::from_utf8_lossy(&text));
                    }
                }
                line.push(b':');
                self::value(line, key, v, lost);
            }
            line.push(b'}');
        }
        Value::List(items) => {
            line.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                self::value(line, key, item, lost);
            }
            line.push(b']');
        }
        Value::Map(fields) => {
            line.push(b'{');
            for (i, (k, v)) in fields.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                string(line, k);
                line.push(b':');
                self::value(line, key, v, lost);
            }
            line.push(b'}');
        }
        Value::Array(a) => array(line, key, a, lost),
    }
}

/// A float as the shortest text that reads back to the same value of its own width (f32
/// or f64); NaN and infinities as `null`, counted as lost.
///
/// The text is ryu's (which earlier versions used, and the JSON contract pins): zmij writes
/// the same digits and the same choice of fixed or exponent notation, but a positive
/// exponent as `e+N` where ryu writes `eN`; the `+` is dropped.
#[inline]
fn float<F: zmij::Float + Finite>(
    line: &mut Vec<u8>,
    buf: &mut zmij::Buffer,
    key: &str,
    x: F,
    lost: &mut Lost,
) {
    if !x.finite() {
        lost.push((key.to_string(), "non-finite float written as null"));
        line.extend_from_slice(b"null");
        return;
    }
    let text = buf.format_finite(x).as_bytes();
    // The `+` can only be the exponent's sign, followed by its one to three digits: three
    // bytes are looked at, not the whole text (a scan of every byte was a large share of a
    // JSON Lines conversion's CPU time: docs/performance.md, "MCAP and JSON Lines").
    let n = text.len();
    let plus = (2..=4)
        .filter_map(|back| n.checked_sub(back))
        .find(|&i| text[i] == b'+');
    match plus {
        None => line.extend_from_slice(text),
        Some(plus) => {
            line.extend_from_slice(&text[..plus]);
            line.extend_from_slice(&text[plus + 1..]);
        }
    }
}

/// `is_finite` for the two float widths.
pub trait Finite: Copy {
    fn finite(self) -> bool;
}

impl Finite for f32 {
    #[inline]
    fn finite(self) -> bool {
        self.is_finite()
    }
}

impl Finite for f64 {
    #[inline]
    fn finite(self) -> bool {
        self.is_finite()
    }
}

/// An n-d array as nested JSON arrays following its shape.
pub fn array(line: &mut Vec<u8>, key: &str, a: &Array, lost: &mut Lost) {
    let shape = a.checked_shape();
    // A rough reservation (a float takes about ten bytes) saves regrowing a large line.
    line.reserve(a.len().saturating_mul(12).min(1 << 26));
    let mut buf = zmij::Buffer::new();
    nest(line, &mut buf, key, &shape, &a.data, 0, lost);
}

fn nest(
    line: &mut Vec<u8>,
    buf: &mut zmij::Buffer,
    key: &str,
    dims: &[usize],
    data: &ArrayData,
    offset: usize,
    lost: &mut Lost,
) {
    match dims {
        // A 0-d array: one element, not in brackets.
        [] => row(line, buf, key, data, offset, 1, lost),
        [n] => {
            line.push(b'[');
            row(line, buf, key, data, offset, *n, lost);
            line.push(b']');
        }
        [n, rest @ ..] => {
            let stride: usize = rest.iter().product();
            line.push(b'[');
            for i in 0..*n {
                if i > 0 {
                    line.push(b',');
                }
                nest(line, buf, key, rest, data, offset + i * stride, lost);
            }
            line.push(b']');
        }
    }
}

/// `n` elements from `offset`, comma-separated. The shape was checked against the data's
/// length, so the range is in bounds; an empty slice is written if it ever were not.
fn row(
    line: &mut Vec<u8>,
    buf: &mut zmij::Buffer,
    key: &str,
    data: &ArrayData,
    offset: usize,
    n: usize,
    lost: &mut Lost,
) {
    fn slice<T>(v: &[T], offset: usize, n: usize) -> &[T] {
        offset
            .checked_add(n)
            .and_then(|end| v.get(offset..end))
            .unwrap_or(&[])
    }
    fn ints<T: itoa::Integer + Copy>(line: &mut Vec<u8>, xs: &[T]) {
        let mut b = itoa::Buffer::new();
        for (i, x) in xs.iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            line.extend_from_slice(b.format(*x).as_bytes());
        }
    }
    fn floats<F: zmij::Float + Finite>(
        line: &mut Vec<u8>,
        buf: &mut zmij::Buffer,
        key: &str,
        xs: &[F],
        lost: &mut Lost,
    ) {
        for (i, x) in xs.iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            float(line, buf, key, *x, lost);
        }
    }
    match data {
        ArrayData::Bool(v) => {
            for (i, b) in slice(v, offset, n).iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                line.extend_from_slice(if *b { b"true" } else { b"false" });
            }
        }
        ArrayData::U8(v) => ints(line, slice(v, offset, n)),
        ArrayData::U16(v) => ints(line, slice(v, offset, n)),
        ArrayData::U32(v) => ints(line, slice(v, offset, n)),
        ArrayData::U64(v) => ints(line, slice(v, offset, n)),
        ArrayData::I8(v) => ints(line, slice(v, offset, n)),
        ArrayData::I16(v) => ints(line, slice(v, offset, n)),
        ArrayData::I32(v) => ints(line, slice(v, offset, n)),
        ArrayData::I64(v) => ints(line, slice(v, offset, n)),
        ArrayData::F32(v) => floats(line, buf, key, slice(v, offset, n), lost),
        ArrayData::F64(v) => floats(line, buf, key, slice(v, offset, n), lost),
        ArrayData::Str(v) => {
            for (i, s) in slice(v, offset, n).iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                string(line, s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ryu_text<F: ryu::Float>(x: F) -> String {
        ryu::Buffer::new().format_finite(x).to_string()
    }

    fn ours(v: Value) -> String {
        let mut line = Vec::new();
        let mut lost = Lost::new();
        value(&mut line, "k", &v, &mut lost);
        String::from_utf8(line).unwrap()
    }

    /// The text is pinned to ryu's (the JSON contract): zmij with the `+` dropped must
    /// write the same bytes over the whole range of both widths.
    #[test]
    fn floats_are_written_as_ryu_writes_them() {
        let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
        for i in 0..2_000_000u64 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let f = f32::from_bits(if i < 1 << 20 {
                (i as u32) << 12
            } else {
                s as u32
            });
            if f.is_finite() {
                assert_eq!(ours(Value::F32(f)), ryu_text(f), "{f:?}");
            }
            let d = f64::from_bits(s);
            if d.is_finite() {
                assert_eq!(ours(Value::Float(d)), ryu_text(d), "{d:?}");
            }
        }
        for d in [1e16, 1e15, 1e-5, 1e-7, 123456789012345680.0, -0.0, 5e-324] {
            assert_eq!(ours(Value::Float(d)), ryu_text(d), "{d:?}");
        }
        assert_eq!(ours(Value::Float(1e16)), "1e16");
        assert_eq!(ours(Value::F32(3.0e38)), "3e38");
    }

    #[test]
    fn arrays_nest_by_shape_and_lose_only_non_finite_values() {
        let a = Array::with_shape(
            ArrayData::F32(vec![1.5, -0.25, f32::NAN, 4.0, 1e-9, 6.0]),
            vec![2, 3],
        )
        .unwrap();
        let mut line = Vec::new();
        let mut lost = Lost::new();
        array(&mut line, "p", &a, &mut lost);
        assert_eq!(
            String::from_utf8(line).unwrap(),
            "[[1.5,-0.25,null],[4.0,1e-9,6.0]]"
        );
        assert_eq!(lost, vec![("p".into(), "non-finite float written as null")]);
        let scalar = Array {
            shape: vec![],
            data: ArrayData::I64(vec![-7]),
        };
        assert_eq!(ours(Value::Array(scalar)), "-7");
        // A shape that does not cover the data is written flat.
        let bad = Array {
            shape: vec![5],
            data: ArrayData::U8(vec![1, 2]),
        };
        assert_eq!(ours(Value::Array(bad)), "[1,2]");
    }
}
