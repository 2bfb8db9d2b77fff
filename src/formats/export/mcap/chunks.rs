//! Full chunks compressed on one thread, or two, and written on another, in the order they
//! were handed over. A second compressor shortened NanoVer's MCAP conversion, whose zstd
//! bounded its wall time, but its chunk, buffer and context took the large Elodin
//! replay's past the 64 MiB bound; `file.rs` starts one (docs/performance.md, "MCAP:
//! chunks compressed on two threads", "MCAP: one compressor again").
//!
//! The caller hands each full chunk to a compressor and tells the writer which, so the
//! writer takes them in the order they came. The writer, which owns the output, writes the
//! chunk record, its message indexes, and keeps what the summary needs of where they went;
//! then the chunk goes back to the caller to be filled again and the compressed bytes to
//! their compressor. Every hand-over waits for its taker (no queue), each compressor has
//! one buffer for its output, and the caller takes a chunk back before it fills another
//! once one per compressor is in flight ([`Chunks::empty`]), so what is in flight is
//! bounded. The second compressor, where it may start, starts only when the first is
//! still busy as the next chunk is full.

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
    /// The chunk the compressor of this number took.
    Chunk(usize),
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

/// The compressors and the writer.
pub(super) struct Chunks<W: Write + Send + 'static> {
    /// The first, and the second once the first was busy when a chunk was full.
    compressors: Vec<Worker<Chunk, (), FileError>>,
    /// The second's ends, until it is started.
    second: Option<Ends>,
    level: Option<i32>,
    window_log: u32,
    /// The compressor that took the last chunk.
    last: usize,
    /// Told which compressor took each chunk, to take their bytes in that order.
    writer: Worker<Next, Written<W>, FileError>,
    /// Chunks written, given back for their buffers.
    spare: Receiver<Chunk>,
    /// Chunks in use: the caller's first, and those [`Chunks::empty`] made.
    made: usize,
    /// The most chunks in use at once: the one being filled and one in flight per
    /// compressor. Unbounded, each compressor would hold one and another wait for the
    /// writer, past a replay conversion's memory bound (docs/performance.md, "MCAP: one
    /// compressor again").
    most: usize,
}

/// A compressor's ends of the channels to the writer: its chunks, and its buffer back.
struct Ends {
    to_writer: SyncSender<Encoded>,
    buffers: Receiver<Vec<u8>>,
}

impl<W: Write + Send + 'static> Chunks<W> {
    /// Starts the writer and the first compressor; `out` has what was written before the
    /// first chunk. `level`: zstd's, or `None`, chunks not compressed. `second`: whether a
    /// second compressor may start.
    pub fn spawn(
        out: Counted<W>,
        level: Option<i32>,
        window_log: u32,
        second: bool,
    ) -> Result<Chunks<W>, FileError> {
        let (mut ends, mut done, mut back) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..2 {
            let (to_writer, encoded) = sync_channel(0);
            let (to_compressor, buffers) = channel();
            // Its one buffer: it waits for the writer to give it back.
            let _ = to_compressor.send(Vec::new());
            ends.push(Ends { to_writer, buffers });
            done.push(encoded);
            back.push(to_compressor);
        }
        let written = Written {
            out,
            chunk_indexes: Vec::new(),
            metadata_indexes: Vec::new(),
        };
        let (give_back, spare) = channel();
        // What to write next waits in the writer's input while the chunk is compressed.
        let writer = Worker::spawn("mcap-write", 2, move |next: Receiver<Next>| {
            written.run(next, done, back, give_back)
        })?;
        let most = if second { 3 } else { 2 };
        let second = ends.pop().filter(|_| second);
        let mut chunks = Chunks {
            compressors: Vec::new(),
            second,
            level,
            window_log,
            last: 0,
            writer,
            spare,
            made: 1,
            most,
        };
        if let Some(first) = ends.pop() {
            chunks.start(first)?;
        }
        Ok(chunks)
    }

    fn start(&mut self, ends: Ends) -> Result<(), FileError> {
        let zstd = match self.level {
            Some(level) => {
                let mut z = zstd::bulk::Compressor::new(level)?;
                z.set_parameter(zstd::zstd_safe::CParameter::WindowLog(self.window_log))?;
                Some(z)
            }
            None => None,
        };
        let compressor = Compressor {
            zstd,
            buffers: ends.buffers,
        };
        let to_writer = ends.to_writer;
        let name = format!("mcap-zstd-{}", self.compressors.len() + 1);
        self.compressors
            .push(Worker::spawn(&name, 0, move |chunks| {
                compressor.run(chunks, to_writer)
            })?);
        Ok(())
    }

    /// A chunk to fill: one given back, a new one while fewer than [`Chunks::most`] are in
    /// use, or else the next one the writer gives back (a new one if the writer stopped:
    /// its error comes with the next hand-over).
    pub fn empty(&mut self, chunk_size: usize) -> Chunk {
        if let Ok(chunk) = self.spare.try_recv() {
            return chunk;
        }
        if self.made < self.most {
            self.made += 1;
            return Chunk::with_capacity(chunk_size);
        }
        (self.spare.recv()).unwrap_or_else(|_| Chunk::with_capacity(chunk_size))
    }

    /// Hands a full chunk to a compressor waiting for one, the first if both are; if none,
    /// to the second, started the first time it is needed (a caller slower than zstd never
    /// needs it: docs/performance.md, "MCAP: chunks compressed on two threads"); if both
    /// are busy, waits for the one that did not take the last chunk.
    pub fn chunk(&mut self, mut chunk: Chunk) -> Result<(), FileError> {
        for turn in [0, 1] {
            let Some(compressor) = self.compressors.get_mut(turn) else {
                continue;
            };
            match compressor.try_send(chunk) {
                Ok(None) => return self.took(turn),
                Ok(Some(back)) => chunk = back,
                Err(stopped) => return Err(self.why(stopped)),
            }
        }
        if let Some(second) = self.second.take() {
            self.start(second)?;
        }
        let turn = (self.last + 1) % self.compressors.len().max(1);
        let Some(compressor) = self.compressors.get_mut(turn) else {
            return Err(FileError::Stopped);
        };
        match compressor.send(chunk) {
            Ok(()) => self.took(turn),
            Err(stopped) => Err(self.why(stopped)),
        }
    }

    /// Tells the writer that compressor `turn` took the chunk.
    fn took(&mut self, turn: usize) -> Result<(), FileError> {
        self.last = turn;
        self.writer.send(Next::Chunk(turn)).map_err(FileError::from)
    }

    /// A metadata record, written after the chunks handed over.
    pub fn metadata(&mut self, record: Vec<u8>, name: String) -> Result<(), FileError> {
        (self.writer.send(Next::Metadata(record, name))).map_err(FileError::from)
    }

    /// Waits for every job to be written: the output and where everything went.
    pub fn finish(&mut self) -> Result<Written<W>, FileError> {
        for i in 0..self.compressors.len() {
            if let Err(stopped) = self.compressors[i].finish() {
                return Err(self.why(stopped));
            }
        }
        self.writer.finish().map_err(FileError::from)
    }

    /// Why a compressor stopped: its own error, or, if the writer stopped first, the writer's.
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

/// A compressor's side: zstd's context, kept from chunk to chunk, and its byte buffer, as
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
    /// The writer: takes each chunk from the compressor named, writes it, and gives it back
    /// to the caller and the compressed bytes to their compressor.
    fn run(
        mut self,
        next: Receiver<Next>,
        done: Vec<Receiver<Encoded>>,
        back: Vec<Sender<Vec<u8>>>,
        give_back: Sender<Chunk>,
    ) -> Result<Self, FileError> {
        for next in next {
            match next {
                Next::Chunk(turn) => {
                    // A compressor stopped before its chunk: the caller has its error.
                    let mut encoded = done[turn].recv().map_err(|_| FileError::Stopped)?;
                    self.chunk(&mut encoded)?;
                    // The file may be finished or dropped already: nothing to keep then.
                    let _ = give_back.send(encoded.chunk);
                    let _ = back[turn].send(encoded.compressed);
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
