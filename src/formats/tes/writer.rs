//! Writing `.3es` captures (spec §12): a 48-byte ServerInfo, a FrameCount placeholder
//! patched at close, then every packet verbatim, plain, collated, collated + gzip (the
//! default) or whole-file gzip.

use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;

use super::decode::{self, C_FRAME, C_FRAME_COUNT, R_CONTROL, R_SERVER_INFO};
use super::packet::{self, PacketHeader, HEADER_LEN};
use super::reader::{DEFAULT_FRAME_TIME, DEFAULT_TIME_UNIT};
use super::repair::{SceneGuard, Verdict};
use super::{encode, names, RAW_FORMAT};
use crate::formats::output::{Outputs, SeekableDestination};
use crate::formats::{Sink, Unsupported, WriteError, WriteReport};
use crate::model::{Header, Record, MAPPED_FROM};

/// How a capture is written.
#[derive(Debug, Clone, Copy)]
pub struct TesWriteOptions {
    /// How the packets after the two header packets are stored.
    pub compression: Compression3es,
    /// For `recover`: drop packets whose CRC does not match, and keep the scene consistent
    /// around what was dropped ([`SceneGuard`]), so that the capture replays cleanly.
    pub repair: bool,
}

impl Default for TesWriteOptions {
    fn default() -> Self {
        TesWriteOptions {
            compression: Compression3es::CollatedGzip,
            repair: false,
        }
    }
}

/// Largest inner total of a collated packet: 65535 − 16 − 8 − 2 (spec §12).
pub const COLLATE_LIMIT: usize = 65509;

/// How the packets after the two header packets are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression3es {
    Plain,
    Collated,
    CollatedGzip,
    FileGzip,
}

impl Compression3es {
    /// Every scheme's name, the default first.
    pub const NAMES: &'static [&'static str] = &["collated-gzip", "collated", "plain", "file-gzip"];

    /// The name `--compression` (`--tes-compression`) uses.
    pub fn name(self) -> &'static str {
        match self {
            Compression3es::Plain => "plain",
            Compression3es::Collated => "collated",
            Compression3es::CollatedGzip => "collated-gzip",
            Compression3es::FileGzip => "file-gzip",
        }
    }

    pub fn parse(name: &str) -> Option<Compression3es> {
        Some(match name {
            "plain" | "none" => Compression3es::Plain,
            "collated" => Compression3es::Collated,
            "collated-gzip" | "gzip" => Compression3es::CollatedGzip,
            "file-gzip" => Compression3es::FileGzip,
            _ => return None,
        })
    }
}

enum Body {
    Raw(SeekableDestination),
    Gzip(GzEncoder<SeekableDestination>),
    Gone,
}

impl Body {
    fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        match self {
            Body::Raw(o) => o.write_all(b),
            Body::Gzip(g) => g.write_all(b),
            // Only while switching to gzip; nothing writes then.
            Body::Gone => Err(io::Error::other("output already finished")),
        }
    }
}

pub struct TesWriter {
    path: PathBuf,
    body: Body,
    mode: Compression3es,
    started: bool,
    time_unit: u64,
    frame_time: u32,
    coordinate_frame: u8,
    collate: Vec<u8>,
    scratch: Vec<u8>,
    frames: u64,
    channels: Vec<String>,
    /// Set for `recover` ([`TesWriteOptions::repair`]).
    repair: Option<SceneGuard>,
    /// The records were mapped from another family ([`MAPPED_FROM`]): they are built from
    /// their values ([`encode`]).
    mapped: bool,
    report: WriteReport,
}

impl TesWriter {
    pub fn create(
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
        options: TesWriteOptions,
    ) -> Result<TesWriter, WriteError> {
        let mode = options.compression;
        let mapped = header.metadata.contains_key(MAPPED_FROM);
        if !header.channels.is_empty() && header.format != RAW_FORMAT && !mapped {
            // Every record would be dropped (packets are written from their own bytes only):
            // say so before writing an empty capture.
            return Err(WriteError::Unsupported(Unsupported::NotReencoded {
                format: header.format.to_string(),
            }));
        }
        let out = outputs.create_seekable(target)?;
        let meta = |k: &str| header.metadata.get(k).and_then(|v| v.as_u64());
        // A mapping sets the timing it wants; another format's metadata means nothing here.
        let from_3es = header.format == "3es" || mapped;
        Ok(TesWriter {
            path: target.to_path_buf(),
            body: Body::Raw(out),
            mode,
            started: false,
            time_unit: meta("time_unit_us")
                .filter(|t| from_3es && *t > 0)
                .unwrap_or(DEFAULT_TIME_UNIT),
            frame_time: meta("default_frame_time")
                .filter(|_| from_3es)
                .map_or(DEFAULT_FRAME_TIME, |v| v.min(u32::MAX as u64) as u32),
            coordinate_frame: meta("coordinate_frame")
                .filter(|_| from_3es)
                .map_or(0, |v| v.min(255) as u8),
            collate: Vec::with_capacity(COLLATE_LIMIT),
            scratch: Vec::new(),
            frames: 0,
            channels: header.channels.iter().map(|c| c.name.clone()).collect(),
            repair: options.repair.then(SceneGuard::default),
            mapped,
            report: WriteReport::default(),
        })
    }

    fn io(&self, e: io::Error) -> WriteError {
        WriteError::io(&self.path, e)
    }

    /// ServerInfo and the FrameCount placeholder, raw, then whole-file gzip if asked.
    fn start(&mut self) -> Result<(), WriteError> {
        self.started = true;
        let mut head = packet::build(
            R_SERVER_INFO,
            0,
            &packet::server_info_payload(self.time_unit, self.frame_time, self.coordinate_frame),
        );
        packet::build_into(
            &mut head,
            R_CONTROL,
            C_FRAME_COUNT,
            &packet::control_payload(0, 0, 0),
        );
        self.body.write_all(&head).map_err(|e| self.io(e))?;
        if self.mode == Compression3es::FileGzip {
            if let Body::Raw(out) = std::mem::replace(&mut self.body, Body::Gone) {
                self.body = Body::Gzip(GzEncoder::new(out, Compression::default()));
            }
        }
        Ok(())
    }

    fn put(&mut self, p: &[u8]) -> Result<(), WriteError> {
        self.body
            .write_all(p)
            .map_err(|e| WriteError::io(&self.path, e))
    }

    /// Writes the pending collated packet, gzip-compressed when that makes it smaller.
    fn flush_collated(&mut self) -> Result<(), WriteError> {
        if self.collate.is_empty() {
            return Ok(());
        }
        let ub = self.collate.len() as u32;
        let mut flags = 0u16;
        let mut stored: &[u8] = &self.collate;
        let mut compressed = Vec::new();
        if self.mode == Compression3es::CollatedGzip {
            // Level 1: writing is several times faster than at the default level 6, for a
            // few more bytes (docs/performance.md, "Figures from code comments").
            let mut enc = GzEncoder::new(
                Vec::with_capacity(self.collate.len() / 2),
                Compression::fast(),
            );
            enc.write_all(&self.collate)
                .map_err(|e| WriteError::io(&self.path, e))?;
            compressed = enc.finish().map_err(|e| WriteError::io(&self.path, e))?;
            if compressed.len() < self.collate.len() {
                flags = 1;
                stored = &compressed;
            }
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(&flags.to_be_bytes());
        self.scratch.extend_from_slice(&0u16.to_be_bytes());
        self.scratch.extend_from_slice(&ub.to_be_bytes());
        self.scratch.extend_from_slice(stored);
        let _ = compressed;
        let mut p = Vec::with_capacity(self.scratch.len() + HEADER_LEN + 2);
        packet::build_into(&mut p, decode::R_COLLATED, 0, &self.scratch);
        self.collate.clear();
        self.put(&p)
    }

    /// One packet of the capture, in the chosen scheme.
    fn packet(&mut self, p: &[u8], is_frame: bool) -> Result<(), WriteError> {
        match self.mode {
            Compression3es::Plain | Compression3es::FileGzip => self.put(p),
            _ => {
                if is_frame || p.len() > COLLATE_LIMIT {
                    self.flush_collated()?;
                    return self.put(p);
                }
                if self.collate.len() + p.len() > COLLATE_LIMIT {
                    self.flush_collated()?;
                }
                self.collate.extend_from_slice(p);
                Ok(())
            }
        }
    }
}

impl Sink for TesWriter {
    fn add_channel(&mut self, channel: &crate::model::Channel) -> Result<(), WriteError> {
        self.channels.push(channel.name.clone());
        Ok(())
    }

    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        let channel = |w: &TesWriter| {
            w.channels
                .get(record.channel as usize)
                .map_or("?", |c| c.as_str())
                .to_string()
        };
        let encoded;
        let raw = match &record.raw {
            Some(raw) if raw.format == RAW_FORMAT => &raw.bytes,
            _ if self.mapped => match encode::packet(&channel(self), record) {
                Ok(p) => {
                    encoded = p;
                    &encoded
                }
                Err(why) => {
                    self.report.loss.add(&channel(self), "*", &why);
                    return Ok(());
                }
            },
            _ => {
                // Only a key filter takes a 3es record's bytes away (a recording of another
                // format is refused in `create`). Writing the rest would keep an object's
                // Updates whose Create was filtered out, or the reverse: refuse instead.
                return Err(WriteError::Unsupported(Unsupported::KeysFiltered {
                    channel: channel(self).to_string(),
                }));
            }
        };
        let Some(h) = PacketHeader::parse(raw).filter(|h| h.packet_len() == raw.len()) else {
            self.report.loss.add(
                &channel(self),
                "*",
                "packet bytes that do not frame as one packet",
            );
            return Ok(());
        };
        if self.repair.is_some() && packet::crc_mismatch(&h, raw).is_some() {
            self.report.loss.add(
                &channel(self),
                "*",
                "a packet whose CRC does not match (damaged): dropped",
            );
            return Ok(());
        }
        let payload = &raw[h.payload_start()..h.payload_start() + h.payload_size as usize];
        match (h.routing_id, h.message_id) {
            (R_SERVER_INFO, _) => {
                // Written by the writer itself; before the first packet it sets the values.
                if payload.len() >= 13 {
                    let tu = u64::from_be_bytes(payload[..8].try_into().unwrap_or_default());
                    let ft = u32::from_be_bytes(payload[8..12].try_into().unwrap_or_default());
                    if !self.started {
                        if tu > 0 {
                            self.time_unit = tu;
                        }
                        self.frame_time = ft;
                        self.coordinate_frame = payload[12];
                    } else if tu != self.time_unit || ft != self.frame_time {
                        self.report.loss.add("3es/server_info", "time_unit", "a later ServerInfo with other timing is consumed (the written one comes first)");
                    }
                }
                self.report.records += 1;
                return Ok(());
            }
            (R_CONTROL, C_FRAME_COUNT) => {
                // Replaced by the writer's own, patched at close.
                self.report.records += 1;
                return Ok(());
            }
            _ => {}
        }
        if !self.started {
            self.start()?;
        }
        if let Some(guard) = &mut self.repair {
            match guard.check(&h, payload) {
                Verdict::Keep => {}
                Verdict::Drop(why) => {
                    self.report.loss.add(&channel(self), "*", why);
                    return Ok(());
                }
                Verdict::Insert(p, why) => {
                    let name = names::CHANNELS
                        .get(names::channel_of(h.routing_id, decode::S_DESTROY) as usize)
                        .map_or("?", |c| c.0);
                    self.report.loss.add(name, "*", why);
                    self.packet(&p, false)?;
                }
            }
        }
        let is_frame = h.routing_id == R_CONTROL && h.message_id == C_FRAME;
        if is_frame {
            self.frames += 1;
        }
        let raw = raw.clone();
        self.packet(&raw, is_frame)?;
        self.report.records += 1;
        if record.raw.is_some() {
            self.report.verbatim += 1;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<WriteReport, WriteError> {
        if !self.started {
            self.start()?;
        }
        self.flush_collated()?;
        let out = match std::mem::replace(&mut self.body, Body::Gone) {
            Body::Raw(o) => o,
            Body::Gzip(g) => g.finish().map_err(|e| self.io(e))?,
            Body::Gone => return Ok(self.report),
        };
        // Patch the FrameCount placeholder in place (byte 66, after the 48-byte ServerInfo).
        let count = self.frames.min(u32::MAX as u64) as u32;
        let fc = packet::build(
            R_CONTROL,
            C_FRAME_COUNT,
            &packet::control_payload(0, count, 0),
        );
        let mut out = out;
        let patch = (|| {
            out.seek(SeekFrom::Start(66))?;
            out.write_all(&fc)?;
            out.flush()
        })();
        patch.map_err(|e| self.io(e))?;
        Ok(self.report)
    }
}
