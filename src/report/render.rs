//! Rendering for people (comfy-table text) and for scripts (JSON).

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};
use serde_json::{json, Value as Json};

use super::summary::Summary;
use super::{Finding, LossReport};
use crate::model::{Composition, Header, Record, Seconds, Value};

pub fn table() -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic);
    t
}

/// `1 error`, `2 errors`.
pub fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

pub fn finding_json(f: &Finding) -> Json {
    json!({
        "severity": f.severity.name(),
        "code": f.code,
        "message": f.message,
        "offset": f.offset,
        "record": f.record,
        "hint": f.hint,
    })
}

/// `error NANOVER_X at byte 23268, record 31: message` and an indented hint line.
pub fn finding_text(f: &Finding) -> String {
    match &f.hint {
        Some(h) => format!("{} {f}\n    hint: {h}", f.severity),
        None => format!("{} {f}", f.severity),
    }
}

pub fn loss_table(loss: &LossReport) -> Table {
    changes_table("what could not be kept", loss.entries())
}

/// Values kept exactly in a wider type than the source's.
pub fn widening_table(loss: &LossReport) -> Table {
    changes_table("kept exactly, in a wider type", loss.widenings())
}

fn changes_table<'a>(
    what: &str,
    rows: impl Iterator<Item = (&'a str, &'a str, &'a str, u64)>,
) -> Table {
    let mut t = table();
    t.set_header(vec!["channel", "field", what, "records"]);
    for (channel, field, reason, n) in rows {
        t.add_row(vec![
            channel.to_string(),
            field.to_string(),
            reason.to_string(),
            n.to_string(),
        ]);
    }
    t
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = n as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} bytes")
    } else {
        format!("{n} bytes ({x:.1} {})", UNITS[u])
    }
}

/// The `inspect` tables of one file: facts, then keys per channel when decoded.
pub fn summary_text(s: &Summary, notes: &[String]) -> String {
    let mut t = table();
    let time = |t: Option<i64>| {
        t.map(|t| Seconds(t).to_string())
            .unwrap_or_else(|| "-".into())
    };
    // With --time-format, the absolute time after the relative one.
    let shown = |t: Option<i64>| match s.shown(t) {
        Some(abs) => format!("{} ({abs})", time(t)),
        None => time(t),
    };
    let rows: Vec<(&str, String)> = vec![
        (
            "format",
            match s.format_version.as_str() {
                "" | "none" => s.format.clone(),
                v => format!("{} (version {v})", s.format),
            },
        ),
        ("size", human_bytes(s.size_bytes)),
        ("records", s.records.to_string()),
        ("start", shown(s.start_ns)),
        ("end", shown(s.end_ns)),
        ("duration", time(s.duration_ns())),
        (
            "record rate",
            s.rate_hz()
                .map(|r| format!("{r:.2} records/s"))
                .unwrap_or_else(|| "-".into()),
        ),
        (
            "channels",
            first_and_last(
                &s.channels
                    .iter()
                    .map(|c| format!("{}: {} records", c.name, c.records))
                    .collect::<Vec<_>>(),
                FEW_KEYS,
                "channels",
            )
            .join("\n"),
        ),
        (
            "resets",
            if s.resets.is_empty() {
                "none".into()
            } else {
                let at: Vec<String> = s.resets.iter().map(u64::to_string).collect();
                format!(
                    "{} at records {}",
                    s.resets.len(),
                    first_and_last(&at, FEW, "").join(", ")
                )
            },
        ),
        ("origin", origin_text(&s.origin)),
    ];
    for (k, v) in rows {
        t.add_row(vec![k.to_string(), v]);
    }
    for f in s.facts.iter().filter(|f| !f.text.is_empty()) {
        t.add_row(vec![f.name.clone(), f.text.clone()]);
    }
    let mut out = format!("{}\n{t}\n", s.path);
    for n in notes {
        out.push_str(&format!("note: {n}\n"));
    }
    if s.deep {
        for c in s.channels.iter().filter(|c| !c.keys.is_empty()) {
            let mut k = table();
            let mut header = vec![
                format!("{} key", c.name),
                "kind".into(),
                "records".into(),
                "removed".into(),
            ];
            if s.sparklines {
                header.push("over time".into());
            }
            k.set_header(header);
            let n = c.keys.len();
            let cut = n > 2 * FEW_KEYS + 1;
            for (i, (name, stats)) in c.keys.iter().enumerate() {
                if cut && i == FEW_KEYS {
                    let more = grouped((n - 2 * FEW_KEYS) as u64);
                    k.add_row(vec![format!("… {more} more keys")]);
                }
                if cut && (FEW_KEYS..n - FEW_KEYS).contains(&i) {
                    continue;
                }
                let mut row = vec![
                    name.clone(),
                    stats.describe(),
                    stats.records.to_string(),
                    stats.removals.to_string(),
                ];
                if s.sparklines {
                    row.push(stats.spark.as_ref().map(|l| l.render()).unwrap_or_default());
                }
                k.add_row(row);
            }
            out.push_str(&format!("{k}\n"));
            if c.untracked_values > 0 {
                out.push_str(&format!(
                    "note: {} values of keys beyond the first {} of {} were counted, not described\n",
                    grouped(c.untracked_values),
                    grouped(super::summary::MAX_KEYS as u64),
                    c.name
                ));
            }
        }
    } else {
        out.push_str("keys, dtypes and shapes: run with --deep to decode payloads\n");
    }
    out
}

/// Items of a long list shown in text: this many first and this many last.
const FEW: usize = 5;

/// Rows of a long key table (or channel list) shown in text: this many first and last.
const FEW_KEYS: usize = 25;

/// The first and last `few` of `items`, the rest counted in one item between them
/// (`… 49 990 more channels`), so text output stays small whatever a file holds.
pub fn first_and_last(items: &[String], few: usize, what: &str) -> Vec<String> {
    let n = items.len();
    if n <= 2 * few + 1 {
        return items.to_vec();
    }
    let mut shown: Vec<String> = items[..few].to_vec();
    let more = grouped((n - 2 * few) as u64);
    shown.push(if what.is_empty() {
        format!("… {more} more …")
    } else {
        format!("… {more} more {what}")
    });
    shown.extend_from_slice(&items[n - few..]);
    shown
}

/// `49 997`: digits in groups of three.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// `2024-05-01T12:00:00.25Z (UTC)`, or what relative times count from.
fn origin_text(origin: &crate::model::TimeOrigin) -> String {
    match (origin.epoch, &origin.system) {
        (Some(epoch), system) => format!(
            "{} ({})",
            epoch.iso8601(),
            system.as_deref().unwrap_or("UTC")
        ),
        (None, Some(system)) => system.clone(),
        (None, None) => "-".into(),
    }
}

/// A format fact for people: objects as `key: value` lines, lists one item per line.
pub(crate) fn fact_text(v: &serde_json::Value) -> String {
    use serde_json::Value as J;
    match v {
        J::Object(o) => o
            .iter()
            .map(|(k, v)| match v {
                J::Array(items) if items.iter().all(J::is_object) => format!(
                    "{k}:\n{}",
                    items
                        .iter()
                        .map(|i| format!("  {}", inline(i)))
                        .collect::<Vec<_>>()
                        .join("\n")
                ),
                v => format!("{k}: {}", inline(v)),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        v => inline(v),
    }
}

fn inline(v: &serde_json::Value) -> String {
    use serde_json::Value as J;
    match v {
        J::String(s) => s.clone(),
        J::Object(o) => o
            .iter()
            .map(|(k, v)| format!("{k}={}", inline(v)))
            .collect::<Vec<_>>()
            .join(" "),
        J::Array(a) => a.iter().map(inline).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// Elements, items or entries shown of a long value.
const PREVIEW: usize = 4;

/// One record for people, on one line (what `cat` prints):
/// `0.008445s frame #0 (index 2) reset: particle.positions=float32[21,3] [0.1, …] …`.
/// `position` is the record's frame position (`#N`); the format's own frame index follows
/// when it differs. `time` is the record's time as it should be shown, when not in seconds
/// from time zero (`--time-format`).
pub fn record_text(
    header: &Header,
    r: &Record,
    position: Option<u64>,
    time: Option<String>,
) -> String {
    let channel = header.channel(r.channel);
    let mut s = format!(
        "{} {}",
        time.unwrap_or_else(|| Seconds(r.time).to_string()),
        channel.map_or("?", |c| c.name.as_str())
    );
    if let Some(e) = &r.entity {
        s.push_str(&format!(" entity {e}"));
    }
    if let (Some(n), Some(f)) = (position, r.frame) {
        s.push_str(&format!(" #{n}"));
        if i64::try_from(n).ok() != Some(f) {
            s.push_str(&format!(" (index {f})"));
        }
        if f == 0 && channel.is_some_and(|c| c.composition == Composition::FrameDelta) {
            s.push_str(" reset");
        }
    }
    s.push(':');
    for (k, v) in &r.values {
        s.push_str(&format!(" {k}={}", value_text(v)));
    }
    s
}

/// An error and its causes on one line, each cause once (`a.traj: bad header: …`).
pub fn error_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.ends_with(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = c.source();
    }
    text
}

/// A value for people, on one line: arrays as dtype, shape and their first elements
/// (`float32[21,3] [0.1, 0.2, 0.3, 0.4, …]`), lists and maps as their size and first items.
pub fn value_text(v: &Value) -> String {
    let more = |n: usize| if n > PREVIEW { ", …" } else { "" };
    match v {
        Value::Null => "null".into(),
        Value::Removed => "<removed>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(x) => format!("{x:?}"),
        Value::F32(x) => format!("{x:?}"),
        Value::Bytes(b) => format!("bytes[{}]", b.len()),
        Value::Ext { type_id, bytes } => format!("ext {type_id} bytes[{}]", bytes.len()),
        Value::Str(s) if s.chars().count() <= 40 => format!("{s:?}"),
        Value::Str(s) => format!("{:?}…", s.chars().take(40).collect::<String>()),
        Value::Array(a) => {
            let n = a.data.len();
            let shown: Vec<String> = (0..n.min(PREVIEW))
                .filter_map(|i| a.data.element_text(i))
                .collect();
            let shape: Vec<String> = a.shape.iter().map(usize::to_string).collect();
            format!(
                "{}[{}] [{}{}]",
                a.dtype(),
                shape.join(","),
                shown.join(", "),
                more(n)
            )
        }
        Value::List(l) if l.is_empty() => "[]".into(),
        Value::Map(m) if m.is_empty() => "{}".into(),
        Value::Dict(d) if d.is_empty() => "{}".into(),
        Value::Dict(d) => {
            let shown: Vec<String> = d
                .iter()
                .take(PREVIEW)
                .map(|(k, v)| format!("{}={}", value_text(k), value_text(v)))
                .collect();
            format!(
                "{{{} keys: {}{}}}",
                d.len(),
                shown.join(", "),
                more(d.len())
            )
        }
        Value::List(l) => {
            let shown: Vec<String> = l.iter().take(PREVIEW).map(value_text).collect();
            format!("[{} items: {}{}]", l.len(), shown.join(", "), more(l.len()))
        }
        Value::Map(m) => {
            let shown: Vec<String> = m
                .iter()
                .take(PREVIEW)
                .map(|(k, v)| format!("{k}={}", value_text(v)))
                .collect();
            format!(
                "{{{} keys: {}{}}}",
                m.len(),
                shown.join(", "),
                more(m.len())
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_show_their_ends_and_count_the_middle() {
        let items: Vec<String> = (0..50_000).map(|i| i.to_string()).collect();
        assert_eq!(
            first_and_last(&items, FEW, "").join(", "),
            "0, 1, 2, 3, 4, … 49 990 more …, 49995, 49996, 49997, 49998, 49999"
        );
        let few: Vec<String> = (0..11).map(|i| i.to_string()).collect();
        assert_eq!(first_and_last(&few, 5, "x"), few);
        assert_eq!(grouped(1_234_567), "1 234 567");
        assert_eq!(grouped(999), "999");
    }

    #[test]
    fn a_long_key_table_shows_its_ends() {
        use crate::model::{Channel, ChannelKind, Composition, Header, Record};
        let mut header = Header::new("test", "1");
        header.add_channel(Channel::new(
            "state",
            ChannelKind::Signals,
            Composition::StateDelta,
        ));
        let mut summary = Summary::new("x", 0, &header, true);
        let mut record = Record::new(0, 0);
        record.values = (0..1000)
            .map(|i| (format!("key.{i:04}"), Value::Int(i)))
            .collect();
        summary.observe(&record);
        let text = summary_text(&summary, &[]);
        assert!(text.contains("key.0024"), "{text}");
        assert!(!text.contains("key.0025"), "{text}");
        assert!(text.contains("… 950 more keys"), "{text}");
        assert!(
            text.contains("key.0975") && text.contains("key.0999"),
            "{text}"
        );
        assert!(!text.contains("key.0974"), "{text}");
    }
}
