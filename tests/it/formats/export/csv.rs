//! The wide CSV (`--to csv`) from every format simrec reads: one row per distinct time, a
//! channel's columns per entity (`channel.entity.field`), arrays flattened with their element
//! names, empty cells where a channel has no record; per channel the records the CSV holds
//! equal `inspect`'s count, and values equal the source's own decode.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use simrec::formats::ReadOptions;
use simrec::model::{ArrayData, Value};

use crate::util;
use crate::util::run_in;

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
    let wx = header
        .iter()
        .position(|h| h == "wind_data.0.wind.x")
        .unwrap();
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
    // Elodin's element names: world_pos is scalar-last, then the position.
    let pose: Vec<&str> = header
        .iter()
        .filter(|h| h.starts_with("body.0.world_pos."))
        .map(String::as_str)
        .collect();
    assert_eq!(
        pose,
        ["qx", "qy", "qz", "qw", "x", "y", "z"].map(|e| format!("body.0.world_pos.{e}"))
    );
    // Each entity of a channel has its own columns: the three entities' metadata handles.
    let handles: Vec<&str> = header
        .iter()
        .filter(|h| h.starts_with("asset_handle_entity_metadata"))
        .map(String::as_str)
        .collect();
    assert_eq!(
        handles,
        [
            "asset_handle_entity_metadata.0",
            "asset_handle_entity_metadata.1",
            "asset_handle_entity_metadata.3"
        ]
    );
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(
        [
            rows[5][col(handles[0])].as_str(),
            &rows[5][col(handles[1])],
            &rows[5][col(handles[2])]
        ],
        ["2", "4", "6"]
    );
}

/// An XREC transform's rotation is a scalar-last quaternion (declared `quaternion_xyzw`): its
/// columns are named `.x .y .z .w`, in that order, and hold the source's values; each tracked
/// object has its own columns (a tidy track per entity), laid out after the header was first
/// written since the transforms start after the first instant.
#[test]
fn an_xrec_session_has_a_track_per_entity_with_rotations_x_y_z_w() {
    let inputs = ["fixtures/xrec/session.xrec"];
    // Strings (chapter names, client names) have no column: exit 3.
    let (header, rows) = csv(&inputs, 3);
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{name} in {header:?}"))
    };
    assert!(!header
        .iter()
        .any(|h| h.starts_with("xrec.Transform.position")));
    let all = records(&inputs);
    for entity in ["cube", "head"] {
        let rotation: Vec<usize> = ["x", "y", "z", "w"]
            .iter()
            .map(|c| col(&format!("xrec.Transform.{entity}.rotation.{c}")))
            .collect();
        assert_eq!(rotation, (rotation[0]..rotation[0] + 4).collect::<Vec<_>>());
        let px = col(&format!("xrec.Transform.{entity}.position.x"));
        let track: Vec<&simrec::model::Record> = all
            .iter()
            .filter(|(c, r)| {
                c == "xrec.Transform" && r.entity.as_ref().is_some_and(|e| e.to_string() == entity)
            })
            .map(|(_, r)| r)
            .collect();
        // One filled cell per transform of this entity, in its own rows.
        let filled: Vec<&Vec<String>> = rows.iter().filter(|r| !r[px].is_empty()).collect();
        assert_eq!(filled.len(), track.len(), "{entity}");
        for (row, record) in filled.iter().zip(&track) {
            assert_eq!(row[0].parse::<f64>().unwrap(), seconds(record.time));
            let Some(Value::Array(p)) = record.get("position") else {
                panic!("position")
            };
            let ArrayData::F64(p) = &p.data else {
                panic!("f64")
            };
            assert_eq!(row[px].parse::<f64>().unwrap(), p[0]);
        }
        let Some(Value::Array(r)) = track[0].get("rotation") else {
            panic!("rotation")
        };
        let ArrayData::F64(want) = &r.data else {
            panic!("f64")
        };
        for (i, &c) in rotation.iter().enumerate() {
            assert_eq!(
                filled[0][c].parse::<f64>().unwrap(),
                want[i],
                "rotation[{i}]"
            );
        }
    }
    // The session's cube moves on after the head's last transform: its cells are empty there.
    let cube = col("xrec.Transform.cube.position.x");
    let head = col("xrec.Transform.head.position.x");
    assert!(rows
        .iter()
        .any(|r| !r[cube].is_empty() && r[head].is_empty()));
}

/// The record counts per channel and entity that a wide CSV holds, against `inspect` and the
/// source's decode, and the first value of each channel and entity read back.
mod every_format {
    use super::*;
    use simrec::model::{Composition, Entity, Record};

    /// One source's CSV: column names and rows of cells, read with the `csv` crate.
    fn read_csv(path: &std::path::Path) -> (Vec<String>, Vec<Vec<String>>) {
        let mut reader = ::csv::ReaderBuilder::new()
            .has_headers(true)
            .from_path(path)
            .unwrap();
        let header = reader
            .headers()
            .unwrap()
            .iter()
            .map(str::to_string)
            .collect();
        let rows = reader
            .records()
            .map(|r| r.unwrap().iter().map(str::to_string).collect())
            .collect();
        (header, rows)
    }

    /// The first element of a value as the CSV holds it (a double), if it has a column.
    fn first_number(v: &Value) -> Option<f64> {
        Some(match v {
            Value::Float(x) => *x,
            Value::F32(x) => f64::from(*x),
            Value::Int(i) => *i as f64,
            Value::UInt(u) => *u as f64,
            Value::Bool(b) => f64::from(u8::from(*b)),
            Value::Array(a) => match &a.data {
                ArrayData::F64(v) => *v.first()?,
                ArrayData::F32(v) => f64::from(*v.first()?),
                ArrayData::I32(v) => f64::from(*v.first()?),
                ArrayData::I64(v) => *v.first()? as f64,
                ArrayData::U8(v) => f64::from(*v.first()?),
                ArrayData::U32(v) => f64::from(*v.first()?),
                ArrayData::U64(v) => *v.first()? as f64,
                ArrayData::Bool(v) => f64::from(u8::from(*v.first()?)),
                _ => return None,
            },
            _ => return None,
        })
    }

    /// The columns named `base` or `base.…` / `base[…`.
    fn columns(header: &[String], base: &str) -> Vec<usize> {
        (1..header.len())
            .filter(|&i| {
                let h = &header[i];
                h == base
                    || h.strip_prefix(base)
                        .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
            })
            .collect()
    }

    /// The documented name of a channel's columns for an entity: the channel, then the
    /// entity unless the channel's name already holds it (an Icarus signal).
    fn base(channel: &str, entity: &Option<Entity>) -> String {
        match entity {
            Some(Entity::Name(e)) if channel == &**e || channel.starts_with(&format!("{e}.")) => {
                channel.to_string()
            }
            Some(e) => format!("{channel}.{e}"),
            None => channel.to_string(),
        }
    }

    fn check(inputs: &[&str], code: i32, partial: &[&str]) {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.csv");
        let mut args = vec!["convert"];
        args.extend(inputs);
        let out_s = out.display().to_string();
        args.extend(["-o", &out_s]);
        run_in(&root(), &args).expect_code(code);
        let (header, rows) = read_csv(&out);
        let inspected = util::inspect_counts(&root(), inputs);

        let paths: Vec<PathBuf> = inputs.iter().map(|p| root().join(p)).collect();
        let mut source = simrec::pipeline::open_recording(&paths, ReadOptions::default()).unwrap();
        // Records per channel and entity, with a number in some column.
        let mut tracks: BTreeMap<(String, String), (Option<Entity>, Vec<Record>)> = BTreeMap::new();
        let mut decoded: BTreeMap<String, u64> = BTreeMap::new();
        let mut holds: BTreeSet<String> = BTreeSet::new();
        while let Some(r) = source.next() {
            let r = r.unwrap();
            let channel = &source.header().channels[r.channel as usize];
            *decoded.entry(channel.name.clone()).or_default() += 1;
            if channel.composition == Composition::SampleHold {
                holds.insert(channel.name.clone());
            }
            let key = (channel.name.clone(), base(&channel.name, &r.entity));
            tracks
                .entry(key)
                .or_insert_with(|| (r.entity.clone(), Vec::new()))
                .1
                .push(r);
        }
        // inspect counts what the reader decodes.
        for (name, n) in &decoded {
            assert_eq!(inspected.get(name), Some(n), "{inputs:?} {name}");
        }
        let mut claimed = BTreeSet::new();
        let mut filled_rows: BTreeMap<String, u64> = BTreeMap::new();
        let mut in_csv: BTreeMap<String, u64> = BTreeMap::new();
        for ((channel, base), (_, records)) in &tracks {
            let cols = columns(&header, base);
            // A key has a column when the CSV names one for it (a one-signal channel's
            // column is named by the channel alone).
            let one_signal = |key: &str| channel.rsplit('.').next() == Some(key);
            let has_column = |key: &str| {
                !columns(&header, &format!("{base}.{key}")).is_empty()
                    || one_signal(key) && !cols.is_empty()
            };
            let records: Vec<&Record> = records
                .iter()
                .filter(|r| r.values.iter().any(|(k, _)| has_column(k)))
                .collect();
            if records.is_empty() {
                continue;
            }
            *in_csv.entry(channel.clone()).or_default() += records.len() as u64;
            assert!(!cols.is_empty(), "{inputs:?}: no column for {base}");
            for &c in &cols {
                assert!(claimed.insert(c), "{inputs:?}: column {} twice", header[c]);
            }
            let filled = rows
                .iter()
                .filter(|r| cols.iter().any(|&c| !r[c].is_empty()))
                .count() as u64;
            if holds.contains(channel) {
                // Held from its first record to the last row.
                let first = seconds(records[0].time);
                let from = rows
                    .iter()
                    .position(|r| r[0].parse::<f64>().unwrap() >= first)
                    .unwrap();
                assert_eq!(filled, (rows.len() - from) as u64, "{inputs:?} {base}");
            } else {
                *filled_rows.entry(channel.clone()).or_default() += filled;
            }
            // The first number of a record, in its row.
            let Some((record, key, value, number)) = records.iter().find_map(|r| {
                r.values
                    .iter()
                    .filter(|(k, _)| has_column(k))
                    .find_map(|(k, v)| first_number(v).map(|n| (*r, k, v, n)))
            }) else {
                continue;
            };
            let mut field_cols = columns(&header, &format!("{base}.{key}"));
            if field_cols.is_empty() {
                field_cols = cols.clone();
            }
            let c = field_cols[0];
            let row = rows
                .iter()
                .find(|r| {
                    !r[c].is_empty()
                        && (r[0].parse::<f64>().unwrap() - seconds(record.time)).abs() <= 1e-9
                })
                .unwrap_or_else(|| panic!("{inputs:?}: no row for {base} at {}", record.time));
            let got: f64 = match row[c].as_str() {
                "nan" | "-nan" => f64::NAN,
                "inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                text => text.parse().unwrap(),
            };
            let same = if number.is_nan() {
                got.is_nan()
            } else if matches!(value, Value::F32(_))
                || matches!(value, Value::Array(a) if matches!(a.data, ArrayData::F32(_)))
            {
                got as f32 == number as f32
            } else {
                (got - number).abs() <= 1e-14 * number.abs()
            };
            assert!(
                same,
                "{inputs:?} {base}.{key}: {got} in the CSV, {number} decoded"
            );
        }
        // Per channel, one filled row per record (channels that are not held).
        for (channel, filled) in &filled_rows {
            assert_eq!(*filled, in_csv[channel], "{inputs:?} {channel}");
            assert!(*filled <= inspected[channel], "{inputs:?} {channel}");
        }
        // Every record is in the CSV, but in the channels named `partial`, some of whose
        // records hold only values without a column (strings).
        for (channel, n) in inspected.iter().filter(|(_, n)| **n > 0) {
            let kept = in_csv.get(channel).copied().unwrap_or(0);
            if partial.contains(&channel.as_str()) {
                assert!(kept > 0 && kept < *n, "{inputs:?} {channel}: {kept} of {n}");
            } else {
                assert_eq!(kept, *n, "{inputs:?} {channel}: records in the CSV");
            }
        }
        assert!(!tracks.is_empty(), "{inputs:?}: nothing checked");
    }

    #[test]
    fn nanover_legacy_and_zip() {
        check(
            &[
                "fixtures/nanover-legacy/small.traj",
                "fixtures/nanover-legacy/small.state",
            ],
            3,
            &["state"],
        );
        check(&["fixtures/nanover-zip/small.nanover.zip"], 3, &["state"]);
    }

    #[test]
    fn icarus_icarec_hdf5_and_csv() {
        // a2's absolute start has no place in a CSV of relative times (exit 3).
        check(&["fixtures/icarec/a2.icarec"], 3, &[]);
        check(&["fixtures/icarec/types.icarec"], 3, &[]);
        check(&["fixtures/icarec/a2.icarec.tar"], 3, &[]);
        check(&["fixtures/icarus-hdf5/vulcan.h5"], 3, &[]);
        check(&["fixtures/icarus-csv/rocket.csv"], 0, &[]);
    }

    #[test]
    fn elodin_replays() {
        check(&["fixtures/elodin/ball_1200"], 3, &[]);
        check(&["fixtures/elodin/types_300"], 3, &[]);
        check(&["fixtures/elodin/spin_120"], 3, &[]);
    }

    #[test]
    fn tes_captures() {
        check(&["fixtures/tes/small_plain.3es"], 3, &[]);
        check(&["fixtures/tes/small_collate.3es"], 3, &[]);
    }

    #[test]
    fn xrec_sessions() {
        check(&["fixtures/xrec/session.xrec"], 3, &[]);
        check(&["fixtures/xrec/session_gzip.xrec"], 3, &[]);
    }
}

/// A CSV whose columns grew after its header was written (the session's transforms start
/// after its first instant) is rewritten whole: the file and standard output get the same
/// bytes, and nothing is left beside the output.
#[test]
fn a_rewritten_csv_is_the_same_on_standard_output_and_leaves_no_scratch_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.csv");
    let out_s = out.display().to_string();
    run_in(
        &root(),
        &["convert", "fixtures/xrec/session.xrec", "-o", &out_s],
    )
    .expect_code(3);
    let piped = run_in(
        &root(),
        &[
            "convert",
            "fixtures/xrec/session.xrec",
            "--to",
            "csv",
            "-o",
            "-",
        ],
    )
    .expect_code(3);
    let written = std::fs::read_to_string(&out).unwrap();
    assert_eq!(piped.stdout, written);
    assert!(written.starts_with("time,xrec.Chapter.create_time,"));
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["s.csv"]);
}
