//! The Parquet table (`--to parquet`) from every source format's small fixtures, read back
//! with the parquet crate: rows per channel equal `inspect`'s counts, and the first record
//! of every channel reads back equal to the source's own decode.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array as _, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::reader::{FileReader, SerializedFileReader};
use simrec::formats::ReadOptions;
use simrec::model::{ArrayData, Record, Value};

use crate::util;
use crate::util::{run_in, simrec};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every source format's small fixtures (a `.traj` with its `.state` is one recording).
const SOURCES: &[&[&str]] = &[
    &[
        "fixtures/nanover-legacy/small.traj",
        "fixtures/nanover-legacy/small.state",
    ],
    &["fixtures/nanover-zip/small.nanover.zip"],
    &["fixtures/elodin/ball_1200"],
    &["fixtures/elodin/types_300"],
    &["fixtures/tes/small_plain.3es"],
    &["fixtures/tes/small_collate.3es"],
    &["fixtures/icarec/a2.icarec"],
    &["fixtures/icarec/types.icarec"],
    &["fixtures/icarus-hdf5/small.h5"],
    &["fixtures/icarus-hdf5/vulcan.h5"],
    &["fixtures/icarus-csv/rocket.csv"],
    &["fixtures/xrec/session.xrec"],
    &["fixtures/xrec/session_gzip.xrec"],
];

/// The first record of each channel as simrec's reader of the source format decodes it.
fn first_records(inputs: &[&str]) -> BTreeMap<String, Record> {
    let paths: Vec<PathBuf> = inputs.iter().map(|p| root().join(p)).collect();
    let mut source = simrec::pipeline::open_recording(&paths, ReadOptions::default()).unwrap();
    let mut first = BTreeMap::new();
    while let Some(record) = source.next() {
        let record = record.unwrap();
        let name = source.header().channels[record.channel as usize]
            .name
            .clone();
        first.entry(name).or_insert(record);
    }
    first
}

fn read_table(path: &Path) -> Vec<RecordBatch> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    builder.build().unwrap().map(Result::unwrap).collect()
}

fn channel_name(batch: &RecordBatch, row: usize) -> String {
    let dict = batch
        .column_by_name("channel")
        .unwrap()
        .as_dictionary::<Int32Type>();
    let key = dict.keys().value(row) as usize;
    dict.values().as_string::<i32>().value(key).to_string()
}

/// One cell as a model value (lists as flat arrays; JSON text as a string).
fn cell(array: &ArrayRef, row: usize) -> Option<Value> {
    if array.is_null(row) {
        return None;
    }
    Some(match array.data_type() {
        DataType::Boolean => Value::Bool(array.as_boolean().value(row)),
        DataType::Int8 => Value::Int(array.as_primitive::<Int8Type>().value(row).into()),
        DataType::Int16 => Value::Int(array.as_primitive::<Int16Type>().value(row).into()),
        DataType::Int32 => Value::Int(array.as_primitive::<Int32Type>().value(row).into()),
        DataType::Int64 => Value::Int(array.as_primitive::<Int64Type>().value(row)),
        DataType::UInt8 => Value::UInt(array.as_primitive::<UInt8Type>().value(row).into()),
        DataType::UInt16 => Value::UInt(array.as_primitive::<UInt16Type>().value(row).into()),
        DataType::UInt32 => Value::UInt(array.as_primitive::<UInt32Type>().value(row).into()),
        DataType::UInt64 => Value::UInt(array.as_primitive::<UInt64Type>().value(row)),
        DataType::Float32 => Value::F32(array.as_primitive::<Float32Type>().value(row)),
        DataType::Float64 => Value::Float(array.as_primitive::<Float64Type>().value(row)),
        DataType::Utf8 => Value::Str(array.as_string::<i32>().value(row).to_string()),
        DataType::Binary => Value::Bytes(array.as_binary::<i32>().value(row).to_vec()),
        DataType::List(_) => {
            let items = array.as_list::<i32>().value(row);
            let n = items.len();
            let data = match items.data_type() {
                DataType::Float32 => {
                    ArrayData::F32(items.as_primitive::<Float32Type>().values().to_vec())
                }
                DataType::Float64 => {
                    ArrayData::F64(items.as_primitive::<Float64Type>().values().to_vec())
                }
                DataType::UInt8 => {
                    ArrayData::U8(items.as_primitive::<UInt8Type>().values().to_vec())
                }
                DataType::UInt16 => {
                    ArrayData::U16(items.as_primitive::<UInt16Type>().values().to_vec())
                }
                DataType::Int8 => ArrayData::I8(items.as_primitive::<Int8Type>().values().to_vec()),
                DataType::Int16 => {
                    ArrayData::I16(items.as_primitive::<Int16Type>().values().to_vec())
                }
                DataType::UInt32 => {
                    ArrayData::U32(items.as_primitive::<UInt32Type>().values().to_vec())
                }
                DataType::UInt64 => {
                    ArrayData::U64(items.as_primitive::<UInt64Type>().values().to_vec())
                }
                DataType::Int32 => {
                    ArrayData::I32(items.as_primitive::<Int32Type>().values().to_vec())
                }
                DataType::Int64 => {
                    ArrayData::I64(items.as_primitive::<Int64Type>().values().to_vec())
                }
                DataType::Boolean => {
                    let b = items.as_boolean();
                    ArrayData::Bool((0..n).map(|i| b.value(i)).collect())
                }
                DataType::Utf8 => {
                    let s = items.as_string::<i32>();
                    ArrayData::Str((0..n).map(|i| s.value(i).to_string()).collect())
                }
                other => panic!("list of {other}"),
            };
            Value::Array(simrec::model::Array::flat(data))
        }
        other => panic!("column type {other}"),
    })
}

/// Flat elements as f64 (float32 widened), for comparing arrays written in a wider type.
fn flat(data: &ArrayData) -> Vec<String> {
    (0..data.len())
        .map(|i| match data {
            ArrayData::F32(v) => format!("{:?}", f64::from(v[i])),
            ArrayData::F64(v) => format!("{:?}", v[i]),
            other => other.element_text(i).unwrap(),
        })
        .collect()
}

/// A source value as JSON, to compare with a JSON text column.
fn json(value: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => J::from(*i),
        Value::UInt(u) => J::from(*u),
        Value::Float(x) => J::from(*x),
        Value::F32(x) => serde_json::from_str(&format!("{x:?}")).unwrap(),
        Value::Str(s) => J::String(s.clone()),
        Value::List(items) => J::Array(items.iter().map(json).collect()),
        Value::Map(fields) => J::Object(fields.iter().map(|(k, v)| (k.clone(), json(v))).collect()),
        other => panic!("no JSON for {other:?}"),
    }
}

/// Whether the source value `want` reads back as `got`.
fn same(want: &Value, got: &Value) -> bool {
    match (want, got) {
        (Value::Array(a), Value::Array(b)) => flat(&a.data) == flat(&b.data),
        (Value::Array(a), scalar) if a.len() == 1 => {
            let one = match scalar {
                Value::UInt(u) => ArrayData::U64(vec![*u]),
                Value::Int(i) => ArrayData::I64(vec![*i]),
                Value::Float(x) => ArrayData::F64(vec![*x]),
                Value::F32(x) => ArrayData::F32(vec![*x]),
                Value::Bool(b) => ArrayData::Bool(vec![*b]),
                _ => return false,
            };
            flat(&a.data) == flat(&one)
        }
        (Value::F32(a), Value::Float(b)) => format!("{:?}", f64::from(*a)) == format!("{b:?}"),
        (Value::Float(a), Value::Float(b)) => format!("{a:?}") == format!("{b:?}"),
        (Value::F32(a), Value::F32(b)) => format!("{a:?}") == format!("{b:?}"),
        // A whole double the family types as an integer (a `.traj`'s `frame.index`).
        (Value::Float(a), Value::Int(b)) => *a == *b as f64,
        // A msgpack list of strings, a list column in the family (a `.nanover.zip`'s names).
        (Value::List(items), Value::Array(b)) => {
            let texts: Option<Vec<String>> = items
                .iter()
                .map(|v| match v {
                    Value::Str(s) => Some(s.clone()),
                    _ => None,
                })
                .collect();
            texts.is_some_and(|t| flat(&ArrayData::Str(t)) == flat(&b.data))
        }
        (Value::Int(a), Value::UInt(b)) => u64::try_from(*a) == Ok(*b),
        (Value::UInt(a), Value::Int(b)) => i64::try_from(*a) == Ok(*b),
        (Value::Map(_) | Value::List(_), Value::Str(text)) => {
            serde_json::from_str::<serde_json::Value>(text).unwrap() == json(want)
        }
        _ => want == got,
    }
}

fn convert(inputs: &[&str], out: &Path) {
    let mut args: Vec<String> = inputs.iter().map(|s| s.to_string()).collect();
    args.extend(["-o".into(), out.display().to_string()]);
    let output = simrec()
        .current_dir(root())
        .arg("convert")
        .args(&args)
        .output()
        .unwrap();
    let code = output.status.code().unwrap();
    assert!(
        code == 0,
        "{inputs:?}: exit {code}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn every_source_to_one_table_keeps_counts_and_first_values() {
    let dir = tempfile::tempdir().unwrap();
    for inputs in SOURCES {
        let out = dir.path().join("out.parquet");
        let _ = std::fs::remove_file(&out);
        convert(inputs, &out);
        let batches = read_table(&out);
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        let mut first_row: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        for (b, batch) in batches.iter().enumerate() {
            for row in 0..batch.num_rows() {
                let name = channel_name(batch, row);
                *counts.entry(name.clone()).or_default() += 1;
                first_row.entry(name).or_insert((b, row));
            }
        }
        let mut want = util::inspect_counts(&root(), inputs);
        want.retain(|_, n| *n > 0);
        assert_eq!(counts, want, "{inputs:?}: rows per channel");

        for (name, record) in first_records(inputs) {
            let (b, row) = first_row[&name];
            let batch = &batches[b];
            let time = batch.column_by_name("time_ns").unwrap();
            assert_eq!(
                time.as_primitive::<Int64Type>().value(row),
                record.time,
                "{inputs:?} {name}: time"
            );
            let frame = cell(batch.column_by_name("frame").unwrap(), row);
            assert_eq!(
                frame,
                record.frame.map(Value::Int),
                "{inputs:?} {name}: frame"
            );
            let mut compared = 0;
            for (key, value) in &record.values {
                if matches!(
                    value,
                    Value::Null
                        | Value::Removed
                        | Value::Bytes(_)
                        | Value::Ext { .. }
                        | Value::Dict(_)
                ) {
                    continue;
                }
                // The key's column: its own name, `key.<kind>` or `channel.key`.
                let candidates = batch
                    .schema()
                    .fields()
                    .iter()
                    .filter(|f| {
                        f.name() == key
                            || f.name().starts_with(&format!("{key}."))
                            || *f.name() == format!("{name}.{key}")
                    })
                    .map(|f| f.name().clone())
                    .collect::<Vec<_>>();
                let found = candidates.iter().any(|c| {
                    cell(batch.column_by_name(c).unwrap(), row).is_some_and(|got| same(value, &got))
                });
                assert!(
                    found,
                    "{inputs:?} {name}: {key} = {value:?} not in {candidates:?}"
                );
                compared += 1;
            }
            assert!(
                compared > 0 || record.values.is_empty(),
                "{inputs:?} {name}: no value compared"
            );
        }
    }
}

#[test]
fn the_table_carries_its_origin_source_and_version_and_is_zstd_with_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a2.parquet");
    convert(&["fixtures/icarec/a2.icarec"], &out);
    let reader = SerializedFileReader::new(File::open(&out).unwrap()).unwrap();
    let meta = reader.metadata();
    let kv: BTreeMap<String, String> = meta
        .file_metadata()
        .key_value_metadata()
        .unwrap()
        .iter()
        .map(|k| (k.key.clone(), k.value.clone().unwrap_or_default()))
        .collect();
    assert_eq!(kv["simrec.version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(kv["simrec.source.format"], "icarec");
    assert_eq!(kv["simrec.source.path"], "fixtures/icarec/a2.icarec");
    let inspect = run_in(
        &root(),
        &["inspect", "--format", "json", "fixtures/icarec/a2.icarec"],
    );
    let origin = &inspect.json_lines()[0]["origin"];
    assert_eq!(kv["simrec.origin.epoch"], origin["epoch"].as_str().unwrap());
    assert_eq!(
        kv["simrec.origin.system"],
        origin["system"].as_str().unwrap()
    );
    for rg in meta.row_groups() {
        for col in rg.columns() {
            assert_eq!(
                col.compression(),
                parquet::basic::Compression::ZSTD(Default::default()),
                "{}",
                col.column_path()
            );
        }
        let time = rg.column(0);
        assert_eq!(time.column_path().string(), "time_ns");
        assert!(time.statistics().is_some(), "time_ns has statistics");
    }
}

#[test]
fn typed_arrays_are_lists_with_their_shape_and_state_maps_are_json() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("nv.parquet");
    convert(
        &[
            "fixtures/nanover-legacy/small.traj",
            "fixtures/nanover-legacy/small.state",
        ],
        &out,
    );
    let batches = read_table(&out);
    let schema = batches[0].schema();
    let positions = schema.field_with_name("particle.positions").unwrap();
    assert!(
        matches!(positions.data_type(), DataType::List(f) if f.data_type() == &DataType::Float32)
    );
    let shape = &positions.metadata()["simrec.shape"];
    assert!(shape.ends_with(",3]"), "{shape}");
    assert_eq!(positions.metadata()["simrec.unit"], "nm");
    let names: Vec<&str> = schema
        .fields()
        .iter()
        .take(4)
        .map(|f| f.name().as_str())
        .collect();
    assert_eq!(names, ["time_ns", "channel", "entity", "frame"]);
    assert_eq!(schema.fields().last().unwrap().name(), "removed");
    // Times in order, as inspect gives them.
    let times: Vec<i64> = batches
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(times.first(), Some(&8_445_000));
}

#[test]
fn a_directory_output_is_one_file_per_channel_with_its_own_columns() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ds");
    let target = format!("{}/", out.display());
    let inputs = [
        "fixtures/nanover-legacy/small.traj",
        "fixtures/nanover-legacy/small.state",
    ];
    let run = run_in(
        &root(),
        &[
            "convert", inputs[0], inputs[1], "-o", &target, "--to", "parquet",
        ],
    )
    .expect_code(0);
    assert!(run.stderr.contains("wrote 47 records"), "{}", run.stderr);
    let mut files: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["frame.parquet", "state.parquet"]);
    let counts = util::inspect_counts(&root(), &inputs);
    for (file, channel) in [("frame.parquet", "frame"), ("state.parquet", "state")] {
        let batches = read_table(&out.join(file));
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(rows as u64, counts[channel]);
        let schema = batches[0].schema();
        let has = |name: &str| schema.field_with_name(name).is_ok();
        assert_eq!(has("particle.positions"), channel == "frame");
        assert!(batches
            .iter()
            .all(|b| (0..b.num_rows()).all(|r| channel_name(b, r) == channel)));
    }
    // Again without --force: refused, the dataset untouched; with it, replaced.
    run_in(
        &root(),
        &["convert", inputs[0], "-o", &target, "--to", "parquet"],
    )
    .expect_code(2);
    run_in(
        &root(),
        &[
            "convert", inputs[0], "-o", &target, "--to", "parquet", "--force",
        ],
    )
    .expect_code(0);
    assert!(!out.join("state.parquet").exists());
}

/// Frame rows whose `key` is not null.
fn non_null_frames(path: &Path, key: &str) -> usize {
    read_table(path)
        .iter()
        .map(|b| {
            let col = b.column_by_name(key).unwrap();
            (0..b.num_rows())
                .filter(|&r| channel_name(b, r) == "frame" && !col.is_null(r))
                .count()
        })
        .sum()
}

#[test]
fn fold_writes_each_frames_full_value_instead_of_its_changes() {
    let inputs = [
        "fixtures/nanover-legacy/small.traj",
        "fixtures/nanover-legacy/small.state",
    ];
    let with_names = first_records(&inputs).len();
    assert_eq!(with_names, 2);
    let paths: Vec<PathBuf> = inputs.iter().map(|p| root().join(p)).collect();
    let mut source = simrec::pipeline::open_recording(&paths, ReadOptions::default()).unwrap();
    let (mut frames, mut carrying) = (0, 0);
    while let Some(r) = source.next() {
        let r = r.unwrap();
        if r.channel == source.header().channel_id("frame").unwrap() {
            frames += 1;
            carrying += usize::from(r.get("particle.names").is_some());
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let recorded = dir.path().join("recorded.parquet");
    let folded = dir.path().join("folded.parquet");
    convert(&inputs, &recorded);
    let f = folded.display().to_string();
    run_in(
        &root(),
        &["convert", inputs[0], inputs[1], "-o", &f, "--fold"],
    )
    .expect_code(0);
    assert_eq!(non_null_frames(&recorded, "particle.names"), carrying);
    assert_eq!(non_null_frames(&folded, "particle.names"), frames);
    assert!(carrying < frames);
    let r = run_in(&root(), &["convert", inputs[0], "-o", "x.jsonl", "--fold"]).expect_code(2);
    assert_eq!(
        r.stderr,
        "error: --fold applies to parquet output; this output is jsonl\n"
    );
    assert!(!root().join("x.jsonl").exists());

    // A switch the format declares: slice takes it too. The first second holds 8 frames;
    // only the first carries the names as recorded, all 8 folded.
    for (fold, with_names) in [(false, 1), (true, 8)] {
        let sliced = dir.path().join(format!("sliced-{fold}.parquet"));
        let out = sliced.display().to_string();
        let mut args = vec!["slice", inputs[0], inputs[1], "--end", "1", "-o", &out];
        if fold {
            args.push("--fold");
        }
        run_in(&root(), &args).expect_code(0);
        assert_eq!(non_null_frames(&sliced, "particle.names"), with_names);
    }
}
