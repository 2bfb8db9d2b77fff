//! 3es end to end through the built binary: inspect against upstream `3esinfo`'s CSVs,
//! validate, convert, slice and merge, with exit codes, stdout and stderr.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util;
use crate::util::{parse_json_lines, run_in, s};

fn tes(name: &str) -> PathBuf {
    util::any_fixture("tes").join(name)
}

fn sim(args: &[&str]) -> util::Run {
    run_in(&tes(""), args)
}

/// `3.695KiB` → (bytes, rounding tolerance).
fn size(text: &str) -> (f64, f64) {
    for (unit, mult) in [("MiB", 1048576.0), ("KiB", 1024.0), ("B", 1.0)] {
        if let Some(n) = text.strip_suffix(unit) {
            let v: f64 = n.parse().unwrap();
            return (
                v * mult,
                if mult == 1.0 {
                    0.5
                } else {
                    0.0005 * mult + 0.5
                },
            );
        }
    }
    panic!("size {text}")
}

/// (routing, message) → (count, total bytes, payload bytes) from a 3esinfo CSV.
fn csv(name: &str) -> BTreeMap<(u64, u64), (u64, String, String)> {
    let text = std::fs::read_to_string(tes(name)).unwrap();
    text.lines()
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                (f[0].parse().unwrap(), f[1].parse().unwrap()),
                (f[4].parse().unwrap(), f[5].to_string(), f[6].to_string()),
            )
        })
        .collect()
}

fn inspect_json(file: &str) -> Value {
    let run = sim(&["inspect", "--format", "json", file]).expect_code(0);
    assert_eq!(run.stderr, "");
    let mut lines = parse_json_lines(&run.stdout);
    assert_eq!(lines.len(), 1);
    lines.remove(0)
}

fn assert_matches_3esinfo(file: &str, csv_name: &str) {
    let o = inspect_json(file);
    let want = csv(csv_name);
    let got: BTreeMap<(u64, u64), (u64, u64, u64)> = o["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                (
                    m["routing_id"].as_u64().unwrap(),
                    m["message_id"].as_u64().unwrap(),
                ),
                (
                    m["count"].as_u64().unwrap(),
                    m["bytes"].as_u64().unwrap(),
                    m["payload_bytes"].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{file}: (routing, message) pairs"
    );
    for (key, (count, total, payload)) in &want {
        let (c, t, p) = got[key];
        assert_eq!(c, *count, "{file} {key:?} count");
        for (mine, theirs, what) in [(t, total, "total"), (p, payload, "payload")] {
            let (v, tol) = size(theirs);
            assert!(
                (mine as f64 - v).abs() <= tol,
                "{file} {key:?} {what} bytes: simrec {mine}, 3esinfo {theirs}"
            );
        }
    }
    let total: u64 = want.values().map(|v| v.0).sum();
    assert_eq!(
        o["records"], total,
        "{file}: records = messages after expanding collated packets"
    );
    assert_eq!(o["format"], "3es");
    assert_eq!(o["format_version"], "0.4");
}

#[test]
fn small_plain_counts_equal_3esinfo() {
    assert_matches_3esinfo("small_plain.3es", "small_plain.3esinfo.csv");
}

#[test]
fn small_collate_counts_equal_3esinfo() {
    assert_matches_3esinfo("small_collate.3es", "small_collate.3esinfo.csv");
}

#[test]
fn small_compress_counts_equal_3esinfo() {
    assert_matches_3esinfo("small_compress.3es", "small_compress.3esinfo.csv");
}

#[test]
fn medium_collate_counts_equal_3esinfo() {
    assert_matches_3esinfo("medium_collate.3es", "medium_collate.3esinfo.csv");
}

/// 3esinfo stops after the two header packets of a whole-file gzip capture (its CSV says
/// so); the content is small_plain's, so its counts must be small_plain's CSV.
#[test]
fn small_filegzip_counts_equal_small_plain_3esinfo() {
    let theirs = std::fs::read_to_string(tes("small_filegzip.3esinfo.csv")).unwrap();
    assert!(theirs.contains("Failed to load packet"));
    assert_matches_3esinfo("small_filegzip.3es", "small_plain.3esinfo.csv");
    let o = inspect_json("small_filegzip.3es");
    assert_eq!(o["compression"], "whole-file gzip");
    assert_eq!(o["file_gzip_offset"], 100);
    assert_eq!(o["findings"]["infos"], 1);
}

#[test]
fn inspect_json_frames_duration_and_scene() {
    let o = inspect_json("small_compress.3es");
    assert_eq!(o["frames"], 50);
    assert_eq!(o["frame_count_message"], 50);
    assert_eq!(o["frame_count_differs"], false);
    // 50 frames of 33 ms (spec §7: 1/30 s truncated to 33 ms).
    assert_eq!(o["capture_duration_ns"], 1_650_000_000u64);
    assert_eq!(o["end_ns"], 1_617_000_000u64);
    assert_eq!(o["compression"], "collated + gzip");
    assert_eq!(o["time_unit_us"], 1000);
    let cats: Vec<&str> = o["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(cats, ["Primitives", "Text", "Points", "Mesh", "Multi"]);
    let medium = inspect_json("medium_collate.3es");
    assert_eq!(medium["frames"], 61);
    assert_eq!(medium["compression"], "collated");
    // 150 spheres and 150 boxes created, 150 + 150 destroyed.
    assert_eq!(medium["shapes_alive"], serde_json::json!([]));
}

#[test]
fn inspect_text_lists_frames_and_messages() {
    let run = sim(&["inspect", "small_plain.3es"]).expect_code(0);
    assert!(run.stdout.contains("3es (version 0.4)"), "{}", run.stdout);
    assert!(run.stdout.contains("│ frames"), "{}", run.stdout);
    assert!(
        run.stdout.contains("1.650000s (time unit 1000 µs)"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("2 Control"), "{}", run.stdout);
    assert!(run.stdout.contains("1 Frame"), "{}", run.stdout);
    assert_eq!(run.stderr, "");
}

#[test]
fn validate_fixtures_ok_and_json() {
    for f in [
        "small_plain.3es",
        "small_collate.3es",
        "small_compress.3es",
        "medium_collate.3es",
    ] {
        let run = sim(&["validate", f]).expect_code(0);
        assert_eq!(
            run.stdout,
            format!("{f}: ok (0 errors, 0 warnings, 0 info)\n")
        );
    }
    let run = sim(&["validate", "--format", "json", "small_filegzip.3es"]).expect_code(0);
    let o = &run.json_lines()[0];
    assert_eq!(o["ok"], true);
    assert_eq!(o["findings"][0]["code"], "TES_FILE_GZIP");
    assert_eq!(o["findings"][0]["offset"], 100);
}

#[test]
fn validate_reports_a_flipped_crc_with_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(tes("small_plain.3es")).unwrap();
    // The third packet (the first Category) starts at 100; flip a payload byte.
    bytes[120] ^= 0xff;
    let bad = dir.path().join("bad.3es");
    std::fs::write(&bad, &bytes).unwrap();
    let run = run_in(dir.path(), &["validate", "bad.3es"]).expect_code(1);
    assert!(
        run.stdout
            .starts_with("bad.3es: FAILED (1 error, 0 warnings"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("TES_CRC_MISMATCH at byte 100, record 2"),
        "{}",
        run.stdout
    );
    // `inspect` without --deep walks headers and does not look at CRCs; --deep does.
    let o = &run_in(dir.path(), &["inspect", "--format", "json", "bad.3es"])
        .expect_code(0)
        .json_lines()[0];
    assert_eq!(
        (o["records"].as_u64(), o["findings"]["errors"].as_u64()),
        (Some(416), Some(0))
    );
    let o = &run_in(
        dir.path(),
        &["inspect", "--deep", "--format", "json", "bad.3es"],
    )
    .expect_code(3)
    .json_lines()[0];
    assert_eq!(
        (o["records"].as_u64(), o["findings"]["errors"].as_u64()),
        (Some(416), Some(1))
    );
    // Strict reading (convert --strict) stops at it, exit 1, and names the file.
    let run = run_in(
        dir.path(),
        &["convert", "--strict", "bad.3es", "-o", "out.3es"],
    )
    .expect_code(1);
    assert!(
        run.stderr.contains("bad.3es: TES_CRC_MISMATCH at byte 100"),
        "{}",
        run.stderr
    );
    assert!(!dir.path().join("out.3es").exists());
}

#[test]
fn validate_reports_inserted_bytes_as_a_skipped_span() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(tes("small_plain.3es")).unwrap();
    bytes.splice(100..100, *b"garbage!");
    std::fs::write(dir.path().join("ins.3es"), &bytes).unwrap();
    let run = run_in(dir.path(), &["validate", "--format", "json", "ins.3es"]).expect_code(1);
    let o = &run.json_lines()[0];
    let codes: Vec<(&str, u64)> = o["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["code"].as_str().unwrap(), f["offset"].as_u64().unwrap()))
        .collect();
    assert_eq!(codes, [("TES_BAD_MARKER", 100), ("TES_SKIPPED_BYTES", 100)]);
    assert!(o["findings"][1]["message"]
        .as_str()
        .unwrap()
        .starts_with("8 bytes skipped"));
    // Nothing else is lost: the counts are still 3esinfo's.
    let run = run_in(dir.path(), &["inspect", "--format", "json", "ins.3es"]).expect_code(3);
    assert_eq!(run.json_lines()[0]["records"], 416);
    assert_eq!(run.json_lines()[0]["findings"]["errors"], 2);
}

#[test]
fn empty_and_foreign_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.3es"), b"").unwrap();
    let run = run_in(dir.path(), &["inspect", "empty.3es"]).expect_code(1);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains("TES_EMPTY_FILE at byte 0"),
        "{}",
        run.stderr
    );
    std::fs::write(dir.path().join("text.3es"), b"hello world, not a capture").unwrap();
    let run = run_in(dir.path(), &["validate", "text.3es"]).expect_code(1);
    assert!(
        run.stdout.contains("TES_BAD_MARKER at byte 0"),
        "{}",
        run.stdout
    );
}

#[test]
fn detection_is_by_content_not_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(tes("small_compress.3es"), dir.path().join("capture.bin")).unwrap();
    let run = run_in(dir.path(), &["inspect", "--format", "json", "capture.bin"]).expect_code(0);
    assert_eq!(run.json_lines()[0]["format"], "3es");
    assert_eq!(run.json_lines()[0]["records"], 416);
    let _ = s(dir.path());
}

#[test]
fn convert_same_format_in_each_scheme_and_to_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let src = tes("small_compress.3es");
    let run = run_in(
        dir.path(),
        &[
            "convert",
            s(&src),
            "-o",
            "plain.3es",
            "--tes-compression",
            "plain",
        ],
    )
    .expect_code(0);
    assert_eq!(run.stderr, "wrote 416 records to plain.3es\n");
    assert_eq!(
        std::fs::read(dir.path().join("plain.3es")).unwrap(),
        std::fs::read(tes("small_plain.3es")).unwrap()
    );
    let run = run_in(dir.path(), &["convert", s(&src), "-o", "default.3es"]).expect_code(0);
    assert_eq!(run.stdout, "");
    let o = parse_json_lines(
        &run_in(dir.path(), &["inspect", "--format", "json", "default.3es"])
            .expect_code(0)
            .stdout,
    )
    .remove(0);
    assert_eq!(o["compression"], "collated + gzip");
    assert_eq!(o["records"], 416);
    // An existing output is refused without --force, and a bad scheme: both usage (2).
    run_in(dir.path(), &["convert", s(&src), "-o", "default.3es"]).expect_code(2);
    let run = run_in(
        dir.path(),
        &[
            "convert",
            s(&src),
            "-o",
            "x.3es",
            "--tes-compression",
            "zip",
        ],
    )
    .expect_code(2);
    assert!(run.stderr.contains("invalid value 'zip'"), "{}", run.stderr);
    // JSON Lines: one line per message, frame and time from the frames.
    run_in(dir.path(), &["convert", s(&src), "-o", "all.jsonl"]).expect_code(0);
    let lines = util::read_jsonl(&dir.path().join("all.jsonl"));
    assert_eq!(lines.len(), 416);
    let last_frame = lines
        .iter()
        .rev()
        .find(|l| l["values"]["message"] == "Frame")
        .unwrap();
    assert_eq!(last_frame["frame"], 49);
    assert_eq!(last_frame["time_ns"], 1_617_000_000u64);
    assert_eq!(last_frame["channel"], "3es/control");
}

#[test]
fn slice_by_frames_and_time_plays_alone() {
    let dir = tempfile::tempdir().unwrap();
    let src = tes("small_plain.3es");
    let run = run_in(
        dir.path(),
        &["slice", s(&src), "--frames", "20..30", "-o", "cut.3es"],
    )
    .expect_code(0);
    // A capture's time starts at 0: the window is rebased, and stderr says so.
    assert_eq!(
        run.stderr,
        "note: a 3es capture's time is the sum of its frames' durations, from 0: the window is rebased to start at 0 (as --rebase)\n\
         wrote 115 records to cut.3es\n"
    );
    let run = run_in(dir.path(), &["validate", "cut.3es"]).expect_code(0);
    assert_eq!(run.stdout, "cut.3es: ok (0 errors, 0 warnings, 0 info)\n");
    let o = parse_json_lines(
        &run_in(dir.path(), &["inspect", "--format", "json", "cut.3es"])
            .expect_code(0)
            .stdout,
    )
    .remove(0);
    assert_eq!(o["frames"], 10);
    assert_eq!(o["frame_count_message"], 10);
    assert_eq!(o["capture_duration_ns"], 330_000_000u64);
    // The five categories and the mesh resource come first, rebuilt.
    let count = |r: u64, m: u64| {
        o["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["routing_id"] == r && x["message_id"] == m)
            .map(|x| x["count"].as_u64().unwrap())
    };
    assert_eq!(count(6, 0), Some(5));
    assert_eq!(count(4, 2), Some(1));
    // By time: frames starting in [0.5 s, 1 s) are frames 16..31 (33 ms each).
    run_in(
        dir.path(),
        &[
            "slice",
            s(&src),
            "--start",
            "0.5s",
            "--end",
            "1s",
            "-o",
            "t.3es",
        ],
    )
    .expect_code(0);
    let o = parse_json_lines(
        &run_in(dir.path(), &["inspect", "--format", "json", "t.3es"])
            .expect_code(0)
            .stdout,
    )
    .remove(0);
    assert_eq!(o["frames"], 15);
}

/// Per (routing, message) counts of `inspect --format json`.
fn message_counts(o: &Value) -> BTreeMap<(u64, u64), u64> {
    o["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                (
                    m["routing_id"].as_u64().unwrap(),
                    m["message_id"].as_u64().unwrap(),
                ),
                m["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn merge_remaps_ids_and_keeps_every_message() {
    let dir = tempfile::tempdir().unwrap();
    let plain = tes("small_plain.3es");
    // With itself: every id collides.
    let run = run_in(
        dir.path(),
        &["merge", s(&plain), s(&plain), "-o", "both.3es"],
    )
    .expect_code(0);
    // 2 × 416 messages, less the second ServerInfo, both FrameCounts and 50 of the 100
    // Frames (the two inputs' frames start at the same times).
    assert_eq!(run.stderr, "wrote 779 records to both.3es\n");
    let run = run_in(dir.path(), &["validate", "both.3es"]).expect_code(0);
    assert_eq!(run.stdout, "both.3es: ok (0 errors, 0 warnings, 0 info)\n");
    let o = parse_json_lines(
        &run_in(dir.path(), &["inspect", "--format", "json", "both.3es"])
            .expect_code(0)
            .stdout,
    )
    .remove(0);
    assert_eq!(o["records"], 780);
    assert_eq!(o["frames"], 50);
    assert_eq!(o["frame_count_message"], 50);
    assert_eq!(o["capture_duration_ns"], 1_650_000_000u64);
    let mut want: BTreeMap<(u64, u64), u64> = csv("small_plain.3esinfo.csv")
        .into_iter()
        .map(|(k, v)| (k, 2 * v.0))
        .collect();
    want.insert((1, 0), 1);
    want.insert((2, 1), 50);
    want.insert((2, 3), 1);
    assert_eq!(message_counts(&o), want);
    // Twice the shapes alive at the end, under distinct ids.
    let single = inspect_json("small_plain.3es");
    let alive = |o: &Value| -> Vec<(u64, u64)> {
        o["shapes_alive"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                (
                    a["routing_id"].as_u64().unwrap(),
                    a["count"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let doubled: Vec<(u64, u64)> = alive(&single)
        .into_iter()
        .map(|(r, n)| (r, 2 * n))
        .collect();
    assert!(!doubled.is_empty());
    assert_eq!(alive(&o), doubled);

    // With a slice of itself (frames 20..30): its world state's shapes collide too.
    run_in(
        dir.path(),
        &["slice", s(&plain), "--frames", "20..30", "-o", "cut.3es"],
    )
    .expect_code(0);
    let cut = inspect_json_in(dir.path(), "cut.3es");
    let run = run_in(
        dir.path(),
        &[
            "merge",
            s(&plain),
            "cut.3es",
            "-o",
            "m.3es",
            "--tes-compression",
            "plain",
        ],
    )
    .expect_code(0);
    // 416 + 116 messages, less both ServerInfos and FrameCounts and the 60 Frames, plus
    // one ServerInfo and 50 Frames of the merged timeline.
    assert_eq!(run.stderr, "wrote 519 records to m.3es\n");
    let run = run_in(dir.path(), &["validate", "m.3es"]).expect_code(0);
    assert_eq!(run.stdout, "m.3es: ok (0 errors, 0 warnings, 0 info)\n");
    let o = inspect_json_in(dir.path(), "m.3es");
    assert_eq!(o["frames"], 50);
    assert_eq!(o["compression"], "none");
    let mut want: BTreeMap<(u64, u64), u64> = csv("small_plain.3esinfo.csv")
        .into_iter()
        .map(|(k, v)| (k, v.0))
        .collect();
    for (k, v) in message_counts(&cut) {
        *want.entry(k).or_insert(0) += v;
    }
    want.insert((1, 0), 1);
    want.insert((2, 1), 50);
    want.insert((2, 3), 1);
    assert_eq!(message_counts(&o), want);
    assert_eq!(o["records"], want.values().sum::<u64>());
}

fn inspect_json_in(dir: &Path, file: &str) -> Value {
    parse_json_lines(
        &run_in(dir, &["inspect", "--format", "json", file])
            .expect_code(0)
            .stdout,
    )
    .remove(0)
}

#[test]
fn merge_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let plain = tes("small_plain.3es");
    run_in(dir.path(), &["merge", s(&plain), s(&plain), "-o", "m.3es"]).expect_code(0);
    // An existing output is kept without --force.
    run_in(dir.path(), &["merge", s(&plain), s(&plain), "-o", "m.3es"]).expect_code(2);
    run_in(
        dir.path(),
        &["merge", s(&plain), s(&plain), "-o", "m.3es", "--force"],
    )
    .expect_code(0);
    // With --strict a damaged input stops the merge, names the file, writes nothing.
    let mut bytes = std::fs::read(&plain).unwrap();
    bytes[120] ^= 0xff;
    std::fs::write(dir.path().join("bad.3es"), &bytes).unwrap();
    let run = run_in(
        dir.path(),
        &["merge", "--strict", s(&plain), "bad.3es", "-o", "x.3es"],
    )
    .expect_code(1);
    assert!(
        run.stderr.contains("bad.3es: TES_CRC_MISMATCH at byte 100"),
        "{}",
        run.stderr
    );
    assert!(!dir.path().join("x.3es").exists());
    // A missing input.
    run_in(dir.path(), &["merge", s(&plain), "nope.3es", "-o", "y.3es"]).expect_code(1);
}

/// Four inputs, one per storage scheme (plain, collated+gzip, collated, whole-file gzip),
/// with different lengths: every message arrives, frames are the union of their starts.
#[test]
fn merge_of_four_captures_in_every_scheme() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        ("small_plain.3es", "small_plain.3esinfo.csv"),
        ("small_compress.3es", "small_compress.3esinfo.csv"),
        ("medium_collate.3es", "medium_collate.3esinfo.csv"),
        // 3esinfo cannot read past the header of whole-file gzip; its content is small_plain's.
        ("small_filegzip.3es", "small_plain.3esinfo.csv"),
    ];
    let paths: Vec<PathBuf> = names.iter().map(|(n, _)| tes(n)).collect();
    let mut args = vec!["merge"];
    args.extend(paths.iter().map(|p| s(p)));
    args.extend(["-o", "four.3es"]);
    let run = run_in(dir.path(), &args).expect_code(0);
    // 3 × 416 + 18964 messages, less 4 ServerInfos, 4 FrameCounts and 211 Frames, plus one
    // ServerInfo and the 61 Frames of the longest input (all frames last 33 ms).
    assert_eq!(run.stderr, "wrote 20055 records to four.3es\n");
    let run = run_in(dir.path(), &["validate", "four.3es"]).expect_code(0);
    assert_eq!(run.stdout, "four.3es: ok (0 errors, 0 warnings, 0 info)\n");
    let o = inspect_json_in(dir.path(), "four.3es");
    assert_eq!(o["frames"], 61);
    assert_eq!(o["frame_count_message"], 61);
    assert_eq!(o["capture_duration_ns"], 2_013_000_000u64);
    let mut want: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    for (_, c) in names {
        for (k, v) in csv(c) {
            *want.entry(k).or_insert(0) += v.0;
        }
    }
    want.insert((1, 0), 1);
    want.insert((2, 1), 61);
    want.insert((2, 3), 1);
    assert_eq!(message_counts(&o), want);
    assert_eq!(o["records"], 20056);
}

#[test]
fn tes_compression_for_another_output_format_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.jsonl");
    let r = sim(&[
        "convert",
        "small_plain.3es",
        "-o",
        s(&out),
        "--tes-compression",
        "plain",
    ])
    .expect_code(2);
    assert_eq!(
        r.stderr,
        "error: --tes-compression applies to mcap, 3es, xrec output; this output is jsonl\n"
    );
    assert!(!out.exists());
}
