//! Writing DB directories Elodin 0.15 – 0.18 opens (docs/formats/elodin-db.md, "Writing"):
//! every numeric value of a record is a row of the component `<entity>.<key>` (a directory
//! named by the hash of that name, made at its first value), stamped in µs since the Unix
//! epoch; every record of an event channel is also a message of the log named after the
//! channel. The logs are compact (they end at their committed length); `db_state` is
//! written last. The directory is the temporary one `Outputs` renames into place.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value as Json;

use super::append::AppendLog;
use super::encode::{payload, put_row, schema_of};
use super::layout::{
    component_id, msg_id, ComponentMetadata, DbState, Duration, MsgMetadata, Primitive, Schema,
    UmbraBuf, BYTES_SCHEMA, NO_START,
};
use super::reader::HEADER_KEY;
use crate::formats::output::Outputs;
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::pose::entity_names;
use crate::model::{
    iso8601, Channel, ChannelKind, DType, Entity, FieldSpec, Header, Nanos, Record, Value,
};

/// Bytes all logs may hold in memory before every one is appended to its file.
const BUDGET: usize = 32 << 20;

/// Elodin's default stream step, for a source that is no DB (60 Hz, as its sims run).
const DEFAULT_STEP: Duration = Duration {
    secs: 0,
    nanos: 16_666_667,
};

/// What a value of a Signals channel that is no number loses.
const NOT_NUMERIC: &str = "not a number or numeric array: Elodin components hold numeric tensors";

/// A key and the component its values go to (`None`: no place).
type Slot = (String, Option<usize>);

/// A channel as the writer sees it.
struct ChannelInfo {
    name: String,
    events: bool,
    fields: Vec<FieldSpec>,
    /// Per source entity, its keys and the component each goes to.
    slots: Vec<(Option<Entity>, Vec<Slot>)>,
    /// Where each entity's slots are in `slots`.
    by_entity: HashMap<Option<Entity>, usize>,
    /// The slots of the channel's last record: most channels' records name one entity
    /// (a DB's component, an Icarus component), so most lookups need no hash.
    recent: usize,
    /// Its message log, once its first record came (`Some(None)`: it has none).
    log: Option<Option<usize>>,
}

struct Component {
    name: String,
    prim: Primitive,
    elements: usize,
    index: AppendLog,
    data: AppendLog,
    last_us: i64,
    /// Rows dropped for going back in time, and values that did not fit its type or shape.
    back: u64,
    misfit: u64,
}

struct MsgLog {
    name: String,
    timestamps: AppendLog,
    offsets: AppendLog,
    data_log: AppendLog,
    last_us: i64,
    back: u64,
    too_long: u64,
}

pub struct DbWriter {
    root: PathBuf,
    epoch_ns: i64,
    channels: Vec<ChannelInfo>,
    /// Entity names the source gives for its numbers (an Elodin replay's).
    entity_names: HashMap<u64, String>,
    components: Vec<Component>,
    by_name: HashMap<String, usize>,
    /// Component ids in use, with their names: two names of one id are refused.
    ids: HashMap<u64, String>,
    msgs: Vec<MsgLog>,
    msg_ids: HashMap<u16, String>,
    /// What a DB source said of itself (component and message-log metadata, `db_state`).
    source: Option<Json>,
    /// Bytes the logs hold in memory.
    pending: usize,
    first_us: Option<i64>,
    /// Records whose time had a part below the microsecond.
    sub_us: u64,
    report: WriteReport,
}

impl DbWriter {
    pub fn create(
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<DbWriter, WriteError> {
        let root = outputs.create_dir(target)?;
        let mut report = WriteReport::default();
        let epoch_ns = match header.origin.epoch {
            Some(e) => e.unix_ns,
            None => {
                let now_us = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(0));
                let now = now_us.saturating_mul(1000);
                report.warnings.push(format!(
                    "the recording has no absolute start: its times are written from the time \
                     of the conversion, {} (give one with --epoch)",
                    iso8601(now, Some(6))
                ));
                now
            }
        };
        let source = header
            .metadata
            .get(HEADER_KEY)
            .filter(|_| header.format == "elodin-db")
            .cloned();
        let mut writer = DbWriter {
            root,
            epoch_ns,
            channels: Vec::new(),
            entity_names: entity_names(header),
            components: Vec::new(),
            by_name: HashMap::new(),
            ids: HashMap::new(),
            msgs: Vec::new(),
            msg_ids: HashMap::new(),
            source,
            pending: 0,
            first_us: None,
            sub_us: 0,
            report,
        };
        for c in &header.channels {
            writer.add_channel(c)?;
        }
        Ok(writer)
    }

    /// The source DB's metadata map of its component or message log `name` (under
    /// `what`), but for the creation index, which follows the output's order.
    fn source_map(&self, what: &str, name: &str) -> Vec<(String, String)> {
        let Some(Json::Object(map)) = self
            .source
            .as_ref()
            .and_then(|s| s.get(what)?.get(name)?.get("metadata"))
        else {
            return Vec::new();
        };
        map.iter()
            .filter(|(k, _)| k.as_str() != "_creation_index")
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect()
    }

    /// The component of channel `ch`'s key `key` for `entity`, made at its first value.
    fn component(
        &mut self,
        ch: usize,
        entity: &Option<Entity>,
        key: &str,
        value: &Value,
    ) -> Result<Option<usize>, WriteError> {
        let channel = &mut self.channels[ch];
        let slot = match channel.slots.get(channel.recent) {
            Some((e, _)) if e == entity => Some(channel.recent),
            _ => channel.by_entity.get(entity).copied(),
        };
        if let Some(slot) = slot {
            channel.recent = slot;
            if let Some(found) = channel.slots[slot].1.iter().find(|(k, _)| k == key) {
                return Ok(found.1);
            }
        }
        let made = self.make_component(ch, entity, key, value)?;
        if made.is_none() && is_empty_array(value) {
            // Not remembered: a later value of the key may start its component.
            return Ok(None);
        }
        let channel = &mut self.channels[ch];
        let slot = *channel.by_entity.entry(entity.clone()).or_insert_with(|| {
            channel.slots.push((entity.clone(), Vec::new()));
            channel.slots.len() - 1
        });
        channel.slots[slot].1.push((key.to_string(), made));
        Ok(made)
    }

    fn make_component(
        &mut self,
        ch: usize,
        entity: &Option<Entity>,
        key: &str,
        value: &Value,
    ) -> Result<Option<usize>, WriteError> {
        let channel = &self.channels[ch];
        let spec = channel.fields.iter().find(|f| f.name == key);
        // What the source declares wins (an int32 signal stays int32), else the value's.
        let declared =
            spec.and_then(|f| Some((Primitive::from_dtype(f.dtype?)?, f.shape.clone()?)));
        let Some((prim, shape)) = declared.or_else(|| schema_of(value)) else {
            return Ok(None);
        };
        let elements = shape.iter().product::<usize>();
        // Elodin cannot serve a component whose rows are empty (its reader stops).
        if elements == 0 {
            return Ok(None);
        }
        let name = component_name(&channel.name, entity, key, &self.entity_names);
        if let Some(&c) = self.by_name.get(&name) {
            return Ok(Some(c));
        }
        let id = component_id(&name);
        if let Some(other) = self.ids.get(&id) {
            return Err(WriteError::encoder(format!(
                "components `{other}` and `{name}` have the same id {id} (Elodin names a \
                 component's directory by a 63-bit hash of its name): rename one"
            )));
        }
        let schema = Schema {
            prim,
            shape: shape.iter().map(|&d| d as u64).collect(),
        };
        let mut metadata = self.source_map("components", &name);
        let elements_named = spec
            .and_then(|f| f.elements.as_ref())
            .filter(|names| names.len() == elements);
        if let Some(names) = elements_named {
            if !metadata.iter().any(|(k, _)| k == "element_names") {
                metadata.push(("element_names".into(), names.join(",")));
            }
        }
        metadata.push(("_creation_index".into(), self.components.len().to_string()));
        let dir = self.root.join(id.to_string());
        fs::create_dir(&dir).map_err(|e| WriteError::io(&dir, e))?;
        write(&dir.join("schema"), &schema.encode())?;
        let meta = ComponentMetadata {
            component_id: id,
            name: name.clone(),
            metadata,
            asset: None,
        };
        write(&dir.join("metadata"), &meta.encode())?;
        let row_size = (elements * prim.size()) as u64;
        self.components.push(Component {
            name: name.clone(),
            prim,
            elements,
            index: AppendLog::create(dir.join("index"), Some(NO_START as u64))?,
            data: AppendLog::create(dir.join("data"), Some(row_size))?,
            last_us: i64::MIN,
            back: 0,
            misfit: 0,
        });
        self.ids.insert(id, name.clone());
        self.by_name.insert(name, self.components.len() - 1);
        Ok(Some(self.components.len() - 1))
    }

    /// Channel `ch`'s message log, made at its first record.
    fn msg_log(&mut self, ch: usize) -> Result<Option<usize>, WriteError> {
        if let Some(log) = self.channels[ch].log {
            return Ok(log);
        }
        let name = self.channels[ch].name.clone();
        let id = msg_id(&name);
        let made = match self.msg_ids.get(&id) {
            Some(other) => {
                let why = format!(
                    "its message log's id {id} is that of `{other}` (Elodin names a log by a \
                     16-bit hash of its name): its messages are not written"
                );
                self.report.loss.add(&name, "*", &why);
                None
            }
            None => {
                let dir = self.root.join("msgs").join(id.to_string());
                fs::create_dir_all(&dir).map_err(|e| WriteError::io(&dir, e))?;
                let meta = MsgMetadata {
                    name: name.clone(),
                    schema: BYTES_SCHEMA.to_vec(),
                    metadata: self.source_map("message_logs", &name),
                };
                write(&dir.join("metadata"), &meta.encode())?;
                self.msgs.push(MsgLog {
                    name: name.clone(),
                    timestamps: AppendLog::create(dir.join("timestamps"), None)?,
                    offsets: AppendLog::create(dir.join("offsets"), None)?,
                    data_log: AppendLog::create(dir.join("data_log"), None)?,
                    last_us: i64::MIN,
                    back: 0,
                    too_long: 0,
                });
                self.msg_ids.insert(id, name);
                Some(self.msgs.len() - 1)
            }
        };
        self.channels[ch].log = Some(made);
        Ok(made)
    }

    /// Appends every log's buffer to its file once together they hold the budget.
    pub(super) fn spill(&mut self) -> Result<(), WriteError> {
        if self.pending < BUDGET {
            return Ok(());
        }
        for c in &mut self.components {
            c.index.flush()?;
            c.data.flush()?;
        }
        for m in &mut self.msgs {
            m.timestamps.flush()?;
            m.offsets.flush()?;
            m.data_log.flush()?;
        }
        self.pending = 0;
        Ok(())
    }

    fn write_row(&mut self, c: usize, us: i64, value: &Value) -> Result<(), WriteError> {
        let comp = &mut self.components[c];
        if us < comp.last_us {
            comp.back += 1;
            return Ok(());
        }
        let before = comp.data.buf.len();
        if !put_row(&mut comp.data.buf, value, comp.prim, comp.elements) {
            comp.misfit += 1;
            return Ok(());
        }
        let added = comp.data.buf.len() - before;
        self.stamp_row(c, us, added)
    }

    /// Appends `row`, a row of component `c` as its data log holds it, at `us` (a frame's
    /// signal whose packing is the component's: `frame_write.rs`), as [`DbWriter::write_row`]
    /// does its value.
    pub(super) fn write_bytes(&mut self, c: usize, us: i64, row: &[u8]) -> Result<(), WriteError> {
        let comp = &mut self.components[c];
        if us < comp.last_us {
            comp.back += 1;
            return Ok(());
        }
        comp.data.buf.extend_from_slice(row);
        self.stamp_row(c, us, row.len())
    }

    /// The index entry of the `added` bytes just put in component `c`'s data buffer.
    fn stamp_row(&mut self, c: usize, us: i64, added: usize) -> Result<(), WriteError> {
        let comp = &mut self.components[c];
        comp.index.buf.extend_from_slice(&us.to_le_bytes());
        comp.last_us = us;
        self.pending += added + 8;
        self.pending -= comp.data.spill()? + comp.index.spill()?;
        Ok(())
    }

    /// A time as the rows are stamped (µs since the Unix epoch), counted for `records`
    /// records at it.
    pub(super) fn stamp(&mut self, time: Nanos, records: u64) -> i64 {
        let ns = self.epoch_ns.saturating_add(time);
        if ns.rem_euclid(1000) != 0 {
            self.sub_us += records;
        }
        let us = ns.div_euclid(1000);
        self.first_us.get_or_insert(us);
        self.report.records += records;
        us
    }

    /// The component whose rows are the values of channel `ch`'s key `key` for `entity`
    /// as packed in a frame (`count` elements of `dtype`, little-endian, row-major), once
    /// its first value (`value`) made it; `None` when such a value takes the record path
    /// (`Sink::write`): an event channel's, a bool (a row holds 0 or 1), another type or size.
    pub(super) fn packed_component(
        &mut self,
        ch: usize,
        entity: &Option<Entity>,
        key: &str,
        value: &Value,
        (dtype, count): (DType, usize),
    ) -> Result<Option<usize>, WriteError> {
        if self.channels.get(ch).is_none_or(|c| c.events) || dtype == DType::Bool {
            return Ok(None);
        }
        let Some(c) = self.component(ch, entity, key, value)? else {
            return Ok(None);
        };
        let comp = &self.components[c];
        let same = Primitive::from_dtype(dtype) == Some(comp.prim) && comp.elements == count;
        Ok(same.then_some(c))
    }

    fn write_message(
        &mut self,
        m: usize,
        us: i64,
        values: &[(String, Value)],
    ) -> Result<(), WriteError> {
        let log = &mut self.msgs[m];
        if us < log.last_us {
            log.back += 1;
            return Ok(());
        }
        let bytes = payload(values);
        let offset = u32::try_from(log.data_log.len()).ok();
        let Some(entry) = offset.and_then(|o| UmbraBuf::for_payload(&bytes, o)) else {
            // Offsets into `data_log` are 32-bit.
            log.too_long += 1;
            return Ok(());
        };
        if matches!(entry, UmbraBuf::Outside { .. }) {
            if u32::try_from(log.data_log.len() + bytes.len() as u64).is_err() {
                log.too_long += 1;
                return Ok(());
            }
            log.data_log.buf.extend_from_slice(&bytes);
            self.pending += bytes.len();
        }
        log.offsets.buf.extend_from_slice(&entry.encode());
        log.timestamps.buf.extend_from_slice(&us.to_le_bytes());
        log.last_us = us;
        self.pending += 24;
        self.pending -= log.data_log.spill()? + log.offsets.spill()? + log.timestamps.spill()?;
        Ok(())
    }

    /// Metadata-only directories for the entities (the names before the components' last
    /// dot), as Elodin's sims write them: its editor lists them as entities.
    fn entities(&self) -> Result<(), WriteError> {
        let entities: BTreeSet<&str> = self
            .components
            .iter()
            .filter_map(|c| c.name.rsplit_once('.').map(|(e, _)| e))
            .filter(|e| !e.is_empty())
            .collect();
        for name in entities {
            let id = component_id(name);
            if self.ids.contains_key(&id) {
                continue;
            }
            let dir = self.root.join(id.to_string());
            fs::create_dir(&dir).map_err(|e| WriteError::io(&dir, e))?;
            let meta = ComponentMetadata {
                component_id: id,
                name: name.to_string(),
                metadata: Vec::new(),
                asset: None,
            };
            write(&dir.join("metadata"), &meta.encode())?;
        }
        Ok(())
    }

    /// `db_state`: a DB source's own (its step and map), else Elodin's defaults; the start
    /// timestamp is the output's first row.
    fn db_state(&self) -> DbState {
        let state = self.source.as_ref().and_then(|s| s.get("db_state"));
        let recording = state
            .and_then(|s| s.get("recording")?.as_bool())
            .unwrap_or(true);
        let step = state
            .and_then(|s| s.get("default_stream_time_step_ns")?.as_u64())
            .map_or(DEFAULT_STEP, |ns| Duration {
                secs: ns / 1_000_000_000,
                nanos: (ns % 1_000_000_000) as u32,
            });
        let mut metadata: Vec<(String, String)> = match state.and_then(|s| s.get("metadata")) {
            Some(Json::Object(map)) => map
                .iter()
                .filter(|(k, _)| {
                    !matches!(k.as_str(), "time.start_timestamp" | "version.last_opened")
                })
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect(),
            _ => Vec::new(),
        };
        if !metadata.iter().any(|(k, _)| k == "version.created") {
            metadata.push((
                "version.created".into(),
                format!("simrec {}", env!("CARGO_PKG_VERSION")),
            ));
        }
        if let Some(first) = self.first_us {
            metadata.push(("time.start_timestamp".into(), first.to_string()));
        }
        DbState::Config {
            recording,
            default_stream_time_step: step,
            metadata,
        }
    }
}

/// A component's name, `<entity>.<key>`: the entity's own name, the source's name for its
/// number, or `<channel>.<number>`; a record without an entity is its channel's
/// (`<channel>.<key>`, or the key alone when it is the channel's name).
fn component_name(
    channel: &str,
    entity: &Option<Entity>,
    key: &str,
    names: &HashMap<u64, String>,
) -> String {
    match entity {
        Some(Entity::Name(name)) => format!("{name}.{key}"),
        Some(Entity::Id(id)) => match names.get(id) {
            Some(name) => format!("{name}.{key}"),
            None => format!("{channel}.{id}.{key}"),
        },
        None if key == channel => key.to_string(),
        None => format!("{channel}.{key}"),
    }
}

fn is_empty_array(value: &Value) -> bool {
    matches!(value, Value::Array(a) if a.is_empty() && a.dtype() != DType::Str)
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    fs::write(path, bytes).map_err(|e| WriteError::io(path, e))
}

impl Sink for DbWriter {
    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        let ch = record.channel as usize;
        if ch >= self.channels.len() {
            self.report.loss.add(
                &format!("channel {ch}"),
                "*",
                "a channel the header does not list",
            );
            return Ok(());
        }
        let us = self.stamp(record.time, 1);
        let events = self.channels[ch].events;
        for (key, value) in &record.values {
            match self.component(ch, &record.entity, key, value)? {
                Some(c) => self.write_row(c, us, value)?,
                None if events => {}
                None => {
                    let why = match value {
                        Value::Removed => "a removal: Elodin rows cannot remove a value",
                        v if is_empty_array(v) => {
                            "an empty array: an Elodin row holds at least one element"
                        }
                        _ => NOT_NUMERIC,
                    };
                    let name = self.channels[ch].name.clone();
                    self.report.loss.add(&name, key, why);
                }
            }
        }
        if events {
            if let Some(m) = self.msg_log(ch)? {
                self.write_message(m, us, &record.values)?;
            }
        }
        self.spill()?;
        Ok(())
    }

    fn add_channel(&mut self, channel: &Channel) -> Result<(), WriteError> {
        self.channels.push(ChannelInfo {
            name: channel.name.clone(),
            events: channel.kind == ChannelKind::Events,
            fields: channel.fields.clone(),
            slots: Vec::new(),
            by_entity: HashMap::new(),
            recent: 0,
            log: None,
        });
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<WriteReport, WriteError> {
        let mut me = *self;
        me.entities()?;
        let state = me.db_state();
        let mut report = std::mem::take(&mut me.report);
        for c in me.components {
            if c.back > 0 {
                report.loss.add_n(
                    &c.name,
                    "*",
                    "earlier than the component's row before: dropped (Elodin's index never goes back)",
                    c.back,
                );
            }
            if c.misfit > 0 {
                report.loss.add_n(
                    &c.name,
                    "*",
                    "not of the component's type and shape (set by its first value): dropped",
                    c.misfit,
                );
            }
            c.index.finish()?;
            c.data.finish()?;
        }
        for m in me.msgs {
            if m.back > 0 {
                report.loss.add_n(
                    &m.name,
                    "*",
                    "earlier than the log's message before: dropped",
                    m.back,
                );
            }
            if m.too_long > 0 {
                report.loss.add_n(
                    &m.name,
                    "*",
                    "past the 4 GiB a message log holds: dropped",
                    m.too_long,
                );
            }
            m.timestamps.finish()?;
            m.offsets.finish()?;
            m.data_log.finish()?;
        }
        if me.sub_us > 0 {
            report.loss.add_n(
                "(all channels)",
                "time",
                "below the microsecond: Elodin stamps rows in whole µs (rounded down)",
                me.sub_us,
            );
        }
        // Last: Elodin opens a directory only with its `db_state`.
        write(&me.root.join("db_state"), &state.encode())?;
        Ok(report)
    }
}
