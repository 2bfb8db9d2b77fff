//! Icarus HDF5 recordings: the file Icarus writes through Vulcan's `HDF5Writer`
//! (`/time`, `/signals/<dotted.name>`, `/metadata`), read and written with the pure-Rust
//! `hdf5-pure` crate. Spec: `icarec.md` Part B.

mod bytes;
pub mod codes;
mod column;
mod frame_writer;
mod frames;
mod layout;
mod reader;
pub mod schema;
mod timeline;
mod writer;

use std::path::{Path, PathBuf};

pub use bytes::Bytes;
pub use frame_writer::IcarusH5FrameWriter;
pub use reader::IcarusH5Reader;
pub use writer::IcarusH5Writer;

use crate::formats::format::{
    Detection, Format, Frames, KeepsEpoch, SliceRequest, Slicer, WriterTraits,
};
use crate::formats::frames::{boxed_sink, boxed_source, FrameLayout, FrameSink, FrameSource};
use crate::formats::icarus::common::slice_by_frames;
use crate::formats::output::Outputs;
use crate::formats::{ReadError, ReadOptions, Sink, Source, WriteError};
use crate::model::Header;

/// The format's name, and its headers' `format`.
pub const NAME: &str = "icarus-hdf5";

/// Reads a whole file held in memory as the reader does (every value, leniently, with the
/// `--deep` checks): (records, findings), or the error that stopped it. For the fuzzer and
/// the damage sweeps: whatever the bytes, this returns.
pub fn read_all(bytes: Vec<u8>) -> Result<(u64, u64), String> {
    let options = ReadOptions {
        lenient: true,
        deep: true,
        ..ReadOptions::default()
    };
    let mut reader =
        IcarusH5Reader::from_bytes(Path::new("fuzz.h5"), Bytes::from_vec(bytes), options)
            .map_err(|e| e.to_string())?;
    let mut records = 0u64;
    while let Some(r) = reader.next() {
        let r = r.map_err(|e| e.to_string())?;
        reader.recycle(r);
        records += 1;
    }
    let findings = reader
        .findings()
        .iter()
        .map(|(_, f)| f.list().len() as u64)
        .sum();
    Ok((records, findings))
}

pub struct IcarusHdf5;

impl Format for IcarusHdf5 {
    fn title(&self) -> &'static str {
        "Icarus HDF5 recordings (Vulcan layout)"
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn names(&self) -> &'static [&'static str] {
        &["icarus-hdf5", "icarus-h5", "hdf5"]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[".h5", ".hdf5"]
    }

    fn detect(&self, path: &Path, head: &[u8]) -> Detection {
        Detection::by(bytes::head_is_hdf5(head), self.named_by(path))
    }

    fn open(&self, path: &Path, options: ReadOptions) -> Result<Box<dyn Source>, ReadError> {
        Ok(Box::new(IcarusH5Reader::open(path, options)?))
    }

    fn create(
        &self,
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<Box<dyn Sink>, WriteError> {
        Ok(Box::new(IcarusH5Writer::create(target, header, outputs)?))
    }

    fn writer(&self) -> WriterTraits {
        WriterTraits {
            takes_family_model: true,
            needs_time_order: true,
            // The datasets are laid out before the first frame is written.
            needs_schema: true,
            // `/metadata` `time_epoch` and `time_system` (simrec's: Vulcan records none).
            keeps_epoch: KeepsEpoch::Always,
            ..WriterTraits::DEFAULT
        }
    }

    fn slicer(&self) -> Option<&dyn Slicer> {
        Some(self)
    }

    fn frames(&self) -> Option<&dyn Frames> {
        Some(self)
    }
}

impl Slicer for IcarusHdf5 {
    /// A time or frame window found by binary search on `/time`; only its rows are read.
    fn open_slice(
        &self,
        paths: &[PathBuf],
        slice: &SliceRequest,
        options: ReadOptions,
    ) -> Option<Result<Box<dyn Source>, ReadError>> {
        let [path] = paths else { return None };
        slice_by_frames(IcarusH5Reader::open(path, options), slice)
    }
}

impl Frames for IcarusHdf5 {
    /// Each frame's value of every signal, packed from the windows the record read reads.
    fn open_frames(
        &self,
        path: &Path,
        options: ReadOptions,
    ) -> Option<Result<Box<dyn FrameSource>, ReadError>> {
        boxed_source(frames::IcarusH5Frames::open(path, options))
    }

    /// Frames go straight into the columns when the layout covers the header's datasets.
    fn create_frames(
        &self,
        target: &Path,
        header: &Header,
        layout: &FrameLayout,
        outputs: &mut Outputs,
    ) -> Option<Result<Box<dyn FrameSink>, WriteError>> {
        boxed_sink(IcarusH5FrameWriter::create(target, header, layout, outputs))
    }
}
