//! The MCAP container (<https://mcap.dev/spec>): the header, schema and channel records,
//! messages gathered into chunks, a message index per channel after each chunk, and the
//! summary (schemas, channels, statistics, chunk and metadata indexes, their offsets) and
//! footer, with the CRCs the spec defines. The records are laid out as the `mcap` crate's
//! writer lays them out; simrec writes them itself because that writer hands every message to
//! its zstd stream and chunk CRC as several small writes, and takes no zstd parameter but the
//! level: here a chunk is built in memory and compressed in one call, with a window as large
//! as the chunk (docs/performance.md, "MCAP: chunks compressed whole").
//!
//! Full chunks are compressed and written on threads of their own ([`Chunks`]), which own
//! the output and so every file position: the caller fills the next chunk meanwhile, in the
//! buffers of one before, given back. The summary is written on the caller's thread once
//! they have finished.

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::chunks::{ChunkIndex, Chunks, Counted, Written};
use super::MAGIC;
use crate::formats::worker::Stopped;

/// Record opcodes.
pub(super) mod op {
    pub const HEADER: u8 = 0x01;
    pub const FOOTER: u8 = 0x02;
    pub const SCHEMA: u8 = 0x03;
    pub const CHANNEL: u8 = 0x04;
    pub const MESSAGE: u8 = 0x05;
    pub const CHUNK: u8 = 0x06;
    pub const MESSAGE_INDEX: u8 = 0x07;
    pub const CHUNK_INDEX: u8 = 0x08;
    pub const STATISTICS: u8 = 0x0B;
    pub const METADATA: u8 = 0x0C;
    pub const METADATA_INDEX: u8 = 0x0D;
    pub const SUMMARY_OFFSET: u8 = 0x0E;
    pub const DATA_END: u8 = 0x0F;
}

/// zstd's window: a chunk's messages are found again across the whole chunk, not only the
/// last 512 KiB that level 1 would look back over (3es clouds and meshes repeat at that
/// distance: docs/performance.md, "MCAP: chunks compressed whole"). The chunk size caps it.
const WINDOW_LOG: u32 = 22;

/// How chunks are compressed: zstd at a level, or not.
#[derive(Debug, Clone, Copy)]
pub(super) enum ChunkCompression {
    Zstd(i32),
    None,
}

/// Why a record could not be added.
#[derive(Debug, thiserror::Error)]
pub(super) enum FileError {
    #[error(transparent)]
    Io(#[from] io::Error),
    #[error("MCAP: more than 65,535 {0}")]
    TooMany(&'static str),
    #[error("MCAP: a message of channel {0}, which was not added")]
    UnknownChannel(u16),
    #[error("MCAP: the thread writing the chunks stopped")]
    Stopped,
}

impl From<Stopped<FileError>> for FileError {
    fn from(stopped: Stopped<FileError>) -> FileError {
        match stopped {
            Stopped::Failed(e) => e,
            Stopped::Panicked | Stopped::Gone => FileError::Stopped,
        }
    }
}

/// A channel's record, kept for the summary.
struct ChannelRecord {
    schema_id: u16,
    topic: String,
    message_encoding: String,
    metadata: BTreeMap<String, String>,
}

/// A schema's record, kept for the summary.
#[derive(PartialEq, Eq)]
struct SchemaRecord {
    name: String,
    encoding: String,
    data: Vec<u8>,
}

/// The chunk being filled: its records, uncompressed, and its messages' index entries.
#[derive(Default)]
pub(super) struct Chunk {
    pub records: Vec<u8>,
    /// Earliest and latest log time of its messages.
    pub bounds: Option<(u64, u64)>,
    /// (log time, offset in `records`) of each message, by channel id.
    pub index: Vec<Vec<(u64, u64)>>,
}

/// An MCAP file being written to `W`: the records and the summary's counts are kept here,
/// the chunks go to the threads that compress and write them.
pub(super) struct McapFile<W: Write + Send + 'static> {
    chunks: Chunks<W>,
    chunk_size: usize,
    chunk: Chunk,
    /// Schemas, by id less one (a few, one per topic at most).
    schemas: Vec<SchemaRecord>,
    /// Channels, by id less one (ids start at 1, as the `mcap` crate numbers them).
    channels: Vec<ChannelRecord>,
    /// Messages of each channel, by id less one.
    message_counts: Vec<u64>,
    bounds: Option<(u64, u64)>,
    /// Metadata records handed over, for the statistics.
    metadata_count: usize,
}

/// Appends a string (u32 length, then its bytes).
pub(super) fn put_str(b: &mut Vec<u8>, s: &str) {
    put_bytes32(b, s.as_bytes());
}

fn put_bytes32(b: &mut Vec<u8>, bytes: &[u8]) {
    b.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    b.extend_from_slice(bytes);
}

/// Appends a map of strings (u32 byte length, then key and value of each entry in order).
fn put_string_map(b: &mut Vec<u8>, map: &BTreeMap<String, String>) {
    let length: usize = map.iter().map(|(k, v)| 8 + k.len() + v.len()).sum();
    b.extend_from_slice(&(length as u32).to_le_bytes());
    for (k, v) in map {
        put_str(b, k);
        put_str(b, v);
    }
}

/// Appends a record's opcode and length, and returns where its length is, for [`end_record`].
pub(super) fn start_record(b: &mut Vec<u8>, op: u8) -> usize {
    b.push(op);
    b.extend_from_slice(&0u64.to_le_bytes());
    b.len()
}

/// Writes the length of the record started at `start`.
pub(super) fn end_record(b: &mut [u8], start: usize) {
    let length = (b.len() - start) as u64;
    b[start - 8..start].copy_from_slice(&length.to_le_bytes());
}

fn widen(bounds: Option<(u64, u64)>, time: u64) -> Option<(u64, u64)> {
    Some(match bounds {
        None => (time, time),
        Some((start, end)) => (start.min(time), end.max(time)),
    })
}

impl<W: Write + Send + 'static> McapFile<W> {
    /// Writes the magic and the header record, and starts the threads that compress and
    /// write the chunks.
    pub(super) fn create(
        out: W,
        library: &str,
        compression: ChunkCompression,
        chunk_size: usize,
    ) -> Result<McapFile<W>, FileError> {
        let level = match compression {
            ChunkCompression::Zstd(level) => Some(level),
            ChunkCompression::None => None,
        };
        let mut out = Counted::new(out);
        let mut b = Vec::new();
        b.extend_from_slice(MAGIC);
        let start = start_record(&mut b, op::HEADER);
        put_str(&mut b, ""); // profile
        put_str(&mut b, library);
        end_record(&mut b, start);
        out.write(&b)?;
        let chunks = Chunks::spawn(out, level, WINDOW_LOG)?;
        Ok(McapFile {
            chunks,
            chunk_size,
            chunk: Chunk::with_capacity(chunk_size),
            schemas: Vec::new(),
            channels: Vec::new(),
            message_counts: Vec::new(),
            bounds: None,
            metadata_count: 0,
        })
    }

    /// A schema's id (from 1); the same content has the same id. Its record goes in the
    /// chunk, before the first message that needs it.
    pub(super) fn add_schema(
        &mut self,
        name: &str,
        encoding: &str,
        data: &[u8],
    ) -> Result<u16, FileError> {
        let schema = SchemaRecord {
            name: name.to_string(),
            encoding: encoding.to_string(),
            data: data.to_vec(),
        };
        let same = self.schemas.iter().position(|s| *s == schema);
        let id = u16::try_from(same.unwrap_or(self.schemas.len()) + 1)
            .map_err(|_| FileError::TooMany("schemas"))?;
        if same.is_none() {
            schema_record(&mut self.chunk.records, id, &schema);
            self.schemas.push(schema);
        }
        Ok(id)
    }

    /// A new channel's id (from 1); its record goes in the chunk.
    pub(super) fn add_channel(
        &mut self,
        schema_id: u16,
        topic: &str,
        message_encoding: &str,
        metadata: &BTreeMap<String, String>,
    ) -> Result<u16, FileError> {
        let id =
            u16::try_from(self.channels.len() + 1).map_err(|_| FileError::TooMany("channels"))?;
        let channel = ChannelRecord {
            schema_id,
            topic: topic.to_string(),
            message_encoding: message_encoding.to_string(),
            metadata: metadata.clone(),
        };
        channel_record(&mut self.chunk.records, id, &channel);
        self.channels.push(channel);
        self.message_counts.push(0);
        Ok(id)
    }

    /// A message of channel `channel` (an id [`Self::add_channel`] gave), in the chunk; the
    /// chunk is handed over first if it is full.
    pub(super) fn message(
        &mut self,
        channel: u16,
        sequence: u32,
        log_time: u64,
        data: &[u8],
    ) -> Result<(), FileError> {
        if self.chunk.records.len() > self.chunk_size {
            self.finish_chunk()?;
        }
        let c = channel as usize;
        let Some(count) = c
            .checked_sub(1)
            .and_then(|i| self.message_counts.get_mut(i))
        else {
            return Err(FileError::UnknownChannel(channel));
        };
        *count += 1;
        self.bounds = widen(self.bounds, log_time);
        let chunk = &mut self.chunk;
        chunk.bounds = widen(chunk.bounds, log_time);
        if chunk.index.len() <= c {
            chunk.index.resize_with(c + 1, Vec::new);
        }
        chunk.index[c].push((log_time, chunk.records.len() as u64));
        let b = &mut chunk.records;
        b.push(op::MESSAGE);
        b.extend_from_slice(&(2 + 4 + 8 + 8 + data.len() as u64).to_le_bytes());
        b.extend_from_slice(&channel.to_le_bytes());
        b.extend_from_slice(&sequence.to_le_bytes());
        b.extend_from_slice(&log_time.to_le_bytes()); // log time
        b.extend_from_slice(&log_time.to_le_bytes()); // publish time
        b.extend_from_slice(data);
        Ok(())
    }

    /// A metadata record, outside any chunk (the chunk being filled goes first).
    pub(super) fn metadata(
        &mut self,
        name: &str,
        metadata: &BTreeMap<String, String>,
    ) -> Result<(), FileError> {
        self.finish_chunk()?;
        let mut b = Vec::new();
        let start = start_record(&mut b, op::METADATA);
        put_str(&mut b, name);
        put_string_map(&mut b, metadata);
        end_record(&mut b, start);
        self.metadata_count += 1;
        self.chunks.metadata(b, name.to_string())?;
        Ok(())
    }

    /// Hands the chunk being filled, if it holds anything, to the chunk threads, and takes
    /// an emptied one back to fill (a new one the first time).
    fn finish_chunk(&mut self) -> Result<(), FileError> {
        if self.chunk.records.is_empty() {
            return Ok(());
        }
        let next = self.chunks.empty(self.chunk_size);
        let full = std::mem::replace(&mut self.chunk, next);
        self.chunks.chunk(full)?;
        Ok(())
    }

    /// Writes the last chunk, the data end, the summary and the footer; gives back the output.
    pub(super) fn finish(mut self) -> Result<W, FileError> {
        self.finish_chunk()?;
        let Written {
            mut out,
            chunk_indexes,
            metadata_indexes,
            ..
        } = self.chunks.finish()?;
        let mut b = Vec::new();
        let start = start_record(&mut b, op::DATA_END);
        b.extend_from_slice(&out.crc.clone().finalize().to_le_bytes());
        end_record(&mut b, start);
        out.write(&b)?;

        // The summary: each group of records, and where each group is.
        let summary_start = out.position;
        b.clear();
        let mut groups = Vec::new();
        let mut group = |b: &mut Vec<u8>, op: u8, from: usize| {
            if b.len() > from {
                groups.push((op, summary_start + from as u64, (b.len() - from) as u64));
            }
        };
        let from = b.len();
        for (i, schema) in self.schemas.iter().enumerate() {
            schema_record(&mut b, i as u16 + 1, schema);
        }
        group(&mut b, op::SCHEMA, from);
        let from = b.len();
        for (i, channel) in self.channels.iter().enumerate() {
            channel_record(&mut b, i as u16 + 1, channel);
        }
        group(&mut b, op::CHANNEL, from);
        let from = b.len();
        self.statistics(&mut b, chunk_indexes.len());
        group(&mut b, op::STATISTICS, from);
        let from = b.len();
        for index in &chunk_indexes {
            chunk_index_record(&mut b, index);
        }
        group(&mut b, op::CHUNK_INDEX, from);
        let from = b.len();
        for index in &metadata_indexes {
            let start = start_record(&mut b, op::METADATA_INDEX);
            b.extend_from_slice(&index.offset.to_le_bytes());
            b.extend_from_slice(&index.length.to_le_bytes());
            put_str(&mut b, &index.name);
            end_record(&mut b, start);
        }
        group(&mut b, op::METADATA_INDEX, from);
        let summary_offset_start = summary_start + b.len() as u64;
        for (op, start, length) in groups {
            let s = start_record(&mut b, op::SUMMARY_OFFSET);
            b.push(op);
            b.extend_from_slice(&start.to_le_bytes());
            b.extend_from_slice(&length.to_le_bytes());
            end_record(&mut b, s);
        }
        b.push(op::FOOTER);
        b.extend_from_slice(&(8u64 + 8 + 4).to_le_bytes());
        b.extend_from_slice(&summary_start.to_le_bytes());
        b.extend_from_slice(&summary_offset_start.to_le_bytes());
        // The summary CRC covers the summary and the footer up to the CRC itself.
        let summary_crc = crc32fast::hash(&b);
        b.extend_from_slice(&summary_crc.to_le_bytes());
        b.extend_from_slice(MAGIC);
        out.out.write_all(&b)?;
        Ok(out.out)
    }

    /// The statistics record.
    fn statistics(&self, b: &mut Vec<u8>, chunk_count: usize) {
        let bounds = self.bounds.unwrap_or((0, 0));
        let start = start_record(b, op::STATISTICS);
        b.extend_from_slice(&self.message_counts.iter().sum::<u64>().to_le_bytes());
        b.extend_from_slice(&(self.schemas.len() as u16).to_le_bytes());
        b.extend_from_slice(&(self.channels.len() as u32).to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes()); // attachments
        b.extend_from_slice(&(self.metadata_count as u32).to_le_bytes());
        b.extend_from_slice(&(chunk_count as u32).to_le_bytes());
        b.extend_from_slice(&bounds.0.to_le_bytes());
        b.extend_from_slice(&bounds.1.to_le_bytes());
        let counted: Vec<(u16, u64)> = (self.message_counts.iter().enumerate())
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| (i as u16 + 1, n))
            .collect();
        b.extend_from_slice(&((counted.len() * 10) as u32).to_le_bytes());
        for (channel, n) in counted {
            b.extend_from_slice(&channel.to_le_bytes());
            b.extend_from_slice(&n.to_le_bytes());
        }
        end_record(b, start);
    }
}

impl Chunk {
    /// An empty chunk whose records take a full chunk and its last message without growing.
    pub(super) fn with_capacity(chunk_size: usize) -> Chunk {
        Chunk {
            records: Vec::with_capacity(chunk_size + (chunk_size >> 4)),
            ..Chunk::default()
        }
    }
}

fn schema_record(b: &mut Vec<u8>, id: u16, schema: &SchemaRecord) {
    let start = start_record(b, op::SCHEMA);
    b.extend_from_slice(&id.to_le_bytes());
    put_str(b, &schema.name);
    put_str(b, &schema.encoding);
    put_bytes32(b, &schema.data);
    end_record(b, start);
}

fn channel_record(b: &mut Vec<u8>, id: u16, channel: &ChannelRecord) {
    let start = start_record(b, op::CHANNEL);
    b.extend_from_slice(&id.to_le_bytes());
    b.extend_from_slice(&channel.schema_id.to_le_bytes());
    put_str(b, &channel.topic);
    put_str(b, &channel.message_encoding);
    put_string_map(b, &channel.metadata);
    end_record(b, start);
}

fn chunk_index_record(b: &mut Vec<u8>, index: &ChunkIndex) {
    let start = start_record(b, op::CHUNK_INDEX);
    b.extend_from_slice(&index.bounds.0.to_le_bytes());
    b.extend_from_slice(&index.bounds.1.to_le_bytes());
    b.extend_from_slice(&index.start.to_le_bytes());
    b.extend_from_slice(&index.length.to_le_bytes());
    b.extend_from_slice(&((index.message_index_offsets.len() * 10) as u32).to_le_bytes());
    for (channel, offset) in &index.message_index_offsets {
        b.extend_from_slice(&channel.to_le_bytes());
        b.extend_from_slice(&offset.to_le_bytes());
    }
    b.extend_from_slice(&index.message_index_length.to_le_bytes());
    put_str(b, index.compression);
    b.extend_from_slice(&index.compressed_size.to_le_bytes());
    b.extend_from_slice(&index.uncompressed_size.to_le_bytes());
    end_record(b, start);
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use mcap::sans_io::linear_reader::{LinearReadEvent, LinearReader, LinearReaderOptions};

    use super::*;

    /// A message as written: channel, log time, data.
    type Sent = (u16, u64, Vec<u8>);

    /// A file of several small chunks (two channels, a metadata record).
    fn small_file(compression: ChunkCompression) -> (Vec<u8>, Vec<Sent>) {
        let mut file = McapFile::create(Vec::new(), "test", compression, 200).unwrap();
        file.metadata("m", &BTreeMap::from([("k".into(), "v".into())]))
            .unwrap();
        let schema = file.add_schema("S", "protobuf", b"schema").unwrap();
        assert_eq!(file.add_schema("S", "protobuf", b"schema").unwrap(), schema);
        let a = file
            .add_channel(schema, "/a", "protobuf", &BTreeMap::new())
            .unwrap();
        let b = file
            .add_channel(0, "/b", "json", &BTreeMap::from([("x".into(), "y".into())]))
            .unwrap();
        let mut sent = Vec::new();
        for i in 0..60u64 {
            let channel = if i % 3 == 0 { b } else { a };
            let data = vec![i as u8; (i % 7) as usize * 10];
            file.message(channel, i as u32, 1000 + i, &data).unwrap();
            sent.push((channel, 1000 + i, data));
        }
        assert!(file.message(9, 0, 0, b"").is_err());
        (file.finish().unwrap(), sent)
    }

    /// Every record, with the data section's, chunks' and summary's CRCs checked.
    fn opcodes(bytes: &[u8]) -> Vec<u8> {
        let options = LinearReaderOptions::default()
            .with_validate_chunk_crcs(true)
            .with_validate_data_section_crc(true)
            .with_validate_summary_section_crc(true);
        let mut reader = LinearReader::new_with_options(options);
        let mut input = bytes;
        let mut ops = Vec::new();
        while let Some(event) = reader.next_event() {
            match event.unwrap() {
                LinearReadEvent::ReadRequest(n) => {
                    let read = input.read(reader.insert(n)).unwrap();
                    reader.notify_read(read);
                }
                LinearReadEvent::Record { opcode, data } => {
                    mcap::parse_record(opcode, data).unwrap();
                    ops.push(opcode);
                }
            }
        }
        ops
    }

    #[test]
    fn the_mcap_reader_finds_every_message_by_stream_and_by_index() {
        for compression in [ChunkCompression::Zstd(1), ChunkCompression::None] {
            let (bytes, sent) = small_file(compression);
            let ops = opcodes(&bytes);
            assert_eq!(ops[0], op::HEADER);
            assert_eq!(ops.last(), Some(&op::FOOTER));
            let got: Vec<Sent> = mcap::MessageStream::new(&bytes)
                .unwrap()
                .map(|m| {
                    let m = m.unwrap();
                    (m.channel.id, m.log_time, m.data.to_vec())
                })
                .collect();
            assert_eq!(got, sent);

            let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
            let stats = summary.stats.as_ref().unwrap();
            assert_eq!((stats.message_count, stats.channel_count), (60, 2));
            assert_eq!(
                (stats.message_start_time, stats.message_end_time),
                (1000, 1059)
            );
            assert_eq!(
                stats.channel_message_counts,
                BTreeMap::from([(1, 40), (2, 20)])
            );
            assert_eq!(summary.metadata_indexes.len(), 1);
            let metadata = mcap::read::metadata(&bytes, &summary.metadata_indexes[0]).unwrap();
            assert_eq!(metadata.metadata["k"], "v");
            assert!(summary.chunk_indexes.len() > 5, "several chunks");
            let mut indexed = Vec::new();
            for chunk in &summary.chunk_indexes {
                for (channel, entries) in summary.read_message_indexes(&bytes, chunk).unwrap() {
                    for entry in entries {
                        let m = summary.seek_message(&bytes, chunk, &entry).unwrap();
                        assert_eq!((m.channel.id, m.log_time), (channel.id, entry.log_time));
                        indexed.push((m.channel.id, m.log_time, m.data.to_vec()));
                    }
                }
            }
            indexed.sort_by_key(|m| m.1);
            assert_eq!(indexed, sent);
        }
    }

    /// An output slow to take each write: the compressor waits for the writer and the
    /// caller for a chunk given back.
    struct Slow(Vec<u8>);

    impl Write for Slow {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            std::thread::sleep(std::time::Duration::from_micros(200));
            self.0.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn chunks_compressed_and_written_on_their_threads_come_in_order() {
        let mut file =
            McapFile::create(Slow(Vec::new()), "test", ChunkCompression::Zstd(1), 200).unwrap();
        let channel = file.add_channel(0, "/a", "json", &BTreeMap::new()).unwrap();
        for i in 0..300u64 {
            file.message(channel, i as u32, i, &[i as u8; 50]).unwrap();
        }
        let bytes = file.finish().unwrap().0;
        opcodes(&bytes);
        let got: Vec<(u64, Vec<u8>)> = mcap::MessageStream::new(&bytes)
            .unwrap()
            .map(|m| {
                let m = m.unwrap();
                (m.log_time, m.data.to_vec())
            })
            .collect();
        let sent: Vec<(u64, Vec<u8>)> = (0..300u64).map(|i| (i, vec![i as u8; 50])).collect();
        assert_eq!(got, sent);
    }

    /// Accepts `room` bytes, then fails every write.
    struct Full {
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if buf.len() > self.room {
                return Err(io::Error::other("disk full"));
            }
            self.room -= buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn an_error_of_the_chunk_thread_reaches_the_caller() {
        let mut file =
            McapFile::create(Full { room: 1000 }, "test", ChunkCompression::None, 200).unwrap();
        let channel = file.add_channel(0, "/a", "json", &BTreeMap::new()).unwrap();
        let mut failed = None;
        for i in 0..1000u64 {
            if let Err(e) = file.message(channel, i as u32, i, &[7; 100]) {
                failed = Some(e);
                break;
            }
        }
        let e = match failed {
            Some(e) => e,
            None => file.finish().err().expect("the output is full"),
        };
        assert!(
            matches!(e, FileError::Io(ref io) if io.to_string() == "disk full"),
            "{e}"
        );
    }
}
