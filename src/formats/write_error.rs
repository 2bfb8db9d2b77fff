//! What can go wrong writing, with the paths and names it concerns: messages are made
//! from them when shown, and the kind of error (the user's request or the data) is a
//! property of the variant, not of its text.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Whose fault an error is: it decides the exit code (2 for usage, 1 otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The command line asks for something simrec will not do; pick other arguments.
    Usage,
    /// The data or the system failed the command.
    Data,
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("{} exists (use --force to overwrite)", .0.display())]
    Exists(PathBuf),
    /// The output cannot hold this input as asked (a usage error: pick another output).
    #[error("{0}")]
    Unsupported(Unsupported),
    /// The target is not something simrec may write over, even with `--force` (an input,
    /// a directory of other files): a usage error, nothing written.
    #[error("{}", Located::new(path, reason))]
    Refused { path: PathBuf, reason: Refusal },
    /// A writer flag the format does not take, or not with that value.
    #[error(transparent)]
    Option(#[from] super::options::OptionError),
    /// The writer itself failed (a thread stopped, an encoder refused its input).
    #[error("{}", Located::new(path, what))]
    Failed { path: PathBuf, what: Failure },
}

/// What an output format cannot hold, or a way of writing it that it does not take.
#[derive(Debug)]
pub enum Unsupported {
    /// None of the input's channels has a place in the format (`holds`: what it holds).
    NothingToWrite {
        holds: &'static str,
        has: Vec<String>,
    },
    /// A value of a writer option that the writer does not take.
    UnknownValue {
        what: &'static str,
        value: String,
        takes: &'static [&'static str],
    },
    /// A format written only from its own family's bytes, given another format's records.
    NotReencoded { format: String },
    /// A record of `channel` lost keys to a key filter, where the writer copies bytes.
    KeysFiltered { channel: String },
    /// `--time utc` for a recording without an absolute start.
    NoAbsoluteStart,
    /// A limit of the output that the message says in full.
    Limit(&'static str),
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unsupported::NothingToWrite { holds, has } => {
                write!(f, "nothing to write: {holds}, the input has {has:?}")
            }
            Unsupported::UnknownValue { what, value, takes } => {
                write!(f, "unknown {what} `{value}` (one of: {})", takes.join(", "))
            }
            Unsupported::NotReencoded { format } => write!(
                f,
                "nothing to write: simrec writes 3es only from 3es captures (re-encoding \
                 {format} records is not supported)"
            ),
            Unsupported::KeysFiltered { channel } => write!(
                f,
                "a {channel} record lost keys to --include/--exclude: 3es is written packet by \
                 packet from the capture's own bytes, so a key filter that changes 3es records \
                 cannot be written as 3es (nothing written); filter into another format, e.g. \
                 `-o out.jsonl`"
            ),
            Unsupported::NoAbsoluteStart => f.write_str(
                "--time utc: the recording has no absolute start (give it one with --epoch)",
            ),
            Unsupported::Limit(why) => f.write_str(why),
        }
    }
}

/// Why simrec will not write over a target, even with `--force`.
#[derive(Debug)]
pub enum Refusal {
    /// The target is, holds or is inside an input (`what`, as
    /// [`super::output::clash_with_inputs`] says it).
    Input(String),
    NotADirectory,
    IsAFile,
    IsADirectory,
    /// A directory that `--force` may not replace (`why`, as the writer's format says it).
    NotReplaceable(String),
    /// `recover` names an output of another format than its input's.
    OtherFormat {
        input: &'static str,
        output: &'static str,
    },
}

/// What failed inside a writer.
#[derive(Debug)]
pub enum Failure {
    /// A worker thread of the writer ended before its work (what it did).
    ThreadStopped(&'static str),
    /// The writer was used after it finished.
    Finished,
    /// The target was claimed by an earlier output of the run.
    WrittenTwice,
    /// A library the writer uses refused (its message).
    Encoder(String),
}

/// A reason with the path it concerns; `.2` false leaves the path out, for a message that
/// names it before.
struct Located<'a, T>(&'a Path, &'a T, bool);

impl<'a, T> Located<'a, T> {
    fn new(path: &'a Path, what: &'a T) -> Self {
        Located(path, what, true)
    }

    /// `path: ` where the path is said and not empty.
    fn prefix(&self) -> String {
        match self.2 && !self.0.as_os_str().is_empty() {
            true => format!("{}: ", self.0.display()),
            false => String::new(),
        }
    }
}

impl fmt::Display for Located<'_, Refusal> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match self.1 {
            Refusal::OtherFormat { input, output } => {
                return write!(
                    f,
                    "recover writes the input's own format ({input}); {} names {output} \
                     (use `simrec convert` afterwards)",
                    self.0.display()
                )
            }
            Refusal::Input(what) => format!("{what}: simrec never writes over its inputs"),
            Refusal::NotADirectory => "is not a directory".into(),
            Refusal::IsAFile => "is a file, and a directory output replaces only an empty \
                                 directory or a recording of its own format"
                .into(),
            Refusal::IsADirectory => "is a directory".into(),
            Refusal::NotReplaceable(why) => format!(
                "{why}: --force replaces only an empty directory, or a recording of the format \
                 being written that holds nothing else"
            ),
        };
        write!(f, "{}{why}; nothing was written", self.prefix())
    }
}

impl fmt::Display for Located<'_, Failure> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what: &dyn fmt::Display = match self.1 {
            Failure::WrittenTwice if self.2 => {
                return write!(f, "{} would be written twice", self.0.display())
            }
            Failure::WrittenTwice => &"would be written twice",
            Failure::ThreadStopped(what) => what,
            Failure::Finished => &"already finished",
            Failure::Encoder(message) => message,
        };
        write!(f, "{}{what}", self.prefix())
    }
}

/// A write error as said after the path it concerns (`cannot write PATH: …`).
pub struct AfterPath<'a>(&'a WriteError, &'a Path);

impl fmt::Display for AfterPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |path: &Path| path == self.1;
        match self.0 {
            WriteError::Io { path, source } if at(path) => write!(f, "{source}"),
            WriteError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            WriteError::Exists(path) if at(path) => {
                f.write_str("exists (use --force to overwrite)")
            }
            WriteError::Refused { path, reason } => Located(path, reason, !at(path)).fmt(f),
            WriteError::Failed { path, what } => Located(path, what, !at(path)).fmt(f),
            other => other.fmt(f),
        }
    }
}

impl WriteError {
    pub fn io(path: &Path, source: io::Error) -> WriteError {
        WriteError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub fn failed(path: &Path, what: Failure) -> WriteError {
        WriteError::Failed {
            path: path.to_path_buf(),
            what,
        }
    }

    /// An encoder's refusal, with no path to name.
    pub fn encoder(e: impl fmt::Display) -> WriteError {
        WriteError::failed(Path::new(""), Failure::Encoder(e.to_string()))
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            WriteError::Exists(_)
            | WriteError::Unsupported(_)
            | WriteError::Refused { .. }
            | WriteError::Option(_) => ErrorKind::Usage,
            WriteError::Io { .. } | WriteError::Failed { .. } => ErrorKind::Data,
        }
    }

    /// The message as said after `path` (`cannot write PATH: …`): `path` not again.
    pub fn after_path<'a>(&'a self, path: &'a Path) -> AfterPath<'a> {
        AfterPath(self, path)
    }
}
