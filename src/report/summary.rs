//! What `inspect` says about one file, gathered record by record.

use std::collections::BTreeMap;

use std::io::{self, Write};

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Value as Json};

use super::Fact;
use crate::model::time_scale::{self, TimeFormat};
use crate::model::{ChannelId, Composition, DType, Header, Nanos, Record, TimeOrigin, Value};

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
    /// The key's values over time, when it is a number and sparklines were asked for.
    pub spark: Option<super::sparkline::Sparkline>,
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

    /// Adds a scalar number at `time` to the key's sparkline (`start`: the recording's first
    /// time, where every sparkline of the file starts).
    fn sample(&mut self, start: Nanos, time: Nanos, value: &Value) {
        let y = match value {
            Value::Int(i) => *i as f64,
            Value::UInt(u) => *u as f64,
            Value::Float(x) => *x,
            Value::F32(x) => f64::from(*x),
            _ => return,
        };
        self.spark
            .get_or_insert_with(|| super::sparkline::Sparkline::new(start))
            .add(time, y);
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

/// Keys of one channel that get a sparkline (the first ones met).
pub const SPARKLINE_KEYS: usize = 1024;

/// Distinct keys of one channel whose statistics are kept; further keys are only counted,
/// so a state message with millions of keys cannot grow `inspect --deep` without bound.
pub const MAX_KEYS: usize = 100_000;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChannelSummary {
    pub name: String,
    pub records: u64,
    pub keys: BTreeMap<String, KeyStats>,
    /// Values of keys beyond the first [`MAX_KEYS`] distinct ones: counted, not described.
    pub untracked_values: u64,
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
    /// Also show start and end as absolute times in this scale (`--time-format`).
    pub time_format: Option<TimeFormat>,
    /// Where time zero is (`start_ns` and `end_ns` count from it).
    pub origin: TimeOrigin,
    /// Gather a sparkline per scalar key (`inspect --deep` on a terminal).
    pub sparklines: bool,
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
            time_format: None,
            origin: header.origin.clone(),
            sparklines: false,
            compositions: header.channels.iter().map(|c| c.composition).collect(),
        }
    }

    /// `t` in the scale `time_format` names, when there is one and the origin allows it.
    pub fn shown(&self, t: Option<Nanos>) -> Option<String> {
        time_scale::show(self.time_format?, self.origin.epoch.as_ref(), t?, None)
    }

    /// Takes in channels a reader added while reading (they follow the header's).
    pub fn follow(&mut self, header: &Header) {
        for c in header
            .channels
            .get(self.channels.len()..)
            .unwrap_or_default()
        {
            self.channels.push(ChannelSummary {
                name: c.name.clone(),
                ..ChannelSummary::default()
            });
            self.compositions.push(c.composition);
        }
    }

    pub fn observe(&mut self, record: &Record) {
        let c = record.channel as usize;
        if self.compositions.get(c) == Some(&Composition::FrameDelta) && record.frame == Some(0) {
            self.resets.push(self.records);
        }
        self.records += 1;
        self.span(record.time);
        let spark = self.start_ns.filter(|_| self.sparklines);
        if let Some(channel) = self.channels.get_mut(c) {
            channel.records += 1;
            let spark = spark.filter(|_| channel.keys.len() <= SPARKLINE_KEYS);
            for (key, value) in &record.values {
                if let Some(stats) = channel.keys.get_mut(key) {
                    stats.observe(value);
                    if let Some(start) = spark {
                        stats.sample(start, record.time, value);
                    }
                } else if channel.keys.len() < MAX_KEYS {
                    let mut stats = KeyStats::default();
                    stats.observe(value);
                    if let Some(start) = spark {
                        stats.sample(start, record.time, value);
                    }
                    channel.keys.insert(key.clone(), stats);
                } else {
                    channel.untracked_values += 1;
                }
            }
        }
    }

    /// One record without values in each of `channels` at each of `count` instants spanning
    /// `earliest..=latest` (frames of a recording read a frame at a time): what
    /// [`Summary::observe`] makes of such records.
    pub fn observe_instants(
        &mut self,
        channels: &[ChannelId],
        count: u64,
        earliest: Nanos,
        latest: Nanos,
    ) {
        if channels.is_empty() || count == 0 {
            return;
        }
        self.records += channels.len() as u64 * count;
        self.span(earliest);
        self.span(latest);
        for &c in channels {
            if let Some(channel) = self.channels.get_mut(c as usize) {
                channel.records += count;
            }
        }
    }

    /// Widens the time span to `time`.
    fn span(&mut self, time: Nanos) {
        self.start_ns = Some(self.start_ns.map_or(time, |s| s.min(time)));
        self.end_ns = Some(self.end_ns.map_or(time, |e| e.max(time)));
    }

    pub fn duration_ns(&self) -> Option<Nanos> {
        Some(self.end_ns? - self.start_ns?)
    }

    /// Records per second over the recording's span.
    pub fn rate_hz(&self) -> Option<f64> {
        let d = self.duration_ns()?;
        (d > 0).then(|| (self.records.saturating_sub(1)) as f64 / (d as f64 / 1e9))
    }

    /// The summary as one JSON object (the `inspect --format json` contract, version
    /// [`SCHEMA_VERSION`]; docs/schema/inspect.schema.json), written as it is serialised:
    /// the keys of this summary, then `extra`, then one key per format fact.
    pub fn write_json(&self, out: &mut dyn Write, extra: &[(&str, Json)]) -> io::Result<()> {
        let mut ser = serde_json::Serializer::new(out);
        let mut o = ser.serialize_map(None)?;
        o.serialize_entry("schema_version", &SCHEMA_VERSION)?;
        o.serialize_entry("path", &self.path)?;
        o.serialize_entry("format", &self.format)?;
        o.serialize_entry("format_version", &self.format_version)?;
        o.serialize_entry("origin", &origin_json(&self.origin))?;
        o.serialize_entry("size_bytes", &self.size_bytes)?;
        o.serialize_entry("records", &self.records)?;
        o.serialize_entry("start_ns", &self.start_ns)?;
        o.serialize_entry("end_ns", &self.end_ns)?;
        o.serialize_entry("duration_ns", &self.duration_ns())?;
        if let Some(f) = self.time_format {
            o.serialize_entry("time_format", &f.to_string())?;
            o.serialize_entry("start_time", &self.shown(self.start_ns))?;
            o.serialize_entry("end_time", &self.shown(self.end_ns))?;
        }
        o.serialize_entry("record_rate_hz", &self.rate_hz())?;
        o.serialize_entry("resets", &self.resets)?;
        let channels: Vec<ChannelJson> = self
            .channels
            .iter()
            .map(|c| ChannelJson {
                channel: c,
                deep: self.deep,
            })
            .collect();
        o.serialize_entry("channels", &channels)?;
        o.serialize_entry("deep", &self.deep)?;
        for (k, v) in extra {
            o.serialize_entry(k, v)?;
        }
        for f in &self.facts {
            o.serialize_entry(&f.name, &f.json)?;
        }
        SerializeMap::end(o)?;
        Ok(())
    }

    /// [`Summary::write_json`] into a value, for tests and callers that add keys.
    pub fn to_json(&self) -> Json {
        let mut bytes = Vec::new();
        match self.write_json(&mut bytes, &[]) {
            Ok(()) => serde_json::from_slice(&bytes).unwrap_or(Json::Null),
            Err(_) => Json::Null,
        }
    }
}

/// Version of the JSON objects `inspect` and `validate` print; raised when a key changes
/// meaning or goes away (new keys do not raise it).
pub const SCHEMA_VERSION: u32 = 1;

/// `{"epoch": "2024-05-01T12:00:00.25Z", "system": "UTC"}`, or null when the recording's
/// times are relative to a point with no absolute date.
pub fn origin_json(origin: &TimeOrigin) -> Json {
    match origin.epoch {
        Some(epoch) => json!({
            "epoch": epoch.iso8601(),
            "system": origin.system.as_deref().unwrap_or("UTC"),
        }),
        None => Json::Null,
    }
}

/// One channel of the JSON summary, keys included when decoded.
struct ChannelJson<'a> {
    channel: &'a ChannelSummary,
    deep: bool,
}

impl Serialize for ChannelJson<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let c = self.channel;
        let mut o = ser.serialize_map(None)?;
        o.serialize_entry("name", &c.name)?;
        o.serialize_entry("records", &c.records)?;
        if self.deep {
            let keys: Vec<Json> = c
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
            o.serialize_entry("keys", &keys)?;
            if c.untracked_values > 0 {
                o.serialize_entry("untracked_values", &c.untracked_values)?;
            }
        }
        o.end()
    }
}
