//! The Parquet table written a frame at a time (`.icarec` and Icarus HDF5 → Parquet with
//! nothing to do record by record goes by frames): without a `--channel` the frame path,
//! with `--channel '*'` (every signal) the record path. On every Icarus fixture both runs
//! exit alike, print the same and write the same table (schema with its field metadata,
//! key-value metadata, every column of every row, bit for bit); real values are checked in
//! the frame path's table; and a layout whose values do not all go into their columns as
//! they are (a float signal in a column of doubles) is left to the record path.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::metadata::KeyValue;
use simrec::formats::{format_named, ReadOptions};
use simrec::pipeline::frame_copy::write_frames;
use simrec::pipeline::WriteRequest;

use crate::util;
use crate::util::{any_fixture, frame_and_record_runs, icarec_with_partial_last_frame, run_in, s};

const ICAREC: [&str; 5] = [
    "a2.icarec",
    "types.icarec",
    "a2.icarec.tar",
    "a2-gnu.icarec.tar",
    "a2-pax.icarec.tar",
];
const HDF5: [&str; 6] = [
    "crashed.h5",
    "escape.h5",
    "noschema.h5",
    "small.h5",
    "unescaped.h5",
    "vulcan.h5",
];

/// A table as read back: the Arrow schema (with the field metadata), the key-value
/// metadata and the batches.
pub(crate) struct Table {
    schema: SchemaRef,
    metadata: Vec<KeyValue>,
    batches: Vec<RecordBatch>,
}

fn read(path: &Path) -> Table {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let schema = builder.schema().clone();
    let metadata = (builder.metadata().file_metadata().key_value_metadata())
        .cloned()
        .unwrap_or_default();
    let batches = builder.build().unwrap().map(Result::unwrap).collect();
    Table {
        schema,
        metadata,
        batches,
    }
}

impl Table {
    pub(crate) fn rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    /// Row `row` of column `name`: its batch's array and the row in it.
    fn at(&self, name: &str, row: usize) -> (arrow_array::ArrayRef, usize) {
        let mut row = row;
        for b in &self.batches {
            if row < b.num_rows() {
                return (b.column_by_name(name).unwrap().clone(), row);
            }
            row -= b.num_rows();
        }
        panic!("no row {row}");
    }

    fn channel(&self, row: usize) -> String {
        let (a, i) = self.at("channel", row);
        let d = a.as_dictionary::<Int32Type>();
        let key = d.keys().value(i) as usize;
        d.values().as_string::<i32>().value(key).to_string()
    }

    fn text(&self, name: &str, row: usize) -> Option<String> {
        let (a, i) = self.at(name, row);
        (!a.is_null(i)).then(|| a.as_string::<i32>().value(i).to_string())
    }

    fn i64(&self, name: &str, row: usize) -> Option<i64> {
        let (a, i) = self.at(name, row);
        (!a.is_null(i)).then(|| a.as_primitive::<Int64Type>().value(i))
    }

    fn i32(&self, name: &str, row: usize) -> Option<i32> {
        let (a, i) = self.at(name, row);
        (!a.is_null(i)).then(|| a.as_primitive::<Int32Type>().value(i))
    }

    fn f32(&self, name: &str, row: usize) -> Option<f32> {
        let (a, i) = self.at(name, row);
        (!a.is_null(i)).then(|| a.as_primitive::<Float32Type>().value(i))
    }

    fn bool(&self, name: &str, row: usize) -> Option<bool> {
        let (a, i) = self.at(name, row);
        (!a.is_null(i)).then(|| a.as_boolean().value(i))
    }

    fn f64s(&self, name: &str, row: usize) -> Option<Vec<f64>> {
        let (a, i) = self.at(name, row);
        (!a.is_null(i)).then(|| {
            let v = a.as_list::<i32>().value(i);
            v.as_primitive::<Float64Type>().values().to_vec()
        })
    }

    fn i32s(&self, name: &str, row: usize) -> Option<Vec<i32>> {
        let (a, i) = self.at(name, row);
        (!a.is_null(i)).then(|| {
            let v = a.as_list::<i32>().value(i);
            v.as_primitive::<Int32Type>().values().to_vec()
        })
    }
}

/// Both tables hold the same: schema, metadata, and every column of every batch (the
/// same batches: both are read back the same way), values compared as stored (a NaN is
/// the NaN it was).
fn assert_same(a: &Table, b: &Table, what: &str) {
    assert_eq!(a.schema, b.schema, "{what}");
    assert_eq!(a.metadata, b.metadata, "{what}");
    assert_eq!(a.batches.len(), b.batches.len(), "{what}");
    for (x, y) in a.batches.iter().zip(&b.batches) {
        assert_eq!(x.num_rows(), y.num_rows(), "{what}");
        for c in 0..x.num_columns() {
            assert_eq!(
                x.column(c).to_data(),
                y.column(c).to_data(),
                "{what}: column {}",
                a.schema.field(c).name()
            );
        }
    }
}

/// Converts `input` to `frames.parquet` (the frame path) and `records.parquet`
/// (`--channel '*'`: the record path) in `dir`; checks that both runs exit alike and print
/// the same (but for the output's name), and that the tables are the same; returns the
/// frame path's exit code, what it printed and its table.
pub(crate) fn both_ways(dir: &Path, input: &Path) -> (i32, String, Option<Table>) {
    let frames = dir.join("frames.parquet");
    let records = dir.join("records.parquet");
    let (a, _) = frame_and_record_runs(dir, input, (s(&frames), s(&records)), &[], str::to_owned);
    let what = input.display().to_string();
    if a.code == 1 {
        assert!(!frames.exists() && !records.exists(), "{what}");
        return (a.code, a.stderr, None);
    }
    let (ta, tb) = (read(&frames), read(&records));
    assert_same(&ta, &tb, &what);
    std::fs::remove_file(&frames).unwrap();
    std::fs::remove_file(&records).unwrap();
    (a.code, a.stderr, Some(ta))
}

#[test]
fn the_frame_path_writes_the_record_paths_table_on_every_icarus_fixture() {
    let tmp = tempfile::tempdir().unwrap();
    let inputs = (ICAREC.iter().map(|n| format!("icarec/{n}")))
        .chain(HDF5.iter().map(|n| format!("icarus-hdf5/{n}")));
    for name in inputs {
        let (code, stderr, table) = both_ways(tmp.path(), &any_fixture(&name));
        if name.ends_with("crashed.h5") {
            // Datasets of different lengths: read up to the shortest both ways.
            assert_eq!(code, 3, "{name}: {stderr}");
            assert_eq!(
                table.unwrap().rows(),
                2400,
                "{name}: 1200 frames of two signals"
            );
            continue;
        }
        assert_eq!(code, 0, "{name}: {stderr}");
        let table = table.unwrap();
        assert!(table.rows() > 0, "{name}");
        assert!(
            stderr.contains(&format!("wrote {} records", table.rows())),
            "{name}: {stderr}"
        );
    }
}

#[test]
fn the_frame_path_keeps_every_type_of_the_profile_in_its_column() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, stderr, table) = both_ways(tmp.path(), &any_fixture("icarec/types.icarec"));
    assert_eq!(code, 0, "{stderr}");
    let t = table.unwrap();
    // 4 static signals at the first frame's time, then 8 dynamic ones in each of 2 frames.
    assert_eq!(t.rows(), 20);
    assert_eq!(t.channel(0), "Body.inertia");
    assert_eq!(t.text("entity", 0).as_deref(), Some("Body"));
    assert_eq!(t.i64("time_ns", 0), Some(500_000_000));
    assert_eq!(t.i64("frame", 3), Some(0));
    assert_eq!(t.channel(4), "Sim.count");
    assert_eq!(t.i64("count", 4), Some(1152921504606846976));
    assert_eq!(t.i64("count", 5), None);
    assert_eq!(t.channel(12), "Sim.count");
    assert_eq!(t.i64("time_ns", 12), Some(1_000_000_000));
    assert_eq!(t.i64("frame", 12), Some(1));
    assert_eq!(t.i64("count", 12), Some(-9007199254740993));
    // An int32, in 4 bytes or in an 8-byte slot.
    assert_eq!(t.i32("mode", 5), Some(-3));
    assert_eq!(t.i32("mode_slot", 6), Some(-3));
    assert_eq!(t.i32("mode_slot", 14), Some(2147483647));
    // A bool, in a byte or in an 8-byte slot.
    assert_eq!(t.bool("armed", 7), Some(true));
    assert_eq!(t.bool("armed_slot", 8), Some(true));
    assert_eq!(t.bool("armed_slot", 16), Some(false));
    // A Quat (w, x, y, z), a Mat3 row-major (stored column-major), a static Vec3<int32>,
    // a static float.
    assert_eq!(t.f64s("q", 9), Some(vec![1.0, 0.0, 0.0, 0.0]));
    assert_eq!(t.f64s("q", 17), Some(vec![0.5; 4]));
    assert_eq!(
        t.f64s("m", 11),
        Some(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    );
    assert_eq!(
        t.f64s("m", 19),
        Some(vec![-1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0])
    );
    assert_eq!(t.i32s("offsets", 1), Some(vec![-1, 0, 1]));
    assert_eq!(t.f32("gain", 3), Some(f32::from_bits(0x3f49_0ff9)));
    assert_eq!(t.f64s("m", 12), None);
    assert_eq!(t.text("removed", 0), None);
}

#[test]
fn hdf5_frames_keep_their_values_nans_and_times() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, stderr, table) = both_ways(tmp.path(), &any_fixture("icarus-hdf5/noschema.h5"));
    assert_eq!(code, 0, "{stderr}");
    let t = table.unwrap();
    // 5 frames of 3 signals.
    assert_eq!(t.rows(), 15);
    assert_eq!(t.channel(6), "a.first");
    assert_eq!(t.i64("time_ns", 6), Some(300_000_000));
    assert_eq!(t.i64("frame", 6), Some(2));
    let (a, i) = t.at("first", 6);
    assert!(a.as_primitive::<Float64Type>().value(i).is_nan());
    let (a, i) = t.at("first", 9);
    assert_eq!(a.as_primitive::<Float64Type>().value(i), f64::INFINITY);
    assert_eq!(t.f32("second", 4), Some(0.2));
    assert_eq!(t.i32("flag", 5), Some(1));
}

/// A copy of `a2.icarec` whose static float is named like its double (`alpha`): the two
/// share a column of doubles, and the float's values are widened into it.
fn shared_column(dir: &Path) -> PathBuf {
    let src = any_fixture("icarec/a2.icarec");
    let rec = dir.join("shared.icarec");
    std::fs::create_dir(&rec).unwrap();
    for part in ["static_signals.bin", "dynamic_signals.bin"] {
        std::fs::copy(src.join(part), rec.join(part)).unwrap();
    }
    let mut schema: serde_json::Value =
        serde_json::from_slice(&std::fs::read(src.join("schema.json")).unwrap()).unwrap();
    let signals = schema["signals"].as_array_mut().unwrap();
    signals[2]["name"] = "Vehicle.Mass.alpha".into();
    let checksum = simrec::formats::icarus::icarec::schema::checksum(signals);
    schema["checksum"] = checksum.into();
    std::fs::write(rec.join("schema.json"), schema.to_string()).unwrap();
    rec
}

#[test]
fn a_layout_whose_values_need_converting_goes_the_record_path() {
    let tmp = tempfile::tempdir().unwrap();
    let parquet = format_named("parquet").unwrap();
    let out = tmp.path().join("out.parquet");
    fn request<'a>(
        output: &'a Path,
        format: &'static dyn simrec::formats::Format,
    ) -> WriteRequest<'a> {
        WriteRequest {
            output,
            format,
            force: false,
            dry_run: false,
            flags: Default::default(),
            split: false,
            resample: None,
        }
    }
    let mut progress = |_, _| {};
    // Whole recordings into one file go by frames.
    for name in ["icarec/a2.icarec", "icarus-hdf5/small.h5"] {
        let input = vec![any_fixture(name)];
        let (written, _) = write_frames(
            &input,
            ReadOptions::default(),
            &request(&out, parquet),
            &mut progress,
        )
        .unwrap_or_else(|| panic!("{name} into a Parquet table goes by frames"));
        assert!(written.unwrap().report.records > 0);
        std::fs::remove_file(&out).unwrap();
    }
    // One file per channel, and a float in a column of doubles, do not.
    let dataset = tmp.path().join("dataset/");
    let input = vec![any_fixture("icarec/a2.icarec")];
    assert!(write_frames(
        &input,
        ReadOptions::default(),
        &request(&dataset, parquet),
        &mut progress
    )
    .is_none());
    let shared = vec![shared_column(tmp.path())];
    assert!(write_frames(
        &shared,
        ReadOptions::default(),
        &request(&out, parquet),
        &mut progress
    )
    .is_none());
    assert!(!out.exists() && !dataset.exists());
    // Through the command line it goes the record path both ways, alike.
    let (code, stderr, table) = both_ways(tmp.path(), &shared[0]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("float32 written as float64"), "{stderr}");
    let t = table.unwrap();
    assert_eq!(t.channel(0), "Vehicle.Mass.alpha");
    let (a, i) = t.at("alpha", 0);
    assert_eq!(a.as_primitive::<Float64Type>().value(i), 1250.0);
}

/// A partial last frame is read up to both ways (the same table, exit 3); with `--strict`
/// it fails both ways and leaves nothing.
#[test]
fn a_partial_last_frame_is_read_up_to_both_ways_and_strict_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = icarec_with_partial_last_frame(tmp.path());
    let (code, stderr, table) = both_ways(tmp.path(), &rec);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("the last frame is partial"), "{stderr}");
    assert!(table.is_some_and(|t| t.rows() > 0));
    for extra in [&[][..], &["--channel", "*"]] {
        let args = [
            &["convert", "--strict", s(&rec), "-o", "x.parquet"][..],
            extra,
        ]
        .concat();
        run_in(tmp.path(), &args).expect_code(1);
    }
    assert_eq!(util::dir_entries(tmp.path()), ["cut.icarec"]);
}
