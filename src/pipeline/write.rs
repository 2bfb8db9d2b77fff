//! Writing a recording: the outputs guarded (never over an input, replaced only when safe,
//! nothing half-written), one sink or one per split part, the copy, and the commit once the
//! run is known to be worth keeping.

use std::path::{Path, PathBuf};

use crate::formats::output::Outputs;
use crate::formats::{Detection, Format, Sink, Source, WriteError, WriteReport};

use super::lookahead::Completed;
use super::run::{copy, PipelineError};
use super::select::SelectionHandle;
use super::SplitAtResets;

/// The path of split part `k` in a format.
pub type PartNames<'n> = &'n dyn Fn(usize, &'static dyn Format) -> PathBuf;

/// Where and how to write.
pub struct WriteRequest<'a> {
    pub output: &'a Path,
    pub format: &'static dyn Format,
    /// Replace existing outputs that simrec may replace.
    pub force: bool,
    /// Check and count everything, write nothing.
    pub dry_run: bool,
    /// Writer settings (`tes.compression`), already checked against the format.
    pub settings: Vec<(&'static str, String)>,
    /// One output per reset-delimited part, named by this.
    pub parts: Option<PartNames<'a>>,
}

/// What a write did: the writer's report and the files it made (none on a dry run).
pub struct Written {
    pub report: WriteReport,
    pub paths: Vec<PathBuf>,
}

/// Outputs for a run writing `format`: never over `inputs`, and replacing (with `--force`)
/// only a directory that is empty or already a recording of `format`.
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
    outputs.replace_directories_when(Box::new(move |dir| {
        format.detect(dir, &[]) == Detection::Content
    }));
    outputs
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
    let mut completed;
    let source: &mut dyn Source = if format.needs_schema() {
        completed = Completed::new(source);
        &mut completed
    } else {
        source
    };
    let mut outputs = outputs_for(format, inputs, request.force, request.dry_run);
    for (key, value) in request.settings {
        outputs.set(key, value);
    }
    let header = source.header().clone();
    let report = {
        let sink: Box<dyn Sink + '_> = match request.parts {
            None => format
                .create(request.output, &header, &mut outputs)
                .map_err(|e| in_output(request.output, e))?,
            Some(name) => {
                let outputs = &mut outputs;
                let header = &header;
                Box::new(SplitAtResets::new(header, move |k, part_header| {
                    format.create(&name(k, format), part_header, outputs)
                }))
            }
        };
        copy(source, sink, progress)?
    };
    if let Some(why) = selection.borrow().empty_because() {
        return Err(PipelineError::Empty(why));
    }
    let paths = if request.dry_run {
        Vec::new()
    } else {
        outputs.commit()?
    };
    Ok(Written { report, paths })
}

/// An error creating the output, naming it.
fn in_output(output: &Path, e: WriteError) -> PipelineError {
    PipelineError::Output {
        path: output.to_path_buf(),
        source: e,
    }
}
