//! `.xrec` (XREC-S 1.0) through the built binary: inspect's JSON, validate's outcomes,
//! queries on cat/convert/slice (time, frames, --type, --chapter), --compression, slice,
//! merge and recover, on the fixtures built by fixtures/xrec/make_fixtures.py.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util;
use crate::util::run;

fn fx(name: &str) -> PathBuf {
    util::any_fixture("xrec").join(name)
}

fn inspect(path: &Path) -> Value {
    let r = run(&["inspect", "--format", "json", path.to_str().unwrap()]).expect_code(0);
    serde_json::from_str(r.stdout.trim()).unwrap()
}

/// (time_ns, channel, frame) of each NDJSON line.
fn lines(r: &util::Run) -> Vec<(i64, String, i64)> {
    r.json_lines()
        .iter()
        .map(|l| {
            (
                l["time_ns"].as_i64().unwrap(),
                l["channel"].as_str().unwrap().to_string(),
                l["frame"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn inspect_reports_the_session_relative_times_origin_and_packets() {
    let j = inspect(&fx("spec_example.xrec"));
    assert_eq!(j["format"], "xrec");
    assert_eq!(j["format_version"], "1.0");
    assert_eq!(
        j["origin"],
        json!({"epoch": "2023-11-14T22:13:20Z", "system": "unix"})
    );
    assert_eq!(j["start_ns"], 500_000_000);
    assert_eq!(j["end_ns"], 500_000_000);
    assert_eq!(j["duration_ns"], 0);
    assert_eq!(j["session_duration_ns"], 1_500_000_000);
    assert_eq!(j["finished_cleanly"], true);
    assert_eq!(j["app_version"], "1.0");
    assert_eq!(j["compression"], "none");

    let j = inspect(&fx("session_gzip.xrec"));
    assert_eq!(j["compression"], "gzip");
    assert_eq!(j["records"], 14);
    assert_eq!(j["start_ns"], 0);
    assert_eq!(j["end_ns"], 4_500_000_000i64);
    assert_eq!(j["session_duration_ns"], 5_000_000_000i64);
    assert_eq!(
        j["packets"],
        json!({"start": 1, "event": 3, "extension": 0, "end": 1})
    );
    assert_eq!(j["frame_range"], json!([-2, 15]));
    assert_eq!(j["events_per_type"]["xrec.Transform"], 8);
    assert_eq!(j["events_per_type"]["Custom.Score"], 1);
    let names: Vec<&str> = j["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "xrec.Chapter",
            "xrec.ClientEnter",
            "xrec.Transform",
            "Custom.Score",
            "xrec.SceneGraph"
        ]
    );
    let chapters: Vec<(&str, i64)> = j["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["time_ns"].as_i64().unwrap()))
        .collect();
    assert_eq!(
        chapters,
        [
            ("Intro", 0),
            ("Middle", 2_000_000_000),
            ("Outro", 4_000_000_000)
        ]
    );

    let j = inspect(&fx("unfinished.xrec"));
    assert_eq!(j["session_duration_ns"], Value::Null);
    assert_eq!(j["finished_cleanly"], false);
}

#[test]
fn validate_tells_an_unfinished_recording_from_a_damaged_one() {
    let r = run(&["validate", fx("unfinished.xrec").to_str().unwrap()]).expect_code(0);
    assert!(
        r.stdout.contains("warning XREC_NOT_FINISHED"),
        "{}",
        r.stdout
    );
    run(&[
        "validate",
        "--strict",
        fx("unfinished.xrec").to_str().unwrap(),
    ])
    .expect_code(1);
    let r = run(&["validate", fx("truncated.xrec").to_str().unwrap()]).expect_code(1);
    assert!(
        r.stdout
            .contains("error XREC_TRUNCATED at byte 1432, record 3"),
        "{}",
        r.stdout
    );
    let r = run(&["validate", fx("native.xrec").to_str().unwrap()]).expect_code(1);
    assert!(r.stdout.contains("XREC_NOT_PROFILE"), "{}", r.stdout);
    assert!(r
        .stdout
        .contains("native MAGES XREC byte layout is unpublished"));
    let r = run(&["validate", fx("session.xrec").to_str().unwrap()]).expect_code(0);
    assert!(
        r.stdout.contains("ok (0 errors, 0 warnings, 0 info)"),
        "{}",
        r.stdout
    );
}

#[test]
fn cat_queries_by_time_frames_type_and_chapter() {
    let s = fx("session.xrec");
    let s = s.to_str().unwrap();
    let cat = |extra: &[&str]| {
        let mut args = vec!["cat", "--format", "ndjson", s];
        args.extend_from_slice(extra);
        lines(&run(&args).expect_code(0))
    };
    // [1 s, 2 s): 2.0 s excluded, 1.0 s included.
    let got = cat(&["--start", "1s", "--end", "2s"]);
    assert_eq!(
        got,
        [
            (1_000_000_000, "xrec.Transform".into(), 12),
            (1_000_000_000, "xrec.Transform".into(), 12)
        ]
    );
    // create_frame 12..14, transforms only.
    let got = cat(&["--frames", "12..14", "--type", "xrec.T*"]);
    let frames: Vec<i64> = got.iter().map(|l| l.2).collect();
    assert_eq!(frames, [12, 12, 13, 13]);
    // Chapters: first, middle, last.
    let first = cat(&["--chapter", "Intro"]);
    assert_eq!(first.len(), 7);
    assert_eq!(first[0], (0, "xrec.Chapter".into(), 10));
    assert!(first.iter().all(|l| l.0 < 2_000_000_000));
    let middle = cat(&["--chapter", "Middle"]);
    let times: Vec<i64> = middle.iter().map(|l| l.0).collect();
    assert_eq!(
        times,
        [
            2_000_000_000,
            2_000_000_000,
            2_000_000_000,
            3_000_000_000,
            3_000_000_000
        ]
    );
    let last = cat(&["--chapter", "Outro"]);
    assert_eq!(
        last,
        [
            (4_000_000_000, "xrec.Chapter".into(), -2),
            (4_500_000_000, "xrec.Transform".into(), 15)
        ]
    );
    let r = run(&["cat", s, "--chapter", "Nope"]).expect_code(2);
    assert!(
        r.stderr.contains("its chapters: Intro, Middle, Outro"),
        "{}",
        r.stderr
    );
    // A format without selectors refuses them.
    let nanover = util::any_fixture("nanover-legacy");
    let traj = std::fs::read_dir(&nanover)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "traj"))
        .unwrap();
    run(&["cat", traj.to_str().unwrap(), "--type", "x"]).expect_code(2);
}

#[test]
fn transforms_give_one_track_per_entity_with_rotation_x_y_z_w() {
    let r = run(&[
        "cat",
        "--format",
        "ndjson",
        fx("session.xrec").to_str().unwrap(),
        "--type",
        "xrec.Transform",
    ])
    .expect_code(0);
    let rows = r.json_lines();
    let head: Vec<&Value> = rows.iter().filter(|l| l["entity"] == "head").collect();
    assert_eq!(head.len(), 3);
    assert_eq!(head[0]["values"]["position"], json!([1.0, 2.0, -1.0]));
    assert_eq!(head[0]["values"]["rotation"], json!([0.0, 0.0, 0.0, 1.0]));
    assert_eq!(rows.iter().filter(|l| l["entity"] == "cube").count(), 5);
}

/// `--help` says what happens without `--compression`: an XREC output keeps an XREC
/// input's codec (none from other inputs); it is not "none (default)".
#[test]
fn compression_help_says_the_input_codec_is_the_default() {
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let help = words(&run(&["convert", "--help"]).expect_code(0).stdout);
    assert!(
        help.contains("xrec: none, gzip (default: an XREC input's codec, else none)"),
        "{help}"
    );
    assert!(!help.contains("xrec: none (default)"), "{help}");
}

#[test]
fn convert_switches_codecs_and_keeps_the_input_codec_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let s = fx("session.xrec");
    run(&["convert", s.to_str().unwrap(), "-o", &p("a.xrec")]).expect_code(0);
    run(&["convert", &p("a.xrec"), "-o", &p("b.xrec")]).expect_code(0);
    assert_eq!(
        std::fs::read(p("a.xrec")).unwrap(),
        std::fs::read(p("b.xrec")).unwrap()
    );
    run(&[
        "convert",
        &p("a.xrec"),
        "-o",
        &p("g.xrec"),
        "--compression",
        "gzip",
    ])
    .expect_code(0);
    run(&["convert", &p("g.xrec"), "-o", &p("g2.xrec")]).expect_code(0);
    assert_eq!(
        std::fs::read(p("g.xrec")).unwrap(),
        std::fs::read(p("g2.xrec")).unwrap()
    );
    assert_eq!(inspect(Path::new(&p("g2.xrec")))["compression"], "gzip");
    run(&[
        "convert",
        &p("g.xrec"),
        "-o",
        &p("n.xrec"),
        "--compression",
        "none",
    ])
    .expect_code(0);
    assert_eq!(
        std::fs::read(p("n.xrec")).unwrap(),
        std::fs::read(p("a.xrec")).unwrap()
    );
    run(&[
        "convert",
        s.to_str().unwrap(),
        "-o",
        &p("x.xrec"),
        "--compression",
        "lz4",
    ])
    .expect_code(2);
    // Every event's bytes survive, whatever the packets.
    let events = |f: &str| lines(&run(&["cat", "--format", "ndjson", f]).expect_code(0));
    assert_eq!(events(s.to_str().unwrap()), events(&p("g2.xrec")));
    // --type on convert.
    run(&[
        "convert",
        s.to_str().unwrap(),
        "-o",
        &p("t.xrec"),
        "--type",
        "xrec.Chapter",
    ])
    .expect_code(0);
    assert_eq!(inspect(Path::new(&p("t.xrec")))["records"], 3);
}

#[test]
fn slice_by_chapter_rechunks_and_keeps_absolute_times() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mid.xrec");
    let s = fx("session.xrec");
    // By default the session's own clock: the chapter's events at 2 s.
    run(&[
        "slice",
        s.to_str().unwrap(),
        "--chapter",
        "Middle",
        "-o",
        out.to_str().unwrap(),
    ])
    .expect_code(0);
    let j = inspect(&out);
    assert_eq!(
        (&j["start_ns"], &j["end_ns"]),
        (&json!(2_000_000_000), &json!(3_000_000_000i64))
    );
    assert_eq!(j["origin"]["epoch"], "2023-11-14T22:13:20Z");
    // Rebased (spec §16's form).
    run(&[
        "slice",
        s.to_str().unwrap(),
        "--chapter",
        "Middle",
        "--rebase",
        "-o",
        out.to_str().unwrap(),
        "--force",
    ])
    .expect_code(0);
    let r = run(&["validate", out.to_str().unwrap()]).expect_code(0);
    assert!(r.stdout.contains("0 errors, 0 warnings"), "{}", r.stdout);
    let j = inspect(&out);
    assert_eq!(j["records"], 5);
    assert_eq!(j["start_ns"], 0);
    assert_eq!(j["end_ns"], 1_000_000_000);
    // The origin moved by the cut (2 s), so absolute times are unchanged.
    assert_eq!(j["origin"]["epoch"], "2023-11-14T22:13:22Z");
    assert_eq!(j["begin"]["rtss"], 102.0);
    assert_eq!(j["end"]["rtss"], 103.0);
    assert_eq!(j["session_duration_ns"], 1_000_000_000);
    assert_eq!(j["packets"]["event"], 1);
    assert_eq!(j["end_metadata"]["slice"]["chapter"], "Middle");
    // Event bytes unchanged: the RTSS times are the source's.
    let rows = run(&["cat", "--format", "ndjson", out.to_str().unwrap()])
        .expect_code(0)
        .json_lines();
    assert_eq!(rows[0]["values"]["create_time"], 102.0);
}

/// A slice from a frame starts at its earliest kept event, as a slice from a time starts at
/// its start (spec §16): frames 12..14 of the session keep the two frame-12 transforms at
/// 101.0 s, the Score at 100.75 s (a later, overlapping packet) and frame 13 at 102.0 s, so
/// t0 is 0.75 s after begin.
#[test]
fn slice_by_frames_starts_its_times_at_the_first_kept_event() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("frames.xrec");
    let s = fx("session.xrec");
    run(&[
        "slice",
        s.to_str().unwrap(),
        "--frames",
        "12..14",
        "--rebase",
        "-o",
        out.to_str().unwrap(),
    ])
    .expect_code(0);
    let rows = run(&["cat", "--format", "ndjson", out.to_str().unwrap()])
        .expect_code(0)
        .json_lines();
    let got: Vec<(i64, &str, f64)> = rows
        .iter()
        .map(|l| {
            (
                l["time_ns"].as_i64().unwrap(),
                l["channel"].as_str().unwrap(),
                l["values"]["create_time"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (250_000_000, "xrec.Transform", 101.0),
            (250_000_000, "xrec.Transform", 101.0),
            (0, "Custom.Score", 100.75),
            (1_250_000_000, "xrec.Chapter", 102.0),
            (1_250_000_000, "xrec.Transform", 102.0),
            (1_250_000_000, "xrec.Transform", 102.0),
        ]
    );
    let j = inspect(&out);
    assert_eq!(j["start_ns"], 0);
    assert_eq!(j["end_ns"], 1_250_000_000);
    // The begin moved by t0 on both clocks, so every absolute time is the source's:
    // 1,700,000,000.75 s + 0.25 s is the source's 1,700,000,000 s + 1.0 s.
    assert_eq!(j["begin"]["unix_ns"], 1_700_000_000_750_000_000i64);
    assert_eq!(j["begin"]["rtss"], 100.75);
    assert_eq!(j["origin"]["epoch"], "2023-11-14T22:13:20.75Z");
    assert_eq!(j["end_metadata"]["slice"]["t0"], 750_000_000);
    assert_eq!(j["end_metadata"]["slice"]["frames"], json!([12, 14]));
    // Without --rebase, the source's clock.
    let kept = dir.path().join("kept.xrec");
    run(&[
        "slice",
        s.to_str().unwrap(),
        "--frames",
        "12..14",
        "-o",
        kept.to_str().unwrap(),
    ])
    .expect_code(0);
    let j = inspect(&kept);
    assert_eq!(j["start_ns"], 750_000_000);
    assert_eq!(j["begin"]["unix_ns"], 1_700_000_000_000_000_000i64);
}

#[test]
fn merge_orders_two_sessions_by_absolute_time() {
    let dir = tempfile::tempdir().unwrap();
    let late = dir.path().join("late.xrec");
    // The Outro chapter on its own: 4 s after the session's begin.
    run(&[
        "slice",
        fx("session.xrec").to_str().unwrap(),
        "--chapter",
        "Outro",
        "--type",
        "xrec.Chapter",
        "-o",
        late.to_str().unwrap(),
    ])
    .expect_code(0);
    let merged = dir.path().join("m.xrec");
    run(&[
        "merge",
        late.to_str().unwrap(),
        fx("spec_example.xrec").to_str().unwrap(),
        "-o",
        merged.to_str().unwrap(),
    ])
    .expect_code(0);
    let j = inspect(&merged);
    assert_eq!(j["records"], 2);
    // spec_example begins 2023-11-14T22:13:20Z (+0.5 s), late begins at 22:13:24 (+0 s).
    assert_eq!(j["origin"]["epoch"], "2023-11-14T22:13:20Z");
    let rows = run(&["cat", "--format", "ndjson", merged.to_str().unwrap()])
        .expect_code(0)
        .json_lines();
    let got: Vec<(i64, &str)> = rows
        .iter()
        .map(|l| {
            (
                l["time_ns"].as_i64().unwrap(),
                l["values"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, [(500_000_000, "Intro"), (4_000_000_000, "Outro")]);
    // Spec §16: one clock from the earliest begin with begin_rtss 0; each event's RTSS times
    // moved onto it; frames kept and said not comparable.
    assert_eq!(j["begin"]["rtss"], 0.0);
    assert_eq!(j["start_metadata"]["frames_comparable"], false);
    assert_eq!(
        j["start_metadata"]["merged_from"].as_array().unwrap().len(),
        2
    );
    assert_eq!(j["start_metadata"]["merged_from"][1]["begin_rtss"], 12.5);
    assert_eq!(j["app_version"], "merged");
    assert_eq!(rows[0]["values"]["create_time"], 0.5);
    assert_eq!(rows[1]["values"]["create_time"], 4.0);
    assert_eq!(rows[1]["frame"], -2);
    assert_eq!(j["finished_cleanly"], true);
    assert_eq!(j["end_metadata"], Value::Null);
}

#[test]
fn recover_keeps_whole_packets_and_appends_a_repaired_end() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.xrec");
    let r = run(&[
        "recover",
        fx("truncated.xrec").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ])
    .expect_code(3);
    assert!(r.stderr.contains("kept 10 records"), "{}", r.stderr);
    let j = inspect(&out);
    assert_eq!(j["finished_cleanly"], true);
    assert_eq!(j["end_metadata"]["repaired"], true);
    assert_eq!(j["end_metadata"]["dropped_bytes"], 496);
    run(&["validate", out.to_str().unwrap()]).expect_code(0);
    let out2 = dir.path().join("u.xrec");
    run(&[
        "recover",
        fx("unfinished.xrec").to_str().unwrap(),
        "-o",
        out2.to_str().unwrap(),
    ])
    .expect_code(3);
    assert_eq!(inspect(&out2)["end_metadata"]["repaired"], true);
    let out3 = dir.path().join("ok.xrec");
    run(&[
        "recover",
        fx("session.xrec").to_str().unwrap(),
        "-o",
        out3.to_str().unwrap(),
    ])
    .expect_code(0);
    let out4 = dir.path().join("n.xrec");
    run(&[
        "recover",
        fx("native.xrec").to_str().unwrap(),
        "-o",
        out4.to_str().unwrap(),
    ])
    .expect_code(1);
}

/// Recovery keeps the whole, valid packets before the first packet that does not decode,
/// and nothing after it (spec §16): the session's second Event packet (byte 934 of 1,988)
/// gets a body that is not a map, so only the first packet's 6 events are kept, the End is
/// rebuilt, and the 1,054 bytes from byte 934 on are dropped.
#[test]
fn recover_stops_at_the_first_undecodable_packet() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(fx("session.xrec")).unwrap();
    assert_eq!(bytes.len(), 1988);
    let packet = 934;
    assert_eq!(bytes[packet], 2, "an Event packet");
    // Header 8, bounds 40, then the first event: type name (str16), frame and two times
    // (24 bytes), body_len (4), body.
    let name = packet + 48;
    let name_len = u16::from_le_bytes([bytes[name], bytes[name + 1]]) as usize;
    assert_eq!(&bytes[name + 2..name + 2 + name_len], b"Custom.Score");
    let body = name + 2 + name_len + 28;
    assert_eq!(bytes[body], 0x82, "a map of two fields");
    bytes[body] = 0x01;
    let damaged = dir.path().join("damaged.xrec");
    std::fs::write(&damaged, &bytes).unwrap();
    let v = run(&["validate", damaged.to_str().unwrap()]).expect_code(1);
    assert!(
        v.stdout.contains("XREC_BODY_DECODE at byte 934"),
        "{}",
        v.stdout
    );

    let out = dir.path().join("r.xrec");
    let r = run(&[
        "recover",
        damaged.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ])
    .expect_code(3);
    assert!(r.stderr.contains("kept 6 records"), "{}", r.stderr);
    assert!(
        r.stderr.contains("XREC_BODY_DECODE at byte 934"),
        "{}",
        r.stderr
    );
    let j = inspect(&out);
    assert_eq!(j["records"], 6);
    assert_eq!(
        j["packets"],
        json!({"start": 1, "event": 1, "extension": 0, "end": 1})
    );
    assert_eq!(j["end_metadata"]["repaired"], true);
    assert_eq!(j["end_metadata"]["dropped_bytes"], 1988 - 934);
    // The End is the last kept event's, not the source's (which was 5 s after begin).
    assert_eq!(j["end"]["rtss"], 101.0);
    assert_eq!(j["end_ns"], 1_000_000_000);
    run(&["validate", out.to_str().unwrap()]).expect_code(0);
    // The kept packet's bytes are the source's, after the same Start.
    let got = std::fs::read(&out).unwrap();
    assert_eq!(got[..934], bytes[..934]);
}

/// A merged input whose events are moved onto the output clock is packed by the moved
/// times: every packet keeps its events in create_time order (spec §10), so the merged
/// file validates clean. (The session has a Score event at 0.75 s in a later packet; the
/// Middle chapter, rebased 2 s later, moves by 2 s.)
#[test]
fn a_merge_packs_moved_events_in_output_time_order() {
    let dir = tempfile::tempdir().unwrap();
    let middle = dir.path().join("middle.xrec");
    run(&[
        "slice",
        fx("session.xrec").to_str().unwrap(),
        "--chapter",
        "Middle",
        "-o",
        middle.to_str().unwrap(),
    ])
    .expect_code(0);
    let merged = dir.path().join("m.xrec");
    run(&[
        "merge",
        fx("session.xrec").to_str().unwrap(),
        middle.to_str().unwrap(),
        "-o",
        merged.to_str().unwrap(),
    ])
    .expect_code(0);
    let r = run(&["validate", merged.to_str().unwrap()]).expect_code(0);
    assert_eq!(
        r.stdout,
        format!("{}: ok (0 errors, 0 warnings, 0 info)\n", merged.display())
    );
    assert_eq!(inspect(&merged)["records"], 19);
}

/// An XREC reader discovers its channels as it reads: a `--channel` pattern is judged once
/// the session is read, so one that matches an event type met later does not warn, and one
/// that matches nothing names every type the session had.
#[test]
fn channel_patterns_are_judged_after_the_events_are_read() {
    let session = fx("session.xrec");
    let session = session.to_str().unwrap();
    let r = run(&["cat", session, "--channel", "xrec.Transform"]).expect_code(0);
    assert_eq!(r.stdout.lines().count(), 8);
    assert_eq!(r.stderr, "");
    let r = run(&["inspect", "--format", "json", session, "--channel", "nope"]).expect_code(0);
    assert!(
        r.stderr.contains(
            "warning: --channel `nope` matches no channel (channels: xrec.Chapter, \
             xrec.ClientEnter, xrec.Transform, Custom.Score, xrec.SceneGraph)"
        ),
        "{}",
        r.stderr
    );
}

/// Reading commands read an XREC up to its first damaged packet, as `recover` keeps it:
/// session.xrec with its second Event packet's reserved field set (byte 934) gives the 6
/// events of the first packet, not the 14 a read past the damage would give (exit 3);
/// `validate` still reports the damage and `--strict` fails.
#[test]
fn a_damaged_packet_ends_the_read_where_recover_cuts() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(fx("session.xrec")).unwrap();
    bytes[934 + 2] = 1;
    let damaged = dir.path().join("mid.xrec");
    std::fs::write(&damaged, &bytes).unwrap();
    let d = util::s(&damaged);
    let r = run(&["cat", "--format", "ndjson", d]).expect_code(3);
    assert_eq!(r.stdout.lines().count(), 6);
    assert!(
        r.stderr
            .contains("error XREC_RESERVED at byte 934, record 2"),
        "{}",
        r.stderr
    );
    let fixed = dir.path().join("fixed.xrec");
    run(&["recover", d, "-o", util::s(&fixed)]).expect_code(3);
    let kept = run(&["cat", "--format", "ndjson", util::s(&fixed)]).expect_code(0);
    assert_eq!(r.stdout, kept.stdout);
    let o = &run(&["inspect", "--format", "json", d])
        .expect_code(3)
        .json_lines()[0];
    assert_eq!(
        (o["records"].as_u64(), o["findings"]["errors"].as_u64()),
        (Some(6), Some(1))
    );
    run(&["validate", d]).expect_code(1);
    run(&["cat", "--strict", d]).expect_code(1);
}
