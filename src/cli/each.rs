//! `simrec convert --each IN… -o DIR/ --to FORMAT`: every recording (files, directories
//! walked, globs expanded) converted on its own into DIR, `--jobs` at a time, going on past
//! failures; a table (input, output, records, loss, exit), a summary and the worst exit code.

use std::io::Write;
use std::path::{Path, PathBuf};

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::Table;

use super::batch::{self, Tally};
use super::common::{
    damaged, print_read_findings, stdout, AlignArgs, DamageArgs, Given, ReadArgs, ReportFormat,
    SelectArgs, WriteArgs,
};
use super::diag::say;
use super::progress::BatchProgress;
use super::{exit_code, Outcome, UsageError};
use crate::formats::output::{clash_with_inputs, resolved_inputs};
use crate::formats::registry::writable_names;
use crate::formats::Format;
use crate::pipeline;
use crate::pipeline::batch::{output_names, run_parallel, Recording};
use crate::pipeline::request::{checked_flags, named_format};

/// What one recording's conversion did.
struct Done {
    inputs: Vec<PathBuf>,
    /// What was written (or would be, on a dry run), or was already there; none when the
    /// conversion failed.
    output: Option<PathBuf>,
    records: u64,
    /// Values not kept (records affected, summed over the loss report's rows).
    lost: u64,
    exit: u8,
    error: Option<String>,
    /// Not converted: `--skip-existing`, and the output exists.
    existing: bool,
}

/// What `convert --each` was given.
pub struct Each<'a> {
    pub inputs: &'a [PathBuf],
    /// The directory the outputs go in.
    pub output: &'a Path,
    pub write: &'a WriteArgs,
    pub select: &'a SelectArgs,
    pub read: &'a ReadArgs,
    pub damage: DamageArgs,
    pub align: &'a AlignArgs,
    pub jobs: Option<usize>,
    pub format: ReportFormat,
    /// Files found that are not recordings fail instead of being skipped.
    pub strict: bool,
    /// A recording whose output exists is left as it is.
    pub skip_existing: bool,
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
    let format = named_format(name)?;
    let dir = each.output;
    if dir.exists() && !dir.is_dir() {
        return Err(UsageError(format!(
            "--each writes one output per recording into a directory: {} is a file",
            dir.display()
        ))
        .into());
    }
    // Checked once here, so that a bad glob or option is one usage error, not one per job.
    each.select.selection()?;
    checked_flags(&each.write.options.given(), format)?;
    let found = batch::gather(each.inputs, each.strict, Some(dir))?;
    let recordings = found.recordings();
    let outputs = output_names(dir, &recordings, format).map_err(|e| UsageError(e.to_string()))?;
    // No output goes over, around or into any input of the batch, not only its own.
    let protected = resolved_inputs(&found.paths());
    let jobs = each.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let sizes: Vec<u64> = recordings
        .iter()
        .map(|r| r.inputs.iter().map(|p| size_of(p)).sum())
        .collect();
    let progress = BatchProgress::new("converting", recordings.len(), sizes.iter().sum());
    let done = run_parallel(recordings.len(), jobs, |i| {
        let mut job = progress.job(sizes[i]);
        let output = (outputs[i].as_path(), protected.as_slice());
        convert_one(&each, format, &recordings[i], output, &mut |d, t| {
            job.update(d, t)
        })
    });
    drop(progress);
    let mut out = stdout();
    match each.format {
        ReportFormat::Json => {
            for d in &done {
                let line = serde_json::json!({
                    "inputs": d.inputs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
                    "output": d.output.as_ref().map(|p| p.display().to_string()),
                    "records": d.records,
                    "lost": d.lost,
                    "exit": d.exit,
                    "error": d.error,
                    "skipped": d.existing,
                });
                writeln!(out, "{line}")?;
            }
        }
        ReportFormat::Text => write_table(&mut out, &done)?,
    }
    let tally = tally(&done, found.skipped.len(), each.skip_existing);
    batch::summarise(&mut out, &found, &tally, each.format)?;
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

/// The recordings counted by how their conversion ended.
fn tally(done: &[Done], skipped: usize, skip_existing: bool) -> Tally {
    let mut labels = vec!["ok", "with loss", "with errors"];
    if skip_existing {
        labels.push("already converted");
    }
    let outcomes = done.iter().map(|d| match d.exit {
        _ if d.existing => "already converted",
        0 => "ok",
        3 => "with loss",
        _ => "with errors",
    });
    Tally::of(outcomes, &labels, skipped)
}

/// The table for people, then each error.
fn write_table(out: &mut impl Write, done: &[Done]) -> std::io::Result<()> {
    let inputs = |d: &Done| {
        let names: Vec<String> = d.inputs.iter().map(|p| p.display().to_string()).collect();
        names.join(" + ")
    };
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(vec!["input", "output", "records", "lost", "exit"]);
    for d in done {
        let records = if d.existing {
            "exists: skipped".to_string()
        } else {
            d.records.to_string()
        };
        t.add_row(vec![
            inputs(d),
            d.output
                .as_ref()
                .map_or("-".into(), |p| p.display().to_string()),
            records,
            d.lost.to_string(),
            d.exit.to_string(),
        ]);
    }
    writeln!(out, "{t}")?;
    for d in done {
        if let Some(error) = &d.error {
            writeln!(out, "{}: {error}", inputs(d))?;
        }
    }
    Ok(())
}

/// Bytes in `path`: a file's length, or the files under a directory.
fn size_of(path: &Path) -> u64 {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => std::fs::read_dir(path)
            .map(|entries| entries.flatten().map(|e| size_of(&e.path())).sum())
            .unwrap_or(0),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}

/// Converts `recording` into `output`, which must stay clear of every input of the batch
/// (`protected`, resolved).
fn convert_one(
    each: &Each,
    format: &'static dyn Format,
    recording: &Recording,
    (output, protected): (&Path, &[PathBuf]),
    progress: &mut dyn FnMut(u64, u64),
) -> Done {
    let mut done = Done {
        inputs: recording.inputs.clone(),
        output: None,
        records: 0,
        lost: 0,
        exit: 0,
        error: None,
        existing: false,
    };
    if let Some(why) = clash_with_inputs(output, protected) {
        done.exit = 2;
        done.error = Some(format!(
            "cannot write {}: {why}: simrec never writes over its inputs; nothing was written",
            output.display()
        ));
        return done;
    }
    if each.skip_existing && output.exists() {
        done.output = Some(output.to_path_buf());
        done.existing = true;
        return done;
    }
    let inputs = &recording.inputs;
    let result = (|| -> anyhow::Result<(u64, u64, bool)> {
        let mut request = Given {
            inputs: inputs.clone(),
            read: each.read,
            damage: each.damage,
            align: each.align,
            select: each.select,
            window: None,
            write: each.write,
        }
        .request()?;
        // A collection's entry says whether the recording is in it; the writer is given
        // the collection.
        let target = if format.collection().is_some() {
            each.output
        } else {
            output
        };
        request.output.path = Some(target.to_path_buf());
        let pipeline::Converted { written, notes, .. } =
            pipeline::convert(request, &mut |line| say!("{line}"), progress)?;
        // A damaged input was converted up to its damage: said here, exit 3 in the summary.
        print_read_findings(&notes.read_findings);
        let damaged = damaged(&notes.read_findings);
        let report = written?.report;
        let lost = report.loss.entries().map(|(_, _, _, n)| n).sum();
        Ok((report.records, lost, damaged))
    })();
    match result {
        Ok((records, lost, damaged)) => {
            done.output = Some(output.to_path_buf());
            done.records = records;
            done.lost = lost;
            done.exit = if lost > 0 || damaged { 3 } else { 0 };
        }
        Err(e) => {
            done.exit = exit_code(&e);
            done.error = Some(format!("{e:#}"));
        }
    }
    done
}
