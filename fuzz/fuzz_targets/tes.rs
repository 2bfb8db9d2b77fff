//! Arbitrary bytes into the 3es reader: framing, resync, collated expansion (raw and gzip),
//! the whole-file gzip switch and every payload decoder.
//!
//! Each input is read leniently with decoding, strictly without values, and leniently without
//! values (inspect's header walk); every record of the decoded read is written back through
//! the 3es writer (into a sink; in `recover`'s repair mode for the lenient read) and JSON
//! Lines. It is then sliced from frame 2 (the walk to the cut, the reader started mid-file
//! with a seeded checker, the synthesised world state), and `recover`'s scheme walk runs on it.
//! A panic, an abort (a huge allocation), a hang or a broken invariant below is a bug.

#![no_main]

use std::io::{self, BufWriter, Write};
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use simrec::formats::export::jsonl::JsonlWriter;
use simrec::formats::output::Outputs;
use simrec::formats::tes::names::RESET_CHANNEL;
use simrec::formats::tes::{Tes, TesReader, TesSlice, TesWriteOptions, TesWriter};
use simrec::formats::{ReadError, ReadOptions, Recovery, Sink, Source};
use simrec::model::TimeSpec;

fn read(data: &[u8], options: ReadOptions) {
    let mut reader = match TesReader::from_bytes(data.to_vec(), Path::new("fuzz"), options) {
        Ok(r) => r,
        Err(ReadError::Invalid { finding, .. }) => {
            assert!(
                finding.offset.is_some(),
                "an open error has an offset: {finding}"
            );
            return;
        }
        Err(e) => panic!("an in-memory input gave {e:?}"),
    };
    let header = reader.header().clone();
    let out: BufWriter<Box<dyn Write>> = BufWriter::new(Box::new(io::sink()));
    let mut jsonl = JsonlWriter::new(out, Path::new("fuzz.jsonl"), &header, None);
    let mut outputs = Outputs::dry_run(false);
    let repair = TesWriteOptions {
        repair: options.lenient,
        ..TesWriteOptions::default()
    };
    let mut tes =
        TesWriter::create(Path::new("fuzz.3es"), &header, &mut outputs, repair).expect("dry run");
    let mut last_frame = 0;
    while let Some(item) = reader.next() {
        let record = match item {
            Ok(r) => r,
            Err(ReadError::Invalid { .. }) => {
                assert!(
                    !options.lenient,
                    "lenient reading reports findings, not errors"
                );
                break;
            }
            Err(e) => panic!("an in-memory input gave {e:?}"),
        };
        assert!(record.time >= 0);
        let frame = record.frame.expect("every 3es record has a frame index");
        // A Reset's record says frame 0 (a reset in simrec's model).
        if record.channel == RESET_CHANNEL {
            assert_eq!(frame, 0, "a Reset is a reset");
        } else {
            assert!(frame >= last_frame, "frame indices never decrease");
            last_frame = frame;
        }
        if options.decode {
            jsonl.write(&record).expect("jsonl into a sink");
            tes.write(&record).expect("3es into a sink");
        }
    }
    let _ = reader.facts();
    Box::new(tes).finish().expect("3es finish");
}

/// The slice reads a file: one scratch file per fuzzing process.
fn slice(data: &[u8]) {
    let path = std::env::temp_dir().join(format!("simrec-fuzz-tes-{}.3es", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let options = ReadOptions {
        decode: true,
        lenient: true,
        until_damage: false,
        assume_version: None,
        deep: false,
        epoch: None,
        time_system: None,
        check_only: false,
        discontinuity: None,
    };
    for (a, b) in [(2, 4), (1, 1000)] {
        let Ok(slice) = TesSlice::open(
            &path,
            Some(TimeSpec::Frame(a)),
            Some(TimeSpec::Frame(b)),
            true,
            options,
        ) else {
            continue;
        };
        let mut last = 0;
        for item in slice {
            let Ok(r) = item else { break };
            let frame = r.frame.expect("every 3es record has a frame index");
            if r.channel == RESET_CHANNEL {
                continue;
            }
            assert!(frame >= last, "slice frame indices never decrease");
            assert!(frame < (b - a + 1) as i64, "a slice stays in its window");
            last = frame;
        }
    }
    assert!(Tes.recover_flags(&path).repair);
}

fuzz_target!(|data: &[u8]| {
    read(
        data,
        ReadOptions {
            decode: true,
            lenient: true,
            until_damage: false,
            assume_version: None,
            deep: false,
            epoch: None,
            time_system: None,
            check_only: false,
            discontinuity: None,
        },
    );
    read(
        data,
        ReadOptions {
            decode: false,
            lenient: false,
            until_damage: false,
            assume_version: None,
            deep: false,
            epoch: None,
            time_system: None,
            check_only: false,
            discontinuity: None,
        },
    );
    read(
        data,
        ReadOptions {
            decode: false,
            lenient: true,
            until_damage: false,
            assume_version: None,
            deep: false,
            epoch: None,
            time_system: None,
            check_only: false,
            discontinuity: None,
        },
    );
    slice(data);
});
