//! Full chunks compressed on a thread of their own and written on another, in the order
//! they were handed over, while the caller fills the next (docs/performance.md, "MCAP:
//! chunks on a thread of their own, 3es read ahead", "MCAP: one compressor again").
//!
//! The compressor hands each chunk, compressed, to the writer, which owns the output: it
//! writes the chunk record and its message indexes, and keeps what the summary needs of
//! where they went; then the chunk goes back to the caller to be filled again and the
//! compressed bytes to the compressor. Every hand-over waits for its taker (no queue), the
//! compressor has one buffer for its output, and the caller takes a chunk back before it
//! fills a third ([`Chunks::empty`]), so what is in flight is bounded: the chunk being
//! filled, one chunk compressed or written, and one compressed buffer.

use std::io::{self, Write};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};

use super::file::{end_record, op, put_str, start_record, Chunk, FileError};
use crate::formats::worker::{Stopped, Worker};

/// A chunk's entry in the summary.
pub(super) struct ChunkIndex {
    pub bounds: (u64, u64),
    pub start: u64,
    pub length: u64,
    /// Each channel's message index record, by file offset.
    pub message_index_offsets: Vec<(u16, u64)>,
    pub message_index_length: u64,
    pub compression: &'static str,
    pub compressed_size: u64,
    pub uncompressed_size: u64,
}

/// A metadata record's entry in the summary.
pub(super) struct MetadataIndex {
    pub offset: u64,
    pub length: u64,
    pub name: String,
}

/// The output, with its position and the CRC of the data section written so far.
pub(super) struct Counted<W: Write> {
    pub out: W,
    pub position: u64,
    pub crc: crc32fast::Hasher,
}

impl<W: Write> Counted<W> {
    pub fn new(out: W) -> Counted<W> {
        Counted {
            out,
            position: 0,
            crc: crc32fast::Hasher::new(),
        }
    }

    pub fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.crc.update(bytes);
        self.position += bytes.len() as u64;
        Ok(())
    }
}

/// What the writer is told to write next, in file order.
enum Next {
    /// The next chunk the compressor gives.
    Chunk,
    /// A metadata record's bytes and name.
    Metadata(Vec<u8>, String),
}

/// A chunk, compressed.
struct Encoded {
    chunk: Chunk,
    /// `zstd`, its records compressed, or none (empty).
    compression: &'static str,
    compressed: Vec<u8>,
    /// The CRC of its records.
    crc: u32,
}

/// What the writer returns at the end: the output and where everything went.
pub(super) struct Written<W: Write> {
    pub out: Counted<W>,
    pub chunk_indexes: Vec<ChunkIndex>,
    pub metadata_indexes: Vec<MetadataIndex>,
}

/// The most chunks in use at once: the one being filled and the one compressed or
/// written. A third would wait between them, and a second compressor's chunk, buffer and
/// context took a large replay's conversion past its memory bound (docs/performance.md,
/// "MCAP: one compressor again").
const MOST_CHUNKS: usize = 2;

/// The compressor and the writer.
pub(super) struct Chunks<W: Write + Send + 'static> {
    compressor: Worker<Chunk, (), FileError>,
    /// Told of each chunk handed to the compressor, and of metadata between them.
    writer: Worker<Next, Written<W>, FileError>,
    /// Chunks written, given back for their buffers.
    spare: Receiver<Chunk>,
    /// Chunks in use: the caller's first, and those [`Chunks::empty`] made.
    made: usize,
}

impl<W: Write + Send + 'static> Chunks<W> {
    /// Starts the writer and the compressor; `out` has what was written before the first
    /// chunk. `level`: zstd's, or `None`, chunks not compressed.
    pub fn spawn(
        out: Counted<W>,
        level: Option<i32>,
        window_log: u32,
    ) -> Result<Chunks<W>, FileError> {
        let zstd = match level {
            Some(level) => {
                let mut z = zstd::bulk::Compressor::new(level)?;
                z.set_parameter(zstd::zstd_safe::CParameter::WindowLog(window_log))?;
                Some(z)
            }
            None => None,
        };
        let (to_writer, encoded) = sync_channel(0);
        let (to_compressor, buffers) = channel();
        // Its one buffer: it waits for the writer to give it back.
        let _ = to_compressor.send(Vec::new());
        let (give_back, spare) = channel();
        let written = Written {
            out,
            chunk_indexes: Vec::new(),
            metadata_indexes: Vec::new(),
        };
        // What to write next waits in the writer's input while the chunk is compressed.
        let writer = Worker::spawn("mcap-write", 2, move |next: Receiver<Next>| {
            written.run(next, encoded, to_compressor, give_back)
        })?;
        let compressor = Compressor { zstd, buffers };
        let compressor = Worker::spawn("mcap-zstd", 0, move |chunks| {
            compressor.run(chunks, to_writer)
        })?;
        Ok(Chunks {
            compressor,
            writer,
            spare,
            made: 1,
        })
    }

    /// A chunk to fill: one given back, a new one while fewer than [`MOST_CHUNKS`] are in
    /// use, or else the next one the writer gives back (a new one if the writer stopped:
    /// its error comes with the next hand-over).
    pub fn empty(&mut self, chunk_size: usize) -> Chunk {
        if let Ok(chunk) = self.spare.try_recv() {
            return chunk;
        }
        if self.made < MOST_CHUNKS {
            self.made += 1;
            return Chunk::with_capacity(chunk_size);
        }
        (self.spare.recv()).unwrap_or_else(|_| Chunk::with_capacity(chunk_size))
    }

    /// Hands a full chunk to the compressor (waiting for it to be free) and tells the
    /// writer.
    pub fn chunk(&mut self, chunk: Chunk) -> Result<(), FileError> {
        if let Err(stopped) = self.compressor.send(chunk) {
            return Err(self.why(stopped));
        }
        self.writer.send(Next::Chunk).map_err(FileError::from)
    }

    /// A metadata record, written after the chunks handed over.
    pub fn metadata(&mut self, record: Vec<u8>, name: String) -> Result<(), FileError> {
        (self.writer.send(Next::Metadata(record, name))).map_err(FileError::from)
    }

    /// Waits for every job to be written: the output and where everything went.
    pub fn finish(&mut self) -> Result<Written<W>, FileError> {
        if let Err(stopped) = self.compressor.finish() {
            return Err(self.why(stopped));
        }
        self.writer.finish().map_err(FileError::from)
    }

    /// Why the compressor stopped: its own error, or, if the writer stopped first, the
    /// writer's.
    fn why(&mut self, stopped: Stopped<FileError>) -> FileError {
        match FileError::from(stopped) {
            FileError::Stopped => match self.writer.finish() {
                Err(Stopped::Failed(e)) => e,
                _ => FileError::Stopped,
            },
            e => e,
        }
    }
}

/// The compressor's side: zstd's context, kept from chunk to chunk, and its byte buffer, as
/// the writer gives it back.
struct Compressor {
    zstd: Option<zstd::bulk::Compressor<'static>>,
    buffers: Receiver<Vec<u8>>,
}

impl Compressor {
    fn run(
        mut self,
        chunks: Receiver<Chunk>,
        to_writer: SyncSender<Encoded>,
    ) -> Result<(), FileError> {
        for chunk in chunks {
            let mut compressed = self.buffers.recv().map_err(|_| FileError::Stopped)?;
            compressed.clear();
            let mut compression = "";
            if let Some(z) = &mut self.zstd {
                compressed.reserve(zstd::zstd_safe::compress_bound(chunk.records.len()));
                z.compress_to_buffer(chunk.records.as_slice(), &mut compressed)?;
                compression = "zstd";
            }
            let crc = crc32fast::hash(&chunk.records);
            let encoded = Encoded {
                chunk,
                compression,
                compressed,
                crc,
            };
            to_writer.send(encoded).map_err(|_| FileError::Stopped)?;
        }
        Ok(())
    }
}

impl<W: Write> Written<W> {
    /// The writer: takes each chunk from the compressor, writes it, and gives it back to
    /// the caller and the compressed bytes to the compressor.
    fn run(
        mut self,
        next: Receiver<Next>,
        done: Receiver<Encoded>,
        back: Sender<Vec<u8>>,
        give_back: Sender<Chunk>,
    ) -> Result<Self, FileError> {
        for next in next {
            match next {
                Next::Chunk => {
                    // The compressor stopped before its chunk: the caller has its error.
                    let mut encoded = done.recv().map_err(|_| FileError::Stopped)?;
                    self.chunk(&mut encoded)?;
                    // The file may be finished or dropped already: nothing to keep then.
                    let _ = give_back.send(encoded.chunk);
                    let _ = back.send(encoded.compressed);
                }
                Next::Metadata(record, name) => {
                    self.metadata_indexes.push(MetadataIndex {
                        offset: self.out.position,
                        length: record.len() as u64,
                        name,
                    });
                    self.out.write(&record)?;
                }
            }
        }
        Ok(self)
    }

    /// Writes the chunk (not empty) and its message indexes, and empties it.
    fn chunk(&mut self, encoded: &mut Encoded) -> Result<(), FileError> {
        let chunk = &mut encoded.chunk;
        let records = &chunk.records;
        let name = encoded.compression;
        let data = match name {
            "" => records,
            _ => &encoded.compressed,
        };
        let bounds = chunk.bounds.unwrap_or((0, 0));
        let mut head = Vec::with_capacity(64);
        let start = start_record(&mut head, op::CHUNK);
        head.extend_from_slice(&bounds.0.to_le_bytes());
        head.extend_from_slice(&bounds.1.to_le_bytes());
        head.extend_from_slice(&(records.len() as u64).to_le_bytes());
        head.extend_from_slice(&encoded.crc.to_le_bytes());
        put_str(&mut head, name);
        head.extend_from_slice(&(data.len() as u64).to_le_bytes());
        let length = (head.len() - start + data.len()) as u64;
        head[start - 8..start].copy_from_slice(&length.to_le_bytes());
        let chunk_start = self.out.position;
        self.out.write(&head)?;
        self.out.write(data)?;
        let chunk_length = self.out.position - chunk_start;

        // Each channel's message index, in channel order.
        let index_start = self.out.position;
        let mut offsets = Vec::new();
        let mut b = head;
        for (channel, entries) in chunk.index.iter_mut().enumerate() {
            if entries.is_empty() {
                continue;
            }
            offsets.push((channel as u16, self.out.position));
            b.clear();
            let start = start_record(&mut b, op::MESSAGE_INDEX);
            b.extend_from_slice(&(channel as u16).to_le_bytes());
            b.extend_from_slice(&((entries.len() * 16) as u32).to_le_bytes());
            for (time, offset) in entries.drain(..) {
                b.extend_from_slice(&time.to_le_bytes());
                b.extend_from_slice(&offset.to_le_bytes());
            }
            end_record(&mut b, start);
            self.out.write(&b)?;
        }
        self.chunk_indexes.push(ChunkIndex {
            bounds,
            start: chunk_start,
            length: chunk_length,
            message_index_offsets: offsets,
            message_index_length: self.out.position - index_start,
            compression: name,
            compressed_size: data.len() as u64,
            uncompressed_size: records.len() as u64,
        });
        chunk.records.clear();
        chunk.bounds = None;
        Ok(())
    }
}
