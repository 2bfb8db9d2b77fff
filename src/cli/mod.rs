//! The command line: one file per subcommand. Commands return an [`Outcome`]; only
//! `main` turns it into an exit code, after every output is flushed.

mod batch;
mod cat;
mod common;
mod convert;
mod diag;
mod diff;
mod each;
mod format_options;
mod format_select;
mod inspect;
mod merge;
mod plot;
mod progress;
mod recover;
mod slice;
mod snapshot;
mod validate;
mod window;

use std::io::Write;

use clap::{CommandFactory, Parser, Subcommand};

use crate::formats::{ErrorKind, OptionError, ReadError, WriteError};
use crate::model::time_scale::UnknownTimeFormat;
use crate::pipeline::plot::PlotRefusal;
use crate::pipeline::select::PatternError;
use crate::pipeline::{PipelineError, RequestError};
pub use crate::report::render::error_text;

/// How a command finished, when it did not fail outright.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Ok,
    /// Exit 1: the command ran, and what it checked has errors (`validate`, `recover`).
    Failed,
    /// Exit 3: finished, but with data loss (or warnings the user asked to treat as such).
    Loss,
}

/// A command line that makes sense to clap but not to simrec (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The long help, its list of formats from the registry.
fn long_about() -> String {
    format!(
        "Inspect, validate, convert, slice and merge simulation recordings.\n\n\
         Formats: {}.\n\
         Times: 12.5 or 12.5s, 850ms, 3us, 10ns, #120 (frame 120), -5s (5 s before the end).\n\
         Exit codes: 0 ok, 1 error (or validation errors), 2 usage, 3 finished with data loss.",
        crate::formats::registry::formats_help()
    )
}

#[derive(Parser)]
#[command(
    name = "simrec",
    version,
    about = "Inspect, validate, convert, slice and merge simulation recordings",
    long_about = long_about(),
    after_help = "Examples:\n  simrec inspect run.traj run.state\n  simrec validate --format json *.traj\n  \
        simrec convert run.traj run.state -o run.jsonl\n  simrec slice run.traj run.state --start 10s --end 20s -o cut.traj\n  \
        simrec recover crashed.traj -o fixed.traj"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Print only errors on standard error: no progress, notes, warnings or loss tables (exit
    /// codes still tell)
    #[arg(long, short, global = true)]
    quiet: bool,
}

#[derive(Subcommand)]
enum Command {
    Inspect(inspect::Args),
    Validate(validate::Args),
    Convert(convert::Args),
    Slice(slice::Args),
    Merge(merge::Args),
    Cat(cat::Args),
    Recover(recover::Args),
    Snapshot(snapshot::Args),
    Diff(diff::Args),
    Plot(plot::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    #[command(
        after_help = "Examples:\n  simrec completions bash > ~/.local/share/bash-completion/completions/simrec\n  \
        simrec completions zsh > ~/.zfunc/_simrec"
    )]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) of simrec, or of one command
    #[command(
        after_help = "Examples:\n  simrec man > ~/.local/share/man/man1/simrec.1 && man simrec\n  \
        simrec man convert > ~/.local/share/man/man1/simrec-convert.1"
    )]
    Man {
        /// The command whose page to print (simrec-COMMAND(1)); without it, simrec(1)
        command: Option<String>,
    },
}

/// Parses the command line and runs the command.
pub fn run(cli: Cli) -> anyhow::Result<Outcome> {
    diag::set_quiet(cli.quiet);
    match cli.command {
        Command::Inspect(a) => inspect::run(a),
        Command::Validate(a) => validate::run(a),
        Command::Convert(a) => convert::run(a),
        Command::Slice(a) => slice::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Cat(a) => cat::run(a),
        Command::Recover(a) => recover::run(a),
        Command::Snapshot(a) => snapshot::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Plot(a) => plot::run(a),
        Command::Completions { shell } => {
            // Generated into memory: the generator panics on a write error (a closed pipe).
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "simrec", &mut script);
            let mut out = common::stdout();
            out.write_all(&script)?;
            out.flush()?;
            Ok(Outcome::Ok)
        }
        Command::Man { command } => {
            let top = Cli::command();
            let page = match command {
                None => top,
                Some(name) => {
                    let sub = top.find_subcommand(&name).cloned().ok_or_else(|| {
                        UsageError(format!("no command `{name}` (see `simrec --help`)"))
                    })?;
                    let full = format!("simrec-{name}");
                    sub.name(full.clone())
                        .bin_name(full)
                        .version(env!("CARGO_PKG_VERSION"))
                }
            };
            let mut roff = Vec::new();
            clap_mangen::Man::new(page).render(&mut roff)?;
            let mut out = common::stdout();
            out.write_all(&roff)?;
            out.flush()?;
            Ok(Outcome::Ok)
        }
    }
}

/// The kind of an error of this crate (`None`: a foreign error, such as an `io::Error`).
fn kind_of(e: &(dyn std::error::Error + 'static)) -> Option<ErrorKind> {
    if let Some(e) = e.downcast_ref::<PipelineError>() {
        Some(e.kind())
    } else if let Some(e) = e.downcast_ref::<ReadError>() {
        Some(e.kind())
    } else if let Some(e) = e.downcast_ref::<WriteError>() {
        Some(e.kind())
    } else if e.is::<UsageError>()
        || e.is::<PatternError>()
        || e.is::<UnknownTimeFormat>()
        || e.is::<OptionError>()
        || e.is::<RequestError>()
        || e.is::<PlotRefusal>()
    {
        Some(ErrorKind::Usage)
    } else {
        None
    }
}

/// Whether an error is the user's command line rather than the data (exit 2): some error
/// of its chain says so.
pub fn error_kind(e: &anyhow::Error) -> ErrorKind {
    match e.chain().any(|c| kind_of(c) == Some(ErrorKind::Usage)) {
        true => ErrorKind::Usage,
        false => ErrorKind::Data,
    }
}

/// The exit code of a command that failed.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    match error_kind(e) {
        ErrorKind::Usage => 2,
        ErrorKind::Data => 1,
    }
}

/// The hint a finding-carrying error has, to print after it.
pub fn hint_of(e: &anyhow::Error) -> Option<String> {
    e.chain().find_map(|c| {
        let read = match c.downcast_ref::<PipelineError>() {
            Some(PipelineError::Read(r)) => Some(r),
            _ => c.downcast_ref::<ReadError>(),
        };
        match read {
            Some(ReadError::Invalid { finding, .. }) => finding.hint.clone(),
            _ => None,
        }
    })
}
