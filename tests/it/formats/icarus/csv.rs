//! Icarus CSV (spec icarec.md Part C) in-process: reading the hand-made fixture in Icarus's
//! style, NaN/inf/empty cells, the zero-frame file, every §C3 rule with its line, offset and
//! row, the writer from a typed model header (composites, Mat3 column-major, held values,
//! loss and widening), and every byte-truncation of the fixture.

use std::path::{Path, PathBuf};

use simrec::formats::icarus::csv::{CsvReader, CsvStyle, CsvWriteOptions, CsvWriter};
use simrec::formats::output::Outputs;
use simrec::formats::{ReadError, ReadOptions, Sink, Source, WriteReport};
use simrec::model::{
    Array, ArrayData, Channel, ChannelKind, Composition, DType, Entity, FieldSpec, Header, Record,
    Value,
};
use simrec::report::{Finding, Severity};

use crate::util;
use crate::util::lenient;

fn fixture() -> PathBuf {
    util::any_fixture("icarus-csv/rocket.csv")
}

fn reader(text: &[u8], options: ReadOptions) -> Result<CsvReader, ReadError> {
    CsvReader::from_bytes(text.to_vec(), Path::new("t.csv"), options)
}

/// Every record of `text` read leniently, and the findings.
fn read_all(text: &[u8]) -> (Vec<Record>, Vec<Finding>) {
    let mut r = reader(text, lenient()).unwrap();
    let records: Vec<Record> = r.by_ref().map(|x| x.unwrap()).collect();
    let findings = r.findings()[0].1.list().to_vec();
    (records, findings)
}

fn float(r: &Record) -> f64 {
    match &r.values[..] {
        [(_, Value::Float(x))] => *x,
        other => panic!("{other:?}"),
    }
}

/// Issue 27, item F: repeated column names are found with a set, not by searching the
/// columns before each (a million columns took over 60 s); each repeat is reported once,
/// at its own column.
#[test]
fn repeated_names_among_forty_thousand_columns_are_each_reported() {
    let mut names: Vec<String> = (0..40_000).map(|i| format!("W.C{}.s{i}", i % 10)).collect();
    names[20_000] = names[3].clone();
    names[39_999] = names[3].clone();
    let text = format!(
        "time,{}\n0.5,{}\n",
        names.join(","),
        vec!["1"; names.len()].join(",")
    );
    let (records, findings) = read_all(text.as_bytes());
    assert_eq!(records.len(), 40_000);
    let repeats: Vec<&str> = findings
        .iter()
        .filter(|f| f.code == "ICARUS_CSV_DUPLICATE_COLUMN")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(
        repeats,
        [
            "line 1: column 20002 is named `W.C3.s3` like an earlier column; both are channels of that name",
            "line 1: column 40001 is named `W.C3.s3` like an earlier column; both are channels of that name",
        ]
    );
}

#[test]
fn the_fixture_reads_as_one_channel_per_column_and_one_record_per_row() {
    let mut r = CsvReader::open(&fixture(), ReadOptions::default()).unwrap();
    let header = r.header().clone();
    assert_eq!(header.format, "icarus-csv");
    assert_eq!(header.origin.epoch, None);
    assert_eq!(header.origin.system.as_deref(), Some("MET"));
    assert_eq!(header.channels.len(), 15);
    let z = &header.channels[2];
    assert_eq!(z.name, "Rocket.Vehicle.position.z");
    assert_eq!(z.composition, Composition::SampleHold);
    assert_eq!(
        z.fields,
        [FieldSpec::typed("z", DType::F64, &[])],
        "one complete field, named by the last segment"
    );
    let records: Vec<Record> = r.by_ref().map(|x| x.unwrap()).collect();
    assert_eq!(records.len(), 24 * 15);
    let first = &records[2];
    assert_eq!(first.time, 10_000_000);
    assert_eq!(first.channel, 2);
    assert_eq!(first.frame, Some(0));
    assert_eq!(
        first.entity,
        Some(Entity::Name("Rocket.Vehicle.position".into()))
    );
    assert_eq!(first.values[0].0, "z");
    assert_eq!(float(first), 0.00141938300096002);
    let last = records.last().unwrap();
    assert_eq!(
        (last.time, last.frame, last.channel),
        (240_000_000, Some(23), 14)
    );
    assert_eq!(float(last), -1.87840227245883e-07);
    // The barometer reads nan for two frames.
    assert!(float(&records[13]).is_nan());
    assert!(float(&records[15 + 13]).is_nan());
    assert_eq!(float(&records[30 + 13]), 0.00865761002726075);
    assert_eq!(
        float(&records[11]),
        1.0,
        "an int32 enum as Icarus prints it"
    );
    assert!(r.findings()[0].1.list().is_empty());
    let facts = r.facts();
    assert_eq!(facts[0].name, "columns");
    assert_eq!(facts[0].json["count"], 15);
    assert_eq!(facts[1].json["rows"], 24);
    assert_eq!(facts[2].json["usual_ns"], 10_000_000);
    assert_eq!(facts[2].json["irregular"], 0);
    assert_eq!(facts[2].json["steps"], 23);
}

#[test]
fn nan_inf_and_empty_cells() {
    let (records, findings) =
        read_all(b"time,a.b,c\n0.01,nan,-inf\n0.02,,INF\n0.03,-nan,1e-05\n0.04,NaN,-Infinity\n");
    assert!(findings.is_empty(), "{findings:?}");
    let v: Vec<f64> = records.iter().map(float).collect();
    assert!(v[0].is_nan() && v[0].is_sign_positive());
    assert_eq!(v[1], f64::NEG_INFINITY);
    assert!(v[2].is_nan(), "an empty cell reads as NaN");
    assert_eq!(v[3], f64::INFINITY);
    assert!(
        v[4].is_nan() && v[4].is_sign_negative(),
        "-nan keeps its sign"
    );
    assert_eq!(v[5], 1e-5);
    assert!(v[6].is_nan());
    assert_eq!(v[7], f64::NEG_INFINITY);
    // A column name without a dot has no entity; its field is the whole name.
    assert_eq!(records[1].entity, None);
    assert_eq!(records[1].values[0].0, "c");
    assert_eq!(records[0].values[0].0, "b");
}

#[test]
fn a_zero_byte_file_is_a_recording_without_frames() {
    let mut r = reader(b"", ReadOptions::default()).unwrap();
    assert!(r.header().channels.is_empty());
    assert!(r.next().is_none());
    assert!(r.findings()[0].1.list().is_empty());
    assert_eq!(r.facts()[1].json["rows"], 0);
    // The header alone (what simrec writes for no frames): channels, no records.
    let mut r = reader(b"time,x\n", ReadOptions::default()).unwrap();
    assert_eq!(r.header().channels.len(), 1);
    assert!(r.next().is_none());
}

/// (code, severity, offset, record, message) of a finding.
type Found = (&'static str, Severity, Option<u64>, Option<u64>, String);

/// Every finding of `text` read leniently.
fn found(text: &[u8]) -> Vec<Found> {
    read_all(text)
        .1
        .into_iter()
        .map(|f| (f.code, f.severity, f.offset, f.record, f.message))
        .collect()
}

#[test]
fn every_rule_with_its_line_offset_and_row() {
    use Severity::*;
    // Short row: line 3 starts at byte 18.
    let f = found(b"time,a,b\n0.01,1,2\n0.02,1\n0.03,1,2\n");
    assert_eq!(f.len(), 1);
    assert_eq!(
        (f[0].0, f[0].1, f[0].2, f[0].3),
        ("ICARUS_CSV_COLUMNS", Error, Some(18), Some(1))
    );
    assert_eq!(
        f[0].4,
        "line 3: 2 cells where the header has 3 (time and 2 signals); row skipped"
    );
    // `abc`: the offset is the cell's.
    let f = found(b"time,a,b\n0.01,1,abc\n");
    assert_eq!(
        (f[0].0, f[0].1, f[0].2, f[0].3),
        ("ICARUS_CSV_VALUE", Error, Some(16), Some(0))
    );
    assert_eq!(
        f[0].4,
        "line 2: column 3 (b): `abc` is not a number; read as NaN"
    );
    // Empty time.
    let f = found(b"time,a\n0.01,1\n,2\n0.03,3\n");
    assert_eq!(
        (f[0].0, f[0].1, f[0].2, f[0].3),
        ("ICARUS_CSV_TIME", Error, Some(14), Some(1))
    );
    assert_eq!(f[0].4, "line 3: the time cell is empty; row skipped");
    // Equal times: a warning; decreasing: an error.
    let f = found(b"time,a\n0.01,1\n0.01,2\n0.005,3\n");
    assert_eq!(f.len(), 2);
    assert_eq!(
        (f[0].0, f[0].1, f[0].2, f[0].3),
        ("ICARUS_CSV_TIME_EQUAL", Warning, Some(14), Some(1))
    );
    assert_eq!(f[0].4, "line 3: the time 0.01 s is the previous row's");
    assert_eq!(
        (f[1].0, f[1].1, f[1].2, f[1].3),
        ("ICARUS_CSV_TIME", Error, Some(21), Some(2))
    );
    assert_eq!(
        f[1].4,
        "line 4: the time 0.005 s is lower than the previous row's 0.01"
    );
    // Non-finite times.
    let f = found(b"time,a\nnan,1\n-inf,2\n");
    assert_eq!(f.len(), 2);
    assert!(f.iter().all(|x| x.0 == "ICARUS_CSV_TIME"));
    // A header that does not start with `time`.
    let Err(ReadError::Invalid { finding, .. }) = reader(b"t,a\n0.01,1\n", lenient()) else {
        panic!("a header without time is an error")
    };
    assert_eq!(finding.code, "ICARUS_CSV_HEADER");
    assert_eq!(finding.offset, Some(0));
}

#[test]
fn damaged_rows_are_skipped_and_records_stay_in_time_order() {
    let (records, findings) = read_all(b"time,a\n1,1\n5,2\n3,3\n4,4\n6,6\n");
    let times: Vec<i64> = records.iter().map(|r| r.time / 1_000_000_000).collect();
    assert_eq!(times, [1, 5, 6]);
    let codes: Vec<_> = findings.iter().map(|f| (f.code, f.record)).collect();
    // Row 2 goes back from 5; row 3 is above row 2 but below row 1, which was read.
    assert_eq!(
        codes,
        [("ICARUS_CSV_TIME", Some(2)), ("ICARUS_CSV_TIME", Some(3))]
    );
    // Frame values are row indices, damaged rows counted.
    assert_eq!(records[2].frame, Some(4));
}

#[test]
fn a_strict_read_stops_at_the_first_error_and_keeps_warnings() {
    let mut r = reader(b"time,a\n0.01,1\n0.01,2\n0.02,x\n", ReadOptions::default()).unwrap();
    let mut n = 0;
    let err = loop {
        match r.next() {
            Some(Ok(_)) => n += 1,
            Some(Err(e)) => break e,
            None => panic!("no error"),
        }
    };
    assert_eq!(n, 2);
    let ReadError::Invalid { finding, path } = err else {
        panic!()
    };
    assert_eq!(finding.code, "ICARUS_CSV_VALUE");
    assert_eq!(path, Path::new("t.csv"));
    assert_eq!(r.findings()[0].1.list()[0].code, "ICARUS_CSV_TIME_EQUAL");
    assert!(r.next().is_none());
}

#[test]
fn deep_reading_counts_nan_and_infinities_per_column() {
    let options = ReadOptions {
        deep: true,
        ..lenient()
    };
    let mut r = reader(b"time,a,b\n0.5,nan,1\n1,inf,2\n1.5,-nan,3\n", options).unwrap();
    r.by_ref().for_each(drop);
    let f = r.findings()[0].1.list().to_vec();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].code, "ICARUS_CSV_NONFINITE");
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!((f[0].offset, f[0].record), (Some(13), Some(0)));
    assert_eq!(
        f[0].message,
        "column a: 2 NaN and 1 infinite values; the first in row 0, at t = 0.5 s"
    );
    // Without --deep, nothing.
    assert!(read_all(b"time,a,b\n0.5,nan,1\n").1.is_empty());
}

#[test]
fn crlf_lines_and_a_missing_final_line_break_are_read() {
    let (records, findings) = read_all(b"time,a\r\n0.01,1\r\n0.02,2");
    assert!(findings.is_empty());
    assert_eq!(records.iter().map(float).collect::<Vec<_>>(), [1.0, 2.0]);
}

#[test]
fn a_line_longer_than_any_row_is_skipped_unkept() {
    let mut text = b"time,a\n0.01,1\n".to_vec();
    text.extend(std::iter::repeat_n(b'9', 1 << 20));
    text.extend(b"\n0.03,3\n");
    let (records, findings) = read_all(&text);
    assert_eq!(records.len(), 2);
    assert_eq!(findings[0].code, "ICARUS_CSV_LINE_LENGTH");
    assert_eq!(findings[0].offset, Some(14));
    // The second data row, numbered as every other row finding numbers its row.
    assert_eq!(findings[0].record, Some(1));
}

#[test]
fn recycled_records_are_written_over() {
    let mut r = reader(b"time,a.x,a.y\n1,1,2\n2,3,4\n", ReadOptions::default()).unwrap();
    let mut seen = Vec::new();
    let mut addresses = Vec::new();
    while let Some(rec) = r.next() {
        let rec = rec.unwrap();
        seen.push((rec.channel, rec.time, float(&rec), rec.values[0].0.clone()));
        addresses.push(rec.values.as_ptr() as usize);
        r.recycle(rec);
    }
    assert_eq!(
        seen,
        [
            (0, 1_000_000_000, 1.0, "x".to_string()),
            (1, 1_000_000_000, 2.0, "y".to_string()),
            (0, 2_000_000_000, 3.0, "x".to_string()),
            (1, 2_000_000_000, 4.0, "y".to_string()),
        ]
    );
    assert_eq!(
        addresses[0], addresses[2],
        "the row's records reuse their vectors"
    );
    assert_eq!(addresses[1], addresses[3]);
}

#[test]
fn every_truncation_of_the_fixture_reads_cleanly() {
    let bytes = std::fs::read(fixture()).unwrap();
    let header_end = bytes.iter().position(|&b| b == b'\n').unwrap();
    for cut in 0..=bytes.len() {
        let part = &bytes[..cut];
        for options in [lenient(), ReadOptions::default()] {
            let mut r = match reader(part, options) {
                Ok(r) => r,
                Err(ReadError::Invalid { finding, .. }) => {
                    // Only a cut inside `time` breaks the header.
                    assert!(cut < 5, "cut {cut}: {finding}");
                    assert_eq!(finding.code, "ICARUS_CSV_HEADER");
                    continue;
                }
                Err(e) => panic!("cut {cut}: {e}"),
            };
            let mut records = 0u64;
            for item in r.by_ref() {
                match item {
                    Ok(_) => records += 1,
                    Err(ReadError::Invalid { finding, .. }) => {
                        assert!(!options.lenient);
                        // A cut row, or a number cut after its `e` or inside `nan`.
                        assert!(
                            ["ICARUS_CSV_COLUMNS", "ICARUS_CSV_VALUE"].contains(&finding.code),
                            "cut {cut}: {finding}"
                        );
                        break;
                    }
                    Err(e) => panic!("cut {cut}: {e}"),
                }
            }
            let channels = r.header().channels.len() as u64;
            if cut > header_end {
                assert_eq!(channels, 15, "cut {cut}");
            }
            assert_eq!(records % channels.max(1), 0, "whole rows only, cut {cut}");
            let findings = r.findings()[0].1.list().to_vec();
            assert!(
                findings
                    .iter()
                    .all(
                        |f| ["ICARUS_CSV_COLUMNS", "ICARUS_CSV_VALUE"].contains(&f.code)
                            && f.offset.is_some()
                    ),
                "cut {cut}: {findings:?}"
            );
        }
    }
}

// ---- the writer, from a typed model header ----

fn channel(name: &str, field: &str, dtype: DType, shape: &[usize]) -> Channel {
    let mut c = Channel::new(name, ChannelKind::Signals, Composition::SampleHold);
    c.fields.push(FieldSpec::typed(field, dtype, shape));
    c
}

fn record(time: i64, channel: u32, entity: &str, field: &str, value: Value) -> Record {
    let mut r = Record::new(time, channel);
    r.entity = Some(Entity::Name(entity.into()));
    r.values.push((field.to_string(), value));
    r
}

fn array(data: ArrayData, shape: &[usize]) -> Value {
    Value::Array(Array::with_shape(data, shape.to_vec()).unwrap())
}

/// Writes `records` through the CSV writer into a temporary file; its text and the report.
fn write(header: &Header, records: &[Record], style: Option<&str>) -> (String, WriteReport) {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.csv");
    let mut outputs = Outputs::new(false);
    let options = CsvWriteOptions {
        style: match style {
            Some("icarus-strict") => CsvStyle::IcarusStrict,
            _ => CsvStyle::Icarus,
        },
        ..CsvWriteOptions::default()
    };
    let mut sink: Box<dyn Sink> =
        Box::new(CsvWriter::create(&target, header, &mut outputs, options).unwrap());
    for r in records {
        sink.write(r).unwrap();
    }
    let report = sink.finish().unwrap();
    outputs.commit().unwrap();
    (std::fs::read_to_string(&target).unwrap(), report)
}

fn loss(report: &WriteReport) -> Vec<(String, String, String, u64)> {
    report
        .loss
        .entries()
        .map(|(c, f, r, n)| (c.into(), f.into(), r.into(), n))
        .collect()
}

fn widened(report: &WriteReport) -> Vec<(String, String, String, u64)> {
    report
        .loss
        .widenings()
        .map(|(c, f, r, n)| (c.into(), f.into(), r.into(), n))
        .collect()
}

#[test]
fn composites_expand_in_storage_order_and_mat3_is_column_major() {
    let mut h = Header::new("icarec", "1.0.0");
    h.add_channel(channel("Nav.position", "position", DType::F64, &[3]));
    h.add_channel(channel("Nav.q", "q", DType::F64, &[4]));
    h.add_channel(channel("Body.inertia", "inertia", DType::F64, &[3, 3]));
    h.add_channel(channel("Aero.alpha", "alpha", DType::F32, &[]));
    h.add_channel(channel("Mode.state", "state", DType::I32, &[]));
    h.add_channel(channel("Mode.armed", "armed", DType::Bool, &[]));
    let t = 10_000_000;
    let rows = [
        record(
            t,
            0,
            "Nav",
            "position",
            array(ArrayData::F64(vec![1.0, 2.0, 3.0]), &[3]),
        ),
        record(
            t,
            1,
            "Nav",
            "q",
            array(ArrayData::F64(vec![1.0, 0.0, 0.0, 0.5]), &[4]),
        ),
        record(
            t,
            2,
            "Body",
            "inertia",
            // Row-major: element (r, c) = 10 r + c.
            array(
                ArrayData::F64(vec![0.0, 1.0, 2.0, 10.0, 11.0, 12.0, 20.0, 21.0, 22.0]),
                &[3, 3],
            ),
        ),
        record(t, 3, "Aero", "alpha", Value::F32(0.1)),
        record(t, 4, "Mode", "state", Value::Int(2)),
        record(t, 5, "Mode", "armed", Value::Bool(true)),
    ];
    let (text, report) = write(&h, &rows, None);
    assert_eq!(
        text,
        "time,Nav.position.x,Nav.position.y,Nav.position.z,Nav.q.w,Nav.q.x,Nav.q.y,Nav.q.z,\
         Body.inertia.m00,Body.inertia.m10,Body.inertia.m20,Body.inertia.m01,Body.inertia.m11,\
         Body.inertia.m21,Body.inertia.m02,Body.inertia.m12,Body.inertia.m22,Aero.alpha,Mode.state,\
         Mode.armed\n\
         0.01,1,2,3,1,0,0,0.5,0,10,20,1,11,21,2,12,22,0.100000001490116,2,1\n"
    );
    assert!(loss(&report).is_empty(), "{:?}", loss(&report));
    assert_eq!(
        widened(&report),
        [
            (
                "Aero.alpha".into(),
                "alpha".into(),
                "float32 written as double".into(),
                1
            ),
            (
                "Mode.armed".into(),
                "armed".into(),
                "bool written as 0/1".into(),
                1
            ),
            (
                "Mode.state".into(),
                "state".into(),
                "int32 written as double".into(),
                1
            ),
        ]
    );
    assert_eq!(report.records, 6);
    assert!(report.warnings.is_empty());
}

#[test]
fn values_hold_between_records_and_what_cannot_be_kept_is_counted() {
    let mut h = Header::new("test", "1");
    h.add_channel(channel("A.x", "x", DType::F64, &[]));
    h.add_channel(channel("A.n", "n", DType::I64, &[]));
    h.add_channel(channel("A.label", "label", DType::Str, &[]));
    let mut undeclared = Channel::new("B", ChannelKind::Signals, Composition::Independent);
    undeclared.fields.push(FieldSpec::new("v"));
    h.add_channel(undeclared);
    let s = 1_000_000_000;
    let rows = [
        record(s, 0, "A", "x", Value::Float(0.1 + 0.2)),
        record(2 * s, 0, "A", "x", Value::Float(0.5)),
        record(2 * s, 1, "A", "n", Value::Int((1 << 53) + 1)),
        record(2 * s, 2, "A", "label", Value::Str("go".into())),
        record(2 * s, 3, "B", "v", Value::Float(1.0)),
        record(3 * s, 1, "A", "n", Value::Int(7)),
    ];
    let (text, report) = write(&h, &rows, None);
    assert_eq!(
        text,
        "time,A.x,A.n\n1,0.3,nan\n2,0.5,9.00719925474099e+15\n3,0.5,7\n"
    );
    assert_eq!(
        loss(&report),
        [
            (
                "A.label".into(),
                "label".into(),
                "no CSV column for this type (strings, maps, other shapes)".into(),
                1
            ),
            (
                "A.n".into(),
                "n".into(),
                "integer not exact as a 15-digit double".into(),
                1
            ),
            (
                "A.n".into(),
                "n".into(),
                "no value before its first record: written as nan".into(),
                1
            ),
            (
                "A.x".into(),
                "x".into(),
                "double needs more than 15 significant digits (%.15g)".into(),
                1
            ),
            (
                "B".into(),
                "*".into(),
                "fields not declared with type and shape before the first record: no column".into(),
                1
            ),
        ]
    );
}

#[test]
fn a_time_that_needs_more_than_15_digits_in_seconds_is_counted() {
    let mut h = Header::new("test", "1");
    h.add_channel(channel("A.x", "x", DType::F64, &[]));
    let rows = [
        record(1_234_567_890_123, 0, "A", "x", Value::Float(1.0)),
        record(1_000_000_000_000_001, 0, "A", "x", Value::Float(2.0)),
    ];
    let (text, report) = write(&h, &rows, None);
    assert_eq!(text, "time,A.x\n1234.567890123,1\n1000000,2\n");
    assert_eq!(
        loss(&report),
        [(
            "time".into(),
            "time".into(),
            "time in seconds needs more than 15 significant digits (%.15g)".into(),
            1
        )]
    );
}

#[test]
fn a_signal_that_comes_again_in_the_same_instant_starts_a_row() {
    let mut h = Header::new("test", "1");
    h.add_channel(channel("A.x", "x", DType::F64, &[]));
    h.add_channel(channel("A.y", "y", DType::F64, &[]));
    let rows = [
        record(0, 0, "A", "x", Value::Float(1.0)),
        record(0, 1, "A", "y", Value::Float(2.0)),
        record(0, 0, "A", "x", Value::Float(3.0)),
    ];
    let (text, report) = write(&h, &rows, None);
    assert_eq!(text, "time,A.x,A.y\n0,1,2\n0,3,2\n");
    assert!(loss(&report).is_empty());
    // A second entity of one channel has columns of its own, after the channel's name (the
    // first is the entity the name already holds); A.y has no value yet.
    let rows = [
        record(0, 0, "A", "x", Value::Float(1.0)),
        record(0, 0, "Other", "x", Value::Float(9.0)),
    ];
    let (text, report) = write(&h, &rows, None);
    assert_eq!(text, "time,A.x,A.x.Other,A.y\n0,1,9,nan\n");
    assert_eq!(
        loss(&report),
        [(
            "A.y".into(),
            "y".into(),
            "no value before its first record: written as nan".into(),
            1
        )]
    );
}

#[test]
fn names_that_need_quotes_are_quoted_with_a_warning() {
    let mut h = Header::new("test", "1");
    h.add_channel(channel("a,b", "a,b", DType::F64, &[]));
    h.add_channel(channel("say \"hi\"", "say \"hi\"", DType::F64, &[]));
    let rows = [
        record(0, 0, "", "a,b", Value::Float(1.0)),
        record(0, 1, "", "say \"hi\"", Value::Float(2.0)),
    ];
    let (text, report) = write(&h, &rows, None);
    assert_eq!(text, "time,\"a,b\",\"say \"\"hi\"\"\"\n0,1,2\n");
    assert_eq!(report.warnings.len(), 2);
    assert!(report.warnings[0].contains("quoted per RFC 4180"));
    // And they read back as the same names.
    let mut r = reader(text.as_bytes(), ReadOptions::default()).unwrap();
    let names: Vec<String> = r.header().channels.iter().map(|c| c.name.clone()).collect();
    assert_eq!(names, ["a,b", "say \"hi\""]);
    assert_eq!(r.by_ref().count(), 2);
}

#[test]
fn zero_frames_write_the_header_or_in_strict_style_nothing() {
    let mut h = Header::new("test", "1");
    h.add_channel(channel("A.x", "x", DType::F64, &[]));
    let (text, report) = write(&h, &[], None);
    assert_eq!(text, "time,A.x\n");
    assert_eq!(
        report.warnings,
        ["no frames: wrote the header line alone (Icarus writes an empty file; --csv-style icarus-strict does too)"]
    );
    let (text, report) = write(&h, &[], Some("icarus-strict"));
    assert_eq!(text, "");
    assert_eq!(report.warnings.len(), 1);
}

#[test]
fn the_writer_streams_to_any_destination() {
    // What the CLI gets for `-o -`: a buffered destination; here an in-memory one.
    let mut outputs = Outputs::dry_run(false);
    let mut h = Header::new("test", "1");
    h.add_channel(channel("A.x", "x", DType::F64, &[]));
    let mut sink = CsvWriter::create(Path::new("-"), &h, &mut outputs, Default::default()).unwrap();
    sink.write(&record(0, 0, "A", "x", Value::Float(2.0 / 3.0)))
        .unwrap();
    let report = Box::new(sink).finish().unwrap();
    assert_eq!(loss(&report).len(), 1);
}
