//! Which of the writer's schemes a capture is stored in, so that `recover` writes it back the
//! same way: a walk over the first top-level packet headers.

use super::decode::R_COLLATED;
use super::packet::{PacketHeader, HEADER_LEN};
use super::writer::Compression3es;
use crate::formats::input::Input;

/// Top-level packets looked at. Writers keep one scheme from the start of a capture, so the
/// first packets tell; a capture that only starts compressing its collated bodies later is
/// called `collated`.
const LOOK: usize = 4096;

/// The scheme of the capture in `input`: whole-file gzip when gzip magic starts a top-level
/// packet, collated + gzip when a collated packet has the Compress flag, collated when there
/// are collated packets, plain otherwise. Damage ends the walk; what was seen before decides.
pub fn scheme_of(input: &mut Input) -> Compression3es {
    // Headers only: do not read the bodies of large packets ahead.
    input.set_read_ahead(4096);
    let len = input.len();
    let mut pos = 0u64;
    let mut collated = false;
    for _ in 0..LOOK {
        let n = (len.saturating_sub(pos)).min(HEADER_LEN as u64 + 2) as usize;
        let Ok(head) = input.bytes(pos, n) else {
            break;
        };
        if head.starts_with(&[0x1f, 0x8b]) {
            return Compression3es::FileGzip;
        }
        let Some(h) = PacketHeader::parse(head) else {
            break;
        };
        if h.routing_id == R_COLLATED {
            collated = true;
            // The collated header's flags follow the packet header (spec §6.4).
            if head.len() >= HEADER_LEN + 2 && head[HEADER_LEN + 1] & 1 != 0 {
                return Compression3es::CollatedGzip;
            }
        }
        pos += h.packet_len() as u64;
    }
    if collated {
        Compression3es::Collated
    } else {
        Compression3es::Plain
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::tes::packet::{build, control_payload};

    #[test]
    fn schemes_by_their_first_packets() {
        let frame = build(2, 1, &control_payload(0, 0, 0));
        let collated = |flags: u8| build(R_COLLATED, 0, &[0, flags, 0, 0, 0, 0, 0, 0]);
        let of = |b: Vec<u8>| scheme_of(&mut Input::from_bytes(b));
        assert_eq!(of(frame.repeat(3)), Compression3es::Plain);
        assert_eq!(
            of([frame.clone(), collated(0)].concat()),
            Compression3es::Collated
        );
        assert_eq!(
            of([frame.clone(), collated(0), collated(1)].concat()),
            Compression3es::CollatedGzip
        );
        assert_eq!(
            of([frame.clone(), vec![0x1f, 0x8b, 8, 0]].concat()),
            Compression3es::FileGzip
        );
        // Damage ends the walk: what came before decides.
        assert_eq!(
            of([collated(0), vec![0; 20], collated(1)].concat()),
            Compression3es::Collated
        );
        assert_eq!(of(Vec::new()), Compression3es::Plain);
    }
}
