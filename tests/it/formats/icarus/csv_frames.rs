//! An Icarus CSV read a frame at a time (`Frames::open_frames`): each row's values parsed
//! into one block. Into every writer that takes frames (the Parquet table, MCAP, the Elodin
//! DB, Icarus HDF5), without a `--channel` the frame path and with `--channel '*'` the
//! record path exit alike, print the same and write the same; a lenient read that skips a
//! damaged row (its records keep the rows' indices as frame values) goes the record path.

use std::path::{Path, PathBuf};

use crate::pipeline::db_frames::{lenient, request};
use crate::pipeline::{db_frames, mcap_frames, parquet_frames};
use crate::util::{any_fixture, cat_json, frame_and_record_runs, s};
use simrec::formats::ReadOptions;
use simrec::pipeline::frame_copy::write_frames;

/// Intact files (a warning at most) and damaged ones, written into `dir`; the last two have
/// no column (the record path, forced by `--channel '*'`, then selects nothing).
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let files: [(&str, &[u8]); 6] = [
        (
            "equal.csv",
            b"time,Nav.x,Nav.y\n0.01,1,2\n0.01,3,4\n0.02,5,nan\n",
        ),
        ("crlf.csv", b"time,a.b,c\r\n0.01,1e-05,-nan\r\n0.02,-0,inf"),
        // A row of too few cells (skipped), a cell that is not a number (NaN).
        (
            "damaged.csv",
            b"time,Nav.x,Nav.y\n0.01,1,2\n0.02,1\n0.03,abc,2\n0.04,3,4\n",
        ),
        // A time going back below the last frame (skipped).
        ("back.csv", b"time,a.b\n0.01,1\n0.03,2\n0.02,3\n0.04,4\n"),
        ("time-only.csv", b"time\n0.01\n0.02\n"),
        ("empty.csv", b""),
    ];
    let mut paths = vec![any_fixture("icarus-csv/rocket.csv")];
    for (name, bytes) in files {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        paths.push(path);
    }
    paths
}

#[test]
fn every_frame_writer_writes_what_the_record_path_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let all = inputs(dir);
    for input in &all[..all.len() - 2] {
        let input = input.as_path();
        let what = input.display().to_string();
        let (code, stderr, table) = parquet_frames::both_ways(dir, input);
        assert_ne!(code, 1, "{what}: {stderr}");
        if let Some(t) = table {
            assert!(
                stderr.contains(&format!("wrote {} records", t.rows())),
                "{what}"
            );
        }
        mcap_frames::both_ways(dir, input, &[]);
        db_frames::both_ways(dir, input);
        // HDF5 is written in another layout by frames: compared as read back.
        let (frames, records) = (dir.join("frames.h5"), dir.join("records.h5"));
        let (a, _) =
            frame_and_record_runs(dir, input, (s(&frames), s(&records)), &[], str::to_owned);
        if a.code != 1 {
            assert_eq!(cat_json(dir, &frames), cat_json(dir, &records), "{what}");
        }
    }
}

#[test]
fn damage_stops_a_strict_read_alike_both_ways() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for input in inputs(dir)
        .iter()
        .filter(|p| s(p).contains("damaged") || s(p).contains("back"))
    {
        for (frames, records) in [("f.parquet", "r.parquet"), ("f.mcap", "r.mcap")] {
            let (a, _) =
                frame_and_record_runs(dir, input, (frames, records), &["--strict"], str::to_owned);
            assert_eq!(a.code, 1, "{}: {}", input.display(), a.stderr);
        }
    }
}

/// Whether `input` into a file `out` goes by frames, and the records it wrote.
fn by_frames(input: &Path, options: ReadOptions, out: &str) -> Option<u64> {
    let tmp = tempfile::tempdir().unwrap();
    let output = tmp.path().join(out);
    let request = request(&output, out.rsplit('.').next().unwrap());
    let inputs = vec![input.to_path_buf()];
    let (written, _) = write_frames(&inputs, options, &request, &mut |_, _| {})?;
    Some(written.unwrap().report.records)
}

#[test]
fn intact_rows_go_by_frames_and_skipped_ones_by_records() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let input = |name: &str| dir.join(name);
    inputs(dir);
    // 24 rows of 15 signals.
    let rocket = any_fixture("icarus-csv/rocket.csv");
    assert_eq!(by_frames(&rocket, lenient(), "out.parquet"), Some(360));
    assert_eq!(
        by_frames(&input("equal.csv"), lenient(), "out.mcap"),
        Some(6)
    );
    for name in ["damaged.csv", "back.csv"] {
        assert_eq!(
            by_frames(&input(name), lenient(), "out.parquet"),
            None,
            "{name}"
        );
    }
    // No column: no records, and no frames either.
    assert_eq!(
        by_frames(&input("time-only.csv"), lenient(), "out.parquet"),
        None
    );
    assert_eq!(
        by_frames(&input("empty.csv"), ReadOptions::default(), "out.parquet"),
        None
    );
}
