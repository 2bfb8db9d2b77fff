//! `recover`: every intact record of a damaged file, written in its own format, and what
//! was not kept.

use std::path::{Path, PathBuf};

use crate::formats::origin::with_origin;
use crate::formats::{registry, ReadError, ReadOptions, Refusal, WriteError, WriteReport};
use crate::report::{Finding, Findings};

use super::write::outputs_for;
use super::{copy, PipelineError};

/// What recovering a file came to.
pub enum Recovered {
    /// The file cannot be read at all (its header is damaged, say): nothing written.
    Unreadable(Box<Finding>),
    /// Not one record was intact: nothing written.
    NothingIntact(Findings),
    /// What was kept, what reading found, and the files written.
    Written {
        report: WriteReport,
        findings: Findings,
        paths: Vec<PathBuf>,
    },
}

/// Reads `input` leniently (or as the format's own recovery reader reads it,
/// [`crate::formats::Recovery::open_recover`]) and writes every intact record to `output`, in
/// the input's format, stored as the input was
/// ([`crate::formats::Recovery::recover_flags`]).
pub fn recover(
    input: &Path,
    output: &Path,
    force: bool,
    options: ReadOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Recovered, PipelineError> {
    let format = registry::detect(input)?;
    let other = registry::format_for_output(output).filter(|named| {
        named.name() != format.name() && !registry::directory_keeps_format(format, output)
    });
    if let Some(named) = other {
        return Err(PipelineError::Write(WriteError::Refused {
            path: output.to_path_buf(),
            reason: Refusal::OtherFormat {
                input: format.name(),
                output: named.name(),
            },
        }));
    }
    let recovery = format.recovery();
    let opened = match recovery.and_then(|r| r.open_recover(input, options)) {
        Some(opened) => opened.and_then(|s| with_origin(s, input, options)),
        None => registry::open_as(format, input, options),
    };
    let mut source = match opened {
        Ok(s) => s,
        Err(ReadError::Invalid { finding, .. }) => return Ok(Recovered::Unreadable(finding)),
        Err(e) => return Err(e.into()),
    };
    let mut outputs = outputs_for(
        format,
        std::slice::from_ref(&input.to_path_buf()),
        force,
        false,
    );
    outputs.flags = recovery.map(|r| r.recover_flags(input)).unwrap_or_default();
    let sink = format.create(output, source.header(), &mut outputs)?;
    let report = copy(&mut *source, sink, progress)?;
    // One input, so one set of findings.
    let findings = source
        .findings()
        .first()
        .map(|(_, f)| (*f).clone())
        .unwrap_or_default();
    if report.records == 0 && findings.count(crate::report::Severity::Error) > 0 {
        return Ok(Recovered::NothingIntact(findings));
    }
    let paths = outputs.commit()?;
    Ok(Recovered::Written {
        report,
        findings,
        paths,
    })
}
