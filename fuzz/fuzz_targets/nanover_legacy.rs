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
use simrec::formats::export::jsonl::JsonlWriter;
use simrec::formats::nanover::legacy::proto;
use simrec::formats::nanover::legacy::wire::{self, Decoder, Message, Strictness};
use simrec::formats::nanover::legacy::{LegacyReader, LegacyWriter, Stream};
use simrec::formats::output::Outputs;
use simrec::formats::{ReadError, ReadOptions, Sink, Source};

#[path = "../../tests/it/util/prost_model.rs"]
mod prost_model;
use prost_model::{frame_fields, same_fields, struct_fields};

/// Spec §10: what a lenient read keeps (every intact and every length-repaired record, as
/// `recover` writes them) is a valid file that a strict read takes back whole.
fn reread_recovered(kept: &[simrec::model::Record], stream: Stream) {
    let mut file = Vec::new();
    file.extend_from_slice(&simrec::formats::nanover::legacy::MAGIC.to_le_bytes());
    file.extend_from_slice(&2u64.to_le_bytes());
    for r in kept {
        file.extend_from_slice(&r.raw.as_ref().unwrap().bytes);
    }
    let strict = ReadOptions {
        decode: true,
        lenient: false,
        until_damage: false,
        assume_version: None,
        deep: false,
        epoch: None,
        time_system: None,
        check_only: false,
        discontinuity: None,
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
    let mut jsonl = JsonlWriter::new(out, Path::new("fuzz.jsonl"), &header, None);
    let mut outputs = Outputs::dry_run(false);
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
                        until_damage: false,
                        assume_version,
                        deep: false,
                        epoch: None,
                        time_system: None,
                        check_only: false,
                        discontinuity: None,
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
