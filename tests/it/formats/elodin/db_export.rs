//! `elodin-db export` directories through the library: each fixture export (Elodin's own
//! `save_archive`, 0.16.2 and 0.18.0, as Parquet, Arrow IPC and CSV) against the DB it came
//! from, and the layouts the fixtures lack (`--join`, `--flatten`, `--mono-ns`, unflattened
//! CSV lists) made here from a fixture file as upstream's `libs/db/src/export.rs` lays them
//! out; every cut of a small export file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::types::{Float64Type, UInt64Type};
use arrow_array::{
    ArrayRef, FixedSizeListArray, Float64Array, Int64Array, PrimitiveArray, RecordBatch,
    TimestampMicrosecondArray, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use simrec::formats::elodin::db::DbReader;
use simrec::formats::elodin::db_export::{decode_file, ExportReader, Kind};
use simrec::formats::{ReadError, ReadOptions, Source};
use simrec::model::{DType, Value};

use super::db_read::db_fixture;

/// A recording's channels by name: dtype, shape, element names, and its rows as
/// (absolute ns since the Unix epoch, value).
type Channels = BTreeMap<String, (DType, Vec<usize>, Option<Vec<String>>, Vec<(i64, Value)>)>;

fn channels(source: &mut dyn Source) -> Channels {
    let header = source.header().clone();
    let epoch = header.origin.epoch.as_ref().unwrap().unix_ns;
    let mut out = Channels::new();
    for channel in &header.channels {
        let f = &channel.fields[0];
        let entry = (
            f.dtype.unwrap(),
            f.shape.clone().unwrap(),
            f.elements.clone(),
            Vec::new(),
        );
        out.insert(channel.name.clone(), entry);
    }
    for record in &mut *source {
        let record = record.unwrap();
        let name = &header.channels[record.channel as usize].name;
        let (_, value) = record.values.into_iter().next().unwrap();
        out.get_mut(name)
            .unwrap()
            .3
            .push((epoch + record.time, value));
    }
    out
}

fn export(rel: &str) -> PathBuf {
    db_fixture("exports").join(rel)
}

fn read_export(dir: &Path) -> Channels {
    channels(&mut ExportReader::open(dir, ReadOptions::default()).unwrap())
}

fn read_db(rel: &str) -> Channels {
    channels(&mut DbReader::open(&db_fixture(rel), ReadOptions::default()).unwrap())
}

#[test]
fn every_fixture_export_reads_as_the_db_it_came_from() {
    for (db, lowercased) in [("ball_v0162", false), ("three_body_v0180", true)] {
        let want = read_db(db);
        for kind in ["parquet", "arrow", "csv"] {
            let dir = export(&format!("{db}_{kind}"));
            assert_eq!(
                simrec::formats::detect(&dir).unwrap().name(),
                "elodin-db-export",
                "{db} {kind}"
            );
            let got = read_export(&dir);
            // Elodin 0.18's export lower-cases every name (`Globals.tick` → `globals.tick`).
            let name = |n: &str| {
                if lowercased {
                    n.to_lowercase()
                } else {
                    n.to_string()
                }
            };
            let mut names: Vec<String> = want.keys().map(|n| name(n)).collect();
            names.sort();
            assert_eq!(
                got.keys().cloned().collect::<Vec<_>>(),
                names,
                "{db} {kind}"
            );
            for (n, (dtype, shape, elements, rows)) in &want {
                let (g_dtype, g_shape, g_elements, g_rows) = &got[&name(n)];
                let what = format!("{db} {kind} {n}");
                assert_eq!(g_dtype, dtype, "{what}");
                assert_eq!(g_shape, shape, "{what}");
                // Only a flattened CSV names its elements (its column names).
                if kind == "csv" {
                    let lower = elements
                        .as_ref()
                        .map(|e| e.iter().map(|x| name(x)).collect::<Vec<_>>());
                    assert_eq!(g_elements, &lower, "{what}");
                } else {
                    assert_eq!(g_elements, &None, "{what}");
                }
                assert_eq!(g_rows.len(), rows.len(), "{what}");
                assert_eq!(g_rows.len(), 301, "{what}");
                // Exact: CSV prints each float as the shortest text that parses back to it.
                assert_eq!(g_rows, rows, "{what}");
            }
        }
    }
}

/// A µs time column as Elodin writes it.
fn time_us(times: &[i64]) -> (Field, ArrayRef) {
    (
        Field::new(
            "time",
            DataType::Timestamp(TimeUnit::Microsecond, None),
            false,
        ),
        Arc::new(TimestampMicrosecondArray::from(times.to_vec())),
    )
}

fn list(name: &str, width: i32, values: Vec<f64>) -> (Field, ArrayRef) {
    let item = Arc::new(Field::new(name, DataType::Float64, false));
    let array = FixedSizeListArray::new(
        item.clone(),
        width,
        Arc::new(Float64Array::from(values)),
        None,
    );
    (
        Field::new_fixed_size_list(name, item, width, false),
        Arc::new(array),
    )
}

fn write_arrow(path: &Path, columns: Vec<(Field, ArrayRef)>) {
    let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = columns.into_iter().unzip();
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap();
    let mut file = std::fs::File::create(path).unwrap();
    let mut w = arrow_ipc::writer::FileWriter::try_new(&mut file, &batch.schema()).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
}

/// The rows of `name` in `got`, as (time, f64 elements).
fn f64_rows(got: &Channels, name: &str) -> Vec<(i64, Vec<f64>)> {
    got[name]
        .3
        .iter()
        .map(|(t, v)| {
            let Value::Array(a) = v else { panic!() };
            let simrec::model::ArrayData::F64(d) = &a.data else {
                panic!()
            };
            (*t, d.clone())
        })
        .collect()
}

#[test]
fn joined_flattened_and_mono_ns_layouts_regroup_into_components() {
    let tmp = tempfile::tempdir().unwrap();
    // `--join`: one file per entity, columns named after the part past the last dot; two
    // members on other times (an outer join: nulls where a member has no row).
    let joined = tmp.path().join("joined");
    std::fs::create_dir(&joined).unwrap();
    let t = [
        1_700_000_000_000_000,
        1_700_000_000_010_000,
        1_700_000_000_020_000,
    ];
    let pos = list(
        "world_pos",
        3,
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    );
    let tick: PrimitiveArray<UInt64Type> = UInt64Array::from(vec![Some(0), None, Some(2)]);
    let vel: PrimitiveArray<Float64Type> = Float64Array::from(vec![0.5, 1.5, 2.5]);
    write_arrow(
        &joined.join("a.arrow"),
        vec![
            time_us(&t),
            pos,
            (Field::new("tick", DataType::UInt64, true), Arc::new(tick)),
            (Field::new("speed", DataType::Float64, false), Arc::new(vel)),
        ],
    );
    // `--join --flatten --mono-ns`: `time_ns`, flattened members `<short>_<element>`.
    write_arrow(
        &joined.join("b_>_c.arrow"),
        vec![
            (
                Field::new("time_ns", DataType::Int64, false),
                Arc::new(Int64Array::from(vec![1_700_000_000_000_000_123])),
            ),
            (
                Field::new("world_vel_x", DataType::Float64, false),
                Arc::new(Float64Array::from(vec![1.0])),
            ),
            (
                Field::new("world_vel_y", DataType::Float64, false),
                Arc::new(Float64Array::from(vec![2.0])),
            ),
            (
                Field::new("gravity_edge", DataType::Float64, false),
                Arc::new(Float64Array::from(vec![3.0])),
            ),
        ],
    );
    let mut reader = ExportReader::open(&joined, ReadOptions::default()).unwrap();
    assert_eq!(
        reader
            .header()
            .origin
            .epoch
            .as_ref()
            .unwrap()
            .fraction_digits,
        9
    );
    let got = channels(&mut reader);
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        [
            "a.speed",
            "a.tick",
            "a.world_pos",
            "b_>_c.gravity_edge",
            "b_>_c.world_vel"
        ]
    );
    let us = |i: usize| t[i] * 1000;
    assert_eq!(
        f64_rows(&got, "a.world_pos"),
        [
            (us(0), vec![1.0, 2.0, 3.0]),
            (us(1), vec![4.0, 5.0, 6.0]),
            (us(2), vec![7.0, 8.0, 9.0])
        ]
    );
    // The null row is no row.
    let ticks: Vec<i64> = got["a.tick"].3.iter().map(|(t, _)| *t).collect();
    assert_eq!(ticks, [us(0), us(2)]);
    assert_eq!(got["a.tick"].0, DType::U64);
    assert_eq!(got["a.speed"].1, Vec::<usize>::new());
    let vel = &got["b_>_c.world_vel"];
    assert_eq!(vel.1, [2]);
    assert_eq!(vel.2, Some(vec!["x".to_string(), "y".to_string()]));
    assert_eq!(
        f64_rows(&got, "b_>_c.world_vel"),
        [(1_700_000_000_000_000_123, vec![1.0, 2.0])]
    );
    assert_eq!(f64_rows(&got, "b_>_c.gravity_edge").len(), 1);

    // An unflattened CSV (`elodin-db export --format csv` without `--flatten`): a list is
    // one quoted cell; `--mono-us` integer times.
    let csv = tmp.path().join("csv");
    std::fs::create_dir(&csv).unwrap();
    std::fs::write(
        csv.join("a.world_pos.csv"),
        "time_us,a.world_pos\n1700000000000000,\"[1.0, 2.5, -3e-7]\"\n1700000000000001,\"[NaN, inf, 0.0]\"\n",
    )
    .unwrap();
    let got = read_export(&csv);
    let rows = &got["a.world_pos"].3;
    assert_eq!(got["a.world_pos"].1, [3]);
    let Value::Array(a) = &rows[0].1 else {
        panic!()
    };
    assert_eq!(a.data, simrec::model::ArrayData::F64(vec![1.0, 2.5, -3e-7]));
    assert_eq!(rows[1].0 - rows[0].0, 1000);
}

#[test]
fn a_damaged_file_is_an_error_naming_it_strictly_and_a_finding_leniently() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("x");
    crate::util::copy_tree(&export("ball_v0162_csv"), &dir);
    std::fs::write(dir.join("ball.seed.csv"), "time,ball.seed\nyesterday,3\n").unwrap();
    match ExportReader::open(&dir, ReadOptions::default()) {
        Err(ReadError::Invalid { path, finding }) => {
            assert!(path.ends_with("ball.seed.csv"), "{path:?}");
            assert_eq!(finding.code, "ELODIN_EXPORT_FILE");
            assert!(
                finding.message.contains("`yesterday` is not a time"),
                "{}",
                finding.message
            );
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    let lenient = ReadOptions {
        lenient: true,
        ..ReadOptions::default()
    };
    let mut r = ExportReader::open(&dir, lenient).unwrap();
    assert_eq!(r.header().channels.len(), 8);
    assert_eq!(r.by_ref().count(), 8 * 301);
    assert_eq!(r.findings()[0].1.total("ELODIN_EXPORT_FILE"), 1);
}

#[test]
fn every_cut_of_a_small_export_file_is_rows_or_a_clean_error() {
    for (file, kind) in [
        ("ball_v0162_parquet/ball.wind.parquet", Kind::Parquet),
        (
            "three_body_v0180_arrow/a_>_b.gravity_edge.arrow",
            Kind::Arrow,
        ),
        ("three_body_v0180_csv/a_>_b.gravity_edge.csv", Kind::Csv),
    ] {
        let whole = std::fs::read(export(file)).unwrap();
        let stem = Path::new(file).file_stem().unwrap().to_str().unwrap();
        assert_eq!(decode_file(whole.clone(), kind, stem), Ok(301), "{file}");
        for cut in 0..whole.len() {
            if let Ok(rows) = decode_file(whole[..cut].to_vec(), kind, stem) {
                assert!(rows <= 301, "{file} cut at {cut}");
            }
        }
    }
}
