//! The lake writer: a recording's `values/NAME.parquet` and `poses/NAME.parquet` under the
//! lake's directory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::file::{entity_text, utc_micros, Common, Place, TableFile, BATCH_BYTES, BATCH_ROWS};
use super::poses::Poses;
use super::schema::{self, LAKE_VERSION};
use super::values::{Values, INEXACT_ELEMENT};
use crate::formats::export::json_text::Lost;
use crate::formats::export::parquet_table::metadata;
use crate::formats::output::Outputs;
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::{Channel, ChannelId, Header, Nanos, Record, Value};

const UNKNOWN: &str = "record of a channel the writer was not told of";

/// The two tables of a recording in the lake at `root`, named `name`.
pub fn table_paths(root: &Path, name: &str) -> [PathBuf; 2] {
    let file = format!("{name}.parquet");
    [
        root.join("values").join(&file),
        root.join("poses").join(file),
    ]
}

pub struct LakeWriter {
    channels: Vec<Channel>,
    pub(super) epoch_ns: Option<i64>,
    pub(super) values: Values,
    pub(super) poses: Poses,
    files: [TableFile; 2],
    lost: Lost,
    /// Per (channel, key, reason): values not kept as they were.
    tally: HashMap<(u32, String, &'static str), u64>,
    pub(super) records: u64,
}

impl LakeWriter {
    /// The recording named `name` in the lake at `root`.
    pub fn create(
        root: &Path,
        name: &str,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<LakeWriter, WriteError> {
        let [values_path, poses_path] = table_paths(root, name);
        let mut kv = metadata(header, outputs);
        kv.push(parquet::file::metadata::KeyValue::new(
            "simrec.lake.version".into(),
            LAKE_VERSION.to_string(),
        ));
        let table = |t: &str| {
            let mut kv = kv.clone();
            kv.push(parquet::file::metadata::KeyValue::new(
                "simrec.lake.table".into(),
                t.to_string(),
            ));
            kv
        };
        let (values_kv, poses_kv) = (table("values"), table("poses"));
        let values_file = TableFile::create(
            &values_path,
            schema::with_metadata(schema::values(), &values_kv),
            values_kv,
            outputs,
        )?;
        let poses_file = TableFile::create(
            &poses_path,
            schema::with_metadata(schema::poses(), &poses_kv),
            poses_kv,
            outputs,
        )?;
        let common = || Common::new(name, &header.format);
        Ok(LakeWriter {
            channels: header.channels.clone(),
            epoch_ns: header.origin.epoch.map(|e| e.unix_ns),
            values: Values::new(common()),
            poses: Poses::new(common(), &header.channels),
            files: [values_file, poses_file],
            lost: Lost::new(),
            tally: HashMap::new(),
            records: 0,
        })
    }

    /// The `values` row of `key` = `value` of a record of channel `c` (one the writer knows)
    /// at `(time, time_utc, frame)`; what it does not keep is tallied.
    pub(super) fn push_value(
        &mut self,
        c: ChannelId,
        entity: Option<&str>,
        (time_ns, time_utc, frame): (Nanos, Option<i64>, Option<i64>),
        key: &str,
        value: &Value,
    ) {
        let Some(channel) = self.channels.get(c as usize) else {
            return;
        };
        let place = Place {
            time_ns,
            time_utc,
            channel: &channel.name,
            entity,
            frame,
        };
        self.values.common.push(&place);
        self.values.keys.push(Some(key));
        self.push_value_of(c, key, value);
    }

    /// The value columns of the `values` row of `key` = `value` of channel `c`, whose place
    /// and key are pushed already; what it does not keep is tallied.
    pub(super) fn push_value_of(&mut self, c: ChannelId, key: &str, value: &Value) {
        self.values.push_value(key, value, &mut self.lost);
        self.tally_lost(c);
    }

    /// Tallies `n` rows of channel `c`'s `key` with a 64-bit integer element that float64
    /// did not hold (counted by the caller, `Values::push_packed`).
    pub(super) fn tally_inexact(&mut self, c: ChannelId, key: &str, n: u64) {
        if n > 0 {
            let entry = (c, key.to_string(), INEXACT_ELEMENT);
            *self.tally.entry(entry).or_default() += n;
        }
    }

    /// Tallies what the last row did not keep, under channel `c`.
    fn tally_lost(&mut self, c: ChannelId) {
        for (key, why) in self.lost.drain(..) {
            *self.tally.entry((c, key, why)).or_default() += 1;
        }
    }

    /// The `poses` rows of `record` (of a channel the writer knows).
    pub(super) fn push_poses(&mut self, record: &Record, time_utc: Option<i64>) {
        if let Some(channel) = self.channels.get(record.channel as usize) {
            self.poses.push(record, channel, time_utc);
        }
    }

    /// Writes the `values` batch if `rows` more would take it past [`BATCH_ROWS`]: its
    /// builders have room for that many, and a frame's rows pushed past it made each of
    /// them grow and copy once a batch (docs/performance.md, "Lake, sixth pass").
    pub(super) fn make_room(&mut self, rows: usize) -> Result<(), WriteError> {
        if self.values.rows > 0 && self.values.rows + rows > BATCH_ROWS {
            let columns = self.values.finish();
            self.files[0].write(columns)?;
        }
        Ok(())
    }

    /// Writes each table's batch that holds `at_least` rows (or, for `values`, its bytes).
    pub(super) fn flush(&mut self, at_least: usize) -> Result<(), WriteError> {
        let full = self.values.rows > 0 && self.values.size >= BATCH_BYTES;
        if self.values.rows >= at_least || full {
            let columns = self.values.finish();
            self.files[0].write(columns)?;
        }
        if self.poses.rows >= at_least {
            let columns = self.poses.finish();
            self.files[1].write(columns)?;
        }
        Ok(())
    }
}

impl Sink for LakeWriter {
    fn add_channel(&mut self, channel: &Channel) -> Result<(), WriteError> {
        self.poses.add_channel(channel);
        self.channels.push(channel.clone());
        Ok(())
    }

    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        if self.channels.get(record.channel as usize).is_none() {
            *self
                .tally
                .entry((record.channel, "*".into(), UNKNOWN))
                .or_default() += 1;
            return Ok(());
        }
        let mut number = itoa::Buffer::new();
        let entity = (record.entity.as_ref()).map(|e| entity_text(e, &mut number));
        let time_utc = utc_micros(self.epoch_ns, record.time);
        let at = (record.time, time_utc, record.frame);
        for (key, value) in &record.values {
            self.push_value(record.channel, entity, at, key, value);
        }
        self.push_poses(record, time_utc);
        self.records += 1;
        self.flush(BATCH_ROWS)
    }

    fn finish(mut self: Box<Self>) -> Result<WriteReport, WriteError> {
        self.poses.flush_pending();
        self.flush(1)?;
        let LakeWriter {
            channels,
            files,
            tally,
            records,
            ..
        } = *self;
        for file in files {
            file.close()?;
        }
        let mut report = WriteReport {
            records,
            ..WriteReport::default()
        };
        let mut entries: Vec<_> = tally.into_iter().collect();
        entries.sort();
        for ((c, key, why), n) in entries {
            let name = channels.get(c as usize).map_or("?", |c| c.name.as_str());
            report.loss.add_n(name, &key, why, n);
        }
        Ok(report)
    }
}
