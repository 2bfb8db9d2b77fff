//! Icarus HDF5 (spec icarec.md Part B): the h5py fixtures read with their exact values,
//! validation vectors built with hdf5-pure, and the writer's layout, values and loss report.

use std::path::{Path, PathBuf};

use hdf5_pure::{AttrValue, FileBuilder, MaxExtent};
use serde_json::Value as Json;
use simrec::formats::icarus::hdf5::{IcarusH5Reader, IcarusHdf5};
use simrec::formats::output::Outputs;
use simrec::formats::{Format, ReadError, ReadOptions, Source, WriteReport};
use simrec::model::{
    Array, ArrayData, Channel, ChannelKind, Composition, DType, Entity, FieldSpec, Header, Record,
    Value,
};
use simrec::report::{Findings, Severity};

use crate::util;
use crate::util::lenient;

fn fixture(name: &str) -> PathBuf {
    util::any_fixture("icarus-hdf5").join(name)
}

fn read(path: &Path, options: ReadOptions) -> (Header, Vec<Record>, Findings) {
    let mut r = IcarusH5Reader::open(path, options).unwrap();
    let records: Vec<Record> = r.by_ref().map(Result::unwrap).collect();
    let findings = r.findings()[0].1.clone();
    (r.header().clone(), records, findings)
}

fn codes(f: &Findings) -> Vec<(Severity, &'static str)> {
    f.list().iter().map(|f| (f.severity, f.code)).collect()
}

fn float(r: &Record) -> f64 {
    match r.values.as_slice() {
        [(_, Value::Float(x))] => *x,
        other => panic!("not one float: {other:?}"),
    }
}

fn int(r: &Record) -> i64 {
    match r.values.as_slice() {
        [(_, Value::Int(x))] => *x,
        other => panic!("not one integer: {other:?}"),
    }
}

/// The vulcan.h5 fixture's values at frame i, as make_icarus_h5.py computes them.
fn vulcan_time(i: usize) -> f64 {
    (i + 1) as f64 * 0.01
}

#[test]
fn vulcan_layout_reads_with_every_value_exact() {
    let (h, records, findings) = read(&fixture("vulcan.h5"), ReadOptions::default());
    assert_eq!(h.format, "icarus-hdf5");
    assert_eq!(h.origin.epoch, None);
    assert_eq!(h.origin.system.as_deref(), Some("MET"));
    assert_eq!(h.metadata["created_at"], "2026-03-01T12:00:00Z");
    assert_eq!(h.metadata["schema"], "strict");
    // Schema order, not name order.
    let names: Vec<&str> = h.channels.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Rocket.Vehicle.position.x",
            "Rocket.Vehicle.position.y",
            "Rocket.Vehicle.position.z",
            "Rocket.Engine.thrust",
            "Rocket.Engine.ignited",
            "Rocket.Vehicle.mode",
            "Rocket.Clock.ticks",
            "Rocket.Mass.dry",
        ]
    );
    let spec = |i: usize| &h.channels[i].fields[0];
    assert_eq!(
        spec(0),
        &FieldSpec::typed("x", DType::F64, &[]).with_unit("m")
    );
    assert_eq!(spec(4).dtype, Some(DType::I32));
    assert_eq!(spec(4).semantic.as_deref(), Some("boolean"));
    assert_eq!(spec(5).semantic.as_deref(), Some("enum"));
    assert_eq!(spec(6).dtype, Some(DType::I64));
    assert!(spec(7).is_static && !spec(0).is_static);
    assert_eq!(spec(7).unit.as_deref(), Some("kg"));
    assert!(h
        .channels
        .iter()
        .all(|c| c.composition == Composition::SampleHold && c.fields.len() == 1));

    assert_eq!(records.len(), 2500 * 8);
    for (n, r) in records.iter().enumerate() {
        let (i, s) = (n / 8, n % 8);
        let t = vulcan_time(i);
        assert_eq!(r.time, (t * 1e9).round() as i64);
        assert_eq!(r.channel as usize, s);
        assert_eq!(r.frame, Some(i as i64));
        assert_eq!(r.exact_seconds.map(f64::to_bits), Some(t.to_bits()));
        let fi = i as f64;
        match s {
            0 => assert_eq!(float(r).to_bits(), (1000.0 + 12.5 * t).to_bits()),
            1 => assert_eq!(float(r).to_bits(), (t * -3.25).to_bits()),
            2 => assert_eq!(float(r).to_bits(), (100.0 - 0.125 * fi).to_bits()),
            3 => assert_eq!(float(r), if i < 2000 { 1500.0 } else { 0.0 }),
            4 => assert_eq!(int(r), i64::from(i < 2000)),
            5 => assert_eq!(int(r), (i / 1000) as i64),
            6 => assert_eq!(int(r), (1i64 << 53) + i as i64),
            _ => assert_eq!(float(r), 1250.0),
        }
    }
    // Entity = component path, field = last segment (spec §A10).
    assert_eq!(
        records[0].entity,
        Some(Entity::Name("Rocket.Vehicle.position".into()))
    );
    assert_eq!(records[0].values[0].0, "x");
    assert_eq!(records[6].entity, Some(Entity::Name("Rocket.Clock".into())));
    // Above 2^53: not representable as a double, kept exactly.
    assert_eq!(int(&records[8 * 2499 + 6]), 9_007_199_254_743_491);
    assert_eq!(codes(&findings), [(Severity::Info, "ICARUS_H5_NO_EPOCH")]);
}

#[test]
fn unescaped_schema_is_read_leniently_in_its_own_order() {
    let (h, records, findings) = read(&fixture("unescaped.h5"), ReadOptions::default());
    assert_eq!(h.metadata["schema"], "lenient");
    let names: Vec<&str> = h.channels.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Rocket.Sensor.ok",
            "Rocket.Sensor.say\"hi\"",
            "Rocket.Sensor.dir\\name"
        ]
    );
    assert_eq!(h.channels[1].fields[0].unit.as_deref(), Some("in\""));
    assert_eq!(h.channels[1].fields[0].name, "say\"hi\"");
    assert!(h.channels[2].fields[0].is_static);
    let values: Vec<String> = records
        .iter()
        .map(|r| format!("{:?}", r.values[0].1))
        .collect();
    assert_eq!(
        values,
        [
            "Float(1.0)",
            "Float(0.5)",
            "Int(7)",
            "Float(2.0)",
            "Float(0.25)",
            "Int(7)",
            "Float(3.0)",
            "Float(0.125)",
            "Int(7)"
        ]
    );
    assert_eq!(codes(&findings), [(Severity::Info, "ICARUS_H5_NO_EPOCH")]);

    // A backslash that is a valid JSON escape: the strict reading names no dataset, the
    // lenient one does.
    let (h, _, findings) = read(&fixture("escape.h5"), ReadOptions::default());
    assert_eq!(h.channels[0].name, "Rocket.tab\\table");
    assert_eq!(h.metadata["schema"], "lenient");
    assert_eq!(codes(&findings), [(Severity::Info, "ICARUS_H5_NO_EPOCH")]);
}

#[test]
fn a_shorter_dataset_is_an_error_and_the_frame_count_the_minimum() {
    let err = IcarusH5Reader::open(&fixture("crashed.h5"), ReadOptions::default())
        .err()
        .unwrap();
    let ReadError::Invalid { finding, .. } = err else {
        panic!("{err}")
    };
    assert_eq!(finding.code, "ICARUS_H5_LENGTH");
    assert_eq!(
        finding.message,
        "/signals/Vehicle.b has 1200 rows, /time has 1201 (the run likely stopped between two writes); 1200 frames are read"
    );

    let (_, records, findings) = read(&fixture("crashed.h5"), lenient());
    assert_eq!(records.len(), 2400);
    let last = &records[2399];
    assert_eq!((last.frame, float(last)), (Some(1199), 2398.0));
    assert_eq!(last.time, 12_000_000_000);
    assert_eq!(
        codes(&findings),
        [
            (Severity::Error, "ICARUS_H5_LENGTH"),
            (Severity::Info, "ICARUS_H5_NO_EPOCH")
        ]
    );
}

#[test]
fn without_a_schema_datasets_give_order_units_and_semantics() {
    let deep = ReadOptions {
        deep: true,
        ..lenient()
    };
    let (h, records, findings) = read(&fixture("noschema.h5"), deep);
    let names: Vec<&str> = h.channels.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a.first", "b.second", "c.flag"]);
    // Fixed-length string attributes.
    assert_eq!(h.channels[1].fields[0].unit.as_deref(), Some("m/s"));
    assert_eq!(h.channels[1].fields[0].dtype, Some(DType::F32));
    assert_eq!(h.channels[2].fields[0].semantic.as_deref(), Some("boolean"));
    assert!(h.channels.iter().all(|c| !c.fields[0].is_static));
    assert_eq!(h.metadata["schema"], "missing");
    assert_eq!(records[1].values[0].1, Value::F32(0.1));
    assert!(matches!(records[6].values[0].1, Value::Float(x) if x.is_nan()));
    assert_eq!(records[9].values[0].1, Value::Float(f64::INFINITY));
    assert_eq!(
        codes(&findings),
        [
            (Severity::Warning, "ICARUS_H5_SCHEMA"),
            (Severity::Info, "ICARUS_H5_NO_EPOCH"),
            (Severity::Warning, "ICARUS_H5_NONFINITE"),
        ]
    );
    let nonfinite = &findings.list()[2];
    assert_eq!(nonfinite.record, Some(2));
    assert_eq!(
        nonfinite.message,
        "/signals/a.first holds 2 NaN or infinite value(s), the first at frame 2 (t = 0.3 s)"
    );
    // Without --deep, no value check.
    let (_, _, findings) = read(&fixture("noschema.h5"), lenient());
    assert_eq!(findings.total("ICARUS_H5_NONFINITE"), 0);
}

#[test]
fn header_only_reading_reads_time_alone() {
    let options = ReadOptions {
        decode: false,
        ..ReadOptions::default()
    };
    let (_, records, _) = read(&fixture("vulcan.h5"), options);
    assert_eq!(records.len(), 20000);
    assert!(records.iter().all(|r| r.values.is_empty()));
    assert_eq!(records[19999].time, 25_000_000_000);
}

/// Issue 27, item C: datasets declaring 10^12 rows in storage hdf5-pure reads (gzip,
/// big-endian) are read as far as their chunks were written, or refused; never row by row to
/// the declared length (`hang.h5` ran forever).
#[test]
fn declared_rows_past_the_chunks_written_are_not_read() {
    let storage = |findings: &Findings| -> Vec<String> {
        let f = findings
            .list()
            .iter()
            .filter(|f| f.code == "ICARUS_H5_STORAGE");
        f.map(|f| format!("{} {}", f.severity, f.message)).collect()
    };
    for name in ["hang.h5", "hang-fixed-array.h5"] {
        let mut r = IcarusH5Reader::open(&fixture(&format!("hostile/{name}")), lenient()).unwrap();
        // Taken a bounded number at a time: the broken reader never ended.
        assert_eq!(r.by_ref().take(1000).count(), 0, "{name}");
        assert!(r.next().is_none(), "{name}");
        let never = |d: &str| {
            format!("warning {d} declares 1000000000000 rows but none of its chunks was written: its rows would all read as the fill value and none is read")
        };
        assert_eq!(
            storage(r.findings()[0].1),
            [never("/time"), never("/signals/A.x")],
            "{name}"
        );
    }
    // 250 rows written in gzip chunks of 100: three chunks, whose last 50 rows are its fill.
    let (_, records, findings) = read(&fixture("hostile/gzip-tail.h5"), lenient());
    assert_eq!(records.len(), 300);
    assert_eq!((float(&records[0]), float(&records[249])), (0.01, 2.5));
    assert_eq!((records[249].time, records[250].time), (2_500_000_000, 0));
    let tail = |d: &str| {
        format!("warning {d} declares 1000000000000 rows but its last chunk written ends at row 300: the 999999999700 rows after it were never written (they would read as the fill value) and are not read")
    };
    assert_eq!(storage(&findings), [tail("/time"), tail("/signals/A.x")]);
    // Storage that cannot be bounded by what the file holds is refused.
    for (name, why) in [
        ("huge-chunk.h5", "its chunks of 16777216 rows (134217728 bytes) are larger than simrec decodes (67108864 bytes)"),
        ("big-endian-contiguous.h5", "its storage was never written (no address)"),
        ("big-endian-chunked.h5", "it claims 1000000000000 rows (8000000000000 bytes) in a file of 3408 bytes"),
    ] {
        let (_, records, findings) = read(&fixture(&format!("hostile/{name}")), lenient());
        assert!(records.is_empty(), "{name}");
        assert_eq!(
            storage(&findings),
            [format!("error /time: {why}"), format!("error /signals/A.x: {why}: skipped")],
            "{name}"
        );
    }
}

// ----- validation vectors built with hdf5-pure -----

fn column(b: &mut FileBuilder, name: &str, data: &[f64]) {
    b.create_dataset(name)
        .with_f64_data(data)
        .with_maxshape(&[MaxExtent::Unlimited])
        .with_chunks(&[1000]);
}

fn write_temp(b: FileBuilder) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.h5");
    b.write(&path).unwrap();
    (dir, path)
}

/// A file with `/time` = `time` and one double signal `A.x` = `x`, and what else `extra` adds.
fn vector(
    time: &[f64],
    x: &[f64],
    extra: impl FnOnce(&mut FileBuilder),
) -> (tempfile::TempDir, PathBuf) {
    let mut b = FileBuilder::new();
    column(&mut b, "time", time);
    let mut g = b.create_group("signals");
    g.create_dataset("A.x")
        .with_f64_data(x)
        .with_maxshape(&[MaxExtent::Unlimited])
        .with_chunks(&[1000]);
    b.add_group(g.finish());
    extra(&mut b);
    write_temp(b)
}

fn validate(path: &Path) -> Vec<(Severity, &'static str, String)> {
    let options = ReadOptions {
        deep: true,
        ..lenient()
    };
    match IcarusH5Reader::open(path, options) {
        Ok(mut r) => {
            for rec in r.by_ref() {
                rec.unwrap();
            }
            r.findings()[0]
                .1
                .list()
                .iter()
                .filter(|f| f.code != "ICARUS_H5_NO_EPOCH" && f.code != "ICARUS_H5_SCHEMA")
                .map(|f| (f.severity, f.code, f.message.clone()))
                .collect()
        }
        Err(ReadError::Invalid { finding, .. }) => {
            vec![(finding.severity, finding.code, finding.message.clone())]
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn time_rules_equal_is_a_warning_backwards_and_nan_errors() {
    let (_d, p) = vector(&[0.1, 0.2, 0.2, 0.15, f64::NAN], &[1.0; 5], |_| {});
    let found = validate(&p);
    assert_eq!(
        found,
        [
            (
                Severity::Warning,
                "ICARUS_H5_TIME",
                "frame 2: the time 0.2 s repeats the previous frame's".to_string()
            ),
            (
                Severity::Error,
                "ICARUS_H5_TIME",
                "frame 3: the time goes back from 0.2 s to 0.15 s".to_string()
            ),
            (
                Severity::Error,
                "ICARUS_H5_TIME",
                "frame 4: the time is NaN, not a finite number of seconds".to_string()
            ),
        ]
    );
    // Strict reading stops at the first error, after the records before it.
    let mut r = IcarusH5Reader::open(&p, ReadOptions::default()).unwrap();
    let got: Vec<Result<Record, ReadError>> = r.by_ref().collect();
    assert_eq!(got.len(), 4);
    assert!(got[..3].iter().all(Result::is_ok));
    assert!(
        matches!(&got[3], Err(ReadError::Invalid { finding, .. }) if finding.record == Some(3))
    );
}

#[test]
fn structural_rules() {
    // No /time.
    let mut b = FileBuilder::new();
    let mut g = b.create_group("signals");
    g.create_dataset("A.x").with_f64_data(&[1.0]);
    b.add_group(g.finish());
    let (_d, p) = write_temp(b);
    assert_eq!(validate(&p)[0].1, "ICARUS_H5_NO_TIME");

    // /time of the wrong type.
    let mut b = FileBuilder::new();
    b.create_dataset("time").with_i32_data(&[1, 2]);
    let (_d2, p) = write_temp(b);
    let found = validate(&p);
    assert_eq!(found[0].1, "ICARUS_H5_NO_TIME");
    assert_eq!(
        found[0].2,
        "/time is not a 1-D float64 dataset (type int32, shape [2])"
    );
    assert_eq!(found[1].1, "ICARUS_H5_NO_SIGNALS");

    // Datasets of the wrong type or shape are skipped with an error; lengths are compared.
    let (_d3, p) = vector(&[0.1, 0.2], &[1.0, 2.0], |b| {
        let mut g = b.create_group("more");
        g.create_dataset("x").with_f64_data(&[0.0]);
        b.add_group(g.finish());
    });
    assert_eq!(validate(&p), []);
    let mut b = FileBuilder::new();
    column(&mut b, "time", &[0.1, 0.2]);
    let mut g = b.create_group("signals");
    g.create_dataset("A.u8").with_u8_data(&[1, 2]);
    g.create_dataset("A.grid")
        .with_f64_data(&[1.0; 4])
        .with_shape(&[2, 2]);
    g.create_dataset("A.long").with_f64_data(&[1.0, 2.0, 3.0]);
    g.create_dataset("A.ok").with_i64_data(&[5, 6]);
    b.add_group(g.finish());
    let (_d4, p) = write_temp(b);
    let found = validate(&p);
    let got: Vec<(&str, &str)> = found.iter().map(|(_, c, m)| (*c, m.as_str())).collect();
    assert_eq!(
        got,
        [
            ("ICARUS_H5_DTYPE", "/signals/A.grid is not a 1-D float64, float32, int32 or int64 dataset (type float64, shape [2, 2]): skipped"),
            ("ICARUS_H5_DTYPE", "/signals/A.u8 is not a 1-D float64, float32, int32 or int64 dataset (type uint8, shape [2]): skipped"),
            ("ICARUS_H5_LENGTH", "/signals/A.long has 3 rows, /time has 2 (its extra rows have no time); 2 frames are read"),
        ]
    );

    // Not HDF5 at all.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.h5");
    std::fs::write(&p, b"time,a\n0.1,1\n").unwrap();
    assert_eq!(validate(&p)[0].1, "ICARUS_H5_NOT_HDF5");
}

/// Issue 27, item F: the signal datasets are opened in one walk of `/signals` and found in
/// the schema by name, not searched for one by one (20,000 took over 60 s). Order, units and
/// lifecycles still come from the schema (here listed in reverse, one name twice: the first
/// entry counts), and a dataset it does not list comes after, by name.
#[test]
fn a_thousand_datasets_are_read_in_schema_order() {
    let n = 1000;
    let names: Vec<String> = (0..n).map(|i| format!("W.C{}.s{i:04}", i % 7)).collect();
    let mut listed: Vec<String> = names.iter().rev().skip(1).map(|name| {
        format!(r#"{{"name":"{name}","type":"double","lifecycle":"dynamic","offset":0,"unit":"u-{name}"}}"#)
    }).collect();
    listed.push(format!(
        r#"{{"name":"{}","type":"double","lifecycle":"static","offset":0,"unit":"twice"}}"#,
        names[n - 2]
    ));
    let text = format!(
        r#"{{"signals":[{}],"frame_size_bytes":8}}"#,
        listed.join(",")
    );
    let mut b = FileBuilder::new();
    column(&mut b, "time", &[0.5, 1.0]);
    let mut g = b.create_group("signals");
    for (i, name) in names.iter().enumerate() {
        g.create_dataset(name)
            .with_f64_data(&[i as f64, -(i as f64)])
            .with_chunks(&[1000])
            .with_maxshape(&[MaxExtent::Unlimited]);
    }
    b.add_group(g.finish());
    let mut m = b.create_group("metadata");
    m.set_attr("schema", AttrValue::VarLenString(text));
    b.add_group(m.finish());
    let (_d, p) = write_temp(b);
    let (h, records, _) = read(&p, lenient());
    let order: Vec<&str> = h.channels.iter().map(|c| c.name.as_str()).collect();
    let mut want: Vec<&str> = names[..n - 1].iter().rev().map(String::as_str).collect();
    want.push(&names[n - 1]);
    assert_eq!(order, want);
    let field = |c: usize| &h.channels[c].fields[0];
    assert_eq!(field(0).unit.as_deref(), Some("u-W.C4.s0998"));
    assert!(!field(0).is_static);
    assert_eq!(field(1).unit.as_deref(), Some("u-W.C3.s0997"));
    assert_eq!(field(n - 1).unit, None);
    assert_eq!(records.len(), 2 * n);
    assert_eq!((float(&records[0]), float(&records[n])), (998.0, -998.0));
}

#[test]
fn schema_rules() {
    let schema = |text: &'static str| {
        move |b: &mut FileBuilder| {
            let mut m = b.create_group("metadata");
            m.set_attr("schema", AttrValue::VarLenString(text.into()));
            b.add_group(m.finish());
        }
    };
    let (_d, p) = vector(&[0.1], &[1.0], schema("not json {"));
    let mut r = IcarusH5Reader::open(&p, lenient()).unwrap();
    r.by_ref().for_each(drop);
    let f = &r.findings()[0].1;
    assert_eq!(f.total("ICARUS_H5_SCHEMA"), 1);
    assert_eq!(r.header().metadata["schema"], "unparsable");

    let text = r#"{"signals":[{"name":"A.x","type":"int32","lifecycle":"static","offset":0,"unit":"s"},{"name":"A.gone","type":"double","lifecycle":"dynamic","offset":8}],"frame_size_bytes":16}"#;
    let (_d, p) = vector(&[0.1], &[1.0], schema(text));
    let found = validate(&p);
    assert_eq!(
        found,
        [
            (Severity::Warning, "ICARUS_H5_SCHEMA_MISMATCH", "the schema gives \"A.x\" the type int32, its dataset is float64 (the dataset's type is used)".to_string()),
            (Severity::Warning, "ICARUS_H5_SCHEMA_MISMATCH", "the schema lists \"A.gone\", which /signals does not have".to_string()),
        ]
    );
    // Lifecycle and unit from the schema.
    let r = IcarusH5Reader::open(&p, lenient()).unwrap();
    let spec = &r.header().channels[0].fields[0];
    assert_eq!((spec.is_static, spec.unit.as_deref()), (true, Some("s")));
}

#[test]
fn a_length_past_the_end_of_the_file_is_an_error_not_an_allocation() {
    // small.h5 (h5py: version 1 object headers, no checksums) with the first dataspace of
    // (3, unlimited) made to claim 2^40 rows.
    let mut bytes = std::fs::read(fixture("small.h5")).unwrap();
    let pattern: Vec<u8> = 3u64
        .to_le_bytes()
        .into_iter()
        .chain(u64::MAX.to_le_bytes())
        .collect();
    let at = bytes
        .windows(16)
        .position(|w| w == pattern.as_slice())
        .expect("a dataspace (3, unlimited)");
    bytes[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let mut r = IcarusH5Reader::from_bytes(
        Path::new("small.h5"),
        simrec::formats::icarus::hdf5::Bytes::from_vec(bytes),
        lenient(),
    )
    .unwrap();
    r.by_ref().for_each(|x| drop(x.unwrap()));
    let storage: Vec<&str> = r.findings()[0]
        .1
        .list()
        .iter()
        .filter(|f| f.code == "ICARUS_H5_STORAGE")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(storage.len(), 1, "{storage:?}");
    assert!(
        storage[0].contains(
            "it claims 1099511627776 rows (8796093022208 bytes) in a file of 35408 bytes"
        ),
        "{}",
        storage[0]
    );
}

// ----- the writer -----

fn write(header: &Header, records: &[Record]) -> (tempfile::TempDir, PathBuf, WriteReport) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.h5");
    let mut outputs = Outputs::new(false);
    let mut sink = IcarusHdf5.create(&path, header, &mut outputs).unwrap();
    for r in records {
        sink.write(r).unwrap();
    }
    let report = sink.finish().unwrap();
    outputs.commit().unwrap();
    (dir, path, report)
}

#[test]
fn hdf5_to_hdf5_keeps_every_value_and_time_bit_for_bit() {
    for name in ["vulcan.h5", "unescaped.h5", "noschema.h5"] {
        let (h, records, _) = read(&fixture(name), lenient());
        let (_d, out, report) = write(&h, &records);
        assert!(report.loss.is_empty(), "{name}: {:?}", report.loss);
        assert_eq!(report.records, records.len() as u64);
        let (h2, back, findings) = read(&out, lenient());
        // float32 is written as float64 (spec §B5); the rest of the declaration is kept.
        let mut widened = h.channels.clone();
        for c in &mut widened {
            if c.fields[0].dtype == Some(DType::F32) {
                c.fields[0].dtype = Some(DType::F64);
            }
        }
        assert_eq!(h2.channels, widened, "{name}");
        assert_eq!(back.len(), records.len());
        for (a, b) in records.iter().zip(&back) {
            assert_eq!(
                (a.time, a.channel, a.frame, &a.entity),
                (b.time, b.channel, b.frame, &b.entity)
            );
            assert_eq!(
                a.exact_seconds.map(f64::to_bits),
                b.exact_seconds.map(f64::to_bits),
                "{name}: the f64 time"
            );
            match (&a.values[0].1, &b.values[0].1) {
                (Value::Float(x), Value::Float(y)) => assert_eq!(x.to_bits(), y.to_bits()),
                // float32 is written as float64 (widened; spec §B5).
                (Value::F32(x), Value::Float(y)) => {
                    assert_eq!(f64::from(*x).to_bits(), y.to_bits())
                }
                (x, y) => assert_eq!(x, y),
            }
        }
        assert_eq!(h2.metadata["schema"], "strict");
        assert!(
            findings.list().iter().all(|f| f.severity == Severity::Info),
            "{name}: {:?}",
            findings.list()
        );
    }
}

#[test]
fn written_files_have_the_vulcan_layout() {
    let (h, records, _) = read(&fixture("vulcan.h5"), lenient());
    let (_d, out, _) = write(&h, &records);
    let f = hdf5_pure::File::open(&out).unwrap();
    for name in [
        "time",
        "signals/Rocket.Clock.ticks",
        "signals/Rocket.Engine.ignited",
    ] {
        let d = f.dataset(name).unwrap();
        assert_eq!(d.shape().unwrap(), [2500]);
        assert_eq!(d.chunk_shape().unwrap(), Some(vec![1000]));
        assert_eq!(d.maxshape().unwrap(), Some(vec![MaxExtent::Unlimited]));
        assert_eq!(d.filters(), Vec::<u16>::new());
    }
    let ignited = f.dataset("signals/Rocket.Engine.ignited").unwrap();
    assert_eq!(ignited.dtype().unwrap(), hdf5_pure::DType::I32);
    assert_eq!(
        ignited.attrs().unwrap()["semantic"],
        AttrValue::VarLenString("boolean".into())
    );
    let attrs = f.group("metadata").unwrap().attrs().unwrap();
    let AttrValue::VarLenString(schema) = &attrs["schema"] else {
        panic!("{:?}", attrs["schema"])
    };
    let json: Json = serde_json::from_str(schema).unwrap();
    assert_eq!(json["frame_size_bytes"], 64);
    assert_eq!(json["signals"][7]["name"], "Rocket.Mass.dry");
    assert_eq!(json["signals"][7]["offset"], 56);
    assert_eq!(json["signals"][7]["lifecycle"], "static");
    assert_eq!(json["signals"][4]["semantic"], "boolean");
    let AttrValue::VarLenString(created) = &attrs["created_at"] else {
        panic!()
    };
    assert_eq!(created.len(), 20);
    assert!(
        created.ends_with('Z') && created.as_bytes()[10] == b'T',
        "{created}"
    );
}

/// A header as an Icarus-typed source declares it (spec §A10): one channel per signal.
fn icarus_header() -> Header {
    let mut h = Header::new("test", "1");
    let mut add =
        |name: &str, dtype: DType, shape: &[usize], unit: Option<&str>, is_static: bool| {
            let (_, field) = name.rsplit_once('.').unwrap();
            let mut c = Channel::new(name, ChannelKind::Signals, Composition::SampleHold);
            let mut spec = FieldSpec::typed(field, dtype, shape);
            spec.unit = unit.map(str::to_string);
            spec.is_static = is_static;
            c.fields.push(spec);
            h.add_channel(c);
        };
    add("Nav.position", DType::F64, &[3], Some("m"), false);
    add("Nav.q", DType::F32, &[4], None, false);
    add("Body.inertia", DType::F64, &[3, 3], Some("kg*m^2"), true);
    add("Engine.on", DType::Bool, &[], None, false);
    add("Mass.dry", DType::F32, &[], Some("kg"), true);
    add("Clock.ticks", DType::I64, &[], None, false);
    h
}

fn rec(time: i64, channel: u32, field: &str, value: Value) -> Record {
    let mut r = Record::new(time, channel);
    r.values.push((field.into(), value));
    r
}

fn array(data: ArrayData, shape: &[usize]) -> Value {
    Value::Array(Array::with_shape(data, shape.to_vec()).unwrap())
}

#[test]
fn composites_expand_floats_widen_bools_become_int32_and_statics_repeat() {
    let h = icarus_header();
    let m: Vec<f64> = (0..9).map(f64::from).collect(); // row-major: (r, c) = 3r + c
    let mut records = Vec::new();
    for (i, t) in [10_000_000i64, 20_000_000].into_iter().enumerate() {
        let fi = i as f64;
        records.push(rec(
            t,
            0,
            "position",
            array(ArrayData::F64(vec![1.0 + fi, 2.0, 3.0]), &[3]),
        ));
        records.push(rec(
            t,
            1,
            "q",
            array(ArrayData::F32(vec![1.0, 0.0, 0.5, 0.25]), &[4]),
        ));
        if i == 0 {
            records.push(rec(
                t,
                2,
                "inertia",
                array(ArrayData::F64(m.clone()), &[3, 3]),
            ));
            records.push(rec(t, 4, "dry", Value::F32(1250.5)));
        }
        records.push(rec(t, 3, "on", Value::Bool(i == 0)));
        records.push(rec(t, 5, "ticks", Value::Int(i64::MAX - i as i64)));
    }
    let (_d, out, report) = write(&h, &records);
    assert!(
        report.loss.is_empty(),
        "{:?}",
        report.loss.entries().collect::<Vec<_>>()
    );
    let widened: Vec<(&str, &str, &str, u64)> = report.loss.widenings().collect();
    assert_eq!(
        widened,
        [
            (
                "Engine.on",
                "on",
                "bool stored as int32 with semantic \"boolean\"",
                2
            ),
            ("Mass.dry", "dry", "float stored as float64", 1),
            ("Nav.q", "q", "float stored as float64", 2),
        ]
    );
    let f = hdf5_pure::File::open(&out).unwrap();
    let g = f.group("signals").unwrap();
    let mut names = g.datasets().unwrap();
    names.sort();
    assert_eq!(names.len(), 3 + 4 + 9 + 1 + 1 + 1);
    let f64s = |n: &str| g.dataset(n).unwrap().read_f64().unwrap();
    assert_eq!(f64s("Nav.position.x"), [1.0, 2.0]);
    assert_eq!(f64s("Nav.q.w"), [1.0, 1.0]);
    assert_eq!(f64s("Nav.q.y"), [0.5, 0.5]);
    // Column-major storage: m10 is element (1, 0) = 3.
    assert_eq!(f64s("Body.inertia.m10"), [3.0, 3.0]);
    assert_eq!(f64s("Body.inertia.m01"), [1.0, 1.0]);
    assert_eq!(f64s("Body.inertia.m22"), [8.0, 8.0]);
    // Static signals repeated every frame.
    assert_eq!(f64s("Mass.dry"), [1250.5, 1250.5]);
    let on = g.dataset("Engine.on").unwrap();
    assert_eq!(on.dtype().unwrap(), hdf5_pure::DType::I32);
    assert_eq!(on.read_i32().unwrap(), [1, 0]);
    assert_eq!(
        on.attrs().unwrap()["semantic"],
        AttrValue::VarLenString("boolean".into())
    );
    assert_eq!(
        g.dataset("Clock.ticks").unwrap().read_i64().unwrap(),
        [i64::MAX, i64::MAX - 1]
    );
    assert_eq!(
        g.dataset("Body.inertia.m00").unwrap().attrs().unwrap()["unit"],
        AttrValue::VarLenString("kg*m^2".into())
    );
    assert_eq!(f.dataset("time").unwrap().read_f64().unwrap(), [0.01, 0.02]);
    let AttrValue::VarLenString(schema) = &f.group("metadata").unwrap().attrs().unwrap()["schema"]
    else {
        panic!()
    };
    let json: Json = serde_json::from_str(schema).unwrap();
    let listed: Vec<(&str, i64, &str, &str)> = json["signals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap(),
                s["offset"].as_i64().unwrap(),
                s["type"].as_str().unwrap(),
                s["lifecycle"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(listed[0], ("Nav.position.x", 0, "double", "dynamic"));
    assert_eq!(listed[3], ("Nav.q.w", 24, "double", "dynamic"));
    assert_eq!(listed[8], ("Body.inertia.m10", 64, "double", "static"));
    assert_eq!(listed[16], ("Engine.on", 128, "int32", "dynamic"));
    assert_eq!(listed[18], ("Clock.ticks", 144, "int64", "dynamic"));
    assert_eq!(json["frame_size_bytes"], 152);
}

#[test]
fn what_cannot_be_written_is_counted_as_loss() {
    let mut h = icarus_header();
    // A field with a type the profile lacks, and one declared without a type.
    let mut c = Channel::new("Log", ChannelKind::Signals, Composition::SampleHold);
    c.fields.push(FieldSpec::typed("text", DType::Str, &[]));
    c.fields.push(FieldSpec::new("later"));
    h.add_channel(c);
    let records = vec![
        // Frame 0 has no Nav.q: NaN before its first value.
        rec(
            1_000,
            0,
            "position",
            array(ArrayData::F64(vec![1.0, 2.0, 3.0]), &[3]),
        ),
        rec(1_000, 6, "text", Value::Str("hello".into())),
        rec(
            2_000,
            1,
            "q",
            array(ArrayData::F32(vec![1.0, 0.0, 0.0, 0.0]), &[4]),
        ),
        // Wrong shape, and a value that does not fit int64 declared as bool.
        rec(
            2_000,
            0,
            "position",
            array(ArrayData::F64(vec![1.0, 2.0]), &[2]),
        ),
        rec(2_000, 3, "on", Value::Int(7)),
        // A second entity on one channel.
        {
            let mut r = rec(2_000, 5, "ticks", Value::Int(1));
            r.entity = Some(Entity::Name("Clock".into()));
            r
        },
        {
            let mut r = rec(2_000, 5, "ticks", Value::Int(2));
            r.entity = Some(Entity::Name("Other".into()));
            r
        },
        rec(2_000, 9, "x", Value::Float(1.0)),
    ];
    let (_d, out, report) = write(&h, &records);
    let lost: Vec<(&str, &str, &str, u64)> = report.loss.entries().collect();
    assert_eq!(
        lost,
        [
            ("Body.inertia", "inertia", "frames before the signal's first value: written as NaN (floats) or 0 (integers)", 2),
            ("Clock.ticks", "*", "records of a second entity: a Vulcan signal holds one value per frame (the first entity's are written)", 1),
            ("Clock.ticks", "ticks", "frames before the signal's first value: written as NaN (floats) or 0 (integers)", 1),
            ("Engine.on", "on", "frames before the signal's first value: written as NaN (floats) or 0 (integers)", 2),
            ("Engine.on", "on", "value is not a bool (the previous value was written)", 1),
            ("Log", "text", "type not in the Icarus profile (double, float, int32, int64, bool, Vec3, Quat, Mat3): no dataset for it", 1),
            ("Mass.dry", "dry", "frames before the signal's first value: written as NaN (floats) or 0 (integers)", 2),
            ("Nav.position", "position", "value is not a Vec3<double> (the previous value was written)", 1),
            ("Nav.q", "q", "frames before the signal's first value: written as NaN (floats) or 0 (integers)", 1),
            ("channel 9", "*", "channel announced after the file's layout was written", 1),
        ]
    );
    let f = hdf5_pure::File::open(&out).unwrap();
    let g = f.group("signals").unwrap();
    let w = g.dataset("Nav.q.w").unwrap().read_f64().unwrap();
    assert!(w[0].is_nan() && w[1] == 1.0);
    // The previous value holds where a value did not fit.
    assert_eq!(
        g.dataset("Nav.position.y").unwrap().read_f64().unwrap(),
        [2.0, 2.0]
    );
    assert_eq!(
        g.dataset("Clock.ticks").unwrap().read_i64().unwrap(),
        [0, 1]
    );
}

#[test]
fn zero_frames_write_empty_datasets() {
    let (_d, out, report) = write(&icarus_header(), &[]);
    assert_eq!(report.records, 0);
    let (h, records, findings) = read(&out, lenient());
    assert_eq!(records.len(), 0);
    assert_eq!(h.channels.len(), 3 + 4 + 9 + 1 + 1 + 1);
    assert_eq!(codes(&findings), [(Severity::Info, "ICARUS_H5_NO_EPOCH")]);
}

/// A scalar signal channel named by its last segment, as an Icarus-typed source declares it.
fn scalar_channel(name: &str, dtype: DType) -> Channel {
    let (_, field) = name.rsplit_once('.').unwrap();
    let mut c = Channel::new(name, ChannelKind::Signals, Composition::SampleHold);
    c.fields.push(FieldSpec::typed(field, dtype, &[]));
    c
}

/// The root's members and the schema's signal names of a written file.
fn root_and_schema(f: &hdf5_pure::File) -> (Vec<String>, Vec<String>) {
    let root = f.root();
    let mut members = root.datasets().unwrap();
    members.extend(root.groups().unwrap());
    members.sort();
    let attrs = f.group("metadata").unwrap().attrs().unwrap();
    let AttrValue::VarLenString(schema) = &attrs["schema"] else {
        panic!("{:?}", attrs["schema"])
    };
    let json: Json = serde_json::from_str(schema).unwrap();
    let names = json["signals"].as_array().unwrap().iter();
    (
        members,
        names
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect(),
    )
}

/// Issue 27 (F): thousands of datasets are each written with their own values (the writer
/// reaches them through a reference it deletes at the end; the time it takes is in
/// docs/performance.md).
#[test]
fn a_wide_file_holds_every_signal_with_its_own_values() {
    const SIGNALS: usize = 3000;
    let mut h = Header::new("test", "1");
    let name = |i: usize| format!("Wide.C{}.s{}", i / 100, i % 100);
    for i in 0..SIGNALS {
        let dtype = if i % 3 == 0 { DType::I64 } else { DType::F64 };
        h.add_channel(scalar_channel(&name(i), dtype));
    }
    let mut records = Vec::new();
    for frame in 0..3i64 {
        for i in 0..SIGNALS {
            let field = format!("s{}", i % 100);
            let v = frame * 10_000 + i as i64;
            let value = if i % 3 == 0 {
                Value::Int(v)
            } else {
                Value::Float(v as f64 + 0.5)
            };
            records.push(rec((frame + 1) * 1_000_000, i as u32, &field, value));
        }
    }
    let (_d, out, report) = write(&h, &records);
    assert!(report.loss.is_empty(), "{:?}", report.loss);
    assert_eq!(report.records, records.len() as u64);
    let f = hdf5_pure::File::open(&out).unwrap();
    let (members, schema) = root_and_schema(&f);
    assert_eq!(members, ["metadata", "signals", "time"]);
    assert_eq!(schema, (0..SIGNALS).map(name).collect::<Vec<_>>());
    assert_eq!(
        f.dataset("time").unwrap().read_f64().unwrap(),
        [0.001, 0.002, 0.003]
    );
    let signals = f.group("signals").unwrap();
    let written: std::collections::HashMap<String, hdf5_pure::Dataset> =
        signals.iter_datasets().unwrap().collect();
    assert_eq!(written.len(), SIGNALS);
    for i in 0..SIGNALS {
        let d = &written[&name(i)];
        let expected = |frame: i64| frame * 10_000 + i as i64;
        if i % 3 == 0 {
            assert_eq!(
                d.read_i64().unwrap(),
                [0, 1, 2].map(expected),
                "{}",
                name(i)
            );
        } else {
            let back = d.read_f64().unwrap();
            assert_eq!(
                back,
                [0, 1, 2].map(|f| expected(f) as f64 + 0.5),
                "{}",
                name(i)
            );
        }
    }
}

/// Channels a source announces while it is read: one before any frame is in the file (the
/// skeleton is written again), two after frames were appended (their datasets are committed
/// and the file reopened, once per flush). Every dataset keeps appending across both.
#[test]
fn channels_added_before_and_after_frames_are_written_hold_their_values() {
    let mut h = Header::new("test", "1");
    h.add_channel(scalar_channel("A.x", DType::F64));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("late.h5");
    let mut outputs = Outputs::new(false);
    let mut sink = IcarusHdf5.create(&path, &h, &mut outputs).unwrap();
    let ms = |i: i64| i * 1_000_000;
    sink.add_channel(&scalar_channel("B.y", DType::F64))
        .unwrap();
    // 1,000 frames are one flush of a few columns.
    for i in 0..2500i64 {
        if i == 1500 {
            sink.add_channel(&scalar_channel("C.z", DType::I64))
                .unwrap();
        }
        if i == 2200 {
            sink.add_channel(&scalar_channel("D.w", DType::F64))
                .unwrap();
        }
        sink.write(&rec(ms(i), 0, "x", Value::Float(i as f64)))
            .unwrap();
        sink.write(&rec(ms(i), 1, "y", Value::Float(-(i as f64))))
            .unwrap();
        if i >= 1500 {
            sink.write(&rec(ms(i), 2, "z", Value::Int(i))).unwrap();
        }
        if i >= 2200 {
            sink.write(&rec(ms(i), 3, "w", Value::Float(i as f64 * 0.5)))
                .unwrap();
        }
    }
    let report = sink.finish().unwrap();
    outputs.commit().unwrap();
    let lost: Vec<(&str, &str, &str, u64)> = report.loss.entries().collect();
    let before = "frames before the signal's first value: written as NaN (floats) or 0 (integers)";
    assert_eq!(
        lost,
        [("C.z", "z", before, 1500), ("D.w", "w", before, 2200)]
    );

    let f = hdf5_pure::File::open(&path).unwrap();
    let (members, schema) = root_and_schema(&f);
    assert_eq!(members, ["metadata", "signals", "time"]);
    assert_eq!(schema, ["A.x", "B.y", "C.z", "D.w"]);
    let read = |name: &str| f.dataset(&format!("signals/{name}")).unwrap();
    let frames: Vec<i64> = (0..2500).collect();
    let time = f.dataset("time").unwrap().read_f64().unwrap();
    assert_eq!(
        time,
        frames
            .iter()
            .map(|&i| i as f64 / 1000.0)
            .collect::<Vec<_>>()
    );
    let x = read("A.x").read_f64().unwrap();
    assert_eq!(x, frames.iter().map(|&i| i as f64).collect::<Vec<_>>());
    let y = read("B.y").read_f64().unwrap();
    assert_eq!(y, frames.iter().map(|&i| -(i as f64)).collect::<Vec<_>>());
    let z = read("C.z").read_i64().unwrap();
    assert_eq!(
        z,
        frames
            .iter()
            .map(|&i| if i < 1500 { 0 } else { i })
            .collect::<Vec<_>>()
    );
    let w = read("D.w").read_f64().unwrap();
    assert_eq!(w.len(), 2500);
    assert!(w[..2200].iter().all(|v| v.is_nan()));
    assert_eq!(
        w[2200..],
        frames[2200..]
            .iter()
            .map(|&i| i as f64 * 0.5)
            .collect::<Vec<_>>()
    );
}

/// `Source::select_channels` reads only the datasets asked for; `check_only` (what `validate`
/// asks) gives one record per frame and the same findings as a read of every value.
#[test]
fn a_channel_selection_and_a_check_only_read() {
    let path = fixture("vulcan.h5");
    let (header, all, _) = read(&path, ReadOptions::default());
    assert_eq!(header.channels.len(), 8);
    let mut r = IcarusH5Reader::open(&path, ReadOptions::default()).unwrap();
    let mut wanted = [false; 8];
    wanted[1] = true;
    r.select_channels(&wanted);
    let got: Vec<Record> = r.map(Result::unwrap).collect();
    let want: Vec<(i64, Option<i64>, f64)> = all
        .iter()
        .filter(|r| r.channel == 1)
        .map(|r| (r.time, r.frame, float(r)))
        .collect();
    assert_eq!(want.len(), 2500);
    assert_eq!(
        got.iter()
            .map(|r| (r.time, r.frame, float(r)))
            .collect::<Vec<_>>(),
        want
    );

    // A second signal with a NaN at frame 1 and a time that goes back at frame 2.
    let mut b = FileBuilder::new();
    column(&mut b, "time", &[0.0, 0.1, 0.05, 0.3]);
    let mut g = b.create_group("signals");
    for (name, data) in [
        ("A.x", [1.0, 2.0, 3.0, 4.0]),
        ("B.y", [0.0, f64::NAN, 0.0, 0.0]),
    ] {
        g.create_dataset(name)
            .with_f64_data(&data)
            .with_maxshape(&[MaxExtent::Unlimited])
            .with_chunks(&[1000]);
    }
    b.add_group(g.finish());
    let (_dir, p) = write_temp(b);
    let deep = ReadOptions {
        deep: true,
        ..lenient()
    };
    let (_, every, want) = read(&p, deep);
    let (_, one_per_frame, found) = read(
        &p,
        ReadOptions {
            check_only: true,
            ..deep
        },
    );
    assert_eq!(every.len(), 8);
    assert_eq!(one_per_frame.len(), 4);
    assert_eq!(found.list(), want.list());
    let codes = codes(&found);
    assert!(
        codes.iter().any(|(_, c)| *c == "ICARUS_H5_NONFINITE"),
        "{codes:?}"
    );
    assert!(
        codes.iter().any(|(s, _)| *s == Severity::Error),
        "{codes:?}"
    );
}

/// A time window is found by binary search on `/time` and only its rows are read (spec
/// §B4): the records are exactly the full read's in `[10 s, 12 s)`, rebased when asked.
#[test]
fn a_time_window_reads_the_rows_of_its_frames() {
    use simrec::model::TimeSpec;
    let path = fixture("vulcan.h5");
    let (_, all, _) = read(&path, ReadOptions::default());
    const S: i64 = 1_000_000_000;
    let essence = |r: &Record, shift: i64| (r.time - shift, r.channel, r.frame, r.values.clone());
    for rebase in [false, true] {
        let sliced = IcarusH5Reader::open(&path, ReadOptions::default())
            .unwrap()
            .slice(
                Some(TimeSpec::At(10 * S)),
                Some(TimeSpec::At(12 * S)),
                rebase,
            )
            .unwrap();
        let got: Vec<_> = sliced.map(|r| essence(&r.unwrap(), 0)).collect();
        let shift = if rebase { 10 * S } else { 0 };
        let want: Vec<_> = all
            .iter()
            .filter(|r| (10 * S..12 * S).contains(&r.time))
            .map(|r| essence(r, shift))
            .collect();
        // Frames 999..1199 (t = 10.00 .. 11.99 s) of the 8 signals.
        assert_eq!(want.len(), 200 * 8);
        assert_eq!(want[0].2, Some(999));
        assert_eq!(got, want, "rebase {rebase}");
    }
    // A slice that starts mid-file still reads only the signals asked for.
    let mut sliced = IcarusH5Reader::open(&path, ReadOptions::default())
        .unwrap()
        .slice(
            Some(TimeSpec::At(10 * S)),
            Some(TimeSpec::At(12 * S)),
            false,
        )
        .unwrap();
    let mut wanted = [false; 8];
    wanted[3] = true;
    sliced.select_channels(&wanted);
    let got: Vec<_> = sliced.map(|r| essence(&r.unwrap(), 0)).collect();
    let want: Vec<_> = all
        .iter()
        .filter(|r| r.channel == 3 && (10 * S..12 * S).contains(&r.time))
        .map(|r| essence(r, 0))
        .collect();
    assert_eq!(want.len(), 200);
    assert_eq!(got, want);
    // By frame positions, and a start past the end.
    let sliced = IcarusH5Reader::open(&path, ReadOptions::default())
        .unwrap()
        .slice(Some(TimeSpec::Frame(2498)), None, false)
        .unwrap();
    let frames: Vec<_> = sliced.map(|r| r.unwrap().frame).collect();
    assert_eq!(frames, [vec![Some(2498); 8], vec![Some(2499); 8]].concat());
    let past = IcarusH5Reader::open(&path, ReadOptions::default())
        .unwrap()
        .slice(Some(TimeSpec::Frame(2500)), None, false);
    assert!(matches!(past, Err(ReadError::Conflict(_))));
}
