//! `simrec validate`, end to end: the expected finding of every damaged fixture (spec §14),
//! exit codes, `--strict`, `--info`, header-only files and pair rules.

use serde_json::{json, Value};

use crate::util::*;

/// A finding that must be present: (severity, code, offset, record).
type Expect = (&'static str, &'static str, Option<u64>, Option<u64>);

/// The same, as reported.
type Found = (String, String, Option<u64>, Option<u64>);

/// Validates `file` as JSON; checks the exit code, the verdict, and that the findings of
/// severity warning or error are exactly `expected` (in order). Returns the report.
fn check(file: &str, extra: &[&str], exit: i32, expected: &[Expect]) -> Value {
    let mut args = vec!["validate", "--format", "json"];
    args.extend_from_slice(extra);
    args.push(file);
    let r = run(&args).expect_code(exit);
    let lines = r.json_lines();
    assert_eq!(lines.len(), 1, "{}", r.stdout);
    let o = lines[0].clone();
    assert_eq!(o["path"], file);
    let errors = expected.iter().filter(|e| e.0 == "error").count();
    let warnings = expected.iter().filter(|e| e.0 == "warning").count();
    assert_eq!(o["errors"], errors, "{o}");
    assert_eq!(o["warnings"], warnings, "{o}");
    assert_eq!(o["ok"], errors == 0, "{o}");
    assert_eq!(exit == 0, errors == 0, "exit code and verdict disagree");
    let got: Vec<Found> = o["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] != "info")
        .map(|f| {
            (
                f["severity"].as_str().unwrap().to_string(),
                f["code"].as_str().unwrap().to_string(),
                f["offset"].as_u64(),
                f["record"].as_u64(),
            )
        })
        .collect();
    let want: Vec<Found> = expected
        .iter()
        .map(|e| (e.0.to_string(), e.1.to_string(), e.2, e.3))
        .collect();
    assert_eq!(got, want, "{file}: {o}");
    for f in o["findings"].as_array().unwrap() {
        for field in ["severity", "code", "message", "offset", "record", "hint"] {
            assert!(f.get(field).is_some(), "finding without {field}: {f}");
        }
        assert!(!f["message"].as_str().unwrap().is_empty());
    }
    o
}

/// The message of the first finding with `code`.
fn message(o: &Value, code: &str) -> String {
    o["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {o}"))["message"]
        .as_str()
        .unwrap()
        .to_string()
}

fn finding<'a>(o: &'a Value, code: &str) -> &'a Value {
    o["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {o}"))
}

#[test]
fn empty_file() {
    let o = check(
        "broken/empty.traj",
        &[],
        1,
        &[("error", "NANOVER_EMPTY_FILE", Some(0), None)],
    );
    assert_eq!(o["format"], Value::Null);
}

#[test]
fn truncated_file_header() {
    let o = check(
        "broken/trunc-file-header.traj",
        &[],
        1,
        &[("error", "NANOVER_TRUNCATED_FILE_HEADER", Some(0), None)],
    );
    assert!(message(&o, "NANOVER_TRUNCATED_FILE_HEADER").contains("12 bytes"));
}

#[test]
fn bad_magic() {
    check(
        "broken/bad-magic.traj",
        &[],
        1,
        &[("error", "NANOVER_BAD_MAGIC", Some(0), None)],
    );
}

#[test]
fn unsupported_version_1() {
    let o = check(
        "broken/bad-version-1.traj",
        &[],
        1,
        &[("error", "NANOVER_UNSUPPORTED_VERSION", Some(8), None)],
    );
    assert!(message(&o, "NANOVER_UNSUPPORTED_VERSION").contains("version 1"));
}

#[test]
fn unsupported_version_3() {
    let o = check(
        "broken/bad-version-3.traj",
        &[],
        1,
        &[("error", "NANOVER_UNSUPPORTED_VERSION", Some(8), None)],
    );
    assert!(message(&o, "NANOVER_UNSUPPORTED_VERSION").contains("version 3"));
}

#[test]
fn v1_headerless_traj() {
    let o = check(
        "broken/v1-headerless.traj",
        &[],
        1,
        &[("error", "NANOVER_V1_HEADERLESS", Some(0), None)],
    );
    let hint = finding(&o, "NANOVER_V1_HEADERLESS")["hint"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(hint.contains("--nanover-version 1"), "{hint}");
}

#[test]
fn v1_headerless_state() {
    check(
        "broken/v1-headerless.state",
        &[],
        1,
        &[("error", "NANOVER_V1_HEADERLESS", Some(0), None)],
    );
}

#[test]
fn v1_read_as_v1_is_only_info() {
    // With the option, the v1 finding is lowered to info and the file validates.
    let r = run(&[
        "validate",
        "--format",
        "json",
        "--nanover-version",
        "1",
        "broken/v1-headerless.traj",
        "broken/v1-headerless.state",
    ])
    .expect_code(0);
    for o in r.json_lines() {
        assert_eq!(o["ok"], true, "{o}");
        assert_eq!(o["errors"], 0, "{o}");
        assert_eq!(finding(&o, "NANOVER_V1_HEADERLESS")["severity"], "info");
    }
}

#[test]
fn header_only_state() {
    let o = check(
        "broken/header-only.state",
        &[],
        0,
        &[("warning", "NANOVER_NO_RECORDS", Some(16), None)],
    );
    assert_eq!(o["format"], "nanover-state");
}

#[test]
fn header_only_edge_files() {
    check(
        "edge/header-only.traj",
        &[],
        0,
        &[("warning", "NANOVER_NO_RECORDS", Some(16), None)],
    );
    check(
        "edge/header-only.state",
        &[],
        0,
        &[("warning", "NANOVER_NO_RECORDS", Some(16), None)],
    );
    let r = run(&["validate", "edge/header-only.traj"]).expect_code(0);
    assert!(r.stdout.contains("NANOVER_NO_RECORDS"), "{}", r.stdout);
}

#[test]
fn header_only_strict_is_an_error() {
    check(
        "edge/header-only.traj",
        &["--strict"],
        1,
        &[("error", "NANOVER_NO_RECORDS", Some(16), None)],
    );
}

#[test]
fn truncated_record_header() {
    let o = check(
        "broken/trunc-record-header.traj",
        &[],
        1,
        &[(
            "error",
            "NANOVER_TRUNCATED_RECORD_HEADER",
            Some(23268),
            Some(31),
        )],
    );
    assert!(message(&o, "NANOVER_TRUNCATED_RECORD_HEADER").contains("10 bytes"));
}

#[test]
fn truncated_payload_traj() {
    let o = check(
        "broken/trunc-payload.traj",
        &[],
        1,
        &[("error", "NANOVER_TRUNCATED_PAYLOAD", Some(23268), Some(31))],
    );
    let m = message(&o, "NANOVER_TRUNCATED_PAYLOAD");
    assert!(m.contains("791") && m.contains("395"), "{m}");
    let hint = finding(&o, "NANOVER_TRUNCATED_PAYLOAD")["hint"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(hint.contains("simrec recover"), "{hint}");
}

#[test]
fn truncated_payload_state() {
    let o = check(
        "broken/trunc-payload.state",
        &[],
        1,
        &[("error", "NANOVER_TRUNCATED_PAYLOAD", Some(1406), Some(14))],
    );
    let m = message(&o, "NANOVER_TRUNCATED_PAYLOAD");
    assert!(m.contains("41") && m.contains("20"), "{m}");
    assert_eq!(o["format"], "nanover-state");
}

#[test]
fn corrupt_size_huge() {
    let o = check(
        "broken/corrupt-size-huge.traj",
        &[],
        1,
        &[("error", "NANOVER_BAD_RECORD_SIZE", Some(3893), Some(5))],
    );
    let m = message(&o, "NANOVER_BAD_RECORD_SIZE");
    assert!(m.contains("1099511627776"), "{m}");
    // The repaired length is the distance to the next record (4576 - 3893 - 24).
    assert!(m.contains("659"), "{m}");
    // Resync found record 6 again: it carries on with the right index and offset.
    let later = o["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["record"] == 6)
        .expect("findings for record 6");
    assert_eq!(later["offset"], 4576);
}

#[test]
fn corrupt_size_short() {
    let o = check(
        "broken/corrupt-size-short.traj",
        &[],
        1,
        &[
            ("error", "NANOVER_PAYLOAD_DECODE", Some(3893), Some(5)),
            ("error", "NANOVER_BAD_RECORD_HEADER", Some(4569), Some(6)),
            ("error", "NANOVER_SKIPPED_BYTES", Some(4569), Some(6)),
        ],
    );
    let m = message(&o, "NANOVER_SKIPPED_BYTES");
    assert!(m.contains("7 bytes") && m.contains("4576"), "{m}");
}

#[test]
fn garbage_inserted() {
    let o = check(
        "broken/garbage-inserted.traj",
        &[],
        1,
        &[
            ("error", "NANOVER_BAD_RECORD_HEADER", Some(8111), Some(11)),
            ("error", "NANOVER_SKIPPED_BYTES", Some(8111), Some(11)),
        ],
    );
    let m = message(&o, "NANOVER_SKIPPED_BYTES");
    assert!(m.contains("37 bytes") && m.contains("8148"), "{m}");
    // The record after the garbage keeps index 11, 37 bytes further on.
    let after = o["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "NANOVER_EMPTY_ARRAY_KIND" && f["record"] == 13)
        .expect("record 13 info");
    // small.traj has record 13 at 9537; the garbage shifts it by 37.
    assert_eq!(after["offset"], 9537 + 37);
}

#[test]
fn nonmonotonic_timestamps_is_a_warning() {
    let o = check(
        "broken/nonmonotonic-timestamps.traj",
        &[],
        0,
        &[("warning", "NANOVER_TIMESTAMP_DECREASE", Some(3210), Some(4))],
    );
    let m = message(&o, "NANOVER_TIMESTAMP_DECREASE");
    assert!(m.contains("344527") && m.contains("481737"), "{m}");
}

#[test]
fn strict_turns_the_timestamp_warning_into_exit_1() {
    let o = check(
        "broken/nonmonotonic-timestamps.traj",
        &["--strict"],
        1,
        &[("error", "NANOVER_TIMESTAMP_DECREASE", Some(3210), Some(4))],
    );
    assert_eq!(o["ok"], false);
    let r = run(&[
        "validate",
        "--strict",
        "broken/nonmonotonic-timestamps.traj",
    ])
    .expect_code(1);
    assert!(
        r.stdout
            .starts_with("broken/nonmonotonic-timestamps.traj: FAILED"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("error NANOVER_TIMESTAMP_DECREASE at byte 3210, record 4"),
        "{}",
        r.stdout
    );
}

#[test]
fn corrupt_payload_is_a_nonfinite_warning() {
    let o = check(
        "broken/corrupt-payload.traj",
        &[],
        0,
        &[("warning", "NANOVER_NONFINITE_FLOAT", Some(3893), Some(5))],
    );
    assert!(message(&o, "NANOVER_NONFINITE_FLOAT").contains("particle.positions"));
    check(
        "broken/corrupt-payload.traj",
        &["--strict"],
        1,
        &[("error", "NANOVER_NONFINITE_FLOAT", Some(3893), Some(5))],
    );
}

/// Every file in broken/ has a test above; this catches a new one without a test.
#[test]
fn every_broken_fixture_is_covered() {
    let mut names = dir_entries(&fixture("broken"));
    names.retain(|n| !n.starts_with('.'));
    assert_eq!(
        names,
        [
            "bad-magic.traj",
            "bad-version-1.traj",
            "bad-version-3.traj",
            "corrupt-payload.traj",
            "corrupt-size-huge.traj",
            "corrupt-size-short.traj",
            "empty.traj",
            "garbage-inserted.traj",
            "header-only.state",
            "nonmonotonic-timestamps.traj",
            "trunc-file-header.traj",
            "trunc-payload.state",
            "trunc-payload.traj",
            "trunc-record-header.traj",
            "v1-headerless.state",
            "v1-headerless.traj",
        ]
    );
}

#[test]
fn small_pair_is_ok() {
    let r = run(&["validate", "--format", "json", "small.traj", "small.state"]).expect_code(0);
    let lines = r.json_lines();
    assert_eq!(lines.len(), 2);
    let t = &lines[0];
    assert_eq!(t["path"], "small.traj");
    assert_eq!(t["format"], "nanover-traj");
    assert_eq!(
        (t["ok"].clone(), t["errors"].clone(), t["warnings"].clone()),
        (json!(true), json!(0), json!(0))
    );
    // Info: the late-joining first frame and 24 empty sparse-force arrays stored as indices.
    let first = finding(t, "NANOVER_FIRST_FRAME_NOT_RESET");
    assert_eq!(first["severity"], "info");
    assert_eq!(first["offset"], 16);
    assert_eq!(first["record"], 0);
    assert!(first["message"].as_str().unwrap().contains('2'));
    let empties: Vec<u64> = t["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "NANOVER_EMPTY_ARRAY_KIND")
        .map(|f| f["record"].as_u64().unwrap())
        .collect();
    assert_eq!(empties.len(), 24);
    // The three reset frames (0, 17, 24) and the interaction frames 7..12 have none.
    for r in [0u64, 1, 6, 13, 16, 18, 23, 25, 31] {
        assert!(empties.contains(&r), "record {r}");
    }
    for r in [7u64, 8, 9, 10, 11, 12, 17, 24] {
        assert!(!empties.contains(&r), "record {r}");
    }
    assert_eq!(t["infos"], 25);

    let st = &lines[1];
    assert_eq!(st["path"], "small.state");
    assert_eq!(st["format"], "nanover-state");
    assert_eq!(st["ok"], true);
    assert_eq!(st["errors"], 0);
    assert_eq!(st["warnings"], 0);
    assert_eq!(st["findings"], json!([]));
}

#[test]
fn small_pair_strict_is_still_ok() {
    run(&["validate", "--strict", "small.traj", "small.state"]).expect_code(0);
}

#[test]
fn text_output_and_info_flag() {
    let r = run(&["validate", "small.traj", "small.state"]).expect_code(0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stdout);
    assert!(
        lines[0].starts_with("small.traj: ok (0 errors, 0 warnings, 25 info"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("small.state: ok (0 errors, 0 warnings, 0 info"),
        "{}",
        lines[1]
    );

    // 24 findings of one code: the first 3 listed, the rest counted.
    let r = run(&["validate", "--info", "small.traj"]).expect_code(0);
    assert_eq!(
        r.stdout
            .matches("info NANOVER_EMPTY_ARRAY_KIND at byte")
            .count(),
        3,
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("  … and 21 more NANOVER_EMPTY_ARRAY_KIND (`--format json` lists them)\n"),
        "{}",
        r.stdout
    );
    assert!(r
        .stdout
        .contains("info NANOVER_FIRST_FRAME_NOT_RESET at byte 16, record 0"));
    let r = run(&["validate", "--info", "--format", "json", "small.traj"]).expect_code(0);
    assert_eq!(r.stdout.matches("NANOVER_EMPTY_ARRAY_KIND").count(), 24);

    let r = run(&["validate", "broken/trunc-payload.traj"]).expect_code(1);
    assert!(
        r.stdout.starts_with("broken/trunc-payload.traj: FAILED"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("error NANOVER_TRUNCATED_PAYLOAD at byte 23268, record 31"),
        "{}",
        r.stdout
    );
}

#[test]
fn one_bad_file_among_good_ones_fails_the_run() {
    let r = run(&[
        "validate",
        "--format",
        "json",
        "small.traj",
        "broken/garbage-inserted.traj",
        "small.state",
    ])
    .expect_code(1);
    let lines = r.json_lines();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["ok"], true);
    assert_eq!(lines[1]["ok"], false);
    assert_eq!(lines[1]["errors"], 2);
    assert_eq!(lines[2]["ok"], true);
}

#[test]
fn upstream_recordings_have_no_errors() {
    let r = run(&[
        "validate",
        "--format",
        "json",
        "upstream/hello.traj",
        "upstream/nanotube-example-recording.traj",
        "upstream/nanotube-example-recording.state",
    ])
    .expect_code(0);
    for o in r.json_lines() {
        assert_eq!(o["errors"], 0, "{o}");
        assert_eq!(o["warnings"], 0, "{o}");
    }
}

/// Two parts of the small pair cut apart in time (kept on the original clock) do not
/// overlap: NANOVER_PAIR_DISJOINT, a warning (exit 0; exit 1 with --strict).
#[test]
fn disjoint_pair() {
    let dir = tempfile::tempdir().unwrap();
    let traj = dir.path().join("first.traj");
    let state = dir.path().join("last.state");
    run(&["slice", "small.traj", "--end", "1s", "-o", s(&traj)]).expect_code(0);
    run(&["slice", "small.state", "--start", "-1s", "-o", s(&state)]).expect_code(0);

    let r = run_in(
        dir.path(),
        &["validate", "--format", "json", "first.traj", "last.state"],
    )
    .expect_code(0);
    let lines = r.json_lines();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["warnings"], 0, "{}", lines[0]);
    let o = &lines[1];
    assert_eq!(o["path"], "last.state");
    assert_eq!(o["ok"], true);
    assert_eq!(o["warnings"], 1);
    let f = finding(o, "NANOVER_PAIR_DISJOINT");
    assert_eq!(f["severity"], "warning");
    let m = f["message"].as_str().unwrap();
    // traj 0.008445 .. 0.884180 s; state from 4.004500 s (5.0045 - 1) to 5.004500 s.
    assert!(
        m.contains("0.884180s") && m.contains("4.004500s") && m.contains("5.004500s"),
        "{m}"
    );

    let r = run_in(
        dir.path(),
        &["validate", "--strict", "first.traj", "last.state"],
    )
    .expect_code(1);
    assert!(
        r.stdout.contains("error NANOVER_PAIR_DISJOINT"),
        "{}",
        r.stdout
    );

    // Each file alone is fine: the rule is about the pair.
    run_in(dir.path(), &["validate", "--strict", "last.state"]).expect_code(0);
}

#[test]
fn overlapping_pair_is_not_disjoint() {
    let r = run(&["validate", "--format", "json", "small.traj", "small.state"]).expect_code(0);
    assert!(!r.stdout.contains("NANOVER_PAIR_DISJOINT"), "{}", r.stdout);
}

#[test]
fn standard_input() {
    let r = run_with_stdin(
        &["validate", "--format", "json", "-"],
        fixture_bytes("broken/trunc-payload.state"),
    )
    .expect_code(1);
    let o = &r.json_lines()[0];
    assert_eq!(o["path"], "<stdin>");
    assert_eq!(o["format"], "nanover-state");
    let f = finding(o, "NANOVER_TRUNCATED_PAYLOAD");
    assert_eq!(
        (f["offset"].as_u64(), f["record"].as_u64()),
        (Some(1406), Some(14))
    );

    let r = run_with_stdin(&["validate", "-"], fixture_bytes("small.traj")).expect_code(0);
    assert!(r.stdout.starts_with("<stdin>: ok"), "{}", r.stdout);
}

/// A copy of small.traj in `dir`, edited by `edit` (given the bytes and the original records).
fn crafted(
    dir: &std::path::Path,
    name: &str,
    edit: impl FnOnce(&mut Vec<u8>, &[RawRecord]),
) -> String {
    let mut bytes = fixture_bytes("small.traj");
    let recs = raw_records(&bytes);
    edit(&mut bytes, &recs);
    let path = dir.join(name);
    std::fs::write(&path, &bytes).unwrap();
    path.to_str().unwrap().to_string()
}

fn set_time(bytes: &mut [u8], rec: &RawRecord, t: u128) {
    bytes[rec.offset..rec.offset + 16].copy_from_slice(&t.to_le_bytes());
}

/// (severity, code, offset, record) of a finding that has all four.
type Located = (String, String, u64, u64);

/// Validates a crafted file; returns (exit code, non-info findings as (severity, code,
/// offset, record), and the report).
fn findings_of(path: &str) -> (i32, Vec<Located>, Value) {
    let r = run(&["validate", "--format", "json", path]);
    let o = r.json_lines()[0].clone();
    let list = o["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            f["code"] != "NANOVER_EMPTY_ARRAY_KIND" && f["code"] != "NANOVER_FIRST_FRAME_NOT_RESET"
        })
        .map(|f| {
            (
                f["severity"].as_str().unwrap().to_string(),
                f["code"].as_str().unwrap().to_string(),
                f["offset"].as_u64().unwrap(),
                f["record"].as_u64().unwrap(),
            )
        })
        .collect();
    (r.code, list, o)
}

fn one(severity: &str, code: &str, offset: u64, record: u64) -> Vec<Located> {
    vec![(severity.to_string(), code.to_string(), offset, record)]
}

#[test]
fn crafted_timestamp_jump_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    // Every record from 10 on, 200 s later: one jump of more than 120 s, at record 10.
    let path = crafted(dir.path(), "jump.traj", |b, recs| {
        for r in &recs[10..] {
            set_time(b, r, r.time_us as u128 + 200_000_000);
        }
    });
    let (code, list, o) = findings_of(&path);
    assert_eq!(code, 0);
    assert_eq!(list, one("warning", "NANOVER_TIMESTAMP_JUMP", 7398, 10));
    assert!(
        message(&o, "NANOVER_TIMESTAMP_JUMP").contains("200.116"),
        "{o}"
    );
    assert_eq!(run(&["validate", "--strict", &path]).code, 1);
}

#[test]
fn crafted_timestamp_tie_is_info() {
    let dir = tempfile::tempdir().unwrap();
    let path = crafted(dir.path(), "tie.traj", |b, recs| {
        set_time(b, &recs[3], recs[2].time_us as u128)
    });
    let (code, list, _o) = findings_of(&path);
    assert_eq!(code, 0);
    assert_eq!(list, one("info", "NANOVER_TIMESTAMP_TIE", 2527, 3));
    // Info never fails, even with --strict.
    assert_eq!(run(&["validate", "--strict", &path]).code, 0);
}

#[test]
fn crafted_timestamp_range() {
    let dir = tempfile::tempdir().unwrap();
    // The largest µs count whose ns fit in i64 is fine (a huge jump, but no range error).
    let ok = crafted(dir.path(), "edge.traj", |b, recs| {
        set_time(b, &recs[31], 9_223_372_036_854_775)
    });
    let (code, list, _o) = findings_of(&ok);
    assert_eq!(code, 0);
    assert_eq!(list, one("warning", "NANOVER_TIMESTAMP_JUMP", 23268, 31));
    let r = run(&["inspect", "--format", "json", &ok]).expect_code(0);
    assert_eq!(r.json_lines()[0]["end_ns"], 9_223_372_036_854_775_000i64);

    // One more does not fit.
    let bad = crafted(dir.path(), "range.traj", |b, recs| {
        set_time(b, &recs[31], 9_223_372_036_854_776)
    });
    let (code, list, _o) = findings_of(&bad);
    assert_eq!(code, 1);
    assert_eq!(list, one("error", "NANOVER_TIMESTAMP_RANGE", 23268, 31));
}

#[test]
fn crafted_upper_timestamp_bits_lose_framing() {
    let dir = tempfile::tempdir().unwrap();
    let path = crafted(dir.path(), "upper.traj", |b, recs| {
        b[recs[20].offset + 8] = 1;
    });
    let (code, list, o) = findings_of(&path);
    assert_eq!(code, 1);
    // Record 20 is lost; resync finds record 21 at 15241, which takes index 20.
    assert_eq!(
        list,
        vec![
            (
                "error".to_string(),
                "NANOVER_BAD_RECORD_HEADER".to_string(),
                14558,
                20
            ),
            (
                "error".to_string(),
                "NANOVER_SKIPPED_BYTES".to_string(),
                14558,
                20
            ),
        ]
    );
    let m = message(&o, "NANOVER_SKIPPED_BYTES");
    assert!(m.contains("683 bytes") && m.contains("15241"), "{m}");
    let r = run(&["inspect", "--format", "json", &path]).expect_code(3);
    assert_eq!(r.json_lines()[0]["records"], 31);
}

#[test]
fn crafted_frame_index_decrease_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    // Record 5 starts `08 07` (frame_index 7); make it 3, below record 4's 6.
    let path = crafted(dir.path(), "fidx.traj", |b, recs| {
        let p = recs[5].offset + 24;
        assert_eq!(b[p..p + 2], [0x08, 0x07]);
        b[p + 1] = 3;
    });
    let (code, list, o) = findings_of(&path);
    assert_eq!(code, 0);
    assert_eq!(
        list,
        one("warning", "NANOVER_FRAME_INDEX_DECREASE", 3893, 5)
    );
    let m = message(&o, "NANOVER_FRAME_INDEX_DECREASE");
    assert!(m.contains('3') && m.contains('6'), "{m}");
}

/// The stderr lines that list skipped files.
fn skipped_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("skipped "))
        .collect()
}

#[test]
fn a_directory_is_validated_recording_by_recording_and_other_files_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let r = run_in(dir.path(), &["validate", "lab"]).expect_code(1);
    let verdicts: Vec<&str> = r.stdout.lines().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(
        verdicts,
        [
            "lab/icarus/a2.icarec: ok (0 errors, 0 warnings, 0 info)",
            "lab/nanover/crashed.traj: FAILED (1 error, 0 warnings, 24 info)",
            "lab/nanover/small.state: ok (0 errors, 0 warnings, 0 info)",
            "lab/nanover/small.traj: ok (0 errors, 0 warnings, 25 info)",
            "lab/session.xrec: ok (0 errors, 0 warnings, 0 info)",
        ]
    );
    assert_eq!(
        skipped_lines(&r.stderr),
        [
            "skipped lab/capture.json: not a recording simrec reads",
            "skipped lab/icarus/README.md: not a recording simrec reads",
            "skipped lab/plots/run.png: not a recording simrec reads",
        ]
    );
    // The pair is one recording.
    assert_eq!(
        r.stderr.lines().last(),
        Some("4 recordings: 3 ok, 1 with errors, 3 skipped")
    );

    // JSON: the same objects per file, then the counts.
    let r = run_in(dir.path(), &["validate", "--format", "json", "lab"]).expect_code(1);
    let lines = r.json_lines();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[1]["path"], "lab/nanover/crashed.traj");
    assert_eq!(
        lines[5]["summary"],
        json!({"recordings": 4, "ok": 3, "with_errors": 1, "skipped": 3})
    );
    assert_eq!(lines[5]["skipped"][1]["path"], "lab/icarus/README.md");

    // --strict: what is not a recording fails.
    let r = run_in(dir.path(), &["validate", "--strict", "lab"]).expect_code(1);
    assert!(skipped_lines(&r.stderr).is_empty(), "{}", r.stderr);
    assert!(
        r.stdout.contains("lab/plots/run.png: FAILED"),
        "{}",
        r.stdout
    );
    assert_eq!(
        r.stderr.lines().last(),
        Some("7 recordings: 3 ok, 4 with errors, 0 skipped")
    );

    // Without the crashed file, exit 0 however many files were skipped.
    std::fs::remove_file(dir.path().join("lab/nanover/crashed.traj")).unwrap();
    let r = run_in(dir.path(), &["validate", "lab"]).expect_code(0);
    assert_eq!(
        r.stderr.lines().last(),
        Some("3 recordings: 3 ok, 0 with errors, 3 skipped")
    );
}

#[test]
fn a_quoted_glob_is_expanded_by_simrec() {
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let r = run_in(dir.path(), &["validate", "lab/**/*.traj"]).expect_code(1);
    let verdicts: Vec<&str> = r.stdout.lines().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(
        verdicts,
        [
            "lab/nanover/crashed.traj: FAILED (1 error, 0 warnings, 24 info)",
            "lab/nanover/small.traj: ok (0 errors, 0 warnings, 25 info)",
        ]
    );
    assert_eq!(
        r.stderr.lines().last(),
        Some("2 recordings: 1 ok, 1 with errors, 0 skipped")
    );
    // `*` stays within one directory.
    let r = run_in(dir.path(), &["validate", "lab/*/*.state"]).expect_code(0);
    assert_eq!(
        r.stdout,
        "lab/nanover/small.state: ok (0 errors, 0 warnings, 0 info)\n"
    );
    let r = run_in(dir.path(), &["validate", "lab/*.h5"]).expect_code(2);
    assert!(
        r.stderr.contains("no file matches `lab/*.h5`"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty());
}
