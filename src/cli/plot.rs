//! `simrec plot`: values over time as an SVG, PNG or JPEG picture.

use std::path::PathBuf;

use clap::ValueEnum;

use super::common::{
    damaged, print_notes, read_request, AlignArgs, DamageArgs, ReadArgs, SelectArgs,
};
use super::diag::say;
use super::{Outcome, UsageError};
use crate::formats::SliceRequest;
use crate::model::time_scale::TimeFormat;
use crate::model::TimeSpec;
use crate::pipeline::plot::{KeySpec, PlotError, Reduce};
use crate::pipeline::{self, PlotRequest};

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum ReduceArg {
    /// Euclidean norm of the elements
    Norm,
    Mean,
    Min,
    Max,
}

/// Plot values over time (SVG, PNG or JPEG): one panel per key, stacked on a shared time axis
/// in the order of the keys
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  simrec plot run.traj --key energy.kinetic --key energy.potential -o energy.svg\n  \
    simrec plot run.traj --key 'particle.positions[12].z' -o z.svg\n  \
    simrec plot run.traj --key particle.velocities --reduce norm -o speed.svg\n  \
    simrec plot flight.icarec --key 'Vehicle.Nav.*' --time-format gps -o nav.svg\n\n\
    Each series is decimated while it streams: per pixel column its smallest and largest\n\
    value, so a long recording plots in bounded memory with the envelope of every sample.\n\
    Exit 3 when an input is damaged: what `simrec recover` keeps of it is plotted (--strict:\n\
    exit 1)."
)]
pub struct Args {
    /// Input files of one recording; several are merged by time
    #[arg(required = true, value_name = "IN")]
    inputs: Vec<PathBuf>,
    /// The output picture, of the kind its extension names: .svg, .png, .jpg or .jpeg (`-`:
    /// SVG on standard output)
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// A value to plot (repeatable): a glob on value names (`energy.*`), optionally an array
    /// element (`particle.positions[12].z`, `q[3]`, `m[1,2]`)
    #[arg(long = "key", value_name = "GLOB", required = true)]
    keys: Vec<String>,
    /// Reduce an array (or the block an index names) to one number per record
    #[arg(long, value_enum, value_name = "HOW")]
    reduce: Option<ReduceArg>,
    /// Picture width in pixels
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(200..=20000))]
    width: u32,
    /// Height of one panel in pixels
    #[arg(long, default_value_t = 250, value_parser = clap::value_parser!(u32).range(80..=5000))]
    panel_height: u32,
    /// Times on the axis: met (seconds from time zero), utc, tai, gps, gps-week; all but
    /// met need an absolute start. Default: utc when the recording has one, else met
    #[arg(long, value_name = "SCALE", value_parser = TimeFormat::NAMES.to_vec())]
    time_format: Option<String>,
    /// Plot from this time on (inclusive): 12.5, 850ms, #120, -5s
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    start: Option<TimeSpec>,
    /// Plot up to this time (exclusive)
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    end: Option<TimeSpec>,
    /// Replace an existing output
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    select: SelectArgs,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    damage: DamageArgs,
    #[command(flatten)]
    align: AlignArgs,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let keys = args
        .keys
        .iter()
        .map(|k| KeySpec::parse(k))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| UsageError(e.to_string()))?;
    let window = (args.start.is_some() || args.end.is_some()).then(|| SliceRequest {
        start: args.start,
        end: args.end,
        rebase: false,
        selectors: Vec::new(),
    });
    let read = read_request(
        &args.inputs,
        &args.read,
        args.damage,
        &args.align,
        &args.select,
        window.clone(),
    )?;
    let mut walk = read_request(
        &args.inputs,
        &args.read,
        args.damage,
        &args.align,
        &args.select,
        window,
    )?;
    walk.options.decode = false;
    let time_format = args
        .time_format
        .as_deref()
        .map(str::parse::<TimeFormat>)
        .transpose()?;
    let request = PlotRequest {
        read,
        walk,
        keys,
        reduce: args.reduce.map(|r| match r {
            ReduceArg::Norm => Reduce::Norm,
            ReduceArg::Mean => Reduce::Mean,
            ReduceArg::Min => Reduce::Min,
            ReduceArg::Max => Reduce::Max,
        }),
        width: args.width,
        panel_height: args.panel_height,
        time_format,
        output: &args.output,
        force: args.force,
    };
    let (plotted, notes) = pipeline::plot(request);
    print_notes(&notes);
    let plotted = match plotted {
        Ok(p) => p,
        Err(PlotError::Usage(m)) => return Err(m.into()),
        Err(PlotError::Read(e)) => return Err(e.into()),
        Err(PlotError::Write(e)) => return Err(e.into()),
        Err(e) => return Err(e.into()),
    };
    for s in &plotted.skipped {
        say!("warning: {s}");
    }
    let lines: Vec<String> = plotted
        .series
        .iter()
        .map(|s| format!("{} ({} samples, {} points)", s.name, s.samples, s.points))
        .collect();
    say!(
        "wrote {}: {} panel(s), {} pixel columns: {}",
        plotted.path.display(),
        plotted.panels,
        plotted.columns,
        lines.join(", ")
    );
    Ok(if damaged(&notes.read_findings) {
        Outcome::Loss
    } else {
        Outcome::Ok
    })
}
