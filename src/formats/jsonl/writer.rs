//! The JSON Lines writer. Values are written by `json_text`: shortest text that reads back
//! to the same value (float32 elements as float32), so nothing is rounded.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::formats::json_text::{self, Lost};
use crate::formats::output::Destination;
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::{Channel, Header, Record};

pub struct JsonlWriter {
    out: Destination,
    path: PathBuf,
    channels: Vec<String>,
    line: Vec<u8>,
    /// Fields of the current record that could not be written exactly.
    lost: Lost,
    report: WriteReport,
}

impl JsonlWriter {
    pub fn new(out: Destination, path: &Path, header: &Header) -> JsonlWriter {
        JsonlWriter {
            out,
            path: path.to_path_buf(),
            channels: header.channels.iter().map(|c| c.name.clone()).collect(),
            line: Vec::with_capacity(1 << 16),
            lost: Vec::new(),
            report: WriteReport::default(),
        }
    }
}

impl Sink for JsonlWriter {
    fn add_channel(&mut self, channel: &Channel) -> Result<(), WriteError> {
        self.channels.push(channel.name.clone());
        Ok(())
    }

    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        let channel = self
            .channels
            .get(record.channel as usize)
            .map(String::as_str)
            .unwrap_or("?");
        let line = &mut self.line;
        line.clear();
        json_text::record(line, record, Some(channel), &mut self.lost);
        line.push(b'\n');
        self.out
            .write_all(line)
            .map_err(|e| WriteError::io(&self.path, e))?;
        self.lost.sort();
        self.lost.dedup();
        for (field, reason) in self.lost.drain(..) {
            self.report.loss.add(channel, &field, reason);
        }
        self.report.records += 1;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<WriteReport, WriteError> {
        self.out
            .flush()
            .map_err(|e| WriteError::io(&self.path, e))?;
        Ok(self.report)
    }
}
