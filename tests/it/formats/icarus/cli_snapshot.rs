//! `simrec snapshot REC --at T` (spec §A13, warm start): the frame choice, the JSON of every
//! type, states and their checks.

use crate::util;
use crate::util::{any_fixture as fixture, run_in, s};

/// `types.icarec`: frames at 0.5 s and 1.0 s, every type of the profile.
fn types(at: &str) -> util::Run {
    let tmp = tempfile::tempdir().unwrap();
    run_in(
        tmp.path(),
        &["snapshot", s(&fixture("icarec/types.icarec")), "--at", at],
    )
}

const TYPES_CHECKSUM: &str =
    "sha256:a25bd0038c1d3c804b24f4c0e4b69a58f05ace717a240e5798c469699d3a3966";

#[test]
fn every_type_prints_as_the_spec_table_says() {
    let r = types("0.7").expect_code(0);
    assert_eq!(
        r.stdout,
        format!(
            "{{\"requested_time\":0.7,\"time\":0.5,\"frame\":0,\"clamped\":false,\
             \"system\":\"MET\",\"epoch\":null,\"schema_checksum\":\"{TYPES_CHECKSUM}\",\
             \"signals\":{{\"Sim.count\":1152921504606846976,\"Sim.mode\":-3,\
             \"Sim.mode_slot\":-3,\"Sim.armed\":true,\"Sim.armed_slot\":true,\
             \"Body.q\":[1.0,0.0,0.0,0.0],\"Body.r\":[0.5,-1.5,2.25],\
             \"Body.m\":[1.0,4.0,7.0,2.0,5.0,8.0,3.0,6.0,9.0],\
             \"Body.inertia\":[10.0,0.5,0.0,0.5,20.0,0.0,0.0,0.0,30.0],\
             \"Body.offsets\":[-1,0,1],\"Body.ids\":[1,2,9007199254740993],\
             \"Sim.gain\":0.7854}}}}\n"
        )
    );
    assert!(
        r.stderr.contains(
            "warning ICAREC_WARMSTART_UNDECLARED: the schema does not say whether the \
             recording is warm-start compatible"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn the_nearest_frame_the_earlier_on_a_tie_clamped_at_the_ends() {
    let pick = |at: &str| {
        let j: serde_json::Value = serde_json::from_str(&types(at).expect_code(0).stdout).unwrap();
        (
            j["time"].as_f64().unwrap(),
            j["frame"].as_i64().unwrap(),
            j["clamped"].as_bool().unwrap(),
        )
    };
    assert_eq!(pick("0.75"), (0.5, 0, false));
    assert_eq!(pick("0.7500001"), (1.0, 1, false));
    assert_eq!(pick("0"), (0.5, 0, true));
    assert_eq!(pick("9"), (1.0, 1, true));
    assert_eq!(pick("#1"), (1.0, 1, false));
    assert_eq!(pick("#7"), (1.0, 1, true));
    assert_eq!(pick("-0.4s"), (0.5, 0, false));
    // The values are the frame's: Sim.count at frame 1.
    let j: serde_json::Value = serde_json::from_str(&types("1").stdout).unwrap();
    assert_eq!(j["signals"]["Sim.count"], -9_007_199_254_740_993i64);
    assert_eq!(
        j["signals"]["Body.m"],
        serde_json::json!([-1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0])
    );
}

#[test]
fn states_pair_with_their_derivatives_and_must_be_finite() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("run.csv"),
        "time,Body.p,Body.p_dot,Body.mass\n0.1,1.5,2,10\n0.2,nan,3,10\n",
    )
    .unwrap();
    let r = run_in(
        tmp.path(),
        &["snapshot", "run.csv", "--at", "0.1", "--states-only"],
    )
    .expect_code(0);
    assert_eq!(
        r.stdout,
        "{\"requested_time\":0.1,\"time\":0.1,\"frame\":0,\"clamped\":false,\"system\":\"MET\",\
         \"epoch\":null,\"schema_checksum\":null,\"signals\":{\"Body.p\":1.5}}\n"
    );
    assert_eq!(r.stderr, "");
    let r = run_in(tmp.path(), &["snapshot", "run.csv", "--at", "0.2"]).expect_code(1);
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr,
        "run.csv: error ICAREC_WARMSTART_NOT_FINITE: Body.p is not finite at frame 1 (t = 0.2 s)\n"
    );
}

#[test]
fn a_current_schema_names_the_states_and_required_signals_that_must_be_there() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("current.json"),
        r#"{"signals":[
            {"name":"Vehicle.Nav.position","type":"Vec3<double>","lifecycle":"dynamic","state":true},
            {"name":"Vehicle.Nav.velocity","type":"Vec3<double>","lifecycle":"dynamic","state":true},
            {"name":"Vehicle.Mass.dry","type":"float","lifecycle":"static","required":true}]}"#,
    )
    .unwrap();
    let a2 = fixture("icarec/a2.icarec");
    let r = run_in(
        tmp.path(),
        &[
            "snapshot",
            s(&a2),
            "--at",
            "0.02",
            "--against",
            "current.json",
        ],
    )
    .expect_code(1);
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr,
        format!(
            "{}: error ICAREC_WARMSTART_MISSING_STATE: Vehicle.Nav.velocity, a state or \
             required signal, is not in the recording\n",
            a2.display()
        )
    );
    let r = run_in(
        tmp.path(),
        &["snapshot", s(&a2), "--at", "0.02", "--states-only"],
    )
    .expect_code(0);
    // a2 declares warm-start compatibility and has no states of its own.
    assert!(r.stdout.ends_with("\"signals\":{}}\n"), "{}", r.stdout);
    assert!(r.stdout.contains("\"epoch\":\"2026-03-01T12:00:00Z\""));
}

#[test]
fn a_recording_of_another_family_has_no_snapshot() {
    let tmp = tempfile::tempdir().unwrap();
    let traj = fixture("nanover-legacy/small.traj");
    let r = run_in(tmp.path(), &["snapshot", s(&traj), "--at", "1"]).expect_code(1);
    assert_eq!(
        r.stderr,
        format!(
            "error: {}: a nanover-legacy recording has no warm-start state; snapshot reads \
             Icarus recordings\n",
            traj.display()
        )
    );
}
