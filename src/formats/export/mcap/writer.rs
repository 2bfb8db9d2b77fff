//! The MCAP writer: `file.rs` lays out chunks, indexes and the summary; the layout
//! (`layout.rs`) decides topics and message bytes; this file, schemas, channels and times.
//!
//! Protobuf records are laid out on the caller's thread ([`Messages`]: the layout, the
//! chunks and the 3D scene; a full chunk is compressed and written on `file.rs`'s thread):
//! handing the records to a thread of their own cost a clone of each record and its
//! freeing on the other thread, more than it saved, and the batches waiting held most of
//! the memory (docs/performance.md, "MCAP, protobuf"). With
//! `--mcap-encoding json` records are formatted on other threads (`json_batches`, as JSON
//! Lines are) and written, in record order when they come back, on a thread of their own.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver};

use super::file::{ChunkCompression, FileError, McapFile};
use super::layout::{Encoding, Layout, Placed, Ready};
use super::proto::MessageType;
use super::scene::{self, Scene, Topic3d};
use crate::formats::export::json_batches::{Formatted, JsonBatches, Style};
use crate::formats::output::SeekableDestination;
use crate::formats::worker::{Stopped, Worker};
use crate::formats::{Failure, Sink, WriteError, WriteReport};
use crate::model::{Channel, Header, Record};

/// Uncompressed bytes per chunk: large enough that zstd compresses well and the chunk index
/// stays small, small enough that a reader seeking to an instant decompresses little.
const CHUNK_SIZE: usize = 4 << 20;

/// The values of `--compression`, the default first.
pub const COMPRESSIONS: &[&str] = &["zstd", "zstd-fast", "none"];

/// How the chunks are compressed (`--compression`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum McapCompression {
    /// zstd level 1.
    #[default]
    Zstd,
    /// A negative zstd level.
    ZstdFast,
    None,
}

/// `--compression`'s values, in the order of [`COMPRESSIONS`].
pub const COMPRESSION_CHOICES: &[(&str, McapCompression)] = &[
    ("zstd", McapCompression::Zstd),
    ("zstd-fast", McapCompression::ZstdFast),
    ("none", McapCompression::None),
];

/// The values of `--mcap-encoding`, the default first.
pub const ENCODINGS: &[&str] = &["protobuf", "json"];

/// `--mcap-encoding`'s values, in the order of [`ENCODINGS`].
pub const ENCODING_CHOICES: &[(&str, Encoding)] =
    &[("protobuf", Encoding::Protobuf), ("json", Encoding::Json)];

/// How an MCAP file is written.
#[derive(Debug, Clone, Copy, Default)]
pub struct McapWriteOptions {
    pub compression: McapCompression,
    pub encoding: Encoding,
}
/// zstd's level for `--compression zstd-fast`.
const FAST_LEVEL: i32 = -3;

/// The summary's library string.
const LIBRARY: &str = concat!("simrec ", env!("CARGO_PKG_VERSION"));

/// The MCAP sink: writes protobuf records as they come, or batches records for the JSON
/// formatting threads and hands their formatted batches, in order, to the thread that
/// writes them.
pub struct McapWriter {
    path: PathBuf,
    /// Channels declared: a record of another channel is counted as lost here.
    declared: usize,
    mode: Mode,
    report: WriteReport,
}

enum Mode {
    Protobuf(Box<Messages>),
    Json {
        /// Records waiting for their JSON text, and the batches written, given back for
        /// their buffers.
        batches: Box<JsonBatches>,
        written: Receiver<Formatted>,
        /// The writing thread; dropped unfinished (an error elsewhere), it still ends.
        writer: Worker<ToWriter, WriteReport, WriteError>,
    },
}

/// What the writing thread is given, in the order of the records.
enum ToWriter {
    Batch(Formatted),
    Channel(Channel),
}

/// The file, topics and scene: the sink's (protobuf), the JSON writing thread's, or the
/// frame writer's (`frames.rs`).
pub(super) struct Messages {
    out: Option<McapFile<SeekableDestination>>,
    path: PathBuf,
    /// The origin's epoch in Unix nanoseconds: log time is absolute when there is one.
    epoch_ns: Option<i64>,
    /// The simrec channels, by id.
    channels: Vec<Channel>,
    layout: Layout,
    /// The MCAP channel id of each of the layout's topics, added when first used.
    topic_ids: Vec<Option<u16>>,
    ready: Vec<Ready>,
    /// MCAP channel ids of the Foxglove topics, added when first used.
    topics_3d: BTreeMap<Topic3d, u16>,
    scene: Scene,
    sequence: u32,
    messages_3d: Vec<(Topic3d, Vec<u8>)>,
    report: WriteReport,
}

impl McapWriter {
    /// A writer to `out`.
    pub fn create(
        out: SeekableDestination,
        path: &Path,
        header: &Header,
        options: McapWriteOptions,
    ) -> Result<McapWriter, WriteError> {
        let mut messages = Messages::create(out, path, header, options)?;
        let mode = match options.encoding {
            Encoding::Protobuf => Mode::Protobuf(Box::new(messages)),
            Encoding::Json => {
                // One batch waits while one is written: the formatting threads hold the rest.
                let (give_back, written) = channel::<Formatted>();
                let writer = Worker::spawn("mcap-writer", 1, move |jobs: Receiver<ToWriter>| {
                    for job in jobs {
                        match job {
                            ToWriter::Channel(c) => messages.add(c),
                            ToWriter::Batch(formatted) => {
                                messages.write_batch(&formatted)?;
                                // The caller may be gone (an error of its own): nothing to keep.
                                let _ = give_back.send(formatted);
                            }
                        }
                    }
                    messages.finish(Vec::new())
                })
                .map_err(|e| WriteError::io(path, e))?;
                let style = Style {
                    channel: false,
                    newline: false,
                    utc: None,
                };
                Mode::Json {
                    batches: Box::new(JsonBatches::new(style, Vec::new())),
                    written,
                    writer,
                }
            }
        };
        Ok(McapWriter {
            path: path.to_path_buf(),
            declared: header.channels.len(),
            mode,
            report: WriteReport::default(),
        })
    }

    fn stopped(&self) -> WriteError {
        WriteError::failed(
            &self.path,
            Failure::ThreadStopped("a JSON formatting thread stopped"),
        )
    }

    /// Why the writing thread gave no report: its own error, else what `gone` says.
    fn ended(&self, stopped: Stopped<WriteError>, gone: Failure) -> WriteError {
        match stopped {
            Stopped::Failed(e) => e,
            Stopped::Panicked => WriteError::failed(
                &self.path,
                Failure::ThreadStopped("the MCAP writing thread failed"),
            ),
            Stopped::Gone => WriteError::failed(&self.path, gone),
        }
    }

    /// Hands `job` to the writing thread; if it stopped, its error.
    fn send(&mut self, job: ToWriter) -> Result<(), WriteError> {
        let Mode::Json { writer, .. } = &mut self.mode else {
            return Ok(());
        };
        let sent = writer.send(job);
        sent.map_err(|s| self.ended(s, Failure::ThreadStopped("the MCAP writing thread stopped")))
    }

    /// Hands over the batches taken back while more than `keep` are out; with `keep` 0,
    /// first sends (or formats here) the batch being filled, so that every record goes.
    fn write_formatted(&mut self, keep: usize) -> Result<(), WriteError> {
        let Mode::Json {
            batches, written, ..
        } = &mut self.mode
        else {
            return Ok(());
        };
        while let Ok(formatted) = written.try_recv() {
            batches.recycle(formatted);
        }
        let mut send = Vec::new();
        if keep == 0 {
            send.extend(batches.finish());
        }
        let stopped = loop {
            let next = if keep == 0 {
                batches.next(0)
            } else {
                batches.next_if_full()
            };
            match next {
                Ok(Some(formatted)) => send.push(formatted),
                Ok(None) => break false,
                Err(_) => break true,
            }
        };
        for formatted in send {
            self.send(ToWriter::Batch(formatted))?;
        }
        if stopped {
            return Err(self.stopped());
        }
        Ok(())
    }
}

impl Sink for McapWriter {
    fn add_channel(&mut self, channel: &Channel) -> Result<(), WriteError> {
        self.declared += 1;
        if let Mode::Protobuf(messages) = &mut self.mode {
            messages.add(channel.clone());
            return Ok(());
        }
        // Records read before it are written first: the file's records stay in the order
        // of a writer of one record at a time.
        self.write_formatted(0)?;
        self.send(ToWriter::Channel(channel.clone()))
    }

    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        if record.channel as usize >= self.declared {
            self.report
                .loss
                .add("?", "*", "record of a channel the header does not declare");
            return Ok(());
        }
        match &mut self.mode {
            Mode::Protobuf(messages) => messages.write_record(record)?,
            Mode::Json { batches, .. } => {
                if batches.push(record) {
                    batches.send();
                    self.write_formatted(1)?;
                }
            }
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<WriteReport, WriteError> {
        self.write_formatted(0)?;
        let mut report = match self.mode {
            Mode::Protobuf(messages) => messages.finish(Vec::new())?,
            Mode::Json {
                ref mut batches,
                ref mut writer,
                ..
            } => {
                batches.stop();
                let joined = writer.finish();
                joined.map_err(|s| self.ended(s, Failure::Finished))?
            }
        };
        report.loss.merge(&self.report.loss);
        Ok(report)
    }
}

impl Messages {
    /// The file's metadata and the header's channels, written to `out`.
    pub(super) fn create(
        out: SeekableDestination,
        path: &Path,
        header: &Header,
        options: McapWriteOptions,
    ) -> Result<Messages, WriteError> {
        let (compression, encoding) = (options.compression, options.encoding);
        let compression = match compression {
            // zstd's fastest positive level: JSON numbers compress about 2.3 times at it,
            // and a conversion should run at the speed of reading.
            McapCompression::Zstd => ChunkCompression::Zstd(1),
            // A negative ("fast") level: faster than level 1, but without the entropy
            // coding of literals that makes the digits small (docs/performance.md, "MCAP
            // and JSON Lines").
            McapCompression::ZstdFast => ChunkCompression::Zstd(FAST_LEVEL),
            McapCompression::None => ChunkCompression::None,
        };
        let out =
            McapFile::create(out, LIBRARY, compression, CHUNK_SIZE).map_err(|e| error(path, e))?;
        let mut writer = Messages {
            out: Some(out),
            path: path.to_path_buf(),
            epoch_ns: header.origin.epoch.map(|e| e.unix_ns),
            channels: Vec::new(),
            layout: Layout::new(encoding, &header.format),
            topic_ids: Vec::new(),
            ready: Vec::new(),
            topics_3d: BTreeMap::new(),
            scene: Scene::new(header),
            sequence: 0,
            messages_3d: Vec::new(),
            report: WriteReport::default(),
        };
        writer.write_metadata(header)?;
        for channel in &header.channels {
            writer.add(channel.clone());
        }
        Ok(writer)
    }

    fn writer(&mut self) -> Result<&mut McapFile<SeekableDestination>, WriteError> {
        let path = &self.path;
        self.out
            .as_mut()
            .ok_or_else(|| WriteError::failed(path, Failure::Finished))
    }

    /// The recording's header as an MCAP metadata record named `simrec`.
    fn write_metadata(&mut self, header: &Header) -> Result<(), WriteError> {
        let mut metadata = BTreeMap::new();
        metadata.insert("source_format".into(), header.format.clone());
        metadata.insert(
            "source_format_version".into(),
            header.format_version.clone(),
        );
        metadata.insert("simrec_version".into(), env!("CARGO_PKG_VERSION").into());
        if let Some(epoch) = header.origin.epoch {
            metadata.insert("epoch".into(), epoch.iso8601());
        }
        if let Some(system) = &header.origin.system {
            metadata.insert("time_system".into(), system.clone());
        }
        metadata.insert(
            "log_time".into(),
            if header.origin.epoch.is_some() {
                "absolute: epoch + time_ns, Unix nanoseconds".into()
            } else {
                "time_ns: nanoseconds from the recording's time zero".into()
            },
        );
        if !header.metadata.is_empty() {
            metadata.insert(
                "source_metadata".into(),
                serde_json::Value::Object(header.metadata.clone()).to_string(),
            );
        }
        let path = self.path.clone();
        self.writer()?
            .metadata("simrec", &metadata)
            .map_err(|e| error(&path, e))
    }

    /// A simrec channel: its topic is made at its first record.
    fn add(&mut self, channel: Channel) {
        self.scene.add_channel(&channel);
        self.channels.push(channel);
    }

    /// The MCAP channel of the layout's topic `t`, added the first time it is used.
    fn topic_id(&mut self, t: usize) -> Result<u16, WriteError> {
        if let Some(Some(id)) = self.topic_ids.get(t) {
            return Ok(*id);
        }
        let path = self.path.clone();
        let topic = self.layout.topic(t);
        let (schema_name, schema_encoding, schema, message_encoding) = topic.schema();
        let (name, metadata) = (topic.name.clone(), topic.metadata.clone());
        let out = self.writer()?;
        let schema_id = out
            .add_schema(&schema_name, schema_encoding, &schema)
            .map_err(|e| error(&path, e))?;
        let id = out
            .add_channel(schema_id, &name, message_encoding, &metadata)
            .map_err(|e| error(&path, e))?;
        if self.topic_ids.len() <= t {
            self.topic_ids.resize(t + 1, None);
        }
        self.topic_ids[t] = Some(id);
        Ok(id)
    }

    /// The MCAP channel of a Foxglove topic, added the first time it is used.
    fn topic_3d(&mut self, topic: Topic3d) -> Result<u16, WriteError> {
        if let Some(&id) = self.topics_3d.get(&topic) {
            return Ok(id);
        }
        let path = self.path.clone();
        let schema = topic.schema();
        let out = self.writer()?;
        let schema_id = out
            .add_schema(&schema.name, &schema.encoding, &schema.data)
            .map_err(|e| error(&path, e))?;
        let id = out
            .add_channel(schema_id, topic.name(), "protobuf", &BTreeMap::new())
            .map_err(|e| error(&path, e))?;
        self.topics_3d.insert(topic, id);
        Ok(id)
    }

    /// Log time of a record: absolute (Unix ns) when the origin has an epoch, else the
    /// record's own time; `None` before 1970 (or before time zero without an epoch).
    fn log_time(&self, time: i64) -> Option<u64> {
        let t = match self.epoch_ns {
            Some(epoch) => epoch.checked_add(time)?,
            None => time,
        };
        u64::try_from(t).ok()
    }

    fn message(&mut self, channel_id: u16, log_time: u64, data: &[u8]) -> Result<(), WriteError> {
        let sequence = self.sequence;
        self.sequence = self.sequence.wrapping_add(1);
        let Some(out) = self.out.as_mut() else {
            return Err(WriteError::failed(&self.path, Failure::Finished));
        };
        out.message(channel_id, sequence, log_time, data)
            .map_err(|e| error(&self.path, e))
    }

    /// Writes the messages of a batch of records whose JSON is formatted, in order.
    fn write_batch(&mut self, formatted: &Formatted) -> Result<(), WriteError> {
        let mut lost = formatted.lost.iter().peekable();
        for (i, record) in formatted.records.iter().enumerate() {
            let c = record.channel as usize;
            // Records of channels not declared were counted as lost and not batched.
            let Some(t) = self.layout.json_topic(&self.channels, record) else {
                continue;
            };
            let log_time = self.log_time_of(t, record.time);
            let id = self.topic_id(t)?;
            self.message(id, log_time, formatted.record_text(i))?;
            self.draw(record, log_time)?;
            while let Some((_, field, reason)) = lost.next_if(|(r, _, _)| *r == i) {
                self.report.loss.add(&self.channels[c].name, field, reason);
            }
            self.report.records += 1;
        }
        Ok(())
    }

    /// Adds `record` to its topic, and writes the messages of the instants that ended.
    pub(super) fn write_record(&mut self, record: &Record) -> Result<(), WriteError> {
        if record.channel as usize >= self.channels.len() {
            return Ok(());
        }
        let mut ready = std::mem::take(&mut self.ready);
        self.layout
            .record(&self.channels, record, &mut ready, &mut self.report.loss);
        self.write_ready(&mut ready)?;
        self.ready = ready;
        self.draw(record, self.draw_time(record.time))?;
        self.report.records += 1;
        Ok(())
    }

    /// Where the one value of `record` goes ([`Layout::place`]), for a writer that encodes
    /// its topics' messages itself (`frames.rs`).
    pub(super) fn place(&mut self, record: &Record) -> Option<Placed> {
        self.layout.place(&self.channels, record)
    }

    /// The message type of the layout's topic `t`.
    pub(super) fn message_type(&self, t: usize) -> Option<&MessageType> {
        self.layout.topic(t).message()
    }

    /// Whether `record` (of one value) may draw or change the 3D scene ([`scene::reads`]).
    pub(super) fn draws(&self, record: &Record) -> bool {
        let channel = self.channels.get(record.channel as usize);
        match (channel, record.values.as_slice()) {
            (Some(channel), [(key, _)]) => scene::reads(channel, key),
            _ => true,
        }
    }

    /// Writes a message of the layout's topic `t` made elsewhere, at `time`.
    pub(super) fn write_message(
        &mut self,
        t: usize,
        time: i64,
        data: &[u8],
    ) -> Result<(), WriteError> {
        let log_time = self.log_time_of(t, time);
        let id = self.topic_id(t)?;
        self.message(id, log_time, data)
    }

    /// Counts `n` records whose values went in messages made elsewhere, the last at `time`
    /// and none of them drawing (or drawn by [`Messages::draw_record`]).
    pub(super) fn count(&mut self, n: u64, time: i64) {
        self.report.records += n;
        let log_time = self.draw_time(time);
        self.scene.skip(log_time);
    }

    /// Draws `record`, whose values went in a message made elsewhere.
    pub(super) fn draw_record(&mut self, record: &Record) -> Result<(), WriteError> {
        self.draw(record, self.draw_time(record.time))
    }

    /// The log time the 3D messages of a record at `time` are written at.
    fn draw_time(&self, time: i64) -> u64 {
        self.log_time(time).unwrap_or(0)
    }

    fn write_ready(&mut self, ready: &mut Vec<Ready>) -> Result<(), WriteError> {
        for m in ready.drain(..) {
            self.write_message(m.topic, m.time, &m.data)?;
        }
        Ok(())
    }

    /// The log time of a message of topic `t`; a time before 1970 (or time zero) is 0 and
    /// counted as lost.
    fn log_time_of(&mut self, t: usize, time: i64) -> u64 {
        self.log_time(time).unwrap_or_else(|| {
            let topic = self
                .layout
                .topic(t)
                .name
                .trim_start_matches('/')
                .to_string();
            self.report.loss.add(
                &topic,
                "time_ns",
                "log time before 1970-01-01 (or before time zero) written as 0",
            );
            0
        })
    }

    /// The Foxglove 3D messages of `record`.
    fn draw(&mut self, record: &Record, log_time: u64) -> Result<(), WriteError> {
        let Some(channel) = self.channels.get(record.channel as usize) else {
            return Ok(());
        };
        self.scene.record(
            channel,
            record,
            log_time,
            &mut self.messages_3d,
            &mut self.report.loss,
        );
        self.write_3d(log_time)
    }

    /// Writes the Foxglove messages made, at `log_time`.
    fn write_3d(&mut self, log_time: u64) -> Result<(), WriteError> {
        let messages = std::mem::take(&mut self.messages_3d);
        for (topic, bytes) in &messages {
            let topic_id = self.topic_3d(*topic)?;
            self.message(topic_id, log_time, bytes)?;
        }
        self.messages_3d = messages;
        self.messages_3d.clear();
        Ok(())
    }

    /// Writes the messages still held (the layout's, and `held`, of topics the layout holds
    /// none of), the summary and the footer.
    pub(super) fn finish(mut self, held: Vec<Ready>) -> Result<WriteReport, WriteError> {
        let mut ready = std::mem::take(&mut self.ready);
        self.layout.finish(&mut ready);
        // In topic order, as the layout gives its own: one message a topic.
        ready.extend(held);
        ready.sort_by_key(|m| m.topic);
        self.write_ready(&mut ready)?;
        let log_time = self.scene.finish(&mut self.messages_3d);
        self.write_3d(log_time)?;
        let path = self.path.clone();
        let Some(out) = self.out.take() else {
            return Ok(self.report);
        };
        out.finish()
            .map_err(|e| error(&path, e))?
            .flush()
            .map_err(|e| WriteError::io(&path, e))?;
        let notes = self.scene.notes();
        self.report.warnings.extend(notes);
        Ok(self.report)
    }
}

fn error(path: &Path, e: FileError) -> WriteError {
    match e {
        FileError::Io(io) => WriteError::io(path, io),
        FileError::Stopped => WriteError::failed(
            path,
            Failure::ThreadStopped("the MCAP chunk writing thread stopped"),
        ),
        other => WriteError::failed(path, Failure::Encoder(other.to_string())),
    }
}
