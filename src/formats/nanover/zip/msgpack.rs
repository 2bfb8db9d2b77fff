//! msgpack as NanoVer uses it: values decoded into the model and value shapes for windowed
//! walks, over the shared walker (`formats::msgpack`), and an encoder that writes the
//! smallest encodings, as msgpack-python's `packb` does.

use std::convert::Infallible;

use rmp::encode::{self, ByteBuf, ValueWriteError};
use rmp::Marker;

use crate::formats::msgpack::{err, take};
pub use crate::formats::msgpack::{head, skip, text, Error, Head};
use crate::model::{ArrayData, Field, Value};

/// Nesting deeper than this is refused (a hostile file must not exhaust the stack).
pub const MAX_DEPTH: usize = 200;

/// An empty vector for a container that claims `n` elements with `left` bytes of data
/// after its head: sized for no more elements than those bytes could hold at the
/// elements' size in memory. The count alone passes when every element is one byte, but
/// a decoded element is tens of bytes; past this capacity the vector grows as elements
/// are actually decoded, so memory follows the data, never the claim.
pub fn presized<T>(n: usize, left: usize) -> Vec<T> {
    Vec::with_capacity(n.min(left / std::mem::size_of::<T>().max(1)))
}

/// What a value's header says about its layout; its payload need not be at hand, so
/// values larger than any buffer can be walked through a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub kind: Kind,
    /// Bytes of the marker and the length or scalar that follows it.
    pub header: usize,
    /// Bytes after the header that are this value's own (a string's text, an ext's
    /// type byte and data).
    pub payload: u64,
    /// Values after it that belong to it (array elements; map keys and values).
    pub children: u64,
}

/// The kinds a walk tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Str,
    Map,
    Other,
}

/// The shape of the value at the start of `buf`, which must hold its header (9 bytes, or
/// what is left of the data, is always enough).
pub fn shape(buf: &[u8]) -> Result<Shape, Error> {
    let Some(&byte) = buf.first() else {
        return err(0, "the value is cut off by the end of its data");
    };
    let len = |n: usize| -> Result<u64, Error> {
        Ok(match n {
            1 => u64::from(take::<1>(buf, 1)?[0]),
            2 => u64::from(u16::from_be_bytes(take(buf, 1)?)),
            _ => u64::from(u32::from_be_bytes(take(buf, 1)?)),
        })
    };
    let fixed = |header: usize| Shape {
        kind: Kind::Other,
        header,
        payload: 0,
        children: 0,
    };
    let bytes = |kind: Kind, n: usize| -> Result<Shape, Error> {
        Ok(Shape {
            kind,
            header: 1 + n,
            payload: len(n)?,
            children: 0,
        })
    };
    let container = |kind: Kind, n: usize, per: u64| -> Result<Shape, Error> {
        Ok(Shape {
            kind,
            header: 1 + n,
            payload: 0,
            children: per * len(n)?,
        })
    };
    let ext = |fixed_len: Option<u64>, n: usize| -> Result<Shape, Error> {
        Ok(Shape {
            kind: Kind::Other,
            header: 1 + n,
            payload: 1 + match fixed_len {
                Some(l) => l,
                None => len(n)?,
            },
            children: 0,
        })
    };
    Ok(match Marker::from_u8(byte) {
        Marker::FixStr(n) => Shape {
            kind: Kind::Str,
            header: 1,
            payload: u64::from(n),
            children: 0,
        },
        Marker::FixMap(n) => Shape {
            kind: Kind::Map,
            header: 1,
            payload: 0,
            children: 2 * u64::from(n),
        },
        Marker::FixArray(n) => Shape {
            kind: Kind::Other,
            header: 1,
            payload: 0,
            children: u64::from(n),
        },
        Marker::Str8 => bytes(Kind::Str, 1)?,
        Marker::Str16 => bytes(Kind::Str, 2)?,
        Marker::Str32 => bytes(Kind::Str, 4)?,
        Marker::Bin8 => bytes(Kind::Other, 1)?,
        Marker::Bin16 => bytes(Kind::Other, 2)?,
        Marker::Bin32 => bytes(Kind::Other, 4)?,
        Marker::Array16 => container(Kind::Other, 2, 1)?,
        Marker::Array32 => container(Kind::Other, 4, 1)?,
        Marker::Map16 => container(Kind::Map, 2, 2)?,
        Marker::Map32 => container(Kind::Map, 4, 2)?,
        Marker::FixExt1 => ext(Some(1), 0)?,
        Marker::FixExt2 => ext(Some(2), 0)?,
        Marker::FixExt4 => ext(Some(4), 0)?,
        Marker::FixExt8 => ext(Some(8), 0)?,
        Marker::FixExt16 => ext(Some(16), 0)?,
        Marker::Ext8 => ext(None, 1)?,
        Marker::Ext16 => ext(None, 2)?,
        Marker::Ext32 => ext(None, 4)?,
        Marker::U8 | Marker::I8 => fixed(2),
        Marker::U16 | Marker::I16 => fixed(3),
        Marker::U32 | Marker::I32 | Marker::F32 => fixed(5),
        Marker::U64 | Marker::I64 | Marker::F64 => fixed(9),
        Marker::Null | Marker::True | Marker::False | Marker::FixPos(_) | Marker::FixNeg(_) => {
            fixed(1)
        }
        Marker::Reserved => return err(0, "byte 0xc1 is not a msgpack value"),
    })
}

/// Things a decoded value contained that a validator wants to hear about.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Oddities {
    pub ext: bool,
    pub non_str_key: bool,
}

/// Decodes the value at `pos` into the model, each msgpack type as its own model value (a
/// float 32 as `F32`, bin as `Bytes`, ext as `Ext`, a map with a non-string key as `Dict`).
/// Returns the value and the position after it.
pub fn value(
    buf: &[u8],
    pos: usize,
    odd: &mut Oddities,
    depth: usize,
) -> Result<(Value, usize), Error> {
    if depth > MAX_DEPTH {
        return err(pos, format!("values nested deeper than {MAX_DEPTH} levels"));
    }
    let (h, mut p) = head(buf, pos)?;
    let v = match h {
        Head::Nil => Value::Null,
        Head::Bool(b) => Value::Bool(b),
        Head::Int(i) => Value::Int(i),
        Head::UInt(u) => match i64::try_from(u) {
            Ok(i) => Value::Int(i),
            Err(_) => Value::UInt(u),
        },
        Head::F32(x) => Value::F32(x),
        Head::F64(x) => Value::Float(x),
        Head::Str(r) => Value::Str(text(buf, r, pos)?.to_string()),
        Head::Bin(r) => Value::Bytes(buf[r].to_vec()),
        Head::Ext(ty, r) => {
            odd.ext = true;
            Value::Ext {
                type_id: ty,
                bytes: buf[r].to_vec(),
            }
        }
        Head::Array(n) => {
            if n > buf.len() - p {
                return err(pos, "an array claims more elements than its data can hold");
            }
            let mut items = presized(n, buf.len() - p);
            for _ in 0..n {
                let (v, next) = value(buf, p, odd, depth + 1)?;
                items.push(v);
                p = next;
            }
            Value::List(items)
        }
        Head::Map(n) => {
            let (map, next) = map(buf, pos, n, p, odd, depth)?;
            p = next;
            map
        }
    };
    Ok((v, p))
}

/// The map of `n` entries whose first key is at `p`: a `Map` while every key is a string
/// (the common case, built in one pass), a `Dict` from the first key that is not.
fn map(
    buf: &[u8],
    pos: usize,
    n: usize,
    mut p: usize,
    odd: &mut Oddities,
    depth: usize,
) -> Result<(Value, usize), Error> {
    if n > (buf.len() - p) / 2 {
        return err(pos, "a map claims more entries than its data can hold");
    }
    let mut fields: Vec<Field> = presized(n, buf.len() - p);
    let mut dict: Option<Vec<(Value, Value)>> = None;
    for _ in 0..n {
        let (k, next) = value(buf, p, odd, depth + 1)?;
        let (v, next) = value(buf, next, odd, depth + 1)?;
        p = next;
        match (k, &mut dict) {
            (Value::Str(k), None) => fields.push((k, v)),
            (k, Some(d)) => d.push((k, v)),
            (k, None) => {
                odd.non_str_key = true;
                let mut d: Vec<(Value, Value)> = std::mem::take(&mut fields)
                    .into_iter()
                    .map(|(k, v)| (Value::Str(k), v))
                    .collect();
                d.push((k, v));
                dict = Some(d);
            }
        }
    }
    Ok((dict.map_or(Value::Map(fields), Value::Dict), p))
}

/// A map key: a string, or (noted) any other value in a readable form.
pub fn key(buf: &[u8], p: usize, odd: &mut Oddities) -> Result<(String, usize), Error> {
    match head(buf, p)? {
        (Head::Str(r), next) => Ok((text(buf, r, p)?.to_string(), next)),
        _ => {
            odd.non_str_key = true;
            let end = skip(buf, p)?;
            let shown: String = buf[p..end].iter().map(|b| format!("{b:02x}")).collect();
            Ok((format!("<key 0x{shown}>"), end))
        }
    }
}

/// Unwraps results of writing into memory, which cannot fail.
fn ok<T>(r: Result<T, ValueWriteError<Infallible>>) -> T {
    match r {
        Ok(t) => t,
        Err(ValueWriteError::InvalidMarkerWrite(e) | ValueWriteError::InvalidDataWrite(e)) => {
            match e {}
        }
    }
}

/// A growing msgpack buffer with msgpack-python's encodings.
#[derive(Default)]
pub struct Encoder {
    buf: ByteBuf,
}

impl Encoder {
    pub fn new() -> Encoder {
        Encoder::default()
    }

    /// An empty encoder writing into `buf`'s allocation (reused across messages).
    pub fn reusing(mut buf: Vec<u8>) -> Encoder {
        buf.clear();
        Encoder {
            buf: ByteBuf::from_vec(buf),
        }
    }

    pub fn into_vec(self) -> Vec<u8> {
        self.buf.into_vec()
    }

    pub fn len(&self) -> usize {
        self.buf.as_slice().len()
    }

    pub fn as_slice(&self) -> &[u8] {
        self.buf.as_slice()
    }

    pub fn clear(&mut self) {
        self.buf.as_mut_vec().clear();
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn raw(&mut self, bytes: &[u8]) {
        self.buf.as_mut_vec().extend_from_slice(bytes);
    }

    pub fn nil(&mut self) {
        ok(encode::write_nil(&mut self.buf).map_err(ValueWriteError::InvalidMarkerWrite));
    }

    pub fn bool(&mut self, b: bool) {
        ok(encode::write_bool(&mut self.buf, b).map_err(ValueWriteError::InvalidMarkerWrite));
    }

    pub fn int(&mut self, i: i64) {
        ok(encode::write_sint(&mut self.buf, i));
    }

    pub fn uint(&mut self, u: u64) {
        ok(encode::write_uint(&mut self.buf, u));
    }

    pub fn f64(&mut self, x: f64) {
        ok(encode::write_f64(&mut self.buf, x));
    }

    pub fn str(&mut self, s: &str) {
        ok(encode::write_str(&mut self.buf, s));
    }

    pub fn bin(&mut self, b: &[u8]) {
        ok(encode::write_bin(&mut self.buf, b));
    }

    /// A bin header for `len` bytes the caller appends with `raw`.
    pub fn bin_len(&mut self, len: u32) {
        ok(encode::write_bin_len(&mut self.buf, len));
    }

    pub fn array_len(&mut self, n: u32) {
        ok(encode::write_array_len(&mut self.buf, n));
    }

    pub fn map_len(&mut self, n: u32) {
        ok(encode::write_map_len(&mut self.buf, n));
    }

    /// Any model value as plain msgpack: typed arrays become (nested) lists, except a
    /// flat uint8 array, which is a bin (the form it was read from).
    pub fn value(&mut self, v: &Value) {
        match v {
            Value::Null | Value::Removed => self.nil(),
            Value::Bool(b) => self.bool(*b),
            Value::Int(i) => self.int(*i),
            Value::UInt(u) => self.uint(*u),
            Value::Float(x) => self.f64(*x),
            Value::F32(x) => ok(encode::write_f32(&mut self.buf, *x)),
            Value::Str(s) => self.str(s),
            Value::Bytes(b) => self.bin(b),
            Value::Ext { type_id, bytes } => {
                ok(encode::write_ext_meta(&mut self.buf, bytes.len() as u32, *type_id).map(drop));
                self.raw(bytes);
            }
            Value::Dict(entries) => {
                self.map_len(entries.len() as u32);
                for (k, v) in entries {
                    self.value(k);
                    self.value(v);
                }
            }
            Value::List(items) => {
                self.array_len(items.len() as u32);
                for item in items {
                    self.value(item);
                }
            }
            Value::Map(fields) => {
                self.map_len(fields.len() as u32);
                for (k, v) in fields {
                    self.str(k);
                    self.value(v);
                }
            }
            Value::Array(a) => match &a.data {
                ArrayData::U8(bytes) if a.shape.len() == 1 => self.bin(bytes),
                data => self.nested(&a.checked_shape(), data, 0),
            },
        }
    }

    fn nested(&mut self, dims: &[usize], data: &ArrayData, offset: usize) {
        let Some((&n, rest)) = dims.split_first() else {
            return self.element(data, offset);
        };
        let stride: usize = rest.iter().product();
        self.array_len(n as u32);
        for i in 0..n {
            self.nested(rest, data, offset + i * stride);
        }
    }

    fn element(&mut self, data: &ArrayData, i: usize) {
        match data {
            ArrayData::Bool(v) => self.bool(v[i]),
            ArrayData::Str(v) => self.str(&v[i]),
            ArrayData::U8(v) => self.uint(u64::from(v[i])),
            ArrayData::U16(v) => self.uint(u64::from(v[i])),
            ArrayData::U32(v) => self.uint(u64::from(v[i])),
            ArrayData::U64(v) => self.uint(v[i]),
            ArrayData::I8(v) => self.int(i64::from(v[i])),
            ArrayData::I16(v) => self.int(i64::from(v[i])),
            ArrayData::I32(v) => self.int(i64::from(v[i])),
            ArrayData::I64(v) => self.int(v[i]),
            ArrayData::F32(v) => self.f64(f64::from(v[i])),
            ArrayData::F64(v) => self.f64(v[i]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smallest_encodings_like_msgpack_python() {
        let mut e = Encoder::new();
        e.int(5);
        e.int(200);
        e.int(-3);
        e.int(-200);
        e.f64(1.5);
        e.str("frame");
        e.bin(&[]);
        assert_eq!(
            e.into_vec(),
            [
                &[0x05, 0xcc, 200, 0xfd, 0xd1, 0xff, 0x38][..],
                &[0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0],
                b"\xa5frame",
                &[0xc4, 0x00]
            ]
            .concat()
        );
    }

    #[test]
    fn decode_round_trip_and_skip() {
        let mut e = Encoder::new();
        let v = Value::Map(vec![
            ("a".into(), Value::List(vec![Value::Int(-1), Value::Null])),
            ("b".into(), Value::Float(0.25)),
            ("c".into(), Value::Bytes(vec![1, 2])),
            ("f".into(), Value::F32(0.1)),
            (
                "e".into(),
                Value::Ext {
                    type_id: -3,
                    bytes: vec![9; 5],
                },
            ),
            (
                "d".into(),
                Value::Dict(vec![
                    (Value::Int(1), Value::Str("one".into())),
                    (Value::Str("two".into()), Value::Bool(true)),
                ]),
            ),
            // A string key first, then one that is not: the map turns into a Dict.
            (
                "g".into(),
                Value::Dict(vec![
                    (Value::Str("a".into()), Value::Null),
                    (Value::Int(-2), Value::F32(1.5)),
                ]),
            ),
        ]);
        e.value(&v);
        let bytes = e.into_vec();
        let mut odd = Oddities::default();
        assert_eq!(value(&bytes, 0, &mut odd, 0), Ok((v, bytes.len())));
        assert_eq!(skip(&bytes, 0), Ok(bytes.len()));
        for cut in 0..bytes.len() {
            assert!(skip(&bytes[..cut], 0).is_err());
            assert!(value(&bytes[..cut], 0, &mut odd, 0).is_err());
        }
    }

    #[test]
    fn shapes_walk_values_as_skip_does() {
        let mut e = Encoder::new();
        e.value(&Value::Map(vec![
            (
                "a".into(),
                Value::List(vec![Value::Int(-1), Value::Null, Value::Float(0.5)]),
            ),
            ("b".into(), Value::Str("x".repeat(300))),
            ("c".into(), Value::Bytes(vec![1; 70_000])),
            ("d".into(), Value::UInt(u64::MAX)),
        ]));
        e.raw(&[0xd7, 5, 1, 2, 3, 4, 5, 6, 7, 8]);
        let bytes = e.into_vec();
        // Walk with a counter, looking only at headers.
        let walk = |mut p: usize| -> usize {
            let mut pending = 1u64;
            while pending > 0 {
                let sh = shape(&bytes[p..(p + 9).min(bytes.len())]).unwrap();
                pending = pending - 1 + sh.children;
                p += sh.header + sh.payload as usize;
            }
            p
        };
        let first = walk(0);
        assert_eq!(Ok(first), skip(&bytes, 0));
        assert_eq!(walk(first), bytes.len());
        assert_eq!(skip(&bytes, first), Ok(bytes.len()));
        assert!(shape(&[0xc1]).is_err());
        assert!(shape(&[0xdb, 0]).is_err());
    }

    #[test]
    fn hostile_lengths_are_refused_before_allocating() {
        // array32 of 2^32-1 elements with no data
        assert!(skip(&[0xdd, 0xff, 0xff, 0xff, 0xff], 0).is_err());
        let mut odd = Oddities::default();
        assert!(value(&[0xdf, 0xff, 0xff, 0xff, 0xff], 0, &mut odd, 0).is_err());
        let deep = vec![0x91u8; 10_000];
        assert!(value(&deep, 0, &mut odd, 0).is_err());
    }
}
