//! 64-bit integer columns stored as differences (`DELTA_BINARY_PACKED`), encoded here
//! instead of by the `parquet` crate: the lake's `time_ns`, `time_utc` and `frame`, where a
//! frame's rows are one value repeated, so most differences are zero. The crate's encoder
//! takes each value through its generic bit writer, and was the largest single cost of an
//! Icarus lake after the label columns (docs/performance.md, "Lake, sixth pass"); here a
//! miniblock of zeros costs its width byte only. The pages are what the crate writes (its
//! block of 128 values in 4 miniblocks, v1 data pages of at most [`PAGE_ROWS`] rows,
//! definition levels first where the column is nullable), read by every engine the lake is
//! checked with (`scripts/interop/lake.sh`).

use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use bytes::Bytes;
use parquet::basic::{Compression, Encoding};
use parquet::column::writer::ColumnCloseResult;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::statistics::{Statistics, ValueStatistics};
use parquet::schema::types::ColumnDescPtr;

use super::chunk::{definition_levels, varint, OwnColumn, Pages, Summary};
use super::labels::PAGE_ROWS;

/// Values of a block, and of a miniblock (the crate's: readers such as Spark take block
/// sizes that are multiples of 128 and miniblocks of multiples of 32).
const BLOCK: usize = 128;
const MINI: usize = 32;

/// Whether a column of this type, with these properties, can be written here.
pub fn takes(data_type: &DataType, descr: &ColumnDescPtr, props: &WriterProperties) -> bool {
    let path = descr.path();
    matches!(data_type, DataType::Int64 | DataType::Timestamp(_, _))
        && descr.max_rep_level() == 0
        && descr.max_def_level() <= 1
        && props.encoding(path) == Some(Encoding::DELTA_BINARY_PACKED)
        && !props.dictionary_enabled(path)
        && matches!(
            props.compression(path),
            Compression::ZSTD(_) | Compression::UNCOMPRESSED
        )
}

/// One column chunk being written.
pub struct DeltaColumn {
    pages: Pages,
    statistics: bool,
    /// The values of the page being filled (its rows that are not null).
    values: Vec<i64>,
    /// Its definition levels, once a row of it is null (until then every row has a value).
    levels: Vec<u32>,
    /// Rows of the page being filled, and of the chunk.
    pending: usize,
    rows: usize,
    nulls: u64,
    min_max: Option<(i64, i64)>,
}

impl DeltaColumn {
    pub fn new(descr: ColumnDescPtr, props: &WriterProperties) -> Result<DeltaColumn, String> {
        let path = descr.path();
        Ok(DeltaColumn {
            statistics: props.statistics_enabled(path) != EnabledStatistics::None,
            pages: Pages::new(descr.clone(), props.compression(path))?,
            values: Vec::with_capacity(PAGE_ROWS),
            levels: Vec::new(),
            pending: 0,
            rows: 0,
            nulls: 0,
            min_max: None,
        })
    }

    /// Appends rows `values` of which those that `valid` says (all if `None`) have a value.
    fn append(&mut self, values: &[i64], valid: Option<&arrow_buffer::NullBuffer>) {
        let nulls = valid.map_or(0, |v| v.null_count());
        if nulls == 0 {
            if let Some((lo, hi)) = min_max(values) {
                self.extend_min_max(lo, hi);
            }
            self.values.extend_from_slice(values);
            if !self.levels.is_empty() {
                self.levels.resize(self.levels.len() + values.len(), 1);
            }
        } else {
            if self.levels.is_empty() {
                self.levels.resize(self.pending, 1);
            }
            for (row, &v) in values.iter().enumerate() {
                let set = valid.is_none_or(|n| n.is_valid(row));
                self.levels.push(u32::from(set));
                if set {
                    self.values.push(v);
                    self.extend_min_max(v, v);
                }
            }
            self.nulls += nulls as u64;
        }
        self.pending += values.len();
        self.rows += values.len();
    }

    fn extend_min_max(&mut self, lo: i64, hi: i64) {
        self.min_max = Some(match self.min_max {
            Some((a, b)) => (a.min(lo), b.max(hi)),
            None => (lo, hi),
        });
    }

    /// The pending rows as a data page.
    fn flush_page(&mut self) -> Result<(), String> {
        if self.pending == 0 {
            return Ok(());
        }
        let mut body = Vec::new();
        if self.pages.descr().max_def_level() == 1 {
            let levels = (!self.levels.is_empty()).then_some(&self.levels[..]);
            definition_levels(levels, self.pending, &mut body);
        }
        delta_binary_packed(&self.values, &mut body);
        let (rows, first) = (self.pending, self.rows - self.pending);
        self.values.clear();
        self.levels.clear();
        self.pending = 0;
        self.pages
            .data_page(body, rows, first, Encoding::DELTA_BINARY_PACKED)
    }
}

impl OwnColumn for DeltaColumn {
    fn write(&mut self, array: &ArrayRef) -> Result<(), String> {
        if !matches!(
            array.data_type(),
            DataType::Int64 | DataType::Timestamp(_, _)
        ) {
            return Err(format!("a delta column of type {}", array.data_type()));
        }
        let data = array.to_data();
        let values: &[i64] = data.buffer(0);
        let values = values
            .get(..array.len())
            .ok_or("a delta column too short")?;
        let mut from = 0;
        while from < values.len() {
            let to = values.len().min(from + PAGE_ROWS - self.pending);
            let valid = array.nulls().map(|n| n.slice(from, to - from));
            self.append(&values[from..to], valid.as_ref());
            from = to;
            if self.pending == PAGE_ROWS {
                self.flush_page()?;
            }
        }
        Ok(())
    }

    /// The encoded size so far (pages not written yet counted at a byte a row).
    fn estimated_bytes(&self) -> usize {
        self.pages.encoded() + self.pending
    }

    fn close(mut self: Box<Self>) -> Result<(Bytes, ColumnCloseResult), String> {
        self.flush_page()?;
        let statistics = self.statistics.then(|| {
            let (min, max) = self.min_max.unzip();
            let stats = ValueStatistics::new(min, max, None, Some(self.nulls), false);
            (Statistics::Int64(stats), None)
        });
        let summary = Summary {
            encoding: Encoding::DELTA_BINARY_PACKED,
            rows: self.rows,
            statistics,
        };
        self.pages.close(None, summary)
    }
}

fn min_max(values: &[i64]) -> Option<(i64, i64)> {
    let (&first, rest) = values.split_first()?;
    Some(
        rest.iter()
            .fold((first, first), |(lo, hi), &v| (lo.min(v), hi.max(v))),
    )
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// `values` as `DELTA_BINARY_PACKED`: a header (block size, miniblocks per block, count,
/// first value), then per block of differences its least difference and per miniblock its
/// bit width and its differences above the least, bit-packed (a miniblock of width 0 is
/// its width byte alone; the last block's unused miniblocks have width 0 and no bytes).
pub fn delta_binary_packed(values: &[i64], out: &mut Vec<u8>) {
    varint(BLOCK as u64, out);
    varint((BLOCK / MINI) as u64, out);
    varint(values.len() as u64, out);
    varint(zigzag(values.first().copied().unwrap_or(0)), out);
    let Some((_, rest)) = values.split_first() else {
        return;
    };
    let mut deltas = [0i64; BLOCK];
    let mut from = 0;
    for block in rest.chunks(BLOCK) {
        // This block's values and the one before each.
        let before = &values[from..from + block.len()];
        from += block.len();
        for ((d, &v), &b) in deltas.iter_mut().zip(block).zip(before) {
            *d = v.wrapping_sub(b);
        }
        let deltas = &deltas[..block.len()];
        let least = deltas.iter().fold(i64::MAX, |m, &d| m.min(d));
        varint(zigzag(least), out);
        let widths = out.len();
        out.resize(widths + BLOCK / MINI, 0);
        for (m, mini) in deltas.chunks(MINI).enumerate() {
            let above = |d: i64| d.wrapping_sub(least) as u64;
            // The bits of every difference above the least, or'd: the highest is the
            // largest's, and a miniblock of one difference repeated (most of a frame's
            // rows) has none (width 0). One pass, which the compiler vectorises.
            let bits = mini.iter().fold(0, |m, &d| m | above(d));
            if bits == 0 {
                continue;
            }
            let width = 64 - bits.leading_zeros();
            out[widths + m] = width as u8;
            // 32 values of `width` bits are `4 * width` bytes; the last miniblock is
            // padded with zeros.
            let mut acc: u128 = 0;
            let mut bits = 0;
            for k in 0..MINI {
                acc |= u128::from(mini.get(k).map_or(0, |&d| above(d))) << bits;
                bits += width;
                while bits >= 8 {
                    out.push(acc as u8);
                    acc >>= 8;
                    bits -= 8;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::formats::test_random::xorshift;
    use std::fs::File;
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch, TimestampMicrosecondArray};
    use arrow_schema::{Field, Schema, TimeUnit};
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::schema::types::ColumnPath;

    use super::*;

    fn schema() -> Arc<Schema> {
        let utc = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        Arc::new(Schema::new(vec![
            Field::new("n", DataType::Int64, false),
            Field::new("t", utc, true),
            Field::new("f", DataType::Int64, true),
        ]))
    }

    /// Batches of runs (a frame's rows), steps of every width, extremes that wrap, nulls
    /// in runs and alone, and batches of one row and of none.
    fn batches() -> Vec<RecordBatch> {
        let mut next = xorshift(5u64);
        let mut out = Vec::new();
        let mut v = 0i64;
        for case in 0..80 {
            let len = match case % 9 {
                0 => 0,
                1 => 1,
                _ => (next() % 30_000) as usize,
            };
            let run = 1 + (next() % 300) as usize;
            let bits = case % 64;
            let n: Vec<i64> = (0..len)
                .map(|i| {
                    if i % run == 0 {
                        v = v.wrapping_add((next() >> (63 - bits)) as i64 - 7);
                    }
                    if case == 7 && i % 2 == 0 {
                        return i64::MIN + (i % 3) as i64;
                    }
                    v
                })
                .collect();
            let nulls = case % 4;
            let t = n.iter().enumerate().map(|(i, &x)| match nulls {
                0 => Some(x),
                1 => None,
                _ => (i % 1000 > 600 || i % 7 == 3).then_some(x / 1000),
            });
            let f = n.iter().map(|&x| (case % 3 != 0).then_some(x % 1000));
            let columns: Vec<ArrayRef> = vec![
                Arc::new(Int64Array::from(n.clone())),
                Arc::new(TimestampMicrosecondArray::from_iter(t).with_timezone("UTC")),
                Arc::new(Int64Array::from_iter(f)),
            ];
            out.push(RecordBatch::try_new(schema(), columns).unwrap());
        }
        out
    }

    #[test]
    fn delta_columns_read_back_as_the_crate_writes_them() {
        let dir = tempfile::tempdir().unwrap();
        let batches = batches();
        let mut files = Vec::new();
        for (name, by_columns) in [("crate", None), ("deltas", Some(&["n", "t", "f"][..]))] {
            let path = dir.path().join(format!("{name}.parquet"));
            let mut props = WriterProperties::builder()
                .set_compression(Compression::ZSTD(Default::default()))
                .set_dictionary_enabled(false);
            for c in ["n", "t", "f"] {
                props =
                    props.set_column_encoding(ColumnPath::from(c), Encoding::DELTA_BINARY_PACKED);
            }
            super::super::encode_to(&path, schema(), props, by_columns, &batches);
            files.push(path);
        }
        let (a, b) = (
            super::super::read_back(&files[0]),
            super::super::read_back(&files[1]),
        );
        assert_eq!(a, b);
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(b.iter().map(RecordBatch::num_rows).sum::<usize>(), rows);

        let meta =
            |path: &std::path::Path| SerializedFileReader::new(File::open(path).unwrap()).unwrap();
        let (ra, rb) = (meta(&files[0]), meta(&files[1]));
        assert_eq!(
            ra.metadata().num_row_groups(),
            rb.metadata().num_row_groups()
        );
        for g in 0..rb.metadata().num_row_groups() {
            for c in 0..3 {
                let x = ra.metadata().row_group(g).column(c);
                let y = rb.metadata().row_group(g).column(c);
                assert_eq!(x.statistics(), y.statistics(), "group {g}, column {c}");
                assert_eq!(x.num_values(), y.num_values());
                assert!(y.encodings().any(|e| e == Encoding::DELTA_BINARY_PACKED));
            }
        }
    }

    #[test]
    fn a_run_of_one_value_is_width_bytes_alone() {
        let mut out = Vec::new();
        delta_binary_packed(&[7; 129], &mut out);
        // Header (128, 4, 129, zigzag 7 = 14), then one block: least 0, four widths of 0.
        assert_eq!(out, [0x80, 0x01, 4, 0x81, 0x01, 14, 0, 0, 0, 0, 0]);
    }
}
