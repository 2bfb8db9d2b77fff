//! The rows of a read by frames parsed on other threads: the file is read here in blocks of
//! whole lines (tens of rows), each block's lines read on their own ([`RowShape::parse`]:
//! cells counted, time and values parsed into the block's frames) by the project's pool, and
//! the blocks taken back in file order, their rows checked against the rows before them by
//! [`CsvReader::take_row`] as the record read checks them. Parsing the cells is most of the
//! read (docs/performance.md, "Icarus CSV"), so with a writer on the calling thread a
//! conversion uses two cores; what a user sees (values, findings and their order, errors,
//! where a strict read stops) is the record read's. A few blocks are in flight at a time.
//! A read without values (`inspect`) parses too little to be worth a thread: its blocks are
//! read on the calling thread.

use std::io;
use std::path::Path;

use super::lines::{Line, LineAt};
use super::reader::CsvReader;
use super::row::{Note, Parsed, RowShape};
use crate::formats::pool::Pool;
use crate::formats::ReadError;

/// A block is closed once its lines hold this many bytes (a line is never split).
const BLOCK_BYTES: usize = 64 << 10;

/// Blocks read ahead of the one whose rows are being handed out (queued, being parsed, or
/// parsed and waiting): enough to keep the threads busy while the caller writes.
const AHEAD: usize = 4;

/// Threads parsing blocks: the caller's thread reads and writes, so more than the two cores
/// this is tuned for would only queue.
const THREADS: usize = 2;

/// One line of a block.
struct BlockLine {
    at: LineAt,
    /// End of its bytes in [`Block::text`] (it starts where the line before ends).
    end: usize,
    /// Its length when it is too long to be kept (its bytes are not in the block).
    too_long: Option<u64>,
    parsed: Parsed,
    /// End of its notes in [`Block::notes`].
    notes_end: usize,
}

/// Lines of the file, and what the pool read of them.
#[derive(Default)]
struct Block {
    text: Vec<u8>,
    lines: Vec<BlockLine>,
    /// A row's values per line (empty for a read without values).
    values: Vec<u8>,
    notes: Vec<Note>,
}

impl Block {
    /// Reads every line of the block on its own.
    fn parse(mut self, shape: RowShape, stride: usize) -> Block {
        self.values.resize(self.lines.len() * stride, 0);
        self.notes.clear();
        let mut start = 0;
        for (k, line) in self.lines.iter_mut().enumerate() {
            line.parsed = match line.too_long {
                Some(n) => Parsed::TooLong(n),
                None => {
                    let values = &mut self.values[k * stride..(k + 1) * stride];
                    shape.parse(&self.text[start..line.end], values, &mut self.notes)
                }
            };
            line.notes_end = self.notes.len();
            start = line.end;
        }
        self
    }
}

/// The parsing threads and the blocks in flight.
pub(super) struct Blocks {
    /// The threads; none for a read without values.
    pool: Option<Pool<Block, Block>>,
    shape: RowShape,
    /// The block whose rows are being handed out, and its next line.
    current: Block,
    next: usize,
    /// The current row's line (its values are the frame's).
    row: usize,
    stride: usize,
    input: Input,
    done: bool,
}

/// The file's lines as they are read into blocks.
struct Input {
    limit: usize,
    /// Blocks handed out, kept for their buffers.
    spare: Vec<Block>,
    /// The input ended (or failed: the error, for after the blocks read before it).
    ended: bool,
    failed: Option<ReadError>,
}

impl Blocks {
    /// Starts the threads for `reader`'s rows.
    pub(super) fn start(reader: &CsvReader, path: &Path) -> Result<Blocks, ReadError> {
        let (shape, limit) = reader.row_shape();
        let stride = if shape.decode {
            8 * (shape.width - 1)
        } else {
            0
        };
        let pool = shape.decode.then(|| {
            Pool::spawn("csv-rows", THREADS, AHEAD, move |b: Block| {
                b.parse(shape, stride)
            })
        });
        let pool = pool
            .transpose()
            .map_err(|e| ReadError::from(e).in_file(path))?;
        Ok(Blocks {
            pool,
            shape,
            current: Block::default(),
            next: 0,
            row: 0,
            stride,
            input: Input {
                limit,
                spare: Vec::new(),
                ended: false,
                failed: None,
            },
            done: false,
        })
    }

    /// Takes rows until one is read as a frame (true), or the file ends (false, once, with
    /// the reader's findings of the whole file) or an error ends the read.
    pub(super) fn advance(&mut self, reader: &mut CsvReader) -> Result<bool, ReadError> {
        if self.done {
            return Ok(false);
        }
        let taken = self.take(reader);
        if !matches!(taken, Ok(true)) {
            self.done = true;
        }
        if let Ok(false) = taken {
            reader.finish();
        }
        taken
    }

    /// The values of the row [`Blocks::advance`] read as a frame.
    pub(super) fn values(&self) -> &[u8] {
        let at = self.row * self.stride;
        self.current.values.get(at..at + self.stride).unwrap_or(&[])
    }

    fn take(&mut self, reader: &mut CsvReader) -> Result<bool, ReadError> {
        loop {
            while let Some(line) = self.current.lines.get(self.next) {
                let (start, notes_start) = match self.next.checked_sub(1) {
                    Some(before) => {
                        let before = &self.current.lines[before];
                        (before.end, before.notes_end)
                    }
                    None => (0, 0),
                };
                let text = &self.current.text[start..line.end];
                let notes = &self.current.notes[notes_start..line.notes_end];
                let kept = reader.take_row(text, line.at, line.parsed, notes)?;
                self.next += 1;
                if kept {
                    self.row = self.next - 1;
                    return Ok(true);
                }
            }
            let done = std::mem::take(&mut self.current);
            if self.input.spare.len() < 2 {
                self.input.spare.push(done);
            }
            self.next = 0;
            match self.next_block(reader) {
                Some(Ok(block)) => self.current = block,
                Some(Err(e)) => return Err(e),
                None => return self.input.failed.take().map_or(Ok(false), Err),
            }
        }
    }

    /// The next block in file order, parsed; `None` once the input ended (or failed).
    fn next_block(&mut self, reader: &mut CsvReader) -> Option<Result<Block, ReadError>> {
        let Some(pool) = self.pool.as_mut() else {
            let (shape, stride) = (self.shape, self.stride);
            return self
                .input
                .read_block(reader)
                .map(|b| Ok(b.parse(shape, stride)));
        };
        while pool.outstanding() < AHEAD {
            let Some(block) = self.input.read_block(reader) else {
                break;
            };
            if pool.submit(block).is_err() {
                // The threads are gone: the block's rows cannot be read in their turn.
                self.input.failed = Some(stopped(reader.path()));
                self.input.ended = true;
            }
        }
        match pool.next_result()? {
            Ok(block) => Some(Ok(block)),
            Err(_) => Some(Err(stopped(reader.path()))),
        }
    }
}

impl Input {
    /// The next lines of the file, up to [`BLOCK_BYTES`]; `None` when there are none.
    fn read_block(&mut self, reader: &mut CsvReader) -> Option<Block> {
        if self.ended {
            return None;
        }
        let mut block = self.spare.pop().unwrap_or_default();
        block.text.clear();
        block.lines.clear();
        while block.text.len() < BLOCK_BYTES {
            let (at, too_long) = match reader.read_into(&mut block.text, self.limit) {
                Ok(Line::Read(at)) => (at, None),
                Ok(Line::TooLong(at, n)) => (at, Some(n)),
                Ok(Line::End) => {
                    self.ended = true;
                    break;
                }
                Err(e) => {
                    self.failed = Some(e);
                    self.ended = true;
                    break;
                }
            };
            block.lines.push(BlockLine {
                at,
                end: block.text.len(),
                too_long,
                // Set by `Block::parse`.
                parsed: Parsed::Cells(0),
                notes_end: 0,
            });
        }
        (!block.lines.is_empty()).then_some(block)
    }
}

/// A parsing thread failed (a panic): the read cannot go on.
fn stopped(path: &Path) -> ReadError {
    ReadError::from(io::Error::other("a thread parsing the CSV's rows failed")).in_file(path)
}
