//! The Icarus CSV read by frames parses its rows on other threads, in blocks of lines: over a
//! file of many blocks, with damage in late ones, it gives what the record read (one thread,
//! a line at a time) gives: the same frames (times and value bits), findings in the same
//! order, facts, and the same error after the same frames, strict, lenient and deep, and
//! for files cut anywhere.

use std::path::Path;

use simrec::formats::icarus::csv::{CsvReader, IcarusCsv};
use simrec::formats::{Frames, ReadOptions, Source};
use simrec::model::Value;
use simrec::report::{Fact, Finding};

use crate::util::lenient;

const COLUMNS: usize = 20;
const ROWS: usize = 4000;

/// A row of full-precision values (18 bytes a cell: the file is about 1.5 MB, many blocks).
fn row(r: usize) -> String {
    let mut line = format!("{}", r as f64 * 0.01 + 1.0);
    for c in 0..COLUMNS {
        line += &format!(",{:?}", (r * (c + 1)) as f64 / 7.0);
    }
    line
}

/// The file, with row `r`'s line replaced by `damage(r)` where it gives one.
fn csv(damage: impl Fn(usize) -> Option<String>) -> Vec<u8> {
    let mut text = String::from("time");
    for c in 0..COLUMNS {
        text += &format!(",Body{}.s{c}.x", c % 3);
    }
    text.push('\n');
    for r in 0..ROWS {
        text += &damage(r).unwrap_or_else(|| row(r));
        text.push('\n');
    }
    text.into_bytes()
}

/// Row `r` with cell `k` (0: the time) replaced by `text`.
fn with_cell(r: usize, k: usize, text: &str) -> String {
    let mut cells: Vec<String> = row(r).split(',').map(str::to_owned).collect();
    cells[k] = text.to_string();
    cells.join(",")
}

/// The time cell of row `r`.
fn time(r: usize) -> String {
    row(r).split(',').next().unwrap().to_string()
}

/// A cell that is not a number at row 3600, an equal time at 3700, NaN and infinities at
/// 3750; with `skips`, also rows skipped: a time going back at 3800, a short row at 3850, a
/// line longer than any row at 3900.
fn damaged(skips: bool) -> impl Fn(usize) -> Option<String> {
    move |r| match r {
        3600 => Some(with_cell(r, 6, "1.2.3x")),
        3700 => Some(with_cell(r, 0, &time(r - 1))),
        3750 => Some(format!(
            "{},nan,-inf,inf{}",
            time(r),
            ",1".repeat(COLUMNS - 3)
        )),
        3800 if skips => Some(row(10)),
        3850 if skips => Some("40.5,1,2".to_string()),
        3900 if skips => Some("9".repeat(3000)),
        _ => None,
    }
}

/// Frames (time, exact seconds, value bits), findings, facts and the error that ended the
/// read, if one did.
#[derive(Debug, PartialEq)]
struct Read {
    frames: Vec<(i64, Option<u64>, Vec<u64>)>,
    findings: Vec<Finding>,
    facts: Vec<Fact>,
    error: Option<String>,
}

fn by_frames(path: &Path, options: ReadOptions) -> Read {
    let mut source = IcarusCsv.open_frames(path, options).unwrap().unwrap();
    let mut frames = Vec::new();
    let error = loop {
        match source.next_frame() {
            Ok(Some(f)) => {
                let values = (f.values.chunks_exact(8))
                    .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
                    .collect();
                frames.push((f.time, f.exact_seconds.map(f64::to_bits), values));
            }
            Ok(None) => break None,
            Err(e) => break Some(format!("{e:#}")),
        }
    };
    let findings = source.findings()[0].1.list().to_vec();
    Read {
        frames,
        findings,
        facts: source.facts(),
        error,
    }
}

/// The record read's records, a frame per row read (their frame value).
fn by_records(path: &Path, options: ReadOptions) -> Read {
    let mut reader = CsvReader::open(path, options).unwrap();
    let mut frames: Vec<(i64, Option<u64>, Vec<u64>)> = Vec::new();
    let mut last = None;
    let error = loop {
        match reader.next() {
            Some(Ok(r)) => {
                if last != r.frame {
                    last = r.frame;
                    frames.push((r.time, r.exact_seconds.map(f64::to_bits), Vec::new()));
                }
                // A read without values gives records without values, frames without them.
                match r.values.as_slice() {
                    [] => {}
                    [(_, Value::Float(x))] => frames.last_mut().unwrap().2.push(x.to_bits()),
                    _ => panic!("one float per record: {r:?}"),
                }
            }
            None => break None,
            Some(Err(e)) => break Some(format!("{e:#}")),
        }
    };
    let findings = reader.findings()[0].1.list().to_vec();
    Read {
        frames,
        findings,
        facts: reader.facts(),
        error,
    }
}

/// Both reads of `bytes` with `options`, checked equal; the frames read.
fn same_both_ways(dir: &Path, bytes: &[u8], options: ReadOptions) -> Read {
    let path = dir.join("many.csv");
    std::fs::write(&path, bytes).unwrap();
    let frames = by_frames(&path, options);
    let records = by_records(&path, options);
    assert_eq!(frames.findings, records.findings);
    assert_eq!(frames.error, records.error);
    assert_eq!(frames.facts, records.facts);
    assert_eq!(frames.frames.len(), records.frames.len());
    assert!(frames.frames == records.frames, "the frames differ");
    frames
}

#[test]
fn many_blocks_read_as_the_record_read_reads_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let intact = same_both_ways(dir, &csv(|_| None), lenient());
    assert_eq!((intact.frames.len(), intact.error), (ROWS, None));
    for skips in [false, true] {
        let bytes = csv(damaged(skips));
        let read = same_both_ways(dir, &bytes, lenient());
        let codes: Vec<_> = read.findings.iter().map(|f| (f.code, f.record)).collect();
        let mut expected = vec![
            ("ICARUS_CSV_VALUE", Some(3600)),
            ("ICARUS_CSV_TIME_EQUAL", Some(3700)),
        ];
        if skips {
            expected.extend([
                ("ICARUS_CSV_TIME", Some(3800)),
                ("ICARUS_CSV_COLUMNS", Some(3850)),
                ("ICARUS_CSV_LINE_LENGTH", Some(3900)),
            ]);
        }
        assert_eq!(codes, expected);
        assert_eq!(read.frames.len(), ROWS - 3 * usize::from(skips));
        // The cell that is not a number is NaN in its frame.
        assert!(f64::from_bits(read.frames[3600].2[5]).is_nan());
        // A strict read stops at the first error, after the rows before it.
        let strict = same_both_ways(dir, &bytes, ReadOptions::default());
        assert_eq!(strict.frames.len(), 3600);
        assert!(strict.error.unwrap().contains("`1.2.3x` is not a number"));
        // --deep: NaN and infinities per column, their first row and offset.
        let deep = ReadOptions {
            deep: true,
            ..lenient()
        };
        let read = same_both_ways(dir, &bytes, deep);
        let nonfinite = read
            .findings
            .iter()
            .filter(|f| f.code == "ICARUS_CSV_NONFINITE");
        assert_eq!(nonfinite.count(), 4);
        // Without values (inspect): times and checks alike.
        let times = ReadOptions {
            decode: false,
            ..lenient()
        };
        same_both_ways(dir, &bytes, times);
    }
}

#[test]
fn a_file_cut_anywhere_reads_alike_both_ways() {
    let tmp = tempfile::tempdir().unwrap();
    let bytes = csv(damaged(true));
    // Cuts in the header, in early and late blocks, at and around line ends.
    let step = bytes.len() / 23;
    for cut in (0..bytes.len())
        .step_by(step)
        .chain([bytes.len() - 1, 5, 200])
    {
        for cut in [cut, cut + 1] {
            let cut = &bytes[..cut.min(bytes.len())];
            let path = tmp.path().join("cut.csv");
            std::fs::write(&path, cut).unwrap();
            for options in [lenient(), ReadOptions::default()] {
                // A header cut short may not open, or name no column (no frames, no
                // records): the same both ways.
                let opened = CsvReader::open(&path, options).map(drop);
                match IcarusCsv.open_frames(&path, options) {
                    Some(Ok(_)) => {
                        opened.unwrap();
                        same_both_ways(tmp.path(), cut, options);
                    }
                    Some(Err(e)) => {
                        assert_eq!(format!("{e:#}"), format!("{:#}", opened.unwrap_err()))
                    }
                    None => assert!(by_records(&path, options).frames.is_empty()),
                }
            }
        }
    }
}
