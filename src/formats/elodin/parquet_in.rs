//! One archetype's Parquet file: footer facts, and batches read one row group at a time.
//!
//! The parquet crate is third-party code running on untrusted bytes: every call into it
//! is wrapped so that a panic inside it becomes an error naming the file.
//!
//! Batches are decoded on a thread of their own, one batch ahead of the one being read
//! (a channel of one batch), so that decoding (page decompression and Arrow decoding, about
//! half the work of a full read) overlaps with turning rows into records. Memory stays
//! bounded by three batches per file: the one in use, one waiting, one being decoded.

use std::fs::File;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use parquet::file::statistics::Statistics;

use super::columns::ColumnView;

/// Rows per batch: bounded memory, and cheap per-batch overhead.
pub const BATCH_ROWS: usize = 8192;

pub struct ParquetFile {
    /// Arrow schema of the whole file (the embedded `ARROW:schema` when present).
    pub schema: SchemaRef,
    pub rows: u64,
    pub row_groups: usize,
    pub size: u64,
    /// Largest `tick` by the footer's statistics, where they are present.
    pub tick_max: Option<u64>,
    builder: Option<ParquetRecordBatchReaderBuilder<File>>,
    /// Batches decoded ahead by the decoding thread.
    reader: Option<Receiver<Result<RecordBatch, String>>>,
    /// Rows handed out so far.
    pub rows_read: u64,
}

/// One step of a reader, with its errors and panics as text.
fn decode(reader: &mut ParquetRecordBatchReader) -> Option<Result<RecordBatch, String>> {
    match catch_unwind(AssertUnwindSafe(|| reader.next())) {
        Ok(None) => None,
        Ok(Some(Ok(b))) => Some(Ok(b)),
        Ok(Some(Err(e))) => Some(Err(e.to_string())),
        Err(p) => Some(Err(panic_text(p))),
    }
}

/// Starts decoding `reader` on a thread of its own. The thread ends after an error or the
/// last batch, or when the receiver is dropped.
fn spawn(
    mut reader: ParquetRecordBatchReader,
) -> Result<Receiver<Result<RecordBatch, String>>, String> {
    let (tx, rx) = sync_channel(1);
    std::thread::Builder::new()
        .name("parquet-decode".into())
        .spawn(move || {
            while let Some(item) = decode(&mut reader) {
                let last = item.is_err();
                if tx.send(item).is_err() || last {
                    return;
                }
            }
        })
        .map_err(|e| format!("cannot start a decoding thread: {e}"))?;
    Ok(rx)
}

/// One decoded batch: the views of the columns that were asked for.
pub struct Batch {
    pub rows: usize,
    views: Vec<(String, ColumnView)>,
}

impl Batch {
    pub fn view(&self, name: &str) -> Option<&ColumnView> {
        self.views.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "the Parquet decoder failed".into())
}

impl ParquetFile {
    /// Opens the file and reads its footer.
    pub fn open(path: &Path) -> Result<ParquetFile, String> {
        let file = File::open(path).map_err(|e| e.to_string())?;
        let size = file.metadata().map_err(|e| e.to_string())?.len();
        let builder = catch_unwind(AssertUnwindSafe(|| {
            ParquetRecordBatchReaderBuilder::try_new(file)
        }))
        .map_err(panic_text)?
        .map_err(|e| e.to_string())?;
        let meta = builder.metadata().clone();
        let file_meta = meta.file_metadata();
        let tick_leaf = file_meta
            .schema_descr()
            .columns()
            .iter()
            .position(|c| c.path().string() == "tick");
        let mut tick_max: Option<u64> = None;
        if let Some(leaf) = tick_leaf {
            for rg in meta.row_groups() {
                match rg.columns().get(leaf).and_then(|c| c.statistics()) {
                    Some(Statistics::Int64(s)) => {
                        if let Some(&m) = s.max_opt() {
                            let m = m as u64;
                            tick_max = Some(tick_max.map_or(m, |t| t.max(m)));
                        }
                    }
                    _ => {
                        tick_max = None;
                        break;
                    }
                }
            }
        }
        Ok(ParquetFile {
            schema: builder.schema().clone(),
            rows: u64::try_from(file_meta.num_rows()).unwrap_or(0),
            row_groups: meta.num_row_groups(),
            size,
            tick_max,
            builder: Some(builder),
            reader: None,
            rows_read: 0,
        })
    }

    /// Starts reading the named top-level columns (those that exist).
    pub fn start(&mut self, columns: &[&str], batch_rows: usize) -> Result<(), String> {
        let Some(builder) = self.builder.take() else {
            return Err("already started".into());
        };
        let roots: Vec<usize> = columns
            .iter()
            .filter_map(|c| self.schema.index_of(c).ok())
            .collect();
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
        let reader = catch_unwind(AssertUnwindSafe(|| {
            builder
                .with_projection(mask)
                .with_batch_size(batch_rows)
                .build()
        }))
        .map_err(panic_text)?
        .map_err(|e| e.to_string())?;
        self.reader = Some(spawn(reader)?);
        Ok(())
    }

    /// The next batch, `None` at the end. Errors (and decoder panics) end the file.
    pub fn next_batch(&mut self) -> Option<Result<Batch, String>> {
        let reader = self.reader.as_mut()?;
        let batch = match reader.recv() {
            // The thread has ended: after the last batch.
            Err(_) => {
                self.reader = None;
                return None;
            }
            Ok(Ok(b)) => b,
            Ok(Err(e)) => {
                self.reader = None;
                return Some(Err(e));
            }
        };
        let schema = batch.schema();
        let views = schema
            .fields()
            .iter()
            .zip(batch.columns())
            .filter_map(|(f, c)| ColumnView::new(c).map(|v| (f.name().clone(), v)))
            .collect();
        self.rows_read += batch.num_rows() as u64;
        Some(Ok(Batch {
            rows: batch.num_rows(),
            views,
        }))
    }
}

/// Opens a file and starts reading `columns`.
pub fn open_parquet(
    path: &Path,
    columns: &[&str],
    batch_rows: usize,
) -> Result<ParquetFile, String> {
    let mut f = ParquetFile::open(path)?;
    f.start(columns, batch_rows)?;
    Ok(f)
}
