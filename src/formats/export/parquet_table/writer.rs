//! The table writer: one Parquet file of every channel, or (`-o DIR/`) one file per channel
//! with only that channel's columns.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use parquet::file::metadata::KeyValue;

use super::table::{Table, Tally};
use super::TableWriteOptions;
use crate::formats::output::Outputs;
use crate::formats::registry::family_recorded;
use crate::formats::{KeyType, Sink, WriteError, WriteReport};
use crate::model::{Channel, Composition, Entity, Folded, Header, Record};

/// The types the family `header` was read from gives its keys (`Family::key_types`).
pub fn key_types(header: &Header) -> &'static [(&'static str, KeyType)] {
    family_recorded(&header.format).map_or(&[], |family| family.key_types)
}

/// Key-value metadata of every file: simrec's version, the source and the time origin.
pub fn metadata(header: &Header, outputs: &Outputs) -> Vec<KeyValue> {
    let mut kv = vec![
        KeyValue::new(
            "simrec.version".into(),
            env!("CARGO_PKG_VERSION").to_string(),
        ),
        KeyValue::new("simrec.source.format".into(), header.format.clone()),
        KeyValue::new(
            "simrec.source.format_version".into(),
            header.format_version.clone(),
        ),
        KeyValue::new(
            "simrec.time_ns".into(),
            "nanoseconds from the origin".to_string(),
        ),
    ];
    if let Some(paths) = &outputs.source_paths {
        kv.push(KeyValue::new("simrec.source.path".into(), paths.clone()));
    }
    if let Some(epoch) = header.origin.epoch {
        kv.push(KeyValue::new("simrec.origin.epoch".into(), epoch.iso8601()));
        kv.push(KeyValue::new(
            "simrec.origin.epoch_unix_ns".into(),
            epoch.unix_ns.to_string(),
        ));
    }
    if let Some(system) = &header.origin.system {
        kv.push(KeyValue::new("simrec.origin.system".into(), system.clone()));
    }
    if !header.metadata.is_empty() {
        kv.push(KeyValue::new(
            "simrec.source.metadata".into(),
            serde_json::Value::Object(header.metadata.clone()).to_string(),
        ));
    }
    kv
}

/// A channel's file name in a dataset: its name with anything but letters, digits, `.`, `-`
/// and `_` as `_` (`3es/sphere` → `3es_sphere.parquet`), made unique.
pub fn file_name(channel: &str, used: &mut HashSet<String>) -> String {
    let base: String = channel
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let base = if base.is_empty() || base.starts_with('.') {
        format!("_{base}")
    } else {
        base
    };
    let mut name = format!("{base}.parquet");
    let mut n = 2;
    while !used.insert(name.clone()) {
        name = format!("{base}-{n}.parquet");
        n += 1;
    }
    name
}

enum Layout {
    Single(Box<Table>),
    PerChannel {
        dir: PathBuf,
        shown: PathBuf,
        tables: Vec<Option<Table>>,
        used: HashSet<String>,
        metadata: Vec<KeyValue>,
        key_types: &'static [(&'static str, KeyType)],
    },
}

pub struct TableWriter {
    layout: Layout,
    /// With `--fold`: the folded value of each delta channel, per entity.
    folds: Option<BTreeMap<(u32, Option<Entity>), Folded>>,
    channels: Vec<Channel>,
    report: WriteReport,
}

impl TableWriter {
    /// One file at `target`.
    pub fn single(
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
        options: TableWriteOptions,
    ) -> Result<TableWriter, WriteError> {
        let metadata = metadata(header, outputs);
        let file = outputs.create_path(target)?;
        let mut table =
            Table::new(file, target.to_path_buf(), metadata).with_key_types(key_types(header));
        for channel in &header.channels {
            table.add_channel(channel);
        }
        Ok(TableWriter {
            layout: Layout::Single(Box::new(table)),
            folds: options.fold.then(BTreeMap::new),
            channels: header.channels.clone(),
            report: WriteReport::default(),
        })
    }

    /// A directory at `target` with one file per channel that has records.
    pub fn per_channel(
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
        options: TableWriteOptions,
    ) -> Result<TableWriter, WriteError> {
        let metadata = metadata(header, outputs);
        let dir = outputs.create_dir(target)?;
        Ok(TableWriter {
            folds: options.fold.then(BTreeMap::new),
            layout: Layout::PerChannel {
                dir,
                shown: target.to_path_buf(),
                tables: Vec::new(),
                used: HashSet::new(),
                metadata,
                key_types: key_types(header),
            },
            channels: header.channels.clone(),
            report: WriteReport::default(),
        })
    }
}

impl Sink for TableWriter {
    fn add_channel(&mut self, channel: &Channel) -> Result<(), WriteError> {
        if let Layout::Single(table) = &mut self.layout {
            table.add_channel(channel);
        }
        self.channels.push(channel.clone());
        Ok(())
    }

    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        let c = record.channel as usize;
        let Some(channel) = self.channels.get(c) else {
            self.report
                .loss
                .add("?", "*", "record of a channel the writer was not told of");
            return Ok(());
        };
        let delta = matches!(
            channel.composition,
            Composition::FrameDelta | Composition::StateDelta
        );
        let folded;
        let record = match &mut self.folds {
            Some(folds) if delta => {
                let fold = folds
                    .entry((record.channel, record.entity.clone()))
                    .or_default();
                fold.apply(channel.composition, record);
                let mut full = Record::new(record.time, record.channel);
                full.entity = record.entity.clone();
                full.frame = record.frame;
                full.values = fold.fields();
                folded = full;
                &folded
            }
            _ => record,
        };
        match &mut self.layout {
            Layout::Single(table) => table.push(c, record)?,
            Layout::PerChannel {
                dir,
                shown,
                tables,
                used,
                metadata,
                key_types,
            } => {
                if tables.len() <= c {
                    tables.resize_with(c + 1, || None);
                }
                let table = tables[c].get_or_insert_with(|| {
                    let name = file_name(&channel.name, used);
                    let mut kv = metadata.clone();
                    kv.push(KeyValue::new("simrec.channel".into(), channel.name.clone()));
                    let mut table = Table::new(dir.join(&name), shown.join(&name), kv)
                        .with_key_types(key_types);
                    table.add_channel(channel);
                    table
                });
                table.push(0, record)?;
            }
        }
        self.report.records += 1;
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<WriteReport, WriteError> {
        let TableWriter {
            layout,
            folds: _,
            channels,
            mut report,
        } = *self;
        let mut closed: Vec<(Tally, Vec<String>)> = Vec::new();
        match layout {
            Layout::Single(table) => {
                let (_, tally, names) = table.close()?;
                closed.push((tally, names));
            }
            Layout::PerChannel { tables, .. } => {
                for table in tables.into_iter().flatten() {
                    let (_, tally, names) = table.close()?;
                    closed.push((tally, names));
                }
            }
        }
        let _ = channels;
        for (tally, names) in closed {
            add_tally(&mut report, tally, &names);
        }
        Ok(report)
    }
}

/// Adds what a table counted to `report`, by channel name (`names`, by channel index).
pub(super) fn add_tally(report: &mut WriteReport, tally: Tally, names: &[String]) {
    let mut entries: Vec<_> = tally.into_iter().collect();
    entries.sort();
    for ((c, key, why, lost), n) in entries {
        let name = names.get(c).map(String::as_str).unwrap_or("?");
        if lost {
            report.loss.add_n(name, &key, why, n);
        } else {
            report.loss.widen_n(name, &key, why, n);
        }
    }
}
