//! Diagnostics on standard error that `--quiet` silences: progress, notes, what was written,
//! warnings and loss tables. Errors are always printed (by `main`, or by a command that
//! reports one file's failure and goes on), and exit codes do not change.

use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);

pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// `eprintln!` unless `--quiet`.
macro_rules! say {
    ($($arg:tt)*) => {
        if !$crate::cli::diag::quiet() {
            eprintln!($($arg)*);
        }
    };
}
pub(crate) use say;
