//! What can go wrong reading, with the paths, names and numbers it concerns: messages are
//! made from them when shown (as [`super::write_error`] does), and whose fault an error is
//! (the command line's or the data's) is a property of the variant, not of its text.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::write_error::ErrorKind;
use crate::model::header::Epoch;
use crate::model::time::{Seconds, WindowRefusal};
use crate::model::time_scale::{TimeFormat, UnknownTimeFormat};
use crate::model::Nanos;
use crate::report::Finding;

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The I/O error is the source, so `{:#}` prints it once, after the path.
    #[error("{}", path.display())]
    Io { path: PathBuf, source: io::Error },
    /// The input is damaged where reading cannot go on (or strict reading was asked for).
    #[error("{}: {finding}", path.display())]
    Invalid {
        path: PathBuf,
        finding: Box<Finding>,
    },
    /// simrec does not read this input, or cannot go on with it (the data's fault).
    #[error("{0}")]
    Unsupported(Unreadable),
    /// The inputs cannot be read or combined as asked (a usage error).
    #[error("{0}")]
    Conflict(Conflict),
}

/// A conflict or a refusal only one family has, in that family's own terms: its type, kept
/// in the family, says them (no family's names leak into this shared module).
pub type FamilyError = Box<dyn std::error::Error + Send + Sync>;

/// Why simrec does not read an input.
#[derive(Debug)]
pub enum Unreadable {
    /// A format simrec writes but does not read (`why`: the rest of the sentence).
    WriteOnly {
        path: PathBuf,
        why: &'static str,
    },
    /// The unfinished output of a simrec run.
    Partial(PathBuf),
    EmptyStdin,
    /// Neither the bytes nor the name tell the format (`reads`: the formats simrec reads).
    UnknownFormat {
        path: PathBuf,
        reads: Vec<&'static str>,
    },
    NotASchema {
        path: PathBuf,
        error: serde_json::Error,
    },
    /// A recording of `format`, which has no schema to compare.
    NoSchema {
        path: PathBuf,
        format: &'static str,
    },
    /// A recording of `format`, which has no warm-start state.
    NoWarmStart {
        path: PathBuf,
        format: &'static str,
    },
    NoFrames(PathBuf),
    /// A record of `input` names a channel its reader never declared (a reader's fault).
    UndeclaredChannel {
        input: String,
        channel: u32,
    },
    /// A family's own reason.
    Family(FamilyError),
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unreadable::WriteOnly { path, why } => write!(f, "{}: {why}", path.display()),
            Unreadable::Partial(path) => write!(
                f,
                "{} is the unfinished output of a simrec run that was interrupted or is still \
                 running, not a recording (delete it once no simrec run writes it)",
                path.display()
            ),
            Unreadable::EmptyStdin => f.write_str("standard input is empty"),
            Unreadable::UnknownFormat { path, reads } => write!(
                f,
                "cannot tell the format of {} from its bytes or its name (simrec reads: {})",
                path.display(),
                reads.join(", ")
            ),
            Unreadable::NotASchema { path, error } => {
                write!(f, "{}: not a schema document: {error}", path.display())
            }
            Unreadable::NoSchema { path, format } => write!(
                f,
                "{} is a {format} recording, which has no schema to check compatibility \
                 against (a schema.json, an .icarec or an Icarus HDF5 file has)",
                path.display()
            ),
            Unreadable::NoWarmStart { path, format } => write!(
                f,
                "{}: a {format} recording has no warm-start state; snapshot reads Icarus \
                 recordings",
                path.display()
            ),
            Unreadable::NoFrames(path) => {
                write!(f, "{}: the recording has no frames", path.display())
            }
            Unreadable::UndeclaredChannel { input, channel } => write!(
                f,
                "{input}: a record names channel {channel} that its reader never declared"
            ),
            Unreadable::Family(e) => e.fmt(f),
        }
    }
}

/// A selection pattern (`--channel`, `--include`, `--exclude`) that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("invalid pattern `{pattern}`: {reason}")]
pub struct PatternError {
    pub pattern: String,
    pub reason: String,
}

/// Why the inputs cannot be read or combined as the command line asks.
#[derive(Debug)]
pub enum Conflict {
    Window(WindowRefusal),
    /// The window starts at frame `frame` of a recording of `frames` frames.
    NoSuchFrame {
        frame: u64,
        frames: u64,
    },
    /// `--NAME` selects within one XREC input; these inputs are not that.
    SelectorNotXrec(String),
    /// `--time-format` names a scale that needs an absolute start; `path`: the recording, where
    /// the message names it.
    NoEpoch {
        scale: TimeFormat,
        path: Option<PathBuf>,
    },
    /// `--epoch` for a recording that records its own.
    OwnEpoch {
        path: PathBuf,
        epoch: Epoch,
    },
    /// Merging by absolute time: `with` has an absolute start, `without` none.
    StartMissing {
        with: String,
        without: String,
    },
    /// Merging by absolute time: the inputs' time systems (`None`: unknown) differ.
    TimeSystems(Vec<Option<String>>),
    /// Merging frame streams: `owner` has frames from `since`, `other` one at `at`.
    FramesOverlap {
        owner: String,
        since: Nanos,
        other: String,
        at: Nanos,
    },
    /// A `--channel` pattern that does not compile.
    Pattern(PatternError),
    /// A `--time-format` that names no scale.
    TimeFormat(UnknownTimeFormat),
    /// A family's own reason.
    Family(FamilyError),
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const ALIGN_START: &str = "--align start takes each input's time zero as the same instant";
        match self {
            Conflict::Window(why) => why.fmt(f),
            Conflict::NoSuchFrame { frame, frames } => write!(
                f,
                "frame #{frame} does not exist: the recording has {frames} frames (#0..#{})",
                frames.saturating_sub(1)
            ),
            Conflict::SelectorNotXrec(name) => write!(
                f,
                "--{name} applies to one XREC input; these inputs have no such selector"
            ),
            Conflict::NoEpoch { scale, path } => {
                let subject = path.as_deref().map(Path::display);
                match subject {
                    Some(path) => write!(f, "--time-format {scale}: {path}")?,
                    None => write!(f, "--time-format {scale}: the recording")?,
                }
                f.write_str(" has no absolute start (give it with --epoch)")
            }
            Conflict::OwnEpoch { path, epoch } => write!(
                f,
                "--epoch: {} records its own epoch ({}); --epoch is for recordings without one",
                path.display(),
                epoch.iso8601()
            ),
            Conflict::StartMissing { with, without } => write!(
                f,
                "{with} has an absolute start time and {without} has none, so they cannot be \
                 lined up in time; {ALIGN_START}"
            ),
            Conflict::TimeSystems(systems) => {
                let names: Vec<&str> = systems
                    .iter()
                    .map(|s| s.as_deref().unwrap_or("unknown"))
                    .collect();
                write!(
                    f,
                    "the inputs count time in different systems ({}): simrec does not convert \
                     between time systems; {ALIGN_START}",
                    names.join(", ")
                )
            }
            Conflict::FramesOverlap {
                owner,
                since,
                other,
                at,
            } => write!(
                f,
                "cannot merge frame streams that overlap in time: {owner} has frames from {} \
                 but {other} still has one at {}; frame deltas cannot be interleaved (slice \
                 them apart first)",
                Seconds(*since),
                Seconds(*at)
            ),
            Conflict::Pattern(e) => e.fmt(f),
            Conflict::TimeFormat(e) => e.fmt(f),
            Conflict::Family(e) => e.fmt(f),
        }
    }
}

impl From<io::Error> for ReadError {
    fn from(source: io::Error) -> ReadError {
        ReadError::Io {
            path: PathBuf::new(),
            source,
        }
    }
}

impl From<WindowRefusal> for ReadError {
    fn from(why: WindowRefusal) -> ReadError {
        ReadError::Conflict(Conflict::Window(why))
    }
}

impl ReadError {
    pub fn invalid(finding: Finding) -> ReadError {
        ReadError::Invalid {
            path: PathBuf::new(),
            finding: Box::new(finding),
        }
    }

    /// A conflict in a family's own terms.
    pub fn family_conflict(e: impl std::error::Error + Send + Sync + 'static) -> ReadError {
        ReadError::Conflict(Conflict::Family(Box::new(e)))
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            ReadError::Conflict(_) => ErrorKind::Usage,
            ReadError::Io { .. } | ReadError::Invalid { .. } | ReadError::Unsupported(_) => {
                ErrorKind::Data
            }
        }
    }

    /// Names the file, where the error does not yet.
    pub fn in_file(mut self, file: &Path) -> ReadError {
        if let ReadError::Io { path, .. } | ReadError::Invalid { path, .. } = &mut self {
            if path.as_os_str().is_empty() {
                *path = file.to_path_buf();
            }
        }
        self
    }
}
