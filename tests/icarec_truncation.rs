//! Every byte-truncation of the small `.icarec` fixtures, in both forms (spec "Test
//! material"): the archive cut at every byte, and each part of the directory form cut at
//! every byte. Each cut is read leniently (validate), header-only (inspect) and strictly
//! into a writer (convert, a dry run): records and findings, or one clean error, never a
//! panic. Everything runs in memory through the library.

use std::path::Path;

use simrec::formats::icarec::{IcarecReader, IcarecWriter, FORM_KEY};
use simrec::formats::output::Outputs;
use simrec::formats::{ReadError, ReadOptions, Sink, Source};
use simrec::pipeline;
use simrec::report::Severity;

fn fixture(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/icarec")
        .join(rel)
}

const PARTS: [&str; 4] = [
    "schema.json",
    "static_signals.bin",
    "dynamic_signals.bin",
    "metadata.json",
];

/// What one read of one cut gave: records, and error findings (with the error that
/// stopped it, if any).
fn outcome(opened: Result<IcarecReader, ReadError>, what: &str) -> (usize, Vec<&'static str>) {
    let mut r = match opened {
        Ok(r) => r,
        Err(ReadError::Invalid { finding, .. }) => {
            assert_eq!(finding.severity, Severity::Error, "{what}: {finding}");
            return (0, vec![finding.code]);
        }
        Err(e) => panic!("{what}: not a clean finding: {e:?}"),
    };
    let mut records = 0;
    let mut errors = Vec::new();
    for rec in r.by_ref() {
        match rec {
            Ok(_) => records += 1,
            Err(ReadError::Invalid { finding, .. }) => {
                errors.push(finding.code);
                break;
            }
            Err(e) => panic!("{what}: not a clean finding: {e:?}"),
        }
    }
    errors.extend(
        r.findings()[0]
            .1
            .list()
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| f.code),
    );
    (records, errors)
}

/// Reads a cut strictly into a dry-run writer of the archive form.
fn convert(opened: Result<IcarecReader, ReadError>, what: &str) {
    let Ok(mut r) = opened else { return };
    let mut outputs = Outputs::dry_run(false);
    outputs.set(FORM_KEY, "tar");
    let header = r.header().clone();
    let sink: Box<dyn Sink> = Box::new(
        IcarecWriter::create(Path::new("cut.icarec.tar"), &header, &mut outputs)
            .unwrap_or_else(|e| panic!("{what}: {e}")),
    );
    match pipeline::copy(&mut r, sink, &mut |_, _| {}) {
        Ok(_) => {}
        Err(pipeline::PipelineError::Read(ReadError::Invalid { .. })) => {}
        Err(e) => panic!("{what}: {e:?}"),
    }
}

fn options(decode: bool, lenient: bool) -> ReadOptions {
    ReadOptions {
        decode,
        lenient,
        deep: decode && lenient,
        ..ReadOptions::default()
    }
}

#[test]
fn every_cut_of_the_archive_is_read_cleanly() {
    for name in ["a2.icarec.tar", "a2-gnu.icarec.tar", "a2-pax.icarec.tar"] {
        let whole = std::fs::read(fixture(name)).unwrap();
        let full = outcome(
            IcarecReader::from_tar_bytes(whole.clone(), options(true, true)),
            name,
        );
        assert_eq!(full, (7, vec![]), "{name}");
        let mut damaged = 0;
        for n in 0..whole.len() {
            let cut = whole[..n].to_vec();
            let what = format!("{name} cut at {n}");
            let (records, errors) = outcome(
                IcarecReader::from_tar_bytes(cut.clone(), options(true, true)),
                &what,
            );
            assert!(records <= 7, "{what}");
            if records < 7 {
                assert!(!errors.is_empty(), "{what}: fewer records and no error");
                damaged += 1;
            }
            outcome(
                IcarecReader::from_tar_bytes(cut.clone(), options(false, true)),
                &what,
            );
            convert(
                IcarecReader::from_tar_bytes(cut, options(true, false)),
                &what,
            );
        }
        assert!(damaged > 3000, "{name}: {damaged}");
    }
}

#[test]
fn every_cut_of_every_part_of_the_directory_form_is_read_cleanly() {
    for dir in ["a2.icarec", "types.icarec"] {
        let parts: Vec<Vec<u8>> = PARTS
            .iter()
            .map(|p| std::fs::read(fixture(dir).join(p)).unwrap())
            .collect();
        let whole = |i: usize, cut: Vec<u8>| -> [Option<Vec<u8>>; 4] {
            std::array::from_fn(|k| {
                Some(if k == i {
                    cut.clone()
                } else {
                    parts[k].clone()
                })
            })
        };
        for (i, part) in PARTS.iter().enumerate() {
            for n in 0..parts[i].len() {
                let what = format!("{dir}/{part} cut at {n}");
                let cut = parts[i][..n].to_vec();
                let (_, errors) = outcome(
                    IcarecReader::from_parts(whole(i, cut.clone()), options(true, true)),
                    &what,
                );
                // Every cut is damage something reports (a cut dynamic file at a frame
                // boundary is reported by the metadata's counts and digests), except a cut
                // JSON file's trailing newline.
                let only_whitespace = parts[i][n..].iter().all(u8::is_ascii_whitespace);
                assert!(!errors.is_empty() || only_whitespace, "{what}: no error");
                outcome(
                    IcarecReader::from_parts(whole(i, cut.clone()), options(false, true)),
                    &what,
                );
                convert(
                    IcarecReader::from_parts(whole(i, cut), options(true, false)),
                    &what,
                );
            }
        }
    }
}
