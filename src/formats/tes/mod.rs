//! 3rd Eye Scene captures (`.3es`): big-endian packets with CRC-16, optionally collated
//! (raw or gzip) or gzipped whole after the header packets. Spec: `tes.md`.

mod codes;
pub mod decode;
pub mod encode;
pub mod mapping;
mod merge;
pub mod names;
pub mod packet;
mod reader;
mod repair;
mod scheme;
mod slice;
mod stats;
mod stream;
mod validate;
mod walk;

pub mod world;
mod writer;

use std::path::{Path, PathBuf};

pub use codes::*;
pub use merge::{TesMerge, MERGE_COORDINATE_FRAME, MERGE_LONG_FRAME, MERGE_USER_IDS};
pub use reader::TesReader;
pub use slice::TesSlice;
pub use writer::{Compression3es, TesWriteOptions, TesWriter};

/// `--compression`, as 3es takes it.
const COMPRESSION: WriteOption = WriteOption {
    flag: "compression",
    help: "How the output is compressed, for formats that compress",
    // Its name from when only 3es compressed.
    aliases: &["tes-compression"],
    values: Compression3es::NAMES,
    default: None,
};

impl TesWriteOptions {
    /// The options the flags given ask for.
    pub fn from_flags(flags: &GivenFlags) -> Result<TesWriteOptions, OptionError> {
        let choices = Compression3es::NAMES
            .iter()
            .filter_map(|n| Some((*n, Compression3es::parse(n)?)))
            .collect::<Vec<_>>();
        Ok(TesWriteOptions {
            compression: flags
                .choice(&COMPRESSION, "3es", &choices)?
                .unwrap_or(Compression3es::CollatedGzip),
            repair: flags.repair,
        })
    }
}

use crate::formats::format::{
    Detection, Format, Merger, Recovery, SliceRequest, Slicer, WriteOption, WriterTraits,
};
use crate::formats::input::Input;
use crate::formats::output::Outputs;
use crate::formats::read_ahead::ReadAhead;
use crate::formats::{
    Family, GivenFlags, OptionError, ReadError, ReadOptions, Sink, Source, WriteError,
};
use crate::model::{Channel, ChannelKind, Composition, Header, Nanos, RawBytes, Record};

/// The family, as the registry lists it.
pub static FAMILY: Family = Family {
    name: "3es",
    formats: &[&Tes],
    mapping: Some(&mapping::IntoTes),
    key_types: &[],
};

/// Raw-bytes tag: a whole packet (header, payload, CRC).
pub const RAW_FORMAT: &str = "3es";

/// The record of a packet simrec put together itself (a merge's rewritten packet, a
/// slice's world state), at `time` and `frame`; `None` for a malformed packet.
fn packet_record(p: Vec<u8>, values: bool, time: Nanos, frame: u64) -> Option<Record> {
    let h = packet::PacketHeader::parse(&p)?;
    let start = h.payload_start();
    let payload = p.get(start..start + h.payload_size as usize)?;
    let d = decode::decode(
        h.routing_id,
        h.message_id,
        payload,
        decode::Ctx {
            version_minor: h.version_minor.min(4),
            values,
            data_dp: None,
        },
    );
    Some(Record {
        time,
        channel: names::channel_of(h.routing_id, h.message_id),
        entity: d.entity,
        frame: Some(record_frame(h.routing_id, h.message_id, frame)),
        values: d.values,
        raw: Some(Box::new(RawBytes::new(RAW_FORMAT, p))),
        exact_seconds: None,
        group: None,
    })
}

/// The `frame` of a message's record: the index of the frame it belongs to, except for a
/// Reset, whose record has frame 0 on the frame-delta channel `3es/reset`, which is how
/// simrec's model marks a reset (`inspect` counts it, `--split-at-resets` starts a part).
fn record_frame(routing: u16, message: u16, frame: u64) -> i64 {
    if names::is_reset(routing, message) {
        0
    } else {
        i64::try_from(frame).unwrap_or(i64::MAX)
    }
}

fn header(version_minor: u16) -> Header {
    let mut h = Header::new("3es", format!("0.{version_minor}"));
    h.origin.system = Some("start of frame 0 (no absolute time in the format)".into());
    for (i, (name, _)) in names::CHANNELS.iter().enumerate() {
        let composition = if i as u32 == names::RESET_CHANNEL {
            Composition::FrameDelta
        } else {
            Composition::Independent
        };
        h.add_channel(Channel::new(*name, ChannelKind::Events, composition));
    }
    h
}

/// Whether `head` looks like a capture: a packet marker at byte 0 whose first packet is
/// plausible (a ServerInfo normally), or gzip magic right after whole header packets.
fn looks_like_tes(head: &[u8]) -> bool {
    if head.starts_with(&[0x1f, 0x8b]) {
        // Gzip from byte 0: a capture if the decoded stream starts with a packet.
        use std::io::Read;
        let mut first = Vec::new();
        let _ = flate2::read::MultiGzDecoder::new(head)
            .take(packet::HEADER_LEN as u64)
            .read_to_end(&mut first);
        return packet::PacketHeader::parse(&first).is_some_and(|h| h.plausible());
    }
    packet::PacketHeader::parse(head).is_some_and(|h| h.plausible())
}

pub struct Tes;

impl Format for Tes {
    fn title(&self) -> &'static str {
        "3rd Eye Scene .3es"
    }

    fn write_options(&self) -> &'static [WriteOption] {
        &[COMPRESSION]
    }

    fn name(&self) -> &'static str {
        "3es"
    }

    fn names(&self) -> &'static [&'static str] {
        &["3es", "tes"]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[".3es"]
    }

    fn detect(&self, path: &Path, head: &[u8]) -> Detection {
        Detection::by(looks_like_tes(head), self.named_by(path))
    }

    fn open(&self, path: &Path, options: ReadOptions) -> Result<Box<dyn Source>, ReadError> {
        // Read on a thread of its own: decoding the packets overlaps the writer's work
        // (docs/performance.md, "3es read ahead").
        let reader = TesReader::open(path, options)?;
        let ahead =
            ReadAhead::spawn("3es-read", reader).map_err(|e| ReadError::from(e).in_file(path))?;
        Ok(Box::new(ahead))
    }

    fn create(
        &self,
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<Box<dyn Sink>, WriteError> {
        let options = TesWriteOptions::from_flags(&outputs.flags)?;
        Ok(Box::new(TesWriter::create(
            target, header, outputs, options,
        )?))
    }

    fn writer(&self) -> WriterTraits {
        WriterTraits {
            takes_family_model: true,
            needs_time_order: true,
            // A capture's time is the sum of its frames' durations (spec §11.2): frame 0 starts at
            // 0, so a window into it starts there.
            keeps_time: Err("a 3es capture's time is the sum of its frames' durations, from 0"),
            ..WriterTraits::DEFAULT
        }
    }

    fn slicer(&self) -> Option<&dyn Slicer> {
        Some(self)
    }

    fn merger(&self) -> Option<&dyn Merger> {
        Some(self)
    }

    fn recovery(&self) -> Option<&dyn Recovery> {
        Some(self)
    }
}

impl Slicer for Tes {
    fn open_slice(
        &self,
        paths: &[PathBuf],
        slice: &SliceRequest,
        options: ReadOptions,
    ) -> Option<Result<Box<dyn Source>, ReadError>> {
        let [path] = paths else {
            // The generic window over a merge would cut without the world state (every 3es
            // channel is a stream of independent messages), so the slice would not play.
            return Some(Err(ReadError::family_conflict(SliceOfMany(paths.to_vec()))));
        };
        Some(
            TesSlice::open(path, slice.start, slice.end, slice.rebase, options)
                .map(|s| Box::new(s) as Box<dyn Source>),
        )
    }
}

impl Merger for Tes {
    fn open_merge(
        &self,
        paths: &[PathBuf],
        options: ReadOptions,
    ) -> Option<Result<Box<dyn Source>, ReadError>> {
        // Spec §11.3: one timeline, colliding ids remapped, common time unit.
        Some(TesMerge::open(paths, options).map(|m| Box::new(m) as Box<dyn Source>))
    }
}

impl Recovery for Tes {
    fn recover_flags(&self, input: &Path) -> GivenFlags {
        // Written back in its own scheme (byte-identical for an intact plain capture), with
        // damaged packets and what depended on them dropped.
        let mut flags = GivenFlags::repairing();
        if let Ok(mut input) = Input::open(input) {
            let scheme = scheme::scheme_of(&mut input);
            flags.push(
                COMPRESSION.flag,
                COMPRESSION.flag,
                Some(scheme.name().into()),
            );
        }
        flags
    }
}

/// A slice of several captures: the generic window over their merge would not play.
#[derive(Debug, thiserror::Error)]
#[error(
    "slicing {} 3es captures at once is not supported: merge them first (`simrec merge {} -o \
     merged.3es`), then slice merged.3es",
    .0.len(),
    .0.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" ")
)]
struct SliceOfMany(Vec<PathBuf>);
