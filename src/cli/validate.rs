//! `simrec validate`: every rule of each file's spec, with codes, offsets and record indices.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::common::{stdout, ReadArgs, ReportFormat};
use super::progress::Progress;
use super::{error_text, Outcome};
use crate::formats::input::display_name;
use crate::formats::{registry, Format, ReadError, ReadOptions, TimeRange};
use crate::model::Header;
use crate::report::render::{finding_json, finding_text, plural};
use crate::report::summary::SCHEMA_VERSION;
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
    /// Also check every value where the format has such checks (NaN and infinities per signal)
    #[arg(long)]
    deep: bool,
    /// Also list info findings in text output (JSON always has them)
    #[arg(long)]
    info: bool,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    format: ReportFormat,
    #[command(flatten)]
    read: ReadArgs,
}

/// Findings of one code shown in text; the rest are counted (JSON lists them).
const SHOWN_PER_CODE: usize = 3;

/// Findings grouped by code, codes in the order they were first found.
fn by_code<'a>(
    findings: impl Iterator<Item = &'a Finding>,
) -> Vec<(&'static str, Vec<&'a Finding>)> {
    let mut groups: Vec<(&'static str, Vec<&'a Finding>)> = Vec::new();
    for f in findings {
        match groups.iter_mut().find(|(code, _)| *code == f.code) {
            Some((_, g)) => g.push(f),
            None => groups.push((f.code, vec![f])),
        }
    }
    groups
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
    let mut results: Vec<Checked> = args.files.iter().map(|p| check(p, &args)).collect();
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
                        "schema_version": SCHEMA_VERSION,
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
                let shown = list
                    .iter()
                    .filter(|f| args.info || f.severity > Severity::Info);
                for (code, group) in by_code(shown) {
                    for f in group.iter().take(SHOWN_PER_CODE) {
                        writeln!(out, "  {}", finding_text(f).replace('\n', "\n  "))?;
                    }
                    let more = r.findings.total(code) - SHOWN_PER_CODE.min(group.len()) as u64;
                    if more > 0 {
                        writeln!(
                            out,
                            "  … and {more} more {code} (`--format json` lists them)"
                        )?;
                    }
                }
            }
        }
    }
    out.flush()?;
    Ok(outcome)
}

/// Reads one file to the end, leniently and decoding every payload. A file that cannot be
/// read (missing, unreadable, not a recording) is that file's result, with one error finding.
fn check(path: &Path, args: &Args) -> Checked {
    let name = display_name(path).display().to_string();
    let mut checked = Checked {
        name,
        path: path.to_path_buf(),
        findings: Findings::default(),
        opened: None,
    };
    let unreadable = |e: &ReadError| match e {
        ReadError::Invalid { finding, .. } => (**finding).clone(),
        ReadError::Unsupported(_) => {
            Finding::new(Severity::Error, "SIMREC_UNKNOWN_FORMAT", error_text(e))
        }
        _ => Finding::new(Severity::Error, "SIMREC_UNREADABLE", error_text(e)),
    };
    let opened = registry::detect(path).and_then(|format| {
        Ok((
            format,
            format.open(
                path,
                ReadOptions {
                    deep: args.deep,
                    ..args.read.options(true, true)
                },
            )?,
        ))
    });
    let (format, mut source) = match opened {
        Ok(o) => o,
        Err(e) => {
            checked.findings.push(unreadable(&e));
            return checked;
        }
    };
    let progress = Progress::new("validating");
    let mut range: Option<TimeRange> = None;
    let mut n = 0u64;
    let mut failed = None;
    while let Some(record) = source.next() {
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                // Lenient reading reports damage as findings; what still stops it (an I/O
                // error mid-file) is reported the same way.
                failed = Some(unreadable(&e));
                break;
            }
        };
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
    if let Some((_, f)) = source.findings().first() {
        checked.findings = (*f).clone();
    }
    checked.findings.extend(failed);
    checked.opened = Some((format, source.header().clone(), range));
    checked
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
