//! MCAP written a frame at a time (`.icarec`, Icarus HDF5 and an Elodin DB of one time
//! grid → MCAP with nothing to do record by record goes by frames): without a `--channel`
//! the frame path, with `--channel '*'` (every signal) the record path. On every Icarus and
//! Elodin DB fixture both runs exit alike, print the same and write the same file, byte for
//! byte; the JSON layout is left to the record path.

use std::path::Path;

use simrec::formats::{format_named, GivenFlags, ReadOptions};
use simrec::pipeline::frame_copy::write_frames;
use simrec::pipeline::WriteRequest;

use crate::util::elodin::probe_db;
use crate::util::{any_fixture, frame_and_record_runs, icarec_with_partial_last_frame, s};

const FIXTURES: [&str; 11] = [
    "icarec/a2.icarec",
    "icarec/types.icarec",
    "icarec/a2.icarec.tar",
    "icarec/a2-gnu.icarec.tar",
    "icarec/a2-pax.icarec.tar",
    "icarus-hdf5/crashed.h5",
    "icarus-hdf5/escape.h5",
    "icarus-hdf5/noschema.h5",
    "icarus-hdf5/small.h5",
    "icarus-hdf5/unescaped.h5",
    "icarus-hdf5/vulcan.h5",
];

/// Converts `input` to MCAP both ways (with `extra` flags) in `dir`; checks that both runs
/// exit alike, print the same (but for the output's name) and write the same bytes; returns
/// the exit code and what was printed.
pub(crate) fn both_ways(dir: &Path, input: &Path, extra: &[&str]) -> (i32, String) {
    let frames = dir.join("frames.mcap");
    let records = dir.join("records.mcap");
    let (a, _) = frame_and_record_runs(dir, input, (s(&frames), s(&records)), extra, str::to_owned);
    let what = input.display().to_string();
    if a.code != 1 {
        let (fa, fb) = (
            std::fs::read(&frames).unwrap(),
            std::fs::read(&records).unwrap(),
        );
        assert!(fa == fb, "{what}: the two files differ");
        std::fs::remove_file(&frames).unwrap();
        std::fs::remove_file(&records).unwrap();
    }
    (a.code, a.stderr)
}

#[test]
fn the_frame_path_writes_the_record_paths_file_on_every_icarus_fixture() {
    let tmp = tempfile::tempdir().unwrap();
    for name in FIXTURES {
        for extra in [&[][..], &["--mcap-encoding", "json"]] {
            let (code, stderr) = both_ways(tmp.path(), &any_fixture(name), extra);
            // Some fixtures warn (exit 3): a missing schema, datasets of different lengths.
            assert_ne!(code, 1, "{name} {extra:?}: {stderr}");
            assert!(stderr.contains("wrote "), "{name}: {stderr}");
        }
    }
}

#[test]
fn a_partial_last_frame_is_written_up_to_both_ways() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = icarec_with_partial_last_frame(tmp.path());
    let (code, stderr) = both_ways(tmp.path(), &rec, &[]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("the last frame is partial"), "{stderr}");
}

#[test]
fn a_recording_of_frames_into_protobuf_mcap_goes_by_frames_and_json_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.mcap");
    let request = |flags: GivenFlags| WriteRequest {
        output: &out,
        format: format_named("mcap").unwrap(),
        force: true,
        dry_run: false,
        flags,
        split: false,
        resample: None,
    };
    // The record path's counts (`wrote 7 records`, …); the DB's frames are a loose layout's.
    let inputs = [
        ("icarec/a2.icarec", 7),
        ("icarus-hdf5/small.h5", 6),
        ("elodin-db/three_body_v0180", 6923),
    ];
    for (name, records) in inputs {
        let input = vec![any_fixture(name)];
        let by_frames = request(GivenFlags::default());
        let (written, _) = write_frames(&input, ReadOptions::default(), &by_frames, &mut |_, _| {})
            .unwrap_or_else(|| panic!("{name} into protobuf MCAP goes by frames"));
        assert_eq!(written.unwrap().report.records, records, "{name}");
        let mut flags = GivenFlags::default();
        flags.push("mcap-encoding", "mcap-encoding", Some("json".into()));
        let json = request(flags);
        assert!(
            write_frames(&input, ReadOptions::default(), &json, &mut |_, _| {}).is_none(),
            "{name}: the JSON layout takes records"
        );
    }
}

/// The Elodin DB fixtures: of one time grid (read by ticks, a loose layout: no frame value,
/// a scalar an array of shape `[]`) and not (read as records either way).
const DBS: [&str; 6] = [
    "elodin-db/ball_v0162",
    "elodin-db/three_body_v0180",
    "elodin-db/upstream/bools-alternating-db-linux",
    "elodin-db/ball_v0142",
    "elodin-db/crash_v0180",
    "elodin-db/types_v0180",
];

#[test]
fn the_frame_path_writes_the_record_paths_file_on_every_elodin_db() {
    let tmp = tempfile::tempdir().unwrap();
    let probe = probe_db(tmp.path());
    let inputs = DBS.iter().map(|n| any_fixture(n)).chain([probe]);
    for input in inputs {
        let (code, stderr) = both_ways(tmp.path(), &input, &[]);
        assert_ne!(code, 1, "{}: {stderr}", input.display());
        assert!(stderr.contains("wrote "), "{}: {stderr}", input.display());
    }
}
