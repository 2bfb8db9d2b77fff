//! `plot`: line plots of values over time, one panel per key, drawn with `plotters` as SVG.
//! The recording is walked once for its time span (record headers only), then read once
//! more and each series decimated into pixel columns as it streams (smallest and largest
//! value per column), so memory is bounded by the picture, not the recording.

pub mod series;

use std::io::Write;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::formats::output::Outputs;
use crate::formats::{ReadError, WriteError};
use crate::model::time_scale::{self, TimeFormat};
use crate::model::{Entity, Epoch, Header, Nanos};

use super::convert::{Notes, ReadRequest};
pub use series::{Decimated, KeySpec, Reduce};

/// The plot area's place in the picture: left margin and y label area, right margin.
pub const LEFT: u32 = 90;
pub const RIGHT: u32 = 20;
/// Series kept at most; more matches are left out (and said so).
pub const MAX_SERIES: usize = 32;

/// What to plot.
pub struct PlotRequest<'a> {
    /// The recording, read with values.
    pub read: ReadRequest<'a>,
    /// The same recording, walked over record headers for its time span.
    pub walk: ReadRequest<'a>,
    pub keys: Vec<KeySpec>,
    pub reduce: Option<Reduce>,
    /// Picture width, and height of one panel, in pixels.
    pub width: u32,
    pub panel_height: u32,
    /// How times are shown on the axis: `None` is UTC when the recording has an absolute
    /// start, else seconds from time zero.
    pub time_format: Option<TimeFormat>,
    pub output: &'a Path,
    pub force: bool,
}

/// The kind of picture written, from the output's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Picture {
    Svg,
    Png,
    Jpeg,
}

impl Picture {
    /// The picture `output` names by its extension (`.svg`, `.png`, `.jpg` or `.jpeg`, in
    /// any case; standard output, `-`, is SVG); `Usage` for any other name, so that a
    /// picture's bytes are always of the kind its name says.
    pub fn for_output(output: &Path) -> Result<Picture, PlotError> {
        if output == Path::new("-") {
            return Ok(Picture::Svg);
        }
        let extension = output.extension().and_then(|e| e.to_str());
        match extension.map(str::to_ascii_lowercase).as_deref() {
            Some("svg") => Ok(Picture::Svg),
            Some("png") => Ok(Picture::Png),
            Some("jpg" | "jpeg") => Ok(Picture::Jpeg),
            _ => Err(PlotRefusal::PictureType {
                output: output.to_path_buf(),
            }
            .into()),
        }
    }
}

/// One line drawn.
#[derive(Debug, Clone)]
pub struct Drawn {
    pub name: String,
    pub samples: u64,
    pub points: usize,
}

/// What was drawn, and where.
#[derive(Debug, Clone)]
pub struct Plotted {
    pub path: PathBuf,
    pub panels: usize,
    /// Pixel columns each series was decimated to.
    pub columns: usize,
    pub series: Vec<Drawn>,
    /// Keys that matched values which give no number, and why (once per key).
    pub skipped: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The command line cannot be honoured (no key matched, no absolute start).
    #[error(transparent)]
    Usage(#[from] PlotRefusal),
    #[error("drawing the plot: {0}")]
    Draw(#[from] DrawError),
}

/// Why a plot cannot be made as asked: a usage error (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum PlotRefusal {
    #[error("cannot tell the picture type from `{}`: name it .svg, .png or .jpg", .output.display())]
    PictureType { output: PathBuf },
    #[error("the recording holds no record")]
    NoRecord,
    #[error("--time-format {format}: the recording has no absolute start (give it with --epoch)")]
    NoEpoch { format: TimeFormat },
    /// `skipped` says why values that matched gave no number.
    #[error("--key {} matched no value that gives a number{}", .keys.join(", "), skipped_text(.skipped))]
    NoMatch {
        keys: Vec<String>,
        skipped: Vec<String>,
    },
    #[error(
        "a JPEG is at most 65535 pixels a side; this plot is {width} × {height} (fewer \
         panels, a smaller --panel-height, or .png)"
    )]
    JpegTooLarge { width: u32, height: u32 },
}

fn skipped_text(skipped: &[String]) -> String {
    if skipped.is_empty() {
        String::new()
    } else {
        format!(" ({})", skipped.join("; "))
    }
}

/// Drawing or encoding the picture failed.
#[derive(Debug, thiserror::Error)]
pub enum DrawError {
    #[error("the built-in font does not load")]
    Font,
    #[error("encoding the PNG: {0}")]
    Png(#[from] png::EncodingError),
    #[error("encoding the JPEG: {0}")]
    Jpeg(#[from] jpeg_encoder::EncodingError),
    /// The plotting backend's own message (its error type is generic over the backend).
    #[error("{0}")]
    Backend(String),
}

/// A series: a panel (the key spec's matched name) and an entity.
struct Series {
    panel: usize,
    label: String,
    entity: Option<Entity>,
    /// The element (or block) of an array value the key names.
    index: Vec<usize>,
    data: Decimated,
}

/// The keys of one channel and entity met so far, each with its series (`None`: not plotted).
type KeySlots = Vec<(String, Option<usize>)>;

/// A panel: a value name, with its unit, and the first `--key` that named it (panels are
/// stacked in the order of the keys).
struct Panel {
    title: String,
    unit: Option<String>,
    key: usize,
}

/// The name a value goes by: an Icarus signal's channel name is its full name
/// (`Vehicle.Nav.position`, key `position`); elsewhere the key is (`energy.kinetic`).
fn value_name(channel: &str, key: &str) -> String {
    if channel == key
        || channel
            .strip_suffix(key)
            .is_some_and(|head| head.ends_with('.') || head.ends_with('/'))
    {
        channel.to_string()
    } else {
        key.to_string()
    }
}

fn unit_of(header: &Header, channel: u32, key: &str) -> Option<String> {
    header
        .channel(channel)?
        .fields
        .iter()
        .find(|f| f.name == key)
        .and_then(|f| f.unit.clone())
}

/// The channels that may hold a value some key names: those whose declared fields match,
/// and every channel that does not declare all its fields (its keys are met as it is read).
fn channels_for(header: &Header, keys: &[KeySpec]) -> Vec<bool> {
    header
        .channels
        .iter()
        .map(|c| {
            !c.declares_all
                || c.fields.iter().any(|f| {
                    let name = value_name(&c.name, &f.name);
                    keys.iter().any(|k| k.matches(&name) || k.matches(&f.name))
                })
        })
        .collect()
}

/// Walks the records of the channels the keys may name for their first and last time.
fn span(walk: ReadRequest, keys: &[KeySpec]) -> Result<Option<(Nanos, Nanos)>, PlotError> {
    let (mut source, _) = walk.open()?.into_parts();
    let wanted = channels_for(source.header(), keys);
    if !wanted.is_empty() && !wanted.contains(&true) {
        return Err(no_match(keys, &[]));
    }
    source.select_channels(&wanted);
    let mut span: Option<(Nanos, Nanos)> = None;
    for r in source {
        let t = r?.time;
        span = Some(span.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
    }
    Ok(span)
}

/// Draws the plot. The notes of the read come back either way.
pub fn plot(request: PlotRequest) -> (Result<Plotted, PlotError>, Notes) {
    let mut notes = Notes::default();
    let result = run(request, &mut notes);
    (result, notes)
}

fn run(request: PlotRequest, notes: &mut Notes) -> Result<Plotted, PlotError> {
    // plotters maps the plot area's first to last pixel over its width less one: as many
    // columns as that puts each column on a pixel of its own.
    let columns = request.width.saturating_sub(LEFT + RIGHT + 1).max(1) as usize;
    let PlotRequest {
        read,
        walk,
        keys,
        reduce,
        width,
        panel_height,
        time_format,
        output,
        force,
    } = request;
    let picture = Picture::for_output(output)?;
    let Some((t0, t1)) = span(walk, &keys)? else {
        return Err(PlotRefusal::NoRecord.into());
    };
    let (mut source, selection) = read.open()?.into_parts();
    source.select_channels(&channels_for(source.header(), &keys));
    let epoch = source.header().origin.epoch;
    let time_format = match (time_format, epoch) {
        (Some(f), None) if f.needs_epoch() => return Err(PlotRefusal::NoEpoch { format: f }.into()),
        (Some(f), _) => f,
        (None, Some(_)) => TimeFormat::Utc,
        (None, None) => TimeFormat::Met,
    };
    let span_ns = (t1 - t0) as i128 + 1;
    let mut panels: Vec<Panel> = Vec::new();
    let mut series: Vec<Series> = Vec::new();
    // Per channel id, per entity: each key met and its series, or None when it is not
    // plotted. Looked up without hashing or allocating: a channel has few entities, an entity
    // few keys.
    let mut known: Vec<Vec<(Option<Entity>, KeySlots)>> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    let mut too_many = false;
    while let Some(record) = source.next() {
        let record = record?;
        let col = (((record.time - t0) as i128 * columns as i128) / span_ns) as usize;
        let channel_id = record.channel as usize;
        if known.len() <= channel_id {
            known.resize_with(channel_id + 1, Vec::new);
        }
        let entities = &mut known[channel_id];
        let at = match entities.iter().position(|(e, _)| *e == record.entity) {
            Some(at) => at,
            None => {
                entities.push((record.entity.clone(), Vec::new()));
                entities.len() - 1
            }
        };
        for (key, value) in &record.values {
            let found = known[channel_id][at]
                .1
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, slot)| *slot);
            let slot = match found {
                Some(slot) => slot,
                None => {
                    let header = source.header();
                    let channel = header
                        .channel(record.channel)
                        .map_or("", |c| c.name.as_str());
                    let name = value_name(channel, key);
                    let spec = keys.iter().position(|k| k.matches(&name) || k.matches(key));
                    let slot = match spec {
                        None => None,
                        Some(_) if series.len() >= MAX_SERIES => {
                            too_many = true;
                            None
                        }
                        Some(key_at) => {
                            let spec = &keys[key_at];
                            let title = match (reduce, spec.index.is_empty()) {
                                (Some(r), true) => format!("{} of {name}", r.name()),
                                (Some(r), false) => {
                                    format!("{} of {name}{}", r.name(), index_text(&spec.index))
                                }
                                (None, _) => format!("{name}{}", index_text(&spec.index)),
                            };
                            let panel = match panels.iter().position(|p| p.title == title) {
                                Some(p) => p,
                                None => {
                                    panels.push(Panel {
                                        title: title.clone(),
                                        unit: unit_of(header, record.channel, key),
                                        key: key_at,
                                    });
                                    panels.len() - 1
                                }
                            };
                            let label = match &record.entity {
                                Some(e) if name != channel => format!("{title} (entity {e})"),
                                _ => title,
                            };
                            series.push(Series {
                                panel,
                                label,
                                entity: record.entity.clone(),
                                index: spec.index.clone(),
                                data: Decimated::new(columns),
                            });
                            Some(series.len() - 1)
                        }
                    };
                    known[channel_id][at].1.push((key.clone(), slot));
                    slot
                }
            };
            let Some(i) = slot else { continue };
            match series::number(value, &series[i].index, reduce) {
                Ok(y) => series[i].data.add(col, y),
                Err(why) => {
                    let note = format!("{}: {why}", series[i].label);
                    if !skipped.contains(&note) {
                        skipped.push(note);
                    }
                }
            }
        }
        source.recycle(record);
    }
    *notes = Notes::of(&*source, &selection);
    if too_many {
        skipped.push(format!(
            "more than {MAX_SERIES} series matched: the first {MAX_SERIES} are drawn"
        ));
    }
    series.retain(|s| s.data.samples > 0);
    if series.is_empty() {
        return Err(no_match(&keys, &skipped));
    }
    let mut used: Vec<usize> = (0..panels.len())
        .filter(|p| series.iter().any(|s| s.panel == *p))
        .collect();
    // In the order of the keys; the panels of one key (a glob) in the order met.
    used.sort_by_key(|&p| panels[p].key);
    series.sort_by_key(|s| used.iter().position(|&p| p == s.panel));
    let scene = Scene {
        size: (width, panel_height),
        panels: &panels,
        used: &used,
        series: &series,
        span: (t0, t1),
        columns,
        time_format,
        epoch,
    };
    let picture = render(&scene, picture)?;
    let mut outputs = Outputs::new(force);
    let mut out = outputs.create(output)?;
    out.write_all(&picture)
        .and_then(|()| out.flush())
        .map_err(|e| WriteError::io(output, e))?;
    drop(out);
    outputs.commit()?;
    Ok(Plotted {
        path: output.to_path_buf(),
        panels: used.len(),
        columns,
        series: series
            .iter()
            .map(|s| Drawn {
                name: s.label.clone(),
                samples: s.data.samples,
                points: s.data.points().count(),
            })
            .collect(),
        skipped,
    })
}

/// The keys matched no value that gives a number; `skipped` says why values that matched
/// gave none.
fn no_match(keys: &[KeySpec], skipped: &[String]) -> PlotError {
    PlotRefusal::NoMatch {
        keys: keys.iter().map(|k| k.text.clone()).collect(),
        skipped: skipped.to_vec(),
    }
    .into()
}

fn index_text(index: &[usize]) -> String {
    if index.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = index.iter().map(usize::to_string).collect();
    format!("[{}]", parts.join(","))
}

const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Seconds from time zero of column `c`'s middle.
fn column_time(c: usize, (t0, t1): (Nanos, Nanos), columns: usize) -> f64 {
    let width = (t1 - t0) as f64 + 1.0;
    (t0 as f64 + (c as f64 + 0.5) * width / columns as f64) / 1e9
}

/// What is drawn: the panels in use, their series over the span, and how times are shown.
struct Scene<'a> {
    size: (u32, u32),
    panels: &'a [Panel],
    used: &'a [usize],
    series: &'a [Series],
    span: (Nanos, Nanos),
    columns: usize,
    time_format: TimeFormat,
    epoch: Option<Epoch>,
}

/// Height of the time axis' labels under the panels.
const X_LABELS: u32 = 40;

/// The picture's bytes: SVG text, or a PNG or JPEG of the same drawing (text in the font
/// simrec carries).
fn render(scene: &Scene, picture: Picture) -> Result<Vec<u8>, PlotError> {
    let (width, panel_height) = scene.size;
    let height = panel_height * scene.used.len() as u32 + X_LABELS;
    if picture == Picture::Svg {
        let mut svg = String::new();
        draw(
            SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area(),
            scene,
        )?;
        return Ok(svg.into_bytes());
    }
    register_font()?;
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    draw(
        BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area(),
        scene,
    )?;
    match picture {
        Picture::Jpeg => encode_jpeg(&rgb, width, height),
        _ => encode_png(&rgb, width, height),
    }
}

/// DejaVu Sans cut to the characters of names, units and times (assets/fonts/make.sh).
const FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans-subset.ttf");

/// Makes the font plotters draws bitmap text with (once per process).
fn register_font() -> Result<(), PlotError> {
    static REGISTERED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        ["sans-serif", "serif", "monospace"]
            .iter()
            .all(|family| plotters::style::register_font(family, FontStyle::Normal, FONT).is_ok())
    });
    if ok {
        Ok(())
    } else {
        Err(DrawError::Font.into())
    }
}

fn encode_png(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, PlotError> {
    let e = |e: png::EncodingError| PlotError::from(DrawError::Png(e));
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(e)?;
    writer.write_image_data(rgb).map_err(e)?;
    writer.finish().map_err(e)?;
    Ok(bytes)
}

/// Pixel size of the time axis' labels, and the width of one of their characters at most
/// (DejaVu Sans: digits are 0.64 em, letters at most 0.7), with the room between two labels.
const X_LABEL_FONT: u32 = 12;
const X_LABEL_CHAR: f64 = 0.7 * X_LABEL_FONT as f64;
const X_LABEL_GAP: f64 = 16.0;

/// The time axis' labels: as many as fit side by side without touching, each as short as
/// the scale allows (an absolute time's date, when the whole span is within one day, is said
/// once in the axis title and left out of each label).
struct TimeAxis {
    format: TimeFormat,
    epoch: Option<Epoch>,
    /// Fraction digits of the seconds.
    digits: u8,
    /// The date every label shares (`2026-03-01`), left out of each.
    day: Option<String>,
    /// Labels at most, and pixels per second of the plot area.
    labels: usize,
    scale: f64,
    /// Where the last label's right half would leave the picture (seconds from time zero).
    last: f64,
    title: String,
}

impl TimeAxis {
    fn new(format: TimeFormat, epoch: Option<Epoch>, span: (Nanos, Nanos), columns: usize) -> Self {
        let digits = if span.1 - span.0 > 10_000_000_000 {
            0
        } else {
            3
        };
        let mut axis = TimeAxis {
            format,
            epoch,
            digits,
            day: None,
            labels: 0,
            scale: 0.0,
            last: f64::INFINITY,
            title: String::new(),
        };
        let (first, end) = (axis.full(span.0), axis.full(span.1));
        axis.day = date_of(&first)
            .filter(|d| date_of(&end) == Some(d))
            .map(str::to_string);
        axis.title = match (format, &axis.day) {
            (TimeFormat::Met, _) => "time (s from time zero)".to_string(),
            (f, Some(day)) => format!("time ({}, {day})", f.to_string().to_uppercase()),
            (f, None) => format!("time ({})", f.to_string().to_uppercase()),
        };
        let chars = [span.0, span.1]
            .map(|t| axis.short(axis.full(t)).chars().count())
            .into_iter()
            .max()
            .unwrap_or(1);
        let label = chars as f64 * X_LABEL_CHAR;
        let area = (columns + 1) as f64;
        axis.labels = ((area / (label + X_LABEL_GAP)) as usize).clamp(1, 8);
        let seconds = (span.1 - span.0) as f64 / 1e9;
        axis.scale = if seconds > 0.0 { area / seconds } else { 0.0 };
        // A label is centred on its tick: one nearer the right edge than half its width
        // (less the margin) would be cut off.
        let room = (label / 2.0 - RIGHT as f64).max(0.0);
        if axis.scale > 0.0 {
            axis.last = (span.1 as f64 + 1.0) / 1e9 - room / axis.scale;
        }
        axis
    }

    /// The time `t` (ns from time zero) in the axis' scale, date and all.
    fn full(&self, t: Nanos) -> String {
        time_scale::show(self.format, self.epoch.as_ref(), t, Some(self.digits)).unwrap_or_default()
    }

    /// `full` without the date the axis title gives, nor the scale's suffix.
    fn short(&self, full: String) -> String {
        let time = self
            .day
            .as_ref()
            .and_then(|day| full.strip_prefix(day.as_str())?.strip_prefix('T'));
        match time {
            Some(time) => time
                .trim_end_matches('Z')
                .trim_end_matches(" TAI")
                .trim_end_matches(" GPS")
                .to_string(),
            None => full,
        }
    }

    /// The label of the tick at `seconds`; none where it would be cut off.
    fn label(&self, seconds: f64) -> String {
        if seconds > self.last {
            return String::new();
        }
        self.short(self.full((seconds * 1e9).round() as i64))
    }
}

/// The date of an ISO-8601 time (`2026-03-01` of `2026-03-01T12:00:05Z`).
fn date_of(text: &str) -> Option<&str> {
    (text.len() > 11 && text.as_bytes()[10] == b'T').then(|| &text[..10])
}

/// JPEG quality: text and one-pixel lines stay sharp (at 75 their edges ring).
const JPEG_QUALITY: u8 = 90;

fn encode_jpeg(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, PlotError> {
    let too_large = || PlotRefusal::JpegTooLarge { width, height };
    let w = u16::try_from(width).map_err(|_| too_large())?;
    let h = u16::try_from(height).map_err(|_| too_large())?;
    let mut bytes = Vec::new();
    jpeg_encoder::Encoder::new(&mut bytes, JPEG_QUALITY)
        .encode(rgb, w, h, jpeg_encoder::ColorType::Rgb)
        .map_err(DrawError::Jpeg)?;
    Ok(bytes)
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    scene: &Scene,
) -> Result<(), PlotError> {
    let Scene {
        size: (width, panel_height),
        panels,
        used,
        series,
        span,
        columns,
        time_format,
        epoch,
    } = *scene;
    let e = |e: &dyn std::fmt::Display| DrawError::Backend(e.to_string());
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let (top, bottom) = root.split_vertically(panel_height * used.len() as u32);
    let areas = top.split_evenly((used.len(), 1));
    let x0 = span.0 as f64 / 1e9;
    let x1 = (span.1 as f64 + 1.0) / 1e9;
    let axis = TimeAxis::new(time_format, epoch, span, columns);
    let time_label = |x: &f64| axis.label(*x);
    for (n, (&p, area)) in used.iter().zip(&areas).enumerate() {
        let panel = &panels[p];
        let lines: Vec<&Series> = series.iter().filter(|s| s.panel == p).collect();
        let (lo, hi) = lines
            .iter()
            .filter_map(|s| s.data.range())
            .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
            .unwrap_or((0.0, 1.0));
        let (lo, hi) = if hi > lo {
            (lo, hi)
        } else {
            (lo - 0.5 * lo.abs().max(1.0), hi + 0.5 * hi.abs().max(1.0))
        };
        let last = n + 1 == used.len();
        let mut chart = ChartBuilder::on(area)
            .x_label_area_size(if last { 30 } else { 0 })
            .margin_left(10)
            .margin_right(RIGHT)
            .margin_top(10)
            .y_label_area_size(LEFT - 10)
            .build_cartesian_2d(x0..x1, lo..hi)
            .map_err(|x| e(&x))?;
        let y_desc = match &panel.unit {
            Some(u) => format!("{} ({u})", panel.title),
            None => panel.title.clone(),
        };
        chart
            .configure_mesh()
            .y_desc(y_desc)
            .x_labels(if last { axis.labels } else { 0 })
            .x_label_style(("sans-serif", X_LABEL_FONT))
            .x_label_formatter(&time_label)
            .draw()
            .map_err(|x| e(&x))?;
        for (i, s) in lines.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let points = s
                .data
                .points()
                .map(|(c, y)| (column_time(c, span, columns), y));
            let drawn = chart
                .draw_series(LineSeries::new(points, colour.stroke_width(1)))
                .map_err(|x| e(&x))?;
            if lines.len() > 1 {
                let label = match &s.entity {
                    Some(en) => format!("entity {en}"),
                    None => s.label.clone(),
                };
                drawn
                    .label(label)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], colour));
            }
        }
        if lines.len() > 1 {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(|x| e(&x))?;
        }
    }
    bottom
        .draw_text(
            &axis.title,
            &("sans-serif", 14).into_font().color(&BLACK),
            ((width / 2) as i32 - 60, (X_LABELS / 2) as i32),
        )
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Channel, ChannelKind, Composition, FieldSpec};

    /// The reader is asked only for channels whose declared keys a key can match, and for
    /// every channel that may carry keys it does not declare.
    #[test]
    fn the_channels_asked_for_are_those_a_key_can_name() {
        let mut h = Header::new("test", "1");
        for (name, field, declares_all) in [
            ("Vehicle.Nav.position", "position", true),
            ("Vehicle.Aero.alpha", "alpha", true),
            // NanoVer declares the units of a few keys; its frames carry many more.
            ("frame", "particle.positions", false),
        ] {
            let mut c = Channel::new(name, ChannelKind::Signals, Composition::Independent);
            c.fields.push(FieldSpec::new(field));
            c.declares_all = declares_all;
            h.add_channel(c);
        }
        let keys = |texts: &[&str]| -> Vec<KeySpec> {
            texts.iter().map(|t| KeySpec::parse(t).unwrap()).collect()
        };
        // By the full signal name, by a glob over it, by the key alone, by an element.
        assert_eq!(
            channels_for(&h, &keys(&["Vehicle.Aero.alpha"])),
            [false, true, true]
        );
        assert_eq!(channels_for(&h, &keys(&["Vehicle.*"])), [true, true, true]);
        assert_eq!(channels_for(&h, &keys(&["alpha"])), [false, true, true]);
        assert_eq!(
            channels_for(&h, &keys(&["Vehicle.Nav.position[1]"])),
            [true, false, true]
        );
        assert_eq!(channels_for(&h, &keys(&["energy.*"])), [false, false, true]);
    }
}
