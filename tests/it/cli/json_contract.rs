//! The JSON of `inspect` and `validate` is a contract (docs/schema/*.schema.json): every
//! object simrec prints for every fixture, healthy or damaged, plain or `--deep`, matches its
//! schema; unset values are null, never a sentinel like `u64::MAX`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util;
use crate::util::schema::Validator;

fn validators() -> (Validator, Validator) {
    (
        Validator::contract("inspect.schema.json"),
        Validator::contract("validate.schema.json"),
    )
}

/// Every recording under `fixtures/`: files of the file formats, Elodin `world/` dirs and
/// `.icarec` directories.
fn fixtures() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                let icarec = p.join("schema.json").is_file();
                if icarec || p.join("metadata.json").is_file() && p.join("assets.bin").exists() {
                    out.push(p);
                } else {
                    walk(&p, out);
                }
            } else if [".traj", ".state", ".zip", ".3es", ".icarec.tar"]
                .iter()
                .any(|e| name.ends_with(e))
                || (name.ends_with(".csv") && dir.ends_with("icarus-csv"))
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&util::any_fixture(""), &mut out);
    out.sort();
    out
}

/// Every number in `v`, with where it is.
fn numbers<'a>(v: &'a Value, at: String, out: &mut Vec<(String, &'a Value)>) {
    match v {
        Value::Number(_) => out.push((at, v)),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| numbers(x, format!("{at}[{i}]"), out)),
        Value::Object(o) => o
            .iter()
            .for_each(|(k, x)| numbers(x, format!("{at}.{k}"), out)),
        _ => {}
    }
}

#[test]
fn every_inspect_and_validate_object_matches_its_schema() {
    let (inspect, validate) = validators();
    let files = fixtures();
    assert!(files.len() > 40, "{}", files.len());
    let mut objects = 0;
    for file in &files {
        let path = file.to_str().unwrap();
        for (args, validator) in [
            (vec!["inspect", "--format", "json", path], &inspect),
            (
                vec!["inspect", "--deep", "--format", "json", path],
                &inspect,
            ),
            (vec!["validate", "--format", "json", path], &validate),
        ] {
            let out = util::simrec().args(&args).output().unwrap();
            let text = String::from_utf8(out.stdout).unwrap();
            for line in text.lines() {
                let v: Value = serde_json::from_str(line).unwrap();
                let errors = validator.errors(&v);
                assert!(errors.is_empty(), "{args:?}: {errors:?}");
                let mut found = Vec::new();
                numbers(&v, String::new(), &mut found);
                for (at, n) in found {
                    assert_ne!(n.as_u64(), Some(u64::MAX), "{args:?}: {at}");
                }
                objects += 1;
            }
        }
    }
    assert!(objects >= 3 * files.len(), "{objects}");
}

#[test]
fn unreadable_files_match_the_schema_too() {
    let (inspect, validate) = validators();
    let r = util::run(&[
        "inspect",
        "--format",
        "json",
        "missing.traj",
        "broken/empty.traj",
    ]);
    for line in r.stdout.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert!(inspect.is_valid(&v), "{v}");
        assert_eq!(v["schema_version"], 1);
    }
    let r = util::run(&["validate", "--format", "json", "missing.traj"]);
    let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert!(validate.is_valid(&v), "{v}");
}

#[test]
fn icarec_origin_is_present_with_an_epoch_and_null_without() {
    let (inspect, _) = validators();
    let dir = util::any_fixture("icarec");
    for (name, origin) in [
        (
            "a2.icarec",
            serde_json::json!({"epoch": "2026-03-01T12:00:00Z", "system": "UTC"}),
        ),
        (
            "a2.icarec.tar",
            serde_json::json!({"epoch": "2026-03-01T12:00:00Z", "system": "UTC"}),
        ),
        ("types.icarec", Value::Null),
    ] {
        let path = dir.join(name);
        let r = util::run(&["inspect", "--format", "json", path.to_str().unwrap()]);
        let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
        assert!(inspect.is_valid(&v), "{name}: {v}");
        assert_eq!(v["origin"], origin, "{name}");
        // Times are relative to the epoch, never absolute.
        assert!(v["start_ns"].as_i64().unwrap() < 1_000_000_000, "{name}");
    }
}

#[test]
fn a_batch_ends_with_a_summary_object_in_the_schema() {
    let (inspect, validate) = validators();
    let dir = tempfile::tempdir().unwrap();
    util::lab(dir.path());
    for (command, validator) in [("inspect", &inspect), ("validate", &validate)] {
        let r = util::run_in(dir.path(), &[command, "--format", "json", "lab"]);
        let lines = r.json_lines();
        for v in &lines {
            let errors = validator.errors(v);
            assert!(errors.is_empty(), "{command}: {v}: {errors:?}");
        }
        let last = lines.last().unwrap();
        assert_eq!(
            last["summary"],
            serde_json::json!({"recordings": 4, "ok": 3, "with_errors": 1, "skipped": 3}),
            "{command}"
        );
        assert_eq!(lines.len(), 6, "{command}: five files and the summary");
    }
}
