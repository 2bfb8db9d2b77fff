//! Elodin DB directories through the commands: detected by content, inspected, validated
//! (the torn tick a warning), printed, sliced with their absolute times, and compared.

use serde_json::Value;

use super::db_read::db_fixture;
use crate::util::{self, run_in, s};

#[test]
fn inspect_names_the_layout_components_and_message_logs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_in(
        tmp.path(),
        &["inspect", "--format", "json", s(&db_fixture("types_v0180"))],
    )
    .expect_code(0);
    let j: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(j["format"], "elodin-db");
    assert_eq!(j["format_version"], "0.15+");
    assert_eq!(j["records"], 2248);
    assert_eq!(j["layout"]["layout"], "0.15+");
    assert_eq!(j["components"].as_array().unwrap().len(), 13);
    let dcm = j["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "probe.dcm")
        .unwrap();
    assert_eq!(
        (&dcm["type"], &dcm["shape"], &dcm["rows"]),
        (&"f64".into(), &serde_json::json!([3, 3]), &200.into())
    );
    assert_eq!(j["message_logs"][1]["name"], "log");
    assert_eq!(j["message_logs"][1]["count"], 4);
}

#[test]
fn validate_reports_the_torn_tick_as_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_in(tmp.path(), &["validate", s(&db_fixture("crash_v0180"))]).expect_code(0);
    assert!(
        out.stdout.contains("warning ELODIN_DB_TORN_TICK: torn tick at 1795820406691122 µs: a.inertia, b.inertia have a row the other 21 components lack"),
        "{}",
        out.stdout
    );
    run_in(
        tmp.path(),
        &["validate", "--strict", s(&db_fixture("crash_v0180"))],
    )
    .expect_code(1);
}

#[test]
fn cat_prints_messages_and_values_at_their_utc_times() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = db_fixture("types_v0180");
    let out = run_in(tmp.path(), &["cat", s(&dir), "--channel", "log"]).expect_code(0);
    assert!(
        out.stdout.contains("1.500000s log: payload=\"tick 150\""),
        "{}",
        out.stdout
    );
    let out = run_in(
        tmp.path(),
        &["cat", s(&dir), "--channel", "env.*", "--time-format", "utc"],
    )
    .expect_code(0);
    let first = out.stdout.lines().next().unwrap();
    assert_eq!(
        first,
        "2023-11-14T22:13:20.005Z env.temp entity env: temp=float32[] [20.0]"
    );
}

#[test]
fn slice_keeps_the_window_rows_at_their_absolute_times() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = db_fixture("types_v0180");
    let win = tmp.path().join("win.jsonl");
    run_in(
        tmp.path(),
        &[
            "slice",
            s(&dir),
            "--start",
            "1s",
            "--end",
            "1.02s",
            "-o",
            s(&win),
            "--time",
            "utc",
        ],
    )
    .expect_code(0);
    let rows = util::read_jsonl(&win);
    // 11 probe components at 1.00 s and 1.01 s, env.* at 1.005 s, a message of each log at 1 s.
    assert_eq!(rows.len(), 2 * 11 + 2 + 2);
    assert_eq!(rows[0]["time_utc"], "2023-11-14T22:13:21.000000000Z");
    let big: Vec<&Value> = rows
        .iter()
        .filter(|r| r["channel"] == "probe.big")
        .map(|r| &r["values"]["big"])
        .collect();
    assert_eq!(
        big,
        [
            &Value::from(9223372036854775908u64),
            &Value::from(9223372036854775909u64)
        ]
    );
}

#[test]
fn diff_of_a_db_and_its_sparse_copy_is_equal_and_a_changed_value_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    let a = db_fixture("ball_v0162");
    let b = tmp.path().join("b");
    util::copy_tree(&a, &b);
    run_in(tmp.path(), &["diff", s(&a), s(&b)]).expect_code(0);
    let data = b
        .join(simrec::formats::elodin::db::layout::component_id("ball.wind").to_string())
        .join("data");
    let mut bytes = std::fs::read(&data).unwrap();
    bytes[24] ^= 0x40;
    std::fs::write(&data, &bytes).unwrap();
    let out = run_in(tmp.path(), &["diff", s(&a), s(&b)]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("ball.wind"), "{}", out.stdout);
}
