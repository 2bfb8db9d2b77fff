//! `simrec convert run.icarec out/`: an Icarus recording as an Elodin replay (issue 12's
//! mapping): one entity and one archetype per component path, one component per signal (its
//! last name segment), one tick per frame, the step from the frames, read back value by
//! value.

use crate::util;
use crate::util::{run_in, s};

fn icarec(name: &str) -> std::path::PathBuf {
    util::any_fixture("icarec").join(name)
}

#[test]
fn the_a2_recording_becomes_a_replay_with_one_entity_per_component() {
    for input in ["a2.icarec", "a2.icarec.tar"] {
        let tmp = tempfile::tempdir().unwrap();
        // A replay has no place for the run's absolute start (exit 3).
        let r = run_in(
            tmp.path(),
            &["convert", s(&icarec(input)), "-o", "out/", "--to", "elodin"],
        )
        .expect_code(3);
        assert!(
            r.stderr.starts_with("wrote 7 records to out/\n"),
            "{}",
            r.stderr
        );
        assert!(
            r.stderr
                .contains("the absolute start 2026-03-01T12:00:00Z (UTC) has no place in elodin"),
            "{}",
            r.stderr
        );
        let r = run_in(tmp.path(), &["inspect", "--format", "json", "out"]).expect_code(0);
        let j = &r.json_lines()[0];
        let entities: Vec<(u64, &str)> = j["entities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["id"].as_u64().unwrap(), e["name"].as_str().unwrap()))
            .collect();
        // Globals after the three channels; the components as named entities.
        let named = 1u64 << 48;
        assert_eq!(
            entities,
            [
                (3, "Globals"),
                (named, "Vehicle.Nav"),
                (named + 1, "Vehicle.Aero"),
                (named + 2, "Vehicle.Mass")
            ]
        );
        assert_eq!(j["ticks"]["count"], 3);
        // 10 ms frames: the step, and times from tick 0.
        assert_eq!(j["start_ns"], 0);
        assert_eq!(j["end_ns"], 20_000_000);
        let r = run_in(
            tmp.path(),
            &["cat", "--format", "ndjson", "--channel", "Vehicle.*", "out"],
        )
        .expect_code(0);
        let rows: Vec<(i64, String, String)> = r
            .json_lines()
            .iter()
            .map(|l| {
                (
                    l["time_ns"].as_i64().unwrap(),
                    l["channel"].as_str().unwrap().to_string(),
                    l["values"].to_string(),
                )
            })
            .collect();
        let want = [
            // The archetypes are the components (one signal each here).
            (0, "Vehicle.Nav", r#"{"position":[1.0,2.0,3.0]}"#),
            (0, "Vehicle.Aero", r#"{"alpha":0.5}"#),
            (0, "Vehicle.Mass", r#"{"dry":1250.0}"#),
            (10_000_000, "Vehicle.Nav", r#"{"position":[1.5,2.5,3.5]}"#),
            (10_000_000, "Vehicle.Aero", r#"{"alpha":0.25}"#),
            (10_000_000, "Vehicle.Mass", r#"{"dry":1250.0}"#),
            (20_000_000, "Vehicle.Nav", r#"{"position":[2.0,3.0,4.0]}"#),
            (20_000_000, "Vehicle.Aero", r#"{"alpha":-0.125}"#),
            (20_000_000, "Vehicle.Mass", r#"{"dry":1250.0}"#),
        ];
        let want: Vec<(i64, String, String)> = want
            .iter()
            .map(|(t, c, v)| (*t, c.to_string(), v.to_string()))
            .collect();
        assert_eq!(rows, want, "{input}");
    }
}

#[test]
fn every_type_of_the_profile_converts_without_loss() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_in(
        tmp.path(),
        &[
            "convert",
            s(&icarec("types.icarec")),
            "-o",
            "out/",
            "--to",
            "elodin",
        ],
    )
    .expect_code(0);
    assert!(
        r.stderr.starts_with("wrote 20 records to out/\n"),
        "{}",
        r.stderr
    );
    // Bools are widened (Elodin cannot load bool columns), nothing is lost.
    assert!(
        r.stderr
            .contains("│ Sim.armed      ┆ armed      ┆ bool scalar stored as U32 0/1"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("could not be kept"), "{}", r.stderr);
    // One archetype per component (`Sim`, `Body`), each signal a component of it, in
    // metadata order (a component's archetype where its first signal is), and one row per
    // tick for the component's entity with every signal's value of that frame.
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("out/metadata.json")).unwrap())
            .unwrap();
    let archetypes: Vec<(&str, Vec<&str>)> = meta["archetypes"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, components)| {
            let names = components.as_array().unwrap().iter();
            (
                name.as_str(),
                names.map(|c| c["name"].as_str().unwrap()).collect(),
            )
        })
        .collect();
    assert_eq!(
        archetypes,
        [
            (
                "Sim",
                vec!["armed", "armed_slot", "count", "gain", "mode", "mode_slot"]
            ),
            ("Body", vec!["ids", "inertia", "m", "offsets", "q", "r"]),
            (
                "system_globals",
                vec!["simulation_tick", "simulation_time_step"]
            ),
            (
                "asset_handle_entity_metadata",
                vec!["asset_handle_entity_metadata"]
            ),
        ]
    );
    let r = run_in(
        tmp.path(),
        &["cat", "--format", "ndjson", "--channel", "Sim", "out"],
    )
    .expect_code(0);
    let first = &r.json_lines()[0];
    assert_eq!(first["entity"], serde_json::json!(1u64 << 48));
    assert_eq!(
        first["values"].to_string(),
        r#"{"armed":1,"armed_slot":1,"count":1152921504606846976,"gain":0.7854,"mode":-3,"mode_slot":-3}"#
    );
}

/// The command simrec is known by, as written: the output as the last argument, no `-o`.
/// It writes today's Elodin, a DB directory, stamped with the run's absolute start.
#[test]
fn convert_run_icarec_out_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    let a2 = util::any_fixture("icarec/a2.icarec");
    let r = util::run_in(tmp.path(), &["convert", util::s(&a2), "out/"]).expect_code(0);
    assert_eq!(r.stderr, "wrote 7 records to out/\n");
    assert!(tmp.path().join("out/db_state").is_file());
    let r = util::run_in(tmp.path(), &["inspect", "--format", "json", "out"]).expect_code(0);
    let j = &r.json_lines()[0];
    assert_eq!(j["format"], "elodin-db");
    // The DB's epoch is its first row's instant: a2's first frame, 10 ms after its start.
    assert_eq!(j["origin"]["epoch"], "2026-03-01T12:00:00.010000Z");
    let channels = crate::util::channel_counts(j);
    assert_eq!(
        channels,
        [
            ("Vehicle.Mass.dry", 1),
            ("Vehicle.Nav.position", 3),
            ("Vehicle.Aero.alpha", 3)
        ]
    );
    let r = util::run_in(tmp.path(), &["convert", util::s(&a2)]).expect_code(2);
    assert_eq!(
        r.stderr,
        "error: -o is missing: name the output with -o OUT (convert also takes it as its last \
         argument)\n"
    );
}
