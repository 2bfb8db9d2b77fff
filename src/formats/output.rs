//! Output files that appear whole or not at all.
//!
//! A writer asks for each file it needs; it gets a temporary file beside the
//! target. Only `commit` renames them into place, after every writer has
//! finished, so an error or an interrupted run never leaves a half-written
//! output, and an existing file is refused unless the user passed `--force`.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::WriteError;

/// Writable destination handed to a writer.
pub type Destination = BufWriter<Box<dyn Write>>;

const BUFFER: usize = 1 << 20;

pub struct Outputs {
    force: bool,
    dry_run: bool,
    pending: Vec<(tempfile::TempPath, PathBuf)>,
    written: Vec<PathBuf>,
}

impl Outputs {
    pub fn new(force: bool) -> Outputs {
        Outputs {
            force,
            dry_run: false,
            pending: Vec::new(),
            written: Vec::new(),
        }
    }

    /// Outputs that discard everything (for `--dry-run`).
    pub fn dry_run() -> Outputs {
        Outputs {
            force: true,
            dry_run: true,
            pending: Vec::new(),
            written: Vec::new(),
        }
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
        let file = self.temp_file(target)?;
        Ok(BufWriter::with_capacity(BUFFER, Box::new(file)))
    }

    /// A seekable destination for `target`, for writers that patch a header when they
    /// finish (a temporary file renamed at commit, like `create`). `None` for standard
    /// output and dry runs, which cannot seek: use `create` then.
    pub fn create_seekable(
        &mut self,
        target: &Path,
    ) -> Result<Option<BufWriter<fs::File>>, WriteError> {
        if self.dry_run || target == Path::new("-") {
            return Ok(None);
        }
        let file = self.temp_file(target)?;
        Ok(Some(BufWriter::with_capacity(BUFFER, file)))
    }

    /// A temporary file beside `target`, registered to be renamed into place at commit.
    fn temp_file(&mut self, target: &Path) -> Result<fs::File, WriteError> {
        if !self.force && target.exists() {
            return Err(WriteError::Exists(target.to_path_buf()));
        }
        if self.pending.iter().any(|(_, t)| t == target) {
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
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".partial");
        #[cfg(unix)]
        {
            // Like any new file: 0666 less the umask, not tempfile's private 0600.
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(fs::Permissions::from_mode(0o666));
        }
        let temp = builder
            .tempfile_in(dir)
            .map_err(|e| WriteError::io(target, e))?;
        let (file, path) = temp.into_parts();
        self.pending.push((path, target.to_path_buf()));
        Ok(file)
    }

    /// Moves every finished output into place. Returns the paths written.
    pub fn commit(self) -> Result<Vec<PathBuf>, WriteError> {
        let mut written = self.written;
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
