//! `simrec merge` and `simrec cat`, end to end: time order across a pair (frame before state
//! on ties), state files interleaved, frame streams concatenated (spec §8), overlapping frame
//! streams refused, and `cat` text and NDJSON output.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::util::*;

/// `simrec slice ARGS -o DIR/NAME`, checked to succeed; returns the output path.
fn slice(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut all = vec!["slice"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", s(&out)]);
    run(&all).expect_code(0);
    out
}

#[test]
fn pair_to_jsonl_in_time_order() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.jsonl");
    let r = run(&["merge", "small.traj", "small.state", "-o", s(&out)]).expect_code(0);
    assert!(r.stderr.contains("wrote 47 records"), "{}", r.stderr);
    let v = read_jsonl(&out);
    assert_eq!(v.len(), 47);
    let times: Vec<i64> = v.iter().map(time_ns).collect();
    assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
    assert_eq!(v.iter().filter(|r| channel(r) == "frame").count(), 32);
    assert_eq!(v.iter().filter(|r| channel(r) == "state").count(), 15);
    // The first records of each file, interleaved.
    assert_eq!(
        v[..5]
            .iter()
            .map(|r| (time_ns(r), channel(r).to_string()))
            .collect::<Vec<_>>(),
        [
            (8_445_000, "frame".to_string()),
            (23_146_000, "state".to_string()),
            (88_541_000, "frame".to_string()),
            (215_201_000, "frame".to_string()),
            (332_847_000, "state".to_string()),
        ]
    );
    // Same as convert and as cat.
    assert_eq!(v, small_pair_jsonl());
    let r = run(&["cat", "--format", "ndjson", "small.traj", "small.state"]).expect_code(0);
    assert_same_bytes(&r.raw_stdout, &std::fs::read(&out).unwrap(), "cat vs merge");
}

#[test]
fn pair_to_pair_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.traj");
    run(&["merge", "small.state", "small.traj", "-o", s(&out)]).expect_code(0);
    assert_file_bytes(&out, &fixture_bytes("small.traj"));
    assert_file_bytes(&dir.path().join("m.state"), &fixture_bytes("small.state"));
}

#[test]
fn frame_before_state_on_equal_times() {
    let dir = tempfile::tempdir().unwrap();
    // A slice from 1 s starts both files at 0: a synthetic frame and a synthetic state.
    let traj = slice(
        dir.path(),
        "s.traj",
        &["small.traj", "small.state", "--start", "1s", "--rebase"],
    );
    let state = traj.with_extension("state");
    assert_eq!(raw_records_of(&traj)[0].time_us, 0);
    assert_eq!(raw_records_of(&state)[0].time_us, 0);

    // State named first: the frame still comes first.
    let out = dir.path().join("m.jsonl");
    run(&["merge", s(&state), s(&traj), "-o", s(&out)]).expect_code(0);
    let v = read_jsonl(&out);
    assert_eq!(v.len(), 33);
    assert_eq!(
        (time_ns(&v[0]), channel(&v[0]), frame(&v[0])),
        (0, "frame", Some(0))
    );
    assert_eq!((time_ns(&v[1]), channel(&v[1])), (0, "state"));

    let r = run(&["cat", s(&state), s(&traj)]).expect_code(0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 33);
    assert!(
        lines[0].starts_with("0.000000s frame #0 reset:"),
        "{}",
        lines[0]
    );
    assert!(lines[1].starts_with("0.000000s state:"), "{}", lines[1]);
}

#[test]
fn frame_before_state_on_equal_original_times() {
    let dir = tempfile::tempdir().unwrap();
    // small.state has a record at 2.105169 s; a traj slice kept on the original clock from
    // that instant starts with a synthetic frame at the same time.
    let traj = slice(
        dir.path(),
        "t.traj",
        &["small.traj", "--start", "2105169us"],
    );
    let out = dir.path().join("m.jsonl");
    run(&["merge", "small.state", s(&traj), "-o", s(&out)]).expect_code(0);
    let v = read_jsonl(&out);
    let at: Vec<(&str, Option<u64>)> = v
        .iter()
        .filter(|r| time_ns(r) == 2_105_169_000)
        .map(|r| (channel(r), frame(r)))
        .collect();
    assert_eq!(at, [("frame", Some(0)), ("state", None)]);
}

#[test]
fn two_state_slices_merge_back() {
    let dir = tempfile::tempdir().unwrap();
    let a = slice(dir.path(), "a.state", &["small.state", "--end", "2s"]);
    let b = slice(dir.path(), "b.state", &["small.state", "--start", "2s"]);
    let small = fixture_bytes("small.state");
    let first = raw_records_of(&a);
    assert_eq!(first.len(), 11);
    let second = raw_records_of(&b);
    assert_eq!(second.len(), 5);
    // The second part starts with the folded state at 2 s.
    assert_eq!(second[0].time_us, 2_000_000);

    for (name, inputs) in [("ab.state", [&a, &b]), ("ba.state", [&b, &a])] {
        let out = dir.path().join(name);
        let r = run(&["merge", s(inputs[0]), s(inputs[1]), "-o", s(&out)]).expect_code(0);
        assert!(r.stderr.contains("wrote 16 records"), "{}", r.stderr);
        // The original records, with the synthetic one slotted in at 2 s.
        let split = 16 + first.iter().map(|r| 24 + r.payload.len()).sum::<usize>();
        let mut want = small[..split].to_vec();
        want.extend(second[0].bytes());
        want.extend_from_slice(&small[split..]);
        assert_file_bytes(&out, &want);
    }
    // Replayed to the end, the merge holds the same state as the original.
    let merged = run(&["cat", "--format", "ndjson", s(&dir.path().join("ab.state"))])
        .expect_code(0)
        .json_lines();
    let orig = run(&["cat", "--format", "ndjson", "small.state"])
        .expect_code(0)
        .json_lines();
    assert_eq!(fold(&merged, i64::MAX).state, fold(&orig, i64::MAX).state);
}

#[test]
fn state_files_interleave_with_ties_in_input_order() {
    let dir = tempfile::tempdir().unwrap();
    let x = slice(
        dir.path(),
        "x.state",
        &["small.state", "--include", "simrec.*"],
    );
    let y = slice(
        dir.path(),
        "y.state",
        &["small.state", "--exclude", "simrec.*"],
    );
    let xr = raw_records_of(&x);
    let yr = raw_records_of(&y);
    assert_eq!((xr.len(), yr.len()), (15, 15));

    for (name, order) in [("yx.state", [&yr, &xr]), ("xy.state", [&xr, &yr])] {
        let out = dir.path().join(name);
        let (p, q) = if name == "yx.state" {
            (&y, &x)
        } else {
            (&x, &y)
        };
        run(&["merge", s(p), s(q), "-o", s(&out)]).expect_code(0);
        let merged = raw_records_of(&out);
        assert_eq!(merged.len(), 30);
        // Same times in both inputs: every tie keeps the input order.
        let want: Vec<RawRecord> = order[0]
            .iter()
            .zip(order[1].iter())
            .flat_map(|(a, b)| [a.clone(), b.clone()])
            .collect();
        assert_same_records(&merged, &want);
    }

    // Keys on different inputs commute: the merged state equals the original's.
    let merged = run(&["cat", "--format", "ndjson", s(&dir.path().join("yx.state"))])
        .expect_code(0)
        .json_lines();
    let orig = run(&["cat", "--format", "ndjson", "small.state"])
        .expect_code(0)
        .json_lines();
    for t in [500_000_000, 1_700_000_000, 5_004_400_000, i64::MAX] {
        assert_eq!(fold(&merged, t).state, fold(&orig, t).state, "at {t}");
    }
}

#[test]
fn overlapping_frame_streams_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.traj");
    let r = run(&["merge", "small.traj", "upstream/hello.traj", "-o", s(&out)]).expect_code(2);
    assert!(r.stderr.contains("overlap"), "{}", r.stderr);
    assert!(
        r.stderr.contains("small.traj") && r.stderr.contains("upstream/hello.traj"),
        "{}",
        r.stderr
    );
    // small.traj starts at 0.008445 s; hello.traj still has a frame at 0.268012 s.
    assert!(r.stderr.contains("0.008445s"), "{}", r.stderr);
    assert!(r.stderr.contains("0.268012s"), "{}", r.stderr);
    assert!(
        dir_entries(dir.path()).is_empty(),
        "{:?}",
        dir_entries(dir.path())
    );

    let r = run(&["merge", "small.traj", "small.traj", "-o", s(&out)]).expect_code(2);
    assert!(r.stderr.contains("overlap"), "{}", r.stderr);
    let out = dir.path().join("o.jsonl");
    run(&[
        "merge",
        "small.traj",
        "small.state",
        "upstream/hello.traj",
        "-o",
        s(&out),
    ])
    .expect_code(2);
    assert!(dir_entries(dir.path()).is_empty());
}

#[test]
fn frame_streams_in_sequence_concatenate_with_a_reset() {
    let dir = tempfile::tempdir().unwrap();
    // hello.traj's first record (an empty reset at 4.217 ms) ends before small.traj starts.
    let h = slice(
        dir.path(),
        "h.traj",
        &["upstream/hello.traj", "--end", "8ms"],
    );
    let hb = std::fs::read(&h).unwrap();
    assert_eq!(raw_records(&hb).len(), 1);

    let small = fixture_bytes("small.traj");
    let small_recs = raw_records(&small);
    for (name, first, second) in [
        ("hs.traj", &h, fixture("small.traj")),
        ("sh.traj", &fixture("small.traj"), h.clone()),
    ] {
        let out = dir.path().join(name);
        let r = run(&["merge", s(first), s(&second), "-o", s(&out)]).expect_code(0);
        assert!(r.stderr.contains("wrote 33 records"), "{}", r.stderr);
        let bytes = std::fs::read(&out).unwrap();
        // hello's record as it was, then small.traj's first record re-encoded with
        // frame_index 0 (its `08 02` field dropped), then the rest of small.traj verbatim.
        assert_same_bytes(&bytes[..hb.len()], &hb, "first input");
        let rest = &small[small_recs[1].offset..];
        assert_same_bytes(&bytes[bytes.len() - rest.len()..], rest, "later records");
        assert_eq!(bytes.len(), hb.len() + small.len() - 16 - 2);
        let recs = raw_records(&bytes);
        assert_eq!(recs.len(), 33);
        assert_eq!(recs[1].time_us, 8_445);
        assert_eq!(recs[1].payload.len(), small_recs[0].payload.len() - 2);
    }
    // The re-encoded record holds the same values as the original first record, in the
    // canonical encoding (its empty sparse-force array is now float_values).
    let v = run(&["cat", "--format", "ndjson", s(&dir.path().join("hs.traj"))])
        .expect_code(0)
        .json_lines();
    let orig = run(&["cat", "--format", "ndjson", "small.traj"])
        .expect_code(0)
        .json_lines();
    assert_eq!(v[1]["values"], orig[0]["values"]);
    assert_eq!(v[2], orig[1]);
    let r = run(&[
        "validate",
        "--format",
        "json",
        s(&dir.path().join("hs.traj")),
    ])
    .expect_code(0);
    let report = &r.json_lines()[0];
    let empty_kind: Vec<u64> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "NANOVER_EMPTY_ARRAY_KIND")
        .map(|f| f["record"].as_u64().unwrap())
        .collect();
    assert!(!empty_kind.contains(&1), "{empty_kind:?}");
    assert!(empty_kind.contains(&2), "{empty_kind:?}");
    let r = run(&[
        "inspect",
        "--format",
        "json",
        s(&dir.path().join("hs.traj")),
    ])
    .expect_code(0);
    assert_eq!(r.json_lines()[0]["resets"], json!([0, 1, 18, 25]));
    let v = run(&["cat", "--format", "ndjson", s(&dir.path().join("hs.traj"))])
        .expect_code(0)
        .json_lines();
    assert_eq!(frame(&v[1]), Some(0));
    assert_eq!(frame(&v[2]), Some(3));
}

#[test]
fn traj_parts_merge_back_to_the_same_frames() {
    let dir = tempfile::tempdir().unwrap();
    let p1 = slice(dir.path(), "p1.traj", &["small.traj", "--end", "2s"]);
    let p2 = slice(dir.path(), "p2.traj", &["small.traj", "--start", "2s"]);
    let out = dir.path().join("m.traj");
    run(&["merge", s(&p2), s(&p1), "-o", s(&out)]).expect_code(0);
    let mut want = std::fs::read(&p1).unwrap();
    want.extend_from_slice(&std::fs::read(&p2).unwrap()[16..]);
    assert_file_bytes(&out, &want);
    let merged = run(&["cat", "--format", "ndjson", s(&out)])
        .expect_code(0)
        .json_lines();
    let orig = run(&["cat", "--format", "ndjson", "small.traj"])
        .expect_code(0)
        .json_lines();
    assert_eq!(merged.len(), 33);
    for r in &orig {
        let t = time_ns(r) + 1;
        assert_eq!(fold(&merged, t).frame, fold(&orig, t).frame, "at {t}");
    }
}

#[test]
fn cat_text_describes_each_record() {
    let r = run(&["cat", "small.traj", "small.state"]).expect_code(0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 47);
    assert!(
        lines[0].starts_with("0.008445s frame #0 (index 2):"),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains(
            "particle.positions=float32[21,3] [0.6108266, 0.36452323, 0.38880605, 0.49389273, …]"
        ),
        "{}",
        lines[0]
    );
    assert!(lines[0].contains("bond.pairs=uint32[16,2]"), "{}", lines[0]);
    assert!(!lines[0].contains("reset"), "{}", lines[0]);
    assert_eq!(
        lines[1],
        "0.023146s state: imd.velocity_reset_available=true"
    );
    assert_eq!(lines[24], "1.784330s state: simrec.note=<removed>");
    assert!(
        lines[29].starts_with("2.121956s frame #17 (index 0) reset:"),
        "{}",
        lines[29]
    );
    assert!(
        lines[29].contains("particle.positions=float32[21,3]"),
        "{}",
        lines[29]
    );
    assert!(
        lines[37].starts_with("3.008374s frame #24 (index 0) reset:"),
        "{}",
        lines[37]
    );
    assert!(
        lines[37].contains("particle.positions=float32[32,3]"),
        "{}",
        lines[37]
    );
    assert!(
        lines[46].starts_with("5.380761s frame #31 (index 7):"),
        "{}",
        lines[46]
    );
    assert_eq!(r.stdout.matches(" reset:").count(), 2);

    let r = run(&["cat", "small.state"]).expect_code(0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 15);
    assert_eq!(lines[2], "0.440514s state: simrec.counter=1.0");
    assert_eq!(lines[13], "5.004306s state: simrec.counter=<removed>");
}

#[test]
fn cat_ndjson_line_counts() {
    for (files, n) in [
        (vec!["small.traj"], 32),
        (vec!["small.state"], 15),
        (vec!["small.traj", "small.state"], 47),
        (vec!["upstream/hello.traj"], 626),
        (vec!["edge/header-only.traj"], 0),
    ] {
        let mut args = vec!["cat", "--format", "ndjson"];
        args.extend(&files);
        let r = run(&args).expect_code(0);
        assert_eq!(r.stdout.lines().count(), n, "{files:?}");
        assert_eq!(r.json_lines().len(), n);
    }
    let r = run(&["cat", "--format", "ndjson", "small.state"]).expect_code(0);
    let v = r.json_lines();
    assert_eq!(time_ns(&v[0]), 23_146_000);
    assert_eq!(removed(&v[10]), ["simrec.note"]);
    assert_eq!(time_ns(&v[14]), 5_004_500_000);
}

#[test]
fn cat_v1_needs_the_option() {
    let r = run(&["cat", "broken/v1-headerless.traj"]).expect_code(1);
    assert!(r.stderr.contains("--nanover-version 1"), "{}", r.stderr);
    assert!(r.stdout.is_empty());
    let r = run(&["cat", "--nanover-version", "1", "broken/v1-headerless.traj"]).expect_code(0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 32);
    assert!(
        lines[0].starts_with("0.008445s frame #0 reset:"),
        "{}",
        lines[0]
    );
    assert!(
        lines[31].starts_with("5.380761s frame #31:"),
        "{}",
        lines[31]
    );
}

#[test]
fn cat_damaged_file_prints_up_to_it_or_fails_with_strict_with_its_location() {
    for (strict, code) in [(&[][..], 3), (&["--strict"][..], 1)] {
        let args = [
            &["cat", "--format", "ndjson", "broken/trunc-payload.traj"][..],
            strict,
        ]
        .concat();
        let r = run(&args).expect_code(code);
        assert!(
            r.stderr.contains("byte 23268") && r.stderr.contains("record 31"),
            "{}",
            r.stderr
        );
        // What could be read before the damage was printed.
        assert_eq!(r.stdout.lines().count(), 31);
    }
    let r = run(&["cat", "broken/empty.traj"]).expect_code(1);
    assert!(r.stderr.contains("empty"), "{}", r.stderr);
}

#[test]
fn cat_and_merge_need_inputs() {
    let dir = tempfile::tempdir().unwrap();
    run_in(dir.path(), &["cat"]).expect_code(2);
    run_in(dir.path(), &["merge", "-o", "x.jsonl"]).expect_code(2);
    assert!(dir_entries(dir.path()).is_empty());
    let r = run(&["cat", "--format", "yaml", "small.traj"]).expect_code(2);
    assert!(r.stderr.contains("yaml"), "{}", r.stderr);
}
