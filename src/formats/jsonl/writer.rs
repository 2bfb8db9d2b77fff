//! The JSON Lines writer. Values are written by `json_text`: shortest text that reads back
//! to the same value (float32 elements as float32), so nothing is rounded.
//!
//! Formatting numbers as text is most of the work (a NanoVer frame is thousands of floats),
//! so records are gathered in batches of about [`BATCH_BYTES`] of values and each batch is
//! formatted on one of [`FORMATTERS`] threads while the caller's thread reads on; the
//! caller writes the formatted batches in order. At most [`IN_FLIGHT`] batches are held,
//! so memory stays bounded. A recording smaller than one batch is formatted on the
//! caller's thread and starts no thread.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::formats::json_text::{self, Lost};
use crate::formats::output::Destination;
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::{Channel, Header, Record, Value};

/// Threads formatting batches.
const FORMATTERS: usize = 2;
/// Roughly how many bytes of values make a batch.
const BATCH_BYTES: usize = 1 << 20;
/// Batches sent and not yet written, at most.
const IN_FLIGHT: usize = 2 * FORMATTERS + 1;

pub struct JsonlWriter {
    out: Destination,
    path: PathBuf,
    /// Channel names, shared with the formatting threads (replaced when a channel is added).
    channels: Arc<Vec<String>>,
    batch: Vec<Record>,
    batch_bytes: usize,
    pool: Option<Pool>,
    report: WriteReport,
}

/// A batch formatted: its text, and per record the fields not written exactly.
struct Formatted {
    seq: u64,
    text: Vec<u8>,
    lost: Vec<(String, String, &'static str)>,
    /// The batch's records, handed back to be freed on the thread that allocated them.
    records: Vec<Record>,
}

struct Job {
    seq: u64,
    channels: Arc<Vec<String>>,
    records: Vec<Record>,
    /// A buffer to format into (one written before, reused: no page faults per batch).
    text: Vec<u8>,
}

struct Pool {
    jobs: Option<Sender<Job>>,
    done: Receiver<Formatted>,
    threads: Vec<JoinHandle<()>>,
    sent: u64,
    written: u64,
    /// Batches formatted out of order, waiting for their turn.
    ready: BTreeMap<u64, Formatted>,
    /// Text buffers written, for the next batches.
    spare: Vec<Vec<u8>>,
    /// A record vector emptied, for the next batch.
    spare_records: Vec<Record>,
}

impl JsonlWriter {
    pub fn new(out: Destination, path: &Path, header: &Header) -> JsonlWriter {
        JsonlWriter {
            out,
            path: path.to_path_buf(),
            channels: Arc::new(header.channels.iter().map(|c| c.name.clone()).collect()),
            batch: Vec::new(),
            batch_bytes: 0,
            pool: None,
            report: WriteReport::default(),
        }
    }

    /// Hands the batch to the formatting threads (started the first time), then writes
    /// what is formatted, waiting while too many batches are out.
    fn dispatch(&mut self) -> Result<(), WriteError> {
        let pool = self.pool.get_or_insert_with(Pool::start);
        let records = std::mem::replace(&mut self.batch, std::mem::take(&mut pool.spare_records));
        self.batch_bytes = 0;
        let job = Job {
            seq: pool.sent,
            channels: Arc::clone(&self.channels),
            records,
            text: pool.spare.pop().unwrap_or_default(),
        };
        pool.sent += 1;
        match pool.jobs.as_ref().map(|jobs| jobs.send(job)) {
            Some(Ok(())) => {}
            // The threads are gone (one panicked): format here instead.
            Some(Err(e)) => {
                let formatted = format(e.0);
                pool.ready.insert(formatted.seq, formatted);
            }
            None => {}
        }
        self.write_ready(IN_FLIGHT - 1)
    }

    /// Writes formatted batches in order, waiting until at most `keep` are outstanding.
    fn write_ready(&mut self, keep: usize) -> Result<(), WriteError> {
        let Some(pool) = self.pool.as_mut() else {
            return Ok(());
        };
        loop {
            while let Some(mut formatted) = pool.ready.remove(&pool.written) {
                pool.written += 1;
                self.out
                    .write_all(&formatted.text)
                    .map_err(|e| WriteError::io(&self.path, e))?;
                for (channel, field, reason) in &formatted.lost {
                    self.report.loss.add(channel, field, reason);
                }
                self.report.records += formatted.records.len() as u64;
                formatted.text.clear();
                pool.spare.push(formatted.text);
                formatted.records.clear();
                pool.spare_records = formatted.records;
            }
            if (pool.sent - pool.written) as usize <= keep {
                return Ok(());
            }
            match pool.done.recv() {
                Ok(formatted) => {
                    pool.ready.insert(formatted.seq, formatted);
                }
                Err(_) => {
                    return Err(WriteError::Invalid(format!(
                        "{}: a JSON formatting thread stopped",
                        self.path.display()
                    )))
                }
            }
        }
    }
}

impl Pool {
    fn start() -> Pool {
        let (jobs, queue) = channel::<Job>();
        let (finished, done) = channel();
        let queue = Arc::new(Mutex::new(queue));
        let threads = (0..FORMATTERS)
            .map(|_| {
                let queue = Arc::clone(&queue);
                let finished: Sender<Formatted> = finished.clone();
                std::thread::spawn(move || loop {
                    let job = match queue.lock() {
                        Ok(q) => q.recv(),
                        Err(_) => return,
                    };
                    let Ok(job) = job else { return };
                    if finished.send(format(job)).is_err() {
                        return;
                    }
                })
            })
            .collect();
        Pool {
            jobs: Some(jobs),
            done,
            threads,
            sent: 0,
            written: 0,
            ready: BTreeMap::new(),
            spare: Vec::new(),
            spare_records: Vec::new(),
        }
    }
}

fn format(job: Job) -> Formatted {
    let mut text = job.text;
    text.clear();
    let mut lost = Vec::new();
    let mut record_lost = Lost::new();
    for record in &job.records {
        let channel = job
            .channels
            .get(record.channel as usize)
            .map(String::as_str)
            .unwrap_or("?");
        json_text::record(&mut text, record, Some(channel), &mut record_lost);
        text.push(b'\n');
        record_lost.sort();
        record_lost.dedup();
        for (field, reason) in record_lost.drain(..) {
            lost.push((channel.to_string(), field, reason));
        }
    }
    Formatted {
        seq: job.seq,
        text,
        lost,
        records: job.records,
    }
}

/// Roughly the bytes of a record's values, for the batch size.
fn weight(record: &Record) -> usize {
    record
        .values
        .iter()
        .map(|(k, v)| {
            k.len()
                + match v {
                    Value::Array(a) => a.len() * 4,
                    Value::Str(s) => s.len(),
                    Value::Bytes(b) => b.len(),
                    Value::List(l) => l.len() * 8,
                    Value::Map(m) => m.len() * 16,
                    _ => 8,
                }
        })
        .sum::<usize>()
        + 32
}

impl Sink for JsonlWriter {
    fn add_channel(&mut self, channel: &Channel) -> Result<(), WriteError> {
        let mut names = (*self.channels).clone();
        names.push(channel.name.clone());
        self.channels = Arc::new(names);
        Ok(())
    }

    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        self.batch_bytes += weight(record);
        // The original bytes are not written: not copied either.
        self.batch.push(Record {
            time: record.time,
            channel: record.channel,
            entity: record.entity.clone(),
            frame: record.frame,
            values: record.values.clone(),
            raw: None,
            group: None,
        });
        if self.batch_bytes >= BATCH_BYTES {
            self.dispatch()?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<WriteReport, WriteError> {
        self.write_pending()?;
        self.out
            .flush()
            .map_err(|e| WriteError::io(&self.path, e))?;
        Ok(std::mem::take(&mut self.report))
    }
}

impl JsonlWriter {
    /// Formats and writes every record taken and not yet written, and stops the threads.
    fn write_pending(&mut self) -> Result<(), WriteError> {
        if self.pool.is_none() {
            // Small enough for one batch: formatted here.
            let records = std::mem::take(&mut self.batch);
            if records.is_empty() {
                return Ok(());
            }
            let formatted = format(Job {
                seq: 0,
                channels: Arc::clone(&self.channels),
                records,
                text: Vec::new(),
            });
            self.out
                .write_all(&formatted.text)
                .map_err(|e| WriteError::io(&self.path, e))?;
            for (channel, field, reason) in &formatted.lost {
                self.report.loss.add(channel, field, reason);
            }
            self.report.records += formatted.records.len() as u64;
        } else {
            if !self.batch.is_empty() {
                self.dispatch()?;
            }
            self.write_ready(0)?;
            if let Some(mut pool) = self.pool.take() {
                pool.jobs = None;
                for t in pool.threads.drain(..) {
                    let _ = t.join();
                }
            }
        }
        Ok(())
    }
}

impl Drop for JsonlWriter {
    /// A run that stops on an error still writes what was read before it, as a writer of
    /// one line at a time did (`simrec cat` of a damaged file prints the records up to the
    /// damage); a file output is discarded by `Outputs` in that case anyway.
    fn drop(&mut self) {
        let _ = self.write_pending();
    }
}
