//! What `inspect` says of a capture beyond the generic summary: frames, FrameCount,
//! duration, per (routing, message) counts and payload bytes (as upstream `3esinfo`
//! counts them), compression, shapes alive at the end and categories.

use std::collections::BTreeMap;

use serde_json::{json, Value as Json};

use super::names;
use super::validate::CategoryInfo;
use crate::model::Seconds;
use crate::report::Fact;

/// Items a text list shows at each end when it is long.
const FEW: usize = 5;
/// The longest lists shown whole: the message table, like `3esinfo`'s, up to what a capture
/// of every shape and message the protocol defines has; other lists up to a dozen.
const MESSAGES_SHOWN: usize = 50;
const ITEMS_SHOWN: usize = 12;

/// One line per item, or for a list longer than `max` its count and the first and last
/// [`FEW`] items, so that text `inspect` stays small whatever the capture holds (the JSON
/// keeps all).
fn few(items: Vec<String>, noun: &str, max: usize) -> String {
    let n = items.len();
    if n == 0 {
        return "none".into();
    }
    if n <= max {
        return items.join("\n");
    }
    let mut out = vec![format!("{n} {noun}; the first and last {FEW}:")];
    out.extend_from_slice(&items[..FEW]);
    out.push(format!("… {} more …", n - 2 * FEW));
    out.extend_from_slice(&items[n - FEW..]);
    out.join("\n")
}

/// Routing and message ids counted in a flat table (every id the protocol defines); others
/// go to a map. A map lookup per packet was a fifth of a header walk's time.
const DENSE_ROUTING: usize = 78;
const DENSE_MESSAGE: usize = 16;

/// (count, payload bytes, packet bytes) of one (routing, message) pair.
type Counts = (u64, u64, u64);

#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// [routing * DENSE_MESSAGE + message] for the protocol's ids, allocated at the first count.
    dense: Vec<Counts>,
    /// Every other (routing, message).
    sparse: BTreeMap<(u16, u16), Counts>,
    pub frames: u64,
    pub frame_count: Option<u32>,
    pub frame_count_at: Option<u64>,
    pub duration_us: u64,
    pub time_unit: u64,
    pub collated: u64,
    pub collated_gzip: u64,
    pub file_gzip_at: Option<u64>,
    pub no_crc: u64,
    pub skipped_bytes: u64,
    pub alive: BTreeMap<u16, u64>,
    pub categories: BTreeMap<u16, CategoryInfo>,
}

impl Stats {
    pub fn count(&mut self, routing: u16, message: u16, payload: usize, packet: usize) {
        let (r, m) = (routing as usize, message as usize);
        let e = if r < DENSE_ROUTING && m < DENSE_MESSAGE {
            if self.dense.is_empty() {
                self.dense = vec![Counts::default(); DENSE_ROUTING * DENSE_MESSAGE];
            }
            &mut self.dense[r * DENSE_MESSAGE + m]
        } else {
            self.sparse.entry((routing, message)).or_default()
        };
        e.0 += 1;
        e.1 += payload as u64;
        e.2 += packet as u64;
    }

    /// (routing, message) → counts, in id order, for every pair seen.
    pub fn messages(&self) -> BTreeMap<(u16, u16), Counts> {
        let dense = self
            .dense
            .iter()
            .enumerate()
            .filter(|(_, c)| c.0 > 0)
            .map(|(i, c)| (((i / DENSE_MESSAGE) as u16, (i % DENSE_MESSAGE) as u16), *c));
        dense
            .chain(self.sparse.iter().map(|(k, c)| (*k, *c)))
            .collect()
    }

    fn compression(&self) -> &'static str {
        match (self.file_gzip_at, self.collated, self.collated_gzip) {
            (Some(_), _, _) => "whole-file gzip",
            (None, 0, _) => "none",
            (None, _, 0) => "collated",
            _ => "collated + gzip",
        }
    }

    /// The capture's facts: a table row each for people, top-level JSON keys for scripts
    /// (`messages` as `3esinfo` counts them); the JSON-only ones have no text.
    pub fn facts(&self) -> Vec<Fact> {
        let frame_count_differs = self
            .frame_count
            .is_some_and(|v| u64::from(v) != self.frames);
        let fc = match self.frame_count {
            Some(v) if frame_count_differs => {
                format!("{v} (differs from the {} frames counted)", self.frames)
            }
            Some(v) => v.to_string(),
            None => "none".into(),
        };
        let duration_ns = self.duration_us.saturating_mul(1000);
        let json_only = |name: &str, json: Json| Fact::new(name, "", json);
        vec![
            Fact::new("frames", self.frames.to_string(), json!(self.frames)),
            Fact::new("frame_count_message", fc, json!(self.frame_count)),
            json_only("frame_count_differs", json!(frame_count_differs)),
            Fact::new(
                "capture_duration_ns",
                format!(
                    "{} (time unit {} µs)",
                    Seconds(duration_ns.min(i64::MAX as u64) as i64),
                    self.time_unit
                ),
                json!(duration_ns),
            ),
            json_only("time_unit_us", json!(self.time_unit)),
            Fact::new(
                "compression",
                format!(
                    "{} ({} collated packets, {} gzip)",
                    self.compression(),
                    self.collated,
                    self.collated_gzip
                ),
                json!(self.compression()),
            ),
            json_only("collated_packets", json!(self.collated)),
            json_only("collated_gzip_packets", json!(self.collated_gzip)),
            json_only("file_gzip_offset", json!(self.file_gzip_at)),
            self.messages_fact(),
            self.shapes_alive_fact(),
            self.categories_fact(),
        ]
    }

    /// Per (routing, message): count, payload bytes and packet bytes.
    fn messages_fact(&self) -> Fact {
        let all_messages = self.messages();
        let messages: Vec<Json> = all_messages
            .iter()
            .map(|((r, m), (count, payload, bytes))| {
                json!({
                    "routing_id": r,
                    "message_id": m,
                    "routing_name": names::routing_name(*r),
                    "message_name": names::message_name(*r, *m),
                    "count": count,
                    "payload_bytes": payload,
                    "bytes": bytes,
                })
            })
            .collect();
        Fact::new("messages", message_table(&all_messages), json!(messages))
    }

    fn shapes_alive_fact(&self) -> Fact {
        let alive: Vec<Json> = self
            .alive
            .iter()
            .map(|(r, n)| json!({"routing_id": r, "shape": names::routing_name(*r), "count": n}))
            .collect();
        Fact::new(
            "shapes_alive",
            few(
                self.alive
                    .iter()
                    .map(|(r, n)| format!("{}: {n}", names::routing_name(*r)))
                    .collect(),
                "shape kinds",
                ITEMS_SHOWN,
            ),
            json!(alive),
        )
    }

    fn categories_fact(&self) -> Fact {
        let categories: Vec<Json> = self
            .categories
            .iter()
            .map(|(id, c)| json!({"id": id, "parent_id": c.parent, "name": c.name}))
            .collect();
        Fact::new(
            "categories",
            few(
                self.categories
                    .iter()
                    .map(|(id, c)| format!("{id} {} (parent {})", c.name, c.parent))
                    .collect(),
                "categories",
                ITEMS_SHOWN,
            ),
            json!(categories),
        )
    }
}

/// The message counts in aligned columns, as `3esinfo` prints them (a cell of the inspect
/// table): the column heads, then the rows (at most the first and last few).
fn message_table(all_messages: &BTreeMap<(u16, u16), Counts>) -> String {
    let cells: Vec<[String; 5]> = all_messages
        .iter()
        .map(|((r, id), (count, payload, bytes))| {
            [
                format!("{r} {}", names::routing_name(*r)),
                format!("{id} {}", names::message_name(*r, *id)),
                count.to_string(),
                payload.to_string(),
                bytes.to_string(),
            ]
        })
        .collect();
    let head = ["routing", "message", "count", "payload", "bytes"].map(String::from);
    let width = |i: usize| {
        std::iter::once(&head)
            .chain(&cells)
            .map(|c| c[i].chars().count())
            .max()
            .unwrap_or(0)
    };
    let w = [width(0), width(1), width(2), width(3), width(4)];
    let row = |c: &[String; 5]| {
        format!(
            "{:<a$}  {:<b$}  {:>x$}  {:>y$}  {:>z$}",
            c[0],
            c[1],
            c[2],
            c[3],
            c[4],
            a = w[0],
            b = w[1],
            x = w[2],
            y = w[3],
            z = w[4]
        )
    };
    format!(
        "{}\n{}",
        row(&head),
        few(
            cells.iter().map(row).collect(),
            "kinds of message",
            MESSAGES_SHOWN
        )
    )
}
