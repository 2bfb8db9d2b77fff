//! Elodin DB directories through the library: every fixture against what Elodin 0.18.0's
//! own server serves (`fixtures/elodin-db/elodin-0.18.0-read.json`, made with
//! `../shared/tools/elodin-db/dbcheck.py`), the 0.12 – 0.14 layout, the torn tick, and an
//! 8 GiB sparse copy read as its compacted self without a byte of the input changed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use simrec::formats::elodin::db::{DbReader, HEADER_KEY};
use simrec::formats::{ReadOptions, Source};
use simrec::model::{ArrayData, ChannelKind, Entity, Record, Value};

use crate::util;

pub fn db_fixture(rel: &str) -> PathBuf {
    util::any_fixture("elodin-db").join(rel)
}

fn read(dir: &Path) -> (DbReader, Vec<Record>) {
    let mut r = DbReader::open(dir, ReadOptions::default()).unwrap();
    let records: Vec<Record> = r.by_ref().map(|x| x.unwrap()).collect();
    (r, records)
}

/// An array's elements as JSON, the way dbcheck prints them flattened (f32 widened).
fn elements(v: &Value) -> Vec<Json> {
    let Value::Array(a) = v else {
        panic!("not an array: {v:?}")
    };
    let float = |x: f64| {
        if x.is_nan() {
            Json::from("NaN")
        } else if x.is_infinite() {
            Json::from(if x > 0.0 { "inf" } else { "-inf" })
        } else {
            Json::from(x)
        }
    };
    match &a.data {
        ArrayData::Bool(v) => v.iter().map(|&x| Json::from(x)).collect(),
        ArrayData::U8(v) => v.iter().map(|&x| Json::from(x)).collect(),
        ArrayData::U16(v) => v.iter().map(|&x| Json::from(x)).collect(),
        ArrayData::U32(v) => v.iter().map(|&x| Json::from(x)).collect(),
        ArrayData::U64(v) => v.iter().map(|&x| Json::from(x)).collect(),
        ArrayData::I8(v) => v.iter().map(|&x| Json::from(x)).collect(),
        ArrayData::I16(v) => v.iter().map(|&x| Json::from(x)).collect(),
        ArrayData::I32(v) => v.iter().map(|&x| Json::from(x)).collect(),
        ArrayData::I64(v) => v.iter().map(|&x| Json::from(x)).collect(),
        ArrayData::F32(v) => v.iter().map(|&x| float(f64::from(x))).collect(),
        ArrayData::F64(v) => v.iter().map(|&x| float(x)).collect(),
        ArrayData::Str(_) => panic!("strings"),
    }
}

fn flatten(j: &Json) -> Vec<Json> {
    match j {
        Json::Array(items) => items.iter().flat_map(flatten).collect(),
        other => vec![other.clone()],
    }
}

/// Equal as numbers of the same kind (an integer is not a float, 1 is not 1.0).
fn same(got: &[Json], want: &[Json]) -> bool {
    got.len() == want.len()
        && got.iter().zip(want).all(|(g, w)| match (g, w) {
            (Json::Number(g), Json::Number(w)) if w.is_f64() => g.as_f64() == w.as_f64(),
            _ => g == w,
        })
}

#[test]
fn every_fixture_reads_as_elodin_serves_it() {
    let expected: Json = serde_json::from_slice(&util::any_fixture_bytes(
        "elodin-db/elodin-0.18.0-read.json",
    ))
    .unwrap();
    let mut checked = 0;
    for (rel, want) in expected["fixtures"].as_object().unwrap() {
        if want.get("components").is_none() {
            continue; // ball_v0142: Elodin 0.18 cannot open it (its own test below).
        }
        let (r, records) = read(&db_fixture(rel));
        let header = r.header();
        let epoch_us = header.origin.epoch.unwrap().unix_ns / 1000;
        assert_eq!(header.origin.system.as_deref(), Some("UTC"));
        assert_eq!(
            epoch_us,
            want["earliest_timestamp"].as_i64().unwrap(),
            "{rel}"
        );
        let meta = &header.metadata[HEADER_KEY];
        let mut by_channel: BTreeMap<&str, Vec<&Record>> = BTreeMap::new();
        for rec in &records {
            by_channel
                .entry(&header.channels[rec.channel as usize].name)
                .or_default()
                .push(rec);
        }
        let components = want["components"].as_object().unwrap();
        let signals = header
            .channels
            .iter()
            .filter(|c| c.kind == ChannelKind::Signals)
            .count();
        assert_eq!(signals, components.len(), "{rel}");
        let mut rows = 0;
        for (name, w) in components {
            let what = format!("{rel} {name}");
            let got = &meta["components"][name];
            assert_eq!(got["type"], w["prim_type"], "{what}");
            assert_eq!(got["shape"], w["shape"], "{what}");
            assert_eq!(got["metadata"], w["metadata"], "{what}");
            let id = header.channel_id(name).unwrap();
            let spec = &header.channels[id as usize].fields[0];
            let names: Vec<String> = serde_json::from_value(w["element_names"].clone()).unwrap();
            assert_eq!(spec.elements.clone().unwrap_or_default(), names, "{what}");
            let recs = &by_channel[name.as_str()];
            assert_eq!(recs.len() as u64, w["rows"].as_u64().unwrap(), "{what}");
            rows += recs.len();
            let us = |r: &Record| epoch_us + r.time / 1000;
            assert_eq!(us(recs[0]), w["first_us"].as_i64().unwrap(), "{what}");
            assert_eq!(
                us(recs[recs.len() - 1]),
                w["last_us"].as_i64().unwrap(),
                "{what}"
            );
            for (rec, key) in [(recs[0], "first"), (recs[recs.len() - 1], "last")] {
                assert_eq!(rec.values.len(), 1, "{what}");
                assert_eq!(rec.values[0].0, spec.name, "{what}");
                let got = elements(&rec.values[0].1);
                assert!(
                    same(&got, &flatten(&w[key])),
                    "{what} {key}: {got:?} vs {}",
                    w[key]
                );
            }
            let (entity, _) = name.rsplit_once('.').unwrap();
            assert_eq!(recs[0].entity, Some(Entity::from(entity)), "{what}");
        }
        assert_eq!(rows as u64, want["rows"].as_u64().unwrap(), "{rel}");
        assert_eq!(meta["metadata_only"], want["metadata_only"], "{rel}");
        let msgs = want["msgs"].as_object().unwrap();
        assert_eq!(header.channels.len() - signals, msgs.len(), "{rel}");
        for (name, w) in msgs {
            let recs = &by_channel[name.as_str()];
            let times: Vec<i64> = recs.iter().map(|r| epoch_us + r.time / 1000).collect();
            let want_times: Vec<i64> = serde_json::from_value(w["timestamps"].clone()).unwrap();
            assert_eq!(times, want_times, "{rel} {name}");
            let payloads: Vec<Json> = recs
                .iter()
                .map(|r| match r.get("payload") {
                    Some(Value::Str(s)) => Json::from(s.as_str()),
                    other => panic!("{other:?}"),
                })
                .collect();
            assert_eq!(Json::from(payloads), w["payloads"], "{rel} {name}");
            assert_eq!(
                meta["message_logs"][name]["id"].to_string(),
                w["dir"].as_str().unwrap()
            );
        }
        // Records come in time order.
        assert!(records.windows(2).all(|w| w[0].time <= w[1].time), "{rel}");
        checked += 1;
    }
    assert_eq!(checked, 5);
}

#[test]
fn the_old_entity_layout_reads_with_entity_names() {
    let (r, records) = read(&db_fixture("ball_v0142"));
    let header = r.header();
    assert_eq!(header.format_version, "0.12-0.14");
    assert_eq!(header.channels.len(), 13);
    assert_eq!(records.len(), 13 * 301);
    let id = header.channel_id("Ball.world_pos").unwrap();
    let spec = &header.channels[id as usize].fields[0];
    assert_eq!(spec.name, "world_pos");
    assert_eq!(spec.shape, Some(vec![7]));
    assert_eq!(
        spec.elements.as_deref().unwrap().join(","),
        "q0,q1,q2,q3,x,y,z"
    );
    assert!(header.channel_id("Globals.tick").is_some());
    let tick = header.channel_id("Globals.tick").unwrap();
    let ticks: Vec<Json> = records
        .iter()
        .filter(|r| r.channel == tick)
        .flat_map(|r| elements(&r.values[0].1))
        .collect();
    assert_eq!(ticks.first(), Some(&Json::from(0u64)));
    assert_eq!(ticks.last(), Some(&Json::from(300u64)));
    let codes: Vec<&str> = r.findings()[0].1.list().iter().map(|f| f.code).collect();
    assert_eq!(codes, ["ELODIN_DB_LEGACY_LAYOUT"]);
    assert_eq!(header.metadata[HEADER_KEY]["entities"]["1"], "Ball");
}

#[test]
fn a_torn_tick_reads_every_row_and_is_a_warning_naming_the_components() {
    let (r, records) = read(&db_fixture("crash_v0180"));
    assert_eq!(records.len(), 21 * 4022 + 2 * 4023);
    let found = r.findings()[0].1.list().to_vec();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].code, "ELODIN_DB_TORN_TICK");
    assert!(
        found[0].message.contains("a.inertia, b.inertia have a row"),
        "{}",
        found[0].message
    );
    assert!(found[0].message.contains("1795820406691122"));
    // Two rates are not a torn tick.
    let (r, _) = read(&db_fixture("types_v0180"));
    assert!(r.findings()[0].1.list().is_empty());
}

/// Every file under `dir` with its bytes (committed part only for sparse logs) and length.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u64, Vec<u8>)> {
    use std::io::Read;
    let mut out = BTreeMap::new();
    for rel in util::files_under(dir) {
        let p = dir.join(rel);
        let len = p.metadata().unwrap().len();
        let mut head = Vec::new();
        std::fs::File::open(&p)
            .unwrap()
            .take(1 << 20)
            .read_to_end(&mut head)
            .unwrap();
        out.insert(p, (len, head));
    }
    out
}

#[test]
fn an_8_gib_sparse_copy_reads_as_its_compacted_self_and_is_left_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let raw = tmp.path().join("raw");
    util::copy_tree(&db_fixture("three_body_v0180"), &raw);
    // What Elodin leaves: each log 8 GiB + 1 byte, committed bytes first, sparse zeros after.
    for (path, _) in snapshot(&raw) {
        if matches!(
            path.file_name().and_then(|n| n.to_str()),
            Some("index" | "data")
        ) {
            let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.set_len((8 << 30) + 1).unwrap();
        }
    }
    let before = snapshot(&raw);
    let started = std::time::Instant::now();
    let (_, sparse) = read(&raw);
    let took = started.elapsed();
    let (_, compact) = read(&db_fixture("three_body_v0180"));
    assert_eq!(sparse, compact);
    assert_eq!(sparse.len(), 6923);
    // Reading past the committed length would read 8 GiB per log; this takes milliseconds.
    assert!(took.as_secs() < 10, "{took:?}");
    assert_eq!(snapshot(&raw), before, "the input changed");
    // Streamed, the read holds a block per log, never a file's length.
    let (n, allocated) = util::alloc::measure(|| {
        let r = DbReader::open(&raw, ReadOptions::default()).unwrap();
        r.inspect(|x| assert!(x.is_ok())).count()
    });
    assert_eq!(n, 6923);
    assert!(allocated.largest < 1 << 20, "{allocated:?}");
    assert!(allocated.peak < 16 << 20, "{allocated:?}");
}
