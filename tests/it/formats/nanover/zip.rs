//! `.nanover.zip` read, written and converted, checked against files NanoVer's own
//! recorder, writer, split tool and converter made (fixtures/nanover-zip).

use std::path::{Path, PathBuf};

use simrec::formats::input::Input;
use simrec::formats::nanover::legacy::LegacyWriter;
use simrec::formats::nanover::zip::{ZipReader, ZipWriter};
use simrec::formats::output::Outputs;
use simrec::formats::{ReadError, ReadOptions, Sink, Source, WriteReport};
use simrec::model::{ArrayData, DType, Header, Record, Value};
use simrec::pipeline::{copy, open_recording, SplitAtResets};
use simrec::report::Severity;

use crate::util;

fn fixture(rel: &str) -> PathBuf {
    util::any_fixture("nanover-zip").join(rel)
}

fn read(path: &Path, lenient: bool) -> (Header, Vec<Record>, ZipReader) {
    let options = ReadOptions {
        lenient,
        ..ReadOptions::default()
    };
    let mut reader = ZipReader::open(path, options).unwrap();
    let records: Vec<Record> = reader.by_ref().map(|r| r.unwrap()).collect();
    (reader.header().clone(), records, reader)
}

fn records(rel: &str) -> (Header, Vec<Record>) {
    let (h, r, _) = read(&fixture(rel), false);
    (h, r)
}

/// A record for comparison: channel name, time, frame, values with map keys sorted.
fn normal(header: &Header, r: &Record) -> (String, i64, Option<i64>, Vec<(String, Value)>) {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Map(f) => {
                let mut f: Vec<_> = f.iter().map(|(k, v)| (k.clone(), sort(v))).collect();
                f.sort_by(|a, b| a.0.cmp(&b.0));
                Value::Map(f)
            }
            Value::List(l) => Value::List(l.iter().map(sort).collect()),
            v => v.clone(),
        }
    }
    let mut values: Vec<_> = r.values.iter().map(|(k, v)| (k.clone(), sort(v))).collect();
    values.sort_by(|a, b| a.0.cmp(&b.0));
    (
        header.channels[r.channel as usize].name.clone(),
        r.time,
        r.frame,
        values,
    )
}

fn assert_same_records(a: (&Header, &[Record]), b: (&Header, &[Record]), what: &str) {
    assert_eq!(a.1.len(), b.1.len(), "{what}: record count");
    for (i, (x, y)) in a.1.iter().zip(b.1).enumerate() {
        assert_eq!(normal(a.0, x), normal(b.0, y), "{what}: record {i}");
    }
}

fn channel_counts(h: &Header, rs: &[Record]) -> Vec<(String, usize)> {
    h.channels
        .iter()
        .enumerate()
        .map(|(i, c)| {
            (
                c.name.clone(),
                rs.iter().filter(|r| r.channel as usize == i).count(),
            )
        })
        .collect()
}

fn shape(r: &Record, key: &str) -> (DType, Vec<usize>) {
    match r.get(key) {
        Some(Value::Array(a)) => (a.dtype(), a.shape.clone()),
        other => panic!("{key}: {other:?}"),
    }
}

#[test]
fn small_live_recording() {
    let (h, rs) = records("small.nanover.zip");
    assert_eq!(rs.len(), 91);
    assert_eq!(
        channel_counts(&h, &rs),
        [("frame".to_string(), 75), ("state".to_string(), 16)]
    );
    let resets: Vec<usize> = (0..rs.len())
        .filter(|&i| rs[i].channel == 0 && rs[i].frame == Some(0))
        .collect();
    assert_eq!(resets, [0, 51, 74]);
    assert_eq!(rs[0].time, 375_000);
    assert_eq!(rs[90].time, 4_839_717_000);
    assert_eq!(
        shape(&rs[0], "particle.positions"),
        (DType::F32, vec![21, 3])
    );
    assert_eq!(shape(&rs[0], "particle.elements"), (DType::U8, vec![21]));
    assert_eq!(shape(&rs[0], "bond.pairs").0, DType::U32);
    assert_eq!(
        shape(&rs[0], "system.box.vectors"),
        (DType::F32, vec![3, 3])
    );
    let removals: usize = rs
        .iter()
        .map(|r| {
            r.values
                .iter()
                .filter(|(_, v)| *v == Value::Removed)
                .count()
        })
        .sum();
    assert_eq!(removals, 3);
    // Natively recorded state numbers stay integers.
    assert!(rs
        .iter()
        .any(|r| matches!(r.get("simrec.counter"), Some(Value::Int(_)))));
    assert!(rs.iter().all(|r| r.raw.is_some() && r.group.is_none()));
}

#[test]
fn edge_file_every_variant() {
    let (h, rs) = records("edge.nanover.zip");
    assert_eq!(
        channel_counts(&h, &rs),
        [
            ("frame".to_string(), 4),
            ("state".to_string(), 4),
            ("command".to_string(), 1)
        ]
    );
    // The frame+state message: two records, one group, the same original bytes.
    let grouped: Vec<&Record> = rs.iter().filter(|r| r.group.is_some()).collect();
    assert_eq!(grouped.len(), 2);
    assert_eq!(grouped[0].raw, grouped[1].raw);
    assert_eq!(grouped[0].time, grouped[1].time);
    let first = &rs[0];
    assert_eq!(shape(first, "particle.colors"), (DType::U8, vec![4, 4]));
    assert_eq!(shape(first, "bond.pairs"), (DType::U32, vec![2, 2]));
    assert_eq!(shape(first, "forces.user.sparse"), (DType::F32, vec![1, 3]));
    // A frame without frame.index is not a reset and has no frame index.
    let frames: Vec<&Record> = rs.iter().filter(|r| r.channel == 0).collect();
    assert_eq!(
        frames.iter().map(|r| r.frame).collect::<Vec<_>>(),
        [Some(0), Some(1), None, Some(3)]
    );
    // Positions stored as a list are cast to float32 [N,3].
    let listed = frames[3];
    assert_eq!(
        shape(listed, "particle.positions"),
        (DType::F32, vec![4, 3])
    );
    let command = rs.iter().find(|r| r.channel == 2).unwrap();
    assert!(command.get("request").is_some());
    // A tie: two messages share a timestamp.
    let times: Vec<i64> = rs.iter().map(|r| r.time).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    assert!(times.windows(2).any(|w| w[0] == w[1]));
}

#[test]
fn upstream_recordings() {
    // (file, records, resets): one record per message (the index lengths, as Python's
    // msgpack reads them), resets where frame.index is 0.
    let expect = [
        (
            "upstream/test_core-nanotube-example-recording.nanover.zip",
            1615,
            2,
        ),
        (
            "upstream/tutorials-nanotube-example-recording.nanover.zip",
            930,
            2,
        ),
        (
            "upstream/tutorials-17-ala-recording-multiple.nanover.zip",
            428,
            4,
        ),
    ];
    for (rel, count, resets) in expect {
        let (h, rs) = records(rel);
        assert_eq!(rs.len(), count, "{rel}");
        assert_eq!(
            rs.iter()
                .filter(|r| r.channel == 0 && r.frame == Some(0))
                .count(),
            resets,
            "{rel}"
        );
        assert_eq!(h.format, "nanover-zip");
        assert!(rs.windows(2).all(|w| w[0].time <= w[1].time), "{rel}");
    }
    // List-encoded bond.orders (floats) and user forces are cast to their table dtypes.
    let (_, rs) = records("upstream/tutorials-nanotube-example-recording.nanover.zip");
    let orders = rs.iter().find_map(|r| r.get("bond.orders")).unwrap();
    assert!(matches!(orders, Value::Array(a) if a.dtype() == DType::U8 && !a.is_empty()));
    let sparse = rs.iter().find_map(|r| r.get("forces.user.sparse")).unwrap();
    assert!(matches!(sparse, Value::Array(a) if a.dtype() == DType::F32 && a.shape == [0, 3]));
}

fn write_zip(source: &mut dyn Source, target: &Path) -> WriteReport {
    let mut outputs = Outputs::new(true);
    let sink = Box::new(ZipWriter::create(target, source.header(), &mut outputs).unwrap());
    let report = copy(source, sink, &mut |_, _| {}).unwrap();
    outputs.commit().unwrap();
    report
}

#[test]
fn same_format_copy_is_byte_exact() {
    let dir = tempfile::tempdir().unwrap();
    for rel in [
        "small.nanover.zip",
        "edge.nanover.zip",
        "split/small.nanover-00.nanover.zip",
        "split/small.nanover-01.nanover.zip",
        "converted-tie/tie.nanover.zip",
    ] {
        let target = dir.path().join("copy.nanover.zip");
        let mut source = ZipReader::open(&fixture(rel), ReadOptions::default()).unwrap();
        let report = write_zip(&mut source, &target);
        assert_eq!(report.verbatim, report.records, "{rel}");
        assert!(report.loss.is_empty(), "{rel}");
        let (a, b) = (
            std::fs::read(&target).unwrap(),
            std::fs::read(fixture(rel)).unwrap(),
        );
        assert!(a == b, "{rel}: bytes differ");
    }
}

#[test]
fn the_empty_recording_is_written_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("empty.nanover.zip");
    let mut outputs = Outputs::new(false);
    let sink = ZipWriter::create(&target, &Header::new("none", ""), &mut outputs).unwrap();
    Box::new(sink).finish().unwrap();
    outputs.commit().unwrap();
    let written = std::fs::read(&target).unwrap();
    assert_eq!(written.len(), 253);
    assert_eq!(
        written,
        std::fs::read(fixture("split/small.nanover-00.nanover.zip")).unwrap()
    );
}

#[test]
fn legacy_pair_converts_as_upstream_converter_does() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("tie.nanover.zip");
    let pair = [
        fixture("converted-tie/tie.traj"),
        fixture("converted-tie/tie.state"),
    ];
    let mut source = open_recording(&pair, ReadOptions::default()).unwrap();
    write_zip(&mut source, &target);
    let (h1, mine, _) = read(&target, false);
    let (h2, theirs) = records("converted-tie/tie.nanover.zip");
    assert_same_records((&h1, &mine), (&h2, &theirs), "tie");
    // The tie: a frame message, then a state message, at one timestamp.
    let tie = mine
        .windows(2)
        .position(|w| w[0].time == w[1].time)
        .expect("a tie");
    assert_eq!((mine[tie].channel, mine[tie + 1].channel), (0, 1));
    assert!(mine[tie].group.is_none() && mine[tie + 1].group.is_none());
    // Dtypes are the key table's.
    assert_eq!(shape(&mine[0], "particle.elements").0, DType::U8);
}

#[test]
fn zip_to_legacy_to_zip_keeps_what_legacy_can_hold() {
    let dir = tempfile::tempdir().unwrap();
    let stem = dir.path().join("small");
    let mut outputs = Outputs::new(false);
    let mut source =
        ZipReader::open(&fixture("small.nanover.zip"), ReadOptions::default()).unwrap();
    let sink = Box::new(LegacyWriter::create(&stem, source.header(), &mut outputs).unwrap());
    let report = copy(&mut source, sink, &mut |_, _| {}).unwrap();
    let written = outputs.commit().unwrap();
    assert_eq!(written.len(), 2);
    // Integers become doubles in legacy, and the report says so.
    let int_notes: Vec<_> = report
        .loss
        .entries()
        .filter(|(_, _, why, _)| *why == "integer written as a double")
        .map(|(c, f, _, n)| (c.to_string(), f.to_string(), n))
        .collect();
    assert!(
        int_notes.contains(&("frame".into(), "frame.index".into(), 75)),
        "{int_notes:?}"
    );
    assert!(int_notes
        .iter()
        .any(|(c, f, _)| c == "state" && f == "simrec.counter"));
    let back = dir.path().join("back.nanover.zip");
    let mut legacy = open_recording(&written, ReadOptions::default()).unwrap();
    write_zip(&mut legacy, &back);
    let (h1, original) = records("small.nanover.zip");
    let (h2, round, _) = read(&back, false);
    // Equal once integers outside the key table are compared as doubles.
    fn as_double(v: &Value) -> Value {
        match v {
            Value::Int(i) => Value::Float(*i as f64),
            Value::Map(f) => Value::Map(f.iter().map(|(k, v)| (k.clone(), as_double(v))).collect()),
            Value::List(l) => Value::List(l.iter().map(as_double).collect()),
            v => v.clone(),
        }
    }
    let relaxed = |rs: &[Record]| -> Vec<Record> {
        rs.iter()
            .map(|r| {
                let mut r = r.clone();
                for (k, v) in &mut r.values {
                    if !matches!(
                        k.as_str(),
                        "frame.index" | "particle.count" | "residue.count" | "chain.count"
                    ) {
                        *v = as_double(v);
                    }
                }
                r
            })
            .collect()
    };
    assert_same_records(
        (&h1, &relaxed(&original)),
        (&h2, &relaxed(&round)),
        "round trip",
    );
    // Arrays come back bit-identical with their table dtypes.
    match (
        original[0].get("particle.positions"),
        round[0].get("particle.positions"),
    ) {
        (Some(Value::Array(a)), Some(Value::Array(b))) => {
            assert_eq!(a, b);
            assert!(matches!(a.data, ArrayData::F32(_)));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn split_at_resets_matches_nanover_split_recording() {
    let dir = tempfile::tempdir().unwrap();
    let mut outputs = Outputs::new(false);
    let mut source =
        ZipReader::open(&fixture("small.nanover.zip"), ReadOptions::default()).unwrap();
    let header = source.header().clone();
    let names: Vec<PathBuf> = (0..4)
        .map(|k| dir.path().join(format!("p-{k:02}.nanover.zip")))
        .collect();
    let split = {
        let outputs = &mut outputs;
        let header = &header;
        let names = &names;
        SplitAtResets::new(header, move |k, part_header| {
            Ok(Box::new(ZipWriter::create(&names[k], part_header, outputs)?) as Box<dyn Sink>)
        })
    };
    copy(&mut source, Box::new(split), &mut |_, _| {}).unwrap();
    let written = outputs.commit().unwrap();
    // No empty part 0: the recording starts with a reset.
    assert_eq!(written, names[1..].to_vec());
    for (k, name) in names.iter().enumerate().skip(1) {
        let (h1, mine, _) = read(name, false);
        let (h2, theirs) = records(&format!("split/small.nanover-{k:02}.nanover.zip"));
        assert_same_records((&h1, &mine), (&h2, &theirs), &format!("part {k}"));
        assert_eq!(mine[0].time, 0);
        assert_eq!(
            mine[0].group, mine[1].group,
            "part {k} opens with one combined message"
        );
        assert!(mine[0].group.is_some());
    }
    // Part 1 is byte-identical to upstream's.
    assert_eq!(
        std::fs::read(&names[1]).unwrap(),
        std::fs::read(fixture("split/small.nanover-01.nanover.zip")).unwrap()
    );
}

#[test]
fn crashed_recordings_are_recovered_with_synthesised_times() {
    for (rel, messages, derived) in [
        ("crash/crashed-after-100.nanover.zip", 96, 79),
        ("crash/crashed-after-1000.nanover.zip", 994, 0),
    ] {
        let path = fixture(rel);
        // Strict reading refuses, saying how many messages can be recovered.
        match ZipReader::open(&path, ReadOptions::default()) {
            Err(ReadError::Invalid { finding, .. }) => {
                assert_eq!(finding.code, "NVZIP_UNFINISHED");
                assert!(
                    finding
                        .message
                        .contains(&format!("{messages} complete messages")),
                    "{}",
                    finding.message
                );
            }
            other => panic!("{rel}: {:?}", other.err()),
        }
        let (_, rs, reader) = read(&path, true);
        let findings = reader.findings()[0].1.clone();
        let unfinished = findings
            .list()
            .iter()
            .find(|f| f.code == "NVZIP_UNFINISHED")
            .unwrap();
        assert!(
            unfinished
                .message
                .contains(&format!("Read {messages} messages")),
            "{}",
            unfinished.message
        );
        if derived > 0 {
            assert!(
                unfinished
                    .message
                    .contains(&format!("{derived} derived from `server.timestamp`")),
                "{}",
                unfinished.message
            );
        }
        assert!(
            rs.windows(2).all(|w| w[0].time <= w[1].time),
            "{rel}: times never go back"
        );
        assert_eq!(rs[0].time, 0);
    }
    match ZipReader::open(
        &fixture("crash/crashed-after-0.nanover.zip"),
        util::lenient(),
    ) {
        Err(ReadError::Invalid { finding, .. }) => assert_eq!(finding.code, "NVZIP_EMPTY_FILE"),
        other => panic!("{:?}", other.err()),
    }
}

fn codes_of(bytes: Vec<u8>) -> Vec<(&'static str, Severity)> {
    let options = util::lenient();
    match ZipReader::new(Path::new("t"), Input::from_bytes(bytes), options) {
        Err(ReadError::Invalid { finding, .. }) => vec![(finding.code, finding.severity)],
        Err(e) => panic!("{e}"),
        Ok(mut r) => {
            for x in r.by_ref() {
                x.unwrap();
            }
            r.findings()[0]
                .1
                .list()
                .iter()
                .map(|f| (f.code, f.severity))
                .collect()
        }
    }
}

#[test]
fn damage_is_reported_with_its_code() {
    let small = std::fs::read(fixture("small.nanover.zip")).unwrap();
    // A byte flipped inside the first message: only the CRC can tell.
    let mut flipped = small.clone();
    flipped[500] ^= 0xff;
    assert!(codes_of(flipped).contains(&("NVZIP_CRC_MISMATCH", Severity::Error)));
    assert_eq!(
        codes_of(b"hello, world".to_vec()),
        [("NVZIP_NOT_ZIP", Severity::Error)]
    );
    // The central directory cut off: the archive looks unfinished and is scanned.
    let cut = small[..small.len() - 30].to_vec();
    let codes = codes_of(cut);
    assert!(
        codes.contains(&("NVZIP_UNFINISHED", Severity::Error)),
        "{codes:?}"
    );
}

#[test]
fn fuzz_regressions_read_cleanly() {
    // Each once panicked; now each reads to a clean end, with and without decoding, and
    // a lenient read says it is damaged.
    let dir = fixture("fuzz-regressions");
    let paths = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path());
    for (path, decode) in paths.flat_map(|p| [(p.clone(), true), (p, false)]) {
        let options = ReadOptions {
            lenient: true,
            decode,
            ..ReadOptions::default()
        };
        let errors = match ZipReader::open(&path, options) {
            Ok(mut reader) => {
                assert!(reader.by_ref().all(|r| r.is_ok()), "{}", path.display());
                reader.findings()[0].1.count(Severity::Error)
            }
            Err(ReadError::Invalid { .. }) => 1,
            Err(e) => panic!("{}: {e}", path.display()),
        };
        assert!(errors > 0, "{}", path.display());
    }
}

#[test]
fn frames_without_an_index_go_to_legacy_as_previous_plus_one_from_one() {
    let dir = tempfile::tempdir().unwrap();
    let stem = dir.path().join("noindex");
    let header = ZipReader::open(&fixture("small.nanover.zip"), ReadOptions::default())
        .unwrap()
        .header()
        .clone();
    let frame = header.channel_id("frame").unwrap();
    let mut outputs = Outputs::new(false);
    let mut sink: Box<dyn Sink> =
        Box::new(LegacyWriter::create(&stem, &header, &mut outputs).unwrap());
    for t in [1_000, 2_000] {
        sink.write(&Record::new(t, frame)).unwrap();
    }
    let report = sink.finish().unwrap();
    let noted: Vec<_> = report
        .loss
        .entries()
        .map(|(c, f, why, n)| (c.to_string(), f.to_string(), why.to_string(), n))
        .collect();
    assert_eq!(
        noted,
        [(
            "frame".to_string(),
            "frame_index".to_string(),
            "frame without an index: written as the previous index + 1".to_string(),
            2
        )]
    );
    outputs.commit().unwrap();
    let back =
        simrec::formats::registry::open(&stem.with_extension("traj"), ReadOptions::default())
            .unwrap();
    let frames: Vec<Option<i64>> = back.map(|r| r.unwrap().frame).collect();
    // Not a reset: spec nanover-zip §14 writes 1 when there is no previous frame.
    assert_eq!(frames, [Some(1), Some(2)]);
}
