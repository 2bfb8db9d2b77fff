//! The lake (docs/formats/lake.md): every recording as two tables of one fixed schema,
//! `DIR/values/NAME.parquet` (one row per record and key) and `DIR/poses/NAME.parquet` (one
//! row per thing with a position per instant), so that a folder of recordings of any
//! families reads as one table in any engine, with no options. Write-only.

mod file;
mod frames;
mod labels;
mod poses;
mod schema;
mod values;
mod writer;

use std::path::{Path, PathBuf};

pub use schema::{poses as poses_schema, values as values_schema, LAKE_VERSION};
pub use writer::{table_paths, LakeWriter};

use crate::formats::format::{Collection, Detection, Format, Frames, KeepsEpoch, WriterTraits};
use crate::formats::frames::{boxed_sink, FrameLayout, FrameSink};
use crate::formats::output::Outputs;
use crate::formats::{ReadError, ReadOptions, Sink, Source, Unreadable, Unsupported, WriteError};
use crate::model::Header;

pub struct Lake;

/// The name a recording is filed under when the run does not say (a library caller's
/// `Outputs` without `recording`).
const UNNAMED: &str = "recording";

impl Format for Lake {
    fn name(&self) -> &'static str {
        "lake"
    }

    fn title(&self) -> &'static str {
        "Lake DIR/: values/ and poses/ Parquet tables of one fixed schema, a file per recording"
    }

    fn reads(&self) -> bool {
        false
    }

    fn names(&self) -> &'static [&'static str] {
        &["lake"]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }

    fn detect(&self, _path: &Path, _head: &[u8]) -> Detection {
        Detection::No
    }

    fn open(&self, path: &Path, _options: ReadOptions) -> Result<Box<dyn Source>, ReadError> {
        Err(ReadError::Unsupported(Unreadable::WriteOnly {
            path: path.into(),
            why: "simrec writes lakes but does not read them back",
        }))
    }

    fn create(
        &self,
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<Box<dyn Sink>, WriteError> {
        if target == Path::new("-") {
            return Err(WriteError::Unsupported(Unsupported::Limit(
                "a lake is a directory and cannot be written to standard output; name it with -o LAKE/",
            )));
        }
        let name = outputs.recording.clone();
        let name = name.as_deref().unwrap_or(UNNAMED);
        Ok(Box::new(LakeWriter::create(target, name, header, outputs)?))
    }

    fn writer(&self) -> WriterTraits {
        WriterTraits {
            // `time_utc`, and the origin in each file's metadata.
            keeps_epoch: KeepsEpoch::Always,
            ..WriterTraits::DEFAULT
        }
    }

    fn collection(&self) -> Option<&dyn Collection> {
        Some(self)
    }

    fn frames(&self) -> Option<&dyn Frames> {
        Some(self)
    }
}

impl Frames for Lake {
    /// When every signal is one field of its channel and its values are numbers
    /// (`frames.rs`).
    fn create_frames(
        &self,
        target: &Path,
        header: &Header,
        layout: &FrameLayout,
        outputs: &mut Outputs,
    ) -> Option<Result<Box<dyn FrameSink>, WriteError>> {
        if target == Path::new("-") {
            return None;
        }
        let name = outputs.recording.clone();
        let name = name.as_deref().unwrap_or(UNNAMED);
        boxed_sink(frames::LakeFrames::create(
            target, name, header, layout, outputs,
        ))
    }

    /// A loose layout's rows are written as its records' are: without a frame value, a
    /// scalar as an array of shape `[]` (`frames.rs`).
    fn takes_loose(&self) -> bool {
        true
    }
}

impl Collection for Lake {
    /// The recording's `values` table.
    fn entry(&self, root: &Path, name: &str) -> PathBuf {
        let [values, _] = table_paths(root, name);
        values
    }
}
