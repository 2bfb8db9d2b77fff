//! NanoVer legacy recordings: `.traj` (frames) and `.state` (shared state), version 2,
//! with headerless version 1 recognised. Spec: `nanover-legacy.md`.

mod codes;
mod encode;
mod keys;
pub mod proto;
mod reader;
mod validate;
pub mod wire;
mod writer;

use std::path::{Path, PathBuf};

pub use codes::*;
pub use reader::LegacyReader;
pub use writer::LegacyWriter;

use crate::formats::format::{Detection, Format, MultiFile, WriterTraits};
use crate::formats::nanover::frame_fields;
use crate::formats::output::Outputs;
use crate::formats::{ReadError, ReadOptions, Sink, Source, TimeRange, WriteError};
use crate::model::{Channel, ChannelKind, Composition, Header, Seconds};
use crate::report::{Finding, Severity};

/// `0x5C71E3C49989B7E3`, bytes 0..8 of every version-2 file.
pub const MAGIC: u64 = 6_661_355_757_386_708_963;
/// Raw-bytes tag of version-2 records (a whole record: 24-byte header and payload).
pub const RAW_FORMAT: &str = "nanover-legacy";
/// Raw-bytes tag of version-1 records, which a version-2 writer must re-encode.
pub const RAW_FORMAT_V1: &str = "nanover-legacy-v1";

/// Which file of the pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// `.traj`: `GetFrameResponse` records on channel `frame`.
    Frames,
    /// `.state`: `StateUpdate` records on channel `state`.
    State,
}

impl Stream {
    pub fn extension(self) -> &'static str {
        match self {
            Stream::Frames => ".traj",
            Stream::State => ".state",
        }
    }

    fn from_path(path: &Path) -> Option<Stream> {
        match path.extension()?.to_str()? {
            "traj" => Some(Stream::Frames),
            "state" => Some(Stream::State),
            _ => None,
        }
    }
}

fn header(stream: Stream, version: u32) -> Header {
    let (format, channel, composition) = match stream {
        Stream::Frames => ("nanover-traj", "frame", Composition::FrameDelta),
        Stream::State => ("nanover-state", "state", Composition::StateDelta),
    };
    let mut h = Header::new(format, version.to_string());
    h.origin.system = Some("recorder start (monotonic clock, microseconds)".into());
    let mut c = Channel::new(channel, ChannelKind::Signals, composition);
    if stream == Stream::Frames {
        c.fields = frame_fields();
    }
    h.add_channel(c);
    h
}

pub struct NanoverLegacy;

impl Format for NanoverLegacy {
    fn title(&self) -> &'static str {
        "NanoVer legacy .traj/.state"
    }

    fn name(&self) -> &'static str {
        "nanover-legacy"
    }

    fn names(&self) -> &'static [&'static str] {
        &[
            "nanover-legacy",
            "nanover-traj",
            "nanover-state",
            "traj",
            "state",
        ]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[".traj", ".state"]
    }

    fn detect(&self, path: &Path, head: &[u8]) -> Detection {
        let content = head.len() >= 8 && head[..8] == MAGIC.to_le_bytes();
        Detection::by(content, self.named_by(path))
    }

    fn open(&self, path: &Path, options: ReadOptions) -> Result<Box<dyn Source>, ReadError> {
        Ok(Box::new(LegacyReader::open(
            path,
            Stream::from_path(path),
            options,
        )?))
    }

    fn create(
        &self,
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<Box<dyn Sink>, WriteError> {
        Ok(Box::new(LegacyWriter::create(target, header, outputs)?))
    }

    fn writer(&self) -> WriterTraits {
        WriterTraits {
            takes_family_model: true,
            needs_time_order: true,
            ..WriterTraits::DEFAULT
        }
    }

    fn multi_file(&self) -> Option<&dyn MultiFile> {
        Some(self)
    }
}

impl MultiFile for NanoverLegacy {
    fn companions(&self, path: &Path) -> Vec<PathBuf> {
        match Stream::from_path(path) {
            Some(Stream::Frames) => vec![path.with_extension("state")],
            Some(Stream::State) => vec![path.with_extension("traj")],
            None => Vec::new(),
        }
    }

    fn check_together(
        &self,
        files: &[(&Path, &Header, Option<TimeRange>)],
    ) -> Vec<(usize, Finding)> {
        let of = |format: &str| -> Vec<usize> {
            (0..files.len())
                .filter(|&i| files[i].1.format == format)
                .collect()
        };
        let (trajs, states) = (of("nanover-traj"), of("nanover-state"));
        // One .traj and one .state are a pair whatever their names; otherwise pair by stem.
        let pairs: Vec<(usize, usize)> = if trajs.len() == 1 && states.len() == 1 {
            vec![(trajs[0], states[0])]
        } else {
            let stem = |i: usize| files[i].0.with_extension("");
            trajs
                .iter()
                .filter_map(|&t| {
                    states
                        .iter()
                        .find(|&&s| stem(s) == stem(t))
                        .map(|&s| (t, s))
                })
                .collect()
        };
        pairs
            .into_iter()
            .filter_map(|(t, s)| {
                let (tr, sr) = (files[t].2?, files[s].2?);
                let disjoint = tr.1 < sr.0 || sr.1 < tr.0;
                disjoint.then(|| {
                    let message = format!(
                        "{} ({} .. {}) and {} ({} .. {}) do not overlap in time: are they one recording?",
                        files[t].0.display(),
                        Seconds(tr.0),
                        Seconds(tr.1),
                        files[s].0.display(),
                        Seconds(sr.0),
                        Seconds(sr.1)
                    );
                    (s, Finding::new(Severity::Warning, PAIR_DISJOINT, message))
                })
            })
            .collect()
    }
}
