//! One archetype's Parquet file as Elodin 0.10 reads it (spec §6): components sorted by
//! name, then `tick`, then `entity_id`; every field nullable with no nulls; tensors as
//! FixedSizeList with the Arrow schema embedded; ZSTD; data page v1.
//!
//! Memory: the parquet crate keeps, for every column of a row group in progress, its
//! compressed pages, a page being filled and a ZSTD context, from the row group's first
//! row to its last. A table that streams rows into its writer has one in progress all the
//! time, so an output of many tables (an Icarus recording of 200 signals once made 201)
//! held hundreds of contexts at once (docs/performance.md, "`simrec convert run.icarec
//! out/` of the generated recordings: memory not bounded"). So a table buffers its next row group's rows (plain Arrow arrays) and
//! hands the complete row group to the encoding thread shared by the output's tables
//! ([`Tables`], [`ENCODERS`]), which encodes and writes it in one go: contexts live only
//! while a row group is encoded. The rows a table buffers are its share of
//! [`BUFFER_BUDGET`], divided among the tables open (at most [`MAX_ROW_GROUP_BYTES`]), so
//! the buffers together stay under the budget however many tables there are, and a file's
//! row groups are as large as that allows: each row group costs footer metadata that the
//! writer keeps until the file is closed, so row groups of a
//! few rows make memory grow with the input (docs/performance.md, `.icarec`).

use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

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
use crate::formats::pool::{Pool, Submitter};
use crate::formats::WriteError;
use crate::model::{ArrayData, DType};

pub const MAX_ROW_GROUP_ROWS: usize = 262_144;
/// The most a table buffers for one row group (values as stored, plus `tick` and
/// `entity_id`): what a table alone (an Elodin replay's `body`) gets. Its row group is
/// buffered once and encoded once (its compressed pages and a context per column), so this
/// bounds a table's memory: at 2 MiB the Elodin benchmark's convert peaks as low as before
/// this design with larger row groups streamed; Elodin does not care how rows are grouped,
/// and the time did not move (docs/performance.md, "Elodin").
pub const MAX_ROW_GROUP_BYTES: usize = 2 << 20;
/// What the open tables of one output may buffer together for their next row groups. A
/// share of it is the size of a table's row groups; a larger budget peaked no lower: what
/// the buffers gain, the footers lose (docs/performance.md, "`simrec convert run.icarec
/// out/`: one archetype per component").
pub const BUFFER_BUDGET: usize = 16 << 20;
/// Threads that encode row groups, shared by the tables of one output. A row group waits
/// for a free one (the table's caller blocks), so at most this many are being encoded,
/// each holding a ZSTD context per column and its compressed pages until it is written.
/// One is enough to keep up with the thread that fills the tables (the writer's caller),
/// and a second kept its own allocator heap full, peaking higher (docs/performance.md,
/// "Elodin").
pub const ENCODERS: usize = 1;
/// Rows of a batch: a row group is buffered as batches of this many rows (the last one
/// shorter). 1,024 rows of the Elodin benchmark's 32 doubles are 256 KiB; batches are also
/// when a table looks at its share again.
const BATCH_ROWS: usize = 1024;
/// Uncompressed bytes of a data page before it is compressed and put aside: one such
/// buffer per column of the row groups being encoded (the crate's default is 1 MiB).
const PAGE_BYTES: usize = 256 << 10;

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

/// Where the tables of one output are written, and what they share: the encoding threads
/// and the buffer budget. The threads end once it and its tables are gone.
pub struct Tables {
    dir: PathBuf,
    jobs: Submitter<Arc<Encoding>>,
    budget: Arc<Budget>,
}

/// Tables open and created, for the shares of [`BUFFER_BUDGET`].
#[derive(Default)]
struct Budget {
    open: AtomicUsize,
    created: AtomicUsize,
}

impl Budget {
    /// A table's share of the budget now, in bytes.
    fn share(&self) -> usize {
        (BUFFER_BUDGET / self.open.load(Ordering::Relaxed).max(1)).min(MAX_ROW_GROUP_BYTES)
    }
}

/// A table's file as the encoding threads see it: the writer, and the row groups waiting
/// for it in order. A thread takes the writer's lock before it takes a row group from the
/// queue and keeps it until that row group is written, so row groups are written in the
/// order they were queued whichever thread takes them.
struct Encoding {
    writer: Mutex<Option<ArrowWriter<File>>>,
    queue: Mutex<VecDeque<Vec<RecordBatch>>>,
    /// The first error of the writer (it is dropped then, and later row groups with it).
    error: Mutex<Option<String>>,
}

/// A lock whether or not a thread panicked holding it: a queue and an error are consistent
/// whatever a thread was doing with them (the writer is not: [`Encoding::writer`]).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Encoding {
    /// The writer, `None` once it failed. A thread that panicked writing (in the parquet
    /// crate) leaves the lock poisoned and the file mid-row-group: that writer is dropped,
    /// never written to again, and the table's error says so.
    fn writer(&self) -> MutexGuard<'_, Option<ArrowWriter<File>>> {
        match self.writer.lock() {
            Ok(writer) => writer,
            Err(poisoned) => {
                let mut writer = poisoned.into_inner();
                if writer.take().is_some() {
                    lock(&self.error).get_or_insert("the Parquet writer failed".into());
                }
                writer
            }
        }
    }

    /// Writes the queued row groups (none if another thread took them first).
    fn write_queued(&self) {
        let mut writer = self.writer();
        loop {
            let Some(group) = lock(&self.queue).pop_front() else {
                return;
            };
            let Some(w) = writer.as_mut() else { continue };
            let written = group.iter().try_for_each(|b| w.write(b));
            if let Err(e) = written.and_then(|()| w.flush()) {
                *writer = None;
                lock(&self.error).get_or_insert(e.to_string());
            }
        }
    }
}

impl Tables {
    /// Tables in `dir`, with their encoding threads.
    pub fn new(dir: PathBuf) -> Result<Tables, WriteError> {
        // A queue of none: a row group is handed over only to a thread that is free. A
        // panic in the parquet crate is the table's error (see [`Encoding::writer`]).
        let jobs = Pool::detached("parquet-encode", ENCODERS, 0, |table: Arc<Encoding>| {
            table.write_queued()
        })
        .map_err(|e| WriteError::io(&dir, e))?;
        Ok(Tables {
            dir,
            jobs,
            budget: Arc::default(),
        })
    }

    /// The directory the tables are written in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Creates `<dir>/<name>.parquet` for these components (sorted here by name).
    pub fn create(&self, name: &str, components: Vec<Component>) -> Result<Table, WriteError> {
        Table::create(self, name, components)
    }
}

pub struct Table {
    pub name: String,
    /// The components as the caller declared them; values are given in these types and
    /// stored in [`stored`] ones.
    pub components: Vec<Component>,
    path: PathBuf,
    schema: SchemaRef,
    encoding: Arc<Encoding>,
    /// Row groups to the encoding threads.
    jobs: Submitter<Arc<Encoding>>,
    budget: Arc<Budget>,
    /// Bytes of one row as buffered.
    row_bytes: usize,
    /// Rows of the row group being buffered, and the fraction of the share it was sized
    /// for.
    target: usize,
    fraction: f64,
    /// The row group's batches so far, and their rows.
    group: Vec<RecordBatch>,
    group_rows: usize,
    /// The batch being filled.
    ticks: Vec<u64>,
    entities: Vec<u64>,
    columns: Vec<ArrayData>,
    pub rows: u64,
    open: bool,
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

/// Bytes of one element of a stored type, as buffered.
fn element_bytes(p: Primitive) -> usize {
    match p.dtype() {
        DType::Bool | DType::U8 | DType::I8 => 1,
        DType::U16 | DType::I16 => 2,
        DType::U32 | DType::I32 | DType::F32 => 4,
        DType::U64 | DType::I64 | DType::F64 | DType::Str => 8,
    }
}

impl Table {
    fn create(
        tables: &Tables,
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
        let path = tables.dir.join(format!("{name}.parquet"));
        let file = File::create(&path).map_err(|e| WriteError::io(&path, e))?;
        // Dictionary encoding where Elodin's own files use it (`tick`, `entity_id` and the
        // integer scalars such as asset handles); values PLAIN, as upstream. A dictionary
        // tried on float columns only costs time before the writer falls back to PLAIN.
        // Row groups are cut by the table (one `write` and one `flush` each), not by the
        // crate's byte estimate.
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_writer_version(WriterVersion::PARQUET_1_0)
            .set_max_row_group_row_count(Some(MAX_ROW_GROUP_ROWS))
            .set_max_row_group_bytes(None)
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
        let columns = components
            .iter()
            .map(|c| ArrayData::empty(stored(c).dtype()))
            .collect();
        let row_bytes = 16
            + components
                .iter()
                .map(|c| c.elements * element_bytes(stored(c)))
                .sum::<usize>();
        let budget = Arc::clone(&tables.budget);
        budget.open.fetch_add(1, Ordering::Relaxed);
        let created = budget.created.fetch_add(1, Ordering::Relaxed);
        let mut table = Table {
            name: name.to_string(),
            components,
            path,
            schema,
            encoding: Arc::new(Encoding {
                writer: Mutex::new(Some(writer)),
                queue: Mutex::new(VecDeque::new()),
                error: Mutex::new(None),
            }),
            jobs: tables.jobs.clone(),
            budget,
            row_bytes,
            target: 0,
            fraction: 1.0,
            group: Vec::new(),
            group_rows: 0,
            ticks: Vec::new(),
            entities: Vec::new(),
            columns,
            rows: 0,
            open: true,
        };
        // Tables created together fill at the same pace: their first row groups are cut
        // at eight different fractions of a share so that they are not all full (and all
        // waiting for an encoder) at the same moment, and the buffers together hold about
        // half the budget rather than all of it.
        table.start_row_group(((created * 5) % 8 + 1) as f64 / 8.0);
        Ok(table)
    }

    /// Rows of `fraction` of the table's share now.
    fn rows_of_share(&self, fraction: f64) -> usize {
        let share = (self.budget.share() as f64 * fraction) as usize;
        (share / self.row_bytes.max(1)).clamp(1, MAX_ROW_GROUP_ROWS)
    }

    /// Sizes the next row group: `fraction` of the table's share now.
    fn start_row_group(&mut self, fraction: f64) {
        self.fraction = fraction;
        self.target = self.rows_of_share(fraction);
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
        let rows = self.group_rows + self.ticks.len();
        if self.ticks.len() >= BATCH_ROWS || rows >= self.target {
            let batch = self.batch()?;
            self.group.push(batch);
            self.group_rows = rows;
            // Tables opened since the row group was sized make the shares smaller.
            self.target = self.target.min(self.rows_of_share(self.fraction));
            if rows >= self.target {
                self.hand_over()?;
                self.start_row_group(1.0);
            }
        }
        Ok(exact)
    }

    /// The batch's rows as a record batch; the buffers start again empty, with room for a
    /// batch (a batch is small enough for the allocator to reuse its blocks at once; whole
    /// row groups in one block each were freed and mapped again, and peak RSS went up).
    fn batch(&mut self) -> Result<RecordBatch, WriteError> {
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(self.components.len() + 2);
        for (c, data) in self.components.iter().zip(self.columns.iter_mut()) {
            let values = take(data, BATCH_ROWS * c.elements);
            if c.shape.is_empty() {
                arrays.push(values);
            } else {
                let list =
                    FixedSizeListArray::try_new(item_field(c), c.elements as i32, values, None)
                        .map_err(|e| io(&self.path, e))?;
                arrays.push(Arc::new(list));
            }
        }
        for ids in [&mut self.ticks, &mut self.entities] {
            let ids = std::mem::replace(ids, Vec::with_capacity(BATCH_ROWS));
            arrays.push(Arc::new(PrimitiveArray::<UInt64Type>::new(
                ScalarBuffer::from(ids),
                None,
            )));
        }
        RecordBatch::try_new(self.schema.clone(), arrays).map_err(|e| io(&self.path, e))
    }

    /// The error that stopped the table's writer, if one did.
    fn failed(&self) -> Result<(), WriteError> {
        match lock(&self.encoding.error).as_ref() {
            Some(e) => Err(io(&self.path, e)),
            None => Ok(()),
        }
    }

    /// Queues the buffered rows as a row group and hands it to a free encoding thread
    /// (waiting for one).
    fn hand_over(&mut self) -> Result<(), WriteError> {
        self.failed()?;
        let group = std::mem::take(&mut self.group);
        self.group_rows = 0;
        if group.is_empty() {
            return Ok(());
        }
        // One row group of a table at most is queued or being encoded while the next one
        // fills: this waits for a thread still writing the previous one, or writes it here
        // if no thread has taken it yet. (A second thread would only wait for the writer,
        // holding a row group more: a table alone held three.)
        self.encoding.write_queued();
        self.failed()?;
        lock(&self.encoding.queue).push_back(group);
        if self.jobs.submit(Arc::clone(&self.encoding)).is_err() {
            // No thread to take it: the row group is written here.
            self.encoding.write_queued();
        }
        Ok(())
    }

    /// Writes what is buffered and the footer.
    pub fn close(mut self) -> Result<u64, WriteError> {
        self.failed()?;
        if !self.ticks.is_empty() {
            let batch = self.batch()?;
            self.group.push(batch);
        }
        if !self.group.is_empty() {
            let group = std::mem::take(&mut self.group);
            lock(&self.encoding.queue).push_back(group);
        }
        // Waits for a thread writing this table's row groups, then writes what is left here.
        self.encoding.write_queued();
        self.failed()?;
        let writer = self.encoding.writer().take();
        self.done();
        match writer {
            Some(w) => w.close().map_err(|e| io(&self.path, e))?,
            None => return Err(io(&self.path, "the Parquet writer failed")),
        };
        Ok(self.rows)
    }

    /// No longer counted among the open tables (once).
    fn done(&mut self) {
        if std::mem::replace(&mut self.open, false) {
            self.budget.open.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Table {
    /// A table dropped unfinished (an error elsewhere) waits for a thread writing its row
    /// groups and closes its file without a footer before the output directory is removed.
    fn drop(&mut self) {
        lock(&self.encoding.queue).clear();
        self.encoding.writer().take();
        self.done();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    fn doubles(n: usize) -> Vec<Component> {
        (0..n)
            .map(|k| Component::new(&format!("s{k}"), Primitive::F64, vec![]))
            .collect::<Option<_>>()
            .unwrap()
    }

    /// Row groups per file, and every (tick, first value) pair in file order.
    fn read_back(path: &Path) -> (usize, Vec<(u64, f64)>) {
        let groups = SerializedFileReader::new(File::open(path).unwrap())
            .unwrap()
            .metadata()
            .num_row_groups();
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let mut rows = Vec::new();
        for batch in reader {
            let batch = batch.unwrap();
            let col = |name: &str| batch.column(batch.schema().index_of(name).unwrap()).clone();
            let ticks = col("tick");
            let ticks = ticks
                .as_any()
                .downcast_ref::<PrimitiveArray<UInt64Type>>()
                .unwrap();
            let s0 = col("s0");
            let s0 = s0
                .as_any()
                .downcast_ref::<PrimitiveArray<Float64Type>>()
                .unwrap();
            rows.extend(
                ticks
                    .values()
                    .iter()
                    .copied()
                    .zip(s0.values().iter().copied()),
            );
        }
        (groups, rows)
    }

    /// Many tables filled a row at a time share the budget: every row comes back in order,
    /// and each file has row groups of about its share (neither one per batch nor one per
    /// file), whichever order the encoding thread took them in.
    #[test]
    fn many_tables_share_the_budget_and_keep_their_rows_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let tables = Tables::new(dir.path().to_path_buf()).unwrap();
        let n = 40;
        let mut open: Vec<Table> = (0..n)
            .map(|k| tables.create(&format!("t{k}"), doubles(10)).unwrap())
            .collect();
        let ticks = 30_000u64;
        let value = |tick: u64, k: usize| tick as f64 + k as f64 / 100.0;
        for tick in 0..ticks {
            for (k, t) in open.iter_mut().enumerate() {
                let v = ArrayData::F64(vec![value(tick, k)]);
                let cells = vec![Cell::Data(&v); 10];
                assert!(t.push(tick, 7, &cells).unwrap());
            }
        }
        for t in open.drain(..) {
            assert_eq!(t.close().unwrap(), ticks);
        }
        // 16 MiB / 40 tables = 410 KiB a share, 4,369 rows of 96 bytes: 7 row groups of
        // 30,000 rows, 8 when the first is cut short.
        for k in 0..n {
            let (groups, rows) = read_back(&dir.path().join(format!("t{k}.parquet")));
            assert!((7..=8).contains(&groups), "t{k}: {groups} row groups");
            let want: Vec<(u64, f64)> = (0..ticks).map(|t| (t, value(t, k))).collect();
            assert!(rows == want, "t{k}: rows out of order or lost");
        }
    }

    /// A table alone gets at most `MAX_ROW_GROUP_BYTES` per row group.
    #[test]
    fn a_table_alone_has_row_groups_of_at_most_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let tables = Tables::new(dir.path().to_path_buf()).unwrap();
        let mut t = tables.create("alone", doubles(30)).unwrap();
        let rows = 100_000u64;
        for tick in 0..rows {
            let v = ArrayData::F64(vec![tick as f64]);
            t.push(tick, 0, &vec![Cell::Data(&v); 30]).unwrap();
        }
        t.close().unwrap();
        let (groups, back) = read_back(&dir.path().join("alone.parquet"));
        // 256 bytes a row: 8,192 rows in 2 MiB, so 100,000 rows make 13 row groups, 14
        // with the first cut at 1/8 of that (the first table of an output).
        assert_eq!(back.len(), rows as usize);
        assert!((13..=14).contains(&groups), "{groups} row groups");
    }
}
