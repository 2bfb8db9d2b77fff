//! One bounds-checked cursor over a byte slice, for the parts of a format decoded by hand
//! (XREC payloads and bodies, 3es packets, NanoVer's legacy protobuf wire, Parquet's Thrift
//! footer). A read past the end is an [`OutOfBounds`] carrying where and how much: each
//! format turns that into its own error, with its own words.
//!
//! Every method is `#[inline]`: readers call them once per value in their hot loops, where a
//! call that returns a `Result` through memory costs more than the read itself.

/// A read that wanted more bytes than remain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{wanted} bytes wanted at byte {at}, {available} available")]
pub struct OutOfBounds {
    /// Offset of the read in the cursor's slice.
    pub at: usize,
    pub wanted: usize,
    pub available: usize,
}

/// A position in a byte slice, moved by each read.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// Fixed-width numbers in one byte order: `u32_le`, `f64_be`, …
macro_rules! numbers {
    ($($name:ident: $ty:ty = $from:ident;)*) => {$(
        #[inline]
        pub fn $name(&mut self) -> Result<$ty, OutOfBounds> {
            self.array().map(<$ty>::$from)
        }
    )*};
}

impl<'a> Cursor<'a> {
    #[inline]
    pub fn new(buf: &'a [u8]) -> Cursor<'a> {
        Cursor { buf, pos: 0 }
    }

    /// Offset of the next read in the slice.
    #[inline]
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Moves to `pos` (a format that looked ahead and steps back, or a walker that
    /// computed where the next value starts). Past the end, reads fail.
    #[inline]
    pub fn set_pos(&mut self, pos: usize) {
        self.pos = pos;
    }

    /// The whole slice, read or not.
    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        self.buf
    }

    /// The bytes not yet read.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// The next byte, not taken.
    #[inline]
    pub fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    #[inline]
    fn short(&self, wanted: usize) -> OutOfBounds {
        OutOfBounds {
            at: self.pos,
            wanted,
            available: self.remaining(),
        }
    }

    /// The next `n` bytes.
    #[inline]
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], OutOfBounds> {
        let at = self.pos;
        match at.checked_add(n).and_then(|end| self.buf.get(at..end)) {
            Some(s) => {
                self.pos = at + n;
                Ok(s)
            }
            None => Err(self.short(n)),
        }
    }

    #[inline]
    pub fn skip(&mut self, n: usize) -> Result<(), OutOfBounds> {
        self.take(n).map(drop)
    }

    /// The next `N` bytes, as an array.
    #[inline]
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], OutOfBounds> {
        let at = self.pos;
        match self.buf.get(at..).and_then(|s| s.first_chunk::<N>()) {
            Some(a) => {
                self.pos = at + N;
                Ok(*a)
            }
            None => Err(self.short(N)),
        }
    }

    #[inline]
    pub fn u8(&mut self) -> Result<u8, OutOfBounds> {
        match self.buf.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.short(1)),
        }
    }

    numbers! {
        u16_le: u16 = from_le_bytes;
        u32_le: u32 = from_le_bytes;
        u64_le: u64 = from_le_bytes;
        i64_le: i64 = from_le_bytes;
        f64_le: f64 = from_le_bytes;
        u16_be: u16 = from_be_bytes;
        u32_be: u32 = from_be_bytes;
        u64_be: u64 = from_be_bytes;
        f32_be: f32 = from_be_bytes;
        f64_be: f64 = from_be_bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_byte_orders_and_stops_at_the_end() {
        let mut c = Cursor::new(&[1, 0, 0, 1, 7]);
        assert_eq!(c.u16_le(), Ok(1));
        assert_eq!(c.u16_be(), Ok(1));
        assert_eq!(c.remaining(), 1);
        assert_eq!(
            c.u32_le(),
            Err(OutOfBounds {
                at: 4,
                wanted: 4,
                available: 1
            })
        );
        // A failed read takes nothing.
        assert_eq!(c.pos(), 4);
        assert_eq!(c.u8(), Ok(7));
        assert!(c.is_empty());
        assert_eq!(c.take(usize::MAX).unwrap_err().available, 0);
        assert_eq!(c.rest(), &[] as &[u8]);
    }

    #[test]
    fn floats_and_rewinds() {
        let mut bytes = 1.5f64.to_le_bytes().to_vec();
        bytes.extend(2.5f32.to_be_bytes());
        let mut c = Cursor::new(&bytes);
        assert_eq!(c.f64_le(), Ok(1.5));
        assert_eq!(c.f32_be(), Ok(2.5));
        c.set_pos(0);
        assert_eq!(c.take(2).map(<[u8]>::len), Ok(2));
        assert_eq!(c.pos(), 2);
    }
}
