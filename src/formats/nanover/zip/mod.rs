//! NanoVer `.nanover.zip` recordings: a stored ZIP of `messages.msgpack` (concatenated
//! msgpack messages) and `index.msgpack` (where each message is, and its time).
//! Spec: `nanover-zip.md`.

mod codes;
mod container;
mod encode;
mod index;
mod keys;
mod message;
pub mod msgpack;
mod reader;
mod stamps;
mod walk;
mod writer;

use std::path::Path;

pub use codes::*;
pub use reader::ZipReader;
pub use writer::ZipWriter;

use crate::formats::format::{Detection, Format, WriterTraits};
use crate::formats::nanover::frame_fields;
use crate::formats::output::Outputs;
use crate::formats::{ReadError, ReadOptions, Sink, Source, WriteError};
use crate::model::{Channel, ChannelKind, Composition, FieldSpec, Header, FRAME_VALUE};
use message::PartKind;

/// Raw-bytes tag of a whole message (shared by every part record of the message).
pub const RAW_FORMAT: &str = "nanover-zip";
pub const EXTENSION: &str = ".nanover.zip";

fn header(parts: &[PartKind]) -> Header {
    let mut h = Header::new("nanover-zip", "none");
    h.origin.system = Some("recorder start (monotonic clock, microseconds)".into());
    for kind in parts {
        let mut c = match kind {
            PartKind::Frame => Channel::new("frame", ChannelKind::Signals, Composition::FrameDelta),
            PartKind::State => Channel::new("state", ChannelKind::Signals, Composition::StateDelta),
            PartKind::Command => {
                Channel::new("command", ChannelKind::Events, Composition::Independent)
            }
        };
        if *kind == PartKind::Frame {
            c.fields = frame_fields();
            // A frame's `frame.index` is kept among its values and is its frame value too.
            c.fields.push(FieldSpec {
                semantic: Some(FRAME_VALUE.into()),
                ..FieldSpec::new(keys::FRAME_INDEX)
            });
        }
        h.add_channel(c);
    }
    h
}

pub struct NanoverZip;

impl Format for NanoverZip {
    fn title(&self) -> &'static str {
        "NanoVer .nanover.zip"
    }

    fn name(&self) -> &'static str {
        "nanover-zip"
    }

    fn names(&self) -> &'static [&'static str] {
        &["nanover-zip", "nanover.zip"]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[EXTENSION]
    }

    fn detect(&self, path: &Path, head: &[u8]) -> Detection {
        // A ZIP whose first member is messages.msgpack (finished or crashed).
        let name = container::MESSAGES.as_bytes();
        let content = head.len() >= 30 + name.len()
            && head[..4] == [0x50, 0x4b, 0x03, 0x04]
            && &head[30..30 + name.len()] == name;
        Detection::by(content, self.named_by(path))
    }

    fn open(&self, path: &Path, options: ReadOptions) -> Result<Box<dyn Source>, ReadError> {
        Ok(Box::new(ZipReader::open(path, options)?))
    }

    fn create(
        &self,
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<Box<dyn Sink>, WriteError> {
        Ok(Box::new(ZipWriter::create(target, header, outputs)?))
    }

    fn writer(&self) -> WriterTraits {
        WriterTraits {
            takes_family_model: true,
            needs_time_order: true,
            ..WriterTraits::DEFAULT
        }
    }
}
