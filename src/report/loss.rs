//! What a conversion could not carry: per (channel, field, reason), the records affected.

use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LossReport {
    entries: BTreeMap<(String, String, String), u64>,
}

impl LossReport {
    /// Counts one more record affected.
    pub fn add(&mut self, channel: &str, field: &str, reason: &str) {
        *self
            .entries
            .entry((channel.to_string(), field.to_string(), reason.to_string()))
            .or_default() += 1;
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &LossReport) {
        for (key, n) in &other.entries {
            *self.entries.entry(key.clone()).or_default() += n;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// (channel, field, reason, records affected), sorted.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &str, &str, u64)> {
        self.entries
            .iter()
            .map(|((c, f, r), n)| (c.as_str(), f.as_str(), r.as_str(), *n))
    }
}
