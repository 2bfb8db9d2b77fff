//! The wide table (`--to parquet`) gives a key one type in every file of a family, whichever
//! of the family's formats the file comes from (`Family::key_types`): each family's
//! fixtures converted by one `convert --each`, the types of the keys they share compared.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::util::run_in;

/// Columns every table has: not keys (`entity` is uint64 or text by the first batch's
/// entities: an Elodin replay numbers them, an Elodin DB names them).
const FIXED: [&str; 5] = ["time_ns", "channel", "entity", "frame", "removed"];

/// Recordings of each family, in every format of it (a `.traj` is read with its `.state`).
const FAMILIES: &[(&str, &[&str])] = &[
    (
        "nanover",
        &[
            "fixtures/nanover-legacy/small.traj",
            "fixtures/nanover-legacy/small.state",
            "fixtures/nanover-legacy/upstream/hello.traj",
            "fixtures/nanover-legacy/upstream/17-ala-recording-multiple.traj",
            "fixtures/nanover-legacy/upstream/17-ala-recording-multiple.state",
            "fixtures/nanover-legacy/upstream/nanotube-example-recording.traj",
            "fixtures/nanover-legacy/upstream/nanotube-example-recording.state",
            "fixtures/nanover-legacy/upstream/sim-switching-test-recording.traj",
            "fixtures/nanover-legacy/upstream/sim-switching-test-recording.state",
            "fixtures/nanover-zip/converted-tie/tie.traj",
            "fixtures/nanover-zip/converted-tie/tie.state",
            "fixtures/nanover-zip/converted-tie/tie.nanover.zip",
            "fixtures/nanover-zip/small.nanover.zip",
            "fixtures/nanover-zip/edge.nanover.zip",
            "fixtures/nanover-zip/upstream/test_core-nanotube-example-recording.nanover.zip",
            "fixtures/nanover-zip/upstream/test_core-sim-switching-test-recording.nanover.zip",
            "fixtures/nanover-zip/upstream/test_mdanalysis-test_vel_force.nanover.zip",
            "fixtures/nanover-zip/upstream/tutorials-17-ala-recording-multiple.nanover.zip",
            "fixtures/nanover-zip/upstream/tutorials-nanotube-example-recording.nanover.zip",
            "fixtures/nanover-zip/upstream/tutorials-nanotube-methane-01.nanover.zip",
        ],
    ),
    (
        "icarus",
        &[
            "fixtures/icarec/a2.icarec",
            "fixtures/icarec/types.icarec",
            "fixtures/icarus-hdf5/small.h5",
            "fixtures/icarus-hdf5/vulcan.h5",
            "fixtures/icarus-hdf5/escape.h5",
            "fixtures/icarus-csv/rocket.csv",
        ],
    ),
    (
        "elodin",
        &[
            "fixtures/elodin/ball_1200",
            "fixtures/elodin/spin_120",
            "fixtures/elodin/types_300",
            "fixtures/elodin-db/ball_v0162",
            "fixtures/elodin-db/three_body_v0180",
            "fixtures/elodin-db/types_v0180",
        ],
    ),
];

/// Keys whose type the sources themselves give differently, not a format's way of storing
/// it: a component's `dry` mass that `a2.icarec`'s schema declares float32 and `vulcan.h5`'s
/// float64 (two recordings), and `simrec.counter`, a key of simrec's own fixtures NanoVer
/// does not define (doubles in `small.traj`, integers in `small.nanover.zip`).
const SOURCES_DIFFER: &[(&str, &str)] = &[("icarus", "dry"), ("nanover", "simrec.counter")];

/// Each file's key → its Arrow type (JSON text marked as such).
fn key_types(path: &Path) -> BTreeMap<String, String> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    builder
        .schema()
        .fields()
        .iter()
        .filter(|f| !FIXED.contains(&f.name().as_str()))
        .map(|f| {
            let json = f
                .metadata()
                .get("simrec.encoding")
                .map_or("", |_| " (json)");
            (f.name().clone(), format!("{}{json}", f.data_type()))
        })
        .collect()
}

#[test]
fn a_key_has_one_type_in_every_format_of_its_family() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for (family, sources) in FAMILIES {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["convert".to_string(), "--each".to_string()];
        args.extend(sources.iter().map(|s| root.join(s).display().to_string()));
        args.extend(["-o", "tables/", "--to", "parquet"].map(String::from));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = run_in(dir.path(), &args);
        assert!(run.code == 0 || run.code == 3, "{}", run.stderr);
        // key → type → the files that give it.
        let mut types: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
        let mut files = 0;
        for entry in std::fs::read_dir(dir.path().join("tables")).unwrap() {
            let path = entry.unwrap().path();
            files += 1;
            for (key, data_type) in key_types(&path) {
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                types
                    .entry(key)
                    .or_default()
                    .entry(data_type)
                    .or_default()
                    .push(name);
            }
        }
        let pairs = sources.iter().filter(|s| s.ends_with(".state")).count();
        assert_eq!(files, sources.len() - pairs, "{family}");
        let differ: Vec<_> = types
            .iter()
            .filter(|(key, by_type)| {
                by_type.len() > 1 && !SOURCES_DIFFER.contains(&(*family, key.as_str()))
            })
            .collect();
        assert!(differ.is_empty(), "{family}: {differ:#?}");
    }
}

#[test]
fn nanover_names_counts_and_small_integers_have_the_familys_types() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let zip = root.join("fixtures/nanover-zip/edge.nanover.zip");
    let out = dir.path().join("edge.parquet");
    let args = [
        "convert",
        zip.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--to",
        "parquet",
    ];
    run_in(dir.path(), &args).expect_code(0);
    let types = key_types(&out);
    assert_eq!(types["particle.names"], "List(non-null Utf8)");
    assert_eq!(types["particle.count"], "Int64");
    assert_eq!(types["particle.elements"], "List(non-null UInt32)");
    assert_eq!(types["bond.orders"], "List(non-null Float32)");
}
