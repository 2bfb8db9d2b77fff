//! What a format is to simrec: the `Format` descriptor every format implements (names,
//! detection, `open`, `create`, what its writer needs), the capabilities with which a format
//! takes over a stage of the pipeline (`Slicer`, `Merger`, `Frames`, `Recovery`,
//! `MultiFile`, `Directory`), how sure a format is of a file (`Detection`), and the writer
//! options it declares. Formats import this module, never the registry (which imports every
//! family).

use std::path::{Path, PathBuf};

use super::frames::{FrameLayout, FrameSink, FrameSource};
use super::options::{GivenFlags, OptionError};
use super::output::Outputs;
use super::{ReadError, ReadOptions, Sink, Source, TimeRange, Unsupported, WriteError};
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
/// format, [`GivenFlags::check`] checks a value against the chosen writer's, and the
/// format parses the flags given into its own typed options (`XrecWriteOptions`, …).
#[derive(Debug, Clone, Copy)]
pub struct WriteOption {
    /// The option's name on the command line, without dashes (`compression`).
    pub flag: &'static str,
    /// What the option does, for `--help`; formats sharing a flag share this text.
    pub help: &'static str,
    /// Older names of the option, accepted and hidden from help.
    pub aliases: &'static [&'static str],
    /// Values the writer accepts, the default first (unless `default` says otherwise); none
    /// for a switch (`--fold`), which takes no value.
    pub values: &'static [&'static str],
    /// What the writer does without the option, for `--help`, when that is not the first of
    /// `values` (it depends on the input or the output's name): a few words (`an XREC
    /// input's codec, else none`). `None` when it is the first of `values`.
    pub default: Option<&'static str>,
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
};

/// What a table's time column holds ([`TIME_OPTION`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TimeColumn {
    /// Times from the recording's time zero.
    #[default]
    Relative,
    /// Absolute times, ISO-8601 UTC.
    Utc,
}

impl TimeColumn {
    /// The time column `--time` asks for; `format` names the writer in a refusal.
    pub fn from_flags(flags: &GivenFlags, format: &'static str) -> Result<Self, OptionError> {
        let choices = [("relative", TimeColumn::Relative), ("utc", TimeColumn::Utc)];
        Ok(flags
            .choice(&TIME_OPTION, format, &choices)?
            .unwrap_or_default())
    }

    /// The absolute start a writer shows its times from: for [`TimeColumn::Utc`],
    /// `header`'s epoch, or a refusal (usage: nothing is written) when it has none.
    pub fn epoch(self, header: &Header) -> Result<Option<Epoch>, WriteError> {
        match (self, header.origin.epoch) {
            (TimeColumn::Relative, _) => Ok(None),
            (TimeColumn::Utc, Some(epoch)) => Ok(Some(epoch)),
            (TimeColumn::Utc, None) => Err(WriteError::Unsupported(Unsupported::NoAbsoluteStart)),
        }
    }
}

/// Whether `outputs` ask for absolute times ([`TIME_OPTION`] `utc`).
pub fn absolute_times(outputs: &Outputs) -> bool {
    outputs.flags.value(TIME_OPTION.flag) == Some("utc")
}

/// A selector a format's slicer declares (XREC's `--type`): the CLI gathers them from every
/// format, as it does writer options.
#[derive(Debug, Clone, Copy)]
pub struct SelectorFlag {
    /// The flag without dashes, and the selector's name in [`SliceRequest::selectors`].
    pub flag: &'static str,
    pub value_name: &'static str,
    /// For `--help`, naming the format.
    pub help: &'static str,
    /// Given more than once, each value is a selector.
    pub repeatable: bool,
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

/// What a writer needs of the records it is given and what it keeps of them: the pipeline
/// reads these before `create` (`pipeline::write`, `pipeline::adapt`, `cli::window`).
#[derive(Debug, Clone, Copy)]
pub struct WriterTraits {
    /// The writer takes its family's model: a recording of another family is read through
    /// the family's mapping first (`pipeline::adapt`). Without it the writer takes every
    /// channel as it is.
    pub takes_family_model: bool,
    /// The writer needs its records in time order (frames, rows and ticks that never go
    /// back): the pipeline then gives a record earlier than the one before it that record's
    /// time (`pipeline::ordered`), unless the source is of the writer's own family (with
    /// `takes_family_model`; else of its own format), which is copied as recorded.
    pub needs_time_order: bool,
    /// The writer lays out its columns before the first record (Parquet, HDF5, `.icarec`,
    /// Elodin): the pipeline completes every channel's field specs before `create`, from
    /// the source's declarations, else from a bounded look-ahead at the first records
    /// (`pipeline::lookahead`).
    pub needs_schema: bool,
    /// Whether an output can keep a recording's own time axis (a window that starts later
    /// than 0 keeps its times); `Err(why)` for a format whose time always starts at 0: a
    /// window written into it is rebased.
    pub keeps_time: Result<(), &'static str>,
    /// Whether an output keeps a recording's absolute start (its epoch and time system):
    /// where it has no place for it, the pipeline counts it as lost.
    pub keeps_epoch: KeepsEpoch,
}

impl WriterTraits {
    /// A writer that takes every channel as it is, in any order, keeps the time axis and
    /// drops the epoch.
    pub const DEFAULT: WriterTraits = WriterTraits {
        takes_family_model: false,
        needs_time_order: false,
        needs_schema: false,
        keeps_time: Ok(()),
        keeps_epoch: KeepsEpoch::Never,
    };
}

/// Whether an output keeps a recording's absolute start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeepsEpoch {
    Never,
    Always,
    /// Only as absolute times ([`TIME_OPTION`] `utc`: a table's time column).
    AsAbsoluteTimes,
}

impl KeepsEpoch {
    /// Whether an output written with `outputs`' flags keeps it.
    pub fn with(self, outputs: &Outputs) -> bool {
        match self {
            KeepsEpoch::Never => false,
            KeepsEpoch::Always => true,
            KeepsEpoch::AsAbsoluteTimes => absolute_times(outputs),
        }
    }
}

/// One format: a descriptor (names, detection, reader, writer, what the writer needs), and
/// the stages of the pipeline it takes over, each an optional capability (`None`: the
/// generic stage runs): [`Format::slicer`], [`Format::merger`], [`Format::frames`],
/// [`Format::recovery`], [`Format::multi_file`], [`Format::directory`]. Each capability
/// trait's doc says which stage it replaces and where that stage runs; docs/design.md has
/// them in one table, with the formats that use each.
pub trait Format: Sync {
    /// Canonical name, accepted by `--to`.
    fn name(&self) -> &'static str;

    /// Every name `--to` accepts for it; a reader's header names one of them.
    fn names(&self) -> &'static [&'static str];

    /// What the format is, for help texts (`NanoVer legacy .traj/.state`).
    fn title(&self) -> &'static str;

    /// Output extensions that select this format (with the dot).
    fn extensions(&self) -> &'static [&'static str];

    /// Whether `path`'s name ends with one of [`Format::extensions`].
    fn named_by(&self, path: &Path) -> bool {
        let name = path.file_name().map(|n| n.to_string_lossy());
        name.is_some_and(|n| self.extensions().iter().any(|e| has_extension(&n, e)))
    }

    /// Looks at the path and the first bytes of a file.
    fn detect(&self, path: &Path, head: &[u8]) -> Detection;

    /// Whether simrec reads it (JSON Lines is written only).
    fn reads(&self) -> bool {
        true
    }

    /// Whether simrec writes it (`elodin-db export` directories are read only: their
    /// `create` says what to write instead).
    fn writes(&self) -> bool {
        true
    }

    fn open(&self, path: &Path, options: ReadOptions) -> Result<Box<dyn Source>, ReadError>;

    fn create(
        &self,
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<Box<dyn Sink>, WriteError>;

    /// What the writer needs and keeps.
    fn writer(&self) -> WriterTraits {
        WriterTraits::DEFAULT
    }

    /// Writer options this format takes.
    fn write_options(&self) -> &'static [WriteOption] {
        &[]
    }

    fn slicer(&self) -> Option<&dyn Slicer> {
        None
    }

    fn merger(&self) -> Option<&dyn Merger> {
        None
    }

    fn frames(&self) -> Option<&dyn Frames> {
        None
    }

    fn recovery(&self) -> Option<&dyn Recovery> {
        None
    }

    fn multi_file(&self) -> Option<&dyn MultiFile> {
        None
    }

    fn directory(&self) -> Option<&dyn Directory> {
        None
    }

    fn collection(&self) -> Option<&dyn Collection> {
        None
    }
}

impl dyn Format + '_ {
    /// Files that usually belong with `path` to make one recording ([`MultiFile`]).
    pub fn companions(&self, path: &Path) -> Vec<PathBuf> {
        self.multi_file()
            .map(|m| m.companions(path))
            .unwrap_or_default()
    }
}

/// Replaces the generic window (`pipeline::Window`, folding by channel composition, opened
/// by `pipeline::slice::open_slice`; `pipeline::snapshot` reads a frame alone through it):
/// the format slices by itself (3es synthesises the world state at the cut; the Icarus
/// formats and XREC find the window by binary search).
pub trait Slicer {
    /// The selectors of the format's own that a slice takes (`--type`), declared for the
    /// command line; what is given arrives in [`SliceRequest::selectors`].
    fn selectors(&self) -> &'static [SelectorFlag] {
        &[]
    }

    /// A slice of `paths` (one or more inputs, all of this format, or a refusal of several),
    /// or `None` to use the generic window for these inputs. `slice` carries the window and
    /// any selectors of the format's own (`selectors`, as the CLI gave them).
    fn open_slice(
        &self,
        paths: &[PathBuf],
        slice: &SliceRequest,
        options: ReadOptions,
    ) -> Option<Result<Box<dyn Source>, ReadError>>;
}

/// Replaces the k-way merge by time (`pipeline::Merged`, in `pipeline::open_aligned`) for
/// several inputs all of this format: the format merges them itself (3es must remap ids and
/// unify time units).
pub trait Merger {
    /// The merge of `paths`, or `None` to use the generic merge.
    fn open_merge(
        &self,
        paths: &[PathBuf],
        options: ReadOptions,
    ) -> Option<Result<Box<dyn Source>, ReadError>>;
}

/// Replaces records with whole frames (the Icarus formats, the Elodin DB): a conversion
/// that changes nothing record by record copies frames (`pipeline::frame_copy`) when the
/// input's format reads them and the output's writes them; `inspect` walks an input's
/// frames (`cli::inspect`). Either side may be missing.
pub trait Frames {
    /// `path` read a frame at a time; `None`: not for this file (the pipeline then reads
    /// records).
    fn open_frames(
        &self,
        _path: &Path,
        _options: ReadOptions,
    ) -> Option<Result<Box<dyn FrameSource>, ReadError>> {
        None
    }

    /// A writer taking whole frames of `layout` (whose signals `header` declares), reporting
    /// what [`Format::create`]'s writer would; `None`: not for this layout (the pipeline then
    /// writes records). Nothing is created when it returns `None`.
    fn create_frames(
        &self,
        _target: &Path,
        _header: &Header,
        _layout: &FrameLayout,
        _outputs: &mut Outputs,
    ) -> Option<Result<Box<dyn FrameSink>, WriteError>> {
        None
    }

    /// Whether its frame writer takes the frames of a loose layout ([`FrameLayout::loose`]):
    /// one that writes no frame value and takes a scalar and an array of shape `[]` alike,
    /// or writes what its record writer writes of the loose records.
    fn takes_loose(&self) -> bool {
        false
    }
}

/// Replaces what `recover` (`pipeline::recover`) does by default: read the input with
/// lenient options through [`Format::open`] and write it back with default flags.
pub trait Recovery {
    /// The reader `recover` copies `path` from, when the format keeps less of a damaged
    /// file than its lenient reader returns (XREC stops at its first damaged packet), or
    /// `None` to recover through [`Format::open`].
    fn open_recover(
        &self,
        _path: &Path,
        _options: ReadOptions,
    ) -> Option<Result<Box<dyn Source>, ReadError>> {
        None
    }

    /// The writer flags with which `recover` writes `input` back in its own format: stored
    /// the way the input is (3es: its compression scheme), and repairing what dropping
    /// damaged records breaks ([`GivenFlags::repair`]); the format's `create` parses them
    /// into its typed options as it does the command line's.
    fn recover_flags(&self, _input: &Path) -> GivenFlags {
        GivenFlags::default()
    }
}

/// Replaces "one file, one recording": files of this format that belong together (a
/// `.traj` and its `.state`) are grouped into one recording (`pipeline::batch`,
/// `pipeline::request`) and checked together (`pipeline::validate`).
pub trait MultiFile {
    /// Files that usually belong with `path` to make one recording.
    fn companions(&self, path: &Path) -> Vec<PathBuf>;

    /// Checks across files of this format named together: (file index, finding).
    fn check_together(
        &self,
        files: &[(&Path, &Header, Option<TimeRange>)],
    ) -> Vec<(usize, Finding)>;
}

/// Files each recording under its name in one shared directory (the lake) instead of
/// writing one output per recording: `-o DIR/` is the collection, the recording's stable
/// name (`Outputs::recording`) says where in it (`pipeline::batch`, `--skip-existing`).
pub trait Collection {
    /// The file whose presence says the recording `name` is in the collection at `root`.
    fn entry(&self, root: &Path, name: &str) -> PathBuf;
}

/// Replaces one output file with a directory: which existing directory `--force` may replace
/// (`pipeline::write`), and which format an output directory means (`out/`:
/// `registry::format_for_output`, `pipeline::batch`).
pub trait Directory {
    /// Whether this format is the one an output directory (`out/`, or an existing
    /// directory) means when no `--to` names another.
    fn default_for_directories(&self) -> bool {
        false
    }

    /// Whether an entry of an existing directory (`relative` to it, found at `path`) is one
    /// this format's directory writer writes: `--force` replaces a directory only when
    /// every entry in it is.
    fn writes_entry(&self, relative: &Path, path: &Path) -> bool;
}
