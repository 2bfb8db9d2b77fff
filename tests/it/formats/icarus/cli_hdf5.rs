//! `simrec` on Icarus HDF5 files (spec icarec.md Part B), through the built binary:
//! `inspect` facts, `validate` codes and exit codes, `convert` HDF5 → HDF5 (exit 0, values
//! kept), float32 widened (exit 0, reported), a crashed file refused by convert (exit 1)
//! and kept by recover (exit 3). `scripts/interop/icarus_hdf5.sh` reads the same outputs
//! with h5py.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util;
use crate::util::{run_in, s};

fn dir() -> PathBuf {
    util::any_fixture("icarus-hdf5")
}

fn run(args: &[&str]) -> util::Run {
    run_in(&dir(), args)
}

/// Issue 27, item C: the 3.4 KB file whose gzip datasets declare 10^12 rows, none written,
/// is inspected at once, its warnings counted. The timeout only stops a broken build from
/// hanging the test run (it ran forever); it measures nothing.
#[test]
fn inspect_of_rows_never_written_finishes_with_warnings() {
    let out = util::simrec()
        .current_dir(dir())
        .args(["inspect", "hostile/hang.h5"])
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "killed by the timeout: it hangs"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("│ records     ┆ 0 "), "{stdout}");
    assert!(stdout.contains("│ frames      ┆ 0 "), "{stdout}");
    assert!(
        stdout.contains("0 errors, 3 warnings: run `simrec validate hostile/hang.h5`"),
        "{stdout}"
    );
    let r = run(&["validate", "hostile/hang.h5"]).expect_code(0);
    assert!(r.stdout.contains("warning ICARUS_H5_STORAGE: /time declares 1000000000000 rows but none of its chunks was written"), "{}", r.stdout);
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
    let out = util::simrec()
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
    let out = util::simrec()
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

/// `/time` of an HDF5 file, as stored.
fn h5_times(path: &Path) -> Vec<f64> {
    let f = hdf5_pure::File::open(path).unwrap();
    f.dataset("time").unwrap().read_f64().unwrap()
}

/// The frame times of an `.icarec` directory, as stored (`frame` bytes a frame).
fn icarec_times(dir: &Path, frame: usize) -> Vec<f64> {
    let data = std::fs::read(dir.join("dynamic_signals.bin")).unwrap();
    data.chunks_exact(frame)
        .map(|f| f64::from_le_bytes(f[..8].try_into().unwrap()))
        .collect()
}

/// Panics unless `got` holds `want`'s times bit for bit, naming the first that differs.
fn assert_same_bits(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: frames");
    let differ = got
        .iter()
        .zip(want)
        .filter(|(a, b)| a.to_bits() != b.to_bits());
    if let Some((a, b)) = differ.clone().next() {
        panic!(
            "{what}: {} times differ, first {a:?} for {b:?}",
            differ.count()
        );
    }
}

/// Issue 27, item 3: times are exact. A simulation's clock in f64 (k × 0.05 s:
/// 0.35000000000000003, …) is not whole nanoseconds; `.icarec` → `.h5` → `.icarec` and
/// `.h5` → `.icarec` → `.h5` keep every time bit for bit (they used to round 1,799 of these
/// 5,000 to the nearest nanosecond), by the frame path and by the record path alike.
#[test]
fn float_second_times_survive_icarus_conversions_bit_for_bit() {
    let tmp = tempfile::tempdir().unwrap();
    let a2 = util::any_fixture("icarec/a2.icarec");
    let run_dir = tmp.path().join("run.icarec");
    std::fs::create_dir(&run_dir).unwrap();
    for part in ["schema.json", "static_signals.bin"] {
        std::fs::copy(a2.join(part), run_dir.join(part)).unwrap();
    }
    // a2's layout: f64 time, Vec3<double> position, double alpha (40 bytes a frame).
    let times: Vec<f64> = (1..=5000).map(|k| f64::from(k) * 0.05).collect();
    let finer = |t: &&f64| ((**t * 1e9).round() / 1e9).to_bits() != t.to_bits();
    assert_eq!(times.iter().filter(finer).count(), 1799);
    assert_eq!(times[6], 0.35000000000000003);
    let mut frames = Vec::new();
    for (k, t) in times.iter().enumerate() {
        for v in [*t, k as f64, 1.0, 2.0, 0.5] {
            frames.extend_from_slice(&v.to_le_bytes());
        }
    }
    std::fs::write(run_dir.join("dynamic_signals.bin"), frames).unwrap();
    let go = |args: &[&str]| run_in(tmp.path(), args).expect_code(0);
    // Whole frames, and (with a selection) record by record.
    for (i, select) in [&[][..], &["--channel", "*"][..]].into_iter().enumerate() {
        let (h5, back, again) = (
            format!("a{i}.h5"),
            format!("b{i}.icarec"),
            format!("c{i}.h5"),
        );
        go(&[&["convert", "run.icarec", "-o", &h5][..], select].concat());
        assert_same_bits(&h5_times(&tmp.path().join(&h5)), &times, &h5);
        go(&[&["convert", &h5, "-o", &back][..], select].concat());
        assert_same_bits(&icarec_times(&tmp.path().join(&back), 40), &times, &back);
        go(&[&["convert", &back, "-o", &again][..], select].concat());
        assert_same_bits(&h5_times(&tmp.path().join(&again)), &times, &again);
    }
    // XREC keeps them too (a session of another source begins at 0 s; what else an XREC
    // event carries has no HDF5 column).
    go(&["convert", "run.icarec", "-o", "x.xrec"]);
    run_in(tmp.path(), &["convert", "x.xrec", "-o", "x.h5"]).expect_code(3);
    assert_same_bits(&h5_times(&tmp.path().join("x.h5")), &times, "x.xrec");
}

/// Item 3 with a CSV: its text (`%.15g`) is what it keeps, and a time with more decimals
/// than whole nanoseconds hold comes back as the same text through `.h5` and `.icarec`.
#[test]
fn csv_times_finer_than_a_nanosecond_survive_icarus_conversions() {
    let tmp = tempfile::tempdir().unwrap();
    let mut csv = String::from("time,A.x\n");
    for k in 1..=200u64 {
        // 12 decimals, the last never 0: the shortest text of its f64.
        let fraction = (k * 123_456_789_011) % 100_000_000_000 * 10 + k % 9 + 1;
        csv.push_str(&format!("{k}.{fraction:012},{k}\n"));
    }
    std::fs::write(tmp.path().join("src.csv"), &csv).unwrap();
    for via in ["m.h5", "m.icarec"] {
        run_in(tmp.path(), &["convert", "src.csv", "-o", via, "--force"]).expect_code(0);
        let out = format!("back-{via}.csv");
        run_in(tmp.path(), &["convert", via, "-o", &out]).expect_code(0);
        let back = std::fs::read_to_string(tmp.path().join(&out)).unwrap();
        assert_eq!(back, csv, "{via}");
    }
}

/// Issue 27, item 4: an HDF5 → HDF5 copy (by frames, and record by record) and a slice keep
/// `/metadata` `created_at`: when the recording was made, not when it was copied.
#[test]
fn an_hdf5_copy_keeps_created_at() {
    let tmp = tempfile::tempdir().unwrap();
    let created = |p: &Path| {
        let f = hdf5_pure::File::open(p).unwrap();
        let attrs = f.group("metadata").unwrap().attrs().unwrap();
        match attrs.get("created_at") {
            Some(
                hdf5_pure::AttrValue::VarLenString(t) | hdf5_pure::AttrValue::VarLenAsciiString(t),
            ) => Some(t.clone()),
            _ => None,
        }
    };
    let source = created(&dir().join("small.h5"));
    assert!(source.is_some());
    for (out, extra) in [
        ("frames.h5", &[][..]),
        ("records.h5", &["--channel", "*"][..]),
        ("slice.h5", &["--start", "0.02"][..]),
    ] {
        let out = tmp.path().join(out);
        run(&[&["convert", "small.h5", "-o", s(&out)][..], extra].concat()).expect_code(0);
        assert_eq!(created(&out), source, "{}", out.display());
    }
}
