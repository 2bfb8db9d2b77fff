//! The Icarus CSV reader and writer stream without an allocation per value: once the first
//! rows have sized the buffers, reading (with records handed back through `recycle`) and
//! writing (with a loss on every value) allocate nothing more, whatever the number of rows.
//! `util::alloc` counts the allocations.

use std::path::Path;

use simrec::formats::icarus::csv::{CsvReader, CsvWriter};
use simrec::formats::output::Outputs;
use simrec::formats::{ReadOptions, Sink, Source};
use simrec::model::Record;

use crate::util::alloc::measure;

const COLUMNS: usize = 20;

/// `rows` rows of 17-digit values (each a loss when written as %.15g).
fn csv(rows: usize) -> Vec<u8> {
    let mut text = String::from("time");
    for c in 0..COLUMNS {
        text += &format!(",Body.s{c}.x");
    }
    text.push('\n');
    for r in 1..=rows {
        text += &format!("{}", r as f64 * 0.01);
        for c in 0..COLUMNS {
            text += &format!(",{:?}", (r * (c + 1)) as f64 / 3.0);
        }
        text.push('\n');
    }
    text.into_bytes()
}

/// Allocations made while reading (and writing) rows `warm..` of an input of `rows` rows.
fn steady_allocations(rows: usize, warm: usize) -> u64 {
    let mut reader =
        CsvReader::from_bytes(csv(rows), Path::new("a.csv"), ReadOptions::default()).unwrap();
    let header = reader.header().clone();
    let mut outputs = Outputs::dry_run(false);
    let mut writer = CsvWriter::create(
        Path::new("out.csv"),
        &header,
        &mut outputs,
        Default::default(),
    )
    .unwrap();
    // Copies one record; false at the end of the input.
    let mut copy_one = || {
        let Some(record) = reader.next() else {
            return false;
        };
        let record: Record = record.unwrap();
        writer.write(&record).unwrap();
        reader.recycle(record);
        true
    };
    let mut records = 0usize;
    while records < warm * COLUMNS && copy_one() {
        records += 1;
    }
    let (rest, allocated) = measure(|| {
        let mut rest = 0;
        while copy_one() {
            rest += 1;
        }
        rest
    });
    records += rest;
    assert_eq!(records, rows * COLUMNS);
    let report = Box::new(writer).finish().unwrap();
    // Every value needs 16 or 17 digits but the whole numbers (r (c + 1) a multiple of 3).
    let thirds = (1..=rows)
        .flat_map(|r| (1..=COLUMNS).map(move |c| r * c))
        .filter(|n| n % 3 != 0)
        .count() as u64;
    assert_eq!(report.loss.entries().map(|e| e.3).sum::<u64>(), thirds);
    allocated.allocations
}

#[test]
fn reading_and_writing_allocate_nothing_per_row() {
    assert_eq!(steady_allocations(200, 10), 0);
    assert_eq!(steady_allocations(2000, 10), 0);
}
