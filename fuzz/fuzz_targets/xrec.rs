//! Arbitrary bytes into the XREC-S reader: packet framing, the Start and End payloads, gzip
//! events areas, event records and MessagePack bodies (spec `xrec.md`).
//!
//! Each input is read leniently with decoding (validate), strictly without values (a
//! header walk) and with a query (time, frames and a type glob: packets skipped by their
//! bounds). Every decoded record is written back through the XREC writer into a sink, once
//! from its own bytes and once from its values, and the body decoder also takes the input
//! as one body. Records are handed back (`Source::recycle`), so each is decoded over the
//! last one's values. A panic, an abort (a huge allocation), a hang or a broken invariant
//! below is a bug.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use simrec::formats::output::Outputs;
use simrec::formats::xrec::{body, type_globs, Query, XrecReader, XrecWriteOptions, XrecWriter};
use simrec::formats::{ReadError, ReadOptions, Sink, Source};

fn options(decode: bool, lenient: bool) -> ReadOptions {
    ReadOptions {
        decode,
        lenient,
        ..ReadOptions::default()
    }
}

fn read(data: &[u8], options: ReadOptions, query: Option<Query>) {
    let reader = match XrecReader::from_bytes(data.to_vec(), options) {
        Ok(r) => r,
        Err(ReadError::Invalid { finding, .. }) => {
            assert!(finding.code.starts_with("XREC_"), "{finding}");
            return;
        }
        Err(e) => panic!("an in-memory input gave {e:?}"),
    };
    let mut reader = match query {
        Some(q) => reader.with_query(q),
        None => reader,
    };
    let header = reader.header().clone();
    let mut outputs = Outputs::dry_run(false);
    let repair = XrecWriteOptions {
        codec: None,
        repair: options.lenient,
    };
    let mut copy =
        XrecWriter::create(Path::new("fuzz.xrec"), &header, &mut outputs, repair).expect("dry run");
    let mut values = XrecWriter::create(
        Path::new("fuzz2.xrec"),
        &header,
        &mut outputs,
        Default::default(),
    )
    .expect("dry run");
    let mut errors = 0;
    let mut known = header.channels.len();
    while let Some(item) = reader.next() {
        let mut record = match item {
            Ok(r) => r,
            Err(ReadError::Invalid { .. }) => {
                assert!(
                    !options.lenient,
                    "lenient reading reports findings, not errors"
                );
                errors += 1;
                assert_eq!(errors, 1, "a strict reader stops at its first error");
                continue;
            }
            Err(e) => panic!("an in-memory input gave {e:?}"),
        };
        assert!(record.frame.is_some(), "every event has a create_frame");
        let (p, total) = reader.progress();
        assert!(p <= total);
        for c in &reader.header().channels[known..] {
            copy.add_channel(c).expect("a sink takes new channels");
            values.add_channel(c).expect("a sink takes new channels");
        }
        known = reader.header().channels.len();
        assert!(
            (record.channel as usize) < known,
            "a record's channel is announced"
        );
        if record.raw.is_some() {
            copy.write(&record).expect("xrec into a sink");
        }
        record.raw = None;
        values.write(&record).expect("xrec from values into a sink");
        // Later records are decoded over this one's keys and buffers.
        reader.recycle(record);
    }
    let _ = reader.facts();
    let _ = Box::new(copy).finish();
    let _ = Box::new(values).finish();
}

fuzz_target!(|data: &[u8]| {
    read(data, options(true, true), None);
    read(data, options(false, false), None);
    read(
        data,
        options(true, true),
        Some(Query {
            t0: Some(0),
            t1: Some(1_000_000_000),
            f0: Some(-5),
            f1: Some(100),
            types: type_globs(["xrec.*"].into_iter()).ok().flatten(),
            shift: 0,
        }),
    );
    let _ = body::decode(data);
});
