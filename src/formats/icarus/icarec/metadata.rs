//! `metadata.json` (spec §A9): written last, it says whether the recording was closed
//! cleanly (`complete`), how many frames it has, their first and last times and the digests
//! of the two data files. Its rules are checked once the data has been read.

use serde_json::{Map, Value as Json};

use super::codes::*;
use crate::report::{Finding, Severity};

pub const FILE: &str = "metadata.json";

/// Largest `metadata.json` read (real ones are a few hundred bytes).
pub const MAX_BYTES: u64 = 64 << 20;

fn finding(severity: Severity, code: &'static str, message: String) -> Finding {
    Finding::new(severity, code, format!("{FILE}: {message}"))
}

/// Parses `metadata.json`: the object, or the `ICAREC_METADATA_JSON` error.
pub fn parse(bytes: &[u8]) -> Result<Map<String, Json>, Finding> {
    match serde_json::from_slice::<Json>(bytes) {
        Ok(Json::Object(o)) => Ok(o),
        Ok(other) => Err(finding(
            Severity::Error,
            METADATA_JSON,
            format!("not a JSON object but {}", kind(&other)),
        )),
        Err(e) => Err(finding(
            Severity::Error,
            METADATA_JSON,
            format!("not valid JSON: {e}"),
        )),
    }
}

fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a bool",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// Whether the writer closed the recording cleanly.
pub fn complete(m: &Map<String, Json>) -> bool {
    m.get("complete") == Some(&Json::Bool(true))
}

/// What the data turned out to be, to check the metadata against.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// Whole frames.
    pub frames: u64,
    pub t_first: Option<f64>,
    pub t_last: Option<f64>,
    /// (name, bytes, SHA-256 hex) of each data file, when its digest was computed.
    pub files: Vec<(&'static str, u64, Option<String>)>,
}

/// The §A9 rules that need the data: `complete`, required keys, counts, digests.
pub fn check(m: &Map<String, Json>, seen: &Observed) -> Vec<Finding> {
    let mut out = Vec::new();
    if !complete(m) {
        out.push(
            finding(
                Severity::Warning,
                INCOMPLETE,
                format!(
                    "complete is {}: the recording was not finished cleanly (its writer did not close it)",
                    m.get("complete").map_or("absent".to_string(), |v| v.to_string())
                ),
            )
            .hint("`simrec recover` writes the whole frames again with complete: true"),
        );
        // A live writer's opening metadata: its counts are not expected to hold.
        return out;
    }
    let declared_frames = m.get("frame_count").and_then(Json::as_u64);
    let mut required = vec!["frame_count", "files"];
    if declared_frames.unwrap_or(seen.frames) > 0 {
        required.extend(["t_first", "t_last"]);
    }
    for key in required {
        if !m.contains_key(key) {
            out.push(finding(
                Severity::Warning,
                METADATA_KEY,
                format!("complete is true but there is no `{key}`"),
            ));
        }
    }
    let mismatch = |what: String| finding(Severity::Error, COUNT_MISMATCH, what);
    if let Some(v) = m.get("frame_count") {
        if v.as_u64() != Some(seen.frames) {
            out.push(mismatch(format!(
                "frame_count is {v} but dynamic_signals.bin holds {} whole frames",
                seen.frames
            )));
        }
    }
    for (key, t) in [("t_first", seen.t_first), ("t_last", seen.t_last)] {
        let Some(v) = m.get(key) else { continue };
        let same = match (v.as_f64(), t) {
            (Some(a), Some(b)) => a == b || (a.is_nan() && b.is_nan()),
            _ => false,
        };
        if !same {
            out.push(mismatch(format!(
                "{key} is {v} but the data's {} time is {}",
                if key == "t_first" { "first" } else { "last" },
                t.map_or("absent (no frames)".to_string(), |t| format!("{t:?}"))
            )));
        }
    }
    let files = m.get("files").and_then(Json::as_object);
    for (name, bytes, sha) in &seen.files {
        let Some(entry) = files.and_then(|f| f.get(*name)) else {
            continue;
        };
        if let Some(b) = entry.get("bytes") {
            if b.as_u64() != Some(*bytes) {
                out.push(finding(
                    Severity::Error,
                    DIGEST_MISMATCH,
                    format!("files.{name}.bytes is {b} but the file has {bytes} bytes"),
                ));
            }
        }
        if let (Some(declared), Some(sha)) = (entry.get("sha256"), sha) {
            if declared.as_str() != Some(sha.as_str()) {
                out.push(finding(
                    Severity::Error,
                    DIGEST_MISMATCH,
                    format!("files.{name}.sha256 is {declared} but the file's is {sha}"),
                ));
            }
        }
    }
    out
}

/// A JSON number for a time that round-trips the f64 exactly (`null` when not finite).
pub fn time_json(t: f64) -> Json {
    serde_json::Number::from_f64(t).map_or(Json::Null, Json::Number)
}
