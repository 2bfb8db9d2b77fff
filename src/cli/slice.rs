//! `simrec slice`: a time or frame window, and/or a key selection, that plays back on its own.

use std::path::PathBuf;

use super::common::{
    companion_notes, output_format, read_request, write_recording, write_with, AlignArgs,
    DamageArgs, ReadArgs, ReportFormat, SelectArgs, WriteArgs,
};
use super::diag::say;
use super::format_select::FormatSelectArgs;
use super::{Outcome, UsageError};
use crate::formats::{registry, SliceRequest};
use crate::model::TimeSpec;
use crate::pipeline::WriteRequest;

/// Cut a window [start, end) out of a recording, with the context it needs to play alone
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  simrec slice run.traj run.state --start 10s --end 20s -o cut.traj\n  \
    simrec slice run.traj --frames 100..200 -o cut.traj\n  simrec slice run.traj --start -5s -o last5s.jsonl\n  \
    simrec slice run.traj --exclude 'particle.velocities' --exclude 'particle.forces*' -o slim.traj\n\n\
    A window that starts mid-recording begins with the folded frame (as a reset) and the folded\n\
    state at its start. Times are rebased so the window starts at 0 (unless --keep-time)."
)]
pub struct Args {
    /// Input files; a .traj and a .state together are one recording
    #[arg(required = true, value_name = "IN")]
    inputs: Vec<PathBuf>,
    /// Start of the window (inclusive): 12.5, 12.5s, 850ms, 3us, 10ns, #120, -5s
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    start: Option<TimeSpec>,
    /// End of the window (exclusive)
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    end: Option<TimeSpec>,
    /// Frames A..B (0-based, B exclusive; A.. to the end), same as --start '#A' --end '#B'
    #[arg(long, value_name = "A..B", conflicts_with_all = ["start", "end"])]
    frames: Option<String>,
    /// Keep the original times instead of starting the window at 0
    #[arg(long)]
    keep_time: bool,
    /// Write one part per reset (OUT-01, OUT-02…; what precedes the first reset is -00),
    /// each starting with its reset frame and the full state, as nanover-split-recording. With
    /// `-o DIR/` the parts go in DIR, in the input's format unless --to, named after the input
    #[arg(long, conflicts_with_all = ["start", "end", "frames", "keep_time"])]
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

pub(super) fn frame_range(text: &str) -> Result<(TimeSpec, Option<TimeSpec>), UsageError> {
    let bad = || {
        UsageError(format!(
            "--frames `{text}`: expected A..B or A.. with 0-based frame numbers"
        ))
    };
    let (a, b) = text.split_once("..").ok_or_else(bad)?;
    let a: u64 = a.trim().parse().map_err(|_| bad())?;
    let b = match b.trim() {
        "" => None,
        b => Some(TimeSpec::Frame(b.parse().map_err(|_| bad())?)),
    };
    Ok((TimeSpec::Frame(a), b))
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
            settings: args.write.options.settings(format)?,
            split: true,
            resample: args.write.resample.or(args.write.frame_rate),
        };
        return write_with(opened, request, ReportFormat::Text);
    }
    let (start, end) = match &args.frames {
        Some(f) => {
            let (a, b) = frame_range(f)?;
            (Some(a), b)
        }
        None => (args.start, args.end),
    };
    if args.keep_time {
        if let Err(why) = output_format(&args.write)?.keeps_time() {
            return Err(UsageError(format!("--keep-time: {why}")).into());
        }
    }
    let window = SliceRequest {
        start,
        end,
        rebase: !args.keep_time,
        selectors: args.format_select.selectors(),
    };
    let read = read_request(
        &args.inputs,
        &args.read,
        args.damage,
        &args.align,
        &args.select,
        Some(window),
    )?;
    write_recording(read, &args.write, ReportFormat::Text)
}
