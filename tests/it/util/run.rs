//! The built `simrec` binary, run as a user runs it, and what one run printed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

use super::fixtures::{any_fixture, fixture, s};
use super::json::parse_json_lines;

/// A command running the built binary.
pub fn simrec() -> Command {
    Command::cargo_bin("simrec").unwrap()
}

/// Everything one run produced.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub raw_stdout: Vec<u8>,
}

impl Run {
    fn from(output: Output) -> Run {
        Run {
            code: output.status.code().expect("killed by a signal"),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            raw_stdout: output.stdout,
        }
    }

    /// Panics with both streams unless the exit code is `code`.
    pub fn expect_code(self, code: i32) -> Run {
        assert_eq!(
            self.code, code,
            "unexpected exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// One JSON value per non-empty stdout line.
    pub fn json_lines(&self) -> Vec<Value> {
        parse_json_lines(&self.stdout)
    }
}

/// Runs `simrec ARGS` in `dir` (the test's temp dir), with no standard input.
pub fn run_in(dir: &Path, args: &[&str]) -> Run {
    run_with_stdin_in(dir, args, Vec::new())
}

/// One conversion both ways in `dir`: `input` to `frames` with `extra` flags (nothing
/// selected, so a pair of formats that offers frames takes them) and to `records` with
/// `--channel '*'` as well (every signal selected: the record path). Checks that both exit
/// alike and print the same once each output, as given, reads `OUT` and `normalize` has run
/// (the frame path tests of each writer then compare what was written).
pub fn frame_and_record_runs(
    dir: &Path,
    input: &Path,
    (frames, records): (&str, &str),
    extra: &[&str],
    normalize: fn(&str) -> String,
) -> (Run, Run) {
    let a = run_in(dir, &[&["convert", s(input), "-o", frames], extra].concat());
    let b = run_in(
        dir,
        &[
            &["convert", s(input), "-o", records, "--channel", "*"],
            extra,
        ]
        .concat(),
    );
    let what = input.display();
    assert_eq!(a.code, b.code, "{what}\n{}\n{}", a.stderr, b.stderr);
    assert_eq!(
        normalize(&a.stderr.replace(frames, "OUT")),
        normalize(&b.stderr.replace(records, "OUT")),
        "{what}"
    );
    (a, b)
}

/// Runs `simrec ARGS` in the legacy fixture directory (so paths in messages are short).
pub fn run(args: &[&str]) -> Run {
    run_in(&fixture(""), args)
}

/// Runs `simrec ARGS` in the legacy fixture directory with `stdin` as standard input.
pub fn run_with_stdin(args: &[&str], stdin: Vec<u8>) -> Run {
    run_with_stdin_in(&fixture(""), args, stdin)
}

fn run_with_stdin_in(dir: &Path, args: &[&str], stdin: Vec<u8>) -> Run {
    Run::from(
        simrec()
            .current_dir(dir)
            .args(args)
            .write_stdin(stdin)
            .output()
            .unwrap(),
    )
}

/// Every record of `path` as `simrec cat --format json` prints it (exit 3 allowed: a NaN is
/// printed as null and counted).
pub fn cat_json(dir: &Path, path: &Path) -> Vec<Value> {
    let run = run_in(dir, &["cat", "--format", "json", s(path)]);
    assert!([0, 3].contains(&run.code), "{}", run.stderr);
    run.json_lines()
}

/// Records per channel name as `inspect --format json` counts them over `inputs` (paths
/// relative to `dir`; a NanoVer pair is two documents, one per file).
pub fn inspect_counts(dir: &Path, inputs: &[&str]) -> BTreeMap<String, u64> {
    let mut args = vec!["inspect", "--format", "json"];
    args.extend(inputs);
    let mut counts = BTreeMap::new();
    for file in run_in(dir, &args).expect_code(0).json_lines() {
        for (name, records) in super::channel_counts(&file) {
            *counts.entry(name.to_string()).or_default() += records;
        }
    }
    counts
}

/// Converts fixture `source` into `dir/out` (then `args`), expects exit `code` and an output
/// that validates; returns the output's path and the run (its stdout is the report with
/// `--format json`).
pub fn convert_fixture(
    dir: &Path,
    source: &str,
    out: &str,
    args: &[&str],
    code: i32,
) -> (PathBuf, Run) {
    let (input, output) = (any_fixture(source), dir.join(out));
    let mut all = vec!["convert", s(&input), s(&output)];
    all.extend_from_slice(args);
    let run = run_in(dir, &all).expect_code(code);
    run_in(dir, &["validate", s(&output)]).expect_code(0);
    (output, run)
}
