//! MCAP output (`.mcap`, write-only): protobuf topics with schemas built from the channel
//! model, one per group of values sampled together (an Icarus component, an Elodin
//! archetype, a NanoVer frame) and one message per instant; JSON topics for channels whose
//! keys are not known up front (or all, `--mcap-encoding json`); Foxglove 3D topics
//! (`/particles` PointCloud, `/tf` FrameTransforms, `/3es/scene` SceneUpdate) so the
//! recording plays in Foxglove's 3D panel. Chunked, zstd-compressed (`--compression`), with a summary
//! (statistics, chunk and message indexes). docs/formats/mcap.md.

mod chunks;
mod component;
mod file;
mod frame_message;
mod frames;
mod layout;
mod proto;
mod scene;
mod schema;
mod writer;

use std::path::Path;

pub use layout::Encoding as McapEncoding;
pub use writer::{McapCompression, McapWriteOptions, McapWriter, COMPRESSIONS, ENCODINGS};
use writer::{COMPRESSION_CHOICES, ENCODING_CHOICES};

/// `--compression`, as MCAP takes it.
const COMPRESSION: WriteOption = WriteOption {
    flag: "compression",
    help: "How the output is compressed, for formats that compress",
    aliases: &[],
    values: COMPRESSIONS,
    default: None,
};

/// `--mcap-encoding`.
const ENCODING: WriteOption = WriteOption {
    flag: "mcap-encoding",
    help: "How MCAP messages are encoded: protobuf, one topic per component or group and one message per instant; or json, the old layout of a JSON topic per channel and a message per record",
    aliases: &[],
    values: ENCODINGS,
    default: None,
};

impl McapWriteOptions {
    /// The options the flags given ask for.
    pub fn from_flags(flags: &crate::formats::GivenFlags) -> Result<Self, OptionError> {
        Ok(McapWriteOptions {
            compression: flags
                .choice(&COMPRESSION, "mcap", COMPRESSION_CHOICES)?
                .unwrap_or_default(),
            encoding: flags
                .choice(&ENCODING, "mcap", ENCODING_CHOICES)?
                .unwrap_or_default(),
        })
    }
}

use crate::formats::format::{Detection, Format, Frames, KeepsEpoch, WriteOption, WriterTraits};
use crate::formats::frames::{boxed_sink, FrameLayout, FrameSink};
use crate::formats::output::Outputs;
use crate::formats::{OptionError, ReadError, ReadOptions, Sink, Source, Unreadable, WriteError};
use crate::model::Header;

/// The first bytes of every MCAP file (and its last).
pub const MAGIC: &[u8] = b"\x89MCAP0\r\n";

pub struct Mcap;

impl Format for Mcap {
    fn name(&self) -> &'static str {
        "mcap"
    }

    fn title(&self) -> &'static str {
        "MCAP (protobuf messages and Foxglove 3D)"
    }

    fn reads(&self) -> bool {
        false
    }

    fn names(&self) -> &'static [&'static str] {
        &["mcap"]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[".mcap"]
    }

    fn detect(&self, path: &Path, head: &[u8]) -> Detection {
        Detection::by(head.starts_with(MAGIC), self.named_by(path))
    }

    fn open(&self, path: &Path, _options: ReadOptions) -> Result<Box<dyn Source>, ReadError> {
        Err(ReadError::Unsupported(Unreadable::WriteOnly {
            path: path.into(),
            why: "simrec writes MCAP but does not read it (try `mcap info`)",
        }))
    }

    fn write_options(&self) -> &'static [WriteOption] {
        &[COMPRESSION, ENCODING]
    }

    fn create(
        &self,
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<Box<dyn Sink>, WriteError> {
        let options = McapWriteOptions::from_flags(&outputs.flags)?;
        let out = outputs.create_seekable(target)?;
        Ok(Box::new(McapWriter::create(out, target, header, options)?))
    }

    fn writer(&self) -> WriterTraits {
        WriterTraits {
            // Each topic's schema is built from field specs before its first message.
            needs_schema: true,
            // Log times are absolute (epoch + time), and the metadata names the origin.
            keeps_epoch: KeepsEpoch::Always,
            ..WriterTraits::DEFAULT
        }
    }

    fn frames(&self) -> Option<&dyn Frames> {
        Some(self)
    }
}

impl Frames for Mcap {
    /// The protobuf layout, from the frames of `.icarec`, Icarus HDF5 and an Elodin DB
    /// (`frames.rs`).
    fn create_frames(
        &self,
        target: &Path,
        header: &Header,
        layout: &FrameLayout,
        outputs: &mut Outputs,
    ) -> Option<Result<Box<dyn FrameSink>, WriteError>> {
        let options = match McapWriteOptions::from_flags(&outputs.flags) {
            Ok(o) => o,
            Err(e) => return Some(Err(e.into())),
        };
        boxed_sink(frames::McapFrames::create(
            target, header, layout, outputs, options,
        ))
    }

    /// A loose layout's messages carry no frame, as its records' do not.
    fn takes_loose(&self) -> bool {
        true
    }
}
