//! What an Icarus HDF5 file holds (spec §B1, §B4): `/time`, the signal datasets in schema
//! order with their types, units, semantics and lifecycles, the frame count, `created_at`,
//! and the structural findings of §B6. Values are read later, a window at a time
//! (`column.rs`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use hdf5_pure::{AttrValue, ChunkCacheConfig, Dataset, FileAccessProperties};

use super::bytes::{signature_offset, Bytes};
use super::codes;
use super::column::{Column, Elem, StorageNotes};
use super::schema::{self, Parsed, Schema};
use crate::model::{Epoch, TimeOrigin};
use crate::report::{Finding, Severity};

/// `/metadata` attributes where simrec records a recording's absolute start (Vulcan records
/// none): the epoch as ISO-8601 UTC, and its time system.
pub const EPOCH_ATTR: &str = "time_epoch";
pub const SYSTEM_ATTR: &str = "time_system";

/// One signal dataset.
pub struct Signal {
    pub name: String,
    pub column: Column,
    pub unit: Option<String>,
    pub semantic: Option<String>,
    pub is_static: bool,
}

/// How the schema attribute was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaStatus {
    Parsed(Parsed),
    /// No `/metadata` `schema` attribute.
    Missing,
    /// Present, neither strict nor lenient reading works.
    Unparsable,
}

impl SchemaStatus {
    pub fn name(self) -> &'static str {
        match self {
            SchemaStatus::Parsed(p) => p.name(),
            SchemaStatus::Missing => "missing",
            SchemaStatus::Unparsable => "unparsable",
        }
    }
}

pub struct Layout {
    pub bytes: Bytes,
    /// Kept open: the columns read through it.
    _file: hdf5_pure::File,
    pub time: Option<Column>,
    pub signals: Vec<Signal>,
    /// Frames every column has: the minimum of the lengths.
    pub frames: u64,
    pub schema: SchemaStatus,
    pub created_at: Option<String>,
    /// Time zero: the absolute start simrec records in `/metadata`, else MET from an unknown
    /// instant (as Icarus writes every file).
    pub origin: TimeOrigin,
    /// Where the HDF5 superblock is (after a user block of this many bytes).
    pub user_block: u64,
    pub findings: Vec<Finding>,
}

/// A file that cannot be read as an Icarus HDF5 file at all.
pub fn fatal(code: &'static str, message: String) -> Finding {
    Finding::new(Severity::Error, code, message)
}

impl Layout {
    /// Reads the structure. `Err` only when nothing can be read (not HDF5); every other
    /// problem is a finding, with what can still be read kept.
    pub fn open(bytes: Bytes) -> Result<Layout, Finding> {
        let Some(user_block) = signature_offset(&bytes) else {
            return Err(fatal(
                codes::NOT_HDF5,
                "no HDF5 signature (89 48 44 46 0d 0a 1a 0a at byte 0 or after a user block)"
                    .into(),
            ));
        };
        // Chunk caches matter only to datasets hdf5-pure reads itself (filtered ones): small.
        let access = FileAccessProperties::new().with_chunk_cache(
            ChunkCacheConfig::new()
                .with_max_bytes(256 << 10)
                .with_max_slots(4),
        );
        let file =
            hdf5_pure::File::from_source_with_options(bytes.clone(), access).map_err(|e| {
                fatal(
                    codes::NOT_HDF5,
                    format!("the HDF5 library cannot open it: {e}"),
                )
            })?;
        let mut findings = Vec::new();

        let time = open_time(&file, &bytes, &mut findings);
        let Metadata {
            created_at,
            schema: schema_text,
            epoch,
            time_system,
        } = metadata(&file);
        let mut datasets = signal_datasets(&file, &mut findings);
        let names: Option<Vec<String>> = datasets.as_ref().map(|d| d.keys().cloned().collect());
        let (schema, status) =
            choose_schema(schema_text.as_deref(), names.as_deref(), &mut findings);
        // The first entry of a name the schema lists twice, as a search would find it.
        let mut listed: HashMap<&str, &schema::SchemaSignal> = HashMap::new();
        for s in schema.iter().flat_map(|s| &s.signals) {
            listed.entry(s.name.as_str()).or_insert(s);
        }
        let mut signals = Vec::new();
        if let (Some(names), Some(datasets)) = (&names, &mut datasets) {
            for name in order(names, schema.as_ref()) {
                let Some(dataset) = datasets.remove(&name) else {
                    continue;
                };
                let listed = listed.get(name.as_str()).copied();
                if let Some(signal) = open_signal(dataset, &bytes, &name, listed, &mut findings) {
                    signals.push(signal);
                }
            }
        }
        if let Some(schema) = &schema {
            mismatches(
                schema,
                &signals,
                names.as_deref().unwrap_or_default(),
                &mut findings,
            );
        }
        let frames = frame_count(time.as_ref(), &signals, &mut findings);
        let origin = origin(epoch.as_deref(), time_system, &mut findings);
        Ok(Layout {
            bytes,
            _file: file,
            time,
            signals,
            frames,
            schema: status,
            created_at,
            origin,
            user_block,
            findings,
        })
    }
}

fn open_time(file: &hdf5_pure::File, bytes: &Bytes, findings: &mut Vec<Finding>) -> Option<Column> {
    let no_time = |why: String| fatal(codes::NO_TIME, why);
    let dataset = match file.dataset("time") {
        Ok(d) => d,
        Err(e) => {
            findings.push(no_time(format!("no /time dataset ({e})")));
            return None;
        }
    };
    let datatype = dataset.datatype().ok();
    let shape = dataset.shape().ok();
    match (datatype.as_ref().and_then(Elem::of), shape.as_deref()) {
        (Some(Elem::F64), Some(&[len])) => {
            let datatype = datatype?;
            match Column::open(dataset, Elem::F64, len, &datatype, bytes) {
                Ok((column, notes)) => {
                    unwritten("/time", len, &notes, findings);
                    Some(column)
                }
                Err(e) => {
                    findings.push(fatal(codes::STORAGE, format!("/time: {}", e.0)));
                    None
                }
            }
        }
        (elem, shape) => {
            findings.push(no_time(format!(
                "/time is not a 1-D float64 dataset (type {}, shape {})",
                elem.map_or("other", Elem::name),
                shape.map_or("unknown".into(), |s| format!("{s:?}"))
            )));
            None
        }
    }
}

/// Warnings for the chunks of a dataset (`what`, `len` rows declared) that were never
/// written: gaps read as 0, and the rows after the last chunk written, which are not read.
fn unwritten(what: &str, len: u64, notes: &StorageNotes, findings: &mut Vec<Finding>) {
    let warn = |message| Finding::new(Severity::Warning, codes::STORAGE, message);
    if notes.missing_chunks > 0 {
        findings.push(warn(format!(
            "{what}: {} chunk(s) before its last written one were never written; their rows read as 0",
            notes.missing_chunks
        )));
    }
    let read = len - notes.unwritten_rows;
    if notes.unwritten_rows > 0 {
        findings.push(warn(match read {
            0 => format!(
                "{what} declares {len} rows but none of its chunks was written: its rows would all read as the fill value and none is read"
            ),
            _ => format!(
                "{what} declares {len} rows but its last chunk written ends at row {read}: the {} rows after it were never written (they would read as the fill value) and are not read",
                notes.unwritten_rows
            ),
        }));
    }
}

/// The text attributes of `/metadata` simrec reads.
#[derive(Default)]
struct Metadata {
    created_at: Option<String>,
    schema: Option<String>,
    /// simrec's: the absolute start of time zero, ISO-8601 UTC, and its time system.
    epoch: Option<String>,
    time_system: Option<String>,
}

/// `created_at`, `schema`, `time_epoch` and `time_system` of `/metadata`, as text.
fn metadata(file: &hdf5_pure::File) -> Metadata {
    let Ok(attrs) = file.group("metadata").and_then(|g| g.attrs()) else {
        return Metadata::default();
    };
    let text = |name: &str| attrs.get(name).and_then(attr_text);
    Metadata {
        created_at: text("created_at"),
        schema: text("schema"),
        epoch: text(EPOCH_ATTR),
        time_system: text(SYSTEM_ATTR),
    }
}

/// The origin `/metadata`'s `time_epoch` and `time_system` give (simrec writes them; Icarus
/// writes none: MET from an unknown instant, said as an info finding).
fn origin(epoch: Option<&str>, system: Option<String>, findings: &mut Vec<Finding>) -> TimeOrigin {
    let parsed = epoch.and_then(Epoch::parse_iso8601);
    if let (Some(text), None) = (epoch, parsed) {
        findings.push(Finding::new(
            Severity::Warning,
            codes::EPOCH,
            format!("the /metadata {EPOCH_ATTR} `{text}` is not an ISO-8601 UTC instant: ignored"),
        ));
    }
    match parsed {
        Some(epoch) => TimeOrigin {
            epoch: Some(epoch),
            system: Some(system.unwrap_or_else(|| "UTC".into())),
        },
        None => {
            findings.push(Finding::new(
                Severity::Info,
                codes::NO_EPOCH,
                "no time system or epoch is recorded: times are seconds of mission elapsed time (MET) from an unknown instant",
            ));
            TimeOrigin {
                epoch: None,
                system: Some("MET".into()),
            }
        }
    }
}

/// A string attribute's text, fixed or variable length, ASCII or UTF-8.
pub fn attr_text(value: &AttrValue) -> Option<String> {
    match value {
        AttrValue::String(s)
        | AttrValue::AsciiString(s)
        | AttrValue::VarLenString(s)
        | AttrValue::VarLenAsciiString(s)
        | AttrValue::StringSized { value: s, .. }
        | AttrValue::AsciiStringSized { value: s, .. } => Some(s.clone()),
        _ => None,
    }
}

/// The members of `/signals` that are datasets, opened in one walk of the group (opening
/// each by name walks the group again), by name (HDF5's own order is its name index, which
/// simrec does not rely on).
fn signal_datasets(
    file: &hdf5_pure::File,
    findings: &mut Vec<Finding>,
) -> Option<BTreeMap<String, Dataset>> {
    match file.group("signals").and_then(|g| g.iter_datasets()) {
        Ok(members) => Some(members.collect()),
        Err(e) => {
            findings.push(fatal(codes::NO_SIGNALS, format!("no /signals group ({e})")));
            None
        }
    }
}

/// The schema reading to use: the first (strict, then lenient) whose names are all datasets,
/// else the first that parses; with none, the datasets alone (a warning).
fn choose_schema(
    text: Option<&str>,
    names: Option<&[String]>,
    findings: &mut Vec<Finding>,
) -> (Option<Schema>, SchemaStatus) {
    let Some(text) = text else {
        findings.push(Finding::new(
            Severity::Warning,
            codes::SCHEMA,
            "no /metadata schema attribute: signal order, lifecycles, units and semantics come from the datasets",
        ));
        return (None, SchemaStatus::Missing);
    };
    let mut readings = schema::readings(text);
    if readings.is_empty() {
        findings.push(Finding::new(
            Severity::Warning,
            codes::SCHEMA,
            "the /metadata schema attribute is neither JSON nor Vulcan's unescaped text: signal order, lifecycles, units and semantics come from the datasets",
        ));
        return (None, SchemaStatus::Unparsable);
    }
    let names: BTreeSet<&str> = names
        .unwrap_or_default()
        .iter()
        .map(String::as_str)
        .collect();
    let fits = |s: &Schema| s.signals.iter().all(|x| names.contains(x.name.as_str()));
    let pick = readings.iter().position(fits).unwrap_or(0);
    let chosen = readings.swap_remove(pick);
    let status = SchemaStatus::Parsed(chosen.parsed);
    (Some(chosen), status)
}

/// Signal order: the schema's, then datasets it does not list, by name.
fn order(names: &[String], schema: Option<&Schema>) -> Vec<String> {
    let present: BTreeSet<&str> = names.iter().map(String::as_str).collect();
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(names.len());
    for s in schema.map(|s| s.signals.as_slice()).unwrap_or_default() {
        if present.contains(s.name.as_str()) && seen.insert(s.name.as_str()) {
            out.push(s.name.clone());
        }
    }
    for n in names {
        if !seen.contains(n.as_str()) {
            out.push(n.clone());
        }
    }
    out
}

fn open_signal(
    dataset: Dataset,
    bytes: &Bytes,
    name: &str,
    listed: Option<&schema::SchemaSignal>,
    findings: &mut Vec<Finding>,
) -> Option<Signal> {
    let path = format!("/signals/{name}");
    let datatype = dataset.datatype().ok();
    let shape = dataset.shape().ok();
    let (elem, len) = match (datatype.as_ref().and_then(Elem::of), shape.as_deref()) {
        (Some(elem), Some(&[len])) => (elem, len),
        (elem, shape) => {
            findings.push(fatal(
                codes::DTYPE,
                format!(
                    "{path} is not a 1-D float64, float32, int32 or int64 dataset (type {}, shape {}): skipped",
                    elem.map_or_else(|| datatype_text(datatype.as_ref()), |e| e.name().into()),
                    shape.map_or("unknown".into(), |s| format!("{s:?}"))
                ),
            ));
            return None;
        }
    };
    let attrs = dataset.attrs().unwrap_or_default();
    let attr = |key: &str| attrs.get(key).and_then(attr_text).filter(|s| !s.is_empty());
    let datatype = datatype?;
    let (column, notes) = match Column::open(dataset, elem, len, &datatype, bytes) {
        Ok(c) => c,
        Err(e) => {
            findings.push(fatal(codes::STORAGE, format!("{path}: {}: skipped", e.0)));
            return None;
        }
    };
    unwritten(&path, len, &notes, findings);
    let from_schema = |v: Option<&String>| v.filter(|s| !s.is_empty()).cloned();
    Some(Signal {
        name: name.to_string(),
        column,
        unit: listed
            .and_then(|s| from_schema(s.unit.as_ref()))
            .or_else(|| attr("unit")),
        semantic: listed
            .and_then(|s| from_schema(s.semantic.as_ref()))
            .or_else(|| attr("semantic")),
        is_static: listed.is_some_and(|s| s.is_static()),
    })
}

fn datatype_text(datatype: Option<&hdf5_pure::Datatype>) -> String {
    match datatype {
        Some(hdf5_pure::Datatype::FixedPoint { size, layout, .. }) => {
            format!(
                "{}int{}",
                if layout.signed { "" } else { "u" },
                u64::from(*size) * 8
            )
        }
        Some(hdf5_pure::Datatype::FloatingPoint { size, .. }) => {
            format!("float{}", u64::from(*size) * 8)
        }
        Some(hdf5_pure::Datatype::String { .. }) => "string".into(),
        Some(_) => "other".into(),
        None => "unreadable".into(),
    }
}

/// Schema signals absent from `/signals`, and types that differ from the datasets'.
fn mismatches(schema: &Schema, signals: &[Signal], names: &[String], findings: &mut Vec<Finding>) {
    let present: BTreeSet<&str> = names.iter().map(String::as_str).collect();
    let types: BTreeMap<&str, Elem> = signals
        .iter()
        .map(|s| (s.name.as_str(), s.column.elem))
        .collect();
    for s in &schema.signals {
        if !present.contains(s.name.as_str()) {
            findings.push(Finding::new(
                Severity::Warning,
                codes::SCHEMA_MISMATCH,
                format!(
                    "the schema lists {:?}, which /signals does not have",
                    s.name
                ),
            ));
            continue;
        }
        let (Some(elem), Some(ty)) = (types.get(s.name.as_str()), s.ty.as_deref()) else {
            continue;
        };
        let agrees = matches!(
            (ty, elem),
            ("double", Elem::F64)
                | ("float", Elem::F32)
                | ("int32", Elem::I32)
                | ("bool", Elem::I32)
                | ("int64", Elem::I64)
        );
        if !agrees {
            findings.push(Finding::new(
                Severity::Warning,
                codes::SCHEMA_MISMATCH,
                format!(
                    "the schema gives {:?} the type {ty}, its dataset is {} (the dataset's type is used)",
                    s.name,
                    elem.name()
                ),
            ));
        }
    }
}

/// The frame count: the shortest of `/time` and the signals, every other length reported.
fn frame_count(time: Option<&Column>, signals: &[Signal], findings: &mut Vec<Finding>) -> u64 {
    let Some(time) = time else {
        return 0;
    };
    let frames = signals
        .iter()
        .map(|s| s.column.len)
        .fold(time.len, u64::min);
    for s in signals.iter().filter(|s| s.column.len != time.len) {
        findings.push(fatal(
            codes::LENGTH,
            format!(
                "/signals/{} has {} rows, /time has {} ({}); {frames} frames are read",
                s.name,
                s.column.len,
                time.len,
                if s.column.len < time.len {
                    "the run likely stopped between two writes"
                } else {
                    "its extra rows have no time"
                }
            ),
        ));
    }
    frames
}
