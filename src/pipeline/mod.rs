//! Source -> [time window, key selection] -> Sink, k-way merging, loss accounting.

pub mod adapt;
pub mod batch;
pub mod convert;
pub mod diff;
pub mod frame_copy;
pub mod frames;
pub mod lookahead;
pub mod merge;
pub mod ordered;
pub mod plot;
pub mod recover;
pub mod request;
pub mod resample;
pub mod run;
pub mod select;
pub mod slice;
pub mod snapshot;
pub mod split;
pub mod validate;
pub mod window;
pub mod write;

use std::path::PathBuf;

use crate::formats::origin::with_origin;
use crate::formats::{registry, ReadError, ReadOptions, Source};

pub use convert::{cat, write_opened, CatStyle, Notes, Opened, ReadRequest};
pub use diff::{diff, DiffReport, DiffRequest};
pub use frames::FrameCounter;
pub use merge::Merged;
pub use plot::{plot, PlotRequest, Plotted};
pub use recover::{recover, Recovered};
pub use request::{convert, merge, slice, Converted, OutputRequest, Request, RequestError};
pub use run::{copy, PipelineError};
pub use select::{KeyFilter, Selected};
pub use slice::open_slice;
pub use split::SplitAtResets;
pub use validate::validate;
pub use window::{resolve, Span, Window};
pub use write::{write, WriteRequest, Written};

pub use crate::formats::mapping::LossHandle;

/// The error of a run that read a damaged input up to its damage and found not one record
/// before it (`recover` keeps nothing of it either): the first problem of what reading
/// found (`Source::findings`). `None` when no input is damaged.
pub fn nothing_intact(
    found: Vec<(&std::path::Path, &crate::report::Findings)>,
) -> Option<ReadError> {
    found.into_iter().find_map(|(path, findings)| {
        let first = findings
            .list()
            .iter()
            .find(|f| f.severity == crate::report::Severity::Error)?;
        Some(ReadError::invalid(first.clone()).in_file(path))
    })
}

/// Opens inputs as one recording: one source, or their k-way merge by time.
pub fn open_recording(
    paths: &[PathBuf],
    options: ReadOptions,
) -> Result<Box<dyn Source>, ReadError> {
    open_aligned(paths, options, false)
}

/// [`open_recording`], lining several inputs up by their starts (`starts`: every input's
/// time zero is the same instant) or, by default, by their epochs ([`Merged::aligned`]).
pub fn open_aligned(
    paths: &[PathBuf],
    options: ReadOptions,
    starts: bool,
) -> Result<Box<dyn Source>, ReadError> {
    if paths.len() > 1 {
        let formats = paths
            .iter()
            .map(|p| registry::detect(p))
            .collect::<Result<Vec<_>, _>>()?;
        if formats.iter().all(|f| f.name() == formats[0].name()) {
            if let Some(merged) = formats[0]
                .merger()
                .and_then(|m| m.open_merge(paths, options))
            {
                return with_origin(merged?, &paths[0], options);
            }
        }
    }
    let mut sources = paths
        .iter()
        .map(|p| registry::open(p, options))
        .collect::<Result<Vec<_>, _>>()?;
    if sources.len() == 1 {
        if let Some(s) = sources.pop() {
            return Ok(s);
        }
    }
    Ok(Box::new(Merged::aligned(sources, starts)?))
}
