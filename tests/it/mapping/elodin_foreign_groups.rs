//! The Elodin writer's archetypes for a source in another format: the channels that are
//! components of one named entity (`P.k`, records of entity `P` with value `k`, as Icarus
//! signals are) share one archetype `P`, a row per tick; any other channel keeps an archetype
//! of its own. Read back with simrec's Elodin reader, value by value.

use std::collections::VecDeque;
use std::path::Path;

use serde_json::Value as Json;
use simrec::formats::{registry, Source};
use simrec::model::{
    Array, Channel, ChannelKind, Composition, DType, Entity, FieldSpec, Header, Record, Value,
    QUATERNION_WXYZ,
};
use simrec::pipeline::Written;

use crate::util::listed::{f64s, write_elodin, Listed};

fn signal(name: &str, field: FieldSpec) -> Channel {
    let mut c = Channel::new(name, ChannelKind::Signals, Composition::SampleHold);
    c.fields = vec![field];
    c.declares_all = true;
    c
}

/// One record: time `tick` × 10 ms, frame `tick`.
fn record(tick: i64, channel: u32, entity: Option<&str>, key: &str, value: Value) -> Record {
    let mut r = Record::new(tick * 10_000_000, channel);
    r.entity = entity.map(Entity::from);
    r.frame = Some(tick);
    r.values = vec![(key.into(), value)];
    r
}

/// Writes `source` as a replay in `dir/out/`.
fn convert(source: &mut Listed, dir: &Path) -> (Written, std::path::PathBuf) {
    let out = dir.join("out/");
    (write_elodin(source, &out), out)
}

/// Archetype → its component names, in `metadata.json` order.
fn archetypes(out: &Path) -> Vec<(String, Vec<String>)> {
    let meta: Json =
        serde_json::from_slice(&std::fs::read(out.join("metadata.json")).unwrap()).unwrap();
    meta["archetypes"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, list)| {
            let names = list.as_array().unwrap().iter();
            let names = names.map(|c| c["name"].as_str().unwrap().to_string());
            (name.clone(), names.collect())
        })
        .collect()
}

/// Every record read back from the replay: (time, archetype, entity id, values as text).
fn rows(out: &Path) -> Vec<(i64, String, u64, String)> {
    let back = registry::open(out, Default::default()).unwrap();
    let header = back.header().clone();
    back.map(Result::unwrap)
        .map(|r| {
            let values: Vec<String> = r
                .values
                .iter()
                .map(|(k, v)| match v {
                    Value::Array(Array { data, .. }) => format!("{k}={data:?}"),
                    other => format!("{k}={other:?}"),
                })
                .collect();
            (
                r.time,
                header.channels[r.channel as usize].name.clone(),
                r.entity.as_ref().and_then(Entity::id).unwrap(),
                values.join(" "),
            )
        })
        .collect()
}

const NAMED: u64 = 1 << 48;

#[test]
fn the_signals_of_one_component_share_its_archetype_and_clashing_names_get_the_signals() {
    // A vehicle A.Nav with a position and an attitude, B.Nav with a position too (the name
    // clash), B with a mass, and a channel `plain` of no entity.
    let mut header = Header::new("test", "1");
    header.add_channel(signal(
        "A.Nav.position",
        FieldSpec::typed("position", DType::F64, &[3]),
    ));
    let mut q = FieldSpec::typed("q", DType::F64, &[4]);
    q.semantic = Some(QUATERNION_WXYZ.into());
    header.add_channel(signal("A.Nav.q", q));
    header.add_channel(signal(
        "B.Nav.position",
        FieldSpec::typed("position", DType::F64, &[3]),
    ));
    header.add_channel(signal("B.mass", FieldSpec::typed("mass", DType::F64, &[])));
    header.add_channel(signal("plain", FieldSpec::typed("plain", DType::F64, &[])));
    let mut records = VecDeque::new();
    for tick in 0..2 {
        let t = tick as f64;
        records.extend([
            record(tick, 0, Some("A.Nav"), "position", f64s(&[t, 1.0, 2.0])),
            record(tick, 1, Some("A.Nav"), "q", f64s(&[1.0, 0.0, 0.0, 0.0])),
            record(tick, 2, Some("B.Nav"), "position", f64s(&[5.0, t, 6.0])),
            record(tick, 4, None, "plain", Value::Float(10.0 + t)),
        ]);
        if tick == 0 {
            // A static value, given once: held.
            records.push_back(record(0, 3, Some("B"), "mass", Value::Float(1250.0)));
        }
    }
    let mut source = Listed { header, records };
    let dir = tempfile::tempdir().unwrap();
    let (written, out) = convert(&mut source, dir.path());
    assert!(written.report.loss.is_empty(), "{:?}", written.report.loss);
    assert_eq!(
        archetypes(&out),
        [
            ("A.Nav".into(), vec!["position".into(), "q".into()]),
            // `position` is A.Nav's: B.Nav's is named as the source names the signal.
            ("B.Nav".into(), vec!["B.Nav.position".into()]),
            ("B".into(), vec!["mass".into()]),
            ("plain".into(), vec!["plain".into()]),
            (
                "system_globals".into(),
                vec!["simulation_tick".into(), "simulation_time_step".into()]
            ),
            ("world_pos".into(), vec!["world_pos".into()]),
            (
                "asset_handle_entity_metadata".into(),
                vec!["asset_handle_entity_metadata".into()]
            ),
        ]
    );
    // Ids as before grouping: named entities from 2^48 in order of appearance, a channel's
    // own entity its index, Globals after the channels; names in assets.bin.
    let back = registry::open(&out, Default::default()).unwrap();
    let names = &back.header().metadata["elodin"]["entities"];
    for (id, name) in [
        (4, "plain"),
        (5, "Globals"),
        (NAMED, "A.Nav"),
        (NAMED + 1, "B.Nav"),
        (NAMED + 2, "B"),
    ] {
        assert_eq!(names[id.to_string()], name, "{id}");
    }
    let got: Vec<(i64, String, u64, String)> = rows(&out)
        .into_iter()
        .filter(|(_, a, _, _)| {
            !matches!(
                a.as_str(),
                "system_globals" | "asset_handle_entity_metadata"
            )
        })
        .collect();
    let want = [
        (
            0,
            "A.Nav",
            NAMED,
            "position=F64([0.0, 1.0, 2.0]) q=F64([1.0, 0.0, 0.0, 0.0])",
        ),
        (0, "B.Nav", NAMED + 1, "B.Nav.position=F64([5.0, 0.0, 6.0])"),
        (0, "B", NAMED + 2, "mass=F64([1250.0])"),
        (0, "plain", 4, "plain=F64([10.0])"),
        (
            0,
            "world_pos",
            NAMED,
            "world_pos=F64([0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 2.0])",
        ),
        (
            10_000_000,
            "A.Nav",
            NAMED,
            "position=F64([1.0, 1.0, 2.0]) q=F64([1.0, 0.0, 0.0, 0.0])",
        ),
        (
            10_000_000,
            "B.Nav",
            NAMED + 1,
            "B.Nav.position=F64([5.0, 1.0, 6.0])",
        ),
        (10_000_000, "B", NAMED + 2, "mass=F64([1250.0])"),
        (10_000_000, "plain", 4, "plain=F64([11.0])"),
        (
            10_000_000,
            "world_pos",
            NAMED,
            "world_pos=F64([0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0])",
        ),
    ];
    let want: Vec<(i64, String, u64, String)> = want
        .iter()
        .map(|(t, a, e, v)| (*t, a.to_string(), *e, v.to_string()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn channels_that_are_not_one_components_values_keep_their_own_archetypes() {
    // `C.x` carries two entities; `D.y` carries C's; `E.k` twice (the second keeps its own);
    // `F.late` starts a tick after `F.early`; `G.a` and `G.b` both start at tick 1.
    let mut header = Header::new("test", "1");
    for (name, key) in [
        ("C.x", "x"),
        ("D.y", "y"),
        ("E.k", "k"),
        ("E.k", "k"),
        ("F.early", "early"),
        ("F.late", "late"),
        ("G.a", "a"),
        ("G.b", "b"),
    ] {
        header.add_channel(signal(name, FieldSpec::typed(key, DType::F64, &[])));
    }
    let mut records = VecDeque::new();
    for tick in 0..2 {
        let t = tick as f64;
        records.extend([
            record(tick, 0, Some("C"), "x", Value::Float(t)),
            record(tick, 0, Some("Other"), "x", Value::Float(-t)),
            record(tick, 1, Some("C"), "y", Value::Float(t)),
            record(tick, 2, Some("E"), "k", Value::Float(1.0 + t)),
            record(tick, 3, Some("E"), "k", Value::Float(2.0 + t)),
            record(tick, 4, Some("F"), "early", Value::Float(3.0 + t)),
        ]);
        if tick == 1 {
            records.extend([
                record(1, 5, Some("F"), "late", Value::Float(4.0)),
                record(1, 6, Some("G"), "a", Value::Float(5.0)),
                record(1, 7, Some("G"), "b", Value::Float(6.0)),
            ]);
        }
    }
    let mut source = Listed { header, records };
    let dir = tempfile::tempdir().unwrap();
    let (written, out) = convert(&mut source, dir.path());
    let list: Vec<(String, Vec<String>)> = archetypes(&out);
    let names: Vec<&str> = list.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(
        names,
        [
            "C.x",
            "D.y",
            "E",
            "E.k_3",
            "F",
            "F.late",
            "G",
            "system_globals",
            "asset_handle_entity_metadata"
        ]
    );
    let components = |a: &str| list.iter().find(|(n, _)| n == a).unwrap().1.clone();
    assert_eq!(components("E"), ["k"]);
    assert_eq!(components("E.k_3"), ["E.k_3"]);
    assert_eq!(components("G"), ["a", "b"]);
    // What started late is repeated back to tick 0, and said so, as for any channel.
    let loss: Vec<(String, String, u64)> = written
        .report
        .loss
        .entries()
        .map(|(c, f, _why, n)| (c.to_string(), f.to_string(), n))
        .filter(|(_, _, n)| *n > 0)
        .collect();
    for channel in ["F.late", "G.a", "G.b"] {
        assert!(
            loss.contains(&(channel.to_string(), "*".to_string(), 1)),
            "{channel}: {loss:?}"
        );
    }
    let got = rows(&out);
    let of = |a: &str| -> Vec<(i64, u64, String)> {
        got.iter()
            .filter(|(_, n, _, _)| n == a)
            .map(|(t, _, e, v)| (*t, *e, v.clone()))
            .collect()
    };
    // Entities: C (2^48), Other, E, F, G in order of appearance.
    assert_eq!(
        of("C.x"),
        [
            (0, NAMED, "x=F64([0.0])".to_string()),
            (0, NAMED + 1, "x=F64([-0.0])".to_string()),
            (10_000_000, NAMED, "x=F64([1.0])".to_string()),
            (10_000_000, NAMED + 1, "x=F64([-1.0])".to_string()),
        ]
    );
    assert_eq!(
        of("D.y"),
        [
            (0, NAMED, "y=F64([0.0])".to_string()),
            (10_000_000, NAMED, "y=F64([1.0])".to_string()),
        ]
    );
    assert_eq!(
        of("E.k_3"),
        [
            (0, NAMED + 2, "E.k_3=F64([2.0])".to_string()),
            (10_000_000, NAMED + 2, "E.k_3=F64([3.0])".to_string()),
        ]
    );
    assert_eq!(
        of("F.late"),
        [
            (0, NAMED + 3, "late=F64([4.0])".to_string()),
            (10_000_000, NAMED + 3, "late=F64([4.0])".to_string()),
        ]
    );
    assert_eq!(
        of("G"),
        [
            (0, NAMED + 4, "a=F64([5.0]) b=F64([6.0])".to_string()),
            (
                10_000_000,
                NAMED + 4,
                "a=F64([5.0]) b=F64([6.0])".to_string()
            ),
        ]
    );
}
