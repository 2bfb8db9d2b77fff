//! Output files that appear whole or not at all, and never at the cost of something else.
//!
//! A writer asks for each file (or directory) it needs; it gets a temporary sibling of the
//! target. Only `commit` renames them into place, after every writer has finished, so an
//! error or an interrupted run never leaves a half-written output. Before anything is
//! written, each target is checked ([`Outputs::check`]): an existing one is refused unless
//! `--force`, and even then only a regular file, an empty directory or a directory that is
//! a recording of the format being written, holding nothing its writer would not write, is
//! replaced; nothing is written over an input, around one or inside one. Missing parent
//! directories are created (and removed again if the run fails or is interrupted before
//! anything is committed).

pub mod pending;

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::options::GivenFlags;
use super::{Failure, Refusal, Unsupported, WriteError};

pub use pending::{is_partial, remove_all_and_exit};

/// Writable destination handed to a writer.
pub type Destination = BufWriter<Box<dyn Write>>;

/// Something a writer can write and seek in (to patch a header at the end).
pub trait WriteSeek: Write + Seek + Send {}
impl<T: Write + Seek + Send> WriteSeek for T {}

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

/// Whether `--force` may replace an existing directory: `Err(why not)` unless it is a
/// recording of the format being written that holds nothing its writer would not write.
pub type MayReplace = Box<dyn Fn(&Path) -> Result<(), String>>;

/// What is at a target before the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Existing {
    Nothing,
    File,
    Directory,
    /// A FIFO, a terminal or a device (`/dev/null`): written to directly, never replaced.
    Special,
}

fn existing(target: &Path) -> Existing {
    match fs::metadata(target) {
        Err(_) => Existing::Nothing,
        Ok(m) if m.is_dir() => Existing::Directory,
        Ok(m) if m.is_file() => Existing::File,
        Ok(_) => Existing::Special,
    }
}

/// The path as the file system resolves it, also for a path that does not exist yet (its
/// parent resolved, its name kept).
fn resolved(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => {
            let parent = if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            };
            resolved(parent).join(name)
        }
        _ => path.to_path_buf(),
    }
}

/// How writing `target` would touch one of `inputs` (resolved paths, as
/// [`Outputs::protect`] keeps them): `target` is one, holds one, or is inside one (a file in
/// an `.icarec` or Elodin directory). Symbolic links are followed on both sides.
pub fn clash_with_inputs(target: &Path, inputs: &[PathBuf]) -> Option<String> {
    if target == Path::new("-") {
        return None;
    }
    let at = resolved(target);
    let input = inputs
        .iter()
        .find(|i| **i == at || i.starts_with(&at) || at.starts_with(i))?;
    Some(if *input == at {
        "is an input of this command".to_string()
    } else if input.starts_with(&at) {
        format!("holds {}, an input of this command", input.display())
    } else {
        format!("is inside {}, an input of this command", input.display())
    })
}

/// Inputs as [`clash_with_inputs`] compares them: resolved, standard input left out.
pub fn resolved_inputs(inputs: &[PathBuf]) -> Vec<PathBuf> {
    inputs
        .iter()
        .filter(|p| p.as_os_str() != "-")
        .map(|p| resolved(p))
        .collect()
}

/// The first entry of the directory `dir` (a path relative to it; depth first, in name
/// order) that `writes` does not claim. `writes` is given each file and directory as a
/// relative path and as the path to look at; a symbolic link, a special file or a directory
/// that cannot be listed is never claimed.
pub fn foreign_entry(dir: &Path, writes: &dyn Fn(&Path, &Path) -> bool) -> Option<PathBuf> {
    foreign_entry_under(dir, Path::new(""), writes)
}

fn foreign_entry_under(
    dir: &Path,
    relative: &Path,
    writes: &dyn Fn(&Path, &Path) -> bool,
) -> Option<PathBuf> {
    let listed = fs::read_dir(dir.join(relative))
        .and_then(|entries| entries.map(|e| e.map(|e| e.file_name())).collect());
    let mut names: Vec<std::ffi::OsString> = match listed {
        Ok(names) => names,
        Err(_) => return Some(relative.to_path_buf()),
    };
    names.sort();
    for name in names {
        let entry = relative.join(name);
        let path = dir.join(&entry);
        let kind = fs::symlink_metadata(&path).map(|m| m.file_type()).ok();
        let claimed = kind.is_some_and(|k| k.is_file() || k.is_dir()) && writes(&entry, &path);
        if !claimed {
            return Some(entry);
        }
        if kind.is_some_and(|k| k.is_dir()) {
            if let Some(found) = foreign_entry_under(dir, &entry, writes) {
                return Some(found);
            }
        }
    }
    None
}

/// A new file beside `temp` (a temporary output of [`Outputs::create_path`]), for a writer
/// that rewrites its output whole at the end: it writes the new file, then
/// [`replace_with_scratch`] renames it onto `temp`. Registered like every temporary output,
/// so an interrupt removes it too.
pub fn scratch_beside(temp: &Path) -> Result<(File, tempfile::TempPath), WriteError> {
    let dir = match temp.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = temp
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    registered_temp(temp, dir, &pending::prefix(&name))
}

/// A new temporary file in `dir` (its name the prefix, random, `.partial`), registered as
/// pending.
fn registered_temp(
    target: &Path,
    dir: &Path,
    prefix: &str,
) -> Result<(File, tempfile::TempPath), WriteError> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix).suffix(pending::suffix());
    #[cfg(unix)]
    {
        // Like any new file: 0666 less the umask, not tempfile's private 0600.
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    // Registered while the registry is locked, so an interrupt either sees it or comes
    // before it exists.
    let mut registry = pending::lock();
    let temp = builder
        .tempfile_in(dir)
        .map_err(|e| WriteError::io(target, e))?;
    registry.temps.push(temp.path().to_path_buf());
    drop(registry);
    Ok(temp.into_parts())
}

/// Renames `scratch` (from [`scratch_beside`]) onto `temp`. Dropped instead (an error on the
/// way), the scratch file is removed.
pub fn replace_with_scratch(scratch: tempfile::TempPath, temp: &Path) -> Result<(), WriteError> {
    let path = scratch.to_path_buf();
    scratch
        .persist(temp)
        .map_err(|e| WriteError::io(temp, e.error))?;
    pending::unregister(&[path]);
    Ok(())
}

/// Whether an output path is written with a trailing `/` (a directory, by the user's word).
pub fn ends_with_separator(path: &Path) -> bool {
    (path.as_os_str().to_string_lossy()).ends_with(['/', std::path::MAIN_SEPARATOR])
}

/// Whether an output path means a directory: it ends with `/`, or is an existing directory.
pub fn names_directory(path: &Path) -> bool {
    ends_with_separator(path) || path.is_dir()
}

pub struct Outputs {
    force: bool,
    dry_run: bool,
    pending: Vec<(tempfile::TempPath, PathBuf)>,
    /// Directories being written (a temporary directory beside each target).
    pending_dirs: Vec<(tempfile::TempDir, PathBuf)>,
    written: Vec<PathBuf>,
    /// Seekable outputs for standard output or a special file, copied there at commit.
    spooled: Vec<(tempfile::TempPath, PathBuf)>,
    /// The writer flags of the run, checked against the format written; its writer parses
    /// them into its typed options.
    pub flags: GivenFlags,
    /// The run's input paths, one a line, for writers that record where their data came
    /// from (the Parquet table's metadata).
    pub source_paths: Option<String>,
    /// The recording's stable name (`pipeline::batch::recording_name`), for writers that
    /// file it under its name in a shared directory (the lake).
    pub recording: Option<String>,
    /// The command's inputs, resolved: never written over.
    inputs: Vec<PathBuf>,
    may_replace: Option<MayReplace>,
    /// Parent directories this run created, outermost first.
    created_dirs: Vec<PathBuf>,
    committed: bool,
}

impl Outputs {
    pub fn new(force: bool) -> Outputs {
        Outputs {
            force,
            dry_run: false,
            pending: Vec::new(),
            pending_dirs: Vec::new(),
            written: Vec::new(),
            spooled: Vec::new(),
            flags: GivenFlags::default(),
            source_paths: None,
            recording: None,
            inputs: Vec::new(),
            may_replace: None,
            created_dirs: Vec::new(),
            committed: false,
        }
    }

    /// Outputs that check every target as a real run would, then discard what is written
    /// (for `--dry-run`).
    pub fn dry_run(force: bool) -> Outputs {
        let mut outputs = Outputs::new(force);
        outputs.dry_run = true;
        outputs
    }

    /// Inputs of the command: refused as outputs, as directories that hold them and as
    /// places inside them ([`clash_with_inputs`]).
    pub fn protect(&mut self, inputs: &[PathBuf]) {
        self.inputs.extend(resolved_inputs(inputs));
    }

    /// How to tell a non-empty directory that `--force` may replace (a recording of the
    /// format being written, and nothing else). Without it, only an empty directory is.
    pub fn replace_directories_when(&mut self, may_replace: MayReplace) {
        self.may_replace = Some(may_replace);
    }

    /// Checks that `target` may be written as a file (`directory` false) or a directory,
    /// exactly as the run will: for `--dry-run`, and by every `create`. `-` (standard output)
    /// can always be written, as a file.
    pub fn check(&self, target: &Path, directory: bool) -> Result<(), WriteError> {
        self.check_target(target, directory)?;
        self.check_parent(target)
    }

    fn check_target(&self, target: &Path, directory: bool) -> Result<Existing, WriteError> {
        if target == Path::new("-") {
            return if directory {
                Err(WriteError::Unsupported(Unsupported::Limit(
                    "a directory cannot be written to standard output; name an output directory",
                )))
            } else {
                Ok(Existing::Special)
            };
        }
        let refuse = |reason: Refusal| {
            Err(WriteError::Refused {
                path: target.to_path_buf(),
                reason,
            })
        };
        if !directory && ends_with_separator(target) {
            return Err(WriteError::Unsupported(Unsupported::Limit(
                "the name ends with `/` (a directory), but this output format writes one file; \
                 drop the `/`, or name a directory without a format's extension for the default \
                 directory output",
            )));
        }
        if let Some(what) = clash_with_inputs(target, &self.inputs) {
            return refuse(Refusal::Input(what));
        }
        let claimed = (self.pending.iter().map(|(_, t)| t))
            .chain(self.pending_dirs.iter().map(|(_, t)| t))
            .chain(self.written.iter());
        if claimed.into_iter().any(|t| t == target) {
            return Err(WriteError::failed(target, Failure::WrittenTwice));
        }
        let found = existing(target);
        match (found, directory) {
            (Existing::Nothing, _) => Ok(found),
            (Existing::Special, false) => Ok(found),
            (Existing::Special, true) => refuse(Refusal::NotADirectory),
            (_, _) if !self.force => Err(WriteError::Exists(target.to_path_buf())),
            (Existing::File, false) => Ok(found),
            (Existing::File, true) => refuse(Refusal::IsAFile),
            (Existing::Directory, false) => refuse(Refusal::IsADirectory),
            (Existing::Directory, true) => {
                let empty = fs::read_dir(target)
                    .map(|mut d| d.next().is_none())
                    .unwrap_or(false);
                let replaceable = match &self.may_replace {
                    _ if empty => Ok(()),
                    Some(may_replace) => may_replace(target),
                    None => Err("holds other files".into()),
                };
                match replaceable {
                    Ok(()) => Ok(found),
                    Err(why) => refuse(Refusal::NotReplaceable(why)),
                }
            }
        }
    }

    /// The directory the target goes in, which must exist or be creatable.
    fn check_parent(&self, target: &Path) -> Result<(), WriteError> {
        if target == Path::new("-") {
            return Ok(());
        }
        let parent = parent_of(target);
        let mut ancestor = parent.as_path();
        while !ancestor.exists() {
            match ancestor.parent() {
                Some(p) if !p.as_os_str().is_empty() => ancestor = p,
                _ => {
                    ancestor = Path::new(".");
                    break;
                }
            }
        }
        if !ancestor.is_dir() {
            return Err(WriteError::io(
                target,
                io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("{} is not a directory", ancestor.display()),
                ),
            ));
        }
        // An unnamed temporary file: proves the directory takes new files, leaves nothing.
        tempfile::tempfile_in(ancestor)
            .map(drop)
            .map_err(|e| WriteError::io(target, e))
    }

    /// Creates the target's missing parent directories, remembering them to remove again if
    /// the run fails or is interrupted.
    fn make_parent(&mut self, target: &Path) -> Result<PathBuf, WriteError> {
        let parent = parent_of(target);
        let mut missing = Vec::new();
        let mut p = parent.as_path();
        while !p.as_os_str().is_empty() && !p.exists() {
            missing.push(p.to_path_buf());
            p = p.parent().unwrap_or(Path::new(""));
        }
        missing.reverse();
        // Registered while the registry is locked, so an interrupt either sees them or comes
        // before they exist.
        let mut registry = pending::lock();
        let created = fs::create_dir_all(&parent);
        registry.dirs.extend(missing.iter().cloned());
        drop(registry);
        self.created_dirs.extend(missing);
        created.map_err(|e| WriteError::io(target, e))?;
        Ok(parent)
    }

    /// Checks `target`, then gives the directory and name prefix of its temporary sibling,
    /// clearing away partials a killed run left for the same target.
    fn sibling(
        &mut self,
        target: &Path,
        directory: bool,
    ) -> Result<(PathBuf, String, Existing), WriteError> {
        let found = self.check_target(target, directory)?;
        let dir = self.make_parent(target)?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        pending::remove_stale(&dir, &name);
        Ok((dir, pending::prefix(&name), found))
    }

    /// A destination for `target`; `-` is standard output.
    pub fn create(&mut self, target: &Path) -> Result<Destination, WriteError> {
        if self.dry_run {
            self.check(target, false)?;
            self.written.push(target.to_path_buf());
            return Ok(BufWriter::new(Box::new(io::sink())));
        }
        if target == Path::new("-") {
            self.written.push(target.to_path_buf());
            return Ok(BufWriter::with_capacity(BUFFER, Box::new(io::stdout())));
        }
        let (dir, prefix, found) = self.sibling(target, false)?;
        if found == Existing::Special {
            let file = OpenOptions::new()
                .write(true)
                .open(target)
                .map_err(|e| WriteError::io(target, e))?;
            self.written.push(target.to_path_buf());
            return Ok(BufWriter::with_capacity(BUFFER, Box::new(file)));
        }
        let file = self.temp_file(target, &dir, &prefix)?;
        Ok(BufWriter::with_capacity(BUFFER, Box::new(file)))
    }

    /// A destination for `target` that can seek; `-` is standard output.
    pub fn create_seekable(&mut self, target: &Path) -> Result<SeekableDestination, WriteError> {
        if self.dry_run {
            self.check(target, false)?;
            self.written.push(target.to_path_buf());
            return Ok(BufWriter::new(Box::new(Discard::default())));
        }
        let direct = target == Path::new("-") || existing(target) == Existing::Special;
        if direct {
            // Neither can seek: spool to a temporary file, copied out at commit.
            self.check_target(target, false)?;
            let (file, path) = tempfile::NamedTempFile::new()
                .map_err(|e| WriteError::io(target, e))?
                .into_parts();
            pending::register(&path);
            self.spooled.push((path, target.to_path_buf()));
            self.written.push(target.to_path_buf());
            return Ok(BufWriter::with_capacity(BUFFER, Box::new(file)));
        }
        let (dir, prefix, _) = self.sibling(target, false)?;
        let file = self.temp_file(target, &dir, &prefix)?;
        Ok(BufWriter::with_capacity(BUFFER, Box::new(file)))
    }

    /// The path of a temporary file for `target`, for a writer whose library creates and
    /// reopens its output by path (HDF5): renamed onto `target` at commit, as the file of
    /// [`Outputs::create`] is. Standard output and special files get a spooled file copied
    /// there at commit; a dry run gets a scratch file that goes with the run.
    pub fn create_path(&mut self, target: &Path) -> Result<PathBuf, WriteError> {
        let scratch = |target: &Path| {
            tempfile::NamedTempFile::new()
                .map(|f| f.into_temp_path())
                .map_err(|e| WriteError::io(target, e))
        };
        if self.dry_run {
            self.check(target, false)?;
            self.written.push(target.to_path_buf());
            let temp = scratch(target)?;
            let path = temp.to_path_buf();
            // Never renamed (a dry run's commit stops before), removed with the run.
            self.pending.push((temp, target.to_path_buf()));
            return Ok(path);
        }
        if target == Path::new("-") || existing(target) == Existing::Special {
            self.check_target(target, false)?;
            let temp = scratch(target)?;
            pending::register(&temp);
            let path = temp.to_path_buf();
            self.spooled.push((temp, target.to_path_buf()));
            self.written.push(target.to_path_buf());
            return Ok(path);
        }
        let (dir, prefix, _) = self.sibling(target, false)?;
        drop(self.temp_file(target, &dir, &prefix)?);
        Ok(self
            .pending
            .last()
            .map(|(temp, _)| temp.to_path_buf())
            .unwrap_or_default())
    }

    /// A temporary file in `dir`, renamed onto `target` at commit.
    fn temp_file(&mut self, target: &Path, dir: &Path, prefix: &str) -> Result<File, WriteError> {
        let (file, path) = registered_temp(target, dir, prefix)?;
        self.pending.push((path, target.to_path_buf()));
        Ok(file)
    }

    /// An empty directory to fill in place of the directory `target`. It appears whole at
    /// `target` on `commit` (replacing an existing one only as [`Outputs::check`] allows),
    /// or not at all. A dry run gets a scratch directory that is removed afterwards.
    pub fn create_dir(&mut self, target: &Path) -> Result<PathBuf, WriteError> {
        let mut builder = tempfile::Builder::new();
        #[cfg(unix)]
        {
            // Like any new directory: 0777 less the umask, not tempfile's private 0700.
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(fs::Permissions::from_mode(0o777));
        }
        let (parent, prefix) = if self.dry_run {
            self.check(target, true)?;
            (std::env::temp_dir(), pending::prefix("simrec-dry-run"))
        } else {
            let (dir, prefix, _) = self.sibling(target, true)?;
            (dir, prefix)
        };
        let mut registry = pending::lock();
        let dir = builder
            .prefix(&prefix)
            .suffix(pending::suffix())
            .tempdir_in(parent)
            .map_err(|e| WriteError::io(target, e))?;
        registry.temps.push(dir.path().to_path_buf());
        drop(registry);
        let path = dir.path().to_path_buf();
        self.pending_dirs.push((dir, target.to_path_buf()));
        Ok(path)
    }

    /// Moves every finished output into place. Returns the paths written.
    pub fn commit(mut self) -> Result<Vec<PathBuf>, WriteError> {
        for (spool, target) in std::mem::take(&mut self.spooled) {
            copy_out(&spool, &target)?;
            pending::unregister(&[spool.to_path_buf()]);
        }
        let mut written = std::mem::take(&mut self.written);
        if self.dry_run {
            self.committed = true;
            return Ok(written);
        }
        // An interrupt waits until every output is in place.
        let _registry = pending::lock();
        let mut done: Vec<PathBuf> = Vec::new();
        for (temp, target) in std::mem::take(&mut self.pending_dirs) {
            self.check_target(&target, true)?;
            done.push(temp.path().to_path_buf());
            if target.exists() {
                // The old one goes aside, the new one in, then the old one is removed: the
                // target is never half old, half new, and the old one goes only once the new
                // one is complete.
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
        for (temp, target) in std::mem::take(&mut self.pending) {
            self.check_target(&target, false)?;
            done.push(temp.to_path_buf());
            temp.persist(&target)
                .map_err(|e| WriteError::io(&target, e.error))?;
            written.push(target);
        }
        drop(_registry);
        pending::unregister(&done);
        pending::unregister_dirs(&self.created_dirs);
        self.committed = true;
        Ok(written)
    }
}

/// The directory `target` goes in (`.` for a bare name).
fn parent_of(target: &Path) -> PathBuf {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Copies a spooled output to standard output (`-`) or the special file it is for.
fn copy_out(spool: &Path, target: &Path) -> Result<(), WriteError> {
    let mut file = File::open(spool).map_err(|e| WriteError::io(target, e))?;
    let copied = if target == Path::new("-") {
        let mut out = io::stdout().lock();
        io::copy(&mut file, &mut out).and_then(|_| out.flush())
    } else {
        OpenOptions::new()
            .write(true)
            .open(target)
            .and_then(|mut out| io::copy(&mut file, &mut out).and_then(|_| out.flush()))
    };
    copied.map_err(|e| WriteError::io(target, e))
}

impl Drop for Outputs {
    /// A run that did not commit leaves nothing: its temporary files and directories go
    /// with their handles, and the parent directories it created go if they are still empty.
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        let temps: Vec<PathBuf> = (self.pending.iter().map(|(t, _)| t.to_path_buf()))
            .chain(
                self.pending_dirs
                    .iter()
                    .map(|(t, _)| t.path().to_path_buf()),
            )
            .chain(self.spooled.iter().map(|(t, _)| t.to_path_buf()))
            .collect();
        self.pending.clear();
        self.pending_dirs.clear();
        self.spooled.clear();
        pending::unregister(&temps);
        for dir in self.created_dirs.iter().rev() {
            let _ = fs::remove_dir(dir);
        }
        pending::unregister_dirs(&self.created_dirs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn force_never_replaces_a_directory_of_other_files_or_an_input() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        fs::create_dir(&out).unwrap();
        fs::write(out.join("thesis.tex"), b"years of work").unwrap();
        let mut outputs = Outputs::new(true);
        let refused = outputs.create_dir(&out).unwrap_err();
        assert!(matches!(refused, WriteError::Refused { .. }), "{refused}");
        assert_eq!(names(&out), ["thesis.tex"]);
        assert_eq!(names(dir.path()), ["out"], "no temporary left");

        // A directory of the kind being written is replaced; so is an empty one.
        let mut outputs = Outputs::new(true);
        outputs.replace_directories_when(Box::new(|p| {
            match foreign_entry(p, &|e, _| e == Path::new("thesis.tex")) {
                None => Ok(()),
                Some(e) => Err(format!("holds {}", e.display())),
            }
        }));
        let temp = outputs.create_dir(&out).unwrap();
        fs::write(temp.join("metadata.json"), b"{}").unwrap();
        outputs.commit().unwrap();
        assert_eq!(names(&out), ["metadata.json"]);

        // The input itself, and a directory that holds an input.
        let input = dir.path().join("in.traj");
        fs::write(&input, b"data").unwrap();
        let mut outputs = Outputs::new(true);
        outputs.protect(std::slice::from_ref(&input));
        assert!(matches!(
            outputs.create(&input),
            Err(WriteError::Refused { .. })
        ));
        assert!(matches!(
            outputs.create_dir(dir.path()),
            Err(WriteError::Refused { .. })
        ));
        assert_eq!(fs::read(&input).unwrap(), b"data");
    }

    #[test]
    fn missing_parents_are_created_and_removed_again_when_nothing_is_committed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a/b/out.jsonl");
        let mut outputs = Outputs::new(false);
        outputs.create(&target).unwrap();
        assert!(dir.path().join("a/b").is_dir());
        drop(outputs);
        assert!(names(dir.path()).is_empty());

        let mut outputs = Outputs::new(false);
        let mut out = outputs.create(&target).unwrap();
        out.write_all(b"{}\n").unwrap();
        drop(out);
        outputs.commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"{}\n");
    }

    #[test]
    fn a_dry_run_fails_where_the_run_would_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.jsonl");
        fs::write(&target, b"old").unwrap();
        let mut outputs = Outputs::dry_run(false);
        assert!(matches!(
            outputs.create(&target),
            Err(WriteError::Exists(_))
        ));
        let file_as_parent = target.join("x.jsonl");
        assert!(Outputs::dry_run(true).create(&file_as_parent).is_err());
        let mut outputs = Outputs::dry_run(true);
        outputs
            .create(&dir.path().join("new/deeper/x.jsonl"))
            .unwrap();
        outputs.commit().unwrap();
        assert_eq!(names(dir.path()), ["out.jsonl"]);
    }
}
