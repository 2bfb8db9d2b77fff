//! Writing a recording: the outputs guarded (never over an input, replaced only when safe,
//! nothing half-written), one sink or one per split part, the copy, and the commit once the
//! run is known to be worth keeping.

use std::path::{Path, PathBuf};

use crate::formats::output::{foreign_entry, Outputs};
use crate::formats::{
    registry, Detection, Format, GivenFlags, Sink, Source, WriteError, WriteReport, TIME_OPTION,
};
use crate::model::Header;

use super::adapt::adapt;
use super::lookahead::Completed;
use super::run::{copy, PipelineError};
use super::select::SelectionHandle;
use super::LossHandle;
use super::SplitAtResets;

/// Where and how to write.
pub struct WriteRequest<'a> {
    pub output: &'a Path,
    pub format: &'static dyn Format,
    /// Replace existing outputs that simrec may replace.
    pub force: bool,
    /// Check and count everything, write nothing.
    pub dry_run: bool,
    /// Writer flags (`--compression`), already checked against the format
    /// ([`GivenFlags::check`]); its `create` parses them into its typed options.
    pub flags: GivenFlags,
    /// One output per reset-delimited part ([`part_name`]) instead of one output.
    pub split: bool,
    /// Write on a grid of this many nanoseconds (`--resample`, `pipeline::resample`).
    pub resample: Option<i64>,
}

/// What a write did: the writer's report and the files it made (none on a dry run).
pub struct Written {
    pub report: WriteReport,
    pub paths: Vec<PathBuf>,
}

/// Outputs for a run writing `format`: never over `inputs`, and replacing (with `--force`)
/// only a directory that is empty or already a recording of `format`; into a collection
/// (the lake), under the inputs' recording name.
pub fn outputs_for(
    format: &'static dyn Format,
    inputs: &[PathBuf],
    force: bool,
    dry_run: bool,
) -> Outputs {
    let mut outputs = if dry_run {
        Outputs::dry_run(force)
    } else {
        Outputs::new(force)
    };
    outputs.protect(inputs);
    outputs.replace_directories_when(Box::new(move |dir| replaceable(format, dir)));
    if format.collection().is_some() {
        outputs.recording = Some(super::batch::recording_name(inputs));
    }
    outputs
}

/// Whether `--force` may replace the directory `dir` with an output of `format`: only a
/// recording of the format holding nothing but what the format's writer writes
/// ([`crate::formats::Directory::writes_entry`]); `Err` names what is in the way.
fn replaceable(format: &dyn Format, dir: &Path) -> Result<(), String> {
    let directory = format.directory();
    let writes =
        |relative: &Path, path: &Path| directory.is_some_and(|d| d.writes_entry(relative, path));
    if let Some(entry) = foreign_entry(dir, &writes) {
        return Err(format!(
            "holds {}, which {} output does not have",
            entry.display(),
            with_article(format.name())
        ));
    }
    if format.detect(dir, &[]) != Detection::Content {
        return Err(format!("is not {} recording", with_article(format.name())));
    }
    Ok(())
}

/// `an elodin`, `a parquet`.
fn with_article(name: &str) -> String {
    let vowel = name.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {name}", if vowel { "an" } else { "a" })
}

/// Streams `source` (read from `inputs`) into the output `request` names, with every
/// channel's field specs completed first when the format lays out its columns before the
/// first record ([`Completed`]). Nothing is
/// committed when the selection left nothing to write (`PipelineError::Empty`) or on any
/// error; the partial outputs are removed.
pub fn write(
    source: &mut dyn Source,
    inputs: &[PathBuf],
    request: WriteRequest,
    selection: &SelectionHandle,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Written, PipelineError> {
    let format = request.format;
    let loss = LossHandle::default();
    let mut adapted = adapt(source, format, request.resample, &loss);
    let source: &mut dyn Source = &mut adapted;
    let mut completed;
    let source: &mut dyn Source = if format.writer().needs_schema {
        completed = Completed::new(source);
        &mut completed
    } else {
        source
    };
    let mut outputs = outputs_for(format, inputs, request.force, request.dry_run);
    outputs.flags = request.flags;
    let sources: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
    outputs.source_paths = Some(sources.join("\n"));
    let header = source.header().clone();
    if let Some(why) = origin_lost(format, &header, &outputs) {
        loss.borrow_mut().add(RECORDING, "time origin", &why);
    }
    let report = {
        let sink: Box<dyn Sink + '_> = if request.split {
            let outputs = &mut outputs;
            let header = &header;
            let (output, input) = (request.output, inputs.first());
            Box::new(SplitAtResets::new(header, move |k, part_header| {
                format.create(&part_name(output, input, k, format), part_header, outputs)
            }))
        } else {
            format
                .create(request.output, &header, &mut outputs)
                .map_err(|e| in_output(request.output, e))?
        };
        let mut report = copy(source, sink, progress)?;
        report.loss.merge(&loss.borrow());
        report
    };
    if let Some(why) = selection.borrow().empty_because() {
        return Err(PipelineError::Empty(why));
    }
    if report.records == 0 {
        if let Some(e) = super::nothing_intact(source.findings()) {
            return Err(e.into());
        }
    }
    let paths = if request.dry_run {
        Vec::new()
    } else {
        outputs.commit()?
    };
    Ok(Written { report, paths })
}

/// Part `k` of a split: `OUT` minus its format extension, `-NN`, the extension; or, when
/// `OUT` is a directory, named after the input as upstream names parts
/// (`small.nanover.zip` → `small.nanover-01.nanover.zip`).
pub fn part_name(output: &Path, input: Option<&PathBuf>, k: usize, format: &dyn Format) -> PathBuf {
    let ext = format.extensions().first().copied().unwrap_or("");
    let (dir, base) = if registry::names_directory(output) {
        let stem = input
            .and_then(|i| i.file_stem())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "part".into());
        (output.to_path_buf(), stem)
    } else {
        let name = output
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let base = format
            .extensions()
            .iter()
            .find_map(|e| name.strip_suffix(e))
            .unwrap_or(&name)
            .to_string();
        (
            output.parent().map(Path::to_path_buf).unwrap_or_default(),
            base,
        )
    };
    dir.join(format!("{base}-{k:02}{ext}"))
}

/// The loss report's channel for what belongs to the recording as a whole.
pub(super) const RECORDING: &str = "(recording)";

/// Why `header`'s absolute start is lost in `format` written with `outputs`' flags, when it
/// is: the format has no place for it (a loss: exit 3), unless it writes absolute times.
pub(super) fn origin_lost(
    format: &dyn Format,
    header: &Header,
    outputs: &Outputs,
) -> Option<String> {
    let epoch = header.origin.epoch?;
    if format.writer().keeps_epoch.with(outputs) {
        return None;
    }
    let system = match &header.origin.system {
        Some(s) => format!(" ({s})"),
        None => String::new(),
    };
    let utc = format
        .write_options()
        .iter()
        .any(|o| o.flag == TIME_OPTION.flag);
    Some(format!(
        "the absolute start {}{system} has no place in {}{}",
        epoch.iso8601(),
        format.name(),
        if utc {
            " (--time utc writes absolute times)"
        } else {
            ""
        }
    ))
}

/// An error creating the output, naming it.
fn in_output(output: &Path, e: WriteError) -> PipelineError {
    PipelineError::Output {
        path: output.to_path_buf(),
        error: e,
    }
}
