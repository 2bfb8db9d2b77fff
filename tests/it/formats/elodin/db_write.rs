//! `convert --to elodin-db` from every family, read back with simrec's DB reader: each
//! component `<entity>.<key>` holds the source's numeric values of that key, at the source's
//! times, row for row; event channels are message logs of as many messages as records.
//! `scripts/interop.sh` opens the same outputs with Elodin 0.18 itself (dbcheck), which the
//! test suite cannot run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use crate::util::*;

/// Rows per component name: (time ns relative to the first, value).
type Rows = BTreeMap<String, Vec<(i64, Value)>>;

/// The nested lengths of a JSON value (`[]` for a scalar), `None` for what is no number.
fn numeric_shape(v: &Value) -> Option<Vec<usize>> {
    match v {
        Value::Number(_) | Value::Bool(_) => Some(Vec::new()),
        Value::Array(items) => {
            let first = numeric_shape(items.first()?)?;
            items
                .iter()
                .all(|i| numeric_shape(i).as_ref() == Some(&first))
                .then(|| [vec![items.len()], first].concat())
        }
        _ => None,
    }
}

/// The writer's name rule, on `cat --format json` records.
fn component(record: &Value, key: &str) -> String {
    let channel = record["channel"].as_str().unwrap();
    match &record["entity"] {
        Value::String(e) => format!("{e}.{key}"),
        Value::Number(id) => format!("{channel}.{id}.{key}"),
        _ if key == channel => key.to_string(),
        _ => format!("{channel}.{key}"),
    }
}

/// What the DB should hold of `records`: each key's values of the shape of its first one
/// (Elodin's rows have a fixed size), and the record count of each event channel.
fn expected(records: &[Value], events: &BTreeSet<String>) -> (Rows, BTreeMap<String, usize>) {
    let mut rows = Rows::new();
    let mut shapes: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut msgs = BTreeMap::new();
    for r in records {
        let t = r["time_ns"].as_i64().unwrap();
        let channel = r["channel"].as_str().unwrap();
        if events.contains(channel) {
            *msgs.entry(channel.to_string()).or_default() += 1;
        }
        for (key, v) in r["values"].as_object().unwrap() {
            let Some(shape) = numeric_shape(v) else {
                continue;
            };
            let name = component(r, key);
            if shape.contains(&0) || *shapes.entry(name.clone()).or_insert(shape.clone()) != shape {
                continue;
            }
            rows.entry(name).or_default().push((t, v.clone()));
        }
    }
    (rows, msgs)
}

/// Converts `fixture` into a DB, reads both back with `cat`, and compares.
fn round_trip(fixture: &str, events: &[&str], code: i32) -> (Rows, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.keep();
    let out = dir.join("out");
    let source = any_fixture(fixture);
    run_in(
        &dir,
        &["convert", s(&source), "-o", s(&out), "--to", "elodin-db"],
    )
    .expect_code(code);
    run_in(&dir, &["validate", s(&out)]).expect_code(0);
    let events: BTreeSet<String> = events.iter().map(|e| e.to_string()).collect();
    let (want, want_msgs) = expected(&cat_json(&dir, &source), &events);
    let read = cat_json(&dir, &out);
    let mut got = Rows::new();
    let mut got_msgs: BTreeMap<String, usize> = BTreeMap::new();
    for r in &read {
        let channel = r["channel"].as_str().unwrap().to_string();
        let t = r["time_ns"].as_i64().unwrap();
        if events.contains(&channel) {
            *got_msgs.entry(channel).or_default() += 1;
            continue;
        }
        let values = r["values"].as_object().unwrap();
        assert_eq!(values.len(), 1, "{r}");
        let v = values.values().next().unwrap().clone();
        // A NaN prints as null, and the source's NaN is no number to `expected`.
        if !v.is_null() {
            got.entry(channel).or_default().push((t, v));
        }
    }
    // Times count from the first row the DB holds.
    let first = want.values().flatten().map(|(t, _)| *t).min().unwrap();
    let want: Rows = want
        .into_iter()
        .map(|(k, rows)| (k, rows.into_iter().map(|(t, v)| (t - first, v)).collect()))
        .collect();
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{fixture}: components"
    );
    for (name, rows) in &want {
        assert_eq!(&got[name], rows, "{fixture}: {name}");
    }
    assert_eq!(got_msgs, want_msgs, "{fixture}: messages");
    (got, out)
}

#[test]
fn icarus_signals_become_components_with_their_times_and_epoch() {
    let (rows, out) = round_trip("icarec/a2.icarec", &[], 0);
    assert_eq!(
        rows.keys().collect::<Vec<_>>(),
        [
            "Vehicle.Aero.alpha",
            "Vehicle.Mass.dry",
            "Vehicle.Nav.position"
        ]
    );
    assert_eq!(rows["Vehicle.Nav.position"].len(), 3);
    // The source's epoch (12:00:00) plus its first record's 10 ms.
    let info = run(&["inspect", "--format", "json", s(&out)]).expect_code(0);
    let info = &info.json_lines()[0];
    assert_eq!(info["origin"]["epoch"], "2026-03-01T12:00:00.010000Z");
    assert_eq!(info["components"].as_array().map(Vec::len), Some(3));
    round_trip("icarus-hdf5/small.h5", &[], 0);
    round_trip("icarus-csv/rocket.csv", &[], 0);
}

#[test]
fn xrec_and_3es_events_are_message_logs_and_their_numbers_components() {
    let xrec = [
        "xrec.Chapter",
        "xrec.ClientEnter",
        "xrec.Transform",
        "Custom.Score",
        "xrec.SceneGraph",
    ];
    let (rows, _) = round_trip("xrec/session.xrec", &xrec, 0);
    assert!(rows.contains_key("cube.position"), "{:?}", rows.keys());
    let tes: Vec<String> =
        inspect_counts(Path::new("."), &[s(&any_fixture("tes/small_plain.3es"))])
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(c, _)| c)
            .collect();
    let tes: Vec<&str> = tes.iter().map(String::as_str).collect();
    // 3es MultiShape children vary in count from record to record: those rows are lost.
    round_trip("tes/small_plain.3es", &tes, 3);
}

#[test]
fn a_db_written_anew_holds_the_same_components_values_and_messages() {
    let (rows, out) = round_trip("elodin-db/types_v0180", &["log", "event"], 0);
    assert_eq!(rows.len(), 13);
    let source = any_fixture("elodin-db/types_v0180");
    let dir = out.parent().unwrap();
    // Messages come back byte for byte, component metadata is kept.
    let messages = |p: &Path| -> Vec<Value> {
        cat_json(dir, p)
            .into_iter()
            .filter(|r| r["channel"] == "event" || r["channel"] == "log")
            .map(|r| r["values"].clone())
            .collect()
    };
    assert_eq!(messages(&out), messages(&source));
    let meta = |p: &Path| {
        let info = run(&["inspect", "--format", "json", s(p)]).expect_code(0);
        info.json_lines()[0]["origin"].clone()
    };
    assert_eq!(meta(&out), meta(&source));
}

#[test]
fn replays_and_nanover_go_through_the_family_model() {
    // A replay's entities are named by its metadata (`Ball`), its ticks below the µs are
    // rounded down and said so (exit 3).
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ball");
    let r = run(&[
        "convert",
        s(&any_fixture("elodin/ball_1200")),
        "-o",
        s(&out),
        "--to",
        "elodin-db",
        "--epoch",
        "2026-01-01T00:00:00Z",
    ])
    .expect_code(3);
    assert!(
        r.stderr
            .contains("below the microsecond: Elodin stamps rows in whole µs"),
        "{}",
        r.stderr
    );
    let counts = inspect_counts(tmp.path(), &[s(&out)]);
    assert_eq!(counts.get("Ball.world_pos"), Some(&1201), "{counts:?}");
    // NanoVer particles are bodies: `particle I NAME.world_pos`, one row per frame.
    let out = tmp.path().join("nano");
    run(&[
        "convert",
        s(&any_fixture("nanover-zip/small.nanover.zip")),
        "-o",
        s(&out),
        "--to",
        "elodin-db",
        "--epoch",
        "2026-01-01T00:00:00Z",
    ])
    .expect_code(3);
    let counts = inspect_counts(tmp.path(), &[s(&out)]);
    let particles: Vec<_> = counts
        .iter()
        .filter(|(k, _)| k.starts_with("particle ") && k.ends_with(".world_pos"))
        .collect();
    // A particle has a row per frame from the first that holds it on.
    assert_eq!(particles.len(), 32, "{counts:?}");
    assert_eq!(counts.get("particle 0.world_pos"), Some(&75), "{counts:?}");
}

#[test]
fn a_recording_without_an_epoch_is_written_from_now_and_said_so() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    let r = run(&[
        "convert",
        s(&any_fixture("icarus-csv/rocket.csv")),
        "-o",
        s(&out),
        "--to",
        "elodin-db",
    ])
    .expect_code(0);
    assert!(r.stderr.contains("no absolute start"), "{}", r.stderr);
    // Files are compact: each log ends at its committed length.
    for e in std::fs::read_dir(&out).unwrap() {
        let d = e.unwrap().path();
        for log in ["index", "data"] {
            let p = d.join(log);
            if let Ok(bytes) = std::fs::read(&p) {
                let committed = u64::from_le_bytes(bytes[..8].try_into().unwrap());
                assert_eq!(committed, bytes.len() as u64, "{}", p.display());
            }
        }
    }
}
