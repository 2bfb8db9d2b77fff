//! MAGES XR Recorder recordings in simrec's documented profile XREC-S 1.0 (spec `xrec.md`):
//! a Start packet, Event packets with frame and RTSS bounds, an End packet. One channel per
//! event type, met while reading; queries by time, create_frame, type and chapter read only
//! the packets whose bounds overlap them.

pub mod body;
pub mod codes;
mod examine;
mod inflate;
pub mod layout;
pub mod mapping;
mod merge;
mod reader;
mod writer;

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde_json::json;

pub use merge::XrecMerge;
pub use reader::{Query, Scan, XrecReader};
pub use writer::XrecWriter;

use crate::formats::format::{
    Detection, Format, KeepsEpoch, Merger, Recovery, SelectorFlag, SliceRequest, Slicer,
    WriteOption, WriterTraits,
};
use crate::formats::output::Outputs;
use crate::formats::{
    Family, GivenFlags, OptionError, ReadError, ReadOptions, Sink, Source, WriteError,
};
use crate::model::time::{outside, unordered_span, window_outside};
use crate::model::{Header, Seconds, TimeSpec};

pub const NAME: &str = "xrec";
/// Raw-bytes tag of an event record (type name to the end of its body).
pub const RAW: &str = "xrec";
/// Key of `Header::metadata` holding the Start, the End and framing (for writers).
pub const HEADER_KEY: &str = "xrec";

/// `--compression`, as XREC takes it.
const COMPRESSION: WriteOption = WriteOption {
    flag: "compression",
    help: "How the output is compressed, for formats that compress",
    aliases: &[],
    values: &["none", "gzip"],
    // Without --compression an XREC input's codec is kept (spec §15).
    default: Some("an XREC input's codec, else none"),
};

/// How an XREC body is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XrecCodec {
    None,
    Gzip,
}

/// How an XREC file is written.
#[derive(Debug, Clone, Copy, Default)]
pub struct XrecWriteOptions {
    /// `None`: an XREC input's codec, else none.
    pub codec: Option<XrecCodec>,
    /// For `recover`: the End says it was repaired.
    pub repair: bool,
}

impl XrecWriteOptions {
    /// The options the flags given ask for.
    pub fn from_flags(flags: &GivenFlags) -> Result<XrecWriteOptions, OptionError> {
        let codecs = [("none", XrecCodec::None), ("gzip", XrecCodec::Gzip)];
        Ok(XrecWriteOptions {
            codec: flags.choice(&COMPRESSION, NAME, &codecs)?,
            repair: flags.repair,
        })
    }
}

pub const CHAPTER: &str = "xrec.Chapter";
pub const TRANSFORM: &str = "xrec.Transform";
pub const CLIENT_ENTER: &str = "xrec.ClientEnter";
pub const SCENE_GRAPH: &str = "xrec.SceneGraph";
/// `FieldSpec::semantic` of a transform's rotation: a unit quaternion x, y, z, w (Unity).
pub use crate::model::QUATERNION_XYZW;

/// The family, as the registry lists it.
pub static FAMILY: Family = Family {
    name: "xrec",
    formats: &[&Xrec],
    mapping: Some(&mapping::IntoXrec),
    key_types: &[],
};

pub struct Xrec;

/// A glob set of `--type` patterns (anchored, `*` crosses dots, as `--channel`).
pub fn type_globs<'a>(
    patterns: impl Iterator<Item = &'a str>,
) -> Result<Option<GlobSet>, ReadError> {
    let mut set = GlobSetBuilder::new();
    let mut any = false;
    for p in patterns {
        let glob = GlobBuilder::new(p)
            .literal_separator(false)
            .backslash_escape(true)
            .build()
            .map_err(|error| {
                ReadError::family_conflict(QueryConflict::TypePattern {
                    pattern: p.to_string(),
                    error,
                })
            })?;
        set.add(glob);
        any = true;
    }
    if !any {
        return Ok(None);
    }
    set.build()
        .map(Some)
        .map_err(|e| ReadError::family_conflict(QueryConflict::Types(e)))
}

/// The reader `slice` asks for (spec §12, §16): the window as record times or create_frame
/// values (`#N` is create_frame N), the types, the chapter, and the rebase.
pub fn open_query(
    path: &Path,
    slice: &SliceRequest,
    options: ReadOptions,
) -> Result<XrecReader, ReadError> {
    let reader = XrecReader::open(path, options)?;
    let mut q = Query {
        types: type_globs(slice.selector("type"))?,
        ..Query::default()
    };
    let last = reader
        .packet_scan()
        .rtss
        .map(|(_, hi)| reader.record_time(hi))
        .unwrap_or(0);
    for (spec, is_start) in [(slice.start, true), (slice.end, false)] {
        let Some(spec) = spec else { continue };
        match spec {
            TimeSpec::At(t) => *(if is_start { &mut q.t0 } else { &mut q.t1 }) = Some(t),
            TimeSpec::FromEnd(d) => {
                *(if is_start { &mut q.t0 } else { &mut q.t1 }) = Some(last.saturating_sub(d))
            }
            TimeSpec::Frame(n) => {
                *(if is_start { &mut q.f0 } else { &mut q.f1 }) =
                    Some(n.min(i64::MAX as u64) as i64)
            }
        }
    }
    let chapter: Option<&str> = slice.selector("chapter").next();
    if let Some(name) = chapter {
        let (t0, t1) = chapter_span(path, name, options)?;
        q.t0 = Some(q.t0.map_or(t0, |t| t.max(t0)));
        q.t1 = match (q.t1, t1) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    if let Some(t0) = q.t0 {
        if let Some(why) = unordered_span(t0, q.t1) {
            return Err(why.into());
        }
    }
    if let Some((lo, hi)) = reader.packet_scan().rtss {
        let (first, last) = (reader.record_time(lo), reader.record_time(hi));
        let start = q.t0.unwrap_or(first);
        if window_outside(start, q.t1, first, last) {
            return Err(outside(Seconds(start), q.t1.map(Seconds)).into());
        }
    }
    if slice.rebase && q.t0.is_none() && q.f0.is_some() {
        // A window from a frame starts at its earliest kept event, as a time window starts
        // at its start (spec §16); it bounds nothing the frames do not.
        q.t0 = earliest_kept(path, &q, options)?;
    }
    if slice.rebase {
        q.shift = q.t0.unwrap_or(0);
    }
    let mut reader = reader.with_query(q.clone());
    let sliced = json!({
        "from": path.file_name().map(|n| n.to_string_lossy().to_string()),
        "t0": q.t0,
        "t1": q.t1,
        "frames": [q.f0, q.f1],
        "types": slice.selector("type").collect::<Vec<_>>(),
        "chapter": chapter,
    });
    reader.mark_slice(sliced);
    Ok(reader)
}

/// A reader for a walk before the real read: the events `query` keeps, without bodies
/// (but chapter names), damage reported rather than fatal (the real read stops at it).
fn walker(path: &Path, query: Query, options: ReadOptions) -> Result<XrecReader, ReadError> {
    let walk = ReadOptions {
        decode: false,
        lenient: true,
        ..options
    };
    Ok(XrecReader::open(path, walk)?.with_query(query))
}

/// The earliest record time of the events `query` keeps (none when it keeps none), by a
/// walk of the packets it overlaps.
fn earliest_kept(
    path: &Path,
    query: &Query,
    options: ReadOptions,
) -> Result<Option<i64>, ReadError> {
    let mut reader = walker(path, query.clone(), options)?;
    let mut earliest: Option<i64> = None;
    while let Some(record) = reader.next() {
        let record = record?;
        earliest = Some(earliest.map_or(record.time, |t| t.min(record.time)));
        reader.recycle(record);
    }
    Ok(earliest)
}

/// `[time of the chapter NAME, time of the next chapter)` (spec §12).
fn chapter_span(
    path: &Path,
    name: &str,
    options: ReadOptions,
) -> Result<(i64, Option<i64>), ReadError> {
    let chapters_only = Query {
        types: type_globs(std::iter::once(CHAPTER))?,
        ..Query::default()
    };
    let mut reader = walker(path, chapters_only, options)?;
    let mut chapters = Vec::new();
    for r in reader.by_ref() {
        r?;
    }
    chapters.extend(reader.chapters().iter().map(|(n, t, _)| (n.clone(), *t)));
    chapters.sort_by_key(|(_, t)| *t);
    let Some(i) = chapters.iter().position(|(n, _)| n == name) else {
        return Err(ReadError::family_conflict(QueryConflict::NoChapter {
            name: name.to_string(),
            path: path.into(),
            chapters: chapters.into_iter().map(|(n, _)| n).collect(),
        }));
    };
    let t0 = chapters[i].1;
    let t1 = chapters[i + 1..].iter().map(|(_, t)| *t).find(|t| *t > t0);
    Ok((t0, t1))
}

impl Format for Xrec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn title(&self) -> &'static str {
        "MAGES XR Recorder .xrec (simrec profile XREC-S 1.0)"
    }

    fn names(&self) -> &'static [&'static str] {
        &["xrec"]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[".xrec"]
    }

    fn write_options(&self) -> &'static [WriteOption] {
        &[COMPRESSION]
    }

    fn detect(&self, path: &Path, head: &[u8]) -> Detection {
        // The Start's length is checked against the file by the reader.
        Detection::by(layout::is_profile(head, u64::MAX), self.named_by(path))
    }

    fn open(&self, path: &Path, options: ReadOptions) -> Result<Box<dyn Source>, ReadError> {
        Ok(Box::new(XrecReader::open(path, options)?))
    }

    fn create(
        &self,
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<Box<dyn Sink>, WriteError> {
        let options = XrecWriteOptions::from_flags(&outputs.flags)?;
        Ok(Box::new(XrecWriter::create(
            target, header, outputs, options,
        )?))
    }

    fn writer(&self) -> WriterTraits {
        WriterTraits {
            takes_family_model: true,
            // The Start packet's `begin_unix_ns`.
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

    fn recovery(&self) -> Option<&dyn Recovery> {
        Some(self)
    }
}

impl Slicer for Xrec {
    fn selectors(&self) -> &'static [SelectorFlag] {
        &[
            SelectorFlag {
                flag: "type",
                value_name: "GLOB",
                help: "XREC: keep only events whose type name matches this glob (repeatable; `*` \
                       crosses dots)",
                repeatable: true,
            },
            SelectorFlag {
                flag: "chapter",
                value_name: "NAME",
                help: "XREC: only the events from the chapter marker NAME to the next chapter (or \
                       the end)",
                repeatable: false,
            },
        ]
    }

    fn open_slice(
        &self,
        paths: &[PathBuf],
        slice: &SliceRequest,
        options: ReadOptions,
    ) -> Option<Result<Box<dyn Source>, ReadError>> {
        let [path] = paths else { return None };
        Some(open_query(path, slice, options).map(|r| Box::new(r) as Box<dyn Source>))
    }
}

impl Merger for Xrec {
    /// Sessions merged by absolute time on a clock of their own (spec §16).
    fn open_merge(
        &self,
        paths: &[PathBuf],
        options: ReadOptions,
    ) -> Option<Result<Box<dyn Source>, ReadError>> {
        Some(XrecMerge::open(paths, options).map(|m| Box::new(m) as Box<dyn Source>))
    }
}

impl Recovery for Xrec {
    /// Every whole, valid packet up to the first damaged one (spec §16).
    fn open_recover(
        &self,
        path: &Path,
        options: ReadOptions,
    ) -> Option<Result<Box<dyn Source>, ReadError>> {
        Some(XrecReader::open_recover(path, options).map(|r| Box::new(r) as Box<dyn Source>))
    }

    fn recover_flags(&self, _input: &Path) -> GivenFlags {
        GivenFlags::repairing()
    }
}

/// Why `--type` or `--chapter` cannot select in an XREC input.
#[derive(Debug, thiserror::Error)]
enum QueryConflict {
    #[error("--type `{pattern}`: {}", .error.kind())]
    TypePattern {
        pattern: String,
        error: globset::Error,
    },
    #[error("--type: {0}")]
    Types(globset::Error),
    #[error(
        "--chapter `{name}`: {} has no such chapter (its chapters: {})",
        path.display(),
        match chapters.is_empty() {
            true => "none".to_string(),
            false => chapters.join(", "),
        }
    )]
    NoChapter {
        name: String,
        path: PathBuf,
        chapters: Vec<String>,
    },
}
