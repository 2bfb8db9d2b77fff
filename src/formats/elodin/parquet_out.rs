//! One archetype's Parquet file as Elodin 0.10 reads it (spec §6): components sorted by
//! name, then `tick`, then `entity_id`; every field nullable with no nulls; tensors as
//! FixedSizeList with the Arrow schema embedded; ZSTD; data page v1. Rows are buffered
//! per batch and written in row groups of at most 262,144 rows or 8 MiB encoded.
//!
//! Encoding and compressing (most of the cost of writing) run on a thread of their own:
//! the caller fills the next batch while the previous one is encoded. The channel holds
//! one batch, so memory stays bounded by the row group being encoded (the parquet crate
//! keeps its compressed pages until the row group is complete), one page per column being
//! filled, and three batches.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use arrow_array::types::*;
use arrow_array::{ArrayRef, BooleanArray, FixedSizeListArray, PrimitiveArray, RecordBatch};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::schema::types::ColumnPath;

use super::columns::arrow_type;
use super::metadata::{Component, Primitive};
use crate::formats::WriteError;
use crate::model::{ArrayData, DType};

pub const MAX_ROW_GROUP_ROWS: usize = 262_144;
/// The writer holds a whole row group's compressed pages until it is complete: 8 MiB
/// keeps that small (at 128 MiB the benchmark's row groups of 262,144 rows held 34 MB)
/// and costs nothing measurable in time; Elodin does not care how rows are grouped.
pub const MAX_ROW_GROUP_BYTES: usize = 8 << 20;
/// Uncompressed bytes of a data page before it is compressed and put aside: one such
/// buffer per column is being filled at any time (the crate's default is 1 MiB).
const PAGE_BYTES: usize = 256 << 10;
/// Rows buffered before they are handed to the Parquet writer. Three batches are alive at
/// a time (one filling, one waiting, one being encoded); 1,024 rows of the benchmark's
/// 32 doubles are 256 KiB, and smaller batches cost no measurable time.
const BATCH_ROWS: usize = 1024;

/// One value of a row.
#[derive(Clone, Copy)]
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
    /// The components as the caller declared them; values are given in these types and
    /// stored in [`stored`] ones.
    pub components: Vec<Component>,
    path: PathBuf,
    schema: SchemaRef,
    /// Batches to the encoding thread; dropped to tell it the table is complete.
    batches: Option<SyncSender<RecordBatch>>,
    /// The encoding thread; it writes the footer when `batches` closes.
    thread: Option<JoinHandle<Result<(), String>>>,
    ticks: Vec<u64>,
    entities: Vec<u64>,
    columns: Vec<ArrayData>,
    pub rows: u64,
}

fn io(path: &Path, e: impl std::fmt::Display) -> WriteError {
    WriteError::io(path, std::io::Error::other(e.to_string()))
}

/// The type a component is stored as so that Elodin 0.10.1 loads it: its own, except
/// scalar U8 and U16, which Elodin's polars cannot turn into a series ("cannot create
/// series from UInt8"; tensors of them, and every other scalar type, load). Those are
/// stored as U32, the narrowest wider type readcheck loads, so every value is kept.
pub fn stored(c: &Component) -> Primitive {
    match c.primitive {
        Primitive::U8 | Primitive::U16 if c.shape.is_empty() => Primitive::U32,
        p => p,
    }
}

/// Why a component is stored in a wider type than its own, if it is.
pub fn widening(c: &Component) -> Option<&'static str> {
    match (c.primitive, stored(c)) {
        (Primitive::U8, Primitive::U32) => {
            Some("U8 scalar stored as U32 (Elodin 0.10 cannot load U8 or U16 scalar columns)")
        }
        (Primitive::U16, Primitive::U32) => {
            Some("U16 scalar stored as U32 (Elodin 0.10 cannot load U8 or U16 scalar columns)")
        }
        _ => None,
    }
}

/// Appends `src` to a column of `dst`'s dtype: the same dtype, or U8/U16 widened to U32;
/// strings never (Elodin has no string component).
fn extend(dst: &mut ArrayData, src: &ArrayData) -> bool {
    match (dst, src) {
        (ArrayData::U32(d), ArrayData::U8(s)) => d.extend(s.iter().map(|&x| u32::from(x))),
        (ArrayData::U32(d), ArrayData::U16(s)) => d.extend(s.iter().map(|&x| u32::from(x))),
        (ArrayData::Str(_), _) => return false,
        (dst, src) => return dst.extend_from(src),
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

/// The buffered elements as an Arrow array; `data` starts again empty with room for
/// `capacity` elements (the next batch fills it without growing it step by step).
fn take(data: &mut ArrayData, capacity: usize) -> ArrayRef {
    fn prim<T: ArrowPrimitiveType>(v: Vec<T::Native>) -> ArrayRef {
        Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(v), None))
    }
    let dtype = data.dtype();
    let data = std::mem::replace(data, with_capacity(dtype, capacity));
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

/// Starts the thread that encodes the batches it receives and writes the footer once the
/// sender is dropped. It stops at the first error and returns it.
type Started = (SyncSender<RecordBatch>, JoinHandle<Result<(), String>>);
fn spawn(mut writer: ArrowWriter<File>) -> std::io::Result<Started> {
    let (tx, rx) = sync_channel::<RecordBatch>(1);
    let thread = std::thread::Builder::new()
        .name("parquet-encode".into())
        .spawn(move || {
            for batch in rx {
                writer.write(&batch).map_err(|e| e.to_string())?;
            }
            writer.close().map(drop).map_err(|e| e.to_string())
        })?;
    Ok((tx, thread))
}

fn with_capacity(dtype: DType, n: usize) -> ArrayData {
    match dtype {
        DType::Bool => ArrayData::Bool(Vec::with_capacity(n)),
        DType::U8 => ArrayData::U8(Vec::with_capacity(n)),
        DType::U16 => ArrayData::U16(Vec::with_capacity(n)),
        DType::U32 => ArrayData::U32(Vec::with_capacity(n)),
        DType::U64 => ArrayData::U64(Vec::with_capacity(n)),
        DType::I8 => ArrayData::I8(Vec::with_capacity(n)),
        DType::I16 => ArrayData::I16(Vec::with_capacity(n)),
        DType::I32 => ArrayData::I32(Vec::with_capacity(n)),
        DType::I64 => ArrayData::I64(Vec::with_capacity(n)),
        DType::F32 => ArrayData::F32(Vec::with_capacity(n)),
        DType::F64 => ArrayData::F64(Vec::with_capacity(n)),
        DType::Str => ArrayData::empty(DType::Str),
    }
}

fn item_field(c: &Component) -> Arc<Field> {
    Arc::new(Field::new("item", arrow_type(stored(c)), true))
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
                    Field::new(&c.name, arrow_type(stored(c)), true)
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
        // Dictionary encoding where Elodin's own files use it (`tick`, `entity_id` and the
        // integer scalars such as asset handles); values PLAIN, as upstream. A dictionary
        // tried on float columns only costs time before the writer falls back to PLAIN.
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_writer_version(WriterVersion::PARQUET_1_0)
            .set_max_row_group_row_count(Some(MAX_ROW_GROUP_ROWS))
            .set_max_row_group_bytes(Some(MAX_ROW_GROUP_BYTES))
            .set_data_page_size_limit(PAGE_BYTES)
            .set_dictionary_enabled(false);
        let integer_scalars = components
            .iter()
            .filter(|c| {
                c.shape.is_empty() && !matches!(c.primitive, Primitive::F32 | Primitive::F64)
            })
            .map(|c| c.name.as_str());
        for column in ["tick", "entity_id"].into_iter().chain(integer_scalars) {
            props = props.set_column_dictionary_enabled(ColumnPath::from(column), true);
        }
        let props = props.build();
        let writer =
            ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(|e| io(&path, e))?;
        let (batches, thread) = spawn(writer).map_err(|e| WriteError::io(&path, e))?;
        let columns = components
            .iter()
            .map(|c| ArrayData::empty(stored(c).dtype()))
            .collect();
        Ok(Table {
            name: name.to_string(),
            components,
            path,
            schema,
            batches: Some(batches),
            thread: Some(thread),
            ticks: Vec::new(),
            entities: Vec::new(),
            columns,
            rows: 0,
        })
    }

    /// The components as written to `metadata.json`: with their stored types.
    pub fn stored_components(&self) -> Vec<Component> {
        self.components
            .iter()
            .map(|c| Component {
                primitive: stored(c),
                ..c.clone()
            })
            .collect()
    }

    /// Appends a row; `cells` follow `components`. A cell of the wrong type or size is
    /// written as zeros and reported (`false`) so the caller can count it.
    pub fn push(&mut self, tick: u64, entity: u64, cells: &[Cell<'_>]) -> Result<bool, WriteError> {
        self.push_with(tick, entity, |i, _| {
            cells.get(i).copied().unwrap_or(Cell::Zeros)
        })
    }

    /// Appends a row whose cells `cell(index, component)` gives, one per component, in
    /// order (no vector of cells per row). As [`Table::push`] otherwise.
    pub fn push_with<'a>(
        &mut self,
        tick: u64,
        entity: u64,
        mut cell: impl FnMut(usize, &Component) -> Cell<'a>,
    ) -> Result<bool, WriteError> {
        let mut exact = true;
        for (i, c) in self.components.iter().enumerate() {
            let dst = &mut self.columns[i];
            let ok = match cell(i, c) {
                Cell::Data(d) => d.len() == c.elements && extend(dst, d),
                Cell::U64(v) => match dst {
                    ArrayData::U64(d) if c.elements == 1 => {
                        d.push(v);
                        true
                    }
                    _ => false,
                },
                Cell::F64(v) => match dst {
                    ArrayData::F64(d) if c.elements == 1 => {
                        d.push(v);
                        true
                    }
                    _ => false,
                },
                Cell::Zeros => false,
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
            // The next batch is as large as this one (tables are flushed when full).
            let values = take(data, data.len());
            if c.shape.is_empty() {
                arrays.push(values);
            } else {
                let list =
                    FixedSizeListArray::try_new(item_field(c), c.elements as i32, values, None)
                        .map_err(|e| io(&self.path, e))?;
                arrays.push(Arc::new(list));
            }
        }
        let rows = self.ticks.len();
        let ticks = std::mem::replace(&mut self.ticks, Vec::with_capacity(rows));
        let entities = std::mem::replace(&mut self.entities, Vec::with_capacity(rows));
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
        let sent = self.batches.as_ref().map(|tx| tx.send(batch));
        if let Some(Err(_)) = sent {
            // The thread stopped on an error: that error is the one to report.
            self.batches = None;
            self.join()?;
            return Err(io(&self.path, "the Parquet writer stopped"));
        }
        Ok(())
    }

    /// Writes what is buffered and the footer.
    pub fn close(mut self) -> Result<u64, WriteError> {
        self.flush()?;
        self.batches = None;
        self.join()?;
        Ok(self.rows)
    }

    /// Waits for the encoding thread (after `batches` was dropped) and takes its result.
    fn join(&mut self) -> Result<(), WriteError> {
        match self.thread.take().map(JoinHandle::join) {
            None | Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(io(&self.path, e)),
            Some(Err(_)) => Err(io(&self.path, "the Parquet writer failed")),
        }
    }
}

impl Drop for Table {
    /// A table dropped unfinished (an error elsewhere) still ends its thread before the
    /// output directory is removed.
    fn drop(&mut self) {
        self.batches = None;
        let _ = self.join();
    }
}
