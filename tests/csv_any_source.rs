//! The wide CSV (`--to csv`) from sources other than Icarus: one row per distinct time,
//! arrays flattened with their element names, empty cells where a channel has no record,
//! values equal to the source's own decode.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use simrec::formats::ReadOptions;
use simrec::model::{ArrayData, Value};

use common::run_in;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Converts `inputs` to CSV (exit `code`) and returns its header and rows of cells.
fn csv(inputs: &[&str], code: i32) -> (Vec<String>, Vec<Vec<String>>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.csv");
    let mut args = vec!["convert"];
    args.extend(inputs);
    let out_s = out.display().to_string();
    args.extend(["-o", &out_s]);
    run_in(&root(), &args).expect_code(code);
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    let header = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    (header, rows)
}

/// Every record of the source, by channel name, as simrec's reader of the format decodes it.
fn records(inputs: &[&str]) -> Vec<(String, simrec::model::Record)> {
    let paths: Vec<PathBuf> = inputs.iter().map(|p| root().join(p)).collect();
    let mut source = simrec::pipeline::open_recording(&paths, ReadOptions::default()).unwrap();
    let mut all = Vec::new();
    while let Some(r) = source.next() {
        let r = r.unwrap();
        all.push((source.header().channels[r.channel as usize].name.clone(), r));
    }
    all
}

fn seconds(ns: i64) -> f64 {
    ns as f64 / 1e9
}

#[test]
fn nanover_frames_and_state_are_rows_at_their_own_times_with_positions_flattened() {
    let inputs = [
        "fixtures/nanover-legacy/small.traj",
        "fixtures/nanover-legacy/small.state",
    ];
    // Loss: doubles that need 16-17 digits, strings that have no CSV column.
    let (header, rows) = csv(&inputs, 3);
    let all = records(&inputs);
    let times: BTreeSet<i64> = all.iter().map(|(_, r)| r.time).collect();
    assert_eq!(rows.len(), times.len());
    assert_eq!(header[0], "time");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let x = col("frame.particle.positions[0].x");
    let z20 = col("frame.particle.positions[20].z");
    assert_eq!(header[x + 1], "frame.particle.positions[0].y");
    let state_cols: Vec<usize> = (1..header.len())
        .filter(|&i| header[i].starts_with("state."))
        .collect();
    assert!(!state_cols.is_empty());
    let (_, first) = all.iter().find(|(c, _)| c == "frame").unwrap();
    let Some(Value::Array(p)) = first.get("particle.positions") else {
        panic!("positions")
    };
    let ArrayData::F32(p) = &p.data else {
        panic!("f32")
    };
    // Row 0 is the first frame; its float32s read back exactly from 15 digits.
    assert_eq!(rows[0][0].parse::<f64>().unwrap(), seconds(first.time));
    assert_eq!(rows[0][x].parse::<f32>().unwrap(), p[0]);
    assert_eq!(rows[0][z20].parse::<f32>().unwrap(), p[62]);
    // A state record's row has empty frame cells, and the frame rows empty state cells.
    let (_, state) = all.iter().find(|(c, _)| c == "state").unwrap();
    let row = rows
        .iter()
        .find(|r| r[0].parse::<f64>().unwrap() == seconds(state.time))
        .unwrap();
    assert_eq!(row[x], "");
    assert!(state_cols.iter().all(|&i| rows[0][i].is_empty()));
}

#[test]
fn an_elodin_replay_is_one_row_per_tick_with_its_vectors_named() {
    let inputs = ["fixtures/elodin/ball_1200"];
    let (header, rows) = csv(&inputs, 3);
    let all = records(&inputs);
    let mut per_channel: BTreeMap<&str, BTreeSet<i64>> = BTreeMap::new();
    for (c, r) in &all {
        per_channel.entry(c.as_str()).or_default().insert(r.time);
    }
    let times: BTreeSet<i64> = all.iter().map(|(_, r)| r.time).collect();
    assert_eq!(rows.len(), times.len());
    let wx = header.iter().position(|h| h == "wind_data.wind.x").unwrap();
    let (_, wind) = all.iter().filter(|(c, _)| c == "wind_data").nth(1).unwrap();
    let Some(Value::Array(w)) = wind.get("wind") else {
        panic!("wind")
    };
    let ArrayData::F64(w) = &w.data else {
        panic!("f64")
    };
    let row = rows
        .iter()
        .find(|r| r[0].parse::<f64>().unwrap() == seconds(wind.time))
        .unwrap();
    let got: f64 = row[wx].parse().unwrap();
    assert!(
        (got - w[0]).abs() <= 1e-14 * w[0].abs(),
        "{got} vs {}",
        w[0]
    );
    assert!(header.iter().any(|h| h == "body.world_pos[6]"));
}

/// An XREC transform's rotation is a scalar-last quaternion (declared `quaternion_xyzw`): its
/// columns are named `.x .y .z .w`, in that order, and hold the source's values.
#[test]
fn an_xrec_rotation_is_named_x_y_z_w_in_storage_order() {
    let inputs = ["fixtures/xrec/session.xrec"];
    // Other entities of the transform channel are lost (one column per signal): exit 3.
    let (header, rows) = csv(&inputs, 3);
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{name} in {header:?}"))
    };
    let rotation: Vec<usize> = ["x", "y", "z", "w"]
        .iter()
        .map(|c| col(&format!("xrec.Transform.rotation.{c}")))
        .collect();
    assert_eq!(rotation, (rotation[0]..rotation[0] + 4).collect::<Vec<_>>());
    let all = records(&inputs);
    let (_, first) = all.iter().find(|(c, _)| c == "xrec.Transform").unwrap();
    let Some(Value::Array(r)) = first.get("rotation") else {
        panic!("rotation")
    };
    let ArrayData::F64(want) = &r.data else {
        panic!("f64")
    };
    let row = rows
        .iter()
        .find(|row| row[0].parse::<f64>().unwrap() == seconds(first.time))
        .unwrap();
    for (i, &c) in rotation.iter().enumerate() {
        let got: f64 = row[c].parse().unwrap();
        assert!(
            (got - want[i]).abs() <= 1e-14 * want[i].abs().max(1.0),
            "rotation[{i}]: {got} vs {}",
            want[i]
        );
    }
}
