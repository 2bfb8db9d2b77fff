//! Merging XREC sessions (spec §16): events of every input interleaved by absolute time
//! (begin_unix_ns + record time; ties in input order, each input in file order), on a clock
//! that starts at the earliest input's begin with begin_rtss 0. The writer moves each event's
//! two RTSS times onto that clock inside its bytes; create_frame values are kept, and the
//! output says frames of different sessions are not comparable.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value as Json};

use super::{XrecReader, HEADER_KEY};
use crate::formats::{ReadError, ReadOptions, Source};
use crate::model::{Epoch, Header, Record, TimeOrigin};
use crate::report::{Fact, Findings};

struct Input {
    reader: XrecReader,
    /// Nanoseconds from the output's begin to this input's.
    offset: i64,
    /// Output channel of each of the reader's channels, as it adds them.
    channels: Vec<u32>,
    head: Option<Record>,
}

pub struct XrecMerge {
    inputs: Vec<Input>,
    header: Header,
    heap: BinaryHeap<Reverse<(i64, usize)>>,
    primed: bool,
    failed: bool,
}

impl XrecMerge {
    pub fn open(paths: &[PathBuf], options: ReadOptions) -> Result<XrecMerge, ReadError> {
        let readers = paths
            .iter()
            .map(|p| XrecReader::open(p, options))
            .collect::<Result<Vec<_>, _>>()?;
        let begin = readers
            .iter()
            .map(|r| r.start().begin_unix_ns)
            .min()
            .unwrap_or(0);
        let apps: Vec<&str> = readers
            .iter()
            .map(|r| r.start().app_version.as_str())
            .collect();
        let app = if apps.iter().all(|a| *a == apps[0]) {
            apps.first().copied().unwrap_or("merged")
        } else {
            "merged"
        };
        let merged_from: Vec<Json> = readers
            .iter()
            .zip(paths)
            .map(|(r, p)| {
                let s = r.start();
                json!({
                    "file": p.file_name().map(|n| n.to_string_lossy().to_string()),
                    "app_version": s.app_version,
                    "begin_unix_ns": s.begin_unix_ns,
                    "begin_rtss": s.begin_rtss,
                    "metadata": s.metadata.clone().map(Json::Object),
                })
            })
            .collect();
        let mut header = Header::new(super::NAME, "1.0");
        header.origin = TimeOrigin {
            epoch: Some(Epoch {
                unix_ns: begin,
                fraction_digits: readers
                    .iter()
                    .filter_map(|r| r.header().origin.epoch)
                    .map(|e| e.fraction_digits)
                    .max()
                    .unwrap_or(0),
            }),
            system: Some("unix".into()),
        };
        let mut meta = Map::new();
        meta.insert("merged_from".into(), Json::Array(merged_from));
        meta.insert("frames_comparable".into(), json!(false));
        let mut m = Map::new();
        m.insert("app_version".into(), json!(app));
        let codec = readers
            .first()
            .and_then(|r| r.header().metadata.get(HEADER_KEY))
            .and_then(|x| x.get("compression"))
            .cloned()
            .unwrap_or(json!("none"));
        m.insert("compression".into(), codec);
        m.insert("begin_unix_ns".into(), json!(begin));
        m.insert("begin_rtss".into(), json!(0.0));
        m.insert("metadata".into(), Json::Object(meta));
        m.insert("merged".into(), json!(true));
        header.metadata.insert(HEADER_KEY.into(), Json::Object(m));
        let inputs = readers
            .into_iter()
            .map(|reader| Input {
                offset: reader.start().begin_unix_ns.saturating_sub(begin),
                reader,
                channels: Vec::new(),
                head: None,
            })
            .collect();
        Ok(XrecMerge {
            inputs,
            header,
            heap: BinaryHeap::new(),
            primed: false,
            failed: false,
        })
    }

    /// Reads input `i`'s next record onto the heap.
    fn pull(&mut self, i: usize) -> Result<(), ReadError> {
        let input = &mut self.inputs[i];
        let Some(item) = input.reader.next() else {
            return Ok(());
        };
        let mut record = item?;
        for c in &input.reader.header().channels[input.channels.len()..] {
            let id = match self.header.channel_id(&c.name) {
                Some(id) => id,
                None => self.header.add_channel(c.clone()),
            };
            input.channels.push(id);
        }
        record.channel = input.channels[record.channel as usize];
        // The writer moves the event's RTSS times inside its bytes onto the output clock.
        record.time = record.time.saturating_add(input.offset);
        self.heap.push(Reverse((record.time, i)));
        input.head = Some(record);
        Ok(())
    }
}

impl Iterator for XrecMerge {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if !self.primed {
            self.primed = true;
            for i in 0..self.inputs.len() {
                if let Err(e) = self.pull(i) {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
        let Reverse((_, i)) = self.heap.pop()?;
        let record = self.inputs[i].head.take()?;
        if let Err(e) = self.pull(i) {
            self.failed = true;
            return Some(Err(e));
        }
        Some(Ok(record))
    }
}

impl Source for XrecMerge {
    fn header(&self) -> &Header {
        &self.header
    }

    fn findings(&self) -> Vec<(&Path, &Findings)> {
        self.inputs
            .iter()
            .flat_map(|i| i.reader.findings())
            .collect()
    }

    fn progress(&self) -> (u64, u64) {
        self.inputs.iter().fold((0, 0), |(d, t), i| {
            let (a, b) = i.reader.progress();
            (d + a, t + b)
        })
    }

    fn facts(&self) -> Vec<Fact> {
        Vec::new()
    }
}
