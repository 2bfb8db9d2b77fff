//! Gzip events areas (spec §8) decompressed into what their packet declares and no more:
//! `events_bytes` is a claim (1 MB of gzip holds a gigabyte of zeros), so a buffer never
//! grows past it, and a large area is read an event at a time.

use std::io::{self, Cursor, Read};

use flate2::read::GzDecoder;

/// Bytes decompressed per read into a growing buffer or a window.
const STEP: usize = 64 << 10;

/// Decompresses `stored` into `out` (cleared), which never holds more than `declared`
/// bytes nor has room for more. Returns the bytes the member holds, `declared + 1` for
/// "more than declared".
pub fn exact(stored: &[u8], declared: usize, out: &mut Vec<u8>) -> io::Result<usize> {
    out.clear();
    let mut decoder = GzDecoder::new(stored);
    while out.len() < declared {
        if out.len() == out.capacity() {
            // Doubling, as a Vec grows, but never past the declared size.
            let more = out.len().max(STEP).min(declared - out.len());
            out.reserve_exact(more);
        }
        if read_into_spare(&mut decoder, out, declared)? == 0 {
            return Ok(out.len());
        }
    }
    let mut one = [0u8; 1];
    Ok(declared + read_some(&mut decoder, &mut one)?)
}

/// Bytes the member holds, counted up to `limit` without keeping them.
pub fn length(stored: &[u8], limit: u64) -> io::Result<u64> {
    io::copy(&mut GzDecoder::new(stored).take(limit), &mut io::sink())
}

/// Reads into `out`'s spare capacity (at most up to `cap` bytes in all); bytes read.
fn read_into_spare(decoder: &mut impl Read, out: &mut Vec<u8>, cap: usize) -> io::Result<usize> {
    let start = out.len();
    let end = out.capacity().min(cap);
    out.resize(end, 0);
    let n = read_some(decoder, &mut out[start..]);
    out.truncate(start + n.as_ref().map_or(0, |n| *n));
    n
}

/// One read, retried when interrupted.
fn read_some(decoder: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match decoder.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// An events area decompressed a window at a time: the caller keeps the window and asks
/// for the bytes it needs next, or passes over bytes it does not read.
pub struct Inflating {
    decoder: GzDecoder<Cursor<Vec<u8>>>,
}

impl Inflating {
    /// Over a copy of the stored bytes (the reader's input window moves on).
    pub fn new(stored: &[u8]) -> Inflating {
        Inflating {
            decoder: GzDecoder::new(Cursor::new(stored.to_vec())),
        }
    }

    /// Appends to `window` until it holds `need` bytes or the member ends.
    pub fn fill(&mut self, window: &mut Vec<u8>, need: usize) -> io::Result<()> {
        while window.len() < need {
            // Grown as bytes arrive (`need` comes from a length field), doubling from a step.
            let room = (need - window.len()).min(window.len().max(STEP));
            window.reserve(room);
            let cap = window.len() + room;
            if read_into_spare(&mut self.decoder, window, cap)? == 0 {
                break;
            }
        }
        Ok(())
    }

    /// Passes over the next `n` bytes of the member.
    pub fn skip(&mut self, n: u64) -> io::Result<u64> {
        io::copy(&mut (&mut self.decoder).take(n), &mut io::sink())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use flate2::Compression;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn a_buffer_never_has_room_past_the_declared_size() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let stored = gzip(&data);
        let mut out = Vec::new();
        assert_eq!(exact(&stored, data.len(), &mut out).unwrap(), data.len());
        assert_eq!(out, data);
        assert!(out.capacity() <= data.len());
        // Declared fewer: `declared + 1` says there is more, and no more is held.
        let mut out = Vec::new();
        assert_eq!(exact(&stored, 1000, &mut out).unwrap(), 1001);
        assert_eq!((out.len(), out.as_slice()), (1000, &data[..1000]));
        assert!(out.capacity() <= 1000);
        // Declared more: what there is.
        assert_eq!(exact(&stored, 400_000, &mut out).unwrap(), data.len());
        assert_eq!(length(&stored, u64::MAX).unwrap(), data.len() as u64);
        assert_eq!(length(&stored, 10).unwrap(), 10);
    }

    #[test]
    fn a_window_is_filled_and_passed_over() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 7) as u8).collect();
        let mut inflating = Inflating::new(&gzip(&data));
        let mut window = Vec::new();
        inflating.fill(&mut window, 10).unwrap();
        assert!(window.len() >= 10 && window.len() <= STEP + 10);
        assert_eq!(window[..10], data[..10]);
        let held = window.len() as u64;
        assert_eq!(inflating.skip(100_000).unwrap(), 100_000);
        window.clear();
        inflating.fill(&mut window, 3).unwrap();
        let at = (held + 100_000) as usize;
        assert_eq!(window[..3], data[at..at + 3]);
        // A need beyond the member gets what there is.
        inflating.fill(&mut window, usize::MAX / 2).unwrap();
        assert_eq!(window, data[at..]);
    }
}
