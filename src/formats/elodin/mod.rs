//! The Elodin family: replay directories (world dirs and exec dirs: `metadata.json`,
//! `assets.bin` and one Parquet file per archetype; spec `elodin.md`), here, and the DB
//! directories Elodin records into since 0.11, in `db/` (spec `elodin-db.md`), and the
//! tables `elodin-db export` makes of them, in `db_export/` (read only).

mod arrow_meta;
pub mod assets;
pub mod codes;
mod columns;
pub mod db;
pub mod db_export;
mod decode_pool;
mod dir;
mod foreign;
mod hybrid;
pub mod mapping;
mod merge;
pub mod metadata;
mod pages;
mod parquet_in;
mod parquet_out;
pub mod primitive;
mod reader;
mod summary;
mod thrift;
mod writer;

use std::path::{Path, PathBuf};

pub use reader::{ElodinReader, HEADER_KEY};
pub use writer::ElodinWriter;

use crate::formats::format::{
    file_starts_with, path_names, Detection, Directory, Format, Merger, WriterTraits, PARQUET_MAGIC,
};
use crate::formats::output::Outputs;
use crate::formats::{Family, ReadError, ReadOptions, Sink, Source, WriteError};
use crate::model::Header;

/// The family, as the registry lists it.
pub static FAMILY: Family = Family {
    name: "elodin",
    // The DB first: detection tries it before the replay (none of the three matches a
    // directory another does).
    formats: &[&db::ElodinDb, &db_export::ElodinDbExport, &Elodin],
    mapping: Some(&mapping::IntoElodin),
    key_types: &[],
};

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

/// Decodes a whole Parquet file held in memory as the reader decodes an archetype file
/// (footer, column chunks, pages, every column simrec can read, every row): (rows,
/// readable column rows), or the error. For the fuzzer and the damage sweeps: whatever the
/// bytes, this returns, it never panics.
pub fn decode_parquet(bytes: Vec<u8>) -> Result<(u64, u64), String> {
    parquet_in::decode_all(bytes)
}

pub struct Elodin;

impl Format for Elodin {
    fn title(&self) -> &'static str {
        "Elodin replay directories (legacy: Elodin 0.3.23 – 0.10)"
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

    fn writer(&self) -> WriterTraits {
        WriterTraits {
            takes_family_model: true,
            needs_time_order: true,
            needs_schema: true,
            // Ticks start at 0 in every replay Elodin loads (its loader takes the largest tick as
            // the tick count), so a slice cannot keep its place on the source's axis.
            keeps_time: Err(
                "an Elodin replay's ticks start at 0 (Elodin's loader counts them from 0)",
            ),
            ..WriterTraits::DEFAULT
        }
    }

    fn merger(&self) -> Option<&dyn Merger> {
        Some(self)
    }

    fn directory(&self) -> Option<&dyn Directory> {
        Some(self)
    }
}

impl Merger for Elodin {
    /// Replays merge side by side or end to end (spec §7, `merge.rs`); anything else is
    /// refused before anything is written.
    fn open_merge(
        &self,
        paths: &[PathBuf],
        options: ReadOptions,
    ) -> Option<Result<Box<dyn Source>, ReadError>> {
        if paths.len() < 2 {
            return None;
        }
        Some(merge::open(paths, options).map(|m| Box::new(m) as Box<dyn Source>))
    }
}

impl Directory for Elodin {
    /// A world (`metadata.json`, `assets.bin`, Parquet tables) at the top or in `world/`,
    /// and `tick_exec/` and `startup_exec/` as copied whole from an Elodin source.
    fn writes_entry(&self, relative: &Path, path: &Path) -> bool {
        let world_file = |name: &str| match name {
            "metadata.json" | "assets.bin" => path.is_file(),
            _ => name.ends_with(".parquet") && file_starts_with(path, PARQUET_MAGIC),
        };
        match path_names(relative).as_deref() {
            Some(["world" | "tick_exec" | "startup_exec"]) => path.is_dir(),
            Some(["tick_exec" | "startup_exec", ..]) => true,
            Some(["world", name]) | Some([name]) => world_file(name),
            _ => false,
        }
    }
}
