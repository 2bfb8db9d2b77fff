//! What a user expects from a command-line tool: errors that say why, batches that go on
//! past one bad file, selections that say when they match nothing, readable `cat`, grouped
//! findings, completions and a man page.

mod common;

use common::run;

#[test]
fn a_missing_file_says_why_and_the_batch_goes_on() {
    let r = run(&["inspect", "missing.traj"]).expect_code(1);
    assert!(
        r.stderr
            .contains("missing.traj: No such file or directory (os error 2)"),
        "{}",
        r.stderr
    );
    let r = run(&["inspect", "missing.traj", "small.traj"]).expect_code(1);
    assert!(r.stdout.starts_with("small.traj\n"), "{}", r.stdout);
    assert!(r.stdout.contains("│ records     ┆ 32"), "{}", r.stdout);
    let r = run(&["inspect", "--format", "json", "missing.traj", "small.traj"]).expect_code(1);
    let v = r.json_lines();
    assert_eq!(
        v[0]["error"],
        "missing.traj: No such file or directory (os error 2)"
    );
    assert_eq!(v[1]["records"], 32);

    let r = run(&["validate", "missing.traj", "small.traj"]).expect_code(1);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "missing.traj: FAILED (1 error, 0 warnings, 0 info)"
    );
    assert_eq!(
        lines[1],
        "  error SIMREC_UNREADABLE: missing.traj: No such file or directory (os error 2)"
    );
    assert_eq!(lines[2], "small.traj: ok (0 errors, 0 warnings, 25 info)");
    let r = run(&[
        "validate",
        "--format",
        "json",
        "small.state",
        "missing.traj",
    ])
    .expect_code(1);
    let v = r.json_lines();
    assert_eq!(
        (v[0]["ok"].as_bool(), v[1]["ok"].as_bool()),
        (Some(true), Some(false))
    );
    assert_eq!(v[1]["findings"][0]["code"], "SIMREC_UNREADABLE");

    let r = run(&["convert", "missing.traj", "-o", "-", "--to", "jsonl"]).expect_code(1);
    assert_eq!(
        r.stderr,
        "error: missing.traj: No such file or directory (os error 2)\n"
    );
}
