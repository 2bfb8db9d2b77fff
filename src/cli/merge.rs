//! `simrec merge`: several recordings into one, k-way by time.

use std::path::PathBuf;

use super::common::{
    write_recording, AlignArgs, DamageArgs, Given, ReadArgs, ReportFormat, SelectArgs, WriteArgs,
};
use super::Outcome;
use crate::pipeline;

/// Merge recordings by time (memory bounded by the number of inputs)
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  simrec merge run.traj run.state -o run.jsonl\n  \
    simrec merge a.state b.state -o both.state\n  simrec merge part1.traj part2.traj -o whole.traj\n\n\
    On equal times a frame comes before state, then inputs keep their order. Frame streams are\n\
    concatenated (each later one starts with a reset) and must not overlap in time.\n\n\
    3es captures are overlaid on one timeline instead: frames at the union of the inputs'\n\
    frame starts in a common time unit, colliding object, resource, category and camera ids\n\
    of later inputs remapped (docs/formats/tes.md, \"Merging\")."
)]
pub struct Args {
    /// Input files
    #[arg(required = true, num_args = 1.., value_name = "IN")]
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
}

/// The same path as `convert`: several inputs are merged by time.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let request = Given {
        inputs: args.inputs,
        read: &args.read,
        damage: args.damage,
        align: &args.align,
        select: &args.select,
        window: None,
        write: &args.write,
    }
    .request()?;
    write_recording(pipeline::merge, request, ReportFormat::Text)
}
