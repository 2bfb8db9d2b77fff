//! One Parquet file of the table: `time_ns`, `channel`, `entity`, `frame`, one column per
//! field key, `removed`. Columns come from the channels' field specs at creation and from
//! the values of the first batch; the layout is fixed when the first batch is written
//! (a key met after that has no column: its values are counted as lost).
//!
//! Rows are buffered in batches bounded by rows and bytes; encoding and compressing run on
//! a thread of their own while the next batch fills (the channel holds one batch), and the
//! Parquet writer closes a row group at [`MAX_ROW_GROUP_ROWS`] rows or
//! [`MAX_ROW_GROUP_BYTES`] encoded, so memory stays bounded whatever the input's length.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::types::{Int32Type, Int64Type, UInt64Type};
use arrow_array::{ArrayRef, DictionaryArray, PrimitiveArray, RecordBatch, StringArray};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use super::column::{Column, Fit, Kind};
use crate::formats::WriteError;
use crate::model::{Channel, DType, Entity, Record, Value};

/// Columns every table has, and the names a key cannot take.
pub const FIXED: [&str; 5] = ["time_ns", "channel", "entity", "frame", "removed"];

pub const MAX_ROW_GROUP_ROWS: usize = 1 << 20;
/// The Parquet writer keeps a row group's compressed pages until it is complete.
pub const MAX_ROW_GROUP_BYTES: usize = 16 << 20;
/// Rows and bytes of a batch. The first batch, which decides the columns of keys no field
/// spec declared, may hold more bytes (at 32 MiB, the look-ahead's bound, the 109 MB NanoVer
/// pair peaked at 111 MiB RSS; at 8 MiB, 59 MiB).
const BATCH_ROWS: usize = 4096;
const BATCH_BYTES: usize = 4 << 20;
const FIRST_BATCH_BYTES: usize = 8 << 20;

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
    entities: Vec<Option<Entity>>,
    frames: Vec<Option<i64>>,
    removed: ListBuilder<StringBuilder>,
    /// Whether the entity column holds integer ids (decided with the first batch).
    entity_ids: Option<bool>,
    bytes: usize,
    /// Set once the first batch is written: the layout is final.
    schema: Option<SchemaRef>,
    batches: Option<SyncSender<RecordBatch>>,
    thread: Option<JoinHandle<Result<(), String>>>,
    pub rows: u64,
    pub tally: Tally,
    lost: Vec<(String, &'static str)>,
    /// Once the layout is final: per channel, the column each key of its last record went
    /// to, by the key's position in the record (records of a channel mostly carry the same
    /// keys in the same order), so a row costs a string compare per value, not a hash
    /// lookup and a kind (with its shape, allocated) per value.
    recent: Vec<Vec<Recent>>,
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
            entities: Vec::new(),
            frames: Vec::new(),
            removed: ListBuilder::new(StringBuilder::new()),
            entity_ids: None,
            bytes: 0,
            schema: None,
            batches: None,
            thread: None,
            rows: 0,
            tally: Tally::new(),
            lost: Vec::new(),
            recent: Vec::new(),
        }
    }

    /// Adds a channel (its index is the next one) and columns for its declared fields.
    pub fn add_channel(&mut self, channel: &Channel) {
        self.channels.push(channel.name.clone());
        self.lookup.push(HashMap::new());
        let c = self.channels.len() - 1;
        for spec in &channel.fields {
            if let Some(kind) = Kind::of_spec(spec) {
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
                let mut column = Column::new(name, key.to_string(), kind, unit);
                for _ in 0..self.times.len() {
                    column.push_null();
                }
                self.columns.push(column);
                self.columns.len() - 1
            }
        };
        self.lookup[c].entry(key.to_string()).or_default().push(i);
        Some(i)
    }

    /// Appends `record` as a row of channel `c`.
    pub fn push(&mut self, c: usize, record: &Record) -> Result<(), WriteError> {
        // Columns a value creates below are filled with nulls up to this row.
        let row = self.times.len();
        let mut removed = false;
        let fast = self.schema.is_some();
        if fast && self.recent.len() <= c {
            self.recent.resize_with(c + 1, Vec::new);
        }
        for (j, (key, value)) in record.values.iter().enumerate() {
            if *value == Value::Removed {
                self.removed.values().append_value(key);
                removed = true;
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
                    let i = self.resolve(c, key, Kind::of_value(value), None);
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
            match column.push(value, &mut self.lost) {
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
        self.removed.append(removed);
        self.times.push(record.time);
        self.channel_keys.push(c as i32);
        self.entities.push(record.entity.clone());
        self.frames.push(record.frame);
        let mut bytes = 32;
        for column in &mut self.columns {
            if column.len == row {
                column.push_null();
            }
            bytes += column.bytes;
        }
        self.bytes = bytes;
        self.rows += 1;
        let limit = if self.schema.is_some() {
            BATCH_BYTES
        } else {
            FIRST_BATCH_BYTES
        };
        if self.times.len() >= BATCH_ROWS || self.bytes >= limit {
            self.flush()?;
        }
        Ok(())
    }

    /// The layout, final from now on, and the thread that encodes it.
    fn start(&mut self) -> Result<SchemaRef, WriteError> {
        let ids = self.entities.iter().flatten().all(|e| e.id().is_some())
            && self.entities.iter().any(Option::is_some);
        self.entity_ids = Some(ids);
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
            .set_max_row_group_row_count(Some(MAX_ROW_GROUP_ROWS))
            .set_max_row_group_bytes(Some(MAX_ROW_GROUP_BYTES))
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
        // them cost the encoding thread a fifth of its time to save 6 %.
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
        let mut writer = ArrowWriter::try_new(file, schema.clone(), Some(props.build()))
            .map_err(|e| io(&self.shown, e))?;
        let (tx, rx) = sync_channel::<RecordBatch>(1);
        let thread = std::thread::Builder::new()
            .name("parquet-table".into())
            .spawn(move || {
                for batch in rx {
                    writer.write(&batch).map_err(|e| e.to_string())?;
                }
                writer.close().map(drop).map_err(|e| e.to_string())
            })
            .map_err(|e| WriteError::io(&self.shown, e))?;
        self.batches = Some(tx);
        self.thread = Some(thread);
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
        let entities = std::mem::replace(&mut self.entities, Vec::with_capacity(rows));
        let entity: ArrayRef = if self.entity_ids == Some(true) {
            for (e, &c) in entities.iter().zip(&keys) {
                if matches!(e, Some(Entity::Name(_))) {
                    *self
                        .tally
                        .entry((c as usize, "entity".into(), ENTITY_NAME, true))
                        .or_default() += 1;
                }
            }
            let valid = entities
                .iter()
                .map(|e| e.as_ref().and_then(Entity::id).is_some())
                .collect();
            let ids: Vec<u64> = entities
                .iter()
                .map(|e| e.as_ref().and_then(Entity::id).unwrap_or(0))
                .collect();
            Arc::new(PrimitiveArray::<UInt64Type>::new(
                ScalarBuffer::from(ids),
                nulls(valid),
            ))
        } else {
            let texts: StringArray = entities
                .iter()
                .map(|e| match e {
                    Some(Entity::Id(id)) => Some(id.to_string()),
                    Some(Entity::Name(n)) => Some(n.to_string()),
                    None => None,
                })
                .collect();
            Arc::new(texts)
        };
        let keys = PrimitiveArray::<Int32Type>::new(ScalarBuffer::from(keys), None);
        let names = Arc::new(StringArray::from_iter_values(self.channels.iter()));
        arrays.push(Arc::new(
            DictionaryArray::<Int32Type>::try_new(keys, names).map_err(|e| io(&self.shown, e))?,
        ));
        arrays.push(entity);
        let frames = std::mem::replace(&mut self.frames, Vec::with_capacity(rows));
        let valid: Vec<bool> = frames.iter().map(Option::is_some).collect();
        arrays.push(Arc::new(PrimitiveArray::<Int64Type>::new(
            ScalarBuffer::from(frames.iter().map(|f| f.unwrap_or(0)).collect::<Vec<_>>()),
            nulls(valid),
        )));
        for column in &mut self.columns {
            arrays.push(column.take().map_err(|e| io(&self.shown, e))?);
        }
        arrays.push(Arc::new(self.removed.finish()));
        self.bytes = 0;
        let batch = RecordBatch::try_new(schema, arrays).map_err(|e| io(&self.shown, e))?;
        let sent = self.batches.as_ref().map(|tx| tx.send(batch));
        if let Some(Err(_)) = sent {
            // The thread stopped on an error: that error is the one to report.
            self.batches = None;
            self.join()?;
            return Err(io(&self.shown, "the Parquet writer stopped"));
        }
        Ok(())
    }

    /// Writes what is buffered and the footer; the name of each channel for the tally.
    pub fn close(mut self) -> Result<(u64, Tally, Vec<String>), WriteError> {
        self.flush()?;
        self.batches = None;
        self.join()?;
        let tally = std::mem::take(&mut self.tally);
        let channels = std::mem::take(&mut self.channels);
        Ok((self.rows, tally, channels))
    }

    fn join(&mut self) -> Result<(), WriteError> {
        match self.thread.take().map(JoinHandle::join) {
            None | Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(io(&self.shown, e)),
            Some(Err(_)) => Err(io(&self.shown, "the Parquet writer failed")),
        }
    }
}

/// Bytes of a float column's first batch compressed on trial, at most (at least a
/// sixteenth of it: a first batch of 4,096 rows of 7 doubles is 224 KiB).
const SAMPLE_BYTES: usize = 1 << 20;

/// Whether zstd (level 1, as the file is written) saves at least a sixteenth of `sample`
/// (an Elodin replay's positions and velocities save 4.5 %: stored plain; NanoVer's float32
/// positions 10 %, compressed: plain, the NanoVer pair's file grew 97 -> 108 MB).
fn compresses(sample: &[u8]) -> bool {
    match zstd::bulk::compress(sample, 1) {
        Ok(packed) => packed.len() * 16 < sample.len() * 15,
        // Compressed as every other column, then.
        Err(_) => true,
    }
}

fn nulls(valid: Vec<bool>) -> Option<NullBuffer> {
    if valid.iter().all(|&v| v) {
        None
    } else {
        Some(NullBuffer::from(valid))
    }
}

impl Drop for Table {
    /// A table dropped unfinished (an error elsewhere) still ends its thread before the
    /// output is removed.
    fn drop(&mut self) {
        self.batches = None;
        let _ = self.join();
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
