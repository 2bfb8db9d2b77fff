//! Writing `.nanover.zip` as NanoVer's writer does (spec §10): the messages member
//! streamed behind a placeholder local header that is patched at the end, then the index
//! member, the central directory and the EOCD. Only the index grows with the recording:
//! its entries are encoded as messages are written (about 67 bytes per message).

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::container::{self, MESSAGES_DATA_OFFSET};
use super::encode::{self, Lost};
use super::index::{self, Types};
use super::message::{self, PartKind};
use super::msgpack::Encoder;
use super::RAW_FORMAT;
use crate::formats::nanover::micros;
use crate::formats::output::{Outputs, SeekableDestination};
use crate::formats::{Sink, Unsupported, WriteError, WriteReport};
use crate::model::{Header, Record, Value};

pub struct ZipWriter {
    out: SeekableDestination,
    path: PathBuf,
    /// The part each input channel becomes, if any.
    parts: Vec<Option<PartKind>>,
    channel_names: Vec<String>,
    written: u64,
    crc: crc32fast::Hasher,
    /// The index's entries, encoded, and how many.
    index: Encoder,
    entries: u32,
    /// Records of one group, waiting for the rest of their message.
    pending: Vec<Record>,
    /// Buffers reused by every encoded message: the message, and a frame map's body.
    scratch: (Vec<u8>, Vec<u8>),
    report: WriteReport,
}

impl ZipWriter {
    pub fn create(
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<ZipWriter, WriteError> {
        let parts: Vec<Option<PartKind>> = header
            .channels
            .iter()
            .map(|c| PartKind::from_name(&c.name))
            .collect();
        if !header.channels.is_empty() && parts.iter().all(Option::is_none) {
            let names: Vec<&str> = header.channels.iter().map(|c| c.name.as_str()).collect();
            return Err(WriteError::Unsupported(Unsupported::NothingToWrite {
                holds: "a .nanover.zip holds channels `frame`, `state` and `command`",
                has: names.into_iter().map(String::from).collect(),
            }));
        }
        let mut out = outputs.create_seekable(target)?;
        out.write_all(&container::messages_local_header(0, 0))
            .map_err(|e| WriteError::io(target, e))?;
        Ok(ZipWriter {
            out,
            path: target.to_path_buf(),
            parts,
            channel_names: header.channels.iter().map(|c| c.name.clone()).collect(),
            written: 0,
            crc: crc32fast::Hasher::new(),
            index: Encoder::new(),
            entries: 0,
            pending: Vec::new(),
            scratch: (Vec::new(), Vec::new()),
            report: WriteReport::default(),
        })
    }

    fn kind(&self, r: &Record) -> Option<PartKind> {
        self.parts.get(r.channel as usize).copied().flatten()
    }

    fn flush_pending(&mut self) -> Result<(), WriteError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let group = std::mem::take(&mut self.pending);
        // Every pending record passed `micros`: its time is not negative.
        self.message(&group, (group[0].time / 1000) as u64)
    }

    /// Writes one message made of `records` (one per part, same time): their original
    /// bytes when together they are all of that message, else encoded.
    fn message(&mut self, records: &[Record], ts: u64) -> Result<(), WriteError> {
        let (length, types, frame_index) = match self.verbatim(records) {
            Some((bytes, types, frame_index)) => {
                self.out
                    .write_all(bytes)
                    .map_err(|e| WriteError::io(&self.path, e))?;
                self.crc.update(bytes);
                self.report.verbatim += records.len() as u64;
                (bytes.len(), types, frame_index)
            }
            None => {
                let (bytes, types, frame_index) = self.encoded(records);
                self.out
                    .write_all(&bytes)
                    .map_err(|e| WriteError::io(&self.path, e))?;
                self.crc.update(&bytes);
                let length = bytes.len();
                self.scratch.0 = bytes;
                (length, types, frame_index)
            }
        };
        index::encode_entry(
            &mut self.index,
            self.written,
            length as u64,
            types,
            frame_index.as_ref(),
            ts as i64,
        );
        self.entries = self.entries.saturating_add(1);
        self.written += length as u64;
        self.report.records += records.len() as u64;
        Ok(())
    }

    /// The original message, when every record carries it and together they are all of
    /// its parts: (bytes, parts, `frame.index` for the index entry).
    fn verbatim<'r>(&self, records: &'r [Record]) -> Option<(&'r [u8], Types, Option<Value>)> {
        let raw = records[0].raw.as_ref().filter(|r| r.format == RAW_FORMAT)?;
        if records.iter().any(|r| r.raw.as_ref() != Some(raw)) {
            return None;
        }
        let parts = message::top_level(&raw.bytes).ok()?;
        let mut types = Types::default();
        let mut kinds = Vec::new();
        for (name, _) in &parts {
            types.push(name);
            kinds.extend(PartKind::from_name(name));
        }
        let mut mine: Vec<PartKind> = records.iter().filter_map(|r| self.kind(r)).collect();
        mine.sort();
        kinds.sort();
        if mine != kinds {
            return None;
        }
        let frame_index = parts
            .iter()
            .find(|(n, _)| n == "frame")
            .and_then(|(_, r)| message::frame_index_of(&raw.bytes, r.clone()));
        Some((&raw.bytes, types, frame_index))
    }

    /// A new message from the records' values, in the writer's reused buffers.
    fn encoded(&mut self, records: &[Record]) -> (Vec<u8>, Types, Option<Value>) {
        let mut sorted: Vec<(PartKind, &Record)> = records
            .iter()
            .filter_map(|r| Some((self.kind(r)?, r)))
            .collect();
        sorted.sort_by_key(|(k, _)| *k);
        let mut enc = Encoder::reusing(std::mem::take(&mut self.scratch.0));
        let mut body = Encoder::reusing(std::mem::take(&mut self.scratch.1));
        let mut types = Types::default();
        let mut frame_index = None;
        enc.map_len(sorted.len() as u32);
        for (kind, r) in &sorted {
            let mut lost = Lost::new();
            enc.str(kind.name());
            types.push(kind.name());
            encode::part(&mut enc, &mut body, *kind, r.frame, &r.values, &mut lost);
            if *kind == PartKind::Frame {
                frame_index = match r.frame {
                    Some(i) => Some(Value::Int(i)),
                    None => r.get("frame.index").cloned(),
                };
            }
            lost.sort();
            lost.dedup();
            let channel = &self.channel_names[r.channel as usize];
            for (field, reason) in lost {
                self.report.loss.add(channel, &field, reason);
            }
        }
        self.scratch.1 = body.into_vec();
        (enc.into_vec(), types, frame_index)
    }
}

impl Sink for ZipWriter {
    fn add_channel(&mut self, channel: &crate::model::Channel) -> Result<(), WriteError> {
        self.parts.push(PartKind::from_name(&channel.name));
        self.channel_names.push(channel.name.clone());
        Ok(())
    }

    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        let channel = self
            .channel_names
            .get(record.channel as usize)
            .map_or("?", String::as_str);
        if self.kind(record).is_none() {
            self.report.loss.add(
                channel,
                "*",
                "no such part in a .nanover.zip message; record dropped",
            );
            return Ok(());
        }
        let Some(ts) = micros(record, channel, &mut self.report.loss) else {
            return Ok(());
        };
        let joins = |p: &Record| {
            p.group == record.group && p.time == record.time && p.channel != record.channel
        };
        if record.group.is_some() && !self.pending.is_empty() && self.pending.iter().all(joins) {
            self.pending.push(record.clone());
            return Ok(());
        }
        self.flush_pending()?;
        if record.group.is_some() {
            self.pending.push(record.clone());
            Ok(())
        } else {
            self.message(std::slice::from_ref(record), ts)
        }
    }

    fn finish(mut self: Box<Self>) -> Result<WriteReport, WriteError> {
        self.flush_pending()?;
        let io = |e| WriteError::io(&self.path, e);
        let m = self.written;
        let crc = self.crc.clone().finalize();
        let mut head = Encoder::new();
        head.array_len(self.entries);
        let (head, entries) = (head.as_slice(), self.index.as_slice());
        let idx_len = (head.len() + entries.len()) as u64;
        let mut idx_crc = crc32fast::Hasher::new();
        idx_crc.update(head);
        idx_crc.update(entries);
        let idx_crc = idx_crc.finalize();
        let index_local = MESSAGES_DATA_OFFSET + m;
        let index_header = container::index_local_header(idx_crc, idx_len as u32);
        let cd_offset = index_local + index_header.len() as u64 + idx_len;
        let cd = container::central_directory(
            &[
                (container::MESSAGES, crc, m, 0),
                (container::INDEX, idx_crc, idx_len, index_local),
            ],
            cd_offset,
        );
        self.out.write_all(&index_header).map_err(io)?;
        self.out.write_all(head).map_err(io)?;
        self.out.write_all(entries).map_err(io)?;
        self.out.write_all(&cd).map_err(io)?;
        self.out.seek(SeekFrom::Start(0)).map_err(io)?;
        self.out
            .write_all(&container::messages_local_header(crc, m))
            .map_err(io)?;
        self.out.flush().map_err(io)?;
        Ok(std::mem::take(&mut self.report))
    }
}
