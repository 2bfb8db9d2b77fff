//! Output files that appear whole or not at all.
//!
//! A writer asks for each file it needs; it gets a temporary file beside the
//! target. Only `commit` renames them into place, after every writer has
//! finished, so an error or an interrupted run never leaves a half-written
//! output, and an existing file is refused unless the user passed `--force`.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::WriteError;

/// Writable destination handed to a writer.
pub type Destination = BufWriter<Box<dyn Write>>;

/// Something a writer can write and seek in (to patch a header at the end).
pub trait WriteSeek: Write + Seek {}
impl<T: Write + Seek> WriteSeek for T {}

/// Destination for writers that seek back: a file, even for standard output (spooled
/// and copied out at commit).
pub type SeekableDestination = BufWriter<Box<dyn WriteSeek>>;

/// A seekable sink for `--dry-run`: it keeps the position, not the bytes.
#[derive(Default)]
struct Discard {
    pos: u64,
    len: u64,
}

impl Write for Discard {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pos += buf.len() as u64;
        self.len = self.len.max(self.pos);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for Discard {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.pos = match to {
            SeekFrom::Start(p) => p,
            SeekFrom::End(d) => self.len.saturating_add_signed(d),
            SeekFrom::Current(d) => self.pos.saturating_add_signed(d),
        };
        Ok(self.pos)
    }
}

const BUFFER: usize = 1 << 20;

pub struct Outputs {
    force: bool,
    dry_run: bool,
    pending: Vec<(tempfile::TempPath, PathBuf)>,
    /// Directories being written (a temporary directory beside each target).
    pending_dirs: Vec<(tempfile::TempDir, PathBuf)>,
    written: Vec<PathBuf>,
    /// Seekable output for standard output, copied there at commit.
    spooled_stdout: Option<tempfile::TempPath>,
    /// Writer settings from the command line (`tes.compression`), by key.
    settings: BTreeMap<&'static str, String>,
}

impl Outputs {
    pub fn new(force: bool) -> Outputs {
        Outputs {
            force,
            dry_run: false,
            pending: Vec::new(),
            pending_dirs: Vec::new(),
            written: Vec::new(),
            spooled_stdout: None,
            settings: BTreeMap::new(),
        }
    }

    /// Outputs that discard everything (for `--dry-run`).
    pub fn dry_run() -> Outputs {
        Outputs {
            force: true,
            dry_run: true,
            pending: Vec::new(),
            pending_dirs: Vec::new(),
            written: Vec::new(),
            spooled_stdout: None,
            settings: BTreeMap::new(),
        }
    }

    /// Sets a writer setting for every output of this run; the writer it is for reads it
    /// with [`Outputs::setting`].
    pub fn set(&mut self, key: &'static str, value: impl Into<String>) {
        self.settings.insert(key, value.into());
    }

    pub fn setting(&self, key: &str) -> Option<&str> {
        self.settings.get(key).map(String::as_str)
    }

    /// A destination for `target`; `-` is standard output.
    pub fn create(&mut self, target: &Path) -> Result<Destination, WriteError> {
        if self.dry_run {
            return Ok(BufWriter::new(Box::new(io::sink())));
        }
        if target == Path::new("-") {
            self.written.push(target.to_path_buf());
            return Ok(BufWriter::with_capacity(BUFFER, Box::new(io::stdout())));
        }
        Ok(BufWriter::with_capacity(
            BUFFER,
            Box::new(self.temp_file(target)?),
        ))
    }

    /// A destination for `target` that can seek; `-` is standard output.
    pub fn create_seekable(&mut self, target: &Path) -> Result<SeekableDestination, WriteError> {
        if self.dry_run {
            return Ok(BufWriter::new(Box::new(Discard::default())));
        }
        if target == Path::new("-") {
            let (file, path) = tempfile::NamedTempFile::new()
                .map_err(|e| WriteError::io(target, e))?
                .into_parts();
            self.spooled_stdout = Some(path);
            self.written.push(target.to_path_buf());
            return Ok(BufWriter::with_capacity(BUFFER, Box::new(file)));
        }
        Ok(BufWriter::with_capacity(
            BUFFER,
            Box::new(self.temp_file(target)?),
        ))
    }

    /// Checks that `target` may be written (absent unless `--force`, not already an output
    /// of this run) and gives the directory and name prefix of its temporary sibling.
    fn sibling(&self, target: &Path) -> Result<(PathBuf, String), WriteError> {
        if !self.force && target.exists() {
            return Err(WriteError::Exists(target.to_path_buf()));
        }
        let mut claimed =
            (self.pending.iter().map(|(_, t)| t)).chain(self.pending_dirs.iter().map(|(_, t)| t));
        if claimed.any(|t| t == target) {
            return Err(WriteError::Invalid(format!(
                "{} would be written twice",
                target.display()
            )));
        }
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok((dir.to_path_buf(), format!(".{name}.")))
    }

    /// A temporary file beside `target`, renamed onto it at commit.
    fn temp_file(&mut self, target: &Path) -> Result<File, WriteError> {
        let (dir, prefix) = self.sibling(target)?;
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".partial");
        #[cfg(unix)]
        {
            // Like any new file: 0666 less the umask, not tempfile's private 0600.
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(fs::Permissions::from_mode(0o666));
        }
        let temp = builder
            .tempfile_in(&dir)
            .map_err(|e| WriteError::io(target, e))?;
        let (file, path) = temp.into_parts();
        self.pending.push((path, target.to_path_buf()));
        Ok(file)
    }

    /// An empty directory to fill in place of the directory `target`. It appears whole at
    /// `target` on `commit` (replacing an existing one only with `--force`), or not at all.
    /// A dry run gets a scratch directory that is removed afterwards.
    pub fn create_dir(&mut self, target: &Path) -> Result<PathBuf, WriteError> {
        let mut builder = tempfile::Builder::new();
        #[cfg(unix)]
        {
            // Like any new directory: 0777 less the umask, not tempfile's private 0700.
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(fs::Permissions::from_mode(0o777));
        }
        if self.dry_run {
            let dir = builder
                .prefix(".simrec-dry-run.")
                .tempdir()
                .map_err(|e| WriteError::io(target, e))?;
            let path = dir.path().to_path_buf();
            self.pending_dirs.push((dir, PathBuf::new()));
            return Ok(path);
        }
        if target == Path::new("-") {
            return Err(WriteError::Unsupported(
                "a directory cannot be written to standard output; name an output directory".into(),
            ));
        }
        let (parent, prefix) = self.sibling(target)?;
        let dir = builder
            .prefix(&prefix)
            .suffix(".partial")
            .tempdir_in(parent)
            .map_err(|e| WriteError::io(target, e))?;
        let path = dir.path().to_path_buf();
        self.pending_dirs.push((dir, target.to_path_buf()));
        Ok(path)
    }

    /// Moves every finished output into place. Returns the paths written.
    pub fn commit(self) -> Result<Vec<PathBuf>, WriteError> {
        if let Some(spool) = &self.spooled_stdout {
            let stdout = Path::new("-");
            let mut file = File::open(spool).map_err(|e| WriteError::io(stdout, e))?;
            let mut out = io::stdout().lock();
            io::copy(&mut file, &mut out)
                .and_then(|_| out.flush())
                .map_err(|e| WriteError::io(stdout, e))?;
        }
        let mut written = self.written;
        if self.dry_run {
            return Ok(written);
        }
        for (temp, target) in self.pending_dirs {
            if target.exists() {
                if !self.force {
                    return Err(WriteError::Exists(target));
                }
                // Move the old one aside first, so the target is never half old, half new.
                let aside = temp.path().with_extension("old");
                fs::rename(&target, &aside).map_err(|e| WriteError::io(&target, e))?;
                fs::rename(temp.path(), &target).map_err(|e| WriteError::io(&target, e))?;
                let _ = temp.keep();
                let removed = if aside.is_dir() {
                    fs::remove_dir_all(&aside)
                } else {
                    fs::remove_file(&aside)
                };
                removed.map_err(|e| WriteError::io(&aside, e))?;
            } else {
                fs::rename(temp.path(), &target).map_err(|e| WriteError::io(&target, e))?;
                let _ = temp.keep();
            }
            written.push(target);
        }
        for (temp, target) in self.pending {
            if !self.force && target.exists() {
                return Err(WriteError::Exists(target));
            }
            temp.persist(&target)
                .map_err(|e| WriteError::io(&target, e.error))?;
            written.push(target);
        }
        Ok(written)
    }
}
