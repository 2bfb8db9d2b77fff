//! A diff's report for people (the first difference, then tables) and for scripts (one JSON
//! object, docs/schema/diff.schema.json).

use std::path::PathBuf;

use serde_json::{json, Value as Json};

use super::{Align, DiffReport, Difference, Shown, Tolerance};
use crate::model::{Entity, Seconds};
use crate::report::render::{plural, table};
use crate::report::summary::SCHEMA_VERSION;

/// A number for people: the shortest text that reads back as the same double, with a
/// `.0` on whole floats (so 3.0 and the integer 3 read differently).
fn number(x: f64) -> String {
    format!("{x:?}")
}

fn shown_text(s: &Shown) -> String {
    match s {
        Shown::Missing => "(absent)".into(),
        Shown::Int(i) => i.to_string(),
        Shown::Float(x) => number(*x),
        Shown::Bool(b) => b.to_string(),
        Shown::Text(t) => t.clone(),
    }
}

fn shown_json(s: &Shown) -> Json {
    match s {
        Shown::Missing => Json::Null,
        Shown::Int(i) => i64::try_from(*i)
            .map(Json::from)
            .or_else(|_| u64::try_from(*i).map(Json::from))
            .unwrap_or_else(|_| Json::from(i.to_string())),
        Shown::Float(x) if x.is_finite() => json!(x),
        Shown::Float(x) if x.is_nan() => json!("NaN"),
        Shown::Float(x) => json!(if *x > 0.0 { "inf" } else { "-inf" }),
        Shown::Bool(b) => json!(b),
        Shown::Text(t) => json!(t),
    }
}

fn finite(x: Option<f64>) -> Json {
    x.filter(|x| x.is_finite()).map_or(Json::Null, |x| json!(x))
}

fn entity_json(e: &Option<Entity>) -> Json {
    match e {
        None => Json::Null,
        Some(Entity::Id(id)) => json!(id),
        Some(Entity::Name(n)) => json!(&**n),
    }
}

/// One difference on one line: where, what, both values and the errors.
pub fn difference_text(d: &Difference) -> String {
    let mut s = format!("{} {}", Seconds(d.time), d.channel);
    if let Some(tb) = d.time_b {
        s = format!("{} (B {}) {}", Seconds(d.time), Seconds(tb), d.channel);
    }
    if let Some(e) = &d.entity {
        s.push_str(&format!(" entity {e}"));
    }
    let record = |n: Option<u64>| n.map_or("-".to_string(), |n| format!("#{n}"));
    s.push_str(&format!(
        " record A {} B {}",
        record(d.record_a),
        record(d.record_b)
    ));
    match (d.frame_a, d.frame_b) {
        (Some(a), Some(b)) if a == b => s.push_str(&format!(" frame {a}")),
        (None, None) => {}
        (a, b) => s.push_str(&format!(
            " frame A {} B {}",
            a.map_or("-".into(), |f| f.to_string()),
            b.map_or("-".into(), |f| f.to_string())
        )),
    }
    let f = &d.found;
    if let Some(k) = &d.key {
        s.push_str(&format!(" key {k}{}", f.path));
    }
    s.push_str(&format!(": {}", f.kind.label()));
    if !matches!(f.kind, super::Kind::OnlyInA | super::Kind::OnlyInB) {
        s.push_str(&format!(": A {} B {}", shown_text(&f.a), shown_text(&f.b)));
    }
    if let Some(abs) = f.abs_error {
        s.push_str(&format!(", absolute error {}", number(abs)));
        if let Some(rel) = f.rel_error {
            s.push_str(&format!(", relative error {}", number(rel)));
        }
    }
    s
}

/// The text report: `equal`, or the differences kept; then the tables.
pub fn text(report: &DiffReport) -> String {
    let mut s = String::new();
    if report.equal() {
        s.push_str("equal\n");
    } else {
        s.push_str(&format!(
            "different: {}\n",
            plural(report.total, "difference")
        ));
        let shown = report.differences.len() as u64;
        if shown == 1 {
            s.push_str(&format!(
                "first difference: {}\n",
                difference_text(&report.differences[0])
            ));
        } else {
            s.push_str(&format!("first {shown} differences:\n"));
            for d in &report.differences {
                s.push_str(&format!("  {}\n", difference_text(d)));
            }
        }
    }
    let mut t = table();
    t.set_header(vec![
        "channel",
        "records compared",
        "only in A",
        "only in B",
        "keys differing",
    ]);
    for (name, c) in &report.channels {
        t.add_row(vec![
            name.clone(),
            c.compared.to_string(),
            c.only_in_a.to_string(),
            c.only_in_b.to_string(),
            c.keys_differing().to_string(),
        ]);
    }
    s.push_str(&format!("{t}\n"));
    let mut keys = table();
    keys.set_header(vec![
        "channel",
        "key",
        "compared",
        "differing",
        "max abs error",
        "max rel error",
    ]);
    let mut rows = 0;
    for (name, c) in &report.channels {
        for (k, ks) in &c.keys {
            if ks.differing == 0 && ks.max_abs == 0.0 {
                continue;
            }
            rows += 1;
            keys.add_row(vec![
                name.clone(),
                k.clone(),
                ks.compared.to_string(),
                ks.differing.to_string(),
                number(ks.max_abs),
                number(ks.max_rel),
            ]);
        }
    }
    if rows > 0 {
        s.push_str(&format!("{keys}\n"));
    }
    s
}

/// What was compared, for the JSON report.
pub struct Setup<'a> {
    pub a: &'a [PathBuf],
    pub b: &'a [PathBuf],
    pub align: Align,
    pub tolerance: Tolerance,
}

/// The JSON report (one object).
pub fn json(report: &DiffReport, setup: &Setup) -> Json {
    let paths =
        |p: &[PathBuf]| -> Vec<String> { p.iter().map(|p| p.display().to_string()).collect() };
    let differences: Vec<Json> = report
        .differences
        .iter()
        .map(|d| {
            json!({
                "kind": d.found.kind.name(),
                "time_ns": d.time,
                "time_b_ns": d.time_b,
                "channel": d.channel,
                "entity": entity_json(&d.entity),
                "frame_a": d.frame_a,
                "frame_b": d.frame_b,
                "record_a": d.record_a,
                "record_b": d.record_b,
                "key": d.key,
                "path": d.found.path,
                "index": d.found.index,
                "a": shown_json(&d.found.a),
                "b": shown_json(&d.found.b),
                "abs_error": finite(d.found.abs_error),
                "rel_error": finite(d.found.rel_error),
                "text": difference_text(d),
            })
        })
        .collect();
    let channels: Vec<Json> = report
        .channels
        .iter()
        .map(|(name, c)| {
            let keys: Vec<Json> = c
                .keys
                .iter()
                .map(|(k, ks)| {
                    json!({
                        "key": k,
                        "compared": ks.compared,
                        "differing": ks.differing,
                        "max_abs_error": finite(Some(ks.max_abs)),
                        "max_rel_error": finite(Some(ks.max_rel)),
                    })
                })
                .collect();
            json!({
                "channel": name,
                "compared": c.compared,
                "only_in_a": c.only_in_a,
                "only_in_b": c.only_in_b,
                "frames_differing": c.frames_differing,
                "keys_differing": c.keys_differing(),
                "keys": keys,
            })
        })
        .collect();
    let t = &setup.tolerance;
    json!({
        "schema_version": SCHEMA_VERSION,
        "equal": report.equal(),
        "a": {"paths": paths(setup.a), "records": report.records[0]},
        "b": {"paths": paths(setup.b), "records": report.records[1]},
        "align": setup.align.name(),
        "tolerance": {
            "rtol": t.rtol,
            "atol": t.atol,
            "strict_types": t.strict_types,
            "nan_equal": t.nan_equal,
        },
        "differences_total": report.total,
        "differences": differences,
        "channels": channels,
    })
}
