//! What simrec does to the file system around its outputs: `--force` never deletes what
//! simrec did not write, an interrupted run leaves nothing behind, missing directories are
//! created, and `--dry-run` fails where the run would.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::util;
use crate::util::{dir_entries, fixture, fixture_bytes, run_in, s};

fn tree_bytes(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            v.extend(tree_bytes(&p));
        } else {
            v.push((p.clone(), fs::read(&p).unwrap()));
        }
    }
    v.sort();
    v
}

#[test]
fn force_refuses_a_directory_of_other_files_and_removes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dir");
    fs::create_dir_all(out.join("sub")).unwrap();
    fs::write(out.join("notes.txt"), b"keep me").unwrap();
    fs::write(out.join("sub/data.csv"), b"1,2\n").unwrap();
    let before = tree_bytes(&out);
    let small = fixture("small.traj");
    let r = run_in(dir.path(), &["convert", s(&small), "-o", "dir", "--force"]).expect_code(2);
    assert!(
        r.stderr
            .contains("dir: holds notes.txt, which an elodin-db output does not have")
            && r.stderr.contains("nothing was written"),
        "{}",
        r.stderr
    );
    assert_eq!(tree_bytes(&out), before);
    assert_eq!(
        dir_entries(dir.path()),
        ["dir"],
        "no temporary left beside it"
    );
}

#[test]
fn force_never_writes_over_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("small.traj");
    fs::write(&input, fixture_bytes("small.traj")).unwrap();
    for args in [
        vec!["convert", "small.traj", "-o", "small.traj", "--force"],
        vec!["convert", "small.traj", "-o", "./small.traj", "--force"],
        vec![
            "convert",
            "small.traj",
            "-o",
            ".",
            "--to",
            "elodin",
            "--force",
        ],
        vec![
            "slice",
            "small.traj",
            "--start",
            "1s",
            "-o",
            "small.traj",
            "--force",
        ],
        vec!["recover", "small.traj", "-o", "small.traj", "--force"],
    ] {
        let r = run_in(dir.path(), &args).expect_code(2);
        assert!(
            r.stderr.contains("an input of this command"),
            "{args:?}: {}",
            r.stderr
        );
        assert_eq!(fs::read(&input).unwrap(), fixture_bytes("small.traj"));
        assert_eq!(dir_entries(dir.path()), ["small.traj"], "{args:?}");
    }
    // A directory output (an Elodin DB) converted onto itself.
    let replay = dir.path().join("replay");
    run_in(dir.path(), &["convert", "small.traj", "-o", "replay/"]).expect_code(3);
    let before = tree_bytes(&replay);
    run_in(
        dir.path(),
        &["convert", "replay", "-o", "replay/", "--force"],
    )
    .expect_code(2);
    assert_eq!(tree_bytes(&replay), before);
}

#[test]
fn force_replaces_an_empty_directory_or_a_recording_of_the_output_format() {
    let dir = tempfile::tempdir().unwrap();
    let small = fixture("small.traj");
    let out = dir.path().join("out");
    fs::create_dir(&out).unwrap();
    // Without --force even an empty directory is kept (exit 1, as for any existing output).
    run_in(dir.path(), &["convert", s(&small), "-o", "out/"]).expect_code(2);
    run_in(dir.path(), &["convert", s(&small), "-o", "out/", "--force"]).expect_code(3);
    assert!(out.join("db_state").is_file());
    let first = tree_bytes(&out);
    // Now an Elodin DB: replaced by the new one, whole.
    let state = fixture("small.state");
    run_in(
        dir.path(),
        &["convert", s(&small), s(&state), "-o", "out/", "--force"],
    )
    .expect_code(3);
    assert!(out.join("db_state").is_file());
    assert_ne!(tree_bytes(&out), first, "the new DB replaced the old one");
    assert_eq!(
        dir_entries(dir.path()),
        ["out"],
        "the old one is gone, nothing aside"
    );
    // A file where a directory output is asked for is not replaced.
    fs::write(dir.path().join("f"), b"x").unwrap();
    run_in(
        dir.path(),
        &["convert", s(&small), "-o", "f", "--to", "elodin", "--force"],
    )
    .expect_code(2);
    assert_eq!(fs::read(dir.path().join("f")).unwrap(), b"x");
}

#[test]
fn missing_output_directories_are_created() {
    let dir = tempfile::tempdir().unwrap();
    let small = fixture("small.traj");
    run_in(dir.path(), &["convert", s(&small), "-o", "a/b/small.jsonl"]).expect_code(0);
    assert!(dir.path().join("a/b/small.jsonl").is_file());
    let zip = util::any_fixture("nanover-zip/small.nanover.zip");
    run_in(
        dir.path(),
        &["slice", "--split-at-resets", s(&zip), "-o", "parts/"],
    )
    .expect_code(0);
    // Parts in the input's format, named as upstream names them.
    assert_eq!(
        dir_entries(&dir.path().join("parts")),
        [
            "small.nanover-01.nanover.zip",
            "small.nanover-02.nanover.zip",
            "small.nanover-03.nanover.zip"
        ]
    );
    // A run that fails leaves no directory it created.
    let broken = fixture("broken/trunc-payload.traj");
    run_in(
        dir.path(),
        &["convert", "--strict", s(&broken), "-o", "c/d/x.jsonl"],
    )
    .expect_code(1);
    assert!(!dir.path().join("c").exists());
}

#[test]
fn a_dry_run_fails_as_the_run_would_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let small = fixture("small.traj");
    fs::write(dir.path().join("out.jsonl"), b"old").unwrap();
    let r = run_in(
        dir.path(),
        &["convert", "--dry-run", s(&small), "-o", "out.jsonl"],
    )
    .expect_code(2);
    assert!(
        r.stderr.contains("cannot write out.jsonl: exists"),
        "{}",
        r.stderr
    );
    fs::write(dir.path().join("file"), b"x").unwrap();
    let r = run_in(
        dir.path(),
        &["convert", "--dry-run", s(&small), "-o", "file/x.jsonl"],
    )
    .expect_code(1);
    assert!(r.stderr.contains("not a directory"), "{}", r.stderr);
    run_in(
        dir.path(),
        &["convert", "--dry-run", s(&small), "-o", "new/x.jsonl"],
    )
    .expect_code(0);
    assert_eq!(dir_entries(dir.path()), ["file", "out.jsonl"]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let locked = dir.path().join("locked");
        fs::create_dir(&locked).unwrap();
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o555)).unwrap();
        // Root writes anywhere: the check is only meaningful for other users.
        let root = fs::write(locked.join("probe"), b"").is_ok();
        if !root {
            run_in(
                dir.path(),
                &["convert", "--dry-run", s(&small), "-o", "locked/x.jsonl"],
            )
            .expect_code(1);
        }
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// A `.traj` of `copies` times small.traj's records, at increasing times: long enough to
/// convert that a signal arrives mid-run.
fn long_traj(path: &Path, copies: u64) {
    let small = fixture_bytes("small.traj");
    let mut records = Vec::new();
    let mut at = 16;
    while at + 24 <= small.len() {
        let len = u64::from_le_bytes(small[at + 16..at + 24].try_into().unwrap()) as usize;
        records.push(&small[at + 24..at + 24 + len]);
        at += 24 + len;
    }
    let mut out = small[..16].to_vec();
    let mut t: u128 = 0;
    for _ in 0..copies {
        for payload in &records {
            t += 1000;
            out.extend_from_slice(&t.to_le_bytes());
            out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
            out.extend_from_slice(payload);
        }
    }
    fs::write(path, out).unwrap();
}

/// Starts `simrec ARGS` in `dir`, waits until a temporary output appears in `watch`, sends
/// `signal`, and returns the exit code.
fn interrupt_in(dir: &Path, watch: &Path, args: &[&str], signal: &str) -> i32 {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("simrec"))
        .current_dir(dir)
        .args(args)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let partial_in = |d: &Path| {
        fs::read_dir(d).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().ends_with(".partial"))
        })
    };
    while !partial_in(watch) {
        assert!(Instant::now() < deadline, "no temporary output appeared");
        assert!(child.try_wait().unwrap().is_none(), "finished too soon");
        std::thread::sleep(Duration::from_millis(5));
    }
    let sent = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    child.wait().unwrap().code().expect("exited, not killed")
}

/// [`interrupt_in`] watching `dir` itself.
fn interrupt(dir: &Path, args: &[&str], signal: &str) -> i32 {
    interrupt_in(dir, dir, args, signal)
}

#[test]
fn an_interrupted_run_leaves_no_partial_output() {
    let dir = tempfile::tempdir().unwrap();
    long_traj(&dir.path().join("long.traj"), 1500);
    let code = interrupt(
        dir.path(),
        &["convert", "long.traj", "-o", "long.jsonl"],
        "-INT",
    );
    assert_eq!(code, 130);
    assert_eq!(dir_entries(dir.path()), ["long.traj"]);
    // An Elodin DB (the default `DIR/`): its writer adds component folders to the temporary
    // directory while the interrupt removes it; before that removal was retried, most
    // interrupted runs left it behind, so a few runs show it.
    for _ in 0..5 {
        let code = interrupt(dir.path(), &["convert", "long.traj", "-o", "db/"], "-TERM");
        assert_eq!(code, 143);
        assert_eq!(dir_entries(dir.path()), ["long.traj"]);
    }
}

#[test]
fn an_interrupted_run_removes_the_directories_it_created() {
    let dir = tempfile::tempdir().unwrap();
    long_traj(&dir.path().join("long.traj"), 1500);
    fs::create_dir(dir.path().join("kept")).unwrap();
    for (signal, code) in [("-INT", 130), ("-TERM", 143), ("-HUP", 129)] {
        let run = |output: &str, watch: &str| {
            interrupt_in(
                dir.path(),
                &dir.path().join(watch),
                &["convert", "long.traj", "-o", output],
                signal,
            )
        };
        assert_eq!(run("new/sub/x.jsonl", "new/sub"), code, "{signal}");
        assert_eq!(dir_entries(dir.path()), ["kept", "long.traj"], "{signal}");
        // A directory that was there before stays, with what it holds.
        assert_eq!(run("kept/deeper/x.jsonl", "kept/deeper"), code, "{signal}");
        assert_eq!(dir_entries(dir.path()), ["kept", "long.traj"], "{signal}");
        assert!(dir_entries(&dir.path().join("kept")).is_empty(), "{signal}");
    }
}

/// A copy of the fixture directory `rel` at `to`.
fn copy_fixture(rel: &str, to: &Path) {
    util::copy_tree(&util::any_fixture(rel), to);
}

#[test]
fn nothing_is_written_inside_an_input() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture("icarec/a2.icarec", &dir.path().join("run.icarec"));
    copy_fixture("elodin/spin_120", &dir.path().join("r"));
    #[cfg(unix)]
    std::os::unix::fs::symlink("run.icarec", dir.path().join("link")).unwrap();
    let before = tree_bytes(dir.path());
    let mut cases = vec![
        vec![
            "convert",
            "run.icarec",
            "-o",
            "run.icarec/metadata.json",
            "--to",
            "jsonl",
            "--force",
        ],
        vec!["convert", "run.icarec", "-o", "run.icarec/x.csv"],
        vec!["convert", "run.icarec", "-o", "run.icarec/sub/x.csv"],
        vec!["convert", "r", "-o", "r/world/body.parquet", "--force"],
        vec!["convert", "r", "-o", "r/world/new/", "--to", "elodin"],
        vec![
            "slice",
            "run.icarec",
            "--start",
            "0s",
            "-o",
            "./run.icarec/cut.icarec",
        ],
        vec!["recover", "r", "-o", "r/world/", "--force"],
    ];
    #[cfg(unix)]
    cases.extend([
        vec!["convert", "run.icarec", "-o", "link/x.jsonl"],
        vec!["convert", "link", "-o", "run.icarec/x.jsonl"],
    ]);
    for args in cases {
        let r = run_in(dir.path(), &args).expect_code(2);
        assert!(
            r.stderr.contains("an input of this command")
                && r.stderr.contains("nothing was written"),
            "{args:?}: {}",
            r.stderr
        );
        assert_eq!(tree_bytes(dir.path()), before, "{args:?}");
    }
}

#[test]
fn force_replaces_a_directory_only_when_it_holds_nothing_the_writer_would_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let tar = util::any_fixture("icarec/a2.icarec.tar");
    let small = fixture("small.traj");
    // The issue's project: an Elodin world beside a thesis and sources.
    let proj = dir.path().join("proj");
    copy_fixture("elodin/spin_120/world", &proj.join("world"));
    fs::create_dir(proj.join("src")).unwrap();
    fs::write(proj.join("src/main.rs"), b"x").unwrap();
    fs::write(proj.join("thesis.txt"), b"t").unwrap();
    // An .icarec and an Elodin replay with one file more than their writers write.
    let icarec = dir.path().join("out.icarec");
    copy_fixture("icarec/a2.icarec", &icarec);
    fs::write(icarec.join("notes.txt"), b"n").unwrap();
    let replay = dir.path().join("replay");
    copy_fixture("elodin/ball_1200", &replay);
    fs::write(replay.join("world/README"), b"r").unwrap();
    // A text file named like a table.
    let tables = dir.path().join("tables");
    fs::create_dir(&tables).unwrap();
    fs::write(tables.join("notes.parquet"), b"not a table").unwrap();
    let before = tree_bytes(dir.path());
    for (args, entry) in [
        (vec!["convert", s(&tar), "-o", "proj/", "--force"], "src"),
        (
            vec!["convert", s(&small), "-o", "out.icarec", "--force"],
            "notes.txt",
        ),
        (
            vec![
                "convert",
                s(&small),
                "-o",
                "replay/",
                "--to",
                "elodin",
                "--force",
            ],
            "world/README",
        ),
        (
            vec![
                "convert",
                s(&small),
                "-o",
                "tables/",
                "--to",
                "parquet",
                "--force",
            ],
            "notes.parquet",
        ),
    ] {
        let r = run_in(dir.path(), &args).expect_code(2);
        assert!(
            r.stderr.contains(&format!("holds {entry}, which"))
                && r.stderr.contains("nothing was written")
                // The path is said once, after `cannot write`.
                && r.stderr.matches(args[3]).count() == 1,
            "{args:?}: {}",
            r.stderr
        );
        assert_eq!(tree_bytes(dir.path()), before, "{args:?}");
    }
    // What the writers wrote themselves is replaced.
    fs::remove_file(icarec.join("notes.txt")).unwrap();
    fs::remove_file(replay.join("world/README")).unwrap();
    fs::remove_file(tables.join("notes.parquet")).unwrap();
    fs::remove_dir(&tables).unwrap();
    run_in(
        dir.path(),
        &["convert", s(&tar), "-o", "tables/", "--to", "parquet"],
    )
    .expect_code(0);
    for args in [
        vec!["convert", s(&small), "-o", "out.icarec", "--force"],
        vec![
            "convert",
            s(&tar),
            "-o",
            "replay/",
            "--to",
            "elodin",
            "--force",
        ],
        vec![
            "convert",
            s(&tar),
            "-o",
            "tables/",
            "--to",
            "parquet",
            "--force",
        ],
    ] {
        let r = run_in(dir.path(), &args);
        assert!([0, 3].contains(&r.code), "{args:?}: {}", r.stderr);
    }
    assert!(
        !replay.join("tick_exec").exists(),
        "the new replay replaced the old"
    );
}

#[test]
fn a_stale_partial_is_never_taken_for_output_and_is_cleared_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    // Left by a run killed with SIGKILL (no process has this id).
    let stale = dir.path().join(".small.jsonl.4194305-Ab12Cd.partial");
    fs::write(&stale, b"{\"time_ns\":").unwrap();
    let r = run_in(dir.path(), &["inspect", s(&stale)]).expect_code(1);
    assert!(r.stderr.contains("unfinished output"), "{}", r.stderr);
    let small = fixture("small.traj");
    run_in(dir.path(), &["convert", s(&small), "-o", "small.jsonl"]).expect_code(0);
    assert_eq!(dir_entries(dir.path()), ["small.jsonl"]);
}
