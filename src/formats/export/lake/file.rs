//! What the lake's two tables share: the columns every row starts with, and the Parquet
//! file the rows go to in batches (encoded on a thread of its own by the Parquet table's
//! [`Encoder`]).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{Int64Builder, StringBuilder, TimestampMicrosecondBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use crate::formats::export::parquet_table::Encoder;
use crate::formats::output::Outputs;
use crate::formats::WriteError;
use crate::model::Entity;

/// Rows of a batch: small enough that two tables' batches stay a few MiB.
pub const BATCH_ROWS: usize = 8192;
/// Bytes of values of a batch, roughly: a NanoVer frame's positions are 72 KB, so a batch
/// of rows alone held 800 of them (docs/performance.md, "Lake").
pub const BATCH_BYTES: usize = 4 << 20;

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

/// The text of an entity: its name, or its number in decimal.
pub fn entity_text(entity: &Entity) -> String {
    match entity {
        Entity::Name(name) => name.to_string(),
        Entity::Id(id) => id.to_string(),
    }
}

/// Microseconds since 1970 of `time_ns` after an epoch of `epoch_ns`, rounded down.
pub fn utc_micros(epoch_ns: Option<i64>, time_ns: i64) -> Option<i64> {
    let ns = epoch_ns?.checked_add(time_ns)?;
    Some(ns.div_euclid(1000))
}

/// Builders of the columns every row starts with.
pub struct Common {
    recording: String,
    format: String,
    recordings: StringBuilder,
    formats: StringBuilder,
    times: Int64Builder,
    utc: TimestampMicrosecondBuilder,
    channels: StringBuilder,
    entities: StringBuilder,
    frames: Int64Builder,
}

impl Common {
    pub fn new(recording: &str, format: &str) -> Common {
        Common {
            recording: recording.to_string(),
            format: format.to_string(),
            recordings: StringBuilder::new(),
            formats: StringBuilder::new(),
            times: Int64Builder::new(),
            utc: TimestampMicrosecondBuilder::new().with_timezone("UTC"),
            channels: StringBuilder::new(),
            entities: StringBuilder::new(),
            frames: Int64Builder::new(),
        }
    }

    pub fn push(&mut self, place: &Place) {
        self.recordings.append_value(&self.recording);
        self.formats.append_value(&self.format);
        self.times.append_value(place.time_ns);
        self.utc.append_option(place.time_utc);
        self.channels.append_value(place.channel);
        self.entities.append_option(place.entity);
        self.frames.append_option(place.frame);
    }

    pub fn finish(&mut self) -> Vec<ArrayRef> {
        vec![
            Arc::new(self.recordings.finish()),
            Arc::new(self.formats.finish()),
            Arc::new(self.times.finish()),
            Arc::new(self.utc.finish()),
            Arc::new(self.channels.finish()),
            Arc::new(self.entities.finish()),
            Arc::new(self.frames.finish()),
        ]
    }
}

/// One Parquet file of a table, written batch by batch.
pub struct TableFile {
    shown: PathBuf,
    schema: SchemaRef,
    encoder: Encoder,
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
            .set_dictionary_enabled(false);
        for field in schema.fields() {
            if field.data_type() == &DataType::Utf8 {
                props = props
                    .set_column_dictionary_enabled(ColumnPath::from(field.name().as_str()), true);
            }
        }
        let encoder =
            Encoder::new(file, schema.clone(), props, false).map_err(|e| io(target, e))?;
        Ok(TableFile {
            shown: target.to_path_buf(),
            schema,
            encoder,
            rows: 0,
        })
    }

    /// Hands a batch of the schema's columns, in order, to the encoder.
    pub fn write(&mut self, columns: Vec<ArrayRef>) -> Result<(), WriteError> {
        let batch =
            RecordBatch::try_new(self.schema.clone(), columns).map_err(|e| io(&self.shown, e))?;
        self.rows += batch.num_rows() as u64;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.encoder.write(batch).map_err(|e| io(&self.shown, e))
    }

    /// Writes the footer.
    pub fn close(self) -> Result<u64, WriteError> {
        let shown = self.shown;
        self.encoder.close().map_err(|e| io(&shown, e))?;
        Ok(self.rows)
    }
}
