//! Icarus recordings in simrec's `.icarec` profile (spec `icarec.md`, Part A): a directory
//! holding `schema.json`, `static_signals.bin`, `dynamic_signals.bin` and `metadata.json`,
//! or the same four files in one ustar archive (`NAME.icarec.tar`), both recognised by
//! content.

mod codec;
pub mod codes;
mod container;
mod facts;
mod frames;
mod merge;
pub mod metadata;
mod reader;
pub mod schema;
mod steps;
mod ustar;
mod writer;

use std::path::Path;

pub use reader::IcarecReader;
pub use writer::{IcarecForm, IcarecWriteOptions, IcarecWriter, FORMS};

/// `--icarec-form`.
const FORM: WriteOption = WriteOption {
    flag: "icarec-form",
    help: "Form of an .icarec output: a directory, or one ustar file; by default the output's name decides (NAME.icarec.tar is one file)",
    aliases: &[],
    values: FORMS,
    default: Some("by the output's name"),
};

impl IcarecWriteOptions {
    /// The options the flags given ask for.
    pub fn from_flags(flags: &GivenFlags) -> Result<IcarecWriteOptions, OptionError> {
        let forms = [("dir", IcarecForm::Directory), ("tar", IcarecForm::Tar)];
        Ok(IcarecWriteOptions {
            form: flags.choice(&FORM, "icarec", &forms)?,
        })
    }
}

use std::path::PathBuf;

use crate::formats::format::{
    path_names, Detection, Directory, Format, Frames, KeepsEpoch, Merger, SliceRequest, Slicer,
    WriteOption, WriterTraits,
};
use crate::formats::frames::{boxed_source, FrameSource};
use crate::formats::icarus::common::slice_by_frames;
use crate::formats::output::Outputs;
use crate::formats::{GivenFlags, OptionError, ReadError, ReadOptions, Sink, Source, WriteError};
use crate::model::Header;

/// An `.icarec` writer keeps the keys of what the reader put under this key.
pub use crate::formats::icarus::common::ICAREC_HEADER_KEY as HEADER_KEY;

/// Raw-bytes tag of a whole frame (time + dynamic block): the time is inside.
pub const RAW_FRAME: &str = "icarec";
/// Raw-bytes tag of the whole static block (on the first static record).
pub const RAW_STATIC: &str = "icarec-static";

/// The members of a ustar archive in memory and what is wrong with its structure, as the
/// reader walks it (for the fuzzer): whatever the bytes, this returns.
pub fn walk_tar(bytes: &[u8]) -> usize {
    container::walk_bytes(bytes).0.len()
}

pub struct Icarec;

impl Format for Icarec {
    fn name(&self) -> &'static str {
        "icarec"
    }

    fn title(&self) -> &'static str {
        "Icarus .icarec (directory or .icarec.tar)"
    }

    fn names(&self) -> &'static [&'static str] {
        &["icarec"]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[".icarec", ".icarec.tar"]
    }

    fn write_options(&self) -> &'static [WriteOption] {
        &[FORM]
    }

    fn detect(&self, path: &Path, head: &[u8]) -> Detection {
        if path.is_dir() {
            return Detection::by(path.join(schema::FILE).is_file(), self.named_by(path));
        }
        Detection::by(container::is_tar(head), self.named_by(path))
    }

    fn open(&self, path: &Path, options: ReadOptions) -> Result<Box<dyn Source>, ReadError> {
        Ok(Box::new(IcarecReader::open(path, options)?))
    }

    fn create(
        &self,
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<Box<dyn Sink>, WriteError> {
        let options = IcarecWriteOptions::from_flags(&outputs.flags)?;
        Ok(Box::new(IcarecWriter::create(
            target, header, outputs, options,
        )?))
    }

    fn writer(&self) -> WriterTraits {
        WriterTraits {
            takes_family_model: true,
            needs_time_order: true,
            needs_schema: true,
            // `schema.json`'s `time.epoch` and `time.system`.
            keeps_epoch: KeepsEpoch::Always,
            ..WriterTraits::DEFAULT
        }
    }

    fn slicer(&self) -> Option<&dyn Slicer> {
        Some(self)
    }

    fn merger(&self) -> Option<&dyn Merger> {
        Some(self)
    }

    fn frames(&self) -> Option<&dyn Frames> {
        Some(self)
    }

    fn directory(&self) -> Option<&dyn Directory> {
        Some(self)
    }
}

impl Slicer for Icarec {
    /// One recording is sliced by binary search over its frame times (spec §A14): only the
    /// frames of the window are read, and with `--keep-time` they are copied verbatim.
    /// Several inputs go through the generic merge and window.
    fn open_slice(
        &self,
        paths: &[PathBuf],
        slice: &SliceRequest,
        options: ReadOptions,
    ) -> Option<Result<Box<dyn Source>, ReadError>> {
        let [path] = paths else { return None };
        slice_by_frames(IcarecReader::open(path, options), slice)
    }
}

impl Merger for Icarec {
    /// The profile's two merge kinds (spec §A14): a continuation of one schema, or a union
    /// of disjoint signals on identical times; anything else is refused.
    fn open_merge(
        &self,
        paths: &[PathBuf],
        options: ReadOptions,
    ) -> Option<Result<Box<dyn Source>, ReadError>> {
        (paths.len() > 1).then(|| merge::open(paths, options))
    }
}

impl Frames for Icarec {
    /// Each frame's dynamic block as it is in the file (directory or archive).
    fn open_frames(
        &self,
        path: &Path,
        options: ReadOptions,
    ) -> Option<Result<Box<dyn FrameSource>, ReadError>> {
        boxed_source(frames::IcarecFrames::open(path, options))
    }
}

impl Directory for Icarec {
    /// The four members of the directory form.
    fn writes_entry(&self, relative: &Path, path: &Path) -> bool {
        matches!(path_names(relative).as_deref(), Some([name]) if container::PARTS.contains(name))
            && path.is_file()
    }
}
