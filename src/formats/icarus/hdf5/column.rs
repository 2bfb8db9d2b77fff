//! One 1-D dataset read a window of rows at a time.
//!
//! Unfiltered little-endian storage (what Vulcan and h5py write) is read by simrec straight
//! from the chunk addresses hdf5-pure lists, each checked against the file's length first:
//! hdf5-pure 0.47's row-window reads scan the whole chunk index for every window (cost
//! grows with the file: docs/performance.md, "Icarus HDF5"). Anything else (filters, big-endian, compact storage) goes through hdf5-pure's own
//! row reads. Either way a chunked dataset is read only as far as its last chunk written:
//! a length is a claim (a few KB of gzip dataset may declare 10^12 rows).

use hdf5_pure::{Dataset, Datatype, DatatypeByteOrder, Layout};

use super::bytes::Bytes;

/// Element type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    F64,
    F32,
    I32,
    I64,
}

impl Elem {
    pub fn size(self) -> u64 {
        match self {
            Elem::F64 | Elem::I64 => 8,
            Elem::F32 | Elem::I32 => 4,
        }
    }

    /// The element of a dataset's type, when it is one a signal may have.
    pub fn of(datatype: &Datatype) -> Option<Elem> {
        match datatype {
            Datatype::FloatingPoint { size: 8, .. } => Some(Elem::F64),
            Datatype::FloatingPoint { size: 4, .. } => Some(Elem::F32),
            Datatype::FixedPoint {
                size: 4, layout, ..
            } if layout.signed => Some(Elem::I32),
            Datatype::FixedPoint {
                size: 8, layout, ..
            } if layout.signed => Some(Elem::I64),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Elem::F64 => "float64",
            Elem::F32 => "float32",
            Elem::I32 => "int32",
            Elem::I64 => "int64",
        }
    }
}

/// A window of values, one vector per element type (reused from window to window).
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    F64(Vec<f64>),
    F32(Vec<f32>),
    I32(Vec<i32>),
    I64(Vec<i64>),
}

impl Values {
    pub fn new(elem: Elem) -> Values {
        match elem {
            Elem::F64 => Values::F64(Vec::new()),
            Elem::F32 => Values::F32(Vec::new()),
            Elem::I32 => Values::I32(Vec::new()),
            Elem::I64 => Values::I64(Vec::new()),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Values::F64(v) => v.len(),
            Values::F32(v) => v.len(),
            Values::I32(v) => v.len(),
            Values::I64(v) => v.len(),
        }
    }
}

/// Where a dataset's elements are.
#[derive(Debug)]
enum Storage {
    /// Unfiltered little-endian chunks of `rows` rows: the address of chunk k, or `None`
    /// for a chunk never written (read as zeros, HDF5's default fill).
    Chunks {
        rows: u64,
        addresses: Vec<Option<u64>>,
    },
    /// Unfiltered little-endian contiguous storage.
    Contiguous { address: u64 },
    /// Read by hdf5-pure.
    Library,
}

pub struct Column {
    dataset: Dataset,
    pub elem: Elem,
    pub len: u64,
    storage: Storage,
}

/// Why a dataset's storage cannot be read as its header claims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageError(pub String);

/// What opening a column found that is not fatal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StorageNotes {
    /// Chunks before the last one written that were never written (their rows read as
    /// the fill value, 0).
    pub missing_chunks: u64,
    /// Rows of the declared length after the last chunk written: never written, not read.
    pub unwritten_rows: u64,
}

impl Column {
    /// A 1-D dataset of `elem` declaring `len` rows: its storage checked against the file
    /// (`bytes`), and its length bounded by the chunks written.
    pub fn open(
        dataset: Dataset,
        elem: Elem,
        len: u64,
        datatype: &Datatype,
        bytes: &Bytes,
    ) -> Result<(Column, StorageNotes), StorageError> {
        let little = matches!(
            datatype,
            Datatype::FloatingPoint {
                byte_order: DatatypeByteOrder::LittleEndian,
                ..
            } | Datatype::FixedPoint {
                byte_order: DatatypeByteOrder::LittleEndian,
                ..
            }
        );
        let filtered = !dataset.filters().is_empty();
        let direct = little && !filtered;
        let layout = dataset
            .layout()
            .map_err(|e| StorageError(format!("its layout cannot be read: {e}")))?;
        let stored = len
            .checked_mul(elem.size())
            .ok_or_else(|| StorageError(format!("{len} rows overflow a byte count")))?;
        let mut notes = StorageNotes::default();
        let mut len = len;
        let storage = match layout {
            Layout::Chunked { chunk_shape, .. } => {
                let rows = match chunk_shape.as_slice() {
                    [rows] if *rows > 0 => *rows,
                    other => {
                        return Err(StorageError(format!(
                            "its chunk shape {other:?} is not one positive length"
                        )))
                    }
                };
                // Unfiltered rows take their bytes in the file; filtered ones are bounded
                // by the chunks written, below.
                if !filtered && stored > bytes.size() {
                    return Err(StorageError(format!(
                        "it claims {len} rows ({stored} bytes) in a file of {} bytes",
                        bytes.size()
                    )));
                }
                let chunks = Chunks::of(&dataset, rows, len, elem, direct, bytes)?;
                notes.missing_chunks = chunks.missing();
                notes.unwritten_rows = len - chunks.rows;
                len = chunks.rows;
                match direct {
                    true => Storage::Chunks {
                        rows,
                        addresses: chunks.addresses,
                    },
                    false => Storage::Library,
                }
            }
            Layout::Contiguous { address, size } => {
                if size < stored {
                    return Err(StorageError(format!(
                        "its contiguous storage holds {size} bytes, {len} rows need {stored}"
                    )));
                }
                match address {
                    Some(address) => {
                        if address
                            .checked_add(stored)
                            .is_none_or(|end| end > bytes.size())
                        {
                            return Err(StorageError(format!(
                                "its {stored} bytes at offset {address} run past the end of the file ({} bytes)",
                                bytes.size()
                            )));
                        }
                        match direct {
                            true => Storage::Contiguous { address },
                            false => Storage::Library,
                        }
                    }
                    // Never written: every row is the fill value.
                    None if len == 0 => Storage::Library,
                    None => {
                        return Err(StorageError(
                            "its storage was never written (no address)".into(),
                        ))
                    }
                }
            }
            Layout::Compact { size } => {
                if size < stored {
                    return Err(StorageError(format!(
                        "its compact storage holds {size} bytes, {len} rows need {stored}"
                    )));
                }
                Storage::Library
            }
            Layout::Virtual => {
                return Err(StorageError(
                    "it is a virtual dataset (its values live in other files)".into(),
                ))
            }
            other => {
                return Err(StorageError(format!(
                    "its layout {other:?} is not one simrec reads"
                )))
            }
        };
        Ok((
            Column {
                dataset,
                elem,
                len,
                storage,
            },
            notes,
        ))
    }

    /// Reads rows `[start, start + count)` (clamped to the length) into `out`, reusing its
    /// vector; `scratch` holds the stored bytes on the way.
    pub fn read(
        &self,
        bytes: &Bytes,
        start: u64,
        count: u64,
        out: &mut Values,
        scratch: &mut Vec<u8>,
    ) -> Result<(), String> {
        let count = count.min(self.len.saturating_sub(start));
        match &self.storage {
            Storage::Library => return self.read_by_library(start, count, out),
            Storage::Contiguous { address } => {
                let n = (count * self.elem.size()) as usize;
                scratch.resize(n, 0);
                let at = address + start * self.elem.size();
                bytes
                    .read_into(at, scratch)
                    .map_err(|e| format!("cannot read {n} bytes at offset {at}: {e}"))?;
            }
            Storage::Chunks { rows, addresses } => {
                let size = self.elem.size();
                scratch.clear();
                scratch.resize((count * size) as usize, 0);
                let mut row = start;
                let end = start + count;
                while row < end {
                    let chunk = row / rows;
                    let within = row % rows;
                    let take = (rows - within).min(end - row);
                    let from = ((row - start) * size) as usize;
                    let to = from + (take * size) as usize;
                    if let Some(Some(address)) = addresses.get(chunk as usize) {
                        let at = address + within * size;
                        bytes.read_into(at, &mut scratch[from..to]).map_err(|e| {
                            format!("cannot read chunk {chunk} at offset {at}: {e}")
                        })?;
                    }
                    row += take;
                }
            }
        }
        decode_le(scratch, out);
        Ok(())
    }

    fn read_by_library(&self, start: u64, count: u64, out: &mut Values) -> Result<(), String> {
        let d = &self.dataset;
        let e = |e: hdf5_pure::Error| e.to_string();
        match out {
            Values::F64(v) => *v = d.read_f64_rows(start, count).map_err(e)?,
            Values::F32(v) => *v = d.read_f32_rows(start, count).map_err(e)?,
            Values::I32(v) => *v = d.read_i32_rows(start, count).map_err(e)?,
            Values::I64(v) => *v = d.read_i64_rows(start, count).map_err(e)?,
        }
        if out.len() as u64 != count {
            return Err(format!(
                "the library returned {} rows where {count} were asked for",
                out.len()
            ));
        }
        Ok(())
    }
}

/// The largest chunk read through hdf5-pure, which decodes a chunk whole (Vulcan's chunks
/// of 1000 rows are 8 KB; h5py's automatic ones stay under 1 MiB).
const MAX_LIBRARY_CHUNK: u64 = 64 << 20;

/// The chunks a dataset has written, as far as its length: by chunk number, each one's
/// address (`None`: never written).
struct Chunks {
    addresses: Vec<Option<u64>>,
    /// Rows up to the end of the last chunk written (at most the length): those after it
    /// were never written and are not read.
    rows: u64,
}

impl Chunks {
    /// The chunk index of `dataset` (chunks of `rows` rows, `len` rows declared), every
    /// chunk checked against the file; `direct` chunks (unfiltered, little-endian, read by
    /// simrec) must hold exactly one chunk's bytes.
    fn of(
        dataset: &Dataset,
        rows: u64,
        len: u64,
        elem: Elem,
        direct: bool,
        bytes: &Bytes,
    ) -> Result<Chunks, StorageError> {
        let chunk_bytes = rows
            .checked_mul(elem.size())
            .ok_or_else(|| StorageError(format!("chunks of {rows} rows overflow a byte count")))?;
        if !direct && chunk_bytes > MAX_LIBRARY_CHUNK {
            return Err(StorageError(format!(
                "its chunks of {rows} rows ({chunk_bytes} bytes) are larger than simrec decodes ({MAX_LIBRARY_CHUNK} bytes)"
            )));
        }
        let listed = dataset
            .chunks()
            .map_err(|e| StorageError(format!("its chunk index cannot be read: {e}")))?;
        let mut written = Vec::with_capacity(listed.len());
        for c in listed {
            let first = c.offset.first().copied().unwrap_or(0);
            if first % rows != 0 {
                return Err(StorageError(format!(
                    "a chunk starts at row {first}, not at a multiple of {rows}"
                )));
            }
            let k = first / rows;
            if first >= len {
                // Past the length (a dataset shrunk after writing): never read.
                continue;
            }
            if direct && c.storage_size != chunk_bytes {
                return Err(StorageError(format!(
                    "chunk {k} stores {} bytes, an unfiltered chunk of {rows} rows has {chunk_bytes}",
                    c.storage_size
                )));
            }
            if c.address
                .checked_add(c.storage_size)
                .is_none_or(|end| end > bytes.size())
            {
                return Err(StorageError(format!(
                    "chunk {k} ({} bytes at offset {}) runs past the end of the file ({} bytes)",
                    c.storage_size,
                    c.address,
                    bytes.size()
                )));
            }
            written.push((k, c.address));
        }
        let rows_written = written
            .iter()
            .map(|&(k, _)| (k + 1).saturating_mul(rows).min(len))
            .max()
            .unwrap_or(0);
        // Bounded by the chunks listed, each of which the file holds.
        let mut addresses = vec![None; rows_written.div_ceil(rows) as usize];
        for (k, address) in written {
            addresses[k as usize] = Some(address);
        }
        Ok(Chunks {
            addresses,
            rows: rows_written,
        })
    }

    /// Chunks before the last one written that were never written.
    fn missing(&self) -> u64 {
        self.addresses.iter().filter(|a| a.is_none()).count() as u64
    }
}

/// Little-endian stored bytes into values.
fn decode_le(raw: &[u8], out: &mut Values) {
    match out {
        Values::F64(v) => {
            v.clear();
            v.extend(
                raw.chunks_exact(8)
                    .map(|b| f64::from_le_bytes(b.try_into().unwrap_or_default())),
            );
        }
        Values::F32(v) => {
            v.clear();
            v.extend(
                raw.chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().unwrap_or_default())),
            );
        }
        Values::I32(v) => {
            v.clear();
            v.extend(
                raw.chunks_exact(4)
                    .map(|b| i32::from_le_bytes(b.try_into().unwrap_or_default())),
            );
        }
        Values::I64(v) => {
            v.clear();
            v.extend(
                raw.chunks_exact(8)
                    .map(|b| i64::from_le_bytes(b.try_into().unwrap_or_default())),
            );
        }
    }
}
