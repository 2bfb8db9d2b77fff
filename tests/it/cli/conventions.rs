//! What a user expects from a command-line tool: errors that say why, batches that go on
//! past one bad file, selections that say when they match nothing, readable `cat`, grouped
//! findings, completions and a man page.

use crate::util;
use crate::util::run;

#[test]
fn a_missing_file_says_why_and_the_batch_goes_on() {
    let r = run(&["inspect", "missing.traj"]).expect_code(1);
    assert!(
        r.stderr
            .contains("missing.traj: No such file or directory (os error 2)"),
        "{}",
        r.stderr
    );
    let r = run(&["inspect", "missing.traj", "small.traj"]).expect_code(1);
    assert!(r.stdout.starts_with("small.traj\n"), "{}", r.stdout);
    assert!(r.stdout.contains("│ records     ┆ 32"), "{}", r.stdout);
    let r = run(&["inspect", "--format", "json", "missing.traj", "small.traj"]).expect_code(1);
    let v = r.json_lines();
    assert_eq!(
        v[0]["error"],
        "missing.traj: No such file or directory (os error 2)"
    );
    assert_eq!(v[1]["records"], 32);

    let r = run(&["validate", "missing.traj", "small.traj"]).expect_code(1);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "missing.traj: FAILED (1 error, 0 warnings, 0 info)"
    );
    assert_eq!(
        lines[1],
        "  error SIMREC_UNREADABLE: missing.traj: No such file or directory (os error 2)"
    );
    assert_eq!(lines[2], "small.traj: ok (0 errors, 0 warnings, 25 info)");
    let r = run(&[
        "validate",
        "--format",
        "json",
        "small.state",
        "missing.traj",
    ])
    .expect_code(1);
    let v = r.json_lines();
    assert_eq!(
        (v[0]["ok"].as_bool(), v[1]["ok"].as_bool()),
        (Some(true), Some(false))
    );
    assert_eq!(v[1]["findings"][0]["code"], "SIMREC_UNREADABLE");

    let r = run(&["convert", "missing.traj", "-o", "-", "--to", "jsonl"]).expect_code(1);
    assert_eq!(
        r.stderr,
        "error: missing.traj: No such file or directory (os error 2)\n"
    );
}

#[test]
fn a_file_of_no_known_format_lists_the_formats_simrec_reads() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "not a recording\n").unwrap();
    let r = run(&["inspect", notes.to_str().unwrap()]).expect_code(1);
    // Only formats it reads: JSON Lines, Parquet tables and MCAP are written, not read.
    assert!(
        r.stderr.contains(
            "from its bytes or its name (simrec reads: nanover-legacy, nanover-zip, elodin-db, \
             elodin-db-export, elodin, 3es, xrec, icarus-hdf5, icarus-csv, icarec)"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn cat_exits_3_when_json_cannot_hold_a_value_and_json_means_ndjson() {
    for format in ["ndjson", "json"] {
        let r = run(&["cat", "--format", format, "broken/corrupt-payload.traj"]).expect_code(3);
        assert!(
            r.stderr
                .contains("particle.positions ┆ non-finite float written as null ┆ 1"),
            "{}",
            r.stderr
        );
        let lines = r.json_lines();
        assert_eq!(lines.len(), 32);
        assert_eq!(
            lines[5]["values"]["particle.positions"]["data"][0],
            serde_json::Value::Null
        );
    }
    run(&["cat", "--format", "json", "small.traj"]).expect_code(0);
}

#[test]
fn cat_numbers_frames_as_frames_flags_do_and_shows_values() {
    let r = run(&["cat", "small.traj"]).expect_code(0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    // Position #17 is the first reset: `--frames 17..18` is that one frame.
    assert!(
        lines[17].starts_with("2.121956s frame #17 (index 0) reset: "),
        "{}",
        lines[17]
    );
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.jsonl");
    util::run(&[
        "slice",
        "small.traj",
        "--frames",
        "17..18",
        "-o",
        cut.to_str().unwrap(),
    ])
    .expect_code(0);
    let cut = std::fs::read_to_string(&cut).unwrap();
    let first: serde_json::Value = serde_json::from_str(cut.lines().next().unwrap()).unwrap();
    assert_eq!(first["values"]["server.timestamp"], 493.541571744);
    // Arrays show dtype, shape and their first elements; a list its size and first items.
    assert!(
        lines[0].contains(" bond.pairs=uint32[16,2] [0, 1, 0, 6, …] "),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains(" residue.names=string[1] [\"ASE\"] "),
        "{}",
        lines[0]
    );
    let r = run(&["cat", "small.state"]).expect_code(0);
    assert!(
        r.stdout.contains(
            "simrec.nested={2 keys: b={2 keys: d=null, c=true}, a=[3 items: 1.0, 2.5, \"x\"]}"
        ),
        "{}",
        r.stdout
    );
}

#[test]
fn cat_shows_the_entity() {
    let elodin = util::any_fixture("elodin/spin_120/world");
    let r = util::simrec()
        .args(["cat", "--channel", "body", elodin.to_str().unwrap()])
        .output()
        .unwrap();
    let out = String::from_utf8(r.stdout).unwrap();
    assert_eq!(out.lines().count(), 121);
    assert!(
        out.lines()
            .next()
            .unwrap()
            .starts_with("0.000000s body entity 0 #0: force=float64[6] [0.0, 0.0, 0.0, 0.0, …]"),
        "{out}"
    );
}

#[test]
fn a_selection_that_matches_nothing_warns_and_an_empty_output_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let r = run(&[
        "convert",
        "small.traj",
        "--channel",
        "nope",
        "-o",
        &out("a.jsonl"),
    ])
    .expect_code(2);
    assert!(
        r.stderr
            .contains("warning: --channel `nope` matches no channel (channels: frame)\n"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("nothing was written"), "{}", r.stderr);
    // cat refuses the same way once it has read everything.
    let r = run(&["cat", "small.traj", "--channel", "nope"]).expect_code(2);
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr,
        "warning: --channel `nope` matches no channel (channels: frame)\n\
         error: the selection leaves nothing to write: no record was selected; nothing was written\n"
    );
    let r = run(&[
        "slice",
        "small.traj",
        "--start",
        "100s",
        "-o",
        &out("b.traj"),
    ])
    .expect_code(2);
    assert!(
        r.stderr.contains(
            "error: the window [100.000000s, the end) lies outside the recording: it holds no record"
        ),
        "{}",
        r.stderr
    );
    let r = run(&[
        "slice",
        "small.traj",
        "--include",
        "nope*",
        "-o",
        &out("c.traj"),
    ])
    .expect_code(2);
    assert!(
        r.stderr
            .contains("warning: --include `nope*` matched no key of any record read"),
        "{}",
        r.stderr
    );
    let r = run(&[
        "slice",
        "small.traj",
        "--frames",
        "100..200",
        "-o",
        &out("d.traj"),
    ])
    .expect_code(2);
    assert!(r
        .stderr
        .contains("frame #100 does not exist: the recording has 32 frames"));
    run(&["cat", "small.traj", "--channel", "nope"]).expect_code(2);
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "nothing written"
    );
    // An exclude that matches nothing only warns: the output is all there.
    let r = run(&[
        "slice",
        "small.traj",
        "--exclude",
        "nope*",
        "-o",
        &out("e.traj"),
    ])
    .expect_code(0);
    assert!(r
        .stderr
        .contains("warning: --exclude `nope*` matched no key"));
    assert_eq!(
        std::fs::read(out("e.traj")).unwrap(),
        util::fixture_bytes("small.traj")
    );
}

#[test]
fn channel_selects_channels_on_every_reading_command() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("state.jsonl");
    run(&[
        "convert",
        "small.traj",
        "small.state",
        "--channel",
        "st*",
        "-o",
        jsonl.to_str().unwrap(),
    ])
    .expect_code(0);
    let text = std::fs::read_to_string(&jsonl).unwrap();
    assert_eq!(text.lines().count(), 15);
    assert!(text.lines().all(|l| l.contains("\"channel\":\"state\"")));
    let merged = dir.path().join("m.jsonl");
    run(&[
        "merge",
        "small.traj",
        "small.state",
        "--channel",
        "frame",
        "-o",
        merged.to_str().unwrap(),
    ])
    .expect_code(0);
    assert_eq!(
        std::fs::read_to_string(&merged).unwrap().lines().count(),
        32
    );
    let r = run(&["cat", "small.traj", "small.state", "--channel", "state"]).expect_code(0);
    assert_eq!(r.stdout.lines().count(), 15);
    let r = run(&[
        "inspect",
        "--format",
        "json",
        "small.traj",
        "small.state",
        "--channel",
        "frame",
    ])
    .expect_code(0);
    let v = r.json_lines();
    assert_eq!(v[0]["channels"][0]["name"], "frame");
    assert_eq!(v[1]["channels"].as_array().map(Vec::len), Some(0));
    assert!(r
        .stderr
        .contains("--channel `frame` matches no channel (channels: state)"));
}

#[test]
fn completions_man_and_quiet() {
    let r = run(&["completions", "bash"]).expect_code(0);
    assert!(r.stdout.starts_with("_simrec() {"), "{}", r.stdout);
    assert!(r.stdout.contains("--split-at-resets"));
    let r = run(&["completions", "zsh"]).expect_code(0);
    assert!(r.stdout.starts_with("#compdef simrec"), "{}", r.stdout);
    let r = run(&["man"]).expect_code(0);
    assert!(r.stdout.contains(".TH simrec 1"), "{}", r.stdout);
    assert!(r.stdout.contains("simrec\\-convert(1)") || r.stdout.contains("convert"));
    let r = run(&["man", "slice"]).expect_code(0);
    assert!(r.stdout.contains(".TH simrec-slice 1"), "{}", r.stdout);
    assert!(r.stdout.contains("split\\-at\\-resets"), "{}", r.stdout);
    run(&["man", "nope"]).expect_code(2);

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.jsonl");
    let loud = run(&[
        "convert",
        "small.traj",
        "--exclude",
        "nope",
        "-o",
        out.to_str().unwrap(),
    ])
    .expect_code(0);
    assert!(loud.stderr.contains("wrote 32 records"), "{}", loud.stderr);
    let quiet = run(&[
        "convert",
        "-q",
        "small.traj",
        "--exclude",
        "nope",
        "-o",
        out.to_str().unwrap(),
        "--force",
    ])
    .expect_code(0);
    assert_eq!(quiet.stderr, "");
    // Errors still show, and exit codes still tell.
    let r = run(&[
        "--quiet",
        "cat",
        "--format",
        "json",
        "broken/corrupt-payload.traj",
    ])
    .expect_code(3);
    assert_eq!(r.stderr, "");
    let r = run(&["inspect", "--quiet", "missing.traj"]).expect_code(1);
    assert!(r.stderr.contains("No such file"), "{}", r.stderr);
}

/// A `.traj` of `n` frames, every one a reset (`GetFrameResponse { frame: {} }`).
fn resets_traj(path: &std::path::Path, n: u64) {
    let mut out = util::fixture_bytes("small.traj")[..16].to_vec();
    for i in 0..n {
        out.extend_from_slice(&u128::from(i * 1000).to_le_bytes());
        out.extend_from_slice(&2u64.to_le_bytes());
        out.extend_from_slice(&[0x12, 0x00]);
    }
    std::fs::write(path, out).unwrap();
}

#[test]
fn text_inspect_stays_small_whatever_the_file_holds() {
    let dir = tempfile::tempdir().unwrap();
    let traj = dir.path().join("resets.traj");
    resets_traj(&traj, 50_000);
    let r = util::run_in(dir.path(), &["inspect", "resets.traj"]).expect_code(0);
    assert!(
        r.stdout.contains(
            "│ resets      ┆ 50000 at records 0, 1, 2, 3, 4, … 49 990 more …, 49995, 49996, \
             49997, 49998, 49999 │"
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.len() < 2048, "{}", r.stdout.len());
    // JSON keeps every reset.
    let r =
        util::run_in(dir.path(), &["inspect", "--format", "json", "resets.traj"]).expect_code(0);
    let v = r.json_lines();
    assert_eq!(v[0]["resets"].as_array().map(Vec::len), Some(50_000));
    assert_eq!(v[0]["resets"][49_999], 49_999);
}

#[test]
fn help_lists_the_registrys_formats_and_compression_is_one_option() {
    // Help wraps lines: compare with runs of whitespace as one space.
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let help = words(&run(&["--help"]).stdout);
    for f in simrec::formats::registry::formats() {
        assert!(help.contains(f.title()), "{}\n{help}", f.title());
    }
    let convert = words(&run(&["convert", "--help"]).stdout);
    assert!(
        convert.contains("3es: collated-gzip (default), collated, plain, file-gzip"),
        "{convert}"
    );
    assert!(
        convert.contains("mcap: zstd (default), zstd-fast, none"),
        "{convert}"
    );
    let dir = tempfile::tempdir().unwrap();
    let tes = util::any_fixture("tes/small_plain.3es");
    let plain_to = |name: &str| {
        let out = dir.path().join(name);
        let r = run(&[
            "convert",
            util::s(&tes),
            "-o",
            util::s(&out),
            "--compression",
            "plain",
        ]);
        (r, out)
    };
    let (r, out) = plain_to("x.jsonl");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        "error: --compression applies to mcap, 3es, xrec output; this output is jsonl\n"
    );
    assert!(!out.exists());
    let (r, out) = plain_to("x.3es");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        util::any_fixture_bytes("tes/small_plain.3es")
    );
}

#[test]
fn an_output_name_ending_in_a_slash_is_a_directory_even_with_a_files_extension() {
    let tmp = tempfile::tempdir().unwrap();
    let r = util::run_in(
        tmp.path(),
        &[
            "convert",
            util::s(&util::fixture("small.traj")),
            "-o",
            "out.jsonl/",
        ],
    )
    .expect_code(2);
    assert_eq!(
        r.stderr,
        "error: cannot write out.jsonl/: the name ends with `/` (a directory), but this output \
         format writes one file; drop the `/`, or name a directory without a format's \
         extension for the default directory output\n"
    );
    assert_eq!(util::dir_entries(tmp.path()), Vec::<String>::new());
}
