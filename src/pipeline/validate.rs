//! `validate`: each file read to the end, leniently and decoding every payload, with the
//! findings of its format's rules, then the rules across files named together (a `.traj`
//! and its `.state`).

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::formats::icarus::compat;
use crate::formats::input::display_name;
use crate::formats::{registry, Format, ReadError, ReadOptions, TimeRange, Unreadable};
use crate::model::Header;
use crate::report::render::error_text;
use crate::report::{Finding, Findings, Severity};

/// A file opened for validation: its format, header and the time range of its records.
pub struct Opened {
    pub format: &'static dyn Format,
    pub header: Header,
    pub range: Option<TimeRange>,
}

/// One file's result.
pub struct Checked {
    /// The path as the user should see it.
    pub name: String,
    pub path: PathBuf,
    pub findings: Findings,
    /// `None` when the file could not be opened (its one finding says why).
    pub opened: Option<Opened>,
}

/// Checks every file, then the files named together. A file that cannot be read (missing,
/// unreadable, not a recording) is that file's result, with one error finding.
pub fn validate(
    files: &[PathBuf],
    options: ReadOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Vec<Checked> {
    let mut results: Vec<Checked> = files.iter().map(|p| check(p, options, progress)).collect();
    check_together(&mut results);
    results
}

/// A reading error as a finding.
fn unreadable(e: &ReadError) -> Finding {
    match e {
        ReadError::Invalid { finding, .. } => (**finding).clone(),
        ReadError::Unsupported(_) => {
            Finding::new(Severity::Error, "SIMREC_UNKNOWN_FORMAT", error_text(e))
        }
        _ => Finding::new(Severity::Error, "SIMREC_UNREADABLE", error_text(e)),
    }
}

fn check(path: &Path, options: ReadOptions, progress: &mut dyn FnMut(u64, u64)) -> Checked {
    let mut checked = Checked {
        name: display_name(path).display().to_string(),
        path: path.to_path_buf(),
        findings: Findings::default(),
        opened: None,
    };
    let options = ReadOptions {
        check_only: true,
        ..options
    };
    let opened = registry::detect(path)
        .and_then(|format| Ok((format, registry::open_as(format, path, options)?)));
    let (format, mut source) = match opened {
        Ok(o) => o,
        Err(e) => {
            checked.findings.push(unreadable(&e));
            return checked;
        }
    };
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
        if n.is_multiple_of(1024) {
            let (d, t) = source.progress();
            progress(d, t);
        }
    }
    if let Some((_, f)) = source.findings().first() {
        checked.findings = (*f).clone();
    }
    checked.findings.extend(failed);
    checked.opened = Some(Opened {
        format,
        header: source.header().clone(),
        range,
    });
    checked
}

/// Rules across files of one format named together.
fn check_together(results: &mut [Checked]) {
    let mut by_format: Vec<(&'static dyn Format, Vec<usize>)> = Vec::new();
    for (i, r) in results.iter().enumerate() {
        if let Some(opened) = &r.opened {
            match by_format
                .iter_mut()
                .find(|(f, _)| f.name() == opened.format.name())
            {
                Some((_, v)) => v.push(i),
                None => by_format.push((opened.format, vec![i])),
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
                    .map(|o| (r.path.as_path(), &o.header, o.range))
            })
            .collect();
        let found = format
            .multi_file()
            .map(|m| m.check_together(&files))
            .unwrap_or_default();
        for (k, finding) in found {
            results[members[k]].findings.push(finding);
        }
    }
}

/// The schema document `current` holds for compatibility checks (spec §A12): a
/// `schema.json` itself, or the schema of a recording (an `.icarec`, an Icarus HDF5 file).
pub fn current_schema(current: &Path, options: ReadOptions) -> Result<Json, ReadError> {
    let is_json_file = current.is_file()
        && current
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if is_json_file {
        let bytes = std::fs::read(current).map_err(|e| ReadError::from(e).in_file(current))?;
        return serde_json::from_slice(&bytes).map_err(|e| {
            ReadError::Unsupported(Unreadable::NotASchema {
                path: current.into(),
                error: e,
            })
        });
    }
    let format = registry::detect(current)?;
    let header_only = ReadOptions {
        decode: false,
        ..options
    };
    let source = registry::open_as(format, current, header_only)?;
    compat::schema_of(source.header()).ok_or_else(|| {
        ReadError::Unsupported(Unreadable::NoSchema {
            path: current.into(),
            format: format.name(),
        })
    })
}

/// Adds to each readable result the findings of its schema against `current` (spec §A12).
pub fn check_against(results: &mut [Checked], current: &Json) {
    for r in results {
        let Some(opened) = &r.opened else { continue };
        match compat::schema_of(&opened.header) {
            Some(schema) => {
                for f in compat::check(&schema, current) {
                    r.findings.push(f);
                }
            }
            None => r.findings.push(Finding::new(
                Severity::Error,
                "SIMREC_AGAINST_UNSUPPORTED",
                format!(
                    "a {} recording has no schema; --against checks Icarus recordings",
                    opened.header.format
                ),
            )),
        }
    }
}
