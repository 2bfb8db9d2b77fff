//! Reading an export directory as a recording: every file read into memory, regrouped into
//! its components (`group.rs`), then the components' rows merged by time (ties in channel
//! order), as the DB reader hands out the DB they came from: one channel per component,
//! entity the name before the last dot, times from the recording's first row, whose
//! instant is the epoch (UTC).

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;

use super::codes;
use super::group::{self, Series};
use super::table::{self, Kind};
use crate::formats::elodin::db::split_name;
use crate::formats::{ReadError, ReadOptions, Source};
use crate::model::{
    Array, ArrayData, Channel, ChannelId, ChannelKind, Composition, Entity, Epoch, FieldSpec,
    Header, Record, Value,
};
use crate::report::{Finding, Findings, Severity};

/// Key of the header's metadata saying what the export was.
pub const HEADER_KEY: &str = "elodin_db_export";

/// One channel: a component's rows and how far they are read.
struct Stream {
    series: Series,
    entity: Option<Entity>,
    field: String,
    next: usize,
}

pub struct ExportReader {
    path: PathBuf,
    header: Header,
    options: ReadOptions,
    streams: Vec<Stream>,
    epoch_ns: i64,
    heap: BinaryHeap<Reverse<(i64, ChannelId)>>,
    started: bool,
    wanted: Vec<bool>,
    findings: Findings,
    /// Rows handed out, of `rows`; progress is told in bytes of the files, `bytes`.
    done: u64,
    rows: u64,
    bytes: u64,
}

/// The export files of a directory, sorted by name, all of one kind: `None` when it holds
/// anything else (a subdirectory, another file; hidden files aside) or nothing.
pub fn files(dir: &Path) -> Option<(Kind, Vec<(String, PathBuf)>)> {
    let mut kind = None;
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        let name = entry.file_name().into_string().ok()?;
        if name.starts_with('.') {
            continue;
        }
        let k = Kind::of(&name)?;
        if kind.is_some_and(|kind| kind != k) || !entry.path().is_file() {
            return None;
        }
        kind = Some(k);
        let stem = name[..name.rfind('.')?].to_string();
        files.push((stem, entry.path()));
    }
    files.sort();
    Some((kind?, files))
}

impl ExportReader {
    pub fn open(path: &Path, options: ReadOptions) -> Result<ExportReader, ReadError> {
        let Some((kind, files)) = files(path) else {
            let finding = Finding::new(
                Severity::Error,
                codes::EXPORT_DIR,
                "not an `elodin-db export` directory: one Parquet, Arrow IPC or CSV file per \
                 component (or per entity, `--join`), nothing else",
            );
            return Err(ReadError::Invalid {
                path: path.to_path_buf(),
                finding: Box::new(finding),
            });
        };
        let mut findings = Findings::default();
        let mut report = |file: &Path, code: &'static str, message: String| {
            let finding = Finding::new(Severity::Error, code, message);
            if !options.lenient {
                return Err(ReadError::Invalid {
                    path: file.to_path_buf(),
                    finding: Box::new(finding),
                });
            }
            findings.push(finding);
            Ok(())
        };
        let mut streams: Vec<Stream> = Vec::new();
        let mut names = BTreeSet::new();
        let mut nanos = false;
        for (stem, file) in &files {
            let table = match table::read(file, kind) {
                Ok(t) => t,
                Err(problem) => {
                    report(file, codes::EXPORT_FILE, format!("{stem}: {problem}"))?;
                    continue;
                }
            };
            nanos |= table.nanos;
            let series = match group::series(stem, table) {
                Ok(s) => s,
                Err(problem) => {
                    report(file, codes::EXPORT_FILE, format!("{stem}: {problem}"))?;
                    continue;
                }
            };
            for s in series {
                if !names.insert(s.name.clone()) {
                    report(
                        file,
                        codes::EXPORT_DUPLICATE,
                        format!("{}: a second component of this name (left out)", s.name),
                    )?;
                    continue;
                }
                if let Some(i) = s.times.windows(2).position(|w| w[1] < w[0]) {
                    report(
                        file,
                        codes::EXPORT_ORDER,
                        format!(
                            "{}: row {} ({} ns) is earlier than the one before it: Elodin's \
                             times never go back (read in the stored order)",
                            s.name,
                            i + 1,
                            s.times[i + 1]
                        ),
                    )?;
                }
                let (entity, field) = split_name(&s.name);
                streams.push(Stream {
                    entity: entity.map(|e| Entity::Name(Arc::from(e))),
                    field,
                    series: s,
                    next: 0,
                });
            }
        }
        let epoch_ns = streams
            .iter()
            .filter_map(|s| s.series.times.first().copied())
            .min();
        let header = header(&streams, kind, epoch_ns, nanos);
        let rows = streams.iter().map(|s| s.series.rows() as u64).sum();
        let bytes = files
            .iter()
            .filter_map(|(_, f)| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .sum();
        Ok(ExportReader {
            path: path.to_path_buf(),
            header,
            options,
            streams,
            epoch_ns: epoch_ns.unwrap_or(0),
            heap: BinaryHeap::new(),
            started: false,
            wanted: Vec::new(),
            findings,
            done: 0,
            rows,
            bytes,
        })
    }

    /// Channel `ch`'s next time, into the heap (unless the caller left the channel out).
    fn queue(&mut self, ch: ChannelId) {
        if !self.wanted.get(ch as usize).copied().unwrap_or(true) {
            return;
        }
        let s = &self.streams[ch as usize];
        if let Some(&t) = s.series.times.get(s.next) {
            self.heap.push(Reverse((t, ch)));
        }
    }

    fn advance(&mut self) -> Option<Record> {
        if !self.started {
            self.started = true;
            for ch in 0..self.streams.len() as ChannelId {
                self.queue(ch);
            }
        }
        let Reverse((ns, ch)) = self.heap.pop()?;
        let s = &mut self.streams[ch as usize];
        let mut record = Record::new(ns.saturating_sub(self.epoch_ns), ch);
        record.entity.clone_from(&s.entity);
        let n = s.series.elements();
        let row = s.next;
        s.next += 1;
        self.done += 1;
        if self.options.decode {
            let mut data = ArrayData::empty(s.series.dtype);
            data.extend_from_range(&s.series.data, row * n..(row + 1) * n);
            record.values = vec![(
                s.field.clone(),
                Value::Array(Array {
                    shape: s.series.shape.clone(),
                    data,
                }),
            )];
        }
        self.queue(ch);
        Some(record)
    }
}

/// The header: a channel per component, and what the export was under [`HEADER_KEY`].
fn header(streams: &[Stream], kind: Kind, epoch_ns: Option<i64>, nanos: bool) -> Header {
    let mut header = Header::new("elodin-db-export", kind.name());
    if let Some(unix_ns) = epoch_ns {
        header.origin.epoch = Some(Epoch {
            unix_ns,
            fraction_digits: if nanos { 9 } else { 6 },
        });
        header.origin.system = Some("UTC".into());
    }
    for s in streams {
        let mut channel = Channel::new(
            &s.series.name,
            ChannelKind::Signals,
            Composition::Independent,
        );
        channel.fields = vec![FieldSpec {
            elements: s.series.element_names.clone(),
            ..FieldSpec::typed(&s.field, s.series.dtype, &s.series.shape)
        }];
        channel.declares_all = true;
        header.add_channel(channel);
    }
    header.metadata.insert(
        HEADER_KEY.into(),
        json!({
            "files": kind.name(),
            "time_unit": if nanos { "ns" } else { "µs" },
        }),
    );
    header
}

impl Iterator for ExportReader {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.advance().map(Ok)
    }
}

impl Source for ExportReader {
    fn header(&self) -> &Header {
        &self.header
    }

    fn findings(&self) -> Vec<(&Path, &Findings)> {
        vec![(self.path.as_path(), &self.findings)]
    }

    fn progress(&self) -> (u64, u64) {
        let done = u128::from(self.bytes) * u128::from(self.done) / u128::from(self.rows.max(1));
        (
            u64::try_from(done).unwrap_or(self.bytes).min(self.bytes),
            self.bytes,
        )
    }

    fn select_channels(&mut self, wanted: &[bool]) {
        self.wanted = wanted.to_vec();
        let keep = |ch: ChannelId| wanted.get(ch as usize).copied().unwrap_or(true);
        self.heap.retain(|Reverse((_, ch))| keep(*ch));
    }
}
