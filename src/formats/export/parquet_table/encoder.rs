//! Batches encoded into a Parquet file: on one thread of their own (rows that come a record
//! at a time), or column by column on every core (rows that come a frame at a time).
//!
//! Encoding costs the `parquet` crate more per row of an Icarus table (a dictionary lookup
//! and two string comparisons for each of `channel` and `entity`, definition levels for
//! every value column) than the rows cost to make once they come a frame at a time
//! (docs/performance.md, "Icarus → Parquet table by frames"); one thread encoding the
//! whole table was the limit. Each column of a row group has its own writer, so columns
//! are jobs: a job writes the oldest batch a column has not written yet, and whoever is
//! free takes the next one, the worker threads and the thread that fills the batches
//! whenever it would otherwise wait for room. A column's batches are written in order, one
//! job at a time, so the file is what one thread would write. By columns, `channel` and
//! `entity` are written by [`LabelColumn`] instead of the crate's writer (its dictionary and
//! statistics were a large share of the CPU time): see `labels.rs`; and a caller's
//! `DELTA_BINARY_PACKED` integer columns by [`DeltaColumn`] (`deltas.rs`).
//!
//! Memory: one batch in the channel and the row group's encoded pages until it is complete
//! (a row group closes at [`MAX_ROW_GROUP_ROWS`] rows, or before its encoded size passes
//! [`MAX_ROW_GROUP_BYTES`]); by columns, [`IN_FLIGHT`] batches and two row groups (one
//! closing and going into the file while the next one fills: at a row group's end one
//! thread would otherwise wait for the other's last column).

use std::collections::VecDeque;
use std::fs::File;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Schema, SchemaRef};
use bytes::Bytes;
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory,
};
use parquet::arrow::ArrowWriter;
use parquet::column::writer::ColumnCloseResult;
use parquet::file::properties::{WriterProperties, WriterPropertiesBuilder};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnDescPtr;

use super::chunk::OwnColumn;
use super::deltas::{self, DeltaColumn};
use super::labels::{self, LabelColumn};
use crate::formats::worker::{Stopped, Worker};

pub const MAX_ROW_GROUP_ROWS: usize = 1 << 20;
/// The row group's encoded pages are kept until it is complete.
pub const MAX_ROW_GROUP_BYTES: usize = 8 << 20;
/// Batches handed over and not yet written by every column, at most.
const IN_FLIGHT: usize = 3;

/// The writers of one top-level column: the crate's, one per leaf (a list column has one
/// leaf, as every column of the table does), or simrec's (a label or delta column).
enum Writers {
    Arrow(Vec<ArrowColumnWriter>),
    Own(Box<dyn OwnColumn>),
}

/// A top-level column of a row group, encoded.
enum Chunks {
    Arrow(Vec<ArrowColumnChunk>),
    Own(Bytes, Box<ColumnCloseResult>),
}

/// Which of simrec's writers writes a column.
#[derive(Clone, Copy)]
enum Own {
    Labels,
    Deltas,
}

impl Writers {
    fn write(
        &mut self,
        field: &arrow_schema::Field,
        array: &arrow_array::ArrayRef,
    ) -> Result<(), String> {
        match self {
            Writers::Own(column) => column.write(array),
            Writers::Arrow(writers) => {
                let leaves = compute_leaves(field, array).map_err(|e| e.to_string())?;
                if leaves.len() != writers.len() {
                    return Err(format!("column {}: leaves do not match", field.name()));
                }
                for (leaf, writer) in leaves.iter().zip(writers.iter_mut()) {
                    writer.write(leaf).map_err(|e| e.to_string())?;
                }
                Ok(())
            }
        }
    }

    fn estimated_bytes(&self) -> usize {
        match self {
            Writers::Arrow(writers) => writers.iter().map(|w| w.get_estimated_total_bytes()).sum(),
            Writers::Own(column) => column.estimated_bytes(),
        }
    }

    fn close(self) -> Result<Chunks, String> {
        match self {
            Writers::Arrow(writers) => writers
                .into_iter()
                .map(|w| w.close().map_err(|e| e.to_string()))
                .collect::<Result<Vec<_>, _>>()
                .map(Chunks::Arrow),
            Writers::Own(column) => column
                .close()
                .map(|(bytes, close)| Chunks::Own(bytes, Box::new(close))),
        }
    }
}

/// One top-level column of a row group: its writers, and how far it got.
struct Slot {
    /// `None` while a job has them, and once they are closed.
    writers: Option<Writers>,
    /// Batches of the row group written.
    done: usize,
    /// The encoded chunks, once the row group is complete.
    chunks: Option<Chunks>,
    /// The encoded size, as the writers estimate it, after each batch written: a function
    /// of the data only, unlike the size at any one moment (how far the column's thread got).
    sizes: Vec<usize>,
    /// Nanoseconds its last batch took: the dearer columns are taken first.
    cost: u64,
}

/// A row group being encoded.
struct Group {
    /// Its place in the file.
    index: usize,
    /// Batches not yet written by every column; the first is number `first` of the group.
    batches: VecDeque<RecordBatch>,
    first: usize,
    /// Batches handed over, and their rows; the rows after each batch.
    pushed: usize,
    rows: usize,
    ends: Vec<usize>,
    slots: Vec<Slot>,
    /// No batch comes any more: each column closes after the ones it has, then the row
    /// group goes into the file.
    closing: bool,
}

impl Group {
    /// Its rows, and its encoded size projected over them: every column's size after the
    /// newest batch all have written, the rows after it counted at that size's rate.
    fn projected(&self) -> (usize, usize) {
        let Some(k) = self.seen().checked_sub(1) else {
            return (self.rows, 0);
        };
        let bytes: usize = (self.slots.iter())
            .map(|s| s.sizes.get(k).copied().unwrap_or(0))
            .sum();
        let rows = self.ends.get(k).copied().unwrap_or(0);
        match rows {
            0 => (self.rows, bytes),
            _ => (self.rows, bytes.saturating_mul(self.rows) / rows),
        }
    }

    /// Batches the close decision reads the columns' sizes after: the newest that `push`
    /// waits for every column to have written anyway (the in-flight bound).
    fn seen(&self) -> usize {
        self.pushed.saturating_sub(IN_FLIGHT - 1)
    }

    /// Lets go of the batches every column has written.
    fn release(&mut self) {
        let oldest = self.slots.iter().map(|s| s.done).min().unwrap_or(0);
        while self.first < oldest && self.batches.pop_front().is_some() {
            self.first += 1;
        }
    }

    /// The column whose next job is due (the one furthest behind, the dearest first), and
    /// the batch it writes (`None`: it closes).
    fn next(&self) -> Option<(usize, Option<RecordBatch>)> {
        let column = (0..self.slots.len())
            .filter(|&c| {
                let s = &self.slots[c];
                s.writers.is_some() && (s.done < self.pushed || self.closing)
            })
            .min_by_key(|&c| (self.slots[c].done, std::cmp::Reverse(self.slots[c].cost)))?;
        let done = self.slots[column].done;
        let batch = match done < self.pushed {
            true => Some(self.batches.get(done.checked_sub(self.first)?)?.clone()),
            false => None,
        };
        Some((column, batch))
    }
}

struct State {
    /// The row groups being encoded, oldest first: the one being filled, and before it at
    /// most one closing (its last jobs and its append overlap the next one's first).
    groups: VecDeque<Group>,
    /// The file (`None` while a job appends a row group to it), and its row groups.
    file: Option<SerializedFileWriter<File>>,
    error: Option<String>,
    stop: bool,
    /// Threads waiting for a change: told of one only when there are (a notification is a
    /// system call, and there is one a job).
    waiting: usize,
}

impl State {
    fn group(&mut self, index: usize) -> Option<&mut Group> {
        self.groups.iter_mut().find(|g| g.index == index)
    }

    /// Batches handed over and not yet written by every column.
    fn in_flight(&self) -> usize {
        self.groups.iter().map(|g| g.batches.len()).sum()
    }

    /// The row group being filled, if one is.
    fn open(&self) -> Option<&Group> {
        self.groups.back().filter(|g| !g.closing)
    }
}

/// What a job does.
enum Job {
    /// Write a column (of row group `.0`) of a batch.
    Write(usize, usize, Writers, RecordBatch),
    /// Close a column's writers.
    Close(usize, usize, Writers),
    /// Append the oldest row group, closed, (its chunks by column) to the file. Done by a
    /// thread that encodes, as the rest of the row group: the pages are let go by the
    /// thread that made them (the allocator reuses them sooner).
    Append(Vec<Chunks>, SerializedFileWriter<File>),
}

enum Outcome {
    Written(usize, usize, Writers, u64),
    Closed(usize, usize, Chunks),
    Appended(SerializedFileWriter<File>),
}

struct Shared {
    state: Mutex<State>,
    /// Signalled whenever a job ends, a batch comes, a row group closes, or the run stops.
    changed: Condvar,
    schema: SchemaRef,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A job that panicked is caught before it can poison the lock; a poisoned lock
        // still holds consistent counts.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next job, taken out of the state: the oldest row group's append once it is
    /// closed, else a column's next batch or its close, the oldest row group first.
    fn take_job(&self, state: &mut State) -> Option<Job> {
        if state.error.is_some() || state.stop {
            return None;
        }
        let closed = state
            .groups
            .front()
            .is_some_and(|g| g.closing && g.slots.iter().all(|s| s.chunks.is_some()));
        if closed && state.file.is_some() {
            let group = state.groups.pop_front()?;
            let chunks = group
                .slots
                .into_iter()
                .map(|s| s.chunks.unwrap_or(Chunks::Arrow(Vec::new())))
                .collect();
            return Some(Job::Append(chunks, state.file.take()?));
        }
        let group = state.groups.iter_mut().find(|g| g.next().is_some())?;
        let (column, batch) = group.next()?;
        let writers = group.slots[column].writers.take()?;
        Some(match batch {
            Some(batch) => Job::Write(group.index, column, writers, batch),
            None => Job::Close(group.index, column, writers),
        })
    }

    /// Runs `job` without the lock.
    fn run(&self, job: Job) -> Result<Outcome, String> {
        let ran = catch_unwind(AssertUnwindSafe(|| match job {
            Job::Write(group, column, mut writers, batch) => {
                let start = std::time::Instant::now();
                writers.write(self.schema.field(column), batch.column(column))?;
                let took = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
                Ok(Outcome::Written(group, column, writers, took))
            }
            Job::Close(group, column, writers) => writers
                .close()
                .map(|chunks| Outcome::Closed(group, column, chunks)),
            Job::Append(chunks, mut file) => {
                let mut group = file.next_row_group().map_err(|e| e.to_string())?;
                for chunk in chunks {
                    match chunk {
                        Chunks::Arrow(chunks) => {
                            for chunk in chunks {
                                chunk
                                    .append_to_row_group(&mut group)
                                    .map_err(|e| e.to_string())?;
                            }
                        }
                        Chunks::Own(bytes, close) => group
                            .append_column(&bytes, *close)
                            .map_err(|e| e.to_string())?,
                    }
                }
                group.close().map_err(|e| e.to_string())?;
                Ok(Outcome::Appended(file))
            }
        }));
        ran.unwrap_or_else(|_| Err("the Parquet encoder failed".to_string()))
    }

    /// Puts what a job gave back into the state.
    fn settle(&self, state: &mut State, outcome: Result<Outcome, String>) {
        match outcome {
            Ok(Outcome::Written(group, column, writers, cost)) => {
                if let Some(g) = state.group(group) {
                    let slot = &mut g.slots[column];
                    slot.sizes.push(writers.estimated_bytes());
                    slot.writers = Some(writers);
                    slot.done += 1;
                    slot.cost = cost;
                    g.release();
                }
            }
            Ok(Outcome::Closed(group, column, chunks)) => {
                if let Some(g) = state.group(group) {
                    g.slots[column].chunks = Some(chunks);
                }
            }
            Ok(Outcome::Appended(file)) => state.file = Some(file),
            Err(e) => {
                state.error.get_or_insert(e);
            }
        }
        self.notify(state);
    }

    /// Wakes the threads waiting for a change, if any.
    fn notify(&self, state: &State) {
        if state.waiting > 0 {
            self.changed.notify_all();
        }
    }

    /// Runs one job if there is one (the lock released meanwhile), else waits for a
    /// change. Returns the guard again.
    fn work_or_wait<'a>(&'a self, mut state: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        match self.take_job(&mut state) {
            Some(job) => {
                drop(state);
                let outcome = self.run(job);
                let mut state = self.lock();
                self.settle(&mut state, outcome);
                state
            }
            None => {
                state.waiting += 1;
                let mut state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
                state.waiting -= 1;
                state
            }
        }
    }

    /// Helps (or waits) until `done` holds of the state; `Err` on an error.
    fn until<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
        done: impl Fn(&State) -> bool,
    ) -> Result<MutexGuard<'a, State>, String> {
        loop {
            if let Some(e) = &state.error {
                return Err(e.clone());
            }
            if done(&state) {
                return Ok(state);
            }
            state = self.work_or_wait(state);
        }
    }
}

fn worker(shared: Arc<Shared>) {
    let mut state = shared.lock();
    while !state.stop && state.error.is_none() {
        state = shared.work_or_wait(state);
    }
}

/// Worker threads besides the one that fills the batches (which helps when it waits).
fn workers() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.saturating_sub(1).clamp(1, 3)
}

/// The file being written, by column on several threads.
struct Columns {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    factory: ArrowRowGroupWriterFactory,
    /// Per top-level column, its leaf's description if simrec writes it, and how.
    own: Vec<Option<(Own, ColumnDescPtr)>>,
    props: Arc<WriterProperties>,
    /// The next row group's place in the file.
    next: usize,
    /// A row group's encoded bytes, at most.
    group_bytes: usize,
}

impl Columns {
    /// Starts a file of `schema` with `props` (the Arrow schema goes into its metadata);
    /// the columns named in `own` are written by [`LabelColumn`] or [`DeltaColumn`] where
    /// one can.
    fn new(
        file: File,
        schema: SchemaRef,
        props: WriterProperties,
        own: &[&str],
    ) -> Result<Columns, String> {
        let group_bytes = props.max_row_group_bytes().unwrap_or(MAX_ROW_GROUP_BYTES);
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(props.clone()))
            .map_err(|e| e.to_string())?;
        let (file, factory) = writer.into_serialized_writer().map_err(|e| e.to_string())?;
        let mut leaf = 0;
        let own = (schema.fields().iter())
            .map(|f| {
                let descr = file.schema_descr().column(leaf);
                leaf += leaves(f.data_type());
                let kind = match () {
                    _ if !own.contains(&f.name().as_str()) => None,
                    _ if labels::takes(f.data_type(), &descr, &props) => Some(Own::Labels),
                    _ if deltas::takes(f.data_type(), &descr, &props) => Some(Own::Deltas),
                    _ => None,
                };
                kind.map(|k| (k, descr))
            })
            .collect();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                groups: VecDeque::new(),
                file: Some(file),
                error: None,
                stop: false,
                waiting: 0,
            }),
            changed: Condvar::new(),
            schema,
        });
        let mut threads = Vec::new();
        for _ in 0..workers() {
            let shared = shared.clone();
            let thread = std::thread::Builder::new()
                .name("parquet-table".into())
                .spawn(move || worker(shared))
                .map_err(|e| e.to_string())?;
            threads.push(thread);
        }
        Ok(Columns {
            shared,
            threads,
            factory,
            own,
            props: Arc::new(props),
            next: 0,
            group_bytes,
        })
    }

    /// Hands `batch` over to be written, closing the row group where it is full, as the
    /// crate's `ArrowWriter` closes it: at [`MAX_ROW_GROUP_ROWS`] rows exactly, and before the
    /// rows that would take its encoded size past `group_bytes`, as
    /// [`Group::projected`] has it.
    fn write(&mut self, batch: RecordBatch) -> Result<(), String> {
        let mut batch = batch;
        loop {
            let (rows, bytes) = {
                let state = self.shared.lock();
                // The close decision reads every column's size after one batch, so that it
                // is the same on every run: sizes read as they stood at the moment depended
                // on how far each column's thread had got, and so did the row groups.
                let state = self.shared.until(state, |s| {
                    s.open()
                        .is_none_or(|g| g.slots.iter().all(|slot| slot.done >= g.seen()))
                })?;
                state.open().map_or((0, 0), Group::projected)
            };
            if rows > 0 && bytes >= self.group_bytes {
                self.end_group();
                continue;
            }
            if let Some(per_row) = bytes.checked_div(rows).filter(|&b| b > 0) {
                let fit = (self.group_bytes - bytes) / per_row;
                if batch.num_rows() > fit {
                    if fit > 0 {
                        self.push(batch.slice(0, fit))?;
                        batch = batch.slice(fit, batch.num_rows() - fit);
                    }
                    self.end_group();
                    continue;
                }
            }
            let room = MAX_ROW_GROUP_ROWS - rows;
            if batch.num_rows() > room {
                let rest = batch.slice(room, batch.num_rows() - room);
                self.push(batch.slice(0, room))?;
                self.end_group();
                batch = rest;
                continue;
            }
            return self.push(batch);
        }
    }

    /// Adds `batch` to the row group being filled (opening one if none is), waiting for
    /// room (and helping meanwhile).
    fn push(&mut self, batch: RecordBatch) -> Result<(), String> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let shared = self.shared.clone();
        let mut state = shared.lock();
        if state.open().is_none() {
            // At most one row group closing behind the one being filled.
            state = shared.until(state, |s| s.groups.len() < 2)?;
            drop(state);
            let slots = slots(
                &self.factory,
                &self.shared.schema,
                &self.own,
                &self.props,
                self.next,
            )?;
            state = shared.lock();
            state.groups.push_back(Group {
                index: self.next,
                batches: VecDeque::new(),
                first: 0,
                pushed: 0,
                rows: 0,
                ends: Vec::new(),
                slots,
                closing: false,
            });
            self.next += 1;
        }
        let mut state = shared.until(state, |s| s.in_flight() < IN_FLIGHT)?;
        let full = match state.groups.back_mut() {
            Some(g) => {
                g.rows += batch.num_rows();
                g.ends.push(g.rows);
                g.batches.push_back(batch);
                g.pushed += 1;
                g.rows >= MAX_ROW_GROUP_ROWS
            }
            None => return Err("no row group to write to".to_string()),
        };
        shared.notify(&state);
        drop(state);
        if full {
            self.end_group();
        }
        Ok(())
    }

    /// Closes the row group being filled: its columns write what they have and close, and
    /// it goes into the file, while the next one fills.
    fn end_group(&mut self) {
        let mut state = self.shared.lock();
        if let Some(g) = state.groups.back_mut().filter(|g| g.pushed > 0) {
            g.closing = true;
            self.shared.notify(&state);
        }
    }

    /// Writes the last row groups and the footer.
    fn close(mut self) -> Result<(), String> {
        self.end_group();
        let shared = self.shared.clone();
        let state = shared.lock();
        // An open row group without rows (none was pushed) is no row group.
        let mut state = shared.until(state, |s| {
            s.file.is_some() && s.groups.iter().all(|g| !g.closing && g.pushed == 0)
        })?;
        let file = state.file.take();
        drop(state);
        self.stop();
        let file = file.ok_or("the Parquet file is closed")?;
        file.close().map(drop).map_err(|e| e.to_string())
    }

    fn stop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.changed.notify_all();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// A slot per top-level column for row group `group`, with the writers of its leaves
/// (`own`: per column, its leaf if simrec writes it, and how).
fn slots(
    factory: &ArrowRowGroupWriterFactory,
    schema: &Schema,
    own: &[Option<(Own, ColumnDescPtr)>],
    props: &WriterProperties,
    group: usize,
) -> Result<Vec<Slot>, String> {
    let mut writers = factory
        .create_column_writers(group)
        .map_err(|e| e.to_string())?
        .into_iter();
    let mut slots = Vec::with_capacity(own.len());
    for (f, own) in schema.fields().iter().zip(own) {
        let arrow: Vec<_> = writers.by_ref().take(leaves(f.data_type())).collect();
        let writers = match own {
            Some((Own::Labels, descr)) => {
                Writers::Own(Box::new(LabelColumn::new(descr.clone(), props)?))
            }
            Some((Own::Deltas, descr)) => {
                Writers::Own(Box::new(DeltaColumn::new(descr.clone(), props)?))
            }
            None => Writers::Arrow(arrow),
        };
        slots.push(Slot {
            writers: Some(writers),
            done: 0,
            chunks: None,
            sizes: Vec::new(),
            cost: 0,
        });
    }
    match writers.next() {
        None => Ok(slots),
        Some(_) => Err("the Parquet schema has more leaves than its columns".to_string()),
    }
}

/// Leaf columns of a column of this type in the Parquet schema.
fn leaves(data_type: &DataType) -> usize {
    match data_type {
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _) => leaves(f.data_type()),
        DataType::Struct(fields) => fields.iter().map(|f| leaves(f.data_type())).sum(),
        DataType::Map(f, _) => leaves(f.data_type()),
        DataType::RunEndEncoded(_, v) => leaves(v.data_type()),
        _ => 1,
    }
}

impl Drop for Columns {
    /// An encoder dropped unfinished (an error elsewhere) still ends its threads.
    fn drop(&mut self) {
        self.stop();
    }
}

/// What the thread of [`Thread`] is handed: a batch, or the end of the row group.
enum ToThread {
    Batch(RecordBatch),
    EndGroup,
}

/// One thread owning the crate's `ArrowWriter`, the batches handed over through a channel
/// of one: for rows that come no faster than one thread encodes them (a record at a time).
struct Thread(Worker<ToThread, (), String>);

impl Thread {
    fn new(file: File, schema: SchemaRef, props: WriterProperties) -> Result<Thread, String> {
        let mut writer =
            ArrowWriter::try_new(file, schema, Some(props)).map_err(|e| e.to_string())?;
        let worker = Worker::spawn("parquet-table", 1, move |jobs: Receiver<ToThread>| {
            for job in jobs {
                match job {
                    ToThread::Batch(batch) => writer.write(&batch),
                    ToThread::EndGroup => writer.flush(),
                }
                .map_err(|e| e.to_string())?;
            }
            writer.close().map(drop).map_err(|e| e.to_string())
        });
        worker.map(Thread).map_err(|e| e.to_string())
    }

    fn write(&mut self, job: ToThread) -> Result<(), String> {
        // The thread stopped on an error: that error is the one to report.
        self.0.send(job).map_err(|stopped| match stopped {
            Stopped::Failed(e) => e,
            Stopped::Panicked => "the Parquet writer failed".to_string(),
            Stopped::Gone => "the Parquet writer stopped".to_string(),
        })
    }

    fn close(mut self) -> Result<(), String> {
        match self.0.finish() {
            Ok(()) | Err(Stopped::Gone) => Ok(()),
            Err(Stopped::Failed(e)) => Err(e),
            Err(Stopped::Panicked) => Err("the Parquet writer failed".to_string()),
        }
    }
}

/// A Parquet file being written from batches.
pub struct Encoder(Inner);

enum Inner {
    Thread(Thread),
    Columns(Columns),
    /// On the caller's thread: for a writer of many files, where a thread each would hold
    /// memory each (the allocator's pages of every thread).
    Here(Box<ArrowWriter<File>>),
}

impl Encoder {
    /// Starts a file of `schema` with `props` (the Arrow schema goes into its metadata;
    /// row groups close at [`MAX_ROW_GROUP_ROWS`] rows or [`MAX_ROW_GROUP_BYTES`] encoded).
    /// `by_columns`: the batches come faster than one thread encodes them (a frame at a
    /// time), or most of their cost is text columns of few values, so they are encoded
    /// column by column on every core; the columns it names are written by simrec where it
    /// can (text by [`LabelColumn`], `DELTA_BINARY_PACKED` integers by [`DeltaColumn`]),
    /// the others by the crate. Otherwise one
    /// thread encodes them, as before: the reader is the slower side, and `convert --each`
    /// already keeps the cores busy (there, encoding by columns cost more CPU in page faults
    /// and TLB flushes, and more memory: docs/performance.md, "Icarus → Parquet table by
    /// frames").
    pub fn new(
        file: File,
        schema: SchemaRef,
        props: WriterPropertiesBuilder,
        by_columns: Option<&[&str]>,
    ) -> Result<Encoder, String> {
        Self::with_group_bytes(file, schema, props, by_columns, MAX_ROW_GROUP_BYTES)
    }

    /// As [`Encoder::new`], with row groups closing at `group_bytes` encoded: less memory
    /// for a writer that keeps more than one file open (the lake's two tables).
    pub fn with_group_bytes(
        file: File,
        schema: SchemaRef,
        props: WriterPropertiesBuilder,
        by_columns: Option<&[&str]>,
        group_bytes: usize,
    ) -> Result<Encoder, String> {
        let props = props
            .set_max_row_group_row_count(Some(MAX_ROW_GROUP_ROWS))
            .set_max_row_group_bytes(Some(group_bytes))
            .build();
        Ok(Encoder(match by_columns {
            Some(own) => Inner::Columns(Columns::new(file, schema, props, own)?),
            None => Inner::Thread(Thread::new(file, schema, props)?),
        }))
    }

    /// As [`Encoder::new`] without `by_columns`, encoding on the caller's thread.
    pub fn here(
        file: File,
        schema: SchemaRef,
        props: WriterPropertiesBuilder,
    ) -> Result<Encoder, String> {
        let props = props
            .set_max_row_group_row_count(Some(MAX_ROW_GROUP_ROWS))
            .set_max_row_group_bytes(Some(MAX_ROW_GROUP_BYTES))
            .build();
        let writer = ArrowWriter::try_new(file, schema, Some(props)).map_err(|e| e.to_string())?;
        Ok(Encoder(Inner::Here(Box::new(writer))))
    }

    /// Hands `batch` over to be written.
    pub fn write(&mut self, batch: RecordBatch) -> Result<(), String> {
        match &mut self.0 {
            Inner::Thread(t) => t.write(ToThread::Batch(batch)),
            Inner::Columns(c) => c.write(batch),
            Inner::Here(w) => w.write(&batch).map_err(|e| e.to_string()),
        }
    }

    /// Closes the row group being filled before its bounds would: its pages leave memory
    /// for the file (a writer of many files keeps their sum bounded).
    pub fn end_group(&mut self) -> Result<(), String> {
        match &mut self.0 {
            Inner::Thread(t) => t.write(ToThread::EndGroup),
            Inner::Columns(c) => {
                c.end_group();
                Ok(())
            }
            Inner::Here(w) => w.flush().map_err(|e| e.to_string()),
        }
    }

    /// Writes what is handed over and the footer.
    pub fn close(self) -> Result<(), String> {
        match self.0 {
            Inner::Thread(t) => t.close(),
            Inner::Columns(c) => c.close(),
            Inner::Here(w) => w.close().map(drop).map_err(|e| e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, BinaryArray, Int64Array};
    use arrow_schema::Field;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::basic::Compression;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("n", DataType::Int64, false),
            Field::new("blob", DataType::Binary, true),
        ]))
    }

    fn props() -> WriterPropertiesBuilder {
        WriterProperties::builder().set_compression(Compression::ZSTD(Default::default()))
    }

    /// `rows` rows from `start`: `n` counts, `blob` is `bytes` bytes of noise in every
    /// third row (null elsewhere).
    fn batch(start: i64, rows: usize, bytes: usize, seed: &mut u64) -> RecordBatch {
        let n: ArrayRef = Arc::new(Int64Array::from_iter_values(start..start + rows as i64));
        let blob: BinaryArray = (0..rows)
            .map(|i| {
                (i % 3 == 0).then(|| {
                    (0..bytes)
                        .map(|_| {
                            *seed ^= *seed << 13;
                            *seed ^= *seed >> 7;
                            *seed ^= *seed << 17;
                            *seed as u8
                        })
                        .collect::<Vec<u8>>()
                })
            })
            .collect();
        RecordBatch::try_new(schema(), vec![n, Arc::new(blob)]).unwrap()
    }

    /// Rows per row group and encoded bytes per row group; and that `n` reads back as
    /// 0, 1, 2, … in order.
    fn groups(path: &std::path::Path, rows: i64) -> Vec<(i64, i64)> {
        let reader = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
        let sizes = (0..reader.metadata().num_row_groups())
            .map(|g| {
                let g = reader.metadata().row_group(g);
                (g.num_rows(), g.compressed_size())
            })
            .collect();
        let batches = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let mut next = 0;
        for b in batches {
            let b = b.unwrap();
            let n = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            for v in n.values() {
                assert_eq!(*v, next);
                next += 1;
            }
        }
        assert_eq!(next, rows);
        sizes
    }

    /// An encoder of the test schema into a new file at `path`, labels by columns.
    fn test_encoder(path: &std::path::Path) -> Encoder {
        Encoder::new(
            File::create(path).unwrap(),
            schema(),
            props(),
            Some(&labels::LABELS),
        )
        .unwrap()
    }

    #[test]
    fn row_groups_close_at_their_row_count_and_rows_keep_their_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut encoder = test_encoder(&path);
        let mut seed = 1;
        let (mut start, total) = (0i64, MAX_ROW_GROUP_ROWS as i64 * 5 / 2);
        while start < total {
            let rows = 10_000.min(total - start) as usize;
            encoder.write(batch(start, rows, 0, &mut seed)).unwrap();
            start += rows as i64;
        }
        encoder.close().unwrap();
        let rows: Vec<i64> = groups(&path, total).iter().map(|g| g.0).collect();
        let max = MAX_ROW_GROUP_ROWS as i64;
        assert_eq!(rows, [max, max, total - 2 * max]);
    }

    #[test]
    fn row_groups_close_before_their_encoded_size_passes_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut encoder = test_encoder(&path);
        let mut seed = 7;
        // 40 MiB of noise in batches of 1,500 rows (500 of 2,000 bytes each).
        let rows = 1500;
        let batches = (40 << 20) / (rows / 3 * 2000);
        for k in 0..batches {
            encoder
                .write(batch((k * rows) as i64, rows, 2000, &mut seed))
                .unwrap();
        }
        encoder.close().unwrap();
        let sizes = groups(&path, (batches * rows) as i64);
        assert!(sizes.len() >= 3, "{sizes:?}");
        for (rows, bytes) in &sizes {
            assert!(
                *bytes <= MAX_ROW_GROUP_BYTES as i64,
                "{rows} rows, {bytes} bytes"
            );
        }
        // Not closed far before the bound either (the last group holds what is left).
        for (_, bytes) in &sizes[..sizes.len() - 1] {
            assert!(*bytes > (MAX_ROW_GROUP_BYTES as i64) * 3 / 4, "{sizes:?}");
        }
    }

    #[test]
    fn the_same_batches_make_the_same_bytes_on_every_run() {
        // Row groups closed by their encoded size, and the columns of very different
        // costs, so that one column's thread runs ahead of the other's.
        let mut seed = 11;
        let rows = 1500;
        let batches: Vec<RecordBatch> = (0..(24 << 20) / (rows / 3 * 2000))
            .map(|k| batch((k * rows) as i64, rows, 2000, &mut seed))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let runs: Vec<Vec<u8>> = (0..4)
            .map(|run| {
                let path = dir.path().join(format!("{run}.parquet"));
                let mut encoder = test_encoder(&path);
                for b in &batches {
                    encoder.write(b.clone()).unwrap();
                }
                encoder.close().unwrap();
                assert!(groups(&path, (batches.len() * rows) as i64).len() >= 3);
                std::fs::read(&path).unwrap()
            })
            .collect();
        for run in &runs[1..] {
            assert!(run == &runs[0], "the runs' bytes differ");
        }
    }

    #[test]
    fn an_encoder_dropped_unfinished_ends_its_threads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut encoder = test_encoder(&path);
        let mut seed = 3;
        for k in 0..10 {
            encoder.write(batch(k * 100, 100, 10, &mut seed)).unwrap();
        }
        drop(encoder);
        // An empty table is a file with a footer and no row group.
        let empty = dir.path().join("empty.parquet");
        test_encoder(&empty).close().unwrap();
        assert!(groups(&empty, 0).is_empty());
    }

    /// `rows` rows of a `channel` dictionary column and a nullable `entity` column: runs
    /// and single values, nulls in runs and alone, and a name longer than the statistics'
    /// 64 bytes.
    fn labelled(rows: usize) -> (SchemaRef, Vec<RecordBatch>) {
        use arrow_array::{DictionaryArray, StringArray};
        let schema = Arc::new(Schema::new(vec![
            Field::new("n", DataType::Int64, false),
            Field::new(
                "channel",
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                false,
            ),
            Field::new("entity", DataType::Utf8, true),
        ]));
        let long = format!("{}é~", "z".repeat(63));
        let names: Vec<String> = (0..30)
            .map(|c| format!("ch{c:02}"))
            .chain([long.clone()])
            .collect();
        let batches = (0..rows)
            .step_by(4096)
            .map(|start| {
                let range = start..(start + 4096).min(rows);
                let n: ArrayRef = Arc::new(Int64Array::from_iter_values(
                    range.clone().map(|r| r as i64),
                ));
                let keys = arrow_array::Int32Array::from_iter_values(
                    range
                        .clone()
                        .map(|r| ((r / 7) % 17 + (r % 3) * (r % 11)) as i32 % 31),
                );
                let names = Arc::new(StringArray::from_iter_values(&names));
                let channel: ArrayRef = Arc::new(DictionaryArray::try_new(keys, names).unwrap());
                let entity: ArrayRef =
                    Arc::new(StringArray::from_iter(range.map(|r| match r % 1000 {
                        0..=99 => None,
                        500 => Some(long.clone()),
                        x if x % 37 == 0 => None,
                        x => Some(format!("e{}", x / 90)),
                    })));
                RecordBatch::try_new(schema.clone(), vec![n, channel, entity]).unwrap()
            })
            .collect();
        (schema, batches)
    }

    #[test]
    fn label_columns_read_back_as_the_crate_writes_them() {
        let dir = tempfile::tempdir().unwrap();
        let (schema, batches) = labelled(45_000);
        let mut files = Vec::new();
        for (name, by_columns) in [("crate", None), ("labels", Some(&labels::LABELS[..]))] {
            let path = dir.path().join(format!("{name}.parquet"));
            let props = props()
                .set_dictionary_enabled(false)
                .set_column_dictionary_enabled("channel".into(), true)
                .set_column_dictionary_enabled("entity".into(), true);
            super::super::encode_to(&path, schema.clone(), props, by_columns, &batches);
            files.push(path);
        }
        let (a, b) = (
            super::super::read_back(&files[0]),
            super::super::read_back(&files[1]),
        );
        // The reader's batches are of a fixed size: the same in both files.
        assert_eq!(a, b);
        assert_eq!(b.iter().map(RecordBatch::num_rows).sum::<usize>(), 45_000);

        let meta =
            |path: &std::path::Path| SerializedFileReader::new(File::open(path).unwrap()).unwrap();
        let (ra, rb) = (meta(&files[0]), meta(&files[1]));
        for column in 1..3 {
            let x = ra.metadata().row_group(0).column(column);
            let y = rb.metadata().row_group(0).column(column);
            assert_eq!(x.statistics(), y.statistics(), "column {column}");
            assert_eq!(x.num_values(), y.num_values());
            assert_eq!(x.compression(), y.compression());
            assert!(y.dictionary_page_offset().is_some());
        }
        // The long name bounds the statistics without being them.
        let channel = rb.metadata().row_group(0).column(1).statistics().unwrap();
        assert!(!channel.max_is_exact());
        assert_eq!(channel.min_bytes_opt(), Some(&b"ch00"[..]));
        let entity = rb.metadata().row_group(0).column(2).statistics().unwrap();
        assert_eq!(entity.null_count_opt(), Some(45 * 125));
        // Three data pages of at most 20,000 rows, found through the offset index.
        let options = parquet::file::serialized_reader::ReadOptionsBuilder::new()
            .with_page_index()
            .build();
        let reader =
            SerializedFileReader::new_with_options(File::open(&files[1]).unwrap(), options)
                .unwrap();
        let offsets = reader.metadata().offset_index().unwrap();
        let pages: Vec<i64> = offsets[0][1]
            .page_locations()
            .iter()
            .map(|p| p.first_row_index)
            .collect();
        assert_eq!(pages, [0, 20_000, 40_000]);
    }
}
