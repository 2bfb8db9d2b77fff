//! The bytes packets are read from: the file itself, or, once whole-file gzip starts at a
//! packet boundary (spec §9), the decoded gzip stream (several members accepted).
//!
//! Both are read through bounded windows: the file through [`Input`], the gzip stream
//! through a buffer that drops what lies before the packet being read.

use std::io::{self, BufRead, Read};

use flate2::bufread::MultiGzDecoder;

use crate::formats::input::Input;

/// Bytes decoded per refill of the gzip window.
const GZ_CHUNK: usize = 1 << 16;

/// A forward reader over an [`Input`] from some offset, for the gzip decoders.
pub struct InputCursor {
    pub input: Input,
    pub pos: u64,
}

impl Read for InputCursor {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let buf = self.fill_buf()?;
            let n = buf.len().min(out.len());
            out[..n].copy_from_slice(&buf[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for InputCursor {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let left = self.input.len().saturating_sub(self.pos);
        let n = left.min(GZ_CHUNK as u64) as usize;
        self.input.bytes(self.pos, n)
    }

    fn consume(&mut self, amt: usize) {
        self.pos += amt as u64;
    }
}

/// The decoded whole-file gzip stream, with a window over it.
pub struct GzLayer {
    /// File offset where the gzip data starts.
    pub start: u64,
    decoder: MultiGzDecoder<InputCursor>,
    buf: Vec<u8>,
    /// Decoded offset of `buf[0]`.
    buf_start: u64,
    eof: bool,
    /// A decoding error met (message, compressed file offset), reported once.
    pub error: Option<(String, u64)>,
}

impl GzLayer {
    pub fn new(input: Input, start: u64) -> GzLayer {
        GzLayer {
            start,
            decoder: MultiGzDecoder::new(InputCursor { input, pos: start }),
            buf: Vec::new(),
            buf_start: 0,
            eof: false,
            error: None,
        }
    }

    /// Compressed bytes consumed so far, as a file offset.
    pub fn file_pos(&self) -> u64 {
        self.decoder.get_ref().pos
    }

    pub fn file_len(&self) -> u64 {
        self.decoder.get_ref().input.len()
    }

    /// Up to `n` decoded bytes at decoded offset `pos` (fewer at the end of the stream).
    /// Nothing before `pos` is needed again.
    fn fetch(&mut self, pos: u64, n: usize) -> &[u8] {
        if pos > self.buf_start {
            let drop = ((pos - self.buf_start) as usize).min(self.buf.len());
            if drop >= GZ_CHUNK || drop == self.buf.len() {
                self.buf.drain(..drop);
                self.buf_start += drop as u64;
            }
        }
        let want_end = pos.saturating_add(n as u64);
        while !self.eof && self.buf_start + (self.buf.len() as u64) < want_end {
            let old = self.buf.len();
            self.buf.resize(old + GZ_CHUNK, 0);
            match self.decoder.read(&mut self.buf[old..]) {
                Ok(0) => {
                    self.buf.truncate(old);
                    self.eof = true;
                }
                Ok(k) => self.buf.truncate(old + k),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => self.buf.truncate(old),
                Err(e) => {
                    self.buf.truncate(old);
                    self.eof = true;
                    self.error = Some((e.to_string(), self.file_pos()));
                }
            }
        }
        let from = pos.saturating_sub(self.buf_start) as usize;
        let from = from.min(self.buf.len());
        let to = (from + n).min(self.buf.len());
        &self.buf[from..to]
    }
}

/// Where the reader takes top-level packets from.
pub enum Layer {
    Plain(Input),
    Gzip(Box<GzLayer>),
    /// Only while switching.
    Gone,
}

impl Layer {
    /// Up to `n` bytes at `pos` of this layer (fewer at its end).
    pub fn fetch(&mut self, pos: u64, n: usize) -> io::Result<&[u8]> {
        match self {
            Layer::Plain(input) => {
                let left = input.len().saturating_sub(pos);
                let n = (n as u64).min(left) as usize;
                input.bytes(pos.min(input.len()), n)
            }
            Layer::Gzip(gz) => Ok(gz.fetch(pos, n)),
            Layer::Gone => Ok(&[]),
        }
    }

    /// The file's length, when packets are read from the file itself.
    pub fn plain_len(&self) -> Option<u64> {
        match self {
            Layer::Plain(input) => Some(input.len()),
            _ => None,
        }
    }

    /// Switches to whole-file gzip starting at file offset `at`.
    pub fn switch_to_gzip(&mut self, at: u64) {
        if let Layer::Plain(input) = std::mem::replace(self, Layer::Gone) {
            *self = Layer::Gzip(Box::new(GzLayer::new(input, at)));
        }
    }

    /// (bytes of the file consumed, file length).
    pub fn progress(&self, pos: u64) -> (u64, u64) {
        match self {
            Layer::Plain(input) => (pos.min(input.len()), input.len()),
            Layer::Gzip(gz) => (gz.file_pos(), gz.file_len()),
            Layer::Gone => (0, 0),
        }
    }
}
