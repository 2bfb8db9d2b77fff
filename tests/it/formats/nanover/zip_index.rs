//! Archives whose index lost entries, and crashed recordings whose frames carry no
//! `server.timestamp`: what `validate` says and what `recover` rebuilds. The damaged
//! archives are made here from `fixtures/nanover-zip/small.nanover.zip` (its messages
//! member kept, its index member rewritten) and from the crash fixtures.

use std::path::{Path, PathBuf};

use simrec::formats::nanover::zip::msgpack::{self, Encoder, Oddities};
use simrec::formats::nanover::zip::ZipReader;
use simrec::formats::{ReadOptions, Source};
use simrec::model::Value;
use simrec::report::Severity;

use crate::util;
use crate::util::{nanover_zip_archive as archive, s, simrec, Run};

fn zfixture(rel: &str) -> PathBuf {
    util::any_fixture("nanover-zip").join(rel)
}

fn run(args: &[&str]) -> Run {
    let out = simrec().args(args).output().unwrap();
    Run {
        code: out.status.code().unwrap(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        raw_stdout: out.stdout,
    }
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// The two members of a writer-made archive (spec §2.1): messages data from byte 66, its
/// size in the zip64 extra; the index behind its 43-byte local header.
fn members(archive: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let m = u64::from_le_bytes(archive[50..58].try_into().unwrap()) as usize;
    let messages = archive[66..66 + m].to_vec();
    let local = 66 + m;
    let i = le32(archive, local + 22) as usize;
    (messages, archive[local + 43..local + 43 + i].to_vec())
}

/// The index's entries as model values.
fn entries(index: &[u8]) -> Vec<Value> {
    match msgpack::value(index, 0, &mut Oddities::default(), 0)
        .unwrap()
        .0
    {
        Value::List(entries) => entries,
        other => panic!("{other:?}"),
    }
}

fn encode(entries: &[Value]) -> Vec<u8> {
    let mut e = Encoder::new();
    e.value(&Value::List(entries.to_vec()));
    e.into_vec()
}

fn timestamp(entry: &Value) -> i64 {
    let Value::Map(fields) = entry else { panic!() };
    let Some((_, Value::Map(meta))) = fields.iter().find(|(k, _)| k == "metadata") else {
        panic!()
    };
    match meta.iter().find(|(k, _)| k == "timestamp") {
        Some((_, Value::Int(t))) => *t,
        other => panic!("{other:?}"),
    }
}

/// small.nanover.zip with only the first `keep` index entries.
fn small_with_index_of(keep: usize) -> (Vec<u8>, Vec<i64>) {
    let small = std::fs::read(zfixture("small.nanover.zip")).unwrap();
    let (messages, index) = members(&small);
    // The helpers above rebuild the fixture byte for byte.
    assert_eq!(archive(&messages, &index), small);
    let all = entries(&index);
    assert_eq!(all.len(), 91);
    let times = all.iter().map(timestamp).collect();
    (archive(&messages, &encode(&all[..keep])), times)
}

/// (time µs, frame index) of each message of a recovered archive, read strictly.
fn read_back(path: &Path) -> Vec<(i64, Option<i64>)> {
    let reader = ZipReader::open(path, ReadOptions::default()).unwrap();
    reader
        .map(|r| r.unwrap())
        .map(|r| (r.time / 1000, r.frame))
        .collect()
}

fn codes(bytes: Vec<u8>) -> Vec<(&'static str, Severity)> {
    let options = util::lenient();
    let mut r = ZipReader::new(
        Path::new("t.nanover.zip"),
        simrec::formats::input::Input::from_bytes(bytes),
        options,
    )
    .unwrap();
    assert!(r.by_ref().all(|x| x.is_ok()));
    r.findings()[0]
        .1
        .list()
        .iter()
        .map(|f| (f.code, f.severity))
        .collect()
}

#[test]
fn an_empty_index_over_messages_is_an_error_and_recover_rebuilds_it() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, original) = small_with_index_of(0);
    assert!(codes(bytes.clone()).contains(&("NVZIP_INDEX_SHORT", Severity::Error)));
    let damaged = dir.path().join("empty-index.nanover.zip");
    std::fs::write(&damaged, &bytes).unwrap();

    let v = run(&["validate", s(&damaged)]);
    assert_eq!(v.code, 1, "{}{}", v.stdout, v.stderr);
    assert!(
        v.stdout
            .contains("error NVZIP_INDEX_SHORT at byte 66, record 0: the index lists 0 messages"),
        "{}",
        v.stdout
    );
    // Reading commands read what recover keeps (exit 3); --strict refuses it.
    let c = run(&["convert", s(&damaged), "-o", s(&dir.path().join("c.jsonl"))]);
    assert_eq!(c.code, 3, "{}", c.stderr);
    assert!(c.stderr.contains("wrote 91 records"), "{}", c.stderr);
    let c = run(&[
        "convert",
        "--strict",
        s(&damaged),
        "-o",
        s(&dir.path().join("s.jsonl")),
    ]);
    assert_eq!(c.code, 1, "{}", c.stderr);
    assert!(c.stderr.contains("simrec recover"), "{}", c.stderr);

    let fixed = dir.path().join("fixed.nanover.zip");
    let r = run(&["recover", s(&damaged), "-o", s(&fixed)]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("kept 91 records"), "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "the index does not list every message, so the messages were read one after another and the index rebuilt from them. Read 91 messages; timestamps: 0 kept from the index, 75 derived from `server.timestamp` (seconds), 16 invented"
        ),
        "{}",
        r.stderr
    );
    let back = read_back(&fixed);
    assert_eq!(back.len(), 91);
    // Times come from the server's clock, from 0 at the first frame: close to the
    // recorder's own (375 µs at the first message), never going back.
    assert_eq!(back[0], (0, Some(0)));
    assert_eq!(back[2], (73_430, Some(8)));
    assert!(back.windows(2).all(|w| w[0].0 <= w[1].0));
    // Frames within 25 ms of the recorder's times (shifted by its first, 375 µs); a state
    // takes the time of the message before it.
    let shift = original[0];
    for (i, (t, frame)) in back.iter().enumerate() {
        if frame.is_some() {
            assert!(
                (t + shift - original[i]).abs() < 25_000,
                "message {i}: {t} µs, the index had {}",
                original[i]
            );
        } else {
            assert_eq!(*t, back[i - 1].0, "message {i}");
        }
    }
    assert_eq!(run(&["validate", s(&fixed)]).code, 0);
}

#[test]
fn a_short_index_keeps_its_times_and_derives_the_rest_from_them() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, original) = small_with_index_of(50);
    let damaged = dir.path().join("short-index.nanover.zip");
    std::fs::write(&damaged, &bytes).unwrap();
    let v = run(&["validate", "--format", "json", s(&damaged)]);
    assert_eq!(v.code, 1, "{}{}", v.stdout, v.stderr);
    let json = &v.json_lines()[0];
    let short: Vec<&serde_json::Value> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "NVZIP_INDEX_SHORT")
        .collect();
    assert_eq!(short.len(), 1, "{json}");
    assert_eq!(short[0]["severity"], "error");
    assert_eq!(short[0]["record"], 50);

    let fixed = dir.path().join("fixed.nanover.zip");
    let r = run(&["recover", s(&damaged), "-o", s(&fixed)]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "Read 91 messages; timestamps: 50 kept from the index, 38 derived from `server.timestamp` (seconds), 3 invented"
        ),
        "{}",
        r.stderr
    );
    let back = read_back(&fixed);
    assert_eq!(back.len(), 91);
    let times: Vec<i64> = back.iter().map(|b| b.0).collect();
    assert_eq!(times[..50], original[..50]);
    // Message 50 is 51,042 µs of server clock after message 48 (the last kept frame):
    // 139 µs before the time the recorder gave it.
    assert_eq!(times[50], 1_933_421);
    assert_eq!(original[50], 1_933_560);
    for i in 50..91 {
        if back[i].1.is_some() {
            assert!(
                (times[i] - original[i]).abs() < 25_000,
                "message {i}: {} µs, the index had {}",
                times[i],
                original[i]
            );
        } else {
            assert_eq!(times[i], times[i - 1], "message {i}");
        }
    }
}

#[test]
fn an_index_that_lists_every_message_is_not_short() {
    let (bytes, _) = small_with_index_of(91);
    let codes = codes(bytes);
    assert!(
        !codes.iter().any(|(c, _)| *c == "NVZIP_INDEX_SHORT"),
        "{codes:?}"
    );
}

/// crashed-after-100 with `server.timestamp` taken out of every frame, re-encoded.
fn crash_without_server_timestamp() -> Vec<u8> {
    let crash = std::fs::read(zfixture("crash/crashed-after-100.nanover.zip")).unwrap();
    let mut out = crash[..66].to_vec();
    let mut p = 66;
    let mut n = 0;
    while let Ok((v, next)) = msgpack::value(&crash, p, &mut Oddities::default(), 0) {
        let Value::Map(mut parts) = v else { break };
        for (name, part) in parts.iter_mut() {
            if let (true, Value::Map(fields)) = (name == "frame", part) {
                fields.retain(|(k, _)| k != "server.timestamp");
            }
        }
        let mut e = Encoder::new();
        e.value(&Value::Map(parts));
        out.extend_from_slice(e.as_slice());
        p = next;
        n += 1;
    }
    assert_eq!(n, 96);
    out
}

#[test]
fn a_crash_without_server_timestamp_takes_times_from_simulation_time() {
    let dir = tempfile::tempdir().unwrap();
    let crashed = dir.path().join("crashed.nanover.zip");
    std::fs::write(&crashed, crash_without_server_timestamp()).unwrap();
    let fixed = dir.path().join("fixed.nanover.zip");
    let r = run(&["recover", s(&crashed), "-o", s(&fixed)]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "timestamps: 0 kept from the index, 77 derived from `system.simulation.time` (simulated picoseconds, 1 ps taken as 1 s), 19 invented (the previous message's time), the simulation clock started again at 2 resets (times continue from the previous message)"
        ),
        "{}",
        r.stderr
    );
    let back = read_back(&fixed);
    assert_eq!(back.len(), 96);
    // system.simulation.time 0.0075 ps at the first frame, 0.00875 at the next: 1,250 µs.
    assert_eq!(back[0], (0, Some(0)));
    assert_eq!(back[1].0, 0, "the state after it takes its time");
    assert_eq!(back[2], (1_250, Some(8)));
    assert!(back.windows(2).all(|w| w[0].0 <= w[1].0));
    // Message 74 is a reset without the clock; at message 75 the simulation starts again
    // at 0.01 ps (it was at 0.07875 ps, 71,250 µs): time goes on from there, to 0.15 ps at
    // message 90. Message 91 is a reset back at 0.0075 ps: time goes on again.
    assert_eq!(back[73].0, 71_250);
    assert_eq!(back[74], (71_250, Some(0)));
    assert_eq!(back[75], (71_250, Some(2)));
    assert_eq!(back[90].0, 71_250 + 140_000);
    assert_eq!(back[91], (211_250, Some(0)));
    assert_eq!(back[93].0, 211_250 + 1_250);
}
