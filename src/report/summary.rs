//! What `inspect` says about one file, gathered record by record.

use std::collections::BTreeMap;

use serde_json::{json, Value as Json};

use super::Fact;
use crate::model::{Composition, DType, Header, Nanos, Record, Value};

/// What was seen of one key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeyStats {
    /// `number`, `string`, `map`, `array`…; `mixed` when records disagree.
    pub kind: String,
    pub dtype: Option<DType>,
    /// Per-dimension minimum and maximum of the shape (arrays of one rank only).
    pub shape_min: Vec<usize>,
    pub shape_max: Vec<usize>,
    /// Records that set the key.
    pub records: u64,
    /// Records that removed it.
    pub removals: u64,
}

impl KeyStats {
    fn observe(&mut self, value: &Value) {
        if *value == Value::Removed {
            self.removals += 1;
            return;
        }
        self.records += 1;
        let (kind, dtype, shape) = match value {
            Value::Array(a) => ("array", Some(a.dtype()), Some(&a.shape)),
            other => (other.kind_name(), None, None),
        };
        if self.records == 1 {
            self.kind = kind.to_string();
            self.dtype = dtype;
            if let Some(s) = shape {
                self.shape_min = s.clone();
                self.shape_max = s.clone();
            }
            return;
        }
        if self.kind != kind || self.dtype != dtype {
            self.kind = "mixed".into();
            self.dtype = None;
        }
        match shape {
            Some(s) if s.len() == self.shape_min.len() => {
                for (i, d) in s.iter().enumerate() {
                    self.shape_min[i] = self.shape_min[i].min(*d);
                    self.shape_max[i] = self.shape_max[i].max(*d);
                }
            }
            _ => {
                self.shape_min.clear();
                self.shape_max.clear();
            }
        }
    }

    /// `float32 [N,3]`, `float32 [3,3]`, `number`: a dimension that varies is shown as N.
    pub fn describe(&self) -> String {
        match self.dtype {
            Some(d) => format!("{d} {}", self.shape_text()),
            None => self.kind.clone(),
        }
    }

    pub fn shape_text(&self) -> String {
        let dims: Vec<String> = self
            .shape_min
            .iter()
            .zip(&self.shape_max)
            .map(|(lo, hi)| if lo == hi { lo.to_string() } else { "N".into() })
            .collect();
        format!("[{}]", dims.join(","))
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChannelSummary {
    pub name: String,
    pub records: u64,
    pub keys: BTreeMap<String, KeyStats>,
}

/// Everything `inspect` reports about one file.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub path: String,
    pub format: String,
    pub format_version: String,
    pub size_bytes: u64,
    pub records: u64,
    pub start_ns: Option<Nanos>,
    pub end_ns: Option<Nanos>,
    /// 0-based record indices of resets (frame index 0 on a frame-delta channel).
    pub resets: Vec<u64>,
    pub channels: Vec<ChannelSummary>,
    /// Whether payloads were decoded (keys are only known then).
    pub deep: bool,
    /// Format-specific facts (container layout, checksums...), from the reader.
    pub facts: Vec<Fact>,
    compositions: Vec<Composition>,
}

impl Summary {
    pub fn new(path: &str, size_bytes: u64, header: &Header, deep: bool) -> Summary {
        Summary {
            path: path.to_string(),
            format: header.format.clone(),
            format_version: header.format_version.clone(),
            size_bytes,
            records: 0,
            start_ns: None,
            end_ns: None,
            resets: Vec::new(),
            channels: header
                .channels
                .iter()
                .map(|c| ChannelSummary {
                    name: c.name.clone(),
                    ..ChannelSummary::default()
                })
                .collect(),
            deep,
            facts: Vec::new(),
            compositions: header.channels.iter().map(|c| c.composition).collect(),
        }
    }

    pub fn observe(&mut self, record: &Record) {
        let c = record.channel as usize;
        if self.compositions.get(c) == Some(&Composition::FrameDelta) && record.frame == Some(0) {
            self.resets.push(self.records);
        }
        self.records += 1;
        self.start_ns = Some(self.start_ns.map_or(record.time, |s| s.min(record.time)));
        self.end_ns = Some(self.end_ns.map_or(record.time, |e| e.max(record.time)));
        if let Some(channel) = self.channels.get_mut(c) {
            channel.records += 1;
            for (key, value) in &record.values {
                channel.keys.entry(key.clone()).or_default().observe(value);
            }
        }
    }

    pub fn duration_ns(&self) -> Option<Nanos> {
        Some(self.end_ns? - self.start_ns?)
    }

    /// Records per second over the recording's span.
    pub fn rate_hz(&self) -> Option<f64> {
        let d = self.duration_ns()?;
        (d > 0).then(|| (self.records.saturating_sub(1)) as f64 / (d as f64 / 1e9))
    }

    pub fn to_json(&self) -> Json {
        let channels: Vec<Json> = self
            .channels
            .iter()
            .map(|c| {
                let mut o = json!({ "name": c.name, "records": c.records });
                if self.deep {
                    o["keys"] = c
                        .keys
                        .iter()
                        .map(|(name, k)| {
                            json!({
                                "name": name,
                                "kind": k.kind,
                                "dtype": k.dtype.map(|d| d.name()),
                                "shape": k.dtype.map(|_| k.shape_text()),
                                "shape_min": k.dtype.map(|_| &k.shape_min),
                                "shape_max": k.dtype.map(|_| &k.shape_max),
                                "records": k.records,
                                "removals": k.removals,
                            })
                        })
                        .collect();
                }
                o
            })
            .collect();
        let mut o = json!({
            "path": self.path,
            "format": self.format,
            "format_version": self.format_version,
            "size_bytes": self.size_bytes,
            "records": self.records,
            "start_ns": self.start_ns,
            "end_ns": self.end_ns,
            "duration_ns": self.duration_ns(),
            "record_rate_hz": self.rate_hz(),
            "resets": self.resets,
            "channels": channels,
            "deep": self.deep,
        });
        for f in &self.facts {
            o[f.name.as_str()] = f.json.clone();
        }
        o
    }
}
