//! Folding delta streams into full context: the aggregate frame and the full state.

use std::collections::BTreeMap;

use super::header::Composition;
use super::record::Record;
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
            Composition::Independent => {
                self.entries.clear();
                self.merge(&record.values, &mut absent);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn record(frame: Option<u64>, values: Vec<(&str, Value)>) -> Record {
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
}
