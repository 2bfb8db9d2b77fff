//! Writing XREC-S (spec §15): the Start, events packed in arrival order into Event packets of
//! at most 1 MiB of uncompressed events with tight bounds (gzip where the codec is gzip and it
//! helps), then an End with the counts of what was written. An event read from XREC is copied
//! from its own bytes; when its time moved (a rebased window, a merge) its two RTSS times are
//! moved inside those bytes and nothing else changes.

use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;
use serde_json::{json, Map, Value as Json};

use super::body;
use super::layout::{self, Bounds, End, Start, BOUNDS_LEN};
use super::{XrecCodec, XrecWriteOptions, HEADER_KEY, RAW};
use crate::formats::output::{Destination, Outputs};
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::{Channel, Entity, Header, Record, Value};

/// The source's End: end_unix_ns, end_rtss, metadata.
type SourceEnd = (i64, f64, Option<Map<String, Json>>);

pub struct XrecWriter {
    out: Destination,
    path: PathBuf,
    codec: u8,
    begin_unix_ns: i64,
    begin_rtss: f64,
    channels: Vec<String>,
    /// The source's End (unix ns, rtss, metadata), when its clock is this file's.
    source_end: Option<SourceEnd>,
    /// The source is XREC without an End packet.
    source_unfinished: bool,
    /// Keys added to the End's metadata (a slice's, a repair's).
    end_extra: Map<String, Json>,
    area: Vec<u8>,
    count: u32,
    frames: Option<(i64, i64)>,
    times: Option<(f64, f64)>,
    last_in_packet: f64,
    packets: u32,
    events: u64,
    last_time: Option<f64>,
    body: Vec<u8>,
    report: WriteReport,
}

fn minmax<T: PartialOrd + Copy>(m: Option<(T, T)>, x: T) -> Option<(T, T)> {
    Some(match m {
        None => (x, x),
        Some((lo, hi)) => (if x < lo { x } else { lo }, if x > hi { x } else { hi }),
    })
}

fn get_i64(m: &Map<String, Json>, k: &str) -> Option<i64> {
    m.get(k).and_then(Json::as_i64)
}

fn get_f64(m: &Map<String, Json>, k: &str) -> Option<f64> {
    m.get(k).and_then(Json::as_f64)
}

impl XrecWriter {
    pub fn create(
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
        options: XrecWriteOptions,
    ) -> Result<XrecWriter, WriteError> {
        let source = header.metadata.get(HEADER_KEY).and_then(Json::as_object);
        let kept = || match source
            .and_then(|m| m.get("compression"))
            .and_then(Json::as_str)
        {
            Some("gzip") => XrecCodec::Gzip,
            _ => XrecCodec::None,
        };
        let codec = match options.codec.unwrap_or_else(kept) {
            XrecCodec::Gzip => layout::CODEC_GZIP,
            XrecCodec::None => layout::CODEC_NONE,
        };
        let epoch = header.origin.epoch.map(|e| e.unix_ns);
        let (begin_unix_ns, begin_rtss) = match source
            .and_then(|m| Some((get_i64(m, "begin_unix_ns")?, get_f64(m, "begin_rtss")?)))
        {
            // A window moves the origin: begin_rtss moves with it, so event bytes stay valid.
            Some((unix, rtss)) => {
                let at = epoch.unwrap_or(unix);
                (at, rtss + at.saturating_sub(unix) as f64 / 1e9)
            }
            None => (epoch.unwrap_or(0), 0.0),
        };
        let moved = source.is_some_and(|m| get_i64(m, "begin_unix_ns") != Some(begin_unix_ns));
        let source_end = source
            .and_then(|m| m.get("end"))
            .and_then(Json::as_object)
            .filter(|_| !moved && source.is_some_and(|m| !m.contains_key("slice")))
            .and_then(|e| {
                Some((
                    get_i64(e, "end_unix_ns")?,
                    get_f64(e, "end_rtss")?,
                    e.get("metadata").and_then(Json::as_object).cloned(),
                ))
            });
        // A reader says `end: null` when its file has no End (a merge says nothing).
        let source_unfinished = source.is_some_and(|m| m.get("end").is_some_and(Json::is_null));
        let mut end_extra = Map::new();
        if let Some(slice) = source.and_then(|m| m.get("slice")) {
            end_extra.insert("slice".into(), slice.clone());
        }
        if options.repair {
            let dropped = source
                .and_then(|m| Some(get_i64(m, "file_bytes")? - get_i64(m, "framed_bytes")?))
                .unwrap_or(0);
            if source_unfinished || dropped > 0 {
                end_extra.insert("repaired".into(), json!(true));
                end_extra.insert("dropped_bytes".into(), json!(dropped));
            }
        }
        let start = Start {
            version: layout::FORMAT_VERSION,
            revision: layout::FORMAT_REVISION,
            compression: codec,
            begin_unix_ns,
            begin_rtss,
            app_version: source
                .and_then(|m| m.get("app_version"))
                .and_then(Json::as_str)
                .map_or_else(
                    || format!("simrec {}", env!("CARGO_PKG_VERSION")),
                    str::to_string,
                ),
            metadata: match source {
                Some(m) => m.get("metadata").and_then(Json::as_object).cloned(),
                None => {
                    let mut m = Map::new();
                    m.insert("source_format".into(), json!(header.format));
                    if !header.metadata.is_empty() {
                        m.insert(
                            "source_metadata".into(),
                            Json::Object(header.metadata.clone()),
                        );
                    }
                    Some(m)
                }
            },
        };
        let mut out = outputs.create(target)?;
        let path = target.to_path_buf();
        out.write_all(&layout::encode_start(&start))
            .map_err(|e| WriteError::io(&path, e))?;
        Ok(XrecWriter {
            out,
            path,
            codec,
            begin_unix_ns,
            begin_rtss,
            channels: header.channels.iter().map(|c| c.name.clone()).collect(),
            source_end,
            source_unfinished,
            end_extra,
            area: Vec::with_capacity(layout::PACKET_EVENTS_LIMIT),
            count: 0,
            frames: None,
            times: None,
            last_in_packet: f64::NEG_INFINITY,
            packets: 0,
            events: 0,
            last_time: None,
            body: Vec::new(),
            report: WriteReport::default(),
        })
    }

    fn io(&self, e: std::io::Error) -> WriteError {
        WriteError::io(&self.path, e)
    }

    /// Writes the pending events as one Event packet.
    fn flush(&mut self) -> Result<(), WriteError> {
        if self.count == 0 {
            return Ok(());
        }
        let (Some((f0, f1)), Some((t0, t1))) = (self.frames, self.times) else {
            return Ok(());
        };
        let bounds = Bounds {
            frame_begin: f0,
            frame_end: f1,
            rtss_begin: t0,
            rtss_end: t1,
            event_count: self.count,
            events_bytes: self.area.len() as u32,
        };
        let mut compressed = None;
        if self.codec == layout::CODEC_GZIP {
            let mut gz = GzEncoder::new(Vec::new(), Compression::default());
            gz.write_all(&self.area).map_err(|e| self.io(e))?;
            let z = gz.finish().map_err(|e| self.io(e))?;
            if z.len() < self.area.len() {
                compressed = Some(z);
            }
        }
        let (flags, stored) = match &compressed {
            Some(z) => (layout::FLAG_COMPRESSED, z.as_slice()),
            None => (0, self.area.as_slice()),
        };
        let h =
            layout::PacketHeader::encode(layout::EVENT, flags, (BOUNDS_LEN + stored.len()) as u32);
        let r = self
            .out
            .write_all(&h)
            .and_then(|_| self.out.write_all(&bounds.encode()))
            .and_then(|_| self.out.write_all(stored));
        r.map_err(|e| WriteError::io(&self.path, e))?;
        self.packets += 1;
        self.area.clear();
        self.count = 0;
        self.frames = None;
        self.times = None;
        Ok(())
    }

    /// Flushes the packet first when an event of `len` bytes at `time` cannot join it.
    fn room_for(&mut self, len: usize, time: f64) -> Result<(), WriteError> {
        // Events inside a packet keep non-decreasing create_time (spec §10).
        let earlier = self.times.is_some_and(|_| self.last_in_packet > time);
        if self.count > 0 && (earlier || self.area.len() + len > layout::PACKET_EVENTS_LIMIT) {
            self.flush()?;
        }
        Ok(())
    }

    fn counted(&mut self, frame: i64, time: f64) {
        self.count += 1;
        self.events += 1;
        self.frames = minmax(self.frames, frame);
        self.times = minmax(self.times, time);
        self.last_in_packet = time;
        self.last_time = Some(self.last_time.map_or(time, |t| t.max(time)));
    }

    /// An event from its own XREC bytes: verbatim when its time and frame are the ones the
    /// bytes give on this file's clock, else with its RTSS times moved by the difference.
    fn push_raw(&mut self, record: &Record, raw: &[u8]) -> Result<bool, WriteError> {
        let Ok(ev) = layout::parse_event(raw) else {
            return Ok(false);
        };
        if ev.len != raw.len() {
            return Ok(false);
        }
        let expected = layout::record_time(ev.create_time, self.begin_rtss);
        let frame = record.frame.unwrap_or(ev.create_frame);
        if expected.abs_diff(record.time) <= 1 && frame == ev.create_frame {
            self.room_for(raw.len(), ev.create_time)?;
            self.area.extend_from_slice(raw);
            self.report.verbatim += 1;
            self.counted(frame, ev.create_time);
            return Ok(true);
        }
        let delta = (record.time - expected) as f64 / 1e9;
        let (create, capture) = (ev.create_time + delta, ev.capture_time + delta);
        // The packet's order is the output clock's: the moved time decides (a merge).
        self.room_for(raw.len(), create)?;
        let (name, body) = (ev.type_name.to_string(), ev.body.to_vec());
        layout::encode_event(&mut self.area, &name, frame, create, capture, &body);
        self.counted(frame, create);
        Ok(true)
    }

    /// An event made from a record's values (any source).
    fn push_values(&mut self, record: &Record, channel: &str) -> Result<(), WriteError> {
        let computed = self.begin_rtss + record.seconds();
        let given = match record.get("create_time") {
            Some(Value::Float(t)) => Some(*t),
            _ => None,
        };
        let create_time = match given {
            Some(t) if layout::record_time(t, self.begin_rtss).abs_diff(record.time) <= 1 => t,
            _ => computed,
        };
        // capture_time moves with create_time (a rebase, a merge).
        let moved = given.map_or(0.0, |t| create_time - t);
        let capture_time = match record.get("capture_time") {
            Some(Value::Float(t)) if t.is_finite() && moved.is_finite() => *t + moved,
            _ => create_time,
        };
        let id = record.entity.as_ref().map(|e| match e {
            Entity::Id(i) => Value::UInt(*i),
            Entity::Name(n) => Value::Str(n.to_string()),
        });
        let mut fields: Vec<(&str, &Value)> = Vec::with_capacity(record.values.len() + 1);
        if let Some(id) = &id {
            fields.push(("id", id));
        }
        for (k, v) in &record.values {
            if k != "create_time" && k != "capture_time" && !(id.is_some() && k == "id") {
                fields.push((k.as_str(), v));
            }
        }
        self.body.clear();
        body::encode(&mut self.body, &fields, channel, &mut self.report.loss);
        let frame = record.frame.unwrap_or(0);
        let len = layout::EVENT_FIXED + channel.len() + self.body.len();
        self.room_for(len, create_time)?;
        let body = std::mem::take(&mut self.body);
        layout::encode_event(
            &mut self.area,
            channel,
            frame,
            create_time,
            capture_time,
            &body,
        );
        self.body = body;
        self.counted(frame, create_time);
        Ok(())
    }
}

impl Sink for XrecWriter {
    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        let channel = match self.channels.get(record.channel as usize) {
            Some(c) => c.clone(),
            None => {
                self.report.loss.add(
                    "?",
                    "*",
                    "a record of a channel the header does not declare",
                );
                return Ok(());
            }
        };
        let done = match &record.raw {
            Some(raw) if raw.format == RAW => self.push_raw(record, &raw.bytes)?,
            _ => false,
        };
        if !done {
            self.push_values(record, &channel)?;
        }
        self.report.records += 1;
        Ok(())
    }

    fn add_channel(&mut self, channel: &Channel) -> Result<(), WriteError> {
        self.channels.push(channel.name.clone());
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<WriteReport, WriteError> {
        self.flush()?;
        let (end_unix_ns, end_rtss, mut metadata) = match self.source_end.take() {
            Some((unix, rtss, meta)) if self.last_time.is_none_or(|t| t <= rtss) => {
                (unix, rtss, meta)
            }
            other => {
                let rtss = self.last_time.unwrap_or(self.begin_rtss);
                let unix = self
                    .begin_unix_ns
                    .saturating_add(layout::record_time(rtss, self.begin_rtss));
                (unix, rtss, other.and_then(|(_, _, m)| m))
            }
        };
        if self.source_unfinished {
            let m = metadata.get_or_insert_with(Map::new);
            m.insert("source_unfinished".into(), json!(true));
            if self.end_extra.contains_key("repaired") {
                self.report.loss.add(
                    "(recording)",
                    "End packet",
                    "none kept from the input: one marked repaired was appended",
                );
            }
        }
        if !self.end_extra.is_empty() {
            let m = metadata.get_or_insert_with(Map::new);
            for (k, v) in std::mem::take(&mut self.end_extra) {
                m.insert(k, v);
            }
        }
        let end = End {
            end_unix_ns,
            end_rtss,
            event_packet_count: self.packets,
            event_count: self.events,
            metadata,
        };
        let bytes = layout::encode_end(&end);
        self.out.write_all(&bytes).map_err(|e| self.io(e))?;
        self.out.flush().map_err(|e| self.io(e))?;
        Ok(self.report)
    }
}
