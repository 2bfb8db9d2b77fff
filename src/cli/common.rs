//! What several commands share: read options, writing a recording, printing findings.

use std::io::{self, Write};
use std::path::PathBuf;

use clap::ValueEnum;
use serde_json::Value as Json;

use super::diag::say;
use super::format_options::FormatOptions;
use super::progress::Progress;
use super::Outcome;
use crate::formats::registry::writable_names;
use crate::formats::{ReadOptions, SliceRequest, WriteReport};
use crate::model::{Epoch, TimeSpec};
use crate::pipeline::request::Say;
use crate::pipeline::select::{ChannelRules, PatternError, Selection};
use crate::pipeline::{
    Converted, Notes, OutputRequest, PipelineError, ReadRequest, Request, Written,
};
use crate::report::render::{finding_text, loss_table, widening_table};
use crate::report::{Findings, Severity};

#[derive(clap::Args, Debug, Clone, Default)]
pub struct ReadArgs {
    /// Read NanoVer files as this format version (1: headerless files from before 2023-07-22)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=2))]
    pub nanover_version: Option<u32>,
    /// The absolute start (time zero) of a recording that stores none, as ISO-8601 UTC
    /// (`2026-03-01T12:00:00Z`): Icarus HDF5 and CSV files, NanoVer, Elodin, 3es
    #[arg(long, value_name = "ISO-8601", value_parser = parse_epoch)]
    pub epoch: Option<Epoch>,
    /// The time system of the recording's clock: MET (mission elapsed time, the default
    /// without an epoch), UTC, TAI or GPS
    #[arg(long, value_name = "SYSTEM", value_parser = ["MET", "UTC", "TAI", "GPS"])]
    pub time_system: Option<String>,
}

fn parse_epoch(text: &str) -> Result<Epoch, String> {
    Epoch::parse_iso8601(text)
        .ok_or_else(|| "expected a UTC date and time: YYYY-MM-DDTHH:MM:SS[.fraction]Z".into())
}

/// `--time-system` values as the static names `ReadOptions` carries.
fn time_system(name: Option<&str>) -> Option<&'static str> {
    ["MET", "UTC", "TAI", "GPS"]
        .into_iter()
        .find(|s| Some(*s) == name)
}

/// How a reading command treats a damaged input.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct DamageArgs {
    /// Damage in an input is an error (exit 1, nothing written) instead of being read up to
    /// (what `simrec recover` keeps), said on stderr, and finished with exit 3; files found in
    /// a directory or by a glob that are not recordings are failures, not skipped
    #[arg(long)]
    pub strict: bool,
}

/// How several inputs read as one recording line up in time.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct AlignArgs {
    /// Line inputs up by `start`: every input's time zero is the same instant. Without it,
    /// inputs that all have an absolute start are aligned on it, and an input with one
    /// cannot be combined with an input without one
    #[arg(long, value_name = "HOW")]
    pub align: Option<AlignArg>,
}

impl AlignArgs {
    /// Whether every input's time zero is the same instant.
    pub fn starts(&self) -> bool {
        self.align == Some(AlignArg::Start)
    }
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlignArg {
    /// Each input's time zero is the same instant
    Start,
}

impl ReadArgs {
    pub fn options(&self, decode: bool, lenient: bool) -> ReadOptions {
        ReadOptions {
            decode,
            lenient,
            until_damage: false,
            assume_version: self.nanover_version,
            deep: false,
            epoch: self.epoch,
            time_system: time_system(self.time_system.as_deref()),
            check_only: false,
            discontinuity: None,
        }
    }

    /// The options of a command that reads a recording: up to its damage, as `recover`
    /// keeps it, or (`--strict`) stopping at the damage with an error.
    pub fn reading(&self, decode: bool, damage: DamageArgs) -> ReadOptions {
        ReadOptions {
            until_damage: !damage.strict,
            ..self.options(decode, !damage.strict)
        }
    }
}

/// What to read of a recording: channels by name, keys by glob.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SelectArgs {
    /// Read only channels whose name matches this glob (repeatable; `*` crosses `/` and dots)
    #[arg(long, value_name = "GLOB")]
    pub channel: Vec<String>,
    /// Keep only keys matching this glob (repeatable; anchored, `*` crosses dots)
    #[arg(long, value_name = "GLOB")]
    pub include: Vec<String>,
    /// Drop keys matching this glob (repeatable; wins over --include)
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Skip channels whose name matches this glob (repeatable; wins over --channel). An
    /// Icarus signal is a channel
    #[arg(long, value_name = "GLOB")]
    pub exclude_channel: Vec<String>,
    /// --channel and --exclude-channel are regular expressions found anywhere in the name
    /// (Icarus's own recording filters), not globs
    #[arg(long)]
    pub regex: bool,
    /// Skip channels whose name contains `_dot` (derivatives, which Icarus does not record
    /// unless asked)
    #[arg(long)]
    pub no_derivatives: bool,
    /// Keep frames 0, N, 2N, … (0-based positions; records outside frames are kept)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub decimate: Option<u64>,
}

impl SelectArgs {
    pub fn selection(&self) -> Result<Selection, PatternError> {
        let rules = ChannelRules {
            include: self.channel.clone(),
            exclude: self.exclude_channel.clone(),
            regex: self.regex,
            no_derivatives: self.no_derivatives,
        };
        let mut selection = Selection::with_rules(&rules, &self.include, &self.exclude)?;
        selection.decimate = self.decimate;
        Ok(selection)
    }
}

#[derive(clap::Args, Debug, Clone)]
pub struct WriteArgs {
    /// Output file or directory; `-` is standard output. A NanoVer pair is written as STEM.traj
    /// and STEM.state. `DIR/` (or an existing directory) is the default directory output, an
    /// Elodin DB (`--to elodin` writes the legacy replay), except that `slice` and `merge` of
    /// directory recordings of one format (Elodin replays) keep it; for `slice
    /// --split-at-resets` it is the directory of the parts, in the input's format unless --to
    /// says otherwise. Missing directories are created. `convert` also takes it as its last
    /// argument (`simrec convert run.icarec out/`)
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output_arg: Option<PathBuf>,
    #[arg(long, value_name = "FORMAT", help = to_help())]
    pub to: Option<String>,
    /// Replace an existing output once the new one is complete: a file, an empty directory or a
    /// recording of the output format holding nothing else; never an input, nor anything
    /// inside one
    #[arg(long)]
    pub force: bool,
    /// Check the outputs as the run would and print what would be lost; write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Write on a time grid of step DT (10ms, 0.5s) from time zero: at each tick every
    /// signal holds its latest value and events move to the next tick (for Elodin and Icarus
    /// outputs of a source whose times are irregular)
    #[arg(long, value_name = "DT", value_parser = parse_step)]
    pub resample: Option<i64>,
    /// Frames at a fixed rate (HZ per second): --resample at 1/HZ (a 3es capture's frames, an
    /// Elodin replay's ticks)
    #[arg(long, value_name = "HZ", value_parser = parse_rate, conflicts_with = "resample")]
    pub frame_rate: Option<i64>,
    #[command(flatten)]
    pub options: FormatOptions,
}

/// A `--frame-rate`: frames per second, as the step in nanoseconds (at least 1 ns).
fn parse_rate(text: &str) -> Result<i64, String> {
    match text.parse::<f64>() {
        Ok(hz) if hz > 0.0 && hz <= 1e9 => Ok((1e9 / hz).round() as i64),
        _ => Err(format!(
            "`{text}` is not a rate in frames per second (30, 59.94)"
        )),
    }
}

/// A `--resample` step: a positive duration, in nanoseconds.
fn parse_step(text: &str) -> Result<i64, String> {
    match text.parse::<TimeSpec>() {
        Ok(TimeSpec::At(ns)) if ns > 0 => Ok(ns),
        Ok(_) => Err(format!(
            "`{text}` is not a positive duration (10ms, 0.5s, 250us)"
        )),
        Err(e) => Err(e.to_string()),
    }
}

impl WriteArgs {
    /// The output as given: the pipeline names it and finds its format.
    pub fn request(&self) -> OutputRequest {
        OutputRequest {
            path: self.output_arg.clone(),
            format: self.to.clone(),
            flags: self.options.given(),
            force: self.force,
            dry_run: self.dry_run,
            resample: self.resample.or(self.frame_rate),
            split: false,
        }
    }
}

/// `--to`'s help, from the registry.
fn to_help() -> String {
    format!(
        "Output format (default: from the output's extension; `DIR/` means the directory \
         format): {}",
        writable_names()
    )
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReportFormat {
    /// Tables for people
    #[default]
    Text,
    /// JSON for scripts: one object per line per file
    Json,
}

/// Standard output for results. Writes return errors (a closed pipe ends the command
/// quietly in `main`) where `println!` would panic.
pub fn stdout() -> io::BufWriter<io::StdoutLock<'static>> {
    io::BufWriter::new(io::stdout().lock())
}

/// What the reading arguments ask for: `inputs`, read, lined up and selected as given, whole
/// or the `window` of them.
pub fn read_request<'a>(
    inputs: &'a [PathBuf],
    read: &ReadArgs,
    damage: DamageArgs,
    align: &AlignArgs,
    select: &SelectArgs,
    window: Option<SliceRequest>,
) -> Result<ReadRequest<'a>, PatternError> {
    Ok(ReadRequest {
        inputs,
        options: read.reading(true, damage),
        starts: align.starts(),
        selection: select.selection()?,
        window,
    })
}

/// What the arguments of a writing command ask for: `inputs`, read, lined up, selected and
/// windowed as given, into the output `write` names.
pub struct Given<'a> {
    pub inputs: Vec<PathBuf>,
    pub read: &'a ReadArgs,
    pub damage: DamageArgs,
    pub align: &'a AlignArgs,
    pub select: &'a SelectArgs,
    pub window: Option<SliceRequest>,
    pub write: &'a WriteArgs,
}

impl Given<'_> {
    /// The one request the command makes of the pipeline.
    pub fn request(self) -> Result<Request, PatternError> {
        Ok(Request {
            inputs: self.inputs,
            options: self.read.reading(true, self.damage),
            starts: self.align.starts(),
            selection: self.select.selection()?,
            window: self.window,
            output: self.write.request(),
        })
    }
}

/// A pipeline entry that writes a recording (`pipeline::convert`, `merge`, `slice`).
pub type Entry = fn(Request, Say, &mut dyn FnMut(u64, u64)) -> Result<Converted, PipelineError>;

/// Runs `entry` for `request` and says what it did: the report as tables for people (loss
/// on stderr, or on stdout for a dry run) or as one JSON object on stdout.
pub fn write_recording(
    entry: Entry,
    request: Request,
    format: ReportFormat,
) -> anyhow::Result<Outcome> {
    let progress = Progress::new("writing");
    let converted = entry(
        request,
        &mut |line| {
            progress.suspend(|| {
                say!("{line}");
            })
        },
        &mut |d, t| progress.update(d, t),
    );
    drop(progress);
    let Converted {
        format: written_as,
        dry_run,
        written,
        notes,
    } = converted?;
    let name = written_as.name();
    print_notes(&notes);
    let damaged = damaged(&notes.read_findings);
    let Written { report, paths } = written?;
    for warning in &report.warnings {
        say!("warning: {warning}");
    }
    if format == ReportFormat::Json {
        let mut out = stdout();
        writeln!(out, "{}", report_json(&report, &paths, name, dry_run))?;
        out.flush()?;
    } else if dry_run {
        let mut out = stdout();
        writeln!(out, "{} records would be written as {name}", report.records)?;
        if report.loss.is_empty() {
            writeln!(out, "nothing would be lost")?;
        } else {
            writeln!(out, "{}", loss_table(&report.loss))?;
        }
        if report.loss.widenings().next().is_some() {
            writeln!(out, "{}", widening_table(&report.loss))?;
        }
        out.flush()?;
    } else {
        say!("wrote {} records to {}", report.records, path_list(&paths));
        if report.loss.widenings().next().is_some() {
            say!(
                "some values were kept in a wider type:\n{}",
                widening_table(&report.loss)
            );
        }
        if !report.loss.is_empty() {
            say!(
                "some values could not be kept:\n{}",
                loss_table(&report.loss)
            );
        }
    }
    Ok(if report.loss.is_empty() && !damaged {
        Outcome::Ok
    } else {
        Outcome::Loss
    })
}

/// A write's report for scripts: the output format and files, records, and per channel and
/// field what was lost and what was widened (records affected).
fn report_json(report: &WriteReport, paths: &[PathBuf], format: &str, dry_run: bool) -> Json {
    let rows = |rows: &mut dyn Iterator<Item = (&str, &str, &str, u64)>| -> Vec<Json> {
        rows.map(|(channel, field, reason, records)| {
            serde_json::json!({
                "channel": channel,
                "field": field,
                "reason": reason,
                "records": records,
            })
        })
        .collect()
    };
    serde_json::json!({
        "format": format,
        "dry_run": dry_run,
        "outputs": paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "records": report.records,
        "lost": rows(&mut report.loss.entries()),
        "widened": rows(&mut report.loss.widenings()),
        "warnings": report.warnings,
    })
}

/// What reading found (at most a screenful per file; `validate` lists all) and each part
/// of a selection that matched nothing, on stderr.
pub fn print_notes(notes: &Notes) {
    print_read_findings(&notes.read_findings);
    for warning in &notes.unmatched {
        say!("warning: {warning}");
    }
}

/// Whether reading found damage (an error) in an input: a reading command read it up to
/// the damage, as `recover` keeps it, and finishes with exit 3.
pub fn damaged(read_findings: &[(PathBuf, Findings)]) -> bool {
    read_findings
        .iter()
        .any(|(_, f)| f.count(Severity::Error) > 0)
}

/// Warnings met while reading, on stderr (at most a screenful; `validate` lists all), and
/// for a damaged input what was read of it.
pub fn print_read_findings(read_findings: &[(PathBuf, Findings)]) {
    const MAX: usize = 10;
    for (path, findings) in read_findings {
        let shown: Vec<_> = findings
            .list()
            .iter()
            .filter(|f| f.severity >= Severity::Warning)
            .collect();
        for f in shown.iter().take(MAX) {
            // Damage is said even with --quiet: it is why the command exits 3.
            match f.severity {
                Severity::Error => eprintln!("{}: {}", path.display(), finding_text(f)),
                _ => say!("{}: {}", path.display(), finding_text(f)),
            }
        }
        let total = findings.count(Severity::Warning) + findings.count(Severity::Error);
        if total > MAX as u64 {
            say!(
                "{}: {} more warnings; run `simrec validate {}` for the full list",
                path.display(),
                total - MAX as u64,
                path.display()
            );
        }
        if findings.count(Severity::Error) > 0 {
            say!(
                "{}: damaged: read up to the damage, as `simrec recover` keeps it (--strict \
                 makes damage an error)",
                path.display()
            );
        }
    }
}

/// `a.traj and a.state`, with `-` shown as standard output.
pub fn path_list(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths
        .iter()
        .map(|p| {
            if p.as_os_str() == "-" {
                "standard output".to_string()
            } else {
                p.display().to_string()
            }
        })
        .collect();
    names.join(" and ")
}
