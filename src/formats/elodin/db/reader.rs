//! Reading a DB directory as a recording: one stream per component and per message log,
//! each reading its committed rows in blocks, merged by time (ties in channel order:
//! Elodin's creation order). A component is a channel of one field (`a.world_pos`: entity
//! `a`, field `world_pos`), a message log an event channel; times count from the
//! recording's first row, whose instant is the epoch (UTC, the system clock Elodin stamps).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Map, Value as Json};

use super::codes;
use super::dir::{self, read_at, Catalogue, Component, Log, MsgLog};
use super::grid::one_grid;
use super::layout::{Primitive, UmbraBuf, UMBRA_SIZE};
use super::merge::Merge;
use crate::formats::{ChannelTally, ReadError, ReadOptions, Source};
use crate::model::{
    Array, ArrayData, Channel, ChannelId, ChannelKind, Composition, Entity, Epoch, Field,
    FieldSpec, Header, Record, Value,
};
use crate::report::{Fact, Finding, Findings, Severity};

/// Key of the header's metadata holding what the DB says of itself.
pub const HEADER_KEY: &str = "elodin_db";

/// Bytes of rows and timestamps all streams hold at once, shared out among them: memory
/// stays this whatever the DB's length and number of components.
const MEMORY: usize = 4 << 20;

/// What one stream reads of a log at once, at most and at least.
const MOST: usize = 256 << 10;
const LEAST: usize = 4 << 10;

/// Values of records handed back and kept for reuse, per primitive type.
const SPARE: usize = 4;

pub struct DbReader {
    path: PathBuf,
    header: Header,
    options: ReadOptions,
    catalogue: Catalogue,
    epoch_us: i64,
    streams: Vec<Stream>,
    merge: Merge,
    started: bool,
    /// Read a tick at a time (`validate` of a DB of one time grid), not merged.
    ticks: bool,
    /// Values handed back (`Source::recycle`), by primitive type: kept in the reader, not
    /// its streams, so that handing one back touches no stream's memory.
    spare: [Vec<Vec<Field>>; Primitive::ALL.len()],
    /// Channels the caller reads (`select_channels`); past its end, all.
    wanted: Vec<bool>,
    findings: Findings,
    done: u64,
    total: u64,
}

enum Stream {
    Rows(Rows),
    Msgs(Msgs),
}

/// What each log of each of `streams` streams reads at once ([`MEMORY`] shared out).
fn block_bytes(streams: usize) -> usize {
    (MEMORY / (2 * streams.max(1))).clamp(LEAST, MOST)
}

/// The timestamps of a log read a block at a time, checked to never go back.
struct Times {
    log: Log,
    file: File,
    count: u64,
    next: u64,
    per_block: u64,
    block_first: u64,
    block: Vec<i64>,
    last: i64,
    problem: Option<(PathBuf, Finding)>,
}

impl Times {
    fn open(log: &Log, count: u64, block_bytes: usize) -> Result<Times, ReadError> {
        Ok(Times {
            file: open(&log.path)?,
            log: log.clone(),
            count,
            next: 0,
            per_block: (block_bytes / 8).max(1) as u64,
            block_first: 0,
            block: Vec::new(),
            last: i64::MIN,
            problem: None,
        })
    }

    /// The next entry's time, reading its block when it is not in the one held;
    /// `owner` names the channel in a finding. A time earlier than the one before it is
    /// kept (reading goes on in the stored order) and reported in `problem`, once per block.
    fn peek(&mut self, owner: &str) -> Result<Option<i64>, Problem> {
        if self.next >= self.count {
            return Ok(None);
        }
        if self.block.is_empty() || self.next - self.block_first >= self.block.len() as u64 {
            let n = self.per_block.min(self.count - self.next) as usize;
            self.block.resize(n, 0);
            let offset = self.log.start() + self.next * 8;
            // Read straight into the block's memory, then put each entry in the host's order.
            read_at(
                &mut self.file,
                offset,
                bytemuck::cast_slice_mut(&mut self.block[..]),
            )
            .map_err(|e| io_finding(&self.log.path, owner, offset, e))?;
            for t in &mut self.block {
                *t = i64::from_le(*t);
            }
            self.block_first = self.next;
            for (i, &t) in self.block.iter().enumerate() {
                if t < self.last && self.problem.is_none() {
                    let entry = self.block_first + i as u64;
                    let finding = Finding::new(
                        Severity::Error,
                        codes::INDEX_ORDER,
                        format!(
                            "{owner}: timestamp {entry} ({t} µs) is earlier than the one before \
                             it ({} µs): Elodin's index never goes back",
                            self.last
                        ),
                    )
                    .at(offset + i as u64 * 8, entry);
                    self.problem = Some((self.log.path.clone(), finding));
                }
                self.last = t;
            }
        }
        Ok(Some(self.block[(self.next - self.block_first) as usize]))
    }
}

/// A finding met while reading, with the file it is about (boxed: it is the rare path).
type Problem = Box<(PathBuf, Finding)>;

fn io_finding(path: &Path, owner: &str, offset: u64, e: std::io::Error) -> Problem {
    Box::new((
        path.to_path_buf(),
        Finding::new(
            Severity::Error,
            codes::HEADER,
            format!("{owner}: reading committed bytes failed ({e})"),
        )
        .offset(offset),
    ))
}

fn open(path: &Path) -> Result<File, ReadError> {
    File::open(path).map_err(|source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// A component's rows.
struct Rows {
    name: String,
    entity: Option<Entity>,
    field: String,
    prim: Primitive,
    shape: Vec<usize>,
    row_size: usize,
    times: Times,
    data: Option<(Log, File)>,
    rows_per_block: u64,
    block: Vec<u8>,
    block_first: u64,
    block_rows: u64,
}

impl Rows {
    fn open(c: &Component, decode: bool, block_bytes: usize) -> Result<Rows, ReadError> {
        let rows_per_block = (block_bytes / c.row_size.max(1)).max(1) as u64;
        Ok(Rows {
            name: c.name.clone(),
            entity: c.entity.as_deref().map(|e| Entity::Name(Arc::from(e))),
            field: c.field.clone(),
            prim: c.schema.prim,
            shape: c.schema.shape.iter().map(|&d| d as usize).collect(),
            row_size: c.row_size,
            times: Times::open(&c.index, c.rows, block_bytes)?,
            data: if decode {
                Some((c.data.clone(), open(&c.data.path)?))
            } else {
                None
            },
            rows_per_block,
            block: Vec::new(),
            block_first: 0,
            block_rows: 0,
        })
    }

    /// Where row `i`'s bytes start in the block, reading its block when it is not the one
    /// held (`None`: the rows are not decoded).
    fn row(&mut self, i: u64) -> Result<Option<usize>, Problem> {
        let Some((log, file)) = &mut self.data else {
            return Ok(None);
        };
        if i < self.block_first || i >= self.block_first + self.block_rows {
            let n = self.rows_per_block.min(self.times.count - i);
            self.block.resize(n as usize * self.row_size, 0);
            let offset = log.start() + i * self.row_size as u64;
            read_at(file, offset, &mut self.block)
                .map_err(|e| io_finding(&log.path, &self.name, offset, e))?;
            self.block_first = i;
            self.block_rows = n;
        }
        Ok(Some((i - self.block_first) as usize * self.row_size))
    }

    /// The values of row `i`, in `values` (handed back by an earlier record, or new).
    fn values(&mut self, i: u64, mut values: Vec<Field>) -> Result<Vec<Field>, Problem> {
        let Some(start) = self.row(i)? else {
            return Ok(values);
        };
        let bytes = &self.block[start..start + self.row_size];
        let (prim, field, shape) = (self.prim, &self.field, &self.shape);
        values.truncate(1);
        match values.first_mut() {
            Some((key, Value::Array(a))) if a.dtype() == prim.dtype() => {
                if key != field {
                    key.clone_from(field);
                }
                fill(&mut a.data, bytes);
                a.shape.clone_from(shape);
            }
            _ => {
                values.clear();
                let mut data = empty(prim);
                fill(&mut data, bytes);
                values.push((
                    field.clone(),
                    Value::Array(Array {
                        shape: shape.clone(),
                        data,
                    }),
                ));
            }
        }
        Ok(values)
    }
}

fn empty(prim: Primitive) -> ArrayData {
    match prim {
        Primitive::U8 => ArrayData::U8(Vec::new()),
        Primitive::U16 => ArrayData::U16(Vec::new()),
        Primitive::U32 => ArrayData::U32(Vec::new()),
        Primitive::U64 => ArrayData::U64(Vec::new()),
        Primitive::I8 => ArrayData::I8(Vec::new()),
        Primitive::I16 => ArrayData::I16(Vec::new()),
        Primitive::I32 => ArrayData::I32(Vec::new()),
        Primitive::I64 => ArrayData::I64(Vec::new()),
        Primitive::Bool => ArrayData::Bool(Vec::new()),
        Primitive::F32 => ArrayData::F32(Vec::new()),
        Primitive::F64 => ArrayData::F64(Vec::new()),
    }
}

/// Replaces `data`'s elements with the little-endian ones of `bytes` (its dtype's).
fn fill(data: &mut ArrayData, bytes: &[u8]) {
    // On a little-endian host the row's bytes are the elements: one copy.
    #[cfg(target_endian = "little")]
    macro_rules! le {
        ($v:expr, $t:ty) => {{
            const N: usize = std::mem::size_of::<$t>();
            let n = bytes.len() / N;
            $v.resize(n, <$t>::default());
            bytemuck::cast_slice_mut::<$t, u8>(&mut $v[..]).copy_from_slice(&bytes[..n * N]);
        }};
    }
    #[cfg(target_endian = "big")]
    macro_rules! le {
        ($v:expr, $t:ty) => {{
            const N: usize = std::mem::size_of::<$t>();
            $v.clear();
            $v.extend(bytes.chunks_exact(N).map(|c| {
                let mut b = [0; N];
                b.copy_from_slice(c);
                <$t>::from_le_bytes(b)
            }));
        }};
    }
    match data {
        ArrayData::U8(v) => {
            v.clear();
            v.extend_from_slice(bytes);
        }
        ArrayData::I8(v) => {
            v.clear();
            v.extend(bytes.iter().map(|&b| b as i8));
        }
        ArrayData::Bool(v) => {
            v.clear();
            v.extend(bytes.iter().map(|&b| b != 0));
        }
        ArrayData::U16(v) => le!(v, u16),
        ArrayData::U32(v) => le!(v, u32),
        ArrayData::U64(v) => le!(v, u64),
        ArrayData::I16(v) => le!(v, i16),
        ArrayData::I32(v) => le!(v, i32),
        ArrayData::I64(v) => le!(v, i64),
        ArrayData::F32(v) => le!(v, f32),
        ArrayData::F64(v) => le!(v, f64),
        ArrayData::Str(_) => {}
    }
}

/// A message log's messages.
struct Msgs {
    name: String,
    times: Times,
    offsets: (Log, File),
    data_log: (Log, File),
    decode: bool,
}

impl Msgs {
    fn open(m: &MsgLog, decode: bool, block_bytes: usize) -> Result<Msgs, ReadError> {
        Ok(Msgs {
            name: m.name.clone(),
            times: Times::open(&m.timestamps, m.count, block_bytes)?,
            offsets: (m.offsets.clone(), open(&m.offsets.path)?),
            data_log: (m.data_log.clone(), open(&m.data_log.path)?),
            decode,
        })
    }

    /// Message `i`'s payload: UTF-8 text as a string, other bytes as they are.
    fn values(&mut self, i: u64) -> Result<Vec<Field>, Problem> {
        if !self.decode {
            return Ok(Vec::new());
        }
        let (log, file) = &mut self.offsets;
        let mut entry = [0; UMBRA_SIZE];
        let offset = log.start() + i * UMBRA_SIZE as u64;
        read_at(file, offset, &mut entry)
            .map_err(|e| io_finding(&log.path, &self.name, offset, e))?;
        let payload = match UmbraBuf::decode(&entry) {
            UmbraBuf::Inline { len, bytes } => bytes[..len as usize].to_vec(),
            UmbraBuf::Outside {
                len, offset: at, ..
            } => {
                let (data, data_file) = &mut self.data_log;
                let end = u64::from(at) + u64::from(len);
                if end > data.len {
                    let finding = Finding::new(
                        Severity::Error,
                        codes::MSG_LOG,
                        format!(
                            "message log {}: message {i} lies at bytes {at}..{end} of data_log, \
                             which commits {}",
                            self.name, data.len
                        ),
                    )
                    .at(offset, i);
                    return Err(Box::new((log.path.clone(), finding)));
                }
                let mut bytes = vec![0; len as usize];
                let from = data.start() + u64::from(at);
                read_at(data_file, from, &mut bytes)
                    .map_err(|e| io_finding(&data.path, &self.name, from, e))?;
                bytes
            }
        };
        let value = match String::from_utf8(payload) {
            Ok(text) => Value::Str(text),
            Err(e) => Value::Bytes(e.into_bytes()),
        };
        Ok(vec![("payload".to_string(), value)])
    }
}

impl DbReader {
    pub fn open(path: &Path, options: ReadOptions) -> Result<DbReader, ReadError> {
        let catalogue = dir::catalogue(path)?;
        let mut findings = Findings::default();
        for (file, finding) in &catalogue.problems {
            if !options.lenient && finding.severity == Severity::Error {
                return Err(ReadError::Invalid {
                    path: file.clone(),
                    finding: Box::new(finding.clone()),
                });
            }
            findings.push(finding.clone());
        }
        if catalogue.layout == dir::Layout::V12 {
            findings.push(Finding::new(
                Severity::Info,
                codes::LEGACY_LAYOUT,
                "the 0.12 – 0.14 layout (entity directories): Elodin 0.15 and later cannot \
                 open it; `simrec convert` writes it anew",
            ));
        }
        if let Some((at, names)) = catalogue.torn_tick() {
            findings.push(Finding::new(
                Severity::Warning,
                codes::TORN_TICK,
                format!(
                    "torn tick at {at} µs: {} {} a row the other {} components lack (the run \
                     stopped while writing it); every committed row is read",
                    names.join(", "),
                    if names.len() == 1 { "has" } else { "have" },
                    catalogue.components.len() - names.len()
                ),
            ));
        }
        let epoch_us = catalogue.earliest_us().unwrap_or(0);
        let header = header(&catalogue, epoch_us);
        let block = block_bytes(catalogue.components.len() + catalogue.msgs.len());
        let mut streams = Vec::new();
        for c in &catalogue.components {
            streams.push(Stream::Rows(Rows::open(c, options.decode, block)?));
        }
        for m in &catalogue.msgs {
            streams.push(Stream::Msgs(Msgs::open(m, options.decode, block)?));
        }
        let total = catalogue
            .components
            .iter()
            .map(|c| c.rows * (8 + c.row_size as u64))
            .chain(
                catalogue
                    .msgs
                    .iter()
                    .map(|m| m.count * (8 + UMBRA_SIZE as u64)),
            )
            .sum();
        Ok(DbReader {
            path: path.to_path_buf(),
            header,
            options,
            catalogue,
            epoch_us,
            streams,
            merge: Merge::default(),
            started: false,
            ticks: false,
            spare: Default::default(),
            wanted: Vec::new(),
            findings,
            done: 0,
            total,
        })
    }

    pub fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    /// Keeps a finding met while reading, or stops on it (strict reading, an error).
    fn report(&mut self, (path, finding): (PathBuf, Finding)) -> Result<(), ReadError> {
        if !self.options.lenient && finding.severity == Severity::Error {
            return Err(ReadError::Invalid {
                path,
                finding: Box::new(finding),
            });
        }
        self.findings.push(finding);
        Ok(())
    }

    /// Channel `ch`'s next time, with what reading it found.
    fn next_time(&mut self, ch: ChannelId) -> Result<Option<i64>, ReadError> {
        let (times, owner) = match &mut self.streams[ch as usize] {
            Stream::Rows(r) => (&mut r.times, &r.name),
            Stream::Msgs(m) => (&mut m.times, &m.name),
        };
        let peeked = times.peek(owner);
        // Checked before it is taken: taking moves the whole (rare) finding every row.
        if times.problem.is_some() {
            if let Some(problem) = times.problem.take() {
                self.report(problem)?;
            }
        }
        match peeked {
            Ok(t) => Ok(t),
            Err(problem) => self.report(*problem).map(|()| None),
        }
    }

    fn wanted(&self, ch: ChannelId) -> bool {
        self.wanted.get(ch as usize).copied().unwrap_or(true)
    }

    /// Serves channel `ch`'s next row (or message): its values into `record` when there is
    /// one, else only read and checked; then the channel's next time goes to the merge.
    fn serve(&mut self, ch: ChannelId, record: Option<&mut Record>) -> Result<(), ReadError> {
        let values = match &mut self.streams[ch as usize] {
            Stream::Rows(r) => {
                let i = r.times.next;
                r.times.next += 1;
                self.done += 8 + r.row_size as u64;
                match record {
                    Some(record) => {
                        record.entity.clone_from(&r.entity);
                        let spare = self.spare[r.prim as usize].pop().unwrap_or_default();
                        r.values(i, spare).map(|v| record.values = v)
                    }
                    None => r.row(i).map(drop),
                }
            }
            Stream::Msgs(m) => {
                let i = m.times.next;
                m.times.next += 1;
                self.done += 8 + UMBRA_SIZE as u64;
                m.values(i).map(|v| {
                    if let Some(record) = record {
                        record.values = v;
                    }
                })
            }
        };
        if let Err(problem) = values {
            self.report(*problem)?;
        }
        let next = self.next_time(ch)?;
        self.merge.served(next);
        Ok(())
    }

    /// For a DB of one time grid (`grid.rs`: every component's index the same, each time
    /// after the one before): the next tick's model time, with every component's row of it
    /// in channel order in `values`, read and checked as the record read serves them;
    /// `None` at the end.
    pub(super) fn next_tick(&mut self, values: &mut Vec<u8>) -> Result<Option<i64>, ReadError> {
        values.clear();
        self.tick(Some(values)).map_err(|e| e.in_file(&self.path))
    }

    /// The next tick's model time, its rows read and checked (and put in `values`).
    fn tick(&mut self, mut values: Option<&mut Vec<u8>>) -> Result<Option<i64>, ReadError> {
        // The first component's index is every component's (checked before the first tick).
        let Some(us) = self.next_time(0)? else {
            return Ok(None);
        };
        for k in 0..self.streams.len() {
            let Stream::Rows(r) = &mut self.streams[k] else {
                continue;
            };
            let i = r.times.next;
            r.times.next += 1;
            self.done += 8 + r.row_size as u64;
            let read = r.row(i).map(|start| {
                if let (Some(start), Some(values)) = (start, values.as_deref_mut()) {
                    values.extend_from_slice(&r.block[start..start + r.row_size]);
                }
            });
            match read {
                Ok(()) => {}
                // A frame has every row: one that cannot be read (an I/O error, past the
                // catalogue's checks of the lengths) ends a frame read, even a lenient one,
                // whose records would go on without it.
                Err(problem) if values.is_some() => {
                    let (path, finding) = *problem;
                    return Err(ReadError::Invalid {
                        path,
                        finding: Box::new(finding),
                    });
                }
                Err(problem) => self.report(*problem)?,
            }
        }
        Ok(Some(us.saturating_sub(self.epoch_us).saturating_mul(1000)))
    }

    fn advance(&mut self) -> Result<Option<Record>, ReadError> {
        if !self.started {
            self.started = true;
            // `validate` of a DB of one time grid takes a tick at a time: the record per
            // instant the merge would give, every row and timestamp read and checked (every
            // index compared with the first at the start, the first read again for times).
            let all = self.wanted.iter().all(|&w| w);
            self.ticks = self.options.check_only && all && one_grid(&self.catalogue);
            let merged = if self.ticks { 0 } else { self.streams.len() };
            for ch in 0..merged as ChannelId {
                if !self.wanted(ch) {
                    continue;
                }
                if let Some(t) = self.next_time(ch)? {
                    self.merge.push(t, ch);
                }
            }
        }
        if self.ticks {
            let time = self.tick(None)?;
            return Ok(time.map(|time| Record::new(time, 0)));
        }
        let Some((us, ch)) = self.merge.peek() else {
            return Ok(None);
        };
        let time = us.saturating_sub(self.epoch_us).saturating_mul(1000);
        let mut record = Record::new(time, ch);
        if !self.options.check_only {
            self.serve(ch, Some(&mut record))?;
            return Ok(Some(record));
        }
        // `validate` takes times only: one record per instant, every row of it still read
        // and checked (ReadOptions::check_only).
        self.serve(ch, None)?;
        while let Some((next, ch)) = self.merge.peek() {
            if next != us {
                break;
            }
            self.serve(ch, None)?;
        }
        Ok(Some(record))
    }
}

/// The header: a channel per component, then one per message log, and what the DB says
/// of itself under [`HEADER_KEY`].
fn header(catalogue: &Catalogue, epoch_us: i64) -> Header {
    let mut header = Header::new("elodin-db", catalogue.layout.name());
    if catalogue.earliest_us().is_some() {
        header.origin.epoch = Some(Epoch {
            unix_ns: epoch_us.saturating_mul(1000),
            fraction_digits: 6,
        });
        header.origin.system = Some("UTC".into());
    }
    let mut components = Map::new();
    for c in &catalogue.components {
        let mut channel = Channel::new(&c.name, ChannelKind::Signals, Composition::Independent);
        let shape: Vec<usize> = c.schema.shape.iter().map(|&d| d as usize).collect();
        channel.fields = vec![FieldSpec {
            elements: c.element_names.clone(),
            ..FieldSpec::typed(&c.field, c.schema.prim.dtype(), &shape)
        }];
        channel.declares_all = true;
        header.add_channel(channel);
        components.insert(
            c.name.clone(),
            json!({
                "id": c.id,
                "entity_id": c.entity_id,
                "type": c.schema.prim.client_name(),
                "shape": c.schema.shape,
                "metadata": string_map(&c.metadata.metadata),
                "asset": c.metadata.asset,
            }),
        );
    }
    let mut msgs = Map::new();
    for m in &catalogue.msgs {
        let mut channel = Channel::new(&m.name, ChannelKind::Events, Composition::Independent);
        channel.fields = vec![FieldSpec::new("payload")];
        channel.declares_all = true;
        header.add_channel(channel);
        msgs.insert(
            m.name.clone(),
            json!({
                "id": m.id,
                "metadata": m.metadata.as_ref().map(|x| string_map(&x.metadata)),
            }),
        );
    }
    let state = match &catalogue.state {
        super::layout::DbState::Config {
            recording,
            default_stream_time_step,
            metadata,
        } => json!({
            "recording": recording,
            "default_stream_time_step_ns": default_stream_time_step.as_nanos() as u64,
            "metadata": string_map(metadata),
        }),
        super::layout::DbState::Settings {
            recording,
            time_step,
            default_stream_time_step,
        } => json!({
            "recording": recording,
            "time_step_ns": time_step.as_nanos() as u64,
            "default_stream_time_step_ns": default_stream_time_step.as_nanos() as u64,
        }),
    };
    header.metadata.insert(
        HEADER_KEY.into(),
        json!({
            "layout": catalogue.layout.name(),
            "db_state": state,
            "components": components,
            "metadata_only": catalogue.metadata_only,
            "entities": catalogue.entities.iter().map(|(id, n)| (id.to_string(), Json::String(n.clone()))).collect::<Map<_, _>>(),
            "message_logs": msgs,
        }),
    );
    header
}

fn string_map(map: &[(String, String)]) -> Json {
    Json::Object(
        map.iter()
            .map(|(k, v)| (k.clone(), Json::String(v.clone())))
            .collect(),
    )
}

impl Iterator for DbReader {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.advance()
            .map_err(|e| e.in_file(&self.path))
            .transpose()
    }
}

impl Source for DbReader {
    fn header(&self) -> &Header {
        &self.header
    }

    fn findings(&self) -> Vec<(&Path, &Findings)> {
        vec![(self.path.as_path(), &self.findings)]
    }

    fn progress(&self) -> (u64, u64) {
        (self.done.min(self.total), self.total)
    }

    fn facts(&self) -> Vec<Fact> {
        super::summary::facts(&self.catalogue)
    }

    fn recycle(&mut self, record: Record) {
        let prim = match record.values.first() {
            Some((_, Value::Array(a))) => Primitive::from_dtype(a.dtype()),
            _ => None,
        };
        if let Some(spare) = prim.map(|p| &mut self.spare[p as usize]) {
            if spare.len() < SPARE {
                spare.push(record.values);
            }
        }
    }

    /// From the catalogue: each log's committed entries and its first and last timestamps.
    fn tally(&self) -> Option<Vec<ChannelTally>> {
        let ns = |us: i64| us.saturating_sub(self.epoch_us).saturating_mul(1000);
        let logs = self
            .catalogue
            .components
            .iter()
            .map(|c| (c.rows, c.first_us, c.last_us))
            .chain(
                self.catalogue
                    .msgs
                    .iter()
                    .map(|m| (m.count, m.first_us, m.last_us)),
            );
        let tally = logs
            .enumerate()
            .filter_map(|(ch, (records, first, last))| {
                Some(ChannelTally {
                    channel: ch as ChannelId,
                    records,
                    first: ns(first?),
                    last: ns(last?),
                })
            })
            .collect();
        Some(tally)
    }

    fn select_channels(&mut self, wanted: &[bool]) {
        self.wanted = wanted.to_vec();
        let keep = |ch: ChannelId| wanted.get(ch as usize).copied().unwrap_or(true);
        self.merge.retain(keep);
    }
}
