//! The MCAP writer: the `mcap` crate lays out chunks, indexes and the summary; this file
//! decides topics, schemas, times and message bytes.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use mcap::records::{MessageHeader, Metadata};
use mcap::{Compression, McapError, WriteOptions};

use super::scene::{Scene, Topic3d};
use super::schema::{channel_schema, composition};
use crate::formats::json_text::{self, Lost};
use crate::formats::output::SeekableDestination;
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::{Channel, ChannelKind, Header, Record};

/// Uncompressed bytes per chunk: large enough that zstd compresses well and the chunk index
/// stays small, small enough that a reader seeking to an instant decompresses little.
const CHUNK_SIZE: u64 = 4 << 20;

/// The summary's library string.
const LIBRARY: &str = concat!("simrec ", env!("CARGO_PKG_VERSION"));

pub struct McapWriter {
    out: Option<mcap::Writer<SeekableDestination>>,
    path: PathBuf,
    /// The origin's epoch in Unix nanoseconds: log time is absolute when there is one.
    epoch_ns: Option<i64>,
    /// Per simrec channel: its definition and its MCAP channel id.
    channels: Vec<(Channel, u16)>,
    /// MCAP channel ids of the Foxglove topics, added when first used.
    topics_3d: BTreeMap<Topic3d, u16>,
    scene: Scene,
    sequence: u32,
    line: Vec<u8>,
    lost: Lost,
    messages_3d: Vec<(Topic3d, Vec<u8>)>,
    report: WriteReport,
}

impl McapWriter {
    pub fn create(
        out: SeekableDestination,
        path: &Path,
        header: &Header,
    ) -> Result<McapWriter, WriteError> {
        let options = WriteOptions::new()
            .compression(Some(Compression::Zstd))
            .library(LIBRARY)
            .chunk_size(Some(CHUNK_SIZE))
            // zstd's fastest level: the JSON is large and compresses well at any level, and
            // a conversion should run at the speed of reading.
            .compression_level(1);
        let mut writer = McapWriter {
            out: Some(options.create(out).map_err(|e| error(path, e))?),
            path: path.to_path_buf(),
            epoch_ns: header.origin.epoch.map(|e| e.unix_ns),
            channels: Vec::new(),
            topics_3d: BTreeMap::new(),
            scene: Scene::new(header),
            sequence: 0,
            line: Vec::with_capacity(1 << 16),
            lost: Lost::new(),
            messages_3d: Vec::new(),
            report: WriteReport::default(),
        };
        writer.write_metadata(header)?;
        for channel in &header.channels {
            writer.add(channel)?;
        }
        Ok(writer)
    }

    fn writer(&mut self) -> Result<&mut mcap::Writer<SeekableDestination>, WriteError> {
        let path = &self.path;
        self.out
            .as_mut()
            .ok_or_else(|| WriteError::Invalid(format!("{}: already finished", path.display())))
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
            .write_metadata(&Metadata {
                name: "simrec".into(),
                metadata,
            })
            .map_err(|e| error(&path, e))
    }

    /// A topic `/NAME` with the channel's JSON Schema.
    fn add(&mut self, channel: &Channel) -> Result<(), WriteError> {
        let path = self.path.clone();
        let topic = format!("/{}", channel.name.trim_start_matches('/'));
        let mut metadata = BTreeMap::new();
        metadata.insert(
            "composition".into(),
            composition(channel.composition).into(),
        );
        metadata.insert(
            "kind".into(),
            match channel.kind {
                ChannelKind::Signals => "signals",
                ChannelKind::Events => "events",
            }
            .into(),
        );
        let schema = channel_schema(channel);
        let out = self.writer()?;
        let schema_id = out
            .add_schema(&channel.name, "jsonschema", &schema)
            .map_err(|e| error(&path, e))?;
        let id = out
            .add_channel(schema_id, &topic, "json", &metadata)
            .map_err(|e| error(&path, e))?;
        self.scene.add_channel(channel);
        self.channels.push((channel.clone(), id));
        Ok(())
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
        let header = MessageHeader {
            channel_id,
            sequence: self.sequence,
            log_time,
            publish_time: log_time,
        };
        self.sequence = self.sequence.wrapping_add(1);
        let path = self.path.clone();
        self.writer()?
            .write_to_known_channel(&header, data)
            .map_err(|e| error(&path, e))
    }
}

impl Sink for McapWriter {
    fn add_channel(&mut self, channel: &Channel) -> Result<(), WriteError> {
        self.add(channel)
    }

    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        let Some((channel, id)) = self.channels.get(record.channel as usize) else {
            self.report
                .loss
                .add("?", "*", "record of a channel the header does not declare");
            return Ok(());
        };
        let id = *id;
        let name = channel.name.clone();
        let log_time = match self.log_time(record.time) {
            Some(t) => t,
            None => {
                self.report.loss.add(
                    &name,
                    "time_ns",
                    "log time before 1970-01-01 (or before time zero) written as 0",
                );
                0
            }
        };
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        json_text::record(&mut line, record, None, &mut self.lost);
        let written = self.message(id, log_time, &line);
        self.line = line;
        written?;

        self.scene.record(
            &self.channels[record.channel as usize].0,
            record,
            log_time,
            &mut self.messages_3d,
            &mut self.report.loss,
        );
        let messages = std::mem::take(&mut self.messages_3d);
        for (topic, bytes) in &messages {
            let topic_id = self.topic_3d(*topic)?;
            self.message(topic_id, log_time, bytes)?;
        }
        self.messages_3d = messages;
        self.messages_3d.clear();

        self.lost.sort();
        self.lost.dedup();
        for (field, reason) in self.lost.drain(..) {
            self.report.loss.add(&name, &field, reason);
        }
        self.report.records += 1;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<WriteReport, WriteError> {
        let path = self.path.clone();
        let Some(mut out) = self.out.take() else {
            return Ok(self.report);
        };
        out.finish().map_err(|e| error(&path, e))?;
        out.into_inner()
            .flush()
            .map_err(|e| WriteError::io(&path, e))?;
        self.report.warnings.extend(self.scene.notes());
        Ok(self.report)
    }
}

fn error(path: &Path, e: McapError) -> WriteError {
    match e {
        McapError::Io(io) => WriteError::io(path, io),
        other => WriteError::Invalid(format!("{}: MCAP: {other}", path.display())),
    }
}
