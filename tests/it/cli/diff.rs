//! `simrec diff` end to end: equal recordings of every format, a copy with one value changed
//! by patching its bytes here (not by simrec) found with its record, key and element, the
//! tolerances at their boundaries, and a legacy pair against its `.nanover.zip` conversion.

use std::path::PathBuf;

use serde_json::Value;

use crate::util;
use crate::util::{run_in, s, Run};

fn fixtures() -> PathBuf {
    util::any_fixture("")
}

fn diff(args: &[&str]) -> Run {
    run_in(&fixtures(), &[&["diff"], args].concat())
}

fn diff_json(args: &[&str]) -> Value {
    let r = diff(&[args, &["--format", "json"]].concat());
    let lines = r.json_lines();
    assert_eq!(lines.len(), 1, "{}", r.stdout);
    lines.into_iter().next().unwrap()
}

#[test]
fn a_recording_of_every_format_equals_itself() {
    for side in [
        "nanover-legacy/small.traj,nanover-legacy/small.state",
        "nanover-zip/small.nanover.zip",
        "elodin/ball_1200",
        "tes/small_compress.3es",
        "icarec/a2.icarec",
        "icarec/a2.icarec.tar",
        "icarus-hdf5/small.h5",
        // Its barometer reads NaN at first: NaN equals NaN only when asked.
        "icarus-csv/rocket.csv",
        "xrec/session.xrec",
        "xrec/session_gzip.xrec",
    ] {
        let r = diff(&[side, side, "--nan-equal"]).expect_code(0);
        assert!(r.stdout.starts_with("equal\n"), "{side}: {}", r.stdout);
        let j = diff_json(&[side, side, "--nan-equal"]);
        assert_eq!(j["equal"], true, "{side}");
        assert_eq!(j["differences_total"], 0, "{side}");
        let records = j["a"]["records"].as_u64().unwrap();
        assert!(records > 0, "{side}");
        let compared: u64 = j["channels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["compared"].as_u64().unwrap())
            .sum();
        assert_eq!(compared, records, "{side}: every record paired");
    }
}

#[test]
fn an_xrec_session_equals_its_gzip_copy_event_for_event() {
    // The same events, one file's packets plain and the other's gzip
    // (fixtures/xrec/make_fixtures.py).
    let j = diff_json(&["xrec/session.xrec", "xrec/session_gzip.xrec"]);
    assert_eq!(j["equal"], true, "{j}");
    let compared: u64 = j["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["compared"].as_u64().unwrap())
        .sum();
    // session.xrec holds 14 events (inspect), every one paired.
    assert_eq!(compared, 14);
    assert_eq!(j["a"]["records"], 14);
    assert_eq!(j["b"]["records"], 14);
}

#[test]
fn nan_differs_from_nan_unless_asked() {
    let j = diff_json(&["icarus-csv/rocket.csv", "icarus-csv/rocket.csv"]);
    assert_eq!(j["equal"], false);
    // rocket.csv: the barometer reads NaN in its first two rows (make_rocket.py).
    assert_eq!(j["differences_total"], 2);
    let d = &j["differences"][0];
    assert_eq!(d["kind"], "value");
    assert_eq!(
        (d["a"].as_str(), d["b"].as_str()),
        (Some("NaN"), Some("NaN"))
    );
    assert!(d["key"].as_str().unwrap().contains("baro_alt"), "{d}");
    assert_eq!(d["time_ns"], 10_000_000);
}

/// Byte offset, inside a NanoVer frame payload (GetFrameResponse), of the packed float32
/// data of array `key`: frame (2) → arrays (2) → entry {key (1), ValueArray (2) →
/// float_values (1) → packed values (1)}. Written here from the protobuf definitions, so the
/// test does not lean on simrec's decoder.
fn packed_floats(payload: &[u8], key: &str) -> Option<usize> {
    fn varint(b: &[u8], p: &mut usize) -> u64 {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = b[*p];
            *p += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                break;
            }
        }
        v
    }
    /// The (field, start, end) of every length-delimited field of `b[from..to]`.
    fn fields(b: &[u8], from: usize, to: usize) -> Vec<(u64, usize, usize)> {
        let (mut p, mut out) = (from, Vec::new());
        while p < to {
            let tag = varint(b, &mut p);
            match tag & 7 {
                0 => {
                    varint(b, &mut p);
                }
                1 => p += 8,
                5 => p += 4,
                2 => {
                    let n = varint(b, &mut p) as usize;
                    out.push((tag >> 3, p, p + n));
                    p += n;
                }
                w => panic!("wire type {w}"),
            }
        }
        out
    }
    let one = |b: &[u8], from, to, field| {
        fields(b, from, to)
            .into_iter()
            .find(|f| f.0 == field)
            .map(|f| (f.1, f.2))
    };
    let (fs, fe) = one(payload, 0, payload.len(), 2)?;
    for (field, s, e) in fields(payload, fs, fe) {
        if field != 2 {
            continue;
        }
        let (ks, ke) = one(payload, s, e, 1)?;
        if &payload[ks..ke] != key.as_bytes() {
            continue;
        }
        let (vs, ve) = one(payload, s, e, 2)?;
        let (as_, ae) = one(payload, vs, ve, 1)?;
        let (ps, _) = one(payload, as_, ae, 1)?;
        return Some(ps);
    }
    None
}

#[test]
fn one_value_changed_in_a_copy_is_named_with_its_record_key_and_element() {
    let dir = tempfile::tempdir().unwrap();
    let original = fixtures().join("nanover-legacy/small.traj");
    let mut bytes = std::fs::read(&original).unwrap();
    let records = util::raw_records(&bytes);
    // Frame record 5, particle.positions[12].z (element 12 * 3 + 2 of a [21, 3] array).
    let record = &records[5];
    let data = packed_floats(&record.payload, "particle.positions").expect("positions");
    let at = record.offset + 24 + data + (12 * 3 + 2) * 4;
    let was = f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let now = was + 0.125;
    bytes[at..at + 4].copy_from_slice(&now.to_le_bytes());
    let changed = dir.path().join("changed.traj");
    std::fs::write(&changed, &bytes).unwrap();

    let r = diff(&["nanover-legacy/small.traj", s(&changed)]).expect_code(1);
    assert!(
        r.stdout.starts_with("different: 1 difference\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("record A #5 B #5")
            && r.stdout.contains("key particle.positions[12,2]: value"),
        "{}",
        r.stdout
    );

    let j = diff_json(&[
        "nanover-legacy/small.traj",
        s(&changed),
        "--max-diffs",
        "10",
    ]);
    assert_eq!(j["equal"], false);
    assert_eq!(j["differences_total"], 1);
    let d = &j["differences"][0];
    assert_eq!(d["kind"], "value");
    assert_eq!(d["channel"], "frame");
    assert_eq!(d["record_a"], 5);
    assert_eq!(d["record_b"], 5);
    assert_eq!(d["time_ns"], record.time_us as i64 * 1000);
    assert_eq!(d["key"], "particle.positions");
    assert_eq!(d["index"], serde_json::json!([12, 2]));
    assert_eq!(d["a"].as_f64(), Some(f64::from(was)));
    assert_eq!(d["b"].as_f64(), Some(f64::from(now)));
    let abs = f64::from(now) - f64::from(was);
    assert_eq!(d["abs_error"].as_f64(), Some(abs));
    assert_eq!(d["rel_error"].as_f64(), Some(abs / f64::from(now).abs()));
    let frame = j["channels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["channel"] == "frame")
        .unwrap();
    assert_eq!(frame["keys_differing"], 1);
    let key = frame["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["key"] == "particle.positions")
        .unwrap();
    assert_eq!(key["differing"], 1);
    assert_eq!(key["max_abs_error"].as_f64(), Some(abs));

    // Within tolerance: the boundary is |a − b| ≤ atol + rtol·|b|, inclusive.
    let abs_text = format!("{abs:e}");
    diff(&[
        "nanover-legacy/small.traj",
        s(&changed),
        "--atol",
        &abs_text,
    ])
    .expect_code(0);
    let below = format!("{:e}", abs * (1.0 - 1e-9));
    diff(&["nanover-legacy/small.traj", s(&changed), "--atol", &below]).expect_code(1);
    let rel = format!("{:e}", abs / f64::from(now).abs() * (1.0 + 1e-12));
    diff(&["nanover-legacy/small.traj", s(&changed), "--rtol", &rel]).expect_code(0);
    let rel_below = format!("{:e}", abs / f64::from(now).abs() * (1.0 - 1e-9));
    diff(&[
        "nanover-legacy/small.traj",
        s(&changed),
        "--rtol",
        &rel_below,
    ])
    .expect_code(1);

    // Excluding the key, or ending before the record, compares equal.
    diff(&[
        "nanover-legacy/small.traj",
        s(&changed),
        "--exclude",
        "particle.positions",
    ])
    .expect_code(0);
    let before = format!("{}us", record.time_us);
    diff(&["nanover-legacy/small.traj", s(&changed), "--end", &before]).expect_code(0);
}

#[test]
fn a_legacy_pair_equals_its_nanover_zip_conversion_by_time_and_by_frame() {
    let pair = "nanover-zip/converted-tie/tie.traj,nanover-zip/converted-tie/tie.state";
    let zip = "nanover-zip/converted-tie/tie.nanover.zip";
    for align in ["time", "frame", "index"] {
        let j = diff_json(&[pair, zip, "--align", align]);
        assert_eq!(j["equal"], true, "{align}: {j}");
        let counts: Vec<(String, u64)> = j["channels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["channel"].as_str().unwrap().to_string(),
                    c["compared"].as_u64().unwrap(),
                )
            })
            .collect();
        // tie.traj holds 32 frames, tie.state 15 updates (inspect).
        assert_eq!(
            counts,
            [("frame".to_string(), 32), ("state".to_string(), 15)],
            "{align}"
        );
    }
    // Legacy frames store every number as a double (protobuf Value); the archive keeps
    // msgpack integers: only --strict-types sees it.
    let j = diff_json(&[pair, zip, "--strict-types", "--max-diffs", "100"]);
    assert_eq!(j["equal"], false);
    let kinds: std::collections::BTreeSet<&str> = j["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.into_iter().collect::<Vec<_>>(), ["type"]);
    let first = &j["differences"][0];
    assert_eq!(first["key"], "frame.index");
    assert_eq!(
        (first["a"].as_f64(), first["b"].as_i64()),
        (Some(2.0), Some(2))
    );
}

/// simrec's own lossless conversion of an upstream legacy pair to `.nanover.zip` diffs
/// equal: the archive keeps `frame.index` among a frame's values, the legacy pair only as
/// the frame value, which is compared by itself. `--exclude frame.index` matched the key on
/// one side, so it warns of nothing.
#[test]
fn an_upstream_pair_equals_its_own_nanover_zip_conversion() {
    let dir = tempfile::tempdir().unwrap();
    let up = fixtures().join("nanover-legacy/upstream/nanotube-example-recording");
    let pair = format!("{}.traj,{}.state", up.display(), up.display());
    let zip = dir.path().join("nanotube.nanover.zip");
    let (traj, state) = (
        format!("{}.traj", up.display()),
        format!("{}.state", up.display()),
    );
    run_in(dir.path(), &["convert", &traj, &state, "-o", s(&zip)]).expect_code(0);
    for align in ["time", "frame", "index"] {
        let j = diff_json(&[&pair, s(&zip), "--align", align]);
        assert_eq!(j["equal"], true, "{align}: {j}");
        assert_eq!(j["channels"][0]["compared"], 930, "{align}");
        assert_eq!(j["channels"][1]["compared"], 685, "{align}");
    }
    let r = diff(&[&pair, s(&zip), "--exclude", "frame.index"]).expect_code(0);
    assert!(r.stdout.starts_with("equal\n"), "{}", r.stdout);
    assert_eq!(r.stderr, "");
    // A pattern that matches on neither side still says so.
    let r = diff(&[&pair, s(&zip), "--exclude", "frame.indices"]).expect_code(0);
    assert_eq!(
        r.stderr,
        "warning: --exclude `frame.indices` matched no key of any record read\n"
    );
}

#[test]
fn a_record_only_in_one_side_is_counted_and_usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    // The first 10 frames of small.traj, cut by bytes (header + records).
    let bytes = util::fixture_bytes("small.traj");
    let records = util::raw_records(&bytes);
    let cut = dir.path().join("cut.traj");
    std::fs::write(&cut, &bytes[..records[10].offset]).unwrap();
    let j = diff_json(&["nanover-legacy/small.traj", s(&cut)]);
    assert_eq!(j["equal"], false);
    let frame = &j["channels"][0];
    assert_eq!(frame["compared"], 10);
    assert_eq!(frame["only_in_a"], records.len() as u64 - 10);
    assert_eq!(frame["only_in_b"], 0);
    assert_eq!(j["differences"][0]["kind"], "only_in_a");
    assert_eq!(j["differences"][0]["record_a"], 10);

    diff(&["nanover-legacy/small.traj", s(&cut), "--atol", "-1"]).expect_code(2);
    diff(&["nanover-legacy/small.traj", s(&cut), "--align", "nope"]).expect_code(2);
    diff(&["nanover-legacy/small.traj", s(&cut), "--include", "[x"]).expect_code(2);
    diff(&["nanover-legacy/small.traj"]).expect_code(2);
}

#[test]
fn every_json_report_matches_its_schema() {
    let validator = util::schema::Validator::contract("diff.schema.json");
    let pair = "nanover-zip/converted-tie/tie.traj,nanover-zip/converted-tie/tie.state";
    let zip = "nanover-zip/converted-tie/tie.nanover.zip";
    let runs: [&[&str]; 5] = [
        &[pair, zip],
        &[pair, zip, "--strict-types", "--max-diffs", "50"],
        &[
            "icarus-csv/rocket.csv",
            "icarus-csv/rocket.csv",
            "--max-diffs",
            "5",
        ],
        &[
            "nanover-legacy/small.traj",
            "nanover-zip/small.nanover.zip",
            "--max-diffs",
            "20",
        ],
        &[
            "elodin/ball_1200",
            "elodin/spin_120",
            "--align",
            "index",
            "--max-diffs",
            "20",
        ],
    ];
    let mut kinds = std::collections::BTreeSet::new();
    for args in runs {
        let j = diff_json(args);
        let errors = validator.errors(&j);
        assert!(errors.is_empty(), "{args:?}: {errors:?}");
        for d in j["differences"].as_array().unwrap() {
            kinds.insert(d["kind"].as_str().unwrap().to_string());
        }
    }
    // The runs show the kinds that matter most.
    for k in ["value", "type", "only_in_b"] {
        assert!(kinds.contains(k), "{kinds:?}");
    }
}
