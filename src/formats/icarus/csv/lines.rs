//! The file's lines, one after the other, each with its number and byte offset: read from
//! one buffered input into a buffer the caller gives, so that the record read keeps one line
//! and the read by blocks (`blocks.rs`) many, without a copy between.

use std::io::{self, BufRead};

/// Where a line is in the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineAt {
    /// 1-based.
    pub no: u64,
    /// Offset of its first byte.
    pub start: u64,
}

/// How reading a line went.
pub enum Line {
    /// The line was appended to the caller's buffer, without its line break.
    Read(LineAt),
    /// Longer than the limit: skipped, not kept (this many bytes).
    TooLong(LineAt, u64),
    End,
}

pub struct Lines {
    input: Box<dyn BufRead>,
    /// Offset of the next line's first byte.
    offset: u64,
    /// Lines read so far.
    count: u64,
}

impl Lines {
    pub fn new(input: Box<dyn BufRead>) -> Lines {
        Lines {
            input,
            offset: 0,
            count: 0,
        }
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Lines read so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Appends the next line to `into` without its line break (LF, or CRLF). A line longer
    /// than `limit` is consumed without being kept (`into` is left as it was).
    pub fn read(&mut self, into: &mut Vec<u8>, limit: usize) -> io::Result<Line> {
        let kept = into.len();
        let start = self.offset;
        let mut length = 0u64;
        let mut too_long = false;
        loop {
            let buf = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                if length == 0 {
                    return Ok(Line::End);
                }
                break;
            }
            let (take, end) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i, true),
                None => (buf.len(), false),
            };
            length += take as u64;
            if !too_long {
                if length as usize > limit {
                    too_long = true;
                    into.truncate(kept);
                } else {
                    into.extend_from_slice(&buf[..take]);
                }
            }
            let consumed = take + usize::from(end);
            self.input.consume(consumed);
            self.offset += consumed as u64;
            if end {
                break;
            }
        }
        self.count += 1;
        let at = LineAt {
            no: self.count,
            start,
        };
        if too_long {
            return Ok(Line::TooLong(at, length));
        }
        if into.len() > kept && into.last() == Some(&b'\r') {
            into.pop();
        }
        Ok(Line::Read(at))
    }
}
