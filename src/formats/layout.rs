//! The rule of `formats/mod.rs`, checked on the sources: no family imports another family,
//! and nothing below the families imports one. A family is a folder of `src/formats/`
//! other than the shared ones; only the registry (and the module list) names them all.

use std::fs;
use std::path::{Path, PathBuf};

/// Folders of `src/formats/` below the families: anyone may import them.
const SHARED_FOLDERS: &[&str] = &["mapping", "output"];

/// Files of `src/formats/` that name every family: the list of modules and the registry.
const ABOVE: &[&str] = &["mod.rs", "registry.rs", "layout.rs"];

fn formats_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/formats")
}

fn families() -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(formats_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|n| !SHARED_FOLDERS.contains(&n.as_str()))
        .collect();
    names.sort();
    names
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The families of `families` that `code` imports by path: `formats::F`, `super::F` (a
/// `super::super::…` climbing out of a family) or `F` in a `formats::{…}` list. Comments are
/// not code.
fn imported<'f>(code: &str, families: &'f [String]) -> Vec<&'f str> {
    let code: String = code
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let word_after = |at: usize| -> String {
        code[at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = Vec::new();
    for prefix in ["formats::", "super::"] {
        for (at, _) in code.match_indices(prefix) {
            let after = at + prefix.len();
            if code[after..].starts_with('{') {
                let end = code[after..].find('}').map_or(code.len(), |e| after + e);
                found.extend(
                    code[after + 1..end]
                        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .map(str::to_string),
                );
            } else {
                found.push(word_after(after));
            }
        }
    }
    families
        .iter()
        .map(String::as_str)
        .filter(|f| found.iter().any(|w| w == f))
        .collect()
}

#[test]
fn no_family_imports_another_and_nothing_below_imports_one() {
    let families = families();
    assert!(families.iter().any(|f| f == "icarus"), "{families:?}");
    let mut wrong = Vec::new();
    let mut files = Vec::new();
    rust_files(&formats_dir(), &mut files);
    for file in files {
        let relative = file.strip_prefix(formats_dir()).unwrap();
        let first = relative.components().next().unwrap().as_os_str();
        let first = first.to_string_lossy();
        if ABOVE.contains(&first.as_ref()) {
            continue;
        }
        // A family may name itself; a shared file may name none.
        let own = relative.components().count() > 1 && families.contains(&first.to_string());
        let code = fs::read_to_string(&file).unwrap();
        for family in imported(&code, &families) {
            if !(own && family == first) {
                wrong.push(format!("{} imports {family}", relative.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn the_check_sees_each_form_of_import() {
    let families = ["icarus".to_string(), "tes".to_string()];
    for code in [
        "use crate::formats::tes::encode;",
        "use super::super::tes::packet;",
        "use crate::formats::{ReadError,\n    tes, Source};",
    ] {
        assert_eq!(imported(code, &families), ["tes"], "{code}");
    }
    for code in [
        "// formats::tes: a comment",
        "use super::testing;",
        "use crate::formats::{ReadError, Source};",
    ] {
        assert!(imported(code, &families).is_empty(), "{code}");
    }
}
