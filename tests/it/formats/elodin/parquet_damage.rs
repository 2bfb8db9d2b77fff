//! Damaged Parquet files never make simrec panic, and nothing in the Elodin reader catches
//! panics: every cut and every single-byte flip (four patterns) of every Parquet file of
//! `spin_120`, decoded in memory as the reader decodes an archetype file, gives rows or an
//! error. A panic hook records any panic, on any thread (the decoding threads included), so
//! a panic fails the test even where it would not unwind into it; the same holds with
//! `panic = "abort"`, where any of them would end the process.
//!
//! This binary holds only these tests, so that no other test's panics reach the hook.

use std::sync::{Mutex, Once};

use simrec::formats::elodin::{decode_parquet, ElodinReader};
use simrec::formats::ReadOptions;

use crate::util;
use crate::util::elodin::*;

static PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());
static HOOK: Once = Once::new();

fn record_panics() {
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let text = format!("{info}");
            if let Ok(mut p) = PANICS.lock() {
                p.push(text);
            }
            default(info);
        }));
    });
}

fn panics() -> Vec<String> {
    PANICS.lock().map(|p| p.clone()).unwrap_or_default()
}

fn parquet_files(fixture: &str) -> Vec<(String, Vec<u8>)> {
    let world = elodin_fixture(fixture).join("world");
    let mut files: Vec<_> = std::fs::read_dir(&world)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_cut_and_byte_flip_of_spin_120_decodes_or_fails_cleanly() {
    record_panics();
    let files = parquet_files("spin_120");
    assert_eq!(files.len(), 3);
    let (mut decoded, mut failed) = (0u64, 0u64);
    for (name, whole) in &files {
        // The intact file: every row of every column.
        let (rows, readable) = decode_parquet(whole.clone()).unwrap();
        assert!(rows == 121 || rows == 242, "{name}: {rows} rows");
        assert!(readable >= rows * 3, "{name}: {readable}");
        let mut count = |bytes: Vec<u8>| match decode_parquet(bytes) {
            Ok(_) => decoded += 1,
            Err(e) => {
                assert!(!e.is_empty());
                failed += 1
            }
        };
        for cut in 0..whole.len() {
            count(whole[..cut].to_vec());
        }
        for at in 0..whole.len() {
            for pattern in [0x01u8, 0x10, 0x80, 0xff] {
                let mut b = whole.clone();
                b[at] ^= pattern;
                count(b);
            }
        }
        assert_eq!(panics(), Vec::<String>::new(), "after {name}");
    }
    // Every cut fails (the footer is at the end); many flips land in values and decode.
    let bytes: u64 = files.iter().map(|(_, b)| b.len() as u64).sum();
    assert_eq!(decoded + failed, bytes * 5);
    assert!(failed > bytes, "{failed} of {}", bytes * 5);
    assert!(decoded > 0);
}

#[test]
fn a_damaged_archetype_file_is_an_error_naming_it() {
    record_panics();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("spin");
    util::copy_tree(&elodin_fixture("spin_120"), &dir);
    let body = dir.join("world/body.parquet");
    let whole = std::fs::read(&body).unwrap();
    // Byte 62 lies in the first page of `world_pos`: flipping its low bit made the parquet
    // crate panic ("attempt to shift left with overflow" in its run-header decoder) before
    // simrec checked pages itself.
    let mut b = whole.clone();
    b[62] ^= 0x01;
    std::fs::write(&body, &b).unwrap();
    let strict = ReadOptions::default();
    let err = ElodinReader::open(&dir, strict)
        .map(|r| r.map(|x| x.map(drop)).collect::<Result<Vec<_>, _>>())
        .and_then(|r| r)
        .unwrap_err()
        .to_string();
    assert!(err.contains("body.parquet"), "{err}");
    assert_eq!(panics(), Vec::<String>::new());
}

/// A footer whose unknown field claims a map of 2³⁰ boolean pairs, as one the fuzzer found
/// (`elodin_parquet`, a timeout): the parquet crate's Thrift skipping takes no byte for a
/// boolean inside a map, so it counts through every entry (seconds here, a timeout under the
/// fuzzer) before failing on something else. simrec walks the footer first, one byte per
/// boolean as the compact protocol has it, and stops at the end of the bytes.
#[test]
fn a_footer_claiming_a_billion_map_entries_is_refused_at_once() {
    record_panics();
    // FileMetaData { 1: version = 1, 100: map<bool, bool> of 2^30 entries, then 16 bytes }.
    let mut footer = vec![0x15, 0x02];
    footer.extend([0x0b, 0xc8, 0x01]); // field 100 (long form), type map
    footer.extend([0x80, 0x80, 0x80, 0x80, 0x04, 0x11]); // 2^30 entries, bool -> bool
    footer.extend([0x01; 16]);
    let mut file = b"PAR1".to_vec();
    file.extend(&footer);
    file.extend((footer.len() as u32).to_le_bytes());
    file.extend(b"PAR1");
    let err = decode_parquet(file).unwrap_err();
    assert_eq!(err, "the footer's metadata ends early");
    assert_eq!(panics(), Vec::<String>::new());
}
