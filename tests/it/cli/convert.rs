//! `simrec convert`, end to end: bit-exact same-format copies, JSON Lines content, overwrite
//! rules, `--dry-run`, usage errors, damaged inputs (no output, no temp file) and v1 files.

use serde_json::{json, Value};

use crate::util::*;

/// The frame indices of small.traj, record by record (resets at records 17 and 24).
fn small_frame_indices() -> Vec<u64> {
    (2..=18).chain(0..=6).chain(0..=7).collect()
}

#[test]
fn pair_to_pair_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("copy.traj");
    let r = run(&["convert", "small.traj", "small.state", "-o", s(&out)]).expect_code(0);
    assert!(r.stderr.contains("wrote 47 records"), "{}", r.stderr);
    assert_file_bytes(&out, &fixture_bytes("small.traj"));
    assert_file_bytes(
        &dir.path().join("copy.state"),
        &fixture_bytes("small.state"),
    );
    assert_eq!(dir_entries(dir.path()), ["copy.state", "copy.traj"]);
}

#[test]
fn pair_named_by_its_state_file_or_stem() {
    let dir = tempfile::tempdir().unwrap();
    run(&[
        "convert",
        "small.state",
        "small.traj",
        "-o",
        s(&dir.path().join("a.state")),
    ])
    .expect_code(0);
    assert_file_bytes(&dir.path().join("a.traj"), &fixture_bytes("small.traj"));
    assert_file_bytes(&dir.path().join("a.state"), &fixture_bytes("small.state"));
    run(&[
        "convert",
        "small.traj",
        "small.state",
        "--to",
        "nanover-legacy",
        "-o",
        s(&dir.path().join("b")),
    ])
    .expect_code(0);
    assert_file_bytes(&dir.path().join("b.traj"), &fixture_bytes("small.traj"));
    assert_file_bytes(&dir.path().join("b.state"), &fixture_bytes("small.state"));
}

#[test]
fn single_files_and_upstream_pair_copy_bit_exact() {
    let dir = tempfile::tempdir().unwrap();
    for (input, out) in [
        ("small.traj", "t.traj"),
        ("small.state", "s.state"),
        ("upstream/hello.traj", "h.traj"),
        ("broken/nonmonotonic-timestamps.traj", "n.traj"),
        ("broken/corrupt-payload.traj", "c.traj"),
    ] {
        run(&["convert", input, "-o", s(&dir.path().join(out))]).expect_code(0);
        assert_file_bytes(&dir.path().join(out), &fixture_bytes(input));
    }
    run(&[
        "convert",
        "upstream/nanotube-example-recording.traj",
        "upstream/nanotube-example-recording.state",
        "-o",
        s(&dir.path().join("nt.traj")),
    ])
    .expect_code(0);
    assert_file_bytes(
        &dir.path().join("nt.traj"),
        &fixture_bytes("upstream/nanotube-example-recording.traj"),
    );
    assert_file_bytes(
        &dir.path().join("nt.state"),
        &fixture_bytes("upstream/nanotube-example-recording.state"),
    );
}

#[test]
fn pair_to_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("small.jsonl");
    let r = run(&["convert", "small.traj", "small.state", "-o", s(&out)]).expect_code(0);
    assert!(r.stderr.contains("wrote 47 records"), "{}", r.stderr);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 47);
    let lines = read_jsonl(&out);

    let first = &lines[0];
    assert_eq!(time_ns(first), 8_445_000);
    assert_eq!(channel(first), "frame");
    assert_eq!(first["frame"], 2);
    let pos = first["values"]["particle.positions"].as_array().unwrap();
    assert_eq!(pos.len(), 21);
    assert!(pos.iter().all(|row| row.as_array().unwrap().len() == 3));
    assert!(pos
        .iter()
        .flat_map(|r| r.as_array().unwrap())
        .all(Value::is_f64));
    assert_eq!(first["values"]["particle.count"], json!(21.0));
    assert_eq!(
        first["values"]["particle.names"].as_array().unwrap().len(),
        21
    );
    assert_eq!(
        first["values"]["bond.pairs"].as_array().unwrap()[0],
        json!([0, 1])
    );
    assert_eq!(
        first["values"]["system.box.vectors"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    // The empty sparse forces (stored as index values) are typed by the key table.
    assert_eq!(first["values"]["forces.user.sparse"], json!([]));

    // Time order, both channels, integer nanoseconds.
    let times: Vec<i64> = lines.iter().map(time_ns).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    assert_eq!(*times.last().unwrap(), 5_380_761_000);
    let frames: Vec<u64> = lines
        .iter()
        .filter(|l| channel(l) == "frame")
        .map(|l| frame(l).unwrap())
        .collect();
    assert_eq!(frames, small_frame_indices());
    let states: Vec<&Value> = lines.iter().filter(|l| channel(l) == "state").collect();
    assert_eq!(states.len(), 15);
    assert_eq!(time_ns(states[0]), 23_146_000);
    assert!(states.iter().all(|st| st.get("frame").is_none()));

    // The 21-byte removal record of spec §1.2.
    let note = lines.iter().find(|l| time_ns(l) == 1_784_330_000).unwrap();
    assert_eq!(channel(note), "state");
    assert_eq!(note["values"], json!({}));
    assert_eq!(removed(note), ["simrec.note"]);
    let all_removed: Vec<(i64, Vec<String>)> = lines
        .iter()
        .filter(|l| !removed(l).is_empty())
        .map(|l| (time_ns(l), removed(l)))
        .collect();
    assert_eq!(
        all_removed,
        [
            (
                1_568_436_000,
                vec!["interaction.ac9c04b2-5376-4de1-95a5-0291a49e19dd".to_string()]
            ),
            (1_784_330_000, vec!["simrec.note".to_string()]),
            (5_004_306_000, vec!["simrec.counter".to_string()]),
        ]
    );

    // State values: numbers are f64, a nested null is data.
    let set = lines.iter().find(|l| time_ns(l) == 332_847_000).unwrap();
    assert_eq!(set["values"]["simrec.note"], "hello");
    assert!(set["values"]["simrec.counter"].is_f64());
    assert_eq!(set["values"]["simrec.counter"], json!(0.0));
    assert_eq!(
        set["values"]["simrec.nested"],
        json!({"a": [1.0, 2.5, "x"], "b": {"c": true, "d": null}})
    );
}

#[test]
fn jsonl_to_standard_output_matches_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.jsonl");
    run(&["convert", "small.traj", "-o", s(&out)]).expect_code(0);
    let r = run(&["convert", "small.traj", "-o", "-", "--to", "jsonl"]).expect_code(0);
    assert_same_bytes(&r.raw_stdout, &std::fs::read(&out).unwrap(), "stdout");
    assert_eq!(r.stdout.lines().count(), 32);
    assert!(r.stderr.contains("standard output"), "{}", r.stderr);
}

#[test]
fn refuses_an_existing_output_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    std::fs::write(&out, b"precious").unwrap();
    let r = run(&["convert", "small.traj", "small.state", "-o", s(&out)]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--force"), "{}", r.stderr);
    assert!(r.stderr.contains("out.jsonl"), "{}", r.stderr);
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    assert_eq!(dir_entries(dir.path()), ["out.jsonl"]);

    // --force overwrites it.
    run(&[
        "convert",
        "small.traj",
        "small.state",
        "-o",
        s(&out),
        "--force",
    ])
    .expect_code(0);
    assert_eq!(read_jsonl(&out).len(), 47);
    assert_eq!(dir_entries(dir.path()), ["out.jsonl"]);
}

#[test]
fn refuses_when_only_the_sibling_of_the_pair_exists() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("out.state"), b"keep").unwrap();
    let r = run(&[
        "convert",
        "small.traj",
        "small.state",
        "-o",
        s(&dir.path().join("out.traj")),
    ]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("out.state"), "{}", r.stderr);
    assert_eq!(dir_entries(dir.path()), ["out.state"]);
    assert_eq!(
        std::fs::read(dir.path().join("out.state")).unwrap(),
        b"keep"
    );

    run(&[
        "convert",
        "small.traj",
        "small.state",
        "-o",
        s(&dir.path().join("out.traj")),
        "--force",
    ])
    .expect_code(0);
    assert_file_bytes(&dir.path().join("out.state"), &fixture_bytes("small.state"));
}

#[test]
fn dry_run_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(&[
        "convert",
        "--dry-run",
        "small.traj",
        "small.state",
        "-o",
        s(&dir.path().join("d.jsonl")),
    ])
    .expect_code(0);
    assert!(
        r.stdout.contains("47 records would be written as jsonl"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("nothing would be lost"), "{}", r.stdout);
    let r = run(&[
        "convert",
        "--dry-run",
        "small.traj",
        "small.state",
        "-o",
        s(&dir.path().join("d.traj")),
    ])
    .expect_code(0);
    assert!(
        r.stdout
            .contains("47 records would be written as nanover-legacy"),
        "{}",
        r.stdout
    );
    assert!(dir_entries(dir.path()).is_empty());
}

#[test]
fn lossy_conversion_exits_3_and_dry_run_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(&[
        "convert",
        "--dry-run",
        "broken/corrupt-payload.traj",
        "-o",
        s(&dir.path().join("c.jsonl")),
    ])
    .expect_code(3);
    assert!(r.stdout.contains("particle.positions"), "{}", r.stdout);
    assert!(r.stdout.contains("non-finite"), "{}", r.stdout);
    assert!(dir_entries(dir.path()).is_empty());

    let out = dir.path().join("c.jsonl");
    let r = run(&["convert", "broken/corrupt-payload.traj", "-o", s(&out)]).expect_code(3);
    assert!(r.stderr.contains("NANOVER_NONFINITE_FLOAT"), "{}", r.stderr);
    assert!(r.stderr.contains("particle.positions"), "{}", r.stderr);
    let lines = read_jsonl(&out);
    assert_eq!(lines.len(), 32);
    // Element 9 is row 3, column 0 of record 5; JSON cannot hold NaN, so it is null.
    let pos = &lines[5]["values"]["particle.positions"];
    assert_eq!(pos[3][0], Value::Null, "{}", pos[3]);
    assert!(pos[2][2].is_f64());
    // Other records are untouched.
    assert!(lines[4]["values"]["particle.positions"][3][0].is_f64());
}

#[test]
fn unknown_output_format_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(&[
        "convert",
        "small.traj",
        "-o",
        s(&dir.path().join("x.jsonl")),
        "--to",
        "bogus",
    ])
    .expect_code(2);
    assert!(r.stderr.contains("bogus"), "{}", r.stderr);
    assert!(r.stderr.contains("jsonl"), "{}", r.stderr);
    assert!(dir_entries(dir.path()).is_empty());
}

#[test]
fn unknown_extension_needs_to() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.foo");
    let r = run(&["convert", "small.traj", "-o", s(&out)]).expect_code(2);
    assert!(
        r.stderr.contains("x.foo") && r.stderr.contains("--to"),
        "{}",
        r.stderr
    );
    assert!(dir_entries(dir.path()).is_empty());
    run(&["convert", "small.traj", "-o", s(&out), "--to", "jsonl"]).expect_code(0);
    assert_eq!(read_jsonl(&out).len(), 32);
}

/// With `--strict`, damage is an error: exit 1, and nothing is written.
#[test]
fn damaged_input_fails_with_strict_and_leaves_no_file() {
    for out in ["out.traj", "out.jsonl"] {
        let dir = tempfile::tempdir().unwrap();
        let r = run(&[
            "convert",
            "--strict",
            "broken/trunc-payload.traj",
            "-o",
            s(&dir.path().join(out)),
        ])
        .expect_code(1);
        assert!(r.stderr.contains("byte 23268"), "{}", r.stderr);
        assert!(r.stderr.contains("record 31"), "{}", r.stderr);
        assert!(r.stderr.contains("simrec recover"), "{}", r.stderr);
        // No output and no `.partial` temporary file.
        assert!(
            dir_entries(dir.path()).is_empty(),
            "{:?}",
            dir_entries(dir.path())
        );
    }
}

#[test]
fn damaged_state_in_a_pair_writes_neither_file_with_strict() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(&[
        "convert",
        "--strict",
        "small.traj",
        "broken/trunc-payload.state",
        "-o",
        s(&dir.path().join("p.traj")),
    ])
    .expect_code(1);
    assert!(r.stderr.contains("byte 1406"), "{}", r.stderr);
    assert!(r.stderr.contains("record 14"), "{}", r.stderr);
    assert!(
        dir_entries(dir.path()).is_empty(),
        "{:?}",
        dir_entries(dir.path())
    );
}

#[test]
fn damaged_input_does_not_replace_an_existing_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.traj");
    std::fs::write(&out, b"old").unwrap();
    run(&[
        "convert",
        "--strict",
        "broken/garbage-inserted.traj",
        "-o",
        s(&out),
        "--force",
    ])
    .expect_code(1);
    assert_eq!(std::fs::read(&out).unwrap(), b"old");
    assert_eq!(dir_entries(dir.path()), ["out.traj"]);
}

#[test]
fn unreadable_inputs_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    for (input, code) in [
        ("broken/empty.traj", "empty"),
        ("broken/bad-magic.traj", "magic"),
    ] {
        let r = run(&["convert", input, "-o", s(&dir.path().join("x.jsonl"))]).expect_code(1);
        assert!(r.stderr.contains(code), "{input}: {}", r.stderr);
    }
    assert!(dir_entries(dir.path()).is_empty());
}

#[test]
fn v1_needs_the_version_option() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v.traj");
    let r = run(&["convert", "broken/v1-headerless.traj", "-o", s(&out)]).expect_code(1);
    assert!(r.stderr.contains("NANOVER_V1_HEADERLESS") || r.stderr.contains("headerless"));
    assert!(r.stderr.contains("--nanover-version 1"), "{}", r.stderr);
    assert!(dir_entries(dir.path()).is_empty());
}

#[test]
fn v1_error_names_its_code() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v.traj");
    let r = run(&["convert", "broken/v1-headerless.traj", "-o", s(&out)]).expect_code(1);
    assert!(r.stderr.contains("NANOVER_V1_HEADERLESS"), "{}", r.stderr);
}

#[test]
fn v1_converts_with_the_version_option() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v.traj");
    let r = run(&[
        "convert",
        "--nanover-version",
        "1",
        "broken/v1-headerless.traj",
        "-o",
        s(&out),
    ])
    .expect_code(0);
    assert!(r.stderr.contains("wrote 32 records"), "{}", r.stderr);
    let recs = raw_records_of(&out);
    assert_eq!(recs.len(), 32);
    let small = raw_records(&fixture_bytes("small.traj"));
    let times: Vec<u64> = recs.iter().map(|r| r.time_us).collect();
    assert_eq!(times, small.iter().map(|r| r.time_us).collect::<Vec<_>>());

    let v = run(&["cat", "--format", "ndjson", s(&out)])
        .expect_code(0)
        .json_lines();
    let frames: Vec<u64> = v.iter().map(|r| frame(r).unwrap()).collect();
    assert_eq!(frames, (0..32).collect::<Vec<u64>>());
    // Same values as the v2 original, record by record.
    let orig = run(&["cat", "--format", "ndjson", "small.traj"])
        .expect_code(0)
        .json_lines();
    for (a, b) in v.iter().zip(&orig) {
        assert_eq!(a["values"], b["values"], "at {}", time_ns(a));
        assert_eq!(time_ns(a), time_ns(b));
    }

    let r = run(&["inspect", "--format", "json", s(&out)]).expect_code(0);
    let o = &r.json_lines()[0];
    assert_eq!(o["format_version"], "2");
    assert_eq!(o["resets"], json!([0]));
}

#[test]
fn v1_state_converts_to_the_v2_original() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v.state");
    run(&[
        "convert",
        "--nanover-version",
        "1",
        "broken/v1-headerless.state",
        "-o",
        s(&out),
    ])
    .expect_code(0);
    assert_file_bytes(&out, &fixture_bytes("small.state"));
}

#[test]
fn nonmonotonic_input_keeps_file_order_and_warns() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("n.jsonl");
    let r = run(&[
        "convert",
        "broken/nonmonotonic-timestamps.traj",
        "-o",
        s(&out),
    ])
    .expect_code(0);
    assert!(
        r.stderr.contains("NANOVER_TIMESTAMP_DECREASE"),
        "{}",
        r.stderr
    );
    let times: Vec<i64> = read_jsonl(&out).iter().map(time_ns).collect();
    assert_eq!(times.len(), 32);
    assert_eq!(
        times[..6],
        [
            8_445_000,
            88_541_000,
            215_201_000,
            481_737_000,
            344_527_000,
            620_608_000
        ]
    );
}

#[test]
fn missing_input_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(&[
        "convert",
        "no-such-file.traj",
        "-o",
        s(&dir.path().join("x.jsonl")),
    ])
    .expect_code(1);
    assert!(r.stderr.contains("no-such-file.traj"), "{}", r.stderr);
    assert!(dir_entries(dir.path()).is_empty());
}

#[test]
fn missing_input_error_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(&[
        "convert",
        "no-such-file.traj",
        "-o",
        s(&dir.path().join("x.jsonl")),
    ])
    .expect_code(1);
    assert_eq!(
        r.stderr.matches("No such file or directory").count(),
        1,
        "{}",
        r.stderr
    );
}

#[test]
fn pair_to_standard_output_is_refused() {
    let r = run(&[
        "convert",
        "small.traj",
        "small.state",
        "-o",
        "-",
        "--to",
        "nanover-legacy",
    ]);
    assert_ne!(r.code, 0);
    assert!(r.raw_stdout.is_empty());
    assert!(r.stderr.contains("standard output"), "{}", r.stderr);
}

/// DESIGN.md: exit 2 is a usage error, and an output that cannot be written for what the
/// command line asks (like `x.foo` without `--to`) is exit 2 elsewhere.
#[test]
fn pair_to_standard_output_is_a_usage_error() {
    run(&[
        "convert",
        "small.traj",
        "small.state",
        "-o",
        "-",
        "--to",
        "nanover-legacy",
    ])
    .expect_code(2);
}

/// `convert a.traj a.state` names one recording and no output: the error says `-o` is
/// missing (the state file is not taken as the output), and nothing is written.
#[test]
fn a_pair_without_output_says_o_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["small.traj", "small.state"] {
        std::fs::copy(fixture(f), dir.path().join(f)).unwrap();
    }
    let r = run_in(dir.path(), &["convert", "small.traj", "small.state"]).expect_code(2);
    assert_eq!(
        r.stderr,
        "error: -o is missing: small.state is the companion of small.traj (both are read as \
         one recording), not an output; name the output with -o OUT\n"
    );
    assert_eq!(dir_entries(dir.path()), ["small.state", "small.traj"]);
    let r = run_in(dir.path(), &["convert", "small.traj"]).expect_code(2);
    assert!(r.stderr.starts_with("error: -o is missing"), "{}", r.stderr);
}
