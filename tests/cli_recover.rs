//! `simrec recover`, end to end (spec §10): exit 0 when every record was intact, 3 when
//! anything was dropped, skipped or repaired, 1 when nothing can be recovered; what is kept is
//! byte for byte what the intact records were.

mod common;

use common::*;

/// Recovers `input` into a fresh temp dir; checks the exit code; returns the dir, the output
/// path and the run.
fn recover(input: &str, exit: i32) -> (tempfile::TempDir, std::path::PathBuf, Run) {
    let dir = tempfile::tempdir().unwrap();
    let ext = if input.ends_with(".state") {
        "state"
    } else {
        "traj"
    };
    let out = dir.path().join(format!("fixed.{ext}"));
    let r = run(&["recover", input, "-o", s(&out)]).expect_code(exit);
    (dir, out, r)
}

#[test]
fn intact_files_recover_to_themselves_with_exit_0() {
    for input in ["small.traj", "small.state", "upstream/hello.traj"] {
        let (_dir, out, r) = recover(input, 0);
        assert_file_bytes(&out, &fixture_bytes(input));
        assert!(r.stderr.contains("nothing dropped"), "{}", r.stderr);
    }
    let (_dir, _out, r) = recover("small.traj", 0);
    assert!(r.stderr.contains("kept 32 records"), "{}", r.stderr);
}

#[test]
fn nonmonotonic_timestamps_drop_nothing() {
    let (_dir, out, r) = recover("broken/nonmonotonic-timestamps.traj", 0);
    assert_file_bytes(&out, &fixture_bytes("broken/nonmonotonic-timestamps.traj"));
    assert!(r.stderr.contains("kept 32 records"), "{}", r.stderr);
    // The swapped times are still there, in file order.
    let times: Vec<u64> = raw_records_of(&out).iter().map(|r| r.time_us).collect();
    assert_eq!(times[3..5], [481_737, 344_527]);
}

#[test]
fn corrupt_payload_floats_are_kept_as_they_are() {
    // NaNs inside packed floats decode: the record is intact as far as framing goes.
    let (_dir, out, _r) = recover("broken/corrupt-payload.traj", 0);
    assert_file_bytes(&out, &fixture_bytes("broken/corrupt-payload.traj"));
}

#[test]
fn corrupt_size_huge_is_repaired_to_the_original() {
    let (_dir, out, r) = recover("broken/corrupt-size-huge.traj", 3);
    assert_file_bytes(&out, &fixture_bytes("small.traj"));
    assert!(r.stderr.contains("kept 32 records"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("NANOVER_BAD_RECORD_SIZE at byte 3893, record 5"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("659"), "{}", r.stderr);
}

#[test]
fn corrupt_size_short_is_repaired_to_the_original() {
    let (_dir, out, r) = recover("broken/corrupt-size-short.traj", 3);
    assert_file_bytes(&out, &fixture_bytes("small.traj"));
    assert!(r.stderr.contains("kept 32 records"), "{}", r.stderr);
    for needle in [
        "NANOVER_PAYLOAD_DECODE at byte 3893, record 5",
        "NANOVER_BAD_RECORD_HEADER at byte 4569, record 6",
        "NANOVER_SKIPPED_BYTES at byte 4569, record 6",
        "7 bytes",
    ] {
        assert!(
            r.stderr.contains(needle),
            "missing {needle:?}: {}",
            r.stderr
        );
    }
}

#[test]
fn garbage_inserted_is_skipped() {
    let (_dir, out, r) = recover("broken/garbage-inserted.traj", 3);
    assert_file_bytes(&out, &fixture_bytes("small.traj"));
    assert!(r.stderr.contains("kept 32 records"), "{}", r.stderr);
    for needle in [
        "NANOVER_BAD_RECORD_HEADER at byte 8111, record 11",
        "NANOVER_SKIPPED_BYTES at byte 8111, record 11",
        "37 bytes",
    ] {
        assert!(
            r.stderr.contains(needle),
            "missing {needle:?}: {}",
            r.stderr
        );
    }
}

#[test]
fn truncated_payload_cuts_the_partial_record() {
    let (_dir, out, r) = recover("broken/trunc-payload.traj", 3);
    assert!(r.stderr.contains("kept 31 records"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("NANOVER_TRUNCATED_PAYLOAD at byte 23268, record 31"),
        "{}",
        r.stderr
    );
    assert_eq!(raw_records_of(&out).len(), 31);
    assert_file_bytes(&out, &fixture_bytes("small.traj")[..23268]);

    let (_dir, out, r) = recover("broken/trunc-payload.state", 3);
    assert!(r.stderr.contains("kept 14 records"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("NANOVER_TRUNCATED_PAYLOAD at byte 1406, record 14"),
        "{}",
        r.stderr
    );
    assert_file_bytes(&out, &fixture_bytes("small.state")[..1406]);
}

#[test]
fn truncated_record_header_cuts_the_tail() {
    let (_dir, out, r) = recover("broken/trunc-record-header.traj", 3);
    assert!(r.stderr.contains("kept 31 records"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("NANOVER_TRUNCATED_RECORD_HEADER at byte 23268, record 31"),
        "{}",
        r.stderr
    );
    assert_file_bytes(&out, &fixture_bytes("small.traj")[..23268]);
}

#[test]
fn recovered_files_validate_clean() {
    for input in [
        "broken/garbage-inserted.traj",
        "broken/corrupt-size-short.traj",
        "broken/trunc-payload.traj",
    ] {
        let (_dir, out, _r) = recover(input, 3);
        let r = run(&["validate", "--strict", "--format", "json", s(&out)]).expect_code(0);
        let o = &r.json_lines()[0];
        assert_eq!(o["errors"], 0, "{input}: {o}");
        assert_eq!(o["warnings"], 0, "{input}: {o}");
    }
}

#[test]
fn nothing_recoverable_exits_1_and_writes_nothing() {
    for (input, code) in [
        ("broken/empty.traj", "NANOVER_EMPTY_FILE"),
        ("broken/bad-magic.traj", "NANOVER_BAD_MAGIC"),
        (
            "broken/trunc-file-header.traj",
            "NANOVER_TRUNCATED_FILE_HEADER",
        ),
        ("broken/bad-version-3.traj", "NANOVER_UNSUPPORTED_VERSION"),
        ("broken/v1-headerless.traj", "NANOVER_V1_HEADERLESS"),
    ] {
        let (dir, _out, r) = recover(input, 1);
        assert!(r.stderr.contains(code), "{input}: {}", r.stderr);
        assert!(
            r.stderr.contains("nothing can be recovered"),
            "{input}: {}",
            r.stderr
        );
        assert!(
            dir_entries(dir.path()).is_empty(),
            "{input}: {:?}",
            dir_entries(dir.path())
        );
    }
}

#[test]
fn header_only_recovers_to_itself_with_exit_0() {
    for input in [
        "edge/header-only.traj",
        "edge/header-only.state",
        "broken/header-only.state",
    ] {
        let (_dir, out, r) = recover(input, 0);
        assert_file_bytes(&out, &fixture_bytes(input));
        assert_eq!(std::fs::metadata(&out).unwrap().len(), 16);
        assert!(r.stderr.contains("kept 0 records"), "{input}: {}", r.stderr);
    }
}

#[test]
fn v1_files_recover_as_v2_with_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v.state");
    run(&[
        "recover",
        "--nanover-version",
        "1",
        "broken/v1-headerless.state",
        "-o",
        s(&out),
    ])
    .expect_code(0);
    assert_file_bytes(&out, &fixture_bytes("small.state"));

    let out = dir.path().join("v.traj");
    let r = run(&[
        "recover",
        "--nanover-version",
        "1",
        "broken/v1-headerless.traj",
        "-o",
        s(&out),
    ])
    // Nothing dropped: every frame payload is re-encoded (FrameData -> GetFrameResponse)
    // with every value kept.
    .expect_code(0);
    assert!(r.stderr.contains("kept 32 records"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("32 records were re-encoded with every value kept"),
        "{}",
        r.stderr
    );
    let v = run(&["cat", "--format", "ndjson", s(&out)])
        .expect_code(0)
        .json_lines();
    assert_eq!(
        v.iter().map(|r| frame(r).unwrap()).collect::<Vec<_>>(),
        (0..32).collect::<Vec<u64>>()
    );
}

#[test]
fn standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.traj");
    let r = simrec()
        .args(["recover", "-", "-o", s(&out)])
        .write_stdin(fixture_bytes("broken/garbage-inserted.traj"))
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&r.stderr).contains("<stdin>: kept 32 records"));
    assert_file_bytes(&out, &fixture_bytes("small.traj"));
}

#[test]
fn refuses_an_existing_output_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fixed.traj");
    std::fs::write(&out, b"keep me").unwrap();
    let r = run(&["recover", "broken/trunc-payload.traj", "-o", s(&out)]);
    assert_ne!(r.code, 0);
    assert_ne!(r.code, 3);
    assert!(r.stderr.contains("--force"), "{}", r.stderr);
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");
    assert_eq!(dir_entries(dir.path()), ["fixed.traj"]);

    run(&[
        "recover",
        "broken/trunc-payload.traj",
        "-o",
        s(&out),
        "--force",
    ])
    .expect_code(3);
    assert_file_bytes(&out, &fixture_bytes("small.traj")[..23268]);
    assert_eq!(dir_entries(dir.path()), ["fixed.traj"]);
}

#[test]
fn output_is_required() {
    run(&["recover", "broken/trunc-payload.traj"]).expect_code(2);
}
