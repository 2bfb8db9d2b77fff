//! The lake (`--to lake`) from every fixture family: every file of a table has the same
//! Arrow schema, rows match the records, and a few values read back as the sources hold
//! them.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array as _, RecordBatch};
use arrow_schema::Schema;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::util::{run_in, simrec};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A recording of every family (a `.traj` with its `.state` is one recording).
const SOURCES: &[&str] = &[
    "fixtures/nanover-legacy/small.traj",
    "fixtures/nanover-legacy/small.state",
    "fixtures/nanover-zip/small.nanover.zip",
    "fixtures/elodin/ball_1200",
    "fixtures/tes/small_plain.3es",
    "fixtures/icarec/a2.icarec",
    "fixtures/icarus-hdf5/small.h5",
    "fixtures/icarus-csv/rocket.csv",
    "fixtures/xrec/session.xrec",
];

/// The stable names of the recordings of [`SOURCES`].
const NAMES: &[&str] = &[
    "small.traj",
    "small.nanover.zip",
    "ball_1200",
    "small_plain.3es",
    "a2.icarec",
    "small.h5",
    "rocket.csv",
    "session.xrec",
];

fn read(path: &Path) -> (Schema, Vec<RecordBatch>) {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let schema = builder.schema().as_ref().clone();
    (
        schema,
        builder.build().unwrap().map(Result::unwrap).collect(),
    )
}

fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(RecordBatch::num_rows).sum()
}

/// The lake of every source, written by one `convert --each`.
fn lake(dir: &Path) -> PathBuf {
    let lake = dir.join("lake");
    let mut args = vec!["convert", "--each"];
    let sources: Vec<String> = SOURCES
        .iter()
        .map(|s| root().join(s).display().to_string())
        .collect();
    args.extend(sources.iter().map(String::as_str));
    let out = format!("{}/", lake.display());
    args.extend(["-o", &out, "--to", "lake", "--jobs", "2"]);
    let run = run_in(dir, &args);
    assert!(
        run.code == 0 || run.code == 3,
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    lake
}

/// Rows of `column` (utf8) equal to `value`, with the row's batch.
fn matching<'a>(
    batches: &'a [RecordBatch],
    column: &str,
    value: &str,
) -> Vec<(&'a RecordBatch, usize)> {
    let mut found = Vec::new();
    for batch in batches {
        let strings = batch.column_by_name(column).unwrap().as_string::<i32>();
        for row in 0..batch.num_rows() {
            if strings.is_valid(row) && strings.value(row) == value {
                found.push((batch, row));
            }
        }
    }
    found
}

#[test]
fn every_family_writes_the_same_two_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let lake = lake(dir.path());
    for table in ["values", "poses"] {
        let mut first: Option<Schema> = None;
        for name in NAMES {
            let path = lake.join(table).join(format!("{name}.parquet"));
            let (schema, batches) = read(&path);
            let metadata = schema.metadata().clone();
            assert_eq!(metadata["simrec.lake.table"], table, "{name}");
            assert_eq!(metadata["simrec.version"], env!("CARGO_PKG_VERSION"));
            assert!(metadata.contains_key("simrec.source.format"), "{name}");
            let fields = Schema::new(schema.fields().clone());
            match &first {
                None => first = Some(fields),
                Some(first) => assert_eq!(&fields, first, "{table}/{name}"),
            }
            for batch in &batches {
                let recording = batch
                    .column_by_name("recording")
                    .unwrap()
                    .as_string::<i32>();
                assert!(recording.iter().all(|r| r == Some(name)));
            }
            // One values row per record and key; one poses row per thing with a position
            // per instant (the HDF5 fixture has no position signal).
            let expected = match (table, *name) {
                ("values", "small.traj") => 423,
                ("values", "small.nanover.zip") => 946,
                ("values", "ball_1200") => 19216,
                ("values", "small_plain.3es") => 3229,
                ("values", "a2.icarec") => 7,
                ("values", "small.h5") => 6,
                ("values", "rocket.csv") => 360,
                ("values", "session.xrec") => 63,
                ("poses", "small.traj") => 760,
                ("poses", "small.nanover.zip") => 1751,
                ("poses", "ball_1200") => 1201,
                ("poses", "small_plain.3es") => 342,
                ("poses", "a2.icarec") => 3,
                ("poses", "small.h5") => 0,
                ("poses", "rocket.csv") => 24,
                ("poses", "session.xrec") => 8,
                _ => unreachable!(),
            };
            assert_eq!(rows(&batches), expected, "{table}/{name}");
        }
    }
}

#[test]
fn values_and_poses_hold_the_sources_values() {
    let dir = tempfile::tempdir().unwrap();
    let lake = lake(dir.path());

    // Elodin: 1201 ticks of one ball; world_pos is quaternion (scalar last) then position.
    let (_, poses) = read(&lake.join("poses/ball_1200.parquet"));
    assert_eq!(rows(&poses), 1201);
    let (_, values) = read(&lake.join("values/ball_1200.parquet"));
    let world = matching(&values, "key", "world_pos");
    assert_eq!(world.len(), 1201);
    let (batch, row) = world[0];
    let shape = batch.column_by_name("shape").unwrap().as_list::<i32>();
    let dims = shape.value(row);
    assert_eq!(dims.as_primitive::<Int64Type>().values().to_vec(), [7]);
    let list = batch.column_by_name("values").unwrap().as_list::<i32>();
    let v = list.value(row);
    let v = v.as_primitive::<Float64Type>();
    let (batch, row) = (&poses[0], 0);
    let x = batch
        .column_by_name("x")
        .unwrap()
        .as_primitive::<Float64Type>();
    let qw = batch
        .column_by_name("qw")
        .unwrap()
        .as_primitive::<Float64Type>();
    assert_eq!(x.value(row), v.value(4));
    assert_eq!(qw.value(row), v.value(3));

    // NanoVer: particle positions in metres, one row per particle per frame that has them.
    let (_, particles) = read(&lake.join("poses/small.traj.parquet"));
    let (_, frames) = read(&lake.join("values/small.traj.parquet"));
    let positions = matching(&frames, "key", "particle.positions");
    let mut expected = 0;
    for (batch, row) in &positions {
        let list = batch.column_by_name("values").unwrap().as_list::<i32>();
        expected += list.value(*row).len() / 3;
    }
    assert!(expected > 0);
    assert_eq!(rows(&particles), expected);
    let (batch, row) = positions[0];
    let list = batch.column_by_name("values").unwrap().as_list::<i32>();
    let nm = list.value(row).as_primitive::<Float64Type>().value(0);
    let x = particles[0]
        .column_by_name("x")
        .unwrap()
        .as_primitive::<Float64Type>();
    assert!(
        (x.value(0) - nm * 1e-9).abs() <= 1e-18,
        "{} {nm}",
        x.value(0)
    );
    let entity = particles[0]
        .column_by_name("entity")
        .unwrap()
        .as_string::<i32>();
    assert_eq!(entity.value(0), "0");

    // Absolute time: null without an epoch (NanoVer legacy), set with one (XREC).
    let utc = frames[0].column_by_name("time_utc").unwrap();
    assert_eq!(utc.null_count(), utc.len());
    let (_, xrec) = read(&lake.join("values/session.xrec.parquet"));
    assert_eq!(xrec[0].column_by_name("time_utc").unwrap().null_count(), 0);
}

#[test]
fn a_single_input_lands_under_its_stable_name_and_skip_existing_skips_it() {
    let dir = tempfile::tempdir().unwrap();
    let traj = root().join("fixtures/nanover-legacy/small.traj");
    let state = root().join("fixtures/nanover-legacy/small.state");
    // The pair given state first is still named by its .traj.
    simrec()
        .current_dir(dir.path())
        .args(["convert"])
        .arg(&state)
        .arg(&traj)
        .args(["-o", "lake/", "--to", "lake"])
        .assert()
        .success();
    assert!(dir.path().join("lake/values/small.traj.parquet").is_file());
    assert!(dir.path().join("lake/poses/small.traj.parquet").is_file());
    // Adding another recording adds files; the one there is skipped.
    let zip = root().join("fixtures/nanover-zip/small.nanover.zip");
    let run = run_in(
        dir.path(),
        &[
            "convert",
            "--each",
            &traj.display().to_string(),
            &state.display().to_string(),
            &zip.display().to_string(),
            "-o",
            "lake/",
            "--to",
            "lake",
            "--skip-existing",
            "--format",
            "json",
        ],
    )
    .expect_code(0);
    let lines = run.json_lines();
    assert_eq!(lines[0]["skipped"], true, "{}", run.stdout);
    assert_eq!(lines[1]["skipped"], false);
    assert!(dir
        .path()
        .join("lake/values/small.nanover.zip.parquet")
        .is_file());
    // Without --skip-existing or --force, an existing recording is refused.
    let again = run_in(
        dir.path(),
        &[
            "convert",
            &zip.display().to_string(),
            "-o",
            "lake/",
            "--to",
            "lake",
        ],
    );
    assert_eq!(again.code, 2, "{}", again.stderr);
}
