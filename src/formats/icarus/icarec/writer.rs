//! Writing a recording (spec §A15): the layout is fixed at `create` from the header's
//! declared fields; frames are written as they arrive (a frame is every dynamic record with
//! one time and frame value; a signal a frame lacks holds its previous value), with the
//! dynamic file's SHA-256 computed on the way; `metadata.json` comes last with
//! `complete: true`. Everything goes under a temporary name through `Outputs`.
//!
//! From an `.icarec` source whose signals all arrive unchanged, the source's layout (slot
//! sizes, gaps, block sizes) is kept, so frames whose values are the source's are copied
//! byte for byte, time included. Otherwise signals are laid out contiguously in order with
//! canonical sizes.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value as Json};
use sha2::{Digest, Sha256};

use super::codec::{self, Fit};
use super::container::{DYNAMIC_FILE, STATIC_FILE};
use super::schema::{self, hex, Lifecycle, Signal};
use super::{metadata, ustar, HEADER_KEY, RAW_FRAME, RAW_STATIC};
use crate::formats::icarus::common::{entity_and_field, Kind, SignalType};
use crate::formats::output::{Outputs, SeekableDestination};
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::{
    Channel, Entity, Epoch, FieldSpec, Header, Nanos, Record, Value, MAPPED_FROM, QUATERNION_WXYZ,
};

pub const FORMS: &[&str] = &["dir", "tar"];

/// The form of an `.icarec` output (`--icarec-form`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IcarecForm {
    Directory,
    /// One ustar file.
    Tar,
}

/// How an `.icarec` is written.
#[derive(Debug, Clone, Copy, Default)]
pub struct IcarecWriteOptions {
    /// `None`: the output's name decides (`NAME.icarec.tar` is one file).
    pub form: Option<IcarecForm>,
}

/// The schema version simrec writes for a recording that has none.
const SCHEMA_VERSION: &str = "1.0.0";
/// The Icarus version the profile describes (spec: Icarus 0.6.0).
const ICARUS_VERSION: &str = "0.6.0";

/// The loss reason of a dynamic signal's frames before its first value.
const NO_VALUE_YET: &str = "no value before its first record: written as 0";

/// Most gap bytes a source layout may have in a block for the writer to keep it.
const MAX_KEPT_GAP: u64 = 1 << 20;

/// Where a field of a channel goes.
#[derive(Debug, Clone)]
enum Target {
    Signal(usize),
    /// Not written, and why.
    Dropped(String),
}

/// A channel's fields and the entity whose values it holds.
#[derive(Debug, Clone, Default)]
struct ChannelPlan {
    name: String,
    fields: Vec<(String, Target)>,
    /// The first entity seen on the channel: a signal holds one value per frame.
    entity: Option<Option<Entity>>,
    /// The loss reason of another entity's values (made once: a channel may carry
    /// thousands of entities, every frame).
    others: String,
}

/// One signal being written.
struct Planned {
    signal: Signal,
    /// Channel and field it comes from, for the loss report.
    channel: String,
    field: String,
    /// Whether a value has been stored yet.
    seen: bool,
}

/// The form being written.
enum Out {
    Directory {
        dir: PathBuf,
        dynamic: BufWriter<File>,
    },
    Tar {
        dest: SeekableDestination,
        /// Where the static member's data and the dynamic member's header are.
        static_at: u64,
        dynamic_header_at: u64,
        mtime: u64,
    },
    /// The tar form of a layout that may grow: the frames go to a scratch file, and the
    /// members are written at the end.
    TarAtEnd {
        dest: SeekableDestination,
        frames: BufWriter<File>,
        mtime: u64,
    },
}

impl Out {
    /// The tar form of a layout that may grow: the frames to a scratch file first.
    fn tar_at_end(target: &Path, outputs: &mut Outputs, mtime: u64) -> Result<Out, WriteError> {
        let dest = outputs.create_seekable(target)?;
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        // Beside the output (its size is the output's), else in the system's temporary
        // directory (a dry run into a directory yet to be made).
        let scratch = tempfile::tempfile_in(dir)
            .or_else(|_| tempfile::tempfile())
            .map_err(io(target))?;
        Ok(Out::TarAtEnd {
            dest,
            frames: BufWriter::with_capacity(1 << 20, scratch),
            mtime,
        })
    }

    /// The tar form: the schema member, the static member's place and the dynamic
    /// member's header written now.
    fn tar(
        target: &Path,
        outputs: &mut Outputs,
        schema_bytes: &[u8],
        static_len: u64,
        mtime: u64,
    ) -> Result<Out, WriteError> {
        let mut dest = outputs.create_seekable(target)?;
        let e = io(target);
        let mut at = ustar::member(&mut dest, schema::FILE, schema_bytes, mtime).map_err(&e)?;
        // The static block is known only at the end: its place is kept, zero-filled.
        let static_at = at + ustar::BLOCK;
        at += ustar::member(&mut dest, STATIC_FILE, &vec![0; static_len as usize], mtime)
            .map_err(&e)?;
        dest.write_all(&ustar::header(DYNAMIC_FILE, 0, mtime).map_err(&e)?)
            .map_err(&e)?;
        Ok(Out::Tar {
            dest,
            static_at,
            dynamic_header_at: at,
            mtime,
        })
    }

    /// The directory form: `schema.json` written now.
    fn directory(
        target: &Path,
        outputs: &mut Outputs,
        schema_bytes: &[u8],
    ) -> Result<Out, WriteError> {
        let dir = outputs.create_dir(target)?;
        fs::write(dir.join(schema::FILE), schema_bytes).map_err(io(target))?;
        let file = File::create(dir.join(DYNAMIC_FILE)).map_err(io(target))?;
        Ok(Out::Directory {
            dir,
            dynamic: BufWriter::with_capacity(1 << 20, file),
        })
    }
}

/// The tar members' mtime: the schema's `created_at` in Unix seconds, else 0.
fn created_mtime(object: &Map<String, Json>) -> u64 {
    object
        .get("created_at")
        .and_then(Json::as_str)
        .and_then(Epoch::parse_iso8601)
        .and_then(|e| u64::try_from(e.unix_ns.div_euclid(1_000_000_000)).ok())
        .unwrap_or(0)
}

/// The frame being assembled.
struct Frame {
    time: Nanos,
    frame: Option<i64>,
    /// The time in seconds (the source's own, while they say `time`).
    seconds: f64,
    /// The block still holds the original bytes.
    verbatim: bool,
}

pub struct IcarecWriter {
    out: Out,
    target: PathBuf,
    plans: Vec<ChannelPlan>,
    signals: Vec<Planned>,
    /// The signals' names, taken.
    names: HashSet<String>,
    /// `schema.json`'s object for a layout that may grow, its `signals` a place: written
    /// again at the end with the signals laid out by then.
    schema: Map<String, Json>,
    /// The dynamic block's size from each frame on: signals added after the first frame
    /// widen it, and the frames before are widened at the end.
    layouts: Vec<(u64, usize)>,
    dynamic_block: Vec<u8>,
    static_block: Vec<u8>,
    static_from_raw: bool,
    /// The source's layout is kept: original bytes may be copied.
    source_layout: bool,
    frame: Option<Frame>,
    scratch: Vec<u8>,
    scratch_value: Value,
    /// (value index, signal) of the record being written.
    targets: Vec<(usize, usize)>,
    hasher: Sha256,
    dynamic_bytes: u64,
    frames: u64,
    t_first: Option<f64>,
    t_last: Option<f64>,
    base_metadata: Map<String, Json>,
    /// `metadata.json`'s `source`.
    provenance: Json,
    report: WriteReport,
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> WriteError + '_ {
    move |e| WriteError::io(path, e)
}

/// The signal name of a channel's field: the channel's name for its one field named like
/// its last segment (an Icarus signal), else `channel.field`.
fn signal_name(channel: &Channel, field: &str) -> String {
    if channel.fields.len() == 1 && entity_and_field(&channel.name).1 == field {
        channel.name.clone()
    } else {
        format!("{}.{field}", channel.name)
    }
}

/// Why a field has no signal type.
fn why_dropped(spec: &crate::model::FieldSpec) -> String {
    match (&spec.dtype, &spec.shape) {
        (Some(d), Some(s)) => format!(
            "{d} of shape {s:?} has no .icarec signal type (scalars, [3], [4], [3, 3] of double, float, int32, int64; bool scalars)"
        ),
        _ => "type or shape not declared before the first record: not in the schema".into(),
    }
}

/// The `time` block for a header's origin: the epoch and system it has, MET without one.
fn time_json(header: &Header, base: Option<&Json>) -> Json {
    let mut t = base.and_then(Json::as_object).cloned().unwrap_or_default();
    let epoch = header.origin.epoch;
    let system = match (epoch, header.origin.system.as_deref()) {
        (None, _) => "MET",
        (Some(_), Some(s)) if schema::SYSTEMS.contains(&s) => s,
        (Some(_), _) => "UTC",
    };
    t.insert(
        "epoch".into(),
        epoch.map_or(Json::Null, |e| Json::String(e.iso8601())),
    );
    t.insert("system".into(), json!(system));
    t.insert("units".into(), json!("seconds"));
    Json::Object(t)
}

/// Current UTC time, `YYYY-MM-DDTHH:MM:SSZ`.
fn now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    crate::model::iso8601(secs * 1_000_000_000, Some(0))
}

/// The signals of `channel`'s fields, added to `signals` (offsets not yet set), and where
/// each field goes. `late` is why a static field has no place (the static block is laid out),
/// for a channel announced after the first frame.
fn plan_channel(
    channel: &Channel,
    signals: &mut Vec<Planned>,
    names: &mut HashSet<String>,
    late: Option<&str>,
) -> ChannelPlan {
    let mut plan = ChannelPlan {
        name: channel.name.clone(),
        ..ChannelPlan::default()
    };
    for spec in &channel.fields {
        let target = match (SignalType::of_field(spec), late) {
            (None, _) => Target::Dropped(why_dropped(spec)),
            (Some(_), Some(why)) if spec.is_static => Target::Dropped(why.into()),
            (Some(ty), _) => {
                let name = signal_name(channel, &spec.name);
                if names.insert(name.clone()) {
                    signals.push(planned(name, ty, spec, &channel.name));
                    Target::Signal(signals.len() - 1)
                } else {
                    Target::Dropped(format!("signal name {name:?} is already taken"))
                }
            }
        };
        plan.fields.push((spec.name.clone(), target));
    }
    plan
}

fn planned(name: String, ty: SignalType, spec: &FieldSpec, channel: &str) -> Planned {
    Planned {
        signal: Signal {
            name,
            ty,
            units: spec.unit.clone(),
            lifecycle: if spec.is_static {
                Lifecycle::Static
            } else {
                Lifecycle::Dynamic
            },
            offset: 0,
            size: ty.size() as u64,
            // A Quat is scalar first by its type: the schema does not say so again.
            semantic: spec
                .semantic
                .clone()
                .filter(|sem| !(ty.kind == Kind::Quat && sem == QUATERNION_WXYZ)),
        },
        channel: channel.to_string(),
        field: spec.name.clone(),
        seen: false,
    }
}

/// A signal's object in `schema.json`: the source's (`source`) with what simrec sets.
fn signal_object(s: &Signal, source: Option<&Map<String, Json>>) -> Json {
    let mut o = source.cloned().unwrap_or_default();
    let had_units = o.contains_key("units") || o.contains_key("unit");
    o.remove("unit");
    o.insert("name".into(), json!(s.name));
    o.insert("type".into(), json!(s.ty.to_string()));
    if s.units.is_some() || had_units {
        o.insert("units".into(), json!(s.units));
    }
    o.insert("lifecycle".into(), json!(s.lifecycle.name()));
    o.insert("offset".into(), json!(s.offset));
    o.insert("size".into(), json!(s.size));
    if let Some(sem) = &s.semantic {
        o.insert("semantic".into(), json!(sem));
    }
    Json::Object(o)
}

/// `schema.json`'s bytes.
fn render(schema: &Map<String, Json>) -> Result<Vec<u8>, WriteError> {
    let mut b = serde_json::to_vec_pretty(schema).map_err(WriteError::encoder)?;
    b.push(b'\n');
    Ok(b)
}

/// `schema.json` of `schema` with `signals` in its `signals` entry and their checksum. The
/// signals' objects are made one at a time as they are written: all 54,000 of an Elodin
/// replay's bodies at once were most of the writer's memory.
fn render_with(schema: &mut Map<String, Json>, signals: &[Planned]) -> Result<Vec<u8>, WriteError> {
    let mut hasher = Sha256::new();
    let mut line = String::new();
    for p in signals {
        line.clear();
        schema::checksum_line(&mut line, &signal_object(&p.signal, None));
        hasher.update(line.as_bytes());
    }
    let checksum = format!("sha256:{}", hex(&hasher.finalize()));
    schema.insert("checksum".into(), json!(checksum));
    let mut b =
        serde_json::to_vec_pretty(&WithSignals { schema, signals }).map_err(WriteError::encoder)?;
    b.push(b'\n');
    Ok(b)
}

/// A schema object whose `signals` entry is written from the signals laid out.
struct WithSignals<'a> {
    schema: &'a Map<String, Json>,
    signals: &'a [Planned],
}

impl serde::Serialize for WithSignals<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        struct Objects<'a>(&'a [Planned]);
        impl serde::Serialize for Objects<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.iter().map(|p| signal_object(&p.signal, None)))
            }
        }
        let mut map = s.serialize_map(Some(self.schema.len()))?;
        for (key, value) in self.schema {
            match key.as_str() {
                "signals" => map.serialize_entry(key, &Objects(self.signals))?,
                _ => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

/// Copies `frames` frames written with the blocks of `layouts` (first frame, block size;
/// in order) as frames of `width`-byte blocks: a signal added later has zeros before, as a
/// signal has before its first value. Returns the bytes written and their SHA-256.
fn widen(
    from: impl Read,
    to: &mut dyn Write,
    layouts: &[(u64, usize)],
    frames: u64,
    width: usize,
) -> io::Result<(u64, Sha256)> {
    let mut from = BufReader::with_capacity(1 << 20, from);
    let mut hasher = Sha256::new();
    let mut frame = vec![0u8; 8 + width];
    let mut bytes = 0;
    for (i, &(first, size)) in layouts.iter().enumerate() {
        let end = layouts.get(i + 1).map_or(frames, |next| next.0);
        frame[8 + size..].fill(0);
        for _ in first..end {
            from.read_exact(&mut frame[..8 + size])?;
            hasher.update(&frame);
            to.write_all(&frame)?;
            bytes += frame.len() as u64;
        }
    }
    Ok((bytes, hasher))
}

impl IcarecWriter {
    pub fn create(
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
        options: IcarecWriteOptions,
    ) -> Result<IcarecWriter, WriteError> {
        let source = header
            .metadata
            .get(HEADER_KEY)
            .filter(|_| header.format == "icarec");
        let source_schema = source
            .and_then(|s| s.get("schema"))
            .and_then(Json::as_object);
        let base_metadata = source
            .and_then(|s| s.get("metadata"))
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default();

        // Signals from the declared fields, in channel order.
        let mut signals: Vec<Planned> = Vec::new();
        let mut names = HashSet::new();
        let plans: Vec<ChannelPlan> = header
            .channels
            .iter()
            .map(|c| plan_channel(c, &mut signals, &mut names, None))
            .collect();

        let (dynamic_len, static_len, source_layout) = lay_out(&mut signals, source_schema);

        let grows = header.metadata.contains_key(MAPPED_FROM);
        let blocks = (dynamic_len, static_len);
        let (object, schema_bytes) = schema_json(header, source, &signals, blocks, grows)?;
        let provenance = provenance(header, source);

        let form = match options.form {
            Some(f) => f == IcarecForm::Tar,
            None => target
                .file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(".tar")),
        };
        let mtime = created_mtime(&object);
        let object = match grows {
            true => object,
            false => Map::new(),
        };
        let out = match (form, grows) {
            (true, true) => Out::tar_at_end(target, outputs, mtime)?,
            (true, false) => Out::tar(target, outputs, &schema_bytes, static_len, mtime)?,
            (false, _) => Out::directory(target, outputs, &schema_bytes)?,
        };
        Ok(IcarecWriter {
            out,
            target: target.to_path_buf(),
            plans,
            signals,
            names,
            schema: object,
            layouts: vec![(0, dynamic_len as usize)],
            dynamic_block: vec![0; dynamic_len as usize],
            static_block: vec![0; static_len as usize],
            static_from_raw: false,
            source_layout,
            frame: None,
            scratch: Vec::new(),
            scratch_value: Value::Null,
            targets: Vec::new(),
            hasher: Sha256::new(),
            dynamic_bytes: 0,
            frames: 0,
            t_first: None,
            t_last: None,
            base_metadata,
            provenance,
            report: WriteReport::default(),
        })
    }

    /// `schema.json` with the signals laid out now.
    fn schema_bytes(&mut self) -> Result<Vec<u8>, WriteError> {
        let width = self.dynamic_block.len();
        self.schema
            .insert("dynamic_block_bytes".into(), json!(width));
        render_with(&mut self.schema, &self.signals)
    }

    /// Writes the assembled frame: its time (the source's bits when they still say the
    /// record's time) and the block.
    fn flush_frame(&mut self) -> Result<(), WriteError> {
        let Some(frame) = self.frame.take() else {
            return Ok(());
        };
        let time = frame.seconds.to_le_bytes();
        for p in &self.signals {
            if p.signal.lifecycle == Lifecycle::Dynamic && !p.seen {
                self.report.loss.add(&p.channel, &p.field, NO_VALUE_YET);
            }
        }
        let t = f64::from_le_bytes(time);
        self.t_first.get_or_insert(t);
        self.t_last = Some(t);
        self.frames += 1;
        if self.layouts.len() == 1 {
            // Else the frames are hashed as they are widened at the end.
            self.hasher.update(time);
            self.hasher.update(&self.dynamic_block);
        }
        self.dynamic_bytes += 8 + self.dynamic_block.len() as u64;
        let e = io(&self.target);
        let w: &mut dyn Write = match &mut self.out {
            Out::Directory { dynamic, .. } => dynamic,
            Out::Tar { dest, .. } => dest,
            Out::TarAtEnd { frames, .. } => frames,
        };
        w.write_all(&time).map_err(&e)?;
        w.write_all(&self.dynamic_block).map_err(&e)
    }

    /// Stores `value` in signal `k`'s place; whether the block kept its bytes (the value is
    /// the one they hold) when `keep` asks for it.
    fn store(&mut self, k: usize, value: &Value, keep: bool) -> Option<bool> {
        let p = &self.signals[k];
        let (ty, at, size) = (
            p.signal.ty,
            p.signal.offset as usize,
            p.signal.size as usize,
        );
        let block = match p.signal.lifecycle {
            Lifecycle::Dynamic => &mut self.dynamic_block,
            Lifecycle::Static => &mut self.static_block,
        };
        let place = &mut block[at..at + size];
        self.scratch.clear();
        self.scratch.extend_from_slice(place);
        let fit = codec::encode(ty, value, &mut self.scratch);
        let (channel, field) = (&p.channel, &p.field);
        let loss = &mut self.report.loss;
        match fit {
            Fit::Mismatch => {
                loss.add(
                    channel,
                    field,
                    &format!(
                        "a {} value is not a {ty}: the previous value is held",
                        value.kind_name()
                    ),
                );
                return None;
            }
            Fit::Lossy => loss.add(
                channel,
                field,
                &format!("not exactly representable as {ty}"),
            ),
            Fit::Widened => loss.widen(channel, field, &format!("stored as {ty}")),
            Fit::Exact => {}
        }
        if keep {
            // The original bytes already hold this value (bit for bit, or with the slot's
            // own padding): keep them.
            if self.scratch.as_slice() == &*place {
                self.signals[k].seen = true;
                return Some(true);
            }
            codec::decode(ty, place, &mut self.scratch_value);
            if same_value(&self.scratch_value, value) {
                self.signals[k].seen = true;
                return Some(true);
            }
        }
        place.copy_from_slice(&self.scratch);
        self.signals[k].seen = true;
        Some(false)
    }
}

/// Whether two entities are the same, by pointer first (an `.icarec` reader hands out one
/// shared name per signal).
fn same_entity(a: &Option<Entity>, b: &Option<Entity>) -> bool {
    match (a, b) {
        (Some(Entity::Name(x)), Some(Entity::Name(y))) => std::sync::Arc::ptr_eq(x, y) || x == y,
        _ => a == b,
    }
}

/// Bitwise equality of two values (a NaN equals the same NaN).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::F32(x), Value::F32(y)) => x.to_bits() == y.to_bits(),
        (Value::Array(x), Value::Array(y)) => match (&x.data, &y.data) {
            (crate::model::ArrayData::F64(p), crate::model::ArrayData::F64(q)) => {
                p.len() == q.len() && p.iter().zip(q).all(|(a, b)| a.to_bits() == b.to_bits())
            }
            (crate::model::ArrayData::F32(p), crate::model::ArrayData::F32(q)) => {
                p.len() == q.len() && p.iter().zip(q).all(|(a, b)| a.to_bits() == b.to_bits())
            }
            _ => x == y,
        },
        _ => a == b,
    }
}

impl Sink for IcarecWriter {
    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        let Some(plan) = self.plans.get_mut(record.channel as usize) else {
            for (key, _) in &record.values {
                self.report.loss.add(
                    &format!("#{}", record.channel),
                    key,
                    "channel not in the schema",
                );
            }
            return Ok(());
        };
        match &plan.entity {
            None => {
                plan.entity = Some(record.entity.clone());
                plan.others = format!(
                    "another entity: a signal holds one value per frame; entity {}'s are written",
                    record
                        .entity
                        .as_ref()
                        .map_or("(none)".to_string(), |e| e.to_string())
                );
            }
            Some(e) if !same_entity(e, &record.entity) => {
                for (key, _) in &record.values {
                    self.report.loss.add(&plan.name, key, &plan.others);
                }
                return Ok(());
            }
            Some(_) => {}
        }
        // Where each value goes, before anything is stored.
        // Reused: no allocation per record.
        let mut targets = std::mem::take(&mut self.targets);
        targets.clear();
        let mut dynamic = false;
        for (i, (key, _)) in record.values.iter().enumerate() {
            // Values mostly come in the order the fields were declared: that place first.
            let field = plan
                .fields
                .get(i)
                .filter(|(f, _)| f == key)
                .or_else(|| plan.fields.iter().find(|(f, _)| f == key));
            match field.map(|(_, t)| t) {
                Some(Target::Signal(k)) => {
                    dynamic |= self.signals[*k].signal.lifecycle == Lifecycle::Dynamic;
                    targets.push((i, *k));
                }
                Some(Target::Dropped(why)) => self.report.loss.add(&plan.name, key, why),
                None => self.report.loss.add(
                    &plan.name,
                    key,
                    "field not declared before the first record: not in the schema",
                ),
            }
        }
        if targets.is_empty() {
            self.targets = targets;
            return Ok(());
        }
        let mut verbatim = true;
        if dynamic {
            let new_frame = self
                .frame
                .as_ref()
                .is_none_or(|f| f.time != record.time || f.frame != record.frame);
            if new_frame {
                self.flush_frame()?;
                let mut frame = Frame {
                    time: record.time,
                    frame: record.frame,
                    seconds: record.seconds(),
                    verbatim: false,
                };
                if let Some(raw) = record.raw.as_ref().filter(|r| {
                    self.source_layout
                        && r.format == RAW_FRAME
                        && r.bytes.len() == 8 + self.dynamic_block.len()
                }) {
                    self.dynamic_block.copy_from_slice(&raw.bytes[8..]);
                    frame.verbatim = true;
                }
                self.frame = Some(frame);
            }
            verbatim = self.frame.as_ref().is_some_and(|f| f.verbatim);
        } else if let Some(raw) = record.raw.as_ref().filter(|r| {
            self.source_layout
                && !self.static_from_raw
                && r.format == RAW_STATIC
                && r.bytes.len() == self.static_block.len()
        }) {
            self.static_block.copy_from_slice(&raw.bytes);
            self.static_from_raw = true;
        } else {
            verbatim = self.static_from_raw;
        }
        let mut all_kept = true;
        for &(i, k) in &targets {
            match self.store(k, &record.values[i].1, verbatim) {
                Some(true) => {}
                Some(false) | None => all_kept = false,
            }
        }
        self.targets = targets;
        if dynamic && !all_kept {
            if let Some(f) = &mut self.frame {
                f.verbatim = false;
            }
        }
        self.report.records += 1;
        if verbatim && all_kept {
            self.report.verbatim += 1;
        }
        Ok(())
    }

    fn add_channel(&mut self, channel: &Channel) -> Result<(), WriteError> {
        if matches!(self.out, Out::Tar { .. }) {
            // The schema member is written: a channel announced later has no place in it.
            let why = "channel announced after the schema was written: not in the schema";
            self.plans.push(ChannelPlan {
                name: channel.name.clone(),
                fields: channel
                    .fields
                    .iter()
                    .map(|f| (f.name.clone(), Target::Dropped(why.into())))
                    .collect(),
                entity: None,
                others: String::new(),
            });
            return Ok(());
        }
        // Its dynamic signals go at the end of the block; the frames before are widened at
        // the end.
        let first = self.signals.len();
        let late = "static signal announced after the first frame: the static block is laid out";
        let plan = plan_channel(channel, &mut self.signals, &mut self.names, Some(late));
        for p in &mut self.signals[first..] {
            p.signal.offset = self.dynamic_block.len() as u64;
            let size = self.dynamic_block.len() + p.signal.size as usize;
            self.dynamic_block.resize(size, 0);
            self.report
                .loss
                .add_n(&p.channel, &p.field, NO_VALUE_YET, self.frames);
        }
        if self.signals.len() > first {
            self.layouts.push((self.frames, self.dynamic_block.len()));
        }
        self.plans.push(plan);
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<WriteReport, WriteError> {
        self.flush_frame()?;
        for p in &self.signals {
            if p.signal.lifecycle == Lifecycle::Static && !p.seen {
                self.report.loss.add(
                    &p.channel,
                    &p.field,
                    "static signal without a value: written as 0",
                );
            }
        }
        let width = self.dynamic_block.len();
        let grown = self.layouts.len() > 1;
        let schema_bytes = match grown || matches!(self.out, Out::TarAtEnd { .. }) {
            true => self.schema_bytes()?,
            false => Vec::new(),
        };
        let target = self.target.clone();
        let e = io(&target);
        // The dynamic file as it must be, and its SHA-256: frames before a signal was added
        // are widened.
        let layouts = std::mem::take(&mut self.layouts);
        let (frames, mut hasher) = (self.frames, std::mem::take(&mut self.hasher));
        match &mut self.out {
            Out::Directory { dir, dynamic } => {
                dynamic.flush().map_err(&e)?;
                if grown {
                    let path = dir.join(DYNAMIC_FILE);
                    let narrow = dir.join(format!("{DYNAMIC_FILE}.narrow"));
                    fs::rename(&path, &narrow).map_err(&e)?;
                    let file = File::create(&path).map_err(&e)?;
                    let mut wide = BufWriter::with_capacity(1 << 20, file);
                    let from = File::open(&narrow).map_err(&e)?;
                    (self.dynamic_bytes, hasher) =
                        widen(from, &mut wide, &layouts, frames, width).map_err(&e)?;
                    wide.flush().map_err(&e)?;
                    fs::remove_file(&narrow).map_err(&e)?;
                    fs::write(dir.join(schema::FILE), &schema_bytes).map_err(&e)?;
                }
            }
            Out::Tar { .. } => {}
            Out::TarAtEnd {
                dest,
                frames: spool,
                mtime,
            } => {
                spool.flush().map_err(&e)?;
                let from = spool.get_mut();
                from.seek(SeekFrom::Start(0)).map_err(&e)?;
                ustar::member(dest, schema::FILE, &schema_bytes, *mtime).map_err(&e)?;
                ustar::member(dest, STATIC_FILE, &self.static_block, *mtime).map_err(&e)?;
                let bytes = frames * (8 + width as u64);
                dest.write_all(&ustar::header(DYNAMIC_FILE, bytes, *mtime).map_err(&e)?)
                    .map_err(&e)?;
                (self.dynamic_bytes, hasher) =
                    widen(from, dest, &layouts, frames, width).map_err(&e)?;
            }
        }
        let dynamic_sha = hex(&hasher.finalize());
        let static_sha = hex(&Sha256::digest(&self.static_block));
        let mut m = std::mem::take(&mut self.base_metadata);
        m.insert(
            "producer".into(),
            json!(format!("simrec {}", env!("CARGO_PKG_VERSION"))),
        );
        m.insert("frame_count".into(), json!(self.frames));
        match (self.t_first, self.t_last) {
            (Some(a), Some(b)) => {
                m.insert("t_first".into(), metadata::time_json(a));
                m.insert("t_last".into(), metadata::time_json(b));
            }
            _ => {
                m.remove("t_first");
                m.remove("t_last");
            }
        }
        m.insert("complete".into(), json!(true));
        m.insert(
            "files".into(),
            json!({
                STATIC_FILE: {"bytes": self.static_block.len(), "sha256": static_sha},
                DYNAMIC_FILE: {"bytes": self.dynamic_bytes, "sha256": dynamic_sha},
            }),
        );
        m.insert("source".into(), std::mem::take(&mut self.provenance));
        let mut meta_bytes =
            serde_json::to_vec_pretty(&Json::Object(m)).map_err(WriteError::encoder)?;
        meta_bytes.push(b'\n');
        match &mut self.out {
            Out::Directory { dir, .. } => {
                fs::write(dir.join(STATIC_FILE), &self.static_block).map_err(&e)?;
                fs::write(dir.join(metadata::FILE), &meta_bytes).map_err(&e)?;
            }
            Out::TarAtEnd { dest, mtime, .. } => {
                let pad = ustar::padding(self.dynamic_bytes);
                dest.write_all(&[0u8; ustar::BLOCK as usize][..pad])
                    .map_err(&e)?;
                ustar::member(dest, metadata::FILE, &meta_bytes, *mtime).map_err(&e)?;
                ustar::end(dest).map_err(&e)?;
                dest.flush().map_err(&e)?;
            }
            Out::Tar {
                dest,
                static_at,
                dynamic_header_at,
                mtime,
            } => {
                let pad = ustar::padding(self.dynamic_bytes);
                dest.write_all(&[0u8; ustar::BLOCK as usize][..pad])
                    .map_err(&e)?;
                ustar::member(dest, metadata::FILE, &meta_bytes, *mtime).map_err(&e)?;
                ustar::end(dest).map_err(&e)?;
                dest.seek(SeekFrom::Start(*static_at)).map_err(&e)?;
                dest.write_all(&self.static_block).map_err(&e)?;
                dest.seek(SeekFrom::Start(*dynamic_header_at)).map_err(&e)?;
                dest.write_all(
                    &ustar::header(DYNAMIC_FILE, self.dynamic_bytes, *mtime).map_err(&e)?,
                )
                .map_err(&e)?;
                dest.seek(SeekFrom::End(0)).map_err(&e)?;
                dest.flush().map_err(&e)?;
            }
        }
        Ok(std::mem::take(&mut self.report))
    }
}

/// Places the signals: the source's layout when every one of its signals arrives as it
/// was, else contiguous offsets in signal order with canonical sizes. (dynamic block bytes,
/// static block bytes, whether the source's layout was kept.)
fn lay_out(signals: &mut [Planned], source_schema: Option<&Map<String, Json>>) -> (u64, u64, bool) {
    // The source's layout when every one of its signals arrives as it was; else
    // contiguous offsets in signal order with canonical sizes.
    let kept = source_schema
        .and_then(|o| schema::parse(Json::Object(o.clone()).to_string().as_bytes()).ok())
        .filter(|(s, _)| {
            // Gaps are copied as they are, but a block is allocated whole: a declared
            // size far beyond its signals (damage) is not kept.
            let gap = |lifecycle: Lifecycle, block: u64| {
                let used: u64 = s
                    .signals
                    .iter()
                    .filter(|x| x.lifecycle == lifecycle)
                    .map(|x| x.size)
                    .sum();
                block.saturating_sub(used) <= MAX_KEPT_GAP
            };
            gap(Lifecycle::Dynamic, s.dynamic_block)
                && gap(Lifecycle::Static, s.static_block)
                && s.unreadable == 0
                && s.signals.len() == signals.len()
                && s.signals.iter().zip(signals.iter()).all(|(a, b)| {
                    a.name == b.signal.name
                        && a.ty == b.signal.ty
                        && a.lifecycle == b.signal.lifecycle
                        && a.units == b.signal.units
                })
        });
    let (dynamic_len, static_len) = match &kept {
        Some((s, _)) => {
            for (p, src) in signals.iter_mut().zip(&s.signals) {
                p.signal.offset = src.offset;
                p.signal.size = src.size;
            }
            (s.dynamic_block, s.static_block)
        }
        None => {
            let (mut d, mut st) = (0u64, 0u64);
            for p in signals.iter_mut() {
                let at = match p.signal.lifecycle {
                    Lifecycle::Dynamic => &mut d,
                    Lifecycle::Static => &mut st,
                };
                p.signal.offset = *at;
                *at += p.signal.size;
            }
            (d, st)
        }
    };
    (dynamic_len, static_len, kept.is_some())
}

/// `schema.json`: the source's object with what simrec must change, new keys last; and its
/// bytes (the source's text when nothing changed). `grows`: a mapped source whose layout
/// may grow, whose schema is written again at the end.
fn schema_json(
    header: &Header,
    source: Option<&Json>,
    signals: &[Planned],
    (dynamic_len, static_len): (u64, u64),
    grows: bool,
) -> Result<(Map<String, Json>, Vec<u8>), WriteError> {
    let source_schema = source
        .and_then(|s| s.get("schema"))
        .and_then(Json::as_object);
    let mut object = source_schema.cloned().unwrap_or_else(|| {
        let mut o = Map::new();
        o.insert("schema_version".into(), json!(SCHEMA_VERSION));
        o.insert("icarus_version".into(), json!(ICARUS_VERSION));
        o.insert("created_at".into(), json!(now()));
        o
    });
    let time = time_json(header, object.get("time"));
    object.insert("time".into(), time);
    object.insert("byte_order".into(), json!("little"));
    // A mapped source may announce components after the first instant
    // (`icarus::mapping`): the layout then grows, and the tar form, whose
    // schema member comes first, is assembled at the end. Its schema (never a source's)
    // is kept with its signals' place, to be written again.
    let bytes = if grows {
        object.insert("signals".into(), Json::Null);
        object.insert("dynamic_block_bytes".into(), json!(dynamic_len));
        object.insert("static_block_bytes".into(), json!(static_len));
        object.insert("checksum".into(), Json::Null);
        render_with(&mut object, signals)?
    } else {
        // The source's signal objects by name (the first of a name, as a search finds).
        let mut source_signals: HashMap<&str, &Map<String, Json>> = HashMap::new();
        let listed = source_schema
            .and_then(|o| o.get("signals"))
            .and_then(Json::as_array);
        for object in listed.into_iter().flatten().filter_map(Json::as_object) {
            if let Some(name) = object.get("name").and_then(Json::as_str) {
                source_signals.entry(name).or_insert(object);
            }
        }
        let signal_objects: Vec<Json> = signals
            .iter()
            .map(|p| {
                let source = source_signals.get(p.signal.name.as_str()).copied();
                signal_object(&p.signal, source)
            })
            .collect();
        let checksum = schema::checksum(&signal_objects);
        object.insert("signals".into(), Json::Array(signal_objects));
        object.insert("dynamic_block_bytes".into(), json!(dynamic_len));
        object.insert("static_block_bytes".into(), json!(static_len));
        object.insert("checksum".into(), json!(checksum));
        // Nothing had to change (a slice, a copy): the source's text, byte for byte
        // (spec §A14). A key simrec adds that the source leaves out holds what the
        // source implies.
        let implied = source_schema.map(|source| {
            let mut source = source.clone();
            for key in ["byte_order", "dynamic_block_bytes", "static_block_bytes"] {
                if let (false, Some(v)) = (source.contains_key(key), object.get(key)) {
                    source.insert(key.into(), v.clone());
                }
            }
            source
        });
        let unchanged = implied.as_ref() == Some(&object);
        let source_text = source
            .and_then(|s| s.get("schema_text"))
            .and_then(Json::as_str)
            .filter(|_| unchanged);
        match source_text {
            Some(text) => text.as_bytes().to_vec(),
            None => render(&object)?,
        }
    };
    Ok((object, bytes))
}

/// Where the recording comes from, for `metadata.json`: the slice it is, or a conversion.
fn provenance(header: &Header, source: Option<&Json>) -> Json {
    match source.and_then(|s| s.get("slice")) {
        Some(Json::Object(slice)) => {
            let mut o = Map::new();
            o.insert("kind".into(), json!("slice"));
            o.extend(slice.clone());
            Json::Object(o)
        }
        _ => json!({"kind": "convert", "from_format": header.format}),
    }
}
