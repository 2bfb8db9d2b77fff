//! `simrec` writing Elodin replays that Elodin 0.10.1 loads: no scalar U8/U16 columns
//! (widened, reported, exit 0 when nothing else changed), no replay without ticks, merges
//! side by side and end to end (anything else refused before writing), a window rebased
//! (and stderr saying so), `recover` of every healthy fixture exiting 0 with every value kept, and text
//! `inspect` staying small. `scripts/interop/elodin.sh` loads the same outputs in Elodin's
//! own loader (readcheck), which the test suite cannot run.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::types::{Float64Type, UInt16Type, UInt64Type, UInt8Type};
use arrow_array::{Array, ArrayRef, FixedSizeListArray, PrimitiveArray, UInt32Array};
use arrow_schema::{DataType, Field};
use serde_json::Value;

use simrec::formats::elodin::ElodinReader;
use simrec::formats::ReadOptions;

use crate::util;
use crate::util::elodin::*;
use crate::util::*;

/// `fixtures/<rel>`.
fn fx(rel: &str) -> PathBuf {
    util::any_fixture(rel)
}

fn u64s(v: Vec<u64>) -> ArrayRef {
    Arc::new(PrimitiveArray::<UInt64Type>::from(v))
}

/// Every Parquet file of a written replay, with its (column, type) pairs.
fn parquet_types(world: &Path) -> Vec<(String, String, DataType)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(world).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "parquet") {
            let t = read_table(&p);
            for (name, ty) in t.types() {
                out.push((
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    name,
                    ty,
                ));
            }
        }
    }
    out
}

/// Scalar columns Elodin 0.10.1 cannot load (UInt8, UInt16, Boolean).
fn small_scalars(world: &Path) -> Vec<String> {
    parquet_types(world)
        .into_iter()
        .filter(|(_, _, t)| matches!(t, DataType::UInt8 | DataType::UInt16 | DataType::Boolean))
        .map(|(f, c, t)| format!("{f} {c} {t}"))
        .collect()
}

fn metadata(world: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(world.join("metadata.json")).unwrap()).unwrap()
}

fn primitive(meta: &Value, archetype: &str, component: &str) -> String {
    meta["archetypes"][archetype]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == component)
        .unwrap_or_else(|| panic!("no {archetype}.{component}"))["component_type"]["primitive_ty"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn nanover_and_3es_conversions_widen_small_scalars_and_report_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("pair");
    let r = run(&[
        "convert",
        s(&fx("nanover-legacy/small.traj")),
        s(&fx("nanover-legacy/small.state")),
        "-o",
        &format!("{}/", s(&out)),
        "--to",
        "elodin",
    ])
    .expect_code(3);
    // A bool in the state, on all 47 rows: kept as 0/1 in a U32 (the loss table lists other
    // things: names, reshaped arrays).
    assert!(
        r.stderr.contains("some values were kept in a wider type"),
        "{}",
        r.stderr
    );
    let line = r
        .stderr
        .lines()
        .find(|l| l.contains("imd.velocity_reset_available"))
        .unwrap_or_else(|| panic!("{}", r.stderr));
    assert!(line.contains("bool scalar stored as U32 0/1"), "{line}");
    assert!(line.trim_end_matches('│').trim().ends_with("47"), "{line}");
    assert_eq!(small_scalars(&out), Vec::<String>::new());
    let state = read_table(&out.join("state.parquet"));
    let flag = state.column("imd.velocity_reset_available");
    assert_eq!(flag.data_type(), &DataType::UInt32);
    let flag = flag.as_any().downcast_ref::<UInt32Array>().unwrap();
    assert!(flag.values().iter().all(|&v| v <= 1));
    assert_eq!(
        primitive(&metadata(&out), "state", "imd.velocity_reset_available"),
        "U32"
    );

    // 3es: colours are U8[4] tensors (Elodin loads those as they are), `default_active` a
    // bool scalar.
    let out = tmp.path().join("tes");
    let r = run(&[
        "convert",
        s(&fx("tes/small_collate.3es")),
        "-o",
        &format!("{}/", s(&out)),
        "--to",
        "elodin",
    ])
    .expect_code(3);
    assert!(r.stderr.contains("default_active"), "{}", r.stderr);
    assert_eq!(small_scalars(&out), Vec::<String>::new());
    let types = parquet_types(&out);
    let colour = types
        .iter()
        .find(|(f, c, _)| f == "3es_sphere.parquet" && c == "colour")
        .unwrap();
    assert_eq!(colour.2.to_string(), "FixedSizeList(4 x UInt8)");
    assert_eq!(primitive(&metadata(&out), "3es_sphere", "colour"), "U8");
    assert_eq!(
        primitive(&metadata(&out), "3es_category", "default_active"),
        "U32"
    );
}

/// A world with one archetype `a`: scalar U8 `c8` and U16 `c16`, tensor U8[2] `t8`, for
/// entities 7 and 9 over ticks 0..3.
fn small_int_world(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let comp = |n: &str, t: &str, shape: &str| {
        format!(
            r#"{{"name":"{n}","component_type":{{"primitive_ty":"{t}","shape":{shape}}},"tags":null,"asset":false}}"#
        )
    };
    let meta = format!(
        r#"{{"archetypes":{{"a":[{},{},{}]}},"sim_time_step":0.01,"run_time_step":0.01,"default_playback_speed":1.0,"max_ticks":2}}"#,
        comp("c8", "U8", "[]"),
        comp("c16", "U16", "[]"),
        comp("t8", "U8", "[2]")
    );
    std::fs::write(dir.join("metadata.json"), meta).unwrap();
    std::fs::write(dir.join("assets.bin"), [0u8]).unwrap();
    let item = Arc::new(Field::new("item", DataType::UInt8, true));
    let t8: ArrayRef = Arc::new(FixedSizeListArray::new(
        item,
        2,
        Arc::new(PrimitiveArray::<UInt8Type>::from(
            (0..12).map(|i| 200 + i as u8).collect::<Vec<_>>(),
        )),
        None,
    ));
    write_table(
        &dir.join("a.parquet"),
        vec![
            (
                "c8",
                Arc::new(PrimitiveArray::<UInt8Type>::from(vec![
                    0, 1, 254, 255, 3, 4,
                ])),
            ),
            (
                "c16",
                Arc::new(PrimitiveArray::<UInt16Type>::from(vec![
                    0, 65535, 2, 3, 40000, 5,
                ])),
            ),
            ("t8", t8),
            ("tick", u64s(vec![0, 0, 1, 1, 2, 2])),
            ("entity_id", u64s(vec![7, 9, 7, 9, 7, 9])),
        ],
    );
}

#[test]
fn a_widening_alone_is_reported_and_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("ints");
    small_int_world(&src);
    run(&["validate", s(&src)]).expect_code(0);
    let out = tmp.path().join("out");
    let r = run(&[
        "convert",
        s(&src),
        "-o",
        &format!("{}/", s(&out)),
        "--to",
        "elodin",
    ])
    .expect_code(0);
    assert!(!r.stderr.contains("could not be kept"), "{}", r.stderr);
    for (field, why) in [
        ("c8", "U8 scalar stored as U32"),
        ("c16", "U16 scalar stored as U32"),
    ] {
        let line = r
            .stderr
            .lines()
            .find(|l| l.contains(&format!(" {field} ")))
            .unwrap_or_else(|| panic!("{field} in\n{}", r.stderr));
        assert!(line.contains(why), "{line}");
        assert!(line.trim_end_matches('│').trim().ends_with('6'), "{line}");
    }
    assert!(!r.stderr.contains(" t8 "), "tensors are not widened");
    let t = read_table(&out.join("a.parquet"));
    let c8 = t.column("c8");
    let c8 = c8.as_any().downcast_ref::<UInt32Array>().unwrap();
    assert_eq!(c8.values().to_vec(), [0, 1, 254, 255, 3, 4]);
    let c16 = t.column("c16");
    let c16 = c16.as_any().downcast_ref::<UInt32Array>().unwrap();
    assert_eq!(c16.values().to_vec(), [0, 65535, 2, 3, 40000, 5]);
    assert_eq!(
        t.types()["t8"].to_string(),
        "FixedSizeList(2 x UInt8)",
        "a U8 tensor loads as it is"
    );
    let meta = metadata(&out);
    assert_eq!(primitive(&meta, "a", "c8"), "U32");
    assert_eq!(primitive(&meta, "a", "c16"), "U32");
    assert_eq!(primitive(&meta, "a", "t8"), "U8");
    assert_eq!(small_scalars(&out), Vec::<String>::new());
    let v = run(&["validate", s(&out)]).expect_code(0);
    assert!(v.stdout.contains("0 errors, 0 warnings"), "{}", v.stdout);
    // --dry-run lists the widening too, and writes nothing.
    let dry = tmp.path().join("dry");
    let r = run(&[
        "convert",
        "--dry-run",
        s(&src),
        "-o",
        &format!("{}/", s(&dry)),
        "--to",
        "elodin",
    ])
    .expect_code(0);
    assert!(r.stdout.contains("U8 scalar stored as U32"), "{}", r.stdout);
    assert!(!dry.exists());
}

#[test]
fn a_recording_without_records_is_refused_and_nothing_written() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("empty");
    let r = run(&[
        "convert",
        s(&fx("nanover-zip/split/small.nanover-00.nanover.zip")),
        "-o",
        &format!("{}/", s(&out)),
        "--to",
        "elodin",
    ])
    .expect_code(2);
    assert!(
        r.stderr
            .contains("an Elodin replay needs at least one tick"),
        "{}",
        r.stderr
    );
    assert!(!out.exists());
    assert_eq!(dir_entries(tmp.path()), Vec::<String>::new());
}

fn copy_fixture(name: &str, dir: &Path) -> PathBuf {
    let d = dir.join(name);
    util::copy_tree(&elodin_fixture(name), &d);
    d
}

fn ticks_of(world: &Path, archetype: &str) -> Vec<u64> {
    read_table(&world.join(format!("{archetype}.parquet"))).u64s("tick")
}

#[test]
fn merge_end_to_end_follows_the_first_replays_ticks() {
    let tmp = tempfile::tempdir().unwrap();
    let spin = elodin_fixture("spin_120");
    let out = tmp.path().join("twice");
    run(&[
        "merge",
        s(&spin),
        s(&spin),
        "-o",
        &format!("{}/", s(&out)),
        "--to",
        "elodin",
    ])
    .expect_code(0);
    let v = run(&["validate", s(&out)]).expect_code(0);
    assert!(v.stdout.contains("0 errors, 0 warnings"), "{}", v.stdout);
    let src = read_table(&spin.join("world/body.parquet"));
    let got = read_table(&out.join("body.parquet"));
    assert_eq!(got.rows(), 242);
    assert_eq!(ticks_of(&out, "body"), (0..242).collect::<Vec<u64>>());
    // Tick 121 + k holds the values of tick k.
    let (a, b) = (src.column("world_pos").to_data(), got.column("world_pos"));
    assert_eq!(b.slice(0, 121).to_data(), a);
    assert_eq!(b.slice(121, 121).to_data(), a);
    assert_eq!(
        read_table(&out.join("system_globals.parquet")).u64s("simulation_tick"),
        (0..242).collect::<Vec<u64>>()
    );
    // The same assets (identical stores are kept as one), and max_ticks stays unset.
    assert_eq!(
        std::fs::read(out.join("assets.bin")).unwrap(),
        std::fs::read(spin.join("world/assets.bin")).unwrap()
    );
    assert_eq!(metadata(&out)["max_ticks"], u64::MAX);
}

#[test]
fn merge_side_by_side_moves_colliding_entities_and_asset_handles() {
    let tmp = tempfile::tempdir().unwrap();
    let spin = elodin_fixture("spin_120");
    let ball = tmp.path().join("ball121");
    run(&[
        "slice",
        s(&elodin_fixture("ball_1200")),
        "--frames",
        "0..121",
        "-o",
        &format!("{}/", s(&ball)),
        "--to",
        "elodin",
    ])
    .expect_code(0);
    let out = tmp.path().join("both");
    run(&[
        "merge",
        s(&spin),
        s(&ball),
        "-o",
        &format!("{}/", s(&out)),
        "--to",
        "elodin",
    ])
    .expect_code(0);
    let v = run(&["validate", s(&out)]).expect_code(0);
    assert!(v.stdout.contains("0 errors, 0 warnings"), "{}", v.stdout);
    let r = run(&["inspect", "--format", "json", s(&out)]).expect_code(0);
    let j = &r.json_lines()[0];
    let names: Vec<(u64, String)> = j["entities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["id"].as_u64().unwrap(),
                e["name"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    // spin_120: 0 Spinner, 1 Globals; ball_1200: 0 Ball, 1 Viewport, 2, 3 Globals. The
    // ball's 0 and 1 collide and move above every id in use.
    assert_eq!(
        names,
        [
            (0, "Spinner".to_string()),
            (1, "Globals".into()),
            (2, "".into()),
            (3, "Globals".into()),
            (4, "Ball".into()),
            (5, "Viewport".into())
        ]
    );
    assert_eq!(j["ticks"]["count"], 121);
    // Assets: spin's 2 items, then ball's 7; the ball's handles shifted by 2.
    assert_eq!(j["assets"]["items"], 9);
    let handles = read_table(&out.join("asset_handle_entity_metadata.parquet"));
    let ids = handles.u64s("entity_id");
    let h = handles.u64s("asset_handle_entity_metadata");
    let ball_handles = read_table(&ball.join("world/asset_handle_entity_metadata.parquet"));
    let (bi, bh) = (
        ball_handles.u64s("entity_id"),
        ball_handles.u64s("asset_handle_entity_metadata"),
    );
    let moved = |e: u64| match e {
        0 => 4,
        1 => 5,
        e => e,
    };
    // Tick 0: spin's two rows, then the ball's three.
    assert_eq!(ids[..5], [0, 1, moved(bi[0]), moved(bi[1]), moved(bi[2])]);
    assert_eq!(h[2..5], [bh[0] + 2, bh[1] + 2, bh[2] + 2]);
    // Body rows: spin's entity, then the ball (4) at every tick.
    let body = read_table(&out.join("body.parquet"));
    assert_eq!(body.u64s("entity_id")[..4], [0, 4, 0, 4]);
}

#[test]
fn merges_that_are_neither_are_refused_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let spin = elodin_fixture("spin_120");
    let out = tmp.path().join("no");
    // Different archetypes and different tick ranges.
    let r = run(&[
        "merge",
        s(&spin),
        s(&elodin_fixture("ball_1200")),
        "-o",
        &format!("{}/", s(&out)),
        "--to",
        "elodin",
    ])
    .expect_code(2);
    assert!(r.stderr.contains("not end to end"), "{}", r.stderr);
    assert!(r.stderr.contains("not side by side"), "{}", r.stderr);
    assert!(!out.exists());
    // Different time steps.
    let other = copy_fixture("spin_120", tmp.path());
    let meta_path = other.join("world/metadata.json");
    let text = std::fs::read_to_string(&meta_path).unwrap();
    std::fs::write(&meta_path, text.replace("0.008333333", "0.01")).unwrap();
    let r = run(&[
        "merge",
        s(&spin),
        s(&other),
        "-o",
        &format!("{}/", s(&out)),
        "--to",
        "elodin",
    ])
    .expect_code(2);
    assert!(
        r.stderr.contains("different time steps: ") && r.stderr.contains("10000000 ns"),
        "{}",
        r.stderr
    );
    assert!(!out.exists());
    // Side by side, a component name in two archetypes.
    let clash = copy_fixture("spin_120", tmp.path().join("clash").as_path());
    let meta_path = clash.join("world/metadata.json");
    let text = std::fs::read_to_string(&meta_path).unwrap();
    std::fs::write(&meta_path, text.replace("\"body\"", "\"rigid\"")).unwrap();
    std::fs::rename(
        clash.join("world/body.parquet"),
        clash.join("world/rigid.parquet"),
    )
    .unwrap();
    let r = run(&[
        "merge",
        s(&spin),
        s(&clash),
        "-o",
        &format!("{}/", s(&out)),
        "--to",
        "elodin",
    ])
    .expect_code(2);
    assert!(r.stderr.contains("component `"), "{}", r.stderr);
    assert!(!out.exists());
}

#[test]
fn a_v0_9_replay_keeps_its_metadata_flavour_through_merge_and_slice() {
    let tmp = tempfile::tempdir().unwrap();
    let v09 = elodin_fixture("ball_1200_v0.9.0");
    let source = metadata(&v09.join("world"));
    let out = tmp.path().join("twice");
    run(&[
        "merge",
        s(&v09),
        s(&v09),
        "-o",
        &format!("{}/", s(&out)),
        "--to",
        "elodin",
    ])
    .expect_code(0);
    let meta = metadata(&out);
    assert_eq!(meta["output_time_step"], source["output_time_step"]);
    assert!(meta.get("default_playback_speed").is_none(), "{meta}");
    assert_eq!(meta["max_ticks"], 2401);
    let keys = |m: &Value| {
        let mut k: Vec<String> = m.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&meta), keys(&source));
    let cut = tmp.path().join("cut");
    run(&[
        "slice",
        s(&v09),
        "--frames",
        "5..10",
        "-o",
        &format!("{}/", s(&cut)),
        "--to",
        "elodin",
    ])
    .expect_code(0);
    let meta = metadata(&cut.join("world"));
    assert_eq!(keys(&meta), keys(&source));
    assert_eq!(meta["max_ticks"], 4);
}

/// An Elodin replay's ticks start at 0: a window written into one is rebased, and stderr
/// says so; other outputs keep the recording's own times.
#[test]
fn a_window_into_an_elodin_output_is_rebased_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    for input in [elodin_fixture("spin_120"), fx("nanover-legacy/small.traj")] {
        let out = tmp.path().join("cut");
        let r = run(&[
            "slice",
            s(&input),
            "--start",
            "0.1",
            "-o",
            &format!("{}/", s(&out)),
            "--to",
            "elodin",
            "--force",
        ]);
        assert!(matches!(r.code, 0 | 3), "{}", r.stderr);
        assert!(
            r.stderr.contains(
                "note: an Elodin replay's ticks start at 0 (Elodin's loader counts them from 0): the window is rebased to start at 0 (as --rebase)"
            ),
            "{}",
            r.stderr
        );
        let j = run(&["inspect", s(&out), "--format", "json"])
            .expect_code(0)
            .json_lines();
        assert_eq!(j[0]["start_ns"], 0);
    }
    // --keep-time is the default now: accepted, with a warning.
    let out = tmp.path().join("kept.jsonl");
    let r = run(&[
        "slice",
        s(&elodin_fixture("spin_120")),
        "--frames",
        "10..12",
        "--keep-time",
        "-o",
        s(&out),
    ])
    .expect_code(0);
    assert!(
        r.stderr.contains("warning: --keep-time is the default"),
        "{}",
        r.stderr
    );
    let first = read_jsonl(&out)[0]["time_ns"].as_i64().unwrap();
    assert_eq!(first, 10 * 8_333_333);
}

#[test]
fn recover_of_every_healthy_fixture_exits_0_with_every_value() {
    let tmp = tempfile::tempdir().unwrap();
    let strict = ReadOptions::default();
    for name in [
        "ball_1200",
        "ball_1200_v0.9.0",
        "ball_build_only",
        "spin_120",
        "types_300",
    ] {
        let out = tmp.path().join(name);
        let r = run(&["recover", s(&elodin_fixture(name)), "-o", s(&out)]).expect_code(0);
        assert!(r.stderr.contains("nothing dropped"), "{name}: {}", r.stderr);
        let read = |dir: &Path| {
            ElodinReader::open(dir, strict)
                .unwrap()
                .map(|r| r.unwrap())
                .map(|r| (r.time, r.channel, r.entity, r.frame, r.values))
                .collect::<Vec<_>>()
        };
        assert_eq!(read(&out), read(&elodin_fixture(name)), "{name}");
        // The metadata flavour and every key are kept.
        let w = if out.join("world").is_dir() {
            out.join("world")
        } else {
            out.clone()
        };
        assert_eq!(
            metadata(&w),
            metadata(&elodin_fixture(name).join("world")),
            "{name}"
        );
    }
}

#[test]
fn text_inspect_of_a_large_replay_shows_counts_and_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("swarm");
    std::fs::create_dir_all(&dir).unwrap();
    let (entities, comps) = (1000u64, 30usize);
    let names: Vec<String> = (0..comps).map(|i| format!("c{i:02}")).collect();
    let list: Vec<String> = names
        .iter()
        .map(|n| format!(r#"{{"name":"{n}","component_type":{{"primitive_ty":"F64","shape":[]}},"tags":null,"asset":false}}"#))
        .collect();
    let mut archetypes: Vec<String> = vec![format!(r#""swarm":[{}]"#, list.join(","))];
    // Nine more archetypes of one component each, for the same entities.
    for k in 0..9 {
        archetypes.push(format!(
            r#""extra{k}":[{{"name":"e{k}","component_type":{{"primitive_ty":"F64","shape":[]}},"tags":null,"asset":false}}]"#
        ));
    }
    std::fs::write(
        dir.join("metadata.json"),
        format!(
            r#"{{"archetypes":{{{}}},"sim_time_step":0.01,"run_time_step":0.01,"default_playback_speed":1.0,"max_ticks":1}}"#,
            archetypes.join(",")
        ),
    )
    .unwrap();
    std::fs::write(dir.join("assets.bin"), [0u8]).unwrap();
    let rows = (entities * 2) as usize;
    let ticks: Vec<u64> = (0..rows as u64).map(|r| r / entities).collect();
    let ids: Vec<u64> = (0..rows as u64).map(|r| r % entities).collect();
    let f64s = || -> ArrayRef { Arc::new(PrimitiveArray::<Float64Type>::from(vec![1.5; rows])) };
    let mut cols: Vec<(&str, ArrayRef)> = names.iter().map(|n| (n.as_str(), f64s())).collect();
    cols.push(("tick", u64s(ticks.clone())));
    cols.push(("entity_id", u64s(ids.clone())));
    write_table(&dir.join("swarm.parquet"), cols);
    for k in 0..9 {
        let e = format!("e{k}");
        write_table(
            &dir.join(format!("extra{k}.parquet")),
            vec![
                (e.as_str(), f64s()),
                ("tick", u64s(ticks.clone())),
                ("entity_id", u64s(ids.clone())),
            ],
        );
    }
    let r = run(&["inspect", s(&dir)]).expect_code(0);
    for want in [
        "1 000 entities",
        "0 (no name) (swarm, extra0",
        "… 994 more entities",
        "999 (no name) (swarm, extra0",
        "10 archetypes",
        "swarm: 1 000 entities, 2000 rows",
        "  c00 F64",
        "  c02 F64",
        "  … 24 more components",
        "  c29 F64",
        "… 4 more archetypes",
        "extra8: 1 000 entities",
    ] {
        assert!(r.stdout.contains(want), "missing {want:?} in\n{}", r.stdout);
    }
    assert!(!r.stdout.contains("  c03 F64"), "{}", r.stdout);
    assert!(
        !r.stdout.contains("\n│                  ┆ 3 (no name)"),
        "{}",
        r.stdout
    );
    // Small whatever the replay holds: the table has a few dozen lines.
    let lines = r.stdout.lines().count();
    assert!(lines < 60, "{lines} lines:\n{}", r.stdout);
    // JSON keeps every entity.
    let r = run(&["inspect", "--format", "json", s(&dir)]).expect_code(0);
    assert_eq!(
        r.json_lines()[0]["entities"].as_array().unwrap().len(),
        1000
    );
}
