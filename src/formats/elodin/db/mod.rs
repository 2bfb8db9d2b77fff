//! Elodin DB directories, what Elodin records into since 0.11: `db_state`, a directory per
//! component (named by the hash of its name) with `schema`, `metadata` and the append logs
//! `index` and `data`, and `msgs/` message logs; also the 0.12 – 0.14 layout with entity
//! directories. Written in the 0.15 – 0.18 layout (`writer.rs`). Spec:
//! `docs/formats/elodin-db.md`.

mod append;
pub mod codes;
mod dir;
mod encode;
mod frame_read;
mod frame_write;
mod grid;
pub mod layout;
mod merge;
mod reader;
mod summary;
mod writer;

use std::path::Path;

pub use dir::{catalogue, Catalogue, Layout};
// The export reader names its channels as the DB reader does.
pub(crate) use dir::split_name;
pub use reader::{DbReader, HEADER_KEY};
pub use writer::DbWriter;

use crate::formats::format::{
    path_names, Detection, Directory, Format, Frames, KeepsEpoch, WriterTraits,
};
use crate::formats::frames::{boxed_sink, boxed_source, FrameLayout, FrameSink, FrameSource};
use crate::formats::output::Outputs;
use crate::formats::{ReadError, ReadOptions, Sink, Source, WriteError};
use crate::model::Header;

pub struct ElodinDb;

impl Format for ElodinDb {
    fn title(&self) -> &'static str {
        "Elodin DB directories (Elodin 0.12 – 0.18; written as 0.15 – 0.18)"
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
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<Box<dyn Sink>, WriteError> {
        Ok(Box::new(DbWriter::create(target, header, outputs)?))
    }

    fn writer(&self) -> WriterTraits {
        WriterTraits {
            // NanoVer's particles become bodies (`mapping.rs`), as for the replay.
            takes_family_model: true,
            // Elodin's index never goes back.
            needs_time_order: true,
            keeps_epoch: KeepsEpoch::Always,
            ..WriterTraits::DEFAULT
        }
    }

    fn directory(&self) -> Option<&dyn Directory> {
        Some(self)
    }

    fn frames(&self) -> Option<&dyn Frames> {
        Some(self)
    }
}

impl Frames for ElodinDb {
    /// A DB of one time grid, a tick a frame (`frame_read.rs`).
    fn open_frames(
        &self,
        path: &Path,
        options: ReadOptions,
    ) -> Option<Result<Box<dyn FrameSource>, ReadError>> {
        boxed_source(frame_read::DbFrames::open(path, options))
    }

    /// Rows appended as the frames pack them (`frame_write.rs`).
    fn create_frames(
        &self,
        target: &Path,
        header: &Header,
        layout: &FrameLayout,
        outputs: &mut Outputs,
    ) -> Option<Result<Box<dyn FrameSink>, WriteError>> {
        boxed_sink(frame_write::DbFrameWriter::create(
            target, header, layout, outputs,
        ))
    }

    /// The writer writes no frame value, and a scalar and an array of shape `[]` make the
    /// same row.
    fn takes_loose(&self) -> bool {
        true
    }
}

impl Directory for ElodinDb {
    /// What Elodin records into and opens since 0.11; the replay (`--to elodin`) is its
    /// legacy form.
    fn default_for_directories(&self) -> bool {
        true
    }

    /// `db_state`, the component directories (named by a number), `msgs/` and `assets/`.
    fn writes_entry(&self, relative: &Path, path: &Path) -> bool {
        match path_names(relative).as_deref() {
            Some(["db_state"]) => path.is_file(),
            Some(["msgs" | "assets", ..]) => true,
            Some([dir, ..]) => dir.parse::<u64>().is_ok(),
            _ => false,
        }
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
