//! A column chunk that simrec encodes itself instead of the `parquet` crate (`labels.rs`,
//! `deltas.rs`): its data pages compressed as the column's properties say, then laid out as
//! the crate lays a chunk out (a dictionary page first if any, v1 data pages), with chunk
//! statistics and an offset index (no column index: its page statistics would cost what
//! writing the pages here saves).

use arrow_array::ArrayRef;
use bytes::Bytes;
use parquet::basic::{Compression, Encoding, EncodingMask, PageType};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::{ColumnChunkMetaData, PageEncodingStats};
use parquet::file::page_index::offset_index::{OffsetIndexMetaData, PageLocation};
use parquet::file::statistics::Statistics;
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

/// A column of a row group that simrec writes.
pub trait OwnColumn: Send {
    /// Appends the rows of `array`.
    fn write(&mut self, array: &ArrayRef) -> Result<(), String>;
    /// The encoded size so far, roughly.
    fn estimated_bytes(&self) -> usize;
    /// The chunk: its bytes and what the row group needs of it.
    fn close(self: Box<Self>) -> Result<(Bytes, ColumnCloseResult), String>;
}

/// What a chunk's metadata says besides its pages.
pub struct Summary {
    /// The data pages' encoding.
    pub encoding: Encoding,
    pub rows: usize,
    /// `None` where statistics are not wanted; with the bytes of the rows' values, as the
    /// crate counts them, for a byte-array column.
    pub statistics: Option<(Statistics, Option<i64>)>,
}

/// The pages of a chunk, compressed as they come.
pub struct Pages {
    descr: ColumnDescPtr,
    compression: Compression,
    compressor: Option<zstd::bulk::Compressor<'static>>,
    /// The data pages so far, and the first row of each.
    pages: Vec<(CompressedPage, usize)>,
    encoded: usize,
}

impl Pages {
    /// Pages of `descr` compressed by `compression` (ZSTD or none: `takes` of each column
    /// kind checks).
    pub fn new(descr: ColumnDescPtr, compression: Compression) -> Result<Pages, String> {
        let compressor = match compression {
            Compression::ZSTD(level) => Some(
                zstd::bulk::Compressor::new(level.compression_level())
                    .map_err(|e| e.to_string())?,
            ),
            _ => None,
        };
        Ok(Pages {
            descr,
            compression,
            compressor,
            pages: Vec::new(),
            encoded: 0,
        })
    }

    pub fn descr(&self) -> &ColumnDescPtr {
        &self.descr
    }

    /// Bytes of the pages so far, compressed.
    pub fn encoded(&self) -> usize {
        self.encoded
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

    /// A data page of `rows` rows from row `first` of the chunk: `body` is its levels and
    /// values, `encoding` the values'.
    pub fn data_page(
        &mut self,
        body: Vec<u8>,
        rows: usize,
        first: usize,
        encoding: Encoding,
    ) -> Result<(), String> {
        let (buf, size) = self.compress(body)?;
        self.encoded += buf.len();
        let page = Page::DataPage {
            buf,
            num_values: rows as u32,
            encoding,
            def_level_encoding: Encoding::RLE,
            rep_level_encoding: Encoding::RLE,
            statistics: None,
        };
        self.pages.push((CompressedPage::new(page, size), first));
        Ok(())
    }

    /// The chunk: `dictionary` (a PLAIN page of that many entries) first if any, then the
    /// data pages.
    pub fn close(
        mut self,
        dictionary: Option<(Vec<u8>, usize)>,
        summary: Summary,
    ) -> Result<(Bytes, ColumnCloseResult), String> {
        let err = |e: parquet::errors::ParquetError| e.to_string();
        let mut sink = TrackedWrite::new(Vec::new());
        let mut writer = SerializedPageWriter::new(&mut sink);
        let mut compressed = 0;
        let mut uncompressed = 0;
        let mut encodings = vec![Encoding::RLE, summary.encoding];
        let mut stats = Vec::new();
        if let Some((body, entries)) = dictionary {
            let (buf, size) = self.compress(body)?;
            let page = Page::DictionaryPage {
                buf,
                num_values: entries as u32,
                encoding: Encoding::PLAIN,
                is_sorted: false,
            };
            let spec = writer
                .write_page(CompressedPage::new(page, size))
                .map_err(err)?;
            compressed += spec.compressed_size;
            uncompressed += spec.uncompressed_size;
            encodings.push(Encoding::PLAIN);
            stats.push(PageEncodingStats {
                page_type: PageType::DICTIONARY_PAGE,
                encoding: Encoding::PLAIN,
                count: 1,
            });
        }
        let mut locations = Vec::with_capacity(self.pages.len());
        stats.push(PageEncodingStats {
            page_type: PageType::DATA_PAGE,
            encoding: summary.encoding,
            count: self.pages.len() as i32,
        });
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

        let dictionary_offset = stats.len() > 1;
        let mut metadata = ColumnChunkMetaData::builder(self.descr.clone())
            .set_compression(self.compression)
            .set_encodings_mask(EncodingMask::new_from_encodings(encodings.iter()))
            .set_page_encoding_stats(stats)
            .set_total_compressed_size(compressed as i64)
            .set_total_uncompressed_size(uncompressed as i64)
            .set_num_values(summary.rows as i64)
            .set_dictionary_page_offset(dictionary_offset.then_some(0))
            .set_data_page_offset(locations.first().map_or(0, |l| l.offset));
        if let Some((statistics, value_bytes)) = summary.statistics {
            metadata = metadata
                .set_statistics(statistics)
                .set_unencoded_byte_array_data_bytes(value_bytes);
        }
        let close = ColumnCloseResult {
            bytes_written: bytes.len() as u64,
            rows_written: summary.rows as u64,
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

/// Definition levels of a page of `rows` rows (their length first, as a v1 page has
/// them): `levels` when some row is null, else one run of ones.
pub fn definition_levels(levels: Option<&[u32]>, rows: usize, out: &mut Vec<u8>) {
    let mut encoded = Vec::new();
    match levels {
        Some(levels) => hybrid(levels, 1, &mut encoded),
        None => {
            varint((rows as u64) << 1, &mut encoded);
            encoded.push(1);
        }
    }
    out.extend_from_slice(&(encoded.len() as u32).to_le_bytes());
    out.extend_from_slice(&encoded);
}

/// Groups of 8 values in one bit-packed run, at most (as the crate writes them: some
/// readers take the run's header as one byte).
const MAX_GROUPS: usize = 63;

/// Bits to write `max` (at least one).
pub fn bit_width(max: u32) -> u32 {
    (32 - max.leading_zeros()).max(1)
}

/// `values` in Parquet's RLE / bit-packed hybrid encoding, `width` bits each: runs of 8 or
/// more equal values as RLE runs, the rest bit-packed in groups of 8 (the last padded).
pub fn hybrid(values: &[u32], width: u32, out: &mut Vec<u8>) {
    hybrid_padded(values, width, out);
}

/// [`hybrid`], saying whether the last group was padded (it then decodes to more values).
fn hybrid_padded(values: &[u32], width: u32, out: &mut Vec<u8>) -> bool {
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
    !(values.len() - packed_from).is_multiple_of(8)
}

/// `values` in the hybrid encoding, as [`hybrid`] but quicker where they repeat a pattern of
/// more than one value ([`period`], tried at `hint` first: a frame's labels): the encoding
/// of the first whole groups of 8 that the pattern fills is copied as often as they repeat,
/// then the rest encoded. Each copy is complete runs (none padded), so the copies decode one
/// after another to the values, without a look at each of them (docs/performance.md,
/// "Lake, eighth pass").
pub fn hybrid_repeated(values: &[u32], hint: Option<usize>, width: u32, out: &mut Vec<u8>) {
    let Some(period) = period(values, hint).filter(|&p| p > 1) else {
        return hybrid(values, width, out);
    };
    let whole = period * 8 / gcd(period, 8);
    let copies = values.len() / whole;
    if copies < 2 {
        return hybrid(values, width, out);
    }
    let start = out.len();
    if hybrid_padded(&values[..whole], width, out) {
        // A copy would decode to more values than its own.
        out.truncate(start);
        return hybrid(values, width, out);
    }
    let once = start..out.len();
    for _ in 1..copies {
        out.extend_from_within(once.clone());
    }
    hybrid(&values[copies * whole..], width, out);
}

fn gcd(a: usize, b: usize) -> usize {
    match b {
        0 => a,
        _ => gcd(b, a % b),
    }
}

/// The length of the pattern that `values` repeats from its start, if it is whole at least
/// twice: tried at `hint` (the caller's pattern), then at the first value's next place.
pub fn period<T: PartialEq>(values: &[T], hint: Option<usize>) -> Option<usize> {
    let repeats =
        |p: &usize| *p > 0 && 2 * p <= values.len() && values[..values.len() - p] == values[*p..];
    let next = || {
        let first = values.first()?;
        values[1..].iter().position(|v| v == first).map(|i| i + 1)
    };
    hint.filter(repeats).or_else(|| next().filter(repeats))
}

/// Bit-packed runs of `values` (a multiple of 8 of them, but for the last run).
fn bit_packed(values: &[u32], width: u32, out: &mut Vec<u8>) {
    for run in values.chunks(MAX_GROUPS * 8) {
        let groups = run.len().div_ceil(8);
        varint(((groups as u64) << 1) | 1, out);
        for group in run.chunks(8) {
            // Eight values of up to 16 bits fill at most a `u128`: a group is `width`
            // bytes, written at once.
            if width <= 16 {
                let mut acc: u128 = 0;
                for (k, &v) in group.iter().enumerate() {
                    acc |= u128::from(v) << (k as u32 * width);
                }
                out.extend_from_slice(&acc.to_le_bytes()[..width as usize]);
                continue;
            }
            let mut acc: u64 = 0;
            let mut bits = 0;
            for k in 0..8 {
                acc |= u64::from(group.get(k).copied().unwrap_or(0)) << bits;
                bits += width;
                while bits >= 8 {
                    out.push(acc as u8);
                    acc >>= 8;
                    bits -= 8;
                }
            }
        }
    }
}

pub fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
mod tests {
    use super::period as period_of;
    use super::*;
    use crate::formats::test_random::xorshift;

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
        let mut next = xorshift(7u64);
        for case in 0..400 {
            let width = 1 + (case % 24) as u32;
            let len = (next() % 3000) as usize;
            let mut values = Vec::with_capacity(len);
            while values.len() < len {
                let v = (next() % (1 << width)) as u32;
                let run = if next().is_multiple_of(3) {
                    next() % 40
                } else {
                    1
                };
                values.extend(std::iter::repeat_n(v, run as usize));
            }
            values.truncate(len);
            let mut out = Vec::new();
            hybrid(&values, width, &mut out);
            assert_eq!(decode(&out, width, values.len()), values, "case {case}");
        }
    }

    #[test]
    fn a_repeated_pattern_decodes_to_its_values_and_is_found_at_its_period() {
        let mut next = xorshift(11u64);
        for case in 0..300 {
            let width = 1 + (case % 12) as u32;
            let period = 1 + (next() % 300) as usize;
            // Patterns of distinct values, and of runs (an entity's signals).
            let run = if case % 2 == 0 {
                1
            } else {
                1 + (next() % 12) as usize
            };
            let pattern: Vec<u32> = (0..period)
                .map(|i| ((i / run) as u64 * 7919 % (1 << width)) as u32)
                .collect();
            let len = (next() % 5000) as usize;
            let values: Vec<u32> = pattern.iter().copied().cycle().take(len).collect();
            for hint in [None, Some(period), Some(period + 1)] {
                let mut out = Vec::new();
                hybrid_repeated(&values, hint, width, &mut out);
                assert_eq!(decode(&out, width, len), values, "case {case} {hint:?}");
            }
            if let Some(p) = period_of(&values, Some(period)) {
                assert_eq!(values[..len - p], values[p..]);
            }
        }
        // A pattern that is one value stays one RLE run.
        let mut out = Vec::new();
        hybrid_repeated(&[5; 1000], None, 3, &mut out);
        assert_eq!(out, [0xd0, 0x0f, 5]);
        assert_eq!(period_of(&[1, 2, 3, 1, 2, 3, 1], None), Some(3));
        assert_eq!(period_of(&[1, 1, 2, 1, 1, 2], None), None);
        assert_eq!(period_of(&[1, 1, 2, 1, 1, 2], Some(3)), Some(3));
        assert_eq!(period_of(&[1, 2, 3, 1, 2], None), None);
    }

    #[test]
    fn a_run_of_equal_values_is_one_rle_run() {
        let mut out = Vec::new();
        hybrid(&[5; 1000], 3, &mut out);
        // varint(1000 << 1) = [0xd0, 0x0f], then the value in one byte.
        assert_eq!(out, [0xd0, 0x0f, 5]);
        let mut levels = Vec::new();
        definition_levels(None, 1000, &mut levels);
        assert_eq!(levels, [3, 0, 0, 0, 0xd0, 0x0f, 1]);
        assert_eq!(bit_width(0), 1);
        assert_eq!(bit_width(199), 8);
    }
}
