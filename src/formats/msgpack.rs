//! A bounds-checked msgpack walker over one buffer, for the formats that carry msgpack
//! (NanoVer's `.nanover.zip`, XREC event bodies): the head of a value (markers classified by
//! the `rmp` crate, lengths checked against the buffer before anything is taken), skipping a
//! value without decoding it, and string text. What a format decodes values into is its own.

use std::ops::Range;

use rmp::Marker;

use crate::formats::cursor::{Cursor, OutOfBounds};

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
    let mut c = Cursor::new(buf);
    c.set_pos(pos);
    c.array().map_err(cut)
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
    let mut c = Cursor::new(buf);
    c.set_pos(pos);
    let byte = c.u8().map_err(cut)?;
    // A string, bin or ext of `len` bytes from the cursor on (an ext's type byte first).
    let bytes = |c: &mut Cursor, len: usize| -> Result<Range<usize>, Error> {
        let (r, end) = span(buf, c.pos(), len)?;
        c.set_pos(end);
        Ok(r)
    };
    let ext = |c: &mut Cursor, len: usize| -> Result<Head, Error> {
        let ty = c.u8().map_err(cut)? as i8;
        Ok(Head::Ext(ty, bytes(c, len)?))
    };
    let u8_len = |c: &mut Cursor| c.u8().map(usize::from).map_err(cut);
    let u16_len = |c: &mut Cursor| c.u16_be().map(usize::from).map_err(cut);
    let u32_len = |c: &mut Cursor| c.u32_be().map(|n| n as usize).map_err(cut);
    let head = match Marker::from_u8(byte) {
        Marker::FixPos(v) => Head::UInt(u64::from(v)),
        Marker::FixNeg(v) => Head::Int(i64::from(v)),
        Marker::FixMap(n) => Head::Map(n as usize),
        Marker::FixArray(n) => Head::Array(n as usize),
        Marker::FixStr(n) => Head::Str(bytes(&mut c, n as usize)?),
        Marker::Null => Head::Nil,
        Marker::False => Head::Bool(false),
        Marker::True => Head::Bool(true),
        Marker::Bin8 | Marker::Str8 => {
            let len = u8_len(&mut c)?;
            str_or_bin(byte, bytes(&mut c, len)?)
        }
        Marker::Bin16 | Marker::Str16 => {
            let len = u16_len(&mut c)?;
            str_or_bin(byte, bytes(&mut c, len)?)
        }
        Marker::Bin32 | Marker::Str32 => {
            let len = u32_len(&mut c)?;
            str_or_bin(byte, bytes(&mut c, len)?)
        }
        Marker::FixExt1 => ext(&mut c, 1)?,
        Marker::FixExt2 => ext(&mut c, 2)?,
        Marker::FixExt4 => ext(&mut c, 4)?,
        Marker::FixExt8 => ext(&mut c, 8)?,
        Marker::FixExt16 => ext(&mut c, 16)?,
        Marker::Ext8 => {
            let len = u8_len(&mut c)?;
            ext(&mut c, len)?
        }
        Marker::Ext16 => {
            let len = u16_len(&mut c)?;
            ext(&mut c, len)?
        }
        Marker::Ext32 => {
            let len = u32_len(&mut c)?;
            ext(&mut c, len)?
        }
        Marker::F32 => Head::F32(c.f32_be().map_err(cut)?),
        Marker::F64 => Head::F64(c.f64_be().map_err(cut)?),
        Marker::U8 => Head::UInt(u64::from(c.u8().map_err(cut)?)),
        Marker::U16 => Head::UInt(u64::from(c.u16_be().map_err(cut)?)),
        Marker::U32 => Head::UInt(u64::from(c.u32_be().map_err(cut)?)),
        Marker::U64 => Head::UInt(c.u64_be().map_err(cut)?),
        Marker::I8 => Head::Int(i64::from(c.u8().map_err(cut)? as i8)),
        Marker::I16 => Head::Int(i64::from(c.u16_be().map_err(cut)? as i16)),
        Marker::I32 => Head::Int(i64::from(c.u32_be().map_err(cut)? as i32)),
        Marker::I64 => Head::Int(c.u64_be().map_err(cut)? as i64),
        Marker::Array16 => Head::Array(u16_len(&mut c)?),
        Marker::Array32 => Head::Array(u32_len(&mut c)?),
        Marker::Map16 => Head::Map(u16_len(&mut c)?),
        Marker::Map32 => Head::Map(u32_len(&mut c)?),
        Marker::Reserved => return err(pos, "byte 0xc1 is not a msgpack value"),
    };
    Ok((head, c.pos()))
}

/// A read past the end of the buffer, in the walker's words.
#[inline]
fn cut(e: OutOfBounds) -> Error {
    Error {
        at: e.at,
        what: CUT.to_string(),
    }
}

const CUT: &str = "the value is cut off by the end of its data";

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
        // A number, nil or bool (an array of coordinates is thousands of them) is stepped
        // over by its marker's size, without decoding its head.
        let next = match buf.get(p).and_then(|&marker| scalar_size(marker)) {
            Some(size) if size <= buf.len() - p => {
                pending -= 1;
                p + size
            }
            _ => {
                let (h, next) = head(buf, p)?;
                pending -= 1;
                match h {
                    Head::Array(n) => pending += n as u64,
                    Head::Map(n) => pending += 2 * n as u64,
                    _ => {}
                }
                next
            }
        };
        // Every value is at least one byte: a count beyond what is left cannot be real.
        if pending > (buf.len() - next) as u64 {
            return err(p, "a container claims more values than its data can hold");
        }
        p = next;
    }
    Ok(p)
}

/// Size in bytes, marker included, of a number, nil or bool with this marker.
#[inline]
fn scalar_size(marker: u8) -> Option<usize> {
    match marker {
        0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => Some(1),
        0xcc | 0xd0 => Some(2),
        0xcd | 0xd1 => Some(3),
        0xca | 0xce | 0xd2 => Some(5),
        0xcb | 0xcf | 0xd3 => Some(9),
        _ => None,
    }
}

/// A UTF-8 string head's text.
pub fn text(buf: &[u8], r: Range<usize>, at: usize) -> Result<&str, Error> {
    std::str::from_utf8(&buf[r]).or_else(|_| err(at, "a string is not valid UTF-8"))
}
