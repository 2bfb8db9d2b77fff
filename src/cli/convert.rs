//! `simrec convert`: one recording (one file, or several merged by time) into another format.

use std::path::PathBuf;

use super::common::{read_request, write_recording, AlignArgs, ReadArgs, SelectArgs, WriteArgs};
use super::format_select::FormatSelectArgs;
use super::Outcome;
use crate::formats::SliceRequest;

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
    #[command(flatten)]
    format_select: FormatSelectArgs,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    // Format selectors (XREC's --type, --chapter) go to the format's own slice.
    let selectors = args.format_select.selectors();
    let window = (!selectors.is_empty()).then(|| SliceRequest {
        selectors,
        ..SliceRequest::default()
    });
    let read = read_request(&args.inputs, &args.read, &args.align, &args.select, window)?;
    write_recording(read, &args.write)
}
