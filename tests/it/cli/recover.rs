//! `simrec recover`, end to end (spec §10): exit 0 when every record was intact, 3 when
//! anything was dropped, skipped or repaired, 1 when nothing can be recovered; what is kept is
//! byte for byte what the intact records were.

use crate::util::*;

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

// ---- The damage rule: every reading command reads up to the damage, as recover keeps it ----

/// `a2.icarec` as a run that crashed (docs/commands.md's example): its last frame partial
/// (17 of 40 bytes) and `complete: false`.
fn crashed_icarec(dir: &std::path::Path) -> std::path::PathBuf {
    let cut = dir.join("crashed.icarec");
    std::fs::create_dir(&cut).unwrap();
    let a2 = any_fixture("icarec/a2.icarec");
    for member in ["schema.json", "static_signals.bin"] {
        std::fs::copy(a2.join(member), cut.join(member)).unwrap();
    }
    let frames = std::fs::read(a2.join("dynamic_signals.bin")).unwrap();
    std::fs::write(cut.join("dynamic_signals.bin"), &frames[..97]).unwrap();
    std::fs::write(cut.join("metadata.json"), b"{\"complete\": false}").unwrap();
    cut
}

/// A copy of `fixture` (a file or a directory) with its file `member` (itself, for a file)
/// cut to `keep` of its bytes.
fn cut_copy(dir: &std::path::Path, fixture: &str, member: &str, keep: f64) -> std::path::PathBuf {
    let from = any_fixture(fixture);
    let to = dir.join(from.file_name().unwrap());
    if from.is_dir() {
        copy_tree(&from, &to);
    } else {
        std::fs::copy(&from, &to).unwrap();
    }
    let file = if member.is_empty() {
        to.clone()
    } else {
        to.join(member)
    };
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..(bytes.len() as f64 * keep) as usize]).unwrap();
    to
}

/// The records of a recording, as `cat --format ndjson` prints them.
fn ndjson(dir: &std::path::Path, path: &std::path::Path) -> String {
    run_in(dir, &["cat", "--format", "ndjson", s(path)])
        .expect_code(0)
        .stdout
}

const DAMAGED: &str = "damaged: read up to the damage, as `simrec recover` keeps it";

/// One damaged recording of every format family: `convert` reads it up to the damage and
/// writes, record for record, what `recover` keeps of it, says the damage on stderr and
/// exits 3; with `--strict` the damage is an error (exit 1) and nothing is written.
#[test]
fn every_format_converts_what_recover_keeps_with_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases = [
        (
            fixture("broken/trunc-payload.traj"),
            ".traj",
            "NANOVER_TRUNCATED_PAYLOAD",
            31,
        ),
        (
            fixture("broken/garbage-inserted.traj"),
            ".traj",
            "NANOVER_BAD_RECORD_HEADER",
            32,
        ),
        (
            any_fixture("nanover-zip/crash/crashed-after-100.nanover.zip"),
            ".nanover.zip",
            "NVZIP_UNFINISHED",
            96,
        ),
        (crashed_icarec(d), ".icarec", "ICAREC_TRUNCATED_FRAME", 5),
        (
            any_fixture("icarus-hdf5/crashed.h5"),
            ".h5",
            "ICARUS_H5_LENGTH",
            2400,
        ),
        (
            cut_copy(d, "elodin/spin_120", "world/body.parquet", 0.9),
            "/",
            "ELODIN_PARQUET_UNREADABLE",
            363,
        ),
        (
            cut_copy(d, "tes/small_plain.3es", "", 0.66),
            ".3es",
            "TES_TRUNCATED_PACKET",
            38,
        ),
        (
            any_fixture("xrec/truncated.xrec"),
            ".xrec",
            "XREC_TRUNCATED",
            10,
        ),
    ];
    for (i, (input, ext, code, records)) in cases.iter().enumerate() {
        let what = input.display();
        let converted = d.join(format!("converted{i}{ext}"));
        // `DIR/` is an Elodin DB for convert; recover writes the replay it was given.
        let mut args = vec!["convert", s(input), "-o", s(&converted)];
        if *ext == "/" {
            args.extend(["--to", "elodin"]);
        }
        let r = run_in(d, &args).expect_code(3);
        assert!(
            r.stderr.contains(&format!("error {code}")),
            "{what}: {}",
            r.stderr
        );
        assert!(r.stderr.contains(DAMAGED), "{what}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!("wrote {records} records to ")),
            "{what}: {}",
            r.stderr
        );
        let recovered = d.join(format!("recovered{i}{ext}"));
        run_in(d, &["recover", s(input), "-o", s(&recovered)]).expect_code(3);
        let (kept, written) = (ndjson(d, &recovered), ndjson(d, &converted));
        assert_eq!(kept.lines().count(), *records, "{what}");
        assert!(
            kept == written,
            "{what}: converted and recovered records differ"
        );

        let strict = d.join(format!("strict{i}{ext}"));
        let r = run_in(d, &["convert", "--strict", s(input), "-o", s(&strict)]).expect_code(1);
        assert!(r.stderr.contains(code), "{what}: {}", r.stderr);
        assert!(!strict.exists(), "{what}");
    }
    // A recording that was not finished cleanly but lost nothing (an XREC without its End)
    // is read whole: a warning, exit 0 (into XREC, which keeps its absolute start).
    let unfinished = any_fixture("xrec/unfinished.xrec");
    let r = run_in(d, &["convert", s(&unfinished), "-o", "u.xrec"]).expect_code(0);
    assert!(
        r.stderr.contains("warning XREC_NOT_FINISHED"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains(DAMAGED), "{}", r.stderr);
}

/// Every command that reads a recording reads a crashed `.icarec` up to its partial last
/// frame (the two whole frames `recover` keeps): to the end of a slice, a late snapshot, a
/// plot, a diff, a cat and inspect each say the damage on stderr and exit 3, and fail (exit
/// 1) with `--strict`. `--quiet` still says the damage.
#[test]
fn every_reading_command_reads_a_crashed_icarec_up_to_the_damage() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cut = crashed_icarec(d);
    run_in(d, &["recover", s(&cut), "-o", "fixed.icarec"]).expect_code(3);
    let finding = "crashed.icarec: error ICAREC_TRUNCATED_FRAME at byte 80, record 2";

    let r = run_in(d, &["cat", "--format", "ndjson", "crashed.icarec"]).expect_code(3);
    assert_eq!(r.stdout, ndjson(d, &d.join("fixed.icarec")));
    assert!(
        r.stderr.contains(finding) && r.stderr.contains(DAMAGED),
        "{}",
        r.stderr
    );

    // From 15 ms to the end: the last whole frame (20 ms), with the static signal.
    let r = run_in(
        d,
        &[
            "slice",
            "crashed.icarec",
            "--start",
            "15ms",
            "-o",
            "late.jsonl",
        ],
    )
    .expect_code(3);
    assert!(r.stderr.contains(finding), "{}", r.stderr);
    let late = read_jsonl(&d.join("late.jsonl"));
    assert_eq!(late.len(), 3);
    assert!(
        late.iter().all(|v| v["time_ns"] == late[0]["time_ns"]),
        "{late:?}"
    );
    assert_eq!(late[2]["values"]["alpha"], 0.25);

    let r = run_in(d, &["snapshot", "crashed.icarec", "--at", "1s"]).expect_code(3);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        (v["time"].as_f64(), v["clamped"].as_bool()),
        (Some(0.02), Some(true))
    );
    assert!(r.stderr.contains(finding), "{}", r.stderr);

    let r = run_in(
        d,
        &[
            "plot",
            "crashed.icarec",
            "--key",
            "Vehicle.Aero.alpha",
            "-o",
            "a.svg",
        ],
    )
    .expect_code(3);
    assert!(
        r.stderr.contains("Vehicle.Aero.alpha (2 samples"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains(finding), "{}", r.stderr);

    let r = run_in(d, &["diff", "crashed.icarec", "fixed.icarec"]).expect_code(3);
    assert!(r.stdout.starts_with("equal\n"), "{}", r.stdout);
    assert!(r.stderr.contains(finding), "{}", r.stderr);
    // Different is worse than damaged.
    run_in(
        d,
        &[
            "diff",
            "crashed.icarec",
            &any_fixture("icarec/a2.icarec").display().to_string(),
        ],
    )
    .expect_code(1);

    // inspect: the summary of what is read, valid JSON on stdout, the damage on stderr.
    let r = run_in(d, &["inspect", "--format", "json", "crashed.icarec"]).expect_code(3);
    let v = &r.json_lines()[0];
    assert_eq!(v["records"], 5);
    assert_eq!(v["findings"]["errors"], 1);
    assert!(
        r.stderr.contains(finding) && r.stderr.contains(DAMAGED),
        "{}",
        r.stderr
    );

    for args in [
        &["cat", "crashed.icarec"][..],
        &[
            "slice",
            "crashed.icarec",
            "--start",
            "15ms",
            "-o",
            "strict.jsonl",
        ],
        &["snapshot", "crashed.icarec", "--at", "1s"],
        &[
            "plot",
            "crashed.icarec",
            "--key",
            "Vehicle.Aero.alpha",
            "-o",
            "strict.svg",
        ],
        &["diff", "crashed.icarec", "fixed.icarec"],
        &["inspect", "crashed.icarec"],
    ] {
        let r = run_in(d, &[args, &["--strict"]].concat()).expect_code(1);
        assert!(
            r.stderr.contains("ICAREC_TRUNCATED_FRAME"),
            "{args:?}: {}",
            r.stderr
        );
    }
    assert!(!d.join("strict.jsonl").exists() && !d.join("strict.svg").exists());

    let r = run_in(d, &["cat", "--quiet", "crashed.icarec"]).expect_code(3);
    assert_eq!(r.stderr.lines().next(), Some(&*format!("{finding}: dynamic_signals.bin frame 2 at byte 80: the last frame is partial: 17 of its 40 bytes; it is not read")));
}

/// `merge` reads a damaged input up to its damage too: the truncated `.traj`'s 31 whole
/// frames with the state.
#[test]
fn merge_reads_a_damaged_input_up_to_the_damage() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.jsonl");
    let r = run(&[
        "merge",
        "broken/trunc-payload.traj",
        "small.state",
        "-o",
        s(&out),
    ])
    .expect_code(3);
    assert!(
        r.stderr.contains(
            "broken/trunc-payload.traj: error NANOVER_TRUNCATED_PAYLOAD at byte 23268, record 31"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(read_jsonl(&out).len(), 31 + 15);
    run(&[
        "merge",
        "--strict",
        "broken/trunc-payload.traj",
        "small.state",
        "-o",
        s(&dir.path().join("s.jsonl")),
    ])
    .expect_code(1);
}
