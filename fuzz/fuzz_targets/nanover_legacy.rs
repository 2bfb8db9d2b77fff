//! Arbitrary bytes into the NanoVer legacy reader and payload decoder.
//!
//! Each input is read as a `.traj`, as a `.state` and with the stream told by content;
//! strictly and leniently; with payloads decoded and with a header walk only; as version
//! 2 and as version 1 on request. Every record is drained and, when decoded, written to
//! JSON Lines and re-encoded as NanoVer (both into sinks). The same bytes also go straight
//! to the payload decoder as each message type, and where prost re-encodes them to the
//! same bytes (a canonical payload: no unknown fields, no repeated oneof members, nothing
//! for prost to merge) simrec's values must be what the prost message says (spec §2, §4).
//! A panic, an abort (a huge allocation), a hang or a broken invariant below is a bug.

#![no_main]

use std::io::{self, BufWriter, Write};
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use prost::Message as _;
use simrec::formats::jsonl::JsonlWriter;
use simrec::formats::nanover_legacy::proto::{self, Kind, ProtoValue, ValueArrayKind};
use simrec::formats::nanover_legacy::wire::{self, Decoder, Message, Strictness};
use simrec::formats::nanover_legacy::{LegacyReader, LegacyWriter, Stream};
use simrec::formats::output::Outputs;
use simrec::formats::{ReadError, ReadOptions, Sink, Source};
use simrec::model::{Array, ArrayData, Field, Value};

/// Spec §10: what a lenient read keeps (every intact and every length-repaired record, as
/// `recover` writes them) is a valid file that a strict read takes back whole.
fn reread_recovered(kept: &[simrec::model::Record], stream: Stream) {
    let mut file = Vec::new();
    file.extend_from_slice(&simrec::formats::nanover_legacy::MAGIC.to_le_bytes());
    file.extend_from_slice(&2u64.to_le_bytes());
    for r in kept {
        file.extend_from_slice(&r.raw.as_ref().unwrap().bytes);
    }
    let strict = ReadOptions {
        decode: true,
        lenient: false,
        assume_version: None,
    };
    let reader = LegacyReader::from_bytes(file, Path::new("recovered"), Some(stream), strict)
        .expect("a recovered file opens");
    let mut n = 0;
    for (item, original) in reader.zip(kept) {
        let again = item.unwrap_or_else(|e| panic!("a recovered record does not read back: {e}"));
        assert_eq!(again.time, original.time);
        assert_eq!(again.frame, original.frame);
        assert!(
            same_fields(&again.values, &original.values),
            "values changed on re-reading"
        );
        n += 1;
    }
    assert_eq!(n, kept.len(), "records lost on re-reading a recovered file");
}

fn read(data: &[u8], stream: Option<Stream>, options: ReadOptions) {
    let name = Path::new("fuzz");
    let mut reader = match LegacyReader::from_bytes(data.to_vec(), name, stream, options) {
        Ok(r) => r,
        Err(ReadError::Invalid { finding, .. }) => {
            assert!(
                finding.offset.is_some(),
                "an open error has an offset: {finding}"
            );
            return;
        }
        Err(e) => panic!("an in-memory input gave {e:?}"),
    };
    let header = reader.header().clone();
    let out: BufWriter<Box<dyn Write>> = BufWriter::new(Box::new(io::sink()));
    let mut jsonl = JsonlWriter::new(out, Path::new("fuzz.jsonl"), &header);
    let mut outputs = Outputs::dry_run();
    let mut legacy =
        LegacyWriter::create(Path::new("fuzz.traj"), &header, &mut outputs).expect("dry run");
    let mut errors = 0;
    let mut kept = Vec::new();
    while let Some(item) = reader.next() {
        let record = match item {
            Ok(r) => r,
            Err(ReadError::Invalid { .. }) => {
                errors += 1;
                assert!(
                    !options.lenient,
                    "lenient reading reports findings, not errors"
                );
                continue;
            }
            Err(e) => panic!("an in-memory input gave {e:?}"),
        };
        assert!(record.time >= 0, "negative time {}", record.time);
        let (done, total) = reader.progress();
        assert!(done <= total && total == data.len() as u64);
        if options.decode {
            let raw = record
                .raw
                .as_ref()
                .expect("decoded records keep their bytes");
            assert!(raw.bytes.len() >= 24);
            let len = u64::from_le_bytes(raw.bytes[16..24].try_into().unwrap());
            assert_eq!(len as usize, raw.bytes.len() - 24, "record length field");
            jsonl.write(&record).expect("JSON Lines into a sink");
            legacy.write(&record).expect("raw copy into a sink");
            let mut fresh = record.clone();
            fresh.raw = None;
            legacy.write(&fresh).expect("re-encoding into a sink");
            if options.lenient && raw.format == "nanover-legacy" {
                kept.push(record);
            }
        }
    }
    if options.lenient && options.decode && reader.header().format_version == "2" {
        reread_recovered(&kept, reader.stream());
    }
    assert!(errors <= 1, "strict reading stops after its first error");
    assert!(reader.next().is_none(), "a finished reader stays finished");
    let _ = Box::new(jsonl).finish();
    let _ = Box::new(legacy).finish();
    for (_, findings) in reader.findings() {
        for f in findings.list() {
            let _ = f.to_string();
        }
    }
}

// ---- the prost cross-check: what a prost message means in the model ----

/// Spec §2.4: a later duplicate key overrides an earlier one.
fn last_wins(fields: Vec<Field>) -> Vec<Field> {
    let mut out = Vec::new();
    for (i, (key, value)) in fields.iter().enumerate() {
        if !fields[i + 1..].iter().any(|(k, _)| k == key) {
            out.push((key.clone(), value.clone()));
        }
    }
    out
}

fn value(v: Option<&ProtoValue>) -> Value {
    match v.and_then(|v| v.kind.as_ref()) {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::NumberValue(x)) => Value::Float(*x),
        Some(Kind::StringValue(s)) => Value::Str(s.clone()),
        Some(Kind::BoolValue(b)) => Value::Bool(*b),
        Some(Kind::StructValue(s)) => Value::Map(struct_fields(s, false)),
        Some(Kind::ListValue(l)) => Value::List(l.values.iter().map(|v| value(Some(v))).collect()),
    }
}

fn struct_fields(s: &proto::Struct, removals: bool) -> Vec<Field> {
    last_wins(
        s.fields
            .iter()
            .map(|e| match value(e.value.as_ref()) {
                Value::Null if removals => (e.key.clone(), Value::Removed),
                v => (e.key.clone(), v),
            })
            .collect(),
    )
}

/// Spec §4's key table: (stored kinds allowed, the first one for empty arrays; row width or
/// fixed element count).
fn key_table(key: &str) -> Option<(&'static [u8], usize, bool)> {
    const F: u8 = 1;
    const I: u8 = 2;
    const S: u8 = 3;
    Some(match key {
        "particle.positions"
        | "particle.velocities"
        | "particle.forces"
        | "particle.forces.system"
        | "forces.user.sparse" => (&[F], 3, false),
        "particle.elements" | "particle.residues" | "residue.chains" | "forces.user.index" => {
            (&[I], 1, false)
        }
        "particle.names" | "residue.names" | "chain.names" => (&[S], 1, false),
        "residue.ids" => (&[S, F], 1, false),
        "bond.pairs" => (&[I], 2, false),
        "bond.orders" => (&[F], 1, false),
        "system.box.vectors" => (&[F], 9, true),
        _ => return None,
    })
}

fn array(key: &str, va: Option<&proto::ValueArray>) -> Array {
    let empty = |k: u8| match k {
        1 => ArrayData::F32(vec![]),
        2 => ArrayData::U32(vec![]),
        _ => ArrayData::Str(vec![]),
    };
    let stored = va.and_then(|v| v.values.as_ref()).map(|v| match v {
        ValueArrayKind::FloatValues(f) => (1, ArrayData::F32(f.values.clone())),
        ValueArrayKind::IndexValues(i) => (2, ArrayData::U32(i.values.clone())),
        ValueArrayKind::StringValues(s) => (3, ArrayData::Str(s.values.clone())),
    });
    let table = key_table(key);
    let data = match (stored, table) {
        (Some((k, d)), Some((kinds, _, _))) if !kinds.contains(&k) && d.is_empty() => {
            empty(kinds[0])
        }
        (None, Some((kinds, _, _))) => empty(kinds[0]),
        (None, None) => ArrayData::F32(vec![]),
        (Some((_, d)), _) => d,
    };
    let n = data.len();
    let shape = match table {
        Some((_, 9, true)) if n == 9 => vec![3, 3],
        Some((_, w, false)) if w > 1 && n % w == 0 => vec![n / w, w],
        _ => vec![n],
    };
    Array { shape, data }
}

fn frame_fields(frame: &proto::FrameData) -> Vec<Field> {
    let values = frame
        .values
        .iter()
        .map(|e| (e.key.clone(), value(e.value.as_ref())));
    let arrays = frame
        .arrays
        .iter()
        .map(|e| (e.key.clone(), Value::Array(array(&e.key, e.value.as_ref()))));
    let values = last_wins(values.collect());
    let arrays = last_wins(arrays.collect());
    last_wins(values.into_iter().chain(arrays).collect())
}

/// Values equal, floats compared by their bits.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Array(x), Value::Array(y)) => {
            x.shape == y.shape
                && match (&x.data, &y.data) {
                    (ArrayData::F32(p), ArrayData::F32(q)) => {
                        p.len() == q.len()
                            && p.iter().zip(q).all(|(u, v)| u.to_bits() == v.to_bits())
                    }
                    (p, q) => p == q,
                }
        }
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(u, v)| same(u, v))
        }
        (Value::Map(x), Value::Map(y)) => same_fields(x, y),
        (x, y) => x == y,
    }
}

fn same_fields(a: &[Field], b: &[Field]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
}

/// Where `data` is a canonical payload of the message, simrec's decoding must agree with prost.
fn cross_check(data: &[u8]) {
    let mut notes = Vec::new();
    if let Ok(m) = proto::GetFrameResponse::decode(data) {
        if m.encode_to_vec() == data {
            let f = Decoder::new(Strictness::Strict, &mut notes)
                .frame_response(data)
                .expect("prost decodes a canonical GetFrameResponse, simrec does not");
            assert_eq!(f.frame_index, m.frame_index);
            let want = m.frame.as_ref().map(frame_fields).unwrap_or_default();
            assert!(
                same_fields(&f.fields, &want),
                "GetFrameResponse:\n simrec {:?}\n  prost {want:?}",
                f.fields
            );
        }
    }
    if let Ok(m) = proto::FrameData::decode(data) {
        if m.encode_to_vec() == data {
            let fields = Decoder::new(Strictness::Strict, &mut notes)
                .frame_data(data)
                .expect("prost decodes a canonical FrameData, simrec does not");
            let want = frame_fields(&m);
            assert!(
                same_fields(&fields, &want),
                "FrameData:\n simrec {fields:?}\n  prost {want:?}"
            );
        }
    }
    if let Ok(m) = proto::StateUpdate::decode(data) {
        if m.encode_to_vec() == data {
            let fields = Decoder::new(Strictness::Strict, &mut notes)
                .state_update(data)
                .expect("prost decodes a canonical StateUpdate, simrec does not");
            let want = m
                .changed_keys
                .as_ref()
                .map(|s| struct_fields(s, true))
                .unwrap_or_default();
            assert!(
                same_fields(&fields, &want),
                "StateUpdate:\n simrec {fields:?}\n  prost {want:?}"
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    for stream in [Some(Stream::Frames), Some(Stream::State), None] {
        for lenient in [false, true] {
            for decode in [false, true] {
                for assume_version in [None, Some(1)] {
                    let options = ReadOptions {
                        decode,
                        lenient,
                        assume_version,
                    };
                    read(data, stream, options);
                }
            }
        }
    }
    // The payload decoder on its own, as each message, in both modes.
    for strictness in [Strictness::Lenient, Strictness::Strict] {
        let mut notes = Vec::new();
        let mut d = Decoder::new(strictness, &mut notes);
        let response = d.frame_response(data);
        let frame_data = d.frame_data(data);
        let state = d.state_update(data);
        if strictness == Strictness::Strict {
            assert_eq!(
                response.is_ok(),
                wire::decodes_strictly(data, Message::FrameResponse)
            );
            assert_eq!(
                frame_data.is_ok(),
                wire::decodes_strictly(data, Message::FrameData)
            );
            assert_eq!(
                state.is_ok(),
                wire::decodes_strictly(data, Message::StateUpdate)
            );
        }
        for e in [response.err(), frame_data.err(), state.err()]
            .into_iter()
            .flatten()
        {
            assert!(
                e.pos <= data.len(),
                "error position {} past {} bytes",
                e.pos,
                data.len()
            );
        }
    }
    cross_check(data);
    let head = &data[..data.len().min(wire::PEEK_LEN)];
    if let Some(i) = wire::peek_frame_index(head, data.len()) {
        // A peeked frame index is what a full decode gives, whenever the payload decodes.
        let mut notes = Vec::new();
        if let Ok(f) = Decoder::new(Strictness::Lenient, &mut notes).frame_response(data) {
            assert_eq!(f.frame_index, i, "peeked frame index");
        }
    }
});
