//! `simrec slice`: a time or frame window, and/or a key selection, that plays back on its own.

use std::path::PathBuf;

use super::common::{
    companion_notes, output_format, read_request, write_recording, write_with, AlignArgs,
    DamageArgs, ReadArgs, ReportFormat, SelectArgs, WriteArgs,
};
use super::diag::say;
use super::format_select::FormatSelectArgs;
use super::window::WindowArgs;
use super::Outcome;
use crate::formats::registry;
use crate::pipeline::WriteRequest;

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

pub fn run(mut args: Args) -> anyhow::Result<Outcome> {
    args.write.name_output(&mut args.inputs, false)?;
    for (_, note) in companion_notes(&args.inputs) {
        say!("note: {note}");
    }
    if args.split_at_resets {
        let opened = read_request(
            &args.inputs,
            &args.read,
            args.damage,
            &args.align,
            &args.select,
            None,
        )?
        .open()?;
        // Parts in a directory keep the input's format unless --to names another.
        let format = match (
            &args.write.to,
            registry::names_directory(&args.write.output),
        ) {
            (None, true) => registry::detect(&args.inputs[0])?,
            _ => output_format(&args.write)?,
        };
        let request = WriteRequest {
            output: &args.write.output,
            format,
            force: args.write.force,
            dry_run: args.write.dry_run,
            flags: args.write.options.flags(format)?,
            split: true,
            resample: args.write.resample.or(args.write.frame_rate),
        };
        return write_with(opened, request, ReportFormat::Text);
    }
    let target = match args.window.given() {
        true => Some(output_format(&args.write)?),
        false => None,
    };
    let window = args
        .window
        .request(target, args.format_select.selectors())?;
    let read = read_request(
        &args.inputs,
        &args.read,
        args.damage,
        &args.align,
        &args.select,
        window,
    )?;
    write_recording(read, &args.write, ReportFormat::Text)
}
