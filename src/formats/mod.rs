//! Formats: one folder per family of formats, and below the families what they share.
//!
//! - A family (`nanover/`, `icarus/`, `elodin/`, `tes/`, `xrec/`) is one folder: its
//!   conventions in its `mod.rs`, one subfolder per format (or the family's one format in
//!   the folder itself), and `mapping.rs`, how a recording of another family is read in
//!   this family's model. `export/` holds the formats simrec only writes, which take every
//!   channel as it is.
//! - Below the families: the `Format` descriptor and its capabilities (`format.rs`),
//!   `Family` (`family.rs`), the errors and the `Source`/`Sink` traits (here), byte input
//!   and atomic output (`input.rs`, `output/`), the frame interface (`frames.rs`), the
//!   msgpack walker, digests, the origin stage, the byte cursor and the background worker
//!   (`cursor.rs`, `worker.rs`), and what the families' mappings share (`mapping/`).
//! - Above them: `registry.rs`, the one list of families, and through it of formats.
//!
//! No family imports another family, and nothing below them imports one (`layout.rs`, a
//! unit test, checks it): what two families would share goes below them.

/// `impl Source` for a stage that reads `self.inner` (a source it owns): its header is its
/// own `header` field (`own`: a mapping) or its source's (`inner`), and its findings,
/// progress and facts are its source's. `passing`: a stage that hands its source's records on
/// as they are, so records recycle and channels are selected there too. `queued` after the
/// header adds the `Iterator` of a stage that makes its records through
/// [`mapping::queued::Queued`].
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
                $crate::formats::mapping::queued::next_queued(self)
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

// Below the families.
pub mod cursor;
pub mod digest;
pub mod family;
pub mod format;
pub mod frames;
pub mod input;
pub mod mapping;
pub mod msgpack;
pub mod options;
pub mod origin;
pub mod output;
pub mod pool;
pub mod read_ahead;
pub mod read_error;
pub mod worker;
pub mod write_error;

// The families, and the formats only written.
pub mod elodin;
pub mod export;
pub mod icarus;
pub mod nanover;
pub mod tes;
pub mod xrec;

// Above the families.
pub mod registry;

#[cfg(test)]
mod layout;
#[cfg(test)]
pub(crate) mod test_random;

use std::path::Path;

use crate::model::{ChannelId, Header, Nanos, Record};
use crate::report::{Fact, Findings, LossReport};

pub use family::{Family, KeyType};
pub use format::{
    absolute_times, Collection, Detection, Directory, Format, Frames, KeepsEpoch, Merger,
    MultiFile, Recovery, SelectorFlag, SliceRequest, Slicer, TimeColumn, WriteOption, WriterTraits,
    TIME_OPTION,
};
pub use options::{GivenFlags, OptionError};
pub use read_error::{Conflict, ReadError, Unreadable};
pub use registry::{detect, format_for_output, format_named, FAMILIES};
pub use write_error::{ErrorKind, Failure, Refusal, Unsupported, WriteError};

/// How a reader should read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadOptions {
    /// Decode payloads into values. Without it, a reader walks record headers only:
    /// records carry time, channel and frame index but no values.
    pub decode: bool,
    /// Keep going after damage (resynchronising and reporting), instead of stopping
    /// at the first error.
    pub lenient: bool,
    /// With `lenient`: return only what `recover` keeps of a damaged input (the commands
    /// that read a recording read up to its damage), where a format's recovery keeps less
    /// than its lenient read: XREC then ends at its first error instead of reading on past
    /// it (`validate`, which reports every problem, reads on).
    pub until_damage: bool,
    /// Read the input as this format version where the format cannot tell by itself
    /// (NanoVer's headerless version 1).
    pub assume_version: Option<u32>,
    /// Also run the checks that look at every value (`validate --deep`: NaN and infinities
    /// per signal), where a format has them.
    pub deep: bool,
    /// With `deep`: report a value that changes by more than this between consecutive
    /// frames (`validate --discontinuity`), where a format has the check (Icarus).
    pub discontinuity: Option<f64>,
    /// The absolute start of a recording that stores none (`--epoch`).
    pub epoch: Option<crate::model::Epoch>,
    /// The time system of that start (`--time-system`: MET, UTC, TAI, GPS).
    pub time_system: Option<&'static str>,
    /// The caller uses the findings and the records' times only (`validate`): a reader may
    /// make one record per instant instead of one per channel, provided it still makes
    /// every check of every value (an Icarus frame is one record, not two hundred).
    pub check_only: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            decode: true,
            lenient: false,
            until_damage: false,
            assume_version: None,
            deep: false,
            epoch: None,
            time_system: None,
            check_only: false,
            discontinuity: None,
        }
    }
}

/// A reader: a pull iterator of records in file order, with what it found on the way.
pub trait Source: Iterator<Item = Result<Record, ReadError>> {
    fn header(&self) -> &Header;

    /// Findings so far, per input file.
    fn findings(&self) -> Vec<(&Path, &Findings)>;

    /// (bytes consumed, bytes in total) for progress display.
    fn progress(&self) -> (u64, u64);

    /// Facts only this format has (layout, container details), for `inspect`: read after
    /// the last record, so they may include what reading found.
    fn facts(&self) -> Vec<Fact> {
        Vec::new()
    }

    /// Hands back a record the caller is done with, so that the reader can reuse its
    /// allocations (the values vector, key strings, array buffers) for a later record
    /// instead of allocating them for every record. Optional on both sides: the default
    /// drops the record, and a caller that keeps its records never calls it.
    fn recycle(&mut self, record: Record) {
        drop(record);
    }

    /// Tells the reader that the caller uses only the channels whose id is `true` in
    /// `wanted` (ids past its end: used), so that it may skip making, and decoding, the
    /// records of the others: an Icarus reader then decodes one signal, not two hundred. A
    /// hint: a source may still return records of any channel (the default ignores it), and
    /// the caller drops what it does not use. The values of skipped records are not checked,
    /// so a reader's per-value findings may be fewer.
    fn select_channels(&mut self, wanted: &[bool]) {
        let _ = wanted;
    }

    /// Every channel's record count and time span, when the source knows them before its
    /// first record (an Elodin DB's index headers), so that `inspect` reads no record;
    /// `None` (the default): the records must be read to know.
    fn tally(&self) -> Option<Vec<ChannelTally>> {
        None
    }
}

/// One channel's records counted without reading them ([`Source::tally`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelTally {
    pub channel: ChannelId,
    pub records: u64,
    pub first: Nanos,
    pub last: Nanos,
}

/// A source behind a pointer is a source: boxed, so pipelines can stack them; borrowed, so a
/// stage can wrap a source it does not own.
macro_rules! source_behind {
    ($($pointer:ty),*) => {$(
        impl<S: Source + ?Sized> Source for $pointer {
            fn header(&self) -> &Header {
                (**self).header()
            }
            fn findings(&self) -> Vec<(&Path, &Findings)> {
                (**self).findings()
            }
            fn progress(&self) -> (u64, u64) {
                (**self).progress()
            }
            fn facts(&self) -> Vec<Fact> {
                (**self).facts()
            }
            fn recycle(&mut self, record: Record) {
                (**self).recycle(record)
            }
            fn select_channels(&mut self, wanted: &[bool]) {
                (**self).select_channels(wanted)
            }
            fn tally(&self) -> Option<Vec<ChannelTally>> {
                (**self).tally()
            }
        }
    )*};
}

source_behind!(Box<S>, &mut S);

/// What a writer did: records written and what it could not represent.
#[derive(Debug, Clone, Default)]
pub struct WriteReport {
    pub records: u64,
    /// Records written from their original bytes, unchanged.
    pub verbatim: u64,
    pub loss: LossReport,
    /// What the writer did that the user should know of, though nothing was lost (a CSV
    /// name quoted, a header-only file for a recording without frames).
    pub warnings: Vec<String>,
}

/// A writer: takes records in time order; `finish` flushes and reports.
pub trait Sink {
    fn write(&mut self, record: &Record) -> Result<(), WriteError>;
    fn finish(self: Box<Self>) -> Result<WriteReport, WriteError>;

    /// A channel the source discovered while reading (an XREC event type met for the first
    /// time): it takes the next channel id. The default ignores it, and the writer then
    /// treats the channel's records as it treats any channel it has no place for (dropped,
    /// counted as lost); writers that can hold new channels override it.
    fn add_channel(&mut self, channel: &crate::model::Channel) -> Result<(), WriteError> {
        let _ = channel;
        Ok(())
    }
}

/// Time range of records seen, for checks across the files of one recording.
pub type TimeRange = (Nanos, Nanos);
