//! `simrec cat`: records to standard output, for people or as NDJSON.

use std::io;
use std::path::PathBuf;

use clap::ValueEnum;

use super::common::{
    damaged, print_notes, read_request, AlignArgs, DamageArgs, ReadArgs, SelectArgs,
};
use super::diag::say;
use super::format_select::FormatSelectArgs;
use super::window::WindowArgs;
use super::Outcome;
use crate::model::time_scale::TimeFormat;
use crate::pipeline::{self, CatStyle};
use crate::report::render::loss_table;

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
enum CatFormat {
    /// One line per record: time, channel, entity, frame and a short view of each value
    #[default]
    Text,
    /// One JSON object per record (the `jsonl` format); `json` is the same
    #[value(alias = "json")]
    Ndjson,
}

/// Print records to standard output in time order
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  simrec cat small.traj small.state | head\n  \
    simrec cat --format ndjson small.state | jq -c '.removed // empty'\n  \
    simrec cat --channel state --include 'simrec.*' small.traj small.state\n\n\
    Frames are numbered by position, as #N and --frames count them: `frame #0` is the first frame\n\
    of the recording; where the format stores its own frame index and it differs, it follows as\n\
    `(index K)`. Exit 3 when NDJSON could not hold a value (NaN and infinities are written as null),\n\
    or when an input is damaged: what `simrec recover` keeps of it is printed (--strict: exit 1)."
)]
pub struct Args {
    /// Input files; several are merged by time
    #[arg(required = true, value_name = "IN")]
    inputs: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    format: CatFormat,
    /// Show record times as absolute times (text output): met, utc, tai, gps, gps-week; all
    /// but met need an absolute start (the recording's, or --epoch)
    #[arg(long, value_name = "SCALE", value_parser = TimeFormat::NAMES.to_vec())]
    time_format: Option<String>,
    #[command(flatten)]
    select: SelectArgs,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    damage: DamageArgs,
    #[command(flatten)]
    align: AlignArgs,
    #[command(flatten)]
    window: WindowArgs,
    #[command(flatten)]
    format_select: FormatSelectArgs,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let window = args.window.request(args.format_select.selectors())?;
    let read = read_request(
        &args.inputs,
        &args.read,
        args.damage,
        &args.align,
        &args.select,
        window,
    )?;
    let style = match args.format {
        CatFormat::Text => CatStyle::Text(
            args.time_format
                .as_deref()
                .map(str::parse::<TimeFormat>)
                .transpose()?,
        ),
        CatFormat::Ndjson => CatStyle::Json,
    };
    let (printed, notes) = pipeline::cat(read, style, Box::new(io::stdout()))?;
    print_notes(&notes);
    let loss = printed?;
    let damaged = damaged(&notes.read_findings);
    if loss.is_empty() {
        return Ok(if damaged { Outcome::Loss } else { Outcome::Ok });
    }
    say!(
        "some values could not be written as JSON:\n{}",
        loss_table(&loss)
    );
    Ok(Outcome::Loss)
}
