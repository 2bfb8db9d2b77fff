//! Positions of things map onto each other (docs/formats/mapping.md): into XREC, every
//! position of a thing becomes an `xrec.Transform` event of that thing at its time (NanoVer
//! particles one per particle, in metres), with the attitude where the source has one, and
//! every other value stays in an event of its own channel; into Elodin, NanoVer's particles
//! become bodies. The files validate.

use std::collections::HashMap;

use serde_json::Value;

use crate::util;
use crate::util::{any_fixture, cat_json, convert_fixture, numbers, run_in, s};

/// The source's records and the XREC events converted from them.
fn convert(source: &str, code: i32) -> (Vec<Value>, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let input = any_fixture(source);
    let (output, _) = convert_fixture(dir.path(), source, "out.xrec", &["-q"], code);
    (cat_json(dir.path(), &input), cat_json(dir.path(), &output))
}

/// The Transforms of `entity` by time, in file order: gathered once, as the tests look up
/// thousands of instants (a scan of every event per instant made these the suite's slowest
/// tests after the zip sweep; docs/performance.md, "Build").
fn transforms<'a>(events: &'a [Value], entity: &str) -> HashMap<i64, Vec<&'a Value>> {
    let mut by_time: HashMap<i64, Vec<&Value>> = HashMap::new();
    for e in events
        .iter()
        .filter(|e| util::channel(e) == "xrec.Transform" && e["entity"] == entity)
    {
        by_time.entry(util::time_ns(e)).or_default().push(e);
    }
    by_time
}

/// The Transforms at `time` (none when it has none).
fn at<'m, 'a>(by_time: &'m HashMap<i64, Vec<&'a Value>>, time: i64) -> &'m [&'a Value] {
    by_time.get(&time).map_or(&[], Vec::as_slice)
}

#[test]
fn elodin_bodies_are_tracked_objects_with_their_attitude() {
    let (source, events) = convert("elodin/ball_1200/world", 0);
    let bodies: Vec<&Value> = source
        .iter()
        .filter(|r| util::channel(r) == "body")
        .collect();
    assert_eq!(bodies.len(), 1201);
    let ball = transforms(&events, "Ball");
    for body in bodies {
        let w = numbers(&body["values"]["world_pos"]);
        let t = at(&ball, util::time_ns(body));
        assert_eq!(t.len(), 1, "at {}", util::time_ns(body));
        assert_eq!(numbers(&t[0]["values"]["position"]), w[4..].to_vec());
        assert_eq!(numbers(&t[0]["values"]["rotation"]), w[..4].to_vec());
    }
    // The rest of a body record stays a `body` event of the Ball, without world_pos.
    let rest: Vec<&Value> = events
        .iter()
        .filter(|e| util::channel(e) == "body")
        .collect();
    assert_eq!(rest.len(), 1201);
    assert!(rest[0]["values"].get("world_pos").is_none());
    assert!(rest[0]["values"].get("world_vel").is_some());
}

#[test]
fn icarus_positions_are_tracked_objects_and_scalar_components_are_gathered() {
    let (source, events) = convert("icarec/a2.icarec", 0);
    let nav = transforms(&events, "Vehicle.Nav");
    for r in source
        .iter()
        .filter(|r| util::channel(r) == "Vehicle.Nav.position")
    {
        let t = at(&nav, util::time_ns(r));
        assert_eq!(
            numbers(&t[0]["values"]["position"]),
            numbers(&r["values"]["position"])
        );
    }
    assert!(events
        .iter()
        .all(|e| util::channel(e) != "Vehicle.Nav.position"));

    let (source, events) = convert("icarus-hdf5/vulcan.h5", 0);
    let xs: Vec<&Value> = source
        .iter()
        .filter(|r| util::channel(r) == "Rocket.Vehicle.position.x")
        .collect();
    assert_eq!(xs.len(), 2500);
    let vehicle = transforms(&events, "Rocket.Vehicle");
    for x in xs {
        let t = at(&vehicle, util::time_ns(x));
        assert_eq!(t.len(), 1, "one Transform per instant");
        assert_eq!(t[0]["values"]["position"][0], x["values"]["x"]);
    }
}

#[test]
fn shapes_and_particles_are_tracked_objects() {
    let (source, events) = convert("tes/small_plain.3es", 0);
    let sphere = source
        .iter()
        .find(|r| util::channel(r) == "3es/sphere")
        .unwrap();
    let sphere_transforms = transforms(&events, "3es/sphere 1");
    let t = at(&sphere_transforms, 0);
    assert_eq!(
        numbers(&t[0]["values"]["position"]),
        numbers(&sphere["values"]["position"])
    );
    assert_eq!(
        numbers(&t[0]["values"]["scale"]),
        numbers(&sphere["values"]["scale"])
    );

    let (source, events) = convert("nanover-legacy/small.traj", 3);
    let frame = &source[0];
    let positions = frame["values"]["particle.positions"].as_array().unwrap();
    let time = util::time_ns(frame);
    let at: Vec<&Value> = events
        .iter()
        .filter(|e| util::channel(e) == "xrec.Transform" && util::time_ns(e) == time)
        .collect();
    assert_eq!(at.len(), positions.len());
    for (t, p) in at.iter().zip(positions) {
        // float32 nanometres (printed as their shortest decimal) times 1e-9, in f64.
        let want: Vec<f64> = numbers(p)
            .iter()
            .map(|x| (*x as f32) as f64 * 1e-9)
            .collect();
        assert_eq!(numbers(&t["values"]["position"]), want);
    }
}

/// NanoVer into Elodin (docs/formats/mapping.md, "→ Elodin"): each particle an entity of
/// the `particle` archetype whose `world_pos` is its position in metres.
#[test]
fn nanover_particles_become_elodin_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let (traj, state) = (
        any_fixture("nanover-legacy/small.traj"),
        any_fixture("nanover-legacy/small.state"),
    );
    let out = dir.path().join("replay");
    let out_dir = format!("{}/", out.display());
    run_in(
        dir.path(),
        &[
            "convert",
            s(&traj),
            s(&state),
            "-o",
            &out_dir,
            "--to",
            "elodin",
            "-q",
        ],
    )
    .expect_code(3);
    run_in(dir.path(), &["validate", s(&out)]).expect_code(0);
    let first = &cat_json(dir.path(), &traj)[0];
    let positions = first["values"]["particle.positions"].as_array().unwrap();
    let bodies: Vec<Value> = cat_json(dir.path(), &out)
        .into_iter()
        .filter(|r| util::channel(r) == "particle" && util::time_ns(r) == 0)
        .collect();
    assert_eq!(bodies.len(), positions.len());
    for (body, p) in bodies.iter().zip(positions) {
        let w = numbers(&body["values"]["world_pos"]);
        assert_eq!(w[..4], [0.0, 0.0, 0.0, 1.0]);
        let want: Vec<f64> = numbers(p)
            .iter()
            .map(|x| (*x as f32) as f64 * 1e-9)
            .collect();
        assert_eq!(w[4..], want[..]);
    }
}
