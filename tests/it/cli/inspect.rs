//! `simrec inspect`, end to end: text and JSON summaries, `--deep` key tables, the genuine
//! upstream recordings, unreadable files and standard input.

use serde_json::{json, Value};

use crate::util::*;

fn key<'a>(summary: &'a Value, name: &str) -> &'a Value {
    summary["channels"][0]["keys"]
        .as_array()
        .expect("--deep lists keys")
        .iter()
        .find(|k| k["name"] == name)
        .unwrap_or_else(|| panic!("no key {name} in {summary}"))
}

#[test]
fn text_summary_of_small_traj() {
    let r = run(&["inspect", "small.traj"]).expect_code(0);
    let out = &r.stdout;
    assert!(out.starts_with("small.traj\n"), "{out}");
    for needle in [
        "nanover-traj (version 2)",
        "24083 bytes",
        "0.008445s",
        "5.380761s",
        "5.372316s",
        "frame: 32 records",
        "2 at records 17, 24",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    let records_row = out
        .lines()
        .find(|l| l.contains("records") && !l.contains("frame:") && !l.contains("rate"))
        .unwrap();
    assert!(records_row.contains(" 32 "), "{records_row}");
    // The sibling state file exists and was not named.
    assert!(
        out.contains("small.state is beside it and was not named"),
        "{out}"
    );
    assert!(out.contains("--deep"), "{out}");
}

#[test]
fn text_summary_of_small_state() {
    let r = run(&["inspect", "small.state"]).expect_code(0);
    for needle in [
        "nanover-state (version 2)",
        "1471 bytes",
        "0.023146s",
        "5.004500s",
        "state: 15 records",
    ] {
        assert!(
            r.stdout.contains(needle),
            "missing {needle:?} in\n{}",
            r.stdout
        );
    }
    assert!(!r.stdout.contains("at records"), "{}", r.stdout);
}

#[test]
fn json_summary_of_small_pair() {
    let r = run(&["inspect", "--format", "json", "small.traj", "small.state"]).expect_code(0);
    let lines = r.json_lines();
    assert_eq!(lines.len(), 2, "{}", r.stdout);

    let t = &lines[0];
    assert_eq!(t["path"], "small.traj");
    assert_eq!(t["format"], "nanover-traj");
    assert_eq!(t["format_version"], "2");
    assert_eq!(t["size_bytes"], 24083);
    assert_eq!(t["records"], 32);
    assert_eq!(t["start_ns"], 8_445_000);
    assert_eq!(t["end_ns"], 5_380_761_000i64);
    assert_eq!(t["duration_ns"], 5_372_316_000i64);
    assert_eq!(t["channels"], json!([{"name": "frame", "records": 32}]));
    assert_eq!(t["resets"], json!([17, 24]));
    assert_eq!(t["deep"], false);
    assert_eq!(t["findings"]["errors"], 0);
    assert_eq!(t["findings"]["warnings"], 0);
    // Named together: no "beside it" note.
    assert_eq!(t["notes"], json!([]));

    let st = &lines[1];
    assert_eq!(st["path"], "small.state");
    assert_eq!(st["format"], "nanover-state");
    assert_eq!(st["format_version"], "2");
    assert_eq!(st["size_bytes"], 1471);
    assert_eq!(st["records"], 15);
    assert_eq!(st["start_ns"], 23_146_000);
    assert_eq!(st["end_ns"], 5_004_500_000i64);
    assert_eq!(st["duration_ns"], 5_004_500_000i64 - 23_146_000);
    assert_eq!(st["channels"], json!([{"name": "state", "records": 15}]));
    assert_eq!(st["resets"], json!([]));
    assert_eq!(st["notes"], json!([]));
}

#[test]
fn json_note_names_the_unnamed_sibling() {
    let r = run(&["inspect", "--format", "json", "small.traj"]).expect_code(0);
    let o = &r.json_lines()[0];
    let notes = o["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{o}");
    assert!(notes[0].as_str().unwrap().contains("small.state"), "{o}");
    // Not deep: no key list.
    assert!(o["channels"][0].get("keys").is_none(), "{o}");
}

#[test]
fn deep_json_lists_frame_keys_with_dtype_and_shape() {
    let r = run(&["inspect", "--deep", "--format", "json", "small.traj"]).expect_code(0);
    let o = &r.json_lines()[0];
    assert_eq!(o["deep"], true);
    assert_eq!(o["records"], 32);
    assert_eq!(
        o["channels"][0]["keys"].as_array().unwrap().len(),
        24,
        "{o}"
    );

    let pos = key(o, "particle.positions");
    assert_eq!(pos["kind"], "array");
    assert_eq!(pos["dtype"], "float32");
    assert_eq!(pos["shape"], "[N,3]");
    assert_eq!(pos["shape_min"], json!([21, 3]));
    assert_eq!(pos["shape_max"], json!([32, 3]));
    assert_eq!(pos["records"], 32);
    assert_eq!(pos["removals"], 0);

    let bonds = key(o, "bond.pairs");
    assert_eq!(bonds["dtype"], "uint32");
    assert_eq!(bonds["shape"], "[N,2]");
    assert_eq!(bonds["shape_min"], json!([0, 2]));
    assert_eq!(bonds["shape_max"], json!([16, 2]));
    assert_eq!(bonds["records"], 3);

    let bx = key(o, "system.box.vectors");
    assert_eq!(bx["dtype"], "float32");
    assert_eq!(bx["shape"], "[3,3]");

    let names = key(o, "particle.names");
    assert_eq!(names["dtype"], "string");
    assert_eq!(names["shape_min"], json!([21]));
    assert_eq!(names["shape_max"], json!([32]));

    // The empty array stored as index_values is typed by the key table.
    let sparse = key(o, "forces.user.sparse");
    assert_eq!(sparse["dtype"], "float32");
    assert_eq!(sparse["shape"], "[N,3]");
    assert_eq!(sparse["shape_min"], json!([0, 3]));
    assert_eq!(sparse["records"], 30);

    let ke = key(o, "energy.kinetic");
    assert_eq!(ke["kind"], "number");
    assert_eq!(ke["dtype"], Value::Null);
    assert_eq!(ke["records"], 32);
    assert_eq!(key(o, "particle.count")["records"], 3);
}

#[test]
fn deep_json_lists_state_keys_with_removals() {
    let r = run(&["inspect", "--deep", "--format", "json", "small.state"]).expect_code(0);
    let o = &r.json_lines()[0];
    let keys = o["channels"][0]["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 5, "{o}");
    let note = key(o, "simrec.note");
    assert_eq!(note["kind"], "string");
    assert_eq!(note["records"], 1);
    assert_eq!(note["removals"], 1);
    let counter = key(o, "simrec.counter");
    assert_eq!(counter["kind"], "number");
    assert_eq!(counter["records"], 6);
    assert_eq!(counter["removals"], 1);
    assert_eq!(key(o, "simrec.nested")["kind"], "map");
    assert_eq!(key(o, "simrec.nested")["removals"], 0);
    assert_eq!(key(o, "imd.velocity_reset_available")["kind"], "bool");
    assert_eq!(key(o, "imd.velocity_reset_available")["records"], 3);
    let interaction = key(o, "interaction.ac9c04b2-5376-4de1-95a5-0291a49e19dd");
    assert_eq!(interaction["kind"], "map");
    assert_eq!(interaction["records"], 2);
    assert_eq!(interaction["removals"], 1);
}

#[test]
fn deep_text_has_a_key_table() {
    let r = run(&["inspect", "--deep", "small.traj"]).expect_code(0);
    let row = r
        .stdout
        .lines()
        .find(|l| l.contains("particle.positions"))
        .unwrap_or_else(|| panic!("no positions row in\n{}", r.stdout));
    assert!(row.contains("float32 [N,3]"), "{row}");
    assert!(row.contains(" 32 "), "{row}");
    let row = r.stdout.lines().find(|l| l.contains("bond.pairs")).unwrap();
    assert!(row.contains("uint32 [N,2]") && row.contains(" 3 "), "{row}");
    assert!(!r.stdout.contains("run with --deep"), "{}", r.stdout);
}

/// The genuine recordings of spec §14: counts, first/last timestamps (µs) and resets.
#[test]
fn upstream_recordings_truth() {
    let files = [
        (
            "upstream/17-ala-recording-multiple.traj",
            "nanover-traj",
            427,
            184_578i64,
            14_251_990,
            json!([0, 252, 367, 396]),
        ),
        (
            "upstream/hello.traj",
            "nanover-traj",
            626,
            4_217,
            23_169_901,
            json!([0, 1]),
        ),
        (
            "upstream/nanotube-example-recording.traj",
            "nanover-traj",
            930,
            3_872,
            33_035_659,
            json!([0, 1]),
        ),
        (
            "upstream/nanotube-example-recording.state",
            "nanover-state",
            685,
            19_053,
            31_728_537,
            json!([]),
        ),
        (
            "upstream/sim-switching-test-recording.traj",
            "nanover-traj",
            454,
            2_224,
            15_315_361,
            json!([104, 212, 339]),
        ),
    ];
    let mut args = vec!["inspect", "--format", "json"];
    args.extend(files.iter().map(|f| f.0));
    let r = run(&args).expect_code(0);
    let lines = r.json_lines();
    assert_eq!(lines.len(), files.len(), "{}", r.stdout);
    for (o, (path, format, records, first_us, last_us, resets)) in lines.iter().zip(&files) {
        let size = std::fs::metadata(fixture(path)).unwrap().len();
        assert_eq!(o["path"], *path);
        assert_eq!(o["format"], *format, "{path}");
        assert_eq!(o["format_version"], "2", "{path}");
        assert_eq!(o["size_bytes"], size, "{path}");
        assert_eq!(o["records"], *records, "{path}");
        assert_eq!(o["start_ns"], first_us * 1000, "{path}");
        assert_eq!(o["end_ns"], last_us * 1000, "{path}");
        assert_eq!(o["duration_ns"], (last_us - first_us) * 1000, "{path}");
        assert_eq!(o["resets"], *resets, "{path}");
        assert_eq!(o["channels"][0]["records"], *records, "{path}");
        assert_eq!(o["findings"]["errors"], 0, "{path}");
    }
}

#[test]
fn upstream_text_lists_four_resets() {
    let r = run(&["inspect", "upstream/17-ala-recording-multiple.traj"]).expect_code(0);
    assert!(
        r.stdout.contains("4 at records 0, 252, 367, 396"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("0.184578s") && r.stdout.contains("14.251990s"));
}

#[test]
fn upstream_deep_reads_nanotube_pair() {
    let r = run(&[
        "inspect",
        "--deep",
        "--format",
        "json",
        "upstream/nanotube-example-recording.traj",
        "upstream/nanotube-example-recording.state",
    ])
    .expect_code(0);
    let lines = r.json_lines();
    assert_eq!(lines[0]["records"], 930);
    assert_eq!(lines[1]["records"], 685);
    // nanover-rs: the first record is the empty `12 00` frame, every other carries positions.
    let pos = key(&lines[0], "particle.positions");
    assert_eq!(pos["dtype"], "float32");
    assert_eq!(pos["shape"], "[65,3]");
    assert_eq!(pos["shape_min"], json!([65, 3]));
    assert_eq!(pos["shape_max"], json!([65, 3]));
    assert_eq!(pos["records"], 929);
    // nanover-rs writes residue ids as floats; they are kept as float32.
    assert_eq!(key(&lines[0], "residue.ids")["dtype"], "float32");
    assert_eq!(key(&lines[0], "bond.pairs")["shape_max"], json!([176, 2]));
}

#[test]
fn empty_file_exits_1_with_code_on_stderr() {
    let r = run(&["inspect", "broken/empty.traj"]).expect_code(1);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(r.stderr.contains("broken/empty.traj"), "{}", r.stderr);
    assert!(r.stderr.contains("NANOVER_EMPTY_FILE"), "{}", r.stderr);
    assert!(r.stderr.contains("byte 0"), "{}", r.stderr);
}

#[test]
fn unreadable_files_name_their_code_and_offset() {
    for (file, code, at) in [
        ("broken/bad-magic.traj", "NANOVER_BAD_MAGIC", "byte 0"),
        (
            "broken/bad-version-1.traj",
            "NANOVER_UNSUPPORTED_VERSION",
            "byte 8",
        ),
        (
            "broken/bad-version-3.traj",
            "NANOVER_UNSUPPORTED_VERSION",
            "byte 8",
        ),
        (
            "broken/trunc-file-header.traj",
            "NANOVER_TRUNCATED_FILE_HEADER",
            "byte 0",
        ),
        (
            "broken/v1-headerless.traj",
            "NANOVER_V1_HEADERLESS",
            "byte 0",
        ),
        (
            "broken/v1-headerless.state",
            "NANOVER_V1_HEADERLESS",
            "byte 0",
        ),
    ] {
        let r = run(&["inspect", file]).expect_code(1);
        assert!(r.stderr.contains(file), "{file}: {}", r.stderr);
        assert!(r.stderr.contains(code), "{file}: {}", r.stderr);
        assert!(r.stderr.contains(at), "{file}: {}", r.stderr);
    }
    let r = run(&["inspect", "broken/bad-version-3.traj"]).expect_code(1);
    assert!(r.stderr.contains("version 3"), "{}", r.stderr);
    let r = run(&["inspect", "broken/v1-headerless.traj"]).expect_code(1);
    assert!(r.stderr.contains("--nanover-version 1"), "{}", r.stderr);
}

#[test]
fn json_error_object_for_an_unreadable_file_and_exit_1() {
    let r = run(&[
        "inspect",
        "--format",
        "json",
        "small.traj",
        "broken/empty.traj",
    ])
    .expect_code(1);
    let lines = r.json_lines();
    assert_eq!(lines.len(), 2, "{}", r.stdout);
    assert_eq!(lines[0]["records"], 32);
    assert_eq!(lines[1]["path"], "broken/empty.traj");
    assert_eq!(lines[1]["finding"]["code"], "NANOVER_EMPTY_FILE");
    assert_eq!(lines[1]["finding"]["severity"], "error");
    assert_eq!(lines[1]["finding"]["offset"], 0);
    assert!(lines[1]["error"].as_str().unwrap().contains("empty"));
}

#[test]
fn damaged_but_readable_file_counts_records_and_errors() {
    // Read up to the damage (exit 3), the damage on stderr, the JSON whole on stdout.
    let r = run(&["inspect", "--format", "json", "broken/trunc-payload.traj"]).expect_code(3);
    assert!(
        r.stderr.starts_with(
            "broken/trunc-payload.traj: error NANOVER_TRUNCATED_PAYLOAD at byte 23268, record 31"
        ),
        "{}",
        r.stderr
    );
    let o = &r.json_lines()[0];
    assert_eq!(o["records"], 31);
    assert_eq!(o["end_ns"], 5_056_741_000i64);
    assert_eq!(o["resets"], json!([17, 24]));
    assert_eq!(o["findings"]["errors"], 1);
    let r = run(&["inspect", "broken/trunc-payload.traj"]).expect_code(3);
    assert!(
        r.stdout
            .contains("run `simrec validate broken/trunc-payload.traj`"),
        "{}",
        r.stdout
    );

    let r = run(&[
        "inspect",
        "--format",
        "json",
        "broken/garbage-inserted.traj",
    ])
    .expect_code(3);
    let o = &r.json_lines()[0];
    assert_eq!(o["records"], 32);
    assert_eq!(o["findings"]["errors"], 2);
}

#[test]
fn header_only_file_has_no_records_and_one_warning() {
    let r = run(&["inspect", "--format", "json", "edge/header-only.traj"]).expect_code(0);
    let o = &r.json_lines()[0];
    assert_eq!(o["records"], 0);
    assert_eq!(o["size_bytes"], 16);
    assert_eq!(o["start_ns"], Value::Null);
    assert_eq!(o["end_ns"], Value::Null);
    assert_eq!(o["resets"], json!([]));
    assert_eq!(o["findings"]["warnings"], 1);
}

#[test]
fn standard_input_traj() {
    let r = run_with_stdin(
        &["inspect", "--format", "json", "-"],
        fixture_bytes("small.traj"),
    )
    .expect_code(0);
    let o = &r.json_lines()[0];
    assert_eq!(o["path"], "<stdin>");
    assert_eq!(o["format"], "nanover-traj");
    assert_eq!(o["size_bytes"], 24083);
    assert_eq!(o["records"], 32);
    assert_eq!(o["start_ns"], 8_445_000);
    assert_eq!(o["end_ns"], 5_380_761_000i64);
    assert_eq!(o["resets"], json!([17, 24]));
}

#[test]
fn standard_input_state_and_text() {
    let r = run_with_stdin(
        &["inspect", "--format", "json", "-"],
        fixture_bytes("small.state"),
    )
    .expect_code(0);
    let o = &r.json_lines()[0];
    assert_eq!(o["format"], "nanover-state");
    assert_eq!(o["records"], 15);
    assert_eq!(o["end_ns"], 5_004_500_000i64);

    let r = run_with_stdin(&["inspect", "-"], fixture_bytes("small.traj")).expect_code(0);
    assert!(r.stdout.contains("2 at records 17, 24"), "{}", r.stdout);
}

#[test]
fn standard_input_of_any_file_format_is_detected_by_its_bytes() {
    let read = |rel: &str| std::fs::read(fixture("..").join(rel)).unwrap();
    for (rel, format, records) in [
        ("nanover-zip/small.nanover.zip", "nanover-zip", 91),
        ("tes/small_compress.3es", "3es", 416),
    ] {
        let r = run_with_stdin(&["inspect", "--format", "json", "-"], read(rel)).expect_code(0);
        let o = &r.json_lines()[0];
        assert_eq!(o["path"], "<stdin>", "{rel}");
        assert_eq!(o["format"], format, "{rel}");
        assert_eq!(o["records"], records, "{rel}");
    }
}

#[test]
fn standard_input_empty_is_an_error() {
    let r = run_with_stdin(&["inspect", "-"], Vec::new()).expect_code(1);
    assert_eq!(r.stderr, "error: standard input is empty\n");
}

#[test]
fn version_1_files_need_the_option() {
    let r = run(&[
        "inspect",
        "--nanover-version",
        "1",
        "--format",
        "json",
        "broken/v1-headerless.traj",
        "broken/v1-headerless.state",
    ])
    .expect_code(0);
    let lines = r.json_lines();
    assert_eq!(lines[0]["format_version"], "1");
    assert_eq!(lines[0]["records"], 32);
    assert_eq!(lines[0]["start_ns"], 8_445_000);
    assert_eq!(lines[0]["end_ns"], 5_380_761_000i64);
    // Every v1 frame is a delta; only the first starts the aggregate.
    assert_eq!(lines[0]["resets"], json!([0]));
    assert_eq!(lines[1]["format_version"], "1");
    assert_eq!(lines[1]["records"], 15);
}

#[test]
fn no_files_is_a_usage_error() {
    let r = run(&["inspect"]).expect_code(2);
    assert!(r.stderr.contains("FILE"), "{}", r.stderr);
}

#[test]
fn missing_file_is_named_in_the_error() {
    let r = run(&["inspect", "no-such-file.traj"]).expect_code(1);
    assert!(r.stderr.contains("no-such-file.traj"), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
}

#[test]
fn a_directory_is_inspected_recording_by_recording_and_other_files_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    std::fs::remove_file(dir.path().join("lab/nanover/crashed.traj")).unwrap();
    let r = run_in(dir.path(), &["inspect", "--format", "json", "lab"]).expect_code(0);
    let lines = r.json_lines();
    let paths: Vec<&str> = lines.iter().filter_map(|l| l["path"].as_str()).collect();
    assert_eq!(
        paths,
        [
            "lab/icarus/a2.icarec",
            "lab/nanover/small.state",
            "lab/nanover/small.traj",
            "lab/session.xrec"
        ]
    );
    // Found together, the pair has no note that one was not named.
    assert_eq!(lines[2]["notes"], json!([]));
    assert_eq!(lines[2]["records"], 32);
    assert_eq!(
        lines[4]["summary"],
        json!({"recordings": 3, "ok": 3, "with_errors": 0, "skipped": 3})
    );
    let skipped: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("skipped "))
        .collect();
    assert_eq!(skipped.len(), 3, "{}", r.stderr);
    assert_eq!(
        r.stderr.lines().last(),
        Some("3 recordings: 3 ok, 0 with errors, 3 skipped")
    );
    // --strict: a file that is not a recording fails the run.
    let r = run_in(dir.path(), &["inspect", "--strict", "lab"]).expect_code(1);
    assert!(
        r.stderr
            .contains("cannot tell the format of lab/capture.json"),
        "{}",
        r.stderr
    );
    assert_eq!(
        r.stderr.lines().last(),
        Some("6 recordings: 3 ok, 3 with errors, 0 skipped")
    );
    // Files named one by one print what they always did: no summary.
    let r = run_in(
        dir.path(),
        &[
            "inspect",
            "--format",
            "json",
            "lab/session.xrec",
            "lab/nanover/small.traj",
        ],
    )
    .expect_code(0);
    assert!(
        r.json_lines().iter().all(|l| l["path"].is_string()),
        "{}",
        r.stdout
    );
    assert!(!r.stderr.contains("recordings:"), "{}", r.stderr);
}

/// Issue 27, item 13: `inspect` of an `.icarec` or an Icarus HDF5 file counts frames without
/// making a record per value, and prints what it printed when it made them: the text and
/// JSON of every Icarus fixture, byte for byte as `tests/expected/inspect/` kept them from
/// the build before the change (the same after issue 27's other items, checked when they were
/// merged).
#[test]
fn icarus_summaries_are_those_of_the_record_read() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let expected = root.join("tests/expected/inspect");
    let mut names: Vec<String> = std::fs::read_dir(&expected)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 24);
    for file in names {
        let (name, json) = match file.strip_suffix(".json") {
            Some(name) => (name, true),
            None => (file.strip_suffix(".txt").unwrap(), false),
        };
        let dir = match name {
            n if n.ends_with(".h5") => "icarus-hdf5",
            n if n.ends_with(".csv") => "icarus-csv",
            _ => "icarec",
        };
        let path = format!("fixtures/{dir}/{name}");
        let mut args = vec!["inspect", path.as_str()];
        if json {
            args.extend(["--format", "json"]);
        }
        // A damaged recording is read up to its damage, exit 3 (issue 27, item 5).
        let code = if name == "crashed.h5" { 3 } else { 0 };
        let r = run_in(root, &args).expect_code(code);
        let want = std::fs::read_to_string(expected.join(&file)).unwrap();
        assert_eq!(r.stdout, want, "{file}");
    }
}

#[test]
fn a_channel_pattern_that_does_not_compile_is_a_usage_error() {
    let r = run(&["inspect", "small.traj", "--channel", "[x"]).expect_code(2);
    assert!(r.stderr.contains("invalid pattern `[x`: "), "{}", r.stderr);
}
