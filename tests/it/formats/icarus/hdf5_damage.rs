//! Damaged Icarus HDF5 files (DESIGN invariant 4): every byte-truncation of the small h5py
//! fixture and 1000 bit-flipped copies (fixed seed) read to a clean result or a clean
//! error, never a panic, and never allocate more than the file's size at once. And an intact
//! file read with recycling allocates per window of frames, not per value.

use std::path::Path;

use simrec::formats::icarus::hdf5::read_all;

use crate::util;
use crate::util::alloc::measure;
use crate::util::any_fixture_bytes;

fn small() -> Vec<u8> {
    any_fixture_bytes("icarus-hdf5/small.h5")
}

/// Reads `bytes` as the reader does; the largest allocation, beyond the copy of the bytes
/// handed to it, and the outcome.
fn damaged(bytes: Vec<u8>) -> (usize, Result<(u64, u64), String>) {
    let (out, allocated) = measure(|| read_all(bytes));
    (allocated.largest, out)
}

#[test]
fn every_truncation_is_a_clean_result() {
    let whole = small();
    let (_, intact) = damaged(whole.clone());
    // 3 frames of 2 signals; the findings: NO_EPOCH.
    assert_eq!(intact, Ok((6, 1)));
    let mut errors = 0;
    let mut partial = 0;
    for len in 0..whole.len() {
        let (big, out) = damaged(whole[..len].to_vec());
        assert!(
            big <= whole.len(),
            "cut at {len}: an allocation of {big} bytes, the file has {}",
            whole.len()
        );
        match out {
            Err(_) => errors += 1,
            Ok((records, _)) => {
                assert!(records <= 6, "cut at {len}: {records} records");
                partial += 1;
            }
        }
    }
    // Every cut loses the end of the file, where h5py put chunks: some open with errors.
    assert_eq!(errors + partial, whole.len());
    assert!(errors > 0);
}

/// A small deterministic generator (xorshift64*), so the flipped bits are the same on every
/// run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn a_thousand_bit_flips_are_clean_results() {
    let whole = small();
    let mut rng = Rng(0x1ca2_05f1_1e5e_ed00);
    let mut outcomes = [0u32; 2];
    for i in 0..1000 {
        let mut bytes = whole.clone();
        // One to three flipped bits per copy.
        for _ in 0..=(rng.next() % 3) {
            let at = (rng.next() % bytes.len() as u64) as usize;
            bytes[at] ^= 1 << (rng.next() % 8);
        }
        let (big, out) = damaged(bytes);
        assert!(
            big <= whole.len(),
            "copy {i}: an allocation of {big} bytes, the file has {}",
            whole.len()
        );
        outcomes[usize::from(out.is_ok())] += 1;
    }
    // Most flips land in chunk padding (h5py allocates whole chunks of 1000 rows).
    assert!(outcomes[1] > 500, "{outcomes:?}");
}

#[test]
fn reading_with_recycling_allocates_per_window_not_per_value() {
    use simrec::formats::icarus::hdf5::{Bytes, IcarusH5Reader};
    use simrec::formats::{ReadOptions, Source};
    let bytes = any_fixture_bytes("icarus-hdf5/vulcan.h5");
    let mut r = IcarusH5Reader::from_bytes(
        Path::new("vulcan.h5"),
        Bytes::from_vec(bytes),
        ReadOptions::default(),
    )
    .unwrap();
    let (records, allocated) = measure(|| {
        let mut records = 0u64;
        while let Some(rec) = r.next() {
            r.recycle(rec.unwrap());
            records += 1;
        }
        records
    });
    let allocations = allocated.allocations;
    // 20,000 records of 8 signals in 3 windows: the first record of each channel, and what
    // hdf5-pure does per window, allocate; nothing per value.
    assert_eq!(records, 20_000);
    assert!(
        allocations < 200,
        "{allocations} allocations for {records} records"
    );
}

/// The hostile files of issue 27, item C (`fixtures/icarus-hdf5/hostile`, in the fuzz corpus
/// too): datasets declaring 10^12 rows in gzip or big-endian storage. Each read ends, its
/// records bounded by the chunks written, and allocates nothing near what they declare.
#[test]
fn hostile_declared_lengths_end_without_large_allocations() {
    use simrec::formats::icarus::hdf5::{Bytes, IcarusH5Reader};

    let dir = crate::util::any_fixture("icarus-hdf5/hostile");
    // (records, findings kept): the storage warnings or errors, the missing schema, the
    // missing epoch; gzip-tail's 50 unwritten rows of its last chunk read as 0 and break
    // the time rules (1 error, 49 equal times).
    for (name, want) in [
        ("hang.h5", (0, 4)),
        ("hang-fixed-array.h5", (0, 4)),
        ("gzip-tail.h5", (300, 54)),
        ("huge-chunk.h5", (0, 4)),
        ("big-endian-contiguous.h5", (0, 4)),
        ("big-endian-chunked.h5", (0, 4)),
    ] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        // A bounded look first: a reader that trusts the declared lengths never ends.
        let mut r = IcarusH5Reader::from_bytes(
            Path::new(name),
            Bytes::from_vec(bytes.clone()),
            util::lenient(),
        )
        .unwrap();
        assert!(
            r.by_ref().take(1000).count() < 1000,
            "{name}: it does not end"
        );
        let (big, out) = damaged(bytes);
        assert_eq!(out, Ok(want), "{name}");
        assert!(big <= 1 << 20, "{name}: an allocation of {big} bytes");
    }
}
