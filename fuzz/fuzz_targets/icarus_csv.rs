//! Arbitrary bytes into the Icarus CSV reader (header quoting, line limits, cell grammar, the
//! §C3 rules, deep NaN counts), every record written back through the CSV writer into a
//! dry-run sink and through JSON Lines; and the same bytes read as f64 bit patterns through
//! the `%.15g` formatter, whose text must read back as it says.
//!
//! Asserted besides no panic, abort or hang: an open error is an `ICARUS_CSV_HEADER` finding
//! at byte 0; lenient reading yields no error; a strict read yields at most one error, then
//! ends; records come in time order, in whole rows (one per column), with frame values that
//! grow; every finding has an offset inside the input; progress stays inside it.

#![no_main]

use std::io::{self, BufWriter, Write};
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use simrec::formats::export::jsonl::JsonlWriter;
use simrec::formats::icarus::csv::{CsvReader, CsvWriter, G15};
use simrec::formats::output::Outputs;
use simrec::formats::{ReadError, ReadOptions, Sink, Source};

fn read(data: &[u8], options: ReadOptions) {
    let mut reader = match CsvReader::from_bytes(data.to_vec(), Path::new("fuzz.csv"), options) {
        Ok(r) => r,
        Err(ReadError::Invalid { finding, .. }) => {
            assert_eq!(finding.code, "ICARUS_CSV_HEADER", "{finding}");
            assert_eq!(finding.offset, Some(0));
            return;
        }
        Err(e) => panic!("an in-memory input gave {e:?}"),
    };
    let header = reader.header().clone();
    let columns = header.channels.len() as u64;
    let out: BufWriter<Box<dyn Write>> = BufWriter::new(Box::new(io::sink()));
    let mut jsonl = JsonlWriter::new(out, Path::new("fuzz.jsonl"), &header, None);
    let mut outputs = Outputs::dry_run(false);
    let mut csv = CsvWriter::create(
        Path::new("fuzz.csv"),
        &header,
        &mut outputs,
        Default::default(),
    )
    .expect("dry run");
    let mut records = 0u64;
    let mut errors = 0;
    let mut last: Option<(i64, i64)> = None;
    while let Some(item) = reader.next() {
        let record = match item {
            Ok(r) => r,
            Err(ReadError::Invalid { finding, .. }) => {
                assert!(
                    !options.lenient,
                    "lenient reading reports findings, not errors"
                );
                assert!(finding.offset.is_some_and(|o| o <= data.len() as u64));
                errors += 1;
                continue;
            }
            Err(e) => panic!("an in-memory input gave {e:?}"),
        };
        assert_eq!(errors, 0, "a strict read ends at its error");
        assert_eq!(
            u64::from(record.channel),
            records % columns,
            "whole rows, in column order"
        );
        let frame = record.frame.expect("every record has its row index");
        if let Some((time, previous_frame)) = last {
            assert!(record.time >= time, "time order");
            assert!(frame >= previous_frame, "rows in file order");
        }
        last = Some((record.time, frame));
        if options.decode {
            assert_eq!(record.values.len(), 1);
            jsonl.write(&record).expect("jsonl into a sink");
            csv.write(&record).expect("csv into a sink");
        }
        records += 1;
        reader.recycle(record);
    }
    assert!(errors <= 1);
    assert!(reader.next().is_none(), "a finished reader stays finished");
    let (done, total) = reader.progress();
    assert!(done <= total && total == data.len() as u64);
    for (_, findings) in reader.findings() {
        for f in findings.list() {
            assert!(f.offset.is_some_and(|o| o <= data.len() as u64), "{f}");
        }
    }
    let _ = reader.facts();
    let report = Box::new(csv).finish().expect("csv finish");
    if options.decode {
        assert_eq!(report.records, records);
    }
}

/// The formatter on the input's bytes as doubles: the text reads back to the value exactly
/// when it says so, and never longer than the buffer.
fn format(data: &[u8]) {
    for chunk in data.chunks_exact(8) {
        let x = f64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let g = G15::new(x);
        let text = g.as_str();
        assert!(!text.is_empty() && text.len() <= 22, "{text}");
        let back: f64 = match text.trim_start_matches('-') {
            "nan" => f64::NAN,
            _ => text.parse().expect("the text is a number"),
        };
        let same = (x.is_nan() && back.is_nan()) || back.to_bits() == x.to_bits();
        assert_eq!(g.exact(), same, "{text} for {:#018x}", x.to_bits());
        let digits = text
            .bytes()
            .take_while(|b| *b != b'e')
            .filter(u8::is_ascii_digit)
            .count();
        assert!(digits <= 15 + 4, "{text}"); // 15 significant digits and up to 4 leading zeros
    }
}

fuzz_target!(|data: &[u8]| {
    for (decode, lenient, deep) in [
        (true, true, true),
        (true, false, false),
        (false, true, false),
    ] {
        read(
            data,
            ReadOptions {
                decode,
                lenient,
                deep,
                // Fields main adds later (an --epoch, a time system) keep their defaults.
                ..ReadOptions::default()
            },
        );
    }
    format(data);
});
