//! An absolute start given on the command line (`--epoch`, `--time-system`) for recordings
//! that store none (Icarus HDF5 and CSV, NanoVer, Elodin, 3es): the reader's header with
//! that origin. A recording that stores its own epoch is not overridden.

use std::path::Path;

use super::{Conflict, ReadError, ReadOptions, Source};
use crate::model::{Header, Record, TimeOrigin};
use crate::report::{Fact, Findings};

/// `source` with the origin `options` give, if they give one.
pub fn with_origin(
    source: Box<dyn Source>,
    path: &Path,
    options: ReadOptions,
) -> Result<Box<dyn Source>, ReadError> {
    if options.epoch.is_none() && options.time_system.is_none() {
        return Ok(source);
    }
    let own = &source.header().origin;
    if let (Some(own), Some(_)) = (own.epoch, options.epoch) {
        return Err(ReadError::Conflict(Conflict::OwnEpoch {
            path: path.into(),
            epoch: own,
        }));
    }
    let mut header = source.header().clone();
    header.origin = TimeOrigin {
        epoch: options.epoch.or(own.epoch),
        system: options
            .time_system
            .map(str::to_string)
            .or_else(|| own.system.clone()),
    };
    Ok(Box::new(Originated { source, header }))
}

struct Originated {
    source: Box<dyn Source>,
    header: Header,
}

impl Iterator for Originated {
    type Item = Result<Record, ReadError>;
    fn next(&mut self) -> Option<Self::Item> {
        let next = self.source.next();
        self.header.follow_channels(self.source.header());
        next
    }
}

impl Source for Originated {
    fn header(&self) -> &Header {
        &self.header
    }
    fn findings(&self) -> Vec<(&Path, &Findings)> {
        self.source.findings()
    }
    fn progress(&self) -> (u64, u64) {
        self.source.progress()
    }
    fn facts(&self) -> Vec<Fact> {
        self.source.facts()
    }
    fn recycle(&mut self, record: Record) {
        self.source.recycle(record)
    }
    fn select_channels(&mut self, wanted: &[bool]) {
        self.source.select_channels(wanted)
    }
}
