//! 3es merge in process (spec §11.3): every message of every input arrives once, colliding
//! ids are remapped consistently, frames sit at the union of the inputs' frame starts in the
//! gcd time unit, transients stay visible over spanning frames, resets stay in their input.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use simrec::formats::output::Outputs;
use simrec::formats::tes::packet::{build, control_payload, server_info_payload};
use simrec::formats::tes::{TesReader, TesSlice, TesWriter};
use simrec::formats::{ReadOptions, Sink, Source};
use simrec::model::{Record, TimeSpec};
use simrec::pipeline::open_recording;
use simrec::report::Severity;

use crate::util;

fn fixture(name: &str) -> PathBuf {
    util::any_fixture("tes").join(name)
}

fn raw(r: &Record) -> &[u8] {
    &r.raw.as_ref().unwrap().bytes
}

fn be16(p: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([p[at], p[at + 1]])
}

fn be32(p: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]])
}

/// (routing, message) of a packet.
fn kind(p: &[u8]) -> (u16, u16) {
    (be16(p, 8), be16(p, 10))
}

/// Counts per (routing, message) of a 3esinfo CSV.
fn csv_counts(name: &str) -> BTreeMap<(u16, u16), u64> {
    std::fs::read_to_string(fixture(name))
        .unwrap()
        .lines()
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                (f[0].parse().unwrap(), f[1].parse().unwrap()),
                f[4].parse().unwrap(),
            )
        })
        .collect()
}

fn counts(records: &[Record]) -> BTreeMap<(u16, u16), u64> {
    let mut m = BTreeMap::new();
    for r in records {
        *m.entry(kind(raw(r))).or_insert(0) += 1;
    }
    m
}

/// Merges `inputs` and writes the result as a collated+gzip capture; returns the merged
/// records and the file.
fn merge(inputs: &[PathBuf], out: &Path) -> Vec<Record> {
    let mut source = open_recording(inputs, ReadOptions::default()).unwrap();
    let header = source.header().clone();
    let records: Vec<Record> = source.by_ref().map(|r| r.unwrap()).collect();
    for (_, f) in source.findings() {
        assert_eq!(f.list().len(), 0, "{:?}", f.list());
    }
    let mut outputs = Outputs::new(true);
    let mut w: Box<dyn Sink> =
        Box::new(TesWriter::create(out, &header, &mut outputs, Default::default()).unwrap());
    for r in &records {
        w.write(r).unwrap();
    }
    let report = w.finish().unwrap();
    assert!(report.loss.is_empty());
    outputs.commit().unwrap();
    records
}

/// A lenient read of a written capture: its records, and every finding of warning or worse.
fn reread(path: &Path) -> (Vec<Record>, Vec<String>, u64, u64) {
    let mut r = TesReader::open(path, util::lenient()).unwrap();
    let records: Vec<Record> = r.by_ref().map(|x| x.unwrap()).collect();
    let bad = r.findings()[0]
        .1
        .list()
        .iter()
        .filter(|f| f.severity >= Severity::Warning)
        .map(|f| f.to_string())
        .collect();
    let facts: BTreeMap<String, serde_json::Value> =
        r.facts().into_iter().map(|f| (f.name, f.json)).collect();
    let frames = facts["frames"].as_u64().unwrap();
    let fc = facts["frame_count_message"].as_u64().unwrap();
    (records, bad, frames, fc)
}

/// Persistent shape ids per routing id, from Creates.
fn created_ids(records: &[Record]) -> BTreeMap<u16, Vec<u32>> {
    let mut m: BTreeMap<u16, Vec<u32>> = BTreeMap::new();
    for p in records.iter().map(raw) {
        let (routing, message) = kind(p);
        if routing >= 64 && message == 1 && be32(p, 16) != 0 {
            m.entry(routing).or_default().push(be32(p, 16));
        }
    }
    m
}

#[test]
fn merging_a_capture_with_itself_remaps_every_id() {
    let dir = tempfile::tempdir().unwrap();
    let plain = fixture("small_plain.3es");
    let out = dir.path().join("both.3es");
    let merged = merge(&[plain.clone(), plain.clone()], &out);
    // Every message of both inputs once; one ServerInfo; Frames at the 50 shared starts.
    let mut want: BTreeMap<(u16, u16), u64> = csv_counts("small_plain.3esinfo.csv")
        .into_iter()
        .map(|(k, v)| (k, 2 * v))
        .collect();
    want.insert((1, 0), 1);
    want.insert((2, 1), 50);
    want.remove(&(2, 3));
    assert_eq!(counts(&merged), want);
    // The written file: the writer adds the patched FrameCount; nothing to complain about.
    let (back, bad, frames, fc) = reread(&out);
    want.insert((2, 3), 1);
    assert_eq!(counts(&back), want);
    assert_eq!(bad, Vec::<String>::new());
    assert_eq!((frames, fc), (50, 50));
    assert_eq!(back.last().unwrap().time, 1_617_000_000);
    // Every persistent shape exists twice under unique ids: the first input's own, and one
    // above every id the routing id used.
    let mut single = TesReader::open(&plain, ReadOptions::default()).unwrap();
    let original: Vec<Record> = single.by_ref().map(|r| r.unwrap()).collect();
    let before = created_ids(&original);
    let after = created_ids(&back);
    for (routing, ids) in &before {
        let max = *ids.iter().max().unwrap();
        let got = &after[routing];
        let unique: BTreeSet<u32> = got.iter().copied().collect();
        assert_eq!(unique.len(), got.len(), "routing {routing}: ids not unique");
        assert_eq!(got.len(), 2 * ids.len());
        let high: BTreeSet<u32> = got.iter().copied().filter(|id| *id > max).collect();
        assert_eq!(high.len(), ids.len(), "routing {routing}: {got:?}");
        assert_eq!(high, ((max + 1)..=(max + ids.len() as u32)).collect());
    }
    // Updates and destroys follow their shapes: every Update/Destroy names a created id.
    for p in back.iter().map(raw) {
        let (routing, message) = kind(p);
        if routing >= 64 && (message == 2 || message == 3) {
            assert!(
                after[&routing].contains(&be32(p, 16)),
                "{routing}/{message}"
            );
        }
    }
    // The mesh resource exists twice, and each MeshSet names a different one.
    let mesh_ids: Vec<u32> = back
        .iter()
        .map(raw)
        .filter(|p| kind(p) == (4, 2))
        .map(|p| be32(p, 16))
        .collect();
    assert_eq!(mesh_ids.len(), 2);
    assert_ne!(mesh_ids[0], mesh_ids[1]);
    let parts: BTreeSet<u32> = back
        .iter()
        .map(raw)
        .filter(|p| kind(p) == (73, 1))
        .map(|p| {
            let flags = be16(p, 22);
            let asize = if flags & 1 != 0 { 84 } else { 44 };
            assert_eq!(be16(p, 16 + 10 + asize), 1, "one part");
            be32(p, 16 + 10 + asize + 2)
        })
        .collect();
    assert_eq!(parts, mesh_ids.iter().copied().collect());
    // Categories are the same in both inputs: shared, not remapped.
    let cats: BTreeSet<u16> = back
        .iter()
        .map(raw)
        .filter(|p| kind(p) == (6, 0))
        .map(|p| be16(p, 16))
        .collect();
    assert_eq!(cats.len(), 5);
}

#[test]
fn merging_a_capture_with_a_slice_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let plain = fixture("small_plain.3es");
    // Frames 20..30, rebased to start at 0 with the world state in front.
    let slice = TesSlice::open(
        &plain,
        Some(TimeSpec::Frame(20)),
        Some(TimeSpec::Frame(30)),
        true,
        ReadOptions::default(),
    )
    .unwrap();
    let cut_records: Vec<Record> = slice.map(|r| r.unwrap()).collect();
    let mut cut_counts = counts(&cut_records);
    let cut = dir.path().join("cut.3es");
    {
        let mut s = TesSlice::open(
            &plain,
            Some(TimeSpec::Frame(20)),
            Some(TimeSpec::Frame(30)),
            true,
            ReadOptions::default(),
        )
        .unwrap();
        let header = s.header().clone();
        let mut outputs = Outputs::new(true);
        let mut w: Box<dyn Sink> =
            Box::new(TesWriter::create(&cut, &header, &mut outputs, Default::default()).unwrap());
        for r in s.by_ref() {
            w.write(&r.unwrap()).unwrap();
        }
        w.finish().unwrap();
        outputs.commit().unwrap();
    }
    let out = dir.path().join("m.3es");
    let merged = merge(&[plain.clone(), cut.clone()], &out);
    let mut want = csv_counts("small_plain.3esinfo.csv");
    cut_counts.remove(&(1, 0));
    cut_counts.remove(&(2, 1));
    for (k, v) in cut_counts {
        *want.entry(k).or_insert(0) += v;
    }
    want.remove(&(2, 3));
    // The slice's ten 33 ms frames start where the capture's first ten do.
    want.insert((2, 1), 50);
    assert_eq!(counts(&merged), want);
    let (back, bad, frames, fc) = reread(&out);
    assert_eq!(bad, Vec::<String>::new());
    assert_eq!((frames, fc), (50, 50));
    // The slice's shapes (alive at frame 20 of the same capture) all collide: remapped.
    let after = created_ids(&back);
    for ids in after.values() {
        let unique: BTreeSet<u32> = ids.iter().copied().collect();
        assert_eq!(unique.len(), ids.len());
    }
    // Frame indices and times follow the output frames.
    let frame_of = |i: i64| back.iter().filter(|r| r.frame == Some(i)).count();
    assert!(frame_of(0) > 0 && frame_of(49) > 0);
    assert!(back.iter().all(|r| r.time == r.frame.unwrap() * 33_000_000));
}

// Hand-built captures for time units, transients, resets and references.

fn capture(time_unit: u64, frame_time: u32, frames: u32, body: &[Vec<u8>]) -> Vec<u8> {
    let mut out = build(1, 0, &server_info_payload(time_unit, frame_time, 0));
    out.extend(build(2, 3, &control_payload(0, frames, 0)));
    for p in body {
        out.extend_from_slice(p);
    }
    out
}

fn frame(dt: u32, persist: bool) -> Vec<u8> {
    build(2, 1, &control_payload(u32::from(persist), dt, 0))
}

fn attrs(p: &mut Vec<u8>) {
    p.extend_from_slice(&0xff0000ffu32.to_be_bytes());
    for v in [1.0f32, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0] {
        p.extend_from_slice(&v.to_be_bytes());
    }
}

fn create(routing: u16, id: u32, category: u16) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&category.to_be_bytes());
    p.extend_from_slice(&0u16.to_be_bytes());
    p.extend_from_slice(&0u16.to_be_bytes());
    attrs(&mut p);
    build(routing, 1, &p)
}

fn mesh_set(id: u32, resource: u32) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&[0; 6]);
    attrs(&mut p);
    p.extend_from_slice(&1u16.to_be_bytes());
    p.extend_from_slice(&resource.to_be_bytes());
    attrs(&mut p);
    build(73, 1, &p)
}

fn mesh_resource(id: u32) -> Vec<Vec<u8>> {
    let mut p = Vec::new();
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&0u32.to_be_bytes());
    p.extend_from_slice(&0u32.to_be_bytes());
    p.extend_from_slice(&0u16.to_be_bytes());
    p.push(0);
    attrs(&mut p);
    let mut fin = id.to_be_bytes().to_vec();
    fin.extend_from_slice(&0u16.to_be_bytes());
    vec![build(4, 2, &p), build(4, 10, &fin)]
}

fn category(id: u16, parent: u16, name: &str) -> Vec<u8> {
    let mut p = Vec::new();
    for v in [id, parent, 1, name.len() as u16] {
        p.extend_from_slice(&v.to_be_bytes());
    }
    p.extend_from_slice(name.as_bytes());
    build(6, 0, &p)
}

#[test]
fn gcd_time_units_spanning_transients_resets_and_references() {
    let dir = tempfile::tempdir().unwrap();
    // A: 1 ms units, frames of 30 ms at 0, 30, 60 (ends at 90 ms). A transient sphere lives
    // in frame 0; category 1 "a"; mesh resource 0 used by MeshSet 5.
    let mut a = vec![category(1, 0, "a"), create(64, 1, 1), create(64, 0, 0)];
    a.extend(mesh_resource(0));
    a.extend([
        mesh_set(5, 0),
        frame(30, false),
        frame(30, false),
        frame(0, false),
    ]);
    // B: 0.5 ms units, frames of 25 ms at 0, 25, 50, 75 (ends at 100 ms). Sphere 1 in
    // category 1 "b" (a different category under the same id), its own resource 0 and
    // MeshSet 5; a Reset in frame 2.
    let reset = build(2, 5, &control_payload(0, 0, 0));
    let mut b = vec![category(1, 0, "b"), category(2, 1, "b.child")];
    b.extend([create(64, 1, 2)]);
    b.extend(mesh_resource(0));
    b.extend([mesh_set(5, 0), frame(50, false), frame(50, false), reset]);
    b.extend([create(64, 3, 1), frame(50, false), frame(0, false)]);
    let (pa, pb) = (dir.path().join("a.3es"), dir.path().join("b.3es"));
    std::fs::write(&pa, capture(1000, 30, 3, &a)).unwrap();
    std::fs::write(&pb, capture(500, 50, 4, &b)).unwrap();
    let out = dir.path().join("ab.3es");
    let merged = merge(&[pa, pb], &out);
    let packets: Vec<&[u8]> = merged.iter().map(raw).collect();
    // ServerInfo: gcd 500 µs, A's default 30 ms as 60 units.
    assert_eq!(
        &packets[0][16..28],
        &[0, 0, 0, 0, 0, 0, 1, 0xf4, 0, 0, 0, 60]
    );
    // Frames at 0, 25, 30, 50, 60, 75 ms; the last runs to B's end at 100 ms.
    let frames: Vec<u32> = packets
        .iter()
        .filter(|p| kind(p) == (2, 1))
        .map(|p| be32(p, 20))
        .collect();
    assert_eq!(frames, vec![50, 10, 40, 20, 30, 50]);
    let starts: Vec<i64> = merged
        .iter()
        .filter(|r| kind(raw(r)) == (2, 1))
        .map(|r| r.time / 1_000_000)
        .collect();
    assert_eq!(starts, vec![0, 25, 30, 50, 60, 75]);
    // A's transient (its frame 0 spans output frames 0 and 1) is shown in both.
    let transients: Vec<i64> = merged
        .iter()
        .filter(|r| kind(raw(r)) == (64, 1) && be32(raw(r), 16) == 0)
        .map(|r| r.frame.unwrap())
        .collect();
    assert_eq!(transients, vec![0, 1]);
    // No Reset survives: B's live shape and resource are destroyed instead, by their new ids.
    assert!(!packets.iter().any(|p| kind(p) == (2, 5)));
    let destroys: Vec<(u16, u32)> = packets
        .iter()
        .filter(|p| kind(p) == (64, 3) || kind(p) == (4, 1) || kind(p) == (73, 3))
        .map(|p| (be16(p, 8), be32(p, 16)))
        .collect();
    // Sphere 1 of B became 4 (above every sphere id, B's 3 included); MeshSet 5 became 6;
    // resource 0 became 1.
    assert_eq!(destroys, vec![(64, 4), (73, 6), (4, 1)]);
    let creates: Vec<(u16, u32, u16)> = packets
        .iter()
        .filter(|p| kind(p).1 == 1 && kind(p).0 >= 64 && be32(p, 16) != 0)
        .map(|p| (be16(p, 8), be32(p, 16), be16(p, 20)))
        .collect();
    // B's category 1 "b" collides with A's "a": B's 1 → 3, its child 2 → 2 (unused by A)
    // with parent 3; B's sphere 3 keeps its id (A has no sphere 3).
    assert_eq!(
        creates,
        vec![(64, 1, 1), (73, 5, 0), (64, 4, 2), (73, 6, 0), (64, 3, 3)]
    );
    let cats: Vec<(u16, u16)> = packets
        .iter()
        .filter(|p| kind(p) == (6, 0))
        .map(|p| (be16(p, 16), be16(p, 18)))
        .collect();
    assert_eq!(cats, vec![(1, 0), (3, 0), (2, 3)]);
    let set_parts: Vec<u32> = packets
        .iter()
        .filter(|p| kind(p) == (73, 1))
        .map(|p| be32(p, 16 + 10 + 44 + 2))
        .collect();
    assert_eq!(set_parts, vec![0, 1]);
    // The written capture validates and lasts 100 ms in 6 frames.
    let (back, bad, frames, fc) = reread(&out);
    assert_eq!(bad, Vec::<String>::new());
    assert_eq!((frames, fc), (6, 6));
    assert_eq!(back.last().unwrap().time, 75_000_000);
}
