//! `simrec cat`: records to standard output, for people or as NDJSON.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::ValueEnum;

use super::common::{check_selection, ReadArgs, SelectArgs};
use super::diag::say;
use super::Outcome;
use crate::formats::jsonl::JsonlWriter;
use crate::formats::{Sink, Source};
use crate::model::{Composition, Header, Record, Seconds};
use crate::pipeline::{open_recording, FrameCounter, Selected};
use crate::report::render::{loss_table, value_text};

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
    `(index K)`. Exit 3 when NDJSON could not hold a value (NaN and infinities are written as null)."
)]
pub struct Args {
    /// Input files; several are merged by time
    #[arg(required = true, value_name = "IN")]
    inputs: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    format: CatFormat,
    #[command(flatten)]
    select: SelectArgs,
    #[command(flatten)]
    read: ReadArgs,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let selection = args.select.selection()?;
    let source = open_recording(&args.inputs, args.read.options(true, false))?;
    let mut source = Selected::new(source, selection);
    let selected = source.report();
    let mut outcome = Outcome::Ok;
    match args.format {
        CatFormat::Ndjson => {
            let out = BufWriter::with_capacity(1 << 20, Box::new(io::stdout()) as Box<dyn Write>);
            let mut sink = Box::new(JsonlWriter::new(
                out,
                Path::new("-"),
                &source.header().clone(),
            ));
            for record in source.by_ref() {
                sink.write(&record?)?;
            }
            let report = sink.finish()?;
            if !report.loss.is_empty() {
                say!(
                    "some values could not be written as JSON:\n{}",
                    loss_table(&report.loss)
                );
                outcome = Outcome::Loss;
            }
        }
        CatFormat::Text => {
            let header = source.header().clone();
            let mut frames = FrameCounter::default();
            let mut out = BufWriter::new(io::stdout().lock());
            for record in source.by_ref() {
                let record = record?;
                let position = frames.observe(&record);
                writeln!(out, "{}", describe(&header, &record, position))?;
            }
            out.flush()?;
        }
    }
    check_selection(&selected)?;
    Ok(outcome)
}

/// `0.008445s frame #0 (index 2) reset: particle.positions=float32[21,3] [0.1, …] …`
fn describe(header: &Header, r: &Record, position: Option<u64>) -> String {
    let channel = header.channel(r.channel);
    let mut s = format!(
        "{} {}",
        Seconds(r.time),
        channel.map_or("?", |c| c.name.as_str())
    );
    if let Some(e) = r.entity {
        s.push_str(&format!(" entity {e}"));
    }
    if let (Some(n), Some(f)) = (position, r.frame) {
        s.push_str(&format!(" #{n}"));
        if f != n {
            s.push_str(&format!(" (index {f})"));
        }
        if f == 0 && channel.is_some_and(|c| c.composition == Composition::FrameDelta) {
            s.push_str(" reset");
        }
    }
    s.push(':');
    for (k, v) in &r.values {
        s.push_str(&format!(" {k}={}", value_text(v)));
    }
    s
}
