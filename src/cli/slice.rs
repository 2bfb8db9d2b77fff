//! `simrec slice`: a time or frame window, and/or a key selection, that plays back on its own.

use std::path::PathBuf;

use super::common::{
    write_recording, AlignArgs, DamageArgs, Given, ReadArgs, ReportFormat, SelectArgs, WriteArgs,
};
use super::format_select::FormatSelectArgs;
use super::window::WindowArgs;
use super::Outcome;
use crate::pipeline;

/// Cut a window [start, end) out of a recording, with the context it needs to play alone
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  simrec slice run.traj run.state --start 10s --end 20s -o cut.traj\n  \
    simrec slice run.traj --frames 100..200 -o cut.traj\n  simrec slice run.traj --start -5s -o last5s.jsonl\n  \
    simrec slice run.traj --exclude 'particle.velocities' --exclude 'particle.forces*' -o slim.traj\n\n\
    A window that starts mid-recording begins with the folded frame (as a reset) and the folded\n\
    state at its start. Times stay the recording's own unless --rebase (Elodin and 3es outputs\n\
    always start at 0, and say so)."
)]
pub struct Args {
    /// Input files; a .traj and a .state together are one recording
    #[arg(required = true, value_name = "IN")]
    inputs: Vec<PathBuf>,
    #[command(flatten)]
    window: WindowArgs,
    /// Write one part per reset (OUT-01, OUT-02…; what precedes the first reset is -00),
    /// each starting with its reset frame and the full state, as nanover-split-recording. With
    /// `-o DIR/` the parts go in DIR, in the input's format unless --to, named after the input
    #[arg(long, conflicts_with_all = ["start", "end", "frames", "rebase", "keep_time"])]
    split_at_resets: bool,
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
    #[command(flatten)]
    format_select: FormatSelectArgs,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    // Split parts are whole: no window.
    let window = match args.split_at_resets {
        true => None,
        false => args.window.request(args.format_select.selectors())?,
    };
    let mut request = Given {
        inputs: args.inputs,
        read: &args.read,
        damage: args.damage,
        align: &args.align,
        select: &args.select,
        window,
        write: &args.write,
    }
    .request()?;
    request.output.split = args.split_at_resets;
    write_recording(pipeline::slice, request, ReportFormat::Text)
}
