//! Arbitrary bytes as an Icarus HDF5 file: hdf5-pure parses the superblock, groups, object
//! headers, attributes and chunk indexes; simrec checks every dataset's storage against the
//! file and reads the chunks itself. Each input is read three ways: strict with decoding
//! (convert), lenient without (inspect) and lenient with the `--deep` checks (validate,
//! recover). libFuzzer aborts on any panic, so a panic in hdf5-pure or simrec is a crash;
//! so are huge allocations (`-malloc_limit_mb`) and hangs.
//!
//! Besides that, the target asserts: an open error from memory is a `ReadError::Invalid`;
//! lenient reading never yields an error item; strict reading yields at most one, then
//! ends; every record names a declared channel and carries one value when decoding.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use simrec::formats::icarus::hdf5::{Bytes, IcarusH5Reader};
use simrec::formats::{ReadError, ReadOptions, Source};

fn drain(data: &[u8], options: ReadOptions) {
    let bytes = Bytes::from_vec(data.to_vec());
    let mut r = match IcarusH5Reader::from_bytes(Path::new("fuzz.h5"), bytes, options) {
        Ok(r) => r,
        Err(ReadError::Invalid { .. }) => return,
        Err(e) => panic!("an in-memory file failed with {e}"),
    };
    let channels = r.header().channels.len();
    let mut errors = 0;
    while let Some(item) = r.next() {
        match item {
            Ok(rec) => {
                assert!((rec.channel as usize) < channels);
                assert_eq!(rec.values.len(), usize::from(options.decode));
                r.recycle(rec);
            }
            Err(e) => {
                assert!(!options.lenient, "lenient reading yielded {e}");
                assert!(matches!(e, ReadError::Invalid { .. }), "{e}");
                errors += 1;
            }
        }
    }
    assert!(errors <= 1);
    assert!(r.next().is_none(), "a finished reader stays finished");
    let (done, total) = r.progress();
    assert!(done <= total);
    let _ = r.facts();
}

fuzz_target!(|data: &[u8]| {
    drain(data, ReadOptions::default());
    drain(
        data,
        ReadOptions {
            decode: false,
            lenient: true,
            ..ReadOptions::default()
        },
    );
    drain(
        data,
        ReadOptions {
            lenient: true,
            deep: true,
            ..ReadOptions::default()
        },
    );
});
