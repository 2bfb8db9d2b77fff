//! Recordings of different families converted together onto one timeline: an `.icarec`
//! run (UTC) and an XREC session (Unix time, UTC without leap seconds) line up on their
//! absolute starts, in one pass with the channel and time selections.

use serde_json::Value;

use crate::util;
use crate::util::{any_fixture, run_in, s};

/// a2.icarec starts at 2026-03-01T12:00:00Z, session.xrec at 2023-11-14T22:13:20Z.
const APART_NS: i64 = 1_772_366_400_000_000_000 - 1_700_000_000_000_000_000;

fn convert(extra: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("both.jsonl");
    let (icarec, xrec) = (
        any_fixture("icarec/a2.icarec"),
        any_fixture("xrec/session.xrec"),
    );
    // In absolute times too, or the shared absolute start would be lost (exit 3).
    let mut args = vec![
        "convert",
        s(&icarec),
        s(&xrec),
        "-o",
        s(&out),
        "-q",
        "--time",
        "utc",
    ];
    args.extend(extra);
    run_in(dir.path(), &args).expect_code(0);
    util::read_jsonl(&out)
}

#[test]
fn an_icarec_run_and_an_xrec_session_share_one_timeline() {
    let records = convert(&[]);
    assert_eq!(records.len(), 7 + 14);
    let times = |channel: &str| -> Vec<i64> {
        records
            .iter()
            .filter(|r| util::channel(r) == channel)
            .map(util::time_ns)
            .collect()
    };
    // Time zero is the earlier start (the session's); the run's frames keep their times
    // after its own start.
    assert_eq!(times("xrec.Chapter"), vec![0, 2_000_000_000, 4_000_000_000]);
    assert_eq!(
        times("Vehicle.Nav.position"),
        vec![
            APART_NS + 10_000_000,
            APART_NS + 20_000_000,
            APART_NS + 30_000_000
        ]
    );
    assert_eq!(records[0]["time_utc"], "2023-11-14T22:13:20.000000000Z");
    assert_eq!(records[14]["time_utc"], "2026-03-01T12:00:00.010000000Z");
    // The run, 2.3 years after the session began, comes after all of it.
    assert!(records[14..]
        .iter()
        .all(|r| util::channel(r).starts_with("Vehicle.")));
}

#[test]
fn selections_apply_to_every_input_in_the_same_pass() {
    let records = convert(&["--channel", "Vehicle.*", "--channel", "xrec.Transform"]);
    let channels: std::collections::BTreeSet<&str> = records.iter().map(util::channel).collect();
    assert_eq!(
        channels.into_iter().collect::<Vec<_>>(),
        vec![
            "Vehicle.Aero.alpha",
            "Vehicle.Mass.dry",
            "Vehicle.Nav.position",
            "xrec.Transform"
        ]
    );
    // A window on the shared timeline: the session's first two seconds.
    let records = convert(&["--start", "0.5s", "--end", "2s"]);
    let times: Vec<i64> = records.iter().map(util::time_ns).collect();
    assert_eq!(times.len(), 5, "{times:?}");
    assert!(times
        .iter()
        .all(|t| (500_000_000..2_000_000_000).contains(t)));
}
