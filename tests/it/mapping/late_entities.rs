//! An entity first met after the first instant still becomes a component of its own in the
//! Icarus formats (docs/formats/mapping.md, "→ `.icarec`, Icarus HDF5"): the writers add
//! its signals when it comes, and the frames before it hold NaN (HDF5) or 0 (`.icarec`),
//! counted. Entity `b` comes after two HDF5 chunks were written (frame 2,500), entity `c`
//! at frame 10 with a field the source never declared.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use simrec::formats::{format_named, registry};
use simrec::model::{
    Array, ArrayData, Channel, ChannelKind, Composition, DType, Entity, FieldSpec, Header, Record,
    Value,
};
use simrec::pipeline::{write, WriteRequest, Written};

use crate::util::listed::{f64s, Listed};
use crate::util::{run_in, s};

const FRAMES: i64 = 2_600;
const B_FROM: i64 = 2_500;
const C_FROM: i64 = 10;

fn position(entity: &str, frame: i64) -> [f64; 3] {
    let k = match entity {
        "a" => 1.0,
        _ => 2.0,
    };
    [frame as f64 * k, -(frame as f64), k]
}

fn source() -> Listed {
    let mut header = Header::new("test", "1");
    let mut body = Channel::new("body", ChannelKind::Signals, Composition::Independent);
    body.fields = vec![FieldSpec::typed("position", DType::F64, &[3]).with_unit("m")];
    header.add_channel(body);
    let mut records = VecDeque::new();
    for frame in 0..FRAMES {
        let mut at = |entity: &str, values: Vec<(&str, Value)>| {
            let mut r = Record::new(frame * 10_000_000, 0);
            r.entity = Some(Entity::from(entity));
            r.values = values.into_iter().map(|(k, v)| (k.into(), v)).collect();
            records.push_back(r);
        };
        at("a", vec![("position", f64s(&position("a", frame)))]);
        if frame >= C_FROM {
            at("c", vec![("speed", Value::Float(frame as f64 / 2.0))]);
        }
        if frame >= B_FROM {
            at("b", vec![("position", f64s(&position("b", frame)))]);
        }
    }
    Listed { header, records }
}

fn convert(out: &Path, format: &str) -> Written {
    let request = WriteRequest {
        output: out,
        format: format_named(format).unwrap(),
        force: false,
        dry_run: false,
        flags: Default::default(),
        split: false,
        resample: None,
    };
    write(
        &mut source(),
        &[],
        request,
        &Default::default(),
        &mut |_, _| {},
    )
    .unwrap()
}

/// Every number read back, by (channel, time): a Vec3 signal's three, or a scalar.
fn numbers(path: &Path) -> BTreeMap<(String, i64), Vec<f64>> {
    let back = registry::open(path, Default::default()).unwrap();
    let header = back.header().clone();
    back.map(Result::unwrap)
        .flat_map(|r| {
            let channel = header.channels[r.channel as usize].name.clone();
            r.values.into_iter().map(move |(_, v)| {
                let v = match v {
                    Value::Array(Array {
                        data: ArrayData::F64(v),
                        ..
                    }) => v,
                    Value::Float(x) => vec![x],
                    other => panic!("{other:?}"),
                };
                ((channel.clone(), r.time), v)
            })
        })
        .collect()
}

/// `channel`'s Vec3 at `time`: one signal in `.icarec`, three datasets in HDF5.
fn vec3(numbers: &BTreeMap<(String, i64), Vec<f64>>, channel: &str, time: i64) -> Vec<f64> {
    match numbers.get(&(channel.to_string(), time)) {
        Some(v) => v.clone(),
        None => ["x", "y", "z"]
            .iter()
            .map(|c| numbers[&(format!("{channel}.{c}"), time)][0])
            .collect(),
    }
}

fn lost(written: &Written, channel: &str, field: &str) -> Vec<(String, u64)> {
    written
        .report
        .loss
        .entries()
        .filter(|(c, f, _, _)| (*c, *f) == (channel, field))
        .map(|(_, _, reason, n)| (reason.to_string(), n))
        .collect()
}

#[test]
fn an_entity_met_late_gets_its_signals_with_nan_or_zero_before() {
    for (name, format, before) in [
        ("out.icarec", "icarec", 0.0),
        ("out.icarec.tar", "icarec", 0.0),
        ("out.h5", "icarus-hdf5", f64::NAN),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join(name);
        let written = convert(&out, format);
        run_in(dir.path(), &["validate", s(&out)]).expect_code(0);
        let numbers = numbers(&out);
        let times: std::collections::BTreeSet<i64> = numbers.keys().map(|(_, t)| *t).collect();
        assert_eq!(times.len() as i64, FRAMES, "{name}");
        for frame in [
            0,
            C_FROM - 1,
            C_FROM,
            999,
            1_000,
            2_000,
            B_FROM - 1,
            B_FROM,
            FRAMES - 1,
        ] {
            let t = frame * 10_000_000;
            assert_eq!(vec3(&numbers, "a.body.position", t), position("a", frame));
            let b = vec3(&numbers, "b.body.position", t);
            if frame >= B_FROM {
                assert_eq!(b, position("b", frame), "{name} at {frame}");
            } else {
                let same = |x: f64| x.to_bits() == before.to_bits();
                assert!(b.iter().all(|&x| same(x)), "{name} at {frame}: {b:?}");
            }
            let speed = numbers[&("c.body.speed".to_string(), t)][0];
            if frame >= C_FROM {
                assert_eq!(speed, frame as f64 / 2.0, "{name} at {frame}");
            } else {
                assert_eq!(speed.to_bits(), before.to_bits(), "{name} at {frame}");
            }
        }
        let reason = match format {
            "icarec" => "no value before its first record: written as 0",
            _ => "frames before the signal's first value: written as NaN (floats) or 0 (integers)",
        };
        assert_eq!(
            lost(&written, "b.body", "position"),
            [(reason.to_string(), B_FROM as u64)],
            "{name}"
        );
        assert_eq!(
            lost(&written, "c.body", "speed"),
            [(reason.to_string(), C_FROM as u64)],
            "{name}"
        );
    }
}

#[test]
fn the_archive_of_a_grown_layout_has_the_directorys_schema() {
    // The archive of a mapped source is assembled at the end; its schema.json is the text the
    // directory form gets (key order included), but for `created_at`.
    let dir = tempfile::tempdir().unwrap();
    let (plain, tar) = (dir.path().join("o.icarec"), dir.path().join("o.icarec.tar"));
    convert(&plain, "icarec");
    convert(&tar, "icarec");
    let without_created = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !l.contains("\"created_at\""))
            .map(str::to_string)
            .collect()
    };
    let from_dir = std::fs::read_to_string(plain.join("schema.json")).unwrap();
    let mut archive = tar::Archive::new(std::fs::File::open(&tar).unwrap());
    let mut from_tar = String::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        if entry.path().unwrap().to_str() == Some("schema.json") {
            std::io::Read::read_to_string(&mut entry, &mut from_tar).unwrap();
        }
    }
    assert_eq!(without_created(&from_tar), without_created(&from_dir));
    let schema: serde_json::Value = serde_json::from_str(&from_dir).unwrap();
    let names: Vec<&str> = schema["signals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    // `c` carries the channel's declared `position` too (never given: zeros, counted), and the
    // late `b` comes last.
    assert_eq!(
        names,
        [
            "a.body.position",
            "c.body.position",
            "c.body.speed",
            "b.body.position"
        ]
    );
    assert_eq!(schema["dynamic_block_bytes"], 3 * 24 + 8);
}
