//! One Parquet file of the table: `time_ns`, `channel`, `entity`, `frame`, one column per
//! field key, `removed`. Columns come from the channels' field specs at creation and from
//! the values of the first batch; the layout is fixed when the first batch is written
//! (a key met after that has no column: its values are counted as lost).
//!
//! Rows are buffered in batches bounded by rows and bytes; encoding and compressing run on
//! other threads, column by column, while the next batch fills ([`Encoder`]), and a row
//! group closes at `MAX_ROW_GROUP_ROWS` rows or `MAX_ROW_GROUP_BYTES` encoded, so memory
//! stays bounded whatever the input's length.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::types::{Int32Type, Int64Type, UInt64Type};
use arrow_array::StringArray;
use arrow_array::{new_null_array, ArrayRef, DictionaryArray, PrimitiveArray, RecordBatch};
use arrow_buffer::{NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use super::column::{Column, Fit, Kind};
use super::encoder::Encoder;
use crate::formats::frames::Packed;
use crate::formats::{KeyType, WriteError};
use crate::model::{Channel, DType, Entity, Record, Value};

/// Columns every table has, and the names a key cannot take.
pub const FIXED: [&str; 5] = ["time_ns", "channel", "entity", "frame", "removed"];

/// Rows and bytes of a batch. The first batch, which decides the columns of keys no field
/// spec declared, may hold more bytes (a larger bound, the look-ahead's, doubled the peak
/// RSS). Larger batches encoded no faster and cost page faults: vectors over 128 KiB go back
/// to the system between batches (mimalloc's purge delay, src/main.rs). Figures:
/// docs/performance.md, "Parquet table, CSV from any source, `convert --each`".
const BATCH_ROWS: usize = 4096;
const BATCH_BYTES: usize = 4 << 20;
const FIRST_BATCH_BYTES: usize = 8 << 20;

/// Bytes of a row besides its values: its time, channel and frame.
const ROW_BYTES: usize = 20;

/// Why a value was not written, or was written in a wider type.
pub type Tally = HashMap<(usize, String, &'static str, bool), u64>;

const LATE_KEY: &str =
    "key first seen after the table's columns were laid out (past the look-ahead): no column";
const DUPLICATE: &str = "key given twice in one record: the first value is written";
const ENTITY_NAME: &str =
    "entity name in a column of integer ids (the first batch had ids only): written as null";

pub struct Table {
    /// The file being written, and the name errors give.
    file: PathBuf,
    shown: PathBuf,
    /// Channel names, for the `channel` dictionary.
    channels: Vec<String>,
    /// Key → column, per channel (by its index in `channels`).
    /// Key → its columns, per channel (by its index in `channels`): more than one where
    /// a key's values are of kinds no one column holds (3es mesh `data`: float32 vertices,
    /// uint32 indices).
    lookup: Vec<HashMap<String, Vec<usize>>>,
    columns: Vec<Column>,
    metadata: Vec<KeyValue>,
    times: Vec<i64>,
    channel_keys: Vec<i32>,
    entities: Entities,
    frames: Vec<i64>,
    frame_valid: NullBufferBuilder,
    /// The keys each row removes: (row of the batch, key).
    removed: Vec<(usize, String)>,
    /// Bytes of the batch's values (of every column), roughly.
    bytes: usize,
    /// Bytes of the batches handed to the encoder since this table last ended its row
    /// group ([`Table::end_group`]): with `bytes`, what it holds, at most.
    handed: usize,
    /// Set once the first batch is written: the layout is final.
    schema: Option<SchemaRef>,
    encoder: Option<Encoder>,
    /// The `channel` column's dictionary, while no channel is added.
    names: Option<ArrayRef>,
    /// Rows come a frame at a time ([`Table::push_packed`]), faster than one thread
    /// encodes them.
    packed: bool,
    pub rows: u64,
    pub tally: Tally,
    lost: Vec<(String, &'static str)>,
    /// Once the layout is final: per channel, the column each key of its last record went
    /// to, by the key's position in the record (records of a channel mostly carry the same
    /// keys in the same order), so a row costs a string compare per value, not a hash
    /// lookup and a kind (with its shape, allocated) per value.
    recent: Vec<Vec<Recent>>,
    /// The types the source's family gives its keys, whatever this file's values are.
    key_types: &'static [(&'static str, KeyType)],
    /// Encoded on the thread that fills the batches ([`Encoder::here`]).
    here: bool,
}

/// A key of a channel's last record, the sort of value it had, and its column.
struct Recent {
    key: String,
    sort: Sort,
    column: usize,
}

/// What decides the column of a value once the layout is final: its kind without a list's
/// shape (columns hold lists of any shape of their dtype).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sort {
    Scalar(DType),
    List(DType),
    Json,
    Binary,
}

impl Sort {
    fn of(value: &Value) -> Option<Sort> {
        Some(match value {
            Value::Bool(_) => Sort::Scalar(DType::Bool),
            Value::Int(_) => Sort::Scalar(DType::I64),
            Value::UInt(_) => Sort::Scalar(DType::U64),
            Value::Float(_) => Sort::Scalar(DType::F64),
            Value::F32(_) => Sort::Scalar(DType::F32),
            Value::Str(_) => Sort::Scalar(DType::Str),
            Value::Array(a) => Sort::List(a.dtype()),
            Value::List(_) | Value::Map(_) | Value::Dict(_) => Sort::Json,
            Value::Bytes(_) | Value::Ext { .. } => Sort::Binary,
            Value::Null | Value::Removed => return None,
        })
    }
}

fn io(path: &Path, e: impl std::fmt::Display) -> WriteError {
    WriteError::io(path, std::io::Error::other(e.to_string()))
}

impl Table {
    /// A table written to `file` (errors name `shown`), laid out for `channels` from their
    /// field specs.
    pub fn new(file: PathBuf, shown: PathBuf, metadata: Vec<KeyValue>) -> Table {
        Table {
            file,
            shown,
            channels: Vec::new(),
            lookup: Vec::new(),
            columns: Vec::new(),
            metadata,
            times: Vec::new(),
            channel_keys: Vec::new(),
            entities: Entities::Undecided(Vec::new()),
            frames: Vec::new(),
            frame_valid: NullBufferBuilder::new(0),
            removed: Vec::new(),
            bytes: 0,
            handed: 0,
            schema: None,
            encoder: None,
            names: None,
            packed: false,
            rows: 0,
            tally: Tally::new(),
            lost: Vec::new(),
            recent: Vec::new(),
            key_types: &[],
            here: false,
        }
    }

    /// The table encoded on the thread that fills it, not on one of its own.
    pub fn encoded_here(mut self) -> Table {
        self.here = true;
        self
    }

    /// The table with a column of the type `key_types` gives each of its keys, whatever
    /// the values' own (the source family's: `Family::key_types`).
    pub fn with_key_types(mut self, key_types: &'static [(&'static str, KeyType)]) -> Table {
        self.key_types = key_types;
        self
    }

    /// The kind of the column for `value` of `key`: the family's type of the key if it has
    /// one (a list shaped as the value is), else the value's own kind. `None` for a null.
    fn kind_of(&self, key: &str, value: &Value) -> Option<Kind> {
        let own = Kind::of_value(value)?;
        let len = match value {
            Value::List(items) => Some(items.len()),
            _ => None,
        };
        Some(self.family_kind(key, own, len))
    }

    /// `own` (of a value or a declared field of `key`), or the type the family gives the
    /// key: a list shaped as `own` is, or as a list of `len` items.
    fn family_kind(&self, key: &str, own: Kind, len: Option<usize>) -> Kind {
        let Some((_, key_type)) = self.key_types.iter().find(|(k, _)| *k == key) else {
            return own;
        };
        match *key_type {
            KeyType::Scalar(d) => Kind::Scalar(d),
            KeyType::List(d) => Kind::List(
                d,
                match own {
                    Kind::List(_, shape) => shape,
                    _ => len.into_iter().collect(),
                },
            ),
        }
    }

    /// Adds a channel (its index is the next one) and columns for its declared fields.
    pub fn add_channel(&mut self, channel: &Channel) {
        self.channels.push(channel.name.clone());
        self.lookup.push(HashMap::new());
        let c = self.channels.len() - 1;
        for spec in &channel.fields {
            if let Some(kind) = Kind::of_spec(spec) {
                let kind = self.family_kind(&spec.name, kind, None);
                if let Some(i) = self.resolve(c, &spec.name, Some(kind), spec.unit.clone()) {
                    self.columns[i].declared = true;
                }
            }
        }
    }

    /// The column of `key` in channel `c` for a value of `kind`: one it has that holds the
    /// kind, else (before the layout is final) a column of that name another channel has, or
    /// a new one. After the layout is final, the key's first column (values are converted
    /// where they fit exactly, else lost). `kind` is `None` for a null.
    fn resolve(
        &mut self,
        c: usize,
        key: &str,
        kind: Option<Kind>,
        unit: Option<String>,
    ) -> Option<usize> {
        let have = self.lookup.get(c).and_then(|m| m.get(key));
        if let Some(cols) = have {
            let found = match &kind {
                None => cols.first(),
                Some(k) => cols
                    .iter()
                    .find(|&&i| self.columns[i].kind.holds(k))
                    .or_else(|| {
                        let convert = self.schema.is_some()
                            || cols.first().is_some_and(|&i| {
                                self.columns[i].declared && self.columns[i].kind.accepts(k)
                            });
                        convert.then(|| cols.first()).flatten()
                    }),
            };
            if let Some(&i) = found {
                return Some(i);
            }
        }
        let kind = kind?;
        if self.schema.is_some() {
            return None;
        }
        let first_of_key = have.is_none();
        let shared = self.columns.iter().position(|col| {
            first_of_key && col.name == key && col.key == key && col.kind.holds(&kind)
        });
        let i = match shared {
            Some(i) => i,
            None => {
                let taken = |name: &str, cols: &[Column]| {
                    FIXED.contains(&name) || cols.iter().any(|col| col.name == name)
                };
                let candidates = [
                    key.to_string(),
                    format!("{key}.{}", kind.short_name()),
                    format!("{}.{key}", self.channels[c]),
                    format!("{}.{key}.{}", self.channels[c], kind.short_name()),
                ];
                let start = if first_of_key { 0 } else { 1 };
                let mut name = candidates[start..]
                    .iter()
                    .find(|n| !taken(n, &self.columns))
                    .cloned();
                let mut n = 2;
                while name.is_none() {
                    let next = format!("{}#{n}", candidates[3]);
                    if !taken(&next, &self.columns) {
                        name = Some(next);
                    }
                    n += 1;
                }
                let name = name.unwrap_or_default();
                // Null in the rows before this one ([`Column::pad`]).
                let column = Column::new(name, key.to_string(), kind, unit);
                self.columns.push(column);
                self.columns.len() - 1
            }
        };
        self.lookup[c].entry(key.to_string()).or_default().push(i);
        Some(i)
    }

    /// Appends `record` as a row of channel `c`.
    pub fn push(&mut self, c: usize, record: &Record) -> Result<(), WriteError> {
        let row = self.times.len();
        let fast = self.schema.is_some();
        if fast && self.recent.len() <= c {
            self.recent.resize_with(c + 1, Vec::new);
        }
        for (j, (key, value)) in record.values.iter().enumerate() {
            if *value == Value::Removed {
                self.removed.push((row, key.clone()));
                continue;
            }
            let sort = Sort::of(value);
            // The layout is final: the column of a key and sort never changes.
            let known = match (fast, sort) {
                (true, Some(sort)) => self.recent[c]
                    .get(j)
                    .filter(|r| r.sort == sort && r.key == *key)
                    .map(|r| r.column),
                _ => None,
            };
            let found = match known {
                Some(i) => Some(i),
                None => {
                    let i = self.resolve(c, key, self.kind_of(key, value), None);
                    if let (true, Some(sort), Some(column)) = (fast, sort, i) {
                        let entry = Recent {
                            key: key.clone(),
                            sort,
                            column,
                        };
                        let recent = &mut self.recent[c];
                        match recent.len().cmp(&j) {
                            std::cmp::Ordering::Equal => recent.push(entry),
                            std::cmp::Ordering::Greater => recent[j] = entry,
                            // A position before it was not cached (a null): not this one.
                            std::cmp::Ordering::Less => {}
                        }
                    }
                    i
                }
            };
            let Some(i) = found else {
                if *value != Value::Null {
                    *self
                        .tally
                        .entry((c, key.clone(), LATE_KEY, true))
                        .or_default() += 1;
                }
                continue;
            };
            let column = &mut self.columns[i];
            if self.schema.is_none() {
                column.widen_for(value);
            }
            if column.len > row {
                *self
                    .tally
                    .entry((c, key.clone(), DUPLICATE, true))
                    .or_default() += 1;
                continue;
            }
            column.pad(row);
            let before = column.bytes;
            let fit = column.push(value, &mut self.lost);
            self.bytes += column.bytes - before;
            match fit {
                Fit::Exact => {}
                Fit::Widened(why) => {
                    *self.tally.entry((c, key.clone(), why, false)).or_default() += 1
                }
                Fit::Lost(why) | Fit::Kept(why) => {
                    *self.tally.entry((c, key.clone(), why, true)).or_default() += 1
                }
            }
        }
        for (key, why) in self.lost.drain(..) {
            *self.tally.entry((c, key, why, true)).or_default() += 1;
        }
        self.times.push(record.time);
        self.channel_keys.push(c as i32);
        self.push_entity(c, record.entity.as_ref())?;
        self.frames.push(record.frame.unwrap_or(0));
        self.frame_valid.append(record.frame.is_some());
        self.end_row()
    }

    fn push_entity(&mut self, c: usize, entity: Option<&Entity>) -> Result<(), WriteError> {
        if self.entities.push(entity) {
            *self
                .tally
                .entry((c, "entity".into(), ENTITY_NAME, true))
                .or_default() += 1;
        }
        if self.entities.text_len() > i32::MAX as usize {
            return Err(io(
                &self.shown,
                "the entity names of one batch exceed 2 GiB",
            ));
        }
        Ok(())
    }

    /// Counts the row just filled, and writes the batch when it is full.
    fn end_row(&mut self) -> Result<(), WriteError> {
        self.rows += 1;
        let (rows, bytes) = self.limits();
        // As when the batch's bytes were summed over the columns at every row.
        if self.times.len() >= rows || 32 + self.bytes >= bytes {
            self.flush()?;
        }
        Ok(())
    }

    /// The column of channel `c`'s field `key` whose values are packed as `packed`, when
    /// the values go into it exactly as their model values would through [`Table::push`],
    /// with nothing to count ([`Column::takes_packed`]), and no column is made for them.
    pub fn packed_column(&mut self, c: usize, key: &str, packed: &Packed) -> Option<usize> {
        // The kind of the value a record would carry: integers are 64-bit (`Value::Int`).
        let kind = match (packed.shape.is_empty(), packed.dtype) {
            (true, DType::I32 | DType::I64) => Kind::Scalar(DType::I64),
            (true, d) => Kind::Scalar(d),
            (false, d) => Kind::List(d, packed.shape.clone()),
        };
        let before = self.columns.len();
        let i = self.resolve(c, key, Some(kind), None)?;
        (i < before && self.columns[i].takes_packed(packed)).then_some(i)
    }

    /// Appends a row per signal of `rows`, in order, their values packed in `block`, at
    /// `time` and `frame`: as [`Table::push`] would append their records (the batches end at
    /// the same rows), a run of rows at a time.
    pub fn push_packed(
        &mut self,
        rows: &PackedRows,
        time: i64,
        frame: i64,
        block: &[u8],
    ) -> Result<(), WriteError> {
        self.packed = true;
        let mut a = 0;
        while a < rows.len() {
            let (max_rows, max_bytes) = self.limits();
            // The rows up to the batch's end: by rows, or the row whose value fills it.
            let room = max_rows.saturating_sub(self.times.len()).max(1);
            let mut b = a;
            let mut bytes = self.bytes;
            while b < rows.len() && b - a < room {
                bytes += rows.bytes[b];
                b += 1;
                if 32 + bytes >= max_bytes {
                    break;
                }
            }
            let n = b - a;
            let first = self.times.len();
            // Scalars: a column's rows of the run appended at once, its values set in place.
            for (column, at) in &rows.scalars {
                let Some(column) = self.columns.get_mut(*column) else {
                    continue;
                };
                let (lo, hi) = (
                    at.partition_point(|&r| r < a),
                    at.partition_point(|&r| r < b),
                );
                column.pad(first);
                column.push_packed_rows(n, a, &at[lo..hi], &rows.offsets, block);
            }
            let (lo, hi) = (
                rows.lists.partition_point(|&r| r < a),
                rows.lists.partition_point(|&r| r < b),
            );
            for &r in &rows.lists[lo..hi] {
                let Some(column) = self.columns.get_mut(rows.columns[r]) else {
                    continue;
                };
                column.pad(first + r - a);
                column.push_packed_array(&rows.packed[r], block, rows.offsets[r]);
            }
            self.bytes = bytes;
            self.times.resize(first + n, time);
            self.channel_keys.extend_from_slice(&rows.channels[a..b]);
            self.frames.resize(first + n, frame);
            self.frame_valid.append_n_non_nulls(n);
            self.push_entities(rows, a, b)?;
            self.rows += n as u64;
            if self.times.len() >= max_rows || 32 + self.bytes >= max_bytes {
                self.flush()?;
            }
            a = b;
        }
        Ok(())
    }

    /// The entities of `rows[a..b]`: their names copied in one piece where the column holds
    /// text.
    fn push_entities(&mut self, rows: &PackedRows, a: usize, b: usize) -> Result<(), WriteError> {
        let Entities::Text {
            bytes,
            offsets,
            valid,
        } = &mut self.entities
        else {
            for r in a..b {
                self.push_entity(rows.channels[r] as usize, rows.entities[r].as_ref())?;
            }
            return Ok(());
        };
        let start = match a {
            0 => 0,
            _ => rows.text_ends[a - 1],
        };
        let end = rows.text_ends[b - 1];
        if bytes.len() + (end - start) > i32::MAX as usize {
            return Err(io(
                &self.shown,
                "the entity names of one batch exceed 2 GiB",
            ));
        }
        let base = bytes.len() - start;
        bytes.extend_from_slice(&rows.text[start..end]);
        offsets.extend(rows.text_ends[a..b].iter().map(|e| (base + e) as i32));
        if rows.named {
            valid.append_n_non_nulls(b - a);
        } else {
            for e in &rows.entities[a..b] {
                valid.append(e.is_some());
            }
        }
        Ok(())
    }

    /// Rows and bytes of the batch being filled, at most.
    fn limits(&self) -> (usize, usize) {
        match self.schema {
            Some(_) => (BATCH_ROWS, BATCH_BYTES),
            None => (BATCH_ROWS, FIRST_BATCH_BYTES),
        }
    }

    /// The layout, final from now on, and the thread that encodes it.
    fn start(&mut self) -> Result<SchemaRef, WriteError> {
        let ids = self.entities.decide();
        let mut fields = vec![
            Field::new("time_ns", DataType::Int64, false),
            Field::new(
                "channel",
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                false,
            ),
            Field::new(
                "entity",
                if ids {
                    DataType::UInt64
                } else {
                    DataType::Utf8
                },
                true,
            ),
            Field::new("frame", DataType::Int64, true),
        ];
        fields.extend(self.columns.iter().map(Column::field));
        fields.push(Field::new(
            "removed",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            true,
        ));
        let schema: SchemaRef = Arc::new(Schema::new(fields));
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_key_value_metadata(Some(self.metadata.clone()))
            // A dictionary tried on float columns only costs time before the writer falls
            // back to PLAIN: dictionaries where values repeat (names, JSON state, entities).
            .set_dictionary_enabled(false);
        let texts = self
            .columns
            .iter()
            .filter(|c| matches!(c.kind, Kind::Json | Kind::Scalar(crate::model::DType::Str)))
            .map(|c| ColumnPath::from(c.name.as_str()));
        for path in ["channel", "entity"]
            .into_iter()
            .map(ColumnPath::from)
            .chain(texts)
        {
            props = props.set_column_dictionary_enabled(path, true);
        }
        // Float columns whose values zstd barely shrinks (positions and velocities of a
        // simulation: every mantissa bit is noise) are stored uncompressed: compressing
        // them cost the encoding thread much time to save little (docs/performance.md,
        // "Figures from code comments").
        for column in &self.columns {
            if let Some(sample) = column.float_sample(SAMPLE_BYTES) {
                if sample.len() >= SAMPLE_BYTES / 16 && !compresses(&sample) {
                    props = props.set_column_compression(
                        ColumnPath::new(column.leaf_path()),
                        Compression::UNCOMPRESSED,
                    );
                }
            }
        }
        let file = File::create(&self.file).map_err(|e| WriteError::io(&self.shown, e))?;
        let labels = self.packed.then_some(&super::labels::LABELS[..]);
        let encoder = match self.here && labels.is_none() {
            true => Encoder::here(file, schema.clone(), props),
            false => Encoder::new(file, schema.clone(), props, labels),
        };
        let encoder = encoder.map_err(|e| io(&self.shown, e))?;
        self.encoder = Some(encoder);
        self.schema = Some(schema.clone());
        Ok(schema)
    }

    fn flush(&mut self) -> Result<(), WriteError> {
        let schema = match &self.schema {
            Some(s) => s.clone(),
            None => self.start()?,
        };
        if self.times.is_empty() {
            return Ok(());
        }
        let rows = self.times.len();
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(self.columns.len() + 5);
        let times = std::mem::replace(&mut self.times, Vec::with_capacity(rows));
        arrays.push(Arc::new(PrimitiveArray::<Int64Type>::new(
            ScalarBuffer::from(times),
            None,
        )));
        let keys = std::mem::replace(&mut self.channel_keys, Vec::with_capacity(rows));
        let keys = PrimitiveArray::<Int32Type>::new(ScalarBuffer::from(keys), None);
        let names = match &self.names {
            Some(names) if names.len() == self.channels.len() => names.clone(),
            _ => {
                let names: ArrayRef = Arc::new(StringArray::from_iter_values(self.channels.iter()));
                self.names = Some(names.clone());
                names
            }
        };
        arrays.push(Arc::new(
            DictionaryArray::<Int32Type>::try_new(keys, names).map_err(|e| io(&self.shown, e))?,
        ));
        arrays.push(self.entities.take().map_err(|e| io(&self.shown, e))?);
        let frames = std::mem::replace(&mut self.frames, Vec::with_capacity(rows));
        arrays.push(Arc::new(PrimitiveArray::<Int64Type>::new(
            ScalarBuffer::from(frames),
            self.frame_valid.finish(),
        )));
        for column in &mut self.columns {
            let column = column.take(rows, self.packed);
            arrays.push(column.map_err(|e| io(&self.shown, e))?);
        }
        arrays.push(removed(std::mem::take(&mut self.removed), rows));
        self.handed += std::mem::take(&mut self.bytes) + rows * ROW_BYTES;
        let batch = RecordBatch::try_new(schema, arrays).map_err(|e| io(&self.shown, e))?;
        match &mut self.encoder {
            Some(encoder) => encoder.write(batch).map_err(|e| io(&self.shown, e)),
            None => Err(io(&self.shown, "the Parquet writer stopped")),
        }
    }

    /// Whether the columns are laid out (the first batch is written): final from then on.
    pub fn laid_out(&self) -> bool {
        self.schema.is_some()
    }

    /// Bytes of values this table holds in memory at most: its batch, and its row group
    /// being encoded (counted before encoding and compression, so an upper bound).
    pub fn held(&self) -> usize {
        self.bytes + self.times.len() * ROW_BYTES + self.handed
    }

    /// Writes the batch and closes the row group, so that what it held leaves memory. The
    /// row groups then depend on what the writer of many tables decided from the data,
    /// still the same on every run.
    pub fn end_group(&mut self) -> Result<(), WriteError> {
        self.flush()?;
        self.handed = 0;
        match &mut self.encoder {
            Some(encoder) => encoder.end_group().map_err(|e| io(&self.shown, e)),
            None => Ok(()),
        }
    }

    /// Writes what is buffered and the footer; the name of each channel for the tally.
    pub fn close(mut self) -> Result<(u64, Tally, Vec<String>), WriteError> {
        self.flush()?;
        if let Some(encoder) = self.encoder.take() {
            encoder.close().map_err(|e| io(&self.shown, e))?;
        }
        let tally = std::mem::take(&mut self.tally);
        let channels = std::mem::take(&mut self.channels);
        Ok((self.rows, tally, channels))
    }
}

/// Rows of signals whose values come packed in a block ([`Table::push_packed`]), one per
/// signal, each bound to its column ([`Table::packed_column`]).
#[derive(Default)]
pub struct PackedRows {
    channels: Vec<i32>,
    entities: Vec<Option<Entity>>,
    /// The entities as text (a name, an id in decimal), one after the other, and where each
    /// row's ends.
    text: Vec<u8>,
    text_ends: Vec<usize>,
    /// Whether every row has an entity.
    named: bool,
    columns: Vec<usize>,
    packed: Vec<Packed>,
    offsets: Vec<usize>,
    /// Bytes each row's value adds to the batch (as [`Column::bytes`] counts them).
    bytes: Vec<usize>,
    /// The rows of each column of scalars, and the rows of arrays (into list columns).
    scalars: Vec<(usize, Vec<usize>)>,
    lists: Vec<usize>,
}

impl PackedRows {
    pub fn new() -> PackedRows {
        PackedRows {
            named: true,
            ..PackedRows::default()
        }
    }

    /// Adds a row of channel `c` and `entity`, its value packed as `packed` at `offset`,
    /// into `column`.
    pub fn add(
        &mut self,
        c: usize,
        entity: Option<Entity>,
        column: usize,
        packed: Packed,
        offset: usize,
    ) {
        match &entity {
            Some(Entity::Name(n)) => self.text.extend_from_slice(n.as_bytes()),
            Some(Entity::Id(id)) => self
                .text
                .extend_from_slice(itoa::Buffer::new().format(*id).as_bytes()),
            None => self.named = false,
        }
        self.text_ends.push(self.text.len());
        let row = self.columns.len();
        if packed.shape.is_empty() {
            match self.scalars.iter_mut().find(|(i, _)| *i == column) {
                Some((_, rows)) => rows.push(row),
                None => self.scalars.push((column, vec![row])),
            }
        } else {
            self.lists.push(row);
        }
        self.channels.push(i32::try_from(c).unwrap_or(i32::MAX));
        self.entities.push(entity);
        self.columns.push(column);
        self.bytes.push(packed.count() * 8);
        self.packed.push(packed);
        self.offsets.push(offset);
    }

    pub fn len(&self) -> usize {
        self.columns.len()
    }
}

/// The `removed` column of a batch of `rows` rows: the keys each row removes, null where
/// it removes none.
fn removed(keys: Vec<(usize, String)>, rows: usize) -> ArrayRef {
    let item = Arc::new(Field::new("item", DataType::Utf8, true));
    if keys.is_empty() {
        return new_null_array(&DataType::List(item), rows);
    }
    let mut list = ListBuilder::new(StringBuilder::new());
    let mut keys = keys.into_iter().peekable();
    for row in 0..rows {
        let mut any = false;
        while let Some((_, key)) = keys.next_if(|(r, _)| *r == row) {
            list.values().append_value(key);
            any = true;
        }
        list.append(any);
    }
    Arc::new(list.finish())
}

/// The `entity` column of a batch.
enum Entities {
    /// Before the layout is final: the first batch decides between integer ids and text.
    Undecided(Vec<Option<Entity>>),
    Ids {
        ids: Vec<u64>,
        valid: NullBufferBuilder,
    },
    Text {
        bytes: Vec<u8>,
        offsets: Vec<i32>,
        valid: NullBufferBuilder,
    },
}

impl Entities {
    /// Appends a row's entity; true for a name in a column of integer ids (written as
    /// null, and counted).
    fn push(&mut self, entity: Option<&Entity>) -> bool {
        match self {
            Entities::Undecided(v) => v.push(entity.cloned()),
            Entities::Ids { ids, valid } => {
                let id = entity.and_then(Entity::id);
                ids.push(id.unwrap_or(0));
                valid.append(id.is_some());
                return matches!(entity, Some(Entity::Name(_)));
            }
            Entities::Text {
                bytes,
                offsets,
                valid,
            } => {
                match entity {
                    Some(Entity::Name(n)) => bytes.extend_from_slice(n.as_bytes()),
                    Some(Entity::Id(id)) => {
                        bytes.extend_from_slice(itoa::Buffer::new().format(*id).as_bytes())
                    }
                    None => {}
                }
                offsets.push(i32::try_from(bytes.len()).unwrap_or(i32::MAX));
                valid.append(entity.is_some());
            }
        }
        false
    }

    /// Bytes of text buffered.
    fn text_len(&self) -> usize {
        match self {
            Entities::Text { bytes, .. } => bytes.len(),
            _ => 0,
        }
    }

    /// Decides from the rows so far (the first batch) whether the column holds integer
    /// ids: when every entity is one and there is at least one.
    fn decide(&mut self) -> bool {
        let Entities::Undecided(rows) = self else {
            return matches!(self, Entities::Ids { .. });
        };
        let rows = std::mem::take(rows);
        let ids =
            rows.iter().flatten().all(|e| e.id().is_some()) && rows.iter().any(Option::is_some);
        *self = if ids {
            Entities::Ids {
                ids: Vec::new(),
                valid: NullBufferBuilder::new(0),
            }
        } else {
            Entities::Text {
                bytes: Vec::new(),
                offsets: vec![0],
                valid: NullBufferBuilder::new(0),
            }
        };
        for e in &rows {
            self.push(e.as_ref());
        }
        ids
    }

    /// The batch as an Arrow array; the next batch starts empty.
    fn take(&mut self) -> Result<ArrayRef, arrow_schema::ArrowError> {
        Ok(match self {
            Entities::Undecided(_) => {
                return Err(arrow_schema::ArrowError::InvalidArgumentError(
                    "the entity column's type is not decided".into(),
                ))
            }
            Entities::Ids { ids, valid } => {
                let n = ids.len();
                Arc::new(PrimitiveArray::<UInt64Type>::new(
                    ScalarBuffer::from(std::mem::replace(ids, Vec::with_capacity(n))),
                    valid.finish(),
                ))
            }
            Entities::Text {
                bytes,
                offsets,
                valid,
            } => {
                let mut next = Vec::with_capacity(offsets.len());
                next.push(0);
                let offsets = std::mem::replace(offsets, next);
                let text = std::mem::replace(bytes, Vec::with_capacity(bytes.len()));
                let nulls = valid.finish();
                *valid = NullBufferBuilder::new(offsets.len());
                Arc::new(StringArray::try_new(
                    OffsetBuffer::new(ScalarBuffer::from(offsets)),
                    text.into(),
                    nulls,
                )?)
            }
        })
    }
}

/// Bytes of a float column's first batch compressed on trial, at most (at least a
/// sixteenth of it: a first batch of 4,096 rows of 7 doubles is 224 KiB).
pub const SAMPLE_BYTES: usize = 1 << 20;

/// Whether zstd (level 1, as the file is written) saves at least a sixteenth of `sample`
/// (what an Elodin replay's and NanoVer's positions save: docs/performance.md, "Figures from
/// code comments").
pub fn compresses(sample: &[u8]) -> bool {
    match zstd::bulk::compress(sample, 1) {
        Ok(packed) => packed.len() * 16 < sample.len() * 15,
        // Compressed as every other column, then.
        Err(_) => true,
    }
}

impl Drop for Table {
    /// A table dropped unfinished (an error elsewhere) still ends its threads before the
    /// output is removed.
    fn drop(&mut self) {
        self.encoder = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ArrayData, ChannelKind, Composition};

    fn record(time: i64, values: Vec<(&str, Value)>) -> Record {
        let mut r = Record::new(time, 0);
        r.values = values.into_iter().map(|(k, v)| (k.into(), v)).collect();
        r
    }

    #[test]
    fn a_key_first_seen_after_the_first_batch_is_counted_as_lost() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.parquet");
        let mut table = Table::new(file.clone(), file.clone(), Vec::new());
        table.add_channel(&Channel::new(
            "state",
            ChannelKind::Signals,
            Composition::StateDelta,
        ));
        let n = BATCH_ROWS as i64 + 10;
        for i in 0..n {
            let mut values = vec![("x", Value::Float(i as f64))];
            if i == n - 1 {
                values.push(("late", Value::Int(1)));
            }
            if i == 1 {
                values.push(("early", Value::Map(vec![("a".into(), Value::Int(2))])));
            }
            table.push(0, &record(i, values)).unwrap();
        }
        let (rows, tally, _) = table.close().unwrap();
        assert_eq!(rows, n as u64);
        assert_eq!(tally.len(), 1);
        assert_eq!(tally[&(0, "late".to_string(), LATE_KEY, true)], 1);
        let bytes = std::fs::read(&file).unwrap();
        assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
    }

    #[test]
    fn a_declared_column_takes_every_value_of_its_key_converted_or_lost() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.parquet");
        let mut table = Table::new(file.clone(), file.clone(), Vec::new());
        let mut channel = Channel::new("s", ChannelKind::Signals, Composition::SampleHold);
        channel.fields = vec![crate::model::FieldSpec::typed(
            "on",
            crate::model::DType::Bool,
            &[],
        )];
        table.add_channel(&channel);
        for (i, v) in [Value::Int(1), Value::Int(0), Value::Int(7)]
            .into_iter()
            .enumerate()
        {
            table.push(0, &record(i as i64, vec![("on", v)])).unwrap();
        }
        assert_eq!(table.columns.len(), 1);
        let (_, tally, _) = table.close().unwrap();
        assert_eq!(tally.values().sum::<u64>(), 1, "{tally:?}");
    }

    /// A float list column of noise is stored uncompressed, a constant one compressed, and
    /// the fast path of later batches puts every value in its column (keys in another order,
    /// a null, a key of another kind).
    #[test]
    fn noise_columns_are_stored_plain_and_later_rows_find_their_columns() {
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.parquet");
        let mut table = Table::new(file.clone(), file.clone(), Vec::new());
        table.add_channel(&Channel::new(
            "body",
            ChannelKind::Signals,
            Composition::SampleHold,
        ));
        let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
        let n = 3 * BATCH_ROWS;
        for i in 0..n {
            let noise: Vec<f64> = (0..7)
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    f64::from_bits(s & !(1 << 62))
                })
                .collect();
            let noise = Value::Array(crate::model::Array::flat(ArrayData::F64(noise)));
            let constant = Value::Array(crate::model::Array::flat(ArrayData::F64(vec![1.5; 7])));
            let mut values = vec![("pos", noise), ("inertia", constant)];
            if i == n - 2 {
                values.reverse();
            }
            if i == n - 1 {
                values[1].1 = Value::Null;
            }
            table.push(0, &record(i as i64, values)).unwrap();
        }
        let (rows, tally, _) = table.close().unwrap();
        assert_eq!(rows, n as u64);
        assert!(tally.is_empty(), "{tally:?}");
        let reader = SerializedFileReader::new(File::open(&file).unwrap()).unwrap();
        let group = reader.metadata().row_group(0);
        let codec = |name: &str| {
            (0..group.num_columns())
                .map(|c| group.column(c))
                .find(|c| c.column_path().string() == name)
                .map(|c| c.compression())
                .unwrap()
        };
        assert_eq!(codec("pos.list.item"), Compression::UNCOMPRESSED);
        assert!(matches!(codec("inertia.list.item"), Compression::ZSTD(_)));
        assert!(matches!(codec("time_ns"), Compression::ZSTD(_)));
        let values: i64 = (0..reader.metadata().num_row_groups())
            .map(|g| {
                let group = reader.metadata().row_group(g);
                (0..group.num_columns())
                    .map(|c| group.column(c))
                    .filter(|c| c.column_path().string() == "inertia.list.item")
                    .map(|c| c.num_values())
                    .sum::<i64>()
            })
            .sum();
        // Every row's 7 constants, but the null's one level.
        assert_eq!(values, 7 * (n as i64 - 1) + 1);
        // The rows whose keys came in another order, or with a null, in the right columns.
        let batches: Vec<RecordBatch> =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                File::open(&file).unwrap(),
            )
            .unwrap()
            .build()
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let list = |name: &str, row: usize| -> Option<Vec<f64>> {
            let mut row = row;
            let batch = batches
                .iter()
                .find(|b| {
                    let here = row < b.num_rows();
                    if !here {
                        row -= b.num_rows();
                    }
                    here
                })
                .unwrap();
            let column = batch
                .column_by_name(name)
                .unwrap()
                .as_any()
                .downcast_ref::<arrow_array::ListArray>()
                .unwrap();
            if arrow_array::Array::is_null(column, row) {
                return None;
            }
            let values = column.value(row);
            let values = values
                .as_any()
                .downcast_ref::<PrimitiveArray<arrow_array::types::Float64Type>>()
                .unwrap();
            Some(values.values().to_vec())
        };
        for row in [n - 3, n - 2, n - 1] {
            let inertia = list("inertia", row);
            if row == n - 1 {
                assert_eq!(inertia, None);
            } else {
                assert_eq!(inertia, Some(vec![1.5; 7]), "row {row}");
            }
            let pos = list("pos", row).unwrap();
            assert!(pos.iter().all(|&x| x.abs() < 2.0 && x != 1.5));
        }
    }
}
