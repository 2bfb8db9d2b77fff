//! `simrec convert --each IN… -o DIR/ --to FORMAT`: every recording converted on its own into
//! DIR, `--jobs` at a time, going on past failures; a summary (input, output, records, loss,
//! exit) and the worst exit code.

use std::io::Write;
use std::path::{Path, PathBuf};

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::Table;

use super::common::{
    damaged, print_read_findings, read_request, stdout, AlignArgs, DamageArgs, ReadArgs,
    ReportFormat, SelectArgs, WriteArgs,
};
use super::{is_usage_error, Outcome, UsageError};
use crate::formats::registry::{self, writable_names};
use crate::formats::Format;
use crate::pipeline::batch::{output_names, recordings, run_parallel};
use crate::pipeline::{self, WriteRequest};

/// What one recording's conversion did.
struct Done {
    inputs: Vec<PathBuf>,
    output: PathBuf,
    records: u64,
    /// Values not kept (records affected, summed over the loss report's rows).
    lost: u64,
    exit: u8,
    error: Option<String>,
}

/// What `convert --each` was given.
pub struct Each<'a> {
    pub inputs: &'a [PathBuf],
    pub write: &'a WriteArgs,
    pub select: &'a SelectArgs,
    pub read: &'a ReadArgs,
    pub damage: DamageArgs,
    pub align: &'a AlignArgs,
    pub jobs: Option<usize>,
    pub format: ReportFormat,
}

/// How bad an exit code is: an error, then a command line that cannot be honoured, then loss.
fn severity(exit: u8) -> u8 {
    match exit {
        1 => 3,
        2 => 2,
        3 => 1,
        _ => 0,
    }
}

pub fn run(each: Each) -> anyhow::Result<Outcome> {
    let Some(name) = &each.write.to else {
        return Err(UsageError(format!(
            "--each needs --to FORMAT (one of: {})",
            writable_names()
        ))
        .into());
    };
    let format = registry::format_named(name).ok_or_else(|| {
        UsageError(format!(
            "unknown output format `{name}` (simrec writes: {})",
            writable_names()
        ))
    })?;
    let dir = &each.write.output;
    if dir.exists() && !dir.is_dir() {
        return Err(UsageError(format!(
            "--each writes one output per recording into a directory: {} is a file",
            dir.display()
        ))
        .into());
    }
    // Checked once here, so that a bad glob or option is one usage error, not one per job.
    each.select.selection()?;
    each.write.options.settings(format)?;
    let groups = recordings(each.inputs);
    let outputs = output_names(dir, &groups, format);
    let jobs = each.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let done = run_parallel(groups.len(), jobs, |i| {
        convert_one(&each, format, &groups[i], &outputs[i])
    });
    let mut out = stdout();
    match each.format {
        ReportFormat::Json => {
            for d in &done {
                let line = serde_json::json!({
                    "inputs": d.inputs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
                    "output": d.output.display().to_string(),
                    "records": d.records,
                    "lost": d.lost,
                    "exit": d.exit,
                    "error": d.error,
                });
                writeln!(out, "{line}")?;
            }
        }
        ReportFormat::Text => {
            let mut t = Table::new();
            t.load_preset(UTF8_FULL_CONDENSED);
            t.set_header(vec!["input", "output", "records", "lost", "exit"]);
            for d in &done {
                let inputs: Vec<String> =
                    d.inputs.iter().map(|p| p.display().to_string()).collect();
                t.add_row(vec![
                    inputs.join(" + "),
                    d.output.display().to_string(),
                    d.records.to_string(),
                    d.lost.to_string(),
                    d.exit.to_string(),
                ]);
            }
            writeln!(out, "{t}")?;
            for d in done.iter().filter(|d| d.error.is_some()) {
                let inputs: Vec<String> =
                    d.inputs.iter().map(|p| p.display().to_string()).collect();
                writeln!(
                    out,
                    "{}: {}",
                    inputs.join(" + "),
                    d.error.as_deref().unwrap_or_default()
                )?;
            }
        }
    }
    out.flush()?;
    let worst = done
        .iter()
        .map(|d| d.exit)
        .max_by_key(|&e| severity(e))
        .unwrap_or(0);
    match worst {
        0 => Ok(Outcome::Ok),
        3 => Ok(Outcome::Loss),
        2 => {
            let n = done.iter().filter(|d| d.exit == 2).count();
            Err(UsageError(format!(
                "{n} of {} recordings could not be converted as asked (see the summary)",
                done.len()
            ))
            .into())
        }
        _ => Ok(Outcome::Failed),
    }
}

fn convert_one(
    each: &Each,
    format: &'static dyn Format,
    inputs: &[PathBuf],
    output: &Path,
) -> Done {
    let mut done = Done {
        inputs: inputs.to_vec(),
        output: output.to_path_buf(),
        records: 0,
        lost: 0,
        exit: 0,
        error: None,
    };
    let result = (|| -> anyhow::Result<(u64, u64, bool)> {
        let read = read_request(
            inputs,
            each.read,
            each.damage,
            each.align,
            each.select,
            None,
        )?;
        let opened = read.open()?;
        let request = WriteRequest {
            output,
            format,
            force: each.write.force,
            dry_run: each.write.dry_run,
            settings: each.write.options.settings(format)?,
            split: false,
            resample: each.write.resample.or(each.write.frame_rate),
        };
        let (written, notes) = pipeline::convert(opened, request, &mut |_, _| {});
        // A damaged input was converted up to its damage: said here, exit 3 in the summary.
        print_read_findings(&notes.read_findings);
        let damaged = damaged(&notes.read_findings);
        let report = written?.report;
        let lost = report.loss.entries().map(|(_, _, _, n)| n).sum();
        Ok((report.records, lost, damaged))
    })();
    match result {
        Ok((records, lost, damaged)) => {
            done.records = records;
            done.lost = lost;
            done.exit = if lost > 0 || damaged { 3 } else { 0 };
        }
        Err(e) => {
            done.exit = if is_usage_error(&e) { 2 } else { 1 };
            done.error = Some(format!("{e:#}"));
        }
    }
    done
}
