//! A bounds-checked msgpack walker over one buffer, for the formats that carry msgpack
//! (NanoVer's `.nanover.zip`, XREC event bodies): the head of a value (markers classified by
//! the `rmp` crate, lengths checked against the buffer before anything is taken), skipping a
//! value without decoding it, and string text. What a format decodes values into is its own.

use std::ops::Range;

use rmp::Marker;

/// What went wrong, at which byte of the buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub at: usize,
    pub what: String,
}

pub fn err<T>(at: usize, what: impl Into<String>) -> Result<T, Error> {
    Err(Error {
        at,
        what: what.into(),
    })
}

/// The head of one value: scalars complete, containers with their length, byte
/// strings as ranges of the buffer.
#[derive(Debug, Clone, PartialEq)]
pub enum Head {
    Nil,
    Bool(bool),
    Int(i64),
    UInt(u64),
    F32(f32),
    F64(f64),
    Str(Range<usize>),
    Bin(Range<usize>),
    Array(usize),
    Map(usize),
    Ext(i8, Range<usize>),
}

/// The `N` bytes at `pos`.
#[inline]
pub fn take<const N: usize>(buf: &[u8], pos: usize) -> Result<[u8; N], Error> {
    buf.get(pos..pos + N)
        .and_then(|s| s.try_into().ok())
        .map_or_else(
            || err(pos, "the value is cut off by the end of its data"),
            Ok,
        )
}

#[inline]
fn span(buf: &[u8], start: usize, len: usize) -> Result<(Range<usize>, usize), Error> {
    match start.checked_add(len) {
        Some(end) if end <= buf.len() => Ok((start..end, end)),
        _ => err(
            start,
            format!(
                "a length of {len} bytes runs past the end of its data ({} bytes left)",
                buf.len().saturating_sub(start)
            ),
        ),
    }
}

/// Reads the head of the value at `pos`: (head, position after the head). For strings,
/// bins and exts the position is after their bytes; for containers, at the first element.
// Inlined into every caller: the XREC body decoder reads a head per value, and a call that
// returns this `Result` through memory cost much more CPU (docs/performance.md, "MAGES XR
// Recorder `.xrec`").
#[inline(always)]
pub fn head(buf: &[u8], pos: usize) -> Result<(Head, usize), Error> {
    let Some(&byte) = buf.get(pos) else {
        return err(pos, "the value is cut off by the end of its data");
    };
    let p = pos + 1;
    let u8_at = |at| take::<1>(buf, at).map(|b| b[0] as usize);
    let u16_at = |at| take::<2>(buf, at).map(|b| u16::from_be_bytes(b) as usize);
    let u32_at = |at| take::<4>(buf, at).map(|b| u32::from_be_bytes(b) as usize);
    let bytes = |len: usize, start: usize| span(buf, start, len);
    let ext = |len: usize, start: usize| -> Result<(Head, usize), Error> {
        let ty = take::<1>(buf, start)?[0] as i8;
        let (r, end) = span(buf, start + 1, len)?;
        Ok((Head::Ext(ty, r), end))
    };
    Ok(match Marker::from_u8(byte) {
        Marker::FixPos(v) => (Head::UInt(u64::from(v)), p),
        Marker::FixNeg(v) => (Head::Int(i64::from(v)), p),
        Marker::FixMap(n) => (Head::Map(n as usize), p),
        Marker::FixArray(n) => (Head::Array(n as usize), p),
        Marker::FixStr(n) => {
            let (r, end) = bytes(n as usize, p)?;
            (Head::Str(r), end)
        }
        Marker::Null => (Head::Nil, p),
        Marker::False => (Head::Bool(false), p),
        Marker::True => (Head::Bool(true), p),
        Marker::Bin8 | Marker::Str8 => {
            let (r, end) = bytes(u8_at(p)?, p + 1)?;
            (str_or_bin(byte, r), end)
        }
        Marker::Bin16 | Marker::Str16 => {
            let (r, end) = bytes(u16_at(p)?, p + 2)?;
            (str_or_bin(byte, r), end)
        }
        Marker::Bin32 | Marker::Str32 => {
            let (r, end) = bytes(u32_at(p)?, p + 4)?;
            (str_or_bin(byte, r), end)
        }
        Marker::FixExt1 => ext(1, p)?,
        Marker::FixExt2 => ext(2, p)?,
        Marker::FixExt4 => ext(4, p)?,
        Marker::FixExt8 => ext(8, p)?,
        Marker::FixExt16 => ext(16, p)?,
        Marker::Ext8 => ext(u8_at(p)?, p + 1)?,
        Marker::Ext16 => ext(u16_at(p)?, p + 2)?,
        Marker::Ext32 => ext(u32_at(p)?, p + 4)?,
        Marker::F32 => (Head::F32(f32::from_be_bytes(take(buf, p)?)), p + 4),
        Marker::F64 => (Head::F64(f64::from_be_bytes(take(buf, p)?)), p + 8),
        Marker::U8 => (Head::UInt(u64::from(take::<1>(buf, p)?[0])), p + 1),
        Marker::U16 => (
            Head::UInt(u64::from(u16::from_be_bytes(take(buf, p)?))),
            p + 2,
        ),
        Marker::U32 => (
            Head::UInt(u64::from(u32::from_be_bytes(take(buf, p)?))),
            p + 4,
        ),
        Marker::U64 => (Head::UInt(u64::from_be_bytes(take(buf, p)?)), p + 8),
        Marker::I8 => (Head::Int(i64::from(take::<1>(buf, p)?[0] as i8)), p + 1),
        Marker::I16 => (
            Head::Int(i64::from(i16::from_be_bytes(take(buf, p)?))),
            p + 2,
        ),
        Marker::I32 => (
            Head::Int(i64::from(i32::from_be_bytes(take(buf, p)?))),
            p + 4,
        ),
        Marker::I64 => (Head::Int(i64::from_be_bytes(take(buf, p)?)), p + 8),
        Marker::Array16 => (Head::Array(u16_at(p)?), p + 2),
        Marker::Array32 => (Head::Array(u32_at(p)?), p + 4),
        Marker::Map16 => (Head::Map(u16_at(p)?), p + 2),
        Marker::Map32 => (Head::Map(u32_at(p)?), p + 4),
        Marker::Reserved => return err(pos, "byte 0xc1 is not a msgpack value"),
    })
}

fn str_or_bin(marker: u8, r: Range<usize>) -> Head {
    if (0xc4..=0xc6).contains(&marker) {
        Head::Bin(r)
    } else {
        Head::Str(r)
    }
}

/// Position after the value at `pos`, without decoding it.
pub fn skip(buf: &[u8], pos: usize) -> Result<usize, Error> {
    // Containers are walked with a counter of values still to skip, not recursion.
    let mut pending: u64 = 1;
    let mut p = pos;
    while pending > 0 {
        let (h, next) = head(buf, p)?;
        pending -= 1;
        match h {
            Head::Array(n) => pending += n as u64,
            Head::Map(n) => pending += 2 * n as u64,
            _ => {}
        }
        // Every value is at least one byte: a count beyond what is left cannot be real.
        if pending > (buf.len() - next) as u64 {
            return err(p, "a container claims more values than its data can hold");
        }
        p = next;
    }
    Ok(p)
}

/// A UTF-8 string head's text.
pub fn text(buf: &[u8], r: Range<usize>, at: usize) -> Result<&str, Error> {
    std::str::from_utf8(&buf[r]).or_else(|_| err(at, "a string is not valid UTF-8"))
}
