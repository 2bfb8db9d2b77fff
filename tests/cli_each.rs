//! `convert --each`: each recording to its own output, in parallel, past failures, with a
//! summary and the worst exit code.

mod common;

use std::path::{Path, PathBuf};

use common::run_in;

fn copy_fixtures(dir: &Path) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures");
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
    let summary: Vec<(String, String, u64, u64)> = lines
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
                l["output"].as_str().unwrap().to_string(),
                l["records"].as_u64().unwrap(),
                l["exit"].as_u64().unwrap(),
            )
        })
        .collect();
    let s = |a: &str, b: &str, n: u64, e: u64| (a.to_string(), b.to_string(), n, e);
    assert_eq!(
        summary,
        [
            s("small.traj+small.state", "out/small.parquet", 47, 0),
            s("bad.3es", "out/bad.parquet", 0, 1),
            s("small.nanover.zip", "out/small-2.parquet", 91, 0),
            s("small_plain.3es", "out/small_plain.parquet", 416, 0),
            s("a2.icarec", "out/a2.parquet", 7, 0),
        ]
    );
    // Read up to its damage, it holds not one record: an error, as for `recover`.
    assert!(lines[1]["error"]
        .as_str()
        .unwrap()
        .starts_with("bad.3es: TES_TRUNCATED_PACKET at byte 0"));
    for name in [
        "small.parquet",
        "small-2.parquet",
        "small_plain.parquet",
        "a2.parquet",
    ] {
        assert!(dir.path().join("out").join(name).is_file(), "{name}");
    }
    assert!(!dir.path().join("out/bad.parquet").exists());

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
    assert!(run.stdout.contains("csv/small.csv"), "{}", run.stdout);
    assert!(dir.path().join("csv/small_plain.csv").is_file());
}
