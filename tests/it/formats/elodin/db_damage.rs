//! Damaged Elodin DB directories: every cut of each kind of file (read strictly and
//! leniently, never a panic), and the damage Elodin itself panics on, each an error naming
//! the component, the file and the byte.

use std::path::{Path, PathBuf};

use simrec::formats::elodin::db::{layout, read_all, DbReader};
use simrec::formats::{ReadError, Source};

use super::db_read::db_fixture;
use crate::util;

fn copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(name);
    util::copy_tree(&db_fixture(name), &dir);
    (tmp, dir)
}

fn component(dir: &Path, name: &str, file: &str) -> PathBuf {
    dir.join(layout::component_id(name).to_string()).join(file)
}

/// The strict error: (code, file, offset, message).
fn strict_error(dir: &Path) -> (&'static str, PathBuf, Option<u64>, String) {
    match read_all(dir, true) {
        Err(ReadError::Invalid { path, finding }) => {
            (finding.code, path, finding.offset, finding.message)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_cut_of_every_kind_of_file_is_records_or_a_clean_error() {
    let (_tmp, dir) = copy("types_v0180");
    let files = [
        dir.join("db_state"),
        component(&dir, "probe.imu", "schema"),
        component(&dir, "probe.imu", "metadata"),
        component(&dir, "probe.byte", "index"),
        component(&dir, "probe.byte", "data"),
        dir.join("msgs/11951/metadata"),
        dir.join("msgs/11951/timestamps"),
        dir.join("msgs/11951/offsets"),
        dir.join("msgs/11951/data_log"),
    ];
    let whole_count = read_all(&dir, true).unwrap();
    assert_eq!(whole_count, 2248);
    for path in &files {
        let whole = std::fs::read(path).unwrap();
        for cut in 0..whole.len() {
            std::fs::write(path, &whole[..cut]).unwrap();
            let what = format!("{} cut at {cut}", path.display());
            match read_all(&dir, true) {
                Ok(n) => assert!(n <= whole_count, "{what}"),
                Err(ReadError::Invalid { .. }) => {}
                Err(e) => panic!("{what}: {e}"),
            }
            match read_all(&dir, false) {
                // A cut log reads what remains of it; a cut db_state is no DB.
                Ok(n) => assert!(n <= whole_count, "{what}"),
                Err(ReadError::Invalid { finding, .. }) => {
                    assert!(path.ends_with("db_state"), "{what}: {finding}")
                }
                Err(e) => panic!("{what}: {e}"),
            }
        }
        std::fs::write(path, &whole).unwrap();
    }
}

#[test]
fn a_committed_length_past_the_end_is_an_error_with_component_file_and_offset() {
    let (_tmp, dir) = copy("types_v0180");
    let index = component(&dir, "probe.imu", "index");
    let bytes = std::fs::read(&index).unwrap();
    std::fs::write(&index, &bytes[..bytes.len() - 12]).unwrap();
    let (code, path, offset, message) = strict_error(&dir);
    assert_eq!(
        (code, path, offset),
        ("ELODIN_DB_HEADER", index.clone(), Some(0))
    );
    assert!(message.contains("probe.imu"), "{message}");
    assert!(
        message.contains(&format!("commits {} bytes", bytes.len())),
        "{message}"
    );
    // Leniently, the whole timestamps that remain are read.
    let mut r = DbReader::open(&dir, util::lenient()).unwrap();
    let imu = r.header().channel_id("probe.imu").unwrap();
    let n = r
        .by_ref()
        .filter(|x| x.as_ref().unwrap().channel == imu)
        .count();
    assert_eq!(n, 198);
    let codes: Vec<&str> = r.findings()[0].1.list().iter().map(|f| f.code).collect();
    assert_eq!(
        codes,
        [
            "ELODIN_DB_HEADER",
            "ELODIN_DB_INDEX_ALIGN",
            "ELODIN_DB_UNCOMMITTED_ROW"
        ]
    );
}

#[test]
fn a_schema_that_does_not_match_the_row_size_is_an_error() {
    let (_tmp, dir) = copy("types_v0180");
    let schema = layout::Schema {
        prim: layout::Primitive::F64,
        shape: vec![4],
    };
    std::fs::write(component(&dir, "probe.imu", "schema"), schema.encode()).unwrap();
    let (code, path, offset, message) = strict_error(&dir);
    assert_eq!(code, "ELODIN_DB_ELEMENT_SIZE");
    assert_eq!(
        (path, offset),
        (component(&dir, "probe.imu", "data"), Some(16))
    );
    assert!(
        message.contains("probe.imu") && message.contains("24 bytes"),
        "{message}"
    );
}

#[test]
fn a_timestamp_going_back_is_an_error_at_its_byte() {
    let (_tmp, dir) = copy("types_v0180");
    let index = component(&dir, "probe.flag", "index");
    let mut bytes = std::fs::read(&index).unwrap();
    // Timestamps 10 and 11 swapped.
    let (a, b) = (24 + 10 * 8, 24 + 11 * 8);
    let t10: [u8; 8] = bytes[a..a + 8].try_into().unwrap();
    bytes.copy_within(b..b + 8, a);
    bytes[b..b + 8].copy_from_slice(&t10);
    std::fs::write(&index, &bytes).unwrap();
    let (code, path, offset, message) = strict_error(&dir);
    assert_eq!(
        (code, path, offset),
        ("ELODIN_DB_INDEX_ORDER", index, Some(b as u64))
    );
    assert!(
        message.contains("probe.flag") && message.contains("timestamp 11"),
        "{message}"
    );
    // Leniently every row is read, with the error noted.
    let mut r = DbReader::open(&dir, util::lenient()).unwrap();
    assert_eq!(r.by_ref().count(), 2248);
    assert_eq!(r.findings()[0].1.list()[0].code, "ELODIN_DB_INDEX_ORDER");
}

#[test]
fn fewer_rows_than_timestamps_is_an_error_and_an_extra_row_is_not_read() {
    let (_tmp, dir) = copy("types_v0180");
    let data = component(&dir, "probe.u16", "data");
    let mut bytes = std::fs::read(&data).unwrap();
    let committed = bytes.len() as u64 - 2;
    bytes[..8].copy_from_slice(&committed.to_le_bytes());
    std::fs::write(&data, &bytes).unwrap();
    let (code, path, _, message) = strict_error(&dir);
    assert_eq!((code, path), ("ELODIN_DB_DATA_SHORT", data.clone()));
    assert!(message.contains("probe.u16") && message.contains("200 timestamps but 199 rows"));
    // One row more than timestamps (a crash between the data and the index write).
    bytes.extend_from_slice(&[7, 0, 7, 0]);
    let committed = bytes.len() as u64;
    bytes[..8].copy_from_slice(&committed.to_le_bytes());
    std::fs::write(&data, &bytes).unwrap();
    let mut r = DbReader::open(&dir, simrec::formats::ReadOptions::default()).unwrap();
    assert_eq!(r.by_ref().count(), 2248);
    assert_eq!(
        r.findings()[0].1.list()[0].code,
        "ELODIN_DB_UNCOMMITTED_ROW"
    );
}
