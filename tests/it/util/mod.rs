//! Helpers shared by the `cli_*` end-to-end tests: run the built `simrec` binary, read the
//! fixtures, parse NanoVer framing and JSON Lines, and fold frames and state.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

/// `fixtures/nanover-legacy/<rel>` in this checkout.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/nanover-legacy")
        .join(rel)
}

/// `fixtures/<rel>` in this checkout, for any format.
pub fn any_fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

/// The bytes of a fixture.
pub fn fixture_bytes(rel: &str) -> Vec<u8> {
    std::fs::read(fixture(rel)).unwrap()
}

/// A command running the built binary.
pub fn simrec() -> Command {
    Command::cargo_bin("simrec").unwrap()
}

/// Everything one run produced.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub raw_stdout: Vec<u8>,
}

impl Run {
    fn from(output: Output) -> Run {
        Run {
            code: output.status.code().expect("killed by a signal"),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            raw_stdout: output.stdout,
        }
    }

    /// Panics with both streams unless the exit code is `code`.
    pub fn expect_code(self, code: i32) -> Run {
        assert_eq!(
            self.code, code,
            "unexpected exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// One JSON value per non-empty stdout line.
    pub fn json_lines(&self) -> Vec<Value> {
        parse_json_lines(&self.stdout)
    }
}

/// Runs `simrec ARGS` in `dir` (the test's temp dir), with no standard input.
pub fn run_in(dir: &Path, args: &[&str]) -> Run {
    Run::from(
        simrec()
            .current_dir(dir)
            .args(args)
            .write_stdin(Vec::<u8>::new())
            .output()
            .unwrap(),
    )
}

/// Runs `simrec ARGS` in the fixture directory (so paths in messages are short).
pub fn run(args: &[&str]) -> Run {
    run_in(&fixture(""), args)
}

/// Runs `simrec ARGS` with `stdin` as standard input.
pub fn run_with_stdin(args: &[&str], stdin: Vec<u8>) -> Run {
    Run::from(
        simrec()
            .current_dir(fixture(""))
            .args(args)
            .write_stdin(stdin)
            .output()
            .unwrap(),
    )
}

/// A path as a `&str` for an argument list.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

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

/// Names of every entry in `dir`, hidden ones included, sorted.
pub fn dir_entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

pub const MAGIC: [u8; 8] = [0xe3, 0xb7, 0x89, 0x99, 0xc4, 0xe3, 0x71, 0x5c];

/// One record of a NanoVer v2 file, as framed on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRecord {
    /// Byte offset of the record header in the file.
    pub offset: usize,
    /// Timestamp, µs.
    pub time_us: u64,
    pub payload: Vec<u8>,
}

impl RawRecord {
    /// The 24-byte header and the payload, as written.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.payload.len());
        out.extend_from_slice(&(self.time_us as u128).to_le_bytes());
        out.extend_from_slice(&(self.payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.payload);
        out
    }
}

/// Parses a well-formed v2 file (panics on anything else: the tests only feed it good files).
pub fn raw_records(bytes: &[u8]) -> Vec<RawRecord> {
    assert!(bytes.len() >= 16, "shorter than a header");
    assert_eq!(bytes[..8], MAGIC, "magic");
    assert_eq!(u64::from_le_bytes(bytes[8..16].try_into().unwrap()), 2);
    let mut out = Vec::new();
    let mut p = 16;
    while p < bytes.len() {
        assert!(p + 24 <= bytes.len(), "partial record header at {p}");
        let time = u128::from_le_bytes(bytes[p..p + 16].try_into().unwrap());
        let len = u64::from_le_bytes(bytes[p + 16..p + 24].try_into().unwrap()) as usize;
        assert!(p + 24 + len <= bytes.len(), "partial payload at {p}");
        out.push(RawRecord {
            offset: p,
            time_us: u64::try_from(time).unwrap(),
            payload: bytes[p + 24..p + 24 + len].to_vec(),
        });
        p += 24 + len;
    }
    out
}

pub fn raw_records_of(path: &Path) -> Vec<RawRecord> {
    raw_records(&std::fs::read(path).unwrap())
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

/// Asserts two byte strings are equal without dumping them: reports lengths and the first
/// differing offset.
#[track_caller]
pub fn assert_same_bytes(got: &[u8], want: &[u8], what: &str) {
    if got != want {
        let at = got
            .iter()
            .zip(want)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(want.len()));
        panic!(
            "{what}: bytes differ (got {} bytes, want {}; first difference at byte {at})",
            got.len(),
            want.len()
        );
    }
}

/// Asserts the file at `path` holds exactly `want`.
#[track_caller]
pub fn assert_file_bytes(path: &Path, want: &[u8]) {
    let got = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_same_bytes(&got, want, &path.display().to_string());
}

/// Asserts two record lists have the same timestamps and payload bytes (offsets aside).
#[track_caller]
pub fn assert_same_records(got: &[RawRecord], want: &[RawRecord]) {
    assert_eq!(got.len(), want.len(), "record count");
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert_eq!(a.time_us, b.time_us, "timestamp of record {i}");
        assert_same_bytes(&a.payload, &b.payload, &format!("payload of record {i}"));
    }
}

/// A stored `.nanover.zip` around `messages` and `index`, as NanoVer's writer lays it
/// out (spec §2.1; byte-identical to the writer's own, tests/nanover_zip_index.rs checks).
pub fn nanover_zip_archive(messages: &[u8], index: &[u8]) -> Vec<u8> {
    let (mc, ic) = (crc32fast::hash(messages), crc32fast::hash(index));
    let (m, i) = (messages.len() as u32, index.len() as u32);
    let local = |version: u16, crc: u32, size: u32, name: &str, extra: u16| {
        let mut h = vec![0x50, 0x4b, 3, 4];
        h.extend_from_slice(&version.to_le_bytes());
        h.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x21, 0]);
        h.extend_from_slice(&crc.to_le_bytes());
        h.extend_from_slice(&size.to_le_bytes());
        h.extend_from_slice(&size.to_le_bytes());
        h.extend_from_slice(&(name.len() as u16).to_le_bytes());
        h.extend_from_slice(&extra.to_le_bytes());
        h.extend_from_slice(name.as_bytes());
        h
    };
    let central = |version: u16, crc: u32, size: u32, name: &str, offset: u32| {
        let mut h = vec![0x50, 0x4b, 1, 2];
        h.extend_from_slice(&(0x0300 | version).to_le_bytes());
        h.extend_from_slice(&version.to_le_bytes());
        h.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x21, 0]);
        h.extend_from_slice(&crc.to_le_bytes());
        h.extend_from_slice(&size.to_le_bytes());
        h.extend_from_slice(&size.to_le_bytes());
        h.extend_from_slice(&(name.len() as u16).to_le_bytes());
        h.extend_from_slice(&[0; 8]);
        h.extend_from_slice(&0x0180_0000u32.to_le_bytes());
        h.extend_from_slice(&offset.to_le_bytes());
        h.extend_from_slice(name.as_bytes());
        h
    };
    let mut out = local(45, mc, u32::MAX, "messages.msgpack", 20);
    out.extend_from_slice(&[1, 0, 16, 0]);
    out.extend_from_slice(&u64::from(m).to_le_bytes());
    out.extend_from_slice(&u64::from(m).to_le_bytes());
    out.extend_from_slice(messages);
    let index_at = out.len() as u32;
    out.extend_from_slice(&local(20, ic, i, "index.msgpack", 0));
    out.extend_from_slice(index);
    let cd_at = out.len() as u32;
    out.extend_from_slice(&central(45, mc, m, "messages.msgpack", 0));
    out.extend_from_slice(&central(20, ic, i, "index.msgpack", index_at));
    let cd_size = out.len() as u32 - cd_at;
    out.extend_from_slice(&[0x50, 0x4b, 5, 6, 0, 0, 0, 0, 2, 0, 2, 0]);
    out.extend_from_slice(&cd_size.to_le_bytes());
    out.extend_from_slice(&cd_at.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

/// A copy of `fixtures/icarec/a2.icarec` in `dir` as `cut.icarec`, its three 40-byte frames
/// followed by the first 10 bytes of a fourth: a recording whose last frame is partial.
pub fn icarec_with_partial_last_frame(dir: &Path) -> PathBuf {
    let src = any_fixture("icarec/a2.icarec");
    let rec = dir.join("cut.icarec");
    std::fs::create_dir(&rec).unwrap();
    for part in ["schema.json", "static_signals.bin", "metadata.json"] {
        std::fs::copy(src.join(part), rec.join(part)).unwrap();
    }
    let mut dynamic = std::fs::read(src.join("dynamic_signals.bin")).unwrap();
    assert_eq!(dynamic.len(), 120, "three frames of 40 bytes");
    dynamic.extend_from_within(..10);
    std::fs::write(rec.join("dynamic_signals.bin"), &dynamic).unwrap();
    rec
}

/// Every record of `path` as `simrec cat --format json` prints it (exit 3 allowed: a NaN is
/// printed as null and counted).
pub fn cat_json(dir: &Path, path: &Path) -> Vec<Value> {
    let run = run_in(dir, &["cat", "--format", "json", s(path)]);
    assert!([0, 3].contains(&run.code), "{}", run.stderr);
    run.json_lines()
}

/// A JSON array of numbers.
pub fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// Converts fixture `source` into `dir/out` (then `args`), expects exit `code` and an output
/// that validates; returns the output's path and the run (its stdout is the report with
/// `--format json`).
pub fn convert_fixture(
    dir: &Path,
    source: &str,
    out: &str,
    args: &[&str],
    code: i32,
) -> (PathBuf, Run) {
    let (input, output) = (any_fixture(source), dir.join(out));
    let mut all = vec!["convert", s(&input), s(&output)];
    all.extend_from_slice(args);
    let run = run_in(dir, &all).expect_code(code);
    run_in(dir, &["validate", s(&output)]).expect_code(0);
    (output, run)
}

/// A lab's folder of mixed files at `dir/lab`, for the batch commands: four recordings (a
/// NanoVer pair, a crashed `.traj`, an `.icarec` directory, an XREC session) among three
/// files that are not recordings (a README, a PNG, a JSON file).
pub fn lab(dir: &Path) -> PathBuf {
    let lab = dir.join("lab");
    for sub in ["nanover", "icarus/a2.icarec", "plots"] {
        std::fs::create_dir_all(lab.join(sub)).unwrap();
    }
    for (from, to) in [
        ("nanover-legacy/small.traj", "nanover/small.traj"),
        ("nanover-legacy/small.state", "nanover/small.state"),
        (
            "nanover-legacy/broken/trunc-payload.traj",
            "nanover/crashed.traj",
        ),
        ("xrec/session.xrec", "session.xrec"),
    ] {
        std::fs::copy(any_fixture(from), lab.join(to)).unwrap();
    }
    for e in std::fs::read_dir(any_fixture("icarec/a2.icarec")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), lab.join("icarus/a2.icarec").join(e.file_name())).unwrap();
    }
    std::fs::write(lab.join("icarus/README.md"), b"# Runs of March\n").unwrap();
    std::fs::write(lab.join("plots/run.png"), b"\x89PNG\r\n\x1a\n").unwrap();
    std::fs::write(lab.join("capture.json"), b"{\"rig\": 2}\n").unwrap();
    lab
}
