//! Any bytes as a `.nanover.zip`: the container (stored or deflated members), the index
//! and every message, read strictly and leniently, with and without decoding, must give
//! records or a clean finding, never a panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use simrec::formats::input::Input;
use simrec::formats::nanover::zip::ZipReader;
use simrec::formats::{ReadError, ReadOptions};

fuzz_target!(|data: &[u8]| {
    for (decode, lenient) in [(true, false), (false, true), (true, true)] {
        let options = ReadOptions {
            decode,
            lenient,
            until_damage: false,
            assume_version: None,
            deep: false,
            epoch: None,
            time_system: None,
            check_only: false,
            discontinuity: None,
        };
        match ZipReader::new(Path::new("fuzz"), Input::from_bytes(data.to_vec()), options) {
            Ok(reader) => {
                for r in reader {
                    match r {
                        Ok(_) => {}
                        Err(ReadError::Invalid { .. }) => break,
                        Err(e) => panic!("not a clean finding: {e:?}"),
                    }
                }
            }
            Err(ReadError::Invalid { .. }) => {}
            Err(e) => panic!("not a clean finding: {e:?}"),
        }
    }
});
