//! One request per writing command (`convert`, `merge`, `slice`): the inputs, how they are
//! read, lined up, selected and windowed, and the output as given. The command makes one
//! call ([`convert`], [`merge`], [`slice`]); the output's name, the output format and the
//! inputs' formats are found here, once, and the outcome goes back for the command to print.

use std::path::{Path, PathBuf};

use crate::formats::{registry, Format, GivenFlags, OptionError, ReadOptions, SliceRequest};

use super::convert::{write_opened, Notes, ReadRequest};
use super::select::Selection;
use super::write::{WriteRequest, Written};
use super::PipelineError;

/// What a writing command asks for.
pub struct Request {
    pub inputs: Vec<PathBuf>,
    pub options: ReadOptions,
    /// Several inputs line up by their starts instead of their epochs (`--align start`).
    pub starts: bool,
    pub selection: Selection,
    /// A window as asked; rebased here when the output format's times cannot start
    /// anywhere but 0.
    pub window: Option<SliceRequest>,
    pub output: OutputRequest,
}

/// The output as given: nothing about it is decided yet.
#[derive(Default)]
pub struct OutputRequest {
    /// `-o`; without it `convert` takes its last input.
    pub path: Option<PathBuf>,
    /// `--to`: the output format by name, else the one the output's extension selects.
    pub format: Option<String>,
    /// Writer flags as given, checked here against the output format.
    pub flags: GivenFlags,
    /// Replace existing outputs that simrec may replace.
    pub force: bool,
    /// Check and count everything, write nothing.
    pub dry_run: bool,
    /// Write on a grid of this many nanoseconds.
    pub resample: Option<i64>,
    /// `slice --split-at-resets`: one output per reset-delimited part.
    pub split: bool,
}

/// What a writing command did, for it to print.
pub struct Converted {
    pub format: &'static dyn Format,
    pub dry_run: bool,
    pub written: Result<Written, PipelineError>,
    pub notes: Notes,
}

/// What a run says before its outcome (stderr, in order): `note: …` lines.
pub type Say<'a> = &'a mut dyn FnMut(&str);

/// A command line that names no output, or no format simrec writes (a usage error).
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error(
        "-o is missing: {} is the companion of {} (both are read as one recording), not an \
         output; name the output with -o OUT",
        last.display(),
        of.display()
    )]
    CompanionNotOutput { last: PathBuf, of: PathBuf },
    #[error(
        "-o is missing: name the output with -o OUT (convert also takes it as its last argument)"
    )]
    NoOutput,
    #[error(
        "unknown output format `{name}` (simrec writes: {})",
        registry::writable_names()
    )]
    UnknownFormat { name: String },
    #[error(
        "cannot tell the output format from `{}`; name it with --to ({})",
        output.display(),
        registry::writable_names()
    )]
    NoOutputFormat { output: PathBuf },
}

/// `convert`: `request` into one output; without `-o` the last of two or more inputs is the
/// output, as `cp` takes it.
pub fn convert(
    request: Request,
    say: Say,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Converted, PipelineError> {
    run(request, Command::Convert, say, progress)
}

/// `merge`: several inputs, k-way by time, into the output `-o` names.
pub fn merge(
    request: Request,
    say: Say,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Converted, PipelineError> {
    run(request, Command::Merge, say, progress)
}

/// `slice`: a window of `request`'s inputs, or (`split`) each reset-delimited part of them;
/// a named input whose companion exists but was not named is noted first.
pub fn slice(
    mut request: Request,
    say: Say,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Converted, PipelineError> {
    let output = name_output(&mut request.inputs, request.output.path.take(), false)?;
    for (_, note) in companion_notes(&request.inputs) {
        say(&format!("note: {note}"));
    }
    request.output.path = Some(output);
    run(request, Command::Slice, say, progress)
}

/// Which command runs: `convert` takes its last input as the output when `-o` is missing;
/// `slice` and `merge` keep their inputs' directory format for `DIR/` ([`target_format`]).
#[derive(Clone, Copy, PartialEq)]
enum Command {
    Convert,
    Merge,
    Slice,
}

fn run(
    mut request: Request,
    command: Command,
    say: Say,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Converted, PipelineError> {
    let path = request.output.path.take();
    let output_path = name_output(&mut request.inputs, path, command == Command::Convert)?;
    let keeps_format = command != Command::Convert;
    let output = &request.output;
    // A window's output format is known before reading: whether the window is rebased
    // decides how it is read.
    let mut target = None;
    let window = match request.window.take() {
        Some(mut window) if !output.split => {
            if window.start.is_some() || window.end.is_some() {
                let format = target_format(output, &output_path, &request.inputs, keeps_format)?;
                rebase_for(&mut window, format, say);
                target = Some(format);
            }
            Some(window)
        }
        _ => None,
    };
    let read = ReadRequest {
        inputs: &request.inputs,
        options: request.options,
        starts: request.starts,
        selection: request.selection,
        window,
    };
    let opened = read.open()?;
    let format = match target {
        Some(format) => format,
        None => target_format(output, &output_path, &request.inputs, keeps_format)?,
    };
    let flags = checked_flags(&output.flags, format)?;
    let write = WriteRequest {
        output: &output_path,
        format,
        force: output.force,
        dry_run: output.dry_run,
        flags,
        split: output.split,
        resample: output.resample,
    };
    let (written, notes) = write_opened(opened, write, progress);
    Ok(Converted {
        format,
        dry_run: output.dry_run,
        written,
        notes,
    })
}

/// The output format: `--to`, else the output's extension, else for `DIR/` the default
/// directory format (an Elodin DB). Where `keeps_format` (`slice`, `merge`), `DIR/` keeps
/// the inputs' format when they are all recordings of one directory format (Elodin
/// replays), and the parts of `--split-at-resets` keep their input's format, whatever it is.
fn target_format(
    output: &OutputRequest,
    path: &Path,
    inputs: &[PathBuf],
    keeps_format: bool,
) -> Result<&'static dyn Format, PipelineError> {
    // Only a directory output looks at the inputs (a named file output never reads them here).
    if output.format.is_none() && keeps_format && registry::names_directory(path) {
        let first = registry::detect(&inputs[0])?;
        if output.split {
            return Ok(first);
        }
        let all_first = || {
            inputs[1..]
                .iter()
                .all(|i| registry::detect(i).is_ok_and(|f| f.name() == first.name()))
        };
        if registry::directory_keeps_format(first, path) && all_first() {
            return Ok(first);
        }
    }
    Ok(output_format(output.format.as_deref(), path)?)
}

/// Rebases `window` to start at 0 (and says so) when `target`'s times cannot start
/// anywhere else.
fn rebase_for(window: &mut SliceRequest, target: &dyn Format, say: Say) {
    if window.rebase {
        return;
    }
    if let Err(why) = target.writer().keeps_time {
        say(&format!(
            "note: {why}: the window is rebased to start at 0 (as --rebase)"
        ));
        window.rebase = true;
    }
}

/// `flags` checked against `format`: a refusal (usage) names the formats that take a flag
/// it does not.
pub fn checked_flags(flags: &GivenFlags, format: &dyn Format) -> Result<GivenFlags, OptionError> {
    flags.check(format, &|flag| {
        registry::formats_with_option(flag)
            .iter()
            .map(|(f, _)| f.name())
            .collect()
    })?;
    Ok(flags.clone())
}

/// The output: `-o` (`given`), or (where `last_input_is_output`, as for `convert`) the last
/// of two or more inputs, as `cp` takes it.
pub fn name_output(
    inputs: &mut Vec<PathBuf>,
    given: Option<PathBuf>,
    last_input_is_output: bool,
) -> Result<PathBuf, RequestError> {
    if let Some(out) = given {
        return Ok(out);
    }
    if last_input_is_output && inputs.len() >= 2 {
        if let Some(with) = companion_of_last(inputs) {
            return Err(RequestError::CompanionNotOutput {
                last: inputs[inputs.len() - 1].clone(),
                of: with.clone(),
            });
        }
        if let Some(out) = inputs.pop() {
            return Ok(out);
        }
    }
    Err(RequestError::NoOutput)
}

/// The input whose companion the last input is (`convert a.traj a.state`: the last argument
/// is read with the first as one recording, not where to write it).
fn companion_of_last(inputs: &[PathBuf]) -> Option<&PathBuf> {
    let (last, rest) = inputs.split_last()?;
    rest.iter().find(|input| {
        registry::detect(input)
            .is_ok_and(|f| f.companions(input).iter().any(|c| same_file(c, last)))
    })
}

/// The format `--to` names (`named`), or the one the output's extension selects.
pub fn output_format(
    named: Option<&str>,
    output: &Path,
) -> Result<&'static dyn Format, RequestError> {
    match named {
        Some(name) => named_format(name),
        None => registry::format_for_output(output).ok_or_else(|| RequestError::NoOutputFormat {
            output: output.to_path_buf(),
        }),
    }
}

/// The writable format `name` names.
pub fn named_format(name: &str) -> Result<&'static dyn Format, RequestError> {
    registry::format_named(name).ok_or_else(|| RequestError::UnknownFormat { name: name.into() })
}

/// Notes for files whose companion (a `.traj`'s `.state`) exists but was not named.
pub fn companion_notes(paths: &[PathBuf]) -> Vec<(PathBuf, String)> {
    let mut notes = Vec::new();
    for path in paths {
        let Ok(format) = registry::detect(path) else {
            continue;
        };
        for c in format.companions(path) {
            if c.exists() && !paths.iter().any(|p| same_file(p, &c)) {
                notes.push((
                    path.clone(),
                    format!(
                        "{} is beside it and was not named: name both to read them as one recording",
                        c.display()
                    ),
                ));
            }
        }
    }
    notes
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}
