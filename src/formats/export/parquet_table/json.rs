//! Maps and lists as JSON text, for their column: numbers as the shortest text that reads
//! back to the same value (itoa, ryu), arrays nested by their shape.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

use crate::model::{ArrayData, Value};

/// Appends `value` as JSON to `out`; what JSON cannot hold exactly goes to `lost`
/// (key, reason).
pub fn write(out: &mut Vec<u8>, key: &str, value: &Value, lost: &mut Vec<(String, &'static str)>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Removed => {
            lost.push((key.to_string(), "nested removal marker written as null"));
            out.extend_from_slice(b"null");
        }
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Int(i) => out.extend_from_slice(itoa::Buffer::new().format(*i).as_bytes()),
        Value::UInt(u) => out.extend_from_slice(itoa::Buffer::new().format(*u).as_bytes()),
        Value::Float(x) => float(out, key, *x, x.is_finite(), lost),
        Value::F32(x) => float(out, key, *x, x.is_finite(), lost),
        Value::Str(s) => string(out, s),
        Value::Bytes(b) => {
            lost.push((
                key.to_string(),
                "bytes inside a map written as a base64 string",
            ));
            string(out, &BASE64.encode(b));
        }
        Value::Ext { type_id, bytes } => {
            lost.push((key.to_string(), "msgpack ext written as {type, base64}"));
            out.extend_from_slice(b"{\"type\":");
            out.extend_from_slice(itoa::Buffer::new().format(*type_id).as_bytes());
            out.extend_from_slice(b",\"base64\":");
            string(out, &BASE64.encode(bytes));
            out.push(b'}');
        }
        Value::Dict(entries) => {
            lost.push((
                key.to_string(),
                "non-string map key written as its JSON text",
            ));
            out.push(b'{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                match k {
                    Value::Str(s) => string(out, s),
                    _ => {
                        let mut text = Vec::new();
                        write(&mut text, key, k, lost);
                        string(out, &String::from_utf8_lossy(&text));
                    }
                }
                out.push(b':');
                write(out, key, v, lost);
            }
            out.push(b'}');
        }
        Value::List(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(out, key, item, lost);
            }
            out.push(b']');
        }
        Value::Map(fields) => {
            out.push(b'{');
            for (i, (k, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                string(out, k);
                out.push(b':');
                write(out, key, v, lost);
            }
            out.push(b'}');
        }
        Value::Array(a) => nest(out, key, &a.checked_shape(), &a.data, 0, lost),
    }
}

fn string(out: &mut Vec<u8>, s: &str) {
    // Writing a &str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

fn float<F: ryu::Float>(
    out: &mut Vec<u8>,
    key: &str,
    x: F,
    finite: bool,
    lost: &mut Vec<(String, &'static str)>,
) {
    if finite {
        out.extend_from_slice(ryu::Buffer::new().format_finite(x).as_bytes());
    } else {
        lost.push((
            key.to_string(),
            "non-finite float inside a map written as null",
        ));
        out.extend_from_slice(b"null");
    }
}

fn nest(
    out: &mut Vec<u8>,
    key: &str,
    dims: &[usize],
    data: &ArrayData,
    offset: usize,
    lost: &mut Vec<(String, &'static str)>,
) {
    let Some((&n, rest)) = dims.split_first() else {
        return element(out, key, data, offset, lost);
    };
    let stride: usize = rest.iter().product();
    out.push(b'[');
    for i in 0..n {
        if i > 0 {
            out.push(b',');
        }
        nest(out, key, rest, data, offset + i * stride, lost);
    }
    out.push(b']');
}

fn element(
    out: &mut Vec<u8>,
    key: &str,
    data: &ArrayData,
    i: usize,
    lost: &mut Vec<(String, &'static str)>,
) {
    let mut buf = itoa::Buffer::new();
    let text = match data {
        ArrayData::Bool(v) => {
            if v[i] {
                "true"
            } else {
                "false"
            }
        }
        ArrayData::U8(v) => buf.format(v[i]),
        ArrayData::U16(v) => buf.format(v[i]),
        ArrayData::U32(v) => buf.format(v[i]),
        ArrayData::U64(v) => buf.format(v[i]),
        ArrayData::I8(v) => buf.format(v[i]),
        ArrayData::I16(v) => buf.format(v[i]),
        ArrayData::I32(v) => buf.format(v[i]),
        ArrayData::I64(v) => buf.format(v[i]),
        ArrayData::F32(v) => return float(out, key, v[i], v[i].is_finite(), lost),
        ArrayData::F64(v) => return float(out, key, v[i], v[i].is_finite(), lost),
        ArrayData::Str(v) => return string(out, &v[i]),
    };
    out.extend_from_slice(text.as_bytes());
}
