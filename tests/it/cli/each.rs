//! `convert --each`: each recording to its own output, in parallel, past failures, with a
//! summary and the worst exit code.

use std::path::Path;

use crate::util;
use crate::util::{dir_entries, lab, run_in};

fn copy_fixtures(dir: &Path) {
    let root = util::any_fixture("");
    for (from, to) in [
        ("nanover-legacy/small.traj", "small.traj"),
        ("nanover-legacy/small.state", "small.state"),
        ("nanover-zip/small.nanover.zip", "small.nanover.zip"),
        ("tes/small_plain.3es", "small_plain.3es"),
        ("icarec/a2.icarec.tar", "a2.icarec"),
    ] {
        std::fs::copy(root.join(from), dir.join(to)).unwrap();
    }
    std::fs::write(dir.join("bad.3es"), b"junk").unwrap();
}

#[test]
fn each_recording_is_converted_on_its_own_and_a_failure_does_not_stop_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixtures(dir.path());
    let run = run_in(
        dir.path(),
        &[
            "convert",
            "--each",
            "small.traj",
            "bad.3es",
            "small.state",
            "small.nanover.zip",
            "small_plain.3es",
            "a2.icarec",
            "-o",
            "out/",
            "--to",
            "parquet",
            "--jobs",
            "2",
            "--format",
            "json",
        ],
    )
    .expect_code(1);
    let lines = run.json_lines();
    let summary: Vec<(String, Option<&str>, u64, u64)> = lines
        .iter()
        .map(|l| {
            (
                l["inputs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i.as_str().unwrap())
                    .collect::<Vec<_>>()
                    .join("+"),
                l["output"].as_str(),
                l["records"].as_u64().unwrap(),
                l["exit"].as_u64().unwrap(),
            )
        })
        .collect();
    let s = |a: &str, b: Option<&'static str>, n: u64, e: u64| (a.to_string(), b, n, e);
    assert_eq!(
        summary,
        [
            s(
                "small.traj+small.state",
                Some("out/small.traj.parquet"),
                47,
                0
            ),
            // A failed input lists no output.
            s("bad.3es", None, 0, 1),
            s(
                "small.nanover.zip",
                Some("out/small.nanover.zip.parquet"),
                91,
                0
            ),
            s(
                "small_plain.3es",
                Some("out/small_plain.3es.parquet"),
                416,
                0
            ),
            s("a2.icarec", Some("out/a2.icarec.parquet"), 7, 0),
        ]
    );
    // Read up to its damage, it holds not one record: an error, as for `recover`.
    assert!(lines[1]["error"]
        .as_str()
        .unwrap()
        .starts_with("bad.3es: TES_TRUNCATED_PACKET at byte 0"));
    assert_eq!(
        dir_entries(&dir.path().join("out")),
        [
            "a2.icarec.parquet",
            "small.nanover.zip.parquet",
            "small.traj.parquet",
            "small_plain.3es.parquet"
        ]
    );
    assert!(
        !run.stderr.contains("recordings:"),
        "files named one by one: no summary line"
    );

    // Again: every output exists, so each is refused (exit 2) and the table says why.
    let run = run_in(
        dir.path(),
        &[
            "convert",
            "--each",
            "small.nanover.zip",
            "a2.icarec",
            "-o",
            "out/",
            "--to",
            "parquet",
        ],
    )
    .expect_code(2);
    assert!(
        run.stdout.contains("exists (use --force to overwrite)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr
            .contains("2 of 2 recordings could not be converted"),
        "{}",
        run.stderr
    );
}

#[test]
fn each_needs_an_output_format() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixtures(dir.path());
    let run = run_in(
        dir.path(),
        &["convert", "--each", "a2.icarec", "-o", "out/"],
    )
    .expect_code(2);
    assert!(
        run.stderr.contains("--each needs --to FORMAT"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_loss_in_one_recording_is_the_exit_code_when_nothing_failed() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixtures(dir.path());
    let run = run_in(
        dir.path(),
        &[
            "convert",
            "--each",
            "small.traj",
            "small.state",
            "small_plain.3es",
            "-o",
            "csv/",
            "--to",
            "csv",
        ],
    )
    .expect_code(3);
    assert!(run.stdout.contains("csv/small.traj.csv"), "{}", run.stdout);
    assert!(dir.path().join("csv/small_plain.3es.csv").is_file());
}

/// The output of each recording by name, with its bytes.
fn outputs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    dir_entries(dir)
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap();
            (n, bytes)
        })
        .collect()
}

#[test]
fn outputs_are_named_by_their_input_never_by_the_order() {
    let dir = tempfile::tempdir().unwrap();
    let root = util::any_fixture("");
    // Three recordings of one rocket, in three formats.
    std::fs::copy(
        root.join("icarus-hdf5/small.h5"),
        dir.path().join("rocket.h5"),
    )
    .unwrap();
    std::fs::copy(
        root.join("icarec/a2.icarec.tar"),
        dir.path().join("rocket.icarec.tar"),
    )
    .unwrap();
    std::fs::copy(
        root.join("icarus-csv/rocket.csv"),
        dir.path().join("rocket.csv"),
    )
    .unwrap();
    let each = |order: &[&str], extra: &[&str]| {
        let mut args = vec!["convert", "--each"];
        args.extend_from_slice(order);
        args.extend_from_slice(&["-o", "out/", "--to", "jsonl"]);
        args.extend_from_slice(extra);
        run_in(dir.path(), &args)
    };
    each(&["rocket.h5", "rocket.icarec.tar", "rocket.csv"], &[]).expect_code(3);
    let first = outputs(&dir.path().join("out"));
    let names: Vec<&str> = first.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "rocket.csv.jsonl",
            "rocket.h5.jsonl",
            "rocket.icarec.tar.jsonl"
        ]
    );
    // Rerun in another order with --force: each table is its own recording's again.
    each(
        &["rocket.csv", "rocket.icarec.tar", "rocket.h5"],
        &["--force"],
    )
    .expect_code(3);
    assert_eq!(outputs(&dir.path().join("out")), first);

    // --skip-existing converts only what has no output yet (a glob, expanded by simrec).
    std::fs::remove_file(dir.path().join("out/rocket.h5.jsonl")).unwrap();
    let run = each(&["rocket.*"], &["--skip-existing", "--format", "json"]).expect_code(0);
    let lines = run.json_lines();
    let skipped: Vec<(&str, bool)> = lines[..3]
        .iter()
        .map(|l| {
            (
                l["output"].as_str().unwrap(),
                l["skipped"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        skipped,
        [
            ("out/rocket.csv.jsonl", true),
            ("out/rocket.h5.jsonl", false),
            ("out/rocket.icarec.tar.jsonl", true),
        ]
    );
    assert_eq!(lines[3]["summary"]["already_converted"], 2);
    assert_eq!(
        run.stderr.lines().last(),
        Some("3 recordings: 1 ok, 0 with loss, 0 with errors, 2 already converted, 0 skipped")
    );
    assert_eq!(outputs(&dir.path().join("out")), first);
}

#[test]
fn a_directory_is_converted_into_the_same_subdirectories_and_other_files_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let lab = lab(dir.path());
    std::fs::remove_file(lab.join("nanover/crashed.traj")).unwrap();
    std::fs::create_dir(lab.join("plots/xrec")).unwrap();
    std::fs::copy(
        lab.join("session.xrec"),
        lab.join("plots/xrec/session.xrec"),
    )
    .unwrap();
    // The output directory inside the one walked is not walked itself.
    let convert = |extra: &[&str]| {
        let mut args = vec!["convert", "--each", "lab", "-o", "lab/out/", "--to", "xrec"];
        args.extend_from_slice(extra);
        run_in(dir.path(), &args)
    };
    let run = convert(&["--format", "json"]).expect_code(3);
    let lines = run.json_lines();
    let written: Vec<&str> = lines[..4]
        .iter()
        .map(|l| l["output"].as_str().unwrap())
        .collect();
    assert_eq!(
        written,
        [
            "lab/out/icarus/a2.icarec.xrec",
            "lab/out/nanover/small.traj.xrec",
            "lab/out/plots/xrec/session.xrec.xrec",
            "lab/out/session.xrec.xrec",
        ]
    );
    assert_eq!(
        lines[3]["inputs"],
        serde_json::json!(["lab/session.xrec"]),
        "same names in two directories stay apart"
    );
    assert_eq!(lines[1]["inputs"].as_array().unwrap().len(), 2, "the pair");
    assert_eq!(
        lines[4]["summary"],
        serde_json::json!({"recordings": 4, "ok": 3, "with_loss": 1, "with_errors": 0, "skipped": 3})
    );
    let skipped: Vec<&str> = lines[4]["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        skipped,
        [
            "lab/capture.json",
            "lab/icarus/README.md",
            "lab/plots/run.png"
        ]
    );
    assert!(run
        .stderr
        .contains("skipped lab/plots/run.png: not a recording simrec reads"));
    assert!(lab.join("out/plots/xrec/session.xrec.xrec").is_file());

    // Again: the outputs are not taken for inputs.
    let run = convert(&["--skip-existing"]).expect_code(0);
    assert_eq!(
        run.stderr.lines().last(),
        Some("4 recordings: 0 ok, 0 with loss, 0 with errors, 4 already converted, 3 skipped")
    );
    // --strict: the files that are not recordings fail.
    let run = convert(&["--skip-existing", "--strict"]).expect_code(1);
    assert!(run.stdout.contains("lab/capture.json"), "{}", run.stdout);

    // Named one by one, two recordings of one name would meet: refused before anything.
    let run = run_in(
        dir.path(),
        &[
            "convert",
            "--each",
            "lab/session.xrec",
            "lab/plots/xrec/session.xrec",
            "-o",
            "two/",
            "--to",
            "jsonl",
        ],
    )
    .expect_code(2);
    assert!(
        run.stderr.contains("lab/session.xrec and lab/plots/xrec/session.xrec would both be written to two/session.xrec.jsonl"),
        "{}",
        run.stderr
    );
    assert!(!dir.path().join("two").exists());
}

#[test]
fn hostile_names_stay_inside_the_output_directory() {
    let dir = tempfile::tempdir().unwrap();
    let session = util::any_fixture("xrec/session.xrec");
    std::fs::create_dir(dir.path().join("in")).unwrap();
    for name in ["..xrec", "...xrec"] {
        std::fs::copy(&session, dir.path().join("in").join(name)).unwrap();
    }
    let run = run_in(
        dir.path(),
        &[
            "convert",
            "--each",
            "in/..xrec",
            "in/...xrec",
            "-o",
            "out/",
            "--to",
            "elodin",
        ],
    );
    assert!([0, 3].contains(&run.code), "{}", run.stderr);
    assert_eq!(dir_entries(dir.path()), ["in", "out"]);
    assert_eq!(dir_entries(&dir.path().join("in")), ["...xrec", "..xrec"]);
    assert_eq!(dir_entries(&dir.path().join("out")), ["...xrec", "..xrec"]);
    assert!(dir.path().join("out/..xrec/metadata.json").is_file());
}

#[test]
fn no_output_goes_over_another_input_of_the_batch() {
    let dir = tempfile::tempdir().unwrap();
    let session = util::any_fixture("xrec/session.xrec");
    std::fs::copy(&session, dir.path().join("a.xrec")).unwrap();
    std::fs::copy(&session, dir.path().join("a.xrec.xrec")).unwrap();
    let before = std::fs::read(dir.path().join("a.xrec.xrec")).unwrap();
    let run = run_in(
        dir.path(),
        &[
            "convert",
            "--each",
            "a.xrec",
            "a.xrec.xrec",
            "-o",
            ".",
            "--to",
            "xrec",
            "--force",
            "--format",
            "json",
        ],
    )
    .expect_code(2);
    let lines = run.json_lines();
    assert_eq!(lines[0]["output"], serde_json::Value::Null);
    assert!(
        lines[0]["error"]
            .as_str()
            .unwrap()
            .contains("is an input of this command"),
        "{}",
        run.stdout
    );
    assert_eq!(lines[1]["output"], "./a.xrec.xrec.xrec");
    assert_eq!(
        std::fs::read(dir.path().join("a.xrec.xrec")).unwrap(),
        before
    );
}

#[test]
fn the_progress_bar_shows_on_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixtures(dir.path());
    let args = [
        "convert",
        "--each",
        "small.traj",
        "small_plain.3es",
        "-o",
        "out/",
        "--to",
        "jsonl",
    ];
    let run = run_in(dir.path(), &args).expect_code(0);
    assert!(!run.stderr.contains("converting"), "{}", run.stderr);
    // On a terminal (`script` runs the command on a pseudo-terminal, where it exists).
    let bin = assert_cmd::cargo::cargo_bin("simrec");
    let line = format!("{} {} --jobs 2 --force", bin.display(), args.join(" "));
    let Ok(out) = std::process::Command::new("script")
        .args(["-qefc", &line, "/dev/null"])
        .current_dir(dir.path())
        .output()
    else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("converting 0/2"), "{text}");
    let quiet = format!("{line} --quiet");
    let out = std::process::Command::new("script")
        .args(["-qefc", &quiet, "/dev/null"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("converting"));
}
