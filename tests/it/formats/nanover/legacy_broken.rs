//! The damaged and edge-case fixtures of spec §14: one test per file, asserting the exact
//! finding code, byte offset and record index, and how many records a lenient reader
//! (decoding every payload, as `validate` does) gets out of it.

use std::path::Path;

use simrec::formats::nanover::legacy::{LegacyReader, Stream};
use simrec::formats::{ReadError, ReadOptions, Source};
use simrec::model::{Record, Value};
use simrec::report::{Finding, Severity};

use crate::util;
use crate::util::alloc::measure;
use crate::util::fixture;

/// The stream a file's extension names (what the format registry passes).
fn stream_of(rel: &str) -> Option<Stream> {
    if rel.ends_with(".traj") {
        Some(Stream::Frames)
    } else if rel.ends_with(".state") {
        Some(Stream::State)
    } else {
        None
    }
}

fn options(assume_version: Option<u32>) -> ReadOptions {
    ReadOptions {
        assume_version,
        ..util::lenient()
    }
}

/// Everything a lenient, decoding read of one file gives.
struct Read {
    records: Vec<Record>,
    findings: Vec<Finding>,
    format_version: String,
}

impl Read {
    /// Codes of the findings of at least `severity`, in the order they were found.
    fn codes(&self, severity: Severity) -> Vec<&'static str> {
        self.findings
            .iter()
            .filter(|f| f.severity >= severity)
            .map(|f| f.code)
            .collect()
    }

    /// The one finding with `code` (fails when there is none or more than one).
    fn one(&self, code: &str) -> &Finding {
        let found: Vec<&Finding> = self.findings.iter().filter(|f| f.code == code).collect();
        assert_eq!(found.len(), 1, "findings with {code}: {:#?}", self.findings);
        found[0]
    }

    fn raw(&self) -> Vec<Vec<u8>> {
        self.records
            .iter()
            .map(|r| {
                r.raw
                    .as_ref()
                    .expect("decoded records keep raw bytes")
                    .bytes
                    .clone()
            })
            .collect()
    }
}

fn read_with(rel: &str, assume_version: Option<u32>) -> Result<Read, ReadError> {
    let mut reader = LegacyReader::open(&fixture(rel), stream_of(rel), options(assume_version))?;
    let mut records = Vec::new();
    for r in reader.by_ref() {
        records.push(r.unwrap_or_else(|e| panic!("{rel}: lenient reading returned {e}")));
    }
    let findings = reader
        .findings()
        .iter()
        .flat_map(|(_, f)| f.list().iter().cloned())
        .collect();
    Ok(Read {
        records,
        findings,
        format_version: reader.header().format_version.clone(),
    })
}

fn read(rel: &str) -> Read {
    read_with(rel, None).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The finding an input that cannot be opened comes back with.
fn open_error(rel: &str, assume_version: Option<u32>) -> Finding {
    match read_with(rel, assume_version) {
        Err(ReadError::Invalid { finding, path }) => {
            assert_eq!(path, fixture(rel), "the error names the file");
            *finding
        }
        Err(e) => panic!("{rel}: expected ReadError::Invalid, got {e:?}"),
        Ok(r) => panic!(
            "{rel}: opened with {} records, expected an error",
            r.records.len()
        ),
    }
}

fn assert_at(f: &Finding, severity: Severity, offset: u64, record: Option<u64>) {
    assert_eq!(
        (f.severity, f.offset, f.record),
        (severity, Some(offset), record),
        "{}: {}",
        f.code,
        f.message
    );
}

fn small_traj() -> Read {
    read("small.traj")
}

// ---- framing and header: the file cannot be opened ----

#[test]
fn empty_file() {
    let f = open_error("broken/empty.traj", None);
    assert_eq!(f.code, "NANOVER_EMPTY_FILE");
    assert_at(&f, Severity::Error, 0, None);
    // Asking for version 1 does not change it.
    assert_eq!(
        open_error("broken/empty.traj", Some(1)).code,
        "NANOVER_EMPTY_FILE"
    );
}

#[test]
fn truncated_file_header() {
    assert_eq!(
        std::fs::metadata(fixture("broken/trunc-file-header.traj"))
            .unwrap()
            .len(),
        12
    );
    let f = open_error("broken/trunc-file-header.traj", None);
    assert_eq!(f.code, "NANOVER_TRUNCATED_FILE_HEADER");
    assert_at(&f, Severity::Error, 0, None);
    assert!(f.message.contains("12 bytes"), "{}", f.message);
}

#[test]
fn bad_magic() {
    let f = open_error("broken/bad-magic.traj", None);
    assert_eq!(f.code, "NANOVER_BAD_MAGIC");
    assert_at(&f, Severity::Error, 0, None);
    // Not v1-like either, so asking for version 1 gives the same answer.
    assert_eq!(
        open_error("broken/bad-magic.traj", Some(1)).code,
        "NANOVER_BAD_MAGIC"
    );
}

#[test]
fn bad_version_1() {
    // Magic present, version 1: not a headerless v1 file but an unsupported header.
    for assume in [None, Some(1)] {
        let f = open_error("broken/bad-version-1.traj", assume);
        assert_eq!(f.code, "NANOVER_UNSUPPORTED_VERSION");
        assert_at(&f, Severity::Error, 8, None);
        assert!(f.message.contains("version 1 "), "{}", f.message);
    }
}

#[test]
fn bad_version_3() {
    let f = open_error("broken/bad-version-3.traj", None);
    assert_eq!(f.code, "NANOVER_UNSUPPORTED_VERSION");
    assert_at(&f, Severity::Error, 8, None);
    assert!(f.message.contains("version 3 "), "{}", f.message);
}

#[test]
fn v1_headerless_traj_without_the_option() {
    let f = open_error("broken/v1-headerless.traj", None);
    assert_eq!(f.code, "NANOVER_V1_HEADERLESS");
    assert_at(&f, Severity::Error, 0, None);
    assert!(f.hint.unwrap().contains("--nanover-version 1"));
}

#[test]
fn v1_headerless_state_without_the_option() {
    let f = open_error("broken/v1-headerless.state", None);
    assert_eq!(f.code, "NANOVER_V1_HEADERLESS");
    assert_at(&f, Severity::Error, 0, None);
}

// ---- files that open ----

#[test]
fn header_only_state() {
    let r = read("broken/header-only.state");
    assert_eq!(r.records.len(), 0);
    assert_eq!(r.codes(Severity::Info), ["NANOVER_NO_RECORDS"]);
    assert_at(r.one("NANOVER_NO_RECORDS"), Severity::Warning, 16, None);
}

#[test]
fn edge_header_only_state() {
    let r = read("edge/header-only.state");
    assert_eq!(r.records.len(), 0);
    assert_eq!(r.codes(Severity::Info), ["NANOVER_NO_RECORDS"]);
    assert_at(r.one("NANOVER_NO_RECORDS"), Severity::Warning, 16, None);
}

#[test]
fn edge_header_only_traj() {
    let r = read("edge/header-only.traj");
    assert_eq!(r.records.len(), 0);
    assert_eq!(r.codes(Severity::Info), ["NANOVER_NO_RECORDS"]);
    assert_at(r.one("NANOVER_NO_RECORDS"), Severity::Warning, 16, None);
}

#[test]
fn truncated_record_header() {
    let r = read("broken/trunc-record-header.traj");
    assert_eq!(r.records.len(), 31);
    assert_eq!(
        r.codes(Severity::Warning),
        ["NANOVER_TRUNCATED_RECORD_HEADER"]
    );
    let f = r.one("NANOVER_TRUNCATED_RECORD_HEADER");
    assert_at(f, Severity::Error, 23268, Some(31));
    assert!(f.message.contains("10 bytes"), "{}", f.message);
    // The 31 whole records are those of small.traj, byte for byte.
    assert_eq!(r.raw(), small_traj().raw()[..31]);
}

#[test]
fn truncated_payload_traj() {
    let r = read("broken/trunc-payload.traj");
    assert_eq!(r.records.len(), 31);
    assert_eq!(r.codes(Severity::Warning), ["NANOVER_TRUNCATED_PAYLOAD"]);
    let f = r.one("NANOVER_TRUNCATED_PAYLOAD");
    assert_at(f, Severity::Error, 23268, Some(31));
    assert!(
        f.message.contains("791 payload bytes claimed, 395 present"),
        "{}",
        f.message
    );
    assert_eq!(r.raw(), small_traj().raw()[..31]);
}

#[test]
fn truncated_payload_state() {
    let r = read("broken/trunc-payload.state");
    assert_eq!(r.records.len(), 14);
    assert_eq!(r.codes(Severity::Warning), ["NANOVER_TRUNCATED_PAYLOAD"]);
    let f = r.one("NANOVER_TRUNCATED_PAYLOAD");
    assert_at(f, Severity::Error, 1406, Some(14));
    assert!(
        f.message.contains("41 payload bytes claimed, 20 present"),
        "{}",
        f.message
    );
    assert_eq!(r.raw(), read("small.state").raw()[..14]);
}

#[test]
fn corrupt_size_huge_is_repaired_without_allocating_the_claimed_length() {
    // The length field of record 5 claims 2^40 bytes. Reading the whole file to the end
    // at all shows that nothing of that size was allocated (it would abort the test); the
    // counting allocator shows that no allocation came anywhere near it.
    let bytes = std::fs::read(fixture("broken/corrupt-size-huge.traj")).unwrap();
    assert_eq!(
        u64::from_le_bytes(bytes[3893 + 16..3893 + 24].try_into().unwrap()),
        1 << 40
    );
    let (r, allocated) = measure(|| read("broken/corrupt-size-huge.traj"));
    let largest = allocated.largest;
    assert!(
        largest < 64 << 20,
        "an allocation of {largest} bytes (the file has 24083)"
    );
    assert_eq!(r.codes(Severity::Warning), ["NANOVER_BAD_RECORD_SIZE"]);
    let f = r.one("NANOVER_BAD_RECORD_SIZE");
    assert_at(f, Severity::Error, 3893, Some(5));
    assert!(f.message.contains("1099511627776"), "{}", f.message);
    assert!(f.message.contains("repaired to 659"), "{}", f.message);
    // Every record is there, the repaired one with its true length: the bytes are
    // exactly those of the undamaged file.
    assert_eq!(r.records.len(), 32);
    assert_eq!(r.raw(), small_traj().raw());
    assert_eq!(
        r.records.iter().map(|x| x.time).collect::<Vec<_>>(),
        small_traj()
            .records
            .iter()
            .map(|x| x.time)
            .collect::<Vec<_>>()
    );
}

#[test]
fn corrupt_size_short() {
    let r = read("broken/corrupt-size-short.traj");
    assert_eq!(
        r.codes(Severity::Warning),
        [
            "NANOVER_PAYLOAD_DECODE",
            "NANOVER_BAD_RECORD_HEADER",
            "NANOVER_SKIPPED_BYTES"
        ]
    );
    assert_at(
        r.one("NANOVER_PAYLOAD_DECODE"),
        Severity::Error,
        3893,
        Some(5),
    );
    assert_at(
        r.one("NANOVER_BAD_RECORD_HEADER"),
        Severity::Error,
        4569,
        Some(6),
    );
    let skipped = r.one("NANOVER_SKIPPED_BYTES");
    assert_at(skipped, Severity::Error, 4569, Some(6));
    assert!(
        skipped
            .message
            .contains("7 bytes skipped (bytes 4569..4576)"),
        "{}",
        skipped.message
    );
    // Record 5 is kept with its length repaired: 32 records, the original bytes.
    assert_eq!(r.records.len(), 32);
    assert_eq!(r.raw(), small_traj().raw());
}

#[test]
fn garbage_inserted() {
    let r = read("broken/garbage-inserted.traj");
    assert_eq!(
        r.codes(Severity::Warning),
        ["NANOVER_BAD_RECORD_HEADER", "NANOVER_SKIPPED_BYTES"]
    );
    assert_at(
        r.one("NANOVER_BAD_RECORD_HEADER"),
        Severity::Error,
        8111,
        Some(11),
    );
    let skipped = r.one("NANOVER_SKIPPED_BYTES");
    // Skipped bytes are not a record: the next valid record keeps index 11.
    assert_at(skipped, Severity::Error, 8111, Some(11));
    assert!(
        skipped
            .message
            .contains("37 bytes skipped (bytes 8111..8148)"),
        "{}",
        skipped.message
    );
    assert_eq!(r.records.len(), 32);
    assert_eq!(r.raw(), small_traj().raw());
}

#[test]
fn nonmonotonic_timestamps() {
    let r = read("broken/nonmonotonic-timestamps.traj");
    assert_eq!(r.codes(Severity::Warning), ["NANOVER_TIMESTAMP_DECREASE"]);
    let f = r.one("NANOVER_TIMESTAMP_DECREASE");
    assert_at(f, Severity::Warning, 3210, Some(4));
    assert!(
        f.message.contains("344527") && f.message.contains("481737"),
        "{}",
        f.message
    );
    // No record dropped; file order kept, with records 3 and 4 carrying swapped times.
    assert_eq!(r.records.len(), 32);
    let small = small_traj();
    let times = |x: &Read| x.records.iter().map(|r| r.time).collect::<Vec<_>>();
    let mut want = times(&small);
    want.swap(3, 4);
    assert_eq!(times(&r), want);
    assert_eq!(r.records[3].time, 481_737_000);
    for (a, b) in r.records.iter().zip(&small.records) {
        assert_eq!((a.frame, &a.values), (b.frame, &b.values));
    }
}

#[test]
fn corrupt_payload_nonfinite_float() {
    let r = read("broken/corrupt-payload.traj");
    assert_eq!(r.codes(Severity::Warning), ["NANOVER_NONFINITE_FLOAT"]);
    let f = r.one("NANOVER_NONFINITE_FLOAT");
    assert_at(f, Severity::Warning, 3893, Some(5));
    assert!(f.message.contains("`particle.positions`"), "{}", f.message);
    assert_eq!(r.records.len(), 32);
    // The damage decodes silently: record 5 has NaNs where small.traj has numbers.
    let Some(Value::Array(damaged)) = r.records[5].get("particle.positions") else {
        panic!("record 5 has no positions");
    };
    let Some(Value::Array(good)) = small_traj().records[5].get("particle.positions").cloned()
    else {
        panic!("small.traj record 5 has no positions");
    };
    assert_eq!(damaged.shape, good.shape);
    let (simrec::model::ArrayData::F32(d), simrec::model::ArrayData::F32(g)) =
        (&damaged.data, &good.data)
    else {
        panic!("positions are not float32");
    };
    let differing: Vec<usize> = (0..d.len())
        .filter(|&i| d[i].to_bits() != g[i].to_bits())
        .collect();
    // 16 bytes of 0xff that do not start on a float boundary: three whole floats become
    // 0xffffffff (NaN) and the two they straddle change too.
    assert_eq!(differing.len(), 5, "{differing:?}");
    assert_eq!(differing[4] - differing[0], 4, "contiguous: {differing:?}");
    let all_ones = differing
        .iter()
        .filter(|&&i| d[i].to_bits() == u32::MAX)
        .count();
    assert_eq!(all_ones, 3);
    assert!(g.iter().all(|x| x.is_finite()));
    let first = d.iter().position(|x| !x.is_finite()).unwrap();
    assert!(differing.contains(&first));
    assert!(
        f.message.contains(&format!("element {first} ")),
        "{}",
        f.message
    );
}

#[test]
fn the_small_pair_itself_has_no_warnings() {
    let t = small_traj();
    assert_eq!(t.records.len(), 32);
    assert!(t.codes(Severity::Warning).is_empty(), "{:#?}", t.findings);
    let s = read("small.state");
    assert_eq!(s.records.len(), 15);
    assert!(s.codes(Severity::Warning).is_empty(), "{:#?}", s.findings);
}

#[test]
fn strict_reading_stops_at_the_first_error_with_the_same_finding() {
    let cases: [(&str, &str, u64, u64, usize); 4] = [
        (
            "broken/trunc-payload.traj",
            "NANOVER_TRUNCATED_PAYLOAD",
            23268,
            31,
            31,
        ),
        (
            "broken/corrupt-size-huge.traj",
            "NANOVER_BAD_RECORD_SIZE",
            3893,
            5,
            5,
        ),
        (
            "broken/corrupt-size-short.traj",
            "NANOVER_PAYLOAD_DECODE",
            3893,
            5,
            5,
        ),
        (
            "broken/garbage-inserted.traj",
            "NANOVER_BAD_RECORD_HEADER",
            8111,
            11,
            11,
        ),
    ];
    for (rel, code, offset, index, before) in cases {
        let opts = ReadOptions {
            lenient: false,
            ..options(None)
        };
        let mut reader = LegacyReader::open(&fixture(rel), stream_of(rel), opts).unwrap();
        let mut ok = 0;
        let err = loop {
            match reader.next() {
                Some(Ok(_)) => ok += 1,
                Some(Err(e)) => break e,
                None => panic!("{rel}: strict reading ended without an error"),
            }
        };
        assert_eq!(ok, before, "{rel}: records before the error");
        let ReadError::Invalid { finding, .. } = err else {
            panic!("{rel}: {err:?}");
        };
        assert_eq!(
            (finding.code, finding.offset, finding.record),
            (code, Some(offset), Some(index)),
            "{rel}"
        );
        assert!(reader.next().is_none(), "{rel}: nothing after the error");
    }
}

// ---- version 1, read on request ----

fn check_v1_against(v1: &str, v2: &str, records: usize, frames: bool) {
    let r = read_with(v1, Some(1)).unwrap_or_else(|e| panic!("{v1}: {e}"));
    let small = read(v2);
    assert_eq!(r.format_version, "1");
    assert_eq!(r.records.len(), records);
    assert_eq!(small.records.len(), records);
    // The only finding is the v1 notice, lowered to info.
    assert_eq!(r.codes(Severity::Warning), Vec::<&str>::new());
    assert_at(r.one("NANOVER_V1_HEADERLESS"), Severity::Info, 0, None);
    for (k, (a, b)) in r.records.iter().zip(&small.records).enumerate() {
        assert_eq!(a.time, b.time, "{v1} record {k} time");
        assert_eq!(a.channel, b.channel);
        if frames {
            // Record k is frame k: record 0 is the reset.
            assert_eq!(a.frame, Some(k as i64), "{v1} record {k} frame index");
        } else {
            assert_eq!(a.frame, None);
        }
        assert_eq!(a.values, b.values, "{v1} record {k} values");
    }
}

#[test]
fn v1_headerless_traj_read_as_version_1() {
    check_v1_against("broken/v1-headerless.traj", "small.traj", 32, true);
    // small.traj's first frame has frame_index 2; v1 numbering starts at 0.
    assert_eq!(small_traj().records[0].frame, Some(2));
}

#[test]
fn v1_headerless_state_read_as_version_1() {
    check_v1_against("broken/v1-headerless.state", "small.state", 15, false);
}

#[test]
fn v1_headerless_traj_header_walk_numbers_frames_too() {
    // Without decoding, record k still carries frame index k.
    let opts = ReadOptions {
        decode: false,
        ..options(Some(1))
    };
    let reader = LegacyReader::open(
        &fixture("broken/v1-headerless.traj"),
        Some(Stream::Frames),
        opts,
    )
    .unwrap();
    let frames: Vec<Option<i64>> = reader.map(|r| r.unwrap().frame).collect();
    assert_eq!(frames, (0..32).map(Some).collect::<Vec<_>>());
}

#[test]
fn v1_headerless_traj_written_out_as_version_2() {
    // Spec §1.4: written as v2, record 0 gets frame_index 0 and record k frame_index k.
    let v1 = read_with("broken/v1-headerless.traj", Some(1)).unwrap();
    let reader = LegacyReader::open(
        &fixture("broken/v1-headerless.traj"),
        Some(Stream::Frames),
        options(Some(1)),
    )
    .unwrap();
    let header = reader.header().clone();
    drop(reader);
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("v2.traj");
    let mut outputs = simrec::formats::output::Outputs::new(false);
    let mut writer: Box<dyn simrec::formats::Sink> = Box::new(
        simrec::formats::nanover::legacy::LegacyWriter::create(&target, &header, &mut outputs)
            .unwrap(),
    );
    for r in &v1.records {
        assert_eq!(r.raw.as_ref().unwrap().format, "nanover-legacy-v1");
        writer.write(r).unwrap();
    }
    let report = writer.finish().unwrap();
    assert_eq!(report.records, 32);
    assert!(report.loss.is_empty(), "{:?}", report.loss);
    outputs.commit().unwrap();
    let bytes = std::fs::read(&target).unwrap();
    assert_eq!(bytes[..16], small_traj_bytes()[..16], "a v2 header");
    let back = LegacyReader::open(&target, Some(Stream::Frames), options(None)).unwrap();
    let small = small_traj();
    let mut n = 0;
    for (k, r) in back.enumerate() {
        let r = r.unwrap();
        assert_eq!(r.frame, Some(k as i64), "record {k}");
        assert_eq!(r.time, small.records[k].time);
        assert_eq!(r.values, small.records[k].values, "record {k}");
        let payload = &r.raw.as_ref().unwrap().bytes[24..];
        if k == 0 {
            assert_eq!(payload[0], 0x12, "frame_index 0 is not on the wire");
        } else {
            assert_eq!(payload[..2], [0x08, k as u8], "frame_index {k} first");
        }
        n += 1;
    }
    assert_eq!(n, 32);
}

fn small_traj_bytes() -> Vec<u8> {
    std::fs::read(fixture("small.traj")).unwrap()
}

/// (code, byte offset, record index)
type Expected = (&'static str, u64, u64);

#[test]
fn header_walk_finds_the_same_framing_damage() {
    // What `inspect` reads (no payload decoding): the same records and framing findings.
    // Decoding is what finds content damage, so NONFINITE_FLOAT goes. A frame payload whose
    // layout is not the canonical `[08 index] 12 length` is decoded for its frame index, so
    // a payload that does not decode (corrupt-size-short's record 5) is still reported.
    let cases: [(&str, usize, &[Expected]); 7] = [
        (
            "broken/trunc-record-header.traj",
            31,
            &[("NANOVER_TRUNCATED_RECORD_HEADER", 23268, 31)],
        ),
        (
            "broken/trunc-payload.traj",
            31,
            &[("NANOVER_TRUNCATED_PAYLOAD", 23268, 31)],
        ),
        (
            "broken/trunc-payload.state",
            14,
            &[("NANOVER_TRUNCATED_PAYLOAD", 1406, 14)],
        ),
        (
            "broken/corrupt-size-huge.traj",
            32,
            &[("NANOVER_BAD_RECORD_SIZE", 3893, 5)],
        ),
        (
            "broken/corrupt-size-short.traj",
            32,
            &[
                ("NANOVER_PAYLOAD_DECODE", 3893, 5),
                ("NANOVER_BAD_RECORD_HEADER", 4569, 6),
                ("NANOVER_SKIPPED_BYTES", 4569, 6),
            ],
        ),
        (
            "broken/garbage-inserted.traj",
            32,
            &[
                ("NANOVER_BAD_RECORD_HEADER", 8111, 11),
                ("NANOVER_SKIPPED_BYTES", 8111, 11),
            ],
        ),
        ("broken/corrupt-payload.traj", 32, &[]),
    ];
    for (rel, records, want) in cases {
        let opts = ReadOptions {
            decode: false,
            ..options(None)
        };
        let mut reader = LegacyReader::open(&fixture(rel), stream_of(rel), opts).unwrap();
        let n = reader
            .by_ref()
            .map(|r| r.unwrap().time)
            .filter(|t| *t > 0)
            .count();
        assert_eq!(n, records, "{rel}");
        let got: Vec<Expected> = reader
            .findings()
            .iter()
            .flat_map(|(_, f)| f.list().iter())
            .filter(|f| f.severity >= Severity::Warning)
            .map(|f| (f.code, f.offset.unwrap(), f.record.unwrap()))
            .collect();
        assert_eq!(got, want, "{rel}");
    }
}

/// Without a name to go by (standard input), the stream is told by how many records in a
/// row decode as each message: a v1 `StateUpdate` payload can decode as a `FrameData`, but
/// not sixteen in a row.
#[test]
fn streams_are_told_apart_by_content_without_a_name() {
    let read_nameless = |rel: &str, cut: Option<usize>, assume_version| {
        let bytes = std::fs::read(fixture(rel)).unwrap();
        let bytes = bytes[..cut.unwrap_or(bytes.len())].to_vec();
        let reader =
            LegacyReader::from_bytes(bytes, Path::new("-"), None, options(assume_version)).unwrap();
        let format = reader.header().format.clone();
        let records = reader.inspect(|r| assert!(r.is_ok(), "{r:?}")).count();
        (format, records)
    };
    assert_eq!(
        read_nameless("broken/v1-headerless.state", None, Some(1)),
        ("nanover-state".to_string(), 15)
    );
    assert_eq!(
        read_nameless("broken/v1-headerless.traj", None, Some(1)),
        ("nanover-traj".to_string(), 32)
    );
    assert_eq!(
        read_nameless("small.state", None, None),
        ("nanover-state".to_string(), 15)
    );
    // Cut inside record 1: record 0 alone still says `.state`.
    assert_eq!(
        read_nameless("small.state", Some(100), None),
        ("nanover-state".to_string(), 1)
    );
    assert_eq!(
        read_nameless("small.traj", Some(1200), None),
        ("nanover-traj".to_string(), 1)
    );
}
