//! `snapshot --at T` (spec §A13, warm start): the values of every signal at the frame
//! nearest T, as JSON. Two walks over the recording: record times only to choose the frame
//! (a header walk, which the Icarus readers do without decoding values), then values up to
//! that frame.

use std::path::Path;

use serde_json::Value as Json;

use super::frames::FrameCounter;
use crate::formats::{icarus_compat, icarus_snapshot, registry, ReadError, ReadOptions};
use crate::model::{Nanos, TimeSpec, Value};
use crate::report::{Finding, Severity};

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
}

/// The snapshot's JSON text (`None` when an error finding forbids a warm start), and the
/// findings (warnings and errors) that go with it.
pub struct Snapshot {
    pub json: Option<String>,
    pub findings: Vec<Finding>,
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
    let schema = icarus_compat::schema_of(&header).ok_or_else(|| {
        ReadError::Unsupported(format!(
            "{}: a {} recording has no warm-start state; snapshot reads Icarus recordings",
            req.path.display(),
            format.name()
        ))
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
        return Err(ReadError::Unsupported(format!(
            "{}: the recording has no frames",
            req.path.display()
        )));
    };
    // `last` is the last frame read: the recording's last unless the walk stopped after T.
    let clamped = match req.at {
        TimeSpec::Frame(n) => chosen.position != n,
        _ => requested < first.time || last.is_some_and(|l| requested > l.time),
    };

    // Values: the latest record of each channel up to the end of the chosen frame.
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
        let c = record.channel as usize;
        if c >= values.len() {
            values.resize(c + 1, None);
        }
        if let Some(field) = record.values.pop() {
            values[c] = Some(field.1);
        }
    }
    let header = source.header().clone();

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
    let mut needed = icarus_compat::state_names(req.current.unwrap_or(&schema));
    if let Some(current) = req.current {
        needed.extend(icarus_compat::required_names(current));
    }
    let index = |name: &str| header.channels.iter().position(|c| c.name == name);
    for name in &needed {
        match index(name).and_then(|c| values.get(c)?.as_ref()) {
            None => findings.push(error(
                WARMSTART_MISSING_STATE,
                format!("{name}, a state or required signal, is not in the recording"),
            )),
            Some(v) if !icarus_snapshot::is_finite(v) => findings.push(error(
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
        });
    }

    let mut out = String::from("{\"requested_time\":");
    icarus_snapshot::f64_json(seconds(requested), &mut out);
    out.push_str(",\"time\":");
    icarus_snapshot::f64_json(seconds(chosen.time), &mut out);
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
        if icarus_snapshot::value_json(value, spec, &mut out).is_none() {
            out.push_str("null");
        }
    }
    out.push_str("}}");
    Ok(Snapshot {
        json: Some(out),
        findings,
    })
}

fn seconds(t: Nanos) -> f64 {
    t as f64 / 1e9
}

fn json_string(s: Option<&str>) -> String {
    s.map_or_else(|| "null".into(), |s| Json::String(s.into()).to_string())
}
