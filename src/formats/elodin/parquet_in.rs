//! One archetype's Parquet file: footer facts, and batches read one row group at a time.
//!
//! The parquet crate is third-party code running on untrusted bytes, and some damaged
//! files make it panic. Nothing here relies on catching that: what the crate is given is
//! checked first. The footer is read and bounded here, every column chunk's byte range is
//! checked against the file, the embedded Arrow schema is read by `arrow_meta` (the crate's
//! own conversion panics on unknown types), and pages reach the crate's decoders only
//! through `pages`, which reads and checks each one (see there).
//!
//! Batches are decoded ahead of the one being read, so that decoding (page decompression
//! and Arrow decoding, most of the work of a full read) overlaps with turning rows into
//! records. A file of 4 MiB or more has threads of its own: on a machine with two cores or
//! more its columns are split between two decoding threads (by compressed size); each
//! decodes the same rows of its own columns and the batches are put together here. Memory
//! stays bounded by six batches per decoding thread (see [`BATCH_ROWS`]) plus one page per
//! column being decoded. A smaller file is decoded by the replay's [`DecodePool`], whose
//! threads serve all its small files, or, without a pool, on the reading thread when a
//! batch is asked for.

use std::fs::File;
use std::path::Path;
use std::sync::mpsc::Receiver;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReader;
use parquet::arrow::{parquet_to_arrow_field_levels, parquet_to_arrow_schema, ProjectionMask};
use parquet::basic::Compression;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use parquet::file::statistics::Statistics;

use super::arrow_meta;
use super::columns::ColumnView;
use super::decode_pool::{DecodePool, Decoded, Pooled};
use super::pages::{Chunk, Codec, FileChunks, Input, Leaf, RandomAccess};
use super::thrift::{self, HeaderError};
use crate::formats::worker;

/// Rows per batch. Up to six batches per decoding thread are alive at a time (one being
/// turned into records, four waiting, one being decoded): 1,024 rows of the benchmark's 32 doubles are
/// 256 KiB. The read's CPU time is the same from 1,024 to 8,192 rows, its peak RSS lowest at
/// 1,024 (docs/performance.md, "Read batches and the decoders' slack").
pub const BATCH_ROWS: usize = 1024;

/// Largest footer simrec reads (Elodin's are a few kilobytes; a footer grows with row
/// groups × columns, and this allows about a hundred thousand of them).
const MAX_FOOTER: u64 = 16 << 20;

pub struct ParquetFile {
    /// Arrow schema of the whole file (FixedSizeList where the embedded `ARROW:schema`
    /// says so).
    pub schema: SchemaRef,
    pub rows: u64,
    pub row_groups: usize,
    pub size: u64,
    /// Largest `tick` by the footer's statistics, where they are present.
    pub tick_max: Option<u64>,
    /// The file's pages, until reading starts.
    chunks: Option<FileChunks>,
    /// The decoders, one per group of columns; empty once the file ended.
    readers: Vec<Decoder>,
    /// Rows handed out so far.
    pub rows_read: u64,
}

/// Where a group of columns' batches come from.
enum Decoder {
    /// Decoded ahead on a thread of its own.
    Thread(Receiver<Decoded>),
    /// Decoded ahead by a pool's threads.
    Pooled(Pooled),
    /// Decoded on the reading thread when asked for.
    Inline(Box<ParquetRecordBatchReader>),
}

impl Decoder {
    /// The next batch, `None` at the end; `Err` if a decoding thread stopped without
    /// saying so.
    fn next(&mut self) -> Result<Decoded, ()> {
        match self {
            Decoder::Thread(rx) => rx.recv().map_err(|_| ()),
            Decoder::Pooled(p) => p.recv().ok_or(()),
            Decoder::Inline(reader) => Ok(reader.next().map(|r| r.map_err(|e| e.to_string()))),
        }
    }
}

/// Starts decoding `reader` on a thread of its own. The thread ends after an error or the
/// last batch (announced by `None`), or when the receiver is dropped.
fn spawn(mut reader: ParquetRecordBatchReader) -> Result<Receiver<Decoded>, String> {
    // Four batches of slack: with one, the reading thread and the decoders waited on each
    // other at every 1,024-row batch (docs/performance.md, "Read batches and the decoders'
    // slack").
    let mut ended = false;
    let decoded = std::iter::from_fn(move || {
        if ended {
            return None;
        }
        let item = reader.next().map(|r| r.map_err(|e| e.to_string()));
        ended = !matches!(item, Some(Ok(_)));
        Some(item)
    });
    worker::ahead("parquet-decode", 4, decoded)
        .map_err(|e| format!("cannot start a decoding thread: {e}"))
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

/// Reads and decodes the footer: (metadata, offset where it starts).
fn footer(file: &dyn RandomAccess, size: u64) -> Result<(ParquetMetaData, u64), String> {
    if size < 12 {
        return Err(format!("{size} bytes: too short for a Parquet file"));
    }
    let mut tail = [0u8; 8];
    file.read_exact_at(&mut tail, size - 8)
        .map_err(|e| e.to_string())?;
    let mut head = [0u8; 4];
    file.read_exact_at(&mut head, 0)
        .map_err(|e| e.to_string())?;
    match &tail[4..] {
        b"PAR1" => {}
        b"PARE" => return Err("an encrypted footer (simrec reads plain Parquet)".into()),
        _ => return Err("no Parquet magic at the end (truncated?)".into()),
    }
    if &head != b"PAR1" {
        return Err("no Parquet magic at the start".into());
    }
    let len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    if len > size - 12 {
        return Err(format!(
            "the footer claims {len} bytes of a {size}-byte file"
        ));
    }
    if len > MAX_FOOTER {
        return Err(format!(
            "a footer of {len} bytes (simrec reads up to {MAX_FOOTER})"
        ));
    }
    let start = size - 8 - len;
    let mut buf = vec![0u8; len as usize];
    file.read_exact_at(&mut buf, start)
        .map_err(|e| e.to_string())?;
    match thrift::walk_struct(&buf) {
        Ok(_) => {}
        Err(HeaderError::Short) => return Err("the footer's metadata ends early".into()),
        Err(HeaderError::Bad(why)) => {
            return Err(format!("the footer's metadata is corrupt: {why}"))
        }
    }
    let meta = ParquetMetaDataReader::decode_metadata(&buf).map_err(|e| e.to_string())?;
    Ok((meta, start))
}

/// Checks every row group and column chunk against the schema and the file, and gives
/// the leaf columns and the chunks' byte ranges.
fn check_chunks(
    meta: &ParquetMetaData,
    data_end: u64,
) -> Result<(Vec<Leaf>, Vec<Vec<Chunk>>), String> {
    let descr = meta.file_metadata().schema_descr();
    let leaves: Vec<Leaf> = descr
        .columns()
        .iter()
        .map(|c| Leaf {
            physical: c.physical_type(),
            max_def: c.max_def_level(),
            max_rep: c.max_rep_level(),
        })
        .collect();
    let total = meta.file_metadata().num_rows();
    let mut rows_sum: i64 = 0;
    let mut chunks = Vec::with_capacity(meta.num_row_groups());
    for (g, rg) in meta.row_groups().iter().enumerate() {
        let rows = u64::try_from(rg.num_rows())
            .map_err(|_| format!("row group {g} declares {} rows", rg.num_rows()))?;
        rows_sum = rows_sum.saturating_add(rg.num_rows());
        if rg.columns().len() != leaves.len() {
            return Err(format!(
                "row group {g} has {} column chunks for {} columns",
                rg.columns().len(),
                leaves.len()
            ));
        }
        let mut group = Vec::with_capacity(leaves.len());
        for (i, (c, leaf)) in rg.columns().iter().zip(&leaves).enumerate() {
            let at = || format!("row group {g}, column {}", descr.column(i).path());
            if c.column_type() != leaf.physical {
                return Err(format!(
                    "{}: a {} chunk in a {} column",
                    at(),
                    c.column_type(),
                    leaf.physical
                ));
            }
            let data = c.data_page_offset();
            let start = match c.dictionary_page_offset() {
                Some(d) if d >= 4 && d < data => d,
                _ => data,
            };
            let len = c.compressed_size();
            let end = start.checked_add(len);
            let (Ok(start), Some(Ok(end))) = (u64::try_from(start), end.map(u64::try_from)) else {
                return Err(format!(
                    "{}: a byte range of {len} bytes at offset {start}",
                    at()
                ));
            };
            if start < 4 || len < 0 || end > data_end {
                return Err(format!(
                    "{}: bytes {start}..{end}, outside the data of the file (4..{data_end})",
                    at()
                ));
            }
            let values = u64::try_from(c.num_values())
                .map_err(|_| format!("{}: {} values", at(), c.num_values()))?;
            let codec = match c.compression() {
                Compression::UNCOMPRESSED => Codec::None,
                Compression::ZSTD(_) => Codec::Zstd,
                _ => Codec::Other,
            };
            group.push(Chunk {
                start,
                end,
                codec,
                values,
                rows,
            });
        }
        chunks.push(group);
    }
    if rows_sum != total {
        return Err(format!(
            "the footer declares {total} rows but its row groups hold {rows_sum}"
        ));
    }
    Ok((leaves, chunks))
}

/// The file's Arrow schema: what the Parquet schema says, with lists turned into
/// FixedSizeList where the embedded Arrow schema says so (as the parquet crate would).
fn arrow_schema(meta: &ParquetMetaData) -> Result<Schema, String> {
    let file_meta = meta.file_metadata();
    let schema =
        parquet_to_arrow_schema(file_meta.schema_descr(), None).map_err(|e| e.to_string())?;
    let embedded = file_meta
        .key_value_metadata()
        .into_iter()
        .flatten()
        .find(|kv| kv.key == arrow_meta::KEY)
        .and_then(|kv| kv.value.as_deref());
    let Some(encoded) = embedded else {
        return Ok(schema);
    };
    let fixed = arrow_meta::fixed_lists(encoded)?;
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match (f.data_type(), fixed.get(f.name())) {
            (DataType::List(item), Some(Some(n))) => f.as_ref().clone().with_data_type(
                DataType::FixedSizeList(item.clone(), i32::try_from(*n).unwrap_or(i32::MAX)),
            ),
            _ => f.as_ref().clone(),
        })
        .collect();
    Ok(Schema::new(fields))
}

impl ParquetFile {
    /// Opens the file and reads its footer.
    pub fn open(path: &Path) -> Result<ParquetFile, String> {
        let file = File::open(path).map_err(|e| e.to_string())?;
        Self::from_input(Arc::new(file))
    }

    /// Reads the footer of a file held by `input`.
    pub fn from_input(input: Input) -> Result<ParquetFile, String> {
        let size = input.len();
        let (meta, data_end) = footer(input.as_ref(), size)?;
        let (leaves, chunks) = check_chunks(&meta, data_end)?;
        let schema = Arc::new(arrow_schema(&meta)?);
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
            schema,
            rows: u64::try_from(file_meta.num_rows()).unwrap_or(0),
            row_groups: meta.num_row_groups(),
            size,
            tick_max,
            chunks: Some(FileChunks {
                file: input,
                metadata: Arc::new(meta),
                leaves,
                chunks,
            }),
            readers: Vec::new(),
            rows_read: 0,
        })
    }

    /// Starts reading the named top-level columns (those that exist); a small file is
    /// decoded by `pool`'s threads, or without one on the reading thread.
    pub fn start(
        &mut self,
        columns: &[&str],
        batch_rows: usize,
        pool: Option<&mut DecodePool>,
    ) -> Result<(), String> {
        match &self.chunks {
            Some(c) if c.file.len() >= SPLIT_BYTES => {
                self.start_with(columns, batch_rows, decoding_threads(), None)
            }
            _ => self.start_with(columns, batch_rows, 0, pool),
        }
    }

    /// As [`ParquetFile::start`], with the columns split between at most `threads`
    /// decoding threads of their own; with 0, by `pool` or on the reading thread.
    fn start_with(
        &mut self,
        columns: &[&str],
        batch_rows: usize,
        threads: usize,
        mut pool: Option<&mut DecodePool>,
    ) -> Result<(), String> {
        let Some(chunks) = self.chunks.take() else {
            return Err("already started".into());
        };
        let descr = chunks.metadata.file_metadata().schema_descr();
        let roots: Vec<usize> = columns
            .iter()
            .filter_map(|c| self.schema.index_of(c).ok())
            .collect();
        for group in split(&chunks, &roots, threads.max(1)) {
            let mask = ProjectionMask::roots(descr, group);
            let levels = parquet_to_arrow_field_levels(descr, mask, Some(self.schema.fields()))
                .map_err(|e| e.to_string())?;
            let reader = ParquetRecordBatchReader::try_new_with_row_groups(
                &levels, &chunks, batch_rows, None,
            )
            .map_err(|e| e.to_string())?;
            self.readers.push(match (threads, pool.as_deref_mut()) {
                (0, Some(pool)) => Decoder::Pooled(
                    pool.add(reader)
                        .map_err(|e| format!("cannot start a decoding thread: {e}"))?,
                ),
                (0, None) => Decoder::Inline(Box::new(reader)),
                _ => Decoder::Thread(spawn(reader)?),
            });
        }
        Ok(())
    }

    /// The next batch, `None` at the end. Errors end the file.
    pub fn next_batch(&mut self) -> Option<Result<Batch, String>> {
        if self.readers.is_empty() {
            return None;
        }
        // Every decoding thread reads the same rows (batches of `batch_rows` rows across
        // row groups), each for its own columns.
        let mut rows = None;
        let mut views = Vec::new();
        for reader in &mut self.readers {
            let got = match reader.next() {
                Ok(Some(Ok(b))) => Some(b),
                Ok(None) => None,
                Ok(Some(Err(e))) => {
                    self.readers.clear();
                    return Some(Err(e));
                }
                // The thread ended without saying so.
                Err(_) => {
                    self.readers.clear();
                    return Some(Err("the Parquet decoder stopped".into()));
                }
            };
            let n = got.as_ref().map(RecordBatch::num_rows);
            if rows.is_some_and(|r| r != n) {
                self.readers.clear();
                return Some(Err(
                    "the file's columns hold different numbers of rows".into()
                ));
            }
            rows = Some(n);
            if let Some(batch) = got {
                let schema = batch.schema();
                views.extend(
                    schema
                        .fields()
                        .iter()
                        .zip(batch.columns())
                        .filter_map(|(f, c)| ColumnView::new(c).map(|v| (f.name().clone(), v))),
                );
            }
        }
        let Some(Some(rows)) = rows else {
            self.readers.clear();
            return None;
        };
        self.rows_read += rows as u64;
        Some(Ok(Batch { rows, views }))
    }
}

/// Decoding threads per file: two where two cores exist (decoding is about four fifths of
/// a read's work, so the reading thread and two decoders keep two cores busy), else one.
pub fn decoding_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(2))
}

/// Files smaller than this are decoded on one thread (a second one would not pay for
/// itself).
const SPLIT_BYTES: u64 = 4 << 20;

/// The root columns in up to `threads` groups of about equal compressed size (largest
/// first, each to the lightest group), each group in file order.
fn split(chunks: &FileChunks, roots: &[usize], threads: usize) -> Vec<Vec<usize>> {
    let n = threads.clamp(1, roots.len().max(1));
    if n == 1 {
        return vec![roots.to_vec()];
    }
    let descr = chunks.metadata.file_metadata().schema_descr();
    let mut sizes: Vec<(u64, usize)> = roots.iter().map(|&r| (0, r)).collect();
    for group in &chunks.chunks {
        // Row groups were checked to hold one chunk per leaf column.
        for (leaf, chunk) in group.iter().enumerate().take(descr.num_columns()) {
            let root = descr.get_column_root_idx(leaf);
            if let Some(s) = sizes.iter_mut().find(|(_, r)| *r == root) {
                s.0 += chunk.end - chunk.start;
            }
        }
    }
    sizes.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut groups: Vec<(u64, Vec<usize>)> = vec![(0, Vec::new()); n];
    for (size, root) in sizes {
        if let Some(g) = groups.iter_mut().min_by_key(|g| g.0) {
            g.0 += size;
            g.1.push(root);
        }
    }
    groups
        .into_iter()
        .map(|(_, mut g)| {
            g.sort_unstable();
            g
        })
        .filter(|g| !g.is_empty())
        .collect()
}

/// Opens a file and starts reading `columns`.
pub fn open_parquet(
    path: &Path,
    columns: &[&str],
    batch_rows: usize,
) -> Result<ParquetFile, String> {
    let mut f = ParquetFile::open(path)?;
    f.start(columns, batch_rows, None)?;
    Ok(f)
}

/// Decodes every column of a file held in memory and touches every row: the rows read.
/// For the fuzzer and the damage sweeps: whatever the bytes, this returns an error or the
/// rows, and never panics.
pub fn decode_all(bytes: Vec<u8>) -> Result<(u64, u64), String> {
    let mut f = ParquetFile::from_input(Arc::new(bytes))?;
    let names: Vec<String> = f.schema.fields().iter().map(|c| c.name().clone()).collect();
    let columns: Vec<&str> = names.iter().map(String::as_str).collect();
    // Two decoding threads whatever the size, so that damage reaches the path where one
    // thread fails while the other goes on.
    f.start_with(&columns, 1024, 2, None)?;
    let (mut rows, mut readable) = (0u64, 0u64);
    while let Some(batch) = f.next_batch() {
        let batch = batch?;
        rows += batch.rows as u64;
        for (_, view) in &batch.views {
            readable += view.readable_rows() as u64;
        }
    }
    Ok((rows, readable))
}

#[cfg(test)]
mod tests {
    use super::super::columns::RowProblem;
    use super::*;
    use crate::model::Array;

    fn body(world: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/elodin")
            .join(world)
            .join("world/body.parquet")
    }

    /// Every row of every column as arrays, read with `threads` decoding threads in
    /// batches of `batch` rows.
    fn read(path: &Path, threads: usize, batch: usize) -> (Vec<usize>, Vec<(String, Array)>) {
        let mut f = ParquetFile::open(path).unwrap();
        let names: Vec<String> = f.schema.fields().iter().map(|c| c.name().clone()).collect();
        let columns: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut pool = DecodePool::default();
        // Threads 0: decoded inline; usize::MAX: decoded by a pool.
        let (threads, pool) = match threads {
            usize::MAX => (0, Some(&mut pool)),
            n => (n, None),
        };
        f.start_with(&columns, batch, threads, pool).unwrap();
        assert_eq!(f.readers.len(), threads.clamp(1, names.len()));
        let (mut sizes, mut values) = (Vec::new(), Vec::new());
        while let Some(b) = f.next_batch() {
            let b = b.unwrap();
            sizes.push(b.rows);
            for name in &names {
                let view = b.view(name).unwrap();
                let mut cells = Vec::new();
                for row in 0..b.rows {
                    let (start, len) = match view.range(row, 1) {
                        Ok(r) => r,
                        Err(RowProblem::Length(n)) => view.range(row, n).unwrap(),
                        Err(e) => panic!("{name} row {row}: {e:?}"),
                    };
                    cells.push(view.array(start, len, &[len]));
                }
                values.extend(cells.into_iter().map(|a| (name.clone(), a)));
            }
        }
        assert_eq!(f.rows_read, f.rows);
        (sizes, values)
    }

    #[test]
    fn two_decoding_threads_a_pool_and_none_read_what_one_reads() {
        // ball_1200: one body over 1201 ticks, five tensor columns plus tick and entity_id.
        let path = body("ball_1200");
        let (sizes, one) = read(&path, 1, 500);
        assert_eq!(sizes, [500, 500, 201]);
        for threads in [0, usize::MAX] {
            let (sizes0, other) = read(&path, threads, 500);
            assert_eq!(sizes0, sizes);
            assert_eq!(other, one);
        }
        let (sizes2, two) = read(&path, 2, 500);
        assert_eq!(sizes2, sizes);
        assert_eq!(two, one);
        assert_eq!(one.len(), 1201 * 7);
    }

    #[test]
    fn a_pool_serves_its_files_when_one_is_dropped_unfinished() {
        let mut pool = DecodePool::default();
        let mut files: Vec<ParquetFile> = ["ball_1200", "ball_1200", "spin_120"]
            .iter()
            .map(|w| {
                let mut f = ParquetFile::open(&body(w)).unwrap();
                f.start(&["tick", "entity_id"], 100, Some(&mut pool))
                    .unwrap();
                f
            })
            .collect();
        assert!(files[0].next_batch().unwrap().is_ok());
        files.remove(0);
        for mut f in files {
            while let Some(b) = f.next_batch() {
                b.unwrap();
            }
            assert_eq!(f.rows_read, f.rows);
        }
        drop(pool);
    }

    #[test]
    fn columns_are_split_by_size_largest_first() {
        let mut f = ParquetFile::open(&body("ball_1200")).unwrap();
        let chunks = f.chunks.take().unwrap();
        let roots: Vec<usize> = (0..f.schema.fields().len()).collect();
        assert_eq!(split(&chunks, &roots, 1), vec![roots.clone()]);
        let groups = split(&chunks, &[3], 2);
        assert_eq!(groups, vec![vec![3]]);
        let groups = split(&chunks, &roots, 2);
        assert_eq!(groups.len(), 2);
        let mut all: Vec<usize> = groups.concat();
        all.sort_unstable();
        assert_eq!(all, roots);
        let size = |g: &[usize]| -> u64 {
            let descr = chunks.metadata.file_metadata().schema_descr();
            chunks
                .chunks
                .iter()
                .flat_map(|rg| rg.iter().enumerate())
                .filter(|(leaf, _)| g.contains(&descr.get_column_root_idx(*leaf)))
                .map(|(_, c)| c.end - c.start)
                .sum()
        };
        let (a, b) = (size(&groups[0]), size(&groups[1]));
        // Greedy halves: neither group is more than the largest column heavier.
        let largest = roots.iter().map(|&r| size(&[r])).max().unwrap();
        assert!(a.abs_diff(b) <= largest, "{a} vs {b}");
    }
}
