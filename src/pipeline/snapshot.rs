//! `snapshot --at T` (spec §A13, warm start): the values of every signal at the frame
//! nearest T, as JSON. Two walks over the recording: record times only to choose the frame
//! (a header walk, which the Icarus readers do without decoding values), then the values:
//! of that frame alone where the format slices by itself and the frame holds every signal
//! (`.icarec` and Icarus HDF5 find it by binary search, the static signals with it), else
//! the latest of each signal up to that frame.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::frames::FrameCounter;
use crate::formats::icarus::{compat, snapshot as values};
use crate::formats::origin::with_origin;
use crate::formats::{registry, Format, ReadError, ReadOptions, SliceRequest, Unreadable};
use crate::model::{Header, Nanos, TimeSpec, Value};
use crate::report::{Finding, Findings, Severity};

pub const WARMSTART_INCOMPATIBLE: &str = "ICAREC_WARMSTART_INCOMPATIBLE";
pub const WARMSTART_UNDECLARED: &str = "ICAREC_WARMSTART_UNDECLARED";
pub const WARMSTART_MISSING_STATE: &str = "ICAREC_WARMSTART_MISSING_STATE";
pub const WARMSTART_NOT_FINITE: &str = "ICAREC_WARMSTART_NOT_FINITE";

pub struct SnapshotRequest<'a> {
    pub path: &'a Path,
    pub at: TimeSpec,
    pub states_only: bool,
    /// The current schema (`--against`): its state and required signals must be present.
    pub current: Option<&'a Json>,
    pub options: ReadOptions,
    /// Read every frame up to the chosen one, even where the frame alone would do (tests
    /// compare the two ways).
    pub whole: bool,
}

/// The snapshot's JSON text (`None` when an error finding forbids a warm start), the
/// findings (warnings and errors) that go with it, and what reading the recording up to
/// the chosen frame found (damage read up to, with lenient options).
pub struct Snapshot {
    pub json: Option<String>,
    pub findings: Vec<Finding>,
    pub read_findings: Vec<(PathBuf, Findings)>,
}

/// The chosen frame: its position among the recording's frames, its frame value, time.
#[derive(Clone, Copy)]
struct Frame {
    position: u64,
    value: Option<i64>,
    time: Nanos,
}

pub fn snapshot(req: &SnapshotRequest) -> Result<Snapshot, ReadError> {
    let format = registry::detect(req.path)?;
    let walk = ReadOptions {
        decode: false,
        ..req.options
    };
    let mut times = registry::open_as(format, req.path, walk)?;
    let header = times.header().clone();
    let schema = compat::schema_of(&header).ok_or_else(|| {
        ReadError::Unsupported(Unreadable::NoWarmStart {
            path: req.path.into(),
            format: format.name(),
        })
    })?;

    // Frames as `#N` counts them (pipeline::frames).
    let mut counter = FrameCounter::default();
    let mut frames: Vec<Frame> = Vec::new();
    let mut chosen: Option<Frame> = None;
    let (mut first, mut last): (Option<Frame>, Option<Frame>) = (None, None);
    while let Some(record) = times.next() {
        let record = record?;
        let position = counter.observe(&record);
        let new_frame = position.is_some_and(|p| last.is_none_or(|l| l.position != p));
        if let (true, Some(position)) = (new_frame, position) {
            let frame = Frame {
                position,
                value: record.frame,
                time: record.time,
            };
            first = first.or(Some(frame));
            last = Some(frame);
            match req.at {
                TimeSpec::Frame(n) if position == n => {
                    chosen = Some(frame);
                    break;
                }
                TimeSpec::FromEnd(_) => frames.push(frame),
                TimeSpec::At(t) => {
                    let better = chosen.is_none_or(|c| t.abs_diff(frame.time) < t.abs_diff(c.time));
                    if better {
                        chosen = Some(frame);
                    } else if frame.time > t {
                        break;
                    }
                }
                _ => {}
            }
        }
        times.recycle(record);
    }
    // The walk reads at least as far as the values are read.
    let read_findings: Vec<(PathBuf, Findings)> = times
        .findings()
        .into_iter()
        .map(|(p, f)| (p.to_path_buf(), f.clone()))
        .collect();
    drop(times);
    let (requested, chosen) = match req.at {
        TimeSpec::At(t) => (t, chosen),
        // A frame past the last is clamped to the last.
        TimeSpec::Frame(_) => {
            let frame = chosen.or(last);
            (frame.map_or(0, |f| f.time), frame)
        }
        TimeSpec::FromEnd(d) => {
            let t = last.map_or(0, |l| l.time.saturating_sub(d));
            let best = frames
                .iter()
                .min_by_key(|f| (t.abs_diff(f.time), f.position))
                .copied();
            (t, best)
        }
    };
    let (Some(chosen), Some(first)) = (chosen, first) else {
        return Err(ReadError::Unsupported(Unreadable::NoFrames(
            req.path.into(),
        )));
    };
    // `last` is the last frame read: the recording's last unless the walk stopped after T.
    let clamped = match req.at {
        TimeSpec::Frame(n) => chosen.position != n,
        _ => requested < first.time || last.is_some_and(|l| requested > l.time),
    };

    let found = match req.whole {
        true => None,
        false => frame_alone(format, req, chosen, &header),
    };
    let (values, header) = match found {
        Some(values) => (values, header),
        None => up_to(format, req, chosen)?,
    };

    let mut findings = Vec::new();
    let error = |code, message: String| Finding::new(Severity::Error, code, message);
    let warmstart = schema
        .get("compatibility")
        .and_then(|c| c.get("warmstart_compatible"));
    match warmstart.and_then(Json::as_bool) {
        Some(false) => findings.push(error(
            WARMSTART_INCOMPATIBLE,
            "the schema says the recording is not warm-start compatible \
             (compatibility.warmstart_compatible: false)"
                .into(),
        )),
        None if header.format == "icarec" => findings.push(Finding::new(
            Severity::Warning,
            WARMSTART_UNDECLARED,
            "the schema does not say whether the recording is warm-start compatible \
             (no compatibility.warmstart_compatible)",
        )),
        _ => {}
    }
    let mut needed = compat::state_names(req.current.unwrap_or(&schema));
    if let Some(current) = req.current {
        needed.extend(compat::required_names(current));
    }
    let index = |name: &str| header.channels.iter().position(|c| c.name == name);
    for name in &needed {
        match index(name).and_then(|c| values.get(c)?.as_ref()) {
            None => findings.push(error(
                WARMSTART_MISSING_STATE,
                format!("{name}, a state or required signal, is not in the recording"),
            )),
            Some(v) if !values::is_finite(v) => findings.push(error(
                WARMSTART_NOT_FINITE,
                format!(
                    "{name} is not finite at frame {} (t = {} s)",
                    chosen.position,
                    seconds(chosen.time)
                ),
            )),
            Some(_) => {}
        }
    }
    if findings.iter().any(|f| f.severity == Severity::Error) {
        return Ok(Snapshot {
            json: None,
            findings,
            read_findings,
        });
    }

    let mut out = String::from("{\"requested_time\":");
    values::f64_json(seconds(requested), &mut out);
    out.push_str(",\"time\":");
    values::f64_json(seconds(chosen.time), &mut out);
    out.push_str(&format!(
        ",\"frame\":{},\"clamped\":{clamped},\"system\":{},\"epoch\":{},\"schema_checksum\":{},\"signals\":{{",
        chosen.value.unwrap_or(chosen.position as i64),
        json_string(header.origin.system.as_deref()),
        json_string(header.origin.epoch.map(|e| e.iso8601()).as_deref()),
        json_string(schema.get("checksum").and_then(Json::as_str)),
    ));
    let mut first = true;
    for (c, channel) in header.channels.iter().enumerate() {
        if req.states_only && !needed.contains(&channel.name) {
            continue;
        }
        let (Some(Some(value)), Some(spec)) = (values.get(c), channel.fields.first()) else {
            continue;
        };
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(&json_string(Some(&channel.name)));
        out.push(':');
        if values::value_json(value, spec, &mut out).is_none() {
            out.push_str("null");
        }
    }
    out.push_str("}}");
    Ok(Snapshot {
        json: Some(out),
        findings,
        read_findings,
    })
}

/// The latest value of each channel up to the end of the chosen frame, read from the start.
fn up_to(
    format: &dyn Format,
    req: &SnapshotRequest,
    chosen: Frame,
) -> Result<(Vec<Option<Value>>, Header), ReadError> {
    let mut source = registry::open_as(format, req.path, req.options)?;
    let mut values: Vec<Option<Value>> = vec![None; source.header().channels.len()];
    let mut counter = FrameCounter::default();
    for record in source.by_ref() {
        let mut record = record?;
        if counter
            .observe(&record)
            .is_some_and(|p| p > chosen.position)
        {
            break;
        }
        keep(&mut values, &mut record);
    }
    Ok((values, source.header().clone()))
}

/// The values of the chosen frame alone, from a slice that starts at it, if the format
/// slices by itself, the slice's first frame is the chosen one (same time and frame
/// number) and it holds a value of every channel of `header`; else `None`, also on an
/// error (the whole read then finds it and says it as it always has).
fn frame_alone(
    format: &dyn Format,
    req: &SnapshotRequest,
    chosen: Frame,
    header: &Header,
) -> Option<Vec<Option<Value>>> {
    let number = chosen.value?;
    let request = SliceRequest {
        start: Some(TimeSpec::At(chosen.time)),
        ..SliceRequest::default()
    };
    let paths = [req.path.to_path_buf()];
    let source = format
        .slicer()?
        .open_slice(&paths, &request, req.options)?
        .ok()?;
    let mut source = with_origin(source, req.path, req.options).ok()?;
    if source.header().channels.len() != header.channels.len() {
        return None;
    }
    let mut values: Vec<Option<Value>> = vec![None; header.channels.len()];
    let mut counter = FrameCounter::default();
    for record in source.by_ref() {
        let mut record = record.ok()?;
        if counter.observe(&record).is_some_and(|p| p > 0) {
            break;
        }
        if record.time != chosen.time || record.frame.is_some_and(|f| f != number) {
            return None;
        }
        keep(&mut values, &mut record);
    }
    values.iter().all(Option::is_some).then_some(values)
}

/// `record`'s value as its channel's latest.
fn keep(values: &mut Vec<Option<Value>>, record: &mut crate::model::Record) {
    let c = record.channel as usize;
    if c >= values.len() {
        values.resize(c + 1, None);
    }
    if let Some(field) = record.values.pop() {
        values[c] = Some(field.1);
    }
}

fn seconds(t: Nanos) -> f64 {
    t as f64 / 1e9
}

fn json_string(s: Option<&str>) -> String {
    s.map_or_else(|| "null".into(), |s| Json::String(s.into()).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frame alone serves the formats that slice by binary search (whose static
    /// signals come with the slice's first frame), and not the CSV, which would be read
    /// whole to find it.
    #[test]
    fn the_frame_alone_serves_icarec_and_hdf5() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        for (fixture, served) in [
            ("fixtures/icarec/a2.icarec", true),
            ("fixtures/icarus-hdf5/small.h5", true),
            ("fixtures/icarus-csv/rocket.csv", false),
        ] {
            let path = root.join(fixture);
            let format = registry::detect(&path).unwrap();
            let req = SnapshotRequest {
                path: &path,
                at: TimeSpec::Frame(1),
                states_only: false,
                current: None,
                options: ReadOptions::default(),
                whole: true,
            };
            let header = registry::open_as(format, &path, req.options)
                .unwrap()
                .header()
                .clone();
            let (whole, _) = up_to(format, &req, frame_one(format, &path)).unwrap();
            let alone = frame_alone(format, &req, frame_one(format, &path), &header);
            assert_eq!(alone.is_some(), served, "{fixture}");
            if let Some(alone) = alone {
                assert_eq!(alone, whole, "{fixture}");
                assert!(alone.iter().all(Option::is_some), "{fixture}");
            }
        }
    }

    /// The second frame (`#1`) of the recording at `path`.
    fn frame_one(format: &dyn Format, path: &Path) -> Frame {
        let mut counter = FrameCounter::default();
        let source = registry::open_as(format, path, ReadOptions::default()).unwrap();
        for record in source {
            let record = record.unwrap();
            if counter.observe(&record) == Some(1) {
                return Frame {
                    position: 1,
                    value: record.frame,
                    time: record.time,
                };
            }
        }
        panic!("{}: no second frame", path.display());
    }
}
