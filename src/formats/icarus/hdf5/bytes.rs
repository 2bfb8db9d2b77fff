//! The bytes of an HDF5 file, read at positions: handed to hdf5-pure as its `Source` (so it
//! never loads the whole file) and used by simrec's own chunk reads. A file on disk, or
//! memory (tests, the fuzzer).

use std::io;
use std::path::Path;
use std::sync::Arc;

use hdf5_pure::FormatError;

use crate::formats::input;

#[derive(Clone)]
pub struct Bytes(Arc<Backing>);

enum Backing {
    File { file: std::fs::File, len: u64 },
    Memory(Vec<u8>),
}

impl Bytes {
    /// The file at `path` (`-`: standard input, spooled).
    pub fn open(path: &Path) -> io::Result<Bytes> {
        let file = if path == Path::new("-") {
            input::stdin_file()?
        } else {
            std::fs::File::open(path)?
        };
        let len = file.metadata()?.len();
        Ok(Bytes(Arc::new(Backing::File { file, len })))
    }

    pub fn from_vec(bytes: Vec<u8>) -> Bytes {
        Bytes(Arc::new(Backing::Memory(bytes)))
    }

    /// The file's length in bytes.
    pub fn size(&self) -> u64 {
        match &*self.0 {
            Backing::File { len, .. } => *len,
            Backing::Memory(v) => v.len() as u64,
        }
    }

    /// Fills `buf` from `offset`; an error when the file ends first.
    pub fn read_into(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let end = offset.checked_add(buf.len() as u64);
        if end.is_none_or(|end| end > self.size()) {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{} bytes at offset {offset} run past the end of the file ({} bytes)",
                    buf.len(),
                    self.size()
                ),
            ));
        }
        match &*self.0 {
            Backing::File { file, .. } => read_at(file, offset, buf),
            Backing::Memory(v) => {
                // In range: checked above against the length.
                let start = offset as usize;
                buf.copy_from_slice(&v[start..start + buf.len()]);
                Ok(())
            }
        }
    }
}

#[cfg(unix)]
fn read_at(file: &std::fs::File, offset: u64, buf: &mut [u8]) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset)
}

#[cfg(windows)]
fn read_at(file: &std::fs::File, mut offset: u64, mut buf: &mut [u8]) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        let n = file.seek_read(buf, offset)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf = &mut buf[n..];
        offset += n as u64;
    }
    Ok(())
}

impl hdf5_pure::Source for Bytes {
    fn len(&self) -> u64 {
        self.size()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), FormatError> {
        self.read_into(offset, buf)
            .map_err(|e| FormatError::Source(e.to_string()))
    }
}

/// Where the HDF5 superblock starts: byte 0, or 512, 1024, 2048, … after a user block.
pub fn signature_offset(bytes: &Bytes) -> Option<u64> {
    const SIGNATURE: [u8; 8] = [0x89, b'H', b'D', b'F', 0x0d, 0x0a, 0x1a, 0x0a];
    let mut at = 0u64;
    let mut sig = [0u8; 8];
    loop {
        if bytes.read_into(at, &mut sig).is_err() {
            return None;
        }
        if sig == SIGNATURE {
            return Some(at);
        }
        at = if at == 0 { 512 } else { at.checked_mul(2)? };
    }
}

/// Whether `head` (the first bytes of a file) starts with the HDF5 signature at 0 or at a
/// user-block boundary within it.
pub fn head_is_hdf5(head: &[u8]) -> bool {
    const SIGNATURE: [u8; 8] = [0x89, b'H', b'D', b'F', 0x0d, 0x0a, 0x1a, 0x0a];
    let mut at = 0usize;
    while let Some(sig) = head.get(at..at + 8) {
        if sig == SIGNATURE {
            return true;
        }
        at = if at == 0 { 512 } else { at * 2 };
    }
    false
}
