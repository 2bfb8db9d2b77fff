//! Every source format into every target format (issue 16): the exit code of each pair is
//! the one docs/commands.md's conversion table gives (0, or 3 with a loss report; never 2
//! for a well-formed input), and every output a simrec reader takes validates with no error.
//! What each mapping keeps is checked value by value in tests/it/mapping/nanover.rs,
//! tests/it/mapping/tes.rs and each target's own tests.

use std::path::Path;

use crate::util::{any_fixture, run_in, s};

/// The fixture behind each row of the table, in its order.
const SOURCES: &[(&str, &[&str])] = &[
    (
        "NanoVer legacy",
        &["nanover-legacy/small.traj", "nanover-legacy/small.state"],
    ),
    ("`.nanover.zip`", &["nanover-zip/small.nanover.zip"]),
    ("`.icarec`", &["icarec/a2.icarec"]),
    ("Icarus HDF5", &["icarus-hdf5/escape.h5"]),
    ("Icarus CSV", &["icarus-csv/rocket.csv"]),
    ("Elodin replay", &["elodin/ball_1200"]),
    ("`.3es`", &["tes/small_plain.3es"]),
    ("`.xrec`", &["xrec/session.xrec"]),
    ("Elodin DB", &["elodin-db/three_body_v0180"]),
];

/// The output of each column of the table, in its order, the `--to` it needs (none: the
/// output's name says), and whether simrec reads it back.
const TARGETS: &[(&str, Option<&str>, bool)] = &[
    ("out.traj", None, true),
    ("out.nanover.zip", None, true),
    ("out.icarec", None, true),
    ("out.h5", None, true),
    ("out.csv", None, true),
    ("out/", None, true),
    ("replay/", Some("elodin"), true),
    ("out.3es", None, true),
    ("out.xrec", None, true),
    ("out.jsonl", None, false),
    ("out.parquet", None, false),
    ("out.mcap", None, false),
];

/// The exit codes of docs/commands.md's table, row by row.
fn documented() -> Vec<(String, Vec<i32>)> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/commands.md"))
            .unwrap();
    let mut lines = doc.lines().skip_while(|l| !l.starts_with("| from \\ to |"));
    lines.next();
    lines.next();
    lines
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            let codes = cells[1..]
                .iter()
                .map(|c| c.split_whitespace().next().unwrap().parse().unwrap())
                .collect();
            (cells[0].to_string(), codes)
        })
        .collect()
}

#[test]
fn every_pair_converts_as_the_table_says_and_validates() {
    let table = documented();
    assert_eq!(table.len(), SOURCES.len());
    let mut failures = Vec::new();
    for ((row, codes), (name, inputs)) in table.iter().zip(SOURCES) {
        assert_eq!(row, name);
        assert_eq!(codes.len(), TARGETS.len(), "{row}");
        for (&code, (target, to, reads)) in codes.iter().zip(TARGETS) {
            assert!(
                code == 0 || code == 3,
                "{row} → {target}: the table says {code}"
            );
            let dir = tempfile::tempdir().unwrap();
            let output = dir.path().join(target);
            let mut args = vec!["convert".to_string()];
            args.extend(inputs.iter().map(|i| any_fixture(i).display().to_string()));
            args.extend(["-o".into(), output.display().to_string(), "-q".into()]);
            if let Some(to) = to {
                args.extend(["--to".into(), to.to_string()]);
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let run = run_in(dir.path(), &args);
            if run.code != code {
                failures.push(format!(
                    "{row} → {target}: exit {} ({})",
                    run.code,
                    run.stderr.trim()
                ));
                continue;
            }
            if *reads {
                let state = output.with_extension("state");
                let mut check = vec!["validate", s(&output)];
                if target.ends_with(".traj") {
                    check.push(s(&state));
                }
                let v = run_in(dir.path(), &check);
                if v.code != 0 {
                    failures.push(format!(
                        "{row} → {target}: validate exits {}: {}",
                        v.code, v.stdout
                    ));
                }
            } else {
                let size = std::fs::metadata(&output).map(|m| m.len()).unwrap_or(0);
                if size == 0 {
                    failures.push(format!("{row} → {target}: nothing written"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
