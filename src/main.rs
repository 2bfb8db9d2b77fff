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

/// `mi_option_purge_delay` in the bundled mimalloc v2's `mimalloc.h` (the Rust bindings do
/// not name it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
const PURGE_DELAY_MS: std::os::raw::c_long = 2;

/// Memory freed is given back to the system after 2 ms, not mimalloc's 10: `convert --each`
/// runs conversions side by side, and with 10 ms two Parquet conversions peaked over issue
/// 14's 128 MiB. The cost is a little system time in the Elodin conversions
/// (docs/performance.md, "`--each` within 128 MiB: mimalloc's purge delay").
/// `MIMALLOC_PURGE_DELAY` still decides when it is set.
fn tune_allocator() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one integer option of the allocator; mimalloc stores options
        // atomically and reads this one at each purge. No other thread exists yet.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
    }
}

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
    tune_allocator();
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
            ExitCode::from(cli::exit_code(&e))
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
