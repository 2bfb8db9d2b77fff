//! What `convert`, `merge`, `slice` and `cat` run: read a recording (one input, several
//! merged by time, or a slice of them), select channels and keys, and write it or print it.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::formats::export::jsonl::JsonlWriter;
use crate::formats::{Conflict, ReadError, ReadOptions, SliceRequest, Source, WriteError};
use crate::model::time_scale::{self, TimeFormat};
use crate::report::render::record_text;
use crate::report::{Findings, LossReport};

use super::frame_copy;
use super::frames::FrameCounter;
use super::select::{Selected, Selection, SelectionHandle};
use super::write::{write, WriteRequest, Written};
use super::{copy, open_aligned, open_slice, PipelineError};

/// What to read.
pub struct ReadRequest<'a> {
    pub inputs: &'a [PathBuf],
    pub options: ReadOptions,
    /// Several inputs line up by their starts instead of their epochs (`--align start`).
    pub starts: bool,
    pub selection: Selection,
    /// A window of the recording (`slice`), or the whole of it.
    pub window: Option<SliceRequest>,
}

/// What a run found besides its result, reported whether it succeeded or not.
#[derive(Default)]
pub struct Notes {
    /// Findings of the readers, per input.
    pub read_findings: Vec<(PathBuf, Findings)>,
    /// Parts of the selection that matched nothing.
    pub unmatched: Vec<String>,
}

impl Notes {
    /// The findings of `source` and what `selection` matched nothing of, so far.
    pub(super) fn of(source: &dyn Source, selection: &SelectionHandle) -> Notes {
        Notes {
            read_findings: source
                .findings()
                .into_iter()
                .map(|(p, f)| (p.to_path_buf(), f.clone()))
                .collect(),
            unmatched: selection.borrow().unmatched.clone(),
        }
    }
}

/// A recording opened for a run, selected: inputs that cannot be read fail here, before
/// anything about the output is decided.
pub struct Opened<'a> {
    inputs: &'a [PathBuf],
    source: Box<dyn Source>,
    selection: SelectionHandle,
    /// The options to read the input frame by frame with, when nothing is done record by
    /// record ([`frame_copy`]).
    frames: Option<ReadOptions>,
}

impl<'a> ReadRequest<'a> {
    /// Opens what the request asks for.
    pub fn open(self) -> Result<Opened<'a>, ReadError> {
        let inputs = self.inputs;
        let whole = self.window.is_none() && self.selection.is_everything();
        let frames = (whole && frame_copy::eligible(inputs, &self.options)).then_some(self.options);
        let (source, selection) = open(self)?;
        Ok(Opened {
            inputs,
            source,
            selection,
            frames,
        })
    }
}

impl Opened<'_> {
    /// The selected source and the handle its selection report fills (for a run that reads
    /// it itself: `diff`, `plot`).
    pub fn into_parts(self) -> (Box<dyn Source>, SelectionHandle) {
        (self.source, self.selection)
    }
}

/// Opens what `read` asks for, selected; the handle fills with what the selection matched.
fn open(read: ReadRequest) -> Result<(Box<dyn Source>, SelectionHandle), ReadError> {
    match &read.window {
        Some(window) => open_slice(
            read.inputs,
            window,
            read.options,
            read.starts,
            read.selection,
        ),
        None => {
            let source = open_aligned(read.inputs, read.options, read.starts)?;
            if read.selection.is_everything() {
                // Nothing to select: one layer less for every record to pass through
                // (docs/performance.md, "Issue 28 item 9"); the report stays unselective.
                return Ok((source, SelectionHandle::default()));
            }
            let selected = Selected::new(source, read.selection);
            let report = selected.report();
            Ok((Box::new(selected), report))
        }
    }
}

/// `convert`, `merge` and `slice`: reads what was opened and writes it as `write` asks (atomically;
/// nothing is left behind on failure). The notes come back with the result either way.
pub fn write_opened(
    opened: Opened,
    request: WriteRequest,
    progress: &mut dyn FnMut(u64, u64),
) -> (Result<Written, PipelineError>, Notes) {
    let Opened {
        inputs,
        mut source,
        selection,
        frames,
    } = opened;
    if let Some(options) = frames.filter(|_| request.resample.is_none()) {
        if let Some(done) = frame_copy::write_frames(inputs, options, &request, progress) {
            return done;
        }
    }
    let written = write(&mut *source, inputs, request, &selection, progress);
    (written, Notes::of(&*source, &selection))
}

/// How `cat` prints records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatStyle {
    /// One line per record for people ([`record_text`]), times in seconds from time zero
    /// or in the scale given.
    Text(Option<TimeFormat>),
    /// JSON Lines, as the `jsonl` format writes them.
    Json,
}

/// `cat`: reads `read` and prints its records to `out`. Returns what JSON could not hold
/// (text loses nothing it claims to show).
pub fn cat(
    read: ReadRequest,
    style: CatStyle,
    out: Box<dyn Write>,
) -> Result<(Result<LossReport, PipelineError>, Notes), ReadError> {
    let (mut source, selection) = open(read)?;
    let printed = match style {
        CatStyle::Json => print_json(&mut *source, out),
        CatStyle::Text(scale) => print_text(&mut *source, out, scale),
    };
    let printed = printed.and_then(|(loss, records)| {
        if let Some(why) = selection.borrow().empty_because() {
            return Err(PipelineError::Empty(why));
        }
        match super::nothing_intact(source.findings()).filter(|_| records == 0) {
            Some(e) => Err(e.into()),
            None => Ok(loss),
        }
    });
    Ok((printed, Notes::of(&*source, &selection)))
}

/// What JSON could not hold, and the records printed.
fn print_json(
    source: &mut dyn Source,
    out: Box<dyn Write>,
) -> Result<(LossReport, u64), PipelineError> {
    let out = BufWriter::with_capacity(1 << 20, out);
    let sink = Box::new(JsonlWriter::new(
        out,
        Path::new("-"),
        &source.header().clone(),
        None,
    ));
    let report = copy(source, sink, &mut |_, _| {})?;
    Ok((report.loss, report.records))
}

fn print_text(
    source: &mut dyn Source,
    out: Box<dyn Write>,
    scale: Option<TimeFormat>,
) -> Result<(LossReport, u64), PipelineError> {
    let epoch = source.header().origin.epoch;
    if let Some(scale) = scale.filter(|s| s.needs_epoch() && epoch.is_none()) {
        return Err(ReadError::Conflict(Conflict::NoEpoch { scale, path: None }).into());
    }
    let mut frames = FrameCounter::default();
    let mut records = 0;
    let mut out = BufWriter::new(out);
    let io = |e| PipelineError::Write(WriteError::io(Path::new("-"), e));
    while let Some(record) = source.next() {
        let record = record?;
        let position = frames.observe(&record);
        let time = scale.and_then(|s| time_scale::show(s, epoch.as_ref(), record.time, None));
        let line = record_text(source.header(), &record, position, time);
        writeln!(out, "{line}").map_err(io)?;
        source.recycle(record);
        records += 1;
    }
    out.flush().map_err(io)?;
    Ok((LossReport::default(), records))
}
