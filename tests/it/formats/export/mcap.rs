//! MCAP output, read back with the `mcap` crate: every source format's small fixtures give
//! one topic per channel with as many messages as `inspect` counts records, the first
//! message of each topic holds the values the source's reader decodes, the summary has
//! statistics and chunk indexes, and the Foxglove 3D topics decode as their protobuf
//! messages (quaternion order: Elodin scalar-last, Icarus scalar-first).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use foxglove::messages::{FrameTransforms, PointCloud, SceneUpdate};
use prost::Message as _;
use serde_json::Value as Json;
use simrec::formats::ReadOptions;
use simrec::model::{ArrayData, Entity, Value};
use simrec::pipeline::open_recording;

use crate::util;
use crate::util::run_in;

fn fixture(rel: &str) -> PathBuf {
    util::any_fixture(rel)
}

/// One message as read back: topic, log time, bytes.
struct Message {
    topic: String,
    encoding: String,
    schema: String,
    log_time: u64,
    data: Vec<u8>,
}

/// Converts `inputs` to MCAP with the built binary; the file's bytes and the exit code.
fn convert(inputs: &[&str], dir: &Path) -> (Vec<u8>, i32) {
    let out = dir.join("out.mcap");
    let mut args: Vec<String> = vec!["convert".into()];
    args.extend(
        inputs
            .iter()
            .map(|i| fixture(i).to_string_lossy().into_owned()),
    );
    args.extend(["-o".into(), out.to_string_lossy().into_owned()]);
    args.extend(["--mcap-encoding".into(), "json".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = run_in(dir, &args);
    assert!(
        run.code == 0 || run.code == 3,
        "convert {inputs:?}: exit {}\n{}",
        run.code,
        run.stderr
    );
    (std::fs::read(&out).unwrap(), run.code)
}

fn messages(bytes: &[u8]) -> Vec<Message> {
    mcap::MessageStream::new(bytes)
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            Message {
                topic: m.channel.topic.clone(),
                encoding: m.channel.message_encoding.clone(),
                schema: m
                    .channel
                    .schema
                    .as_ref()
                    .map(|s| s.name.clone())
                    .unwrap_or_default(),
                log_time: m.log_time,
                data: m.data.into_owned(),
            }
        })
        .collect()
}

/// Whether a JSON value holds exactly a model value: integers exactly, a float32 as the
/// float32 its text reads back to, arrays element by element (flattened), strings as they
/// are. Removed keys are not in `values`.
fn holds(json: &Json, value: &Value) -> bool {
    fn flat(json: &Json, out: &mut Vec<Json>) {
        match json {
            Json::Array(items) => items.iter().for_each(|i| flat(i, out)),
            other => out.push(other.clone()),
        }
    }
    match value {
        Value::Null => json.is_null(),
        Value::Bool(b) => json.as_bool() == Some(*b),
        Value::Int(i) => json.as_i64() == Some(*i),
        Value::UInt(u) => json.as_u64() == Some(*u),
        Value::Float(x) => json.as_f64() == Some(*x) || (!x.is_finite() && json.is_null()),
        Value::F32(x) => json.as_f64().map(|j| j as f32) == Some(*x),
        Value::Str(s) => json.as_str() == Some(s.as_str()),
        Value::Array(a) => {
            let mut items = Vec::new();
            flat(json, &mut items);
            let n = a.len();
            if items.len() != n {
                return false;
            }
            (0..n).all(|i| {
                let j = &items[i];
                match &a.data {
                    ArrayData::F32(v) => j.as_f64().map(|x| x as f32) == Some(v[i]),
                    ArrayData::F64(v) => j.as_f64() == Some(v[i]),
                    ArrayData::Bool(v) => j.as_bool() == Some(v[i]),
                    ArrayData::Str(v) => j.as_str() == Some(v[i].as_str()),
                    ArrayData::I8(v) => j.as_i64() == Some(v[i] as i64),
                    ArrayData::I16(v) => j.as_i64() == Some(v[i] as i64),
                    ArrayData::I32(v) => j.as_i64() == Some(v[i] as i64),
                    ArrayData::I64(v) => j.as_i64() == Some(v[i]),
                    ArrayData::U8(v) => j.as_u64() == Some(v[i] as u64),
                    ArrayData::U16(v) => j.as_u64() == Some(v[i] as u64),
                    ArrayData::U32(v) => j.as_u64() == Some(v[i] as u64),
                    ArrayData::U64(v) => j.as_u64() == Some(v[i]),
                }
            })
        }
        Value::List(items) => json.as_array().is_some_and(|j| {
            j.len() == items.len() && j.iter().zip(items).all(|(j, v)| holds(j, v))
        }),
        Value::Map(fields) => json.as_object().is_some_and(|j| {
            j.len() == fields.len()
                && fields
                    .iter()
                    .all(|(k, v)| j.get(k).is_some_and(|j| holds(j, v)))
        }),
        // Written in their nearest JSON form and counted as lost: not compared here.
        Value::Bytes(_) | Value::Ext { .. } | Value::Dict(_) | Value::Removed => true,
    }
}

/// Converts one recording and checks it against `inspect` and the source's own decode.
/// Returns the messages for further checks.
fn check_recording(inputs: &[&str]) -> Vec<Message> {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, _) = convert(inputs, dir.path());
    assert!(bytes.starts_with(b"\x89MCAP0\r\n") && bytes.ends_with(b"\x89MCAP0\r\n"));

    // Summary: statistics and chunk indexes, so readers open it without a scan.
    let summary = mcap::Summary::read(&bytes).unwrap().expect("a summary");
    let stats = summary.stats.as_ref().expect("statistics");
    assert!(
        !summary.chunk_indexes.is_empty(),
        "{inputs:?}: chunk indexes"
    );
    let all = messages(&bytes);
    assert_eq!(stats.message_count, all.len() as u64);

    // Counts per JSON topic equal inspect's records per channel.
    let expected = util::inspect_counts(&fixture(""), inputs);
    let mut got: BTreeMap<String, u64> = BTreeMap::new();
    for m in all.iter().filter(|m| m.encoding == "json") {
        *got.entry(m.topic.trim_start_matches('/').to_string())
            .or_default() += 1;
    }
    let nonempty: BTreeMap<String, u64> = expected
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(c, n)| (c.replace('.', "/"), n))
        .collect();
    assert_eq!(got, nonempty, "{inputs:?}: messages per topic");

    // The first record of each channel, as the source's reader decodes it, is the first
    // message of its topic.
    let paths: Vec<PathBuf> = inputs.iter().map(|i| fixture(i)).collect();
    let mut source = open_recording(&paths, ReadOptions::default()).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    let mut checked = 0;
    while let Some(record) = source.next() {
        let record = record.unwrap();
        let name = source.header().channels[record.channel as usize]
            .name
            .clone();
        if !seen.insert(name.clone()) {
            continue;
        }
        let message = all
            .iter()
            .find(|m| m.topic == format!("/{}", name.replace('.', "/")))
            .unwrap_or_else(|| panic!("{inputs:?}: no message on /{name}"));
        assert_eq!(message.schema, name);
        let json: Json = serde_json::from_slice(&message.data).unwrap();
        assert_eq!(json["time_ns"].as_i64(), Some(record.time), "/{name}");
        assert_eq!(json["frame"].as_i64(), record.frame, "/{name}");
        match &record.entity {
            Some(Entity::Id(id)) => assert_eq!(json["entity"].as_u64(), Some(*id)),
            Some(Entity::Name(n)) => assert_eq!(json["entity"].as_str(), Some(&**n)),
            None => assert!(json.get("entity").is_none()),
        }
        let values = json["values"].as_object().unwrap();
        for (key, value) in &record.values {
            if *value == Value::Removed {
                continue;
            }
            let j = values
                .get(key)
                .unwrap_or_else(|| panic!("/{name}: no {key}"));
            assert!(holds(j, value), "/{name} {key}: {j} is not {value:?}");
        }
        assert_eq!(
            values.len(),
            record
                .values
                .iter()
                .filter(|(_, v)| *v != Value::Removed)
                .count()
        );
        checked += 1;
    }
    assert_eq!(
        checked,
        got.len(),
        "{inputs:?}: a record checked per channel"
    );
    all
}

fn json_of(m: &Message) -> Json {
    serde_json::from_slice(&m.data).unwrap()
}

#[test]
fn nanover_legacy_pair() {
    let all = check_recording(&["nanover-legacy/small.traj", "nanover-legacy/small.state"]);
    // No epoch: log time is the record's own time.
    let first = all.iter().find(|m| m.topic == "/frame").unwrap();
    assert_eq!(first.log_time, 8_445_000);
    assert_eq!(json_of(first)["time_ns"], 8_445_000);
    // Every frame with positions is a point cloud of float32 x, y, z copied as they are.
    let clouds: Vec<PointCloud> = all
        .iter()
        .filter(|m| m.topic == "/particles")
        .map(|m| {
            assert_eq!(m.schema, "foxglove.PointCloud");
            PointCloud::decode(m.data.as_slice()).unwrap()
        })
        .collect();
    let frames_with_positions = all
        .iter()
        .filter(|m| m.topic == "/frame")
        .filter(|m| json_of(m)["values"].get("particle.positions").is_some())
        .count();
    // small.traj: 32 frames carry positions.
    assert_eq!(frames_with_positions, 32);
    assert_eq!(clouds.len(), frames_with_positions);
    let frame = all
        .iter()
        .find(|m| m.topic == "/frame" && json_of(m)["values"].get("particle.positions").is_some())
        .unwrap();
    let positions: Vec<f32> = json_of(frame)["values"]["particle.positions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| {
            p.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
        })
        .collect();
    let cloud = &clouds[0];
    let stride = cloud.point_stride as usize;
    assert_eq!(cloud.data.len(), positions.len() / 3 * stride);
    for (i, xyz) in positions.chunks(3).enumerate() {
        for (k, x) in xyz.iter().enumerate() {
            let at = i * stride + 4 * k;
            let got = f32::from_le_bytes(cloud.data[at..at + 4].try_into().unwrap());
            assert_eq!(got.to_bits(), x.to_bits());
        }
    }
}

#[test]
fn nanover_zip() {
    check_recording(&["nanover-zip/small.nanover.zip"]);
}

#[test]
fn elodin_replays() {
    check_recording(&["elodin/ball_1200"]);
    let all = check_recording(&["elodin/types_300"]);
    // world_pos is [qx, qy, qz, qw, x, y, z] (scalar last): Foxglove's rotation takes the
    // first four as x, y, z, w.
    let body = all
        .iter()
        .find(|m| m.topic == "/body" && json_of(m)["entity"] == 0)
        .unwrap();
    let world_pos: Vec<f64> = json_of(body)["values"]["world_pos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(world_pos, [0.0, 0.0, 0.0, 1.0, 0.8920281421, 0.0, 0.0]);
    let tf = all
        .iter()
        .filter(|m| m.topic == "/tf")
        .map(|m| FrameTransforms::decode(m.data.as_slice()).unwrap())
        .find(|t| t.transforms[0].child_frame_id == "A")
        .expect("a transform of body A (entity 0)");
    let t = &tf.transforms[0];
    assert_eq!(t.parent_frame_id, "world");
    let r = t.rotation.unwrap();
    assert_eq!((r.x, r.y, r.z, r.w), (0.0, 0.0, 0.0, 1.0));
    let p = t.translation.unwrap();
    assert_eq!((p.x, p.y, p.z), (0.8920281421, 0.0, 0.0));
}

#[test]
fn icarus_recordings() {
    check_recording(&["icarec/a2.icarec"]);
    check_recording(&["icarus-hdf5/small.h5"]);
    check_recording(&["icarus-csv/rocket.csv"]);
    let all = check_recording(&["icarec/types.icarec"]);
    // Integers beyond 2^53 are exact in the JSON text.
    let count = all.iter().find(|m| m.topic == "/Sim/count").unwrap();
    assert_eq!(
        json_of(count)["values"]["count"].as_u64(),
        Some(1_152_921_504_606_846_976)
    );
    // Body.q is a Quat<double> [w, x, y, z] = [1, 0, 0, 0] at 0.5 s (scalar first):
    // Foxglove's rotation is then x = y = z = 0, w = 1.
    let q = all.iter().find(|m| m.topic == "/Body/q").unwrap();
    assert_eq!(
        json_of(q)["values"]["q"],
        serde_json::json!([1.0, 0.0, 0.0, 0.0])
    );
    let tf: Vec<FrameTransforms> = all
        .iter()
        .filter(|m| m.topic == "/tf")
        .map(|m| FrameTransforms::decode(m.data.as_slice()).unwrap())
        .collect();
    let body = &tf
        .iter()
        .find(|t| t.transforms[0].child_frame_id == "Body")
        .unwrap()
        .transforms[0];
    let r = body.rotation.unwrap();
    assert_eq!((r.x, r.y, r.z, r.w), (0.0, 0.0, 0.0, 1.0));
}

#[test]
fn xrec_sessions() {
    let all = check_recording(&["xrec/session.xrec"]);
    check_recording(&["xrec/session_gzip.xrec"]);
    // The session begins at a unix instant: log time is absolute, time_ns relative to it.
    let transform = all.iter().find(|m| m.topic == "/xrec/Transform").unwrap();
    let json = json_of(transform);
    assert_eq!(json["time_ns"], 500_000_000);
    assert_eq!(json["entity"], "cube");
    assert!(transform.log_time > 1_000_000_000_000_000_000);
    let begin = all.iter().find(|m| m.topic == "/xrec/Chapter").unwrap();
    assert_eq!(transform.log_time - begin.log_time, 500_000_000);
}

#[test]
fn icarec_with_an_epoch_logs_absolute_time() {
    let all = check_recording(&["icarec/a2.icarec"]);
    // Epoch 2026-03-01T12:00:00Z, first record at 10 ms.
    let first = all.iter().find(|m| m.encoding == "json").unwrap();
    assert_eq!(first.log_time, 1_772_366_400_000_000_000 + 10_000_000);
    assert_eq!(json_of(first)["time_ns"], 10_000_000);
    // a2's Vehicle.Nav.position is a translation of frame Vehicle.Nav.
    let tf = all
        .iter()
        .filter(|m| m.topic == "/tf")
        .map(|m| FrameTransforms::decode(m.data.as_slice()).unwrap())
        .next()
        .expect("a transform");
    assert_eq!(tf.transforms[0].child_frame_id, "Vehicle.Nav");
}

#[test]
fn tes_shapes_become_a_scene() {
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "tes/small_plain.3es",
        "tes/small_compress.3es",
        "tes/small_collate.3es",
    ] {
        check_recording(&[f]);
    }
    let (bytes, code) = convert(&["tes/small_plain.3es"], dir.path());
    // Stars, planes, poses, screen text and meshes have no Foxglove primitive: loss.
    assert_eq!(code, 3);
    let all = messages(&bytes);
    let scene: Vec<&Message> = all.iter().filter(|m| m.topic == "/3es/scene").collect();
    let updates: Vec<SceneUpdate> = scene
        .iter()
        .map(|m| {
            assert_eq!(m.schema, "foxglove.SceneUpdate");
            SceneUpdate::decode(m.data.as_slice()).unwrap()
        })
        .collect();

    // One SceneUpdate per frame (sphere 1 moves in each of the 50), at the frame's end.
    let frame_ends = frame_end_times("tes/small_plain.3es");
    assert_eq!(frame_ends.len(), 50);
    let times: Vec<u64> = scene.iter().map(|m| m.log_time).collect();
    assert_eq!(times, frame_ends);
    // The transient sphere of frame 1 replaces frame 0's under the same id: the update
    // deletes the old one (deletions come first) and draws the new one.
    let u = &updates[1];
    assert!(u.deletions.iter().any(|d| d.id == "sphere/0/0"));
    let transient = u.entities.iter().find(|e| e.id == "sphere/0/0").unwrap();
    assert_eq!(
        transient.spheres[0].pose.unwrap().position.unwrap().x,
        0.1f32 as f64
    );

    // /tf: a frame per shape, named by its channel (sphere 1 and mesh resource 1 are two).
    let mut children: Vec<String> = all
        .iter()
        .filter(|m| m.topic == "/tf")
        .flat_map(|m| {
            FrameTransforms::decode(m.data.as_slice())
                .unwrap()
                .transforms
        })
        .map(|t| t.child_frame_id)
        .collect();
    children.sort();
    children.dedup();
    for id in ["3es/sphere/1", "3es/mesh/1", "3es/box/2"] {
        assert!(children.iter().any(|c| c == id), "{children:?}");
    }
    assert!(
        !children.iter().any(|c| c.starts_with("entity")),
        "{children:?}"
    );

    // No topic without messages.
    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
    let counts = &summary.stats.as_ref().unwrap().channel_message_counts;
    for (id, channel) in &summary.channels {
        assert!(
            counts.get(id).is_some_and(|&n| n > 0),
            "{} is empty",
            channel.topic
        );
    }
    // Sphere 1 is created at the origin, red, radius 0.5 (a Foxglove size of 1).
    let sphere = updates
        .iter()
        .flat_map(|u| &u.entities)
        .find(|e| e.id == "sphere/1")
        .unwrap();
    let s = &sphere.spheres[0];
    assert_eq!(s.size.unwrap().x, 1.0);
    assert_eq!(s.color.unwrap().r, 1.0);
    assert_eq!(s.color.unwrap().g, 0.0);
    let box2 = updates
        .iter()
        .flat_map(|u| &u.entities)
        .find(|e| e.id == "box/2")
        .unwrap();
    assert_eq!(box2.cubes[0].size.unwrap().y, 0.5);
    assert!(updates
        .iter()
        .any(|u| u.entities.iter().any(|e| !e.arrows.is_empty())));
    assert!(updates
        .iter()
        .any(|u| u.entities.iter().any(|e| !e.texts.is_empty())));
}

/// A decoded `/3es/points` point: x, y, z and RGBA.
type CloudPoint = ([f64; 3], [u8; 4]);

/// The times (ns) of the `Frame` messages that end a 3es recording's frames.
fn frame_end_times(input: &str) -> Vec<u64> {
    let mut source = open_recording(&[fixture(input)], ReadOptions::default()).unwrap();
    let mut times = Vec::new();
    while let Some(record) = source.next() {
        let record = record.unwrap();
        if source.header().channels[record.channel as usize].name == "3es/control"
            && record.get("message") == Some(&Value::Str("Frame".into()))
        {
            times.push(record.time as u64);
        }
    }
    times
}

/// The source's own decode of one mesh buffer: the `data` of the record on `channel` whose
/// `key` is `id` and whose `selector` field equals `which` (a MeshShape data type or a mesh
/// resource message name).
fn source_buffer(input: &str, channel: &str, key: &str, id: u64, which: &Value) -> ArrayData {
    let mut source = open_recording(&[fixture(input)], ReadOptions::default()).unwrap();
    while let Some(record) = source.next() {
        let record = record.unwrap();
        if source.header().channels[record.channel as usize].name != channel
            || record.get(key) != Some(&Value::UInt(id))
        {
            continue;
        }
        let matches = match which {
            Value::UInt(_) => record.get("data_type") == Some(which),
            _ => record.get("message") == Some(which),
        };
        if let (true, Some(Value::Array(a))) = (matches, record.get("data")) {
            return a.data.clone();
        }
    }
    panic!("{input}: no {channel} {key}={id} {which:?}");
}

/// The rows of the loss table on stderr: (channel, reason).
fn loss_rows(stderr: &str) -> Vec<(String, String)> {
    stderr
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l
                .trim_matches(|c| c == '│' || c == ' ')
                .split('┆')
                .map(str::trim)
                .collect();
            (cells.len() == 4 && cells[1] == "3d").then(|| (cells[0].into(), cells[2].into()))
        })
        .collect()
}

#[test]
fn tes_meshes_are_drawn() {
    for input in ["tes/small_plain.3es", "tes/small_collate.3es"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.mcap");
        let run = run_in(
            dir.path(),
            &[
                "convert",
                &fixture(input).to_string_lossy(),
                "-o",
                &out.to_string_lossy(),
            ],
        )
        .expect_code(3);
        let bytes = std::fs::read(&out).unwrap();
        let updates: Vec<SceneUpdate> = messages(&bytes)
            .iter()
            .filter(|m| m.topic == "/3es/scene")
            .map(|m| SceneUpdate::decode(m.data.as_slice()).unwrap())
            .collect();
        let entity = |id: &str| {
            updates
                .iter()
                .flat_map(|u| &u.entities)
                .find(|e| e.id == id)
                .unwrap_or_else(|| panic!("{input}: no entity {id}"))
                .clone()
        };

        // Mesh shape 13: triangles, 4 vertices and 12 indices, exactly as the source's decode,
        // at the shape's position (4, -4, 0).
        let shape = entity("mesh_shape/13");
        assert_eq!(shape.frame_id, "world");
        assert_eq!(shape.triangles.len(), 1, "{input}");
        let t = &shape.triangles[0];
        let ArrayData::F32(vertices) =
            source_buffer(input, "3es/mesh_shape", "object_id", 13, &Value::UInt(0))
        else {
            panic!("{input}: vertices not float32");
        };
        let ArrayData::U32(indices) =
            source_buffer(input, "3es/mesh_shape", "object_id", 13, &Value::UInt(1))
        else {
            panic!("{input}: indices not uint32");
        };
        assert_eq!((vertices.len(), indices.len()), (12, 12));
        let points: Vec<f64> = t.points.iter().flat_map(|p| [p.x, p.y, p.z]).collect();
        let expected: Vec<f64> = vertices.iter().map(|&x| x.into()).collect();
        assert_eq!(points, expected, "{input}");
        assert_eq!(t.indices, indices, "{input}");
        let p = t.pose.unwrap().position.unwrap();
        assert_eq!((p.x, p.y, p.z), (4.0, -4.0, 0.0));
        assert_eq!(t.color.unwrap().a, 1.0);

        // Point meshes are one point cloud per frame: at frame 0 mesh shape 12's 400
        // points, coloured per vertex (0xRRGGBBAA); from 33 ms also mesh set 16's one part,
        // resource 1 (300 points), drawn once the resource is finalised (a frame after the
        // set), each point at the resource's vertex. Clouds list entities by id: the set
        // first.
        let clouds: Vec<(u64, Vec<CloudPoint>)> = messages(&bytes)
            .iter()
            .filter(|m| m.topic == "/3es/points")
            .map(|m| {
                assert_eq!(m.schema, "foxglove.PointCloud");
                let c = PointCloud::decode(m.data.as_slice()).unwrap();
                assert_eq!(c.point_stride, 28);
                let points = c
                    .data
                    .chunks_exact(28)
                    .map(|p| {
                        let f =
                            |k: usize| f64::from_le_bytes(p[8 * k..8 * k + 8].try_into().unwrap());
                        ([f(0), f(1), f(2)], [p[24], p[25], p[26], p[27]])
                    })
                    .collect();
                (m.log_time, points)
            })
            .collect();
        assert_eq!(clouds[0].0, 0, "{input}");
        assert_eq!(clouds[0].1.len(), 400, "{input}");
        let ArrayData::U32(colours) =
            source_buffer(input, "3es/mesh_shape", "object_id", 12, &Value::UInt(3))
        else {
            panic!("{input}: colours not uint32");
        };
        assert_eq!(clouds[0].1[1].1, colours[1].to_be_bytes());
        let (time, both) = &clouds[1];
        assert_eq!((*time, both.len()), (33_000_000, 700), "{input}");
        let ArrayData::F32(resource) = source_buffer(
            input,
            "3es/mesh",
            "mesh_id",
            1,
            &Value::Str("Vertex".into()),
        ) else {
            panic!("{input}: resource vertices not float32");
        };
        for ((p, _), v) in both.iter().zip(resource.chunks(3)) {
            assert_eq!(*p, [v[0], v[1], v[2]].map(f64::from));
        }
        assert_eq!(both[301].1, colours[1].to_be_bytes());
        // Destroying them empties the cloud.
        assert!(clouds.last().unwrap().1.is_empty(), "{input}");

        // Destroys delete them.
        for id in ["mesh_shape/12", "mesh_set/16"] {
            assert!(
                updates
                    .iter()
                    .flat_map(|u| &u.deletions)
                    .any(|d| d.id == id),
                "{input}: {id} not deleted"
            );
        }

        // The loss report no longer says meshes are not drawn; it names what is left.
        let rows = loss_rows(&run.stderr);
        assert!(
            !rows
                .iter()
                .any(|(_, why)| why.contains("not drawn in /3es/scene")
                    && !why.starts_with("shape data")),
            "{input}: {rows:?}"
        );
        for (channel, why) in [
            ("3es/mesh_shape", "point size (3es: pixels) not carried"),
            ("3es/mesh_set", "vertex normals not carried"),
            ("3es/star", "shape has no Foxglove primitive"),
        ] {
            assert!(
                rows.iter().any(|(c, w)| c == channel && w.starts_with(why)),
                "{input}: no loss {channel} {why}: {rows:?}"
            );
        }
        assert!(
            !rows.iter().any(|(c, _)| c == "3es/mesh"),
            "{input}: {rows:?}"
        );
    }
}

#[test]
fn refuses_to_read_mcap() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, _) = convert(&["icarec/a2.icarec"], dir.path());
    std::fs::write(dir.path().join("x.mcap"), bytes).unwrap();
    let run = run_in(dir.path(), &["inspect", "x.mcap"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("simrec writes MCAP but does not read it"),
        "{}",
        run.stderr
    );
}

/// A recording of several formatting batches (the Elodin ball: ~6,000 records): every JSON
/// message, in file order, is the JSON Lines line of its record without the channel, and
/// each record's Foxglove message follows its JSON message; `--compression zstd-fast` and
/// `none` write the same messages in chunks compressed so (or not).
#[test]
fn messages_follow_the_records_across_batches_and_compressions() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture("elodin/ball_1200");
    let input = input.to_string_lossy();
    let jsonl = dir.path().join("ball.jsonl");
    let run = run_in(
        dir.path(),
        &["convert", &input, "-o", &jsonl.to_string_lossy()],
    );
    assert!(run.code == 0 || run.code == 3, "{}", run.stderr);
    let lines: Vec<Json> = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .map(|l| {
            let mut j: Json = serde_json::from_str(l).unwrap();
            j.as_object_mut().unwrap().remove("channel");
            j
        })
        .collect();
    assert!(lines.len() > 5000, "{} records", lines.len());

    let mut first: Option<Vec<(String, u64, Vec<u8>)>> = None;
    for (compression, name) in [("zstd", "zstd"), ("zstd-fast", "zstd"), ("none", "")] {
        let out = dir.path().join(format!("{compression}.mcap"));
        let run = run_in(
            dir.path(),
            &[
                "convert",
                &input,
                "-o",
                &out.to_string_lossy(),
                "--compression",
                compression,
                "--mcap-encoding",
                "json",
            ],
        );
        assert!(run.code == 0 || run.code == 3, "{}", run.stderr);
        let bytes = std::fs::read(&out).unwrap();
        let summary = mcap::Summary::read(&bytes).unwrap().expect("a summary");
        assert!(!summary.chunk_indexes.is_empty());
        for chunk in &summary.chunk_indexes {
            assert_eq!(chunk.compression, name, "--compression {compression}");
        }
        let all = messages(&bytes);
        let json: Vec<Json> = all
            .iter()
            .filter(|m| m.encoding == "json")
            .map(json_of)
            .collect();
        assert_eq!(json, lines, "--compression {compression}");
        // Each transform follows the JSON message of the record it comes from.
        for (i, m) in all.iter().enumerate() {
            if m.topic == "/tf" {
                assert!(i > 0 && all[i - 1].encoding == "json");
                assert_eq!(all[i - 1].log_time, m.log_time);
            }
        }
        let seen: Vec<(String, u64, Vec<u8>)> = all
            .into_iter()
            .map(|m| (m.topic, m.log_time, m.data))
            .collect();
        match &first {
            None => first = Some(seen),
            Some(f) => assert!(f == &seen, "--compression {compression}: other messages"),
        }
    }
}
