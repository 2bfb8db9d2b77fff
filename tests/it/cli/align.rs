//! Time origins end to end, on real files: a rebased slice moves the epoch with it, merge
//! lines inputs up on their epochs, and an input with an epoch is merged with one without
//! only when `--align start` says how.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util;
use crate::util::{read_jsonl, run_in, s};

/// `a2.icarec`: epoch 2026-03-01T12:00:00Z (UTC), frames at 10, 20 and 30 ms; two dynamic
/// signals and one static one (`Vehicle.Mass.dry` = 1250).
fn a2() -> PathBuf {
    util::any_fixture("icarec/a2.icarec")
}

fn nanover(name: &str) -> String {
    util::any_fixture("nanover-legacy")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn inspect(dir: &Path, path: &str) -> Value {
    run_in(dir, &["inspect", path, "--format", "json"])
        .expect_code(0)
        .json_lines()
        .remove(0)
}

/// (time_ns, channel, frame) of each record.
fn timeline(records: &[Value]) -> Vec<(i64, String, Option<i64>)> {
    records
        .iter()
        .map(|r| {
            (
                r["time_ns"].as_i64().unwrap(),
                r["channel"].as_str().unwrap().to_string(),
                r["frame"].as_i64(),
            )
        })
        .collect()
}

#[test]
fn a_rebased_slice_moves_the_epoch_and_merge_puts_it_back_in_place() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    run_in(
        dir,
        &[
            "slice",
            s(&a2()),
            "--start",
            "0.02",
            "--rebase",
            "-o",
            "late.icarec",
        ],
    )
    .expect_code(0);
    let late = inspect(dir, "late.icarec");
    assert_eq!(late["origin"]["epoch"], "2026-03-01T12:00:00.02Z");
    assert_eq!(late["origin"]["system"], "UTC");
    assert_eq!(late["start_ns"], 0);
    assert_eq!(late["end_ns"], 10_000_000);
    assert_eq!(late["records"], 5);
    run_in(
        dir,
        &["slice", s(&a2()), "--end", "0.02", "-o", "early.icarec"],
    )
    .expect_code(0);

    // The late part's frames land back on 20 and 30 ms of the early part's time line.
    let merged = run_in(
        dir,
        &[
            "merge",
            "early.icarec",
            "late.icarec",
            "-o",
            "merged.jsonl",
            "--time",
            "utc",
        ],
    )
    .expect_code(0);
    assert_eq!(merged.stderr, "wrote 7 records to merged.jsonl\n");
    let records = read_jsonl(&dir.join("merged.jsonl"));
    assert_eq!(records[3]["time_utc"], "2026-03-01T12:00:00.020000000Z");
    let line = timeline(&records);
    let ch = |t: i64, c: &str, f: i64| (t, c.to_string(), Some(f));
    assert_eq!(
        line,
        [
            ch(10_000_000, "Vehicle.Mass.dry", 0),
            ch(10_000_000, "Vehicle.Nav.position", 0),
            ch(10_000_000, "Vehicle.Aero.alpha", 0),
            ch(20_000_000, "Vehicle.Nav.position", 1),
            ch(20_000_000, "Vehicle.Aero.alpha", 1),
            ch(30_000_000, "Vehicle.Nav.position", 2),
            ch(30_000_000, "Vehicle.Aero.alpha", 2),
        ]
    );

    // Written as .icarec, the merged recording keeps the first input's epoch as given.
    run_in(
        dir,
        &[
            "merge",
            "early.icarec",
            "late.icarec",
            "-o",
            "merged.icarec",
        ],
    )
    .expect_code(0);
    let m = inspect(dir, "merged.icarec");
    assert_eq!(m["origin"]["epoch"], "2026-03-01T12:00:00Z");
    assert_eq!(m["start_ns"], 10_000_000);
    assert_eq!(m["end_ns"], 30_000_000);
}

#[test]
fn a_recording_with_an_epoch_merges_with_one_without_only_when_aligned_on_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (traj, state) = (nanover("small.traj"), nanover("small.state"));
    let refused =
        run_in(dir, &["merge", s(&a2()), &traj, &state, "-o", "out.jsonl"]).expect_code(2);
    assert!(
        refused.stderr.contains(&format!(
            "{} has an absolute start time and {traj} has none, so they cannot be lined up in \
             time; --align start takes each input's time zero as the same instant",
            a2().display()
        )),
        "{}",
        refused.stderr
    );
    assert!(!dir.join("out.jsonl").exists());

    run_in(
        dir,
        &[
            "merge",
            s(&a2()),
            &traj,
            &state,
            "-o",
            "out.jsonl",
            "--align",
            "start",
        ],
    )
    .expect_code(0);
    let records = read_jsonl(&dir.join("out.jsonl"));
    // small.traj's first frame (8.445 ms) comes before a2's (10 ms): both time zeros are
    // the same instant, so neither input moved.
    let line = timeline(&records);
    assert_eq!(line[0], (8_445_000, "frame".to_string(), Some(2)));
    let a2_first = line.iter().find(|r| r.1.starts_with("Vehicle.")).unwrap();
    assert_eq!(a2_first.0, 10_000_000);
    assert_eq!(line.last().unwrap().0, 5_380_761_000);

    // The merged recording has no epoch: its zero is each input's own.
    run_in(
        dir,
        &[
            "merge",
            s(&a2()),
            &traj,
            &state,
            "-o",
            "out.icarec",
            "--align",
            "start",
        ],
    )
    .expect_code(3);
    assert_eq!(inspect(dir, "out.icarec")["origin"], Value::Null);
}
