//! Arbitrary bytes as an Elodin archetype file: the footer, column chunks, page headers
//! and pages simrec checks before the parquet crate decodes them, then every column and
//! row decoded (`simrec::formats::elodin::decode_parquet`). libFuzzer aborts on any panic,
//! so any panic left in the parquet or arrow crates on an input that passed simrec's checks
//! is a crash here; so are huge allocations (`-malloc_limit_mb`) and hangs.
//!
//! Besides that, the target asserts that a decoded file's readable column rows never
//! exceed its rows times its columns (a column row counted once).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((rows, readable)) = simrec::formats::elodin::decode_parquet(data.to_vec()) {
        // At most 4096 columns can fit in the inputs the fuzzer makes.
        assert!(
            readable <= rows.saturating_mul(4096),
            "{readable} of {rows}"
        );
    }
});
