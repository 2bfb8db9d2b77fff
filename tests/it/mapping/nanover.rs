//! Recordings of every other family into NanoVer (docs/formats/mapping.md, "→ NanoVer"):
//! exit 3 with the positions' unit conversion in the loss report, outputs that validate,
//! every source position found in the frame of its instant (in nm, float32), and every other
//! value of the source in the shared state of its instant, under `simrec.<channel>…`.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::util;
use crate::util::{any_fixture, cat_json, convert_fixture, run_in, s};

/// Source fixtures of every family but NanoVer, each with what its positions are.
const SOURCES: &[&str] = &[
    "elodin/ball_1200/world",
    "icarec/a2.icarec",
    "icarus-csv/rocket.csv",
    "icarus-hdf5/vulcan.h5",
    "tes/small_plain.3es",
    "xrec/session.xrec",
];

/// Numbers compare as f64 (NanoVer's containers may store 1250.0 as the integer 1250), or
/// as f32 where a float32 was widened (the JSON of a float32 0.3 reads `0.3`, of its
/// double `0.30000001192092896`); an array of bytes as the bytes a `.nanover.zip` stores it
/// as (base64 in JSON).
fn same(a: &Value, b: &Value) -> bool {
    use base64::Engine;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x == y || x as f32 == y as f32 && (x as f32) as f64 == y
        }
        (Value::Array(x), Value::String(text)) => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(text);
            bytes.is_ok_and(|b| {
                x.iter()
                    .map(Value::as_u64)
                    .eq(b.iter().map(|&b| Some(b as u64)))
            })
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// A position's metres as NanoVer's float32 nanometres.
fn nm(v: &Value) -> f32 {
    (v.as_f64().unwrap() * 1e9) as f32
}

/// Equal float32s, or one apart: a float32 source value printed as its shortest decimal
/// (`0.9950042`) is not the float32 itself, and its nanometres may round to the neighbour.
fn close(a: f32, b: f32) -> bool {
    a == b || (a - b).abs() <= f32::EPSILON * a.abs().max(b.abs())
}

/// What the NanoVer output holds at each instant: the particles' positions and the state
/// keys written then.
#[derive(Default)]
struct Instant {
    positions: Vec<[f32; 3]>,
    /// Every key of every state update at the instant (one key may come twice).
    state: Vec<(String, Value)>,
}

fn instants(records: &[Value]) -> BTreeMap<i64, Instant> {
    let mut at: BTreeMap<i64, Instant> = BTreeMap::new();
    for r in records {
        let instant = at.entry(util::time_ns(r)).or_default();
        let values = r["values"].as_object().unwrap();
        match util::channel(r) {
            "frame" => {
                instant.positions = values["particle.positions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| {
                        let p: Vec<f32> = p
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|x| x.as_f64().unwrap() as f32)
                            .collect();
                        [p[0], p[1], p[2]]
                    })
                    .collect();
            }
            "state" => instant
                .state
                .extend(values.iter().map(|(k, v)| (k.clone(), v.clone()))),
            other => panic!("channel {other} in a NanoVer output"),
        }
    }
    at
}

/// Converts `source` to `out` (exit 3), then checks the output against the source record by
/// record; returns the positions' loss counts per (channel, field) of the report.
fn check(source: &str, out: &str) -> BTreeMap<(String, String), u64> {
    let dir = tempfile::tempdir().unwrap();
    let input = any_fixture(source);
    let (output, run) = convert_fixture(dir.path(), source, out, &["--format", "json"], 3);
    let report: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    let mut moved = BTreeMap::new();
    for row in report["lost"].as_array().unwrap() {
        if row["reason"]
            .as_str()
            .unwrap()
            .starts_with("into particle.positions")
        {
            let key = (
                row["channel"].as_str().unwrap().to_string(),
                row["field"].as_str().unwrap().to_string(),
            );
            moved.insert(key, row["records"].as_u64().unwrap());
        }
    }

    let mut records = cat_json(dir.path(), &output);
    if out.ends_with(".traj") {
        records.extend(cat_json(dir.path(), &output.with_extension("state")));
    }
    let written = instants(&records);
    let mut positions: BTreeMap<(String, String), u64> = BTreeMap::new();
    for r in cat_json(dir.path(), &input) {
        // NanoVer keeps whole microseconds.
        let time = util::time_ns(&r) / 1000 * 1000;
        let channel = util::channel(&r).to_string();
        let instant = written
            .get(&time)
            .unwrap_or_else(|| panic!("nothing at {time} ns"));
        let mut values = r["values"].as_object().unwrap().clone();
        let entity = r["entity"].as_str().unwrap_or_default().to_string();
        // An Icarus CSV/HDF5 position component: one axis of the particle.
        if let (Some(_), 1) = (entity.strip_suffix(".position"), values.len()) {
            let (axis, v) = values.iter().next().unwrap();
            let i = ["x", "y", "z"].iter().position(|a| a == axis).unwrap();
            assert!(
                instant.positions.iter().any(|p| close(p[i], nm(v))),
                "{source} {channel} at {time}: {axis} = {v} not among the particles"
            );
            *positions.entry((channel, axis.clone())).or_default() += 1;
            continue;
        }
        let position = match (values.get("position"), values.get("world_pos")) {
            (Some(p), _) => Some(("position", p.as_array().unwrap()[..3].to_vec())),
            (None, Some(w)) => Some(("world_pos", w.as_array().unwrap()[4..7].to_vec())),
            _ => None,
        };
        if let Some((field, p)) = position {
            let expected = [nm(&p[0]), nm(&p[1]), nm(&p[2])];
            assert!(
                instant
                    .positions
                    .iter()
                    .any(|p| (0..3).all(|i| close(p[i], expected[i]))),
                "{source} {channel} at {time}: {expected:?} not among {:?}",
                instant.positions
            );
            *positions
                .entry((channel.clone(), field.to_string()))
                .or_default() += 1;
            if field == "position" {
                values.remove("position");
            }
        }
        if values.is_empty() {
            continue;
        }
        // The rest: one state key of this channel holds every field.
        let prefix = format!("simrec.{channel}");
        let found = instant.state.iter().any(|(key, map)| {
            key.starts_with(&prefix)
                && values
                    .iter()
                    .all(|(k, v)| map.get(k).is_some_and(|w| same(v, w)))
        });
        assert!(
            found,
            "{source} {channel} at {time}: {values:?} not in the state"
        );
    }
    assert_eq!(
        moved, positions,
        "{source}: the loss report's position counts"
    );
    positions
}

#[test]
fn every_family_becomes_a_nanover_zip_with_particles_and_state() {
    for source in SOURCES {
        let moved = check(source, "out.nanover.zip");
        assert!(!moved.is_empty(), "{source}: no positions");
    }
}

#[test]
fn every_family_becomes_a_legacy_pair() {
    for source in SOURCES {
        check(source, "out.traj");
    }
}

#[test]
fn particles_are_named_after_their_entities_and_counted_once() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("elodin/ball_1200/world", vec!["Ball"], "body", 1201),
        (
            "icarec/a2.icarec",
            vec!["Vehicle.Nav"],
            "Vehicle.Nav.position",
            3,
        ),
        // 0.5, 1, 2, 3 and 4.5 s (a score at 0.75 s moves nothing).
        (
            "xrec/session.xrec",
            vec!["cube", "head"],
            "xrec.Transform",
            5,
        ),
        (
            "icarus-hdf5/vulcan.h5",
            vec!["Rocket.Vehicle"],
            "Rocket.Vehicle.position.x",
            2500,
        ),
    ];
    for (source, names, kind, frames) in cases {
        let (output, _) =
            convert_fixture(dir.path(), source, "out.nanover.zip", &["--force", "-q"], 3);
        let records = cat_json(dir.path(), &output);
        let frame_records: Vec<&Value> = records
            .iter()
            .filter(|r| util::channel(r) == "frame")
            .collect();
        assert_eq!(frame_records.len(), frames, "{source}: frames");
        let first = &frame_records[0]["values"];
        assert_eq!(
            first["particle.names"],
            serde_json::json!(names),
            "{source}"
        );
        assert_eq!(
            first["particle.count"],
            serde_json::json!(names.len()),
            "{source}"
        );
        assert_eq!(
            first["particle.types"],
            serde_json::json!(vec![kind; names.len()]),
            "{source}"
        );
        assert_eq!(
            frame_records[0]["frame"], 0,
            "{source}: the first frame is a reset"
        );
        assert!(
            frame_records[1..]
                .iter()
                .all(|r| r["values"].get("particle.names").is_none()),
            "{source}: names only when the particles change"
        );
    }
}

#[test]
fn a_dry_run_reports_the_mapping_as_json_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out.nanover.zip");
    let run = run_in(
        dir.path(),
        &[
            "convert",
            s(&any_fixture("icarec/a2.icarec")),
            s(&output),
            "--dry-run",
            "--format",
            "json",
        ],
    )
    .expect_code(3);
    let report: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(
        report,
        serde_json::json!({
            "format": "nanover-zip",
            "dry_run": true,
            "outputs": [],
            "records": 6,
            "lost": [{
                "channel": "(recording)",
                "field": "time origin",
                "reason": "the absolute start 2026-03-01T12:00:00Z (UTC) has no place in nanover-zip",
                "records": 1,
            }, {
                "channel": "Vehicle.Nav.position",
                "field": "position",
                "reason": "into particle.positions: m → nm (×1e9), as float32",
                "records": 3,
            }],
            "widened": [],
            "warnings": [],
        })
    );
    assert!(!output.exists());
    assert_eq!(run.stderr, "");
}
