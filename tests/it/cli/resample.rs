//! `--resample DT`: ticks at the multiples of DT from the first at or after the first record
//! to the first at or after the last; signals hold their latest values at each tick, events
//! move to the next tick; what moved is counted.

use serde_json::{json, Value};

use crate::util;
use crate::util::{any_fixture, run_in, s};

fn convert(source: &str, out: &str, dt: &str) -> (tempfile::TempDir, Value) {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join(out);
    let run = run_in(
        dir.path(),
        &[
            "convert",
            s(&any_fixture(source)),
            s(&output),
            "--resample",
            dt,
            "--format",
            "json",
        ],
    )
    .expect_code(3);
    (dir, serde_json::from_str(run.stdout.trim()).unwrap())
}

#[test]
fn signals_hold_their_latest_value_at_each_tick() {
    let (dir, report) = convert("icarec/a2.icarec", "out.jsonl", "25ms");
    let records = util::read_jsonl(&dir.path().join("out.jsonl"));
    let at = |t: i64, channel: &str| -> Value {
        records
            .iter()
            .find(|r| util::time_ns(r) == t && util::channel(r) == channel)
            .unwrap()["values"]
            .clone()
    };
    // The run's frames are at 10, 20 and 30 ms: ticks 25 and 50 ms.
    assert_eq!(records.len(), 6);
    assert_eq!(
        at(25_000_000, "Vehicle.Nav.position"),
        json!({"position": [1.5, 2.5, 3.5]})
    );
    assert_eq!(
        at(50_000_000, "Vehicle.Nav.position"),
        json!({"position": [2.0, 3.0, 4.0]})
    );
    assert_eq!(at(50_000_000, "Vehicle.Mass.dry"), json!({"dry": 1250.0}));
    let moved: Vec<(&str, u64)> = report["lost"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["channel"].as_str().unwrap(),
                r["records"].as_u64().unwrap(),
            )
        })
        .collect();
    // (And JSON Lines of relative times have no place for the run's absolute start.)
    assert_eq!(
        moved,
        [
            ("(recording)", 1),
            ("Vehicle.Aero.alpha", 3),
            ("Vehicle.Mass.dry", 1),
            ("Vehicle.Nav.position", 3)
        ]
    );
}

#[test]
fn events_move_to_the_next_tick_once() {
    let (dir, _) = convert("xrec/session.xrec", "out.jsonl", "1s");
    let records = util::read_jsonl(&dir.path().join("out.jsonl"));
    assert_eq!(records.len(), 14, "each event once");
    let score = records
        .iter()
        .find(|r| util::channel(r) == "Custom.Score")
        .unwrap();
    assert_eq!(util::time_ns(score), 1_000_000_000);
    assert!(records
        .iter()
        .all(|r| util::time_ns(r) % 1_000_000_000 == 0));
}

#[test]
fn an_irregular_recording_becomes_an_elodin_replay_of_that_step() {
    let (dir, report) = convert("nanover-legacy/small.traj", "out/", "100ms");
    let reasons: Vec<&str> = report["lost"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["reason"].as_str().unwrap())
        .collect();
    assert!(reasons.iter().any(|r| r.starts_with("resampled")));
    assert!(
        !reasons.iter().any(|r| r.contains("not on the tick grid")),
        "{reasons:?}"
    );
    let out = dir.path().join("out");
    let run = run_in(dir.path(), &["inspect", "--format", "json", s(&out)]).expect_code(0);
    let facts: Value = serde_json::from_str(run.stdout.lines().next().unwrap()).unwrap();
    // 8.445 ms to 5.380761 s: ticks 0.1 s to 5.4 s, 53 steps of 0.1 s (an Elodin replay's
    // ticks count from 0).
    assert_eq!(facts["start_ns"], 0);
    assert_eq!(facts["end_ns"], 5_300_000_000_i64);
}
