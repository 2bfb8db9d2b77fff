//! `.icarec` through the built binary: inspect (JSON values and the text table), validate
//! (codes, offsets, frames, exit codes), convert directory → archive → directory (byte for
//! byte) and recover (the partial last frame dropped, exit 3).

use std::path::PathBuf;

use serde_json::Value;

use crate::util;
use crate::util::{run_in, s};

fn fixture(rel: &str) -> PathBuf {
    util::any_fixture("icarec").join(rel)
}

#[test]
fn inspect_json_reports_the_a10_values() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["a2.icarec", "a2.icarec.tar"] {
        let r = run_in(
            tmp.path(),
            &["inspect", "--format", "json", s(&fixture(name))],
        )
        .expect_code(0);
        assert_eq!(r.stderr, "");
        let v = &r.json_lines()[0];
        assert_eq!(v["format"], "icarec");
        assert_eq!(v["format_version"], "1.0.0");
        assert_eq!(
            v["origin"],
            serde_json::json!({"epoch": "2026-03-01T12:00:00Z", "system": "UTC"})
        );
        assert_eq!(v["records"], 7);
        assert_eq!(
            (v["start_ns"].as_i64(), v["end_ns"].as_i64()),
            (Some(10_000_000), Some(30_000_000))
        );
        assert_eq!(v["duration_ns"], 20_000_000);
        let channels = crate::util::channel_counts(v);
        assert_eq!(
            channels,
            [
                ("Vehicle.Nav.position", 3),
                ("Vehicle.Aero.alpha", 3),
                ("Vehicle.Mass.dry", 1)
            ]
        );
        assert_eq!(v["signals"][0]["type"], "Vec3<double>");
        assert_eq!(v["signals"][0]["units"], "m");
        assert_eq!(v["signals"][1]["offset"], 24);
        assert_eq!(v["signals"][2]["lifecycle"], "static");
        assert_eq!(v["signals"][2]["size"], 4);
        assert_eq!(v["time_system"]["system"], "UTC");
        assert_eq!(v["frames"]["count"], 3);
        assert_eq!(v["frames"]["frame_bytes"], 40);
        assert_eq!(v["dt"]["steps"], 2);
        assert_eq!(v["checksum"]["status"], "ok");
        assert_eq!(v["completion"]["complete"], true);
        assert_eq!(v["findings"]["errors"], 0);
    }
    // MET without an epoch: origin null, times from t = 0.
    let r = run_in(
        tmp.path(),
        &["inspect", "--format", "json", s(&fixture("types.icarec"))],
    )
    .expect_code(0);
    let v = &r.json_lines()[0];
    assert_eq!(v["origin"], Value::Null);
    assert_eq!(v["records"], 8 * 2 + 4);
    assert_eq!(
        (v["start_ns"].as_i64(), v["end_ns"].as_i64()),
        (Some(500_000_000), Some(1_000_000_000))
    );
    assert_eq!(
        v["time_system"],
        serde_json::json!({"system": "MET", "epoch": null})
    );
    assert_eq!(v["layout"]["form"], "directory");
    assert_eq!(v["components"][0]["state_size"], 13);
}

#[test]
fn inspect_text_shows_signals_time_and_checksum() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_in(tmp.path(), &["inspect", s(&fixture("a2.icarec.tar"))]).expect_code(0);
    for want in [
        "icarec (version 1.0.0)",
        "ustar archive (schema.json 681 B, static_signals.bin 4 B, dynamic_signals.bin 120 B, metadata.json 438 B)",
        "Vehicle.Nav.position Vec3<double> [m] dynamic @0+24",
        "Vehicle.Mass.dry float [kg] static @0+4",
        "UTC, epoch 2026-03-01T12:00:00Z",
        "3 of 40 bytes (time + 32-byte dynamic block); static block 4 bytes; t = 0.01 … 0.03 s",
        "ok (sha256:dfc5cf06739db1309b73341f945ee3ff0053ce3198ca2f634751d3ee0798efc9)",
    ] {
        assert!(r.stdout.contains(want), "{want}\n{}", r.stdout);
    }
}

#[test]
fn validate_names_the_part_offset_and_frame_and_fails_on_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let cut = tmp.path().join("cut.icarec");
    util::copy_tree(&fixture("a2.icarec"), &cut);
    let dynamic = cut.join("dynamic_signals.bin");
    let bytes = std::fs::read(&dynamic).unwrap();
    std::fs::write(&dynamic, &bytes[..97]).unwrap();
    let r = run_in(tmp.path(), &["validate", "cut.icarec"]).expect_code(1);
    assert_eq!(r.stderr, "");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "cut.icarec: FAILED (5 errors, 0 warnings, 0 info)"
    );
    assert_eq!(
        lines[1],
        "  error ICAREC_TRUNCATED_FRAME at byte 80, record 2: dynamic_signals.bin frame 2 at byte 80: the last frame is partial: 17 of its 40 bytes; it is not read"
    );
    assert!(r.stdout.contains("ICAREC_COUNT_MISMATCH: metadata.json: frame_count is 3 but dynamic_signals.bin holds 2 whole frames"));

    // JSON: the finding's offset and record.
    let r = run_in(tmp.path(), &["validate", "--format", "json", "cut.icarec"]).expect_code(1);
    let v = &r.json_lines()[0];
    let f = &v["findings"][0];
    assert_eq!(f["code"], "ICAREC_TRUNCATED_FRAME");
    assert_eq!(
        (f["offset"].as_u64(), f["record"].as_u64()),
        (Some(80), Some(2))
    );

    // Not finished cleanly: a warning, exit 0; --strict makes it an error.
    let live = tmp.path().join("live.icarec");
    util::copy_tree(&fixture("a2.icarec"), &live);
    std::fs::write(live.join("metadata.json"), b"{\"complete\": false}").unwrap();
    let r = run_in(tmp.path(), &["validate", "live.icarec"]).expect_code(0);
    assert_eq!(
        r.stdout.lines().next(),
        Some("live.icarec: ok (0 errors, 1 warning, 0 info)")
    );
    assert!(r.stdout.contains("warning ICAREC_INCOMPLETE: metadata.json: complete is false: the recording was not finished cleanly"));
    assert!(!r.stdout.contains("ICAREC_METADATA_KEY"));
    run_in(tmp.path(), &["validate", "--strict", "live.icarec"]).expect_code(1);
}

#[test]
fn validate_deep_names_non_finite_values() {
    let tmp = tempfile::tempdir().unwrap();
    let nan = tmp.path().join("nan.icarec");
    util::copy_tree(&fixture("a2.icarec"), &nan);
    let dynamic = nan.join("dynamic_signals.bin");
    let mut bytes = std::fs::read(&dynamic).unwrap();
    // Frame 1's alpha (byte 40 + 8 + 24).
    bytes[72..80].copy_from_slice(&f64::NAN.to_le_bytes());
    std::fs::write(&dynamic, &bytes).unwrap();
    std::fs::remove_file(nan.join("metadata.json")).unwrap();
    let r = run_in(tmp.path(), &["validate", "nan.icarec"]).expect_code(0);
    assert!(!r.stdout.contains("ICAREC_NONFINITE_VALUE"), "{}", r.stdout);
    let r = run_in(tmp.path(), &["validate", "--deep", "nan.icarec"]).expect_code(0);
    assert!(
        r.stdout.contains("warning ICAREC_NONFINITE_VALUE at byte 72, record 1: Vehicle.Aero.alpha is not finite at t = 0.02 s (frame 1); 1 non-finite values of this component in all"),
        "{}",
        r.stdout
    );
}

#[test]
fn convert_directory_to_archive_to_directory_keeps_every_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let src = fixture("types.icarec");
    let r = run_in(tmp.path(), &["convert", s(&src), "-o", "t.icarec.tar"]).expect_code(0);
    assert_eq!(r.stdout, "");
    assert_eq!(r.stderr, "wrote 20 records to t.icarec.tar\n");
    assert!(tmp.path().join("t.icarec.tar").is_file());
    let r = run_in(
        tmp.path(),
        &["convert", "t.icarec.tar", "-o", "back.icarec"],
    )
    .expect_code(0);
    assert_eq!(r.stderr, "wrote 20 records to back.icarec\n");
    for part in ["static_signals.bin", "dynamic_signals.bin"] {
        assert_eq!(
            std::fs::read(tmp.path().join("back.icarec").join(part)).unwrap(),
            std::fs::read(src.join(part)).unwrap(),
            "{part}"
        );
    }
    // --icarec-form overrides the name; an existing output needs --force.
    run_in(
        tmp.path(),
        &[
            "convert",
            "back.icarec",
            "--icarec-form",
            "tar",
            "-o",
            "x.icarec",
        ],
    )
    .expect_code(0);
    assert!(tmp.path().join("x.icarec").is_file());
    let r = run_in(
        tmp.path(),
        &["convert", "t.icarec.tar", "-o", "back.icarec"],
    )
    .expect_code(2);
    assert!(
        r.stderr.contains("exists (use --force to overwrite)"),
        "{}",
        r.stderr
    );
    run_in(
        tmp.path(),
        &["convert", "--force", "t.icarec.tar", "-o", "back.icarec"],
    )
    .expect_code(0);
    // A bare directory is still Elodin's.
    let r = run_in(
        tmp.path(),
        &[
            "convert",
            "--dry-run",
            s(&fixture("a2.icarec")),
            "-o",
            "out/",
        ],
    );
    assert!(
        r.stdout
            .starts_with("7 records would be written as elodin-db\n"),
        "{}",
        r.stdout
    );
    assert!(!tmp.path().join("out/schema.json").exists());
}

#[test]
fn recover_drops_the_partial_frame_and_writes_complete_metadata() {
    let tmp = tempfile::tempdir().unwrap();
    let cut = tmp.path().join("cut.icarec");
    util::copy_tree(&fixture("a2.icarec"), &cut);
    let dynamic = cut.join("dynamic_signals.bin");
    let bytes = std::fs::read(&dynamic).unwrap();
    std::fs::write(&dynamic, &bytes[..97]).unwrap();
    std::fs::write(
        cut.join("metadata.json"),
        b"{\"complete\": false, \"scenario\": \"crash\"}",
    )
    .unwrap();
    let r = run_in(
        tmp.path(),
        &["recover", "cut.icarec", "-o", "fixed.icarec.tar"],
    )
    .expect_code(3);
    assert_eq!(r.stdout, "");
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines[0], "cut.icarec: kept 5 records in fixed.icarec.tar");
    assert_eq!(
        lines[1],
        "cut.icarec: what was dropped, skipped or repaired:"
    );
    assert!(
        lines[2].contains("ICAREC_TRUNCATED_FRAME at byte 80, record 2"),
        "{}",
        lines[2]
    );
    let r = run_in(tmp.path(), &["validate", "fixed.icarec.tar"]).expect_code(0);
    assert_eq!(
        r.stdout,
        "fixed.icarec.tar: ok (0 errors, 0 warnings, 0 info)\n"
    );
    let r = run_in(
        tmp.path(),
        &["inspect", "--format", "json", "fixed.icarec.tar"],
    )
    .expect_code(0);
    let v = &r.json_lines()[0];
    assert_eq!(v["frames"]["count"], 2);
    assert_eq!(v["completion"]["complete"], true);
    let mut archive =
        tar::Archive::new(std::fs::File::open(tmp.path().join("fixed.icarec.tar")).unwrap());
    for e in archive.entries().unwrap() {
        let mut e = e.unwrap();
        let name = e.path().unwrap().to_string_lossy().into_owned();
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut e, &mut data).unwrap();
        match name.as_str() {
            "dynamic_signals.bin" => assert_eq!(data, bytes[..80]),
            "metadata.json" => {
                let m: Value = serde_json::from_slice(&data).unwrap();
                assert_eq!(m["complete"], true);
                assert_eq!(m["frame_count"], 2);
                assert_eq!(m["scenario"], "crash");
                assert_eq!(m["t_last"], 0.02);
            }
            _ => {}
        }
    }
}

/// Spec §A14: a slice keeps the recording's own times, copies `schema.json` byte for byte
/// (the fixture's lacks the keys simrec adds: what they would say is what it implies) and
/// `static_signals.bin` unchanged, and the frames of the window verbatim.
#[test]
fn slice_by_binary_search_copies_schema_and_frames_verbatim() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("w.icarec")).unwrap();
    for part in [
        "schema.json",
        "static_signals.bin",
        "dynamic_signals.bin",
        "metadata.json",
    ] {
        std::fs::copy(
            fixture("a2.icarec").join(part),
            tmp.path().join("w.icarec").join(part),
        )
        .unwrap();
    }
    // [0.015, 0.03) holds frame 1 only.
    let r = run_in(
        tmp.path(),
        &[
            "slice", "w.icarec", "--start", "0.015", "--end", "0.03", "-o", "s.icarec",
        ],
    )
    .expect_code(0);
    assert_eq!(r.stderr, "wrote 3 records to s.icarec\n");
    let read = |p: &str| std::fs::read(tmp.path().join(p)).unwrap();
    assert_eq!(
        read("s.icarec/schema.json"),
        read("w.icarec/schema.json"),
        "byte for byte"
    );
    assert_eq!(
        read("s.icarec/dynamic_signals.bin"),
        read("w.icarec/dynamic_signals.bin")[40..80]
    );
    assert_eq!(
        read("s.icarec/static_signals.bin"),
        read("w.icarec/static_signals.bin")
    );
    let m: Value = serde_json::from_slice(&read("s.icarec/metadata.json")).unwrap();
    assert_eq!(
        m["source"],
        serde_json::json!({"kind": "slice", "from": "w.icarec", "t0": 0.015, "t1": 0.03})
    );
    assert_eq!(
        (m["frame_count"].as_u64(), m["t_first"].as_f64()),
        (Some(1), Some(0.02))
    );
    run_in(tmp.path(), &["validate", "s.icarec"]).expect_code(0);
    let r = run_in(tmp.path(), &["inspect", "--format", "json", "s.icarec"]).expect_code(0);
    let v = &r.json_lines()[0];
    assert_eq!(v["origin"]["epoch"], "2026-03-01T12:00:00Z");
    assert_eq!(v["start_ns"], 20_000_000);

    // Frames, rebased: the epoch moves to the slice's start.
    run_in(
        tmp.path(),
        &[
            "slice",
            "w.icarec",
            "--start",
            "#1",
            "--rebase",
            "-o",
            "r.icarec.tar",
        ],
    )
    .expect_code(0);
    let r = run_in(tmp.path(), &["inspect", "--format", "json", "r.icarec.tar"]).expect_code(0);
    let v = &r.json_lines()[0];
    assert_eq!(v["origin"]["epoch"], "2026-03-01T12:00:00.02Z");
    assert_eq!(
        (v["start_ns"].as_i64(), v["end_ns"].as_i64()),
        (Some(0), Some(10_000_000))
    );
    assert_eq!(v["records"], 1 + 2 * 2);

    // A frame that does not exist is a usage error; nothing is written.
    let r = run_in(
        tmp.path(),
        &["slice", "w.icarec", "--start", "#3", "-o", "n.icarec"],
    )
    .expect_code(2);
    assert!(
        r.stderr
            .contains("frame #3 does not exist: the recording has 3 frames (#0..#2)"),
        "{}",
        r.stderr
    );
    assert!(!tmp.path().join("n.icarec").exists());
}

#[test]
fn validate_deep_discontinuity_reports_jumps_and_needs_deep() {
    let tmp = tempfile::tempdir().unwrap();
    let a2 = fixture("a2.icarec");
    let r = run_in(
        tmp.path(),
        &[
            "validate",
            "--deep",
            "--discontinuity",
            "0.3",
            "--format",
            "json",
            s(&a2),
        ],
    )
    .expect_code(0);
    let v = &r.json_lines()[0];
    let jumps: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "ICAREC_DISCONTINUITY")
        .collect();
    // Each position component twice by 0.5, alpha once by 0.375 (0.25 is not above 0.3).
    assert_eq!(jumps.len(), 4, "{v}");
    assert_eq!(jumps[3]["severity"], "info");
    assert_eq!(jumps[3]["record"], 2);
    let r = run_in(tmp.path(), &["validate", "--discontinuity", "0.3", s(&a2)]).expect_code(2);
    assert!(r.stderr.contains("--deep"), "{}", r.stderr);
    run_in(
        tmp.path(),
        &["validate", "--deep", "--discontinuity", "-1", s(&a2)],
    )
    .expect_code(2);
}

/// Issue 27, item H: a signal named "" is an error. It validated (exit 0), and an XREC
/// converted from it failed `XREC_EMPTY_TYPE`. Now validate fails; convert reads the
/// recording without it, as damage (exit 3), into an XREC that validates, and `--strict`
/// refuses it, writing nothing.
#[test]
fn an_empty_signal_name_is_an_error() {
    let dir = fixture("hostile");
    let r = run_in(&dir, &["validate", "empty-name.icarec"]).expect_code(1);
    assert_eq!(
        r.stdout,
        "empty-name.icarec: FAILED (1 error, 0 warnings, 0 info)\n  error ICAREC_SIGNAL_FIELD: schema.json: a signal's `name` is empty\n"
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x.xrec");
    let r = run_in(&dir, &["convert", "empty-name.icarec", "-o", s(&out)]).expect_code(3);
    assert!(
        r.stderr
            .contains("error ICAREC_SIGNAL_FIELD: schema.json: a signal's `name` is empty"),
        "{}",
        r.stderr
    );
    let r = run_in(&dir, &["validate", s(&out)]).expect_code(0);
    assert!(r.stdout.contains(": ok (0 errors"), "{}", r.stdout);
    let strict = tmp.path().join("strict.xrec");
    let r = run_in(
        &dir,
        &["convert", "--strict", "empty-name.icarec", "-o", s(&strict)],
    )
    .expect_code(1);
    assert!(r.stderr.contains("ICAREC_SIGNAL_FIELD"), "{}", r.stderr);
    assert!(!strict.exists());
}
