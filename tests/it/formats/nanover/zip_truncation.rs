//! Every byte-offset cut of `small.nanover.zip`, `edge.nanover.zip` and the deflated
//! copy of small, read strictly (convert), leniently without decoding (inspect) and
//! leniently with decoding (validate, recover): records or a clean finding every time,
//! never a panic.

use std::path::Path;

use simrec::formats::input::Input;
use simrec::formats::nanover::zip::ZipReader;
use simrec::formats::{ReadError, Source};
use simrec::report::Severity;

use crate::util;

fn sweep(name: &str, passes: &[(bool, bool)]) -> usize {
    let path = util::any_fixture("nanover-zip").join(name);
    let bytes = std::fs::read(&path).unwrap();
    let mut failures = 0;
    for cut in 0..bytes.len() {
        for &(decode, lenient) in passes {
            let what = format!("{name} cut at {cut} (decode {decode}, lenient {lenient})");
            let options = util::read_options(decode, lenient);
            let input = Input::from_bytes(bytes[..cut].to_vec());
            let mut reader = match ZipReader::new(Path::new("cut"), input, options) {
                Ok(r) => r,
                Err(ReadError::Invalid { finding, path }) => {
                    assert_eq!(path, Path::new("cut"), "{what}");
                    assert_eq!(finding.severity, Severity::Error, "{what}: {finding}");
                    failures += 1;
                    continue;
                }
                Err(e) => panic!("{what}: not a clean finding: {e:?}"),
            };
            let mut stopped = false;
            for r in reader.by_ref() {
                match r {
                    Ok(_) => assert!(!stopped, "{what}: records after an error"),
                    Err(ReadError::Invalid { finding, .. }) => {
                        assert!(!lenient, "{what}: lenient reading stopped: {finding}");
                        stopped = true;
                    }
                    Err(e) => panic!("{what}: {e:?}"),
                }
            }
            // A cut file is never silently whole: something says it is damaged.
            if lenient && cut > 0 {
                let errors = reader.findings()[0].1.count(Severity::Error);
                assert!(errors > 0, "{what}: no error reported");
            }
        }
    }
    failures
}

#[test]
fn every_cut_of_edge() {
    assert!(
        sweep(
            "edge.nanover.zip",
            &[(true, false), (false, true), (true, true)]
        ) > 2000
    );
}

#[test]
fn every_cut_of_small() {
    // A cut archive is scanned; without decoding its messages are walked, not held,
    // which `cuts_of_a_crash_walk_as_they_decode` checks against decoding.
    assert!(sweep("small.nanover.zip", &[(true, false), (true, true)]) > 50_000);
}

#[test]
fn every_cut_of_the_deflated_archive() {
    // Every cut loses the central directory, so each is read as a crashed archive.
    assert!(
        sweep(
            "deflated/small-deflated.nanover.zip",
            &[(true, false), (true, true)]
        ) > 20_000
    );
}

/// (time, channel, frame) of every record a lenient read gives, and its error count.
fn outline(bytes: &[u8], decode: bool) -> (Vec<(i64, u32, Option<i64>)>, u64) {
    let options = util::read_options(decode, true);
    let mut reader =
        ZipReader::new(Path::new("cut"), Input::from_bytes(bytes.to_vec()), options).unwrap();
    let records = reader
        .by_ref()
        .map(|r| r.unwrap())
        .map(|r| (r.time, r.channel, r.frame))
        .collect();
    (records, reader.findings()[0].1.count(Severity::Error))
}

#[test]
fn cuts_of_a_crash_walk_as_they_decode() {
    // `inspect` walks a crashed archive's messages through the read window; `validate`
    // and `recover` hold and decode them. Both must find the same messages, times and
    // frames: every cut in the first 8 KiB (the first 17 messages), every 37th after.
    let path = util::any_fixture("nanover-zip/crash/crashed-after-100.nanover.zip");
    let bytes = std::fs::read(path).unwrap();
    let (whole, _) = outline(&bytes, true);
    assert_eq!(whole.len(), 96);
    let mut cuts = 0;
    for cut in (67..bytes.len()).filter(|&c| c < 8192 || c % 37 == 0) {
        let (walked, walk_errors) = outline(&bytes[..cut], false);
        let (decoded, _) = outline(&bytes[..cut], true);
        assert_eq!(walked, decoded, "cut at {cut}");
        assert_eq!(walked[..], whole[..walked.len()], "cut at {cut}");
        assert!(walk_errors > 0, "cut at {cut}");
        cuts += 1;
    }
    assert_eq!(cuts, 9_310);
}
