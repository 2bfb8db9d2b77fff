//! `simrec snapshot`: every signal's value at the frame nearest a time, for a warm start.

use std::io::Write;
use std::path::PathBuf;

use super::common::{damaged, print_read_findings, stdout, DamageArgs, ReadArgs};
use super::diag::say;
use super::{Outcome, UsageError};
use crate::model::TimeSpec;
use crate::pipeline::snapshot::{snapshot, SnapshotRequest};
use crate::pipeline::validate::current_schema;
use crate::report::render::{error_text, finding_text};
use crate::report::Severity;

/// Print the values of every signal at the frame nearest a time, as JSON (a warm start)
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  simrec snapshot run.icarec --at 12.5\n  \
    simrec snapshot run.h5 --at '#100' --states-only\n  \
    simrec snapshot run.icarec --at 30s --against current/schema.json\n\n\
    The frame nearest the time is chosen (the earlier on a tie; the first or last outside\n\
    the recording, marked \"clamped\"). Exit 1, with nothing printed, when the recording cannot\n\
    warm-start: declared incompatible, a state signal missing or not finite there. Exit 3 when\n\
    the recording is damaged before the frame: it is read up to the damage, as `simrec recover`\n\
    keeps it (--strict: exit 1).")]
pub struct Args {
    /// The recording (Icarus: .icarec, HDF5 or CSV)
    #[arg(value_name = "IN")]
    input: PathBuf,
    /// The time (12.5, 850ms, -5s from the end) or a frame (#120, 0-based)
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    at: TimeSpec,
    /// Only the state signals (marked `state`, or paired with a `_dot` derivative)
    #[arg(long)]
    states_only: bool,
    /// The current schema, whose state and required signals must all be in the recording
    /// (a schema.json, an .icarec or an Icarus HDF5 file)
    #[arg(long, value_name = "CURRENT")]
    against: Option<PathBuf>,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    damage: DamageArgs,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let options = args.read.reading(true, args.damage);
    let current = match &args.against {
        Some(path) => Some(current_schema(path, options).map_err(|e| {
            UsageError(format!("--against {}: {}", path.display(), error_text(&e)))
        })?),
        None => None,
    };
    let taken = snapshot(&SnapshotRequest {
        path: &args.input,
        at: args.at,
        states_only: args.states_only,
        current: current.as_ref(),
        options,
        whole: false,
    })?;
    print_read_findings(&taken.read_findings);
    let name = args.input.display();
    for f in &taken.findings {
        match f.severity {
            Severity::Error => eprintln!("{name}: {}", finding_text(f)),
            _ => say!("{name}: {}", finding_text(f)),
        }
    }
    let Some(json) = taken.json else {
        return Ok(Outcome::Failed);
    };
    let mut out = stdout();
    writeln!(out, "{json}")?;
    out.flush()?;
    Ok(if damaged(&taken.read_findings) {
        Outcome::Loss
    } else {
        Outcome::Ok
    })
}
