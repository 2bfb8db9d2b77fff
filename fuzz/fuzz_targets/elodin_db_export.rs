//! Arbitrary bytes into the `elodin-db export` file decoders (Parquet, Arrow IPC and CSV
//! tables, regrouped into components): whatever the bytes, a count of rows or an error,
//! never a panic, an abort (a huge allocation) or a hang.

#![no_main]

use libfuzzer_sys::fuzz_target;
use simrec::formats::elodin::db_export::{decode_file, Kind};

fuzz_target!(|data: &[u8]| {
    for kind in [Kind::Parquet, Kind::Arrow, Kind::Csv] {
        // Both stems: a file per component (`a.b`), and a `--join`ed entity file (`a`).
        for stem in ["a.b", "a"] {
            let _ = decode_file(data.to_vec(), kind, stem);
        }
    }
});
