//! The `values` table: one row per record and key, each value in the one typed column it
//! fits (docs/formats/lake.md, "values").

use std::mem::replace;
use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, BinaryBuilder, BooleanBuilder, Float64Builder, Int64Builder, ListBuilder,
    StringBuilder,
};
use arrow_array::ArrayRef;

use super::file::{Common, BATCH_BYTES, BATCH_ROWS};
use super::labels::Label;
use crate::formats::export::json_text::{self, Lost};
use crate::formats::frames::{le_bytes, Packed};
use crate::model::{Array, ArrayData, DType, Value};

/// Integers above this in magnitude are not all exact in a float64.
const EXACT: u64 = 1 << 53;

pub(super) const INEXACT_ELEMENT: &str =
    "64-bit integer array element beyond 2^53 written rounded into `values` (float64)";
const EXT: &str = "msgpack ext written as its bytes (the type code is not kept)";
const BIG_UINT: &str = "unsigned integer beyond int64 written as decimal text";

pub struct Values {
    pub common: Common,
    /// Appended to by a caller that has a whole frame's keys at once (with
    /// [`Common::push_times`], then [`Values::push_value`] per row).
    pub keys: Label,
    value: Float64Builder,
    int: Int64Builder,
    values: ListBuilder<Float64Builder>,
    shape: ListBuilder<Int64Builder>,
    text: StringBuilder,
    bytes: BinaryBuilder,
    removed: BooleanBuilder,
    pub rows: usize,
    /// Bytes of the batch's values, roughly.
    pub size: usize,
    /// Rows not yet in `values`, `shape`, `text`, `bytes` and `removed` (scalars, which
    /// leave them null).
    behind: usize,
    json: Vec<u8>,
}

impl Values {
    pub fn new(common: Common) -> Values {
        Values {
            common,
            keys: Label::new(),
            value: Float64Builder::with_capacity(BATCH_ROWS),
            int: Int64Builder::with_capacity(BATCH_ROWS),
            values: list_builder(),
            shape: ListBuilder::new(Int64Builder::new()),
            text: StringBuilder::new(),
            bytes: BinaryBuilder::new(),
            removed: BooleanBuilder::new(),
            rows: 0,
            size: 0,
            behind: 0,
            json: Vec::new(),
        }
    }

    /// The value columns of a row whose place ([`Common`]) and key are pushed already;
    /// what it cannot keep goes in `lost`.
    pub fn push_value(&mut self, key: &str, value: &Value, lost: &mut Lost) {
        self.rows += 1;
        self.size += 64;
        let (number, int) = numbers(value);
        self.value.append_option(number);
        self.int.append_option(int);
        let scalar = match value {
            Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::F32(_) => true,
            Value::UInt(_) => int.is_some(),
            _ => false,
        };
        if scalar {
            // Most rows are one number: the columns it leaves null are filled in one go,
            // when a row of another kind comes or the batch ends.
            self.behind += 1;
            return;
        }
        self.catch_up();
        let (mut text, mut bytes) = (None, None);
        let mut array = None;
        let mut removed = false;
        match value {
            Value::Removed => removed = true,
            Value::UInt(u) => {
                lost.push((key.to_string(), BIG_UINT));
                text = Some(u.to_string());
            }
            Value::Str(s) => text = Some(s.clone()),
            Value::Bytes(b) => bytes = Some(b.as_slice()),
            Value::Ext { bytes: b, .. } => {
                lost.push((key.to_string(), EXT));
                bytes = Some(b.as_slice());
            }
            Value::Array(a) => match &a.data {
                ArrayData::Str(_) => {
                    self.json.clear();
                    json_text::array(&mut self.json, key, a, lost);
                    text = Some(String::from_utf8_lossy(&self.json).into_owned());
                    array = Some((None, &a.shape));
                }
                _ => array = Some((Some(a), &a.shape)),
            },
            Value::List(_) | Value::Map(_) | Value::Dict(_) => {
                self.json.clear();
                json_text::value(&mut self.json, key, value, lost);
                text = Some(String::from_utf8_lossy(&self.json).into_owned());
            }
            Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::F32(_) => {}
        }
        match array {
            Some((numbers, shape)) => {
                if let Some(a) = numbers {
                    self.size += a.len() * 8;
                    if !extend_floats(self.values.values(), a) {
                        lost.push((key.to_string(), INEXACT_ELEMENT));
                    }
                    self.values.append(true);
                } else {
                    self.values.append(false);
                }
                let dims = self.shape.values();
                for &d in shape {
                    dims.append_value(d as i64);
                }
                self.shape.append(true);
            }
            None => {
                self.values.append(false);
                self.shape.append(false);
            }
        }
        self.size += text.as_ref().map_or(0, String::len);
        self.text.append_option(text);
        self.bytes.append_option(bytes);
        self.removed.append_value(removed);
    }

    /// Rows of one float64 each (a frame's numbers), whose places and keys are pushed
    /// already: [`Values::push_value`] of each as a `Value::Float`, at once.
    pub fn push_floats(&mut self, numbers: &[f64]) {
        let n = numbers.len();
        self.value.append_slice(numbers);
        self.int.append_nulls(n);
        self.rows += n;
        self.size += 64 * n;
        self.behind += n;
    }

    /// Rows of one array each, packed in `block` at the offsets given with their
    /// [`Packed`] (a frame's signals), whose places and keys are pushed already:
    /// [`Values::push_value`] of each record's `Value::Array`, read from the block instead
    /// (never a string: not packed). `exact` is set to whether each row's elements were kept
    /// exactly (what `push_value` reports as lost, for the caller to count).
    pub fn push_packed<'p>(
        &mut self,
        arrays: impl ExactSizeIterator<Item = (&'p Packed, usize)>,
        block: &[u8],
        exact: &mut Vec<bool>,
    ) {
        let n = arrays.len();
        self.catch_up();
        // The columns an array leaves null, a frame's rows at once.
        self.value.append_nulls(n);
        self.int.append_nulls(n);
        self.text.append_nulls(n);
        self.bytes.append_nulls(n);
        self.removed.append_n(n, false);
        self.rows += n;
        exact.clear();
        for (packed, at) in arrays {
            self.size += 64 + packed.count() * 8;
            exact.push(extend_packed(self.values.values(), packed, block, at));
            self.values.append(true);
            let dims = self.shape.values();
            for &d in &packed.shape {
                dims.append_value(d as i64);
            }
            self.shape.append(true);
        }
    }

    /// Fills the columns a scalar leaves null for the rows that are behind in them.
    fn catch_up(&mut self) {
        let n = std::mem::take(&mut self.behind);
        if n > 0 {
            self.values.append_nulls(n);
            self.shape.append_nulls(n);
            self.text.append_nulls(n);
            self.bytes.append_nulls(n);
            self.removed.append_n(n, false);
        }
    }

    /// The batch's columns, in the schema's order.
    pub fn finish(&mut self) -> Vec<ArrayRef> {
        self.catch_up();
        self.rows = 0;
        self.size = 0;
        let mut columns = self.common.finish();
        columns.extend([
            self.keys.finish(),
            Arc::new(replace(&mut self.value, Float64Builder::with_capacity(BATCH_ROWS)).finish()),
            Arc::new(replace(&mut self.int, Int64Builder::with_capacity(BATCH_ROWS)).finish()),
            Arc::new(replace(&mut self.values, list_builder()).finish()),
            Arc::new(self.shape.finish()),
            Arc::new(self.text.finish()),
            Arc::new(self.bytes.finish()),
            Arc::new(self.removed.finish()),
        ]);
        columns
    }
}

/// The `values` column's builder, with room for a batch's numbers and the array that
/// closes it (a batch closes once past [`BATCH_BYTES`]): grown from empty, every batch
/// copied its numbers as it doubled (docs/performance.md, "Lake, seventh pass").
fn list_builder() -> ListBuilder<Float64Builder> {
    let floats = BATCH_BYTES / 8;
    ListBuilder::with_capacity(
        Float64Builder::with_capacity(floats + floats / 4),
        BATCH_ROWS,
    )
}

/// A value's `value` and `int` columns: a number or boolean in float64 where it holds it
/// exactly, an integer in int64 where it fits.
fn numbers(value: &Value) -> (Option<f64>, Option<i64>) {
    match value {
        Value::Bool(b) => (Some(f64::from(u8::from(*b))), None),
        Value::Int(i) => ((i.unsigned_abs() <= EXACT).then_some(*i as f64), Some(*i)),
        Value::UInt(u) => ((*u <= EXACT).then_some(*u as f64), i64::try_from(*u).ok()),
        Value::Float(x) => (Some(*x), None),
        Value::F32(x) => (Some(f64::from(*x)), None),
        _ => (None, None),
    }
}

/// Appends `a`'s elements as float64, row-major; false when a 64-bit integer did not fit
/// exactly.
fn extend_floats(out: &mut Float64Builder, a: &Array) -> bool {
    match &a.data {
        ArrayData::F64(v) => out.append_slice(v),
        ArrayData::F32(v) => widen(out, v, f64::from),
        ArrayData::I8(v) => widen(out, v, f64::from),
        ArrayData::I16(v) => widen(out, v, f64::from),
        ArrayData::I32(v) => widen(out, v, f64::from),
        ArrayData::U8(v) => widen(out, v, f64::from),
        ArrayData::U16(v) => widen(out, v, f64::from),
        ArrayData::U32(v) => widen(out, v, f64::from),
        ArrayData::I64(v) => {
            widen(out, v, |x| x as f64);
            return v.iter().all(|x| x.unsigned_abs() <= EXACT);
        }
        ArrayData::U64(v) => {
            widen(out, v, |x| x as f64);
            return v.iter().all(|&x| x <= EXACT);
        }
        ArrayData::Bool(v) => widen(out, v, |x| f64::from(u8::from(x))),
        ArrayData::Str(_) => {}
    }
    true
}

/// Appends `v` as float64, room made once and filled in one loop: a value at a time, the
/// builder's checks and growth were most of the cost of NanoVer's float32 positions
/// (docs/performance.md, "Lake, seventh pass").
fn widen<T: Copy>(out: &mut Float64Builder, v: &[T], to_f64: impl Fn(T) -> f64) {
    let start = out.len();
    out.append_value_n(0.0, v.len());
    for (slot, &x) in out.values_slice_mut()[start..].iter_mut().zip(v) {
        *slot = to_f64(x);
    }
}

/// Appends the elements packed at `at` in `block` as float64, in the model's (row-major)
/// order: what [`extend_floats`] appends of the array [`Packed::value`] gives, without
/// making it. False when a 64-bit integer did not fit exactly.
fn extend_packed(out: &mut Float64Builder, packed: &Packed, block: &[u8], at: usize) -> bool {
    let n = packed.count();
    let start = out.len();
    out.append_value_n(0.0, n);
    let slots = &mut out.values_slice_mut()[start..];
    // Only a matrix stored column by column is laid out otherwise than the model's order.
    let reordered = packed.column_major && packed.shape.len() == 2;
    let place = |i: usize| if reordered { packed.model_index(i) } else { i };
    macro_rules! elements {
        ($t:ty, $n:literal, $to_f64:expr) => {{
            let mut exact = true;
            let mut put = |i: usize, bytes: [u8; $n]| {
                let (v, fits) = $to_f64(<$t>::from_le_bytes(bytes));
                exact &= fits;
                slots[place(i)] = v;
            };
            let end = n.checked_mul($n).and_then(|len| at.checked_add(len));
            match end.and_then(|end| block.get(at..end)) {
                Some(bytes) => (bytes.chunks_exact($n).enumerate())
                    .for_each(|(i, b)| put(i, le_bytes::<$n>(b, 0))),
                // Past the block's end (which a frame source checked): zeros, as `le_bytes`.
                None => {
                    (0..n).for_each(|i| put(i, le_bytes::<$n>(block, at.saturating_add(i * $n))))
                }
            }
            exact
        }};
    }
    let whole = |x: f64| (x, true);
    match packed.dtype {
        DType::F64 => elements!(f64, 8, whole),
        DType::F32 => elements!(f32, 4, |x| (f64::from(x), true)),
        DType::I64 => elements!(i64, 8, |x: i64| (x as f64, x.unsigned_abs() <= EXACT)),
        DType::U64 => elements!(u64, 8, |x: u64| (x as f64, x <= EXACT)),
        DType::I32 => elements!(i32, 4, |x| (f64::from(x), true)),
        DType::U32 => elements!(u32, 4, |x| (f64::from(x), true)),
        DType::I16 => elements!(i16, 2, |x| (f64::from(x), true)),
        DType::U16 => elements!(u16, 2, |x| (f64::from(x), true)),
        DType::I8 => elements!(i8, 1, |x| (f64::from(x), true)),
        DType::U8 => elements!(u8, 1, |x| (f64::from(x), true)),
        DType::Bool => elements!(u8, 1, |x: u8| (f64::from(u8::from(x != 0)), true)),
        DType::Str => true,
    }
}
