//! The read options the library tests ask for again and again.

use simrec::formats::ReadOptions;

/// A read that decodes payloads (or only walks the framing) and stops at damage (or goes on
/// past it, noting findings).
pub fn read_options(decode: bool, lenient: bool) -> ReadOptions {
    ReadOptions {
        decode,
        lenient,
        ..ReadOptions::default()
    }
}

/// A decoding read that goes on past damage, as `validate` reads.
pub fn lenient() -> ReadOptions {
    read_options(true, true)
}
