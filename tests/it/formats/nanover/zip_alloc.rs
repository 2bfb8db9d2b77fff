//! Lengths that claim more than the data holds: msgpack containers and index entries
//! must not be pre-sized by their claimed count (spec nanover-zip §15; DESIGN invariant
//! 4). `util::alloc` notes the largest single allocation.

use std::path::Path;

use simrec::formats::input::Input;
use simrec::formats::nanover::zip::msgpack::{self, Oddities};
use simrec::formats::nanover::zip::ZipReader;
use simrec::formats::ReadError;

use crate::util;
use crate::util::alloc::measure;
use crate::util::nanover_zip_archive as archive;

/// The largest single allocation `f` makes, and its result.
fn largest<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let (out, allocated) = measure(f);
    (allocated.largest, out)
}

const MIB: usize = 1 << 20;

/// A container head claiming `n` elements, then `junk` bytes that are not msgpack
/// (0xc1 is never a value).
fn claiming(marker: u8, n: u32, junk: usize) -> Vec<u8> {
    let mut b = vec![marker];
    b.extend_from_slice(&n.to_be_bytes());
    b.extend(std::iter::repeat_n(0xc1, junk));
    b
}

#[test]
fn claimed_counts_never_size_an_allocation() {
    let mut odd = Oddities::default();

    // A map claiming 2^32-1 entries in five bytes fails at once, allocating only its
    // error message.
    let (big, r) = largest(|| msgpack::value(&[0xdf, 0xff, 0xff, 0xff, 0xff], 0, &mut odd, 0));
    assert!(r.is_err());
    assert!(big < 256, "largest allocation {big} bytes");

    // An array claiming one element per byte that follows (a count its data could hold
    // if every element were one byte), then nothing valid: decoded elements are tens of
    // bytes each, so pre-sizing by the count would take 30-60 MiB here.
    let bytes = claiming(0xdd, MIB as u32, MIB);
    let (big, r) = largest(|| msgpack::value(&bytes, 0, &mut odd, 0));
    assert_eq!(r.unwrap_err().what, "byte 0xc1 is not a msgpack value");
    assert!(big <= MIB, "largest allocation {big} bytes");

    // The same for a map (two bytes per entry at least), with a valid first key.
    let mut bytes = claiming(0xdf, (MIB / 2) as u32, 0);
    bytes.extend_from_slice(b"\xa1k");
    bytes.extend(std::iter::repeat_n(0xc1, MIB));
    let (big, r) = largest(|| msgpack::value(&bytes, 0, &mut odd, 0));
    assert!(r.is_err());
    assert!(big <= MIB, "largest allocation {big} bytes");

    // Containers nested as deep as allowed, each claiming what is left: each is sized
    // by the bytes left, so together they stay within a few times the input.
    let mut nested = Vec::new();
    for _ in 0..msgpack::MAX_DEPTH {
        nested.extend_from_slice(&[0xdd, 0, 0, 0x10, 0]);
    }
    nested.extend(std::iter::repeat_n(0xc1, 4096));
    let (big, r) = largest(|| msgpack::value(&nested, 0, &mut odd, 0));
    assert!(r.is_err());
    assert!(big <= nested.len(), "largest allocation {big} bytes");

    // An index whose one entry is an array claiming as many elements as the index has
    // bytes (4 MiB): the index reader widens its window to the whole member to find the
    // entry's end, and then must not size a vector by the claim.
    let mut index = vec![0x91];
    index.extend(claiming(0xdd, (4 * MIB) as u32, 4 * MIB));
    let file = archive(&[], &index);
    let input = Input::from_bytes(file);
    let options = util::lenient();
    let (big, r) = largest(|| ZipReader::new(Path::new("t.nanover.zip"), input, options));
    match r {
        Ok(reader) => {
            let codes: Vec<&str> = simrec::formats::Source::findings(&reader)[0]
                .1
                .list()
                .iter()
                .map(|f| f.code)
                .collect();
            assert!(codes.contains(&"NVZIP_INDEX_DECODE"), "{codes:?}");
        }
        Err(ReadError::Invalid { finding, .. }) => assert_eq!(finding.code, "NVZIP_INDEX_DECODE"),
        Err(e) => panic!("{e}"),
    }
    assert!(big <= 5 * MIB, "largest allocation {big} bytes");
}
