//! `elodin-db export` directories (and `Exec.save_archive`'s): one Parquet, Arrow IPC or
//! CSV file per component (or per entity, `--join`), a `time` column (µs, or `time_ns` /
//! `time_us` integers with `--mono-ns` / `--mono-us`) and the component's values, whole or
//! `--flatten`ed into one column per element. Read as the recording of the DB they came
//! from; simrec does not write them (`--to elodin-db` writes the DB itself). Spec:
//! `docs/formats/elodin-db.md`, "Export directories".

pub mod codes;
mod csv_table;
mod group;
mod reader;
mod table;

use std::path::Path;

pub use reader::{ExportReader, HEADER_KEY};
pub use table::Kind;

use crate::formats::format::{Detection, Format};
use crate::formats::output::Outputs;
use crate::formats::{ReadError, ReadOptions, Sink, Source, Unsupported, WriteError};
use crate::model::Header;

pub struct ElodinDbExport;

impl Format for ElodinDbExport {
    fn title(&self) -> &'static str {
        "elodin-db export directories (Parquet, Arrow IPC or CSV; read only)"
    }

    fn name(&self) -> &'static str {
        "elodin-db-export"
    }

    fn names(&self) -> &'static [&'static str] {
        &["elodin-db-export"]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }

    fn writes(&self) -> bool {
        false
    }

    /// A directory of export files of one kind whose first file's first column is a time
    /// column: the directory's and files' names do not matter beyond their extension.
    fn detect(&self, path: &Path, _head: &[u8]) -> Detection {
        let first_is_table = || {
            let (kind, files) = reader::files(path)?;
            let (_, first) = files.first()?;
            table::starts_with_time(first, kind).then_some(())
        };
        if path.is_dir() && first_is_table().is_some() {
            Detection::Content
        } else {
            Detection::No
        }
    }

    fn open(&self, path: &Path, options: ReadOptions) -> Result<Box<dyn Source>, ReadError> {
        Ok(Box::new(ExportReader::open(path, options)?))
    }

    fn create(
        &self,
        _target: &Path,
        _header: &Header,
        _outputs: &mut Outputs,
    ) -> Result<Box<dyn Sink>, WriteError> {
        Err(WriteError::Unsupported(Unsupported::Limit(
            "simrec reads `elodin-db export` directories but does not write them: write the DB \
             itself (`--to elodin-db`) and run `elodin-db export` on it",
        )))
    }
}

/// Decodes one export file's bytes as the reader does, regrouped into components: the
/// rows read, or why not. For the fuzzer and the truncation sweep: whatever the bytes,
/// this returns, it never panics.
pub fn decode_file(bytes: Vec<u8>, kind: Kind, stem: &str) -> Result<usize, String> {
    let table = table::decode(bytes, kind)?;
    let series = group::series(stem, table)?;
    Ok(series.iter().map(|s| s.rows()).sum())
}
