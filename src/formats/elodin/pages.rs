//! The pages of a Parquet file, read and checked by simrec and handed to the parquet crate
//! decompressed, as its `RowGroups` / `PageReader` interfaces allow.
//!
//! The crate's own page reader trusts what headers and pages say: it allocates a page's
//! claimed uncompressed size before decompressing, and its decoders panic on some damaged
//! pages (a data page using a dictionary the column chunk lacks, a run header longer than
//! ten bytes, a stream shorter than the levels the page declares). Here every page header
//! is read by `thrift`, every size is checked against the column chunk and the file before
//! anything is read or allocated, the page is decompressed into a buffer of its claimed
//! size only when its compressed bytes make that size plausible (else into one that grows
//! with what decompression really produces), and its level and index streams are walked by
//! `hybrid` before the crate sees them. Only one page per column is in memory at a time.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use bytes::Bytes;
use parquet::arrow::arrow_reader::RowGroups;
use parquet::basic::{Encoding, Type as Physical};
use parquet::column::page::{Page, PageIterator, PageMetadata, PageReader};
use parquet::errors::ParquetError;
use parquet::file::metadata::{ParquetMetaData, RowGroupMetaData};

use super::hybrid::{bit_width, walk};
use super::thrift::{self, Body, DataHeader, HeaderError, PageHeader};

/// Bytes first read for a page header (headers with statistics are ~50–100 bytes).
const HEADER_PROBE: usize = 256;
/// Largest page header simrec reads (statistics of huge binary values could exceed it;
/// Elodin's columns are numbers).
const MAX_HEADER: usize = 1 << 20;

/// Bytes read by offset: a file (`pread`, so the decoding thread and others can share it)
/// or, for the fuzzer and the damage sweeps, bytes in memory.
pub trait RandomAccess: Send + Sync {
    fn len(&self) -> u64;
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
}

impl RandomAccess for File {
    fn len(&self) -> u64 {
        self.metadata().map_or(0, |m| m.len())
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        FileExt::read_exact_at(self, buf, offset)
    }
}

impl RandomAccess for Vec<u8> {
    fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let src = usize::try_from(offset)
            .ok()
            .and_then(|o| self.get(o..o.checked_add(buf.len())?))
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

pub type Input = Arc<dyn RandomAccess>;

/// How a column chunk's pages are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    None,
    Zstd,
    /// A codec simrec does not read (Elodin writes ZSTD).
    Other,
}

/// One leaf column: what its pages must look like.
#[derive(Debug, Clone, Copy)]
pub struct Leaf {
    pub physical: Physical,
    pub max_def: i16,
    pub max_rep: i16,
}

impl Leaf {
    /// Bytes per PLAIN value; `None` for types simrec does not read (and booleans).
    fn width(&self) -> Option<usize> {
        match self.physical {
            Physical::INT32 | Physical::FLOAT => Some(4),
            Physical::INT64 | Physical::DOUBLE => Some(8),
            _ => None,
        }
    }
}

/// One column chunk, already checked to lie inside the file.
#[derive(Debug, Clone, Copy)]
pub struct Chunk {
    pub start: u64,
    pub end: u64,
    pub codec: Codec,
    /// Values (levels) the chunk declares, and rows of its row group.
    pub values: u64,
    pub rows: u64,
}

thread_local! {
    /// One ZSTD decompression context per decoding thread, reused for every page (creating
    /// one per page showed in profiles).
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// Runs `f` with this thread's ZSTD decompressor.
fn with_decompressor<T>(
    f: impl FnOnce(&mut zstd::bulk::Decompressor<'static>) -> io::Result<T>,
) -> io::Result<T> {
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let d = match slot.as_mut() {
            Some(d) => d,
            None => slot.insert(zstd::bulk::Decompressor::new()?),
        };
        f(d)
    })
}

fn err(what: impl std::fmt::Display) -> ParquetError {
    ParquetError::General(what.to_string())
}

/// The pages of one column chunk.
pub struct Pages {
    file: Input,
    leaf: Leaf,
    chunk: Chunk,
    pos: u64,
    /// The header at `pos`, once read.
    peeked: Option<PageHeader>,
    dict_len: Option<usize>,
    values_seen: u64,
    rows_seen: u64,
    /// Set when a page was skipped without reading its levels: row counts are unknown.
    skipped: bool,
    started: bool,
    data_pages: u64,
    failed: Option<String>,
}

impl Pages {
    pub fn new(file: Input, leaf: Leaf, chunk: Chunk) -> Pages {
        Pages {
            file,
            leaf,
            chunk,
            pos: chunk.start,
            peeked: None,
            dict_len: None,
            values_seen: 0,
            rows_seen: 0,
            skipped: false,
            started: false,
            data_pages: 0,
            failed: None,
        }
    }

    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>, ParquetError> {
        // Callers have checked offset + len against the chunk, and the chunk against the
        // file, so this allocates only bytes that exist.
        let mut buf = vec![0u8; len];
        self.file
            .read_exact_at(&mut buf, offset)
            .map_err(|e| err(format!("reading {len} bytes at offset {offset}: {e}")))?;
        Ok(buf)
    }

    /// The header of the next page, `None` at the end of the chunk.
    fn header(&mut self) -> Result<Option<PageHeader>, ParquetError> {
        if let Some(h) = self.peeked {
            return Ok(Some(h));
        }
        if self.pos >= self.chunk.end {
            self.finish()?;
            return Ok(None);
        }
        let left = usize::try_from(self.chunk.end - self.pos).unwrap_or(usize::MAX);
        let mut probe = HEADER_PROBE.min(left);
        loop {
            let bytes = self.read_at(self.pos, probe)?;
            match thrift::page_header(&bytes) {
                Ok(h) => {
                    let body_end = self
                        .pos
                        .checked_add(h.header_len as u64)
                        .and_then(|p| p.checked_add(h.compressed_size as u64));
                    if body_end.is_none_or(|e| e > self.chunk.end) {
                        return Err(err(format!(
                            "a page at offset {} claims {} bytes, past the end of its column chunk at {}",
                            self.pos, h.compressed_size, self.chunk.end
                        )));
                    }
                    self.peeked = Some(h);
                    return Ok(Some(h));
                }
                Err(HeaderError::Short) if probe < left && probe < MAX_HEADER => {
                    probe = (probe * 4).min(left).min(MAX_HEADER);
                }
                Err(HeaderError::Short) => {
                    return Err(err(format!(
                        "the page header at offset {} runs past its column chunk",
                        self.pos
                    )))
                }
                Err(HeaderError::Bad(why)) => {
                    return Err(err(format!(
                        "the page header at offset {} is corrupt: {why}",
                        self.pos
                    )))
                }
            }
        }
    }

    /// Checks at the end of the chunk that its pages held what the footer declares.
    fn finish(&self) -> Result<(), ParquetError> {
        if self.skipped {
            return Ok(());
        }
        if self.values_seen != self.chunk.values {
            return Err(err(format!(
                "the column chunk declares {} values but its pages hold {}",
                self.chunk.values, self.values_seen
            )));
        }
        if self.rows_seen != self.chunk.rows {
            return Err(err(format!(
                "the row group declares {} rows but the column's pages hold {}",
                self.chunk.rows, self.rows_seen
            )));
        }
        Ok(())
    }

    /// Decompresses `compressed` into exactly `size` bytes; the buffer grows with the
    /// output rather than being allocated at the claimed size.
    fn decompress(&self, compressed: &[u8], size: usize) -> Result<Vec<u8>, ParquetError> {
        match self.chunk.codec {
            Codec::None => {
                if compressed.len() != size {
                    return Err(err(format!(
                        "an uncompressed page of {} bytes declares {size}",
                        compressed.len()
                    )));
                }
                Ok(compressed.to_vec())
            }
            Codec::Zstd => {
                // The claimed size is allocated only when the page's own bytes make it
                // plausible (ZSTD rarely expands data more than 64 times), and then filled
                // in one call with no copy; a larger claim is decompressed as a stream into
                // a buffer that grows only as output is produced.
                let room = compressed.len().saturating_mul(64).saturating_add(64 << 10);
                let out = if size <= room {
                    let mut out = Vec::with_capacity(size);
                    with_decompressor(|d| d.decompress_to_buffer(compressed, &mut out)).map_err(
                        |e| {
                            // zstd's "Destination buffer is too small".
                            if e.to_string().contains("too small") {
                                err(format!(
                                    "a page declares {size} bytes uncompressed but holds more"
                                ))
                            } else {
                                err(format!("ZSTD: {e}"))
                            }
                        },
                    )?;
                    out
                } else {
                    let mut out = Vec::with_capacity(room);
                    let decoder = zstd::stream::read::Decoder::with_buffer(compressed)
                        .map_err(|e| err(format!("ZSTD: {e}")))?;
                    decoder
                        .take(size as u64 + 1)
                        .read_to_end(&mut out)
                        .map_err(|e| err(format!("ZSTD: {e}")))?;
                    out
                };
                if out.len() > size {
                    return Err(err(format!(
                        "a page declares {size} bytes uncompressed but holds more"
                    )));
                }
                if out.len() < size {
                    return Err(err(format!(
                        "a page declares {size} bytes uncompressed but holds {}",
                        out.len()
                    )));
                }
                Ok(out)
            }
            Codec::Other => Err(err(
                "a compression codec simrec does not read (it reads ZSTD and uncompressed pages)",
            )),
        }
    }

    /// Most bytes a data page of `values` levels can hold uncompressed (values of at most
    /// 8 bytes, level runs of at most 6 bytes each, plus prefixes), or a dictionary page
    /// of `values` entries. A page claiming more is corrupt; its size is never allocated.
    fn plausible(values: usize, dictionary: bool) -> usize {
        let per = if dictionary { 8 } else { 8 + 2 * 6 };
        values.saturating_mul(per).saturating_add(1024)
    }

    fn next_page(&mut self) -> Result<Option<Page>, ParquetError> {
        // Index pages (and page types simrec does not know) are skipped.
        let (h, first, body_at) = loop {
            let Some(h) = self.header()? else {
                return Ok(None);
            };
            self.peeked = None;
            let first = !self.started;
            self.started = true;
            let body_at = self.pos + h.header_len as u64;
            self.pos = body_at + h.compressed_size as u64;
            if !matches!(h.body, Body::Other(_)) {
                break (h, first, body_at);
            }
        };
        let size = h.uncompressed_size as usize;
        match h.body {
            Body::Other(_) => Ok(None),
            Body::Dictionary(d) => {
                if !first {
                    return Err(err(
                        "a dictionary page after the first page of a column chunk",
                    ));
                }
                let Some(width) = self.leaf.width() else {
                    return Err(err(format!(
                        "a dictionary page in a {} column",
                        self.leaf.physical
                    )));
                };
                if d.encoding != thrift::PLAIN && d.encoding != thrift::PLAIN_DICTIONARY {
                    return Err(err(format!("a dictionary page of encoding {}", d.encoding)));
                }
                let n = usize::try_from(d.num_values)
                    .map_err(|_| err("a dictionary page of negative size"))?;
                if size > Self::plausible(n, true) {
                    return Err(err(format!(
                        "a dictionary page of {n} values claims {size} bytes"
                    )));
                }
                let body = self.read_at(body_at, h.compressed_size as usize)?;
                let buf = self.decompress(&body, size)?;
                if buf.len() < n.saturating_mul(width) {
                    return Err(err(format!(
                        "a dictionary page of {n} values holds {} bytes",
                        buf.len()
                    )));
                }
                self.dict_len = Some(n);
                Ok(Some(Page::DictionaryPage {
                    buf: Bytes::from(buf),
                    num_values: n as u32,
                    encoding: Encoding::PLAIN,
                    is_sorted: d.is_sorted,
                }))
            }
            Body::Data(d) | Body::DataV2(d) => {
                let v2 = matches!(h.body, Body::DataV2(_));
                let n = usize::try_from(d.num_values)
                    .map_err(|_| err("a data page of negative size"))?;
                self.values_seen = self.values_seen.saturating_add(n as u64);
                if self.values_seen > self.chunk.values {
                    return Err(err(format!(
                        "the column chunk declares {} values but its pages hold more",
                        self.chunk.values
                    )));
                }
                if size > Self::plausible(n, false) {
                    return Err(err(format!(
                        "a data page of {n} values claims {size} bytes"
                    )));
                }
                let body = self.read_at(body_at, h.compressed_size as usize)?;
                let buf = if v2 {
                    self.v2_buffer(&d, &body, size)?
                } else {
                    self.decompress(&body, size)?
                };
                let first = self.data_pages == 0;
                self.data_pages += 1;
                let rows = self.check_data(&d, v2, first, &buf)?;
                self.rows_seen = self.rows_seen.saturating_add(rows as u64);
                if self.rows_seen > self.chunk.rows {
                    return Err(err(format!(
                        "the row group declares {} rows but the column's pages hold more",
                        self.chunk.rows
                    )));
                }
                let encoding = encoding(d.encoding)?;
                Ok(Some(if v2 {
                    Page::DataPageV2 {
                        buf: Bytes::from(buf),
                        num_values: n as u32,
                        encoding,
                        num_nulls: d.num_nulls as u32,
                        num_rows: d.num_rows as u32,
                        def_levels_byte_len: d.def_len as u32,
                        rep_levels_byte_len: d.rep_len as u32,
                        is_compressed: false,
                        statistics: None,
                    }
                } else {
                    Page::DataPage {
                        buf: Bytes::from(buf),
                        num_values: n as u32,
                        encoding,
                        def_level_encoding: Encoding::RLE,
                        rep_level_encoding: Encoding::RLE,
                        statistics: None,
                    }
                }))
            }
        }
    }

    /// A v2 page: levels stored uncompressed, then the values (compressed or not).
    fn v2_buffer(&self, d: &DataHeader, body: &[u8], size: usize) -> Result<Vec<u8>, ParquetError> {
        let levels = usize::try_from(d.rep_len)
            .ok()
            .zip(usize::try_from(d.def_len).ok())
            .and_then(|(r, l)| r.checked_add(l))
            .filter(|&l| l <= body.len() && l <= size)
            .ok_or_else(|| {
                err(format!(
                    "level lengths {} and {} do not fit the page",
                    d.rep_len, d.def_len
                ))
            })?;
        if d.num_nulls < 0 || d.num_nulls > d.num_values || d.num_rows < 0 {
            return Err(err(format!(
                "a page of {} values declares {} nulls and {} rows",
                d.num_values, d.num_nulls, d.num_rows
            )));
        }
        let mut buf = body[..levels].to_vec();
        let values = &body[levels..];
        if d.is_compressed {
            buf.extend(self.decompress(values, size - levels)?);
        } else if values.len() == size - levels {
            buf.extend_from_slice(values);
        } else {
            return Err(err(
                "an uncompressed page whose size differs from its header",
            ));
        }
        Ok(buf)
    }

    /// Walks a data page's levels and values; returns the rows (records) it holds.
    fn check_data(
        &self,
        d: &DataHeader,
        v2: bool,
        first: bool,
        buf: &[u8],
    ) -> Result<usize, ParquetError> {
        let n = d.num_values as usize;
        let leaf = self.leaf;
        // The level streams and where the values start: v2 gives the lengths in the
        // header (checked by `v2_buffer`); v1 prefixes each stream with its length.
        let (rep, def, values) = if v2 {
            let (r, l) = (d.rep_len as usize, d.def_len as usize);
            (&buf[..r], &buf[r..r + l], &buf[r + l..])
        } else {
            let mut pos = 0usize;
            let mut stream = |present: bool, encoding: i32| -> Result<&[u8], ParquetError> {
                if !present {
                    return Ok(&buf[..0]);
                }
                if encoding != thrift::RLE {
                    return Err(err(format!(
                        "levels of encoding {encoding} (simrec reads RLE levels)"
                    )));
                }
                let prefix = buf
                    .get(pos..pos + 4)
                    .ok_or_else(|| err("the page ends before its levels"))?;
                let len = u32::from_le_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
                let s = buf
                    .get(pos + 4..(pos + 4).saturating_add(len))
                    .ok_or_else(|| {
                        err(format!("levels of {len} bytes past the end of the page"))
                    })?;
                pos += 4 + len;
                Ok(s)
            };
            let rep = stream(leaf.max_rep > 0, d.rep_encoding)?;
            let def = stream(leaf.max_def > 0, d.def_encoding)?;
            (rep, def, &buf[pos..])
        };
        let mut rows = n;
        if leaf.max_rep > 0 {
            let max = leaf.max_rep as u64;
            let w = walk(rep, bit_width(max), n, max, 0)
                .map_err(|e| err(format!("repetition levels: {e}")))?;
            rows = w.counted;
            if first && w.first.is_some_and(|v| v != 0) {
                return Err(err("the column chunk starts inside a list"));
            }
        }
        let mut present = n;
        if leaf.max_def > 0 {
            let max = leaf.max_def as u64;
            let w = walk(def, bit_width(max), n, max, max)
                .map_err(|e| err(format!("definition levels: {e}")))?;
            present = w.counted;
        }
        if v2 && present != n - d.num_nulls as usize {
            return Err(err(format!(
                "a page declares {} nulls but its levels hold {}",
                d.num_nulls,
                n - present
            )));
        }
        match d.encoding {
            thrift::PLAIN => {
                let need = match (leaf.physical, leaf.width()) {
                    (Physical::BOOLEAN, _) => present.div_ceil(8),
                    (_, Some(w)) => present.saturating_mul(w),
                    (t, None) => return Err(err(format!("a {t} column (simrec reads numbers)"))),
                };
                if values.len() < need {
                    return Err(err(format!(
                        "{present} values need {need} bytes, the page holds {}",
                        values.len()
                    )));
                }
            }
            thrift::PLAIN_DICTIONARY | thrift::RLE_DICTIONARY => {
                if self.dict_len.is_none() {
                    return Err(err(
                        "a dictionary-encoded page in a column chunk without a dictionary",
                    ));
                }
                if present > 0 {
                    let (&width, indices) = values
                        .split_first()
                        .ok_or_else(|| err("the page ends before its dictionary indices"))?;
                    walk(indices, width, present, u64::MAX, u64::MAX)
                        .map_err(|e| err(format!("dictionary indices: {e}")))?;
                }
            }
            other => {
                return Err(err(format!(
                    "values of encoding {other} (simrec reads PLAIN and dictionary encodings)"
                )))
            }
        }
        Ok(rows)
    }

    fn fail<T>(&mut self, r: Result<T, ParquetError>) -> Result<T, ParquetError> {
        if let Err(e) = &r {
            self.failed = Some(e.to_string());
        }
        r
    }
}

fn encoding(code: i32) -> Result<Encoding, ParquetError> {
    Ok(match code {
        thrift::PLAIN => Encoding::PLAIN,
        thrift::PLAIN_DICTIONARY => Encoding::PLAIN_DICTIONARY,
        thrift::RLE_DICTIONARY => Encoding::RLE_DICTIONARY,
        thrift::RLE => Encoding::RLE,
        other => return Err(err(format!("encoding {other}"))),
    })
}

impl Iterator for Pages {
    type Item = Result<Page, ParquetError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.get_next_page().transpose()
    }
}

impl PageReader for Pages {
    fn get_next_page(&mut self) -> Result<Option<Page>, ParquetError> {
        if let Some(e) = &self.failed {
            return Err(err(e));
        }
        let r = self.next_page();
        self.fail(r)
    }

    fn peek_next_page(&mut self) -> Result<Option<PageMetadata>, ParquetError> {
        if let Some(e) = &self.failed {
            return Err(err(e));
        }
        let r = self.header();
        let h = self.fail(r)?;
        Ok(h.map(|h| match h.body {
            Body::Data(d) => PageMetadata {
                num_rows: None,
                num_levels: Some(d.num_values.max(0) as usize),
                is_dict: false,
            },
            Body::DataV2(d) => PageMetadata {
                num_rows: Some(d.num_rows.max(0) as usize),
                num_levels: Some(d.num_values.max(0) as usize),
                is_dict: false,
            },
            Body::Dictionary(_) => PageMetadata {
                num_rows: None,
                num_levels: None,
                is_dict: true,
            },
            Body::Other(_) => PageMetadata {
                num_rows: Some(0),
                num_levels: Some(0),
                is_dict: false,
            },
        }))
    }

    fn skip_next_page(&mut self) -> Result<(), ParquetError> {
        if let Some(e) = &self.failed {
            return Err(err(e));
        }
        let r = self.header();
        if let Some(h) = self.fail(r)? {
            self.peeked = None;
            self.started = true;
            self.skipped = true;
            self.pos += h.header_len as u64 + h.compressed_size as u64;
        }
        Ok(())
    }
}

/// The chunks of one leaf column, one per row group, in order.
struct ColumnPages {
    file: Input,
    leaf: Leaf,
    chunks: VecDeque<Chunk>,
}

impl Iterator for ColumnPages {
    type Item = Result<Box<dyn PageReader>, ParquetError>;

    fn next(&mut self) -> Option<Self::Item> {
        let chunk = self.chunks.pop_front()?;
        Some(Ok(Box::new(Pages::new(
            self.file.clone(),
            self.leaf,
            chunk,
        ))))
    }
}

impl PageIterator for ColumnPages {}

/// The whole file as the parquet crate's array readers see it.
pub struct FileChunks {
    pub file: Input,
    pub metadata: Arc<ParquetMetaData>,
    pub leaves: Vec<Leaf>,
    /// Per row group, per leaf.
    pub chunks: Vec<Vec<Chunk>>,
}

impl RowGroups for FileChunks {
    fn num_rows(&self) -> usize {
        self.chunks
            .iter()
            .filter_map(|rg| rg.first())
            .map(|c| c.rows as usize)
            .sum()
    }

    fn column_chunks(&self, i: usize) -> Result<Box<dyn PageIterator>, ParquetError> {
        let leaf = *self
            .leaves
            .get(i)
            .ok_or_else(|| err(format!("no leaf column {i}")))?;
        let chunks = self
            .chunks
            .iter()
            .map(|rg| {
                rg.get(i)
                    .copied()
                    .ok_or_else(|| err("a row group without that column"))
            })
            .collect::<Result<VecDeque<_>, _>>()?;
        Ok(Box::new(ColumnPages {
            file: self.file.clone(),
            leaf,
            chunks,
        }))
    }

    fn row_groups(&self) -> Box<dyn Iterator<Item = &RowGroupMetaData> + '_> {
        Box::new(self.metadata.row_groups().iter())
    }

    fn metadata(&self) -> &ParquetMetaData {
        &self.metadata
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zstd_pages() -> Pages {
        let leaf = Leaf {
            physical: Physical::DOUBLE,
            max_def: 1,
            max_rep: 0,
        };
        let chunk = Chunk {
            start: 4,
            end: 4,
            codec: Codec::Zstd,
            values: 0,
            rows: 0,
        };
        Pages::new(Arc::new(Vec::new()), leaf, chunk)
    }

    #[test]
    fn a_zstd_page_must_hold_exactly_its_claimed_size() {
        let data: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let packed = zstd::bulk::compress(&data, 3).unwrap();
        let pages = zstd_pages();
        // Twice, so the second reuses this thread's decompressor.
        for _ in 0..2 {
            assert_eq!(pages.decompress(&packed, data.len()).unwrap(), data);
        }
        let short = pages.decompress(&packed, data.len() - 1).unwrap_err();
        assert!(
            short
                .to_string()
                .contains("declares 399999 bytes uncompressed but holds more"),
            "{short}"
        );
        let long = pages.decompress(&packed, data.len() + 1).unwrap_err();
        assert!(
            long.to_string()
                .contains("declares 400001 bytes uncompressed but holds 400000"),
            "{long}"
        );
        // A claim far beyond what these bytes can expand to is not allocated: the page is
        // decompressed as a stream and found short.
        let huge = pages.decompress(&packed, usize::MAX / 2).unwrap_err();
        assert!(huge.to_string().contains("but holds 400000"), "{huge}");
        // Zeros compress more than 64 times: the stream path still gives every byte.
        let zeros = vec![0u8; 1 << 20];
        let packed = zstd::bulk::compress(&zeros, 3).unwrap();
        assert!(packed.len() * 64 + (64 << 10) < zeros.len());
        assert_eq!(pages.decompress(&packed, zeros.len()).unwrap(), zeros);
        let garbage = pages.decompress(&[1, 2, 3, 4], 10).unwrap_err();
        assert!(garbage.to_string().contains("ZSTD: "), "{garbage}");
    }
}
