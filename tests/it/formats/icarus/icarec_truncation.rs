//! Every byte-truncation of the small `.icarec` fixtures, in both forms (spec "Test
//! material"): the archive cut at every byte, and each part of the directory form cut at
//! every byte. Each cut is read leniently (validate), header-only (inspect) and strictly
//! into a writer (convert, a dry run): records and findings, or one clean error, never a
//! panic. Everything runs in memory through the library. And hostile schemas (issue 27):
//! millions of bad signal elements are read in memory of the order of the schema's size
//! (`util::alloc` counts the bytes each thread holds).

use std::path::Path;

use simrec::formats::icarus::icarec::{IcarecForm, IcarecReader, IcarecWriteOptions, IcarecWriter};
use simrec::formats::output::Outputs;
use simrec::formats::{ReadError, ReadOptions, Sink, Source};
use simrec::pipeline;
use simrec::report::Severity;

use crate::util;
use crate::util::alloc::measure;

fn fixture(rel: &str) -> std::path::PathBuf {
    util::any_fixture("icarec").join(rel)
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
    let options = IcarecWriteOptions {
        form: Some(IcarecForm::Tar),
    };
    let header = r.header().clone();
    let sink: Box<dyn Sink> = Box::new(
        IcarecWriter::create(Path::new("cut.icarec.tar"), &header, &mut outputs, options)
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

/// Issue 27, item D: the issue's 8 MB `schema.json`, a `signals` array of 4,194,304 zeros,
/// took 1.6 GiB to validate (the JSON tree and a finding per element). Now each element is
/// checked and dropped, and the findings of one code are kept up to 200 and counted.
#[test]
fn millions_of_bad_signal_elements_are_counted_in_memory_of_the_schema_size() {
    let n = 4 << 20;
    let text = format!(
        r#"{{"schema_version":"1","icarus_version":"1","signals":[{}]}}"#,
        vec!["0"; n].join(",")
    );
    let size = text.len();
    let parts = [Some(text.into_bytes()), None, None, Some(Vec::new())];
    let (findings, allocated) = measure(|| {
        let mut r = IcarecReader::from_parts(parts, options(true, true)).unwrap();
        assert_eq!(r.by_ref().count(), 0);
        r.findings()[0].1.clone()
    });
    assert_eq!(findings.total("ICAREC_SIGNAL_FIELD"), n as u64);
    let kept = findings
        .list()
        .iter()
        .filter(|f| f.code == "ICAREC_SIGNAL_FIELD");
    assert_eq!(kept.count(), 200);
    assert_eq!(
        findings.list()[0].message,
        "schema.json: 0 is not an object"
    );
    let peak = allocated.peak;
    assert!(peak < 3 * size, "{peak} bytes held for a schema of {size}");
}

/// Elements that are not signals are left out of the schema object the reader keeps, but
/// the layout checksum is still that of every element (spec §A7).
#[test]
fn the_checksum_covers_elements_left_out_of_the_kept_object() {
    use serde_json::{json, Value};
    use simrec::formats::icarus::icarec::schema;
    let signals = json!([
        {"name": "A.x", "type": "double", "lifecycle": "dynamic", "offset": 0, "size": 8},
        0,
        {"name": "", "type": "double", "lifecycle": "dynamic", "offset": 8, "size": 8},
        {"name": "A.x", "type": "double", "lifecycle": "dynamic", "offset": 8, "size": 8},
        {"name": "B.y", "type": "float", "units": "m", "lifecycle": "static", "offset": 0, "size": 4}
    ]);
    let list = signals.as_array().unwrap();
    let text = json!({"schema_version": "1", "signals": signals, "extra": [1, 2]}).to_string();
    let (s, findings) = schema::parse(text.as_bytes()).unwrap();
    assert_eq!(s.checksum.computed, schema::checksum(list));
    assert_eq!(s.object["signals"], json!([list[0], list[4]]));
    assert_eq!(s.object["extra"], json!([1, 2]));
    let keys: Vec<&str> = s.object.keys().map(String::as_str).collect();
    assert_eq!(keys, ["schema_version", "signals", "extra"]);
    assert_eq!((s.signals.len(), s.unreadable), (2, 3));
    let field: Vec<&str> = findings
        .list()
        .iter()
        .filter(|f| f.code == "ICAREC_SIGNAL_FIELD")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(
        field,
        [
            "schema.json: 0 is not an object",
            "schema.json: a signal's `name` is empty",
            "schema.json: signal name \"A.x\" is used twice"
        ]
    );
    assert!(matches!(s.object["signals"], Value::Array(_)));
}
