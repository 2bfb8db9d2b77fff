//! The `.icarec` profile (spec Part A) through the library: vectors built here from the
//! spec's tables (§A2 schema, §A6 record and static block, §A7 checksum text, §A3 slot sizes
//! and composite orders), the fixtures checked against them, every §A11 rule with its code,
//! part, offset and frame, and round trips through the writer in both forms.

use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};
use sha2::{Digest, Sha256};

use simrec::formats::icarus::icarec::{
    schema, IcarecForm, IcarecReader, IcarecWriteOptions, IcarecWriter,
};
use simrec::formats::output::Outputs;
use simrec::formats::{ReadError, ReadOptions, Sink, Source};
use simrec::model::{ArrayData, Composition, DType, Entity, Record, Value};
use simrec::pipeline;
use simrec::report::{Finding, Severity};

use crate::util;
use crate::util::lenient;

/// §A2's example schema, as the spec prints it.
const A2: &str = r#"{"schema_version":"1.0.0","icarus_version":"0.6.0","created_at":"2026-03-01T12:00:00Z",
 "time":{"epoch":"2026-03-01T12:00:00Z","system":"UTC","units":"seconds"},
 "signals":[
  {"name":"Vehicle.Nav.position","type":"Vec3<double>","units":"m","lifecycle":"dynamic","offset":0,"size":24},
  {"name":"Vehicle.Aero.alpha","type":"double","units":"rad","lifecycle":"dynamic","offset":24,"size":8},
  {"name":"Vehicle.Mass.dry","type":"float","units":"kg","lifecycle":"static","offset":0,"size":4}],
 "compatibility":{"min_icarus_version":"0.6.0","warmstart_compatible":true,"breaking_changes":[]},
 "checksum":"sha256:dfc5cf06739db1309b73341f945ee3ff0053ce3198ca2f634751d3ee0798efc9"}
"#;

/// §A6: the record at t = 0.01 s, position (1, 2, 3), alpha 0.5, byte for byte.
const A6_RECORD: [u8; 40] = [
    0x7b, 0x14, 0xae, 0x47, 0xe1, 0x7a, 0x84, 0x3f, // t = 0.01
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f, // position.x = 1
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, // position.y = 2
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x40, // position.z = 3
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe0, 0x3f, // alpha = 0.5
];
/// §A6: dry mass 1250 kg.
const A6_STATIC: [u8; 4] = [0x00, 0x40, 0x9c, 0x44];

fn fixture(rel: &str) -> PathBuf {
    util::any_fixture("icarec").join(rel)
}

/// A frame of the §A2 layout.
fn frame(t: f64, p: [f64; 3], alpha: f64) -> Vec<u8> {
    let mut b = t.to_le_bytes().to_vec();
    for v in p.into_iter().chain([alpha]) {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b
}

/// The three frames of the a2 fixture: the §A6 record and two more.
fn a2_dynamic() -> Vec<u8> {
    let mut d = A6_RECORD.to_vec();
    d.extend(frame(0.02, [1.5, 2.5, 3.5], 0.25));
    d.extend(frame(0.03, [2.0, 3.0, 4.0], -0.125));
    d
}

fn sha(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// A complete `metadata.json` for these data files and times.
fn metadata(statics: &[u8], dynamic: &[u8], frames: u64, first: f64, last: f64) -> String {
    json!({
        "frame_count": frames, "t_first": first, "t_last": last, "complete": true,
        "files": {
            "static_signals.bin": {"bytes": statics.len(), "sha256": sha(statics)},
            "dynamic_signals.bin": {"bytes": dynamic.len(), "sha256": sha(dynamic)},
        }
    })
    .to_string()
}

type Parts = [Option<Vec<u8>>; 4];

fn a2_parts() -> Parts {
    let d = a2_dynamic();
    let m = metadata(&A6_STATIC, &d, 3, 0.01, 0.03);
    [
        Some(A2.as_bytes().to_vec()),
        Some(A6_STATIC.to_vec()),
        Some(d),
        Some(m.into_bytes()),
    ]
}

/// Every record and every finding of a lenient read (an error that stops reading is the
/// last finding).
fn read(opened: Result<IcarecReader, ReadError>) -> (Vec<Record>, Vec<Finding>) {
    let mut r = match opened {
        Ok(r) => r,
        Err(ReadError::Invalid { finding, .. }) => return (Vec::new(), vec![*finding]),
        Err(e) => panic!("not a clean finding: {e:?}"),
    };
    let mut records = Vec::new();
    let mut stop = None;
    for rec in r.by_ref() {
        match rec {
            Ok(x) => records.push(x),
            Err(ReadError::Invalid { finding, .. }) => {
                stop = Some(*finding);
                break;
            }
            Err(e) => panic!("not a clean finding: {e:?}"),
        }
    }
    let mut found: Vec<Finding> = r.findings()[0].1.list().to_vec();
    found.extend(stop);
    (records, found)
}

fn read_parts(parts: Parts, options: ReadOptions) -> (Vec<Record>, Vec<Finding>) {
    read(IcarecReader::from_parts(parts, options))
}

fn codes(found: &[Finding]) -> Vec<&'static str> {
    found.iter().map(|f| f.code).collect()
}

fn only<'a>(found: &'a [Finding], code: &str) -> &'a Finding {
    let hits: Vec<&Finding> = found.iter().filter(|f| f.code == code).collect();
    assert_eq!(hits.len(), 1, "{code} in {found:#?}");
    hits[0]
}

fn f64s(v: &Value) -> Vec<f64> {
    match v {
        Value::Array(a) => match &a.data {
            ArrayData::F64(d) => d.clone(),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_fixtures_are_the_spec_vectors() {
    let dir = fixture("a2.icarec");
    assert_eq!(
        std::fs::read_to_string(dir.join("schema.json")).unwrap(),
        A2
    );
    assert_eq!(
        std::fs::read(dir.join("static_signals.bin")).unwrap(),
        A6_STATIC
    );
    let dynamic = std::fs::read(dir.join("dynamic_signals.bin")).unwrap();
    assert_eq!(dynamic, a2_dynamic());
    assert_eq!(dynamic[..40], A6_RECORD);
    assert_eq!(1250f32.to_le_bytes(), A6_STATIC);
}

#[test]
fn the_a7_checksum_text_and_digest() {
    let signals: Json = serde_json::from_str::<Json>(A2).unwrap()["signals"].clone();
    let text = schema::checksum_text(signals.as_array().unwrap());
    let want = "Vehicle.Nav.position\tVec3<double>\tm\tdynamic\t0\t24\n\
                Vehicle.Aero.alpha\tdouble\trad\tdynamic\t24\t8\n\
                Vehicle.Mass.dry\tfloat\tkg\tstatic\t0\t4\n";
    assert_eq!(text, want);
    assert_eq!(text.len(), 129);
    assert_eq!(
        format!("sha256:{}", sha(want.as_bytes())),
        "sha256:dfc5cf06739db1309b73341f945ee3ff0053ce3198ca2f634751d3ee0798efc9"
    );
    assert_eq!(
        schema::checksum(signals.as_array().unwrap()),
        "sha256:dfc5cf06739db1309b73341f945ee3ff0053ce3198ca2f634751d3ee0798efc9"
    );
}

#[test]
fn the_a2_recording_reads_as_the_a10_mapping() {
    let r = IcarecReader::from_parts(a2_parts(), ReadOptions::default()).unwrap();
    let h = r.header().clone();
    assert_eq!(
        (h.format.as_str(), h.format_version.as_str()),
        ("icarec", "1.0.0")
    );
    assert_eq!(h.origin.epoch.unwrap().iso8601(), "2026-03-01T12:00:00Z");
    assert_eq!(h.origin.system.as_deref(), Some("UTC"));
    let names: Vec<&str> = h.channels.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Vehicle.Nav.position",
            "Vehicle.Aero.alpha",
            "Vehicle.Mass.dry"
        ]
    );
    let pos = &h.channels[0];
    assert_eq!(pos.composition, Composition::Independent);
    assert_eq!(pos.fields.len(), 1);
    let spec = &pos.fields[0];
    assert_eq!(spec.name, "position");
    assert_eq!(
        (spec.dtype, spec.shape.as_deref()),
        (Some(DType::F64), Some(&[3][..]))
    );
    assert_eq!(spec.unit.as_deref(), Some("m"));
    assert!(!spec.is_static);
    let dry = &h.channels[2];
    assert_eq!(dry.composition, Composition::SampleHold);
    assert_eq!(dry.fields[0].dtype, Some(DType::F32));
    assert_eq!(dry.fields[0].shape.as_deref(), Some(&[][..]));
    assert!(dry.fields[0].is_static);
    // The schema and metadata objects ride along for a writer.
    assert_eq!(
        h.metadata["icarec"]["schema"]["compatibility"]["min_icarus_version"],
        "0.6.0"
    );

    let (records, found) = read(Ok(r));
    assert!(found.is_empty(), "{found:#?}");
    assert_eq!(records.len(), 7, "1 static + 3 frames × 2 dynamic");
    // The static record first, at the first frame's time, frame 0.
    let s = &records[0];
    assert_eq!((s.channel, s.time, s.frame), (2, 10_000_000, Some(0)));
    assert_eq!(s.entity, Some(Entity::from("Vehicle.Mass")));
    assert_eq!(s.values, [("dry".to_string(), Value::F32(1250.0))]);
    assert_eq!(s.raw.as_ref().unwrap().bytes, A6_STATIC);
    // The §A6 record.
    let p = &records[1];
    assert_eq!((p.channel, p.time, p.frame), (0, 10_000_000, Some(0)));
    assert_eq!(p.entity, Some(Entity::from("Vehicle.Nav")));
    assert_eq!(p.values[0].0, "position");
    assert_eq!(f64s(&p.values[0].1), [1.0, 2.0, 3.0]);
    let raw = p.raw.as_ref().unwrap();
    assert_eq!(raw.bytes, A6_RECORD, "the whole frame: time and block");
    assert!(raw.time_inside);
    let a = &records[2];
    assert_eq!(a.values, [("alpha".to_string(), Value::Float(0.5))]);
    assert_eq!(
        a.raw, None,
        "only the frame's first record carries its bytes"
    );
    let times: Vec<(i64, Option<i64>)> = records[1..].iter().map(|r| (r.time, r.frame)).collect();
    assert_eq!(
        times,
        [
            (10_000_000, Some(0)),
            (10_000_000, Some(0)),
            (20_000_000, Some(1)),
            (20_000_000, Some(1)),
            (30_000_000, Some(2)),
            (30_000_000, Some(2))
        ]
    );
    assert_eq!(
        records[6].values,
        [("alpha".to_string(), Value::Float(-0.125))]
    );
}

#[test]
fn every_form_of_the_fixture_reads_the_same() {
    let want = read_parts(a2_parts(), ReadOptions::default());
    for name in [
        "a2.icarec",
        "a2.icarec.tar",
        "a2-gnu.icarec.tar",
        "a2-pax.icarec.tar",
    ] {
        let (records, found) = read(IcarecReader::open(&fixture(name), ReadOptions::default()));
        assert!(found.is_empty(), "{name}: {found:#?}");
        assert_eq!(records, want.0, "{name}");
    }
}

#[test]
fn slots_types_and_composite_orders() {
    let (records, found) = read(IcarecReader::open(&fixture("types.icarec"), lenient()));
    assert_eq!(codes(&found), ["ICAREC_NO_EPOCH"]);
    let at = |channel: &str, frame: i64| -> Value {
        records
            .iter()
            .find(|r| {
                r.frame == Some(frame)
                    && r.values[0].0 == channel.rsplit('.').next().unwrap()
                    && r.entity == Some(Entity::from(channel.rsplit_once('.').unwrap().0))
            })
            .unwrap_or_else(|| panic!("{channel} {frame}"))
            .values[0]
            .1
            .clone()
    };
    assert_eq!(at("Sim.count", 0), Value::Int(1 << 60));
    assert_eq!(at("Sim.count", 1), Value::Int(-(1 << 53) - 1));
    // int32 in 4 bytes and in an 8-byte slot, bool in 1 byte and in a slot.
    assert_eq!(at("Sim.mode", 0), Value::Int(-3));
    assert_eq!(at("Sim.mode_slot", 0), Value::Int(-3));
    assert_eq!(at("Sim.mode_slot", 1), Value::Int(i64::from(i32::MAX)));
    assert_eq!(at("Sim.armed", 0), Value::Bool(true));
    assert_eq!(at("Sim.armed_slot", 0), Value::Bool(true));
    assert_eq!(at("Sim.armed_slot", 1), Value::Bool(false));
    // Quat: w first, as stored.
    assert_eq!(f64s(&at("Body.q", 0)), [1.0, 0.0, 0.0, 0.0]);
    // Mat3: stored column-major, the model's row-major rows.
    let Value::Array(m) = at("Body.m", 0) else {
        panic!()
    };
    assert_eq!(m.shape, [3, 3]);
    assert_eq!(
        m.data,
        ArrayData::F64(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    );
    let Value::Array(r) = at("Body.r", 1) else {
        panic!()
    };
    assert_eq!(r.data, ArrayData::F32(vec![1.0, 2.0, 3.0]));
    // Static: Mat3<float>, Vec3<int32>, Vec3<int64> above 2^53, a float.
    let Value::Array(i) = at("Body.inertia", 0) else {
        panic!()
    };
    assert_eq!(
        i.data,
        ArrayData::F32(vec![10.0, 0.5, 0.0, 0.5, 20.0, 0.0, 0.0, 0.0, 30.0])
    );
    let Value::Array(o) = at("Body.offsets", 0) else {
        panic!()
    };
    assert_eq!(o.data, ArrayData::I32(vec![-1, 0, 1]));
    let Value::Array(ids) = at("Body.ids", 0) else {
        panic!()
    };
    assert_eq!(ids.data, ArrayData::I64(vec![1, 2, 9_007_199_254_740_993]));
    // The float the spec's §A13 prints as 0.7854 (not π/4).
    assert_eq!(at("Sim.gain", 0), Value::F32(f32::from_bits(0x3f49_0ff9)));

    let h = IcarecReader::open(&fixture("types.icarec"), lenient()).unwrap();
    let h = h.header();
    assert_eq!(h.origin.epoch, None);
    assert_eq!(h.origin.system.as_deref(), Some("MET"));
    let r_spec = &h.channels[h.channel_id("Body.r").unwrap() as usize].fields[0];
    assert_eq!(r_spec.unit.as_deref(), Some("m"), "Vulcan's `unit`");
    let mode = &h.channels[h.channel_id("Sim.mode").unwrap() as usize].fields[0];
    assert_eq!(
        (mode.dtype, mode.semantic.as_deref()),
        (Some(DType::I32), Some("enum"))
    );
}

#[test]
fn no_frames_give_the_static_records_at_time_zero() {
    let mut parts = a2_parts();
    parts[2] = Some(Vec::new());
    parts[3] = None;
    let (records, found) = read_parts(parts, lenient());
    assert_eq!(codes(&found), ["ICAREC_METADATA_MISSING"]);
    assert_eq!(records.len(), 1);
    assert_eq!((records[0].time, records[0].frame), (0, Some(0)));
    assert_eq!(records[0].values[0].1, Value::F32(1250.0));
}

/// The a2 parts with `schema` edited.
fn with_schema(edit: impl FnOnce(&mut Json)) -> Parts {
    let mut s: Json = serde_json::from_str(A2).unwrap();
    edit(&mut s);
    let mut parts = a2_parts();
    parts[0] = Some(s.to_string().into_bytes());
    parts
}

/// The a2 parts with `dynamic` as the dynamic file and a metadata.json that agrees with it.
fn with_dynamic(dynamic: Vec<u8>) -> Parts {
    let mut parts = a2_parts();
    parts[2] = Some(dynamic);
    parts[3] = None;
    parts
}

fn schema_findings(edit: impl FnOnce(&mut Json)) -> Vec<Finding> {
    read_parts(with_schema(edit), lenient()).1
}

#[test]
fn schema_rules() {
    type Edit = Box<dyn FnOnce(&mut Json)>;
    let cases: Vec<(&str, Edit)> = vec![
        (
            "ICAREC_SCHEMA_JSON",
            Box::new(|s| drop(s.as_object_mut().unwrap().remove("icarus_version"))),
        ),
        (
            "ICAREC_SIGNAL_FIELD",
            Box::new(|s| drop(s["signals"][1].as_object_mut().unwrap().remove("offset"))),
        ),
        (
            "ICAREC_SIGNAL_FIELD",
            Box::new(|s| s["signals"][1]["offset"] = json!(-8)),
        ),
        (
            "ICAREC_SIGNAL_FIELD",
            Box::new(|s| s["signals"][1]["size"] = json!(8.5)),
        ),
        (
            "ICAREC_SIGNAL_FIELD",
            Box::new(|s| s["signals"][1]["name"] = json!("Vehicle.Nav.position")),
        ),
        (
            "ICAREC_UNKNOWN_TYPE",
            Box::new(|s| s["signals"][1]["type"] = json!("Vec4<double>")),
        ),
        (
            "ICAREC_SIZE_MISMATCH",
            Box::new(|s| s["signals"][1]["size"] = json!(4)),
        ),
        (
            "ICAREC_SIGNAL_OVERLAP",
            Box::new(|s| s["signals"][1]["offset"] = json!(16)),
        ),
        (
            "ICAREC_SIGNAL_OUT_OF_BLOCK",
            Box::new(|s| s["dynamic_block_bytes"] = json!(30)),
        ),
        (
            "ICAREC_BYTE_ORDER",
            Box::new(|s| s["byte_order"] = json!("big")),
        ),
        (
            "ICAREC_TIME_BLOCK",
            Box::new(|s| s["time"]["system"] = json!("TT")),
        ),
        (
            "ICAREC_TIME_BLOCK",
            Box::new(|s| s["time"]["units"] = json!("ms")),
        ),
        (
            "ICAREC_TIME_BLOCK",
            Box::new(|s| s["time"]["epoch"] = json!("2026-03-01 12:00")),
        ),
        (
            "ICAREC_TIME_BLOCK",
            Box::new(|s| s["time"]["epoch"] = Json::Null),
        ),
        (
            "ICAREC_PRE_1972",
            Box::new(|s| s["time"]["epoch"] = json!("1969-07-20T20:17:40Z")),
        ),
        (
            "ICAREC_CHECKSUM_MISSING",
            Box::new(|s| drop(s.as_object_mut().unwrap().remove("checksum"))),
        ),
        (
            "ICAREC_COMPONENT_RANGES",
            Box::new(|s| {
                s["components"] = json!([
            {"name": "A", "type": "RigidBody6DOF", "state_offset": 0, "state_size": 13},
            {"name": "B", "type": "Tank", "state_offset": 12, "state_size": 2}])
            }),
        ),
    ];
    for (code, edit) in cases {
        let found = schema_findings(edit);
        let f = only(&found, code);
        assert!(f.message.starts_with("schema.json: "), "{f}");
        let severity = match code {
            "ICAREC_PRE_1972" | "ICAREC_CHECKSUM_MISSING" | "ICAREC_COMPONENT_RANGES" => {
                Severity::Warning
            }
            _ => Severity::Error,
        };
        assert_eq!(f.severity, severity, "{f}");
    }
    // A layout change without a new checksum: the checksum no longer matches.
    let found = schema_findings(|s| s["signals"][0]["units"] = json!("km"));
    let f = only(&found, "ICAREC_CHECKSUM_MISMATCH");
    assert!(f.message.contains("dfc5cf06"), "{f}");
    // MET without an epoch is a note, not a problem.
    let found = schema_findings(|s| drop(s.as_object_mut().unwrap().remove("time")));
    assert_eq!(codes(&found), ["ICAREC_NO_EPOCH"]);
    assert_eq!(found[0].severity, Severity::Info);
    // A signal that cannot be read is left out; the others still are.
    let (records, _) = read_parts(
        with_schema(|s| s["signals"][1]["type"] = json!("quaternion")),
        lenient(),
    );
    assert_eq!(records.len(), 1 + 3, "the static and the 3 positions");
    // Strict reading stops at the first error, at open.
    let Err(ReadError::Invalid { finding, .. }) = IcarecReader::from_parts(
        with_schema(|s| s["byte_order"] = json!("big")),
        ReadOptions::default(),
    ) else {
        panic!("strict read of a broken schema opened")
    };
    assert_eq!(finding.code, "ICAREC_BYTE_ORDER");
    // Not JSON, not an object, no signals: nothing can be read even leniently.
    for bad in [
        &b"{\"schema_version\": "[..],
        b"[]",
        b"{\"schema_version\":\"1.0.0\"}",
    ] {
        let mut parts = a2_parts();
        parts[0] = Some(bad.to_vec());
        let Err(ReadError::Invalid { finding, .. }) = IcarecReader::from_parts(parts, lenient())
        else {
            panic!("opened")
        };
        assert_eq!(finding.code, "ICAREC_SCHEMA_JSON");
    }
}

#[test]
fn block_sizes_are_derived_when_absent_and_gaps_are_allowed() {
    // alpha moved to 40 leaves a gap [24, 40): the block is 48 bytes, frames 56.
    let mut dynamic = Vec::new();
    for (t, x) in [(1.0f64, 7.0f64), (2.0, 8.0)] {
        dynamic.extend(t.to_le_bytes());
        dynamic.extend([0u8; 40]);
        dynamic.extend(x.to_le_bytes());
    }
    let mut parts = with_schema(|s| {
        s["signals"][1]["offset"] = json!(40);
        s.as_object_mut().unwrap().remove("checksum");
    });
    parts[2] = Some(dynamic);
    parts[3] = None;
    let (records, found) = read_parts(parts, lenient());
    assert_eq!(
        codes(&found),
        ["ICAREC_CHECKSUM_MISSING", "ICAREC_METADATA_MISSING"]
    );
    let alphas: Vec<&Value> = records
        .iter()
        .filter(|r| r.channel == 1)
        .map(|r| &r.values[0].1)
        .collect();
    assert_eq!(alphas, [&Value::Float(7.0), &Value::Float(8.0)]);
}

#[test]
fn part_rules() {
    let mut parts = a2_parts();
    parts[0] = None;
    let (_, found) = read_parts(parts, lenient());
    assert_eq!(codes(&found), ["ICAREC_MISSING_PART"]);
    assert!(found[0].message.contains("schema.json"));

    let mut parts = a2_parts();
    parts[2] = None;
    let (records, found) = read_parts(parts, lenient());
    let f = only(&found, "ICAREC_MISSING_PART");
    assert!(f.message.contains("dynamic_signals.bin"), "{f}");
    assert_eq!(records.len(), 1, "the static record, at time 0");

    let mut parts = a2_parts();
    parts[1] = None;
    let (records, found) = read_parts(parts, lenient());
    let f = only(&found, "ICAREC_MISSING_PART");
    assert!(f.message.contains("static_signals.bin"), "{f}");
    assert_eq!(records.len(), 6, "no static record");

    // A missing static file is fine when the static block is empty.
    let mut parts = with_schema(|s| {
        s["signals"].as_array_mut().unwrap().pop();
        s["checksum"] = json!(schema::checksum(s["signals"].as_array().unwrap()));
    });
    parts[1] = None;
    parts[3] = None;
    assert_eq!(
        codes(&read_parts(parts, lenient()).1),
        ["ICAREC_METADATA_MISSING"]
    );

    let mut parts = a2_parts();
    parts[1] = Some(vec![0, 0x40, 0x9c]);
    let (_, found) = read_parts(parts, lenient());
    assert!(codes(&found).contains(&"ICAREC_STATIC_SIZE"), "{found:#?}");

    let mut parts = a2_parts();
    parts[3] = Some(b"{\"complete\": tru".to_vec());
    let (_, found) = read_parts(parts, lenient());
    let f = only(&found, "ICAREC_METADATA_JSON");
    assert!(f.message.starts_with("metadata.json: "), "{f}");
}

fn truncated(n: usize) -> Vec<u8> {
    a2_dynamic()[..n].to_vec()
}

#[test]
fn a_partial_last_frame_names_its_part_offset_and_frame() {
    let (records, found) = read_parts(with_dynamic(truncated(40 * 2 + 17)), lenient());
    assert_eq!(records.len(), 1 + 2 * 2, "the two whole frames");
    let f = only(&found, "ICAREC_TRUNCATED_FRAME");
    assert_eq!(
        (f.severity, f.offset, f.record),
        (Severity::Error, Some(80), Some(2))
    );
    assert!(
        f.message
            .starts_with("dynamic_signals.bin frame 2 at byte 80: "),
        "{f}"
    );
    assert!(f.message.contains("17 of its 40 bytes"), "{f}");

    // In the archive: the offset in the member, and the archive's in the message.
    let mut tar = std::fs::read(fixture("a2.icarec.tar")).unwrap();
    // The dynamic member's data is at 3072 (after schema.json and static_signals.bin);
    // the metadata member follows at 3584: cut the archive inside the third frame.
    tar.truncate(3072 + 97);
    let (records, found) = read(IcarecReader::from_tar_bytes(tar, lenient()));
    assert_eq!(records.len(), 5);
    let f = only(&found, "ICAREC_TRUNCATED_FRAME");
    assert_eq!((f.offset, f.record), (Some(80), Some(2)));
    assert!(
        f.message
            .starts_with("dynamic_signals.bin frame 2 at byte 80 (archive byte 3152): "),
        "{f}"
    );
    // The member runs past the end of the archive too.
    assert_eq!(only(&found, "ICAREC_TAR").offset, Some(2560));

    // Strict reading gives the whole frames, then stops there.
    let mut r =
        IcarecReader::from_parts(with_dynamic(truncated(97)), ReadOptions::default()).unwrap();
    let got: Vec<_> = r.by_ref().collect();
    assert_eq!(got.iter().filter(|x| x.is_ok()).count(), 5);
    assert!(
        matches!(got.last(), Some(Err(ReadError::Invalid { finding, .. })) if finding.code == "ICAREC_TRUNCATED_FRAME")
    );
}

#[test]
fn time_rules() {
    let mut d = A6_RECORD.to_vec();
    d.extend(frame(0.01, [0.0; 3], 0.0)); // equal
    d.extend(frame(0.005, [0.0; 3], 0.0)); // lower
    d.extend(frame(f64::NAN, [0.0; 3], 0.0));
    d.extend(frame(0.02, [0.0; 3], 0.0));
    d.extend(frame(0.07, [0.0; 3], 0.0));
    let (records, found) = read_parts(with_dynamic(d), lenient());
    let equal = only(&found, "ICAREC_TIME_EQUAL");
    assert_eq!(
        (equal.severity, equal.offset, equal.record),
        (Severity::Warning, Some(40), Some(1))
    );
    let lower = only(&found, "ICAREC_TIME_DECREASE");
    assert_eq!(
        (lower.severity, lower.offset, lower.record),
        (Severity::Error, Some(80), Some(2))
    );
    let nan = only(&found, "ICAREC_TIME_NONFINITE");
    assert_eq!(
        (nan.severity, nan.offset, nan.record),
        (Severity::Error, Some(120), Some(3))
    );
    // Records are never dropped for their times: the NaN frame keeps the previous time.
    assert_eq!(records.len(), 1 + 6 * 2);
    assert_eq!(records[7].time, 5_000_000);
    // Steps 0, -0.005, 0.015, 0.05 around the median: irregular, reported once.
    let irregular = only(&found, "ICAREC_IRREGULAR_STEP");
    assert_eq!(irregular.severity, Severity::Info);
    assert!(
        irregular.message.contains("3 of 4 time steps"),
        "{irregular}"
    );
}

#[test]
fn metadata_rules() {
    let d = a2_dynamic();
    let edit = |m: Json| {
        let mut parts = a2_parts();
        parts[3] = Some(m.to_string().into_bytes());
        read_parts(parts, lenient()).1
    };
    let good: Json = serde_json::from_str(&metadata(&A6_STATIC, &d, 3, 0.01, 0.03)).unwrap();

    // Not finished cleanly: its own warning, never ICAREC_METADATA_KEY.
    let found = edit(json!({"complete": false, "scenario": "live"}));
    assert_eq!(codes(&found), ["ICAREC_INCOMPLETE"]);
    assert_eq!(found[0].severity, Severity::Warning);
    assert!(found[0].message.contains("not finished cleanly"));
    assert_eq!(codes(&edit(json!({}))), ["ICAREC_INCOMPLETE"]);

    let mut m = good.clone();
    m.as_object_mut().unwrap().remove("frame_count");
    let found = edit(m);
    assert_eq!(codes(&found), ["ICAREC_METADATA_KEY"]);
    assert!(found[0].message.contains("frame_count"));
    let mut m = good.clone();
    m.as_object_mut().unwrap().remove("t_last");
    assert_eq!(codes(&edit(m)), ["ICAREC_METADATA_KEY"]);

    let mut m = good.clone();
    m["frame_count"] = json!(4);
    let found = edit(m);
    assert_eq!(codes(&found), ["ICAREC_COUNT_MISMATCH"]);
    let mut m = good.clone();
    m["t_last"] = json!(0.030000000000000002);
    assert_eq!(codes(&edit(m)), ["ICAREC_COUNT_MISMATCH"]);

    let mut m = good.clone();
    m["files"]["dynamic_signals.bin"]["bytes"] = json!(121);
    assert_eq!(codes(&edit(m)), ["ICAREC_DIGEST_MISMATCH"]);
    // One changed value: the digest no longer matches.
    let mut parts = a2_parts();
    let mut changed = d.clone();
    changed[47] ^= 0x01;
    parts[2] = Some(changed);
    let found = read_parts(parts, lenient()).1;
    let f = only(&found, "ICAREC_DIGEST_MISMATCH");
    assert!(f.message.contains(&sha(&d)), "{f}");
    let mut m = good.clone();
    m["files"]["static_signals.bin"]["sha256"] = json!("00");
    assert_eq!(codes(&edit(m)), ["ICAREC_DIGEST_MISMATCH"]);
}

/// A recording of one dynamic bool and one dynamic int32 slot, with `blocks` per frame.
fn bool_slot_parts(blocks: &[[u8; 9]]) -> Parts {
    let signals = json!([
        {"name": "S.armed", "type": "bool", "lifecycle": "dynamic", "offset": 0, "size": 1},
        {"name": "S.mode", "type": "int32", "lifecycle": "dynamic", "offset": 1, "size": 8},
    ]);
    let s = json!({"schema_version": "1.0.0", "icarus_version": "0.6.0", "signals": signals,
        "checksum": schema::checksum(signals.as_array().unwrap())});
    let mut d = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        d.extend((i as f64).to_le_bytes());
        d.extend(b);
    }
    [Some(s.to_string().into_bytes()), None, Some(d), None]
}

#[test]
fn value_rules() {
    let (records, found) = read_parts(
        bool_slot_parts(&[
            [1, 5, 0, 0, 0, 0, 0, 0, 0],
            [2, 0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            [0, 5, 0, 0, 0, 0, 0, 1, 0],
        ]),
        lenient(),
    );
    assert_eq!(records[2].values[0].1, Value::Bool(true));
    assert_eq!(records[3].values[0].1, Value::Int(-5));
    let b = only(&found, "ICAREC_BOOL_VALUE");
    assert_eq!(
        (b.severity, b.offset, b.record),
        (Severity::Warning, Some(17 + 8), Some(1))
    );
    let p = only(&found, "ICAREC_SLOT_PADDING");
    assert_eq!((p.offset, p.record), (Some(2 * 17 + 8 + 1), Some(2)));
}

/// `check_only` (what `validate` asks): one record per frame, every finding the same, in the
/// same order, as when every value is a record of its own.
#[test]
fn a_check_only_read_finds_the_same_with_a_record_per_frame() {
    let mut nan = A6_RECORD.to_vec();
    nan.extend(frame(0.02, [1.0, f64::NAN, 3.0], f64::INFINITY));
    nan.extend(frame(0.03, [1.0, f64::NAN, 3.0], 0.0));
    let quirks = bool_slot_parts(&[
        [1, 5, 0, 0, 0, 0, 0, 0, 0],
        [2, 0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
        [0, 5, 0, 0, 0, 0, 0, 1, 0],
    ]);
    for (parts, deep, statics) in [
        (with_dynamic(nan.clone()), true, 1),
        (with_dynamic(nan), false, 1),
        (quirks.clone(), false, 0),
        (quirks, true, 0),
    ] {
        let options = ReadOptions { deep, ..lenient() };
        let (all, want) = read_parts(parts.clone(), options);
        let (records, found) = read_parts(
            parts,
            ReadOptions {
                check_only: true,
                ..options
            },
        );
        assert_eq!(found, want);
        assert!(!found.is_empty());
        // The static records, then one per frame, at each frame's time.
        assert_eq!(records.len(), statics + 3);
        let times = |rs: &[Record]| {
            let mut t: Vec<i64> = rs.iter().map(|r| r.time).collect();
            t.dedup();
            t
        };
        assert_eq!(times(&records), times(&all));
    }
    // The metadata's digest of dynamic_signals.bin is checked the same way.
    let mut parts = a2_parts();
    if let Some(d) = &mut parts[2] {
        d[20] ^= 1;
    }
    let check_only = ReadOptions {
        check_only: true,
        ..lenient()
    };
    let found = read_parts(parts, check_only).1;
    assert!(
        codes(&found).contains(&"ICAREC_DIGEST_MISMATCH"),
        "{found:#?}"
    );
}

/// `--deep --discontinuity X`: a component whose value changes by more than X between
/// consecutive frames, once per component with its first jump and the count.
#[test]
fn deep_reports_jumps_above_the_threshold_once_per_component() {
    let with = |x: Option<f64>, deep: bool| {
        read_parts(
            a2_parts(),
            ReadOptions {
                deep,
                discontinuity: x,
                ..lenient()
            },
        )
        .1
    };
    // a2: position (1, 2, 3) -> (1.5, 2.5, 3.5) -> (2, 3, 4); alpha 0.5 -> 0.25 -> -0.125.
    let found = with(Some(0.3), true);
    let jumps: Vec<&Finding> = found
        .iter()
        .filter(|f| f.code == "ICAREC_DISCONTINUITY")
        .collect();
    assert_eq!(jumps.len(), 4, "{found:#?}");
    assert!(jumps.iter().all(|f| f.severity == Severity::Info));
    assert_eq!(
        jumps[0].message,
        "Vehicle.Nav.position.x jumps from 1.0 to 1.5 between t = 0.01 s and t = 0.02 s (frame 1); 2 jumps of more than 0.3 in all"
    );
    // Frame 1 starts at byte 40; x is after its 8-byte time.
    assert_eq!((jumps[0].offset, jumps[0].record), (Some(48), Some(1)));
    assert_eq!(
        jumps[3].message,
        "Vehicle.Aero.alpha jumps from 0.25 to -0.125 between t = 0.02 s and t = 0.03 s (frame 2); 1 jump of more than 0.3 in all"
    );
    assert_eq!(
        (jumps[3].offset, jumps[3].record),
        (Some(80 + 8 + 24), Some(2))
    );
    // Above every change, or without --deep: nothing.
    assert!(!codes(&with(Some(0.5), true)).contains(&"ICAREC_DISCONTINUITY"));
    assert!(!codes(&with(Some(0.3), false)).contains(&"ICAREC_DISCONTINUITY"));
    assert!(!codes(&with(None, true)).contains(&"ICAREC_DISCONTINUITY"));
}

#[test]
fn deep_reports_non_finite_values_by_signal_component_and_time() {
    let mut d = A6_RECORD.to_vec();
    d.extend(frame(0.02, [1.0, f64::NAN, 3.0], f64::INFINITY));
    d.extend(frame(0.03, [1.0, f64::NAN, 3.0], 0.0));
    let plain = read_parts(with_dynamic(d.clone()), lenient()).1;
    assert!(!codes(&plain).contains(&"ICAREC_NONFINITE_VALUE"));
    let deep = ReadOptions {
        deep: true,
        ..lenient()
    };
    let found = read_parts(with_dynamic(d), deep).1;
    let hits: Vec<&Finding> = found
        .iter()
        .filter(|f| f.code == "ICAREC_NONFINITE_VALUE")
        .collect();
    assert_eq!(hits.len(), 2, "{found:#?}");
    assert_eq!(hits[0].severity, Severity::Warning);
    assert!(
        hits[0].message.starts_with(
            "Vehicle.Nav.position.y is not finite at t = 0.02 s (frame 1); 2 non-finite"
        ),
        "{}",
        hits[0]
    );
    assert_eq!(
        (hits[0].offset, hits[0].record),
        (Some(40 + 8 + 8), Some(1))
    );
    assert!(hits[1]
        .message
        .starts_with("Vehicle.Aero.alpha is not finite at t = 0.02 s"));
}

/// Writes `source` with the icarec writer to `target` (form from `form`, else the name).
fn write(
    source: &mut dyn Source,
    target: &Path,
    form: Option<&str>,
) -> simrec::formats::WriteReport {
    let mut outputs = Outputs::new(false);
    let options = IcarecWriteOptions {
        form: form.map(|f| match f {
            "tar" => IcarecForm::Tar,
            _ => IcarecForm::Directory,
        }),
    };
    let header = source.header().clone();
    let sink: Box<dyn Sink> =
        Box::new(IcarecWriter::create(target, &header, &mut outputs, options).unwrap());
    let report = pipeline::copy(source, sink, &mut |_, _| {}).unwrap();
    outputs.commit().unwrap();
    report
}

fn member(tar: &Path, name: &str) -> Vec<u8> {
    let mut archive = tar::Archive::new(std::fs::File::open(tar).unwrap());
    for e in archive.entries().unwrap() {
        let mut e = e.unwrap();
        if e.path().unwrap() == Path::new(name) {
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut e, &mut out).unwrap();
            return out;
        }
    }
    panic!("no {name} in {}", tar.display())
}

#[test]
fn directory_and_archive_round_trips_are_bit_for_bit() {
    let tmp = tempfile::tempdir().unwrap();
    for source in ["a2.icarec", "types.icarec"] {
        let src = fixture(source);
        let tar = tmp.path().join(format!("{source}.tar"));
        let back = tmp.path().join(format!("back-{source}"));
        let mut r = IcarecReader::open(&src, ReadOptions::default()).unwrap();
        let report = write(&mut r, &tar, None);
        assert!(report.loss.is_empty(), "{:?}", report.loss);
        assert_eq!(
            report.records, report.verbatim,
            "every record copied unchanged"
        );
        let mut r = IcarecReader::open(&tar, ReadOptions::default()).unwrap();
        write(&mut r, &back, None);
        assert!(back.is_dir());
        for part in ["static_signals.bin", "dynamic_signals.bin"] {
            let want = std::fs::read(src.join(part)).unwrap();
            assert_eq!(member(&tar, part), want, "{source} {part} in the archive");
            assert_eq!(
                std::fs::read(back.join(part)).unwrap(),
                want,
                "{source} {part}"
            );
        }
        let checksum = |s: &[u8]| serde_json::from_slice::<Json>(s).unwrap()["checksum"].clone();
        let want = checksum(&std::fs::read(src.join("schema.json")).unwrap());
        assert_eq!(checksum(&member(&tar, "schema.json")), want);
        assert_eq!(
            checksum(&std::fs::read(back.join("schema.json")).unwrap()),
            want
        );
        // Every rule holds for what simrec wrote.
        for out in [&tar, &back] {
            let (_, found) = read(IcarecReader::open(out, lenient()));
            let problems: Vec<_> = found
                .iter()
                .filter(|f| f.severity > Severity::Info)
                .collect();
            assert!(problems.is_empty(), "{}: {problems:#?}", out.display());
        }
    }
    // The form option wins over the name.
    let named_dir = tmp.path().join("forced.icarec");
    let mut r = IcarecReader::open(&fixture("a2.icarec"), ReadOptions::default()).unwrap();
    write(&mut r, &named_dir, Some("tar"));
    assert!(named_dir.is_file());
    assert_eq!(member(&named_dir, "dynamic_signals.bin"), a2_dynamic());
}

#[test]
fn the_archive_simrec_writes_is_ustar_in_the_profile_order() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("a.icarec.tar");
    let mut r = IcarecReader::open(&fixture("a2.icarec"), ReadOptions::default()).unwrap();
    write(&mut r, &out, None);
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[257..265], b"ustar\x0000");
    let mut archive = tar::Archive::new(std::fs::File::open(&out).unwrap());
    let mut names = Vec::new();
    for e in archive.entries().unwrap() {
        let e = e.unwrap();
        let h = e.header();
        assert_eq!(h.mode().unwrap(), 0o644);
        assert_eq!((h.uid().unwrap(), h.gid().unwrap()), (0, 0));
        assert_eq!(h.mtime().unwrap(), 1_772_366_400, "created_at");
        assert_eq!(h.entry_type(), tar::EntryType::Regular);
        names.push(e.path().unwrap().to_string_lossy().into_owned());
    }
    assert_eq!(
        names,
        [
            "schema.json",
            "static_signals.bin",
            "dynamic_signals.bin",
            "metadata.json"
        ]
    );
    assert_eq!(bytes.len() % 512, 0);
    assert!(
        bytes[bytes.len() - 1024..].iter().all(|&b| b == 0),
        "two zero blocks"
    );
    let meta: Json = serde_json::from_slice(&member(&out, "metadata.json")).unwrap();
    assert_eq!(meta["complete"], true);
    assert_eq!(meta["frame_count"], 3);
    assert_eq!(
        (meta["t_first"].as_f64(), meta["t_last"].as_f64()),
        (Some(0.01), Some(0.03))
    );
    assert_eq!(
        meta["files"]["dynamic_signals.bin"]["sha256"],
        sha(&a2_dynamic())
    );
    assert_eq!(meta["files"]["static_signals.bin"]["bytes"], 4);
    assert_eq!(meta["scenario"], "spec-a2", "the source's keys are kept");
    assert_eq!(meta["source"]["from_format"], "icarec");
    // Nothing of the layout changed: the source's schema, byte for byte (its byte order
    // and block sizes are the ones simrec would write).
    assert_eq!(
        member(&out, "schema.json"),
        std::fs::read(fixture("a2.icarec/schema.json")).unwrap()
    );
}

#[test]
fn unknown_keys_survive_a_rewrite_and_unit_becomes_units() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("t.icarec");
    let mut r = IcarecReader::open(&fixture("types.icarec"), ReadOptions::default()).unwrap();
    write(&mut r, &out, None);
    let s: Json = serde_json::from_slice(&std::fs::read(out.join("schema.json")).unwrap()).unwrap();
    assert_eq!(s["x_vendor"], json!({"kept": true}));
    assert_eq!(s["schema_version"], "2.3.1");
    assert_eq!(s["components"][0]["state_size"], 13);
    let r = s["signals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "Body.r")
        .unwrap();
    assert_eq!((r.get("unit"), &r["units"]), (None, &json!("m")));
    // The 8-byte slots of the source are kept, so are its offsets.
    let slot = s["signals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "Sim.mode_slot")
        .unwrap();
    assert_eq!((&slot["offset"], &slot["size"]), (&json!(12), &json!(8)));
    assert_eq!(
        s["time"],
        json!({"epoch": null, "system": "MET", "units": "seconds"})
    );
}

/// Issue 27, item F: the writer finds each signal's object in the source schema by name in
/// a map, not by a search of the source's signals per signal (100,000 signals took over 60
/// s); each of 2,000 keeps its own extra key.
#[test]
fn two_thousand_signals_keep_their_own_keys_in_a_rewrite() {
    let n = 2000;
    let signals: Vec<Json> = (0..n)
        .map(|i| {
            json!({"name": format!("W.C{}.s{i}", i % 10), "type": "double",
                "lifecycle": "dynamic", "offset": 8 * i, "size": 8, "x_id": i})
        })
        .collect();
    let schema = json!({"schema_version": "1.0.0", "icarus_version": "0.6.0", "signals": signals});
    let mut frame = 0.5f64.to_le_bytes().to_vec();
    frame.resize(8 + 8 * n, 0);
    let parts = [
        Some(schema.to_string().into_bytes()),
        Some(Vec::new()),
        Some(frame),
        None,
    ];
    let mut r = IcarecReader::from_parts(parts, lenient()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("w.icarec");
    write(&mut r, &out, None);
    let s: Json = serde_json::from_slice(&std::fs::read(out.join("schema.json")).unwrap()).unwrap();
    let written = s["signals"].as_array().unwrap();
    assert_eq!(written.len(), n);
    for (i, x) in written.iter().enumerate() {
        assert_eq!(
            (&x["name"], &x["x_id"]),
            (&json!(format!("W.C{}.s{i}", i % 10)), &json!(i))
        );
    }
}

/// An archive of `members` (name, bytes; a name ending in `/` is a directory), made with the
/// tar crate's builder.
fn archive(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, data) in members {
        let mut h = tar::Header::new_ustar();
        h.set_path(name).unwrap();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        if name.ends_with('/') {
            h.set_entry_type(tar::EntryType::Directory);
        }
        h.set_cksum();
        b.append(&h, *data).unwrap();
    }
    b.into_inner().unwrap()
}

fn a2_members() -> Vec<(&'static str, Vec<u8>)> {
    let p = a2_parts();
    vec![
        ("schema.json", p[0].clone().unwrap()),
        ("static_signals.bin", p[1].clone().unwrap()),
        ("dynamic_signals.bin", p[2].clone().unwrap()),
        ("metadata.json", p[3].clone().unwrap()),
    ]
}

#[test]
fn tar_rules() {
    let m = a2_members();
    let as_refs = |v: &[(&'static str, Vec<u8>)]| -> Vec<(&'static str, Vec<u8>)> { v.to_vec() };
    let build = |v: Vec<(&str, Vec<u8>)>| {
        archive(
            &v.iter()
                .map(|(n, d)| (*n, d.as_slice()))
                .collect::<Vec<_>>(),
        )
    };
    let want = read_parts(a2_parts(), ReadOptions::default()).0;

    // A directory member and an unknown member: the first is damage, the second a note.
    let mut v = as_refs(&m);
    v.insert(0, ("./", Vec::new()));
    v.push(("notes.txt", b"hello".to_vec()));
    let (records, found) = read(IcarecReader::from_tar_bytes(build(v), lenient()));
    assert_eq!(records, want);
    let d = only(&found, "ICAREC_TAR");
    assert_eq!((d.severity, d.offset), (Severity::Error, Some(0)));
    assert!(d.message.contains("directory"), "{d}");
    let u = only(&found, "ICAREC_UNKNOWN_MEMBER");
    assert_eq!(u.severity, Severity::Info);
    assert!(u.message.contains("notes.txt"), "{u}");

    // A duplicate: the later one is read.
    let mut v = as_refs(&m);
    v.insert(0, ("metadata.json", b"{\"complete\": false}".to_vec()));
    let (_, found) = read(IcarecReader::from_tar_bytes(build(v), lenient()));
    assert_eq!(codes(&found), ["ICAREC_TAR"]);
    assert!(found[0].message.contains("appears twice"));

    // A damaged header checksum: members from there on are not found.
    let mut bytes = build(as_refs(&m));
    let dynamic_header = 512 + 1024 + 512 + 512; // after schema.json (681 B) and static
    assert_eq!(
        &bytes[dynamic_header..dynamic_header + 19],
        b"dynamic_signals.bin"
    );
    bytes[dynamic_header + 100] ^= 0x01; // in the mode field
    let (records, found) = read(IcarecReader::from_tar_bytes(bytes.clone(), lenient()));
    let t = only(&found, "ICAREC_TAR");
    assert_eq!(t.offset, Some(dynamic_header as u64));
    assert!(t.message.contains("checksum"), "{t}");
    assert!(codes(&found).contains(&"ICAREC_MISSING_PART"));
    assert_eq!(records.len(), 1, "the static record only");
    let Err(ReadError::Invalid { finding, .. }) =
        IcarecReader::from_tar_bytes(bytes, ReadOptions::default())
    else {
        panic!("a strict read of a damaged archive opened")
    };
    assert_eq!(finding.code, "ICAREC_TAR");

    // Not an archive at all.
    let Err(ReadError::Invalid { finding, .. }) =
        IcarecReader::from_tar_bytes(vec![0; 1024], lenient())
    else {
        panic!()
    };
    assert_eq!(finding.code, "ICAREC_NOT_FOUND");
}

#[test]
fn a_slice_reads_only_its_frames() {
    use simrec::model::TimeSpec;
    // Frame 0 is damaged (its time is NaN): a slice after it never reads it, and the partial
    // last frame is reported only by a slice that reaches the end.
    let mut d = frame(f64::NAN, [0.0; 3], 0.0);
    d.extend(frame(0.02, [1.5, 2.5, 3.5], 0.25));
    d.extend(frame(0.03, [2.0, 3.0, 4.0], -0.125));
    d.extend([0u8; 7]);
    let open = || IcarecReader::from_parts(with_dynamic(d.clone()), lenient()).unwrap();
    let (records, found) = read(open().slice(
        Some(TimeSpec::At(15_000_000)),
        Some(TimeSpec::Frame(2)),
        false,
    ));
    let frames: Vec<(i64, Option<i64>)> = records.iter().map(|r| (r.time, r.frame)).collect();
    assert_eq!(
        frames,
        [
            (20_000_000, Some(1)),
            (20_000_000, Some(1)),
            (20_000_000, Some(1))
        ]
    );
    assert_eq!(
        records[0].values[0].1,
        Value::F32(1250.0),
        "the static record first"
    );
    assert_eq!(codes(&found), ["ICAREC_METADATA_MISSING"]);
    let (records, found) = read(open().slice(Some(TimeSpec::FromEnd(5_000_000)), None, true));
    assert_eq!(
        records.iter().map(|r| r.time).collect::<Vec<_>>(),
        [5_000_000; 3]
    );
    assert!(
        records[1].raw.is_none(),
        "a rebased frame's bytes hold its old time"
    );
    assert!(codes(&found).contains(&"ICAREC_TRUNCATED_FRAME"));
}

/// `Source::select_channels`: the reader makes only the records of the signals asked for, the
/// same (time, frame, entity, values) as a full read's, and still checks every frame.
#[test]
fn a_channel_selection_reads_only_its_signals() {
    let path = fixture("a2.icarec");
    let (all, _) = read(IcarecReader::open(&path, ReadOptions::default()));
    let essence = |r: &Record| {
        (
            r.time,
            r.channel,
            r.entity.clone(),
            r.frame,
            r.values.clone(),
        )
    };
    for (wanted, want_values) in [
        // Vehicle.Aero.alpha (dynamic): the §A6 record's 0.5 and the two frames after it.
        (
            [false, true, false],
            vec![Value::Float(0.5), Value::Float(0.25), Value::Float(-0.125)],
        ),
        // Vehicle.Mass.dry (static): one record, 1250 kg as float32.
        ([false, false, true], vec![Value::F32(1250.0)]),
    ] {
        let mut reader = IcarecReader::open(&path, ReadOptions::default()).unwrap();
        reader.select_channels(&wanted);
        let (got, found) = read(Ok(reader));
        assert!(found.is_empty(), "{found:#?}");
        let want: Vec<_> = all
            .iter()
            .filter(|r| wanted[r.channel as usize])
            .map(essence)
            .collect();
        assert_eq!(got.iter().map(essence).collect::<Vec<_>>(), want);
        let values: Vec<Value> = got.iter().map(|r| r.values[0].1.clone()).collect();
        assert_eq!(values, want_values);
    }
    // A frame whose time goes back is found though none of its signals is read.
    let mut dynamic = a2_dynamic();
    dynamic[40..48].copy_from_slice(&0.0f64.to_le_bytes());
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("back.icarec");
    std::fs::create_dir(&copy).unwrap();
    for entry in std::fs::read_dir(&path).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
    }
    std::fs::write(copy.join("dynamic_signals.bin"), &dynamic).unwrap();
    let mut reader = IcarecReader::open(&copy, lenient()).unwrap();
    reader.select_channels(&[false, false, true]);
    let (got, found) = read(Ok(reader));
    assert_eq!(got.len(), 1);
    assert!(
        codes(&found).contains(&"ICAREC_TIME_DECREASE"),
        "{found:#?}"
    );
}
