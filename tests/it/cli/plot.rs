//! `simrec plot` end to end: the SVG parses, has one polyline per key with the points the
//! decimation makes (two per pixel column that holds two samples or more), and the min/max
//! envelope of a known sine recording (an Icarus CSV written here) lies within one pixel of
//! the exact one.

use std::path::{Path, PathBuf};

use crate::util;
use crate::util::{run_in, s};

fn fixtures() -> PathBuf {
    util::any_fixture("")
}

/// The data polylines of an SVG (axes and ticks are drawn in black), each as its points.
fn polylines(svg: &str) -> Vec<Vec<(f64, f64)>> {
    let doc = roxmltree::Document::parse(svg).expect("the SVG parses as XML");
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") != Some("#000000"))
        .map(|n| {
            n.attribute("points")
                .unwrap()
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

/// All text of the SVG's `<text>` elements.
fn texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect()
}

const SAMPLES: usize = 10_000;
/// `--width 800` less the plot's left (90) and right (20) parts, less one (plotters spreads
/// a plot area of N pixels over N − 1 steps).
const COLUMNS: usize = 689;

/// sin(2π t / 2.5 s) sampled every millisecond from t = 1 ms, as an Icarus CSV (`time`, then
/// one column per signal), with the values as written.
fn sine_csv(dir: &Path) -> (PathBuf, Vec<(i64, f64)>) {
    let mut text = String::from("time,Sim.Wave.sine\n");
    let mut samples = Vec::new();
    for k in 1..=SAMPLES {
        let t = k as f64 / 1000.0;
        let y = (2.0 * std::f64::consts::PI * t / 2.5).sin();
        text.push_str(&format!("{t},{y}\n"));
        samples.push((k as i64 * 1_000_000, y));
    }
    let path = dir.join("sine.csv");
    std::fs::write(&path, text).unwrap();
    (path, samples)
}

#[test]
fn the_envelope_of_a_sine_is_within_one_pixel_of_the_exact_one() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, samples) = sine_csv(dir.path());
    let out = dir.path().join("sine.svg");
    let r = run_in(
        dir.path(),
        &[
            "plot",
            s(&csv),
            "--key",
            "Sim.Wave.sine",
            "--width",
            "800",
            "-o",
            s(&out),
        ],
    )
    .expect_code(0);
    assert!(
        r.stderr.contains("689 pixel columns") && r.stderr.contains("10000 samples, 1378 points"),
        "{}",
        r.stderr
    );
    let svg = std::fs::read_to_string(&out).unwrap();
    let lines = polylines(&svg);
    assert_eq!(lines.len(), 1, "one polyline for one key");
    let points = &lines[0];
    // Every column holds 14 or 15 samples: two points each, its minimum and maximum.
    assert_eq!(points.len(), 2 * COLUMNS);

    // The exact envelope: the smallest and largest sample of each column.
    let (t0, t1) = (samples[0].0, samples[SAMPLES - 1].0);
    let mut exact = vec![(f64::INFINITY, f64::NEG_INFINITY); COLUMNS];
    for &(t, y) in &samples {
        let c = ((t - t0) as i128 * COLUMNS as i128 / ((t1 - t0) as i128 + 1)) as usize;
        exact[c] = (exact[c].0.min(y), exact[c].1.max(y));
    }
    // Value → pixel, from where the plot put the overall extremes (SVG y grows downwards).
    let (v_lo, v_hi) = exact
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &(c, d)| {
            (a.min(c), b.max(d))
        });
    let p_lo = points.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let p_hi = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let pixel = |v: f64| p_lo + (v - v_lo) * (p_hi - p_lo) / (v_hi - v_lo);
    assert!(
        p_lo - p_hi > 200.0,
        "the panel is {} pixels high",
        p_lo - p_hi
    );
    let mut last_x = f64::NEG_INFINITY;
    for (c, pair) in points.chunks(2).enumerate() {
        let ((xa, ya), (xb, yb)) = (pair[0], pair[1]);
        assert_eq!(xa, xb, "column {c}: both points in one pixel column");
        assert!(xa > last_x, "column {c}: one pixel column each");
        last_x = xa;
        let (lo, hi) = (ya.max(yb), ya.min(yb));
        let (want_lo, want_hi) = (pixel(exact[c].0), pixel(exact[c].1));
        assert!(
            (lo - want_lo).abs() <= 1.0 && (hi - want_hi).abs() <= 1.0,
            "column {c}: drawn {lo}..{hi}, exact {want_lo}..{want_hi}"
        );
    }
    // The panel is labelled with the value's name; time in seconds (no absolute start).
    let t = texts(&svg);
    assert!(t.iter().any(|x| x == "Sim.Wave.sine"), "{t:?}");
    assert!(t.iter().any(|x| x == "time (s from time zero)"), "{t:?}");
}

#[test]
fn several_keys_are_stacked_panels_with_units_and_elements() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("energy.svg");
    let traj = fixtures().join("nanover-legacy/small.traj");
    run_in(
        dir.path(),
        &[
            "plot",
            s(&traj),
            "--key",
            "energy.kinetic",
            "--key",
            "particle.positions[12].z",
            "-o",
            s(&out),
        ],
    )
    .expect_code(0);
    let svg = std::fs::read_to_string(&out).unwrap();
    let lines = polylines(&svg);
    assert_eq!(lines.len(), 2, "one polyline per key");
    // small.traj: 32 frames over 5.4 s, each alone in its pixel column.
    assert_eq!(lines[0].len(), 32);
    assert_eq!(lines[1].len(), 32);
    // Stacked: the second panel lies wholly below the first.
    let bottom_of_first = lines[0].iter().map(|p| p.1).fold(f64::MIN, f64::max);
    let top_of_second = lines[1].iter().map(|p| p.1).fold(f64::MAX, f64::min);
    assert!(top_of_second > bottom_of_first);
    // The same time axis: the same first and last x.
    assert_eq!(lines[0][0].0, lines[1][0].0);
    assert_eq!(lines[0][31].0, lines[1][31].0);
    let t = texts(&svg);
    assert!(t.iter().any(|x| x == "energy.kinetic (kJ/mol)"), "{t:?}");
    assert!(
        t.iter().any(|x| x == "particle.positions[12,2] (nm)"),
        "{t:?}"
    );

    // A reduction of an array.
    let out = dir.path().join("norm.svg");
    let r = run_in(
        dir.path(),
        &[
            "plot",
            s(&traj),
            "--key",
            "particle.positions",
            "--reduce",
            "norm",
            "-o",
            s(&out),
        ],
    )
    .expect_code(0);
    assert!(
        r.stderr.contains("norm of particle.positions (32 samples"),
        "{}",
        r.stderr
    );
    assert_eq!(polylines(&std::fs::read_to_string(&out).unwrap()).len(), 1);
}

#[test]
fn an_absolute_start_puts_dates_on_the_axis() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rocket.svg");
    let csv = fixtures().join("icarus-csv/rocket.csv");
    run_in(
        dir.path(),
        &[
            "plot",
            s(&csv),
            "--key",
            "Rocket.Vehicle.position.z",
            "--epoch",
            "2026-03-01T12:00:00Z",
            "-o",
            s(&out),
        ],
    )
    .expect_code(0);
    let t = texts(&std::fs::read_to_string(&out).unwrap());
    // The date, the same for the whole span, is said once; each label is a time of day.
    assert!(t.iter().any(|x| x == "time (UTC, 2026-03-01)"), "{t:?}");
    assert!(t.iter().any(|x| x == "12:00:00.100"), "{t:?}");
    assert!(!t.iter().any(|x| x.starts_with("2026")), "{t:?}");
    // Without an absolute start, a scale that needs one cannot be honoured.
    let r = run_in(
        dir.path(),
        &[
            "plot",
            s(&csv),
            "--key",
            "Rocket.*",
            "--time-format",
            "utc",
            "-o",
            "x.svg",
        ],
    );
    r.expect_code(2);
}

#[test]
fn keys_that_match_nothing_and_existing_outputs_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let traj = fixtures().join("nanover-legacy/small.traj");
    let r = run_in(
        dir.path(),
        &["plot", s(&traj), "--key", "nope.*", "-o", "a.svg"],
    )
    .expect_code(2);
    assert!(r.stderr.contains("matched no value"), "{}", r.stderr);
    assert!(!dir.path().join("a.svg").exists());
    // An array without an element or a reduction gives no number.
    let r = run_in(
        dir.path(),
        &[
            "plot",
            s(&traj),
            "--key",
            "particle.positions",
            "-o",
            "a.svg",
        ],
    )
    .expect_code(2);
    assert!(r.stderr.contains("--reduce"), "{}", r.stderr);
    run_in(
        dir.path(),
        &["plot", s(&traj), "--key", "energy.kinetic", "-o", "a.svg"],
    )
    .expect_code(0);
    run_in(
        dir.path(),
        &["plot", s(&traj), "--key", "energy.kinetic", "-o", "a.svg"],
    )
    .expect_code(2);
    run_in(
        dir.path(),
        &[
            "plot",
            s(&traj),
            "--key",
            "energy.kinetic",
            "-o",
            "a.svg",
            "--force",
        ],
    )
    .expect_code(0);
}

#[test]
fn inspect_deep_draws_a_sparkline_per_number_key_when_asked_or_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    // A ramp and a constant, one row per millisecond.
    let mut text = String::from("time,Sim.Ramp.up,Sim.Ramp.flat\n");
    for k in 1..=1000 {
        text.push_str(&format!("{},{k},7\n", k as f64 / 1000.0));
    }
    let csv = dir.path().join("ramp.csv");
    std::fs::write(&csv, text).unwrap();
    let r = run_in(dir.path(), &["inspect", "--deep", "--sparklines", s(&csv)]).expect_code(0);
    let row = |key: &str| -> String {
        let line = r
            .stdout
            .lines()
            .find(|l| l.contains(&format!(" {key} ")))
            .unwrap_or_else(|| panic!("{key}: {}", r.stdout));
        line.rsplit('┆')
            .next()
            .unwrap()
            .trim_end_matches('│')
            .trim()
            .to_string()
    };
    let up = row("up");
    assert!(up.starts_with('▁') && up.ends_with('█'), "{up}");
    assert!((16..=32).contains(&up.chars().count()), "{up}");
    let levels: Vec<char> = up.chars().collect();
    assert!(levels.windows(2).all(|w| w[0] <= w[1]), "rising: {up}");
    let flat = row("flat");
    assert!(!flat.is_empty() && flat.chars().all(|c| c == '▄'), "{flat}");
    assert!(r.stdout.contains("over time"), "{}", r.stdout);

    // Not a terminal (the tests' stdout is a pipe), or --no-sparklines: no column.
    let plain = run_in(dir.path(), &["inspect", "--deep", s(&csv)]).expect_code(0);
    assert!(!plain.stdout.contains("over time") && !plain.stdout.contains('▁'));
    let off = run_in(
        dir.path(),
        &["inspect", "--deep", "--no-sparklines", s(&csv)],
    )
    .expect_code(0);
    assert_eq!(off.stdout, plain.stdout);
    run_in(
        dir.path(),
        &[
            "inspect",
            "--deep",
            "--sparklines",
            "--no-sparklines",
            s(&csv),
        ],
    )
    .expect_code(2);
}

/// An Icarus key: the plot is that signal's values with its unit (that the reader is asked
/// for that signal alone is `channels_for`'s unit test and the readers' own tests).
#[test]
fn an_icarus_signal_is_plotted_from_its_own_values() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("alpha.svg");
    let rec = fixtures().join("icarec/a2.icarec");
    let r = run_in(
        dir.path(),
        &[
            "plot",
            s(&rec),
            "--key",
            "Vehicle.Aero.alpha",
            "-o",
            s(&out),
        ],
    )
    .expect_code(0);
    assert!(
        r.stderr
            .contains("Vehicle.Aero.alpha (3 samples, 3 points)"),
        "{}",
        r.stderr
    );
    let svg = std::fs::read_to_string(&out).unwrap();
    let lines = polylines(&svg);
    assert_eq!(lines.len(), 1);
    // alpha is 0.5, 0.25, -0.125 at 0.01, 0.02, 0.03 s: each point lower on the page (larger
    // y) and further right than the one before.
    let line = &lines[0];
    assert_eq!(line.len(), 3);
    assert!(line[0].0 < line[1].0 && line[1].0 < line[2].0, "{line:?}");
    assert!(line[0].1 < line[1].1 && line[1].1 < line[2].1, "{line:?}");
    // Equal steps in time, and alpha's drops of 0.25 and 0.375 in proportion.
    let dx = (line[1].0 - line[0].0, line[2].0 - line[1].0);
    assert!((dx.0 - dx.1).abs() <= 1.0, "{line:?}");
    let dy = (line[1].1 - line[0].1, line[2].1 - line[1].1);
    assert!((dy.1 / dy.0 - 1.5).abs() < 0.05, "{line:?}");
    assert!(texts(&svg).iter().any(|x| x == "Vehicle.Aero.alpha (rad)"));
}

/// `-o x.png`: the same drawing as the SVG, in pixels: the line passes through the SVG's
/// points, in the series colour, and the labels are drawn (in the font simrec carries).
/// Nothing else is blue: a blank picture would fail.
#[test]
fn a_png_is_the_svg_drawing_in_pixels_with_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let rec = fixtures().join("icarec/a2.icarec");
    let plot = |out: &str| {
        run_in(
            dir.path(),
            &["plot", s(&rec), "--key", "Vehicle.Aero.alpha", "-o", out],
        )
        .expect_code(0)
    };
    plot("alpha.svg");
    let r = plot("alpha.png");
    assert!(
        r.stderr.starts_with("wrote alpha.png: 1 panel(s)"),
        "{}",
        r.stderr
    );
    let svg = std::fs::read_to_string(dir.path().join("alpha.svg")).unwrap();
    let points = &polylines(&svg)[0];

    let file = std::fs::File::open(dir.path().join("alpha.png")).unwrap();
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut rgb = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut rgb).unwrap();
    // Default width 1000; one panel of 250 pixels and 40 for the time axis' labels.
    assert_eq!((info.width, info.height), (1000, 290));
    assert_eq!(info.color_type, png::ColorType::Rgb);
    let pixel = |x: i64, y: i64| -> [u8; 3] {
        let at = (y as usize * 1000 + x as usize) * 3;
        [rgb[at], rgb[at + 1], rgb[at + 2]]
    };
    // The series colour is (31, 119, 180), anti-aliased into the white: blue well above red.
    let line = |[r, _, b]: [u8; 3]| i32::from(b) - i32::from(r) > 60;
    for &(x, y) in points {
        let near = (-1..=1)
            .any(|dx| (-1..=1).any(|dy| line(pixel(x.round() as i64 + dx, y.round() as i64 + dy))));
        assert!(near, "no line pixel near the SVG's point ({x}, {y})");
    }
    // Text: dark pixels where the y label ("Vehicle.Aero.alpha (rad)", left edge) and the
    // time axis' title (bottom band) are, which only a font draws.
    let dark = |xs: std::ops::Range<i64>, ys: std::ops::Range<i64>| {
        xs.flat_map(|x| ys.clone().map(move |y| (x, y)))
            .filter(|&(x, y)| pixel(x, y).iter().all(|&c| c < 100))
            .count()
    };
    let blue = (0..1000)
        .flat_map(|x| (0..290).map(move |y| (x, y)))
        .filter(|&(x, y)| line(pixel(x, y)))
        .count();
    // One line across the 889 columns of the plot area, a pixel or two thick.
    assert!((889..4000).contains(&blue), "{blue} line pixels");
    assert!(dark(0..30, 0..250) > 50, "y label");
    assert!(dark(300..700, 255..290) > 50, "time axis title");
}

/// The time axis' labels (`<text>` of a time of day) with their x, left to right.
fn time_labels(svg: &str) -> Vec<(f64, String)> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    let mut labels: Vec<(f64, String)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| {
            let text = n.text()?.trim().to_string();
            let b = text.as_bytes();
            let time = b.len() >= 8 && b[2] == b':' && b[5] == b':';
            time.then(|| (n.attribute("x").unwrap().parse().unwrap(), text))
        })
        .collect();
    labels.sort_by(|a, b| a.0.total_cmp(&b.0));
    labels
}

/// UTC labels of a 25 s run stand apart at any width: each is the time of day alone (the
/// date is in the axis title), there are as many as fit, and two neighbours are at least a
/// label's width apart (12-pixel DejaVu Sans: at most 0.7 em a character); none is cut off
/// by the picture's right edge.
#[test]
fn utc_time_labels_stand_apart_at_any_width() {
    let dir = tempfile::tempdir().unwrap();
    let h5 = fixtures().join("icarus-hdf5/vulcan.h5");
    for width in ["1000", "600", "300"] {
        let out = dir.path().join(format!("v{width}.svg"));
        run_in(
            dir.path(),
            &[
                "plot",
                s(&h5),
                "--key",
                "Rocket.Engine.thrust",
                "--epoch",
                "2026-03-01T12:00:00Z",
                "--width",
                width,
                "-o",
                s(&out),
            ],
        )
        .expect_code(0);
        let svg = std::fs::read_to_string(&out).unwrap();
        assert!(texts(&svg).iter().any(|t| t == "time (UTC, 2026-03-01)"));
        let labels = time_labels(&svg);
        assert!(labels.len() >= 2, "{width}: {labels:?}");
        for pair in labels.windows(2) {
            let room = pair[0].1.len().max(pair[1].1.len()) as f64 * 0.7 * 12.0;
            assert!(pair[1].0 - pair[0].0 >= room, "{width}: {labels:?}");
        }
        let (x, last) = labels.last().unwrap();
        let width: f64 = width.parse().unwrap();
        assert!(x + last.len() as f64 * 0.35 * 12.0 <= width, "{labels:?}");
    }
}

/// Panels are stacked in the order of `--key`, not in the order the recording holds the
/// values (small.traj's frames have energy.kinetic before energy.potential).
#[test]
fn panels_follow_the_order_of_the_keys() {
    let dir = tempfile::tempdir().unwrap();
    let traj = fixtures().join("nanover-legacy/small.traj");
    let out = dir.path().join("e.svg");
    let r = run_in(
        dir.path(),
        &[
            "plot",
            s(&traj),
            "--key",
            "energy.potential",
            "--key",
            "energy.kinetic",
            "-o",
            s(&out),
        ],
    )
    .expect_code(0);
    assert!(
        r.stderr
            .contains(": energy.potential (30 samples, 30 points), energy.kinetic (32"),
        "{}",
        r.stderr
    );
    let t = texts(&std::fs::read_to_string(&out).unwrap());
    let at = |title: &str| t.iter().position(|x| x == title).unwrap();
    assert!(
        at("energy.potential (kJ/mol)") < at("energy.kinetic (kJ/mol)"),
        "{t:?}"
    );
    // The top panel's line is the potential energy's (30 samples, each a point).
    assert_eq!(
        polylines(&std::fs::read_to_string(&out).unwrap())[0].len(),
        30
    );
}

/// The picture is of the kind its name says: SVG text, PNG and JPEG bytes (their magic
/// numbers), whatever the case of the extension; any other name is a usage error, and
/// nothing is written.
#[test]
fn a_picture_is_of_the_kind_its_name_says() {
    let dir = tempfile::tempdir().unwrap();
    let rec = fixtures().join("icarec/a2.icarec");
    let plot = |out: &str| {
        run_in(
            dir.path(),
            &["plot", s(&rec), "--key", "Vehicle.Aero.alpha", "-o", out],
        )
    };
    for (name, magic) in [
        ("a.svg", &b"<svg"[..]),
        ("a.png", b"\x89PNG\r\n\x1a\n"),
        ("a.jpg", b"\xff\xd8\xff"),
        ("b.JPEG", b"\xff\xd8\xff"),
    ] {
        plot(name).expect_code(0);
        let bytes = std::fs::read(dir.path().join(name)).unwrap();
        assert!(bytes.starts_with(magic), "{name}: {:?}", &bytes[..8]);
        if name.ends_with("JPEG") || name.ends_with("jpg") {
            assert!(bytes.ends_with(b"\xff\xd9"), "{name}: no end of image");
        }
    }
    for name in ["a.gif", "a"] {
        let r = plot(name).expect_code(2);
        assert_eq!(
            r.stderr,
            format!(
                "error: cannot tell the picture type from `{name}`: name it .svg, .png or .jpg\n"
            )
        );
        assert!(!dir.path().join(name).exists());
    }
}
