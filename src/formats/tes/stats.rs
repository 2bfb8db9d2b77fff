//! What `inspect` says of a capture beyond the generic summary: frames, FrameCount,
//! duration, per (routing, message) counts and payload bytes (as upstream `3esinfo`
//! counts them), compression, shapes alive at the end and categories.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value as Json};

use super::names;
use super::validate::CategoryInfo;
use crate::model::Seconds;
use crate::report::render::table;
use crate::report::Facts;

#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// (routing, message) → (count, payload bytes, packet bytes).
    pub messages: BTreeMap<(u16, u16), (u64, u64, u64)>,
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
        let e = self.messages.entry((routing, message)).or_default();
        e.0 += 1;
        e.1 += payload as u64;
        e.2 += packet as u64;
    }

    fn compression(&self) -> &'static str {
        match (self.file_gzip_at, self.collated, self.collated_gzip) {
            (Some(_), _, _) => "whole-file gzip",
            (None, 0, _) => "none",
            (None, _, 0) => "collated",
            _ => "collated + gzip",
        }
    }

    pub fn facts(&self) -> Facts {
        let messages: Vec<Json> = self
            .messages
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
        let alive: Vec<Json> = self
            .alive
            .iter()
            .map(|(r, n)| json!({"routing_id": r, "shape": names::routing_name(*r), "count": n}))
            .collect();
        let categories: Vec<Json> = self
            .categories
            .iter()
            .map(|(id, c)| json!({"id": id, "parent_id": c.parent, "name": c.name}))
            .collect();
        let frame_count_differs = self
            .frame_count
            .is_some_and(|v| u64::from(v) != self.frames);
        let mut j = Map::new();
        j.insert("frames".into(), json!(self.frames));
        j.insert("frame_count_message".into(), json!(self.frame_count));
        j.insert("frame_count_differs".into(), json!(frame_count_differs));
        j.insert(
            "capture_duration_ns".into(),
            json!(self.duration_us.saturating_mul(1000)),
        );
        j.insert("time_unit_us".into(), json!(self.time_unit));
        j.insert("compression".into(), json!(self.compression()));
        j.insert("collated_packets".into(), json!(self.collated));
        j.insert("collated_gzip_packets".into(), json!(self.collated_gzip));
        j.insert("file_gzip_offset".into(), json!(self.file_gzip_at));
        j.insert("messages".into(), json!(messages));
        j.insert("shapes_alive".into(), json!(alive));
        j.insert("categories".into(), json!(categories));

        let mut t = table();
        let fc = match self.frame_count {
            Some(v) if frame_count_differs => {
                format!("{v} (differs from the {} frames counted)", self.frames)
            }
            Some(v) => v.to_string(),
            None => "none".into(),
        };
        let rows = [
            ("frames", self.frames.to_string()),
            ("FrameCount message", fc),
            (
                "capture duration",
                format!(
                    "{} (time unit {} µs)",
                    Seconds(self.duration_us.saturating_mul(1000).min(i64::MAX as u64) as i64),
                    self.time_unit
                ),
            ),
            (
                "compression",
                format!(
                    "{} ({} collated packets, {} gzip)",
                    self.compression(),
                    self.collated,
                    self.collated_gzip
                ),
            ),
            (
                "shapes alive at end",
                if self.alive.is_empty() {
                    "none".into()
                } else {
                    self.alive
                        .iter()
                        .map(|(r, n)| format!("{}: {n}", names::routing_name(*r)))
                        .collect::<Vec<_>>()
                        .join("\n")
                },
            ),
            (
                "categories",
                if self.categories.is_empty() {
                    "none".into()
                } else {
                    self.categories
                        .iter()
                        .map(|(id, c)| format!("{id} {} (parent {})", c.name, c.parent))
                        .collect::<Vec<_>>()
                        .join("\n")
                },
            ),
        ];
        for (k, v) in rows {
            t.add_row(vec![k.to_string(), v]);
        }
        let mut m = table();
        m.set_header(vec![
            "routing",
            "message",
            "count",
            "payload bytes",
            "bytes",
        ]);
        for ((r, id), (count, payload, bytes)) in &self.messages {
            m.add_row(vec![
                format!("{r} {}", names::routing_name(*r)),
                format!("{id} {}", names::message_name(*r, *id)),
                count.to_string(),
                payload.to_string(),
                bytes.to_string(),
            ]);
        }
        Facts {
            json: j,
            text: format!("{t}\n{m}\n"),
        }
    }
}
