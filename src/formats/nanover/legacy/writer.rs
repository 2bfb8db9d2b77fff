//! Writing `.traj` / `.state` pairs: original bytes copied verbatim, everything else encoded.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::encode::{frame_payload, state_payload, Lost};
use super::{Stream, MAGIC, RAW_FORMAT};
use crate::formats::nanover::micros;
use crate::formats::output::{Destination, Outputs};
use crate::formats::{Sink, Unsupported, WriteError, WriteReport};
use crate::model::{Header, Record};

struct Part {
    out: Destination,
    path: PathBuf,
    records: u64,
    last_frame: u32,
}

pub struct LegacyWriter {
    /// Output part of each input channel: frames, state, or nothing.
    routes: Vec<Option<Stream>>,
    channel_names: Vec<String>,
    frames: Option<Part>,
    state: Option<Part>,
    report: WriteReport,
}

/// `STEM` of an output named `STEM`, `STEM.traj` or `STEM.state`.
pub fn stem(target: &Path) -> PathBuf {
    match target.extension().and_then(|e| e.to_str()) {
        Some("traj") | Some("state") => target.with_extension(""),
        _ => target.to_path_buf(),
    }
}

/// The file a channel's records go to, by its name.
fn stream_of(channel: &str) -> Option<Stream> {
    match channel {
        "frame" => Some(Stream::Frames),
        "state" => Some(Stream::State),
        _ => None,
    }
}

impl LegacyWriter {
    pub fn create(
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<LegacyWriter, WriteError> {
        let routes: Vec<Option<Stream>> =
            header.channels.iter().map(|c| stream_of(&c.name)).collect();
        let wants = |s: Stream| routes.contains(&Some(s));
        if !wants(Stream::Frames) && !wants(Stream::State) {
            let names: Vec<&str> = header.channels.iter().map(|c| c.name.as_str()).collect();
            return Err(WriteError::Unsupported(Unsupported::NothingToWrite {
                holds: "a NanoVer legacy pair holds channels `frame` and `state`",
                has: names.into_iter().map(String::from).collect(),
            }));
        }
        let to_stdout = target == Path::new("-");
        if to_stdout && wants(Stream::Frames) && wants(Stream::State) {
            return Err(WriteError::Unsupported(Unsupported::Limit(
                "a .traj and a .state cannot both go to standard output; name an output file",
            )));
        }
        let stem = stem(target);
        let mut open = |s: Stream| -> Result<Option<Part>, WriteError> {
            if !wants(s) {
                return Ok(None);
            }
            let path = if to_stdout {
                target.to_path_buf()
            } else {
                let mut p = stem.clone().into_os_string();
                p.push(s.extension());
                PathBuf::from(p)
            };
            let mut out = outputs.create(&path)?;
            let mut head = [0u8; 16];
            head[..8].copy_from_slice(&MAGIC.to_le_bytes());
            head[8] = 2;
            out.write_all(&head).map_err(|e| WriteError::io(&path, e))?;
            Ok(Some(Part {
                out,
                path,
                records: 0,
                last_frame: 0,
            }))
        };
        let frames = open(Stream::Frames)?;
        let state = open(Stream::State)?;
        Ok(LegacyWriter {
            routes,
            channel_names: header.channels.iter().map(|c| c.name.clone()).collect(),
            frames,
            state,
            report: WriteReport::default(),
        })
    }
}

impl Sink for LegacyWriter {
    /// A `frame` or `state` channel met while reading goes to its file if that file was
    /// opened (the input declared such a channel); any other is dropped as lost.
    fn add_channel(&mut self, channel: &crate::model::Channel) -> Result<(), WriteError> {
        let route = stream_of(&channel.name).filter(|s| match s {
            Stream::Frames => self.frames.is_some(),
            Stream::State => self.state.is_some(),
        });
        self.routes.push(route);
        self.channel_names.push(channel.name.clone());
        Ok(())
    }

    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        // A field borrow (not a method), so it can be held while a part is written.
        let channel = self
            .channel_names
            .get(record.channel as usize)
            .map_or("?", String::as_str);
        let route = self.routes.get(record.channel as usize).copied().flatten();
        let Some(stream) = route else {
            self.report.loss.add(
                channel,
                "*",
                "no such channel in a NanoVer legacy pair; record dropped",
            );
            return Ok(());
        };
        let Some(ts) = micros(record, channel, &mut self.report.loss) else {
            return Ok(());
        };
        let part = match stream {
            Stream::Frames => self.frames.as_mut(),
            Stream::State => self.state.as_mut(),
        };
        let Some(part) = part else {
            return Ok(());
        };
        let io = |path: &Path, e| WriteError::io(path, e);
        match &record.raw {
            Some(raw) if raw.format == RAW_FORMAT && raw.bytes.len() >= 24 => {
                if raw.bytes[..8] == ts.to_le_bytes() {
                    part.out
                        .write_all(&raw.bytes)
                        .map_err(|e| io(&part.path, e))?;
                    self.report.verbatim += 1;
                } else {
                    // Only the time changed (a rebased slice): new header, same payload bytes.
                    let payload = &raw.bytes[24..];
                    write_record(&mut part.out, ts, payload).map_err(|e| io(&part.path, e))?;
                }
                if stream == Stream::Frames {
                    part.last_frame = record.frame.unwrap_or(0) as u32;
                }
            }
            _ => {
                let mut lost = Lost::new();
                let payload = match stream {
                    Stream::Frames => {
                        let index = match record.frame {
                            Some(i) => u32::try_from(i).unwrap_or_else(|_| {
                                lost.push((
                                    "frame_index".into(),
                                    "frame index beyond 2^32 wrapped",
                                ));
                                i as u32
                            }),
                            // Not a reset (an absent field would say reset): the previous
                            // index + 1, or 1 (spec nanover-zip §14).
                            None => {
                                lost.push((
                                    "frame_index".into(),
                                    "frame without an index: written as the previous index + 1",
                                ));
                                part.last_frame.wrapping_add(1).max(1)
                            }
                        };
                        part.last_frame = index;
                        frame_payload(index, &record.values, &mut lost)
                    }
                    Stream::State => state_payload(&record.values, &mut lost),
                };
                write_record(&mut part.out, ts, &payload).map_err(|e| io(&part.path, e))?;
                lost.sort();
                lost.dedup();
                for (field, reason) in lost {
                    self.report.loss.add(channel, &field, reason);
                }
            }
        }
        part.records += 1;
        self.report.records += 1;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<WriteReport, WriteError> {
        for part in [self.frames.take(), self.state.take()]
            .into_iter()
            .flatten()
        {
            let Part { mut out, path, .. } = part;
            out.flush().map_err(|e| WriteError::io(&path, e))?;
        }
        Ok(self.report)
    }
}

fn write_record(out: &mut impl Write, ts: u64, payload: &[u8]) -> std::io::Result<()> {
    let mut head = [0u8; 24];
    head[..8].copy_from_slice(&ts.to_le_bytes());
    head[16..].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    out.write_all(&head)?;
    out.write_all(payload)
}
