//! Elodin DB directories, what Elodin records into since 0.11: `db_state`, a directory per
//! component (named by the hash of its name) with `schema`, `metadata` and the append logs
//! `index` and `data`, and `msgs/` message logs; also the 0.12 – 0.14 layout with entity
//! directories. Read only (the replay stays the family's writer). Spec:
//! `docs/formats/elodin-db.md`.

pub mod codes;
mod dir;
pub mod layout;
mod reader;
mod summary;

use std::path::Path;

pub use dir::{catalogue, Catalogue, Layout};
pub use reader::{DbReader, HEADER_KEY};

use crate::formats::format::{Detection, Format};
use crate::formats::output::Outputs;
use crate::formats::{ReadError, ReadOptions, Sink, Source, Unsupported, WriteError};
use crate::model::Header;

pub struct ElodinDb;

impl Format for ElodinDb {
    fn title(&self) -> &'static str {
        "Elodin DB directories (Elodin 0.12 – 0.18, read only)"
    }

    fn name(&self) -> &'static str {
        "elodin-db"
    }

    fn names(&self) -> &'static [&'static str] {
        &["elodin-db"]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }

    /// A directory whose `db_state` reads as either layout's: the name does not matter.
    fn detect(&self, path: &Path, _head: &[u8]) -> Detection {
        if path.is_dir() && dir::looks_like_db(path) {
            Detection::Content
        } else {
            Detection::No
        }
    }

    fn open(&self, path: &Path, options: ReadOptions) -> Result<Box<dyn Source>, ReadError> {
        Ok(Box::new(DbReader::open(path, options)?))
    }

    fn create(
        &self,
        _target: &Path,
        _header: &Header,
        _outputs: &mut Outputs,
    ) -> Result<Box<dyn Sink>, WriteError> {
        Err(WriteError::Unsupported(Unsupported::Limit(
            "simrec reads Elodin DB directories but does not write them yet",
        )))
    }
}

/// Reads a DB directory's catalogue and every committed row and message as the reader
/// does (strictly when `strict`): the records read, or the error. For the fuzzer and the
/// damage sweeps: whatever the files hold, this returns, it never panics.
pub fn read_all(path: &Path, strict: bool) -> Result<u64, ReadError> {
    let options = ReadOptions {
        lenient: !strict,
        ..ReadOptions::default()
    };
    let reader = DbReader::open(path, options)?;
    let mut n = 0;
    for record in reader {
        record?;
        n += 1;
    }
    Ok(n)
}
