//! Elodin replay directories through the library: every fixture read record by record,
//! typed values with their declared shapes, the quaternion order, time, same-format
//! convert and slice read back with the parquet crate, and hand-built damage.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{Array as _, ArrayRef, Float64Array, UInt64Array};
use simrec::formats::elodin::ElodinReader;
use simrec::formats::output::Outputs;
use simrec::formats::{registry, ReadOptions, Source};
use simrec::model::{ArrayData, Entity, Record, Value};
use simrec::pipeline::{copy, Span, Window};

use crate::util;
use crate::util::elodin::*;

fn records(dir: &Path) -> (ElodinReader, Vec<Record>) {
    let mut r = ElodinReader::open(dir, ReadOptions::default()).unwrap();
    let records: Vec<Record> = r.by_ref().map(|x| x.unwrap()).collect();
    (r, records)
}

fn codes(r: &ElodinReader) -> Vec<&'static str> {
    r.findings()[0].1.list().iter().map(|f| f.code).collect()
}

fn f64s(v: &Value) -> Vec<f64> {
    match v {
        Value::Array(a) => match &a.data {
            ArrayData::F64(d) => d.clone(),
            other => panic!("not f64: {other:?}"),
        },
        other => panic!("not an array: {other:?}"),
    }
}

#[test]
fn every_fixture_reads_with_its_row_counts_and_tick_ranges() {
    // (fixture, records, (channel, rows), last tick)
    type Case<'a> = (&'a str, usize, &'a [(&'a str, usize)], u64);
    let cases: [Case<'_>; 5] = [
        (
            "ball_1200",
            10809,
            &[
                ("body", 1201),
                ("asset_handle_entity_metadata", 3603),
                ("system_globals", 1201),
            ],
            1200,
        ),
        (
            "ball_1200_v0.9.0",
            10809,
            &[
                ("body", 1201),
                ("asset_handle_entity_metadata", 4804),
                ("globals", 1201),
            ],
            1200,
        ),
        (
            "ball_build_only",
            9,
            &[("body", 1), ("asset_handle_entity_metadata", 3)],
            0,
        ),
        (
            "spin_120",
            484,
            &[("body", 121), ("asset_handle_entity_metadata", 242)],
            120,
        ),
        (
            "types_300",
            8428,
            &[("sensor", 602), ("gravity_constraint", 1806), ("body", 903)],
            300,
        ),
    ];
    for (name, total, per, last) in cases {
        let (r, recs) = records(&elodin_fixture(name));
        assert_eq!(recs.len(), total, "{name}");
        for (channel, rows) in per {
            let id = r.header().channel_id(channel).unwrap();
            assert_eq!(
                recs.iter().filter(|x| x.channel == id).count(),
                *rows,
                "{name} {channel}"
            );
        }
        assert_eq!(recs.first().unwrap().frame, Some(0), "{name}");
        assert_eq!(
            recs.iter().filter_map(|x| x.frame).max(),
            Some(last as i64),
            "{name}"
        );
        // Tick by tick: frames never decrease, time = tick × 8,333,333 ns.
        assert!(recs.windows(2).all(|w| w[0].frame <= w[1].frame), "{name}");
        for x in &recs {
            assert_eq!(x.time, x.frame.unwrap() * 8_333_333, "{name}");
        }
        // Only the flavour (and for a never-run world the max_ticks note) is reported.
        let c = codes(&r);
        assert!(
            c.iter()
                .all(|c| *c == "ELODIN_FLAVOUR" || *c == "ELODIN_MAX_TICKS"),
            "{name}: {c:?}"
        );
    }
}

#[test]
fn entity_names_come_from_assets_bin() {
    let names = |name: &str| -> Vec<(String, String)> {
        let r = ElodinReader::open(&elodin_fixture(name), ReadOptions::default()).unwrap();
        let e = r.header().metadata["elodin"]["entities"]
            .as_object()
            .unwrap()
            .clone();
        e.into_iter()
            .map(|(k, v)| (k, v.as_str().unwrap().to_string()))
            .collect()
    };
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(
        names("ball_1200"),
        pairs(&[("0", "Ball"), ("1", "Viewport"), ("3", "Globals")])
    );
    assert_eq!(
        names("spin_120"),
        pairs(&[("0", "Spinner"), ("1", "Globals")])
    );
    let t = names("types_300");
    assert_eq!(t.len(), 12);
    assert!(t.contains(&("4".into(), "A->B".into())));
    assert!(t.contains(&("3".into(), "StandaloneSensor".into())));
}

#[test]
fn spin_120_quaternion_is_scalar_last() {
    let (r, recs) = records(&elodin_fixture("spin_120"));
    let body = r.header().channel_id("body").unwrap();
    let at = |tick: u64| -> Vec<f64> {
        let rec = recs
            .iter()
            .find(|x| x.channel == body && x.frame == Some(tick as i64))
            .unwrap();
        f64s(rec.get("world_pos").unwrap())
    };
    let round = |v: &[f64]| -> Vec<f64> { v.iter().map(|x| (x * 1e5).round() / 1e5).collect() };
    assert_eq!(round(&at(120)[..4]), [0.62055, 0.339, 0.339, 0.62055]);
    // 90° about x at the start, written scalar-last.
    let h = (std::f64::consts::FRAC_1_SQRT_2 * 1e5).round() / 1e5;
    assert_eq!(round(&at(0)[..4]), [h, 0.0, 0.0, h]);
    let rec = recs
        .iter()
        .find(|x| x.channel == body && x.frame == Some(120))
        .unwrap();
    assert_eq!(rec.time, 120 * 8_333_333);
    assert_eq!(rec.entity, Some(Entity::Id(0)));
}

#[test]
fn identity_rotation_is_0001() {
    let (r, recs) = records(&elodin_fixture("ball_1200"));
    let body = r.header().channel_id("body").unwrap();
    let rec = recs.iter().find(|x| x.channel == body).unwrap();
    assert_eq!(
        f64s(rec.get("world_pos").unwrap())[..4],
        [0.0, 0.0, 0.0, 1.0]
    );
}

#[test]
fn every_primitive_type_keeps_its_dtype_and_shape() {
    let (r, recs) = records(&elodin_fixture("types_300"));
    let sensor = r.header().channel_id("sensor").unwrap();
    let rec = recs.iter().find(|x| x.channel == sensor).unwrap();
    let kinds: Vec<(String, String, Vec<usize>)> = rec
        .values
        .iter()
        .map(|(k, v)| match v {
            Value::Array(a) => (k.clone(), a.dtype().name().to_string(), a.shape.clone()),
            _ => panic!("{k} is not an array"),
        })
        .collect();
    let want = [
        ("counter", "int64", vec![]),
        ("temp", "float32", vec![]),
        ("flags", "uint32", vec![4]),
        ("small", "int16", vec![2]),
        ("imu", "float32", vec![6]),
        ("dcm", "float64", vec![3, 3]),
    ];
    for (k, d, s) in want {
        assert!(
            kinds.contains(&(k.to_string(), d.to_string(), s.clone())),
            "{k}: {kinds:?}"
        );
    }
    let edge = r.header().channel_id("gravity_constraint").unwrap();
    let e = recs.iter().find(|x| x.channel == edge).unwrap();
    match e.get("gravity_edge") {
        Some(Value::Array(a)) => {
            assert_eq!(a.shape, vec![2]);
            assert!(matches!(a.data, ArrayData::U64(_)));
        }
        other => panic!("{other:?}"),
    }
}

/// Writes `source` as an Elodin dir at `out` through the library (same as `convert`).
fn write(source: &mut dyn Source, out: &Path) -> simrec::formats::WriteReport {
    let format = registry::format_named("elodin").unwrap();
    let mut outputs = Outputs::new(false);
    let sink = format.create(out, source.header(), &mut outputs).unwrap();
    let report = copy(source, sink, &mut |_, _| {}).unwrap();
    outputs.commit().unwrap();
    report
}

#[test]
fn same_format_convert_keeps_every_value_exactly() {
    for name in [
        "ball_1200",
        "types_300",
        "ball_1200_v0.9.0",
        "ball_build_only",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let src = elodin_fixture(name);
        let mut r = ElodinReader::open(&src, ReadOptions::default()).unwrap();
        let report = write(&mut r, &out);
        assert!(report.loss.is_empty(), "{name}");
        // An exec dir stays an exec dir; tick_exec is copied byte for byte.
        let hlo = src.join("tick_exec/hlo.binpb");
        if hlo.exists() {
            assert_eq!(
                std::fs::read(out.join("tick_exec/hlo.binpb")).unwrap(),
                std::fs::read(&hlo).unwrap()
            );
        }
        let (sw, ow) = (src.join("world"), out.join("world"));
        assert_eq!(
            std::fs::read(ow.join("assets.bin")).unwrap(),
            std::fs::read(sw.join("assets.bin")).unwrap()
        );
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(sw.join("metadata.json")).unwrap()).unwrap();
        let out_meta_bytes = std::fs::read(ow.join("metadata.json")).unwrap();
        assert_ne!(out_meta_bytes.last(), Some(&b'\n'));
        let out_meta: serde_json::Value = serde_json::from_slice(&out_meta_bytes).unwrap();
        // The whole metadata.json, flavour included: a v0.9.0 replay keeps its
        // `output_time_step` and gets no `default_playback_speed` (no mix of the two).
        assert_eq!(out_meta, meta, "{name}");
        if name.contains("v0.9.0") {
            assert!(out_meta.get("default_playback_speed").is_none());
            assert!(out_meta["output_time_step"].is_object());
        }
        for archetype in meta["archetypes"].as_object().unwrap().keys() {
            let file = format!("{archetype}.parquet");
            let got = read_table(&ow.join(&file));
            assert_same_table(&got, &read_table(&sw.join(&file)));
            assert!(got.kv_keys.contains(&"ARROW:schema".to_string()));
            // Components sorted by name, then tick, then entity_id.
            let names = got.names();
            let mut sorted = names[..names.len() - 2].to_vec();
            sorted.sort();
            assert_eq!(names[..names.len() - 2], sorted[..]);
            assert_eq!(names[names.len() - 2..], ["tick", "entity_id"]);
        }
    }
}

#[test]
fn slices_renumber_ticks_from_zero_and_keep_values() {
    let src = elodin_fixture("ball_1200");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cut");
    let r = ElodinReader::open(&src, ReadOptions::default()).unwrap();
    // Ticks [100, 200): times 100 × step .. 200 × step.
    let span = Span {
        start: 100 * 8_333_333,
        end: Some(200 * 8_333_333),
    };
    let mut w = Window::new(r, span, true);
    write(&mut w, &out);
    let ow = out.join("world");
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(ow.join("metadata.json")).unwrap()).unwrap();
    assert_eq!(meta["max_ticks"], 99);
    let body = read_table(&ow.join("body.parquet"));
    let full = read_table(&src.join("world/body.parquet"));
    assert_eq!(body.rows(), 100);
    assert_eq!(body.u64s("tick"), (0..100).collect::<Vec<u64>>());
    for c in ["world_pos", "world_vel", "inertia", "force", "world_accel"] {
        assert_eq!(
            body.column(c).to_data(),
            full.column(c).slice(100, 100).to_data(),
            "{c}"
        );
    }
    let g = read_table(&ow.join("system_globals.parquet"));
    assert_eq!(g.u64s("simulation_tick"), (0..100).collect::<Vec<u64>>());
    let names = read_table(&ow.join("asset_handle_entity_metadata.parquet"));
    assert_eq!(names.rows(), 300);
    // The slice validates clean.
    let mut again = ElodinReader::open(&out, util::lenient()).unwrap();
    assert_eq!(again.by_ref().count(), 900);
    assert_eq!(codes(&again), ["ELODIN_FLAVOUR"]);
}

fn u64_col(v: Vec<u64>) -> ArrayRef {
    Arc::new(UInt64Array::from(v))
}

fn opt_u64_col(v: Vec<Option<u64>>) -> ArrayRef {
    Arc::new(UInt64Array::from(v))
}

/// spin_120 with `system_globals.parquet` replaced by hand-built columns.
fn damaged_globals(
    tick: Vec<u64>,
    entity: Vec<u64>,
    sim: Vec<Option<u64>>,
) -> (tempfile::TempDir, Vec<(String, Option<u64>)>) {
    damaged_globals_with(u64_col(tick), entity, sim)
}

fn damaged_globals_with(
    tick: ArrayRef,
    entity: Vec<u64>,
    sim: Vec<Option<u64>>,
) -> (tempfile::TempDir, Vec<(String, Option<u64>)>) {
    let dir = tempfile::tempdir().unwrap();
    util::copy_tree(&elodin_fixture("spin_120"), dir.path());
    let n = tick.len();
    write_table(
        &dir.path().join("world/system_globals.parquet"),
        vec![
            ("simulation_tick", opt_u64_col(sim)),
            (
                "simulation_time_step",
                Arc::new(Float64Array::from(vec![0.008333333; n])),
            ),
            ("tick", tick),
            ("entity_id", u64_col(entity)),
        ],
    );
    let mut r = ElodinReader::open(dir.path(), util::lenient()).unwrap();
    r.by_ref().for_each(|x| {
        x.unwrap();
    });
    let found = r.findings()[0]
        .1
        .list()
        .iter()
        .filter(|f| f.code != "ELODIN_FLAVOUR")
        .map(|f| (format!("{}: {}", f.code, f.message), f.record))
        .collect();
    (dir, found)
}

#[test]
fn hand_built_row_damage_is_found_with_archetype_row_and_column() {
    let ok_ticks: Vec<u64> = (0..=120).collect();
    let sim = |t: &[u64]| t.iter().map(|&x| Some(x)).collect::<Vec<_>>();
    // Out of tick order (rows 5 and 6 swapped).
    let mut t = ok_ticks.clone();
    t.swap(5, 6);
    let (_d, f) = damaged_globals(t.clone(), vec![1; 121], sim(&t));
    assert!(
        f.iter().any(|(m, r)| m
            == "ELODIN_TICK_ORDER: system_globals.parquet row 6, column tick: tick 5 after tick \
                6: rows are not tick-major"
            && *r == Some(6)),
        "{f:?}"
    );
    // A gap: tick 7 missing, so the archetypes cover different ranges too.
    let t: Vec<u64> = ok_ticks
        .iter()
        .copied()
        .filter(|&x| x != 7)
        .chain([121])
        .collect();
    let (_d, f) = damaged_globals(t.clone(), vec![1; 121], sim(&t));
    assert!(
        f.iter().any(|(m, r)| m
            == "ELODIN_TICK_GAP: system_globals.parquet row 7, column tick: tick 8 follows tick \
                6: tick 7 is missing"
            && *r == Some(7)),
        "{f:?}"
    );
    // The other archetypes end at tick 120; the row named is where their last tick is.
    assert!(
        f.iter().any(|(m, r)| m
            == "ELODIN_TICK_RANGE: body.parquet row 120, column tick: ticks 0 to 120 here but \
                ticks 0 to 121 in system_globals.parquet: every archetype must cover the same ticks"
            && *r == Some(120)),
        "{f:?}"
    );
    // The first tick is not 0.
    let t: Vec<u64> = (1..=121).collect();
    let (_d, f) = damaged_globals(t.clone(), vec![1; 121], sim(&t));
    assert!(
        f.iter().any(|(m, r)| m
            == "ELODIN_TICK_GAP: system_globals.parquet row 0, column tick: the first tick is 1, not 0"
            && *r == Some(0)),
        "{f:?}"
    );
    // Entity missing at tick 3 (named at the tick's last row), duplicated at tick 4.
    let t: Vec<u64> = [0, 0, 1, 1, 2, 2, 3, 4, 4].to_vec();
    let e: Vec<u64> = [1, 9, 1, 9, 1, 9, 1, 1, 1].to_vec();
    let (_d, f) = damaged_globals(t.clone(), e, sim(&t));
    assert!(
        f.iter().any(|(m, r)| m
            == "ELODIN_ENTITY_SET: system_globals.parquet row 6, column entity_id: tick 3 has 1 \
                of the 2 entities of tick 0; missing: 9"
            && *r == Some(6)),
        "{f:?}"
    );
    // The last tick short: named at the file's last row.
    let t: Vec<u64> = [0, 0, 1, 1, 2].to_vec();
    let e: Vec<u64> = [1, 9, 1, 9, 1].to_vec();
    let (_d, f) = damaged_globals(t.clone(), e, sim(&t));
    assert!(
        f.iter().any(|(m, r)| m
            == "ELODIN_ENTITY_SET: system_globals.parquet row 4, column entity_id: tick 2 has 1 \
                of the 2 entities of tick 0; missing: 9"
            && *r == Some(4)),
        "{f:?}"
    );
    // The same entities in another order.
    let t: Vec<u64> = [0, 0, 1, 1, 2, 2].to_vec();
    let e: Vec<u64> = [1, 9, 1, 9, 9, 1].to_vec();
    let (_d, f) = damaged_globals(t.clone(), e, sim(&t));
    assert!(
        f.iter().any(|(m, r)| m
            == "ELODIN_ENTITY_SET: system_globals.parquet row 4, column entity_id: entity 9 at \
                position 0 of tick 2, where tick 0 has entity 1"
            && *r == Some(4)),
        "{f:?}"
    );
    let t: Vec<u64> = [0, 0, 1, 1, 2, 2, 3, 4, 4].to_vec();
    let e: Vec<u64> = [1, 9, 1, 9, 1, 9, 1, 1, 1].to_vec();
    let (_d, f) = damaged_globals(t.clone(), e, sim(&t));
    assert!(
        f.iter()
            .any(|(m, r)| m
                == "ELODIN_DUPLICATE_ROW: system_globals.parquet row 8, column entity_id: entity 1 \
                appears twice at tick 4" && *r == Some(8)),
        "{f:?}"
    );
    // `tick` as Int64 (read anyway), with a negative value (that row is skipped).
    let mut signed: Vec<i64> = (0..=120).collect();
    signed[10] = -1;
    let (_d, f) = damaged_globals_with(
        Arc::new(arrow_array::Int64Array::from(signed)),
        vec![1; 121],
        sim(&ok_ticks),
    );
    assert!(
        f.iter().any(|(m, r)| m
            == "ELODIN_TYPE_MISMATCH: system_globals.parquet every row (121), column tick: the \
                column is Int64, not UInt64 (read anyway)"
            && r.is_none()),
        "{f:?}"
    );
    assert!(
        f.iter().any(|(m, r)| m
            == "ELODIN_TYPE_MISMATCH: system_globals.parquet row 10, column tick: a negative \
                value; the row is skipped"
            && *r == Some(10)),
        "{f:?}"
    );
    // A null tick: the row is skipped.
    let mut t: Vec<Option<u64>> = sim(&ok_ticks);
    t[3] = None;
    let (_d, f) = damaged_globals_with(opt_u64_col(t), vec![1; 121], sim(&ok_ticks));
    assert!(
        f.iter().any(|(m, r)| m
            == "ELODIN_NULL: system_globals.parquet row 3, column tick: null value; the row is skipped"
            && *r == Some(3)),
        "{f:?}"
    );
    // A null, and simulation_tick ≠ tick.
    let mut s = sim(&ok_ticks);
    s[4] = None;
    s[9] = Some(90);
    let (_d, f) = damaged_globals(ok_ticks.clone(), vec![1; 121], s);
    assert!(
        f.iter().any(|(m, r)| m
            == "ELODIN_NULL: system_globals.parquet row 4, column simulation_tick: null value"
            && *r == Some(4)),
        "{f:?}"
    );
    assert!(f.iter().any(|(m, r)| m.starts_with("ELODIN_SIMULATION_TICK: system_globals.parquet row 9, column simulation_tick: simulation_tick is 90 at tick 9") && *r == Some(9)), "{f:?}");
}

#[test]
fn list_columns_without_arrow_schema_read_and_are_noted() {
    // A tensor written as a variable List (what a reader without ARROW:schema sees).
    let dir = tempfile::tempdir().unwrap();
    util::copy_tree(&elodin_fixture("spin_120"), dir.path());
    let src = read_table(&elodin_fixture("spin_120/world/body.parquet"));
    let mut cols: Vec<(&str, ArrayRef)> = Vec::new();
    let names = ["force", "world_accel", "inertia", "world_vel", "world_pos"];
    for n in names {
        let c = src.column(n);
        let fixed = c
            .as_any()
            .downcast_ref::<arrow_array::FixedSizeListArray>()
            .unwrap();
        let len = fixed.value_length() as usize;
        let offsets =
            arrow_buffer::OffsetBuffer::from_lengths(std::iter::repeat_n(len, fixed.len()));
        let list = arrow_array::ListArray::new(
            Arc::new(arrow_schema::Field::new(
                "item",
                arrow_schema::DataType::Float64,
                true,
            )),
            offsets,
            fixed.values().clone(),
            None,
        );
        cols.push((n, Arc::new(list)));
    }
    cols.push(("tick", src.column("tick")));
    cols.push(("entity_id", src.column("entity_id")));
    write_table(&dir.path().join("world/body.parquet"), cols);
    let mut r = ElodinReader::open(dir.path(), util::lenient()).unwrap();
    let body = r.header().channel_id("body").unwrap();
    let recs: Vec<Record> = r
        .by_ref()
        .map(|x| x.unwrap())
        .filter(|x| x.channel == body)
        .collect();
    assert_eq!(recs.len(), 121);
    let q = f64s(recs[120].get("world_pos").unwrap());
    assert!((q[0] - 0.62055).abs() < 1e-5 && (q[3] - 0.62055).abs() < 1e-5);
    assert!(codes(&r).contains(&"ELODIN_VARIABLE_LIST"));
}

#[test]
fn recycled_records_read_the_same_as_fresh_ones() {
    // `Source::recycle` hands records back for reuse: the values written over a recycled
    // record must equal a fresh read, whatever the caller did to the record (keys renamed,
    // values of another type or shape, values removed or added).
    for name in ["ball_1200", "spin_120", "types_300", "ball_build_only"] {
        let dir = elodin_fixture(name);
        let (_, fresh) = records(&dir);
        let mut r = ElodinReader::open(&dir, ReadOptions::default()).unwrap();
        let mut n = 0;
        while let Some(x) = r.next() {
            let mut rec = x.unwrap();
            assert_eq!(rec, fresh[n], "{name} record {n}");
            match n % 4 {
                0 => {}
                1 => {
                    if let Some((k, v)) = rec.values.first_mut() {
                        k.push('x');
                        *v = Value::Float(1.0);
                    }
                }
                2 => {
                    rec.values.pop();
                }
                _ => rec.values.push(("extra".into(), Value::Null)),
            }
            r.recycle(rec);
            n += 1;
        }
        assert_eq!(n, fresh.len(), "{name}");
    }
}

#[test]
fn same_format_values_missing_or_of_another_shape_are_counted_as_loss() {
    // Elodin to Elodin from values: a row that lacks a component, or carries one of the
    // wrong length, gets zeros in that column and a loss entry (never a short column).
    let dir = elodin_fixture("spin_120");
    let (r, mut recs) = records(&dir);
    let body = r.header().channel_id("body").unwrap();
    let rows: Vec<usize> = (0..recs.len())
        .filter(|&i| recs[i].channel == body)
        .collect();
    recs[rows[1]].values.retain(|(k, _)| k != "world_pos");
    for (k, v) in &mut recs[rows[2]].values {
        if let (true, Value::Array(a)) = (k == "world_vel", v) {
            a.data = ArrayData::F64(vec![0.5; 5]);
            a.shape = vec![5];
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let format = registry::format_named("elodin").unwrap();
    let mut outputs = Outputs::new(false);
    let mut sink = format.create(&out, r.header(), &mut outputs).unwrap();
    for rec in &recs {
        sink.write(rec).unwrap();
    }
    let report = sink.finish().unwrap();
    outputs.commit().unwrap();
    let loss: Vec<(String, String, String, u64)> = report
        .loss
        .entries()
        .map(|(c, f, why, n)| (c.into(), f.into(), why.into(), n))
        .collect();
    let why = "missing, or not the declared type and shape: zeros written";
    assert_eq!(
        loss,
        [
            ("body".into(), "world_pos".into(), why.into(), 1),
            ("body".into(), "world_vel".into(), why.into(), 1),
        ],
        "{loss:?}"
    );
    let t = read_table(&out.join("world/body.parquet"));
    assert_eq!(t.rows(), rows.len());
    let (again, _) = records(&out);
    assert!(again.findings()[0].1.count(simrec::report::Severity::Error) == 0);
}
