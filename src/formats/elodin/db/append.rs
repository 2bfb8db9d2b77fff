//! An append log being written: its header first (committed length = the header alone, a
//! valid empty log), its payload buffered and appended in blocks, the committed length
//! patched in at the end. Files are opened only to append a block, so a DB of thousands of
//! components (NanoVer particles as bodies) never holds thousands of descriptors; the file
//! ends exactly at its committed length (compact, not Elodin's 8 GiB sparse files).

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use super::layout::LogHeader;
use crate::formats::WriteError;

/// Bytes a log buffers before it appends them to its file.
const BLOCK: usize = 1 << 20;

pub struct AppendLog {
    path: PathBuf,
    header: LogHeader,
    /// Payload bytes already in the file.
    written: u64,
    pub buf: Vec<u8>,
}

impl AppendLog {
    /// Creates the file with its header; `extra` is the index's start timestamp or the
    /// data's row size (`None`: a message log's 16-byte header).
    pub fn create(path: PathBuf, extra: Option<u64>) -> Result<AppendLog, WriteError> {
        let mut header = LogHeader {
            committed: 0,
            head: 0,
            extra,
        };
        header.committed = header.size() as u64;
        std::fs::write(&path, header.encode()).map_err(|e| WriteError::io(&path, e))?;
        Ok(AppendLog {
            path,
            header,
            written: 0,
            buf: Vec::with_capacity(BLOCK),
        })
    }

    /// Payload bytes so far, buffered or not.
    pub fn len(&self) -> u64 {
        self.written + self.buf.len() as u64
    }

    /// Appends the buffer to the file once it holds a block: the bytes it appended.
    pub fn spill(&mut self) -> Result<usize, WriteError> {
        match self.buf.len() >= BLOCK {
            true => self.flush(),
            false => Ok(0),
        }
    }

    /// Appends the buffer to the file: the bytes it appended.
    pub fn flush(&mut self) -> Result<usize, WriteError> {
        if self.buf.is_empty() {
            return Ok(0);
        }
        let io = |e| WriteError::io(&self.path, e);
        let mut file = OpenOptions::new()
            .append(true)
            .open(&self.path)
            .map_err(io)?;
        file.write_all(&self.buf).map_err(io)?;
        let n = self.buf.len();
        self.written += n as u64;
        self.buf.clear();
        self.buf.shrink_to(BLOCK);
        Ok(n)
    }

    /// Appends what is buffered and writes the committed length into the header.
    pub fn finish(mut self) -> Result<(), WriteError> {
        self.flush()?;
        self.header.committed = self.header.size() as u64 + self.written;
        let io = |e| WriteError::io(&self.path, e);
        let file = OpenOptions::new()
            .write(true)
            .open(&self.path)
            .map_err(io)?;
        file.write_all_at(&self.header.encode(), 0).map_err(io)?;
        Ok(())
    }
}
