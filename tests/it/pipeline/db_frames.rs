//! The Elodin DB a frame at a time: a DB of one time grid read by ticks, and the DB writer
//! taking frames (`.icarec`, Icarus HDF5 and such a DB → DB with nothing to do record by
//! record goes by frames). Without a `--channel` the frame path, with `--channel '*'`
//! (every signal) the record path: both runs exit alike, print the same and write the same
//! directory, byte for byte (for an input without an absolute start, whose rows are
//! stamped from the time of the conversion, the same data, schemas and `cat`).

use std::path::Path;

use simrec::formats::{format_named, GivenFlags, ReadOptions};
use simrec::pipeline::frame_copy::write_frames;
use simrec::pipeline::WriteRequest;

use crate::util::elodin::probe_db;
use crate::util::{any_fixture, copy_tree, files_under, frame_and_record_runs, run_in, s};

const FIXTURES: [&str; 15] = [
    "elodin-db/ball_v0142",
    "elodin-db/ball_v0162",
    "elodin-db/crash_v0180",
    "elodin-db/three_body_v0180",
    "elodin-db/types_v0180",
    "elodin-db/upstream/bools-alternating-db-linux",
    "icarec/a2.icarec",
    "icarec/types.icarec",
    "icarec/a2.icarec.tar",
    "icarus-hdf5/crashed.h5",
    "icarus-hdf5/escape.h5",
    "icarus-hdf5/noschema.h5",
    "icarus-hdf5/small.h5",
    "icarus-hdf5/unescaped.h5",
    "icarus-hdf5/vulcan.h5",
];

/// Without the time of the conversion (`2026-11-29T10:05:18.552480Z`).
fn timeless(text: &str) -> String {
    text.split(' ')
        .map(|w| match w.find("T") {
            Some(10) if w.ends_with("Z") => "TIME",
            _ => w,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Converts `input` to a DB both ways in `dir`; checks that both runs exit alike, print the
/// same (but for the output's name) and write the same; returns the exit code and what
/// was printed.
pub(crate) fn both_ways(dir: &Path, input: &Path) -> (i32, String) {
    let (frames, records) = (dir.join("frames"), dir.join("records"));
    let out = |p: &Path| format!("{}/", p.display());
    // Left by a run before whose output matched.
    std::fs::remove_dir_all(&frames).ok();
    std::fs::remove_dir_all(&records).ok();
    let (a, _) = frame_and_record_runs(dir, input, (&out(&frames), &out(&records)), &[], timeless);
    let what = input.display().to_string();
    if a.code != 1 {
        // Rows stamped from the time of the conversion differ in their index and start.
        let now = a.stderr.contains("no absolute start");
        let listed = files_under(&frames);
        assert_eq!(listed, files_under(&records), "{what}");
        for f in &listed {
            let stamped = f.ends_with("index") || f.ends_with("db_state");
            if now && stamped {
                continue;
            }
            let (fa, fb) = (
                std::fs::read(frames.join(f)).unwrap(),
                std::fs::read(records.join(f)).unwrap(),
            );
            assert!(fa == fb, "{what}: {} differs", f.display());
        }
        if now {
            let (ca, cb) = (
                run_in(dir, &["cat", s(&frames)]),
                run_in(dir, &["cat", s(&records)]),
            );
            assert_eq!(ca.stdout, cb.stdout, "{what}");
        }
        std::fs::remove_dir_all(&frames).unwrap();
        std::fs::remove_dir_all(&records).unwrap();
    }
    (a.code, a.stderr)
}

#[test]
fn the_frame_path_writes_the_record_paths_db_on_every_fixture() {
    let tmp = tempfile::tempdir().unwrap();
    for name in FIXTURES {
        let (code, stderr) = both_ways(tmp.path(), &any_fixture(name));
        assert_ne!(code, 1, "{name}: {stderr}");
        assert!(stderr.contains("wrote "), "{name}: {stderr}");
    }
}

pub(crate) fn request<'a>(out: &'a Path, format: &str) -> WriteRequest<'a> {
    WriteRequest {
        output: out,
        format: format_named(format).unwrap(),
        force: true,
        dry_run: false,
        flags: GivenFlags::default(),
        split: false,
        resample: None,
    }
}

/// Whether `input` into `format` goes by frames, and the records it wrote.
fn by_frames(input: &Path, options: ReadOptions, format: &str) -> Option<u64> {
    let tmp = tempfile::tempdir().unwrap();
    // A DB is a directory; MCAP and the Parquet table are files.
    let out = match format {
        "elodin-db" => tmp.path().join("out/"),
        _ => tmp.path().join(format!("out.{format}")),
    };
    let input = vec![input.to_path_buf()];
    let (written, _) = write_frames(&input, options, &request(&out, format), &mut |_, _| {})?;
    Some(written.unwrap().report.records)
}

/// What the command line reads with (lenient unless `--strict`).
pub(crate) fn lenient() -> ReadOptions {
    ReadOptions {
        lenient: true,
        until_damage: true,
        ..ReadOptions::default()
    }
}

#[test]
fn a_db_of_one_time_grid_goes_by_frames_and_others_do_not() {
    let db = |name: &str| any_fixture(&format!("elodin-db/{name}"));
    let icarec = any_fixture("icarec/a2.icarec");
    for options in [ReadOptions::default(), lenient()] {
        // The record path's counts (`wrote 2709 records`, `wrote 7 records`).
        assert_eq!(
            by_frames(&db("ball_v0162"), options, "elodin-db"),
            Some(2709)
        );
        assert_eq!(
            by_frames(&db("three_body_v0180"), options, "elodin-db"),
            Some(6923)
        );
        assert_eq!(by_frames(&icarec, options, "elodin-db"), Some(7));
        // A torn tick, two rates and message logs, Elodin 0.14's ball (two rows of every
        // component at its first time, which the merge by time serves component by
        // component): records.
        for name in ["crash_v0180", "types_v0180", "ball_v0142"] {
            assert_eq!(by_frames(&db(name), options, "elodin-db"), None, "{name}");
        }
        // MCAP writes what its record writer writes of records without a frame value; the
        // Parquet table writes the frame value.
        assert_eq!(by_frames(&db("ball_v0162"), options, "mcap"), Some(2709));
        assert_eq!(by_frames(&db("ball_v0162"), options, "parquet"), None);
    }
}

#[test]
fn an_icarus_frame_going_back_in_time_leaves_the_db_to_the_record_path() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("back.icarec");
    copy_tree(&any_fixture("icarec/a2.icarec"), &rec);
    // Three frames of 40 bytes, each starting with its time: the third's before the first.
    let dynamic = rec.join("dynamic_signals.bin");
    let mut bytes = std::fs::read(&dynamic).unwrap();
    let first = f64::from_le_bytes(bytes[..8].try_into().unwrap());
    bytes[80..88].copy_from_slice(&(first - 1.0).to_le_bytes());
    std::fs::write(&dynamic, &bytes).unwrap();
    assert_eq!(by_frames(&rec, lenient(), "elodin-db"), None);
    let (code, stderr) = both_ways(tmp.path(), &rec);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("ICAREC_TIME_DECREASE"), "{stderr}");
}

#[test]
fn one_index_of_other_times_leaves_the_db_to_records() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    copy_tree(&any_fixture("elodin-db/ball_v0162"), &db);
    assert!(by_frames(&db, lenient(), "elodin-db").is_some());
    // The last timestamp of one component's index one µs later: still in order.
    let index = files_under(&db)
        .into_iter()
        .find(|f| f.ends_with("index"))
        .unwrap();
    let mut bytes = std::fs::read(db.join(&index)).unwrap();
    let at = bytes.len() - 8;
    let last = i64::from_le_bytes(bytes[at..].try_into().unwrap());
    bytes[at..].copy_from_slice(&(last + 1).to_le_bytes());
    std::fs::write(db.join(&index), &bytes).unwrap();
    assert_eq!(by_frames(&db, lenient(), "elodin-db"), None);
    both_ways(tmp.path(), &db);
}

#[test]
fn a_db_of_every_type_goes_by_frames_as_by_records() {
    let tmp = tempfile::tempdir().unwrap();
    let db = probe_db(tmp.path());
    assert_eq!(by_frames(&db, lenient(), "elodin-db"), Some(11 * 200));
    let (code, stderr) = both_ways(tmp.path(), &db);
    assert_eq!(code, 0, "{stderr}");
}
