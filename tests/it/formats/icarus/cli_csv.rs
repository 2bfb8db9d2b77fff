//! Icarus CSV end to end through the built binary: inspect, validate (each §C3 rule with its
//! code, line and exit code), and convert (the Icarus-style round trip byte for byte, exit 3
//! for 17-digit doubles, exit 0 when every value survives, standard output, zero frames).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util;
use crate::util::{parse_json_lines, run_in, s, Run};

fn fixture() -> PathBuf {
    util::any_fixture("icarus-csv/rocket.csv")
}

/// A temporary directory holding `name` with `text`.
fn file(name: &str, text: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn validate_json(dir: &Path, name: &str) -> (Run, Value) {
    let run = run_in(dir, &["validate", "--format", "json", name]);
    let json = parse_json_lines(&run.stdout).remove(0);
    (run, json)
}

#[test]
fn inspect_shows_the_columns_rows_and_time_steps() {
    let dir = fixture().parent().unwrap().to_path_buf();
    let run = run_in(&dir, &["inspect", "--format", "json", "rocket.csv"]).expect_code(0);
    let json = parse_json_lines(&run.stdout).remove(0);
    assert_eq!(json["format"], "icarus-csv");
    assert_eq!(json["origin"], Value::Null, "MET without an epoch");
    assert_eq!(json["records"], 360);
    assert_eq!(json["start_ns"], 10_000_000);
    assert_eq!(json["end_ns"], 240_000_000);
    assert_eq!(json["channels"].as_array().unwrap().len(), 15);
    assert_eq!(json["channels"][14]["name"], "Rocket.Sensors.accel_noise");
    assert_eq!(json["channels"][14]["records"], 24);
    assert_eq!(json["columns"]["count"], 15);
    assert_eq!(json["rows"], serde_json::json!({"rows": 24, "frames": 24}));
    assert_eq!(json["time_step"]["usual_ns"], 10_000_000);
    assert_eq!(json["time_step"]["irregular"], 0);
    let run = run_in(&dir, &["inspect", "rocket.csv"]).expect_code(0);
    assert!(
        run.stdout.contains("time + 15 signal columns:"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "usual 0.01 s, min 0.01 s, mean 0.01 s, max 0.01 s over 23 steps; 0 irregular"
        ),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("│ origin      ┆ MET"), "{}", run.stdout);
}

/// A file, validate's exit code, and its one finding: code, offset, record, message.
type Case = (&'static [u8], i32, &'static str, u64, u64, &'static str);

#[test]
fn validate_reports_each_rule_with_code_line_and_exit_code() {
    let cases: [Case; 5] = [
        (
            b"time,a,b\n0.01,1,2\n0.02,1\n",
            1,
            "ICARUS_CSV_COLUMNS",
            18,
            1,
            "line 3: 2 cells where the header has 3 (time and 2 signals); row skipped",
        ),
        (
            b"time,a,b\n0.01,1,abc\n",
            1,
            "ICARUS_CSV_VALUE",
            16,
            0,
            "line 2: column 3 (b): `abc` is not a number; read as NaN",
        ),
        (
            b"time,a\n0.01,1\n,2\n",
            1,
            "ICARUS_CSV_TIME",
            14,
            1,
            "line 3: the time cell is empty; row skipped",
        ),
        (
            b"time,a\n0.01,1\n0.01,2\n",
            0,
            "ICARUS_CSV_TIME_EQUAL",
            14,
            1,
            "line 3: the time 0.01 s is the previous row's",
        ),
        (
            b"time,a\n0.01,1\n0.02,2\n0.015,3\n",
            1,
            "ICARUS_CSV_TIME",
            21,
            2,
            "line 4: the time 0.015 s is lower than the previous row's 0.02",
        ),
    ];
    for (text, code, rule, offset, record, message) in cases {
        let (dir, _) = file("run.csv", text);
        let (run, json) = validate_json(dir.path(), "run.csv");
        let run = run.expect_code(code);
        assert_eq!(json["ok"], code == 0, "{}", run.stdout);
        let f = &json["findings"][0];
        assert_eq!(f["code"], rule);
        assert_eq!(f["offset"], offset, "{rule}");
        assert_eq!(f["record"], record, "{rule}");
        assert_eq!(f["message"], message);
        assert_eq!(json["findings"].as_array().unwrap().len(), 1);
        // The text report names the code, the byte and the row.
        let text = run_in(dir.path(), &["validate", "run.csv"]).expect_code(code);
        assert!(
            text.stdout.contains(&format!(
                "{rule} at byte {offset}, record {record}: {message}"
            )),
            "{}",
            text.stdout
        );
    }
}

#[test]
fn validate_of_a_header_without_time_and_of_the_zero_byte_file() {
    let (dir, _) = file("run.csv", b"t,a\n0,1\n");
    let (run, json) = validate_json(dir.path(), "run.csv");
    run.expect_code(1);
    assert_eq!(json["findings"][0]["code"], "ICARUS_CSV_HEADER");
    let (dir, _) = file("empty.csv", b"");
    let (run, json) = validate_json(dir.path(), "empty.csv");
    run.expect_code(0);
    assert_eq!(json["errors"], 0);
    let run = run_in(dir.path(), &["inspect", "--format", "json", "empty.csv"]).expect_code(0);
    let json = parse_json_lines(&run.stdout).remove(0);
    assert_eq!(json["records"], 0);
    assert_eq!(json["rows"]["rows"], 0);
}

#[test]
fn validate_deep_counts_nan_per_column() {
    let dir = fixture().parent().unwrap().to_path_buf();
    let run = run_in(
        &dir,
        &["validate", "--deep", "--format", "json", "rocket.csv"],
    )
    .expect_code(0);
    let json = parse_json_lines(&run.stdout).remove(0);
    let f = &json["findings"][0];
    assert_eq!(f["code"], "ICARUS_CSV_NONFINITE");
    assert_eq!(f["severity"], "warning");
    assert_eq!(
        f["message"],
        "column Rocket.Sensors.baro_alt: 2 NaN and 0 infinite values; the first in row 0, at t = 0.01 s"
    );
    let plain = run_in(&dir, &["validate", "--format", "json", "rocket.csv"]).expect_code(0);
    assert_eq!(parse_json_lines(&plain.stdout)[0]["warnings"], 0);
}

#[test]
fn an_icarus_style_file_converts_to_itself_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_in(dir.path(), &["convert", s(&fixture()), "-o", "copy.csv"]).expect_code(0);
    assert_eq!(run.stderr, "wrote 360 records to copy.csv\n");
    assert_eq!(run.stdout, "");
    assert_eq!(
        std::fs::read(dir.path().join("copy.csv")).unwrap(),
        std::fs::read(fixture()).unwrap()
    );
    // To standard output, by name.
    let run = run_in(
        dir.path(),
        &["convert", s(&fixture()), "-o", "-", "--to", "icarus-csv"],
    )
    .expect_code(0);
    assert_eq!(run.raw_stdout, std::fs::read(fixture()).unwrap());
}

#[test]
fn seventeen_digit_doubles_exit_3_and_name_the_loss() {
    let (dir, _) = file(
        "pandas.csv",
        b"time,Nav.x,Nav.y\n0.1,0.30000000000000004,2\n0.2,0.6666666666666666,2\n0.30000000000000004,1,2\n",
    );
    let run = run_in(dir.path(), &["convert", "pandas.csv", "-o", "icarus.csv"]).expect_code(3);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("icarus.csv")).unwrap(),
        "time,Nav.x,Nav.y\n0.1,0.3,2\n0.2,0.666666666666667,2\n0.3,1,2\n"
    );
    assert!(
        run.stderr
            .starts_with("wrote 6 records to icarus.csv\nsome values could not be kept:\n"),
        "{}",
        run.stderr
    );
    assert!(run
        .stderr
        .contains("double needs more than 15 significant digits (%.15g)"));
    assert!(run.stderr.contains("Nav.x"));
    // Times are whole nanoseconds once read (round(t × 1e9), §C2): 0.30000000000000004 s is
    // 300 000 000 ns already, which %.15g prints exactly.
    assert!(!run.stderr.contains("time in seconds"));
    // The dry run says the same without writing.
    let run = run_in(
        dir.path(),
        &["convert", "pandas.csv", "-o", "other.csv", "--dry-run"],
    )
    .expect_code(3);
    assert!(
        run.stdout
            .starts_with("6 records would be written as icarus-csv\n"),
        "{}",
        run.stdout
    );
    assert!(!dir.path().join("other.csv").exists());
}

#[test]
fn zero_frames_write_a_header_with_a_warning_or_nothing_in_strict_style() {
    let (dir, _) = file("none.csv", b"time,A.x,A.y\n");
    let run = run_in(dir.path(), &["convert", "none.csv", "-o", "out.csv"]).expect_code(0);
    assert_eq!(
        run.stderr,
        "warning: no frames: wrote the header line alone (Icarus writes an empty file; \
         --csv-style icarus-strict does too)\nwrote 0 records to out.csv\n"
    );
    assert_eq!(
        std::fs::read(dir.path().join("out.csv")).unwrap(),
        b"time,A.x,A.y\n"
    );
    run_in(
        dir.path(),
        &[
            "convert",
            "none.csv",
            "-o",
            "strict.csv",
            "--csv-style",
            "icarus-strict",
        ],
    )
    .expect_code(0);
    assert_eq!(std::fs::read(dir.path().join("strict.csv")).unwrap(), b"");
    let run = run_in(
        dir.path(),
        &["convert", "none.csv", "-o", "x.csv", "--csv-style", "excel"],
    );
    run.expect_code(2);
}

#[test]
fn a_csv_converts_to_json_lines_with_entities_and_frames() {
    let dir = tempfile::tempdir().unwrap();
    // JSON has no NaN: the barometer's two nan are JSON Lines' loss (exit 3), not CSV's.
    let run = run_in(dir.path(), &["convert", s(&fixture()), "-o", "out.jsonl"]).expect_code(3);
    assert!(
        run.stderr.contains("non-finite float written as null"),
        "{}",
        run.stderr
    );
    let lines = util::read_jsonl(&dir.path().join("out.jsonl"));
    assert_eq!(lines.len(), 360);
    assert_eq!(
        lines[17],
        serde_json::json!({
            "time_ns": 20_000_000,
            "channel": "Rocket.Vehicle.position.z",
            "frame": 1,
            "entity": "Rocket.Vehicle.position",
            "values": {"z": 0.00425819700576019}
        })
    );
}

#[test]
fn a_damaged_csv_is_refused_by_convert_with_the_finding() {
    let (dir, _) = file("bad.csv", b"time,a\n0.01,1\n0.02,x\n");
    let run = run_in(
        dir.path(),
        &["convert", "--strict", "bad.csv", "-o", "out.csv"],
    )
    .expect_code(1);
    assert!(
        run.stderr.contains(
            "ICARUS_CSV_VALUE at byte 19, record 1: line 3: column 2 (a): `x` is not a number"
        ),
        "{}",
        run.stderr
    );
    assert!(!dir.path().join("out.csv").exists(), "nothing half-written");
}

#[test]
fn a_slice_holds_exactly_the_frames_of_its_window() {
    let dir = tempfile::tempdir().unwrap();
    let source = std::fs::read_to_string(fixture()).unwrap();
    let lines: Vec<&str> = source.lines().collect();
    // Frames 2 and 3 (t = 0.03, 0.04) on the recording's own axis: the fixture's own lines,
    // without a row for the window's opening context.
    let run = run_in(
        dir.path(),
        &[
            "slice",
            s(&fixture()),
            "--frames",
            "2..4",
            "-o",
            "-",
            "--to",
            "icarus-csv",
        ],
    )
    .expect_code(0);
    assert_eq!(
        run.stdout,
        format!("{}\n{}\n{}\n", lines[0], lines[3], lines[4])
    );
    // A window that starts between frames starts at the next one; one column (a lone
    // context record) too. Its times are the recording's own, or from the window's start
    // with --rebase.
    let (dir, _) = file("one.csv", b"time,A.x\n1,10\n2,20\n3,30\n4,40\n");
    let window = [
        "slice", "one.csv", "--start", "1.5", "--end", "4", "-o", "-", "--to", "csv",
    ];
    let run = run_in(dir.path(), &window).expect_code(0);
    assert_eq!(run.stdout, "time,A.x\n2,20\n3,30\n");
    let run = run_in(dir.path(), &[&window[..], &["--rebase"]].concat()).expect_code(0);
    assert_eq!(run.stdout, "time,A.x\n0.5,20\n1.5,30\n");
}
