//! `simrec convert`: one recording (one file, or several merged by time) into another format.

use std::path::PathBuf;

use super::common::{
    write_recording, AlignArgs, DamageArgs, Given, ReadArgs, ReportFormat, SelectArgs, WriteArgs,
};
use super::each::{self, Each};
use super::format_select::FormatSelectArgs;
use super::window::WindowArgs;
use super::Outcome;
use crate::pipeline::{self, request::name_output};

/// Convert a recording to another format (same format: bit-exact copy of every record)
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  simrec convert run.traj run.state -o run.jsonl\n  \
    simrec convert run.traj -o - --to jsonl | jq .time_ns\n  simrec convert --dry-run run.traj run.state -o out.traj\n\n\
    Exit 3 when a value could not be represented in the output format (the loss report names it),\n\
    or when an input is damaged: what `simrec recover` keeps of it is converted (--strict: exit 1)."
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
    damage: DamageArgs,
    #[command(flatten)]
    align: AlignArgs,
    /// Convert each recording on its own into the directory -o names, with --to FORMAT:
    /// inputs are files, directories (every recording in them, recursively; their
    /// subdirectories kept under the output directory) or quoted globs (`'runs/**/*.h5'`), and
    /// each output is named after its input with all its extensions (`rocket.h5` →
    /// `rocket.h5.jsonl`; a .traj and its .state together by the .traj); goes on past
    /// failures and prints a summary; the exit code is the worst one
    #[arg(long, conflicts_with_all = ["start", "end", "frames", "rebase", "keep_time"])]
    each: bool,
    /// Recordings converted at a time with --each (default: the number of cores)
    #[arg(long, value_name = "N", requires = "each", value_parser = clap::value_parser!(u32).range(1..))]
    jobs: Option<u32>,
    /// With --each, leave a recording whose output exists as it is (not converted, not a
    /// failure)
    #[arg(long, requires = "each", conflicts_with = "force")]
    skip_existing: bool,
    /// The report: tables (text), or JSON on standard output (json): one object with the
    /// loss per channel and field, or with --each one object per recording
    #[arg(long, value_enum, default_value_t)]
    format: ReportFormat,
    #[command(flatten)]
    format_select: FormatSelectArgs,
    #[command(flatten)]
    window: WindowArgs,
}

pub fn run(mut args: Args) -> anyhow::Result<Outcome> {
    if args.each {
        let output = name_output(&mut args.inputs, args.write.output_arg.clone(), true)?;
        return each::run(Each {
            inputs: &args.inputs,
            output: &output,
            write: &args.write,
            select: &args.select,
            read: &args.read,
            damage: args.damage,
            align: &args.align,
            jobs: args.jobs.map(|n| n as usize),
            format: args.format,
            strict: args.damage.strict,
            skip_existing: args.skip_existing,
        });
    }
    // A time window and format selectors (XREC's --type, --chapter) go to the format's own
    // slice.
    let window = args.window.request(args.format_select.selectors())?;
    let request = Given {
        inputs: args.inputs,
        read: &args.read,
        damage: args.damage,
        align: &args.align,
        select: &args.select,
        window,
        write: &args.write,
    }
    .request()?;
    write_recording(pipeline::convert, request, args.format)
}
