//! Source -> [time window, key selection] -> Sink, k-way merging, loss accounting.

/// `impl Source` for a stage that reads `self.inner` (a source it owns): its header is its
/// own `header` field (`own`: a mapping) or its source's (`inner`), and its findings,
/// progress and facts are its source's. `passing`: a stage that hands its source's records on
/// as they are, so records recycle and channels are selected there too. `queued` after the
/// header adds the `Iterator` of a stage that makes its records through
/// [`queued::Queued`].
macro_rules! stage_source {
    ($stage:ident, inner) => {
        stage_source!(@impl $stage, self, { self.inner.header() },);
    };
    ($stage:ident, own) => {
        stage_source!(@impl $stage, self, { &self.header },);
    };
    ($stage:ident, passing) => {
        stage_source!(@impl $stage, self, { self.inner.header() },
            fn recycle(&mut self, record: $crate::model::Record) {
                self.inner.recycle(record)
            }
            fn select_channels(&mut self, wanted: &[bool]) {
                self.inner.select_channels(wanted)
            }
        );
    };
    ($stage:ident, $header:ident, queued) => {
        stage_source!($stage, $header);
        impl Iterator for $stage<'_> {
            type Item = Result<$crate::model::Record, $crate::formats::ReadError>;

            fn next(&mut self) -> Option<Self::Item> {
                $crate::pipeline::queued::next_queued(self)
            }
        }
    };
    (@impl $stage:ident, $self:ident, $header:block, $($extra:item)*) => {
        impl $crate::formats::Source for $stage<'_> {
            fn header(&$self) -> &$crate::model::Header {
                $header
            }
            fn findings(&self) -> Vec<(&std::path::Path, &$crate::report::Findings)> {
                self.inner.findings()
            }
            fn progress(&self) -> (u64, u64) {
                self.inner.progress()
            }
            fn facts(&self) -> Vec<$crate::report::Fact> {
                self.inner.facts()
            }
            $($extra)*
        }
    };
}

pub mod batch;
pub mod convert;
pub mod diff;
pub mod frame_copy;
pub mod frames;
pub mod lookahead;
pub mod mapping;
pub mod merge;
pub mod ordered;
pub mod plot;
pub mod queued;
pub mod recover;
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

pub use convert::{cat, convert, CatStyle, Notes, Opened, ReadRequest};
pub use diff::{diff, DiffReport, DiffRequest};
pub use frames::FrameCounter;
pub use merge::Merged;
pub use plot::{plot, PlotRequest, Plotted};
pub use recover::{recover, Recovered};
pub use run::{copy, PipelineError};
pub use select::{KeyFilter, Selected};
pub use slice::open_slice;
pub use split::SplitAtResets;
pub use validate::validate;
pub use window::{resolve, Span, Window};
pub use write::{write, WriteRequest, Written};

/// What the stages between a source and a writer changed (`mapping::adapt`), shared with
/// the run that reports it.
pub type LossHandle = std::rc::Rc<std::cell::RefCell<crate::report::LossReport>>;

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
            if let Some(merged) = formats[0].open_merge(paths, options) {
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
