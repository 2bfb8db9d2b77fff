//! `schema.json` (spec §A2–§A4, §A7, §A8): the signals and their layout in the two blocks,
//! the time block, and the layout checksum. Parsing reports every rule it breaks; signals
//! that cannot be read (unknown type, wrong size, outside their block) are left out of the
//! readable layout so that the rest of the recording can still be read leniently.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;

use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value as Json};
use sha2::{Digest, Sha256};

use super::codes::*;
use crate::formats::icarus::common::{Element, SignalType};
use crate::model::time_scale::delta_at;
use crate::model::{Epoch, TimeOrigin};
use crate::report::{Finding, Findings, Severity};

pub const FILE: &str = "schema.json";

/// Time systems of the profile (spec §A8).
pub const SYSTEMS: [&str; 4] = ["MET", "UTC", "TAI", "GPS"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
    Static,
    Dynamic,
}

impl Lifecycle {
    pub fn name(self) -> &'static str {
        match self {
            Lifecycle::Static => "static",
            Lifecycle::Dynamic => "dynamic",
        }
    }
}

/// One readable signal: its type and where it lies in its block.
#[derive(Debug, Clone, PartialEq)]
pub struct Signal {
    pub name: String,
    pub ty: SignalType,
    pub units: Option<String>,
    pub lifecycle: Lifecycle,
    pub offset: u64,
    /// The canonical size, or an 8-byte slot for an int32 or bool (spec §A3).
    pub size: u64,
    pub semantic: Option<String>,
}

impl Signal {
    /// Whether `size` is one the profile accepts for `ty`.
    pub fn size_ok(ty: SignalType, size: u64) -> bool {
        size == ty.size() as u64
            || (ty.kind == crate::formats::icarus::common::Kind::Scalar
                && matches!(ty.element, Element::Int32 | Element::Bool)
                && size == 8)
    }
}

/// The declared checksum and the one computed per §A7.
#[derive(Debug, Clone, PartialEq)]
pub struct Checksum {
    pub declared: Option<Json>,
    pub computed: String,
}

impl Checksum {
    /// `ok`, `missing` or `mismatch`.
    pub fn status(&self) -> &'static str {
        match &self.declared {
            None => "missing",
            Some(Json::String(s)) if *s == self.computed => "ok",
            Some(_) => "mismatch",
        }
    }
}

/// A parsed `schema.json`.
#[derive(Debug, Clone)]
pub struct Schema {
    /// The object as it was read, of `signals` only the elements that are signals (kept for
    /// rewriting: unknown keys survive; the reader moves it into its header).
    pub object: Map<String, Json>,
    pub schema_version: String,
    pub icarus_version: String,
    /// Readable signals, in file order.
    pub signals: Vec<Signal>,
    /// Signals in the file that are not readable (reported).
    pub unreadable: usize,
    pub dynamic_block: u64,
    pub static_block: u64,
    pub origin: TimeOrigin,
    pub checksum: Checksum,
}

fn finding(severity: Severity, code: &'static str, message: String) -> Finding {
    Finding::new(severity, code, format!("{FILE}: {message}"))
}

fn error(code: &'static str, message: String) -> Finding {
    finding(Severity::Error, code, message)
}

/// A JSON value as a non-negative integer, when it is one.
fn non_negative(v: &Json) -> Option<u64> {
    v.as_u64()
}

/// One field of the §A7 checksum line: strings copied exactly, integers in decimal, absent
/// or null as the empty string, anything else (only in a broken schema) as its JSON text.
fn checksum_field(out: &mut String, v: Option<&Json>) {
    match v {
        None | Some(Json::Null) => {}
        Some(Json::String(s)) => out.push_str(s),
        Some(Json::Number(n)) if n.is_u64() || n.is_i64() => {
            let _ = write!(out, "{n}");
        }
        Some(other) => {
            let _ = write!(out, "{other}");
        }
    }
}

/// The §A7 text of a `signals` array: one line per element, its name, type, units,
/// lifecycle, offset and size separated by TAB and ended by LF.
pub fn checksum_text(signals: &[Json]) -> String {
    let mut text = String::new();
    for s in signals {
        checksum_line(&mut text, s);
    }
    text
}

/// Appends one signal's line of the §A7 text to `text`.
pub fn checksum_line(text: &mut String, s: &Json) {
    let get = |k: &str| s.get(k);
    let units = match s.get("units") {
        Some(u) => Some(u),
        None => s.get("unit"),
    };
    for (i, v) in [
        get("name"),
        get("type"),
        units,
        get("lifecycle"),
        get("offset"),
        get("size"),
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            text.push('\t');
        }
        checksum_field(text, v);
    }
    text.push('\n');
}

/// Lowercase hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// `sha256:` and the digest of the §A7 text of `signals`.
pub fn checksum(signals: &[Json]) -> String {
    format!(
        "sha256:{}",
        hex(&Sha256::digest(checksum_text(signals).as_bytes()))
    )
}

/// The time block (spec §A8): origin and findings. Absent means MET with no epoch.
fn time_block(time: Option<&Json>, found: &mut Findings) -> TimeOrigin {
    let mut origin = TimeOrigin {
        epoch: None,
        system: Some("MET".into()),
    };
    // An epoch given but unparsable is its own finding, not also a missing one.
    let mut epoch_given = false;
    let bad = |found: &mut Findings, why: String| {
        found.push(error(TIME_BLOCK, format!("time: {why}")));
    };
    match time {
        None | Some(Json::Null) => {}
        Some(Json::Object(t)) => {
            match t.get("system") {
                None | Some(Json::Null) => {}
                Some(Json::String(s)) if SYSTEMS.contains(&s.as_str()) => {
                    origin.system = Some(s.clone())
                }
                Some(other) => bad(
                    found,
                    format!("system {other} is not one of MET, UTC, TAI, GPS"),
                ),
            }
            match t.get("units") {
                None | Some(Json::Null) => {}
                Some(Json::String(s)) if s == "seconds" => {}
                Some(other) => bad(found, format!("units {other} is not \"seconds\"")),
            }
            match t.get("epoch") {
                None | Some(Json::Null) => {}
                Some(Json::String(s)) => match Epoch::parse_iso8601(s) {
                    Some(e) => origin.epoch = Some(e),
                    None => {
                        epoch_given = true;
                        bad(
                            found,
                            format!(
                                "epoch {s:?} is not a UTC instant YYYY-MM-DDTHH:MM:SS[.fraction]Z"
                            ),
                        )
                    }
                },
                Some(other) => {
                    epoch_given = true;
                    bad(found, format!("epoch {other} is not a string or null"))
                }
            }
        }
        Some(other) => bad(found, format!("{other} is not an object")),
    }
    let system = origin.system.as_deref().unwrap_or("MET");
    match origin.epoch {
        None if epoch_given => {}
        None if system != "MET" => bad(
            found,
            format!("a null epoch is allowed only with system MET, not {system}"),
        ),
        None => found.push(finding(
            Severity::Info,
            NO_EPOCH,
            "time system MET with no epoch: the recording has no absolute times".into(),
        )),
        Some(Epoch { unix_ns, .. }) if delta_at(unix_ns).1 => found.push(finding(
            Severity::Warning,
            PRE_1972,
            "the epoch is before 1972: TAI − UTC is taken as 10 s there (approximate)".into(),
        )),
        Some(_) => {}
    }
    origin
}

/// One signal object: the signal, or what is wrong with it (its code and why).
fn signal(s: &Json) -> Result<Signal, (&'static str, String)> {
    let field = |why: String| (SIGNAL_FIELD, why);
    let o = s
        .as_object()
        .ok_or_else(|| field(format!("{s} is not an object")))?;
    let string = |k: &str| -> Result<String, (&'static str, String)> {
        match o.get(k) {
            Some(Json::String(v)) => Ok(v.clone()),
            Some(other) => Err(field(format!("`{k}` is {other}, not a string"))),
            None => Err(field(format!("no `{k}`"))),
        }
    };
    let name = string("name")?;
    if name.is_empty() {
        // A signal is a channel; other formats name their channels (XREC event types,
        // columns) and have no place for an empty name.
        return Err(field("a signal's `name` is empty".into()));
    }
    let named = |why: String| field(format!("signal {name:?}: {why}"));
    let type_text = string("type").map_err(|(_, why)| named(why))?;
    let lifecycle = match string("lifecycle").map_err(|(_, why)| named(why))?.as_str() {
        "static" => Lifecycle::Static,
        "dynamic" => Lifecycle::Dynamic,
        other => {
            return Err(named(format!(
                "lifecycle {other:?} is neither \"static\" nor \"dynamic\""
            )))
        }
    };
    let integer = |k: &str| -> Result<u64, (&'static str, String)> {
        match o.get(k) {
            Some(v) => non_negative(v)
                .ok_or_else(|| named(format!("`{k}` is {v}, not a non-negative integer"))),
            None => Err(named(format!("no `{k}`"))),
        }
    };
    let offset = integer("offset")?;
    let size = integer("size")?;
    let units = match o.get("units").or_else(|| o.get("unit")) {
        None | Some(Json::Null) => None,
        Some(Json::String(u)) => Some(u.clone()),
        Some(other) => return Err(named(format!("units {other} is not a string or null"))),
    };
    let semantic = o.get("semantic").and_then(Json::as_str).map(str::to_string);
    let ty = SignalType::parse(&type_text).ok_or_else(|| {
        (
            UNKNOWN_TYPE,
            format!("signal {name:?}: type {type_text:?} is not a type of the profile (double, float, int32, int64, bool, Vec3<T>, Quat<T>, Mat3<T>)"),
        )
    })?;
    if !Signal::size_ok(ty, size) {
        return Err((
            SIZE_MISMATCH,
            format!(
                "signal {name:?}: size {size} is not the size of {type_text} ({}{})",
                ty.size(),
                if Signal::size_ok(ty, 8) && ty.size() != 8 {
                    ", or an 8-byte slot"
                } else {
                    ""
                }
            ),
        ));
    }
    Ok(Signal {
        name,
        ty,
        units,
        lifecycle,
        offset,
        size,
        semantic,
    })
}

/// A declared block size, or the derived one (max(offset + size), 0 if none).
fn block_size(
    object: &Map<String, Json>,
    key: &str,
    signals: &[Signal],
    lifecycle: Lifecycle,
    found: &mut Findings,
) -> (u64, bool) {
    let derived = signals
        .iter()
        .filter(|s| s.lifecycle == lifecycle)
        .map(|s| s.offset.saturating_add(s.size))
        .max()
        .unwrap_or(0);
    match object.get(key) {
        None | Some(Json::Null) => (derived, false),
        Some(v) => match non_negative(v) {
            Some(n) => (n, true),
            None => {
                found.push(error(
                    SCHEMA_JSON,
                    format!("`{key}` is {v}, not a non-negative integer (derived: {derived})"),
                ));
                (derived, false)
            }
        },
    }
}

/// Signals of one block that overlap (spec §A4): each pair reported once, by file order.
fn overlaps(signals: &[Signal], lifecycle: Lifecycle, found: &mut Findings) {
    let mut block: Vec<&Signal> = signals
        .iter()
        .filter(|s| s.lifecycle == lifecycle)
        .collect();
    block.sort_by_key(|s| (s.offset, s.size));
    let mut reach: Option<&Signal> = None;
    for s in block {
        if let Some(r) = reach {
            if s.offset < r.offset.saturating_add(r.size) && s.size > 0 {
                found.push(error(
                    SIGNAL_OVERLAP,
                    format!(
                        "{} signals {:?} [{}, {}) and {:?} [{}, {}) overlap",
                        lifecycle.name(),
                        r.name,
                        r.offset,
                        r.offset.saturating_add(r.size),
                        s.name,
                        s.offset,
                        s.offset.saturating_add(s.size)
                    ),
                ));
            }
        }
        if reach.is_none_or(|r| s.offset.saturating_add(s.size) > r.offset.saturating_add(r.size)) {
            reach = Some(s);
        }
    }
}

/// `components[]` state ranges: contiguous from 0 and not overlapping (a warning).
fn components(object: &Map<String, Json>, found: &mut Findings) {
    let Some(Json::Array(list)) = object.get("components") else {
        return;
    };
    let mut ranges: Vec<(u64, u64, String)> = Vec::new();
    for c in list {
        let name = c
            .get("name")
            .and_then(Json::as_str)
            .unwrap_or("?")
            .to_string();
        match (
            c.get("state_offset").and_then(non_negative),
            c.get("state_size").and_then(non_negative),
        ) {
            (Some(o), Some(n)) => ranges.push((o, n, name)),
            _ => found.push(finding(
                Severity::Warning,
                COMPONENT_RANGES,
                format!("component {name:?} has no integer state_offset and state_size"),
            )),
        }
    }
    ranges.sort();
    let mut next = 0u64;
    for (offset, size, name) in ranges {
        if offset != next {
            found.push(finding(
                Severity::Warning,
                COMPONENT_RANGES,
                format!(
                    "component {name:?} starts at state index {offset}, expected {next}: {}",
                    if offset < next {
                        "ranges overlap"
                    } else {
                        "a gap"
                    }
                ),
            ));
        }
        next = next.max(offset.saturating_add(size));
    }
}

/// Largest `schema.json` read (real ones are kilobytes; a million signals is ~100 MB).
pub const MAX_BYTES: u64 = 256 << 20;

/// The members of a JSON object, each value as its text.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    members.push(entry);
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(Entries)
    }
}

/// The `signals` array walked one element at a time: each is checked, hashed into the
/// checksum and dropped unless it is a signal, so that no tree of the whole array is held
/// (a tree and a finding each for millions of bad elements took gigabytes: docs/performance.md,
/// "Figures from code comments").
#[derive(Default)]
struct SignalWalk {
    signals: Vec<Signal>,
    /// The elements that are signals, for the kept object.
    objects: Vec<Json>,
    names: HashSet<String>,
    unreadable: usize,
    found: Findings,
    checksum: Sha256,
    line: String,
}

impl SignalWalk {
    fn element(&mut self, element: Json) {
        self.line.clear();
        checksum_line(&mut self.line, &element);
        self.checksum.update(self.line.as_bytes());
        match signal(&element) {
            Ok(sig) if self.names.contains(&sig.name) => {
                self.unreadable += 1;
                self.found.push(error(
                    SIGNAL_FIELD,
                    format!("signal name {:?} is used twice", sig.name),
                ));
            }
            Ok(sig) => {
                self.names.insert(sig.name.clone());
                self.signals.push(sig);
                self.objects.push(element);
            }
            Err((code, why)) => {
                self.unreadable += 1;
                self.found.push(error(code, why));
            }
        }
    }

    /// Walks the array whose text is `array`.
    fn walk(array: &str) -> Result<SignalWalk, serde_json::Error> {
        struct Elements<'w>(&'w mut SignalWalk);
        impl<'de> Visitor<'de> for Elements<'_> {
            type Value = ();
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
                while let Some(element) = seq.next_element()? {
                    self.0.element(element);
                }
                Ok(())
            }
        }
        let mut walk = SignalWalk::default();
        serde_json::Deserializer::from_str(array).deserialize_seq(Elements(&mut walk))?;
        Ok(walk)
    }
}

/// The top-level object of `schema.json`, its `signals` array walked (`None`: no array).
fn read_object(bytes: &[u8]) -> Result<(Map<String, Json>, Option<SignalWalk>), Finding> {
    let invalid = |e: serde_json::Error| error(SCHEMA_JSON, format!("not valid JSON: {e}"));
    let document: &RawValue = serde_json::from_slice(bytes).map_err(invalid)?;
    if !document.get().starts_with('{') {
        return Err(error(SCHEMA_JSON, "not a JSON object".into()));
    }
    let Members(members) = serde_json::from_str(document.get()).map_err(invalid)?;
    let mut object = Map::new();
    let mut walk = None;
    for (key, value) in members {
        let text = value.get();
        let value = if key == "signals" && text.starts_with('[') {
            let mut w = SignalWalk::walk(text).map_err(invalid)?;
            let objects = Json::Array(std::mem::take(&mut w.objects));
            walk = Some(w);
            objects
        } else {
            if key == "signals" {
                walk = None;
            }
            serde_json::from_str(text).map_err(invalid)?
        };
        // A key given twice keeps its first place and its last value, as a parse into a
        // map does.
        object.insert(key, value);
    }
    Ok((object, walk))
}

/// Parses `schema.json`. `Err` when nothing can be read (not JSON, not an object, no
/// `signals` array); otherwise the schema and what is wrong with it. The schema's object
/// keeps every key, and of `signals` only the elements that are signals.
pub fn parse(bytes: &[u8]) -> Result<(Schema, Findings), Finding> {
    let (object, walk) = read_object(bytes)?;
    let Some(walk) = walk else {
        return Err(error(
            SCHEMA_JSON,
            "no `signals` array (a required key)".into(),
        ));
    };
    let mut found = Findings::default();
    let version = |key: &str, found: &mut Findings| match object.get(key) {
        Some(Json::String(s)) => s.clone(),
        Some(other) => {
            found.push(error(
                SCHEMA_JSON,
                format!("`{key}` is {other}, not a string"),
            ));
            String::new()
        }
        None => {
            found.push(error(SCHEMA_JSON, format!("no `{key}` (a required key)")));
            String::new()
        }
    };
    let schema_version = version("schema_version", &mut found);
    let icarus_version = version("icarus_version", &mut found);
    let SignalWalk {
        signals,
        mut unreadable,
        found: walked,
        checksum: hasher,
        ..
    } = walk;
    found.append(walked);
    match object.get("byte_order") {
        None => {}
        Some(Json::String(s)) if s == "little" => {}
        Some(other) => found.push(error(
            BYTE_ORDER,
            format!("byte_order is {other}: the profile is little-endian only (values are read as little-endian)"),
        )),
    }
    let (dynamic_block, dyn_declared) = block_size(
        &object,
        "dynamic_block_bytes",
        &signals,
        Lifecycle::Dynamic,
        &mut found,
    );
    let (static_block, static_declared) = block_size(
        &object,
        "static_block_bytes",
        &signals,
        Lifecycle::Static,
        &mut found,
    );
    for lifecycle in [Lifecycle::Dynamic, Lifecycle::Static] {
        overlaps(&signals, lifecycle, &mut found);
    }
    let mut outside = BTreeMap::new();
    for (i, s) in signals.iter().enumerate() {
        let (block, declared) = match s.lifecycle {
            Lifecycle::Dynamic => (dynamic_block, dyn_declared),
            Lifecycle::Static => (static_block, static_declared),
        };
        let end = s.offset.checked_add(s.size);
        if declared && end.is_none_or(|e| e > block) || end.is_none() {
            found.push(error(
                SIGNAL_OUT_OF_BLOCK,
                format!(
                    "{} signal {:?} at [{}, {} + {}) lies outside its {block}-byte block",
                    s.lifecycle.name(),
                    s.name,
                    s.offset,
                    s.offset,
                    s.size
                ),
            ));
            outside.insert(i, ());
        }
    }
    unreadable += outside.len();
    let signals: Vec<Signal> = signals
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !outside.contains_key(i))
        .map(|(_, s)| s)
        .collect();
    let origin = time_block(object.get("time"), &mut found);
    components(&object, &mut found);
    let declared = object.get("checksum").cloned();
    let computed = format!("sha256:{}", hex(&hasher.finalize()));
    match &declared {
        None => found.push(finding(
            Severity::Warning,
            CHECKSUM_MISSING,
            "no `checksum`: layouts cannot be compared exactly".into(),
        )),
        Some(Json::String(s)) if *s == computed => {}
        Some(other) => found.push(error(
            CHECKSUM_MISMATCH,
            format!("checksum {other} is not the layout's ({computed})"),
        )),
    }
    Ok((
        Schema {
            schema_version,
            icarus_version,
            signals,
            unreadable,
            dynamic_block,
            static_block,
            origin,
            checksum: Checksum { declared, computed },
            object,
        },
        found,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema of spec §A2, as its example gives it.
    pub const A2: &str = r#"{"schema_version":"1.0.0","icarus_version":"0.6.0","created_at":"2026-03-01T12:00:00Z",
 "time":{"epoch":"2026-03-01T12:00:00Z","system":"UTC","units":"seconds"},
 "signals":[
  {"name":"Vehicle.Nav.position","type":"Vec3<double>","units":"m","lifecycle":"dynamic","offset":0,"size":24},
  {"name":"Vehicle.Aero.alpha","type":"double","units":"rad","lifecycle":"dynamic","offset":24,"size":8},
  {"name":"Vehicle.Mass.dry","type":"float","units":"kg","lifecycle":"static","offset":0,"size":4}],
 "compatibility":{"min_icarus_version":"0.6.0","warmstart_compatible":true,"breaking_changes":[]},
 "checksum":"sha256:dfc5cf06739db1309b73341f945ee3ff0053ce3198ca2f634751d3ee0798efc9"}"#;

    #[test]
    fn the_a7_test_vector() {
        let json: Json = serde_json::from_str(A2).unwrap();
        let text = checksum_text(json["signals"].as_array().unwrap());
        let want = "Vehicle.Nav.position\tVec3<double>\tm\tdynamic\t0\t24\n\
                    Vehicle.Aero.alpha\tdouble\trad\tdynamic\t24\t8\n\
                    Vehicle.Mass.dry\tfloat\tkg\tstatic\t0\t4\n";
        assert_eq!(text, want);
        assert_eq!(text.len(), 129);
        assert_eq!(
            checksum(json["signals"].as_array().unwrap()),
            "sha256:dfc5cf06739db1309b73341f945ee3ff0053ce3198ca2f634751d3ee0798efc9"
        );
    }

    #[test]
    fn the_a2_schema_parses_whole() {
        let (s, found) = parse(A2.as_bytes()).unwrap();
        assert!(found.list().is_empty(), "{found:?}");
        assert_eq!(s.signals.len(), 3);
        assert_eq!((s.dynamic_block, s.static_block), (32, 4));
        assert_eq!(s.checksum.status(), "ok");
        assert_eq!(s.origin.system.as_deref(), Some("UTC"));
        assert_eq!(s.origin.epoch.unwrap().iso8601(), "2026-03-01T12:00:00Z");
        assert_eq!(s.signals[0].ty.to_string(), "Vec3<double>");
        assert_eq!(s.signals[2].lifecycle, Lifecycle::Static);
    }

    #[test]
    fn units_null_and_unit_in_the_checksum_text() {
        let signals: Json = serde_json::from_str(
            r#"[{"name":"a","type":"int32","units":null,"lifecycle":"dynamic","offset":0,"size":8},
                {"name":"b","type":"bool","unit":"1","lifecycle":"static","offset":0,"size":1},
                {"name":"c","type":"double","lifecycle":"dynamic","offset":8,"size":8}]"#,
        )
        .unwrap();
        assert_eq!(
            checksum_text(signals.as_array().unwrap()),
            "a\tint32\t\tdynamic\t0\t8\nb\tbool\t1\tstatic\t0\t1\nc\tdouble\t\tdynamic\t8\t8\n"
        );
    }
}
