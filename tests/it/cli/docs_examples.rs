//! Every example in docs/commands.md runs as written: each ```console block is a shell
//! session (`$ command`, then what it prints), run in the scratch directory that the
//! nearest `<!-- examples: … -->` comment above it sets up, with the built `simrec` first
//! on PATH. A block's commands must exit as shown (`[exit N]` after the output; 0 when
//! absent), and every line it shows must be printed (on stdout or stderr): exactly, or up
//! to `…` where a long line or a run of lines was cut. Every code fence must be closed.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util;

/// One `$ command` of a session, with what the docs show it printing.
struct Example {
    line: usize,
    command: String,
    shown: Vec<String>,
    exit: i32,
}

/// A run of examples sharing one scratch directory.
struct Section {
    /// `name=fixture/path` pairs: copies made into the scratch directory first.
    files: Vec<(String, String)>,
    examples: Vec<Example>,
}

fn parse(doc: &str) -> Vec<Section> {
    let mut sections: Vec<Section> = Vec::new();
    let mut fence: Option<(usize, String)> = None;
    for (i, raw) in doc.lines().enumerate() {
        let line = raw.trim_end();
        if let Some(setup) = line
            .strip_prefix("<!-- examples:")
            .and_then(|s| s.strip_suffix("-->"))
        {
            assert!(fence.is_none(), "line {}: setup inside a code block", i + 1);
            let files = setup
                .split_whitespace()
                .map(|pair| {
                    let (name, from) = pair.split_once('=').unwrap_or((pair, pair));
                    (name.to_string(), from.to_string())
                })
                .collect();
            sections.push(Section {
                files,
                examples: Vec::new(),
            });
            continue;
        }
        if let Some(info) = line.strip_prefix("```") {
            fence = match fence {
                None => Some((i + 1, info.to_string())),
                Some(_) => None,
            };
            continue;
        }
        let Some((_, info)) = &fence else { continue };
        if info != "console" {
            continue;
        }
        let section = sections
            .last_mut()
            .unwrap_or_else(|| panic!("line {}: a console block before any setup", i + 1));
        if let Some(command) = line.strip_prefix("$ ") {
            section.examples.push(Example {
                line: i + 1,
                command: command.to_string(),
                shown: Vec::new(),
                exit: 0,
            });
        } else if let Some(example) = section.examples.last_mut() {
            match line
                .strip_prefix("[exit ")
                .and_then(|s| s.strip_suffix(']'))
            {
                Some(code) => example.exit = code.parse().expect("[exit N]"),
                None if !line.is_empty() => example.shown.push(line.to_string()),
                None => {}
            }
        }
    }
    if let Some((line, _)) = fence {
        panic!("docs/commands.md: the code block opened at line {line} is never closed");
    }
    sections
}

/// Whether `shown` (a line of the docs) is among the printed lines: exactly, or, where the
/// docs cut it with `…`, every piece between the cuts in order.
fn printed(shown: &str, lines: &[&str]) -> bool {
    if !shown.contains('…') {
        return lines.iter().any(|l| l.trim_end() == shown);
    }
    let pieces: Vec<&str> = shown
        .split('…')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    pieces.is_empty()
        || lines.iter().any(|l| {
            let mut rest = *l;
            pieces.iter().all(|p| match rest.find(p) {
                Some(at) => {
                    rest = &rest[at + p.len()..];
                    true
                }
                None => false,
            })
        })
}

#[test]
fn every_example_in_commands_md_runs_as_written() {
    let ran = run_examples("docs/commands.md");
    assert!(ran >= 30, "only {ran} examples found");
}

#[test]
fn every_example_in_the_elodin_db_page_runs_as_written() {
    let ran = run_examples("docs/formats/elodin-db.md");
    assert!(ran >= 4, "only {ran} examples found");
}

/// Runs every example of the doc at `rel` (from the checkout's root): how many ran.
fn run_examples(rel: &str) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join(rel)).unwrap();
    let sections = parse(&doc);
    let bin: PathBuf = PathBuf::from(env!("CARGO_BIN_EXE_simrec"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    let mut failures = Vec::new();
    for section in &sections {
        let dir = tempfile::tempdir().unwrap();
        for (name, from) in &section.files {
            util::copy_tree(&util::any_fixture(from), &dir.path().join(name));
        }
        for ex in &section.examples {
            let out = Command::new("bash")
                .arg("-c")
                .arg(format!("set -o pipefail; {}", ex.command))
                .current_dir(dir.path())
                .env("PATH", &path)
                .env("COLUMNS", "200")
                .output()
                .unwrap();
            ran += 1;
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let lines: Vec<&str> = text.lines().collect();
            let code = out.status.code().unwrap_or(-1);
            if code != ex.exit {
                failures.push(format!(
                    "line {}: `{}` exited {code}, the docs say {}\n{text}",
                    ex.line, ex.command, ex.exit
                ));
            }
            for shown in &ex.shown {
                if !printed(shown, &lines) {
                    failures.push(format!(
                        "line {}: `{}` did not print\n  {shown}\nit printed:\n{text}",
                        ex.line, ex.command
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{rel}: {}", failures.join("\n\n"));
    ran
}

#[test]
fn cut_lines_match_their_pieces_in_order() {
    let lines = ["0.008445s frame #0 (index 2): a=1 b=2 c=3"];
    assert!(printed("0.008445s frame #0 (index 2): a=1 …", &lines));
    assert!(printed("… b=2 … c=3", &lines));
    assert!(!printed("… c=3 … b=2", &lines));
    assert!(!printed("0.008445s frame #0 (index 2): a=1", &lines));
    assert!(printed("0.008445s frame #0 (index 2): a=1 b=2 c=3", &lines));
}
