//! JSON Lines as simrec prints them, the fields of one record, and the NanoVer frame and
//! state folded from them.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::fixtures::s;
use super::run::run;

/// One JSON value per non-empty line.
pub fn parse_json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l:?}: {e}")))
        .collect()
}

/// A `.jsonl` file, one value per line.
pub fn read_jsonl(path: &Path) -> Vec<Value> {
    parse_json_lines(&std::fs::read_to_string(path).unwrap())
}

/// The small pair as JSON Lines (one object per record, merged by time), made by `convert`.
pub fn small_pair_jsonl() -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("full.jsonl");
    run(&["convert", "small.traj", "small.state", "-o", s(&out)]).expect_code(0);
    read_jsonl(&out)
}

pub fn time_ns(r: &Value) -> i64 {
    r["time_ns"]
        .as_i64()
        .unwrap_or_else(|| panic!("no integer time_ns in {r}"))
}

pub fn channel(r: &Value) -> &str {
    r["channel"].as_str().unwrap()
}

pub fn frame(r: &Value) -> Option<u64> {
    r.get("frame").and_then(Value::as_u64)
}

pub fn keys(r: &Value) -> Vec<String> {
    let mut k: Vec<String> = r["values"].as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

pub fn removed(r: &Value) -> Vec<String> {
    match r.get("removed") {
        Some(Value::Array(a)) => a.iter().map(|v| v.as_str().unwrap().to_string()).collect(),
        _ => Vec::new(),
    }
}

/// The aggregate frame and the full state folded from every record with time < `before`
/// (in the order given), and how many frame and state records were folded.
pub struct Folded {
    pub frame: BTreeMap<String, Value>,
    pub state: BTreeMap<String, Value>,
    pub frames: usize,
    pub states: usize,
}

pub fn fold(records: &[Value], before: i64) -> Folded {
    let mut f = Folded {
        frame: BTreeMap::new(),
        state: BTreeMap::new(),
        frames: 0,
        states: 0,
    };
    for r in records.iter().filter(|r| time_ns(r) < before) {
        let values = r["values"].as_object().unwrap();
        match channel(r) {
            "frame" => {
                f.frames += 1;
                if frame(r) == Some(0) {
                    f.frame.clear();
                }
                for (k, v) in values {
                    f.frame.insert(k.clone(), v.clone());
                }
            }
            "state" => {
                f.states += 1;
                for (k, v) in values {
                    f.state.insert(k.clone(), v.clone());
                }
                for k in removed(r) {
                    f.state.remove(&k);
                }
            }
            other => panic!("unexpected channel {other}"),
        }
    }
    f
}

/// The `values` of a record as a sorted map.
pub fn values_map(r: &Value) -> BTreeMap<String, Value> {
    r["values"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// A JSON array of numbers.
pub fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// `inspect --format json`'s channels as (name, records), in their order.
pub fn channel_counts(summary: &Value) -> Vec<(&str, u64)> {
    summary["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["records"].as_u64().unwrap()))
        .collect()
}
