//! `simrec slice`, end to end: time and frame windows with their folded context (spec §11),
//! the recording's own times kept (or `--rebase`), relative times, key selection, and
//! bit-exact kept records.

use std::path::Path;

use serde_json::{json, Value};

use crate::util::*;

/// Both files of a sliced pair, merged by time, as JSON objects.
fn ndjson(files: &[&Path]) -> Vec<Value> {
    let mut args = vec!["cat", "--format", "ndjson"];
    args.extend(files.iter().map(|p| s(p)));
    run(&args).expect_code(0).json_lines()
}

/// Replaying the slice gives the same aggregate frame and full state as the input at every
/// kept time (spec §14).
fn assert_replays(slice: &[Value], full: &[Value], t0: i64) {
    for r in slice {
        let t = time_ns(r);
        let a = fold(slice, t + 1);
        let b = fold(full, t + t0 + 1);
        assert_eq!(a.frame, b.frame, "aggregate frame at slice time {t}");
        assert_eq!(a.state, b.state, "full state at slice time {t}");
    }
}

/// The records of `file` with µs timestamps in [from, to), re-timed by -shift µs.
fn kept(file: &str, from: u64, to: u64, shift: u64) -> Vec<RawRecord> {
    raw_records(&fixture_bytes(file))
        .into_iter()
        .filter(|r| r.time_us >= from && r.time_us < to)
        .map(|mut r| {
            r.time_us -= shift;
            r
        })
        .collect()
}

#[test]
fn time_window_starts_with_folded_frame_and_state() {
    let dir = tempfile::tempdir().unwrap();
    let traj = dir.path().join("cut.traj");
    let state = dir.path().join("cut.state");
    let r = run(&[
        "slice",
        "--rebase",
        "small.traj",
        "small.state",
        "--start",
        "2s",
        "--end",
        "4s",
        "-o",
        s(&traj),
    ])
    .expect_code(0);
    assert!(r.stderr.contains("wrote 15 records"), "{}", r.stderr);

    let full = small_pair_jsonl();
    let out = ndjson(&[&traj, &state]);
    assert_eq!(out.len(), 15);
    let context = fold(&full, 2_000_000_000);

    // A synthetic reset frame at 0 holding the aggregate of the 17 frames before 2 s ...
    assert_eq!(time_ns(&out[0]), 0);
    assert_eq!(channel(&out[0]), "frame");
    assert_eq!(frame(&out[0]), Some(0));
    assert_eq!(values_map(&out[0]), context.frame);
    assert_eq!(context.frames, 16);
    assert_eq!(keys(&out[0]).len(), 24);
    // ... then one state record at 0 holding the folded state (no removed keys in it).
    assert_eq!(time_ns(&out[1]), 0);
    assert_eq!(channel(&out[1]), "state");
    assert_eq!(values_map(&out[1]), context.state);
    assert_eq!(
        out[1]["values"],
        json!({
            "imd.velocity_reset_available": true,
            "simrec.counter": 5.0,
            "simrec.nested": {"a": [1.0, 2.5, "x"], "b": {"c": true, "d": null}}
        })
    );
    assert!(removed(&out[1]).is_empty());

    // Kept records follow, rebased by 2 s, unchanged otherwise.
    let expected: Vec<&Value> = full
        .iter()
        .filter(|r| (2_000_000_000..4_000_000_000).contains(&time_ns(r)))
        .collect();
    assert_eq!(expected.len(), 13);
    for (a, b) in out[2..].iter().zip(&expected) {
        assert_eq!(time_ns(a), time_ns(b) - 2_000_000_000);
        assert_eq!(channel(a), channel(b));
        assert_eq!(a.get("frame"), b.get("frame"));
        assert_eq!(a["values"], b["values"]);
        assert_eq!(removed(a), removed(b));
    }
    assert_eq!(time_ns(&out[2]), 105_169_000);
    assert_eq!(time_ns(&out[14]), 1_675_374_000);
    assert_replays(&out, &full, 2_000_000_000);

    // On disk: kept records carry the original payload bytes with a new timestamp.
    let t = raw_records_of(&traj);
    assert_eq!(t.len(), 12);
    assert_eq!(t[0].time_us, 0);
    assert_same_records(
        &t[1..],
        &kept("small.traj", 2_000_000, 4_000_000, 2_000_000),
    );
    let st = raw_records_of(&state);
    assert_eq!(st.len(), 3);
    assert_eq!(st[0].time_us, 0);
    assert_same_records(
        &st[1..],
        &kept("small.state", 2_000_000, 4_000_000, 2_000_000),
    );

    let r = run(&["inspect", "--format", "json", s(&traj)]).expect_code(0);
    assert_eq!(r.json_lines()[0]["resets"], json!([0, 2, 9]));
    run(&["validate", "--strict", s(&traj), s(&state)]).expect_code(0);
}

#[test]
fn time_window_to_jsonl_matches_the_pair_output() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("cut.jsonl");
    let traj = dir.path().join("cut.traj");
    for out in [&jsonl, &traj] {
        run(&[
            "slice",
            "small.traj",
            "small.state",
            "--start",
            "2s",
            "--end",
            "4s",
            "-o",
            s(out),
        ])
        .expect_code(0);
    }
    assert_eq!(
        read_jsonl(&jsonl),
        ndjson(&[&traj, &dir.path().join("cut.state")])
    );
}

#[test]
fn frame_window_starting_at_a_reset_adds_no_synthetic_frame() {
    let dir = tempfile::tempdir().unwrap();
    let traj = dir.path().join("f.traj");
    let state = dir.path().join("f.state");
    run(&[
        "slice",
        "--rebase",
        "small.traj",
        "small.state",
        "--frames",
        "17..24",
        "-o",
        s(&traj),
    ])
    .expect_code(0);

    // Record 17 (a reset at 2.121956 s) up to record 24 (3.008374 s), exclusive.
    let t = raw_records_of(&traj);
    assert_eq!(t.len(), 7);
    assert_same_records(&t, &kept("small.traj", 2_121_956, 3_008_374, 2_121_956));
    let st = raw_records_of(&state);
    assert_eq!(st.len(), 2);
    assert_eq!(st[0].time_us, 0);
    assert_eq!(st[1].time_us, 3_003_785 - 2_121_956);
    assert_same_bytes(
        &st[1].payload,
        &kept("small.state", 3_000_000, 3_100_000, 0)[0].payload,
        "kept state payload",
    );

    let full = small_pair_jsonl();
    let out = ndjson(&[&traj, &state]);
    assert_eq!(out.len(), 9);
    assert_eq!(
        out.iter()
            .filter(|r| channel(r) == "frame")
            .map(|r| frame(r).unwrap())
            .collect::<Vec<_>>(),
        [0, 1, 2, 3, 4, 5, 6]
    );
    // The kept reset comes first on the merged timeline, then the synthetic state.
    assert_eq!(channel(&out[0]), "frame");
    assert_eq!(keys(&out[0]).len(), 17);
    assert_eq!(channel(&out[1]), "state");
    assert_eq!(time_ns(&out[1]), 0);
    assert_eq!(values_map(&out[1]), fold(&full, 2_121_956_000).state);
    assert_replays(&out, &full, 2_121_956_000);

    // The same window by frame flags and by exact times gives the same bytes.
    for (i, flags) in [
        ["--start", "#17", "--end", "#24"],
        ["--start", "2121956us", "--end", "3008374us"],
    ]
    .iter()
    .enumerate()
    {
        let other = dir.path().join(format!("o{i}.traj"));
        let mut args = vec!["slice", "--rebase", "small.traj", "small.state"];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["-o", s(&other)]);
        run(&args).expect_code(0);
        assert_same_bytes(
            &std::fs::read(&other).unwrap(),
            &std::fs::read(&traj).unwrap(),
            "output",
        );
        assert_same_bytes(
            &std::fs::read(other.with_extension("state")).unwrap(),
            &std::fs::read(&state).unwrap(),
            "output",
        );
    }
}

#[test]
fn frame_window_mid_run_gets_a_synthetic_reset() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f.jsonl");
    run(&[
        "slice",
        "--rebase",
        "small.traj",
        "--frames",
        "30..",
        "-o",
        s(&out),
    ])
    .expect_code(0);
    let v = read_jsonl(&out);
    let full = run(&["cat", "--format", "ndjson", "small.traj"])
        .expect_code(0)
        .json_lines();
    assert_eq!(v.len(), 3);
    assert_eq!((time_ns(&v[0]), frame(&v[0])), (0, Some(0)));
    // Folded from the reset at record 24 through record 29.
    assert_eq!(values_map(&v[0]), fold(&full, 5_056_741_000).frame);
    assert_eq!((time_ns(&v[1]), frame(&v[1])), (0, Some(6)));
    assert_eq!(
        (time_ns(&v[2]), frame(&v[2])),
        (5_380_761_000 - 5_056_741_000, Some(7))
    );
}

#[test]
fn whole_pair_from_zero_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    for (i, flags) in [
        vec!["--start", "0"],
        vec![],
        vec!["--start", "0s", "--end", "6s"],
        vec!["--end", "5380762us"],
    ]
    .into_iter()
    .enumerate()
    {
        let traj = dir.path().join(format!("w{i}.traj"));
        let mut args = vec!["slice", "small.traj", "small.state"];
        args.extend(flags);
        args.extend(["-o", s(&traj)]);
        let r = run(&args).expect_code(0);
        assert!(r.stderr.contains("wrote 47 records"), "{}", r.stderr);
        assert_file_bytes(&traj, &fixture_bytes("small.traj"));
        assert_file_bytes(&traj.with_extension("state"), &fixture_bytes("small.state"));
    }
}

#[test]
fn a_window_keeps_original_times_and_record_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let traj = dir.path().join("k.traj");
    let state = dir.path().join("k.state");
    run(&[
        "slice",
        "small.traj",
        "small.state",
        "--start",
        "2s",
        "--end",
        "4s",
        "-o",
        s(&traj),
    ])
    .expect_code(0);
    let out = ndjson(&[&traj, &state]);
    assert_eq!(out.len(), 15);
    // The context sits at the window start on the original clock.
    assert_eq!(time_ns(&out[0]), 2_000_000_000);
    assert_eq!(frame(&out[0]), Some(0));
    assert_eq!(time_ns(&out[1]), 2_000_000_000);
    assert_eq!(channel(&out[1]), "state");
    assert_eq!(time_ns(&out[2]), 2_105_169_000);
    assert_eq!(time_ns(&out[14]), 3_675_374_000);
    let full = small_pair_jsonl();
    assert_replays(&out, &full, 0);

    // Kept records are copied whole: the file ends with the original bytes of records 16..27.
    let small = fixture_bytes("small.traj");
    let orig = raw_records(&small);
    let first = orig.iter().find(|r| r.time_us >= 2_000_000).unwrap().offset;
    let end = orig.iter().find(|r| r.time_us >= 4_000_000).unwrap().offset;
    let bytes = std::fs::read(&traj).unwrap();
    assert_same_bytes(
        &bytes[bytes.len() - (end - first)..],
        &small[first..end],
        "kept records",
    );
    let t = raw_records(&bytes);
    assert_eq!(t.len(), 12);
    assert_eq!(t[0].time_us, 2_000_000);
}

#[test]
fn relative_start_counts_from_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.jsonl");
    run(&[
        "slice",
        "--rebase",
        "small.traj",
        "small.state",
        "--start",
        "-5s",
        "-o",
        s(&out),
    ])
    .expect_code(0);
    let v = read_jsonl(&out);
    // The pair ends at 5.380761 s: the window starts at 0.380761 s.
    let t0 = 380_761_000;
    let full = small_pair_jsonl();
    let kept = full.iter().filter(|r| time_ns(r) >= t0).count();
    assert_eq!(kept, 41);
    assert_eq!(v.len(), 43);
    assert_eq!(
        (channel(&v[0]), frame(&v[0]), time_ns(&v[0])),
        ("frame", Some(0), 0)
    );
    assert_eq!((channel(&v[1]), time_ns(&v[1])), ("state", 0));
    assert_eq!(time_ns(&v[2]), 440_514_000 - t0);
    assert_eq!(time_ns(v.last().unwrap()), 5_380_761_000 - t0);
    assert_replays(&v, &full, t0);

    let out = dir.path().join("rk.jsonl");
    run(&[
        "slice",
        "small.traj",
        "small.state",
        "--start",
        "-5s",
        "-o",
        s(&out),
    ])
    .expect_code(0);
    let v = read_jsonl(&out);
    assert_eq!(time_ns(&v[0]), t0);
    assert_eq!(time_ns(v.last().unwrap()), 5_380_761_000);
}

#[test]
fn time_units_agree() {
    let dir = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    for (i, (a, b)) in [
        ("2.5", "3.5s"),
        ("2500ms", "3500000us"),
        ("2500000000ns", "3500ms"),
    ]
    .into_iter()
    .enumerate()
    {
        let out = dir.path().join(format!("u{i}.traj"));
        run(&[
            "slice",
            "--rebase",
            "small.traj",
            "--start",
            a,
            "--end",
            b,
            "-o",
            s(&out),
        ])
        .expect_code(0);
        outputs.push(std::fs::read(&out).unwrap());
    }
    assert_same_bytes(&outputs[1], &outputs[0], "2500ms..3500000us");
    assert_same_bytes(&outputs[2], &outputs[0], "2500000000ns..3500ms");
    // Synthetic reset + frames at 2.608595, 2.738781, 2.880275, 3.000344, 3.008374, 3.360549 s.
    let recs = raw_records(&outputs[0]);
    assert_eq!(recs.len(), 7);
    assert_eq!(recs[1].time_us, 2_608_595 - 2_500_000);
    assert_eq!(recs[6].time_us, 3_360_549 - 2_500_000);
}

#[test]
fn include_keeps_only_matching_keys() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("i.jsonl");
    run(&[
        "slice",
        "small.traj",
        "small.state",
        "--include",
        "particle.*",
        "-o",
        s(&out),
    ])
    .expect_code(0);
    let v = read_jsonl(&out);
    // Every record is still written, even those left with no keys.
    assert_eq!(v.len(), 47);
    assert_eq!(
        keys(&v[0]),
        [
            "particle.count",
            "particle.elements",
            "particle.names",
            "particle.positions",
            "particle.residues"
        ]
    );
    for r in &v {
        match channel(r) {
            "frame" => {
                assert!(keys(r).iter().all(|k| k.starts_with("particle.")), "{r}");
                assert!(keys(r).contains(&"particle.positions".to_string()));
            }
            _ => {
                assert_eq!(r["values"], json!({}), "{r}");
                assert!(removed(r).is_empty(), "{r}");
            }
        }
    }
    // Resets stay resets.
    let frames: Vec<u64> = v.iter().filter_map(frame).collect();
    assert_eq!(
        frames,
        (2..=18).chain(0..=6).chain(0..=7).collect::<Vec<u64>>()
    );
    assert_eq!(keys(&v[29]).len(), 5, "{}", v[29]);
    assert_eq!(frame(&v[29]), Some(0));
}

#[test]
fn exclude_drops_keys_and_their_removals() {
    let dir = tempfile::tempdir().unwrap();
    let traj = dir.path().join("e.traj");
    let state = dir.path().join("e.state");
    let r = run(&[
        "slice",
        "small.traj",
        "small.state",
        "--exclude",
        "particle.positions",
        "--exclude",
        "simrec.*",
        "-o",
        s(&traj),
    ])
    .expect_code(0);
    assert!(r.stderr.contains("wrote 47 records"), "{}", r.stderr);
    assert_eq!(raw_records_of(&traj).len(), 32);
    assert_eq!(raw_records_of(&state).len(), 15);
    let v = ndjson(&[&traj, &state]);
    assert_eq!(v.len(), 47);
    for r in &v {
        for k in keys(r).iter().chain(removed(r).iter()) {
            assert!(
                k != "particle.positions" && !k.starts_with("simrec."),
                "{r}"
            );
        }
    }
    assert_eq!(keys(&v[0]).len(), 23);
    assert!(keys(&v[0]).contains(&"particle.names".to_string()));
    // The removal of simrec.note is dropped with the key; its record stays, empty.
    let note = v.iter().find(|r| time_ns(r) == 1_784_330_000).unwrap();
    assert_eq!(channel(note), "state");
    assert_eq!(note["values"], json!({}));
    assert!(removed(note).is_empty());
    // A removal of a key that is not excluded is kept.
    let gone = v.iter().find(|r| time_ns(r) == 1_568_436_000).unwrap();
    assert_eq!(
        removed(gone),
        ["interaction.ac9c04b2-5376-4de1-95a5-0291a49e19dd"]
    );
    let r = run(&["inspect", "--format", "json", s(&traj)]).expect_code(0);
    assert_eq!(r.json_lines()[0]["resets"], json!([17, 24]));
}

#[test]
fn exclude_wins_over_include() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.jsonl");
    run(&[
        "slice",
        "small.traj",
        "--include",
        "particle.*",
        "--exclude",
        "particle.positions",
        "-o",
        s(&out),
    ])
    .expect_code(0);
    let v = read_jsonl(&out);
    assert_eq!(v.len(), 32);
    assert_eq!(
        keys(&v[0]),
        [
            "particle.count",
            "particle.elements",
            "particle.names",
            "particle.residues"
        ]
    );
    assert_eq!(v[1]["values"], json!({}));
}

#[test]
fn key_selection_applies_to_the_synthetic_records() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ks.jsonl");
    run(&[
        "slice",
        "small.traj",
        "small.state",
        "--start",
        "2s",
        "--include",
        "energy.*",
        "--include",
        "simrec.counter",
        "-o",
        s(&out),
    ])
    .expect_code(0);
    let v = read_jsonl(&out);
    assert_eq!(frame(&v[0]), Some(0));
    assert_eq!(
        keys(&v[0]),
        ["energy.kinetic", "energy.potential", "energy.user.total"]
    );
    assert_eq!(v[1]["values"], json!({"simrec.counter": 5.0}));
}

#[test]
fn companion_note_when_slicing_one_file_of_a_pair() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(&[
        "slice",
        "small.traj",
        "--end",
        "1s",
        "-o",
        s(&dir.path().join("n.traj")),
    ])
    .expect_code(0);
    assert!(
        r.stderr.contains("small.state is beside it"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("wrote 8 records"), "{}", r.stderr);
}

#[test]
fn bad_windows_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bad.jsonl");
    let r = run(&["slice", "small.traj", "--frames", "40..50", "-o", s(&out)]).expect_code(2);
    assert!(
        r.stderr.contains("#40") && r.stderr.contains("32 frames"),
        "{}",
        r.stderr
    );
    let r = run(&[
        "slice",
        "small.traj",
        "--start",
        "4s",
        "--end",
        "2s",
        "-o",
        s(&out),
    ])
    .expect_code(2);
    assert!(r.stderr.contains("before it starts"), "{}", r.stderr);
    let r = run(&["slice", "small.traj", "--frames", "5..x", "-o", s(&out)]).expect_code(2);
    assert!(r.stderr.contains("5..x"), "{}", r.stderr);
    run(&[
        "slice",
        "small.traj",
        "--frames",
        "1..2",
        "--start",
        "1s",
        "-o",
        s(&out),
    ])
    .expect_code(2);
    let r = run(&["slice", "small.traj", "--include", "[", "-o", s(&out)]).expect_code(2);
    assert!(r.stderr.contains('['), "{}", r.stderr);
    assert!(dir_entries(dir.path()).is_empty());
}

/// Spec §11 steps 3 and 4: the context is written whenever records were folded, even when
/// no record falls inside the window (nothing between 2.5 s and 2.6 s).
#[test]
fn a_window_between_records_still_carries_its_context() {
    let dir = tempfile::tempdir().unwrap();
    let traj = dir.path().join("e.traj");
    let state = dir.path().join("e.state");
    run(&[
        "slice",
        "--rebase",
        "small.traj",
        "small.state",
        "--start",
        "2.5s",
        "--end",
        "2.6s",
        "-o",
        s(&traj),
    ])
    .expect_code(0);
    let full = small_pair_jsonl();
    let context = fold(&full, 2_500_000_000);
    let v = ndjson(&[&traj, &state]);
    assert_eq!(v.len(), 2, "{v:?}");
    assert_eq!(
        (channel(&v[0]), frame(&v[0]), time_ns(&v[0])),
        ("frame", Some(0), 0)
    );
    assert_eq!(values_map(&v[0]), context.frame);
    assert_eq!((channel(&v[1]), time_ns(&v[1])), ("state", 0));
    assert_eq!(values_map(&v[1]), context.state);
}

/// nonmonotonic-timestamps.traj has records 3 and 4 at 481.737 ms and 344.527 ms. Reading stops
/// at the first record at or past --end (so slicing the start of a long recording reads only
/// what it needs); the out-of-order record after it is not examined. This pins that documented
/// limitation (docs/formats/nanover-legacy.md, "Slicing").
#[test]
fn window_end_stops_at_the_first_record_past_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("nm.jsonl");
    run(&[
        "slice",
        "broken/nonmonotonic-timestamps.traj",
        "--end",
        "400ms",
        "-o",
        s(&out),
    ])
    .expect_code(0);
    let times: Vec<i64> = read_jsonl(&out).iter().map(time_ns).collect();
    assert_eq!(times, [8_445_000, 88_541_000, 215_201_000]);
}

/// A record before the window start that comes after a kept record in the file must not be
/// kept with a negative time (JSON) or dropped as a "loss" (exit 3).
#[test]
fn window_start_never_produces_negative_times() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("nm.jsonl");
    run(&[
        "slice",
        "--rebase",
        "broken/nonmonotonic-timestamps.traj",
        "--start",
        "400ms",
        "--end",
        "1s",
        "-o",
        s(&out),
    ])
    .expect_code(0);
    let v = read_jsonl(&out);
    let times: Vec<i64> = v.iter().map(time_ns).collect();
    assert!(times.iter().all(|&t| t >= 0), "{times:?}");
    // The synthetic reset, then the records at 481.737, 620.608, 756.554 and 884.180 ms.
    assert_eq!(
        times,
        [0, 81_737_000, 220_608_000, 356_554_000, 484_180_000]
    );
    let traj = dir.path().join("nm.traj");
    run(&[
        "slice",
        "--rebase",
        "broken/nonmonotonic-timestamps.traj",
        "--start",
        "400ms",
        "--end",
        "1s",
        "-o",
        s(&traj),
    ])
    .expect_code(0);
}

/// Issue 27, item 1: a window keeps the recording's own times in every output that can hold
/// them (as `mcap filter` and `ros2 bag` do); an Elodin replay's ticks and a 3es capture's
/// frames start at 0, so a window into them is rebased and stderr says so.
#[test]
fn a_window_keeps_the_recordings_times_in_every_output_that_can() {
    let dir = tempfile::tempdir().unwrap();
    for (out, start_ns) in [
        ("w.traj", 2_000_000_000),
        ("w.nanover.zip", 2_000_000_000),
        ("w.icarec", 2_000_000_000),
        ("w.h5", 2_000_000_000),
        // A flat table has no row for the opening context: its first row is the first
        // record inside the window.
        ("w.csv", 2_105_169_000),
        ("w.xrec", 2_000_000_000),
        ("w/", 0),
        ("w.3es", 0),
    ] {
        let path = dir.path().join(out);
        let mut args = vec![
            "slice",
            "small.traj",
            "small.state",
            "--start",
            "2s",
            "--end",
            "4s",
            "-o",
            s(&path),
        ];
        if out == "w/" {
            args.extend(["--to", "elodin"]);
        }
        let r = run(&args);
        assert!(matches!(r.code, 0 | 3), "{out}: {}", r.stderr);
        let rebased = r
            .stderr
            .contains("the window is rebased to start at 0 (as --rebase)");
        assert_eq!(rebased, start_ns == 0, "{out}: {}", r.stderr);
        let state = dir.path().join("w.state");
        let mut inspect = vec!["inspect", "--format", "json", s(&path)];
        if out == "w.traj" {
            inspect.push(s(&state));
        }
        let j = run(&inspect).expect_code(0).json_lines();
        assert_eq!(j[0]["start_ns"], start_ns, "{out}");
    }
    // An Elodin DB (the default `DIR/`) stamps rows in absolute time: the window's first row
    // is 2 s after the recording's start, and the DB's epoch is its first row.
    let db = dir.path().join("db/");
    let r = run(&[
        "slice",
        "small.traj",
        "small.state",
        "--epoch",
        "2026-01-01T00:00:00Z",
        "--start",
        "2s",
        "--end",
        "4s",
        "-o",
        s(&db),
    ]);
    assert!(!r.stderr.contains("rebased"), "{}", r.stderr);
    let j = run(&["inspect", "--format", "json", s(&db)])
        .expect_code(0)
        .json_lines();
    assert_eq!(j[0]["format"], "elodin-db");
    assert_eq!(j[0]["start_ns"], 0);
    assert_eq!(j[0]["origin"]["epoch"], "2026-01-01T00:00:02.000000Z");
    // The text table too: frames 20 and 30 ms of an Icarus run are at 0.02 and 0.03 s (its
    // absolute start has no place in a CSV of relative times: exit 3).
    let r = run(&[
        "slice",
        s(&any_fixture("icarec/a2.icarec")),
        "--start",
        "0.02",
        "-o",
        "-",
        "--to",
        "csv",
    ])
    .expect_code(3);
    let times: Vec<&str> = r
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(times, ["0.02", "0.03"]);
    // --rebase starts the window at 0 and moves the absolute start with it.
    let out = dir.path().join("r.icarec");
    run(&[
        "slice",
        s(&any_fixture("icarec/a2.icarec")),
        "--start",
        "0.02",
        "--rebase",
        "-o",
        s(&out),
    ])
    .expect_code(0);
    let j = run(&["inspect", "--format", "json", s(&out)])
        .expect_code(0)
        .json_lines();
    assert_eq!(j[0]["start_ns"], 0);
    assert_eq!(j[0]["origin"]["epoch"], "2026-03-01T12:00:00.02Z");
}

/// Issue 27, item 6: a window that holds nothing of the recording (reversed, empty, past the
/// last record) is a usage error with nothing written, on every format and whatever the
/// output: the format's own slice (3es, Icarus, XREC) and the generic window alike.
#[test]
fn a_window_that_holds_nothing_is_refused_on_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let inputs: [(&[&str], &str); 8] = [
        (
            &["nanover-legacy/small.traj", "nanover-legacy/small.state"],
            "x.traj",
        ),
        (&["nanover-zip/small.nanover.zip"], "x.nanover.zip"),
        (&["icarec/a2.icarec"], "x.icarec"),
        (&["icarus-hdf5/small.h5"], "x.h5"),
        (&["icarus-csv/rocket.csv"], "x.csv"),
        (&["elodin/spin_120"], "x/"),
        (&["tes/small_plain.3es"], "x.3es"),
        (&["xrec/session.xrec"], "x.xrec"),
    ];
    let windows: [(&[&str], &str); 5] = [
        (
            &["--start", "70ms", "--end", "60ms"],
            "the window ends (0.060000s) before it starts (0.070000s)",
        ),
        (
            &["--frames", "2..1"],
            "the window ends (#1) before it starts (#2)",
        ),
        (
            &["--start", "20ms", "--end", "20ms"],
            "the window [0.020000s, 0.020000s) is empty: it ends where it starts",
        ),
        (
            &["--frames", "1..1"],
            "the window [#1, #1) is empty: it ends where it starts",
        ),
        (
            &["--start", "2000s"],
            "the window [2000.000000s, the end) lies outside the recording: it holds no record",
        ),
    ];
    for (input, same) in inputs {
        let input: Vec<String> = input
            .iter()
            .map(|p| s(&any_fixture(p)).to_string())
            .collect();
        for (window, why) in windows {
            for out in ["x.jsonl", same] {
                let target = dir.path().join(out);
                let mut args = vec!["slice"];
                args.extend(input.iter().map(String::as_str));
                args.extend(window);
                args.extend(["-o", s(&target)]);
                let r = run(&args).expect_code(2);
                assert!(
                    r.stderr.contains(&format!("error: {why}")),
                    "{input:?} {window:?} -o {out}: {}",
                    r.stderr
                );
                assert!(
                    dir_entries(dir.path()).is_empty(),
                    "{input:?} {window:?} -o {out}"
                );
            }
        }
    }
}
