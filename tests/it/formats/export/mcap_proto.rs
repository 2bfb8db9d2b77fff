//! MCAP's protobuf layout (the default), read back with the `mcap` crate and decoded by the
//! FileDescriptorSet each topic carries: one topic per component or group, one message per
//! instant, the values exact (int64 above 2^53, NaN), arrays packed row-major, entities
//! as a repeated message, NanoVer positions only on `/particles`.

use std::collections::BTreeMap;
use std::path::Path;

use prost::Message as _;
use prost_types::FileDescriptorSet;

use crate::util;
use crate::util::run_in;

/// A topic's messages as read back, and its schema.
struct Topic {
    schema_name: String,
    descriptor: FileDescriptorSet,
    metadata: BTreeMap<String, String>,
    messages: Vec<(u64, Vec<u8>)>,
}

fn convert(input: &str, dir: &Path) -> BTreeMap<String, Topic> {
    convert_path(&util::any_fixture(input), dir)
}

fn convert_path(input: &Path, dir: &Path) -> BTreeMap<String, Topic> {
    let out = dir.join("out.mcap");
    let run = run_in(
        dir,
        &[
            "convert",
            &input.to_string_lossy(),
            "-o",
            &out.to_string_lossy(),
            "--force",
        ],
    );
    assert!(run.code == 0 || run.code == 3, "{}", run.stderr);
    let bytes = std::fs::read(&out).unwrap();
    let mut topics: BTreeMap<String, Topic> = BTreeMap::new();
    for m in mcap::MessageStream::new(&bytes).unwrap() {
        let m = m.unwrap();
        let schema = m.channel.schema.as_ref().unwrap();
        let topic = topics
            .entry(m.channel.topic.clone())
            .or_insert_with(|| Topic {
                schema_name: schema.name.clone(),
                descriptor: if schema.encoding == "protobuf" {
                    FileDescriptorSet::decode(&schema.data[..]).unwrap()
                } else {
                    FileDescriptorSet::default()
                },
                metadata: m.channel.metadata.clone(),
                messages: Vec::new(),
            });
        topic.messages.push((m.log_time, m.data.into_owned()));
    }
    topics
}

/// A field's raw value on the wire.
#[derive(Debug, Clone, PartialEq)]
enum Wire {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Bytes(Vec<u8>),
}

fn varint(b: &mut &[u8]) -> u64 {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = b[0];
        *b = &b[1..];
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            break;
        }
    }
    v
}

fn wire(mut b: &[u8]) -> Vec<(u32, Wire)> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let key = varint(&mut b);
        let value = match key & 7 {
            0 => Wire::Varint(varint(&mut b)),
            1 => {
                let v = u64::from_le_bytes(b[..8].try_into().unwrap());
                b = &b[8..];
                Wire::Fixed64(v)
            }
            5 => {
                let v = u32::from_le_bytes(b[..4].try_into().unwrap());
                b = &b[4..];
                Wire::Fixed32(v)
            }
            2 => {
                let n = varint(&mut b) as usize;
                let v = b[..n].to_vec();
                b = &b[n..];
                Wire::Bytes(v)
            }
            other => panic!("wire type {other}"),
        };
        out.push(((key >> 3) as u32, value));
    }
    out
}

/// The number of field `name` in the topic's message (or its nested `Entity`).
fn number(topic: &Topic, name: &str) -> u32 {
    let message = &topic.descriptor.file[0].message_type[0];
    message
        .field
        .iter()
        .chain(message.nested_type.iter().flat_map(|n| n.field.iter()))
        .find(|f| f.name.as_deref() == Some(name))
        .and_then(|f| f.number)
        .unwrap_or_else(|| panic!("no field {name} in {}", topic.schema_name)) as u32
}

fn get(fields: &[(u32, Wire)], n: u32) -> Option<&Wire> {
    fields.iter().find(|(k, _)| *k == n).map(|(_, v)| v)
}

fn doubles(w: &Wire) -> Vec<f64> {
    match w {
        Wire::Bytes(b) => b
            .chunks(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        Wire::Fixed64(v) => vec![f64::from_bits(*v)],
        other => panic!("not doubles: {other:?}"),
    }
}

fn packed_varints(w: &Wire) -> Vec<u64> {
    let Wire::Bytes(b) = w else {
        panic!("not packed: {w:?}")
    };
    let mut s = b.as_slice();
    let mut out = Vec::new();
    while !s.is_empty() {
        out.push(varint(&mut s));
    }
    out
}

#[test]
fn icarus_components_are_topics_with_exact_values() {
    let dir = tempfile::tempdir().unwrap();
    let topics = convert("icarec/types.icarec", dir.path());
    let names: Vec<&str> = topics.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["/Body", "/Body/static", "/Sim", "/Sim/static", "/tf"]
    );
    assert!(names.iter().all(|n| !n.contains('.')));

    let sim = &topics["/Sim"];
    assert_eq!(sim.schema_name, "simrec.Sim");
    assert_eq!(sim.messages.len(), 2, "one message per instant");
    let first = wire(&sim.messages[0].1);
    assert_eq!(get(&first, 1), Some(&Wire::Varint(500_000_000)), "time_ns");
    assert_eq!(get(&first, 2), Some(&Wire::Varint(0)), "frame");
    assert_eq!(
        get(&first, number(sim, "count")),
        Some(&Wire::Varint(1_152_921_504_606_846_976))
    );
    // int32 -3, sign-extended on the wire.
    assert_eq!(
        get(&first, number(sim, "mode")),
        Some(&Wire::Varint(-3i64 as u64))
    );
    assert_eq!(sim.metadata["count.name"], "Sim.count");

    let body = &topics["/Body/static"];
    let fields = wire(&body.messages[0].1);
    assert_eq!(
        packed_varints(get(&fields, number(body, "ids")).unwrap()),
        [1, 2, 9_007_199_254_740_993]
    );
    let m = &topics["/Body"];
    let fields = wire(&m.messages[0].1);
    assert_eq!(
        doubles(get(&fields, number(m, "m")).unwrap()),
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
        "a 3×3 matrix row-major"
    );
    assert_eq!(m.metadata["m.shape"], "3,3");
}

#[test]
fn nan_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let topics = convert("icarus-csv/rocket.csv", dir.path());
    let sensors = &topics["/Rocket/Sensors"];
    let fields = wire(&sensors.messages[0].1);
    assert!(doubles(get(&fields, number(sensors, "baro_alt")).unwrap())[0].is_nan());
}

#[test]
fn elodin_archetypes_hold_every_entity_per_tick() {
    let dir = tempfile::tempdir().unwrap();
    let topics = convert("elodin/ball_1200", dir.path());
    let body = &topics["/body"];
    assert_eq!(body.messages.len(), 1201, "one message per tick");
    let fields = wire(&body.messages[0].1);
    let Some(Wire::Bytes(entity)) = get(&fields, 3) else {
        panic!("no entities")
    };
    let entity = wire(entity);
    assert_eq!(get(&entity, 1), Some(&Wire::Varint(0)), "entity id");
    assert_eq!(
        doubles(get(&entity, number(body, "world_pos")).unwrap()),
        [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 6.0]
    );
}

#[test]
fn nanover_frames_leave_positions_to_the_point_cloud() {
    let dir = tempfile::tempdir().unwrap();
    let topics = convert("nanover-zip/small.nanover.zip", dir.path());
    let frame = &topics["/frame"];
    assert!(frame.metadata.values().all(|v| v != "particle.positions"));
    assert_eq!(frame.messages.len(), topics["/particles"].messages.len());

    // A state delta's keys are not known up front: a map of key → JSON text, and the keys
    // it removes; one message per record.
    let state = &topics["/state"];
    assert_eq!(state.schema_name, "simrec.state");
    let message = &state.descriptor.file[0].message_type[0];
    assert_eq!(message.nested_type[0].name(), "ValuesEntry");
    assert_eq!(
        message.nested_type[0].options.as_ref().unwrap().map_entry,
        Some(true)
    );
    assert_eq!(state.messages.len(), 16);
    let (mut values, mut removed) = (Vec::new(), Vec::new());
    for (_, m) in &state.messages {
        for (n, w) in wire(m) {
            let Wire::Bytes(b) = w else { continue };
            match n {
                3 => {
                    let entry = wire(&b);
                    let text = |k| match get(&entry, k) {
                        Some(Wire::Bytes(t)) => String::from_utf8(t.clone()).unwrap(),
                        other => panic!("{other:?}"),
                    };
                    values.push((text(1), text(2)));
                }
                4 => removed.push(String::from_utf8(b).unwrap()),
                _ => {}
            }
        }
    }
    for (key, text) in [
        ("simulation.name", r#""ethanol-water""#),
        ("simrec.note", r#""hello""#),
        ("simrec.counter", "0"),
        (
            "simrec.nested",
            r#"{"a":[1,2.5,"x"],"b":{"c":true,"d":null}}"#,
        ),
    ] {
        assert!(
            values.iter().any(|(k, t)| k == key && t == text),
            "{key}={text} not in {values:?}"
        );
    }
    assert!(removed.iter().any(|k| k == "simrec.note"), "{removed:?}");
}

#[test]
fn values_that_do_not_fit_the_schema_go_to_extra_json() {
    let dir = tempfile::tempdir().unwrap();
    let topics = convert("tes/small_plain.3es", dir.path());
    let sphere = &topics["/3es/sphere"];
    let extra = number(sphere, "extra_json");
    // Sphere 15 is double precision: past its first frame its positions are no float32.
    let found = sphere.messages.iter().any(|(_, m)| {
        wire(m).iter().any(|(n, e)| {
            let Wire::Bytes(e) = e else { return false };
            *n == 3
                && get(&wire(e), extra).is_some_and(|x| {
                    x == &Wire::Bytes(br#"{"position":[10000000.001,-2500000.0,12.125]}"#.to_vec())
                })
        })
    });
    assert!(found, "sphere 15's float64 position in extra_json");
}

/// Every value of packed float or double field `name` of a message, as f64 (HDF5 and CSV
/// widen a float32 vector to float64).
fn all_floats(topic: &Topic, fields: &[(u32, Wire)], name: &str) -> Vec<f64> {
    let n = number(topic, name);
    let float32 = topic.descriptor.file[0].message_type[0]
        .field
        .iter()
        .any(|f| {
            f.name() == name && f.r#type() == prost_types::field_descriptor_proto::Type::Float
        });
    fields
        .iter()
        .filter(|(k, _)| *k == n)
        .flat_map(|(_, w)| match (w, float32) {
            (Wire::Bytes(b), true) => b
                .chunks(4)
                .map(|c| f64::from(f32::from_le_bytes(c.try_into().unwrap())))
                .collect(),
            _ => doubles(w),
        })
        .collect()
}

/// The field names of a topic's message type, `time_ns` and `frame` first.
fn field_names(topic: &Topic) -> Vec<String> {
    topic.descriptor.file[0].message_type[0]
        .field
        .iter()
        .map(|f| f.name().to_string())
        .collect()
}

/// An Icarus recording written as HDF5 and as CSV (which split vectors into per-axis
/// columns) gives the topics and fields of its `.icarec`: Vec3, Quat and Mat3 regrouped,
/// their values in the same order. CSV has no static signals: they join the component's
/// topic.
#[test]
fn icarus_axes_are_regrouped_into_their_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let icarec = convert("icarec/types.icarec", dir.path());
    for form in ["types.h5", "types.csv"] {
        let path = dir.path().join(form);
        let source = util::any_fixture("icarec/types.icarec");
        let run = run_in(
            dir.path(),
            &[
                "convert",
                &source.to_string_lossy(),
                "-o",
                &path.to_string_lossy(),
            ],
        );
        assert!(run.code == 0 || run.code == 3, "{}", run.stderr);
        let split = convert_path(&path, dir.path());
        let csv = form.ends_with(".csv");
        let mut expected: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (name, topic) in icarec.iter().filter(|(n, _)| *n != "/tf") {
            let fields = field_names(topic);
            match name.strip_suffix("/static").filter(|_| csv) {
                Some(component) => {
                    let all = expected.get_mut(component).unwrap();
                    let extra = all.pop().unwrap();
                    all.extend(fields[2..fields.len() - 1].iter().cloned());
                    all.push(extra);
                }
                None => {
                    expected.insert(name.clone(), fields);
                }
            }
        }
        let got: BTreeMap<String, Vec<String>> = split
            .iter()
            .map(|(name, topic)| (name.clone(), field_names(topic)))
            .collect();
        assert_eq!(got, expected, "{form}");
        let body = &split["/Body"];
        assert_eq!(body.metadata["q.shape"], "4");
        assert_eq!(body.metadata["q.name"], "Body.q");
        assert_eq!(body.metadata["q.axes"], "w,x,y,z");
        assert_eq!(
            body.metadata["m.axes"],
            "m00,m01,m02,m10,m11,m12,m20,m21,m22"
        );
        assert_eq!(body.metadata["m.shape"], "3,3");
        for (i, (_, message)) in body.messages.iter().enumerate() {
            let ours = wire(message);
            let theirs = wire(&icarec["/Body"].messages[i].1);
            for field in ["q", "r", "m"] {
                assert_eq!(
                    all_floats(body, &ours, field),
                    all_floats(&icarec["/Body"], &theirs, field),
                    "{form} message {i} {field}"
                );
            }
            assert_eq!(all_floats(body, &ours, "m").len(), 9);
        }
    }
}
