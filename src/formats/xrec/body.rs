//! Event bodies (spec §6): exactly one MessagePack map with string keys, decoded straight
//! into model values (each msgpack type its own value: float32 stays `F32`, bin `Bytes`, ext
//! `Ext`) over the values a recycled record already holds, and encoded back with rmp. Heads
//! are read by the shared walker (`formats::msgpack`); no intermediate value tree is built, so
//! a body of the same shape as the last one (a stream of transforms) decodes without
//! allocating.

use rmp::encode as enc;

use crate::formats::cursor::Cursor;
use crate::formats::msgpack::{self, Head};
use crate::model::{Array, ArrayData, Field, Value};
use crate::report::LossReport;

/// Containers nested deeper than this are refused (a body is a .NET object, not a deep
/// tree, and the decoder recurses once per level). The body's own map is level 1.
const MAX_DEPTH: usize = 64;

/// Marker byte and encoded size of a float64 and of a float32 (typed arrays are found by
/// these bytes alone, one per element).
const F64_MARKER: (u8, usize) = (0xcb, 9);
const F32_MARKER: (u8, usize) = (0xca, 5);

/// Decodes `body` into `fields[from..]`, writing over what those slots hold (a recycled
/// record's keys, vectors and buffers) and truncating `fields` to the body's fields. The
/// first field keyed `aside.0` (a transform's `id`) goes to `aside.1` instead; its place
/// among the body's fields is returned. `Err` says why the body is not one msgpack map with
/// string keys (then `fields` holds a partial decode).
pub fn decode_into(
    body: &[u8],
    fields: &mut Vec<Field>,
    from: usize,
    mut aside: Option<(&str, &mut Value)>,
) -> Result<Option<usize>, String> {
    let mut rd = Reader {
        c: Cursor::new(body),
    };
    let Head::Map(n) = rd.head()? else {
        return Err("the body is MessagePack but not a map".into());
    };
    rd.enter(n, 1)?;
    let mut kept = from.min(fields.len());
    let mut aside_at = None;
    for i in 0..n {
        let Head::Str(key) = rd.head()? else {
            return Err("a body key is not a string".into());
        };
        let key = std::str::from_utf8(&body[key])
            .map_err(|_| "a body key is not valid UTF-8".to_string())?;
        match &mut aside {
            Some((k, value)) if aside_at.is_none() && *k == key => {
                rd.value_into(value, 1)?;
                aside_at = Some(i);
            }
            _ => {
                rd.value_into(slot(fields, kept, key), 1)?;
                kept += 1;
            }
        }
    }
    fields.truncate(kept);
    if !rd.c.is_empty() {
        return Err(format!(
            "{} bytes after the body's MessagePack value",
            rd.c.remaining()
        ));
    }
    Ok(aside_at)
}

/// The body's fields, or why it is not one msgpack map with string keys.
pub fn decode(body: &[u8]) -> Result<Vec<Field>, String> {
    let mut fields = Vec::new();
    decode_into(body, &mut fields, 0, None)?;
    Ok(fields)
}

/// The value of slot `i` of `fields` (at most one past the end), keyed `key`: the key is
/// rewritten only when it differs, and the caller writes the value over the old one.
fn slot<'f>(fields: &'f mut Vec<Field>, i: usize, key: &str) -> &'f mut Value {
    if i >= fields.len() {
        fields.push((key.to_string(), Value::Null));
        let last = fields.len() - 1;
        return &mut fields[last].1;
    }
    let (k, v) = &mut fields[i];
    if k != key {
        k.clear();
        k.push_str(key);
    }
    v
}

/// A string value's or a nested map key's text.
fn text(s: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(s).map_err(|_| "a string is not valid UTF-8".to_string())
}

fn set_str(out: &mut Value, s: &str) {
    match out {
        Value::Str(t) => {
            t.clear();
            t.push_str(s);
        }
        _ => *out = Value::Str(s.to_string()),
    }
}

fn refill(v: &mut Vec<u8>, b: &[u8]) {
    v.clear();
    v.extend_from_slice(b);
}

/// Writes `xs` over `out` as a 1-D typed array, into its own buffer when `out` already is
/// one of this dtype (`own` finds that buffer, `wrap` makes a new one).
fn fill<T>(
    out: &mut Value,
    xs: impl Iterator<Item = T>,
    own: fn(&mut ArrayData) -> Option<&mut Vec<T>>,
    wrap: fn(Vec<T>) -> ArrayData,
) {
    if let Value::Array(a) = out {
        if let Some(v) = own(&mut a.data) {
            v.clear();
            v.extend(xs);
            let n = v.len();
            a.shape.clear();
            a.shape.push(n);
            return;
        }
    }
    *out = Value::Array(Array::flat(wrap(xs.collect())));
}

fn f64_data(d: &mut ArrayData) -> Option<&mut Vec<f64>> {
    match d {
        ArrayData::F64(v) => Some(v),
        _ => None,
    }
}

fn f32_data(d: &mut ArrayData) -> Option<&mut Vec<f32>> {
    match d {
        ArrayData::F32(v) => Some(v),
        _ => None,
    }
}

/// A bounds-checked cursor over one body.
struct Reader<'a> {
    c: Cursor<'a>,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        self.c.take(n).map_err(|e| {
            format!(
                "not MessagePack: the value at byte {} runs past the body's end",
                e.at
            )
        })
    }

    /// The head of the next value (strings, bin and ext as ranges of the body), the reader
    /// moved past it (past the bytes of a string, bin or ext; onto a container's first
    /// element).
    fn head(&mut self) -> Result<Head, String> {
        // rmpv, which decoded bodies before, read the never-used marker 0xc1 as nil.
        if self.c.peek() == Some(0xc1) {
            self.c.set_pos(self.c.pos() + 1);
            return Ok(Head::Nil);
        }
        let (head, next) = msgpack::head(self.c.bytes(), self.c.pos())
            .map_err(|e| format!("not MessagePack: {} (byte {})", e.what, e.at))?;
        self.c.set_pos(next);
        Ok(head)
    }

    /// A container at `depth` claiming `n` elements (of at least one byte each): refused
    /// when too deep, or when the body's remaining bytes cannot hold them, before any
    /// element is decoded.
    fn enter(&self, n: usize, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!(
                "the body nests containers more than {MAX_DEPTH} deep"
            ));
        }
        let left = self.c.remaining();
        if n > left {
            return Err(format!(
                "not MessagePack: a container before byte {} claims {n} elements; {left} bytes remain",
                self.c.pos()
            ));
        }
        Ok(())
    }

    /// Whether the next `n` values all start with `marker` and take `size` bytes (floats of
    /// one width): one byte looked at per element.
    fn all_marked(&self, n: usize, (marker, size): (u8, usize)) -> bool {
        n.checked_mul(size)
            .and_then(|len| self.c.rest().get(..len))
            .is_some_and(|s| s.chunks_exact(size).all(|c| c[0] == marker))
    }

    /// The next value, written over `out` (reusing its buffers where its kind is the same);
    /// `depth` is that of the container holding it.
    fn value_into(&mut self, out: &mut Value, depth: usize) -> Result<(), String> {
        match self.head()? {
            Head::Nil => *out = Value::Null,
            Head::Bool(b) => *out = Value::Bool(b),
            Head::Int(i) => *out = Value::Int(i),
            // An unsigned integer is an `Int` wherever it fits one.
            Head::UInt(u) => *out = i64::try_from(u).map_or(Value::UInt(u), Value::Int),
            Head::F32(x) => *out = Value::F32(x),
            Head::F64(x) => *out = Value::Float(x),
            Head::Str(s) => set_str(out, text(&self.c.bytes()[s])?),
            Head::Bin(b) => match out {
                Value::Bytes(v) => refill(v, &self.c.bytes()[b]),
                _ => *out = Value::Bytes(self.c.bytes()[b].to_vec()),
            },
            Head::Ext(type_id, b) => match out {
                Value::Ext { type_id: t, bytes } => {
                    *t = type_id;
                    refill(bytes, &self.c.bytes()[b]);
                }
                _ => {
                    *out = Value::Ext {
                        type_id,
                        bytes: self.c.bytes()[b].to_vec(),
                    }
                }
            },
            Head::Array(n) => self.array_into(out, n, depth + 1)?,
            Head::Map(n) => self.map_into(out, n, depth + 1)?,
        }
        Ok(())
    }

    /// An array: a typed array when it is not empty and every element is a float of one
    /// width (a Vector3, a Quaternion), else a list.
    fn array_into(&mut self, out: &mut Value, n: usize, depth: usize) -> Result<(), String> {
        self.enter(n, depth)?;
        if n > 0 && self.all_marked(n, F64_MARKER) {
            let xs = self.take(n * F64_MARKER.1)?.chunks_exact(F64_MARKER.1);
            let xs =
                xs.map(|c| f64::from_be_bytes([c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]]));
            fill(out, xs, f64_data, ArrayData::F64);
            return Ok(());
        }
        if n > 0 && self.all_marked(n, F32_MARKER) {
            let xs = self.take(n * F32_MARKER.1)?.chunks_exact(F32_MARKER.1);
            let xs = xs.map(|c| f32::from_be_bytes([c[1], c[2], c[3], c[4]]));
            fill(out, xs, f32_data, ArrayData::F32);
            return Ok(());
        }
        if !matches!(out, Value::List(_)) {
            *out = Value::List(Vec::new());
        }
        let Value::List(items) = out else {
            return Ok(());
        };
        items.truncate(n);
        for i in 0..n {
            if i == items.len() {
                items.push(Value::Null);
            }
            self.value_into(&mut items[i], depth)?;
        }
        Ok(())
    }

    /// A map: a `Map` when every key is a string; from the first key that is not, a `Dict`
    /// (the string keys before it become `Str` values).
    fn map_into(&mut self, out: &mut Value, n: usize, depth: usize) -> Result<(), String> {
        self.enter(n, depth)?;
        if !matches!(out, Value::Map(_)) {
            *out = Value::Map(Vec::new());
        }
        let Value::Map(fields) = out else {
            return Ok(());
        };
        for i in 0..n {
            let at = self.c.pos();
            if let Head::Str(key) = self.head()? {
                let buf = self.c.bytes();
                self.value_into(slot(fields, i, text(&buf[key])?), depth)?;
                continue;
            }
            self.c.set_pos(at);
            let mut dict: Vec<(Value, Value)> =
                fields.drain(..i).map(|(k, v)| (Value::Str(k), v)).collect();
            for _ in i..n {
                let (mut k, mut v) = (Value::Null, Value::Null);
                self.value_into(&mut k, depth)?;
                self.value_into(&mut v, depth)?;
                dict.push((k, v));
            }
            *out = Value::Dict(dict);
            return Ok(());
        }
        fields.truncate(n);
        Ok(())
    }
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

    fn map(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        ok(enc::write_map_len(&mut out, entries.len() as u32));
        for (k, v) in entries {
            ok(enc::write_str(&mut out, k));
            out.extend_from_slice(v);
        }
        out
    }

    fn f64s(xs: &[f64]) -> Vec<u8> {
        let mut out = Vec::new();
        ok(enc::write_array_len(&mut out, xs.len() as u32));
        for x in xs {
            ok(enc::write_f64(&mut out, *x));
        }
        out
    }

    fn f32s(xs: &[f32]) -> Vec<u8> {
        let mut out = Vec::new();
        ok(enc::write_array_len(&mut out, xs.len() as u32));
        for x in xs {
            ok(enc::write_f32(&mut out, *x));
        }
        out
    }

    fn f64_array(xs: &[f64]) -> Value {
        Value::Array(Array::flat(ArrayData::F64(xs.to_vec())))
    }

    /// A body with one field of every kind the decoder tells apart.
    fn every_kind() -> (Vec<u8>, Vec<Field>) {
        let nested_dict = [0x82, 0x01, 0xa1, b'a', 0xa1, b'k', 0xc3];
        let body = map(&[
            ("nil", &[0xc0]),
            ("reserved", &[0xc1]),
            ("t", &[0xc3]),
            ("neg", &[0xd0, 0x85]),
            ("u64", &[0xcf, 0, 0, 0, 0, 0, 0, 0x01, 0x00]),
            (
                "big",
                &[0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            ),
            ("f32", &[0xca, 0x3f, 0xc0, 0, 0]),
            ("s", &[0xd9, 0x02, b'h', b'i']),
            ("bin", &[0xc4, 0x02, 0x00, 0xff]),
            ("ext", &[0xd4, 0x07, 0x2a]),
            ("pos", &f64s(&[1.0, 2.0, 3.0])),
            ("q32", &f32s(&[0.5, 1.0])),
            ("mixed", &[0x92, 0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x01]),
            ("empty", &[0x90]),
            ("dict", &nested_dict),
            ("obj", &map(&[("x", &[0x01])])),
        ]);
        let want = vec![
            ("nil".into(), Value::Null),
            ("reserved".into(), Value::Null),
            ("t".into(), Value::Bool(true)),
            ("neg".into(), Value::Int(-123)),
            ("u64".into(), Value::Int(256)),
            ("big".into(), Value::UInt(u64::MAX)),
            ("f32".into(), Value::F32(1.5)),
            ("s".into(), Value::Str("hi".into())),
            ("bin".into(), Value::Bytes(vec![0x00, 0xff])),
            (
                "ext".into(),
                Value::Ext {
                    type_id: 7,
                    bytes: vec![0x2a],
                },
            ),
            ("pos".into(), f64_array(&[1.0, 2.0, 3.0])),
            (
                "q32".into(),
                Value::Array(Array::flat(ArrayData::F32(vec![0.5, 1.0]))),
            ),
            (
                "mixed".into(),
                Value::List(vec![Value::Float(1.0), Value::Int(1)]),
            ),
            ("empty".into(), Value::List(vec![])),
            (
                "dict".into(),
                Value::Dict(vec![
                    (Value::Int(1), Value::Str("a".into())),
                    (Value::Str("k".into()), Value::Bool(true)),
                ]),
            ),
            ("obj".into(), Value::Map(vec![("x".into(), Value::Int(1))])),
        ];
        (body, want)
    }

    #[test]
    fn every_msgpack_kind_becomes_its_own_value() {
        let (body, want) = every_kind();
        assert_eq!(decode(&body).unwrap(), want);
        // String keys before the first other key become `Str` keys of the Dict.
        let dict = map(&[("d", &[0x82, 0xa1, b'k', 0xc2, 0x05, 0xc0])]);
        assert_eq!(
            decode(&dict).unwrap(),
            vec![(
                "d".to_string(),
                Value::Dict(vec![
                    (Value::Str("k".into()), Value::Bool(false)),
                    (Value::Int(5), Value::Null),
                ])
            )]
        );
    }

    #[test]
    fn decoding_over_a_recycled_record_gives_what_a_fresh_decode_gives() {
        let (every, _) = every_kind();
        let transform = map(&[
            ("id", &[0xa4, b'c', b'u', b'b', b'e']),
            ("position", &f64s(&[1.0, 2.0, 3.0])),
            ("rotation", &f64s(&[0.0, 0.0, 0.0, 1.0])),
        ]);
        let other = map(&[
            ("position", &[0x93, 0x01, 0x02, 0x03]),
            ("rotation", &f32s(&[0.0, 0.0, 0.0, 1.0])),
            ("obj", &map(&[("y", &f64s(&[5.0]))])),
        ]);
        let bodies = [every, transform, other, map(&[])];
        for a in &bodies {
            for b in &bodies {
                let mut fields = decode(a).unwrap();
                decode_into(b, &mut fields, 0, None).unwrap();
                assert_eq!(fields, decode(b).unwrap());
            }
        }
    }

    #[test]
    fn a_field_set_aside_is_not_among_the_values() {
        let body = map(&[
            ("position", &f64s(&[1.0, 2.0, 3.0])),
            ("id", &[0xa4, b'c', b'u', b'b', b'e']),
            ("id", &[0x07]),
        ]);
        let mut fields = vec![("create_time".to_string(), Value::Float(1.0))];
        let mut id = Value::Null;
        let at = decode_into(&body, &mut fields, 1, Some(("id", &mut id))).unwrap();
        assert_eq!(at, Some(1));
        assert_eq!(id, Value::Str("cube".into()));
        // Only the first `id` is set aside.
        assert_eq!(
            fields,
            vec![
                ("create_time".to_string(), Value::Float(1.0)),
                ("position".to_string(), f64_array(&[1.0, 2.0, 3.0])),
                ("id".to_string(), Value::Int(7)),
            ]
        );
    }

    #[test]
    fn a_body_that_is_not_one_map_with_string_keys_is_refused() {
        let err = |b: &[u8]| decode(b).unwrap_err();
        assert_eq!(err(b"\x91\x01"), "the body is MessagePack but not a map");
        assert_eq!(err(b"\x81\x01\x02"), "a body key is not a string");
        assert_eq!(err(b"\x81\xa1\xff\x02"), "a body key is not valid UTF-8");
        assert_eq!(err(b"\x81\xa1k\xa1\xff"), "a string is not valid UTF-8");
        assert_eq!(
            err(b"\x81\xa4name\xa5Intro\x00"),
            "1 bytes after the body's MessagePack value"
        );
        assert!(err(b"").starts_with("not MessagePack"));
        // Cut inside a float, inside a string, and a count the bytes cannot hold.
        assert!(err(b"\x81\xa1k\xcb\x00").starts_with("not MessagePack"));
        assert!(err(b"\x81\xa1k\xa5ab").starts_with("not MessagePack"));
        assert!(err(b"\x81\xa1k\xdd\xff\xff\xff\xff\x01").contains("claims 4294967295"));
    }

    #[test]
    fn nesting_is_limited_to_64_levels() {
        // The body's map, then `depth - 1` arrays around a nil.
        let nested = |depth: usize| {
            let mut b = vec![0x81, 0xa1, b'k'];
            b.extend(std::iter::repeat_n(0x91, depth - 1));
            b.push(0xc0);
            b
        };
        assert!(decode(&nested(MAX_DEPTH)).is_ok());
        assert_eq!(
            decode(&nested(MAX_DEPTH + 1)).unwrap_err(),
            "the body nests containers more than 64 deep"
        );
    }

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
