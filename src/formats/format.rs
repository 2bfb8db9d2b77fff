//! What a format is to simrec: the `Format` trait every format folder implements, how sure
//! a format is of a file (`Detection`), and the writer options it declares. Formats import
//! this module, never the registry (which imports every format).

use std::path::{Path, PathBuf};

use super::frames::{FrameLayout, FrameSink, FrameSource};
use super::output::Outputs;
use super::{ReadError, ReadOptions, Sink, Source, TimeRange, WriteError};
use crate::model::{Epoch, Header, TimeSpec};
use crate::report::Finding;

/// How sure a format is that it can read a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Detection {
    No,
    /// The name says so.
    Extension,
    /// The bytes say so (magic numbers, layout).
    Content,
}

impl Detection {
    /// `Content` when the bytes say so, else `Extension` when the name does, else `No`.
    pub fn by(content: bool, extension: bool) -> Detection {
        match (content, extension) {
            (true, _) => Detection::Content,
            (false, true) => Detection::Extension,
            (false, false) => Detection::No,
        }
    }
}

/// Whether a file name ends with `extension` (with the dot), and has more before it.
pub(crate) fn has_extension(name: &str, extension: &str) -> bool {
    name.len() > extension.len() && name.ends_with(extension)
}

/// The first (and last) bytes of a Parquet file.
pub(crate) const PARQUET_MAGIC: &[u8] = b"PAR1";

/// Whether `path` is a regular file whose bytes start with `magic`.
pub(crate) fn file_starts_with(path: &Path, magic: &[u8]) -> bool {
    use std::io::Read;
    let mut head = vec![0; magic.len()];
    path.is_file()
        && std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut head))
            .is_ok_and(|()| head == magic)
}

/// The names along a relative path (`world/body.parquet` → `["world", "body.parquet"]`), or
/// `None` when one is not a plain UTF-8 name.
pub(crate) fn path_names(relative: &Path) -> Option<Vec<&str>> {
    relative
        .components()
        .map(|c| match c {
            std::path::Component::Normal(n) => n.to_str(),
            _ => None,
        })
        .collect()
}

/// A writer option a format declares (`--compression`): the CLI gathers them from every
/// format and checks a value against the chosen writer's.
#[derive(Debug, Clone, Copy)]
pub struct WriteOption {
    /// The option's name on the command line, without dashes (`compression`).
    pub flag: &'static str,
    /// What the option does, for `--help`; formats sharing a flag share this text.
    pub help: &'static str,
    /// Older names of the option, accepted and hidden from help.
    pub aliases: &'static [&'static str],
    /// Values the writer accepts, the default first (unless `default` says otherwise); none
    /// for a switch (`--fold`), which takes no value and sets the setting to `true`.
    pub values: &'static [&'static str],
    /// What the writer does without the option, for `--help`, when that is not the first of
    /// `values` (it depends on the input or the output's name): a few words (`an XREC
    /// input's codec, else none`). `None` when it is the first of `values`.
    pub default: Option<&'static str>,
    /// The writer setting ([`Outputs::set`]) the value goes to.
    pub setting: &'static str,
}

/// `--time utc`: a table's time column holds absolute times (ISO-8601 UTC, to the
/// nanosecond) instead of times from the recording's time zero, so its absolute start is
/// not lost. The formats that take it (CSV, JSON Lines) declare this one option.
pub const TIME_OPTION: WriteOption = WriteOption {
    flag: "time",
    help: "Times in a table: from the recording's time zero (relative), or absolute, ISO-8601 UTC to the nanosecond (utc; needs an absolute start). Relative times lose an absolute start (exit 3)",
    aliases: &[],
    values: &["relative", "utc"],
    default: None,
    setting: "time",
};

/// Whether `outputs` ask for absolute times ([`TIME_OPTION`] `utc`).
pub fn absolute_times(outputs: &Outputs) -> bool {
    outputs.setting(TIME_OPTION.setting) == Some("utc")
}

/// The absolute start a writer shows its times from when `outputs` ask for absolute times:
/// `header`'s epoch, or a refusal (usage: nothing is written) when it has none.
pub fn utc_epoch(header: &Header, outputs: &Outputs) -> Result<Option<Epoch>, WriteError> {
    if !absolute_times(outputs) {
        return Ok(None);
    }
    match header.origin.epoch {
        Some(epoch) => Ok(Some(epoch)),
        None => Err(WriteError::Refused(
            "--time utc: the recording has no absolute start (give it one with --epoch)".into(),
        )),
    }
}

/// What a slice asks for: a window, whether it is rebased to start at 0, and selectors a
/// format defines for itself (XREC's `type`, `chapter`), by name. A format that takes part
/// in slicing reads what it knows from here; adding a selector changes no signature.
#[derive(Debug, Clone, Default)]
pub struct SliceRequest {
    pub start: Option<TimeSpec>,
    pub end: Option<TimeSpec>,
    pub rebase: bool,
    pub selectors: Vec<(String, String)>,
}

impl SliceRequest {
    /// The values given for selector `name`.
    pub fn selector<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.selectors
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A family of formats sharing one model of a recording, which recordings of other
/// families are mapped into before one of its writers takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// NanoVer: `frame` and `state` channels, particles in nanometres.
    NanoVer,
    /// 3es: shapes and frames (`3es/…` channels), metres.
    Tes,
    /// XREC: events of any type, tracked objects as `xrec.Transform` events.
    Xrec,
    /// Icarus's signal recordings (`.icarec`, HDF5): one value per signal per frame, so one
    /// channel per entity.
    Icarus,
    /// Elodin replays: entities with components; bodies drawn from `world_pos`.
    Elodin,
}

impl Family {
    /// Whether a recording whose header names `format` is of this family already.
    pub fn holds(self, format: &str) -> bool {
        match self {
            Family::NanoVer => format.starts_with("nanover"),
            Family::Tes => format == "3es",
            Family::Xrec => format == "xrec",
            Family::Icarus => format.starts_with("icar"),
            Family::Elodin => format == "elodin",
        }
    }
}

/// One format: detection, reader, writer.
pub trait Format: Sync {
    /// Canonical name, accepted by `--to`.
    fn name(&self) -> &'static str;

    /// What the format is, for help texts (`NanoVer legacy .traj/.state`).
    fn title(&self) -> &'static str;

    /// Whether simrec reads it (JSON Lines is written only).
    fn reads(&self) -> bool {
        true
    }

    /// Writer options this format takes.
    fn write_options(&self) -> &'static [WriteOption] {
        &[]
    }

    /// Every name `--to` accepts for it.
    fn names(&self) -> &'static [&'static str];

    /// Output extensions that select this format (with the dot).
    fn extensions(&self) -> &'static [&'static str];

    /// Whether `path`'s name ends with one of [`Format::extensions`].
    fn named_by(&self, path: &Path) -> bool {
        let name = path.file_name().map(|n| n.to_string_lossy());
        name.is_some_and(|n| self.extensions().iter().any(|e| has_extension(&n, e)))
    }

    /// Looks at the path and the first bytes of a file.
    fn detect(&self, path: &Path, head: &[u8]) -> Detection;

    fn open(&self, path: &Path, options: ReadOptions) -> Result<Box<dyn Source>, ReadError>;

    fn create(
        &self,
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<Box<dyn Sink>, WriteError>;

    /// Whether this format writes a directory, and is the one an output directory
    /// (`out/`, or an existing directory) means when no `--to` names another.
    fn writes_directories(&self) -> bool {
        false
    }

    /// The family whose model this writer takes: a recording of any other family is mapped
    /// into it first (`pipeline::mapping`). `None`: the writer takes every channel as it is.
    fn family(&self) -> Option<Family> {
        None
    }

    /// Whether the writer needs its records in time order (frames, rows and ticks that
    /// never go back): the pipeline then gives a record earlier than the one before it that
    /// record's time (`pipeline::ordered`), unless the source is of the format's own family,
    /// which is copied as recorded.
    fn needs_time_order(&self) -> bool {
        false
    }

    /// Whether the writer lays out its columns before the first record (Parquet, HDF5,
    /// `.icarec`, Elodin). For such a format the pipeline completes every channel's field
    /// specs before `create`: from the source's declarations, else from a bounded look-ahead
    /// at the first records (`pipeline::lookahead`).
    fn needs_schema(&self) -> bool {
        false
    }

    /// Whether an output of this format can keep a recording's own time axis (a window
    /// that starts later than 0 keeps its times); `Err(why)` for a format whose time always
    /// starts at 0: a window written into it is rebased.
    fn keeps_time(&self) -> Result<(), &'static str> {
        Ok(())
    }

    /// Whether an entry of an existing directory (`relative` to it, found at `path`) is one
    /// this format's directory writer writes: `--force` replaces a directory only when every
    /// entry in it is. None by default (the format writes no directory).
    fn writes_entry(&self, _relative: &Path, _path: &Path) -> bool {
        false
    }

    /// Whether an output of this format, written with `outputs`' settings, keeps a
    /// recording's absolute start (its epoch and time system): where it has no place for
    /// it, the pipeline counts it as lost.
    fn keeps_epoch(&self, _outputs: &Outputs) -> bool {
        false
    }

    /// Files `create` will write for `target`.
    fn output_paths(&self, target: &Path, _header: &Header) -> Vec<PathBuf> {
        vec![target.to_path_buf()]
    }

    /// Writer settings ([`Outputs::set`]) with which `recover` writes `input` back in its own
    /// format: stored the way the input is (3es: its compression scheme), and repairing what
    /// dropping damaged records breaks. None by default.
    fn recover_settings(&self, _input: &Path) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// The reader `recover` copies `path` from, when the format keeps less of a damaged file
    /// than its lenient reader returns (XREC stops at its first damaged packet), or `None`
    /// to recover through [`Format::open`] with lenient options.
    fn open_recover(
        &self,
        _path: &Path,
        _options: ReadOptions,
    ) -> Option<Result<Box<dyn Source>, ReadError>> {
        None
    }

    /// A slice the format builds itself of `paths` (one or more inputs, all of this format;
    /// 3es synthesises the world state at the cut, or refuses several inputs), or `None` to
    /// use the generic `pipeline::Window` (folding by channel composition). `slice` carries
    /// the window and any selectors of the format's own (`selectors`, as the CLI gave them).
    fn open_slice(
        &self,
        _paths: &[PathBuf],
        _slice: &SliceRequest,
        _options: ReadOptions,
    ) -> Option<Result<Box<dyn Source>, ReadError>> {
        None
    }

    /// A merge of several inputs of this format that the format does itself (3es must remap
    /// ids and unify time units), or `None` to use the generic k-way merge by time.
    fn open_merge(
        &self,
        _paths: &[PathBuf],
        _options: ReadOptions,
    ) -> Option<Result<Box<dyn Source>, ReadError>> {
        None
    }

    /// `path` read a frame at a time (the Icarus formats), for a conversion that changes
    /// nothing record by record; `None`: not supported, or not for this file (the pipeline
    /// then reads records).
    fn open_frames(
        &self,
        _path: &Path,
        _options: ReadOptions,
    ) -> Option<Result<Box<dyn FrameSource>, ReadError>> {
        None
    }

    /// A writer taking whole frames of `layout` (whose signals `header` declares), reporting
    /// what [`Format::create`]'s writer would; `None`: not supported, or not for this layout
    /// (the pipeline then writes records). Nothing is created when it returns `None`.
    fn create_frames(
        &self,
        _target: &Path,
        _header: &Header,
        _layout: &FrameLayout,
        _outputs: &mut Outputs,
    ) -> Option<Result<Box<dyn FrameSink>, WriteError>> {
        None
    }

    /// Files that usually belong with `path` to make one recording (a `.traj`'s `.state`).
    fn companions(&self, _path: &Path) -> Vec<PathBuf> {
        Vec::new()
    }

    /// Checks across files of this format named together (a `.traj` and its `.state`):
    /// (file index, finding).
    fn check_together(
        &self,
        _files: &[(&Path, &Header, Option<TimeRange>)],
    ) -> Vec<(usize, Finding)> {
        Vec::new()
    }
}
