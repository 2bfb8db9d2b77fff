//! The 3es items of the field-test issue, through the built binary: `recover` of intact and
//! damaged captures, key filters and multi-input slices on 3es, Control/Reset as a reset,
//! and a text `inspect` that stays small.

use std::path::{Path, PathBuf};

use serde_json::Value;
use simrec::formats::tes::packet::{self, PacketHeader, HEADER_LEN};

use crate::util;
use crate::util::{parse_json_lines, run_in, s};

const FIXTURES: [&str; 5] = [
    "small_plain.3es",
    "small_collate.3es",
    "small_compress.3es",
    "small_filegzip.3es",
    "medium_collate.3es",
];

fn tes(name: &str) -> PathBuf {
    util::any_fixture("tes").join(name)
}

fn inspect(dir: &Path, file: &str) -> Value {
    parse_json_lines(
        &run_in(dir, &["inspect", "--format", "json", file])
            .expect_code(0)
            .stdout,
    )
    .remove(0)
}

/// `validate --format json` of a file: (errors, warnings).
fn validate(dir: &Path, file: &str) -> (u64, u64) {
    let run = run_in(dir, &["validate", "--format", "json", file]);
    let o = &run.json_lines()[0];
    (
        o["errors"].as_u64().unwrap(),
        o["warnings"].as_u64().unwrap(),
    )
}

/// Top-level packets of a plain capture: (offset, header).
fn packets(bytes: &[u8]) -> Vec<(usize, PacketHeader)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(h) = bytes.get(pos..).and_then(PacketHeader::parse) {
        out.push((pos, h));
        pos += h.packet_len();
    }
    out
}

fn id_of(bytes: &[u8], at: usize) -> u32 {
    let p = at + HEADER_LEN;
    u32::from_be_bytes(bytes[p..p + 4].try_into().unwrap())
}

fn reset_packet() -> Vec<u8> {
    packet::build(2, 5, &packet::control_payload(0, 0, 0))
}

/// small_plain, a Reset, and small_plain's packets again after its two header packets:
/// 831 records, the Reset being record 416, the scene rebuilt after it.
fn capture_with_a_reset() -> Vec<u8> {
    let plain = std::fs::read(tes("small_plain.3es")).unwrap();
    [&plain[..], &reset_packet(), &plain[100..]].concat()
}

#[test]
fn recover_of_every_intact_fixture_exits_0_in_its_own_scheme() {
    let dir = tempfile::tempdir().unwrap();
    for f in FIXTURES {
        let out = format!("r-{f}");
        let run = run_in(dir.path(), &["recover", s(&tes(f)), "-o", &out]).expect_code(0);
        assert!(
            run.stderr.contains("nothing dropped"),
            "{f}: {}",
            run.stderr
        );
        let (before, after) = (inspect(dir.path(), s(&tes(f))), inspect(dir.path(), &out));
        assert_eq!(after["compression"], before["compression"], "{f}");
        assert_eq!(after["messages"], before["messages"], "{f}");
        assert_eq!(after["records"], before["records"], "{f}");
        assert_eq!(validate(dir.path(), &out), (0, 0), "{f}");
        // What simrec writes in these schemes is what lib3escore wrote.
        if matches!(
            f,
            "small_plain.3es" | "small_collate.3es" | "medium_collate.3es"
        ) {
            assert_eq!(
                std::fs::read(dir.path().join(&out)).unwrap(),
                std::fs::read(tes(f)).unwrap(),
                "{f}: byte-identical"
            );
        }
    }
}

#[test]
fn recover_drops_a_create_with_a_bad_crc_and_the_messages_of_its_object() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(tes("small_plain.3es")).unwrap();
    let list = packets(&bytes);
    // The first Sphere Create (object 1, updated in each of the 50 frames).
    let &(at, _) = list
        .iter()
        .find(|(_, h)| (h.routing_id, h.message_id) == (64, 1))
        .unwrap();
    assert_eq!((at, id_of(&bytes, at)), (259, 1));
    let of_sphere_1 = list
        .iter()
        .filter(|(p, h)| h.routing_id == 64 && id_of(&bytes, *p) == 1)
        .count();
    assert_eq!(of_sphere_1, 51);
    bytes[at + HEADER_LEN + 20] ^= 0xff;
    std::fs::write(dir.path().join("damaged.3es"), &bytes).unwrap();
    let run = run_in(dir.path(), &["recover", "damaged.3es", "-o", "fixed.3es"]).expect_code(3);
    assert!(
        run.stderr
            .contains("error TES_CRC_MISMATCH at byte 259, record 7"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("a message for an object whose Create was dropped     ┆ 50"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("kept 365 records"), "{}", run.stderr);
    assert_eq!(validate(dir.path(), "fixed.3es"), (0, 0));
    let fixed = std::fs::read(dir.path().join("fixed.3es")).unwrap();
    let out = packets(&fixed);
    assert_eq!(out.len(), 416 - 51);
    assert!(out
        .iter()
        .all(|(p, h)| packet::crc_mismatch(h, &fixed[*p..*p + h.packet_len()]).is_none()));
    assert!(!out
        .iter()
        .any(|(p, h)| h.routing_id == 64 && id_of(&fixed, *p) == 1));
    assert_eq!(inspect(dir.path(), "fixed.3es")["compression"], "none");
}

#[test]
fn recover_drops_a_damaged_update_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(tes("small_plain.3es")).unwrap();
    let &(at, _) = packets(&bytes)
        .iter()
        .find(|(_, h)| (h.routing_id, h.message_id) == (65, 2))
        .unwrap();
    bytes[at + HEADER_LEN + 10] ^= 0x01;
    std::fs::write(dir.path().join("damaged.3es"), &bytes).unwrap();
    let run = run_in(dir.path(), &["recover", "damaged.3es", "-o", "fixed.3es"]).expect_code(3);
    assert!(run.stderr.contains("kept 415 records"), "{}", run.stderr);
    assert_eq!(validate(dir.path(), "fixed.3es"), (0, 0));
    let o = inspect(dir.path(), "fixed.3es");
    let box_updates = o["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["routing_id"] == 65 && m["message_id"] == 2)
        .unwrap()["count"]
        .clone();
    assert_eq!(box_updates, 49);
}

#[test]
fn recover_of_a_damaged_collated_gzip_capture_keeps_gzip_and_validates() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(tes("small_compress.3es")).unwrap();
    let collated: Vec<_> = packets(&bytes)
        .into_iter()
        .filter(|(_, h)| h.routing_id == 3)
        .collect();
    assert_eq!(collated.len(), 50);
    // The middle of the first collated body: the shapes' Creates are in it.
    for k in [0, 4] {
        let (at, h) = collated[k];
        let mut damaged = bytes.clone();
        damaged[at + HEADER_LEN + 8 + h.payload_size as usize / 2] ^= 0x55;
        let name = format!("damaged{k}.3es");
        let out = format!("fixed{k}.3es");
        std::fs::write(dir.path().join(&name), &damaged).unwrap();
        let run = run_in(dir.path(), &["recover", &name, "-o", &out]).expect_code(3);
        assert!(run.stderr.contains("TES_GZIP_ERROR"), "{}", run.stderr);
        assert_eq!(validate(dir.path(), &out), (0, 0), "{k}");
        let o = inspect(dir.path(), &out);
        assert_eq!(o["compression"], "collated + gzip", "{k}");
        assert!(o["records"].as_u64().unwrap() < 416, "{k}");
    }
}

#[test]
fn key_filters_that_change_3es_records_are_refused_for_3es_output() {
    let dir = tempfile::tempdir().unwrap();
    let src = tes("small_plain.3es");
    let run = run_in(
        dir.path(),
        &["slice", s(&src), "--exclude", "position", "-o", "out.3es"],
    )
    .expect_code(2);
    assert!(
        run.stderr.contains("lost keys to --include/--exclude"),
        "{}",
        run.stderr
    );
    let run = run_in(
        dir.path(),
        &[
            "slice",
            s(&src),
            "--include",
            "message",
            "--split-at-resets",
            "-o",
            "parts.3es",
        ],
    )
    .expect_code(2);
    assert!(run.stderr.contains("key filter"), "{}", run.stderr);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // Into another format, and on 3es with a filter that changes nothing: written.
    run_in(
        dir.path(),
        &["slice", s(&src), "--exclude", "position", "-o", "out.jsonl"],
    )
    .expect_code(0);
    let lines = util::read_jsonl(&dir.path().join("out.jsonl"));
    assert!(lines.iter().all(|l| l["values"].get("position").is_none()));
    run_in(
        dir.path(),
        &[
            "slice",
            s(&src),
            "--exclude",
            "no_such_key",
            "-o",
            "same.3es",
        ],
    )
    .expect_code(0);
}

#[test]
fn a_slice_of_several_3es_captures_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for out in ["cut.3es", "cut.jsonl"] {
        let run = run_in(
            dir.path(),
            &[
                "slice",
                s(&tes("small_plain.3es")),
                s(&tes("small_collate.3es")),
                "--frames",
                "2..4",
                "-o",
                out,
            ],
        )
        .expect_code(2);
        assert!(
            run.stderr.contains("slicing 2 3es captures at once")
                && run.stderr.contains("simrec merge"),
            "{}",
            run.stderr
        );
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_control_reset_is_a_reset_for_inspect_split_and_slice() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("reset.3es"), capture_with_a_reset()).unwrap();
    let o = inspect(dir.path(), "reset.3es");
    assert_eq!(o["records"], 831);
    assert_eq!(o["resets"], serde_json::json!([416]));
    let text = run_in(dir.path(), &["inspect", "reset.3es"]).expect_code(0);
    assert!(text.stdout.contains("1 at records 416"), "{}", text.stdout);
    // One part per reset; each plays alone.
    let run = run_in(
        dir.path(),
        &["slice", "reset.3es", "--split-at-resets", "-o", "part.3es"],
    )
    .expect_code(0);
    assert!(
        run.stderr
            .contains("wrote 831 records to part-00.3es and part-01.3es"),
        "{}",
        run.stderr
    );
    let (p0, p1) = (
        inspect(dir.path(), "part-00.3es"),
        inspect(dir.path(), "part-01.3es"),
    );
    assert_eq!(
        (p0["frames"].clone(), p1["frames"].clone()),
        (50.into(), 50.into())
    );
    assert_eq!(p0["resets"], serde_json::json!([]));
    // ServerInfo and FrameCount, then the Reset.
    assert_eq!(p1["resets"], serde_json::json!([2]));
    assert_eq!(p1["records"], 417);
    for part in ["part-00.3es", "part-01.3es"] {
        assert_eq!(validate(dir.path(), part), (0, 0), "{part}");
    }
    // A slice whose cut falls on the Reset keeps it, and the frame numbers of what follows.
    run_in(
        dir.path(),
        &["slice", "reset.3es", "--frames", "50..60", "-o", "cut.3es"],
    )
    .expect_code(0);
    let cut = inspect(dir.path(), "cut.3es");
    assert_eq!(cut["frames"], 10);
    assert_eq!(cut["resets"].as_array().unwrap().len(), 1);
    assert_eq!(validate(dir.path(), "cut.3es"), (0, 0));
    // JSON Lines: the Reset on its own channel with frame 0.
    run_in(dir.path(), &["convert", "reset.3es", "-o", "all.jsonl"]).expect_code(0);
    let lines = util::read_jsonl(&dir.path().join("all.jsonl"));
    assert_eq!(lines[416]["channel"], "3es/reset");
    assert_eq!(lines[416]["frame"], 0);
    assert_eq!(lines[417]["frame"], 50);
}

#[test]
fn text_inspect_lists_long_3es_facts_as_counts_and_ends() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read(tes("small_plain.3es")).unwrap();
    let mut bytes = plain[..100].to_vec();
    for i in 1..=1000u16 {
        let name = format!("cat{i}");
        let mut p = [i, 0, 1, name.len() as u16]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect::<Vec<u8>>();
        p.extend_from_slice(name.as_bytes());
        packet::build_into(&mut bytes, 6, 0, &p);
    }
    for routing in 3000..3300u16 {
        packet::build_into(&mut bytes, routing, 1, b"xx");
    }
    packet::build_into(&mut bytes, 2, 1, &packet::control_payload(0, 33, 0));
    std::fs::write(dir.path().join("many.3es"), &bytes).unwrap();
    let run = run_in(dir.path(), &["inspect", "many.3es"]).expect_code(0);
    let text = &run.stdout;
    assert!(text.lines().count() < 70, "{text}");
    assert!(
        text.contains("1000 categories; the first and last 5:"),
        "{text}"
    );
    assert!(text.contains("1 cat1 (parent 0)") && text.contains("1000 cat1000 (parent 0)"));
    assert!(!text.contains("cat500 "), "{text}");
    assert!(text.contains("… 990 more …"), "{text}");
    assert!(
        text.contains("304 kinds of message; the first and last 5:"),
        "{text}"
    );
    assert!(
        text.contains("3299 User") && !text.contains("3100 User"),
        "{text}"
    );
    // The JSON keeps every item.
    let o = inspect(dir.path(), "many.3es");
    assert_eq!(o["categories"].as_array().unwrap().len(), 1000);
    assert_eq!(o["messages"].as_array().unwrap().len(), 304);
}

/// The header walk reads only the head of most packets (the rest is skipped unread): it must
/// still say what a full decode says of messages, frames, resets and the scene.
#[test]
fn the_header_walk_agrees_with_a_full_decode() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("reset.3es"), capture_with_a_reset()).unwrap();
    let mut files: Vec<String> = FIXTURES.iter().map(|f| s(&tes(f)).to_string()).collect();
    files.push("reset.3es".into());
    for f in &files {
        let walk = inspect(dir.path(), f);
        let deep = parse_json_lines(
            &run_in(dir.path(), &["inspect", "--deep", "--format", "json", f])
                .expect_code(0)
                .stdout,
        )
        .remove(0);
        for key in [
            "records",
            "messages",
            "frames",
            "resets",
            "start_ns",
            "end_ns",
            "capture_duration_ns",
            "shapes_alive",
            "categories",
        ] {
            assert_eq!(walk[key], deep[key], "{f}: {key}");
        }
    }
}
