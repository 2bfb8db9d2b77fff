//! `simrec recover`: keep every intact record of a damaged file, and say what was not kept.

use std::path::PathBuf;

use super::common::{path_list, ReadArgs};
use super::diag::say;
use super::progress::Progress;
use super::Outcome;
use crate::formats::input::display_name;
use crate::pipeline::{self, Recovered};
use crate::report::render::{finding_text, loss_table};
use crate::report::{Finding, Findings, Severity};

/// Copy every intact record of a damaged recording into a new file
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  simrec recover crashed.traj -o fixed.traj\n  simrec recover --nanover-version 1 old.traj -o old-v2.traj\n\n\
    Records are never dropped for their timestamps. Exit 0 when every record was intact (copied\n\
    unchanged, or re-encoded with every value kept), 3 when anything was dropped, skipped,\n\
    repaired or lost, 1 when nothing could be recovered."
)]
pub struct Args {
    /// The damaged recording
    #[arg(value_name = "IN")]
    input: PathBuf,
    /// Where to write what can be recovered (same format as the input)
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// Replace an existing output once the new one is complete: a file, an empty directory or a
    /// recording of the output format holding nothing else; never an input, nor anything
    /// inside one
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    read: ReadArgs,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let name = display_name(&args.input).display().to_string();
    let progress = Progress::new("recovering");
    let recovered = pipeline::recover(
        &args.input,
        &args.output,
        args.force,
        args.read.options(true, true),
        &mut |d, t| progress.update(d, t),
    )?;
    drop(progress);
    let (report, findings, paths) = match recovered {
        Recovered::Unreadable(finding) => {
            eprintln!("{name}: {}", finding_text(&finding));
            eprintln!("{name}: nothing can be recovered");
            return Ok(Outcome::Failed);
        }
        Recovered::NothingIntact(findings) => {
            for p in problems(&findings) {
                eprintln!("{name}: {p}");
            }
            eprintln!("{name}: no intact record to recover; nothing written");
            return Ok(Outcome::Failed);
        }
        Recovered::Written {
            report,
            findings,
            paths,
        } => (report, findings, paths),
    };
    let errors = findings.count(Severity::Error);
    say!(
        "{name}: kept {} records in {}",
        report.records,
        path_list(&paths)
    );
    // A writer that repaired the file without dropping anything (an XREC End appended)
    // says so in its loss report: not "intact".
    if errors == 0 && report.verbatim == report.records && report.loss.is_empty() {
        say!("{name}: every record was intact: nothing dropped, every record copied unchanged");
        return Ok(Outcome::Ok);
    }
    if errors == 0 && report.loss.is_empty() {
        // A healthy file of a format whose records carry no original bytes (or an old
        // version upgraded): every value is kept, only the encoding is simrec's own.
        say!(
            "{name}: nothing dropped; {} records were re-encoded with every value kept",
            report.records - report.verbatim
        );
        return Ok(Outcome::Ok);
    }
    if errors == 0 {
        say!(
            "{name}: nothing dropped, but some values could not be re-encoded:\n{}",
            loss_table(&report.loss)
        );
        return Ok(Outcome::Loss);
    }
    say!("{name}: what was dropped, skipped or repaired:");
    for p in problems(&findings) {
        say!("  {p}");
    }
    if !report.loss.is_empty() {
        // What the writer dropped or changed on top (3es: messages of objects whose damaged
        // Create was dropped).
        eprintln!("{}", loss_table(&report.loss));
    }
    Ok(Outcome::Loss)
}

/// The errors reading found, for people. Their hints all say "run recover": not worth
/// repeating here.
fn problems(findings: &Findings) -> Vec<String> {
    findings
        .list()
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| {
            finding_text(&Finding {
                hint: None,
                ..f.clone()
            })
        })
        .collect()
}
