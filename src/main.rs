use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;
use simrec::cli::{self, Cli, Outcome};

fn main() -> ExitCode {
    tune_allocator();
    let parsed = Cli::parse();
    let result = cli::run(parsed);
    let flushed = io::stdout().flush();
    match (result, flushed) {
        (Ok(outcome), Ok(())) => match outcome {
            Outcome::Ok => ExitCode::SUCCESS,
            Outcome::Failed => ExitCode::from(1),
            Outcome::Loss => ExitCode::from(3),
        },
        (Err(e), _) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        (Ok(_), Err(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        (Ok(_), Err(e)) => {
            eprintln!("error: writing to standard output: {e}");
            ExitCode::from(1)
        }
        (Err(e), _) => {
            eprintln!("error: {e:#}");
            if let Some(hint) = cli::hint_of(&e) {
                eprintln!("  hint: {hint}");
            }
            ExitCode::from(if cli::is_usage_error(&e) { 2 } else { 1 })
        }
    }
}

/// `simrec cat big.traj | head` ends quietly, like other Unix tools.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// glibc's malloc serves blocks above a threshold (128 KiB, raised as such blocks are
/// freed) with fresh `mmap`s and gives the top of the heap back to the kernel once 128 KiB
/// of it is free. The Parquet encoder allocates and frees a compression buffer of about
/// 1 MiB per page and a row group's worth of pages (tens of MiB) at a time, so each page
/// and each row group was faulted in anew: on the Elodin benchmark 120,000 page faults,
/// a fifth of the CPU time of `convert`. Serving blocks up to 32 MiB from the heap and
/// keeping up to 64 MiB of free heap makes them reuse memory that is already mapped
/// (23,000 faults). Peak RSS does not grow: it is set by what is live at once.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_allocator() {
    // SAFETY: mallopt only sets allocator parameters; it is called first thing in main,
    // before any other thread exists, and an unaccepted value leaves the default.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_allocator() {}
