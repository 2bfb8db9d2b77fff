//! `simrec validate`: every rule of each file's spec, with codes, offsets and record indices.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::common::{stdout, ReadArgs, ReportFormat};
use super::progress::Progress;
use super::Outcome;
use crate::formats::input::display_name;
use crate::formats::{registry, Format, ReadError, TimeRange};
use crate::model::Header;
use crate::report::render::{finding_json, finding_text, plural};
use crate::report::{Finding, Findings, Severity};

/// Check files against their format's rules; exit 1 when any has errors
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  simrec validate run.traj run.state\n  \
    simrec validate --strict --format json out/*.traj || echo 'broken recordings'")]
pub struct Args {
    /// Recordings to check (a .traj and a .state named together are also checked as a pair)
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Treat warnings as errors
    #[arg(long)]
    strict: bool,
    /// Also list info findings in text output (JSON always has them)
    #[arg(long)]
    info: bool,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    format: ReportFormat,
    #[command(flatten)]
    read: ReadArgs,
}

/// One file's result.
struct Checked {
    name: String,
    findings: Findings,
    path: PathBuf,
    /// Format, header and time range, when the file could be opened.
    opened: Option<(&'static dyn Format, Header, Option<TimeRange>)>,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let mut results: Vec<Checked> = args
        .files
        .iter()
        .map(|p| check(p, &args))
        .collect::<anyhow::Result<_>>()?;
    check_together(&mut results);
    let mut out = stdout();
    let mut outcome = Outcome::Ok;
    for r in &mut results {
        if args.strict {
            r.findings.promote_warnings();
        }
        let list = r.findings.list();
        let (errors, warnings, infos) = (
            r.findings.count(Severity::Error),
            r.findings.count(Severity::Warning),
            r.findings.count(Severity::Info),
        );
        if errors > 0 {
            outcome = Outcome::Failed;
        }
        match args.format {
            ReportFormat::Json => {
                let omitted: Vec<_> = r
                    .findings
                    .truncated()
                    .map(|(code, _, n)| json!({"code": code, "count": n}))
                    .collect();
                writeln!(
                    out,
                    "{}",
                    json!({
                        "path": r.name,
                        "format": r.opened.as_ref().map(|o| o.1.format.clone()),
                        "ok": errors == 0,
                        "errors": errors,
                        "warnings": warnings,
                        "infos": infos,
                        "findings": list.iter().map(finding_json).collect::<Vec<_>>(),
                        "omitted": omitted,
                    })
                )?;
            }
            ReportFormat::Text => {
                let verdict = if errors == 0 { "ok" } else { "FAILED" };
                writeln!(
                    out,
                    "{}: {verdict} ({}, {}, {infos} info)",
                    r.name,
                    plural(errors, "error"),
                    plural(warnings, "warning")
                )?;
                for f in list
                    .iter()
                    .filter(|f| args.info || f.severity > Severity::Info)
                {
                    writeln!(out, "  {}", finding_text(f).replace('\n', "\n  "))?;
                }
                for (code, severity, n) in r.findings.truncated() {
                    if args.info || severity > Severity::Info {
                        writeln!(
                            out,
                            "  ({n} findings of {code} in all; the first {} are listed)",
                            crate::report::finding::KEPT_PER_CODE
                        )?;
                    }
                }
            }
        }
    }
    out.flush()?;
    Ok(outcome)
}

/// Reads one file to the end, leniently and decoding every payload.
fn check(path: &Path, args: &Args) -> anyhow::Result<Checked> {
    let name = display_name(path).display().to_string();
    let mut findings = Findings::default();
    let format = match registry::detect(path) {
        Ok(f) => f,
        Err(ReadError::Io { source, .. }) => return Err(anyhow::anyhow!("{name}: {source}")),
        Err(e) => {
            findings.push(Finding::new(
                Severity::Error,
                "SIMREC_UNKNOWN_FORMAT",
                e.to_string(),
            ));
            return Ok(Checked {
                name,
                path: path.to_path_buf(),
                findings,
                opened: None,
            });
        }
    };
    let mut source = match format.open(path, args.read.options(true, true)) {
        Ok(s) => s,
        Err(ReadError::Invalid { finding, .. }) => {
            findings.push(*finding);
            return Ok(Checked {
                name,
                path: path.to_path_buf(),
                findings,
                opened: None,
            });
        }
        Err(e) => return Err(e.into()),
    };
    let progress = Progress::new("validating");
    let mut range: Option<TimeRange> = None;
    let mut n = 0u64;
    while let Some(record) = source.next() {
        let record = record?;
        range = Some(range.map_or((record.time, record.time), |(a, b)| {
            (a.min(record.time), b.max(record.time))
        }));
        source.recycle(record);
        n += 1;
        if n % 1024 == 0 {
            let (d, t) = source.progress();
            progress.update(d, t);
        }
    }
    let findings = source
        .findings()
        .first()
        .map(|(_, f)| (*f).clone())
        .unwrap_or_default();
    Ok(Checked {
        name,
        path: path.to_path_buf(),
        findings,
        opened: Some((format, source.header().clone(), range)),
    })
}

/// Rules across files named together (a `.traj` and its `.state`).
fn check_together(results: &mut [Checked]) {
    let mut by_format: Vec<(&'static dyn Format, Vec<usize>)> = Vec::new();
    for (i, r) in results.iter().enumerate() {
        if let Some((format, _, _)) = &r.opened {
            match by_format
                .iter_mut()
                .find(|(f, _)| f.name() == format.name())
            {
                Some((_, v)) => v.push(i),
                None => by_format.push((*format, vec![i])),
            }
        }
    }
    for (format, members) in by_format {
        let files: Vec<(&Path, &Header, Option<TimeRange>)> = members
            .iter()
            .filter_map(|&i| {
                let r = &results[i];
                r.opened
                    .as_ref()
                    .map(|(_, h, range)| (r.path.as_path(), h, *range))
            })
            .collect();
        let found = format.check_together(&files);
        for (k, finding) in found {
            results[members[k]].findings.push(finding);
        }
    }
}
