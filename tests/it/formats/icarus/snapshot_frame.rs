//! `snapshot --at` reads the chosen frame alone where the format slices by itself
//! (`.icarec`, Icarus HDF5): the snapshot is the one reading every frame up to it gives, on
//! every Icarus fixture and at every kind of `--at`.

use std::path::Path;

use simrec::formats::ReadOptions;
use simrec::model::TimeSpec;
use simrec::pipeline::snapshot::{snapshot, SnapshotRequest};

const FIXTURES: &[&str] = &[
    "fixtures/icarec/a2.icarec",
    "fixtures/icarec/a2.icarec.tar",
    "fixtures/icarec/types.icarec",
    "fixtures/icarus-hdf5/small.h5",
    "fixtures/icarus-hdf5/vulcan.h5",
    "fixtures/icarus-hdf5/escape.h5",
    "fixtures/icarus-hdf5/unescaped.h5",
    "fixtures/icarus-hdf5/noschema.h5",
    "fixtures/icarus-hdf5/crashed.h5",
    "fixtures/icarus-csv/rocket.csv",
];

/// The snapshot's JSON and its findings as text, or the error.
fn take(path: &Path, at: TimeSpec, states_only: bool, whole: bool) -> String {
    let request = SnapshotRequest {
        path,
        at,
        states_only,
        current: None,
        options: ReadOptions::default(),
        whole,
    };
    match snapshot(&request) {
        Ok(s) => format!(
            "{:?}\n{:?}",
            s.json,
            s.findings
                .iter()
                .map(|f| (f.code, f.message.clone()))
                .collect::<Vec<_>>()
        ),
        Err(e) => format!("error: {e}"),
    }
}

#[test]
fn the_frame_alone_gives_the_snapshot_of_every_frame_up_to_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut snapshots = 0;
    for fixture in FIXTURES {
        let path = root.join(fixture);
        let times = [
            TimeSpec::At(0),
            TimeSpec::At(10_000_000),
            TimeSpec::At(15_000_000),
            TimeSpec::At(20_000_001),
            TimeSpec::At(500_000_000),
            TimeSpec::At(3_600_000_000_000),
            TimeSpec::Frame(0),
            TimeSpec::Frame(1),
            TimeSpec::Frame(2),
            TimeSpec::Frame(1_000),
            TimeSpec::FromEnd(0),
            TimeSpec::FromEnd(10_000_000),
        ];
        for at in times {
            for states_only in [false, true] {
                let fast = take(&path, at, states_only, false);
                let whole = take(&path, at, states_only, true);
                assert_eq!(fast, whole, "{fixture} at {at:?}");
                snapshots += usize::from(fast.starts_with("Some(\"{"));
            }
        }
    }
    // Most of them are snapshots, not refusals.
    assert!(snapshots >= 100, "{snapshots}");
}
