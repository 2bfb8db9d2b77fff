//! `simrec` on Elodin replay directories, end to end: inspect (text and JSON), validate
//! (clean fixtures and hand-made damage), convert and slice (directory outputs, `--force`,
//! `--dry-run`), and the default directory output from NanoVer legacy.

use std::path::Path;

use crate::util::elodin::*;
use crate::util::*;

fn damaged(fixture: &str, dir: &Path, damage: impl FnOnce(&Path)) -> String {
    let d = dir.join(fixture);
    copy_tree(&elodin_fixture(fixture), &d);
    damage(&d);
    d.to_str().unwrap().to_string()
}

#[test]
fn inspect_text_shows_flavour_ticks_entities_and_components() {
    let r = run_in(&elodin_fixture(""), &["inspect", "spin_120"]).expect_code(0);
    for want in [
        "elodin (version default_playback_speed)",
        "│ records          ┆ 484 ",
        "body: 121 records",
        "8333333 ns (0.008333333 s)",
        "121 (0..=120); max_ticks unset (u64::MAX)",
        "0 Spinner (asset_handle_entity_metadata, body)",
        "1 Globals (system_globals, asset_handle_entity_metadata)",
        "body: 1 entity, 121 rows, 1 row group, 6991 bytes",
        "world_pos F64[7] (qx,qy,qz,qw,x,y,z)",
        "world_vel F64[6] (ωx,ωy,ωz,x,y,z)",
        "45 bytes, 2 items, 2 entity names",
    ] {
        assert!(r.stdout.contains(want), "missing {want:?} in\n{}", r.stdout);
    }
    assert_eq!(r.stderr, "");
}

#[test]
fn inspect_json_has_one_channel_per_archetype_and_the_facts() {
    let r = run_in(
        &elodin_fixture(""),
        &[
            "inspect",
            "--format",
            "json",
            "ball_1200",
            "ball_1200_v0.9.0",
            "types_300",
        ],
    )
    .expect_code(0);
    let v = r.json_lines();
    assert_eq!(v.len(), 3);
    let ball = &v[0];
    assert_eq!(ball["format"], "elodin");
    assert_eq!(ball["records"], 10809);
    assert_eq!(ball["end_ns"], 1200i64 * 8_333_333);
    let channels: Vec<(String, u64)> = ball["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["records"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(channels.len(), 7);
    assert!(channels.contains(&("body".into(), 1201)));
    assert!(channels.contains(&("asset_handle_entity_metadata".into(), 3603)));
    let f = &ball;
    assert_eq!(f["layout"]["kind"], "exec");
    assert_eq!(f["metadata_flavour"], "default_playback_speed");
    assert_eq!(f["ticks"]["count"], 1201);
    assert_eq!(f["ticks"]["max_ticks"], 1200);
    assert_eq!(f["time_step"]["step_ns"], 8_333_333);
    let names: Vec<&str> = f["entities"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert_eq!(names, ["Ball", "Viewport", "Globals"]);
    let body = f["archetypes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "body")
        .unwrap();
    assert_eq!(body["rows"], 1201);
    assert_eq!(body["row_groups"], 1);
    assert_eq!(body["size_bytes"], 105602);
    let pos = body["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "world_pos")
        .unwrap();
    assert_eq!(pos["type"], "F64");
    assert_eq!(pos["shape"], serde_json::json!([7]));
    assert_eq!(
        pos["element_names"],
        serde_json::json!(["qx", "qy", "qz", "qw", "x", "y", "z"])
    );
    assert_eq!(v[1]["metadata_flavour"], "output_time_step");
    let sensor = v[2]["archetypes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "sensor")
        .unwrap()
        .clone();
    let dcm = sensor["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "dcm")
        .unwrap()
        .clone();
    assert_eq!(dcm["shape"], serde_json::json!([3, 3]));
    assert_eq!(sensor["entities"], serde_json::json!([0, 3]));
}

#[test]
fn validate_every_fixture_is_clean() {
    for name in [
        "ball_1200",
        "ball_1200_v0.9.0",
        "ball_build_only",
        "spin_120",
        "types_300",
    ] {
        let r = run_in(&elodin_fixture(""), &["validate", name]).expect_code(0);
        assert!(
            r.stdout
                .starts_with(&format!("{name}: ok (0 errors, 0 warnings")),
            "{}",
            r.stdout
        );
    }
    let r = run_in(
        &elodin_fixture(""),
        &["validate", "--info", "ball_build_only"],
    )
    .expect_code(0);
    assert!(
        r.stdout
            .contains("info ELODIN_MAX_TICKS: max_ticks is 1200 but the last tick is 0"),
        "{}",
        r.stdout
    );
}

#[test]
fn truncated_and_corrupt_parquet_give_clean_errors_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let cut = damaged("spin_120", tmp.path(), |d| {
        let p = d.join("world/body.parquet");
        let b = std::fs::read(&p).unwrap();
        std::fs::write(&p, &b[..b.len() / 2]).unwrap();
    });
    let r = run_in(tmp.path(), &["validate", &cut]).expect_code(1);
    assert!(r.stdout.contains("FAILED"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("error ELODIN_PARQUET_UNREADABLE: body.parquet cannot be opened"),
        "{}",
        r.stdout
    );
    let out = tmp.path().join("out");
    let r = run_in(tmp.path(), &["convert", "--strict", &cut, "-o", s(&out)]).expect_code(1);
    assert!(r.stderr.starts_with("error: "), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("ELODIN_PARQUET_UNREADABLE: body.parquet cannot be opened"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    let corrupt = tmp.path().join("corrupt");
    copy_tree(&elodin_fixture("spin_120"), &corrupt);
    let p = corrupt.join("world/body.parquet");
    let mut b = std::fs::read(&p).unwrap();
    for x in &mut b[200..3000] {
        *x ^= 0x5a;
    }
    std::fs::write(&p, b).unwrap();
    let r = run_in(tmp.path(), &["validate", "corrupt"]).expect_code(1);
    assert!(
        r.stdout.contains(
            "error ELODIN_PARQUET_UNREADABLE: body.parquet cannot be decoded after row 0"
        ),
        "{}",
        r.stdout
    );
    let r = run_in(
        tmp.path(),
        &["convert", "--strict", "corrupt", "-o", "out2/"],
    )
    .expect_code(1);
    assert!(
        r.stderr
            .contains("corrupt: ELODIN_PARQUET_UNREADABLE: body.parquet"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    // Nothing half-written is left behind.
    assert_eq!(dir_entries(tmp.path()), ["corrupt", "spin_120"]);
}

#[test]
fn validate_finds_directory_level_damage() {
    let tmp = tempfile::tempdir().unwrap();
    type Damage = Box<dyn FnOnce(&Path)>;
    let cases: Vec<(&str, Damage, &str)> = vec![
        (
            "missing",
            Box::new(|d: &Path| std::fs::remove_file(d.join("world/body.parquet")).unwrap()),
            "error ELODIN_MISSING_PARQUET: archetype `body` is declared in metadata.json but body.parquet is missing",
        ),
        (
            "trailing",
            Box::new(|d: &Path| {
                let p = d.join("world/assets.bin");
                let mut b = std::fs::read(&p).unwrap();
                b.push(0);
                std::fs::write(&p, b).unwrap();
            }),
            "error ELODIN_ASSETS_DECODE at byte 45: assets.bin is not a postcard item list: at byte 45: 1 bytes follow the last of the 2 items",
        ),
        (
            "handle",
            Box::new(|d: &Path| {
                // Only the first item: the Globals entity's handle 1 points past the end.
                let p = d.join("world/assets.bin");
                let b = std::fs::read(&p).unwrap();
                let mut one = vec![1u8];
                one.extend_from_slice(&b[1..23]);
                std::fs::write(&p, one).unwrap();
            }),
            "error ELODIN_ASSET_HANDLE at record 1: asset_handle_entity_metadata.parquet row 1, column asset_handle_entity_metadata: asset handle 1 but assets.bin has 1 items",
        ),
        (
            "type",
            Box::new(|d: &Path| {
                let p = d.join("world/metadata.json");
                let m = std::fs::read_to_string(&p).unwrap();
                let m = m.replace(
                    r#"{"name":"world_pos","component_type":{"primitive_ty":"F64""#,
                    r#"{"name":"world_pos","component_type":{"primitive_ty":"F32""#,
                );
                std::fs::write(&p, m).unwrap();
            }),
            "error ELODIN_TYPE_MISMATCH: body.parquet every row (121), column world_pos: declared F32[7] (Float32) but the column holds Float64",
        ),
        (
            "shape",
            Box::new(|d: &Path| {
                let p = d.join("world/metadata.json");
                let m = std::fs::read_to_string(&p).unwrap();
                let m = m.replace(
                    r#"{"name":"world_pos","component_type":{"primitive_ty":"F64","shape":[7]}"#,
                    r#"{"name":"world_pos","component_type":{"primitive_ty":"F64","shape":[2,4]}"#,
                );
                std::fs::write(&p, m).unwrap();
            }),
            "error ELODIN_SHAPE_MISMATCH: body.parquet every row (121), column world_pos: declared F64[2,4] (8 elements) but the column holds lists of 7",
        ),
        (
            // A component metadata declares but the file lacks (a component renamed).
            "missing_column",
            Box::new(|d: &Path| {
                let p = d.join("world/metadata.json");
                let m = std::fs::read_to_string(&p).unwrap();
                std::fs::write(&p, m.replace(r#""name":"inertia""#, r#""name":"mass""#)).unwrap();
            }),
            "error ELODIN_MISSING_COLUMN: body.parquet has no column for component `mass`",
        ),
        (
            // The same: the file's `inertia` column is now one metadata does not declare.
            "extra_column",
            Box::new(|d: &Path| {
                let p = d.join("world/metadata.json");
                let m = std::fs::read_to_string(&p).unwrap();
                std::fs::write(&p, m.replace(r#""name":"inertia""#, r#""name":"mass""#)).unwrap();
            }),
            "warning ELODIN_EXTRA_COLUMN: body.parquet has column `inertia`, which metadata.json does not declare",
        ),
        (
            "nometa",
            Box::new(|d: &Path| std::fs::remove_file(d.join("world/metadata.json")).unwrap()),
            "",
        ),
    ];
    for (name, damage, want) in cases {
        let d = tmp.path().join(name);
        copy_tree(&elodin_fixture("spin_120"), &d);
        damage(&d);
        let r = run_in(tmp.path(), &["validate", name]);
        if name == "nometa" {
            // No metadata.json anywhere: not recognisable as a replay at all.
            let r = r.expect_code(1);
            assert!(r.stdout.contains("SIMREC_UNKNOWN_FORMAT"), "{}", r.stdout);
            continue;
        }
        let r = r.expect_code(1);
        assert!(
            r.stdout.contains(want),
            "{name}: want {want:?} in\n{}",
            r.stdout
        );
    }
    let r = run_in(tmp.path(), &["validate", "--format", "json", "type"]).expect_code(1);
    let v = &r.json_lines()[0];
    assert_eq!(v["format"], "elodin");
    assert_eq!(v["ok"], false);
    assert!(v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["code"] == "ELODIN_TYPE_MISMATCH"));
}

#[test]
fn convert_and_slice_write_replay_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let fx = elodin_fixture("ball_1200");
    let r = run_in(
        tmp.path(),
        &["convert", s(&fx), "-o", "copy/", "--to", "elodin"],
    )
    .expect_code(0);
    assert_eq!(r.stderr, "wrote 10809 records to copy/\n");
    assert_eq!(
        dir_entries(&tmp.path().join("copy")),
        ["tick_exec", "world"]
    );
    run_in(tmp.path(), &["validate", "copy"]).expect_code(0);
    // An existing directory is refused without --force, replaced with it.
    let r = run_in(
        tmp.path(),
        &["convert", s(&fx), "-o", "copy", "--to", "elodin"],
    )
    .expect_code(2);
    assert_eq!(
        r.stderr,
        "error: cannot write copy: exists (use --force to overwrite)\n"
    );
    run_in(
        tmp.path(),
        &[
            "slice",
            s(&fx),
            "--frames",
            "10..20",
            "-o",
            "copy",
            "--force",
            "--to",
            "elodin",
        ],
    )
    .expect_code(0);
    let r = run_in(tmp.path(), &["inspect", "--format", "json", "copy"]).expect_code(0);
    let v = &r.json_lines()[0];
    assert_eq!(v["ticks"]["count"], 10);
    assert_eq!(v["ticks"]["max_ticks"], 9);
    assert_eq!(v["records"], 90);
    assert_eq!(dir_entries(tmp.path()), ["copy"]);
    // A slice by time: ticks whose time is in [0.5 s, 0.6 s) are 61..=72.
    run_in(
        tmp.path(),
        &[
            "slice",
            s(&fx),
            "--start",
            "0.5s",
            "--end",
            "0.6s",
            "-o",
            "t/",
            "--to",
            "elodin",
        ],
    )
    .expect_code(0);
    let body = read_table(&tmp.path().join("t/world/body.parquet"));
    assert_eq!(body.u64s("tick"), (0..12).collect::<Vec<u64>>());
    let full = read_table(&fx.join("world/body.parquet"));
    assert_eq!(
        body.column("world_pos").to_data(),
        full.column("world_pos").slice(61, 12).to_data()
    );
    // --dry-run writes nothing.
    let r = run_in(
        tmp.path(),
        &[
            "convert",
            "--dry-run",
            s(&fx),
            "-o",
            "dry/",
            "--to",
            "elodin",
        ],
    )
    .expect_code(0);
    assert_eq!(
        r.stdout,
        "10809 records would be written as elodin\nnothing would be lost\n"
    );
    assert!(!tmp.path().join("dry").exists());
}

#[test]
fn nanover_pair_to_a_replay_counts_loss() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("replay");
    let r = run(&[
        "convert",
        "small.traj",
        "small.state",
        "-o",
        &format!("{}/", s(&out)),
        "--to",
        "elodin",
    ])
    .expect_code(3);
    assert!(
        r.stderr
            .starts_with(&format!("wrote 807 records to {}/", s(&out))),
        "{}",
        r.stderr
    );
    // Each of the first frame's 21 particles is a body (docs/formats/mapping.md); the 11
    // particles added after the reset come after the `particle` archetype's first tick.
    for want in [
        "particle.positions",
        "into world_pos of one `particle` entity each: nm → m (×1e-9)",
        "entity first seen after the channel's first tick: not written",
        "particle.names",
        "not a number or numeric array",
    ] {
        assert!(r.stderr.contains(want), "missing {want:?}:\n{}", r.stderr);
    }
    run_in(tmp.path(), &["validate", "replay"]).expect_code(0);
    let frame = read_table(&out.join("frame.parquet"));
    assert_eq!(frame.rows(), 47);
    assert!(!frame.types().contains_key("particle.positions"));
    let particles = read_table(&out.join("particle.parquet"));
    assert_eq!(particles.rows(), 47 * 21);
    assert_eq!(
        particles.types()["world_pos"].to_string(),
        "FixedSizeList(7 x Float64)"
    );
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("metadata.json")).unwrap()).unwrap();
    assert_eq!(meta["max_ticks"], 46);
    assert_eq!(meta["default_playback_speed"], 1.0);
    let r = run_in(tmp.path(), &["inspect", "--format", "json", "replay"]).expect_code(0);
    let names: Vec<String> = r.json_lines()[0]["entities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect();
    let bodies: Vec<String> = (0..21).map(|i| format!("particle {i} {i}")).collect();
    assert_eq!(names[..3], ["frame", "state", "Globals"]);
    assert_eq!(names[3..], bodies[..]);
    // Without a trailing slash and no extension the format cannot be told.
    let r = run(&["convert", "small.traj", "-o", s(&tmp.path().join("plain"))]).expect_code(2);
    assert!(
        r.stderr.contains("cannot tell the output format"),
        "{}",
        r.stderr
    );
}
