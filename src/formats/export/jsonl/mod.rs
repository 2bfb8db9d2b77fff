//! JSON Lines export: one JSON object per record, for jq, pandas, DuckDB.
//!
//! `{"time_ns": 8445000, "channel": "frame", "frame": 2, "values": {...}, "removed": [...]}`:
//! time as integer nanoseconds, typed arrays as (nested, by shape) JSON arrays, and keys a
//! state record removes listed under `removed`. Write-only.

mod writer;

use std::path::Path;

pub use writer::JsonlWriter;

use crate::formats::format::{
    Detection, Format, KeepsEpoch, TimeColumn, WriteOption, WriterTraits, TIME_OPTION,
};
use crate::formats::output::Outputs;
use crate::formats::{ReadError, ReadOptions, Sink, Source, Unreadable, WriteError};
use crate::model::Header;

pub struct JsonLines;

impl Format for JsonLines {
    fn title(&self) -> &'static str {
        "JSON Lines"
    }

    fn reads(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        "jsonl"
    }

    fn names(&self) -> &'static [&'static str] {
        &["jsonl", "ndjson", "json-lines"]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[".jsonl", ".ndjson"]
    }

    fn detect(&self, path: &Path, _head: &[u8]) -> Detection {
        match path.extension().and_then(|e| e.to_str()) {
            Some("jsonl") | Some("ndjson") => Detection::Extension,
            _ => Detection::No,
        }
    }

    fn open(&self, path: &Path, _options: ReadOptions) -> Result<Box<dyn Source>, ReadError> {
        Err(ReadError::Unsupported(Unreadable::WriteOnly {
            path: path.into(),
            why: "simrec writes JSON Lines but does not read them back",
        }))
    }

    fn create(
        &self,
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<Box<dyn Sink>, WriteError> {
        let utc = TimeColumn::from_flags(&outputs.flags, "jsonl")?.epoch(header)?;
        Ok(Box::new(JsonlWriter::new(
            outputs.create(target)?,
            target,
            header,
            utc,
        )))
    }

    fn write_options(&self) -> &'static [WriteOption] {
        &[TIME_OPTION]
    }

    fn writer(&self) -> WriterTraits {
        WriterTraits {
            // Only as each record's `time_utc` (`--time utc`).
            keeps_epoch: KeepsEpoch::AsAbsoluteTimes,
            ..WriterTraits::DEFAULT
        }
    }
}
