//! Values in a block (spec §A3, §A6): a signal's bytes at its offset as a model value, and
//! back. Little-endian; int32 and bool also in 8-byte slots (Vulcan's); composites in
//! storage order (Quat w, x, y, z; Mat3 column-major), which is the model's row-major order
//! through `SignalType::model_index`.

use crate::formats::icarus::common::{Element, Kind, SignalType};
use crate::model::{Array, ArrayData, Value};

/// What decoding a value found wrong with its bytes (spec §A11 warnings).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Quirks {
    /// A bool byte other than 0 or 1.
    pub bool_value: bool,
    /// An 8-byte slot whose upper bytes are not the sign (or zero) extension.
    pub padding: bool,
}

fn le<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    if let Some(s) = b.get(at..at + N) {
        out.copy_from_slice(s);
    }
    out
}

/// A scalar element at `at` (canonical size).
fn f64_at(b: &[u8], at: usize) -> f64 {
    f64::from_le_bytes(le(b, at))
}
fn f32_at(b: &[u8], at: usize) -> f32 {
    f32::from_le_bytes(le(b, at))
}
fn i32_at(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes(le(b, at))
}
fn i64_at(b: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(le(b, at))
}

/// Fills `data` (of `ty`'s element) with the composite at `b`, in model order.
fn fill<T: Copy + Default>(
    data: &mut Vec<T>,
    ty: SignalType,
    b: &[u8],
    read: impl Fn(&[u8], usize) -> T,
) {
    let n = ty.count();
    let size = ty.element.size();
    data.clear();
    data.resize(n, T::default());
    for i in 0..n {
        data[ty.model_index(i)] = read(b, i * size);
    }
}

/// Whether decoding a `ty` signal held in `size` bytes can find [`Quirks`]: a bool, or an
/// int32 in an 8-byte slot.
pub fn can_have_quirks(ty: SignalType, size: usize) -> bool {
    ty.kind == Kind::Scalar
        && (ty.element == Element::Bool || (ty.element == Element::Int32 && size == 8))
}

/// Decodes a signal's `bytes` (exactly its size) into `out`, reusing `out`'s array buffer
/// when it already holds one of the same element type.
pub fn decode(ty: SignalType, bytes: &[u8], out: &mut Value) -> Quirks {
    let mut quirks = Quirks::default();
    if ty.kind == Kind::Scalar {
        *out = match ty.element {
            Element::Double => Value::Float(f64_at(bytes, 0)),
            Element::Float => Value::F32(f32_at(bytes, 0)),
            Element::Int64 => Value::Int(i64_at(bytes, 0)),
            Element::Int32 => {
                let v = i32_at(bytes, 0);
                if bytes.len() == 8 {
                    let fill = if v < 0 { 0xff } else { 0 };
                    quirks.padding = bytes[4..8].iter().any(|&b| b != fill);
                }
                Value::Int(i64::from(v))
            }
            Element::Bool => {
                let v = bytes.first().copied().unwrap_or(0);
                quirks.bool_value = v > 1;
                quirks.padding = bytes.len() == 8 && bytes[1..].iter().any(|&b| b != 0);
                Value::Bool(v != 0)
            }
        };
        return quirks;
    }
    let shape = ty.shape();
    if let Value::Array(a) = out {
        let reused = match (&mut a.data, ty.element) {
            (ArrayData::F64(d), Element::Double) => {
                fill(d, ty, bytes, f64_at);
                true
            }
            (ArrayData::F32(d), Element::Float) => {
                fill(d, ty, bytes, f32_at);
                true
            }
            (ArrayData::I32(d), Element::Int32) => {
                fill(d, ty, bytes, i32_at);
                true
            }
            (ArrayData::I64(d), Element::Int64) => {
                fill(d, ty, bytes, i64_at);
                true
            }
            _ => false,
        };
        if reused {
            if a.shape != shape {
                a.shape = shape.to_vec();
            }
            return quirks;
        }
    }
    let data = match ty.element {
        Element::Double => {
            let mut d = Vec::new();
            fill(&mut d, ty, bytes, f64_at);
            ArrayData::F64(d)
        }
        Element::Float => {
            let mut d = Vec::new();
            fill(&mut d, ty, bytes, f32_at);
            ArrayData::F32(d)
        }
        Element::Int32 => {
            let mut d = Vec::new();
            fill(&mut d, ty, bytes, i32_at);
            ArrayData::I32(d)
        }
        // Composites of bool are not in the profile (`SignalType::parse` refuses them).
        Element::Int64 | Element::Bool => {
            let mut d = Vec::new();
            fill(&mut d, ty, bytes, i64_at);
            ArrayData::I64(d)
        }
    };
    *out = Value::Array(Array {
        shape: shape.to_vec(),
        data,
    });
    quirks
}

/// Indices (in storage order) of the elements of a float signal's bytes that are NaN or
/// infinite, for `validate --deep`.
pub fn non_finite(ty: SignalType, bytes: &[u8], mut each: impl FnMut(usize)) {
    match ty.element {
        Element::Double => (0..ty.count())
            .filter(|i| !f64_at(bytes, i * 8).is_finite())
            .for_each(&mut each),
        Element::Float => (0..ty.count())
            .filter(|i| !f32_at(bytes, i * 4).is_finite())
            .for_each(&mut each),
        _ => {}
    }
}

/// Elements (in storage order) of a numeric signal whose value differs from the previous
/// frame's by more than `threshold`, with the two values, for `validate --deep
/// --discontinuity`. A NaN is no jump (`--deep` reports it as not finite).
pub fn jumps(
    ty: SignalType,
    now: &[u8],
    before: &[u8],
    threshold: f64,
    mut each: impl FnMut(usize, f64, f64),
) {
    let at: fn(&[u8], usize) -> f64 = match ty.element {
        Element::Double => |b, i| f64_at(b, i * 8),
        Element::Float => |b, i| f64::from(f32_at(b, i * 4)),
        Element::Int64 => |b, i| i64_at(b, i * 8) as f64,
        // An int32 in an 8-byte slot is a scalar: its value is its first four bytes.
        Element::Int32 => |b, i| f64::from(i32_at(b, i * 4)),
        Element::Bool => return,
    };
    for i in 0..ty.count() {
        let (a, b) = (at(before, i), at(now, i));
        if (b - a).abs() > threshold {
            each(i, a, b);
        }
    }
}

/// A number taken from a model value, before it is stored as an element.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Num {
    F64(f64),
    F32(f32),
    I(i64),
    U(u64),
    B(bool),
}

/// How a value fitted its signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fit {
    Exact,
    /// Kept exactly in another representation (float → double, bool → int32...).
    Widened,
    /// Stored, but not exactly (rounded, out of range: saturated).
    Lossy,
    /// Not a value of this signal's shape or a number at all: nothing stored.
    Mismatch,
}

/// Stores one number as `element` in `out` (its slot: canonical size or 8 bytes), and how
/// exactly.
fn put(n: Num, element: Element, out: &mut [u8]) -> Fit {
    let as_f64 = |n: Num| match n {
        Num::F64(v) => v,
        Num::F32(v) => f64::from(v),
        Num::I(v) => v as f64,
        Num::U(v) => v as f64,
        Num::B(v) => f64::from(u8::from(v)),
    };
    let as_i128 = |n: Num| -> Option<i128> {
        match n {
            Num::I(v) => Some(i128::from(v)),
            Num::U(v) => Some(i128::from(v)),
            Num::B(v) => Some(i128::from(v)),
            Num::F64(v) if v.fract() == 0.0 && v.abs() < 1.8e19 => Some(v as i128),
            Num::F32(v) if v.fract() == 0.0 && v.abs() < 1.8e19 => Some(v as i128),
            _ => None,
        }
    };
    let same = |exact: bool, native: bool| match (exact, native) {
        (true, true) => Fit::Exact,
        (true, false) => Fit::Widened,
        (false, _) => Fit::Lossy,
    };
    let write = |out: &mut [u8], bytes: &[u8]| {
        let n = bytes.len().min(out.len());
        out[..n].copy_from_slice(&bytes[..n]);
    };
    match element {
        Element::Double => {
            let v = as_f64(n);
            write(out, &v.to_le_bytes());
            let exact = match n {
                Num::I(i) => v as i128 == i128::from(i) && v.abs() < 9.3e18,
                Num::U(u) => v as i128 == i128::from(u) && v < 1.8e19,
                _ => true,
            };
            same(exact, matches!(n, Num::F64(_)))
        }
        Element::Float => {
            let v = as_f64(n);
            let f = v as f32;
            write(out, &f.to_le_bytes());
            let exact = f64::from(f) == v || v.is_nan();
            same(exact, matches!(n, Num::F32(_)))
        }
        Element::Int32 | Element::Int64 => {
            let (lo, hi) = if element == Element::Int32 {
                (i128::from(i32::MIN), i128::from(i32::MAX))
            } else {
                (i128::from(i64::MIN), i128::from(i64::MAX))
            };
            let (v, exact) = match as_i128(n) {
                Some(v) if (lo..=hi).contains(&v) => (v, true),
                Some(v) => (v.clamp(lo, hi), false),
                None => (as_f64(n).round().clamp(lo as f64, hi as f64) as i128, false),
            };
            // An int32 in an 8-byte slot is stored sign-extended: the same bytes as int64.
            let v = v as i64;
            if element == Element::Int32 && out.len() == 4 {
                write(out, &(v as i32).to_le_bytes());
            } else {
                write(out, &v.to_le_bytes());
            }
            same(exact, matches!(n, Num::I(_)))
        }
        Element::Bool => {
            let (v, exact) = match n {
                Num::B(b) => (b, true),
                other => match as_i128(other) {
                    Some(0) => (false, true),
                    Some(1) => (true, true),
                    _ => (as_f64(other) != 0.0, false),
                },
            };
            out.fill(0);
            if let Some(b) = out.first_mut() {
                *b = u8::from(v);
            }
            same(exact, matches!(n, Num::B(_)))
        }
    }
}

fn scalar(v: &Value) -> Option<Num> {
    Some(match v {
        Value::Float(f) => Num::F64(*f),
        Value::F32(f) => Num::F32(*f),
        Value::Int(i) => Num::I(*i),
        Value::UInt(u) => Num::U(*u),
        Value::Bool(b) => Num::B(*b),
        _ => return None,
    })
}

/// Element `i` of an array's data, as a number.
fn element(data: &ArrayData, i: usize) -> Option<Num> {
    Some(match data {
        ArrayData::F64(d) => Num::F64(*d.get(i)?),
        ArrayData::F32(d) => Num::F32(*d.get(i)?),
        ArrayData::I64(d) => Num::I(*d.get(i)?),
        ArrayData::I32(d) => Num::I(i64::from(*d.get(i)?)),
        ArrayData::I16(d) => Num::I(i64::from(*d.get(i)?)),
        ArrayData::I8(d) => Num::I(i64::from(*d.get(i)?)),
        ArrayData::U64(d) => Num::U(*d.get(i)?),
        ArrayData::U32(d) => Num::U(u64::from(*d.get(i)?)),
        ArrayData::U16(d) => Num::U(u64::from(*d.get(i)?)),
        ArrayData::U8(d) => Num::U(u64::from(*d.get(i)?)),
        ArrayData::Bool(d) => Num::B(*d.get(i)?),
        ArrayData::Str(_) => return None,
    })
}

/// Whether an array dtype is the signal's element (an exact store).
fn native(data: &ArrayData, element: Element) -> bool {
    matches!(
        (data, element),
        (ArrayData::F64(_), Element::Double)
            | (ArrayData::F32(_), Element::Float)
            | (ArrayData::I32(_), Element::Int32)
            | (ArrayData::I64(_), Element::Int64)
    )
}

/// Stores `value` as a signal of type `ty` in `out` (its `size` bytes): scalars of any
/// numeric kind, composites as arrays of `ty`'s count (any shape holding exactly that many,
/// read in row-major order). `Mismatch` leaves `out` as it was.
pub fn encode(ty: SignalType, value: &Value, out: &mut [u8]) -> Fit {
    if ty.kind == Kind::Scalar {
        return match scalar(value) {
            Some(n) => put(n, ty.element, out),
            None => Fit::Mismatch,
        };
    }
    let Value::Array(a) = value else {
        return Fit::Mismatch;
    };
    if a.len() != ty.count() || matches!(a.data, ArrayData::Str(_)) {
        return Fit::Mismatch;
    }
    let size = ty.element.size();
    let mut worst = Fit::Exact;
    for i in 0..ty.count() {
        let Some(n) = element(&a.data, ty.model_index(i)) else {
            return Fit::Mismatch;
        };
        let fit = put(n, ty.element, &mut out[i * size..(i + 1) * size]);
        worst = worst.max(fit);
    }
    if worst == Fit::Exact && !native(&a.data, ty.element) {
        worst = Fit::Widened;
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(t: &str) -> SignalType {
        SignalType::parse(t).unwrap()
    }

    #[test]
    fn slots_and_canonical_sizes_decode_alike() {
        let mut v = Value::Null;
        assert_eq!(
            decode(ty("int32"), &(-5i32).to_le_bytes(), &mut v),
            Quirks::default()
        );
        assert_eq!(v, Value::Int(-5));
        assert_eq!(
            decode(ty("int32"), &(-5i64).to_le_bytes(), &mut v),
            Quirks::default()
        );
        assert_eq!(v, Value::Int(-5));
        // Upper bytes that are not the sign extension.
        let mut slot = 7i64.to_le_bytes();
        slot[6] = 1;
        assert!(decode(ty("int32"), &slot, &mut v).padding);
        assert_eq!(v, Value::Int(7));
        assert_eq!(decode(ty("bool"), &[1], &mut v), Quirks::default());
        assert_eq!(v, Value::Bool(true));
        assert_eq!(
            decode(ty("bool"), &[0, 0, 0, 0, 0, 0, 0, 0], &mut v),
            Quirks::default()
        );
        assert_eq!(v, Value::Bool(false));
        assert!(decode(ty("bool"), &[2], &mut v).bool_value);
        assert!(decode(ty("bool"), &[1, 0, 0, 0, 0, 0, 0, 9], &mut v).padding);
    }

    #[test]
    fn quat_is_w_first_and_mat3_column_major() {
        let mut bytes = Vec::new();
        for i in 0..9 {
            bytes.extend_from_slice(&(i as f64).to_le_bytes());
        }
        let mut v = Value::Null;
        decode(ty("Quat<double>"), &bytes[..32], &mut v);
        let Value::Array(a) = &v else { panic!() };
        assert_eq!(a.shape, [4]);
        assert_eq!(a.data, ArrayData::F64(vec![0.0, 1.0, 2.0, 3.0]));
        decode(ty("Mat3<double>"), &bytes, &mut v);
        let Value::Array(a) = &v else { panic!() };
        assert_eq!(a.shape, [3, 3]);
        // Storage m00 m10 m20 m01 …: row 0 is m00 m01 m02 = storage 0, 3, 6.
        assert_eq!(
            a.data,
            ArrayData::F64(vec![0.0, 3.0, 6.0, 1.0, 4.0, 7.0, 2.0, 5.0, 8.0])
        );
        let mut back = vec![0u8; 72];
        assert_eq!(encode(ty("Mat3<double>"), &v, &mut back), Fit::Exact);
        assert_eq!(back, bytes);
    }

    #[test]
    fn encoding_says_how_exactly() {
        let mut b = [0u8; 8];
        assert_eq!(encode(ty("double"), &Value::Float(0.5), &mut b), Fit::Exact);
        assert_eq!(encode(ty("double"), &Value::F32(0.5), &mut b), Fit::Widened);
        assert_eq!(
            encode(ty("double"), &Value::Int((1 << 53) + 1), &mut b),
            Fit::Lossy
        );
        assert_eq!(
            encode(ty("float"), &Value::Float(0.1), &mut b[..4]),
            Fit::Lossy
        );
        assert_eq!(
            encode(ty("int32"), &Value::Int(1 << 40), &mut b[..4]),
            Fit::Lossy
        );
        assert_eq!(encode(ty("int32"), &Value::Int(-2), &mut b), Fit::Exact);
        assert_eq!(b, (-2i64).to_le_bytes(), "sign-extended in an 8-byte slot");
        assert_eq!(
            encode(ty("bool"), &Value::Bool(true), &mut b[..1]),
            Fit::Exact
        );
        assert_eq!(
            encode(ty("double"), &Value::Str("x".into()), &mut b),
            Fit::Mismatch
        );
        let v3 = Value::Array(Array::flat(ArrayData::F32(vec![1.0, 2.0, 3.0])));
        let mut out = [0u8; 24];
        assert_eq!(encode(ty("Vec3<double>"), &v3, &mut out), Fit::Widened);
        assert_eq!(
            encode(ty("Quat<double>"), &v3, &mut [0u8; 32]),
            Fit::Mismatch
        );
    }
}
