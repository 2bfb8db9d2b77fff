//! Parquet page headers (Thrift compact protocol), read here rather than by the parquet
//! crate so that every size a header claims is checked before anything is read or
//! allocated for it (the crate's page reader allocates `uncompressed_page_size` first).
//!
//! Only the fields simrec needs are kept; everything else (statistics, CRCs, index page
//! headers, unknown fields) is skipped, with nesting and lengths bounded by the bytes given.

use crate::formats::cursor;

/// Page types (parquet.thrift `PageType`).
pub const DATA_PAGE: i32 = 0;
pub const DICTIONARY_PAGE: i32 = 2;
pub const DATA_PAGE_V2: i32 = 3;

/// Encodings (parquet.thrift `Encoding`) that simrec hands to the decoder.
pub const PLAIN: i32 = 0;
pub const PLAIN_DICTIONARY: i32 = 2;
pub const RLE: i32 = 3;
pub const RLE_DICTIONARY: i32 = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DataHeader {
    pub num_values: i32,
    pub encoding: i32,
    /// v1: level encodings.
    pub def_encoding: i32,
    pub rep_encoding: i32,
    /// v2 only.
    pub num_nulls: i32,
    pub num_rows: i32,
    pub def_len: i32,
    pub rep_len: i32,
    pub is_compressed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DictHeader {
    pub num_values: i32,
    pub encoding: i32,
    pub is_sorted: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    Data(DataHeader),
    DataV2(DataHeader),
    Dictionary(DictHeader),
    /// An index page or a type simrec does not read.
    Other(i32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageHeader {
    /// Bytes of the header itself.
    pub header_len: usize,
    pub uncompressed_size: i32,
    pub compressed_size: i32,
    pub body: Body,
}

/// Why a header could not be read. `Short` means the bytes ended inside it: with more
/// bytes it might still be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderError {
    Short,
    Bad(String),
}

const MAX_DEPTH: u32 = 32;

// Compact protocol field types.
const T_BOOL_TRUE: u8 = 1;
const T_BOOL_FALSE: u8 = 2;
const T_BYTE: u8 = 3;
const T_I16: u8 = 4;
const T_I32: u8 = 5;
const T_I64: u8 = 6;
const T_DOUBLE: u8 = 7;
const T_BINARY: u8 = 8;
const T_LIST: u8 = 9;
const T_SET: u8 = 10;
const T_MAP: u8 = 11;
const T_STRUCT: u8 = 12;

/// The shared cursor, a read past the end [`HeaderError::Short`].
struct Cursor<'a>(cursor::Cursor<'a>);

fn bad(what: impl Into<String>) -> HeaderError {
    HeaderError::Bad(what.into())
}

impl Cursor<'_> {
    fn byte(&mut self) -> Result<u8, HeaderError> {
        self.0.u8().map_err(|_| HeaderError::Short)
    }

    fn skip(&mut self, n: usize) -> Result<(), HeaderError> {
        self.0.skip(n).map_err(|_| HeaderError::Short)
    }

    fn varint(&mut self) -> Result<u64, HeaderError> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(bad("a varint longer than 10 bytes"))
    }

    fn zigzag(&mut self) -> Result<i64, HeaderError> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    fn i32(&mut self) -> Result<i32, HeaderError> {
        let v = self.zigzag()?;
        i32::try_from(v).map_err(|_| bad(format!("{v} does not fit an i32 field")))
    }

    /// The next field: (id, type), or `None` at the end of the struct.
    fn field(&mut self, last: &mut i16) -> Result<Option<(i16, u8)>, HeaderError> {
        let b = self.byte()?;
        if b == 0 {
            return Ok(None);
        }
        let kind = b & 0x0f;
        let delta = b >> 4;
        let id = if delta == 0 {
            let v = self.zigzag()?;
            i16::try_from(v).map_err(|_| bad("a field id out of range"))?
        } else {
            last.checked_add(i16::from(delta))
                .ok_or_else(|| bad("a field id out of range"))?
        };
        *last = id;
        Ok(Some((id, kind)))
    }

    fn bool_field(&self, kind: u8) -> Result<bool, HeaderError> {
        match kind {
            T_BOOL_TRUE => Ok(true),
            T_BOOL_FALSE => Ok(false),
            _ => Err(bad("a bool field of another type")),
        }
    }

    fn skip_value(&mut self, kind: u8, depth: u32) -> Result<(), HeaderError> {
        if depth > MAX_DEPTH {
            return Err(bad("nested too deeply"));
        }
        match kind {
            T_BOOL_TRUE | T_BOOL_FALSE => Ok(()),
            T_BYTE => self.skip(1),
            T_I16 | T_I32 | T_I64 => self.varint().map(drop),
            T_DOUBLE => self.skip(8),
            T_BINARY => {
                let n = self.varint()?;
                self.skip(usize::try_from(n).map_err(|_| HeaderError::Short)?)
            }
            T_LIST | T_SET => {
                let b = self.byte()?;
                let elem = b & 0x0f;
                let n = match b >> 4 {
                    15 => self.varint()?,
                    n => u64::from(n),
                };
                for _ in 0..n {
                    // Booleans in lists take a byte each.
                    if elem == T_BOOL_TRUE || elem == T_BOOL_FALSE {
                        self.skip(1)?;
                    } else {
                        self.skip_value(elem, depth + 1)?;
                    }
                }
                Ok(())
            }
            T_MAP => {
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                let kinds = self.byte()?;
                for _ in 0..n {
                    for kind in [kinds >> 4, kinds & 0x0f] {
                        if kind == T_BOOL_TRUE || kind == T_BOOL_FALSE {
                            self.skip(1)?;
                        } else {
                            self.skip_value(kind, depth + 1)?;
                        }
                    }
                }
                Ok(())
            }
            T_STRUCT => {
                let mut last = 0;
                while let Some((_, k)) = self.field(&mut last)? {
                    self.skip_value(k, depth + 1)?;
                }
                Ok(())
            }
            other => Err(bad(format!("unknown field type {other}"))),
        }
    }

    fn data_header(&mut self, v2: bool) -> Result<DataHeader, HeaderError> {
        let mut h = DataHeader {
            is_compressed: true,
            ..DataHeader::default()
        };
        let mut seen = 0u8;
        let mut last = 0;
        while let Some((id, kind)) = self.field(&mut last)? {
            match (v2, id, kind) {
                (_, 1, T_I32) => {
                    h.num_values = self.i32()?;
                    seen |= 1;
                }
                (false, 2, T_I32) | (true, 4, T_I32) => {
                    h.encoding = self.i32()?;
                    seen |= 2;
                }
                (false, 3, T_I32) => h.def_encoding = self.i32()?,
                (false, 4, T_I32) => h.rep_encoding = self.i32()?,
                (true, 2, T_I32) => h.num_nulls = self.i32()?,
                (true, 3, T_I32) => h.num_rows = self.i32()?,
                (true, 5, T_I32) => h.def_len = self.i32()?,
                (true, 6, T_I32) => h.rep_len = self.i32()?,
                (true, 7, k) => h.is_compressed = self.bool_field(k)?,
                (_, _, k) => self.skip_value(k, 1)?,
            }
        }
        if seen != 3 {
            return Err(bad("a data page header without num_values or encoding"));
        }
        Ok(h)
    }

    fn dict_header(&mut self) -> Result<DictHeader, HeaderError> {
        let mut h = DictHeader::default();
        let mut seen = 0u8;
        let mut last = 0;
        while let Some((id, kind)) = self.field(&mut last)? {
            match (id, kind) {
                (1, T_I32) => {
                    h.num_values = self.i32()?;
                    seen |= 1;
                }
                (2, T_I32) => {
                    h.encoding = self.i32()?;
                    seen |= 2;
                }
                (3, k) => h.is_sorted = self.bool_field(k)?,
                (_, k) => self.skip_value(k, 1)?,
            }
        }
        if seen != 3 {
            return Err(bad(
                "a dictionary page header without num_values or encoding",
            ));
        }
        Ok(h)
    }
}

/// Walks the Thrift struct at the start of `bytes` (a Parquet footer) without decoding it:
/// the bytes it takes. Every list or map element takes at least one byte here (booleans in
/// containers take one, as the compact protocol has it), so element counts are bounded by
/// the bytes that exist: the parquet crate's own skipping takes none for a boolean in a
/// map, so a footer claiming a map of 2³⁰ boolean pairs kept it counting for seconds (a
/// timeout under the fuzzer) before it failed.
pub fn walk_struct(bytes: &[u8]) -> Result<usize, HeaderError> {
    let mut c = Cursor(cursor::Cursor::new(bytes));
    c.skip_value(T_STRUCT, 0)?;
    Ok(c.0.pos())
}

/// Reads the page header at the start of `bytes`.
pub fn page_header(bytes: &[u8]) -> Result<PageHeader, HeaderError> {
    let mut c = Cursor(cursor::Cursor::new(bytes));
    let (mut kind, mut uncompressed, mut compressed) = (None, None, None);
    let (mut data, mut data_v2, mut dict) = (None, None, None);
    let mut last = 0;
    while let Some((id, t)) = c.field(&mut last)? {
        match (id, t) {
            (1, T_I32) => kind = Some(c.i32()?),
            (2, T_I32) => uncompressed = Some(c.i32()?),
            (3, T_I32) => compressed = Some(c.i32()?),
            (5, T_STRUCT) => data = Some(c.data_header(false)?),
            (7, T_STRUCT) => dict = Some(c.dict_header()?),
            (8, T_STRUCT) => data_v2 = Some(c.data_header(true)?),
            (_, t) => c.skip_value(t, 0)?,
        }
    }
    let (Some(kind), Some(uncompressed_size), Some(compressed_size)) =
        (kind, uncompressed, compressed)
    else {
        return Err(bad("a page header without type or sizes"));
    };
    if uncompressed_size < 0 || compressed_size < 0 {
        return Err(bad(format!(
            "negative page sizes ({compressed_size} compressed, {uncompressed_size} uncompressed)"
        )));
    }
    let missing = |what: &str| bad(format!("a {what} page without its header"));
    let body = match kind {
        DATA_PAGE => Body::Data(data.ok_or_else(|| missing("data"))?),
        DATA_PAGE_V2 => Body::DataV2(data_v2.ok_or_else(|| missing("data v2"))?),
        DICTIONARY_PAGE => Body::Dictionary(dict.ok_or_else(|| missing("dictionary"))?),
        other => Body::Other(other),
    };
    Ok(PageHeader {
        header_len: c.0.pos(),
        uncompressed_size,
        compressed_size,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A v1 data page header as arrow-rs writes it: type 0, sizes, data_page_header
    /// {num_values 3, encoding PLAIN, RLE, RLE}.
    fn sample() -> Vec<u8> {
        vec![
            0x15, 0x00, // 1: i32 0
            0x15, 0x18, // 2: i32 12
            0x15, 0x1a, // 3: i32 13
            0x2c, // 5: struct
            0x15, 0x06, // 1: i32 3
            0x15, 0x00, // 2: i32 0
            0x15, 0x06, // 3: i32 3
            0x15, 0x06, // 4: i32 3
            0x00, 0x00,
        ]
    }

    #[test]
    fn reads_a_data_page_header_and_rejects_every_cut() {
        let b = sample();
        let h = page_header(&b).unwrap();
        assert_eq!(h.header_len, b.len());
        assert_eq!((h.uncompressed_size, h.compressed_size), (12, 13));
        let Body::Data(d) = h.body else {
            panic!("{h:?}")
        };
        assert_eq!((d.num_values, d.encoding, d.def_encoding), (3, PLAIN, RLE));
        for cut in 0..b.len() {
            assert_eq!(page_header(&b[..cut]), Err(HeaderError::Short), "{cut}");
        }
    }

    #[test]
    fn bounds_nesting_and_varints() {
        // A field of type struct nested 100 deep.
        let mut b = vec![0x15, 0x00, 0x15, 0x00, 0x15, 0x00];
        b.extend(std::iter::repeat_n(0x9c, 100));
        assert!(matches!(page_header(&b), Err(HeaderError::Bad(_))));
        let long = [
            0x15, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ];
        assert!(matches!(page_header(&long), Err(HeaderError::Bad(_))));
    }
}
