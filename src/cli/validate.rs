//! `simrec validate`: every rule of each file's spec, with codes, offsets and record indices.

use std::io::Write;
use std::path::PathBuf;

use serde_json::json;

use super::batch;
use super::common::{stdout, ReadArgs, ReportFormat};
use super::progress::Progress;
use super::Outcome;
use crate::cli::UsageError;
use crate::formats::ReadOptions;
use crate::pipeline::validate::{check_against, current_schema, validate};
use crate::report::render::{error_text, finding_json, finding_text, plural};
use crate::report::summary::SCHEMA_VERSION;
use crate::report::{Finding, Severity};

/// Check files against their format's rules; exit 1 when any has errors
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  simrec validate run.traj run.state\n  \
    simrec validate --strict --format json out/*.traj || echo 'broken recordings'\n  \
    simrec validate runs/ 'archive/**/*.h5'")]
pub struct Args {
    /// Recordings to check: files, directories (every recording in them, recursively) or
    /// quoted globs (`'runs/**/*.h5'`); a .traj and a .state named or found together are
    /// also checked as a pair
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Treat warnings as errors, and files found in a directory or by a glob that are not
    /// recordings as failures (not skipped)
    #[arg(long)]
    strict: bool,
    /// Also check every value where the format has such checks (NaN and infinities per signal)
    #[arg(long)]
    deep: bool,
    /// With --deep, also report (info) a value that changes by more than X between
    /// consecutive frames, where the format has the check (Icarus .icarec)
    #[arg(long, value_name = "X", requires = "deep", value_parser = threshold)]
    discontinuity: Option<f64>,
    /// Also check each recording against a current schema, by the compatibility rules of
    /// its format (Icarus: a schema.json, an .icarec or an Icarus HDF5 file; see
    /// docs/formats/icarec.md)
    #[arg(long, value_name = "CURRENT")]
    against: Option<PathBuf>,
    /// Also list info findings in text output (JSON always has them)
    #[arg(long)]
    info: bool,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    format: ReportFormat,
    #[command(flatten)]
    read: ReadArgs,
}

fn threshold(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err("expected a number of zero or more".into()),
    }
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

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let options = ReadOptions {
        deep: args.deep,
        discontinuity: args.discontinuity,
        ..args.read.options(true, true)
    };
    let current = match &args.against {
        Some(path) => Some(current_schema(path, options).map_err(|e| {
            UsageError(format!("--against {}: {}", path.display(), error_text(&e)))
        })?),
        None => None,
    };
    let batch = batch::gather(&args.files, args.strict, None)?;
    let progress = Progress::new("validating");
    let mut results = validate(&batch.paths(), options, &mut |d, t| progress.update(d, t));
    drop(progress);
    if let Some(current) = &current {
        check_against(&mut results, current);
    }
    let mut out = stdout();
    let mut outcome = Outcome::Ok;
    let mut failed = Vec::with_capacity(results.len());
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
        failed.push(errors > 0);
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
                        "format": r.opened.as_ref().map(|o| o.header.format.clone()),
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
    batch::end_of_checks(&mut out, &batch, &failed, args.format)?;
    out.flush()?;
    Ok(outcome)
}
