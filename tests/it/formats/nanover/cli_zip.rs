//! `.nanover.zip` end to end through the built binary: inspect, validate, convert, slice,
//! split and recover, with their output and exit codes.

use std::path::PathBuf;

use crate::util;
use crate::util::{run_in, s, Run};

fn zdir() -> PathBuf {
    util::any_fixture("nanover-zip")
}

fn zrun(args: &[&str]) -> Run {
    run_in(&zdir(), args)
}

#[test]
fn inspect_json_counts_messages_parts_and_zip_facts() {
    let r = zrun(&[
        "inspect",
        "--format",
        "json",
        "small.nanover.zip",
        "edge.nanover.zip",
    ])
    .expect_code(0);
    let v = r.json_lines();
    assert_eq!(v[0]["format"], "nanover-zip");
    assert_eq!(v[0]["records"], 91);
    assert_eq!(v[0]["messages"], 91);
    assert_eq!(v[0]["resets"], serde_json::json!([0, 51, 74]));
    assert_eq!(v[0]["start_ns"], 375_000);
    assert_eq!(v[0]["end_ns"], 4_839_717_000i64);
    assert_eq!(v[0]["channels"][0]["name"], "frame");
    assert_eq!(v[0]["channels"][0]["records"], 75);
    assert_eq!(v[0]["channels"][1]["records"], 16);
    assert_eq!(v[0]["zip"]["members"][0]["name"], "messages.msgpack");
    assert_eq!(v[0]["zip"]["members"][0]["data_offset"], 66);
    assert_eq!(v[0]["zip"]["members"][0]["crc_ok"], true);
    assert_eq!(v[0]["zip"]["index_contiguous"], true);
    // edge: 8 messages, 9 records (one message holds a frame and a state).
    assert_eq!(v[1]["messages"], 8);
    assert_eq!(v[1]["records"], 9);
    let names: Vec<&str> = v[1]["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["frame", "state", "command"]);
    assert_eq!(r.stderr, "");
}

#[test]
fn inspect_deep_lists_keys_with_dtype_and_shape() {
    let r = zrun(&["inspect", "--deep", "edge.nanover.zip"]).expect_code(0);
    assert!(r.stdout.contains("particle.colors"), "{}", r.stdout);
    assert!(r.stdout.contains("uint8 [4,4]"), "{}", r.stdout);
    assert!(r.stdout.contains("float32 [3,3]"), "{}", r.stdout);
    assert!(r.stdout.contains("crc_ok=true"), "{}", r.stdout);
}

#[test]
fn validate_reports_codes_offsets_and_exit_codes() {
    let r = zrun(&["validate", "--info", "edge.nanover.zip"]).expect_code(0);
    assert!(
        r.stdout
            .contains("warning NVZIP_FRAME_NO_INDEX at byte 1242, record 4"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("info NVZIP_ARRAY_LIST at byte 1352, record 5"),
        "{}",
        r.stdout
    );
    zrun(&["validate", "--strict", "edge.nanover.zip"]).expect_code(1);
    let r = zrun(&["validate", "crash/crashed-after-100.nanover.zip"]).expect_code(1);
    assert!(r.stdout.contains("NVZIP_UNFINISHED"), "{}", r.stdout);
    let r = zrun(&[
        "validate",
        "--format",
        "json",
        "crash/crashed-after-0.nanover.zip",
    ])
    .expect_code(1);
    assert!(r.stdout.contains("NVZIP_EMPTY_FILE"), "{}", r.stdout);
}

#[test]
fn corrupt_bytes_fail_the_crc_with_the_file_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(zdir().join("small.nanover.zip")).unwrap();
    bytes[1000] ^= 0x55;
    let bad = dir.path().join("bad.nanover.zip");
    std::fs::write(&bad, bytes).unwrap();
    let r = run_in(
        dir.path(),
        &["convert", "--strict", "bad.nanover.zip", "-o", "out.jsonl"],
    )
    .expect_code(1);
    assert!(r.stderr.contains("bad.nanover.zip"), "{}", r.stderr);
    assert!(
        r.stderr.contains("NVZIP_CRC_MISMATCH at byte 66"),
        "{}",
        r.stderr
    );
    assert!(
        !dir.path().join("out.jsonl").exists(),
        "no half-written output"
    );
}

#[test]
fn same_format_convert_is_byte_exact_and_legacy_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("copy.nanover.zip");
    zrun(&["convert", "small.nanover.zip", "-o", s(&out)]).expect_code(0);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(zdir().join("small.nanover.zip")).unwrap()
    );
    // To legacy: integers become doubles, so the loss report speaks and the exit code is 3.
    let stem = dir.path().join("legacy");
    let r = zrun(&[
        "convert",
        "small.nanover.zip",
        "-o",
        &format!("{}.traj", s(&stem)),
    ])
    .expect_code(3);
    assert!(
        r.stderr.contains("integer written as a double"),
        "{}",
        r.stderr
    );
    let back = dir.path().join("back.nanover.zip");
    let traj = format!("{}.traj", s(&stem));
    let state = format!("{}.state", s(&stem));
    zrun(&["convert", &traj, &state, "-o", s(&back)]).expect_code(0);
    let r = zrun(&["inspect", "--format", "json", s(&back)]).expect_code(0);
    let v = &r.json_lines()[0];
    assert_eq!(v["records"], 91);
    assert_eq!(v["resets"], serde_json::json!([0, 51, 74]));
}

#[test]
fn slice_starts_with_one_combined_message() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cut.nanover.zip");
    // Spec §12's form: rebased.
    let r = zrun(&[
        "slice",
        "--rebase",
        "small.nanover.zip",
        "--start",
        "2s",
        "--end",
        "3s",
        "-o",
        s(&out),
    ])
    .expect_code(0);
    assert!(r.stderr.contains("wrote 24 records"), "{}", r.stderr);
    let v = &zrun(&["inspect", "--format", "json", s(&out)])
        .expect_code(0)
        .json_lines()[0];
    // 23 messages: the combined frame+state context, then the 22 kept ones.
    assert_eq!(v["messages"], 23);
    assert_eq!(v["records"], 24);
    assert_eq!(v["start_ns"], 0);
    assert_eq!(v["resets"], serde_json::json!([0, 23]));
    zrun(&["validate", s(&out)]).expect_code(0);
    // By default the recording's own times: the combined message at the window's start.
    zrun(&[
        "slice",
        "small.nanover.zip",
        "--start",
        "2s",
        "--end",
        "3s",
        "-o",
        s(&out),
        "--force",
    ])
    .expect_code(0);
    let v = &zrun(&["inspect", "--format", "json", s(&out)])
        .expect_code(0)
        .json_lines()[0];
    assert_eq!(v["messages"], 23);
    assert_eq!(v["start_ns"], 2_000_000_000);
    zrun(&["validate", s(&out)]).expect_code(0);
}

#[test]
fn split_at_resets_writes_upstream_named_parts_without_the_empty_first() {
    let dir = tempfile::tempdir().unwrap();
    let r = zrun(&[
        "slice",
        "--split-at-resets",
        "small.nanover.zip",
        "-o",
        &format!("{}/", s(dir.path())),
    ])
    .expect_code(0);
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "small.nanover-01.nanover.zip",
            "small.nanover-02.nanover.zip",
            "small.nanover-03.nanover.zip"
        ]
    );
    assert!(r.stderr.contains("wrote 94 records"), "{}", r.stderr);
    assert_eq!(
        std::fs::read(dir.path().join("small.nanover-01.nanover.zip")).unwrap(),
        std::fs::read(zdir().join("split/small.nanover-01.nanover.zip")).unwrap()
    );
    // Named output: OUT-NN.nanover.zip.
    let named = dir.path().join("part.nanover.zip");
    zrun(&[
        "slice",
        "--split-at-resets",
        "small.nanover.zip",
        "-o",
        s(&named),
    ])
    .expect_code(0);
    assert!(dir.path().join("part-03.nanover.zip").exists());
}

#[test]
fn recover_rescues_a_crashed_recording_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fixed.nanover.zip");
    let r = zrun(&[
        "recover",
        "crash/crashed-after-100.nanover.zip",
        "-o",
        s(&out),
    ])
    .expect_code(3);
    assert!(r.stderr.contains("kept 96 records"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("79 derived from `server.timestamp` (seconds), 17 invented"),
        "{}",
        r.stderr
    );
    zrun(&["validate", s(&out)]).expect_code(0);
    let r = zrun(&[
        "recover",
        "crash/crashed-after-0.nanover.zip",
        "-o",
        s(&out),
        "--force",
    ])
    .expect_code(1);
    assert!(r.stderr.contains("NVZIP_EMPTY_FILE"), "{}", r.stderr);
    assert!(
        r.stderr.contains("nothing can be recovered"),
        "{}",
        r.stderr
    );
    // With --strict, a crashed file is refused with a hint.
    let r = zrun(&[
        "convert",
        "--strict",
        "crash/crashed-after-100.nanover.zip",
        "-o",
        s(&dir.path().join("x.jsonl")),
    ])
    .expect_code(1);
    assert!(
        r.stderr.contains("96 complete messages can be recovered"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("simrec recover"), "{}", r.stderr);
}

#[test]
fn detected_by_content_not_name() {
    let dir = tempfile::tempdir().unwrap();
    let renamed = dir.path().join("recording.bin");
    std::fs::copy(zdir().join("edge.nanover.zip"), &renamed).unwrap();
    let v = &run_in(
        dir.path(),
        &["inspect", "--format", "json", "recording.bin"],
    )
    .expect_code(0)
    .json_lines()[0];
    assert_eq!(v["format"], "nanover-zip");
    assert_eq!(v["messages"], 8);
}

#[test]
fn deflated_members_are_read_with_a_warning_and_convert_back_to_the_stored_original() {
    let r = zrun(&["validate", "deflated/small-deflated.nanover.zip"]).expect_code(0);
    assert!(
        r.stdout
            .starts_with("deflated/small-deflated.nanover.zip: ok (0 errors, 2 warnings, 0 info)"),
        "{}",
        r.stdout
    );
    assert_eq!(
        r.stdout.matches("warning NVZIP_COMPRESSED_MEMBER").count(),
        2
    );

    let r = zrun(&[
        "inspect",
        "--format",
        "json",
        "deflated/small-deflated.nanover.zip",
    ])
    .expect_code(0);
    let v = &r.json_lines()[0];
    assert_eq!(v["records"], 91);
    assert_eq!(v["zip"]["members"][0]["compression"], "deflated");
    assert_eq!(v["zip"]["members"][0]["crc_ok"], true);
    assert_eq!(v["zip"]["messages_member_bytes"], 48_980);

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("stored.nanover.zip");
    zrun(&[
        "convert",
        "deflated/small-deflated.nanover.zip",
        "-o",
        s(&out),
    ])
    .expect_code(0);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(zdir().join("small.nanover.zip")).unwrap()
    );
}

#[test]
fn a_damaged_deflate_stream_is_a_clean_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(zdir().join("deflated/small-deflated.nanover.zip")).unwrap();
    for b in &mut bytes[2000..2100] {
        *b ^= 0x5a;
    }
    let bad = dir.path().join("bad.nanover.zip");
    std::fs::write(&bad, bytes).unwrap();
    let r = zrun(&["validate", s(&bad)]).expect_code(1);
    assert!(
        r.stdout.contains("error NVZIP_BAD_ZIP_STRUCTURE at byte 46: member `messages.msgpack`: decompresses to 48904 bytes where the central directory says 48980"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_frame_without_an_index_goes_to_legacy_as_the_previous_index_plus_one() {
    let dir = tempfile::tempdir().unwrap();
    let traj = dir.path().join("edge.traj");
    let r = zrun(&["convert", "edge.nanover.zip", "-o", s(&traj)]).expect_code(3);
    assert!(
        r.stderr.contains(
            "│ frame   ┆ frame_index               ┆ frame without an index: written as the previous index + 1 ┆ 1       │"
        ),
        "{}",
        r.stderr
    );
    let r = zrun(&["cat", s(&traj)]).expect_code(0);
    let frames: Vec<&str> = r
        .stdout
        .lines()
        .map(|l| l.split(':').next().unwrap_or(""))
        .collect();
    assert_eq!(
        frames,
        [
            "0.000000s frame #0 reset",
            "0.001000s frame #1",
            "0.003000s frame #2",
            "0.004000s frame #3"
        ]
    );
}
