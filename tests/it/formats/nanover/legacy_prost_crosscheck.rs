//! simrec's hand-written payload decoder (`wire.rs`) against the prost messages of
//! `proto.rs`: every record payload of the small pair and of the upstream recordings is
//! decoded by both, and the values must agree (keys, frame index, numbers, strings,
//! array contents, and the shapes the spec §4 key table gives). Then records stripped of
//! their original bytes are re-encoded by the writer, read back and compared.

use std::path::Path;

use prost::Message as _;
use simrec::formats::nanover::legacy::proto::{
    GetFrameResponse, Kind, ProtoValue, StateUpdate, ValueArrayKind,
};
use simrec::formats::nanover::legacy::{LegacyReader, LegacyWriter, Stream};
use simrec::formats::output::Outputs;
use simrec::formats::{ReadOptions, Sink, Source};
use simrec::model::{ArrayData, Field, Header, Record, Value};
use simrec::report::Severity;

use crate::util::fixture;
use crate::util::prost_model::{frame_fields, same, same_fields, struct_fields};

const FILES: [&str; 9] = [
    "small.traj",
    "small.state",
    "upstream/17-ala-recording-multiple.traj",
    "upstream/17-ala-recording-multiple.state",
    "upstream/hello.traj",
    "upstream/nanotube-example-recording.traj",
    "upstream/nanotube-example-recording.state",
    "upstream/sim-switching-test-recording.traj",
    "upstream/sim-switching-test-recording.state",
];

fn stream_of(path: &Path) -> Stream {
    match path.extension().and_then(|e| e.to_str()) {
        Some("traj") => Stream::Frames,
        Some("state") => Stream::State,
        other => panic!("{}: extension {other:?}", path.display()),
    }
}

/// Every record of a file, strictly read and decoded, with its header.
fn read_all(path: &Path) -> (Header, Vec<Record>) {
    let reader = LegacyReader::open(path, Some(stream_of(path)), ReadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let header = reader.header().clone();
    let mut reader = reader;
    let records: Vec<Record> = reader
        .by_ref()
        .map(|r| r.unwrap_or_else(|e| panic!("{e}")))
        .collect();
    for (_, findings) in reader.findings() {
        assert_eq!(findings.count(Severity::Error), 0, "{}", path.display());
    }
    (header, records)
}

fn assert_same_fields(got: &[Field], want: &[Field], what: &str) {
    if same_fields(got, want) {
        return;
    }
    let keys = |f: &[Field]| f.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    assert_eq!(keys(got), keys(want), "{what}: keys");
    for ((k, g), (_, w)) in got.iter().zip(want) {
        assert!(same(g, w), "{what}: `{k}`\n simrec: {g:?}\n  prost: {w:?}");
    }
}

/// What `cross_check` saw, for assertions about coverage.
#[derive(Default, Debug)]
struct Seen {
    records: usize,
    arrays: usize,
    float_elements: usize,
    strings: usize,
    numbers: usize,
    removals: usize,
    resets: usize,
}

fn count(v: &Value, seen: &mut Seen) {
    match v {
        Value::Array(a) => {
            seen.arrays += 1;
            if let ArrayData::F32(f) = &a.data {
                seen.float_elements += f.len();
            }
        }
        Value::Str(_) => seen.strings += 1,
        Value::Float(_) => seen.numbers += 1,
        Value::Removed => seen.removals += 1,
        Value::List(l) => l.iter().for_each(|v| count(v, seen)),
        Value::Map(m) => m.iter().for_each(|(_, v)| count(v, seen)),
        _ => {}
    }
}

/// Decodes every payload of one file with prost and compares with simrec's reader.
fn cross_check(rel: &str) -> Seen {
    let path = fixture(rel);
    let stream = stream_of(&path);
    let (_, records) = read_all(&path);
    let mut seen = Seen::default();
    for (i, r) in records.iter().enumerate() {
        let what = format!("{rel} record {i}");
        let raw = &r.raw.as_ref().expect("raw bytes").bytes;
        let ts = u64::from_le_bytes(raw[..8].try_into().unwrap());
        assert_eq!(r.time, ts as i64 * 1000, "{what}: time");
        assert_eq!(
            u64::from_le_bytes(raw[16..24].try_into().unwrap()) as usize,
            raw.len() - 24
        );
        let payload = &raw[24..];
        let want = match stream {
            Stream::Frames => {
                let m = GetFrameResponse::decode(payload)
                    .unwrap_or_else(|e| panic!("{what}: prost: {e}"));
                assert_eq!(
                    r.frame,
                    Some(i64::from(m.frame_index)),
                    "{what}: frame index"
                );
                if m.frame_index == 0 {
                    seen.resets += 1;
                }
                m.frame.as_ref().map(frame_fields).unwrap_or_default()
            }
            Stream::State => {
                let m =
                    StateUpdate::decode(payload).unwrap_or_else(|e| panic!("{what}: prost: {e}"));
                assert_eq!(r.frame, None);
                m.changed_keys
                    .as_ref()
                    .map(|s| struct_fields(s, true))
                    .unwrap_or_default()
            }
        };
        assert_same_fields(&r.values, &want, &what);
        seen.records += 1;
        r.values.iter().for_each(|(_, v)| count(v, &mut seen));
    }
    seen
}

#[test]
fn small_traj_agrees_with_prost() {
    let seen = cross_check("small.traj");
    assert_eq!(seen.records, 32);
    // frame_index 2 first (late-joining recorder), then two resets.
    assert_eq!(seen.resets, 2);
    assert!(seen.arrays > 32 && seen.float_elements > 1000, "{seen:?}");
}

#[test]
fn small_state_agrees_with_prost() {
    let seen = cross_check("small.state");
    assert_eq!(seen.records, 15);
    assert!(seen.removals > 0, "{seen:?}");
}

#[test]
fn upstream_recordings_agree_with_prost() {
    let expected_records = [427, 1, 626, 930, 685, 454, 1];
    for (rel, want) in FILES[2..].iter().zip(expected_records) {
        let seen = cross_check(rel);
        assert_eq!(seen.records, want, "{rel}");
    }
}

#[test]
fn arrays_are_shaped_by_the_key_table() {
    let (_, records) = read_all(&fixture("small.traj"));
    let first = &records[0];
    let Some(Value::Float(n)) = first.get("particle.count") else {
        panic!("record 0 has no particle.count: {:?}", first.values);
    };
    let n = *n as usize;
    assert!(n > 0);
    let shape_of = |key: &str| match first.get(key) {
        Some(Value::Array(a)) => (a.dtype().name(), a.shape.clone()),
        other => panic!("{key}: {other:?}"),
    };
    assert_eq!(shape_of("particle.positions"), ("float32", vec![n, 3]));
    assert_eq!(shape_of("particle.elements"), ("uint32", vec![n]));
    assert_eq!(shape_of("particle.names"), ("string", vec![n]));
    let (dtype, bonds) = shape_of("bond.pairs");
    assert_eq!((dtype, bonds.len(), bonds[1]), ("uint32", 2, 2));
    // The same positions, straight from prost: N*3 little-endian floats.
    let raw = &first.raw.as_ref().unwrap().bytes[24..];
    let m = GetFrameResponse::decode(raw).unwrap();
    let frame = m.frame.unwrap();
    let entry = frame
        .arrays
        .iter()
        .find(|e| e.key == "particle.positions")
        .unwrap();
    let Some(ValueArrayKind::FloatValues(f)) = entry.value.as_ref().unwrap().values.as_ref() else {
        panic!("positions are not float_values");
    };
    assert_eq!(f.values.len(), 3 * n);
    let Some(Value::Array(a)) = first.get("particle.positions") else {
        unreachable!()
    };
    assert_eq!(a.data, ArrayData::F32(f.values.clone()));
}

#[test]
fn the_removal_record_of_spec_1_2() {
    // small.state record 10: the 45-byte record of spec §1.2 that removes `simrec.note`.
    let (_, records) = read_all(&fixture("small.state"));
    let r = &records[10];
    let raw = &r.raw.as_ref().unwrap().bytes;
    let mut want = vec![0x0a, 0x3a, 0x1b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    want.extend([0x15, 0, 0, 0, 0, 0, 0, 0]);
    want.extend([0x0a, 0x13, 0x0a, 0x11, 0x0a, 0x0b]);
    want.extend(b"simrec.note");
    want.extend([0x12, 0x02, 0x08, 0x00]);
    assert_eq!(raw, &want);
    assert_eq!(r.time, 1_784_330_000);
    assert_eq!(r.values, vec![("simrec.note".to_string(), Value::Removed)]);
    let m = StateUpdate::decode(&raw[24..]).unwrap();
    let fields = &m.changed_keys.unwrap().fields;
    assert_eq!(fields.len(), 1);
    assert_eq!(fields[0].key, "simrec.note");
    assert_eq!(
        fields[0].value,
        Some(ProtoValue {
            kind: Some(Kind::NullValue(0))
        })
    );
}

#[test]
fn a_nested_null_is_data() {
    // Spec §5: the genuine small.state has `simrec.nested.b.d = null` inside a struct value.
    let (_, records) = read_all(&fixture("small.state"));
    let nested = records
        .iter()
        .find_map(|r| r.get("simrec.nested"))
        .expect("a record sets simrec.nested");
    let Value::Map(top) = nested else {
        panic!("simrec.nested is {nested:?}");
    };
    let b = top.iter().find(|(k, _)| k == "b").map(|(_, v)| v);
    let Some(Value::Map(b)) = b else {
        panic!("simrec.nested.b is {b:?}");
    };
    assert!(b.contains(&("d".to_string(), Value::Null)), "{b:?}");
}

// ---- re-encoding ----

/// Writes `records` with their original bytes dropped (so every payload is re-encoded),
/// reads the file back, and returns what was read and the file's bytes.
fn reencode(header: &Header, records: &[Record], dir: &Path, name: &str) -> (Vec<Record>, Vec<u8>) {
    let target = dir.join(name);
    let mut outputs = Outputs::new(false);
    let mut writer: Box<dyn Sink> =
        Box::new(LegacyWriter::create(&target, header, &mut outputs).unwrap());
    for r in records {
        let mut r = r.clone();
        r.raw = None;
        writer.write(&r).unwrap();
    }
    let report = writer.finish().unwrap();
    assert_eq!(report.records, records.len() as u64);
    assert!(report.loss.is_empty(), "{name}: {:?}", report.loss);
    let written = outputs.commit().unwrap();
    assert_eq!(written, vec![target.clone()]);
    let (_, back) = read_all(&target);
    (back, std::fs::read(&target).unwrap())
}

#[test]
fn reencoded_records_read_back_with_the_same_values() {
    let dir = tempfile::tempdir().unwrap();
    for (n, rel) in FILES.iter().enumerate() {
        let path = fixture(rel);
        let (header, records) = read_all(&path);
        let ext = path.extension().unwrap().to_str().unwrap();
        let (back, bytes) = reencode(&header, &records, dir.path(), &format!("{n}-once.{ext}"));
        assert_eq!(back.len(), records.len(), "{rel}");
        let mut changed = 0;
        for (i, (a, b)) in records.iter().zip(&back).enumerate() {
            let what = format!("{rel} record {i} re-encoded");
            assert_eq!(
                (a.time, a.channel, a.frame),
                (b.time, b.channel, b.frame),
                "{what}"
            );
            assert_same_fields(&b.values, &a.values, &what);
            // The new payload is what prost makes of the same message.
            let payload = &b.raw.as_ref().unwrap().bytes[24..];
            let canonical = match header.channels[0].name.as_str() {
                "frame" => GetFrameResponse::decode(payload).unwrap().encode_to_vec(),
                _ => StateUpdate::decode(payload).unwrap().encode_to_vec(),
            };
            assert_eq!(payload, &canonical[..], "{what}: canonical form");
            if b.frame.is_some() {
                // Spec §7: frame_index omitted when 0, `frame` always written (`12 00` empty).
                assert_eq!(
                    payload[0],
                    if b.frame == Some(0) { 0x12 } else { 0x08 },
                    "{what}"
                );
                if b.values.is_empty() && b.frame == Some(0) {
                    assert_eq!(payload, [0x12, 0x00], "{what}");
                }
            }
            if a.raw.as_ref().unwrap().bytes[24..] != *payload {
                changed += 1;
            }
        }
        // Encoding is canonical: encoding what was read back gives the same file again.
        let (again, bytes_again) =
            reencode(&header, &back, dir.path(), &format!("{n}-twice.{ext}"));
        assert_eq!(again.len(), back.len());
        assert_eq!(bytes, bytes_again, "{rel}: re-encoding is not stable");
        if *rel == "small.traj" {
            // The Python writer's empty index arrays for float keys come back as float_values.
            assert!(changed > 0, "{rel}: expected some payloads to change");
        }
    }
}
