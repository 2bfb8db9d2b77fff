//! The `channel` and `entity` columns of a table written by columns, dictionary-encoded
//! here instead of by the `parquet` crate.
//!
//! The crate looks every value of a string column up in its dictionary (a hash and a
//! comparison) and compares it twice more for the statistics; for an Icarus table, a row per
//! signal value, that was a large share of the encoding's CPU time (docs/performance.md,
//! "Icarus → Parquet table by frames"). Here a row costs a look-up
//! by its key (`channel`, a dictionary array) or one comparison with the row before
//! (`entity`: names come in runs), and the statistics are taken over the dictionary once
//! per row group. The chunk is laid out as the crate lays one out: a PLAIN dictionary page,
//! then v1 data pages of at most [`PAGE_ROWS`] rows of RLE_DICTIONARY indices (definition
//! levels before them where the column is nullable), compressed as the column's properties
//! say, with chunk statistics and an offset index (no column index: its page statistics
//! would cost what this saves).

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use bytes::Bytes;
use parquet::basic::{Compression, Encoding, EncodingMask, PageType};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::data_type::ByteArray;
use parquet::file::metadata::{ColumnChunkMetaData, PageEncodingStats};
use parquet::file::page_index::offset_index::{OffsetIndexMetaData, PageLocation};
use parquet::file::properties::WriterProperties;
use parquet::file::statistics::{Statistics, ValueStatistics};
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

/// The table's columns of few distinct values, written here when they are text.
pub const LABELS: [&str; 2] = ["channel", "entity"];
/// Rows of a data page, at most (the crate's default row limit of a page).
pub const PAGE_ROWS: usize = 20_000;
/// A row without a value.
const NULL: u32 = u32::MAX;
/// Groups of 8 values in one bit-packed run, at most (as the crate writes them: some
/// readers take the run's header as one byte).
const MAX_GROUPS: usize = 63;

/// Whether a column of this type, with these properties, can be written here.
pub fn takes(data_type: &DataType, descr: &ColumnDescPtr, props: &WriterProperties) -> bool {
    let strings = match data_type {
        DataType::Utf8 => true,
        DataType::Dictionary(key, value) => **key == DataType::Int32 && **value == DataType::Utf8,
        _ => false,
    };
    let path = descr.path();
    strings
        && descr.max_rep_level() == 0
        && descr.max_def_level() <= 1
        && props.dictionary_enabled(path)
        && matches!(
            props.compression(path),
            Compression::ZSTD(_) | Compression::UNCOMPRESSED
        )
}

/// One column chunk being written.
pub struct LabelColumn {
    descr: ColumnDescPtr,
    compression: Compression,
    /// Statistics are wanted, and their values cut to this many bytes at most.
    statistics: bool,
    truncate: Option<usize>,
    compressor: Option<zstd::bulk::Compressor<'static>>,
    /// The dictionary, in the order values were first seen, and each value's index.
    values: Vec<Box<[u8]>>,
    index: HashMap<Box<[u8]>, u32>,
    /// Per key of the batch's dictionary array, the index of its value (`NULL`: not seen).
    by_key: Vec<u32>,
    /// Indices of the rows not in a page yet (`NULL` for a null).
    pending: Vec<u32>,
    /// The data pages so far, and the first row of each.
    pages: Vec<(CompressedPage, usize)>,
    rows: usize,
    nulls: u64,
    /// Bytes of the values of every row, as the crate counts them for the metadata.
    value_bytes: i64,
    encoded: usize,
}

impl LabelColumn {
    pub fn new(descr: ColumnDescPtr, props: &WriterProperties) -> Result<LabelColumn, String> {
        let path = descr.path();
        let compression = props.compression(path);
        let compressor = match compression {
            Compression::ZSTD(level) => Some(
                zstd::bulk::Compressor::new(level.compression_level())
                    .map_err(|e| e.to_string())?,
            ),
            _ => None,
        };
        Ok(LabelColumn {
            statistics: props.statistics_enabled(path)
                != parquet::file::properties::EnabledStatistics::None,
            truncate: props.statistics_truncate_length(),
            descr,
            compression,
            compressor,
            values: Vec::new(),
            index: HashMap::new(),
            by_key: Vec::new(),
            pending: Vec::with_capacity(PAGE_ROWS),
            pages: Vec::new(),
            rows: 0,
            nulls: 0,
            value_bytes: 0,
            encoded: 0,
        })
    }

    /// The encoded size so far (pages not written yet counted at a byte a row).
    pub fn estimated_bytes(&self) -> usize {
        self.encoded + self.pending.len()
    }

    /// The index of `value`, added to the dictionary if new.
    fn intern(&mut self, value: &[u8]) -> u32 {
        if let Some(&i) = self.index.get(value) {
            return i;
        }
        let i = self.values.len() as u32;
        self.values.push(value.into());
        self.index.insert(value.into(), i);
        i
    }

    /// Appends the rows of `array`: a dictionary array of `Int32` keys and `Utf8` values, or
    /// a `Utf8` array.
    pub fn write(&mut self, array: &ArrayRef) -> Result<(), String> {
        match array.data_type() {
            DataType::Dictionary(_, _) => {
                let dict = array
                    .as_dictionary_opt::<Int32Type>()
                    .ok_or("a label column of another key type")?;
                let names = dict
                    .values()
                    .as_string_opt::<i32>()
                    .ok_or("a label column of other values than text")?;
                // Keys mean this batch's values: looked up again in each batch.
                self.by_key.clear();
                self.by_key.resize(names.len(), NULL);
                for (row, key) in dict.keys().values().iter().enumerate() {
                    if dict.is_null(row) {
                        self.push(NULL)?;
                        continue;
                    }
                    let key = usize::try_from(*key)
                        .ok()
                        .filter(|&k| k < names.len())
                        .ok_or("a label key out of its dictionary")?;
                    let mut i = self.by_key[key];
                    if i == NULL {
                        i = self.intern(names.value(key).as_bytes());
                        self.by_key[key] = i;
                    }
                    self.value_bytes += names.value_length(key) as i64;
                    self.push(i)?;
                }
            }
            DataType::Utf8 => {
                let strings = array.as_string::<i32>();
                // Labels come in runs (a record's keys share its entity) or in cycles (a
                // frame's signals, its particles, in the order first seen): the value of
                // the row before, then the one first seen after it, is compared before the
                // dictionary is looked up.
                let mut last: Option<u32> = None;
                for row in 0..strings.len() {
                    if strings.is_null(row) {
                        self.push(NULL)?;
                        continue;
                    }
                    let value = strings.value(row).as_bytes();
                    let is = |i: u32| self.values.get(i as usize).is_some_and(|v| **v == *value);
                    let i = match last {
                        Some(i) if is(i) => i,
                        Some(i) if is(i + 1) => i + 1,
                        _ => self.intern(value),
                    };
                    last = Some(i);
                    self.value_bytes += value.len() as i64;
                    self.push(i)?;
                }
            }
            other => return Err(format!("a label column of type {other}")),
        }
        Ok(())
    }

    fn push(&mut self, i: u32) -> Result<(), String> {
        if i == NULL {
            self.nulls += 1;
        }
        self.pending.push(i);
        self.rows += 1;
        if self.pending.len() == PAGE_ROWS {
            self.flush_page()?;
        }
        Ok(())
    }

    fn compress(&mut self, body: Vec<u8>) -> Result<(Bytes, usize), String> {
        let size = body.len();
        match &mut self.compressor {
            Some(c) => Ok((
                Bytes::from(c.compress(&body).map_err(|e| e.to_string())?),
                size,
            )),
            None => Ok((Bytes::from(body), size)),
        }
    }

    /// The pending rows as a data page.
    fn flush_page(&mut self) -> Result<(), String> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut body = Vec::new();
        if self.descr.max_def_level() == 1 {
            let levels: Vec<u32> = self.pending.iter().map(|&i| u32::from(i != NULL)).collect();
            let mut encoded = Vec::new();
            hybrid(&levels, 1, &mut encoded);
            body.extend_from_slice(&(encoded.len() as u32).to_le_bytes());
            body.extend_from_slice(&encoded);
        }
        let indices: Vec<u32> = self
            .pending
            .iter()
            .copied()
            .filter(|&i| i != NULL)
            .collect();
        let width = bit_width(indices.iter().copied().max().unwrap_or(0));
        body.push(width as u8);
        hybrid(&indices, width, &mut body);
        let rows = self.pending.len();
        let first = self.rows - rows;
        self.pending.clear();
        let (buf, size) = self.compress(body)?;
        self.encoded += buf.len();
        let page = Page::DataPage {
            buf,
            num_values: rows as u32,
            encoding: Encoding::RLE_DICTIONARY,
            def_level_encoding: Encoding::RLE,
            rep_level_encoding: Encoding::RLE,
            statistics: None,
        };
        self.pages.push((CompressedPage::new(page, size), first));
        Ok(())
    }

    /// The chunk's statistics: over the dictionary, every value of which is in the chunk.
    fn statistics(&self) -> Statistics {
        let min = self.values.iter().min();
        let max = self.values.iter().max();
        let (min, min_exact) = match min {
            Some(v) => match self.truncate.filter(|&n| v.len() > n) {
                Some(n) => (Some(&v[..utf8_prefix(v, n)]), false),
                None => (Some(&v[..]), true),
            },
            None => (None, true),
        };
        let (max, max_exact) = match max {
            Some(v) => match self
                .truncate
                .filter(|&n| v.len() > n)
                .and_then(|n| above(v, n))
            {
                Some(bound) => (Some(bound), false),
                None => (Some(v.to_vec()), true),
            },
            None => (None, true),
        };
        ValueStatistics::new(
            min.map(|v| ByteArray::from(v.to_vec())),
            max.map(ByteArray::from),
            None,
            Some(self.nulls),
            false,
        )
        .with_min_is_exact(min_exact)
        .with_max_is_exact(max_exact)
        .into()
    }

    /// The chunk: its bytes (dictionary page first) and what the row group needs of it.
    pub fn close(mut self) -> Result<(Bytes, ColumnCloseResult), String> {
        self.flush_page()?;
        let mut dictionary = Vec::new();
        for v in &self.values {
            dictionary.extend_from_slice(&(v.len() as u32).to_le_bytes());
            dictionary.extend_from_slice(v);
        }
        let entries = self.values.len();
        let (buf, size) = self.compress(dictionary)?;
        let dictionary = Page::DictionaryPage {
            buf,
            num_values: entries as u32,
            encoding: Encoding::PLAIN,
            is_sorted: false,
        };
        let statistics = self.statistics();
        let err = |e: parquet::errors::ParquetError| e.to_string();

        let mut sink = TrackedWrite::new(Vec::new());
        let mut writer = SerializedPageWriter::new(&mut sink);
        let mut compressed = 0;
        let mut uncompressed = 0;
        let spec = writer
            .write_page(CompressedPage::new(dictionary, size))
            .map_err(err)?;
        compressed += spec.compressed_size;
        uncompressed += spec.uncompressed_size;
        let mut locations = Vec::with_capacity(self.pages.len());
        let pages = self.pages.len();
        for (page, first_row) in self.pages {
            let spec = writer.write_page(page).map_err(err)?;
            compressed += spec.compressed_size;
            uncompressed += spec.uncompressed_size;
            locations.push(PageLocation {
                offset: spec.offset as i64,
                compressed_page_size: spec.compressed_size as i32,
                first_row_index: first_row as i64,
            });
        }
        writer.close().map_err(err)?;
        let bytes = Bytes::from(sink.into_inner().map_err(err)?);

        let mut metadata = ColumnChunkMetaData::builder(self.descr.clone())
            .set_compression(self.compression)
            .set_encodings_mask(EncodingMask::new_from_encodings(
                [Encoding::PLAIN, Encoding::RLE, Encoding::RLE_DICTIONARY].iter(),
            ))
            .set_page_encoding_stats(vec![
                PageEncodingStats {
                    page_type: PageType::DICTIONARY_PAGE,
                    encoding: Encoding::PLAIN,
                    count: 1,
                },
                PageEncodingStats {
                    page_type: PageType::DATA_PAGE,
                    encoding: Encoding::RLE_DICTIONARY,
                    count: pages as i32,
                },
            ])
            .set_total_compressed_size(compressed as i64)
            .set_total_uncompressed_size(uncompressed as i64)
            .set_num_values(self.rows as i64)
            .set_dictionary_page_offset(Some(0))
            .set_data_page_offset(locations.first().map_or(0, |l| l.offset));
        if self.statistics {
            metadata = metadata
                .set_statistics(statistics)
                .set_unencoded_byte_array_data_bytes(Some(self.value_bytes));
        }
        let close = ColumnCloseResult {
            bytes_written: bytes.len() as u64,
            rows_written: self.rows as u64,
            metadata: metadata.build().map_err(err)?,
            bloom_filter: None,
            column_index: None,
            offset_index: Some(OffsetIndexMetaData {
                page_locations: locations,
                unencoded_byte_array_data_bytes: None,
            }),
        };
        Ok((bytes, close))
    }
}

/// Bits to write `max` (at least one).
fn bit_width(max: u32) -> u32 {
    (32 - max.leading_zeros()).max(1)
}

/// The longest prefix of `v` of at most `n` bytes that ends between UTF-8 characters.
fn utf8_prefix(v: &[u8], n: usize) -> usize {
    (0..=n.min(v.len()))
        .rev()
        .find(|&i| i == v.len() || (v[i] & 0xC0) != 0x80)
        .unwrap_or(0)
}

/// A value of at most `n` bytes above every value that starts as `v` does: its prefix with
/// the last character incremented (`None` if no character can be).
fn above(v: &[u8], n: usize) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(&v[..utf8_prefix(v, n)]).ok()?;
    let mut chars: Vec<char> = text.chars().collect();
    while let Some(last) = chars.pop() {
        let next = (last as u32 + 1..=char::MAX as u32).find_map(char::from_u32);
        if let Some(c) = next {
            chars.push(c);
            return Some(chars.into_iter().collect::<String>().into_bytes());
        }
    }
    None
}

/// `values` in Parquet's RLE / bit-packed hybrid encoding, `width` bits each: runs of 8 or
/// more equal values as RLE runs, the rest bit-packed in groups of 8 (the last padded).
fn hybrid(values: &[u32], width: u32, out: &mut Vec<u8>) {
    let mut packed_from = 0;
    let mut i = 0;
    while i < values.len() {
        let v = values[i];
        let mut j = i + 1;
        while j < values.len() && values[j] == v {
            j += 1;
        }
        // Values before the run are bit-packed in whole groups: the run's first values
        // complete the last group.
        let start = i + (8 - (i - packed_from) % 8) % 8;
        if j >= start + 8 {
            bit_packed(&values[packed_from..start], width, out);
            varint(((j - start) as u64) << 1, out);
            let bytes = width.div_ceil(8) as usize;
            out.extend_from_slice(&v.to_le_bytes()[..bytes]);
            packed_from = j;
        }
        i = j;
    }
    bit_packed(&values[packed_from..], width, out);
}

/// Bit-packed runs of `values` (a multiple of 8 of them, but for the last run).
fn bit_packed(values: &[u32], width: u32, out: &mut Vec<u8>) {
    for run in values.chunks(MAX_GROUPS * 8) {
        let groups = run.len().div_ceil(8);
        varint(((groups as u64) << 1) | 1, out);
        let mut acc: u64 = 0;
        let mut bits = 0;
        for k in 0..groups * 8 {
            let v = run.get(k).copied().unwrap_or(0);
            acc |= u64::from(v) << bits;
            bits += width;
            while bits >= 8 {
                out.push(acc as u8);
                acc >>= 8;
                bits -= 8;
            }
        }
        if bits > 0 {
            out.push(acc as u8);
        }
    }
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes the hybrid encoding of `n` values (the reference: the spec's grammar).
    fn decode(mut data: &[u8], width: u32, n: usize) -> Vec<u32> {
        fn varint(data: &mut &[u8]) -> u64 {
            let mut v = 0;
            let mut shift = 0;
            loop {
                let b = data[0];
                *data = &data[1..];
                v |= u64::from(b & 0x7f) << shift;
                shift += 7;
                if b < 0x80 {
                    return v;
                }
            }
        }
        let mut out = Vec::new();
        while out.len() < n {
            let header = varint(&mut data);
            if header & 1 == 0 {
                let bytes = width.div_ceil(8) as usize;
                let mut v = [0u8; 4];
                v[..bytes].copy_from_slice(&data[..bytes]);
                data = &data[bytes..];
                out.extend(std::iter::repeat_n(
                    u32::from_le_bytes(v),
                    (header >> 1) as usize,
                ));
            } else {
                let count = (header >> 1) as usize * 8;
                let len = count * width as usize / 8;
                let (run, rest) = data.split_at(len);
                data = rest;
                for k in 0..count {
                    let mut v = 0;
                    for b in 0..width as usize {
                        let bit = k * width as usize + b;
                        v |= u32::from((run[bit / 8] >> (bit % 8)) & 1) << b;
                    }
                    out.push(v);
                }
            }
        }
        assert!(data.is_empty(), "{} bytes left", data.len());
        out.truncate(n);
        out
    }

    #[test]
    fn the_hybrid_encoding_decodes_to_its_values() {
        let mut seed = 7u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for case in 0..300 {
            let width = 1 + (case % 12) as u32;
            let len = (next() % 3000) as usize;
            let mut values = Vec::with_capacity(len);
            while values.len() < len {
                let v = (next() % (1 << width)) as u32;
                let run = if next() % 3 == 0 { next() % 40 } else { 1 };
                values.extend(std::iter::repeat_n(v, run as usize));
            }
            values.truncate(len);
            let mut out = Vec::new();
            hybrid(&values, width, &mut out);
            assert_eq!(decode(&out, width, values.len()), values, "case {case}");
        }
    }

    #[test]
    fn a_run_of_equal_values_is_one_rle_run() {
        let mut out = Vec::new();
        hybrid(&[5; 1000], 3, &mut out);
        // varint(1000 << 1) = [0xd0, 0x0f], then the value in one byte.
        assert_eq!(out, [0xd0, 0x0f, 5]);
    }

    #[test]
    fn truncated_statistics_bound_the_values() {
        assert_eq!(utf8_prefix("aé".as_bytes(), 2), 1);
        assert_eq!(above(b"abc", 2).as_deref(), Some(&b"ac"[..]));
        assert_eq!(bit_width(0), 1);
        assert_eq!(bit_width(199), 8);
    }
}
