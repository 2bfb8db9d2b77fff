//! `simrec` on Icarus HDF5 files (spec icarec.md Part B), through the built binary:
//! `inspect` facts, `validate` codes and exit codes, `convert` HDF5 → HDF5 (exit 0, values
//! kept), float32 widened (exit 0, reported), a crashed file refused by convert (exit 1)
//! and kept by recover (exit 3). `scripts/interop/icarus_hdf5.sh` reads the same outputs
//! with h5py.

mod common;

use std::path::{Path, PathBuf};

use common::{run_in, s};
use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/icarus-hdf5")
}

fn run(args: &[&str]) -> common::Run {
    run_in(&dir(), args)
}

#[test]
fn inspect_reports_signals_frames_steps_and_schema() {
    let r = run(&["inspect", "--format", "json", "vulcan.h5"]).expect_code(0);
    let j: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(j["format"], "icarus-hdf5");
    assert_eq!(j["origin"], Value::Null);
    assert_eq!(j["records"], 20000);
    assert_eq!(j["start_ns"], 10_000_000);
    assert_eq!(j["end_ns"], 25_000_000_000i64);
    assert_eq!(j["channels"][6]["name"], "Rocket.Clock.ticks");
    assert_eq!(j["channels"][6]["records"], 2500);
    assert_eq!(j["frames"], 2500);
    assert_eq!(j["created_at"], "2026-03-01T12:00:00Z");
    assert_eq!(j["schema"], "strict");
    assert_eq!(
        j["signals"][4],
        serde_json::json!({"name": "Rocket.Engine.ignited", "type": "int32", "unit": null,
            "semantic": "boolean", "lifecycle": "dynamic"})
    );
    assert_eq!(j["signals"][7]["lifecycle"], "static");
    assert_eq!(j["signals"][7]["unit"], "kg");
    let steps = &j["time_steps"];
    assert_eq!(steps["irregular"], 0);
    assert_eq!(steps["mean"], 0.01);
    assert!(steps["min"].as_f64().unwrap() > 0.00999 && steps["max"].as_f64().unwrap() < 0.01001);

    let r = run(&["inspect", "unescaped.h5"]).expect_code(0);
    assert!(r.stdout.contains("│ schema      ┆ lenient"), "{}", r.stdout);
    assert!(
        r.stdout.contains("Rocket.Sensor.say\"hi\" float64 [in\"]"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("Rocket.Sensor.dir\\name int64 static"),
        "{}",
        r.stdout
    );
}

#[test]
fn validate_codes_and_exit_codes() {
    let r = run(&["validate", "vulcan.h5"]).expect_code(0);
    assert_eq!(r.stdout, "vulcan.h5: ok (0 errors, 0 warnings, 1 info)\n");

    let r = run(&["validate", "crashed.h5"]).expect_code(1);
    assert_eq!(
        r.stdout,
        "crashed.h5: FAILED (1 error, 0 warnings, 1 info)\n  error ICARUS_H5_LENGTH: /signals/Vehicle.b has 1200 rows, /time has 1201 (the run likely stopped between two writes); 1200 frames are read\n"
    );

    // --deep adds the NaN/infinity check per signal; warnings alone exit 0.
    let r = run(&["validate", "--format", "json", "noschema.h5"]).expect_code(0);
    let j: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    let codes: Vec<&str> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["ICARUS_H5_SCHEMA", "ICARUS_H5_NO_EPOCH"]);
    let r = run(&["validate", "--deep", "--format", "json", "noschema.h5"]).expect_code(0);
    let j: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    let last = &j["findings"][2];
    assert_eq!(last["code"], "ICARUS_H5_NONFINITE");
    assert_eq!(last["severity"], "warning");
    assert_eq!(last["record"], 2);
    assert_eq!(
        (j["warnings"].as_u64(), j["ok"].as_bool()),
        (Some(2), Some(true))
    );
    // --strict makes the warnings errors.
    run(&["validate", "--strict", "noschema.h5"]).expect_code(1);

    // Not HDF5, but named .h5.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("fake.h5"), b"not an HDF5 file\n").unwrap();
    let r = run_in(tmp.path(), &["validate", "fake.h5"]).expect_code(1);
    assert!(
        r.stdout
            .contains("error ICARUS_H5_NOT_HDF5: no HDF5 signature"),
        "{}",
        r.stdout
    );
}

#[test]
fn convert_hdf5_to_hdf5_keeps_every_value() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.h5");
    let r = run(&["convert", "vulcan.h5", "-o", s(&out)]).expect_code(0);
    assert_eq!(r.stderr, format!("wrote 20000 records to {}\n", s(&out)));
    // The copy reads back as the source does, record for record.
    let a = run(&["convert", "vulcan.h5", "-o", s(&tmp.path().join("a.jsonl"))]).expect_code(0);
    let b = run(&["convert", s(&out), "-o", s(&tmp.path().join("b.jsonl"))]).expect_code(0);
    assert!(a.stderr.contains("wrote 20000 records") && b.stderr.contains("wrote 20000 records"));
    let (ja, jb) = (
        std::fs::read(tmp.path().join("a.jsonl")).unwrap(),
        std::fs::read(tmp.path().join("b.jsonl")).unwrap(),
    );
    assert_eq!(ja.len(), jb.len());
    assert!(
        ja == jb,
        "the JSON Lines of the source and of the copy differ"
    );
    let r = run(&["validate", s(&out)]).expect_code(0);
    assert!(
        r.stdout.ends_with(": ok (0 errors, 0 warnings, 1 info)\n"),
        "{}",
        r.stdout
    );
    // An existing output is refused without --force.
    run(&["convert", "vulcan.h5", "-o", s(&out)]).expect_code(2);
    run(&["convert", "vulcan.h5", "-o", s(&out), "--force"]).expect_code(0);
}

#[test]
fn float32_is_widened_and_reported_with_exit_0() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("n.h5");
    let r = run(&["convert", "noschema.h5", "-o", s(&out)]).expect_code(0);
    assert!(
        r.stderr.contains("some values were kept in a wider type:"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("│ b.second ┆ second ┆ float stored as float64       ┆ 5       │"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_crashed_file_is_refused_by_strict_convert_and_kept_by_recover() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("a.h5");
    let r = run(&["convert", "--strict", "crashed.h5", "-o", s(&out)]).expect_code(1);
    assert!(
        r.stderr
            .starts_with("error: crashed.h5: ICARUS_H5_LENGTH: /signals/Vehicle.b has 1200 rows"),
        "{}",
        r.stderr
    );
    assert!(!out.exists());
    let fixed = tmp.path().join("fixed.h5");
    let r = run(&["recover", "crashed.h5", "-o", s(&fixed)]).expect_code(3);
    assert!(r.stderr.contains("kept 2400 records"), "{}", r.stderr);
    let r = run(&["inspect", "--format", "json", s(&fixed)]).expect_code(0);
    let j: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(
        (j["frames"].as_u64(), j["end_ns"].as_i64()),
        (Some(1200), Some(12_000_000_000))
    );
    run(&["validate", s(&fixed)]).expect_code(0);
}

#[test]
fn hdf5_is_told_by_its_bytes_whatever_its_name() {
    let tmp = tempfile::tempdir().unwrap();
    let renamed = tmp.path().join("recording.bin");
    std::fs::copy(dir().join("small.h5"), &renamed).unwrap();
    let r = run_in(
        tmp.path(),
        &["inspect", "--format", "json", "recording.bin"],
    )
    .expect_code(0);
    let j: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(
        (j["format"].as_str(), j["records"].as_u64()),
        (Some("icarus-hdf5"), Some(6))
    );
}

#[test]
fn standard_output_and_dry_runs() {
    // `-o -` spools the file and copies it out whole once it is complete.
    let out = common::simrec()
        .current_dir(dir())
        .args(["convert", "small.h5", "-o", "-", "--to", "icarus-hdf5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(&out.stdout[..8], b"\x89HDF\r\n\x1a\n");
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("copy.h5");
    std::fs::write(&copy, &out.stdout).unwrap();
    let r = run(&["inspect", "--format", "json", s(&copy)]).expect_code(0);
    let j: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(
        (j["records"].as_u64(), j["frames"].as_u64()),
        (Some(6), Some(3))
    );
    run(&["validate", s(&copy)]).expect_code(0);

    // A dry run writes nothing: neither the target nor a scratch file left behind.
    let tmp = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let target = tmp.path().join("dry.h5");
    let out = common::simrec()
        .current_dir(dir())
        .env("TMPDIR", scratch.path())
        .args(["convert", "--dry-run", "noschema.h5", "-o", s(&target)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("15 records would be written as icarus-hdf5\nnothing would be lost\n"),
        "{stdout}"
    );
    assert!(!target.exists());
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
}
