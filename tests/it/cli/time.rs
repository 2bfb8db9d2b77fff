//! `--epoch` / `--time-system` give a recording without an absolute start one;
//! `--time-format` shows times in MET, UTC (with `:60` in a leap second), TAI, GPS and GPS
//! week, on `inspect` and `cat`.

use crate::util::{any_fixture, run, s};

/// `small.traj` starts at 0.008445 s and ends at 5.380761 s.
const EPOCH: &str = "2016-12-31T23:59:59Z";

#[test]
fn an_epoch_given_on_the_command_line_becomes_the_origin() {
    let r = run(&[
        "inspect",
        "small.traj",
        "--epoch",
        "2026-03-01T12:00:00.5Z",
        "--time-system",
        "UTC",
        "--format",
        "json",
    ])
    .expect_code(0);
    let j = &r.json_lines()[0];
    assert_eq!(j["origin"]["epoch"], "2026-03-01T12:00:00.5Z");
    assert_eq!(j["origin"]["system"], "UTC");
    // Record times stay relative to it.
    assert_eq!(j["start_ns"], 8_445_000);
    let r = run(&["inspect", "small.traj", "--epoch", "2026-02-30T00:00:00Z"]).expect_code(2);
    assert!(
        r.stderr.contains("invalid value '2026-02-30T00:00:00Z' for '--epoch <ISO-8601>': expected a UTC date and time: YYYY-MM-DDTHH:MM:SS[.fraction]Z"),
        "{}",
        r.stderr
    );
}

#[test]
fn inspect_shows_start_and_end_in_every_scale_across_a_leap_second() {
    let shown = |scale: &str| {
        let r = run(&[
            "inspect",
            "small.traj",
            "--epoch",
            EPOCH,
            "--time-format",
            scale,
            "--format",
            "json",
        ])
        .expect_code(0);
        let j = r.json_lines().remove(0);
        assert_eq!(j["time_format"], scale);
        (
            j["start_time"].as_str().unwrap().to_string(),
            j["end_time"].as_str().unwrap().to_string(),
        )
    };
    // 5.380761 s after 23:59:59 UTC crosses the leap second at the end of 2016.
    assert_eq!(
        shown("utc"),
        (
            "2016-12-31T23:59:59.008445Z".into(),
            "2017-01-01T00:00:03.380761Z".into()
        )
    );
    assert_eq!(
        shown("tai"),
        (
            "2017-01-01T00:00:35.008445 TAI".into(),
            "2017-01-01T00:00:40.380761 TAI".into()
        )
    );
    assert_eq!(
        shown("gps"),
        (
            "2017-01-01T00:00:16.008445 GPS".into(),
            "2017-01-01T00:00:21.380761 GPS".into()
        )
    );
    assert_eq!(
        shown("gps-week"),
        ("1930 16.008445".into(), "1930 21.380761".into())
    );
    assert_eq!(shown("met"), ("0.008445".into(), "5.380761".into()));
    let text = run(&[
        "inspect",
        "small.traj",
        "--epoch",
        EPOCH,
        "--time-format",
        "utc",
    ])
    .expect_code(0)
    .stdout;
    assert!(
        text.contains("│ end         ┆ 5.380761s (2017-01-01T00:00:03.380761Z)"),
        "{text}"
    );
}

#[test]
fn cat_shows_record_times_in_the_scale_asked_and_refuses_one_it_cannot() {
    // Start one second before the leap second: the record 1.08 s in is inside it.
    let r = run(&[
        "cat",
        "small.traj",
        "--epoch",
        "2016-12-31T23:59:58.92Z",
        "--time-format",
        "utc",
    ])
    .expect_code(0);
    let times: Vec<&str> = r
        .stdout
        .lines()
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(times.len(), 32);
    assert_eq!(times[0], "2016-12-31T23:59:58.928445Z");
    assert_eq!(times[9], "2016-12-31T23:59:60.068616Z");
    assert_eq!(times[16], "2017-01-01T00:00:00.028037Z");
    let r = run(&["cat", "small.traj", "--time-format", "utc"]).expect_code(2);
    assert_eq!(
        r.stderr,
        "error: --time-format utc: the recording has no absolute start (give it with --epoch)\n"
    );
    assert_eq!(r.stdout, "");
    let r = run(&["inspect", "small.traj", "--time-format", "tai"]).expect_code(2);
    assert_eq!(
        r.stderr,
        "error: --time-format tai: small.traj has no absolute start (give it with --epoch)\n"
    );
}

/// Issue 27, item 2: an absolute start is never dropped silently. `.icarec` → `.h5` keeps the
/// epoch and time system (`/metadata` `time_epoch`, `time_system`), read back as the origin;
/// an output with no place for it counts it as lost (exit 3) unless `--time utc` puts
/// absolute times in the table.
#[test]
fn an_absolute_start_is_kept_or_counted_as_lost() {
    let dir = tempfile::tempdir().unwrap();
    let a2 = any_fixture("icarec/a2.icarec");
    let at = |name: &str| dir.path().join(name);
    run(&["convert", s(&a2), "-o", s(&at("a.h5"))]).expect_code(0);
    let origin = |p: &std::path::Path| {
        run(&["inspect", "--format", "json", s(p)])
            .expect_code(0)
            .json_lines()[0]["origin"]
            .clone()
    };
    let a2_origin = serde_json::json!({"epoch": "2026-03-01T12:00:00Z", "system": "UTC"});
    assert_eq!(origin(&at("a.h5")), a2_origin);
    let f = hdf5_pure::File::open(at("a.h5")).unwrap();
    let attrs = f.group("metadata").unwrap().attrs().unwrap();
    assert_eq!(
        attrs.get("time_epoch"),
        Some(&hdf5_pure::AttrValue::VarLenString(
            "2026-03-01T12:00:00Z".into()
        ))
    );
    // And back: the HDF5 reader gives it as the origin.
    run(&["convert", s(&at("a.h5")), "-o", s(&at("b.icarec"))]).expect_code(0);
    assert_eq!(origin(&at("b.icarec")), a2_origin);

    // No place for it: counted.
    for out in ["x.csv", "x.jsonl", "x.traj", "x.nanover.zip", "x/", "x.3es"] {
        let path = at(out);
        let mut args = vec!["convert", s(&a2), "-o", s(&path), "--force"];
        if out == "x/" {
            // The legacy replay; the default `DIR/`, an Elodin DB, keeps it.
            args.extend(["--to", "elodin"]);
        }
        let r = run(&args).expect_code(3);
        assert!(
            r.stderr.contains("│ (recording) ")
                && r.stderr
                    .contains("┆ the absolute start 2026-03-01T12:00:00Z (UTC) has no place in "),
            "{out}: {}",
            r.stderr
        );
    }
    // Absolute times instead: nothing lost.
    let r = run(&["convert", s(&a2), "-o", "-", "--to", "csv", "--time", "utc"]).expect_code(0);
    let times: Vec<&str> = r
        .stdout
        .lines()
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(
        times,
        [
            "time",
            "2026-03-01T12:00:00.010000000Z",
            "2026-03-01T12:00:00.020000000Z",
            "2026-03-01T12:00:00.030000000Z"
        ]
    );
    let r = run(&[
        "convert",
        s(&a2),
        "-o",
        "-",
        "--to",
        "jsonl",
        "--time",
        "utc",
    ])
    .expect_code(0);
    let last = r.json_lines().pop().unwrap();
    assert_eq!(
        (&last["time_ns"], &last["time_utc"]),
        (
            &serde_json::json!(30_000_000),
            &serde_json::json!("2026-03-01T12:00:00.030000000Z")
        )
    );
    // A leap second shows as :60; a recording without an absolute start is refused.
    let r = run(&[
        "convert",
        "small.traj",
        "--epoch",
        "2016-12-31T23:59:58.92Z",
        "-o",
        "-",
        "--to",
        "jsonl",
        "--time",
        "utc",
    ])
    .expect_code(0);
    assert_eq!(
        r.json_lines()[9]["time_utc"],
        "2016-12-31T23:59:60.068616000Z"
    );
    let r = run(&[
        "convert",
        "small.traj",
        "-o",
        s(&at("n.csv")),
        "--time",
        "utc",
    ])
    .expect_code(2);
    assert_eq!(
        r.stderr,
        format!(
            "error: cannot write {}: --time utc: the recording has no absolute start (give it one with --epoch)\n",
            s(&at("n.csv"))
        )
    );
    assert!(!at("n.csv").exists());
    // Outputs with a place for it do not take the option.
    let r = run(&["convert", s(&a2), "-o", s(&at("t.h5")), "--time", "utc"]).expect_code(2);
    assert!(
        r.stderr
            .contains("--time applies to jsonl, icarus-csv output; this output is icarus-hdf5"),
        "{}",
        r.stderr
    );
}
