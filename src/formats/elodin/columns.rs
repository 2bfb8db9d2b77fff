//! Arrow columns to typed model arrays, and column types checked against metadata.
//!
//! A component column is a primitive column (scalar), a `FixedSizeList` (what Elodin
//! writes, through the embedded Arrow schema) or a variable `List` (the same file read
//! without its Arrow schema); every list must hold prod(shape) elements.

use arrow_array::types::*;
use arrow_array::{
    Array as ArrowArray, ArrayRef, BooleanArray, FixedSizeListArray, LargeListArray, ListArray,
    PrimitiveArray,
};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use arrow_schema::DataType;

use super::metadata::{Component, Primitive};
use crate::model::{Array, ArrayData, Value};

/// How a component's values are laid out in its column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Scalar,
    /// `FixedSizeList` of this many elements.
    Fixed(usize),
    /// Variable `List` (or `LargeList`): each row's length is checked.
    List,
}

/// The Arrow element type of a primitive.
pub fn arrow_type(p: Primitive) -> DataType {
    match p {
        Primitive::U8 => DataType::UInt8,
        Primitive::U16 => DataType::UInt16,
        Primitive::U32 => DataType::UInt32,
        Primitive::U64 => DataType::UInt64,
        Primitive::I8 => DataType::Int8,
        Primitive::I16 => DataType::Int16,
        Primitive::I32 => DataType::Int32,
        Primitive::I64 => DataType::Int64,
        Primitive::Bool => DataType::Boolean,
        Primitive::F32 => DataType::Float32,
        Primitive::F64 => DataType::Float64,
    }
}

/// A column type that does not match the component: (code, message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mismatch {
    Type(String),
    Shape(String),
}

/// Checks a column's Arrow type against a component's declared type and shape.
pub fn check_type(dt: &DataType, c: &Component) -> Result<Layout, Mismatch> {
    let want = arrow_type(c.primitive);
    let scalar = c.shape.is_empty();
    let (layout, item) = match dt {
        DataType::FixedSizeList(f, n) => (Layout::Fixed(*n as usize), f.data_type()),
        DataType::List(f) | DataType::LargeList(f) => (Layout::List, f.data_type()),
        other => (Layout::Scalar, other),
    };
    if *item != want {
        return Err(Mismatch::Type(format!(
            "declared {} ({want}) but the column holds {item}",
            c.type_text()
        )));
    }
    match layout {
        Layout::Scalar if !scalar => Err(Mismatch::Shape(format!(
            "declared {} but the column holds scalars",
            c.type_text()
        ))),
        Layout::Fixed(_) | Layout::List if scalar => Err(Mismatch::Shape(format!(
            "declared a scalar {} but the column holds lists",
            c.type_text()
        ))),
        Layout::Fixed(n) if n != c.elements => Err(Mismatch::Shape(format!(
            "declared {} ({} elements) but the column holds lists of {n}",
            c.type_text(),
            c.elements
        ))),
        l => Ok(l),
    }
}

/// Element values of a column (the list child for tensors), typed.
#[derive(Debug, Clone)]
enum Elems {
    U8(ScalarBuffer<u8>),
    U16(ScalarBuffer<u16>),
    U32(ScalarBuffer<u32>),
    U64(ScalarBuffer<u64>),
    I8(ScalarBuffer<i8>),
    I16(ScalarBuffer<i16>),
    I32(ScalarBuffer<i32>),
    I64(ScalarBuffer<i64>),
    F32(ScalarBuffer<f32>),
    F64(ScalarBuffer<f64>),
    Bool(BooleanArray),
}

fn values<T: ArrowPrimitiveType>(a: &ArrayRef) -> Option<ScalarBuffer<T::Native>> {
    a.as_any()
        .downcast_ref::<PrimitiveArray<T>>()
        .map(|p| p.values().clone())
}

fn elems(a: &ArrayRef) -> Option<Elems> {
    Some(match a.data_type() {
        DataType::UInt8 => Elems::U8(values::<UInt8Type>(a)?),
        DataType::UInt16 => Elems::U16(values::<UInt16Type>(a)?),
        DataType::UInt32 => Elems::U32(values::<UInt32Type>(a)?),
        DataType::UInt64 => Elems::U64(values::<UInt64Type>(a)?),
        DataType::Int8 => Elems::I8(values::<Int8Type>(a)?),
        DataType::Int16 => Elems::I16(values::<Int16Type>(a)?),
        DataType::Int32 => Elems::I32(values::<Int32Type>(a)?),
        DataType::Int64 => Elems::I64(values::<Int64Type>(a)?),
        DataType::Float32 => Elems::F32(values::<Float32Type>(a)?),
        DataType::Float64 => Elems::F64(values::<Float64Type>(a)?),
        DataType::Boolean => Elems::Bool(a.as_any().downcast_ref::<BooleanArray>()?.clone()),
        _ => return None,
    })
}

#[derive(Debug, Clone)]
enum Offsets {
    Scalar,
    Fixed(usize),
    List(ScalarBuffer<i32>),
    LargeList(ScalarBuffer<i64>),
}

/// One column of one batch, ready to hand out rows.
#[derive(Debug, Clone)]
pub struct ColumnView {
    elems: Elems,
    offsets: Offsets,
    nulls: Option<NullBuffer>,
    item_nulls: Option<NullBuffer>,
    len: usize,
}

/// What is wrong with one row of a column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowProblem {
    Null,
    NullItem,
    /// A variable list with this many elements.
    Length(usize),
}

impl ColumnView {
    /// A view of `column`, or `None` when its type is not one simrec reads.
    pub fn new(column: &ArrayRef) -> Option<ColumnView> {
        let nulls = column.logical_nulls().filter(|n| n.null_count() > 0);
        let (child, offsets) = match column.data_type() {
            DataType::FixedSizeList(_, n) => {
                let l = column.as_any().downcast_ref::<FixedSizeListArray>()?;
                let n = usize::try_from(*n).ok()?;
                // A sliced FixedSizeList slices its values too: row 0 starts at element 0.
                let child = l.values().clone();
                (child, Offsets::Fixed(n))
            }
            DataType::List(_) => {
                let l = column.as_any().downcast_ref::<ListArray>()?;
                (
                    l.values().clone(),
                    Offsets::List(l.offsets().inner().clone()),
                )
            }
            DataType::LargeList(_) => {
                let l = column.as_any().downcast_ref::<LargeListArray>()?;
                (
                    l.values().clone(),
                    Offsets::LargeList(l.offsets().inner().clone()),
                )
            }
            _ => (column.clone(), Offsets::Scalar),
        };
        let item_nulls = match offsets {
            Offsets::Scalar => None,
            _ => child.logical_nulls().filter(|n| n.null_count() > 0),
        };
        Some(ColumnView {
            elems: elems(&child)?,
            offsets,
            nulls,
            item_nulls,
            len: column.len(),
        })
    }

    fn elems_len(&self) -> usize {
        match &self.elems {
            Elems::U8(v) => v.len(),
            Elems::U16(v) => v.len(),
            Elems::U32(v) => v.len(),
            Elems::U64(v) => v.len(),
            Elems::I8(v) => v.len(),
            Elems::I16(v) => v.len(),
            Elems::I32(v) => v.len(),
            Elems::I64(v) => v.len(),
            Elems::F32(v) => v.len(),
            Elems::F64(v) => v.len(),
            Elems::Bool(v) => v.len(),
        }
    }

    /// Element range `(start, len)` of `row`, checked: no null row, no null item, and
    /// (for variable lists) exactly `elements` items.
    pub fn range(&self, row: usize, elements: usize) -> Result<(usize, usize), RowProblem> {
        if row >= self.len || self.nulls.as_ref().is_some_and(|n| n.is_null(row)) {
            return Err(RowProblem::Null);
        }
        let (start, len) = match &self.offsets {
            Offsets::Scalar => (row, 1),
            Offsets::Fixed(n) => (row * n, *n),
            Offsets::List(o) => {
                let (a, b) = (o[row], o[row + 1]);
                (a.max(0) as usize, (b - a).max(0) as usize)
            }
            Offsets::LargeList(o) => {
                let (a, b) = (o[row], o[row + 1]);
                (a.max(0) as usize, (b - a).max(0) as usize)
            }
        };
        if len != elements {
            return Err(RowProblem::Length(len));
        }
        if start + len > self.elems_len() {
            return Err(RowProblem::Length(self.elems_len().saturating_sub(start)));
        }
        if let Some(n) = &self.item_nulls {
            if (start..start + len).any(|i| n.is_null(i)) {
                return Err(RowProblem::NullItem);
            }
        }
        Ok((start, len))
    }

    /// The elements `start..start+len` as a typed array of `shape`.
    pub fn array(&self, start: usize, len: usize, shape: &[usize]) -> Array {
        let r = start..start + len;
        let data = match &self.elems {
            Elems::U8(v) => ArrayData::U8(v[r].to_vec()),
            Elems::U16(v) => ArrayData::U16(v[r].to_vec()),
            Elems::U32(v) => ArrayData::U32(v[r].to_vec()),
            Elems::U64(v) => ArrayData::U64(v[r].to_vec()),
            Elems::I8(v) => ArrayData::I8(v[r].to_vec()),
            Elems::I16(v) => ArrayData::I16(v[r].to_vec()),
            Elems::I32(v) => ArrayData::I32(v[r].to_vec()),
            Elems::I64(v) => ArrayData::I64(v[r].to_vec()),
            Elems::F32(v) => ArrayData::F32(v[r].to_vec()),
            Elems::F64(v) => ArrayData::F64(v[r].to_vec()),
            Elems::Bool(v) => ArrayData::Bool(r.map(|i| v.value(i)).collect()),
        };
        Array {
            shape: shape.to_vec(),
            data,
        }
    }

    /// Writes the elements `start..start+len` with `shape` into `value`, reusing its
    /// buffers when it already holds an array of the same dtype (a recycled record).
    pub fn fill(&self, value: &mut Value, start: usize, len: usize, shape: &[usize]) {
        let Value::Array(a) = value else {
            *value = Value::Array(self.array(start, len, shape));
            return;
        };
        let r = start..start + len;
        match (&mut a.data, &self.elems) {
            (ArrayData::U8(d), Elems::U8(v)) => refill(d, &v[r]),
            (ArrayData::U16(d), Elems::U16(v)) => refill(d, &v[r]),
            (ArrayData::U32(d), Elems::U32(v)) => refill(d, &v[r]),
            (ArrayData::U64(d), Elems::U64(v)) => refill(d, &v[r]),
            (ArrayData::I8(d), Elems::I8(v)) => refill(d, &v[r]),
            (ArrayData::I16(d), Elems::I16(v)) => refill(d, &v[r]),
            (ArrayData::I32(d), Elems::I32(v)) => refill(d, &v[r]),
            (ArrayData::I64(d), Elems::I64(v)) => refill(d, &v[r]),
            (ArrayData::F32(d), Elems::F32(v)) => refill(d, &v[r]),
            (ArrayData::F64(d), Elems::F64(v)) => refill(d, &v[r]),
            (ArrayData::Bool(d), Elems::Bool(v)) => {
                d.clear();
                d.extend(r.map(|i| v.value(i)));
            }
            _ => {
                *value = Value::Array(self.array(start, len, shape));
                return;
            }
        }
        if a.shape != shape {
            a.shape.clear();
            a.shape.extend_from_slice(shape);
        }
    }

    /// How many rows are readable as they are (no null, items inside the values), each
    /// taken at its own length: the fuzzer's and damage sweeps' way of touching every row.
    pub fn readable_rows(&self) -> usize {
        (0..self.len)
            .filter(|&row| {
                let len = match &self.offsets {
                    Offsets::Scalar => 1,
                    Offsets::Fixed(n) => *n,
                    Offsets::List(o) => o
                        .get(row + 1)
                        .zip(o.get(row))
                        .map_or(0, |(b, a)| (b - a).max(0) as usize),
                    Offsets::LargeList(o) => o
                        .get(row + 1)
                        .zip(o.get(row))
                        .map_or(0, |(b, a)| (b - a).max(0) as usize),
                };
                self.range(row, len).is_ok()
            })
            .count()
    }

    /// Row `row` of a scalar integer column (`tick`, `entity_id`) as a u64: `Err` for a
    /// null, `Ok(None)` for a value that is not a u64.
    pub fn u64_row(&self, row: usize) -> Result<Option<u64>, RowProblem> {
        if let (Offsets::Scalar, None, Elems::U64(v)) = (&self.offsets, &self.nulls, &self.elems) {
            return v.get(row).map(|&x| Some(x)).ok_or(RowProblem::Null);
        }
        let (start, _) = self.range(row, 1)?;
        Ok(self.u64_at(start))
    }

    /// Element `i` as a u64, for integer columns (ticks, ids, asset handles).
    pub fn u64_at(&self, i: usize) -> Option<u64> {
        match &self.elems {
            Elems::U8(v) => v.get(i).map(|&x| u64::from(x)),
            Elems::U16(v) => v.get(i).map(|&x| u64::from(x)),
            Elems::U32(v) => v.get(i).map(|&x| u64::from(x)),
            Elems::U64(v) => v.get(i).copied(),
            Elems::I8(v) => v.get(i).and_then(|&x| u64::try_from(x).ok()),
            Elems::I16(v) => v.get(i).and_then(|&x| u64::try_from(x).ok()),
            Elems::I32(v) => v.get(i).and_then(|&x| u64::try_from(x).ok()),
            Elems::I64(v) => v.get(i).and_then(|&x| u64::try_from(x).ok()),
            _ => None,
        }
    }
}

fn refill<T: Copy>(dst: &mut Vec<T>, src: &[T]) {
    dst.clear();
    dst.extend_from_slice(src);
}
