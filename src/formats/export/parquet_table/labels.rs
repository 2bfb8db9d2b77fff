//! The `channel` and `entity` columns of a table written by columns, dictionary-encoded
//! here instead of by the `parquet` crate.
//!
//! The crate looks every value of a string column up in its dictionary (a hash and a
//! comparison) and compares it twice more for the statistics; for an Icarus table, a row per
//! signal value, that was a large share of the encoding's CPU time (docs/performance.md,
//! "Icarus → Parquet table by frames"). Here a row costs a look-up
//! by its key (`channel`, a dictionary array) or one comparison with the row before
//! (`entity`: names come in runs), and the statistics are taken over the dictionary once
//! per row group. The chunk is laid out as the crate lays one out (`chunk.rs`): a PLAIN
//! dictionary page, then data pages of at most [`PAGE_ROWS`] rows of RLE_DICTIONARY indices
//! (definition levels before them where the column is nullable).

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use bytes::Bytes;
use parquet::basic::{Compression, Encoding};
use parquet::column::writer::ColumnCloseResult;
use parquet::data_type::ByteArray;
use parquet::file::properties::WriterProperties;
use parquet::file::statistics::{Statistics, ValueStatistics};
use parquet::schema::types::ColumnDescPtr;

use super::chunk::{
    self, bit_width, definition_levels, hybrid_repeated, OwnColumn, Pages, Summary,
};

/// The table's columns of few distinct values, written here when they are text.
pub const LABELS: [&str; 2] = ["channel", "entity"];
/// Rows of a data page, at most (the crate's default row limit of a page).
pub const PAGE_ROWS: usize = 20_000;
/// A row without a value.
const NULL: u32 = u32::MAX;

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
    pages: Pages,
    /// Statistics are wanted, and their values cut to this many bytes at most.
    statistics: bool,
    truncate: Option<usize>,
    /// The dictionary, in the order values were first seen, and each value's index.
    values: Vec<Box<[u8]>>,
    index: HashMap<Box<[u8]>, u32>,
    /// Per key of the batch's dictionary array, the index of its value (`NULL`: not seen).
    by_key: Vec<u32>,
    /// The texts `by_key` is of, held so that they stay these texts: a batch whose
    /// dictionary is the same array keeps the look-ups (a NanoVer frame's 9,000 particles
    /// were looked up again every frame).
    keyed: Option<ArrayRef>,
    /// The length of the pattern the last batch of keys repeated, if any: where a page's
    /// indices are looked for one first.
    period: Option<usize>,
    /// A batch's indices, before they go into pages.
    mapped: Vec<u32>,
    /// Indices of the rows not in a page yet (`NULL` for a null), and how many are null.
    pending: Vec<u32>,
    pending_nulls: usize,
    rows: usize,
    nulls: u64,
    /// Bytes of the values of every row, as the crate counts them for the metadata.
    value_bytes: i64,
}

impl LabelColumn {
    pub fn new(descr: ColumnDescPtr, props: &WriterProperties) -> Result<LabelColumn, String> {
        let path = descr.path();
        Ok(LabelColumn {
            statistics: props.statistics_enabled(path)
                != parquet::file::properties::EnabledStatistics::None,
            truncate: props.statistics_truncate_length(),
            pages: Pages::new(descr.clone(), props.compression(path))?,
            values: Vec::new(),
            index: HashMap::new(),
            by_key: Vec::new(),
            keyed: None,
            period: None,
            mapped: Vec::new(),
            pending: Vec::with_capacity(PAGE_ROWS),
            pending_nulls: 0,
            rows: 0,
            nulls: 0,
            value_bytes: 0,
        })
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

    /// Appends the rows of a dictionary array of `Int32` keys and `Utf8` values.
    fn write_keys(&mut self, array: &ArrayRef) -> Result<(), String> {
        let dict = array
            .as_dictionary_opt::<Int32Type>()
            .ok_or("a label column of another key type")?;
        let names = dict
            .values()
            .as_string_opt::<i32>()
            .ok_or("a label column of other values than text")?;
        // Keys mean this batch's values: looked up again in each batch, unless its
        // dictionary is the array of the batch before.
        let same = (self.keyed.as_ref()).is_some_and(|k| same_array(k, dict.values()));
        if !same {
            self.by_key.clear();
            self.by_key.resize(names.len(), NULL);
            self.keyed = Some(dict.values().clone());
        }
        let keys = dict.keys().values();
        if dict.null_count() > 0 {
            for (row, key) in keys.iter().enumerate() {
                match dict.is_null(row) {
                    true => self.push(NULL)?,
                    false => {
                        let i = self.by_key(names, *key)?;
                        self.value_bytes += names.value_length(*key as usize) as i64;
                        self.push(i)?;
                    }
                }
            }
            return Ok(());
        }
        // No nulls (a frame's rows): each key of the batch is looked up once, then the
        // rows go in a page at a time, without a row's checks for a null and a full page.
        // Keys that repeat a pattern (every frame's signals) are looked up and mapped for
        // one pattern, which is then copied (docs/performance.md, "Lake, eighth pass").
        if keys.is_empty() {
            return Ok(());
        }
        let period = chunk::period(keys, self.period);
        self.period = period.or(self.period);
        let pattern = &keys[..period.unwrap_or(keys.len())];
        if pattern.iter().any(|&k| k as usize >= self.by_key.len()) {
            return Err("a label key out of its dictionary".into());
        }
        // Every key's length, also of those looked up in a batch before (the same
        // dictionary): they count in the chunk's bytes of values too.
        let mut lengths = vec![0i64; names.len()];
        for &key in pattern {
            if self.by_key[key as usize] == NULL {
                self.by_key(names, key)?;
            }
            lengths[key as usize] = names.value_length(key as usize) as i64;
        }
        // Taken for the loop below, which flushes pages; given back after it.
        let mut mapped = std::mem::take(&mut self.mapped);
        mapped.clear();
        mapped.extend(pattern.iter().map(|&k| self.by_key[k as usize]));
        while mapped.len() < keys.len() {
            let more = mapped.len().min(keys.len() - mapped.len());
            mapped.extend_from_within(..more);
        }
        let bytes = |keys: &[i32]| keys.iter().map(|&k| lengths[k as usize]).sum::<i64>();
        let copies = (keys.len() / pattern.len()) as i64;
        self.value_bytes += bytes(pattern) * copies + bytes(&keys[..keys.len() % pattern.len()]);
        let mut rows = &mapped[..];
        while !rows.is_empty() {
            let (now, rest) = rows.split_at(rows.len().min(PAGE_ROWS - self.pending.len()));
            self.pending.extend_from_slice(now);
            self.rows += now.len();
            rows = rest;
            if self.pending.len() == PAGE_ROWS {
                self.flush_page()?;
            }
        }
        self.mapped = mapped;
        Ok(())
    }

    /// The index of the value of `key` of `names` (a batch's dictionary).
    fn by_key(&mut self, names: &arrow_array::StringArray, key: i32) -> Result<u32, String> {
        let key = usize::try_from(key)
            .ok()
            .filter(|&k| k < self.by_key.len())
            .ok_or("a label key out of its dictionary")?;
        let mut i = self.by_key[key];
        if i == NULL {
            i = self.intern(names.value(key).as_bytes());
            self.by_key[key] = i;
        }
        Ok(i)
    }

    fn push(&mut self, i: u32) -> Result<(), String> {
        if i == NULL {
            self.nulls += 1;
            self.pending_nulls += 1;
        }
        self.pending.push(i);
        self.rows += 1;
        if self.pending.len() == PAGE_ROWS {
            self.flush_page()?;
        }
        Ok(())
    }

    /// The pending rows as a data page.
    fn flush_page(&mut self) -> Result<(), String> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut body = Vec::new();
        let rows = self.pending.len();
        let nulls = std::mem::take(&mut self.pending_nulls) > 0;
        let levels: Option<Vec<u32>> =
            nulls.then(|| self.pending.iter().map(|&i| u32::from(i != NULL)).collect());
        if self.pages.descr().max_def_level() == 1 {
            definition_levels(levels.as_deref(), rows, &mut body);
        }
        let filtered: Vec<u32>;
        let indices = match nulls {
            true => {
                filtered = (self.pending.iter().copied())
                    .filter(|&i| i != NULL)
                    .collect();
                &filtered[..]
            }
            false => &self.pending[..],
        };
        let width = bit_width(indices.iter().copied().max().unwrap_or(0));
        body.push(width as u8);
        hybrid_repeated(indices, self.period, width, &mut body);
        let first = self.rows - rows;
        self.pending.clear();
        self.pages
            .data_page(body, rows, first, Encoding::RLE_DICTIONARY)
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
}

impl OwnColumn for LabelColumn {
    /// Appends the rows of `array`: a dictionary array of `Int32` keys and `Utf8` values, or
    /// a `Utf8` array.
    fn write(&mut self, array: &ArrayRef) -> Result<(), String> {
        match array.data_type() {
            DataType::Dictionary(_, _) => self.write_keys(array)?,
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

    /// The encoded size so far (pages not written yet counted at a byte a row).
    fn estimated_bytes(&self) -> usize {
        self.pages.encoded() + self.pending.len()
    }

    fn close(mut self: Box<Self>) -> Result<(Bytes, ColumnCloseResult), String> {
        self.flush_page()?;
        let mut dictionary = Vec::new();
        for v in &self.values {
            dictionary.extend_from_slice(&(v.len() as u32).to_le_bytes());
            dictionary.extend_from_slice(v);
        }
        let statistics = self
            .statistics
            .then(|| (self.statistics(), Some(self.value_bytes)));
        let summary = Summary {
            encoding: Encoding::RLE_DICTIONARY,
            rows: self.rows,
            statistics,
        };
        let entries = self.values.len();
        self.pages.close(Some((dictionary, entries)), summary)
    }
}

/// Whether `a` and `b` are the same array: the same buffers, offset and length (Arrow's
/// buffers never change, and `a`, held, keeps its own from being reused).
fn same_array(a: &ArrayRef, b: &ArrayRef) -> bool {
    a.len() == b.len() && a.to_data().ptr_eq(&b.to_data())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncated_statistics_bound_the_values() {
        assert_eq!(utf8_prefix("aé".as_bytes(), 2), 1);
        assert_eq!(above(b"abc", 2).as_deref(), Some(&b"ac"[..]));
    }

    #[test]
    fn a_batch_of_the_same_dictionary_keeps_the_look_ups_and_another_does_not() {
        use arrow_array::{DictionaryArray, Int32Array, StringArray};
        use parquet::basic::{Repetition, Type as PhysicalType};
        use parquet::schema::types::{ColumnDescriptor, ColumnPath, Type};
        use std::sync::Arc;
        let leaf = Type::primitive_type_builder("c", PhysicalType::BYTE_ARRAY)
            .with_repetition(Repetition::OPTIONAL)
            .build()
            .unwrap();
        let descr = ColumnDescriptor::new(Arc::new(leaf), 1, 0, ColumnPath::from("c"));
        let props = WriterProperties::builder().build();
        let mut column = LabelColumn::new(Arc::new(descr), &props).unwrap();
        let batch = |names: &ArrayRef, keys: Vec<i32>| -> ArrayRef {
            Arc::new(DictionaryArray::new(Int32Array::from(keys), names.clone()))
        };
        let names: ArrayRef = Arc::new(StringArray::from(vec!["a", "b"]));
        column.write(&batch(&names, vec![1, 0])).unwrap();
        column.write(&batch(&names, vec![0, 1])).unwrap();
        let other: ArrayRef = Arc::new(StringArray::from(vec!["b", "c"]));
        column.write(&batch(&other, vec![1, 0])).unwrap();
        assert_eq!(column.pending, [0, 1, 1, 0, 2, 0]);
        // Each row's text counts, looked up in its batch or one before.
        assert_eq!(column.value_bytes, 6);
    }
}
