//! Arbitrary bytes into the `.icarec` reader (spec Part A): `schema.json`, `metadata.json`
//! and record parsing, in both forms.
//!
//! The first byte picks the form. Even: the rest is a ustar archive. Odd: the next six
//! bytes are three little-endian u16 lengths, and the rest is cut into `schema.json`,
//! `static_signals.bin`, `metadata.json` and (what is left) `dynamic_signals.bin`, so the
//! fuzzer can grow a valid schema and frames that follow it. The same bytes also go to the
//! schema and metadata parsers and the archive walk directly.
//!
//! Each input is read strictly and leniently, decoding (with the `--deep` checks) and header
//! only, and every strict read is written by the `.icarec` writer to a dry run in both forms.
//! Besides panics, aborts (`-malloc_limit_mb`) and hangs, the target asserts: an open error is
//! a `ReadError::Invalid`; lenient reading yields no error item; strict reading yields at most
//! one and then ends; a record's channel is in the header and its one value is named by the
//! channel's field; progress never runs past its total.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use simrec::formats::icarus::icarec::{
    metadata, schema, walk_tar, IcarecForm, IcarecReader, IcarecWriteOptions, IcarecWriter,
};
use simrec::formats::output::Outputs;
use simrec::formats::{ReadError, ReadOptions, Sink, Source};

fn drain(opened: Result<IcarecReader, ReadError>, lenient: bool, write: bool) {
    let mut r = match opened {
        Ok(r) => r,
        Err(ReadError::Invalid { .. }) => return,
        Err(e) => panic!("open: {e:?}"),
    };
    let header = r.header().clone();
    let mut sinks: Vec<(Box<dyn Sink>, Outputs)> = Vec::new();
    if write {
        for form in [IcarecForm::Directory, IcarecForm::Tar] {
            let mut outputs = Outputs::dry_run(false);
            let options = IcarecWriteOptions { form: Some(form) };
            let sink =
                IcarecWriter::create(Path::new("fuzz.icarec"), &header, &mut outputs, options)
                    .expect("a dry-run writer");
            sinks.push((Box::new(sink), outputs));
        }
    }
    let mut errors = 0;
    while let Some(item) = r.next() {
        match item {
            Ok(rec) => {
                let channel = header.channel(rec.channel).expect("a declared channel");
                if let Some((name, _)) = rec.values.first() {
                    assert_eq!(name, &channel.fields[0].name);
                }
                for (sink, _) in &mut sinks {
                    sink.write(&rec).expect("write to a dry run");
                }
                r.recycle(rec);
            }
            Err(ReadError::Invalid { .. }) => {
                assert!(!lenient, "lenient reading yielded an error");
                errors += 1;
            }
            Err(e) => panic!("read: {e:?}"),
        }
        let (done, total) = r.progress();
        assert!(done <= total, "progress {done} of {total}");
    }
    assert!(errors <= 1);
    assert!(r.next().is_none(), "a finished reader stays finished");
    for (sink, _) in sinks {
        sink.finish().expect("finish a dry run");
    }
}

fn options(decode: bool, lenient: bool) -> ReadOptions {
    ReadOptions {
        decode,
        lenient,
        deep: decode,
        ..ReadOptions::default()
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = schema::parse(data);
    let _ = metadata::parse(data);
    walk_tar(data);
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    for (decode, lenient) in [(true, true), (false, true), (true, false)] {
        if mode % 2 == 0 {
            drain(
                IcarecReader::from_tar_bytes(rest.to_vec(), options(decode, lenient)),
                lenient,
                !lenient,
            );
        } else {
            let mut parts: [Option<Vec<u8>>; 4] = Default::default();
            let mut at = 6.min(rest.len());
            for (i, slot) in [0usize, 1, 3].into_iter().enumerate() {
                let n = rest
                    .get(2 * i..2 * i + 2)
                    .map_or(0, |b| usize::from(u16::from_le_bytes([b[0], b[1]])));
                let end = (at + n).min(rest.len());
                // A length of 0xffff means the part is missing.
                if n != 0xffff {
                    parts[slot] = Some(rest[at..end].to_vec());
                }
                at = end;
            }
            parts[2] = Some(rest[at..].to_vec());
            drain(
                IcarecReader::from_parts(parts, options(decode, lenient)),
                lenient,
                !lenient,
            );
        }
    }
});
