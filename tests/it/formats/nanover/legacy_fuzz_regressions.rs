//! Inputs the fuzzer once broke an invariant with (fixtures/nanover-legacy/fuzz-regressions/).

use std::path::Path;

use simrec::formats::nanover::legacy::wire::{self, Decoder, Strictness};
use simrec::formats::nanover::legacy::{LegacyReader, Stream};

use crate::util;

fn regression(name: &str) -> Vec<u8> {
    std::fs::read(Path::new("fixtures/nanover-legacy/fuzz-regressions").join(name)).unwrap()
}

/// `08 00 … 08 ff ff ff ff 0f`: field 1 twice. protobuf's last value wins (4294967295), so the
/// header-only walk must not trust the first one (0, a reset).
#[test]
fn a_repeated_frame_index_is_not_peeked() {
    let payload = regression("peek-repeated-frame-index.bin");
    let mut notes = Vec::new();
    let full = Decoder::new(Strictness::Lenient, &mut notes).frame_response(&payload);
    let head = &payload[..payload.len().min(wire::PEEK_LEN)];
    let peeked = wire::peek_frame_index(head, payload.len());
    assert_eq!(peeked, None);
    if let Ok(frame) = full {
        assert_eq!(frame.frame_index, u32::MAX);
    }
    // Inside a file, the header walk and the full decode agree on the record's frame index.
    let mut file = 6661355757386708963u64.to_le_bytes().to_vec();
    file.extend(2u64.to_le_bytes());
    file.extend(1000u128.to_le_bytes());
    file.extend((payload.len() as u64).to_le_bytes());
    file.extend(&payload);
    let frames = |decode| {
        let options = util::read_options(decode, true);
        LegacyReader::from_bytes(
            file.clone(),
            Path::new("f.traj"),
            Some(Stream::Frames),
            options,
        )
        .unwrap()
        .filter_map(|r| r.ok())
        .map(|r| r.frame)
        .collect::<Vec<_>>()
    };
    assert_eq!(frames(false), frames(true));
}
