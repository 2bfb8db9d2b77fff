//! Elodin DB directories through the commands: detected by content, inspected, validated
//! (the torn tick a warning), printed, sliced with their absolute times, merged end to end
//! and side by side, compared and plotted; `elodin-db export` directories as their DB.

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

/// `inspect --format json` of `path`, run in `dir`.
fn inspect_json(dir: &std::path::Path, path: &std::path::Path) -> Value {
    let out = run_in(dir, &["inspect", "--format", "json", s(path)]).expect_code(0);
    serde_json::from_str(&out.stdout).unwrap()
}

#[test]
fn merge_end_to_end_of_two_slices_is_the_db_again() {
    let tmp = tempfile::tempdir().unwrap();
    let db = db_fixture("three_body_v0180");
    let (first, second, whole) = (
        tmp.path().join("first"),
        tmp.path().join("second"),
        tmp.path().join("whole"),
    );
    let to_db = ["--to", "elodin-db"];
    let out = run_in(
        tmp.path(),
        &[
            &["slice", s(&db), "--end", "1s", "-o", s(&first)][..],
            &to_db,
        ]
        .concat(),
    )
    .expect_code(0);
    assert!(out.stderr.contains("wrote 2277 records"), "{}", out.stderr);
    let out = run_in(
        tmp.path(),
        &[
            &["slice", s(&db), "--start", "1s", "-o", s(&second)][..],
            &to_db,
        ]
        .concat(),
    )
    .expect_code(0);
    assert!(out.stderr.contains("wrote 4646 records"), "{}", out.stderr);
    let out = run_in(
        tmp.path(),
        &[
            &["merge", s(&first), s(&second), "-o", s(&whole)][..],
            &to_db,
        ]
        .concat(),
    )
    .expect_code(0);
    assert!(out.stderr.contains("wrote 6923 records"), "{}", out.stderr);
    // The second half's first row is the first at or past 1 s on the DB's axis (143 µs
    // past it), not a zero of its own.
    assert_eq!(
        inspect_json(tmp.path(), &second)["origin"]["epoch"],
        "2026-11-27T22:57:41.697892Z"
    );
    let out = run_in(tmp.path(), &["diff", s(&db), s(&whole)]).expect_code(0);
    assert!(out.stdout.starts_with("equal"), "{}", out.stdout);
}

#[test]
fn merge_side_by_side_keeps_each_db_at_its_own_instants() {
    let tmp = tempfile::tempdir().unwrap();
    let both = tmp.path().join("both");
    let (ball, three) = (db_fixture("ball_v0162"), db_fixture("three_body_v0180"));
    run_in(
        tmp.path(),
        &[
            "merge",
            s(&ball),
            s(&three),
            "-o",
            s(&both),
            "--to",
            "elodin-db",
        ],
    )
    .expect_code(0);
    let j = inspect_json(tmp.path(), &both);
    // 9 + 23 components of 301 rows; the two `Globals.*` of each are one channel.
    assert_eq!(j["records"], 32 * 301);
    assert_eq!(j["channels"].as_array().unwrap().len(), 30);
    assert_eq!(j["origin"]["epoch"], "2026-11-27T22:57:40.697749Z");
    let out = run_in(
        tmp.path(),
        &[
            "cat",
            s(&both),
            "--channel",
            "ball.wind",
            "--time-format",
            "utc",
        ],
    )
    .expect_code(0);
    assert!(
        out.stdout
            .starts_with("2026-11-27T22:58:02.426418Z ball.wind entity ball: wind=float64[3]"),
        "{}",
        out.stdout
    );
    let out = run_in(tmp.path(), &["cat", s(&both), "--channel", "Globals.tick"]).expect_code(0);
    assert_eq!(out.stdout.lines().count(), 2 * 301);
}

#[test]
fn plot_draws_db_component_elements() {
    let tmp = tempfile::tempdir().unwrap();
    let svg = tmp.path().join("p.svg");
    let out = run_in(
        tmp.path(),
        &[
            "plot",
            s(&db_fixture("ball_v0162")),
            "--key",
            "world_pos[6]",
            "--key",
            "tick",
            "-o",
            s(&svg),
        ],
    )
    .expect_code(0);
    assert!(
        out.stderr.contains(
            "2 panel(s), 889 pixel columns: ball.world_pos[6] (301 samples, 301 points), \
             Globals.tick (301 samples, 301 points)"
        ),
        "{}",
        out.stderr
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    roxmltree::Document::parse(&text).unwrap();
    let png = tmp.path().join("q.png");
    let out = run_in(
        tmp.path(),
        &[
            "plot",
            s(&db_fixture("types_v0180")),
            "--key",
            "dcm[1,1]",
            "-o",
            s(&png),
        ],
    )
    .expect_code(0);
    assert!(
        out.stderr.contains("probe.dcm[1,1] (200 samples"),
        "{}",
        out.stderr
    );
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
}

#[test]
fn an_export_directory_is_its_db_to_the_commands() {
    let tmp = tempfile::tempdir().unwrap();
    let db = db_fixture("ball_v0162");
    for kind in ["parquet", "arrow", "csv"] {
        let export = db_fixture("exports").join(format!("ball_v0162_{kind}"));
        let j = inspect_json(tmp.path(), &export);
        assert_eq!(
            (&j["format"], &j["records"]),
            (&"elodin-db-export".into(), &2709.into())
        );
        let out = run_in(tmp.path(), &["validate", s(&export)]).expect_code(0);
        assert!(
            out.stdout.contains(": ok (0 errors, 0 warnings, 0 info)"),
            "{}",
            out.stdout
        );
        let out = run_in(tmp.path(), &["diff", s(&db), s(&export)]).expect_code(0);
        assert!(out.stdout.starts_with("equal"), "{kind}: {}", out.stdout);
    }
    // The migration back: an export converted to a DB is the DB it came from.
    let back = tmp.path().join("back");
    let arrow = db_fixture("exports/ball_v0162_arrow");
    run_in(
        tmp.path(),
        &["convert", s(&arrow), "-o", s(&back), "--to", "elodin-db"],
    )
    .expect_code(0);
    let out = run_in(tmp.path(), &["diff", s(&db), s(&back)]).expect_code(0);
    assert!(out.stdout.starts_with("equal"), "{}", out.stdout);
    // Not written: `--to elodin-db-export` says what to write instead.
    let out = run_in(
        tmp.path(),
        &[
            "convert",
            s(&arrow),
            "-o",
            s(&tmp.path().join("x")),
            "--to",
            "elodin-db-export",
        ],
    );
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("does not write them"), "{}", out.stderr);
}
