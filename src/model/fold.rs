//! Folding records into full context: the aggregate frame, the full state, the value a
//! sample-and-hold channel holds, per channel and per entity.

use std::collections::BTreeMap;

use super::header::{ChannelId, Composition, Header};
use super::record::{Entity, Nanos, Record};
use super::value::{Field, Value};

/// The folded content of one channel at some point in time.
///
/// For a frame-delta channel this is the aggregate frame (a reset discards it);
/// for a state channel the full state (a `Removed` value deletes a key).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Folded {
    entries: BTreeMap<String, Value>,
    records: u64,
}

impl Folded {
    /// Applies one record. Returns the keys it removed that were not present.
    pub fn apply(&mut self, composition: Composition, record: &Record) -> Vec<String> {
        self.records += 1;
        let mut absent = Vec::new();
        match composition {
            Composition::Independent | Composition::SampleHold => {
                if !self.replace_one(&record.values) {
                    self.entries.clear();
                    self.merge(&record.values, &mut absent);
                }
            }
            Composition::FrameDelta => {
                if record.frame == Some(0) {
                    self.entries.clear();
                }
                self.merge(&record.values, &mut absent);
            }
            Composition::StateDelta => self.merge(&record.values, &mut absent),
        }
        absent
    }

    /// For a record of one value whose key is the one held (a signal's value, record after
    /// record): replaces the held value in place, keeping its key and buffers, and says so.
    /// Clearing and inserting allocated a key, a map node and the value each time.
    fn replace_one(&mut self, values: &[Field]) -> bool {
        let [(key, value)] = values else {
            return false;
        };
        if self.entries.len() != 1 || matches!(value, Value::Removed) {
            return false;
        }
        let Some(held) = self.entries.get_mut(key) else {
            return false;
        };
        let in_place = match (&mut *held, value) {
            (Value::Array(h), Value::Array(v)) => {
                h.shape.clone_from(&v.shape);
                h.data.assign(&v.data)
            }
            _ => false,
        };
        if !in_place {
            *held = value.clone();
        }
        true
    }

    fn merge(&mut self, values: &[Field], absent: &mut Vec<String>) {
        for (key, value) in values {
            if *value == Value::Removed {
                if self.entries.remove(key).is_none() {
                    absent.push(key.clone());
                }
            } else {
                self.entries.insert(key.clone(), value.clone());
            }
        }
    }

    /// Number of records folded so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.get(key)
    }

    /// The folded keys and values, sorted by key.
    pub fn fields(&self) -> Vec<Field> {
        self.entries
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

/// What a recording holds at some instant: one [`Folded`] per channel and entity, for every
/// record applied so far. Channels are looked up by id as records name them, so a channel
/// that appeared mid-stream folds like any other.
#[derive(Debug, Clone, Default)]
pub struct Context {
    folds: BTreeMap<(ChannelId, Option<Entity>), Folded>,
}

impl Context {
    /// Applies `record` with its channel's composition (`Independent` for an unknown id).
    pub fn apply(&mut self, header: &Header, record: &Record) {
        let composition = header
            .channel(record.channel)
            .map_or(Composition::Independent, |c| c.composition);
        if composition == Composition::Independent {
            return;
        }
        self.folds
            .entry((record.channel, record.entity.clone()))
            .or_default()
            .apply(composition, record);
    }

    pub fn is_empty(&self) -> bool {
        self.folds.is_empty()
    }

    /// The context as records at time `at`, in channel then entity order: a frame-delta
    /// channel's aggregate as a reset (frame 0), a state's keys, a held sample. `skip`
    /// leaves out a (channel, entity) whose context is about to be replaced anyway.
    pub fn records(
        &self,
        header: &Header,
        at: Nanos,
        skip: impl Fn(ChannelId, Option<&Entity>) -> bool,
    ) -> Vec<Record> {
        let mut out = Vec::new();
        for ((channel, entity), folded) in &self.folds {
            let Some(c) = header.channel(*channel) else {
                continue;
            };
            if folded.records() == 0 || skip(*channel, entity.as_ref()) {
                continue;
            }
            let mut record = Record::new(at, *channel);
            record.entity = entity.clone();
            match c.composition {
                Composition::FrameDelta => record.frame = Some(0),
                Composition::StateDelta | Composition::SampleHold if !folded.is_empty() => {}
                _ => continue,
            }
            record.values = folded.fields();
            out.push(record);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Channel, ChannelKind};

    fn record(frame: Option<i64>, values: Vec<(&str, Value)>) -> Record {
        let mut r = Record::new(0, 0);
        r.frame = frame;
        r.values = values
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        r
    }

    #[test]
    fn frame_deltas_replace_keys_and_resets_discard() {
        let mut f = Folded::default();
        f.apply(
            Composition::FrameDelta,
            &record(
                Some(2),
                vec![("a", Value::Float(1.0)), ("b", Value::Bool(true))],
            ),
        );
        f.apply(
            Composition::FrameDelta,
            &record(Some(3), vec![("a", Value::Float(2.0))]),
        );
        assert_eq!(f.get("a"), Some(&Value::Float(2.0)));
        assert_eq!(f.get("b"), Some(&Value::Bool(true)));
        f.apply(
            Composition::FrameDelta,
            &record(Some(0), vec![("c", Value::Null)]),
        );
        assert_eq!(f.fields(), vec![("c".to_string(), Value::Null)]);
    }

    #[test]
    fn state_removal_deletes_and_reports_absent_keys() {
        let mut f = Folded::default();
        f.apply(
            Composition::StateDelta,
            &record(None, vec![("k", Value::Float(1.0))]),
        );
        let absent = f.apply(
            Composition::StateDelta,
            &record(None, vec![("k", Value::Removed), ("x", Value::Removed)]),
        );
        assert!(f.is_empty());
        assert_eq!(absent, vec!["x".to_string()]);
    }

    #[test]
    fn sample_and_hold_folds_per_entity_and_independent_leaves_no_context() {
        let mut h = Header::new("t", "1");
        let held = h.add_channel(Channel::new(
            "sensor",
            ChannelKind::Signals,
            Composition::SampleHold,
        ));
        let events = h.add_channel(Channel::new(
            "event",
            ChannelKind::Events,
            Composition::Independent,
        ));
        let at = |channel, entity: &str, v: f64| {
            let mut r = Record::new(0, channel);
            r.entity = Some(Entity::from(entity));
            r.values = vec![("x".to_string(), Value::Float(v))];
            r
        };
        let mut ctx = Context::default();
        ctx.apply(&h, &at(held, "a", 1.0));
        ctx.apply(&h, &at(held, "b", 2.0));
        ctx.apply(&h, &at(held, "a", 3.0));
        ctx.apply(&h, &at(events, "a", 9.0));
        let out = ctx.records(&h, 50, |_, _| false);
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(out[0].entity, Some(Entity::from("a")));
        assert_eq!(out[0].values, vec![("x".to_string(), Value::Float(3.0))]);
        assert_eq!(out[1].entity, Some(Entity::from("b")));
        assert_eq!(out[1].values, vec![("x".to_string(), Value::Float(2.0))]);
        assert!(out.iter().all(|r| r.time == 50 && r.channel == held));
        let skipped = ctx.records(&h, 50, |_, e| e == Some(&Entity::from("a")));
        assert_eq!(skipped.len(), 1);
    }

    #[test]
    fn a_frame_aggregate_is_a_reset_and_unknown_channels_are_ignored() {
        let mut h = Header::new("t", "1");
        let frame = h.add_channel(Channel::new(
            "frame",
            ChannelKind::Signals,
            Composition::FrameDelta,
        ));
        let mut ctx = Context::default();
        let mut r = record(Some(4), vec![("a", Value::Int(1))]);
        r.channel = frame;
        ctx.apply(&h, &r);
        r.channel = 7;
        ctx.apply(&h, &r);
        let out = ctx.records(&h, 0, |_, _| false);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].frame, Some(0));
    }
}
