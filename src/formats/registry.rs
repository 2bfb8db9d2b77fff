//! The list of families, and through them of formats; how an input or output finds its
//! format, and a writer its family.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::family::Family;
use super::format::has_extension;
use super::format::{Detection, Format, SelectorFlag, WriteOption};
use super::input;
use super::output;
pub use super::output::names_directory;
use super::{
    elodin, export, icarus, nanover, tes, xrec, ReadError, ReadOptions, Source, Unreadable,
};

/// Every family simrec knows, each with its formats. Adding a family is one line here.
/// Detection tries the formats in this order, family by family: of formats equally sure of a
/// file the last wins, so Icarus comes last (a ustar archive is an `.icarec` before anything
/// its first member's bytes may look like, spec §A1).
pub static FAMILIES: &[&Family] = &[
    &nanover::FAMILY,
    &export::FAMILY,
    &elodin::FAMILY,
    &tes::FAMILY,
    &xrec::FAMILY,
    &icarus::FAMILY,
];

/// Every format, family by family.
pub fn formats() -> impl Iterator<Item = &'static dyn Format> {
    FAMILIES.iter().flat_map(|f| f.formats.iter().copied())
}

/// The family `format` is one of.
pub fn family_of(format: &dyn Format) -> Option<&'static Family> {
    FAMILIES.iter().copied().find(|f| f.has(format))
}

/// The family a recording whose header names `recorded` was read from, when it is one
/// (a merge of several families is of none).
pub fn family_recorded(recorded: &str) -> Option<&'static Family> {
    FAMILIES.iter().copied().find(|f| f.recorded(recorded))
}

/// Bytes read from the start of a file for detection.
const HEAD: usize = 4096;

/// The format of an input: magic bytes first, then the extension. Standard input (`-`)
/// cannot be peeked at without consuming it; it is read as NanoVer legacy, whose reader
/// tells a `.traj` from a `.state` by content.
pub fn detect(path: &Path) -> Result<&'static dyn Format, ReadError> {
    if output::is_partial(path) {
        return Err(ReadError::Unsupported(Unreadable::Partial(path.into())));
    }
    let mut head = Vec::with_capacity(HEAD);
    if path == Path::new("-") {
        let mut file = input::stdin_file().map_err(|e| ReadError::from(e).in_file(path))?;
        file.seek(SeekFrom::Start(0))
            .and_then(|_| file.take(HEAD as u64).read_to_end(&mut head))
            .map_err(|e| ReadError::from(e).in_file(path))?;
        if head.is_empty() {
            return Err(ReadError::Unsupported(Unreadable::EmptyStdin));
        }
    } else if !path.is_dir() {
        // A directory has no bytes to peek at: directory formats look at what it holds.
        File::open(path)
            .and_then(|f| f.take(HEAD as u64).read_to_end(&mut head))
            .map_err(|e| ReadError::from(e).in_file(path))?;
    }
    formats()
        .map(|f| (f.detect(path, &head), f))
        .filter(|(d, _)| *d != Detection::No)
        .max_by_key(|(d, _)| *d)
        .map(|(_, f)| f)
        .ok_or_else(|| {
            ReadError::Unsupported(Unreadable::UnknownFormat {
                path: path.into(),
                reads: readable_names(),
            })
        })
}

fn readable_names() -> Vec<&'static str> {
    formats().filter(|f| f.reads()).map(|f| f.name()).collect()
}

/// Opens an input with the format its bytes or name say (`-` is standard input).
pub fn open(path: &Path, options: ReadOptions) -> Result<Box<dyn Source>, ReadError> {
    open_as(detect(path)?, path, options)
}

/// Opens `path` as `format`, with the origin `options` give to a recording without one
/// (`--epoch`, `--time-system`).
pub fn open_as(
    format: &dyn Format,
    path: &Path,
    options: ReadOptions,
) -> Result<Box<dyn Source>, ReadError> {
    super::origin::with_origin(format.open(path, options)?, path, options)
}

/// The format `--to` names.
pub fn format_named(name: &str) -> Option<&'static dyn Format> {
    formats().find(|f| f.names().contains(&name))
}

/// The format an output path's extension selects; an output directory (`out/`, or a
/// directory that exists) without a known extension selects the directory format.
pub fn format_for_output(path: &Path) -> Option<&'static dyn Format> {
    let by_extension = path.file_name().and_then(|n| n.to_str()).and_then(|name| {
        formats()
            .flat_map(|f| f.extensions().iter().map(move |e| (*e, f)))
            .filter(|(e, _)| has_extension(name, e))
            .max_by_key(|(e, _)| e.len())
            .map(|(_, f)| f)
    });
    by_extension.or_else(|| {
        names_directory(path)
            .then(|| formats().find(|f| default_for_directories(*f)))
            .flatten()
    })
}

/// Whether `output` names a directory by its form alone (`out/`, no extension) and `input`
/// is a recording that is a directory (an Elodin replay, an `.icarec` directory): then
/// `slice`, `merge` and `recover` write the input's own format there, not the default one.
pub fn directory_keeps_format(input: &dyn Format, output: &Path) -> bool {
    input.directory().is_some() && format_for_output(output).is_some_and(default_for_directories)
}

/// Whether `format` is the one an output directory means ([`crate::formats::Directory`]).
pub fn default_for_directories(format: &dyn Format) -> bool {
    format
        .directory()
        .is_some_and(|d| d.default_for_directories())
}

/// The formats, for help texts: `NanoVer legacy .traj/.state (read, write), …`.
pub fn formats_help() -> String {
    formats()
        .map(|f| {
            let what = match (f.reads(), f.writes()) {
                (true, true) => "read, write",
                (true, false) => "read",
                _ => "write",
            };
            let directory = if default_for_directories(f) {
                "; the default for an output directory `out/`"
            } else {
                ""
            };
            format!("{} ({what}{directory})", f.title())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every writer option some format declares, once per flag, in registry order.
pub fn write_options() -> Vec<&'static WriteOption> {
    let mut options: Vec<&'static WriteOption> = Vec::new();
    for o in formats().flat_map(|f| f.write_options()) {
        if !options.iter().any(|known| known.flag == o.flag) {
            options.push(o);
        }
    }
    options
}

/// The formats that take writer option `flag`, with the values each accepts.
/// Every selector a format's slicer declares, each flag once (the first format's).
pub fn selectors() -> Vec<&'static SelectorFlag> {
    let mut all: Vec<&'static SelectorFlag> = Vec::new();
    for s in formats()
        .filter_map(|f| f.slicer())
        .flat_map(|s| s.selectors())
    {
        if !all.iter().any(|a| a.flag == s.flag) {
            all.push(s);
        }
    }
    all
}

pub fn formats_with_option(flag: &str) -> Vec<(&'static dyn Format, &'static WriteOption)> {
    formats()
        .flat_map(|f| {
            f.write_options()
                .iter()
                .filter(move |o| o.flag == flag)
                .map(move |o| (f, o))
        })
        .collect()
}

/// Every name `--to` accepts, for help and errors.
pub fn writable_names() -> String {
    formats()
        .filter(|f| f.writes())
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_beat_names_and_names_need_a_stem() {
        let dir = tempfile::tempdir().unwrap();
        for (name, format) in [
            ("a.traj", "nanover-legacy"),
            ("a.state", "nanover-legacy"),
            ("a.nanover.zip", "nanover-zip"),
            ("a.3es", "3es"),
        ] {
            // Empty: only the name can tell.
            let path = dir.path().join(name);
            std::fs::write(&path, b"").unwrap();
            assert_eq!(detect(&path).map(|f| f.name()).ok(), Some(format), "{name}");
        }
        // A NanoVer legacy magic in a file named like a 3es capture: the bytes win.
        let path = dir.path().join("b.3es");
        std::fs::write(&path, 0x5c71_e3c4_9989_b7e3u64.to_le_bytes()).unwrap();
        assert_eq!(detect(&path).map(|f| f.name()).ok(), Some("nanover-legacy"));
        let named_only_by_extension = dir.path().join(".3es");
        std::fs::write(&named_only_by_extension, b"").unwrap();
        assert!(detect(&named_only_by_extension).is_err());
        assert_eq!(Detection::by(false, false), Detection::No);
    }

    #[test]
    fn every_format_is_of_one_family() {
        for format in formats() {
            let of = FAMILIES.iter().filter(|f| f.has(format)).count();
            assert_eq!(of, 1, "{}", format.name());
        }
    }

    #[test]
    fn a_recording_is_of_a_family_when_every_format_it_was_read_from_is() {
        let family = |recorded| family_recorded(recorded).map(|f| f.name);
        assert_eq!(family("nanover-traj+nanover-state"), Some("nanover"));
        assert_eq!(family("icarec+icarus-csv"), Some("icarus"));
        assert_eq!(family("3es"), Some("3es"));
        assert_eq!(family("icarec+xrec"), None);
        assert_eq!(family("jsonl"), Some("export"));
    }
}
