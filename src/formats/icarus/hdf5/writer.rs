//! Writes the Vulcan layout (spec §B5): `/time` and one `/signals/<dotted.name>` dataset per
//! scalar (composites expanded with the §A3 component names), each chunked (1000,) with an
//! unlimited maximum shape and no filters, `unit` / `semantic` as variable-length string
//! attributes, `/metadata` `schema` (valid JSON in Vulcan's shape) and `created_at`.
//!
//! The layout comes from the header's declared fields (the pipeline completes them first:
//! `needs_schema`). The file's skeleton is written by hdf5-pure's `FileBuilder`, then frames
//! are appended in place one chunk (1000 frames) of every dataset at a time, so memory holds
//! one chunk per dataset. A frame is every record with the same time; a signal without a
//! record in a frame holds its previous value.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use hdf5_pure::{
    AttrValue, DatasetBuilder, FileAccessProperties, FileBuilder, MaxExtent, SyncPolicy,
};

use super::layout::{EPOCH_ATTR, SYSTEM_ATTR};
use super::reader::WINDOW;
use super::schema::{self, SchemaSignal};
use crate::formats::icarus::common::{entity_and_field, expanded_names, Element, Kind, SignalType};
use crate::formats::output::Outputs;
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::{Array, ArrayData, Channel, Entity, FieldSpec, Header, Nanos, Record, Value};
use crate::report::LossReport;

/// How a column stores its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Store {
    F64,
    I32,
    I64,
}

impl Store {
    fn of(element: Element) -> Store {
        match element {
            Element::Double | Element::Float => Store::F64,
            Element::Int32 | Element::Bool => Store::I32,
            Element::Int64 => Store::I64,
        }
    }

    fn vulcan_type(self) -> &'static str {
        match self {
            Store::F64 => "double",
            Store::I32 => "int32",
            Store::I64 => "int64",
        }
    }
}

/// A value held by a column: the bits of an f64, or an integer.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Slot {
    F(f64),
    I(i64),
}

/// One output dataset.
pub(super) struct Column {
    dataset: hdf5_pure::Dataset,
    pub(super) store: Store,
    /// Its value in the frame being assembled (held from the previous frames).
    current: Slot,
    has_value: bool,
    set_in_frame: bool,
    /// Frames written before the first value (NaN or 0): lost.
    before_first: u64,
    /// Frames in the file before the column was added: written as NaN or 0 first.
    backfill: u64,
    pub(super) f64s: Vec<f64>,
    pub(super) i32s: Vec<i32>,
    pub(super) i64s: Vec<i64>,
}

/// Bytes of values held for all columns before they are appended: a chunk (1000 frames)
/// of each up to 2,097 signals; fewer frames at a time past that (27,000 signals held a
/// chunk each in 216 MiB).
const BUFFERED: usize = 16 << 20;

/// Frames held before they are appended, for `columns` columns.
fn window(columns: usize) -> usize {
    (BUFFERED / 8 / columns.max(1)).clamp(1, WINDOW as usize)
}

impl Column {
    fn new(dataset: hdf5_pure::Dataset, store: Store, cap: usize) -> Column {
        Column {
            dataset,
            store,
            current: match store {
                Store::F64 => Slot::F(f64::NAN),
                _ => Slot::I(0),
            },
            has_value: false,
            set_in_frame: false,
            before_first: 0,
            backfill: 0,
            f64s: Vec::with_capacity(if store == Store::F64 { cap } else { 0 }),
            i32s: Vec::with_capacity(if store == Store::I32 { cap } else { 0 }),
            i64s: Vec::with_capacity(if store == Store::I64 { cap } else { 0 }),
        }
    }

    fn push_frame(&mut self) {
        if !self.set_in_frame && !self.has_value {
            self.before_first += 1;
        }
        self.set_in_frame = false;
        match (self.store, self.current) {
            (Store::F64, Slot::F(x)) => self.f64s.push(x),
            (Store::I32, Slot::I(x)) => self.i32s.push(x as i32),
            (Store::I64, Slot::I(x)) => self.i64s.push(x),
            // Never mixed: `set` converts to the column's store.
            (Store::F64, Slot::I(x)) => self.f64s.push(x as f64),
            (_, Slot::F(_)) => self.i64s.push(0),
        }
    }

    fn set(&mut self, slot: Slot) {
        self.current = slot;
        self.has_value = true;
        self.set_in_frame = true;
    }

    fn flush(&mut self) -> Result<(), hdf5_pure::Error> {
        while self.backfill > 0 {
            let n = self.backfill.min(WINDOW) as usize;
            match self.store {
                Store::F64 => self.dataset.append(&vec![f64::NAN; n])?,
                Store::I32 => self.dataset.append(&vec![0i32; n])?,
                Store::I64 => self.dataset.append(&vec![0i64; n])?,
            }
            self.backfill -= n as u64;
        }
        match self.store {
            Store::F64 if !self.f64s.is_empty() => self.dataset.append(&self.f64s)?,
            Store::I32 if !self.i32s.is_empty() => self.dataset.append(&self.i32s)?,
            Store::I64 if !self.i64s.is_empty() => self.dataset.append(&self.i64s)?,
            _ => {}
        }
        self.f64s.clear();
        self.i32s.clear();
        self.i64s.clear();
        Ok(())
    }
}

/// A declared field written to columns `first..first + count`.
pub(super) struct FieldBinding {
    key: String,
    pub(super) ty: SignalType,
    pub(super) first: usize,
    /// Records whose value was kept in a wider type (`float`, `bool`).
    pub(super) widened: u64,
    /// Records whose value did not fit the declared type: not written (the previous value
    /// holds).
    mismatched: u64,
}

/// What one channel of the source becomes.
#[derive(Default)]
pub(super) struct ChannelBinding {
    name: String,
    pub(super) fields: Vec<FieldBinding>,
    /// The entity whose records the columns hold (the first one seen).
    entity: Option<Option<Entity>>,
    /// Records of other entities: not written.
    other_entities: u64,
    /// Keys the header did not declare with a type the profile has, and their records.
    pub(super) dropped: BTreeMap<String, (u64, &'static str)>,
    /// Announced after the layout was written: nothing of it is written.
    late: u64,
    is_late: bool,
}

/// A field the header declares that has no column, and why.
fn unwritable(spec: &FieldSpec) -> &'static str {
    if spec.dtype.is_none() || spec.shape.is_none() {
        "type not declared before the first record: no dataset for it"
    } else {
        "type not in the Icarus profile (double, float, int32, int64, bool, Vec3, Quat, Mat3): no dataset for it"
    }
}

pub struct IcarusH5Writer {
    file: Option<hdf5_pure::File>,
    path: PathBuf,
    time: Option<hdf5_pure::Dataset>,
    pub(super) times: Vec<f64>,
    pub(super) columns: Vec<Column>,
    /// The datasets and channels laid out, with the (channel, field) of each column.
    pub(super) plan: Plan,
    /// Signals the schema attribute was written with: those after were added later.
    declared: usize,
    /// Datasets staged and not yet committed.
    staged: bool,
    /// Frames in the file.
    flushed: u64,
    /// The frame being assembled: its model time and its time in seconds.
    frame: Option<(Nanos, f64)>,
    pub(super) records: u64,
    loss: LossReport,
}

/// The dataset name of a signal: `/` is a group separator in HDF5, so it becomes `.`.
fn dataset_name(signal: &str) -> String {
    signal.replace('/', ".")
}

/// The signal a (channel, field) is written as: the channel's name when the channel is one
/// Icarus signal (its one field named by the last segment, spec §A10), else `channel.field`.
fn signal_name(channel: &Channel, field: &FieldSpec) -> String {
    let (_, last) = entity_and_field(&channel.name);
    if channel.fields.len() == 1 && last == field.name {
        channel.name.clone()
    } else {
        format!("{}.{}", channel.name, field.name)
    }
}

/// What `create` lays out: the columns in order, with their schema entries.
#[derive(Default)]
pub(super) struct Plan {
    schema: Vec<SchemaSignal>,
    pub(super) channels: Vec<ChannelBinding>,
    owners: Vec<(usize, usize)>,
    stores: Vec<Store>,
    /// Dataset names taken.
    taken: BTreeSet<String>,
}

pub(super) fn plan(header: &Header) -> Plan {
    let mut plan = Plan::default();
    for channel in &header.channels {
        plan.add(channel);
    }
    plan
}

impl Plan {
    /// Lays out `channel`'s signals after the columns planned so far.
    fn add(&mut self, channel: &Channel) {
        let ci = self.channels.len();
        let mut binding = ChannelBinding {
            name: channel.name.clone(),
            ..ChannelBinding::default()
        };
        for spec in &channel.fields {
            let Some(ty) = SignalType::of_field(spec) else {
                binding
                    .dropped
                    .insert(spec.name.clone(), (0, unwritable(spec)));
                continue;
            };
            let names: Vec<String> = expanded_names(&signal_name(channel, spec), ty)
                .iter()
                .map(|n| dataset_name(n))
                .collect();
            if names
                .iter()
                .any(|n| n.is_empty() || n == "." || self.taken.contains(n))
            {
                binding.dropped.insert(
                    spec.name.clone(),
                    (0, "its dataset name is empty or taken by another signal"),
                );
                continue;
            }
            let store = Store::of(ty.element);
            let semantic = if ty.element == Element::Bool {
                Some("boolean".to_string())
            } else {
                spec.semantic.clone()
            };
            let first = self.stores.len();
            for name in names {
                self.taken.insert(name.clone());
                self.schema.push(SchemaSignal {
                    name,
                    ty: Some(store.vulcan_type().into()),
                    lifecycle: Some(if spec.is_static { "static" } else { "dynamic" }.into()),
                    offset: None,
                    unit: spec.unit.clone().filter(|u| !u.is_empty()),
                    semantic: semantic.clone().filter(|s| !s.is_empty()),
                });
                self.stores.push(store);
                self.owners.push((ci, binding.fields.len()));
            }
            binding.fields.push(FieldBinding {
                key: spec.name.clone(),
                ty,
                first,
                widened: 0,
                mismatched: 0,
            });
        }
        self.channels.push(binding);
    }
}

/// The file's skeleton: every dataset empty, chunked (1000,), unlimited, and `/metadata`
/// with its text attributes.
fn skeleton(schema: &[SchemaSignal], stores: &[Store], metadata: &[(&str, String)]) -> FileBuilder {
    let mut b = FileBuilder::new();
    b.create_dataset("time")
        .with_f64_data(&[])
        .with_shape(&[0])
        .with_maxshape(&[MaxExtent::Unlimited])
        .with_chunks(&[WINDOW]);
    let mut signals = b.create_group("signals");
    for (s, store) in schema.iter().zip(stores) {
        empty_signal(signals.create_dataset(&s.name), s, *store);
    }
    b.add_group(signals.finish());
    let mut group = b.create_group("metadata");
    group.set_attr("schema", AttrValue::VarLenString(schema::render(schema)));
    for (name, text) in metadata {
        group.set_attr(name, AttrValue::VarLenString(text.clone()));
    }
    b.add_group(group.finish());
    b
}

/// A signal's dataset, empty: chunked (1000,), unlimited, its unit and semantic attributes.
fn empty_signal(d: &mut DatasetBuilder, s: &SchemaSignal, store: Store) {
    match store {
        Store::F64 => d.with_f64_data(&[]),
        Store::I32 => d.with_i32_data(&[]),
        Store::I64 => d.with_i64_data(&[]),
    };
    d.with_shape(&[0])
        .with_maxshape(&[MaxExtent::Unlimited])
        .with_chunks(&[WINDOW]);
    if let Some(u) = &s.unit {
        d.set_attr("unit", AttrValue::VarLenString(u.clone()));
    }
    if let Some(m) = &s.semantic {
        d.set_attr("semantic", AttrValue::VarLenString(m.clone()));
    }
}

fn h5_error(path: &Path, what: &str, e: hdf5_pure::Error) -> WriteError {
    WriteError::io(path, std::io::Error::other(format!("{what}: {e}")))
}

/// `/metadata`'s text attributes besides the schema: `created_at` (an Icarus HDF5 source's
/// own, else the write time), and the absolute start where the recording has one.
fn metadata(header: &Header) -> Vec<(&'static str, String)> {
    let own = header
        .metadata
        .get("created_at")
        .and_then(|c| c.as_str())
        .filter(|_| header.format == super::NAME);
    let mut attrs = vec![("created_at", own.map_or_else(now_utc, str::to_string))];
    if let Some(epoch) = header.origin.epoch {
        let system = header.origin.system.as_deref().unwrap_or("UTC");
        attrs.push((EPOCH_ATTR, epoch.iso8601()));
        attrs.push((SYSTEM_ATTR, system.to_string()));
    }
    attrs
}

/// The write time, as Vulcan writes it: `YYYY-MM-DDTHH:MM:SSZ`.
fn now_utc() -> String {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64);
    crate::model::iso8601(ns, Some(0))
}

impl IcarusH5Writer {
    pub fn create(
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<IcarusH5Writer, WriteError> {
        let plan = plan(header);
        let path = outputs.create_path(target)?;
        skeleton(&plan.schema, &plan.stores, &metadata(header))
            .write(&path)
            .map_err(|e| h5_error(target, "cannot write the HDF5 layout", e))?;
        let file = hdf5_pure::File::open_rw_with_options(
            &path,
            FileAccessProperties::new().with_sync_policy(SyncPolicy::OnClose),
        )
        .map_err(|e| h5_error(target, "cannot reopen the HDF5 file to append", e))?;
        let open = |name: &str| {
            file.dataset(name)
                .map_err(|e| h5_error(target, &format!("cannot open {name}"), e))
        };
        let time = open("time")?;
        // One walk of the group: opening each dataset by name reads the whole link list of
        // a compact group every time (docs/performance.md, "Icarus HDF5").
        let mut datasets: HashMap<String, hdf5_pure::Dataset> = file
            .group("signals")
            .and_then(|g| g.iter_datasets())
            .map_err(|e| h5_error(target, "cannot open /signals", e))?
            .collect();
        let mut columns = Vec::with_capacity(plan.stores.len());
        for s in &plan.schema {
            let dataset = datasets.remove(&s.name).ok_or_else(|| {
                WriteError::io(
                    target,
                    std::io::Error::other(format!("cannot open /signals/{}: not written", s.name)),
                )
            })?;
            let cap = window(plan.stores.len());
            columns.push(Column::new(dataset, plan.stores[columns.len()], cap));
        }
        Ok(IcarusH5Writer {
            file: Some(file),
            path: target.to_path_buf(),
            time: Some(time),
            times: Vec::with_capacity(WINDOW as usize),
            columns,
            declared: plan.schema.len(),
            plan,
            staged: false,
            flushed: 0,
            frame: None,
            records: 0,
            loss: LossReport::default(),
        })
    }

    fn end_frame(&mut self) -> Result<(), WriteError> {
        let Some((_, t)) = self.frame.take() else {
            return Ok(());
        };
        self.times.push(t);
        for c in &mut self.columns {
            c.push_frame();
        }
        if self.times.len() >= window(self.columns.len()) {
            self.flush()?;
        }
        Ok(())
    }

    pub(super) fn flush(&mut self) -> Result<(), WriteError> {
        if self.times.is_empty() && !self.staged {
            return Ok(());
        }
        let path = self.path.clone();
        if self.staged {
            if let Some(file) = &self.file {
                file.commit()
                    .map_err(|e| h5_error(&path, "cannot add the new signals' datasets", e))?;
            }
            self.staged = false;
        }
        self.flushed += self.times.len() as u64;
        if let Some(time) = &mut self.time {
            time.append(&self.times)
                .map_err(|e| h5_error(&path, "cannot append to /time", e))?;
        }
        self.times.clear();
        for c in &mut self.columns {
            c.flush()
                .map_err(|e| h5_error(&path, "cannot append to a signal", e))?;
        }
        Ok(())
    }
}

/// Whether two entities are the same, by address first (a reader hands every record of a
/// component the same name).
fn same_entity(a: &Option<Entity>, b: &Option<Entity>) -> bool {
    match (a, b) {
        (Some(Entity::Name(x)), Some(Entity::Name(y))) => std::sync::Arc::ptr_eq(x, y) || x == y,
        _ => a == b,
    }
}

/// A scalar as the column's store holds it, when it fits exactly; and whether that widened it.
fn scalar(value: &Value, element: Element) -> Option<(Slot, bool)> {
    let exact_f64 = |i: i64| {
        let f = i as f64;
        (f as i64 == i && f.abs() < 9.3e18).then_some(f)
    };
    Some(match (element, value) {
        (Element::Double, Value::Float(x)) => (Slot::F(*x), false),
        (Element::Double, Value::F32(x)) => (Slot::F(f64::from(*x)), false),
        (Element::Double, Value::Int(i)) => (Slot::F(exact_f64(*i)?), false),
        (Element::Float, Value::F32(x)) => (Slot::F(f64::from(*x)), true),
        (Element::Float, Value::Float(x)) => (Slot::F(*x), false),
        (Element::Int32, Value::Int(i)) => (Slot::I(i64::from(i32::try_from(*i).ok()?)), false),
        (Element::Int32, Value::UInt(u)) => (Slot::I(i64::from(i32::try_from(*u).ok()?)), false),
        (Element::Int64, Value::Int(i)) => (Slot::I(*i), false),
        (Element::Int64, Value::UInt(u)) => (Slot::I(i64::try_from(*u).ok()?), false),
        (Element::Bool, Value::Bool(b)) => (Slot::I(i64::from(*b)), true),
        (Element::Bool, Value::Int(i @ (0 | 1))) => (Slot::I(*i), false),
        _ => return None,
    })
}

/// Element `i` of an array as a value of its own.
fn element(data: &ArrayData, i: usize) -> Option<Value> {
    Some(match data {
        ArrayData::F64(v) => Value::Float(*v.get(i)?),
        ArrayData::F32(v) => Value::F32(*v.get(i)?),
        ArrayData::I32(v) => Value::Int(i64::from(*v.get(i)?)),
        ArrayData::I64(v) => Value::Int(*v.get(i)?),
        ArrayData::I16(v) => Value::Int(i64::from(*v.get(i)?)),
        ArrayData::I8(v) => Value::Int(i64::from(*v.get(i)?)),
        ArrayData::U8(v) => Value::Int(i64::from(*v.get(i)?)),
        ArrayData::U16(v) => Value::Int(i64::from(*v.get(i)?)),
        ArrayData::U32(v) => Value::Int(i64::from(*v.get(i)?)),
        ArrayData::U64(v) => Value::UInt(*v.get(i)?),
        ArrayData::Bool(v) => Value::Bool(*v.get(i)?),
        ArrayData::Str(_) => return None,
    })
}

/// The storage-order slots of a value of type `ty`, when it fits exactly: at most nine.
fn slots(value: &Value, ty: SignalType) -> Option<([Slot; 9], usize, bool)> {
    let mut out = [Slot::I(0); 9];
    if ty.kind == Kind::Scalar {
        let (slot, widened) = scalar(value, ty.element)?;
        out[0] = slot;
        return Some((out, 1, widened));
    }
    let Value::Array(Array { shape, data }) = value else {
        return None;
    };
    if shape.as_slice() != ty.shape() || data.len() != ty.count() {
        return None;
    }
    let mut widened = false;
    for (i, slot) in out.iter_mut().enumerate().take(ty.count()) {
        let (s, w) = scalar(&element(data, ty.model_index(i))?, ty.element)?;
        *slot = s;
        widened |= w;
    }
    Some((out, ty.count(), widened))
}

impl Sink for IcarusH5Writer {
    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        if self.frame.is_none_or(|(ns, _)| ns != record.time) {
            self.end_frame()?;
            self.frame = Some((record.time, record.seconds()));
        }
        let Some(binding) = self.plan.channels.get_mut(record.channel as usize) else {
            // A channel the writer was never told of.
            let binding = ChannelBinding {
                name: format!("channel {}", record.channel),
                is_late: true,
                late: 1,
                ..ChannelBinding::default()
            };
            while self.plan.channels.len() < record.channel as usize {
                self.plan.channels.push(ChannelBinding {
                    is_late: true,
                    ..ChannelBinding::default()
                });
            }
            self.plan.channels.push(binding);
            return Ok(());
        };
        if binding.is_late {
            binding.late += 1;
            return Ok(());
        }
        match &binding.entity {
            None => binding.entity = Some(record.entity.clone()),
            Some(e) if !same_entity(e, &record.entity) => {
                binding.other_entities += 1;
                return Ok(());
            }
            Some(_) => {}
        }
        let mut wrote = false;
        for (key, value) in &record.values {
            let Some(f) = binding.fields.iter_mut().find(|f| f.key == *key) else {
                let reason =
                    "field not declared with a type before the first record: no dataset for it";
                binding.dropped.entry(key.clone()).or_insert((0, reason)).0 += 1;
                continue;
            };
            match slots(value, f.ty) {
                Some((values, n, widened)) => {
                    for (c, v) in self.columns[f.first..f.first + n].iter_mut().zip(values) {
                        c.set(match (c.store, v) {
                            (Store::F64, Slot::I(i)) => Slot::F(i as f64),
                            (_, v) => v,
                        });
                    }
                    f.widened += u64::from(widened);
                    wrote = true;
                }
                None => f.mismatched += 1,
            }
        }
        self.records += u64::from(wrote);
        Ok(())
    }

    fn add_channel(&mut self, channel: &Channel) -> Result<(), WriteError> {
        // Its datasets are staged now and committed at the next flush; the frames before
        // it are NaN or 0 (counted).
        let first = self.plan.schema.len();
        self.plan.add(channel);
        let Some(file) = &self.file else {
            return Ok(());
        };
        let group = file
            .group("signals")
            .map_err(|e| h5_error(&self.path, "cannot open /signals", e))?;
        for i in first..self.plan.schema.len() {
            let (s, store) = (&self.plan.schema[i], self.plan.stores[i]);
            let dataset = group
                .create_dataset(&s.name, |d| {
                    empty_signal(d, s, store);
                })
                .map_err(|e| h5_error(&self.path, &format!("cannot add /signals/{}", s.name), e))?;
            let mut column = Column::new(dataset, store, window(self.plan.schema.len()));
            column.backfill = self.flushed;
            column.before_first = self.flushed;
            for _ in 0..self.times.len() {
                column.push_frame();
            }
            self.columns.push(column);
            self.staged = true;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<WriteReport, WriteError> {
        self.end_frame()?;
        self.flush()?;
        let path = self.path.clone();
        if let Some(file) = self.file.take() {
            if self.plan.schema.len() > self.declared {
                let text = schema::render(&self.plan.schema);
                file.group("metadata")
                    .and_then(|g| g.set_attr("schema", AttrValue::VarLenString(text)))
                    .and_then(|()| file.commit())
                    .map_err(|e| {
                        h5_error(&path, "cannot write the schema of the added signals", e)
                    })?;
            }
            // Every dataset handle goes before the session closes.
            let columns = std::mem::take(&mut self.columns);
            let before_first: Vec<u64> = columns.iter().map(|c| c.before_first).collect();
            drop(columns);
            drop(self.time.take());
            file.close()
                .map_err(|e| h5_error(&path, "cannot close the HDF5 file", e))?;
            for (i, n) in before_first.into_iter().enumerate() {
                let (ci, fi) = self.plan.owners[i];
                let c = &self.plan.channels[ci];
                // A composite's components are set together: count its frames once.
                if c.fields[fi].first != i {
                    continue;
                }
                self.loss.add_n(
                    &c.name,
                    &c.fields[fi].key,
                    "frames before the signal's first value: written as NaN (floats) or 0 (integers)",
                    n,
                );
            }
        }
        for c in &self.plan.channels {
            for f in &c.fields {
                let reason = match f.ty.element {
                    Element::Float => "float stored as float64",
                    Element::Bool => "bool stored as int32 with semantic \"boolean\"",
                    _ => "stored in a wider type",
                };
                self.loss.widen_n(&c.name, &f.key, reason, f.widened);
                self.loss.add_n(
                    &c.name,
                    &f.key,
                    &format!("value is not a {} (the previous value was written)", f.ty),
                    f.mismatched,
                );
            }
            for (key, (n, reason)) in &c.dropped {
                self.loss.add_n(&c.name, key, reason, *n);
            }
            self.loss.add_n(
                &c.name,
                "*",
                "records of a second entity: a Vulcan signal holds one value per frame (the first entity's are written)",
                c.other_entities,
            );
            self.loss.add_n(
                &c.name,
                "*",
                "channel announced after the file's layout was written",
                c.late,
            );
        }
        Ok(WriteReport {
            records: self.records,
            verbatim: 0,
            loss: self.loss,
            ..WriteReport::default()
        })
    }
}
