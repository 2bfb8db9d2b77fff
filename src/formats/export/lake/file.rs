//! What the lake's two tables share: the columns every row starts with, and the Parquet
//! file the rows go to in batches (encoded on a thread of its own by the Parquet table's
//! [`Encoder`]).

use std::fs::File;
use std::mem::replace;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{ArrayBuilder, Int64Builder, TimestampMicrosecondBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{WriterProperties, WriterPropertiesBuilder};
use parquet::schema::types::ColumnPath;

use super::labels::{Constant, Label};
use crate::formats::export::parquet_table::{compresses, Encoder, SAMPLE_BYTES};
use crate::formats::output::Outputs;
use crate::formats::WriteError;
use crate::model::Entity;

/// Rows of a batch: small enough that two tables' batches stay a few MiB.
pub const BATCH_ROWS: usize = 8192;
/// Bytes of values of a batch, roughly: a NanoVer frame's positions are 72 KB, so a batch
/// of rows alone held 800 of them; the encoder holds up to three batches of a table, so
/// this is a share of `convert --each --jobs 2`'s peak (docs/performance.md, "Lake").
pub const BATCH_BYTES: usize = 1 << 20;
/// Bytes of a data page before it is encoded, at most: the crate keeps one per column
/// (fifteen in `values`) for each table being written (docs/performance.md, "Lake").
const PAGE_BYTES: usize = 256 << 10;
/// Integer columns stored as differences (`DELTA_BINARY_PACKED`): times and frames grow by
/// steps, and as plain values they were the largest share of what zstd went over
/// (docs/performance.md, "Lake, fourth pass"). Spark, DuckDB, pandas and polars read them
/// (`scripts/interop/lake.sh`). Encoded by simrec, not the crate (`parquet_table/deltas.rs`).
const DELTAS: [&str; 3] = ["time_ns", "time_utc", "frame"];
/// Encoded bytes of a row group, at most: the encoder keeps up to two row groups per
/// table until they go into the file, and the lake writes two tables at once, so at the
/// Parquet table's 8 MiB a lake job could hold 32 MiB of encoded pages
/// (docs/performance.md, "Lake, fourth pass").
const GROUP_BYTES: usize = 2 << 20;

fn io(path: &Path, e: impl std::fmt::Display) -> WriteError {
    WriteError::io(path, std::io::Error::other(e.to_string()))
}

/// Where a row is: the columns both tables start with, for one record.
pub struct Place<'a> {
    pub time_ns: i64,
    /// Microseconds since 1970 UTC, when the recording has an absolute start.
    pub time_utc: Option<i64>,
    pub channel: &'a str,
    pub entity: Option<&'a str>,
    pub frame: Option<i64>,
}

/// The text of an entity: its name, or its number in decimal (written into `number`: a
/// record's entity is text on every row of it, so it is not a `String` each time).
pub fn entity_text<'a>(entity: &'a Entity, number: &'a mut itoa::Buffer) -> &'a str {
    match entity {
        Entity::Name(name) => name,
        Entity::Id(id) => number.format(*id),
    }
}

/// Microseconds since 1970 of `time_ns` after an epoch of `epoch_ns`, rounded down.
pub fn utc_micros(epoch_ns: Option<i64>, time_ns: i64) -> Option<i64> {
    let ns = epoch_ns?.checked_add(time_ns)?;
    Some(ns.div_euclid(1000))
}

/// Builders of the columns every row starts with.
pub struct Common {
    recording: Constant,
    format: Constant,
    times: Int64Builder,
    utc: TimestampMicrosecondBuilder,
    /// Appended to by a caller that has a whole frame's or record's channels and entities
    /// at once (after [`Common::push_times`]).
    pub channels: Label,
    pub entities: Label,
    frames: Int64Builder,
}

impl Common {
    pub fn new(recording: &str, format: &str) -> Common {
        Common {
            recording: Constant::new(recording),
            format: Constant::new(format),
            times: Int64Builder::with_capacity(BATCH_ROWS),
            utc: TimestampMicrosecondBuilder::with_capacity(BATCH_ROWS).with_timezone("UTC"),
            channels: Label::new(),
            entities: Label::new(),
            frames: Int64Builder::with_capacity(BATCH_ROWS),
        }
    }

    pub fn push(&mut self, place: &Place) {
        self.times.append_value(place.time_ns);
        self.utc.append_option(place.time_utc);
        self.channels.push(Some(place.channel));
        self.entities.push(place.entity);
        self.frames.append_option(place.frame);
    }

    /// The time and frame columns of `n` rows at one instant; their channels and entities
    /// are the caller's to append.
    pub fn push_times(
        &mut self,
        n: usize,
        time_ns: i64,
        time_utc: Option<i64>,
        frame: Option<i64>,
    ) {
        self.times.append_value_n(time_ns, n);
        match time_utc {
            Some(t) => self.utc.append_value_n(t, n),
            None => self.utc.append_nulls(n),
        }
        match frame {
            Some(f) => self.frames.append_value_n(f, n),
            None => self.frames.append_nulls(n),
        }
    }

    pub fn finish(&mut self) -> Vec<ArrayRef> {
        let rows = self.times.len();
        // Builders start again at their batch's size, not empty: grown from nothing, every
        // batch paid for its copies as it grew.
        let utc = TimestampMicrosecondBuilder::with_capacity(BATCH_ROWS).with_timezone("UTC");
        vec![
            self.recording.column(rows),
            self.format.column(rows),
            Arc::new(replace(&mut self.times, Int64Builder::with_capacity(BATCH_ROWS)).finish()),
            Arc::new(replace(&mut self.utc, utc).finish()),
            self.channels.finish(),
            self.entities.finish(),
            Arc::new(replace(&mut self.frames, Int64Builder::with_capacity(BATCH_ROWS)).finish()),
        ]
    }
}

/// Text columns of few values, written by the Parquet table's label writer (a comparison
/// with the row before, or a look-up) instead of the crate's dictionary, which hashed and
/// compared each row's text: that was the largest share of the lake's CPU time
/// (docs/performance.md, "Lake").
const LABELS: [&str; 5] = ["recording", "format", "channel", "entity", "key"];

/// The file and its properties, until the first batch says which float columns to compress.
struct Pending {
    file: File,
    props: WriterPropertiesBuilder,
}

/// One Parquet file of a table, written batch by batch.
pub struct TableFile {
    shown: PathBuf,
    schema: SchemaRef,
    pending: Option<Pending>,
    encoder: Option<Encoder>,
    pub rows: u64,
}

impl TableFile {
    /// The file at `target`, of `schema`, with `metadata` in its footer as well.
    pub fn create(
        target: &Path,
        schema: SchemaRef,
        metadata: Vec<KeyValue>,
        outputs: &mut Outputs,
    ) -> Result<TableFile, WriteError> {
        let path = outputs.create_path(target)?;
        let file = File::create(&path).map_err(|e| WriteError::io(target, e))?;
        // A dictionary on the text columns only (a recording's name, format, channels,
        // entities and keys repeat on every row): tried on the numbers, it only costs time
        // before the writer falls back to plain (docs/performance.md, "Lake").
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_key_value_metadata(Some(metadata))
            .set_data_page_size_limit(PAGE_BYTES)
            .set_dictionary_enabled(false);
        for field in schema.fields() {
            let path = ColumnPath::from(field.name().as_str());
            if field.data_type() == &DataType::Utf8 {
                props = props.set_column_dictionary_enabled(path, true);
            } else if DELTAS.contains(&field.name().as_str()) {
                props = props.set_column_encoding(path, Encoding::DELTA_BINARY_PACKED);
            }
        }
        Ok(TableFile {
            shown: target.to_path_buf(),
            schema,
            pending: Some(Pending { file, props }),
            encoder: None,
            rows: 0,
        })
    }

    /// The encoder, started on `first` (the first batch, if any), each float column stored
    /// as its first values say ([`float_storage`]).
    fn encoder(&mut self, first: Option<&RecordBatch>) -> Result<&mut Encoder, WriteError> {
        if let Some(Pending { file, mut props }) = self.pending.take() {
            for (field, column) in
                (self.schema.fields().iter()).zip(first.map(|b| b.columns()).unwrap_or_default())
            {
                let Some((path, sample)) = float_sample(field, column) else {
                    continue;
                };
                if sample.len() < SAMPLE_BYTES / 16 {
                    continue;
                }
                let path = ColumnPath::new(path);
                props = match float_storage(&sample) {
                    FloatStorage::Zstd => props,
                    FloatStorage::SplitZstd => {
                        props.set_column_encoding(path, Encoding::BYTE_STREAM_SPLIT)
                    }
                    FloatStorage::Uncompressed => {
                        props.set_column_compression(path, Compression::UNCOMPRESSED)
                    }
                };
            }
            // The encoder writes the label and delta columns itself.
            let own: Vec<&str> = LABELS.iter().chain(&DELTAS).copied().collect();
            let encoder = Encoder::with_group_bytes(
                file,
                self.schema.clone(),
                props,
                Some(&own),
                GROUP_BYTES,
            )
            .map_err(|e| io(&self.shown, e))?;
            self.encoder = Some(encoder);
        }
        match &mut self.encoder {
            Some(e) => Ok(e),
            None => Err(io(&self.shown, "the Parquet file is closed")),
        }
    }

    /// Hands a batch of the schema's columns, in order, to the encoder. A label column may
    /// be a dictionary of its text (`labels.rs`): the label writer writes it as the text.
    pub fn write(&mut self, columns: Vec<ArrayRef>) -> Result<(), WriteError> {
        let fields = (self.schema.fields().iter())
            .zip(&columns)
            .map(|(field, column)| {
                let indexed = matches!(column.data_type(), DataType::Dictionary(_, _))
                    && LABELS.contains(&field.name().as_str());
                match indexed {
                    true => Arc::new(
                        field
                            .as_ref()
                            .clone()
                            .with_data_type(column.data_type().clone()),
                    ),
                    false => field.clone(),
                }
            });
        let schema = Arc::new(Schema::new(fields.collect::<Vec<_>>()));
        let batch = RecordBatch::try_new(schema, columns).map_err(|e| io(&self.shown, e))?;
        self.rows += batch.num_rows() as u64;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let encoder = self.encoder(Some(&batch))?;
        encoder.write(batch).map_err(|e| io(&self.shown, e))
    }

    /// Writes the footer.
    pub fn close(mut self) -> Result<u64, WriteError> {
        self.encoder(None)?;
        let shown = self.shown;
        if let Some(encoder) = self.encoder {
            encoder.close().map_err(|e| io(&shown, e))?;
        }
        Ok(self.rows)
    }
}

/// How a float column is stored.
#[derive(Debug, PartialEq)]
enum FloatStorage {
    Zstd,
    /// `BYTE_STREAM_SPLIT` then zstd: the values' first bytes together, their second bytes
    /// together, and so on. Where the low bytes are all zero (float32 widened to float64:
    /// NanoVer's positions) or the high bytes repeat, zstd then sees long runs: smaller
    /// and faster than over the values as they are (docs/performance.md, "Lake, seventh
    /// pass"). Every engine of `scripts/interop/lake.sh` reads it.
    SplitZstd,
    /// Values that zstd barely shrinks either way (positions whose every mantissa bit is
    /// noise), stored as the Parquet table stores them (its `compresses`). Split, their
    /// exponent bytes would shrink, at the CPU of zstd over every value: not taken
    /// (docs/performance.md, "Lake, seventh pass").
    Uncompressed,
}

/// How to store a float column whose first values are `sample` (little-endian float64s):
/// split where that packs smaller than the values as they are, else as the Parquet table
/// decides.
fn float_storage(sample: &[u8]) -> FloatStorage {
    if !compresses(sample) {
        return FloatStorage::Uncompressed;
    }
    let packed = |bytes: &[u8]| zstd::bulk::compress(bytes, 1).map_or(usize::MAX, |p| p.len());
    match packed(&split_bytes(sample)) < packed(sample) {
        true => FloatStorage::SplitZstd,
        false => FloatStorage::Zstd,
    }
}

/// `values` (little-endian float64s) as `BYTE_STREAM_SPLIT` lays them out: every value's
/// byte 0, then every value's byte 1, and so on.
fn split_bytes(values: &[u8]) -> Vec<u8> {
    let n = values.len() / 8;
    let mut out = vec![0; n * 8];
    for (i, value) in values.chunks_exact(8).enumerate() {
        for (b, &byte) in value.iter().enumerate() {
            out[b * n + i] = byte;
        }
    }
    out
}

/// A float64 column's (or list of float64's) leaf path and its first values (at most
/// [`SAMPLE_BYTES`], little-endian); `None` for a column of another type.
fn float_sample(field: &Field, column: &ArrayRef) -> Option<(Vec<String>, Vec<u8>)> {
    let name = field.name().clone();
    let (path, floats) = match field.data_type() {
        DataType::Float64 => (vec![name], column.as_primitive_opt::<Float64Type>()?),
        DataType::List(_) => {
            let list = column.as_list_opt::<i32>()?;
            let floats = list.values().as_primitive_opt::<Float64Type>()?;
            (vec![name, "list".into(), "item".into()], floats)
        }
        _ => return None,
    };
    let values = floats.values();
    let n = values.len().min(SAMPLE_BYTES / 8);
    let sample = values[..n].iter().flat_map(|x| x.to_le_bytes()).collect();
    Some((path, sample))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::test_random::xorshift;

    /// Little-endian bytes of `n` float64s from a xorshift generator, through `f`.
    fn sample(n: usize, f: impl Fn(u64) -> f64) -> Vec<u8> {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        (0..n).flat_map(|_| f(next()).to_le_bytes()).collect()
    }

    #[test]
    fn float32_widened_is_split_and_noise_stays_uncompressed() {
        // Positions of float32 precision, as NanoVer's, widened: the low bytes are zero.
        let widened = sample(1 << 16, |r| f64::from((r % 10_000) as f32 * 0.173));
        assert_eq!(float_storage(&widened), FloatStorage::SplitZstd);
        let noise = sample(1 << 16, |r| (r >> 11) as f64 * 1e-9);
        assert_eq!(float_storage(&noise), FloatStorage::Uncompressed);
        // Values that repeat compress either way, and are not split unless that is smaller.
        let steps = sample(1 << 16, |r| (r % 4) as f64);
        assert_ne!(float_storage(&steps), FloatStorage::Uncompressed);
    }

    #[test]
    fn split_bytes_groups_each_byte_of_the_values() {
        let values: Vec<u8> = [1.0f64, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect();
        let split = split_bytes(&values);
        for b in 0..8 {
            assert_eq!(split[2 * b], values[b]);
            assert_eq!(split[2 * b + 1], values[8 + b]);
        }
    }
}
