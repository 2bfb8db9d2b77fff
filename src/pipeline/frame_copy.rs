//! Conversion a frame at a time: when the input's format reads frames
//! (`Frames::open_frames`: `.icarec`, Icarus HDF5 and CSV, an Elodin DB of one time grid)
//! and the output's writes them (`Frames::create_frames`: Icarus HDF5, the Parquet table, MCAP, the
//! lake, the Elodin DB), and the run changes nothing record by record, each frame goes from
//! reader to writer as one block instead of a record per signal (a 1 GB `.icarec` of 200 signals is 600,000 frames, not 120 million
//! records).
//! Same output, report and findings as the record path; anything either side does not offer
//! falls back to it.

use std::path::PathBuf;

use crate::formats::{registry, ReadOptions};

use super::convert::Notes;
use super::write::{origin_lost, outputs_for, WriteRequest, Written, RECORDING};
use super::PipelineError;

/// How often (in frames) `progress` is called.
const PROGRESS_EVERY: u64 = 64;

/// Whether a run reading `inputs` with `options` may go by frames: one input, read whole
/// (the caller checks that no window or selection applies), with no origin given on the
/// command line (a frame writer gets the file's own header).
pub fn eligible(inputs: &[PathBuf], options: &ReadOptions) -> bool {
    inputs.len() == 1
        && options.decode
        && !options.check_only
        && options.epoch.is_none()
        && options.time_system.is_none()
}

/// Writes `input` into `request`'s output frame by frame, or `None` (nothing written) when
/// the input's or the output's format does not offer frames for it, the request needs
/// records (a split, a dry run), the writer does not take a frame
/// ([`FrameSink::takes`](crate::formats::frames::FrameSink::takes)) or the frames are not
/// numbered as the records ([`FrameSource::numbered`](crate::formats::frames::FrameSource::numbered)).
pub fn write_frames(
    inputs: &[PathBuf],
    options: ReadOptions,
    request: &WriteRequest,
    progress: &mut dyn FnMut(u64, u64),
) -> Option<(Result<Written, PipelineError>, Notes)> {
    let [input] = inputs else { return None };
    if request.split || request.dry_run {
        return None;
    }
    let format = registry::detect(input).ok()?;
    // An input the frame read cannot open goes the record path, which says why.
    let mut frames = format.frames()?.open_frames(input, options)?.ok()?;
    let writes = request.format.frames()?;
    if frames.layout().loose && !writes.takes_loose() {
        return None;
    }
    let mut outputs = outputs_for(request.format, inputs, request.force, request.dry_run);
    outputs.flags = request.flags.clone();
    outputs.source_paths = Some(input.display().to_string());
    let header = frames.header().clone();
    let origin = origin_lost(request.format, &header, &outputs);
    let sink = writes.create_frames(request.output, &header, frames.layout(), &mut outputs)?;
    let written = (|| {
        let mut sink = sink.map_err(|e| PipelineError::Output {
            path: request.output.to_path_buf(),
            error: e,
        })?;
        let mut n = 0u64;
        while let Some(frame) = frames.next_frame()? {
            if !sink.takes(&frame) {
                return Ok(None);
            }
            sink.write_frame(&frame)?;
            if !frames.numbered() {
                return Ok(None);
            }
            n += 1;
            if n.is_multiple_of(PROGRESS_EVERY) {
                let (done, total) = frames.progress();
                progress(done, total);
            }
        }
        if n == 0 {
            if let Some(e) = super::nothing_intact(frames.findings()) {
                return Err(e.into());
            }
        }
        let mut report = sink.finish()?;
        if let Some(why) = &origin {
            report.loss.add(RECORDING, "time origin", why);
        }
        Ok(Some(Written {
            report,
            paths: outputs.commit()?,
        }))
    })();
    // A frame the writer does not take, or numbered otherwise: nothing was committed (the
    // outputs are removed as they go), and the record path reads the input from its start.
    let written = written.transpose()?;
    let notes = Notes {
        read_findings: (frames.findings().into_iter())
            .map(|(p, f)| (p.to_path_buf(), f.clone()))
            .collect(),
        unmatched: Vec::new(),
    };
    Some((written, notes))
}
