//! 3es in process: same-format round trips in every scheme, hand-built vectors of the
//! spec's tolerances and damage, and the every-byte truncation sweep.

use std::path::Path;

use simrec::formats::output::Outputs;
use simrec::formats::tes::packet::{self, build, control_payload, server_info_payload};
use simrec::formats::tes::{Compression3es, TesReader, TesWriteOptions, TesWriter};
use simrec::formats::{ReadError, Sink, Source};
use simrec::model::{Record, Value};
use simrec::report::Severity;

use crate::util;
use crate::util::lenient;

fn fixture(name: &str) -> Vec<u8> {
    util::any_fixture_bytes(&format!("tes/{name}"))
}

/// Every record and the findings (code, severity, offset) of a lenient read.
type Found = Vec<(&'static str, Severity, Option<u64>)>;

fn read(bytes: Vec<u8>) -> (Vec<Record>, Found) {
    let mut r = TesReader::from_bytes(bytes, Path::new("t.3es"), lenient()).unwrap();
    let records: Vec<Record> = r.by_ref().map(|x| x.unwrap()).collect();
    let findings = r.findings()[0]
        .1
        .list()
        .iter()
        .map(|f| (f.code, f.severity, f.offset))
        .collect();
    (records, findings)
}

fn codes(f: &[(&'static str, Severity, Option<u64>)]) -> Vec<&'static str> {
    f.iter().map(|x| x.0).collect()
}

fn raw(r: &Record) -> &[u8] {
    &r.raw.as_ref().unwrap().bytes
}

/// Writes records through the 3es writer in `scheme` into `dir/name`.
fn write(records: &[Record], header: &simrec::model::Header, scheme: &str, path: &Path) {
    let mut outputs = Outputs::new(true);
    let options = TesWriteOptions {
        compression: Compression3es::parse(scheme).unwrap(),
        repair: false,
    };
    let mut w: Box<dyn Sink> =
        Box::new(TesWriter::create(path, header, &mut outputs, options).unwrap());
    for r in records {
        w.write(r).unwrap();
    }
    let report = w.finish().unwrap();
    assert!(report.loss.is_empty());
    outputs.commit().unwrap();
}

#[test]
fn same_format_convert_keeps_every_message_bit_exact_in_every_scheme() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "small_plain.3es",
        "small_collate.3es",
        "small_compress.3es",
        "small_filegzip.3es",
        "medium_collate.3es",
    ] {
        let mut reader = TesReader::from_bytes(fixture(name), Path::new(name), lenient()).unwrap();
        let header = reader.header().clone();
        let records: Vec<Record> = reader.by_ref().map(|r| r.unwrap()).collect();
        assert!(reader.findings()[0].1.count(Severity::Error) == 0);
        for scheme in ["collated-gzip", "collated", "plain", "file-gzip"] {
            let out = dir.path().join(format!("{name}.{scheme}.3es"));
            write(&records, &header, scheme, &out);
            let (again, findings) = read(std::fs::read(&out).unwrap());
            let want_info = if scheme == "file-gzip" {
                vec!["TES_FILE_GZIP"]
            } else {
                vec![]
            };
            assert_eq!(codes(&findings), want_info, "{name} as {scheme}");
            assert_eq!(again.len(), records.len(), "{name} as {scheme}");
            for (a, b) in records.iter().zip(&again) {
                assert_eq!(raw(a), raw(b), "{name} as {scheme}: a message changed");
                assert_eq!((a.time, a.frame, a.channel), (b.time, b.frame, b.channel));
                assert_eq!(a.values, b.values);
            }
        }
    }
    // The C++ library's own plain and collated files come out byte for byte.
    let out = dir.path().join("small_plain.3es.collated.3es");
    assert_eq!(std::fs::read(out).unwrap(), fixture("small_collate.3es"));
    let out = dir.path().join("small_compress.3es.plain.3es");
    assert_eq!(std::fs::read(out).unwrap(), fixture("small_plain.3es"));
}

#[test]
fn frame_count_is_patched_at_close() {
    let dir = tempfile::tempdir().unwrap();
    let (records, _) = read(fixture("small_plain.3es"));
    // Drop the last 10 frames: the FrameCount must say 40.
    let cut = records.iter().position(|r| r.frame == Some(40)).unwrap();
    let header = TesReader::from_bytes(fixture("small_plain.3es"), Path::new("x"), lenient())
        .unwrap()
        .header()
        .clone();
    let out = dir.path().join("cut.3es");
    write(&records[..cut], &header, "collated-gzip", &out);
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(bytes[66..100], build(2, 3, &control_payload(0, 40, 0))[..]);
    let (_, findings) = read(bytes);
    assert_eq!(codes(&findings), Vec::<&str>::new());
}

/// A capture from packets: ServerInfo, FrameCount(fc), then `body`.
fn capture(fc: u32, body: &[Vec<u8>]) -> Vec<u8> {
    let mut out = build(1, 0, &server_info_payload(1000, 33, 0));
    out.extend(build(2, 3, &control_payload(0, fc, 0)));
    for p in body {
        out.extend_from_slice(p);
    }
    out
}

fn frame(dt: u32) -> Vec<u8> {
    build(2, 1, &control_payload(0, dt, 0))
}

fn sphere_create(id: u32, flags: u16, dp: bool) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&0u16.to_be_bytes());
    p.extend_from_slice(&flags.to_be_bytes());
    p.extend_from_slice(&0u16.to_be_bytes());
    p.extend_from_slice(&0xff0000ffu32.to_be_bytes());
    for v in [1.0f64, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0] {
        if dp {
            p.extend_from_slice(&v.to_be_bytes());
        } else {
            p.extend_from_slice(&(v as f32).to_be_bytes());
        }
    }
    build(64, 1, &p)
}

fn no_crc(mut p: Vec<u8>) -> Vec<u8> {
    p.truncate(p.len() - 2);
    p[15] |= 1;
    p
}

#[test]
fn tolerated_vectors_decode_with_their_notes() {
    // NoCrc packets, a 44-byte ServerInfo, two ServerInfos, an unpatched FrameCount.
    let mut si44 = build(1, 0, &server_info_payload(1000, 33, 0)[..44]);
    assert_eq!(&si44[60..], &[0x28, 0xd9]);
    si44 = si44.clone();
    let mut bytes = si44.clone();
    bytes.extend(build(2, 3, &control_payload(0, 0, 0)));
    bytes.extend(build(1, 0, &server_info_payload(500, 20, 0)));
    bytes.extend(no_crc(sphere_create(7, 0, false)));
    bytes.extend(frame(0));
    bytes.extend(frame(10));
    bytes.extend(frame(0));
    let (records, findings) = read(bytes);
    assert_eq!(
        codes(&findings),
        [
            "TES_SERVER_INFO_SIZE",
            "TES_SECOND_SERVER_INFO",
            "TES_NOCRC_PACKET",
            "TES_FRAME_COUNT_UNPATCHED"
        ]
    );
    assert_eq!(findings[0].1, Severity::Info);
    assert_eq!(findings[1].1, Severity::Warning);
    // Frame times follow the later ServerInfo: 20 × 500 µs, then 10 × 500 µs.
    let times: Vec<i64> = records.iter().map(|r| r.time).collect();
    assert_eq!(times, [0, 0, 0, 0, 0, 10_000_000, 15_000_000]);
    assert_eq!(
        records[3].get("position"),
        Some(&Value::Array(simrec::model::Array::flat(
            simrec::model::ArrayData::F32(vec![1.0, 2.0, 3.0])
        )))
    );

    // Cameras of 52, 54 and 56 bytes, and one of no known size.
    let camera = |len: usize| {
        let mut p = vec![0u8; len];
        p[0] = 255;
        build(5, 0, &p)
    };
    let (records, findings) = read(capture(
        0,
        &[camera(52), camera(54), camera(56), camera(50)],
    ));
    let cams: Vec<_> = findings
        .iter()
        .filter(|f| f.0 == "TES_CAMERA_LAYOUT")
        .map(|f| f.1)
        .collect();
    assert_eq!(
        cams,
        [
            Severity::Info,
            Severity::Info,
            Severity::Info,
            Severity::Warning
        ]
    );
    assert_eq!(records[2].entity, Some(255u32.into()));
    assert!(records[4].get("coordinate_frame").is_some());

    // f64 attributes, and the mid-2020 DoublePrecision = 64 in a 0.3 file.
    let (records, _) = read(capture(0, &[sphere_create(1, 1, true)]));
    assert!(
        matches!(records[2].get("position"), Some(Value::Array(a)) if a.dtype() == simrec::model::DType::F64)
    );
    let mut v03 = sphere_create(2, 64, true);
    v03[7] = 3;
    packet::refresh_crc(&mut v03);
    let (records, findings) = read(capture(0, &[v03]));
    assert!(codes(&findings).contains(&"TES_DOUBLE_PRECISION_64"));
    assert!(codes(&findings).contains(&"TES_VERSION_MIXED"));
    assert!(
        matches!(records[2].get("position"), Some(Value::Array(a)) if a.dtype() == simrec::model::DType::F64)
    );
}

#[test]
fn multishape_without_its_flag_and_packed_floats() {
    // A box create with 2 children appended and no MultiShape flag (tolerance 9).
    let mut create = sphere_create(9, 0, false);
    let mut payload = create[16..create.len() - 2].to_vec();
    payload.extend_from_slice(&2u32.to_be_bytes());
    payload.extend_from_slice(&2u16.to_be_bytes());
    let child = payload[10..54].to_vec();
    payload.extend_from_slice(&child);
    payload.extend_from_slice(&child);
    create = build(65, 1, &payload);
    let (records, findings) = read(capture(0, &[create]));
    assert!(codes(&findings).contains(&"TES_MULTISHAPE_FLAG_MISSING"));
    assert!(!codes(&findings).contains(&"TES_MULTISHAPE_COUNT"));
    assert!(
        matches!(records[2].get("child_positions"), Some(Value::Array(a)) if a.shape == vec![2, 3])
    );

    // A mesh resource whose vertices are PackedFloat16: value = packed × unit + origin.
    let mut mc = Vec::new();
    mc.extend_from_slice(&5u32.to_be_bytes());
    mc.extend_from_slice(&1u32.to_be_bytes());
    mc.extend_from_slice(&0u32.to_be_bytes());
    mc.extend_from_slice(&0u16.to_be_bytes());
    mc.push(0);
    mc.extend_from_slice(&sphere_create(0, 0, false)[26..70]);
    let mut mv = Vec::new();
    mv.extend_from_slice(&5u32.to_be_bytes());
    mv.extend_from_slice(&0u32.to_be_bytes());
    mv.extend_from_slice(&1u16.to_be_bytes());
    mv.push(3);
    mv.push(11);
    mv.extend_from_slice(&0.5f32.to_be_bytes());
    for o in [10.0f32, 20.0, 30.0] {
        mv.extend_from_slice(&o.to_be_bytes());
    }
    for q in [2i16, -4, 0] {
        mv.extend_from_slice(&q.to_be_bytes());
    }
    let (records, findings) = read(capture(0, &[build(4, 2, &mc), build(4, 3, &mv)]));
    assert_eq!(codes(&findings), Vec::<&str>::new());
    assert_eq!(
        records[3].get("data"),
        Some(&Value::Array(
            simrec::model::Array::with_shape(
                simrec::model::ArrayData::F32(vec![11.0, 18.0, 30.0]),
                vec![1, 3]
            )
            .unwrap()
        ))
    );
}

fn gz(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn whole_file_gzip_with_two_members_and_damage() {
    let head = capture(2, &[]);
    let mut bytes = head.clone();
    bytes.extend(gz(&[sphere_create(1, 0, false), frame(0)].concat()));
    bytes.extend(gz(&frame(0)));
    let (records, findings) = read(bytes.clone());
    assert_eq!(records.len(), 5);
    assert_eq!(codes(&findings), ["TES_FILE_GZIP"]);
    assert_eq!(findings[0].2, Some(100));
    // A bad second member: a gzip error, the first member's packets kept.
    let mut bad = bytes.clone();
    let n = bad.len();
    bad[n - 15] ^= 0xff;
    let (records, findings) = read(bad);
    assert!(records.len() >= 4);
    assert!(codes(&findings).contains(&"TES_GZIP_ERROR"), "{findings:?}");
}

#[test]
fn collated_bodies_that_lie_and_nest() {
    let inner = [sphere_create(1, 0, false), frame(0)].concat();
    let collated = |ub: u32, body: &[u8], flags: u16| {
        let mut p = Vec::new();
        p.extend_from_slice(&flags.to_be_bytes());
        p.extend_from_slice(&0u16.to_be_bytes());
        p.extend_from_slice(&ub.to_be_bytes());
        p.extend_from_slice(body);
        build(3, 0, &p)
    };
    let (records, findings) = read(capture(1, &[collated(inner.len() as u32, &gz(&inner), 1)]));
    assert_eq!(records.len(), 4);
    assert_eq!(codes(&findings), Vec::<&str>::new());
    let (_, findings) = read(capture(1, &[collated(inner.len() as u32 + 5, &inner, 0)]));
    assert_eq!(codes(&findings), ["TES_COLLATED_SIZE"]);
    let nested = collated(inner.len() as u32, &inner, 0);
    let (_, findings) = read(capture(0, &[collated(nested.len() as u32, &nested, 0)]));
    assert_eq!(codes(&findings), ["TES_COLLATED_NESTED"]);
    // payload_offset ≠ 0 is an error.
    let mut po = frame(0);
    po[14] = 1;
    let (_, findings) = read(capture(0, &[po, frame(0)]));
    assert_eq!(
        &codes(&findings)[..2],
        ["TES_PAYLOAD_OFFSET", "TES_SKIPPED_BYTES"]
    );
}

/// Every byte-offset truncation of the small captures: a clean finding (or a clean
/// error in strict mode), never a panic, never a hang.
#[test]
fn truncation_sweep_small_captures() {
    for name in [
        "small_plain.3es",
        "small_compress.3es",
        "small_filegzip.3es",
        "small_collate.3es",
    ] {
        let full = fixture(name);
        // Every offset of every capture in release builds. A debug build (about 7 ms a
        // read) takes every offset of the first and last 256 bytes and every 509th between,
        // so `cargo test` stays quick; `cargo test --release --test it formats::tes::reader` (or
        // TES_SWEEP_FULL=1) runs the whole sweep.
        let every = !cfg!(debug_assertions) || std::env::var_os("TES_SWEEP_FULL").is_some();
        let t = std::time::Instant::now();
        for cut in
            (0..full.len()).filter(|c| every || c % 509 == 0 || *c < 256 || full.len() - c < 256)
        {
            let bytes = full[..cut].to_vec();
            for strict in [false, true] {
                let options = util::read_options(!strict, !strict);
                let reader = match TesReader::from_bytes(bytes.clone(), Path::new(name), options) {
                    Ok(r) => r,
                    Err(ReadError::Invalid { finding, .. }) => {
                        assert!(finding.offset.is_some(), "{name} cut {cut}: {finding}");
                        continue;
                    }
                    Err(e) => panic!("{name} cut {cut}: {e}"),
                };
                let mut n = 0;
                for item in reader {
                    match item {
                        Ok(_) => n += 1,
                        Err(ReadError::Invalid { .. }) if strict => break,
                        Err(e) => panic!("{name} cut {cut}: {e}"),
                    }
                }
                assert!(n <= 416, "{name} cut {cut}");
            }
        }
        eprintln!("{name}: {} cuts in {:?}", full.len(), t.elapsed());
    }
}

/// Spec §11.2: a slice replays to the same world state as the original at every kept frame,
/// its FrameCount is patched, and its kept packets are the original's, bit for bit.
#[test]
fn slice_replays_the_same_world_state_at_every_kept_frame() {
    use simrec::formats::tes::world::World;
    use simrec::formats::tes::TesSlice;
    use simrec::model::TimeSpec;
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "small_plain.3es",
        "small_compress.3es",
        "medium_collate.3es",
    ] {
        let src = util::any_fixture("tes").join(name);
        let (original, _) = read(fixture(name));
        for (a, b) in [(0u64, 5u64), (20, 30), (37, 50), (49, 50)] {
            let slice = TesSlice::open(
                &src,
                Some(TimeSpec::Frame(a)),
                Some(TimeSpec::Frame(b)),
                true,
                lenient(),
            )
            .unwrap();
            let header = slice.header().clone();
            let records: Vec<Record> = slice.map(|r| r.unwrap()).collect();
            let out = dir.path().join(format!("{name}.{a}.3es"));
            write(&records, &header, "collated-gzip", &out);
            let bytes = std::fs::read(&out).unwrap();
            let (sliced, findings) = read(bytes.clone());
            assert_eq!(codes(&findings), Vec::<&str>::new(), "{name} {a}..{b}");
            assert_eq!(
                bytes[66..100],
                build(2, 3, &control_payload(0, (b - a) as u32, 0))[..]
            );
            // Fold both and compare at the end of every kept frame.
            let mut w_orig = World::default();
            let mut w_slice = World::default();
            let mut it = sliced.iter().peekable();
            for k in 0..b {
                for r in original.iter().filter(|r| r.frame == Some(k as i64)) {
                    w_orig.apply(raw(r));
                }
                if k < a {
                    continue;
                }
                while let Some(r) = it.next_if(|r| r.frame == Some((k - a) as i64)) {
                    w_slice.apply(raw(r));
                }
                assert_eq!(
                    w_orig.snapshot(),
                    w_slice.snapshot(),
                    "{name} {a}..{b}: world differs after frame {k}"
                );
            }
            // The kept frames' packets are the original's, verbatim and in order.
            let kept: Vec<&[u8]> = original
                .iter()
                .filter(|r| (a as i64..b as i64).contains(&r.frame.unwrap()))
                .map(raw)
                .filter(|p| !(p[9] == 1 || (p[9] == 2 && p[11] == 3)))
                .collect();
            let tail: Vec<&[u8]> = sliced.iter().map(raw).collect();
            assert!(
                tail.ends_with(&kept),
                "{name} {a}..{b}: kept packets differ"
            );
        }
    }
}
