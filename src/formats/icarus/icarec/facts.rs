//! What `inspect` shows of a recording beyond the generic summary (spec §A10): the
//! container, the signals and their layout, components, the time system, frames, time-step
//! statistics and the checksum's status.

use serde_json::{json, Value as Json};

use super::reader::{metadata_json, IcarecReader};
use crate::report::render::first_and_last;
use crate::report::Fact;

/// Lists in the text facts show this many items at each end (the JSON has all).
const FEW: usize = 5;

pub(super) fn facts(r: &IcarecReader) -> Vec<Fact> {
    let mut out = vec![layout_fact(r), signals_fact(r)];
    out.extend(components_fact(r));
    out.extend([
        time_system_fact(r),
        frames_fact(r),
        dt_fact(r),
        checksum_fact(r),
        completion_fact(r),
    ]);
    out
}

/// The container's form and its members.
fn layout_fact(r: &IcarecReader) -> Fact {
    let members: Vec<Json> = r
        .members
        .iter()
        .map(|m| json!({"name": m.name, "data_offset": m.data_offset, "size_bytes": m.size}))
        .collect();
    Fact::new(
        "layout",
        format!(
            "{} ({})",
            r.form.name(),
            r.members
                .iter()
                .map(|m| format!("{} {} B", m.name, m.size))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        json!({"form": r.form.name(), "members": members}),
    )
}

/// Every signal: type, units, lifecycle and place in its block.
fn signals_fact(r: &IcarecReader) -> Fact {
    let s = &r.schema;
    let lines: Vec<String> = s
        .signals
        .iter()
        .map(|x| {
            format!(
                "{} {}{} {} @{}+{}",
                x.name,
                x.ty,
                x.units
                    .as_deref()
                    .map_or(String::new(), |u| format!(" [{u}]")),
                x.lifecycle.name(),
                x.offset,
                x.size
            )
        })
        .collect();
    let mut text = vec![format!(
        "{} ({} dynamic, {} static{})",
        s.signals.len(),
        s.signals
            .iter()
            .filter(|x| x.lifecycle == super::schema::Lifecycle::Dynamic)
            .count(),
        s.signals
            .iter()
            .filter(|x| x.lifecycle == super::schema::Lifecycle::Static)
            .count(),
        if s.unreadable > 0 {
            format!(", {} unreadable", s.unreadable)
        } else {
            String::new()
        }
    )];
    text.extend(first_and_last(&lines, FEW, "signals"));
    Fact::new(
        "signals",
        text.join("\n"),
        Json::Array(
            s.signals
                .iter()
                .map(|x| {
                    json!({
                        "name": x.name,
                        "type": x.ty.to_string(),
                        "units": x.units,
                        "lifecycle": x.lifecycle.name(),
                        "offset": x.offset,
                        "size": x.size,
                        "semantic": x.semantic,
                    })
                })
                .collect(),
        ),
    )
}

/// The schema's `components`, when it has a list of them.
fn components_fact(r: &IcarecReader) -> Option<Fact> {
    let components = (r.schema_object())
        .and_then(|o| o.get("components"))
        .cloned()
        .unwrap_or(Json::Null);
    if let Json::Array(list) = &components {
        let lines: Vec<String> = list
            .iter()
            .map(|c| {
                format!(
                    "{} {} state [{}, +{})",
                    c.get("name").and_then(Json::as_str).unwrap_or("?"),
                    c.get("type").and_then(Json::as_str).unwrap_or("?"),
                    c.get("state_offset").unwrap_or(&Json::Null),
                    c.get("state_size").unwrap_or(&Json::Null)
                )
            })
            .collect();
        return Some(Fact::new(
            "components",
            first_and_last(&lines, FEW, "components").join("\n"),
            components.clone(),
        ));
    }
    None
}

fn time_system_fact(r: &IcarecReader) -> Fact {
    let s = &r.schema;
    let system = s.origin.system.clone().unwrap_or_else(|| "MET".into());
    let epoch = s.origin.epoch.map(|e| e.iso8601());
    Fact::new(
        "time_system",
        match &epoch {
            Some(e) => format!("{system}, epoch {e}"),
            None => format!("{system}, no epoch (times are seconds from t = 0)"),
        },
        json!({"system": system, "epoch": epoch}),
    )
}

fn frames_fact(r: &IcarecReader) -> Fact {
    let s = &r.schema;
    Fact::new(
        "frames",
        format!(
            "{} of {} bytes (time + {}-byte dynamic block); static block {} bytes{}",
            r.frames,
            r.frame_size,
            s.dynamic_block,
            s.static_block,
            match (r.t_first, r.t_last) {
                (Some(a), Some(b)) => format!("; t = {a:?} … {b:?} s"),
                _ => String::new(),
            }
        ),
        json!({
            "count": r.frames,
            "frame_bytes": r.frame_size,
            "dynamic_block_bytes": s.dynamic_block,
            "static_block_bytes": s.static_block,
            "static_bytes_read": r.static_len(),
            "t_first": r.t_first.map(super::metadata::time_json),
            "t_last": r.t_last.map(super::metadata::time_json),
        }),
    )
}

/// Time-step statistics.
fn dt_fact(r: &IcarecReader) -> Fact {
    let st = &r.steps;
    let num = |x: Option<f64>| x.map_or(Json::Null, super::metadata::time_json);
    Fact::new(
        "dt",
        match (st.min, st.max, st.mean()) {
            (Some(a), Some(b), Some(m)) => format!(
                "min {a:?} s, max {b:?} s, mean {m:?} s, median {:?} s; {} irregular of {} steps",
                st.median().unwrap_or(0.0),
                st.irregular(),
                st.count
            ),
            _ => "fewer than two frames".into(),
        },
        json!({
            "steps": st.count,
            "min": num(st.min),
            "max": num(st.max),
            "mean": num(st.mean()),
            "median": num(st.median()),
            "irregular": st.irregular(),
        }),
    )
}

fn checksum_fact(r: &IcarecReader) -> Fact {
    let s = &r.schema;
    Fact::new(
        "checksum",
        match s.checksum.status() {
            "ok" => format!("ok ({})", s.checksum.computed),
            "missing" => format!("missing (computed {})", s.checksum.computed),
            _ => format!(
                "MISMATCH: declared {}, computed {}",
                s.checksum.declared.clone().unwrap_or(Json::Null),
                s.checksum.computed
            ),
        },
        json!({
            "status": s.checksum.status(),
            "declared": s.checksum.declared,
            "computed": s.checksum.computed,
        }),
    )
}

/// Whether the recorder finished cleanly, by `metadata.json`.
fn completion_fact(r: &IcarecReader) -> Fact {
    let meta = metadata_json(&r.metadata);
    Fact::new(
        "completion",
        match &r.metadata {
            None => "no metadata.json: not finished cleanly".to_string(),
            Some(m) if super::metadata::complete(m) => "complete".to_string(),
            Some(_) => "complete: false (not finished cleanly)".to_string(),
        },
        meta,
    )
}
