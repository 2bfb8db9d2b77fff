//! One archetype's Parquet file as Elodin 0.10 reads it (spec §6): components sorted by
//! name, then `tick`, then `entity_id`; every field nullable with no nulls; tensors as
//! FixedSizeList with the Arrow schema embedded; ZSTD; data page v1. Rows are buffered
//! per batch and written in row groups of at most 262,144 rows or 128 MiB.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::types::*;
use arrow_array::{ArrayRef, BooleanArray, FixedSizeListArray, PrimitiveArray, RecordBatch};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{WriterProperties, WriterVersion};

use super::columns::arrow_type;
use super::metadata::Component;
use crate::formats::WriteError;
use crate::model::ArrayData;

pub const MAX_ROW_GROUP_ROWS: usize = 262_144;
pub const MAX_ROW_GROUP_BYTES: usize = 128 << 20;
/// Rows buffered before they are handed to the Parquet writer.
const BATCH_ROWS: usize = 16_384;

/// One value of a row.
pub enum Cell<'a> {
    /// Elements of exactly the component's dtype and count.
    Data(&'a ArrayData),
    U64(u64),
    F64(f64),
    /// No value: zeros of the component's type (the caller counts the loss).
    Zeros,
}

pub struct Table {
    pub name: String,
    pub components: Vec<Component>,
    path: PathBuf,
    schema: SchemaRef,
    writer: Option<ArrowWriter<File>>,
    ticks: Vec<u64>,
    entities: Vec<u64>,
    columns: Vec<ArrayData>,
    pub rows: u64,
}

fn io(path: &Path, e: impl std::fmt::Display) -> WriteError {
    WriteError::io(path, std::io::Error::other(e.to_string()))
}

fn extend(dst: &mut ArrayData, src: &ArrayData) -> bool {
    match (dst, src) {
        (ArrayData::U8(d), ArrayData::U8(s)) => d.extend_from_slice(s),
        (ArrayData::U16(d), ArrayData::U16(s)) => d.extend_from_slice(s),
        (ArrayData::U32(d), ArrayData::U32(s)) => d.extend_from_slice(s),
        (ArrayData::U64(d), ArrayData::U64(s)) => d.extend_from_slice(s),
        (ArrayData::I8(d), ArrayData::I8(s)) => d.extend_from_slice(s),
        (ArrayData::I16(d), ArrayData::I16(s)) => d.extend_from_slice(s),
        (ArrayData::I32(d), ArrayData::I32(s)) => d.extend_from_slice(s),
        (ArrayData::I64(d), ArrayData::I64(s)) => d.extend_from_slice(s),
        (ArrayData::F32(d), ArrayData::F32(s)) => d.extend_from_slice(s),
        (ArrayData::F64(d), ArrayData::F64(s)) => d.extend_from_slice(s),
        (ArrayData::Bool(d), ArrayData::Bool(s)) => d.extend_from_slice(s),
        _ => return false,
    }
    true
}

fn zeros(dst: &mut ArrayData, n: usize) {
    match dst {
        ArrayData::U8(d) => d.resize(d.len() + n, 0),
        ArrayData::U16(d) => d.resize(d.len() + n, 0),
        ArrayData::U32(d) => d.resize(d.len() + n, 0),
        ArrayData::U64(d) => d.resize(d.len() + n, 0),
        ArrayData::I8(d) => d.resize(d.len() + n, 0),
        ArrayData::I16(d) => d.resize(d.len() + n, 0),
        ArrayData::I32(d) => d.resize(d.len() + n, 0),
        ArrayData::I64(d) => d.resize(d.len() + n, 0),
        ArrayData::F32(d) => d.resize(d.len() + n, 0.0),
        ArrayData::F64(d) => d.resize(d.len() + n, 0.0),
        ArrayData::Bool(d) => d.resize(d.len() + n, false),
        ArrayData::Str(d) => d.resize(d.len() + n, String::new()),
    }
}

fn take(data: &mut ArrayData) -> ArrayRef {
    fn prim<T: ArrowPrimitiveType>(v: Vec<T::Native>) -> ArrayRef {
        Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(v), None))
    }
    let dtype = data.dtype();
    let data = std::mem::replace(data, ArrayData::empty(dtype));
    match data {
        ArrayData::U8(v) => prim::<UInt8Type>(v),
        ArrayData::U16(v) => prim::<UInt16Type>(v),
        ArrayData::U32(v) => prim::<UInt32Type>(v),
        ArrayData::U64(v) => prim::<UInt64Type>(v),
        ArrayData::I8(v) => prim::<Int8Type>(v),
        ArrayData::I16(v) => prim::<Int16Type>(v),
        ArrayData::I32(v) => prim::<Int32Type>(v),
        ArrayData::I64(v) => prim::<Int64Type>(v),
        ArrayData::F32(v) => prim::<Float32Type>(v),
        ArrayData::F64(v) => prim::<Float64Type>(v),
        ArrayData::Bool(v) => Arc::new(BooleanArray::from(v)),
        ArrayData::Str(_) => Arc::new(BooleanArray::from(Vec::<bool>::new())),
    }
}

fn item_field(c: &Component) -> Arc<Field> {
    Arc::new(Field::new("item", arrow_type(c.primitive), true))
}

impl Table {
    /// Creates `<dir>/<name>.parquet` for these components (sorted here by name).
    pub fn create(
        dir: &Path,
        name: &str,
        mut components: Vec<Component>,
    ) -> Result<Table, WriteError> {
        components.sort_by(|a, b| a.name.cmp(&b.name));
        let mut fields: Vec<Field> = components
            .iter()
            .map(|c| {
                if c.shape.is_empty() {
                    Field::new(&c.name, arrow_type(c.primitive), true)
                } else {
                    Field::new(
                        &c.name,
                        arrow_schema::DataType::FixedSizeList(item_field(c), c.elements as i32),
                        true,
                    )
                }
            })
            .collect();
        fields.push(Field::new("tick", arrow_schema::DataType::UInt64, true));
        fields.push(Field::new(
            "entity_id",
            arrow_schema::DataType::UInt64,
            true,
        ));
        let schema: SchemaRef = Arc::new(Schema::new(fields));
        let path = dir.join(format!("{name}.parquet"));
        let file = File::create(&path).map_err(|e| WriteError::io(&path, e))?;
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_writer_version(WriterVersion::PARQUET_1_0)
            .set_max_row_group_row_count(Some(MAX_ROW_GROUP_ROWS))
            .set_max_row_group_bytes(Some(MAX_ROW_GROUP_BYTES))
            .build();
        let writer =
            ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(|e| io(&path, e))?;
        let columns = components
            .iter()
            .map(|c| ArrayData::empty(c.primitive.dtype()))
            .collect();
        Ok(Table {
            name: name.to_string(),
            components,
            path,
            schema,
            writer: Some(writer),
            ticks: Vec::new(),
            entities: Vec::new(),
            columns,
            rows: 0,
        })
    }

    /// Appends a row; `cells` follow `components`. A cell of the wrong type or size is
    /// written as zeros and reported (`false`) so the caller can count it.
    pub fn push(&mut self, tick: u64, entity: u64, cells: &[Cell<'_>]) -> Result<bool, WriteError> {
        let mut exact = true;
        for (i, c) in self.components.iter().enumerate() {
            let dst = &mut self.columns[i];
            let ok = match cells.get(i) {
                Some(Cell::Data(d)) => d.len() == c.elements && extend(dst, d),
                Some(Cell::U64(v)) => c.elements == 1 && extend(dst, &ArrayData::U64(vec![*v])),
                Some(Cell::F64(v)) => c.elements == 1 && extend(dst, &ArrayData::F64(vec![*v])),
                Some(Cell::Zeros) | None => false,
            };
            if !ok {
                zeros(dst, c.elements);
                exact = false;
            }
        }
        self.ticks.push(tick);
        self.entities.push(entity);
        self.rows += 1;
        if self.ticks.len() >= BATCH_ROWS {
            self.flush()?;
        }
        Ok(exact)
    }

    fn flush(&mut self) -> Result<(), WriteError> {
        if self.ticks.is_empty() {
            return Ok(());
        }
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(self.components.len() + 2);
        for (c, data) in self.components.iter().zip(self.columns.iter_mut()) {
            let values = take(data);
            if c.shape.is_empty() {
                arrays.push(values);
            } else {
                let list =
                    FixedSizeListArray::try_new(item_field(c), c.elements as i32, values, None)
                        .map_err(|e| io(&self.path, e))?;
                arrays.push(Arc::new(list));
            }
        }
        let ticks = std::mem::take(&mut self.ticks);
        let entities = std::mem::take(&mut self.entities);
        arrays.push(Arc::new(PrimitiveArray::<UInt64Type>::new(
            ScalarBuffer::from(ticks),
            None,
        )));
        arrays.push(Arc::new(PrimitiveArray::<UInt64Type>::new(
            ScalarBuffer::from(entities),
            None,
        )));
        let batch =
            RecordBatch::try_new(self.schema.clone(), arrays).map_err(|e| io(&self.path, e))?;
        if let Some(w) = self.writer.as_mut() {
            w.write(&batch).map_err(|e| io(&self.path, e))?;
        }
        Ok(())
    }

    /// Writes what is buffered and the footer.
    pub fn close(mut self) -> Result<u64, WriteError> {
        self.flush()?;
        if let Some(w) = self.writer.take() {
            w.close().map_err(|e| io(&self.path, e))?;
        }
        Ok(self.rows)
    }
}
