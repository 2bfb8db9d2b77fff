use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;
use simrec::cli::{self, Cli, Outcome};

/// Readers build a record per message, each with a handful of small allocations (keys,
/// arrays, packet bytes), and the Parquet encoder takes and frees large page buffers;
/// mimalloc makes the first markedly cheaper than glibc's malloc (3es full decode) and
/// keeps the second mapped instead of faulting it in anew (Elodin convert); see
/// docs/performance.md.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// On SIGINT, SIGTERM or SIGHUP, removes the temporary outputs of the run before the process
/// ends (exit 128 + the signal's number, as shells report it): an interrupted command leaves
/// nothing half-written behind.
fn remove_partials_on_interrupt() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            simrec::formats::output::remove_all_and_exit(128 + signal);
        }
    });
}

fn main() -> ExitCode {
    let parsed = Cli::parse();
    remove_partials_on_interrupt();
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
