//! Recordings of every other family into 3es (docs/formats/mapping.md, "→ 3es"): exit 3
//! with what has no 3es counterpart counted, captures that validate, one 3es frame per
//! instant of the source at its time, and every source position on a shape (or, for NanoVer
//! particles, in the frame's point cloud, in metres) as simrec's 3es reader decodes it.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::util;
use crate::util::{any_fixture, cat_json, convert_fixture, numbers};

const SOURCES: &[&str] = &[
    "nanover-legacy/small.traj",
    "nanover-zip/small.nanover.zip",
    "elodin/ball_1200/world",
    "icarec/a2.icarec",
    "icarus-csv/rocket.csv",
    "icarus-hdf5/vulcan.h5",
    "xrec/session.xrec",
];

/// Equal, or one float32 apart (a float32 printed as its shortest decimal).
fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= f32::EPSILON as f64 * a.abs().max(b.abs())
}

/// What the capture shows in each frame, by its start (µs; a record's time in 3es is its
/// frame's start): every shape's position after the frame's messages, and its point cloud.
#[derive(Default, Clone)]
struct Scene {
    /// Position and rotation (x, y, z, w) of every shape.
    shapes: BTreeMap<u64, (Vec<f64>, Vec<f64>)>,
    cloud: Vec<f64>,
}

fn scenes(records: &[Value]) -> (BTreeMap<i64, Scene>, Vec<i64>) {
    let mut at: BTreeMap<i64, Scene> = BTreeMap::new();
    let mut now = Scene::default();
    let mut frame_starts = Vec::new();
    let mut points = false;
    for r in records {
        let t = util::time_ns(r) / 1000;
        let v = &r["values"];
        match (util::channel(r), v["message"].as_str().unwrap()) {
            ("3es/control", "Frame") => {
                frame_starts.push(t);
                at.insert(t, now.clone());
                now.cloud.clear();
            }
            ("3es/sphere" | "3es/box", "Create" | "Update") => {
                let flags = v["flags"].as_u64().unwrap();
                let shape = now
                    .shapes
                    .entry(v["object_id"].as_u64().unwrap())
                    .or_default();
                // UpdateMode (512) applies only what its bits name: Position 1024, Rotation 2048.
                if flags & 512 == 0 || flags & 1024 != 0 {
                    shape.0 = numbers(&v["position"]);
                }
                if flags & 512 == 0 || flags & 2048 != 0 {
                    shape.1 = numbers(&v["rotation"]);
                }
            }
            ("3es/mesh_shape", "Create") => points = v["topology"] == 0,
            // The vertices of the point cloud (a lines mesh holds the bonds).
            ("3es/mesh_shape", "Data") if v["data_type"] == 0 && points => {
                for p in v["data"].as_array().unwrap() {
                    now.cloud.extend(numbers(p));
                }
            }
            _ => {}
        }
    }
    (at, frame_starts)
}

fn check(source: &str) {
    let dir = tempfile::tempdir().unwrap();
    let input = any_fixture(source);
    let (output, run) = convert_fixture(dir.path(), source, "out.3es", &["--format", "json"], 3);
    let report: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    let (scenes, frame_starts) = scenes(&cat_json(dir.path(), &output));

    let source_records = cat_json(dir.path(), &input);
    let mut instants: Vec<i64> = source_records
        .iter()
        .map(|r| util::time_ns(r) / 1000)
        .collect();
    instants.dedup();
    let mut dropped: BTreeMap<(String, String), u64> = BTreeMap::new();
    for r in &source_records {
        let t = util::time_ns(r) / 1000;
        let channel = util::channel(r).to_string();
        let values = r["values"].as_object().unwrap();
        let scene = scenes
            .get(&t)
            .unwrap_or_else(|| panic!("{source}: no frame at {t} µs"));
        let entity = r["entity"].as_str().unwrap_or_default();
        let mut position = None;
        for (key, v) in values {
            match key.as_str() {
                "particle.positions" => {
                    let expected: Vec<f64> = v
                        .as_array()
                        .unwrap()
                        .iter()
                        .flat_map(numbers)
                        .map(|x| ((x as f32 as f64) * 1e-9) as f32 as f64)
                        .collect();
                    assert_eq!(expected.len(), scene.cloud.len(), "{source} at {t} µs");
                    assert!(
                        expected
                            .iter()
                            .zip(&scene.cloud)
                            .all(|(a, b)| close(*a, *b)),
                        "{source} at {t} µs: the point cloud"
                    );
                }
                "position" => position = Some(numbers(v)),
                "world_pos" => position = Some(numbers(v)[4..].to_vec()),
                "x" | "y" | "z" if entity.ends_with(".position") => {
                    let i = ["x", "y", "z"].iter().position(|a| a == key).unwrap();
                    let x = v.as_f64().unwrap();
                    assert!(
                        scene.shapes.values().any(|(p, _)| close(p[i], x)),
                        "{source} {channel} at {t} µs: {key} = {x}"
                    );
                }
                "w" | "x" | "y" | "z" if entity.ends_with(".attitude") => {
                    let i = ["x", "y", "z", "w"].iter().position(|a| a == key).unwrap();
                    let x = v.as_f64().unwrap();
                    assert!(
                        scene.shapes.values().any(|(_, r)| close(r[i], x)),
                        "{source} {channel} at {t} µs: {key} = {x}"
                    );
                }
                "rotation" if channel == "xrec.Transform" => {}
                // Lines between the particles (checked below).
                "bond.pairs" => {}
                _ => *dropped.entry((channel.clone(), key.clone())).or_default() += 1,
            }
        }
        // A removed state key (JSON Lines lists it apart) is a value 3es cannot hold either.
        for key in r["removed"].as_array().into_iter().flatten() {
            let key = key.as_str().unwrap().to_string();
            *dropped.entry((channel.clone(), key)).or_default() += 1;
        }
        if let Some(p) = position {
            assert!(
                scene
                    .shapes
                    .values()
                    .any(|(q, _)| (0..3).all(|i| close(p[i], q[i]))),
                "{source} {channel} at {t} µs: {p:?} on no shape: {:?}",
                scene.shapes
            );
        }
    }
    // One frame per instant, starting at it (an empty first frame up to the source's first
    // instant); XREC's late event (arrived after later ones) has its own frame too.
    let mut expected: Vec<i64> = instants.clone();
    expected.sort();
    expected.dedup();
    if expected.first() != Some(&0) {
        expected.insert(0, 0);
    }
    assert_eq!(frame_starts, expected, "{source}: frame times");
    // The report counts every value without a 3es counterpart.
    let mut reported: BTreeMap<(String, String), u64> = BTreeMap::new();
    for row in report["lost"].as_array().unwrap() {
        if row["reason"] == "no 3es counterpart: dropped" {
            let key = (
                row["channel"].as_str().unwrap().to_string(),
                row["field"].as_str().unwrap().to_string(),
            );
            reported.insert(key, row["records"].as_u64().unwrap());
        }
    }
    assert_eq!(reported, dropped, "{source}: dropped values");
}

#[test]
fn every_family_becomes_a_3es_capture_of_shapes() {
    for source in SOURCES {
        check(source);
    }
}

#[test]
fn nanover_bonds_are_lines_between_their_particles() {
    let dir = tempfile::tempdir().unwrap();
    let input = any_fixture("nanover-legacy/small.traj");
    let (output, _) = convert_fixture(
        dir.path(),
        "nanover-legacy/small.traj",
        "out.3es",
        &["-q"],
        3,
    );
    let source = cat_json(dir.path(), &input);
    let bonds = source
        .iter()
        .find_map(|r| r["values"].get("bond.pairs"))
        .unwrap();
    let first = source
        .iter()
        .position(|r| r["values"].get("bond.pairs").is_some())
        .unwrap();
    let t = util::time_ns(&source[first]);
    let positions: Vec<Vec<f64>> = source[first]["values"]["particle.positions"]
        .as_array()
        .unwrap()
        .iter()
        .map(numbers)
        .collect();
    let records = cat_json(dir.path(), &output);
    let at_t: Vec<&Value> = records.iter().filter(|r| util::time_ns(r) == t).collect();
    let lines = at_t
        .iter()
        .position(|r| r["values"]["message"] == "Create" && r["values"]["topology"] == 1)
        .expect("a lines MeshShape in the frame of the first bonds");
    let pairs = bonds.as_array().unwrap();
    assert_eq!(at_t[lines]["values"]["vertex_count"], 2 * pairs.len());
    let vertices: Vec<Vec<f64>> = at_t[lines + 1]["values"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(numbers)
        .collect();
    for (k, pair) in pairs.iter().enumerate() {
        for (end, i) in numbers(pair).iter().enumerate() {
            let want = &positions[*i as usize];
            let got = &vertices[2 * k + end];
            assert!((0..3).all(|c| close(want[c] * 1e-9, got[c])), "bond {k}");
        }
    }
}

#[test]
fn bodies_with_an_attitude_are_boxes_and_the_rest_spheres_in_a_category_per_channel() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("elodin/ball_1200/world", "3es/box", "body", 1200),
        ("icarec/a2.icarec", "3es/sphere", "Vehicle.Nav.position", 2),
        ("xrec/session.xrec", "3es/box", "xrec.Transform", 6),
    ];
    for (source, shape, category, updates) in cases {
        let (output, _) = convert_fixture(dir.path(), source, "out.3es", &["--force", "-q"], 3);
        let records = cat_json(dir.path(), &output);
        let of = |channel: &str, message: &str| {
            records
                .iter()
                .filter(|r| util::channel(r) == channel && r["values"]["message"] == message)
                .count()
        };
        assert_eq!(of(shape, "Update"), updates, "{source}");
        let names: Vec<&str> = records
            .iter()
            .filter(|r| util::channel(r) == "3es/category")
            .map(|r| r["values"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, vec![category], "{source}");
        let info = &records[0]["values"];
        assert_eq!(info["time_unit"], 1, "{source}: microseconds");
        let frame = if source.starts_with("xrec") { 7 } else { 0 };
        assert_eq!(info["coordinate_frame"], frame, "{source}: axes");
    }
}

#[test]
fn a_fixed_frame_rate_makes_frames_of_one_length() {
    let dir = tempfile::tempdir().unwrap();
    let (output, _) = convert_fixture(
        dir.path(),
        "elodin/ball_1200/world",
        "out.3es",
        &["--frame-rate", "30", "-q"],
        3,
    );
    let frames: Vec<u64> = cat_json(dir.path(), &output)
        .iter()
        .filter(|r| r["values"]["message"] == "Frame")
        .map(|r| r["values"]["value32"].as_u64().unwrap())
        .collect();
    // 1,201 ticks of 1/120 s over 10 s: 301 frames of 1/30 s (in whole µs), the last of
    // the default length (0).
    assert_eq!(frames.len(), 301);
    assert!(
        frames[..300].iter().all(|&d| d == 33_333 || d == 33_334),
        "{frames:?}"
    );
    assert_eq!(frames[300], 0);
}
