//! Truncation sweep over the side files of the smallest replay (`spin_120`): every cut of
//! `metadata.json` and of `assets.bin` is opened strictly and leniently and read to the
//! end. Each must give records or a clean error, never a panic; a cut `metadata.json` is
//! an error (it is one JSON object), a cut `assets.bin` is `ELODIN_ASSETS_DECODE`.

use simrec::formats::elodin::ElodinReader;
use simrec::formats::{ReadError, Source};

use crate::util;
use crate::util::elodin::*;

fn drain(dir: &std::path::Path, lenient: bool) -> Result<(usize, Vec<&'static str>), ReadError> {
    let options = util::read_options(true, lenient);
    let mut r = ElodinReader::open(dir, options)?;
    let mut n = 0;
    for item in r.by_ref() {
        item?;
        n += 1;
    }
    let codes = r.findings()[0].1.list().iter().map(|f| f.code).collect();
    Ok((n, codes))
}

#[test]
fn every_cut_of_metadata_and_assets_is_a_clean_error() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("spin");
    util::copy_tree(&elodin_fixture("spin_120"), &dir);
    for file in ["metadata.json", "assets.bin"] {
        let path = dir.join("world").join(file);
        let whole = std::fs::read(&path).unwrap();
        for cut in 0..whole.len() {
            std::fs::write(&path, &whole[..cut]).unwrap();
            match drain(&dir, false) {
                Err(ReadError::Invalid { finding, .. }) => {
                    let want: &[&str] = if file == "assets.bin" {
                        &["ELODIN_ASSETS_DECODE"]
                    } else {
                        &["ELODIN_METADATA_JSON", "ELODIN_NO_TIME_STEP"]
                    };
                    assert!(
                        want.contains(&finding.code),
                        "{file} cut at {cut}: {finding}"
                    );
                }
                other => panic!(
                    "{file} cut at {cut}: strict read gave {:?}",
                    other.map(|x| x.0)
                ),
            }
            match drain(&dir, true) {
                // assets.bin damage is reported and the rows still read.
                Ok((n, codes)) => {
                    assert_eq!(file, "assets.bin", "cut at {cut}");
                    assert_eq!(n, 484, "cut at {cut}");
                    assert!(codes.contains(&"ELODIN_ASSETS_DECODE"), "cut at {cut}");
                }
                Err(ReadError::Invalid { finding, .. }) => {
                    assert_eq!(file, "metadata.json", "cut at {cut}: {finding}");
                }
                Err(e) => panic!("{file} cut at {cut}: {e}"),
            }
        }
        std::fs::write(&path, &whole).unwrap();
    }
    assert_eq!(drain(&dir, false).unwrap().0, 484);
}

#[test]
fn side_file_parsers_take_any_bytes() {
    let meta = std::fs::read(elodin_fixture("types_300/world/metadata.json")).unwrap();
    let assets = std::fs::read(elodin_fixture("types_300/world/assets.bin")).unwrap();
    assert_eq!(
        simrec::formats::elodin::parse_side_files(&meta, &assets),
        (true, true)
    );
    for cut in 0..assets.len() {
        let (_, ok) = simrec::formats::elodin::parse_side_files(b"", &assets[..cut]);
        assert!(!ok, "assets.bin cut at {cut} parsed");
    }
    for flip in 0..assets.len() {
        let mut b = assets.clone();
        b[flip] ^= 0xff;
        let _ = simrec::formats::elodin::parse_side_files(&meta[..flip.min(meta.len())], &b);
    }
}
