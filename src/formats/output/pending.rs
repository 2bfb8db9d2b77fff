//! The temporary outputs of this process, and the parent directories it created for them,
//! so that an interrupt (SIGINT, SIGTERM, SIGHUP) can remove them before the process ends,
//! and the partials a killed run left behind can be told from real outputs.
//!
//! A temporary output is named `.NAME.PID-RANDOM.partial` beside its target `NAME`: hidden,
//! marked as unfinished, and carrying the process id that writes it, so a later run can remove
//! it once that process is gone.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

const SUFFIX: &str = ".partial";

/// What an interrupt removes.
pub(super) struct Pending {
    /// Temporary files and directories.
    pub temps: Vec<PathBuf>,
    /// Directories created for outputs not yet committed, outermost first: removed after
    /// the temporaries, innermost first, each only if it is empty by then.
    pub dirs: Vec<PathBuf>,
}

static PENDING: Mutex<Pending> = Mutex::new(Pending {
    temps: Vec::new(),
    dirs: Vec::new(),
});

/// The registry, locked. While a caller holds it, an interrupt waits: a commit that renames
/// outputs into place is never cut in half.
pub(super) fn lock() -> MutexGuard<'static, Pending> {
    // A panic elsewhere cannot leave the lists inconsistent: they are only pushed and retained.
    PENDING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(super) fn register(path: &Path) {
    lock().temps.push(path.to_path_buf());
}

pub(super) fn unregister(paths: &[PathBuf]) {
    lock().temps.retain(|p| !paths.contains(p));
}

pub(super) fn unregister_dirs(dirs: &[PathBuf]) {
    lock().dirs.retain(|p| !dirs.contains(p));
}

fn remove(path: &Path) {
    let _ = match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(_) => Ok(()),
    };
}

/// `fs::remove_dir_all`, again while it fails: the writer's thread keeps adding entries (an
/// Elodin DB's component folders) until the process ends, and one added after its folder
/// was emptied makes the folder's removal fail.
fn remove_dir_all(path: &Path) -> std::io::Result<()> {
    let mut result = fs::remove_dir_all(path);
    for _ in 0..100 {
        if result.is_ok() || !path.exists() {
            return Ok(());
        }
        result = fs::remove_dir_all(path);
    }
    result
}

/// Removes every temporary output of this process, then the directories it created that are
/// empty, and ends it with `code`. For the interrupt handler: it keeps the registry locked
/// until the process is gone, so nothing new is created meanwhile.
pub fn remove_all_and_exit(code: i32) -> ! {
    let pending = lock();
    for path in &pending.temps {
        remove(path);
    }
    for dir in pending.dirs.iter().rev() {
        let _ = fs::remove_dir(dir);
    }
    std::process::exit(code)
}

/// The prefix of the temporary siblings of `name` written by this process.
pub(super) fn prefix(name: &str) -> String {
    format!(".{name}.{}-", std::process::id())
}

pub(super) fn suffix() -> &'static str {
    SUFFIX
}

/// The process id in a temporary output's name, if `name` is one (`.NAME.PID-RANDOM.partial`).
fn writer_pid(name: &str) -> Option<u32> {
    let inner = name.strip_prefix('.')?.strip_suffix(SUFFIX)?;
    let (_, tail) = inner.rsplit_once('.')?;
    let (pid, random) = tail.split_once('-')?;
    (!random.is_empty()).then_some(())?;
    pid.parse().ok()
}

/// Whether `path` is a temporary output of a simrec run (finished, killed or still running).
pub fn is_partial(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| writer_pid(n).is_some())
}

/// Removes the temporary siblings of `dir/name` whose writing process no longer runs (a run
/// killed with SIGKILL, or a machine that went down). Only where the process table can be
/// asked (`/proc`); elsewhere they stay, and readers refuse them by name.
pub(super) fn remove_stale(dir: &Path, name: &str) {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let own = format!(".{name}.");
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(n) = file_name.to_str() else {
            continue;
        };
        // Only the siblings of this target: `.NAME.PID-RANDOM.partial` with nothing but the
        // pid and random part after `.NAME.`.
        let Some(tail) = n.strip_prefix(&own).and_then(|r| r.strip_suffix(SUFFIX)) else {
            continue;
        };
        if tail.contains('.') {
            continue;
        }
        match writer_pid(n) {
            Some(pid) if !proc.join(pid.to_string()).exists() => remove(&entry.path()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_names_carry_the_writer_pid() {
        assert_eq!(writer_pid(".run.traj.4242-AbC123.partial"), Some(4242));
        assert_eq!(writer_pid(".out.4242-x.partial"), Some(4242));
        for not in [
            "run.traj",
            ".run.traj.partial",
            ".run.traj.42-.partial",
            ".run.traj.x-abc.partial",
            "run.traj.42-abc.partial",
        ] {
            assert_eq!(writer_pid(not), None, "{not}");
        }
        assert!(is_partial(Path::new("/a/.b.3es.17-Zz9.partial")));
        assert!(!is_partial(Path::new("/a/b.3es")));
    }

    #[test]
    fn stale_siblings_of_dead_writers_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        // No process has pid 0 in /proc; this one runs.
        let dead = dir.path().join(".out.jsonl.0-abc.partial");
        let alive = dir
            .path()
            .join(format!(".out.jsonl.{}-abc.partial", std::process::id()));
        let other_target = dir.path().join(".other.jsonl.0-abc.partial");
        let user_file = dir.path().join(".out.jsonl.notes");
        for p in [&dead, &alive, &other_target, &user_file] {
            fs::write(p, b"x").unwrap();
        }
        let dead_dir = dir.path().join(".out.jsonl.0-dir.partial");
        fs::create_dir(&dead_dir).unwrap();
        fs::write(dead_dir.join("metadata.json"), b"{}").unwrap();
        remove_stale(dir.path(), "out.jsonl");
        if Path::new("/proc/self").exists() {
            assert!(!dead.exists() && !dead_dir.exists());
        }
        assert!(alive.exists() && other_target.exists() && user_file.exists());
    }
}
