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

/// Files of a dataset encoded on a thread of their own, each with its own bounded row group;
/// more are encoded on the writing thread (a thread each held memory each: hundreds of
/// threads, gigabytes) and share [`DATASET_HELD`].
const THREADED_FILES: usize = 8;
/// Bytes the files of a dataset of more than [`THREADED_FILES`] hold in memory together, at
/// most ([`Table::held`]): each file's row group is bounded, but a recording of hundreds of
/// channels has hundreds of files open. Past it, the files holding most end their row
/// groups until half is left.
const DATASET_HELD: usize = 64 << 20;

enum Layout {
    Single(Box<Table>),
    PerChannel {
        dir: PathBuf,
        shown: PathBuf,
        tables: Vec<Option<Table>>,
        /// What the tables hold together ([`Table::held`]).
        held: usize,
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
                held: 0,
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
                held,
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
                    if used.len() > THREADED_FILES {
                        table = table.encoded_here();
                    }
                    table.add_channel(channel);
                    table
                });
                let was = table.held();
                table.push(0, record)?;
                *held = *held + table.held() - was;
                if *held > DATASET_HELD && used.len() > THREADED_FILES {
                    *held = release(tables, DATASET_HELD / 2)?;
                }
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

/// Ends the row groups of the tables holding most until they hold `keep` bytes or less
/// together; what they hold then. Tables whose columns are laid out go first: one still
/// filling its first batch would lay its columns out from fewer rows.
fn release(tables: &mut [Option<Table>], keep: usize) -> Result<usize, WriteError> {
    let mut order: Vec<(bool, usize, usize)> = (tables.iter().enumerate())
        .filter_map(|(i, t)| t.as_ref().map(|t| (t.laid_out(), t.held(), i)))
        .collect();
    let mut held: usize = order.iter().map(|(_, h, _)| h).sum();
    // The largest first; ties by channel, so that the choice is the data's alone.
    order.sort_unstable_by(|a, b| (b.0, b.1).cmp(&(a.0, a.1)).then(a.2.cmp(&b.2)));
    for (_, h, i) in order {
        if held <= keep {
            break;
        }
        if let Some(table) = &mut tables[i] {
            table.end_group()?;
            held -= h;
        }
    }
    Ok(held)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ChannelKind, Value};
    use parquet::file::reader::{FileReader, SerializedFileReader};

    /// A table of one channel at `file`, `rows` rows of one float each.
    fn table(file: &Path, rows: usize, here: bool) -> Table {
        let mut table = Table::new(file.to_path_buf(), file.to_path_buf(), Vec::new());
        if here {
            table = table.encoded_here();
        }
        table.add_channel(&Channel::new(
            "c",
            ChannelKind::Signals,
            Composition::SampleHold,
        ));
        for i in 0..rows {
            let mut r = Record::new(i as i64, 0);
            r.values = vec![("x".into(), Value::Float(i as f64 * 0.5))];
            table.push(0, &r).unwrap();
        }
        table
    }

    fn row_groups(file: &Path) -> Vec<i64> {
        let reader = SerializedFileReader::new(std::fs::File::open(file).unwrap()).unwrap();
        let meta = reader.metadata();
        (0..meta.num_row_groups())
            .map(|g| meta.row_group(g).num_rows())
            .collect()
    }

    #[test]
    fn release_ends_the_row_groups_of_the_tables_holding_most_until_keep_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<PathBuf> = (0..3).map(|i| dir.path().join(format!("{i}"))).collect();
        // 5,000 rows pass one batch (4,096): each table has handed rows to its encoder.
        let mut tables: Vec<Option<Table>> = [5000, 9000, 7000]
            .iter()
            .zip(&files)
            .map(|(&rows, f)| Some(table(f, rows, true)))
            .collect();
        let held: Vec<usize> = tables.iter().flatten().map(Table::held).collect();
        assert!(held[1] > held[2] && held[2] > held[0], "{held:?}");
        // Keeping the smallest alone: the two largest end their row groups.
        let left = release(&mut tables, held[0]).unwrap();
        assert_eq!(left, held[0]);
        let after: Vec<usize> = tables.iter().flatten().map(Table::held).collect();
        assert_eq!(after, [held[0], 0, 0]);
        for t in tables.iter_mut().flatten() {
            let mut r = Record::new(1 << 20, 0);
            r.values = vec![("x".into(), Value::Float(1.0))];
            t.push(0, &r).unwrap();
        }
        for t in tables.into_iter().flatten() {
            t.close().unwrap();
        }
        assert_eq!(row_groups(&files[0]), [5001]);
        assert_eq!(row_groups(&files[1]), [9000, 1]);
        assert_eq!(row_groups(&files[2]), [7000, 1]);
    }

    #[test]
    fn release_ends_tables_whose_columns_are_laid_out_first() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        // b: fewer rows than a batch (its columns not laid out) but more bytes than a.
        let mut wide = Table::new(b.clone(), b.clone(), Vec::new()).encoded_here();
        wide.add_channel(&Channel::new(
            "c",
            ChannelKind::Signals,
            Composition::SampleHold,
        ));
        for i in 0..4000 {
            let mut r = Record::new(i, 0);
            r.values = ["x", "y", "z"]
                .map(|k| (k.to_string(), Value::Float(i as f64)))
                .into();
            wide.push(0, &r).unwrap();
        }
        let mut tables = vec![Some(table(&a, 5000, true)), Some(wide)];
        let held: Vec<usize> = tables.iter().flatten().map(Table::held).collect();
        assert!(held[1] > held[0], "{held:?}");
        assert_eq!(release(&mut tables, held[1]).unwrap(), held[1]);
        let after: Vec<usize> = tables.iter().flatten().map(Table::held).collect();
        assert_eq!(after, [0, held[1]]);
        assert_eq!(release(&mut tables, 0).unwrap(), 0);
    }

    #[test]
    fn a_table_encoded_here_is_the_same_file_as_on_its_own_thread() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        table(&a, 10_000, false).close().unwrap();
        table(&b, 10_000, true).close().unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        assert_eq!(row_groups(&a), [10_000]);
    }
}
