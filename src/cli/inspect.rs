//! `simrec inspect`: what is in each file, from its record headers (or every payload with --deep).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use serde_json::json;

use super::batch;
use super::common::{damaged, print_read_findings, stdout, DamageArgs, ReadArgs, ReportFormat};
use super::diag::say;
use super::progress::Progress;
use super::{error_text, Outcome};
use crate::formats::input::display_name;
use crate::formats::{registry, Conflict, ErrorKind, ReadError, Source};
use crate::model::time_scale::TimeFormat;
use crate::model::{Header, Nanos};
use crate::pipeline::request::companion_notes;
use crate::pipeline::select::Selection;
use crate::pipeline::Selected;
use crate::report::render::{finding_json, finding_text, plural, summary_text};
use crate::report::summary::SCHEMA_VERSION;
use crate::report::{Findings, Severity, Summary};

/// Show format, size, records, time span, channels, resets and keys of each file
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  simrec inspect small.traj\n  simrec inspect --deep small.traj small.state\n  \
    simrec inspect --format json *.traj | jq .records\n  simrec inspect runs/ 'archive/**/*.h5'\n\n\
    A damaged file is summarised as far as it can be read (what `simrec recover` keeps), the\n\
    damage said on stderr, and the command exits 3 (--strict: exit 1)."
)]
pub struct Args {
    /// Recordings to inspect: files (`-` for standard input), directories (every recording
    /// in them, recursively) or quoted globs (`'runs/**/*.h5'`)
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Decode every payload: lists keys with kind, dtype and shape
    #[arg(long)]
    deep: bool,
    /// With --deep, no sparkline of each number key over time (they are drawn only when
    /// standard output is a terminal, unless --sparklines)
    #[arg(long, conflicts_with = "sparklines")]
    no_sparklines: bool,
    /// With --deep, draw the sparklines even when standard output is not a terminal
    #[arg(long)]
    sparklines: bool,
    /// Summarise only channels whose name matches this glob (repeatable)
    #[arg(long, value_name = "GLOB")]
    channel: Vec<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    format: ReportFormat,
    /// Also show start and end as absolute times: met (seconds from time zero), utc (with
    /// :60 in a leap second), tai, gps, gps-week (week and seconds of week); all but met
    /// need an absolute start (the recording's, or --epoch)
    #[arg(long, value_name = "SCALE", value_parser = TimeFormat::NAMES.to_vec())]
    time_format: Option<String>,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    damage: DamageArgs,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let batch = batch::gather(&args.files, args.damage.strict, None)?;
    let files = batch.paths();
    let notes = companion_notes(&files);
    let mut out = stdout();
    let mut outcome = Outcome::Ok;
    // Per file: unreadable, or read with error findings.
    let mut with_errors = vec![true; files.len()];
    for (i, path) in files.iter().enumerate() {
        let name = display_name(path).display().to_string();
        match summarise(path, &args) {
            Ok((summary, read_findings)) => {
                let counts = severity_counts(&read_findings);
                with_errors[i] = counts[2] > 0;
                if damaged(&read_findings) {
                    print_read_findings(&read_findings);
                    if outcome == Outcome::Ok {
                        outcome = Outcome::Loss;
                    }
                }
                let file_notes: Vec<String> = notes
                    .iter()
                    .filter(|(p, _)| p == path)
                    .map(|(_, n)| n.clone())
                    .collect();
                match args.format {
                    ReportFormat::Json => {
                        let findings =
                            json!({"errors": counts[2], "warnings": counts[1], "infos": counts[0]});
                        let extra = [("findings", findings), ("notes", json!(file_notes))];
                        summary.write_json(&mut out, &extra)?;
                        writeln!(out)?;
                    }
                    ReportFormat::Text => {
                        let mut lines = file_notes;
                        if counts[2] + counts[1] > 0 {
                            lines.push(format!(
                                "{}, {}: run `simrec validate {name}`",
                                plural(counts[2], "error"),
                                plural(counts[1], "warning")
                            ));
                        }
                        write!(out, "{}", summary_text(&summary, &lines))?;
                    }
                }
            }
            // A command line that cannot be honoured for this file (--epoch on a file with
            // its own, --time-format without one): usage, exit 2.
            Err(e) if e.kind() == ErrorKind::Usage => return Err(e.into()),
            Err(e) => {
                outcome = Outcome::Failed;
                let finding = match &e {
                    ReadError::Invalid { finding, .. } => Some(&**finding),
                    _ => None,
                };
                match (args.format, finding) {
                    (ReportFormat::Json, _) => writeln!(
                        out,
                        "{}",
                        json!({
                            "schema_version": SCHEMA_VERSION,
                            "path": name,
                            "error": error_text(&e),
                            "finding": finding.map(finding_json),
                        })
                    )?,
                    (ReportFormat::Text, Some(f)) => eprintln!("{name}: {}", finding_text(f)),
                    (ReportFormat::Text, None) => eprintln!("error: {}", error_text(&e)),
                }
            }
        }
    }
    batch::end_of_checks(&mut out, &batch, &with_errors, args.format)?;
    out.flush()?;
    Ok(outcome)
}

/// What reading found in each file.
type ReadFindings = Vec<(PathBuf, Findings)>;

/// Reads one file up to its damage into a summary, with what reading found.
fn summarise(path: &Path, args: &Args) -> Result<(Summary, ReadFindings), ReadError> {
    if let Some(summarised) = summarise_frames(path, args) {
        return summarised;
    }
    let mut source = registry::open(path, args.read.reading(args.deep, args.damage))?;
    // Without --channel every record is summarised: no selection layer in the way of the
    // reader (inspect of a large 3es capture is compared with 3esinfo's CPU time).
    let mut selection = None;
    if !args.channel.is_empty() {
        let channels = Selection::new(&args.channel, &[], &[])
            .map_err(|e| ReadError::Conflict(Conflict::Pattern(e)))?;
        let selected = Selected::new(source, channels);
        selection = Some(selected.report());
        source = Box::new(selected);
    }
    let size = source.progress().1;
    let name = display_name(path).display().to_string();
    let mut summary = Summary::new(&name, size, source.header(), args.deep);
    summary.time_format = time_format(args.time_format.as_deref(), source.header(), path)?;
    summary.sparklines = args.deep
        && args.format == ReportFormat::Text
        && (args.sparklines || (!args.no_sparklines && std::io::stdout().is_terminal()));
    // Counted from headers where the source can (an Elodin DB): nothing to decode.
    let tally = match args.deep || selection.is_some() {
        true => None,
        false => source.tally(),
    };
    if let Some(tally) = tally {
        for t in tally {
            summary.observe_instants(&[t.channel], t.records, t.first, t.last);
        }
    } else {
        let progress = Progress::new("reading");
        while let Some(record) = source.next() {
            let record = record?;
            if record.channel as usize >= summary.channels.len() {
                summary.follow(source.header());
            }
            summary.observe(&record);
            if summary.records.is_multiple_of(1024) {
                let (d, t) = source.progress();
                progress.update(d, t);
            }
        }
    }
    // Patterns that matched no channel are known once the file is read (a reader may
    // discover channels as it reads).
    for warning in selection.iter().flat_map(|r| r.borrow().unmatched.clone()) {
        say!("warning: {warning}");
    }
    summary.facts = source.facts();
    Ok((summary, owned(source.findings())))
}

fn owned(findings: Vec<(&Path, &Findings)>) -> ReadFindings {
    findings
        .into_iter()
        .map(|(p, f)| (p.to_path_buf(), f.clone()))
        .collect()
}

/// How many (info, warning, error) findings there are.
fn severity_counts(findings: &ReadFindings) -> [u64; 3] {
    let mut counts = [0u64; 3];
    for (_, f) in findings {
        counts[0] += f.count(Severity::Info);
        counts[1] += f.count(Severity::Warning);
        counts[2] += f.count(Severity::Error);
    }
    counts
}

/// The summary of a recording whose format reads it a frame at a time (`.icarec`, Icarus
/// HDF5): each frame counts one record per dynamic signal without making them (what that
/// saves on a 1 GB recording: docs/performance.md, "inspect of a 1 GB recording by
/// frames"), the static signals one record at the first frame, as the record read gives
/// them; the frames are read without values, for their times and the checks of the record
/// read. `None` (the record read then
/// runs) with `--deep`, `--channel`, `--epoch` or `--time-system`, for formats without
/// frames, and for a recording that has no frame or that the frame read cannot open (the
/// record read says why).
fn summarise_frames(
    path: &Path,
    args: &Args,
) -> Option<Result<(Summary, ReadFindings), ReadError>> {
    let options = args.read.reading(false, args.damage);
    // An origin given on the command line is applied to the record read's header.
    let origin_given = options.epoch.is_some() || options.time_system.is_some();
    if args.deep || !args.channel.is_empty() || origin_given {
        return None;
    }
    let format = registry::detect(path).ok()?;
    let mut frames = format.frames()?.open_frames(path, options)?.ok()?;
    let layout = frames.layout();
    let statics: Vec<_> = layout.statics.iter().map(|s| s.channel).collect();
    let dynamics: Vec<_> = layout.dynamics.iter().map(|s| s.channel).collect();
    let name = display_name(path).display().to_string();
    let mut summary = Summary::new(&name, frames.progress().1, frames.header(), false);
    summary.time_format = match time_format(args.time_format.as_deref(), frames.header(), path) {
        Ok(f) => f,
        Err(e) => return Some(Err(e)),
    };
    let progress = Progress::new("reading");
    // Frames counted, their first time and the span of their times.
    let mut n = 0u64;
    let (mut first, mut earliest, mut latest) = (0, Nanos::MAX, Nanos::MIN);
    loop {
        let time = match frames.next_frame() {
            Ok(Some(frame)) => frame.time,
            Ok(None) => break,
            Err(e) => return Some(Err(e)),
        };
        if n == 0 {
            first = time;
        }
        earliest = earliest.min(time);
        latest = latest.max(time);
        n += 1;
        if n.is_multiple_of(1024) {
            let (d, t) = frames.progress();
            progress.update(d, t);
        }
    }
    if n == 0 {
        return None;
    }
    summary.observe_instants(&statics, 1, first, first);
    summary.observe_instants(&dynamics, n, earliest, latest);
    summary.facts = frames.facts();
    Some(Ok((summary, owned(frames.findings()))))
}

/// The scale `--time-format` names, checked against what `header` can show: every scale
/// but MET needs an absolute start.
pub fn time_format(
    name: Option<&str>,
    header: &Header,
    path: &Path,
) -> Result<Option<TimeFormat>, ReadError> {
    let Some(format) = name
        .map(str::parse::<TimeFormat>)
        .transpose()
        .map_err(|e| ReadError::Conflict(Conflict::TimeFormat(e)))?
    else {
        return Ok(None);
    };
    if format.needs_epoch() && header.origin.epoch.is_none() {
        return Err(ReadError::Conflict(Conflict::NoEpoch {
            scale: format,
            path: Some(path.into()),
        }));
    }
    Ok(Some(format))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        args: Args,
    }

    fn args(list: &[&str]) -> Args {
        let mut argv = vec!["inspect"];
        argv.extend(list);
        Cmd::parse_from(argv).args
    }

    fn json(summarised: (Summary, ReadFindings)) -> String {
        let mut out = Vec::new();
        summarised.0.write_json(&mut out, &[]).unwrap();
        let counts = severity_counts(&summarised.1);
        format!("{} {counts:?}", String::from_utf8(out).unwrap())
    }

    /// A `.icarec` is summarised frame by frame (one call per frame, not a record per
    /// signal), and the summary is the record read's: every fixture, and the recording cut
    /// at every byte of its frames.
    #[test]
    fn an_icarec_is_summarised_by_frames_as_its_records_would_be() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/icarec");
        let dir = tempfile::tempdir().unwrap();
        let cut = dir.path().join("cut.icarec");
        std::fs::create_dir(&cut).unwrap();
        for member in ["schema.json", "metadata.json", "static_signals.bin"] {
            std::fs::copy(root.join("types.icarec").join(member), cut.join(member)).unwrap();
        }
        let frames = std::fs::read(root.join("types.icarec/dynamic_signals.bin")).unwrap();
        let mut paths: Vec<PathBuf> = ["a2.icarec", "a2.icarec.tar", "types.icarec"]
            .iter()
            .map(|f| root.join(f))
            .collect();
        let mut by_frames = 0;
        for n in 0..=frames.len() {
            std::fs::write(cut.join("dynamic_signals.bin"), &frames[..n]).unwrap();
            paths.push(cut.clone());
            for path in &paths {
                let p = path.to_str().unwrap();
                let records = summarise(path, &args(&[p, "--channel", "*"]));
                match summarise_frames(path, &args(&[p])) {
                    Some(framed) => {
                        by_frames += 1;
                        match (framed, records) {
                            (Ok(f), Ok(r)) => assert_eq!(json(f), json(r), "{p} cut at {n}"),
                            (Err(f), Err(r)) => assert_eq!(f.to_string(), r.to_string()),
                            (f, r) => panic!("{p} cut at {n}: {:?} against {:?}", f.err(), r.err()),
                        }
                    }
                    // No frame: the record read summarises it.
                    None => assert!(n < 153 || records.is_err(), "{p} cut at {n}"),
                }
            }
            paths.pop();
        }
        // The fixtures each time, and every cut that holds a whole frame.
        assert!(by_frames > 3 * frames.len(), "{by_frames}");
    }

    /// An Icarus HDF5 file is summarised by frames too (`/time` read, no value: issue 27,
    /// item 13), as its records would be: every fixture, the hostile ones included (those
    /// without a frame go record by record).
    #[test]
    fn an_hdf5_file_is_summarised_by_frames_as_its_records_would_be() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/icarus-hdf5");
        let mut framed = Vec::new();
        for dir in [root.clone(), root.join("hostile")] {
            let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "h5"))
                .collect();
            paths.sort();
            for path in paths {
                let p = path.to_str().unwrap();
                let records = summarise(&path, &args(&[p, "--channel", "*"]));
                if let Some(f) = summarise_frames(&path, &args(&[p])) {
                    assert_eq!(json(f.unwrap()), json(records.unwrap()), "{p}");
                    framed.push(path.file_name().unwrap().to_string_lossy().into_owned());
                }
            }
        }
        assert_eq!(
            framed,
            [
                "crashed.h5",
                "escape.h5",
                "noschema.h5",
                "small.h5",
                "unescaped.h5",
                "vulcan.h5",
                "gzip-tail.h5"
            ]
        );
    }
}
