//! Recordings of other families into Icarus's signal formats (docs/formats/mapping.md, "→
//! `.icarec`, Icarus HDF5"): one component per entity (`Ball.body`, `3es/sphere.1`), an
//! Elodin `world_pos` as a Vec3 `position` and a scalar-first Quat `attitude`, other arrays
//! flattened, each value equal to the source's at its time; the files validate.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::util;
use crate::util::{any_fixture, cat_json, convert_fixture};

/// Source records and output signal values by (signal channel, time).
fn convert(source: &str, out: &str) -> (Vec<Value>, BTreeMap<(String, i64), Value>) {
    let dir = tempfile::tempdir().unwrap();
    let input = any_fixture(source);
    let (output, _) = convert_fixture(dir.path(), source, out, &["-q"], 3);
    let signals = cat_json(dir.path(), &output)
        .into_iter()
        .map(|r| {
            let value = r["values"]
                .as_object()
                .unwrap()
                .values()
                .next()
                .unwrap()
                .clone();
            ((util::channel(&r).to_string(), util::time_ns(&r)), value)
        })
        .collect();
    (cat_json(dir.path(), &input), signals)
}

#[test]
fn an_elodin_body_is_a_component_with_a_position_and_an_attitude() {
    for out in ["out.icarec", "out.h5"] {
        let (source, signals) = convert("elodin/ball_1200/world", out);
        let mut checked = 0;
        for body in source.iter().filter(|r| util::channel(r) == "body") {
            let t = util::time_ns(body);
            let w = body["values"]["world_pos"].as_array().unwrap();
            let signal = |name: &str| {
                signals
                    .get(&(name.to_string(), t))
                    .cloned()
                    .unwrap_or_else(|| panic!("{out}: no {name} at {t}"))
            };
            // A Vec3 or Quat: one signal in .icarec, one column per component in HDF5.
            let vector = |name: &str, parts: &[&str]| -> Vec<Value> {
                match signals.get(&(name.to_string(), t)) {
                    Some(v) => v.as_array().unwrap().clone(),
                    None => parts
                        .iter()
                        .map(|p| signal(&format!("{name}.{p}")))
                        .collect(),
                }
            };
            assert_eq!(vector("Ball.body.position", &["x", "y", "z"])[..], w[4..]);
            let q = vec![w[3].clone(), w[0].clone(), w[1].clone(), w[2].clone()];
            assert_eq!(
                vector("Ball.body.attitude", &["w", "x", "y", "z"]),
                q,
                "{out}: scalar first"
            );
            let vel = body["values"]["world_vel"].as_array().unwrap();
            for (i, v) in vel.iter().enumerate() {
                assert_eq!(
                    &signal(&format!("Ball.body.world_vel_{i}")),
                    v,
                    "{out}: flattened"
                );
            }
            checked += 1;
        }
        assert_eq!(checked, 1201);
    }
}

#[test]
fn each_3es_shape_is_a_component_of_its_own() {
    let (source, signals) = convert("tes/small_plain.3es", "out.icarec");
    // A signal holds the last value of its frame: the last record of a sphere at a time.
    let mut last: BTreeMap<(String, i64), &Value> = BTreeMap::new();
    for r in source.iter().filter(|r| util::channel(r) == "3es/sphere") {
        let id = r["entity"].as_u64().unwrap();
        let name = format!("3es/sphere.{id}.position");
        last.insert((name, util::time_ns(r)), &r["values"]["position"]);
    }
    let mut checked = 0;
    for ((name, t), want) in last {
        let got = &signals[&(name.clone(), t)];
        let close = got
            .as_array()
            .unwrap()
            .iter()
            .zip(want.as_array().unwrap())
            .all(|(a, b)| {
                (a.as_f64().unwrap() - b.as_f64().unwrap()).abs()
                    <= 1e-6 * b.as_f64().unwrap().abs().max(1.0)
            });
        assert!(close, "{name} at {t}: {got} != {want}");
        checked += 1;
    }
    assert_eq!(checked, 150);
}

#[test]
fn xrec_objects_met_after_the_first_instant_are_components_too() {
    // session.xrec's tracked objects `cube` and `head` first move at 0.5 s, after the
    // session's first events at 0 s.
    for out in ["out.icarec", "out.icarec.tar", "out.h5"] {
        let (source, signals) = convert("xrec/session.xrec", out);
        let mut checked = 0;
        for r in source
            .iter()
            .filter(|r| util::channel(r) == "xrec.Transform")
        {
            let (entity, t) = (r["entity"].as_str().unwrap(), util::time_ns(r));
            let name = format!("{entity}.xrec.Transform.position");
            let got = match signals.get(&(name.clone(), t)) {
                Some(v) => v.clone(),
                None => Value::Array(
                    ["x", "y", "z"]
                        .iter()
                        .map(|c| signals[&(format!("{name}.{c}"), t)].clone())
                        .collect(),
                ),
            };
            assert_eq!(got, r["values"]["position"], "{out}: {name} at {t}");
            checked += 1;
        }
        assert_eq!(checked, 8, "{out}");
    }
}
