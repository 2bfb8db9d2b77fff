//! `--epoch` / `--time-system` give a recording without an absolute start one;
//! `--time-format` shows times in MET, UTC (with `:60` in a leap second), TAI, GPS and GPS
//! week, on `inspect` and `cat`.

mod common;

use common::run;

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
