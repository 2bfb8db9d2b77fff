//! `simrec convert`: one recording (one file, or several merged by time) into another format.

use std::path::PathBuf;

use super::common::{write_recording, AlignArgs, ReadArgs, SelectArgs, WriteArgs};
use super::Outcome;
use crate::pipeline::{open_aligned, Selected};

/// Convert a recording to another format (same format: bit-exact copy of every record)
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  simrec convert run.traj run.state -o run.jsonl\n  \
    simrec convert run.traj -o - --to jsonl | jq .time_ns\n  simrec convert --dry-run run.traj run.state -o out.traj\n\n\
    Exit 3 when a value could not be represented in the output format (the loss report names it)."
)]
pub struct Args {
    /// Input files; a .traj and a .state together are one recording on one timeline
    #[arg(required = true, value_name = "IN")]
    inputs: Vec<PathBuf>,
    #[command(flatten)]
    write: WriteArgs,
    #[command(flatten)]
    select: SelectArgs,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    align: AlignArgs,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    write_inputs(
        &args.inputs,
        &args.read,
        &args.align,
        &args.select,
        &args.write,
    )
}

/// Reads `inputs` as one recording (merged by time when there are several), selects and
/// writes it: what `convert` and `merge` both do.
pub fn write_inputs(
    inputs: &[PathBuf],
    read: &ReadArgs,
    align: &AlignArgs,
    select: &SelectArgs,
    write: &WriteArgs,
) -> anyhow::Result<Outcome> {
    let selection = select.selection()?;
    let source = open_aligned(inputs, read.options(true, false), align.starts())?;
    let mut selected = Selected::new(source, selection);
    let report = selected.report();
    write_recording(&mut selected, inputs, write, &report)
}
