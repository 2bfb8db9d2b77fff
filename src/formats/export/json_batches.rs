//! Records formatted as JSON text on other threads, handed back in order: what the JSON
//! Lines writer and the MCAP writer's JSON messages share.
//!
//! Formatting numbers as text is most of a JSON export's work (a NanoVer frame is thousands
//! of floats), so records are gathered in batches of about [`BATCH_BYTES`] of values and
//! each batch is formatted on one of [`FORMATTERS`] threads while the caller's thread reads
//! on; the caller takes the formatted batches back in order ([`JsonBatches::next`]). At most
//! [`IN_FLIGHT`] batches are held, so memory stays bounded. A recording smaller than one
//! batch is formatted on the caller's thread and starts no thread.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::formats::export::json_text::{self, Lost};
use crate::formats::pool::{Gone, Pool};
use crate::model::{Epoch, Record};

/// Threads formatting batches.
const FORMATTERS: usize = 2;
/// Roughly how many bytes of values make a batch.
const BATCH_BYTES: usize = 1 << 20;
/// Batches sent and not yet taken back, at most.
const IN_FLIGHT: usize = 2 * FORMATTERS + 1;

/// How each record is written.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// Whether the object names the record's channel (`"channel": "frame"`).
    pub channel: bool,
    /// Whether each object is followed by a newline.
    pub newline: bool,
    /// The absolute start from which each object also gives its time in UTC (`time_utc`).
    pub utc: Option<Epoch>,
}

/// A batch formatted: its records' text one after the other, where each record's text
/// ends, the fields not written exactly, and the records themselves.
pub struct Formatted {
    pub text: Vec<u8>,
    /// Per record, the end of its text in `text` (the start is the previous end, or 0).
    pub ends: Vec<usize>,
    /// (record index in the batch, field, reason), sorted and without repeats per record.
    pub lost: Vec<(usize, String, &'static str)>,
    /// The batch's records, handed back (to be freed on the thread that allocated them).
    pub records: Vec<Record>,
}

impl Formatted {
    /// The text of record `i`.
    pub fn record_text(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }
}

struct Job {
    channels: Arc<Vec<String>>,
    style: Style,
    records: Vec<Record>,
    /// Buffers to format into (taken back before: no page faults per batch).
    text: Vec<u8>,
    ends: Vec<usize>,
}

/// The batches of one writer.
pub struct JsonBatches {
    style: Style,
    /// Channel names, shared with the formatting threads (replaced when a channel is added).
    channels: Arc<Vec<String>>,
    batch: Vec<Record>,
    batch_bytes: usize,
    pool: Option<Pool<Job, Formatted>>,
    /// Batches formatted on the caller's thread because no thread could start: they follow
    /// every batch of the pool.
    here: VecDeque<Formatted>,
    /// Buffers of batches given back, for the next batches.
    spare: Vec<(Vec<u8>, Vec<usize>)>,
    spare_records: Vec<Record>,
}

/// A batch's formatting panicked.
#[derive(Debug)]
pub struct Stopped;

impl JsonBatches {
    pub fn new(style: Style, channels: Vec<String>) -> JsonBatches {
        JsonBatches {
            style,
            channels: Arc::new(channels),
            batch: Vec::new(),
            batch_bytes: 0,
            pool: None,
            here: VecDeque::new(),
            spare: Vec::new(),
            spare_records: Vec::new(),
        }
    }

    /// The name of channel `id` (`?` for one never declared).
    pub fn channel_name(&self, id: u32) -> &str {
        self.channels
            .get(id as usize)
            .map(String::as_str)
            .unwrap_or("?")
    }

    pub fn add_channel(&mut self, name: String) {
        let mut names = (*self.channels).clone();
        names.push(name);
        self.channels = Arc::new(names);
    }

    /// Takes a copy of `record` (without its original bytes, which no JSON writer writes).
    /// Returns whether a batch is full: [`send`](Self::send) it then.
    pub fn push(&mut self, record: &Record) -> bool {
        self.batch_bytes += record.approx_bytes();
        self.batch.push(Record {
            time: record.time,
            channel: record.channel,
            entity: record.entity.clone(),
            frame: record.frame,
            values: record.values.clone(),
            raw: None,
            exact_seconds: None,
            group: None,
        });
        self.batch_bytes >= BATCH_BYTES
    }

    /// Hands the batch being filled to the formatting threads (started the first time).
    pub fn send(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        if self.pool.is_none() && self.here.is_empty() {
            self.pool = Pool::spawn("json-text", FORMATTERS, IN_FLIGHT - FORMATTERS, format).ok();
        }
        let records = std::mem::replace(&mut self.batch, std::mem::take(&mut self.spare_records));
        self.batch_bytes = 0;
        let (text, ends) = self.spare.pop().unwrap_or_default();
        let job = Job {
            channels: Arc::clone(&self.channels),
            style: self.style,
            records,
            text,
            ends,
        };
        let job = match self.pool.as_mut() {
            Some(pool) => match pool.submit(job) {
                Ok(()) => return,
                Err(Gone(job)) => job,
            },
            None => job,
        };
        // No thread to format it: it is formatted here, after the pool's batches.
        self.here.push_back(format(job));
    }

    /// Whether batches were sent and not taken back.
    pub fn outstanding(&self) -> usize {
        self.pool.as_ref().map_or(0, Pool::outstanding) + self.here.len()
    }

    /// The next formatted batch in order, when more than `keep` are outstanding (waiting for
    /// it); `None` when no more than `keep` are. Give it back with [`recycle`](Self::recycle).
    pub fn next(&mut self, keep: usize) -> Result<Option<Formatted>, Stopped> {
        if self.outstanding() <= keep {
            return Ok(None);
        }
        match self.pool.as_mut().and_then(Pool::next_result) {
            Some(formatted) => formatted.map(Some).map_err(|_| Stopped),
            None => Ok(self.here.pop_front()),
        }
    }

    /// The next batch when as many are outstanding as the writer should let be.
    pub fn next_if_full(&mut self) -> Result<Option<Formatted>, Stopped> {
        self.next(IN_FLIGHT - 1)
    }

    /// Formats what is left on the caller's thread when no thread was started (a recording
    /// smaller than one batch), else sends it; then [`next`](Self::next)`(0)` takes back
    /// every batch.
    pub fn finish(&mut self) -> Option<Formatted> {
        if self.pool.is_some() || !self.here.is_empty() {
            self.send();
            return None;
        }
        if self.batch.is_empty() {
            return None;
        }
        let records = std::mem::take(&mut self.batch);
        self.batch_bytes = 0;
        Some(format(Job {
            channels: Arc::clone(&self.channels),
            style: self.style,
            records,
            text: Vec::new(),
            ends: Vec::new(),
        }))
    }

    /// A batch written: its buffers serve the next ones.
    pub fn recycle(&mut self, mut formatted: Formatted) {
        formatted.text.clear();
        formatted.ends.clear();
        self.spare.push((formatted.text, formatted.ends));
        formatted.records.clear();
        self.spare_records = formatted.records;
    }

    /// Stops the threads (after every batch was taken back).
    pub fn stop(&mut self) {
        self.pool = None;
    }
}

fn format(job: Job) -> Formatted {
    let mut text = job.text;
    text.clear();
    let mut ends = job.ends;
    ends.clear();
    let mut lost = Vec::new();
    let mut record_lost = Lost::new();
    for (i, record) in job.records.iter().enumerate() {
        let channel = job.style.channel.then(|| {
            job.channels
                .get(record.channel as usize)
                .map(String::as_str)
                .unwrap_or("?")
        });
        json_text::record(
            &mut text,
            record,
            channel,
            job.style.utc.as_ref(),
            &mut record_lost,
        );
        if job.style.newline {
            text.push(b'\n');
        }
        ends.push(text.len());
        record_lost.sort();
        record_lost.dedup();
        for (field, reason) in record_lost.drain(..) {
            lost.push((i, field, reason));
        }
    }
    Formatted {
        text,
        ends,
        lost,
        records: job.records,
    }
}
