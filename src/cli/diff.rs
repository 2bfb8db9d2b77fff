//! `simrec diff`: are two recordings the same, within a tolerance, and where do they differ.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::ValueEnum;

use super::common::stdout;
use super::common::{
    damaged, print_notes, read_request, AlignArgs, DamageArgs, ReadArgs, ReportFormat, SelectArgs,
};
use super::{Outcome, UsageError};
use crate::formats::SliceRequest;
use crate::model::TimeSpec;
use crate::pipeline::diff::output::{self, Setup};
use crate::pipeline::diff::{Align, Tolerance};
use crate::pipeline::{self, DiffRequest};

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
enum AlignBy {
    /// Records of the same channel and entity at the same time
    #[default]
    Time,
    /// Records of the same channel and entity with the same frame value (records without one
    /// by position)
    Frame,
    /// The n-th record of a channel and entity in A with the n-th in B
    Index,
}

/// Compare two recordings in the model: exit 0 when equal (within tolerance), 1 when not
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  simrec diff run.traj,run.state run.nanover.zip\n  \
    simrec diff today.icarec yesterday.icarec --atol 1e-6 --include 'Rocket.*'\n  \
    simrec diff a.traj b.traj --align frame --max-diffs 20 --format json\n\n\
    Each side is one recording: a path, or the files of one recording joined with a comma.\n\
    Numbers are equal when |a - b| <= atol + rtol * |b| (b: the second recording's value);\n\
    integers and floats compare by value (3 = 3.0) unless --strict-types. Exit 0 equal,\n\
    1 different (or an input cannot be read), 2 usage, 3 equal as far as a damaged input\n\
    could be read (what `simrec recover` keeps of it; --strict: exit 1)."
)]
pub struct Args {
    /// The first recording (A): a path, or several files of one recording joined with `,`
    #[arg(value_name = "A")]
    a: String,
    /// The second recording (B)
    #[arg(value_name = "B")]
    b: String,
    /// How records of A and B are paired
    #[arg(long = "align", value_enum, default_value_t, value_name = "HOW")]
    align_by: AlignBy,
    /// Relative tolerance (of B's value)
    #[arg(long, default_value_t = 0.0, value_name = "X", value_parser = tolerance)]
    rtol: f64,
    /// Absolute tolerance
    #[arg(long, default_value_t = 0.0, value_name = "X", value_parser = tolerance)]
    atol: f64,
    /// Types must match too: an integer differs from the same float, float32 from float64
    #[arg(long)]
    strict_types: bool,
    /// NaN equals NaN
    #[arg(long)]
    nan_equal: bool,
    /// List this many differences (the earliest); all are counted
    #[arg(long, default_value_t = 1, value_name = "N")]
    max_diffs: usize,
    /// Compare only from this time on (inclusive): 12.5, 850ms, #120, -5s
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    start: Option<TimeSpec>,
    /// Compare only up to this time (exclusive)
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    end: Option<TimeSpec>,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    format: ReportFormat,
    #[command(flatten)]
    select: SelectArgs,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    damage: DamageArgs,
}

fn tolerance(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err("expected a non-negative number (1e-6, 0.001)".into()),
    }
}

/// The files of one side: `a.traj,a.state` is two, a path that exists as written is one.
fn side(text: &str) -> Vec<PathBuf> {
    if Path::new(text).exists() || !text.contains(',') {
        return vec![PathBuf::from(text)];
    }
    text.split(',')
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .collect()
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let (a, b) = (side(&args.a), side(&args.b));
    if a.is_empty() || b.is_empty() {
        return Err(UsageError("each side of diff names at least one file".into()).into());
    }
    let window = (args.start.is_some() || args.end.is_some()).then(|| SliceRequest {
        start: args.start,
        end: args.end,
        rebase: false,
        selectors: Vec::new(),
    });
    let align = AlignArgs::default();
    let request = DiffRequest {
        a: read_request(
            &a,
            &args.read,
            args.damage,
            &align,
            &args.select,
            window.clone(),
        )?,
        b: read_request(&b, &args.read, args.damage, &align, &args.select, window)?,
        align: match args.align_by {
            AlignBy::Time => Align::Time,
            AlignBy::Frame => Align::Frame,
            AlignBy::Index => Align::Index,
        },
        tolerance: Tolerance {
            rtol: args.rtol,
            atol: args.atol,
            strict_types: args.strict_types,
            nan_equal: args.nan_equal,
        },
        max_diffs: args.max_diffs.max(1),
    };
    let setup = Setup {
        a: &a,
        b: &b,
        align: request.align,
        tolerance: request.tolerance,
    };
    let (report, notes) = pipeline::diff(request);
    print_notes(&notes);
    let report = report?;
    let mut out = stdout();
    match args.format {
        ReportFormat::Text => write!(out, "{}", output::text(&report))?,
        ReportFormat::Json => writeln!(out, "{}", output::json(&report, &setup))?,
    }
    out.flush()?;
    Ok(match (report.equal(), damaged(&notes.read_findings)) {
        (false, _) => Outcome::Failed,
        (true, true) => Outcome::Loss,
        (true, false) => Outcome::Ok,
    })
}
