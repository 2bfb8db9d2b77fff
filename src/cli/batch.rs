//! What the batch commands (`validate`, `inspect`, `convert --each`) share: their arguments
//! gathered into recordings (`pipeline::batch`), the files skipped, and the summary at the
//! end, one line on stderr and one JSON object.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};

use super::common::ReportFormat;
use super::diag::say;
use super::UsageError;
use crate::pipeline::batch::{self, Batch, Gather, Skipped};
use crate::report::render::plural;
use crate::report::summary::SCHEMA_VERSION;

/// The recordings `args` name (files, directories walked, globs expanded); a bad glob, or
/// one that matches nothing, is a usage error. What is skipped is listed on stderr.
pub fn gather(args: &[PathBuf], strict: bool, exclude: Option<&Path>) -> anyhow::Result<Batch> {
    let batch =
        batch::gather(args, Gather { strict, exclude }).map_err(|e| UsageError(e.to_string()))?;
    for s in &batch.skipped {
        say!("skipped {}: {}", s.path.display(), s.reason);
    }
    Ok(batch)
}

/// The summary at the end of a batch that walked a directory or expanded a glob: one line on
/// stderr and, with `--format json`, the last object. Files named one by one print what
/// they always did.
pub fn summarise(
    out: &mut impl Write,
    batch: &Batch,
    tally: &Tally,
    format: ReportFormat,
) -> std::io::Result<()> {
    if !batch.expanded {
        return Ok(());
    }
    if format == ReportFormat::Json {
        writeln!(out, "{}", tally.json(&batch.skipped))?;
    }
    out.flush()?;
    say!("{}", tally.line());
    Ok(())
}

/// The end of a `validate` or `inspect` run over `batch` whose files (`with_errors`, by
/// index) have been reported: the summary ([`summarise`]), a recording being `with errors`
/// when one of its files is.
pub fn end_of_checks(
    out: &mut impl Write,
    batch: &Batch,
    with_errors: &[bool],
    format: ReportFormat,
) -> std::io::Result<()> {
    let recordings = batch.recordings();
    let outcomes = recordings.iter().map(|r| {
        if r.members.iter().any(|&m| with_errors[m]) {
            "with errors"
        } else {
            "ok"
        }
    });
    let tally = Tally::of(outcomes, &["ok", "with errors"], batch.skipped.len());
    summarise(out, batch, &tally, format)
}

/// How many recordings ended how, for the summary.
pub struct Tally {
    pub recordings: usize,
    /// (what, how many) in the order shown: `ok`, `with errors`, …
    pub counts: Vec<(&'static str, usize)>,
    pub skipped: usize,
}

impl Tally {
    /// The outcome of each recording counted, by `labels` (all shown, zeros too, in that
    /// order).
    pub fn of<'a>(
        outcomes: impl Iterator<Item = &'a str>,
        labels: &[&'static str],
        skipped: usize,
    ) -> Tally {
        let mut counts: Vec<(&'static str, usize)> = labels.iter().map(|l| (*l, 0)).collect();
        let mut recordings = 0;
        for outcome in outcomes {
            recordings += 1;
            if let Some(c) = counts.iter_mut().find(|(l, _)| *l == outcome) {
                c.1 += 1;
            }
        }
        Tally {
            recordings,
            counts,
            skipped,
        }
    }

    /// `57 recordings: 38 ok, 19 with errors, 3 skipped`.
    pub fn line(&self) -> String {
        let counts: Vec<String> = (self.counts.iter())
            .map(|(label, n)| format!("{n} {label}"))
            .chain([format!("{} skipped", self.skipped)])
            .collect();
        format!(
            "{}: {}",
            plural(self.recordings as u64, "recording"),
            counts.join(", ")
        )
    }

    /// The last object of a batch's JSON Lines: the same counts (`with errors` as
    /// `with_errors`) and what was skipped, and why.
    pub fn json(&self, skipped: &[Skipped]) -> Json {
        let mut summary = serde_json::Map::new();
        summary.insert("recordings".into(), json!(self.recordings));
        for (label, n) in &self.counts {
            summary.insert(label.replace(' ', "_"), json!(n));
        }
        summary.insert("skipped".into(), json!(self.skipped));
        let skipped: Vec<Json> = skipped
            .iter()
            .map(|s| json!({"path": s.path.display().to_string(), "reason": s.reason}))
            .collect();
        json!({"schema_version": SCHEMA_VERSION, "summary": summary, "skipped": skipped})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_line_and_object_have_the_same_counts() {
        let skipped = [Skipped {
            path: PathBuf::from("README.md"),
            reason: "not a recording simrec reads".into(),
        }];
        let outcomes = (0..57).map(|i| if i < 38 { "ok" } else { "with errors" });
        let tally = Tally::of(outcomes, &["ok", "with errors"], 3);
        assert_eq!(
            tally.line(),
            "57 recordings: 38 ok, 19 with errors, 3 skipped"
        );
        assert_eq!(
            tally.json(&skipped).to_string(),
            r#"{"schema_version":1,"summary":{"recordings":57,"ok":38,"with_errors":19,"skipped":3},"skipped":[{"path":"README.md","reason":"not a recording simrec reads"}]}"#
        );
    }
}
