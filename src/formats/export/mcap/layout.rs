//! Which topic each record goes to, and the messages made of them: one topic per group of
//! values sampled together, one message per instant.
//!
//! - A channel that is one signal of a named component (`Vehicle.Nav.position`, entity
//!   `Vehicle.Nav`, an Icarus signal) joins the component's topic `/Vehicle/Nav`, its value
//!   a field; its static signals go to `/Vehicle/Nav/static`. Per-axis signals (HDF5, CSV)
//!   are elements of their vector's field (`component.rs`).
//! - Any other channel is a topic of its own (`/frame`, `/body`, `/3es/sphere`,
//!   `/xrec/Transform`): its fields, or, when its first record names an entity, a repeated
//!   `entities` message holding each record's entity and fields.
//! - A channel whose keys are not known up front (a state delta, or a channel that declares
//!   no field) is a topic of keyed values: a `map<string, string>` of key → JSON text, one
//!   message per record.
//! - With `--mcap-encoding json`, every channel is a JSON topic, one message per record.
//!
//! A topic's records of one instant are held until a record of another instant comes (or
//! a flat topic's field comes twice), then written as one message.

use std::collections::BTreeMap;

use foldhash::HashMap;

use super::component::{self, Place};
use super::proto::{self, Field, Kind, MessageType};
use super::scene;
use super::schema::{channel_schema, composition};
use crate::formats::export::json_text::{self, Lost};
use crate::model::{Channel, ChannelKind, Composition, Entity, FieldSpec, Record, Value};
use crate::report::LossReport;

/// How messages are encoded (`--mcap-encoding`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Encoding {
    /// Protobuf, one topic per group and one message per instant.
    #[default]
    Protobuf,
    /// The old layout: a JSON topic per channel, a message per record.
    Json,
}

/// A topic's schema and message encoding.
pub enum Body {
    Proto(MessageType),
    /// Keyed values (`proto::keyed`): the message type's name.
    Keyed(String),
    /// The channel's name and its JSON Schema text.
    Json(String, Vec<u8>),
}

pub struct Topic {
    pub name: String,
    pub body: Body,
    pub metadata: BTreeMap<String, String>,
    /// Of a component's topic: the signal each field holds.
    signals: Vec<String>,
    /// Of each field regrouped from axes: its first slot in [`Pending::axes`] and its
    /// number of elements.
    slots: Vec<Option<(usize, usize)>>,
    pending: Option<Pending>,
    /// The length of the last message's fields: the next one's is likely the same, so its
    /// buffer is made that large rather than grown value by value.
    hint: usize,
}

impl Topic {
    /// Its protobuf message type; `None` for a JSON or keyed topic.
    pub fn message(&self) -> Option<&MessageType> {
        match &self.body {
            Body::Proto(m) => Some(m),
            Body::Keyed(_) | Body::Json(..) => None,
        }
    }

    /// The number of axis slots of a message.
    fn axes(&self) -> usize {
        self.slots.iter().flatten().map(|(_, n)| n).sum()
    }

    /// (schema name, schema encoding, schema data, message encoding).
    pub fn schema(&self) -> (String, &'static str, Vec<u8>, &'static str) {
        match &self.body {
            Body::Proto(m) => (m.full_name(), "protobuf", m.descriptor_set(), "protobuf"),
            Body::Keyed(name) => (
                format!("{}.{name}", proto::PACKAGE),
                "protobuf",
                proto::keyed_descriptor_set(name),
                "protobuf",
            ),
            Body::Json(channel, s) => (channel.clone(), "jsonschema", s.clone(), "json"),
        }
    }
}

/// A topic's values of one instant, waiting for the instant to end.
struct Pending {
    time: i64,
    frame: Option<i64>,
    body: Vec<u8>,
    /// Of a flat message: the fields given (a field given twice ends the instant).
    given: Vec<bool>,
    /// The axes given of each vector regrouped from axes, by slot.
    axes: Vec<Option<Value>>,
    /// Of a flat message: the `"key":value` pairs of its `extra_json` so far.
    extra: Vec<u8>,
}

/// A message ready to be written: its topic (an index into [`Layout::topic`]) and time.
pub struct Ready {
    pub topic: usize,
    pub time: i64,
    pub data: Vec<u8>,
}

/// Where the one value of a channel's records goes in a protobuf topic of one message per
/// instant (what a frame writer plans by, `frames.rs`).
pub struct Placed {
    pub topic: usize,
    /// `None` when the topic has no field for the key (its value goes to `extra_json`).
    pub field: Option<FieldOf>,
}

/// The index of a value's field in its topic's message type, and of an axis, its element
/// and the number of elements of its vector.
pub type FieldOf = (usize, Option<(usize, usize)>);

/// A channel's keys and the index of each one's field in its topic, looked up for every
/// value: by the value's place in its record first, as records carry their keys in the
/// order the channel declares them, rather than by hashing the key (docs/performance.md,
/// "MCAP from frames without records").
struct Fields {
    keys: Vec<(String, usize)>,
    by_key: HashMap<String, usize>,
}

impl Fields {
    fn new(keys: impl IntoIterator<Item = (String, usize)>) -> Fields {
        let by_key: HashMap<String, usize> = keys.into_iter().collect();
        let mut keys: Vec<(String, usize)> = by_key.iter().map(|(k, &f)| (k.clone(), f)).collect();
        keys.sort_by_key(|&(_, f)| f);
        Fields { keys, by_key }
    }

    /// The field of `key`, the `at`th value of its record.
    fn get(&self, at: usize, key: &str) -> Option<usize> {
        match self.keys.get(at) {
            Some((k, f)) if k == key => Some(*f),
            _ => self.by_key.get(key).copied(),
        }
    }
}

/// Where a channel's records go.
enum Route {
    Json(usize),
    Keyed(usize),
    /// The topic, and the index of each key's field in it; of an axis, its slot.
    Proto {
        topic: usize,
        fields: Fields,
        slot: Option<usize>,
    },
}

pub struct Layout {
    encoding: Encoding,
    /// Whether per-axis signals are regrouped into vectors ([`component::SPLITS_VECTORS`]).
    regroup: bool,
    /// Per channel id, decided at its first record.
    routes: Vec<Option<Route>>,
    topics: Vec<Topic>,
    by_name: HashMap<String, usize>,
    scratch: Vec<u8>,
    /// A record's encoded fields, its values that did not fit, and the fields written.
    body: Vec<u8>,
    extra: Vec<u8>,
    written: Vec<usize>,
    lost: Lost,
}

impl Layout {
    /// The layout of a recording of `format` (the header's).
    pub fn new(encoding: Encoding, format: &str) -> Layout {
        Layout {
            encoding,
            regroup: component::SPLITS_VECTORS.contains(&format),
            routes: Vec::new(),
            topics: Vec::new(),
            by_name: HashMap::default(),
            scratch: Vec::new(),
            body: Vec::new(),
            extra: Vec::new(),
            written: Vec::new(),
            lost: Vec::new(),
        }
    }

    pub fn topic(&self, i: usize) -> &Topic {
        &self.topics[i]
    }

    /// Adds `record` (of `channels[record.channel]`) to its topic; messages of instants
    /// that ended are appended to `out`.
    pub fn record(
        &mut self,
        channels: &[Channel],
        record: &Record,
        out: &mut Vec<Ready>,
        loss: &mut LossReport,
    ) {
        let c = record.channel as usize;
        // Taken out while the topics are borrowed mutably.
        match self.take_route(channels, record) {
            Some(route @ (Route::Json(topic) | Route::Keyed(topic))) => {
                let mut data = Vec::new();
                if matches!(route, Route::Json(_)) {
                    json_text::record(&mut data, record, None, None, &mut self.lost);
                } else {
                    proto::keyed_record(&mut data, &mut self.scratch, record, &mut self.lost);
                }
                out.push(Ready {
                    topic,
                    time: record.time,
                    data,
                });
                self.routes[c] = Some(route);
            }
            Some(route @ Route::Proto { .. }) => {
                if let Route::Proto {
                    topic,
                    fields,
                    slot,
                } = &route
                {
                    self.encode(*topic, fields, *slot, record, out);
                }
                self.routes[c] = Some(route);
            }
            None => return,
        }
        for (field, reason) in self.lost.drain(..) {
            loss.add(&channels[c].name, &field, reason);
        }
    }

    /// Where the one value of `record` (of `channels[record.channel]`) goes, its route and
    /// topics made as its channel's first record makes them; `None` when its topic is not
    /// a protobuf topic of one message per instant (a JSON or keyed topic, or one of
    /// entities).
    pub fn place(&mut self, channels: &[Channel], record: &Record) -> Option<Placed> {
        let [(key, _)] = record.values.as_slice() else {
            return None;
        };
        let route = self.take_route(channels, record)?;
        let placed = match &route {
            Route::Proto {
                topic,
                fields,
                slot,
            } => {
                let t = &self.topics[*topic];
                t.message().filter(|m| !m.entities).map(|_| Placed {
                    topic: *topic,
                    field: fields.get(0, key).map(|f| {
                        let vector = t.slots.get(f).copied().flatten();
                        (f, slot.zip(vector).map(|(s, (first, n))| (s - first, n)))
                    }),
                })
            }
            Route::Json(_) | Route::Keyed(_) => None,
        };
        self.routes[record.channel as usize] = Some(route);
        placed
    }

    /// The JSON topic of `record` (with `--mcap-encoding json`, whose text is made
    /// elsewhere).
    pub fn json_topic(&mut self, channels: &[Channel], record: &Record) -> Option<usize> {
        let route = self.take_route(channels, record)?;
        let topic = match route {
            Route::Json(t) => Some(t),
            Route::Keyed(_) | Route::Proto { .. } => None,
        };
        self.routes[record.channel as usize] = Some(route);
        topic
    }

    /// The route of `record`'s channel, taken out of [`Layout::routes`] (the caller puts it
    /// back); made, with the topics it needs, at the channel's first record.
    fn take_route(&mut self, channels: &[Channel], record: &Record) -> Option<Route> {
        let c = record.channel as usize;
        let channel = channels.get(c)?;
        if self.routes.len() <= c {
            self.routes.resize_with(c + 1, || None);
        }
        match self.routes[c].take() {
            Some(route) => Some(route),
            None => Some(self.route(channels, channel, record)),
        }
    }

    /// The messages still held.
    pub fn finish(&mut self, out: &mut Vec<Ready>) {
        for (i, topic) in self.topics.iter_mut().enumerate() {
            if let Some(p) = topic.pending.take() {
                out.push(ready(topic, i, p, &mut self.scratch, &mut self.lost));
            }
        }
    }

    /// Adds `record`'s values to topic `t`'s message of its instant (as an entity of it,
    /// on a topic of entities; of an axis, to its vector's `slot`). A value that does not
    /// fit its field, or a key the topic has no field for, goes to the `extra_json`.
    fn encode(
        &mut self,
        t: usize,
        fields: &Fields,
        slot: Option<usize>,
        record: &Record,
        out: &mut Vec<Ready>,
    ) {
        let Layout {
            topics,
            scratch,
            body,
            extra,
            written,
            lost,
            ..
        } = self;
        let topic = &mut topics[t];
        let Body::Proto(message) = &topic.body else {
            return;
        };
        body.clear();
        extra.clear();
        written.clear();
        let mut axis = None;
        for (at, (key, value)) in record.values.iter().enumerate() {
            let fits = match (fields.get(at, key), slot) {
                (Some(_), Some(_)) => {
                    axis = Some(value);
                    true
                }
                (Some(f), None) => proto::value(body, scratch, &message.fields[f], value, lost)
                    .map(|()| written.push(f))
                    .is_ok(),
                (None, _) => scene::carries(key, value),
            };
            if !fits {
                json_pair(extra, key, value, lost);
            }
        }
        let entities = message.entities;
        let ends = topic.pending.as_ref().is_some_and(|p| {
            p.time != record.time
                || (!entities
                    && (written.iter().any(|&f| p.given[f])
                        || slot.is_some_and(|s| axis.is_some() && p.axes[s].is_some())))
        });
        if ends {
            if let Some(p) = topic.pending.take() {
                topic.hint = p.body.len();
                out.push(ready(topic, t, p, scratch, lost));
            }
        }
        let (n, slots, hint) = (message.fields.len(), topic.axes(), topic.hint);
        let pending = topic.pending.get_or_insert_with(|| Pending {
            time: record.time,
            frame: record.frame,
            body: Vec::with_capacity(hint),
            given: vec![false; n],
            axes: vec![None; slots],
            extra: Vec::new(),
        });
        if entities {
            let mut entity = Vec::with_capacity(body.len() + 16);
            match &record.entity {
                Some(Entity::Id(id)) => proto::uint64(&mut entity, proto::ENTITY_ID, *id),
                Some(Entity::Name(n)) => {
                    proto::bytes(&mut entity, proto::ENTITY_NAME, n.as_bytes())
                }
                None => {}
            }
            entity.extend_from_slice(body);
            if !extra.is_empty() {
                close_object(extra);
                proto::bytes(&mut entity, extra_number(&message.fields), extra);
            }
            proto::bytes(&mut pending.body, proto::ENTITIES, &entity);
        } else {
            for &f in written.iter() {
                pending.given[f] = true;
            }
            pending.body.extend_from_slice(body);
            if let (Some(s), Some(v)) = (slot, axis) {
                pending.axes[s] = Some(v.clone());
            }
            pending.extra.extend_from_slice(extra);
        }
    }

    /// Where `channel`'s records go, from its first `record`; the topics it needs are made.
    fn route(&mut self, channels: &[Channel], channel: &Channel, record: &Record) -> Route {
        let keys_known =
            channel.composition != Composition::StateDelta && !channel.fields.is_empty();
        if self.encoding == Encoding::Json {
            return self.json_route(channel);
        }
        if !keys_known {
            return self.keyed_route(channel);
        }
        if let Some(place) = component::place(channels, channel, record, self.regroup) {
            return self.component_route(channels, channel, place);
        }
        // Keys the first record carries without a type the look-ahead could give (a list, a
        // null) are fields too, as JSON text, rather than lost.
        let untyped: Vec<FieldSpec> = record
            .values
            .iter()
            .filter(|(k, _)| !channel.fields.iter().any(|f| f.name == *k))
            .map(|(k, _)| FieldSpec::new(k.clone()))
            .collect();
        let specs: Vec<&FieldSpec> = channel
            .fields
            .iter()
            .chain(&untyped)
            .filter(|f| !scene::carried(f))
            .collect();
        let entities = record.entity.is_some();
        let mut metadata = channel_metadata(channel);
        let fields = fields_of(&specs, entities, &mut metadata, |f| f.name.clone());
        let name = self.free_name(&topic_name(&channel.name));
        let t = self.add_topic(Topic {
            name,
            body: Body::Proto(MessageType {
                name: proto::identifier(channel.name.trim_start_matches('/')),
                fields,
                entities,
            }),
            metadata,
            signals: Vec::new(),
            slots: Vec::new(),
            pending: None,
            hint: 0,
        });
        Route::Proto {
            topic: t,
            fields: Fields::new(specs.iter().enumerate().map(|(i, s)| (s.name.clone(), i))),
            slot: None,
        }
    }

    /// The route of a component's signal (or axis): the component's topic (static or
    /// not), made the first time with every member of the component the channels declare.
    fn component_route(&mut self, channels: &[Channel], channel: &Channel, place: Place) -> Route {
        let Some(spec) = channel.fields.first() else {
            return self.json_route(channel);
        };
        let name = topic_name(&place.component);
        let name = if place.is_static {
            format!("{name}/static")
        } else {
            name
        };
        let t = match self.by_name.get(&name) {
            Some(&t) => t,
            None => {
                let members =
                    component::members(channels, &place.component, place.is_static, self.regroup);
                let specs: Vec<&FieldSpec> = members.iter().map(|m| &m.spec).collect();
                let mut metadata = BTreeMap::new();
                metadata.insert("component".into(), place.component.clone());
                metadata.insert("kind".into(), "signals".into());
                let mut originals = members.iter().map(|m| m.name.clone());
                let fields = fields_of(&specs, false, &mut metadata, |_| {
                    originals.next().unwrap_or_default()
                });
                let mut next = 0;
                let mut slots = Vec::with_capacity(members.len());
                for (m, f) in members.iter().zip(&fields) {
                    slots.push(m.axes.map(|axes| {
                        metadata.insert(format!("{}.axes", f.name), axes.join(","));
                        next += axes.len();
                        (next - axes.len(), axes.len())
                    }));
                }
                let message = proto::identifier(name.trim_start_matches('/'));
                self.add_topic(Topic {
                    name,
                    body: Body::Proto(MessageType {
                        name: message,
                        fields,
                        entities: false,
                    }),
                    metadata,
                    signals: members.into_iter().map(|m| m.name).collect(),
                    slots,
                    pending: None,
                    hint: 0,
                })
            }
        };
        // A signal declared after the topic was made has no field in it: its values go to
        // `extra_json`.
        let topic = &self.topics[t];
        let index = topic.signals.iter().position(|s| *s == place.member);
        let slot = index
            .and_then(|i| topic.slots.get(i).copied().flatten())
            .zip(place.element)
            .map(|((first, _), e)| first + e);
        Route::Proto {
            topic: t,
            fields: Fields::new(index.map(|i| (spec.name.clone(), i))),
            slot,
        }
    }

    fn json_route(&mut self, channel: &Channel) -> Route {
        let name = self.free_name(&topic_name(&channel.name));
        Route::Json(self.add_topic(Topic {
            name,
            body: Body::Json(channel.name.clone(), channel_schema(channel)),
            metadata: channel_metadata(channel),
            signals: Vec::new(),
            slots: Vec::new(),
            pending: None,
            hint: 0,
        }))
    }

    fn keyed_route(&mut self, channel: &Channel) -> Route {
        let name = self.free_name(&topic_name(&channel.name));
        let mut metadata = channel_metadata(channel);
        metadata.insert(
            "values.about".into(),
            "each key's value as JSON text (keys not known up front)".into(),
        );
        Route::Keyed(self.add_topic(Topic {
            body: Body::Keyed(proto::identifier(name.trim_start_matches('/'))),
            name,
            metadata,
            signals: Vec::new(),
            slots: Vec::new(),
            pending: None,
            hint: 0,
        }))
    }

    fn add_topic(&mut self, topic: Topic) -> usize {
        self.by_name.insert(topic.name.clone(), self.topics.len());
        self.topics.push(topic);
        self.topics.len() - 1
    }

    /// `name`, or `name_2`, … when a topic has it.
    fn free_name(&self, name: &str) -> String {
        let mut candidate = name.to_string();
        let mut n = 1;
        while self.by_name.contains_key(&candidate) {
            n += 1;
            candidate = format!("{name}_{n}");
        }
        candidate
    }
}

/// The message of a topic's instant: `time_ns`, `frame`, the fields given, each vector
/// whose axes all came and fit its type (the axes of another go to `extra_json`, as
/// `<field>[<element>]`), and `extra_json`.
fn ready(topic: &Topic, t: usize, mut p: Pending, scratch: &mut Vec<u8>, lost: &mut Lost) -> Ready {
    let mut data = Vec::with_capacity(p.body.len() + 24);
    proto::int64(&mut data, proto::TIME_NS, p.time);
    if let Some(frame) = p.frame {
        proto::int64(&mut data, proto::FRAME, frame);
    }
    data.extend_from_slice(&p.body);
    if let Body::Proto(message) = &topic.body {
        for (f, slots) in topic.slots.iter().enumerate() {
            let (Some((first, n)), Some(field)) = (slots, message.fields.get(f)) else {
                continue;
            };
            let axes = &p.axes[*first..first + n];
            let complete = axes.iter().all(Option::is_some);
            if complete && proto::packed(&mut data, scratch, field, axes.iter().flatten()).is_ok() {
                continue;
            }
            for (e, v) in axes.iter().enumerate() {
                if let Some(v) = v {
                    json_pair(&mut p.extra, &format!("{}[{e}]", field.name), v, lost);
                }
            }
        }
        if !p.extra.is_empty() {
            close_object(&mut p.extra);
            proto::bytes(&mut data, extra_number(&message.fields), &p.extra);
        }
    }
    Ready {
        topic: t,
        time: p.time,
        data,
    }
}

/// Appends `"key":value,` (JSON text) to `out`.
fn json_pair(out: &mut Vec<u8>, key: &str, value: &Value, lost: &mut Lost) {
    json_text::string(out, key);
    out.push(b':');
    json_text::value(out, key, value, lost);
    out.push(b',');
}

/// Makes a list of [`json_pair`]s an object.
fn close_object(out: &mut Vec<u8>) {
    out.insert(0, b'{');
    if let Some(last) = out.last_mut() {
        *last = b'}';
    }
}

/// The number of `extra_json`, the last field of every message type.
fn extra_number(fields: &[Field]) -> u32 {
    fields.last().map_or(3, |f| f.number)
}

/// A channel or component name as a topic: `/` between its parts, never `.`.
pub fn topic_name(name: &str) -> String {
    format!("/{}", name.trim_start_matches('/').replace('.', "/"))
}

/// The last field of every message: what did not fit the others, as a JSON object.
const EXTRA: &str = "extra_json";

/// The protobuf fields of `specs` (numbered from 3 on; identifiers made unique; of an
/// entity message when `entities`), then [`EXTRA`], with each
/// one's original name (`original`), dtype, shape, unit and semantic in `metadata`.
fn fields_of(
    specs: &[&FieldSpec],
    entities: bool,
    metadata: &mut BTreeMap<String, String>,
    mut original: impl FnMut(&FieldSpec) -> String,
) -> Vec<Field> {
    // The names beside them: an entity's own, or the message's list of entities.
    let reserved: &[&str] = if entities {
        &["entity", "name"]
    } else {
        &["time_ns", "frame", "entities"]
    };
    let mut taken: Vec<String> = reserved
        .iter()
        .chain(&[EXTRA])
        .map(|s| s.to_string())
        .collect();
    let mut fields = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        let base = proto::identifier(&spec.name);
        let mut name = base.clone();
        let mut n = 1;
        while taken.contains(&name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        taken.push(name.clone());
        let kind = if spec.is_complete() {
            Kind::of(spec.dtype)
        } else {
            Kind::Json
        };
        let shape = spec.shape.as_deref().unwrap_or(&[]);
        let mut about = |what: &str, value: String| {
            metadata.insert(format!("{name}.{what}"), value);
        };
        about("name", original(spec));
        if let Some(dtype) = spec.dtype.filter(|_| kind != Kind::Json) {
            about("dtype", dtype.to_string());
        } else {
            about("dtype", "json".into());
        }
        if !shape.is_empty() {
            let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
            about("shape", dims.join(","));
        }
        if let Some(unit) = &spec.unit {
            about("unit", unit.clone());
        }
        if let Some(semantic) = &spec.semantic {
            about("semantic", semantic.clone());
        }
        if let Some(elements) = &spec.elements {
            about("elements", elements.join(","));
        }
        fields.push(Field {
            name,
            number: 3 + i as u32,
            kind,
            repeated: kind != Kind::Json && !shape.is_empty(),
        });
    }
    metadata.insert(
        format!("{EXTRA}.about"),
        "a JSON object of the values that did not fit the schema".into(),
    );
    fields.push(Field {
        name: EXTRA.into(),
        number: 3 + specs.len() as u32,
        kind: Kind::Str,
        repeated: false,
    });
    fields
}

/// A channel's `composition` and `kind`, as the JSON layout gave them.
fn channel_metadata(channel: &Channel) -> BTreeMap<String, String> {
    let mut metadata = BTreeMap::new();
    metadata.insert("channel".into(), channel.name.clone());
    metadata.insert(
        "composition".into(),
        composition(channel.composition).into(),
    );
    metadata.insert(
        "kind".into(),
        match channel.kind {
            ChannelKind::Signals => "signals",
            ChannelKind::Events => "events",
        }
        .into(),
    );
    metadata
}
