//! Elodin replay directories (world dirs and exec dirs): `metadata.json`, `assets.bin` and
//! one Parquet file per archetype. Spec: `elodin.md`.

pub mod assets;
pub mod codes;
mod columns;
mod dir;
pub mod metadata;
mod parquet_in;
mod parquet_out;
mod reader;
mod summary;
mod writer;

use std::path::Path;

pub use reader::{ElodinReader, HEADER_KEY};
pub use writer::ElodinWriter;

use crate::formats::format::{Detection, Format};
use crate::formats::output::Outputs;
use crate::formats::{ReadError, ReadOptions, Sink, Source, WriteError};
use crate::model::Header;

/// Parses `metadata.json` and `assets.bin` bytes as the reader does (for the fuzzer and
/// the truncation sweep): whatever the bytes, this returns, it never panics.
pub fn parse_side_files(metadata_json: &[u8], assets_bin: &[u8]) -> (bool, bool) {
    let m = metadata::parse(metadata_json).is_ok();
    let a = match assets::Assets::parse(assets_bin.to_vec()) {
        Ok(a) => {
            for i in 0..a.items.len() {
                if let Some(inner) = a.inner(i) {
                    let _ = assets::EntityMetadata::decode(inner);
                }
            }
            true
        }
        Err(_) => false,
    };
    (m, a)
}

pub struct Elodin;

impl Format for Elodin {
    fn title(&self) -> &'static str {
        "Elodin replay directories"
    }

    fn name(&self) -> &'static str {
        "elodin"
    }

    fn names(&self) -> &'static [&'static str] {
        &["elodin", "elodin-replay"]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }

    fn detect(&self, path: &Path, _head: &[u8]) -> Detection {
        if path.is_dir() && dir::looks_like_replay(path) {
            Detection::Content
        } else {
            Detection::No
        }
    }

    fn writes_directories(&self) -> bool {
        true
    }

    fn open(&self, path: &Path, options: ReadOptions) -> Result<Box<dyn Source>, ReadError> {
        Ok(Box::new(ElodinReader::open(path, options)?))
    }

    fn create(
        &self,
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<Box<dyn Sink>, WriteError> {
        Ok(Box::new(ElodinWriter::create(target, header, outputs)?))
    }
}
