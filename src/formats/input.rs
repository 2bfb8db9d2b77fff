//! Random access to an input file through one reusable read window.
//!
//! Readers of record-framed formats walk forward but must also look ahead and
//! resynchronise; this gives them `bytes(offset, n)` with a bounded buffer.
//! Standard input is spooled to a temporary file first so that it can be read
//! the same way without holding it in memory, and detected by its bytes.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Bytes read per refill on sequential work.
pub const READ_AHEAD: usize = 1 << 20;

/// Where the bytes live: a file read through the window, or memory (fuzzing, tests).
enum Backing {
    File(File),
    Memory(Vec<u8>),
}

pub struct Input {
    backing: Backing,
    len: u64,
    window: Vec<u8>,
    window_start: u64,
    read_ahead: usize,
}

impl Input {
    /// Opens `path`; `-` means standard input.
    pub fn open(path: &Path) -> io::Result<Input> {
        if path == Path::new("-") {
            let file = stdin_file()?;
            let len = file.metadata()?.len();
            return Ok(Input::from_file(file, len));
        }
        let file = File::open(path)?;
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "is a directory",
            ));
        }
        Ok(Input::from_file(file, meta.len()))
    }

    /// An input over an open file (a temporary one, say), from its start.
    pub fn from_file_handle(file: File) -> io::Result<Input> {
        let len = file.metadata()?.len();
        Ok(Input::from_file(file, len))
    }

    /// An input over bytes already in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Input {
        let len = bytes.len() as u64;
        Input {
            backing: Backing::Memory(bytes),
            len,
            window: Vec::new(),
            window_start: 0,
            read_ahead: READ_AHEAD,
        }
    }

    fn from_file(file: File, len: u64) -> Input {
        Input {
            backing: Backing::File(file),
            len,
            window: Vec::new(),
            window_start: 0,
            read_ahead: READ_AHEAD,
        }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Sets how much is read beyond what is asked, for walks that skip most bytes.
    pub fn set_read_ahead(&mut self, bytes: usize) {
        self.read_ahead = bytes.max(16);
    }

    /// `n` bytes at `offset`. The caller checks `offset + n <= len` first, so
    /// nothing is ever allocated for bytes the file does not have.
    pub fn bytes(&mut self, offset: u64, n: usize) -> io::Result<&[u8]> {
        let end = offset
            .checked_add(n as u64)
            .filter(|&e| e <= self.len)
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "read past end of file"))?;
        let file = match &mut self.backing {
            Backing::Memory(bytes) => return Ok(&bytes[offset as usize..end as usize]),
            Backing::File(file) => file,
        };
        let window_end = self.window_start + self.window.len() as u64;
        if offset < self.window_start || end > window_end {
            let want = (n.max(self.read_ahead) as u64).min(self.len - offset) as usize;
            self.window.resize(want, 0);
            file.seek(SeekFrom::Start(offset))?;
            file.read_exact(&mut self.window)?;
            self.window_start = offset;
        }
        let start = (offset - self.window_start) as usize;
        Ok(&self.window[start..start + n])
    }
}

/// Standard input, spooled once per process to an unnamed temporary file (gone when the
/// process ends), so that detection and reading see the same bytes. Each call returns a
/// new handle; readers seek before they read, so handles may share the file position.
pub fn stdin_file() -> io::Result<File> {
    static SPOOL: OnceLock<File> = OnceLock::new();
    if let Some(file) = SPOOL.get() {
        return file.try_clone();
    }
    let mut file = tempfile::tempfile()?;
    io::copy(&mut io::stdin().lock(), &mut file)?;
    SPOOL.get_or_init(|| file).try_clone()
}

/// A display name for a path (`<stdin>` for `-`).
pub fn display_name(path: &Path) -> PathBuf {
    if path == Path::new("-") {
        PathBuf::from("<stdin>")
    } else {
        path.to_path_buf()
    }
}
