//! One field column of the table: its kind (from the field spec, else the first value), the
//! rows of the batch being filled, and how a value goes in (exactly, widened, or lost).

use std::borrow::Borrow;
use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, StringBuilder};
use arrow_array::types::*;
use arrow_array::{ArrayRef, BooleanArray, ListArray, PrimitiveArray, StringArray};
use arrow_buffer::{BooleanBuffer, NullBuffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, Field};

use super::json;
use crate::formats::frames::{le_bytes, Packed};
use crate::model::{ArrayData, DType, FieldSpec, Value};

/// Field metadata key: the declared shape of a list column's values (`[21,3]`), which are
/// stored flattened row-major.
pub const SHAPE_KEY: &str = "simrec.shape";
/// Field metadata key: the unit the source declared.
pub const UNIT_KEY: &str = "simrec.unit";
/// Field metadata key: `json` on a column of JSON text (maps and lists).
pub const ENCODING_KEY: &str = "simrec.encoding";

/// What a column holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// One value of this type per row (strings as UTF-8).
    Scalar(DType),
    /// A typed array per row, flattened row-major; its declared shape.
    List(DType, Vec<usize>),
    /// Maps and lists as JSON text.
    Json,
    /// Bytes.
    Binary,
}

impl Kind {
    /// The kind a declared field fixes, when it declares type and shape.
    pub fn of_spec(spec: &FieldSpec) -> Option<Kind> {
        match (spec.dtype, &spec.shape) {
            (Some(d), Some(shape)) if shape.is_empty() => Some(Kind::Scalar(d)),
            (Some(d), Some(shape)) => Some(Kind::List(d, shape.clone())),
            _ => None,
        }
    }

    /// The kind a first value fixes; `None` for a null or a removal (they say nothing).
    pub fn of_value(value: &Value) -> Option<Kind> {
        Some(match value {
            Value::Bool(_) => Kind::Scalar(DType::Bool),
            Value::Int(_) => Kind::Scalar(DType::I64),
            Value::UInt(_) => Kind::Scalar(DType::U64),
            Value::Float(_) => Kind::Scalar(DType::F64),
            Value::F32(_) => Kind::Scalar(DType::F32),
            Value::Str(_) => Kind::Scalar(DType::Str),
            Value::Array(a) => Kind::List(a.dtype(), a.checked_shape()),
            Value::List(_) | Value::Map(_) | Value::Dict(_) => Kind::Json,
            Value::Bytes(_) | Value::Ext { .. } => Kind::Binary,
            Value::Null | Value::Removed => return None,
        })
    }

    /// Whether a column of this kind holds values of `other` exactly: the same kind (a
    /// list's declared shape may differ), or float32 and float64 (the column becomes
    /// float64 if it can, else keeps the float64 values that are float32 exactly).
    pub fn holds(&self, other: &Kind) -> bool {
        let float = |d: &DType| matches!(d, DType::F32 | DType::F64);
        match (self, other) {
            (Kind::List(a, _), Kind::List(b, _)) => a == b || (float(a) && float(b)),
            (Kind::Scalar(a), Kind::Scalar(b)) => a == b || (float(a) && float(b)),
            _ => self == other,
        }
    }

    /// Whether a declared column of this kind takes values of `other`, converted where
    /// they fit: integers into any integer or boolean column (an Icarus `int32 (boolean)`
    /// read as integers), besides what it [`holds`](Kind::holds).
    pub fn accepts(&self, other: &Kind) -> bool {
        let int = |d: &DType| !matches!(d, DType::F32 | DType::F64 | DType::Str);
        match (self, other) {
            (Kind::Scalar(a), Kind::Scalar(b)) if int(a) && int(b) && *b != DType::Bool => true,
            _ => self.holds(other),
        }
    }

    /// A short name of the kind, for a column name that tells two kinds of one key apart.
    pub fn short_name(&self) -> &'static str {
        match self {
            Kind::Scalar(d) | Kind::List(d, _) => d.name(),
            Kind::Json => "json",
            Kind::Binary => "binary",
        }
    }
}

pub fn arrow_type(d: DType) -> DataType {
    match d {
        DType::Bool => DataType::Boolean,
        DType::U8 => DataType::UInt8,
        DType::U16 => DataType::UInt16,
        DType::U32 => DataType::UInt32,
        DType::U64 => DataType::UInt64,
        DType::I8 => DataType::Int8,
        DType::I16 => DataType::Int16,
        DType::I32 => DataType::Int32,
        DType::I64 => DataType::Int64,
        DType::F32 => DataType::Float32,
        DType::F64 => DataType::Float64,
        DType::Str => DataType::Utf8,
    }
}

/// How a value went into its column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    Exact,
    /// Kept exactly in a wider type (reported, exit 0).
    Widened(&'static str),
    /// Not kept: written as null (exit 3).
    Lost(&'static str),
    /// Written, but not all of it (exit 3).
    Kept(&'static str),
}

impl Fit {
    /// A loss for which the row still holds a value.
    fn keep_row(self) -> Fit {
        match self {
            Fit::Lost(why) => Fit::Kept(why),
            other => other,
        }
    }
}

const MISMATCH: &str = "value of another type than its column: written as null";

/// Rows of one batch of a column.
enum Store {
    /// Scalars (one element per row) or list elements, and per-row validity.
    Elements(ArrayData),
    Text(StringBuilder),
    Binary(BinaryBuilder),
}

pub struct Column {
    /// The name in the file (the key, or `channel.key` where the key's name was taken).
    pub name: String,
    /// The key records carry.
    pub key: String,
    pub kind: Kind,
    pub unit: Option<String>,
    /// Laid out from a field spec: every value of the key goes here, converted.
    pub declared: bool,
    store: Store,
    /// Which rows of an element column hold a value (text and binary builders keep their
    /// own).
    valid: NullBufferBuilder,
    /// List columns: where each row's elements start (and the end of the last).
    offsets: Vec<i32>,
    /// Rows of the batch written so far: a row without a value is written (as a null) only
    /// when a later row's value comes, or the batch is taken ([`Column::pad`]), not once
    /// per row.
    pub len: usize,
    /// Bytes buffered, roughly.
    pub bytes: usize,
}

impl Column {
    pub fn new(name: String, key: String, kind: Kind, unit: Option<String>) -> Column {
        let store = match &kind {
            Kind::Scalar(DType::Str) | Kind::Json => Store::Text(StringBuilder::new()),
            Kind::Binary => Store::Binary(BinaryBuilder::new()),
            Kind::Scalar(d) | Kind::List(d, _) => Store::Elements(ArrayData::empty(*d)),
        };
        Column {
            name,
            key,
            kind,
            unit,
            declared: false,
            store,
            valid: NullBufferBuilder::new(0),
            offsets: vec![0],
            len: 0,
            bytes: 0,
        }
    }

    /// The column's Arrow field, with its shape, unit and encoding in the field metadata.
    pub fn field(&self) -> Field {
        let mut meta = HashMap::new();
        if let Some(unit) = &self.unit {
            meta.insert(UNIT_KEY.to_string(), unit.clone());
        }
        let data_type = match &self.kind {
            Kind::Scalar(d) => arrow_type(*d),
            Kind::List(d, shape) => {
                meta.insert(SHAPE_KEY.to_string(), shape_text(shape));
                DataType::List(Arc::new(Field::new("item", arrow_type(*d), false)))
            }
            Kind::Json => {
                meta.insert(ENCODING_KEY.to_string(), "json".to_string());
                DataType::Utf8
            }
            Kind::Binary => DataType::Binary,
        };
        Field::new(&self.name, data_type, true).with_metadata(meta)
    }

    /// The leaf's path in the Parquet schema (`name`, or `name.list.item` for a list).
    pub fn leaf_path(&self) -> Vec<String> {
        match self.kind {
            Kind::List(..) => vec![self.name.clone(), "list".into(), "item".into()],
            _ => vec![self.name.clone()],
        }
    }

    /// The first of the batch's float elements (at most `max` bytes, little-endian), for a
    /// trial compression; `None` for a column of another type.
    pub fn float_sample(&self, max: usize) -> Option<Vec<u8>> {
        match &self.store {
            Store::Elements(ArrayData::F64(v)) => Some(
                v.iter()
                    .take(max / 8)
                    .flat_map(|x| x.to_le_bytes())
                    .collect(),
            ),
            Store::Elements(ArrayData::F32(v)) => Some(
                v.iter()
                    .take(max / 4)
                    .flat_map(|x| x.to_le_bytes())
                    .collect(),
            ),
            _ => None,
        }
    }

    fn is_list(&self) -> bool {
        matches!(self.kind, Kind::List(..))
    }

    /// Writes a null in the next row.
    pub fn push_null(&mut self) {
        self.nulls(1);
    }

    /// Writes nulls up to row `rows` (the rows before it that have no value).
    pub fn pad(&mut self, rows: usize) {
        if self.len < rows {
            self.nulls(rows - self.len);
        }
    }

    fn nulls(&mut self, n: usize) {
        let list = self.is_list();
        match &mut self.store {
            Store::Text(b) => b.append_nulls(n),
            Store::Binary(b) => b.append_nulls(n),
            Store::Elements(data) => {
                if !list {
                    extend_default(data, n);
                }
                self.valid.append_n_nulls(n);
            }
        }
        if list {
            let end = *self.offsets.last().unwrap_or(&0);
            self.offsets.resize(self.offsets.len() + n, end);
        }
        self.len += n;
    }

    /// Appends the array packed at `offset` in `block` as this row's, in the model's
    /// (row-major) order: a list column of its element type, which the caller checked
    /// ([`Column::takes_packed`]).
    pub fn push_packed_array(&mut self, packed: &Packed, block: &[u8], offset: usize) {
        let Store::Elements(data) = &mut self.store else {
            return;
        };
        let n = packed.count();
        let size = packed.element_size();
        let start = data.len();
        extend_default(data, n);
        for i in 0..n {
            set_element(
                data,
                start + packed.model_index(i),
                block,
                offset + i * size,
            );
        }
        self.offsets
            .push(i32::try_from(data.len()).unwrap_or(i32::MAX));
        self.bytes += n * 8;
        self.valid.append_non_null();
        self.len += 1;
    }

    /// Appends `n` rows to a scalar column at once (the frame path): row `at[k] - first`
    /// of them holds the element packed at `offsets[at[k]]` in `block`, the others are
    /// null. `at` is ascending, every `at[k] - first` below `n`.
    pub fn push_packed_rows(
        &mut self,
        n: usize,
        first: usize,
        at: &[usize],
        offsets: &[usize],
        block: &[u8],
    ) {
        let Store::Elements(data) = &mut self.store else {
            return;
        };
        let start = data.len();
        extend_default(data, n);
        let rows = at.iter().map(|&r| (start + r - first, offsets[r]));
        fn fill<T, const N: usize>(
            v: &mut [T],
            rows: impl Iterator<Item = (usize, usize)>,
            block: &[u8],
            read: fn([u8; N]) -> T,
        ) {
            for (i, o) in rows {
                if let Some(x) = v.get_mut(i) {
                    *x = read(le_bytes(block, o));
                }
            }
        }
        match data {
            ArrayData::F64(v) => fill(v, rows, block, f64::from_le_bytes),
            ArrayData::F32(v) => fill(v, rows, block, f32::from_le_bytes),
            ArrayData::I64(v) => fill(v, rows, block, i64::from_le_bytes),
            ArrayData::I32(v) => fill(v, rows, block, i32::from_le_bytes),
            ArrayData::Bool(v) => fill(v, rows, block, |[b]: [u8; 1]| b != 0),
            // Not packed ([`Column::takes_packed`]).
            _ => {}
        }
        if at.len() == n {
            self.valid.append_n_non_nulls(n);
        } else {
            let bit = self.valid.len();
            self.valid.append_n_nulls(n);
            if let Some(bits) = self.valid.as_slice_mut() {
                for &r in at {
                    let i = bit + r - first;
                    if let Some(b) = bits.get_mut(i >> 3) {
                        *b |= 1 << (i & 7);
                    }
                }
            }
        }
        self.bytes += 8 * at.len();
        self.len += n;
    }

    /// Whether values packed as `packed` go into this column exactly as their model values
    /// would through [`Column::push`] ([`Column::push_packed_rows`],
    /// [`Column::push_packed_array`]): a scalar column of their element type, or a list
    /// column of it for an array (of numbers).
    pub fn takes_packed(&self, packed: &Packed) -> bool {
        let numeric = matches!(
            packed.dtype,
            DType::F64 | DType::F32 | DType::I32 | DType::I64 | DType::Bool
        );
        let list = !packed.shape.is_empty();
        numeric
            && match &self.kind {
                Kind::Scalar(d) => !list && *d == packed.dtype,
                Kind::List(d, _) => list && *d == packed.dtype && packed.dtype != DType::Bool,
                _ => false,
            }
    }

    /// Appends `value` as this row's; a value the column cannot hold is a null.
    pub fn push(&mut self, value: &Value, lost: &mut Vec<(String, &'static str)>) -> Fit {
        if matches!(value, Value::Null | Value::Removed) {
            self.push_null();
            return Fit::Exact;
        }
        let fit = match (&mut self.store, &self.kind) {
            (Store::Text(b), Kind::Json) => {
                let mut text = Vec::new();
                json::write(&mut text, &self.key, value, lost);
                self.bytes += text.len();
                b.append_value(String::from_utf8_lossy(&text));
                Fit::Exact
            }
            (Store::Text(b), _) => match value {
                Value::Str(s) => {
                    self.bytes += s.len();
                    b.append_value(s);
                    Fit::Exact
                }
                _ => Fit::Lost(MISMATCH),
            },
            (Store::Binary(b), _) => match value {
                Value::Bytes(bytes) => {
                    self.bytes += bytes.len();
                    b.append_value(bytes);
                    Fit::Exact
                }
                Value::Ext { bytes, .. } => {
                    self.bytes += bytes.len();
                    b.append_value(bytes);
                    Fit::Lost("msgpack ext written as its bytes: its type id is not kept")
                        .keep_row()
                }
                _ => Fit::Lost(MISMATCH),
            },
            (Store::Elements(data), Kind::List(..)) => {
                let (fit, n) = match value {
                    Value::Array(a) => {
                        let fit = if data.extend_from(&a.data) {
                            Fit::Exact
                        } else {
                            let n = a.data.len();
                            extend_converting(
                                data,
                                (0..n).map(|i| element(&a.data, i).unwrap_or(Value::Null)),
                            )
                        };
                        (fit, a.len())
                    }
                    // A list of scalars, in a column of the type its family gives the key (a
                    // `.nanover.zip`'s msgpack list of names).
                    Value::List(items) => (extend_converting(data, items.iter()), items.len()),
                    _ => (Fit::Lost(MISMATCH), 0),
                };
                if !matches!(fit, Fit::Lost(_)) {
                    self.bytes += n * 8;
                    self.offsets
                        .push(i32::try_from(data.len()).unwrap_or(i32::MAX));
                    self.valid.append_non_null();
                }
                fit
            }
            (Store::Elements(data), _) => {
                let fit = push_scalar(data, value);
                if !matches!(fit, Fit::Lost(_)) {
                    self.bytes += 8;
                    self.valid.append_non_null();
                }
                fit
            }
        };
        match fit {
            Fit::Lost(_) => self.push_null(),
            Fit::Kept(why) => {
                self.len += 1;
                return Fit::Lost(why);
            }
            _ => self.len += 1,
        }
        fit
    }

    /// Before the layout is final: a float32 column that meets a float64 value becomes a
    /// float64 column (a channel whose records mix single and double precision, as 3es
    /// shapes do), so every value is kept.
    pub fn widen_for(&mut self, value: &Value) {
        let wide = match value {
            Value::Float(_) => matches!(self.kind, Kind::Scalar(DType::F32)),
            Value::Array(a) => {
                a.dtype() == DType::F64 && matches!(self.kind, Kind::List(DType::F32, _))
            }
            _ => false,
        };
        if !wide {
            return;
        }
        if let Store::Elements(ArrayData::F32(v)) = &self.store {
            self.store = Store::Elements(ArrayData::F64(v.iter().map(|&x| x.into()).collect()));
        }
        self.kind = match &self.kind {
            Kind::List(_, shape) => Kind::List(DType::F64, shape.clone()),
            _ => Kind::Scalar(DType::F64),
        };
    }

    /// The batch of `rows` rows as an Arrow array; the column starts the next batch empty,
    /// with room for as many values when `reserve` (the frame path: filled a run of rows at
    /// a time, not grown a doubling at a time; the record path grows them as it goes, so the
    /// memory the last batch let go is there to take).
    pub fn take(&mut self, rows: usize, reserve: bool) -> Result<ArrayRef, ArrowError> {
        self.pad(rows);
        self.len = 0;
        self.bytes = 0;
        let nulls = self.valid.finish();
        self.valid = NullBufferBuilder::new(rows);
        Ok(match &mut self.store {
            Store::Text(b) => Arc::new(b.finish()) as ArrayRef,
            Store::Binary(b) => Arc::new(b.finish()),
            Store::Elements(data) => {
                if let Kind::List(d, _) = &self.kind {
                    let values = elements(data, None, reserve);
                    let mut next = Vec::with_capacity(self.offsets.len());
                    next.push(0);
                    let offsets = std::mem::replace(&mut self.offsets, next);
                    let item = Arc::new(Field::new("item", arrow_type(*d), false));
                    Arc::new(ListArray::try_new(
                        item,
                        OffsetBuffer::new(ScalarBuffer::from(offsets)),
                        values,
                        nulls,
                    )?)
                } else {
                    elements(data, nulls, reserve)
                }
            }
        })
    }
}

/// `[21,3]`.
pub fn shape_text(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    format!("[{}]", dims.join(","))
}

fn reserve(data: &mut ArrayData, n: usize) {
    match data {
        ArrayData::Bool(v) => v.reserve(n),
        ArrayData::U8(v) => v.reserve(n),
        ArrayData::U16(v) => v.reserve(n),
        ArrayData::U32(v) => v.reserve(n),
        ArrayData::U64(v) => v.reserve(n),
        ArrayData::I8(v) => v.reserve(n),
        ArrayData::I16(v) => v.reserve(n),
        ArrayData::I32(v) => v.reserve(n),
        ArrayData::I64(v) => v.reserve(n),
        ArrayData::F32(v) => v.reserve(n),
        ArrayData::F64(v) => v.reserve(n),
        ArrayData::Str(v) => v.reserve(n),
    }
}

/// Appends `n` zeros (the values under nulls).
fn extend_default(data: &mut ArrayData, n: usize) {
    fn zeros<T: Default + Clone>(v: &mut Vec<T>, n: usize) {
        v.resize(v.len() + n, T::default());
    }
    match data {
        ArrayData::Bool(v) => zeros(v, n),
        ArrayData::U8(v) => zeros(v, n),
        ArrayData::U16(v) => zeros(v, n),
        ArrayData::U32(v) => zeros(v, n),
        ArrayData::U64(v) => zeros(v, n),
        ArrayData::I8(v) => zeros(v, n),
        ArrayData::I16(v) => zeros(v, n),
        ArrayData::I32(v) => zeros(v, n),
        ArrayData::I64(v) => zeros(v, n),
        ArrayData::F32(v) => zeros(v, n),
        ArrayData::F64(v) => zeros(v, n),
        ArrayData::Str(v) => zeros(v, n),
    }
}

/// Sets element `i` of `data` to the number packed at `at` in `block`.
fn set_element(data: &mut ArrayData, i: usize, block: &[u8], at: usize) {
    match data {
        ArrayData::F64(v) => {
            if let Some(x) = v.get_mut(i) {
                *x = f64::from_le_bytes(le_bytes(block, at));
            }
        }
        ArrayData::F32(v) => {
            if let Some(x) = v.get_mut(i) {
                *x = f32::from_le_bytes(le_bytes(block, at));
            }
        }
        ArrayData::I32(v) => {
            if let Some(x) = v.get_mut(i) {
                *x = i32::from_le_bytes(le_bytes(block, at));
            }
        }
        ArrayData::I64(v) => {
            if let Some(x) = v.get_mut(i) {
                *x = i64::from_le_bytes(le_bytes(block, at));
            }
        }
        // Not packed ([`Column::takes_packed`]).
        _ => {}
    }
}

/// Appends the elements of an array (or list) to a list column of another dtype, each
/// converted as [`push_scalar`] would; nothing is appended unless every element fits.
fn extend_converting<V: Borrow<Value>>(dst: &mut ArrayData, src: impl Iterator<Item = V>) -> Fit {
    let before = dst.len();
    let mut fit = Fit::Exact;
    for element in src {
        match push_scalar(dst, element.borrow()) {
            Fit::Exact => {}
            Fit::Widened(why) => fit = Fit::Widened(why),
            lost => {
                truncate(dst, before);
                return lost;
            }
        }
    }
    fit
}

fn element(data: &ArrayData, i: usize) -> Option<Value> {
    Some(match data {
        ArrayData::Bool(v) => Value::Bool(*v.get(i)?),
        ArrayData::U8(v) => Value::UInt((*v.get(i)?).into()),
        ArrayData::U16(v) => Value::UInt((*v.get(i)?).into()),
        ArrayData::U32(v) => Value::UInt((*v.get(i)?).into()),
        ArrayData::U64(v) => Value::UInt(*v.get(i)?),
        ArrayData::I8(v) => Value::Int((*v.get(i)?).into()),
        ArrayData::I16(v) => Value::Int((*v.get(i)?).into()),
        ArrayData::I32(v) => Value::Int((*v.get(i)?).into()),
        ArrayData::I64(v) => Value::Int(*v.get(i)?),
        ArrayData::F32(v) => Value::F32(*v.get(i)?),
        ArrayData::F64(v) => Value::Float(*v.get(i)?),
        ArrayData::Str(v) => Value::Str(v.get(i)?.clone()),
    })
}

fn truncate(data: &mut ArrayData, n: usize) {
    match data {
        ArrayData::Bool(v) => v.truncate(n),
        ArrayData::U8(v) => v.truncate(n),
        ArrayData::U16(v) => v.truncate(n),
        ArrayData::U32(v) => v.truncate(n),
        ArrayData::U64(v) => v.truncate(n),
        ArrayData::I8(v) => v.truncate(n),
        ArrayData::I16(v) => v.truncate(n),
        ArrayData::I32(v) => v.truncate(n),
        ArrayData::I64(v) => v.truncate(n),
        ArrayData::F32(v) => v.truncate(n),
        ArrayData::F64(v) => v.truncate(n),
        ArrayData::Str(v) => v.truncate(n),
    }
}

/// A scalar value, or a one-element array of no dimensions.
enum Scalar<'a> {
    Bool(bool),
    I(i64),
    U(u64),
    F(f64),
    F32(f32),
    Str(&'a str),
}

fn scalar(value: &Value) -> Option<Scalar<'_>> {
    Some(match value {
        Value::Bool(b) => Scalar::Bool(*b),
        Value::Int(i) => Scalar::I(*i),
        Value::UInt(u) => Scalar::U(*u),
        Value::Float(x) => Scalar::F(*x),
        Value::F32(x) => Scalar::F32(*x),
        Value::Str(s) => Scalar::Str(s),
        Value::Array(a) if a.len() == 1 && a.checked_shape().is_empty() => match &a.data {
            ArrayData::Bool(v) => Scalar::Bool(v[0]),
            ArrayData::U8(v) => Scalar::U(v[0].into()),
            ArrayData::U16(v) => Scalar::U(v[0].into()),
            ArrayData::U32(v) => Scalar::U(v[0].into()),
            ArrayData::U64(v) => Scalar::U(v[0]),
            ArrayData::I8(v) => Scalar::I(v[0].into()),
            ArrayData::I16(v) => Scalar::I(v[0].into()),
            ArrayData::I32(v) => Scalar::I(v[0].into()),
            ArrayData::I64(v) => Scalar::I(v[0]),
            ArrayData::F32(v) => Scalar::F32(v[0]),
            ArrayData::F64(v) => Scalar::F(v[0]),
            ArrayData::Str(v) => Scalar::Str(&v[0]),
        },
        _ => return None,
    })
}

const INT_AS_DOUBLE: &str = "integer written as float64";
const INT_AS_FLOAT: &str = "integer written as float32";
const F32_AS_DOUBLE: &str = "float32 written as float64";
const NUMBER_AS_TEXT: &str = "number written as its text";

/// `x` as an integer, when it is one (and within the range of `i64`).
fn whole(x: f64) -> Option<i64> {
    // 2^63 itself is out of range; every float below it is a whole `i64`.
    (x.fract() == 0.0 && x >= -(2f64.powi(63)) && x < 2f64.powi(63)).then_some(x as i64)
}

/// A number as text: a whole number without a fraction (`1`, not `1.0`), else the shortest
/// text that reads back to it.
fn number_text(x: f64) -> String {
    match whole(x) {
        Some(i) if i.unsigned_abs() <= 1 << 53 => i.to_string(),
        _ => ryu::Buffer::new().format(x).to_string(),
    }
}

/// Appends a scalar to a scalar column of another or the same type: exactly, widened, or
/// not at all (`Lost`, nothing appended).
fn push_scalar(data: &mut ArrayData, value: &Value) -> Fit {
    let Some(s) = scalar(value) else {
        return Fit::Lost(MISMATCH);
    };
    macro_rules! int {
        ($v:expr, $t:ty) => {{
            let x = match s {
                Scalar::I(i) => <$t>::try_from(i).ok(),
                Scalar::U(u) => <$t>::try_from(u).ok(),
                // A whole number a format stores as a double (a NanoVer `.traj`'s counts).
                Scalar::F(x) => whole(x).and_then(|i| <$t>::try_from(i).ok()),
                Scalar::F32(x) => whole(x.into()).and_then(|i| <$t>::try_from(i).ok()),
                _ => None,
            };
            match x {
                Some(x) => {
                    $v.push(x);
                    Fit::Exact
                }
                None => Fit::Lost(
                    "integer out of its column's range, or not an integer: written as null",
                ),
            }
        }};
    }
    match data {
        ArrayData::Bool(v) => match s {
            Scalar::Bool(b) => {
                v.push(b);
                Fit::Exact
            }
            // A boolean stored as an integer (an Icarus `int32 (boolean)`).
            Scalar::I(i @ (0 | 1)) => {
                v.push(i == 1);
                Fit::Exact
            }
            Scalar::U(u @ (0 | 1)) => {
                v.push(u == 1);
                Fit::Exact
            }
            _ => Fit::Lost(MISMATCH),
        },
        ArrayData::Str(v) => match s {
            Scalar::Str(t) => {
                v.push(t.to_string());
                Fit::Exact
            }
            // Old NanoVer recordings' numeric residue ids, in the family's list of strings.
            Scalar::I(i) => {
                v.push(i.to_string());
                Fit::Widened(NUMBER_AS_TEXT)
            }
            Scalar::U(u) => {
                v.push(u.to_string());
                Fit::Widened(NUMBER_AS_TEXT)
            }
            Scalar::F(x) => {
                v.push(number_text(x));
                Fit::Widened(NUMBER_AS_TEXT)
            }
            Scalar::F32(x) => {
                v.push(match whole(x.into()) {
                    Some(i) => i.to_string(),
                    None => ryu::Buffer::new().format(x).to_string(),
                });
                Fit::Widened(NUMBER_AS_TEXT)
            }
            Scalar::Bool(_) => Fit::Lost(MISMATCH),
        },
        ArrayData::U8(v) => int!(v, u8),
        ArrayData::U16(v) => int!(v, u16),
        ArrayData::U32(v) => int!(v, u32),
        ArrayData::U64(v) => int!(v, u64),
        ArrayData::I8(v) => int!(v, i8),
        ArrayData::I16(v) => int!(v, i16),
        ArrayData::I32(v) => int!(v, i32),
        ArrayData::I64(v) => int!(v, i64),
        ArrayData::F64(v) => match s {
            Scalar::F(x) => {
                v.push(x);
                Fit::Exact
            }
            Scalar::F32(x) => {
                v.push(x.into());
                Fit::Widened(F32_AS_DOUBLE)
            }
            Scalar::I(i) if i.unsigned_abs() <= 1 << 53 => {
                v.push(i as f64);
                Fit::Widened(INT_AS_DOUBLE)
            }
            Scalar::U(u) if u <= 1 << 53 => {
                v.push(u as f64);
                Fit::Widened(INT_AS_DOUBLE)
            }
            _ => Fit::Lost(MISMATCH),
        },
        ArrayData::F32(v) => match s {
            Scalar::F32(x) => {
                v.push(x);
                Fit::Exact
            }
            // Integers a float32 holds exactly (a `.nanover.zip`'s uint8 bond orders).
            Scalar::I(i) if i.unsigned_abs() <= 1 << 24 => {
                v.push(i as f32);
                Fit::Widened(INT_AS_FLOAT)
            }
            Scalar::U(u) if u <= 1 << 24 => {
                v.push(u as f32);
                Fit::Widened(INT_AS_FLOAT)
            }
            // A double that is a float32 exactly (or NaN) keeps its value.
            Scalar::F(x) if x.is_nan() || f64::from(x as f32) == x => {
                v.push(x as f32);
                Fit::Exact
            }
            _ => Fit::Lost("value not exact as float32, its column's type: written as null"),
        },
    }
}

/// The buffered elements as an Arrow array; `data` starts again empty.
fn elements(data: &mut ArrayData, nulls: Option<NullBuffer>, reserve_next: bool) -> ArrayRef {
    fn prim<T: ArrowPrimitiveType>(v: Vec<T::Native>, n: Option<NullBuffer>) -> ArrayRef {
        Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(v), n))
    }
    let dtype = data.dtype();
    let mut next = ArrayData::empty(dtype);
    if reserve_next {
        reserve(&mut next, data.len());
    }
    let data = std::mem::replace(data, next);
    match data {
        ArrayData::U8(v) => prim::<UInt8Type>(v, nulls),
        ArrayData::U16(v) => prim::<UInt16Type>(v, nulls),
        ArrayData::U32(v) => prim::<UInt32Type>(v, nulls),
        ArrayData::U64(v) => prim::<UInt64Type>(v, nulls),
        ArrayData::I8(v) => prim::<Int8Type>(v, nulls),
        ArrayData::I16(v) => prim::<Int16Type>(v, nulls),
        ArrayData::I32(v) => prim::<Int32Type>(v, nulls),
        ArrayData::I64(v) => prim::<Int64Type>(v, nulls),
        ArrayData::F32(v) => prim::<Float32Type>(v, nulls),
        ArrayData::F64(v) => prim::<Float64Type>(v, nulls),
        ArrayData::Bool(v) => Arc::new(BooleanArray::new(BooleanBuffer::from(v), nulls)),
        ArrayData::Str(v) => Arc::new(StringArray::new(
            OffsetBuffer::from_lengths(v.iter().map(String::len)),
            v.concat().into_bytes().into(),
            nulls,
        )),
    }
}
