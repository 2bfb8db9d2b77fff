//! A source of records a test builds in memory, for writer tests that need no input file.

use std::collections::VecDeque;
use std::path::Path;

use simrec::formats::{format_named, ReadError, Source};
use simrec::model::{Array, ArrayData, Header, Record, Value};
use simrec::pipeline::{write, WriteRequest, Written};
use simrec::report::Findings;

pub struct Listed {
    pub header: Header,
    pub records: VecDeque<Record>,
}

impl Iterator for Listed {
    type Item = Result<Record, ReadError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.records.pop_front().map(Ok)
    }
}

impl Source for Listed {
    fn header(&self) -> &Header {
        &self.header
    }
    fn findings(&self) -> Vec<(&Path, &Findings)> {
        Vec::new()
    }
    fn progress(&self) -> (u64, u64) {
        (0, 0)
    }
}

/// A flat float64 array value.
pub fn f64s(v: &[f64]) -> Value {
    Value::Array(Array::flat(ArrayData::F64(v.to_vec())))
}

/// Writes `source` as an Elodin replay in the directory `out`.
pub fn write_elodin(source: &mut Listed, out: &Path) -> Written {
    let request = WriteRequest {
        output: out,
        format: format_named("elodin").unwrap(),
        force: false,
        dry_run: false,
        flags: Default::default(),
        split: false,
        resample: None,
    };
    write(source, &[], request, &Default::default(), &mut |_, _| {}).unwrap()
}
