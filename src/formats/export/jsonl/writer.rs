//! The JSON Lines writer. Values are written by `json_text`: shortest text that reads back
//! to the same value (float32 elements as float32), so nothing is rounded.
//!
//! Records are formatted in batches on other threads (`json_batches`) while the caller's
//! thread reads on; the formatted batches are written in order, each in one write.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::formats::export::json_batches::{Formatted, JsonBatches, Style};
use crate::formats::output::Destination;
use crate::formats::{Failure, Sink, WriteError, WriteReport};
use crate::model::{Channel, Epoch, Header, Record};

pub struct JsonlWriter {
    out: Destination,
    path: PathBuf,
    batches: JsonBatches,
    report: WriteReport,
}

impl JsonlWriter {
    /// A writer of `header`'s records into `out`, each object also giving its time in UTC
    /// from `utc` when given.
    pub fn new(out: Destination, path: &Path, header: &Header, utc: Option<Epoch>) -> JsonlWriter {
        JsonlWriter {
            out,
            path: path.to_path_buf(),
            batches: JsonBatches::new(
                Style {
                    channel: true,
                    newline: true,
                    utc,
                },
                header.channels.iter().map(|c| c.name.clone()).collect(),
            ),
            report: WriteReport::default(),
        }
    }

    fn stopped(&self) -> WriteError {
        WriteError::failed(
            &self.path,
            Failure::ThreadStopped("a JSON formatting thread stopped"),
        )
    }

    /// Writes a formatted batch and gives its buffers back.
    fn write_batch(&mut self, formatted: Formatted) -> Result<(), WriteError> {
        self.out
            .write_all(&formatted.text)
            .map_err(|e| WriteError::io(&self.path, e))?;
        for (i, field, reason) in &formatted.lost {
            let channel = formatted.records[*i].channel;
            let name = self.batches.channel_name(channel);
            self.report.loss.add(name, field, reason);
        }
        self.report.records += formatted.records.len() as u64;
        self.batches.recycle(formatted);
        Ok(())
    }

    /// Formats and writes every record taken and not yet written, and stops the threads.
    fn write_pending(&mut self) -> Result<(), WriteError> {
        if let Some(formatted) = self.batches.finish() {
            self.write_batch(formatted)?;
        }
        loop {
            match self.batches.next(0) {
                Ok(Some(formatted)) => self.write_batch(formatted)?,
                Ok(None) => break,
                Err(_) => return Err(self.stopped()),
            }
        }
        self.batches.stop();
        Ok(())
    }
}

impl Sink for JsonlWriter {
    fn add_channel(&mut self, channel: &Channel) -> Result<(), WriteError> {
        self.batches.add_channel(channel.name.clone());
        Ok(())
    }

    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        if self.batches.push(record) {
            self.batches.send();
            loop {
                match self.batches.next_if_full() {
                    Ok(Some(formatted)) => self.write_batch(formatted)?,
                    Ok(None) => break,
                    Err(_) => return Err(self.stopped()),
                }
            }
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

impl Drop for JsonlWriter {
    /// A run that stops on an error still writes what was read before it, as a writer of
    /// one line at a time did (`simrec cat` of a damaged file prints the records up to the
    /// damage); a file output is discarded by `Outputs` in that case anyway.
    fn drop(&mut self) {
        let _ = self.write_pending();
    }
}
