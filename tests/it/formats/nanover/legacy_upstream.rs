//! The genuine upstream recordings: counts, first and last timestamps, reset indices.

use std::path::Path;

use simrec::formats::nanover::legacy::LegacyReader;
use simrec::formats::{ReadOptions, Source};
use simrec::model::Composition;

struct Truth {
    records: u64,
    first_us: i64,
    last_us: i64,
    resets: Vec<u64>,
}

fn read(path: &str, decode: bool) -> Truth {
    let options = ReadOptions {
        decode,
        ..ReadOptions::default()
    };
    let reader = LegacyReader::open(Path::new(path), None, options).unwrap();
    let frames = reader.header().channels[0].composition == Composition::FrameDelta;
    let mut t = Truth {
        records: 0,
        first_us: -1,
        last_us: -1,
        resets: vec![],
    };
    for (i, r) in reader.enumerate() {
        let r = r.unwrap();
        if i == 0 {
            t.first_us = r.time / 1000;
        }
        t.last_us = r.time / 1000;
        if frames && r.frame == Some(0) {
            t.resets.push(i as u64);
        }
        t.records += 1;
    }
    t
}

fn check(path: &str, records: u64, first_us: i64, last_us: i64, resets: &[u64]) {
    for decode in [false, true] {
        let t = read(path, decode);
        assert_eq!(t.records, records, "{path} records (decode {decode})");
        assert_eq!((t.first_us, t.last_us), (first_us, last_us), "{path} times");
        assert_eq!(t.resets, resets, "{path} resets (decode {decode})");
    }
}

#[test]
fn ala_recording_multiple() {
    check(
        "fixtures/nanover-legacy/upstream/17-ala-recording-multiple.traj",
        427,
        184578,
        14251990,
        &[0, 252, 367, 396],
    );
}

#[test]
fn hello() {
    check(
        "fixtures/nanover-legacy/upstream/hello.traj",
        626,
        4217,
        23169901,
        &[0, 1],
    );
}

#[test]
fn nanotube() {
    check(
        "fixtures/nanover-legacy/upstream/nanotube-example-recording.traj",
        930,
        3872,
        33035659,
        &[0, 1],
    );
    check(
        "fixtures/nanover-legacy/upstream/nanotube-example-recording.state",
        685,
        19053,
        31728537,
        &[],
    );
}

#[test]
fn sim_switching() {
    check(
        "fixtures/nanover-legacy/upstream/sim-switching-test-recording.traj",
        454,
        2224,
        15315361,
        &[104, 212, 339],
    );
}
