//! The lake written a frame at a time (`.icarec`, Icarus HDF5 and an Elodin DB of one time
//! grid → lake with nothing to do record by record goes by frames): without a `--channel`
//! the frame path, with `--channel '*'` (every signal) the record path. On every Icarus and
//! Elodin DB fixture both runs exit alike, print the same and write the same `values` and
//! `poses` tables (schema with its metadata, every row in the same order; the row groups
//! may fall elsewhere, where each path's batches closed).

use std::fs::File;
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::Schema;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use simrec::formats::{format_named, ReadOptions};
use simrec::pipeline::frame_copy::write_frames;
use simrec::pipeline::WriteRequest;

use crate::util::elodin::probe_db;
use crate::util::{any_fixture, frame_and_record_runs};

const FIXTURES: [&str; 14] = [
    "icarec/a2.icarec",
    "icarec/types.icarec",
    "icarec/a2.icarec.tar",
    "icarus-hdf5/crashed.h5",
    "icarus-hdf5/escape.h5",
    "icarus-hdf5/noschema.h5",
    "icarus-hdf5/small.h5",
    "icarus-hdf5/vulcan.h5",
    // A DB's records carry no frame value, and a scalar as an array of shape []; the last
    // three are not of one time grid (records both ways).
    "elodin-db/ball_v0162",
    "elodin-db/three_body_v0180",
    "elodin-db/upstream/bools-alternating-db-linux",
    "elodin-db/crash_v0180",
    "elodin-db/types_v0180",
    "elodin-db/ball_v0142",
];

/// A table read back whole, as one batch (row groups fall where each path's batches did).
fn read(path: &Path) -> RecordBatch {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let rows = builder.metadata().file_metadata().num_rows().max(1);
    let mut batches = builder.with_batch_size(rows as usize).build().unwrap();
    let batch = batches.next().map(Result::unwrap);
    assert!(batches.next().is_none(), "{}", path.display());
    batch.unwrap_or_else(|| RecordBatch::new_empty(std::sync::Arc::new(Schema::empty())))
}

/// Rows of `values` and `poses` of the recording in `lake`.
fn tables(lake: &Path) -> [(usize, RecordBatch); 2] {
    ["values", "poses"].map(|t| {
        let dir = lake.join(t);
        let [entry] = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect::<Vec<_>>()
            .try_into()
            .unwrap();
        let batch = read(&entry);
        (batch.num_rows(), batch)
    })
}

/// Converts `input` into a lake both ways in `dir`; checks that both runs exit alike, print
/// the same and write the same tables; returns the exit code and the `poses` rows.
fn both_ways(dir: &Path, input: &Path) -> (i32, usize) {
    let frames = dir.join("frames");
    let records = dir.join("records");
    let out = |p: &Path| format!("{}/", p.display());
    let (a, _) = frame_and_record_runs(
        dir,
        input,
        (&out(&frames), &out(&records)),
        &["--to", "lake"],
        str::to_owned,
    );
    let mut poses = 0;
    if a.code != 1 {
        let (ta, tb) = (tables(&frames), tables(&records));
        for ((ra, a), (rb, b)) in ta.iter().zip(&tb) {
            assert_eq!(ra, rb, "{}", input.display());
            assert!(*ra == 0 || a == b, "{}", input.display());
        }
        poses = ta[1].0;
    }
    for dir in [&frames, &records] {
        if dir.exists() {
            std::fs::remove_dir_all(dir).unwrap();
        }
    }
    (a.code, poses)
}

#[test]
fn the_frame_path_writes_the_record_paths_lake_on_every_icarus_and_db_fixture() {
    let tmp = tempfile::tempdir().unwrap();
    let mut poses = 0;
    for name in FIXTURES {
        poses += both_ways(tmp.path(), &any_fixture(name)).1;
    }
    assert!(poses > 0, "some fixture has positions");
}

#[test]
fn a_db_of_every_type_into_the_lake_goes_by_frames_as_by_records() {
    let tmp = tempfile::tempdir().unwrap();
    let db = probe_db(tmp.path());
    let lake = tmp.path().join("lake/");
    let (written, _) = write_frames(
        std::slice::from_ref(&db),
        ReadOptions::default(),
        &request(&lake),
        &mut |_, _| {},
    )
    .expect("a DB of one grid into a lake goes by frames");
    assert_eq!(written.unwrap().report.records, 11 * 200);
    // Exit 3: a 64-bit integer component's elements beyond 2^53, reported alike both ways.
    assert_eq!(both_ways(tmp.path(), &db).0, 3);
}

fn request(lake: &Path) -> WriteRequest<'_> {
    WriteRequest {
        output: lake,
        format: format_named("lake").unwrap(),
        force: false,
        dry_run: false,
        flags: Default::default(),
        split: false,
        resample: None,
    }
}

#[test]
fn an_icarus_recording_or_a_db_of_one_grid_into_the_lake_goes_by_frames() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake/");
    let request = request(&lake);
    // The record path's counts (`--channel '*'`: `wrote 7 records`, `wrote 6 records`,
    // `wrote 2709 records`).
    let counts = [
        ("icarec/a2.icarec", 7),
        ("icarus-hdf5/small.h5", 6),
        ("elodin-db/ball_v0162", 2709),
    ];
    for (name, records) in counts {
        let input = vec![any_fixture(name)];
        let (written, _) = write_frames(&input, ReadOptions::default(), &request, &mut |_, _| {})
            .unwrap_or_else(|| panic!("{name} into a lake goes by frames"));
        assert_eq!(written.unwrap().report.records, records, "{name}");
    }
    // Each under its own stable name.
    assert!(lake.join("values/a2.icarec.parquet").exists());
    assert!(lake.join("values/small.h5.parquet").exists());
    assert!(lake.join("poses/ball_v0162.parquet").exists());
}
