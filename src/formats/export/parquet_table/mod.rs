//! A tidy Parquet table for pandas, polars, DuckDB and Spark (docs/formats/parquet.md): one
//! row per record in time order, `time_ns`, `channel`, `entity`, `frame`, one column per
//! field key typed from the field specs, `removed`. `-o DIR/` writes one file per channel.
//! Write-only.

mod chunk;
mod column;
mod deltas;
mod encoder;
mod frames;
mod json;
mod labels;
mod table;
mod writer;

/// Writes `batches` to `path` through [`encoder::Encoder`] (tests that compare files).
#[cfg(test)]
fn encode_to(
    path: &Path,
    schema: arrow_schema::SchemaRef,
    props: parquet::file::properties::WriterPropertiesBuilder,
    by_columns: Option<&[&str]>,
    batches: &[arrow_array::RecordBatch],
) {
    let file = std::fs::File::create(path).unwrap();
    let mut encoder = encoder::Encoder::new(file, schema, props, by_columns).unwrap();
    for b in batches {
        encoder.write(b.clone()).unwrap();
    }
    encoder.close().unwrap();
}

/// The rows of a Parquet file as the crate's reader gives them (tests that compare files).
#[cfg(test)]
fn read_back(path: &Path) -> Vec<arrow_array::RecordBatch> {
    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(path).unwrap(),
    )
    .unwrap()
    .build()
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

use std::path::Path;

pub use column::{ENCODING_KEY, SHAPE_KEY, UNIT_KEY};
pub use encoder::{Encoder, MAX_ROW_GROUP_BYTES, MAX_ROW_GROUP_ROWS};
pub use table::{compresses, SAMPLE_BYTES};
pub use writer::{file_name, metadata, TableWriter};

/// `--fold`: each frame's (and state's) full folded value.
const FOLD: WriteOption = WriteOption {
    flag: "fold",
    help: "Write each frame's (and state's) full folded value, not the keys each record changed",
    aliases: &[],
    values: &[],
    default: None,
};

/// How a Parquet table is written.
#[derive(Debug, Clone, Copy, Default)]
pub struct TableWriteOptions {
    /// Each frame's (and state's) full folded value, not the keys each record changed.
    pub fold: bool,
}

impl TableWriteOptions {
    pub fn from_flags(flags: &crate::formats::GivenFlags) -> TableWriteOptions {
        TableWriteOptions {
            fold: flags.switch(FOLD.flag),
        }
    }
}

use crate::formats::format::{
    file_starts_with, path_names, Detection, Directory, Format, Frames, KeepsEpoch, WriteOption,
    WriterTraits, PARQUET_MAGIC,
};
use crate::formats::frames::{boxed_sink, FrameLayout, FrameSink};
use crate::formats::output::{names_directory, Outputs};
use crate::formats::{ReadError, ReadOptions, Sink, Source, Unreadable, WriteError};
use crate::model::Header;

pub struct ParquetTable;

/// Whether a directory is a dataset this writer made: `.parquet` files and nothing else.
fn is_dataset(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut any = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if !is_file || !name.to_string_lossy().ends_with(".parquet") {
            return false;
        }
        any = true;
    }
    any
}

impl Format for ParquetTable {
    fn name(&self) -> &'static str {
        "parquet"
    }

    fn title(&self) -> &'static str {
        "Parquet table .parquet (DIR/: one file per channel)"
    }

    fn reads(&self) -> bool {
        false
    }

    fn names(&self) -> &'static [&'static str] {
        &["parquet"]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[".parquet"]
    }

    fn detect(&self, path: &Path, head: &[u8]) -> Detection {
        if path.is_dir() {
            return Detection::by(is_dataset(path), false);
        }
        Detection::by(head.starts_with(PARQUET_MAGIC), self.named_by(path))
    }

    fn write_options(&self) -> &'static [WriteOption] {
        &[FOLD]
    }

    fn open(&self, path: &Path, _options: ReadOptions) -> Result<Box<dyn Source>, ReadError> {
        Err(ReadError::Unsupported(Unreadable::WriteOnly {
            path: path.into(),
            why: "simrec writes Parquet tables but does not read them back (Elodin replays are \
             read as directories)",
        }))
    }

    fn create(
        &self,
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<Box<dyn Sink>, WriteError> {
        let options = TableWriteOptions::from_flags(&outputs.flags);
        if names_directory(target) {
            Ok(Box::new(TableWriter::per_channel(
                target, header, outputs, options,
            )?))
        } else {
            Ok(Box::new(TableWriter::single(
                target, header, outputs, options,
            )?))
        }
    }

    fn writer(&self) -> WriterTraits {
        WriterTraits {
            needs_time_order: true,
            needs_schema: true,
            // The file's key-value metadata `simrec.origin.*`.
            keeps_epoch: KeepsEpoch::Always,
            ..WriterTraits::DEFAULT
        }
    }

    fn frames(&self) -> Option<&dyn Frames> {
        Some(self)
    }

    fn directory(&self) -> Option<&dyn Directory> {
        Some(self)
    }
}

impl Frames for ParquetTable {
    /// One file, when every signal's values go into their column exactly (`frames.rs`).
    fn create_frames(
        &self,
        target: &Path,
        header: &Header,
        layout: &FrameLayout,
        outputs: &mut Outputs,
    ) -> Option<Result<Box<dyn FrameSink>, WriteError>> {
        let options = TableWriteOptions::from_flags(&outputs.flags);
        boxed_sink(frames::TableFrames::create(
            target, header, layout, outputs, options,
        ))
    }
}

impl Directory for ParquetTable {
    /// The tables of the per-channel form.
    fn writes_entry(&self, relative: &Path, path: &Path) -> bool {
        matches!(path_names(relative).as_deref(), Some([name]) if name.ends_with(".parquet"))
            && file_starts_with(path, PARQUET_MAGIC)
    }
}
