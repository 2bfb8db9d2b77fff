//! Signal selection and decimation (spec §A14) on every reading command: `--channel` and
//! `--exclude-channel` globs (anchored, `*` crosses dots, exclude wins), `--regex` for
//! Icarus's own unanchored regular expressions, `--no-derivatives`, `--decimate N`.

use std::path::Path;

use crate::util;
use crate::util::{any_fixture as fixture, run_in, s};

/// The channel of every record `cat --format json` prints, in order.
fn channels(dir: &Path, args: &[&str]) -> Vec<String> {
    let mut all = vec!["cat", "--format", "json"];
    all.extend_from_slice(args);
    run_in(dir, &all)
        .expect_code(0)
        .json_lines()
        .iter()
        .map(|r| r["channel"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn exclude_wins_and_globs_are_anchored() {
    let tmp = tempfile::tempdir().unwrap();
    let types = fixture("icarec/types.icarec");
    let got = channels(
        tmp.path(),
        &[
            s(&types),
            "--channel",
            "Sim.*",
            "--exclude-channel",
            "*_slot",
        ],
    );
    assert_eq!(
        got,
        [
            "Sim.gain",
            "Sim.count",
            "Sim.mode",
            "Sim.armed",
            "Sim.count",
            "Sim.mode",
            "Sim.armed"
        ]
    );
    // Anchored: `mode` alone is no signal's whole name.
    let r = run_in(tmp.path(), &["cat", s(&types), "--channel", "mode"]).expect_code(2);
    assert!(
        r.stderr.contains("--channel `mode` matches no channel"),
        "{}",
        r.stderr
    );
}

#[test]
fn regex_searches_anywhere_and_refuses_what_rust_regex_lacks() {
    let tmp = tempfile::tempdir().unwrap();
    let types = fixture("icarec/types.icarec");
    let got = channels(
        tmp.path(),
        &[
            s(&types),
            "--regex",
            "--channel",
            "mode",
            "--exclude-channel",
            r"_slot$",
        ],
    );
    assert_eq!(got, ["Sim.mode", "Sim.mode"]);
    let got = channels(
        tmp.path(),
        &[s(&types), "--regex", "--channel", r"^Body\.(q|r)$"],
    );
    assert_eq!(got, ["Body.q", "Body.r", "Body.q", "Body.r"]);
    let r = run_in(
        tmp.path(),
        &["cat", s(&types), "--regex", "--channel", r"(a)\1"],
    )
    .expect_code(2);
    assert!(
        r.stderr
            .starts_with("error: invalid pattern `(a)\\1`: regex parse error:"),
        "{}",
        r.stderr
    );
}

#[test]
fn no_derivatives_skips_dot_signals() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("run.csv"),
        "time,Body.p,Body.p_dot,Body.q_dot.x\n0.1,1,2,3\n",
    )
    .unwrap();
    assert_eq!(
        channels(tmp.path(), &["run.csv", "--no-derivatives"]),
        ["Body.p"]
    );
    assert_eq!(channels(tmp.path(), &["run.csv"]).len(), 3);
}

#[test]
fn decimate_keeps_every_nth_frame_from_the_first() {
    let tmp = tempfile::tempdir().unwrap();
    // vulcan.h5: 2500 frames of 8 signals, t = 0.01 … 25.0 s.
    let vulcan = fixture("icarus-hdf5/vulcan.h5");
    let r = run_in(
        tmp.path(),
        &[
            "cat",
            s(&vulcan),
            "--format",
            "json",
            "--decimate",
            "1000",
            "--channel",
            "Rocket.Engine.thrust",
        ],
    )
    .expect_code(0);
    let times: Vec<i64> = r
        .json_lines()
        .iter()
        .map(|j| j["time_ns"].as_i64().unwrap())
        .collect();
    assert_eq!(times, [10_000_000, 10_010_000_000, 20_010_000_000]);

    // Through convert: an .icarec of frames 0, 7, 14 … of 2500.
    run_in(
        tmp.path(),
        &[
            "convert",
            s(&vulcan),
            "--decimate",
            "7",
            "-o",
            "every7.icarec",
        ],
    )
    .expect_code(0);
    let j = run_in(
        tmp.path(),
        &["inspect", "every7.icarec", "--format", "json"],
    )
    .expect_code(0)
    .json_lines()
    .remove(0);
    // Seven dynamic signals per frame; the static Rocket.Mass.dry is one record in .icarec.
    assert_eq!(j["records"], 358 * 7 + 1);
    // Frame 2499 = 7 × 357 is the last, at 25.0 s.
    assert_eq!(j["end_ns"], 25_000_000_000i64);
    let r = run_in(tmp.path(), &["cat", s(&vulcan), "--decimate", "0"]).expect_code(2);
    assert!(r.stderr.contains("--decimate <N>"), "{}", r.stderr);
}

#[test]
fn the_rules_serve_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    let (traj, state) = (util::fixture("small.traj"), util::fixture("small.state"));
    let got = channels(
        tmp.path(),
        &[s(&traj), s(&state), "--exclude-channel", "state"],
    );
    assert_eq!(got.len(), 32);
    assert!(got.iter().all(|c| c == "frame"));
    // Decimation counts frames; the state channel has none and is kept whole.
    let got = channels(tmp.path(), &[s(&traj), s(&state), "--decimate", "10"]);
    assert_eq!(got.iter().filter(|c| *c == "frame").count(), 4);
    assert_eq!(got.iter().filter(|c| *c == "state").count(), 15);
}
