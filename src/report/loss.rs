//! What a conversion could not carry (loss), and what it carried in a wider type than the
//! source had (widening): per (channel, field, reason), the records affected.
//!
//! Only loss makes a command exit 3. A widening keeps every value exactly (uint8 stored as
//! int32, say) and is reported so that nobody is surprised by the output's types.

use std::collections::BTreeMap;

/// Records per channel, field and reason; nested so that counting one more record of a
/// known entry looks it up without making its key (a writer may count every value).
type Entries = BTreeMap<String, BTreeMap<String, BTreeMap<String, u64>>>;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LossReport {
    entries: Entries,
    widened: Entries,
}

/// The value under `key`, made when absent.
fn slot<'m, V: Default>(map: &'m mut BTreeMap<String, V>, key: &str) -> &'m mut V {
    if !map.contains_key(key) {
        map.insert(key.to_string(), V::default());
    }
    map.get_mut(key).expect("inserted above")
}

fn count(entries: &mut Entries, channel: &str, field: &str, reason: &str, n: u64) {
    if n > 0 {
        *slot(slot(slot(entries, channel), field), reason) += n;
    }
}

fn rows(entries: &Entries) -> impl Iterator<Item = (&str, &str, &str, u64)> {
    entries.iter().flat_map(|(c, fields)| {
        fields.iter().flat_map(move |(f, reasons)| {
            reasons
                .iter()
                .map(move |(r, n)| (c.as_str(), f.as_str(), r.as_str(), *n))
        })
    })
}

impl LossReport {
    /// Counts one more record that lost something.
    pub fn add(&mut self, channel: &str, field: &str, reason: &str) {
        count(&mut self.entries, channel, field, reason, 1);
    }

    /// Counts one more record whose value was kept exactly, in a wider type.
    pub fn widen(&mut self, channel: &str, field: &str, reason: &str) {
        count(&mut self.widened, channel, field, reason, 1);
    }

    /// Counts `n` records that lost something (a writer that tallies per value itself, so
    /// that a loss on every value costs no map lookup each). `n` = 0 adds no entry.
    pub fn add_n(&mut self, channel: &str, field: &str, reason: &str, n: u64) {
        if n > 0 {
            count(&mut self.entries, channel, field, reason, n);
        }
    }

    /// Counts `n` records kept exactly in a wider type; `n` = 0 adds no entry.
    pub fn widen_n(&mut self, channel: &str, field: &str, reason: &str, n: u64) {
        if n > 0 {
            count(&mut self.widened, channel, field, reason, n);
        }
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &LossReport) {
        for (c, f, r, n) in rows(&other.entries) {
            count(&mut self.entries, c, f, r, n);
        }
        for (c, f, r, n) in rows(&other.widened) {
            count(&mut self.widened, c, f, r, n);
        }
    }

    /// Whether nothing was lost (widenings do not count).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// What was lost: (channel, field, reason, records affected), sorted.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &str, &str, u64)> {
        rows(&self.entries)
    }

    /// What was widened: (channel, field, reason, records affected), sorted.
    pub fn widenings(&self) -> impl Iterator<Item = (&str, &str, &str, u64)> {
        rows(&self.widened)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widenings_are_reported_apart_and_are_not_loss() {
        let mut a = LossReport::default();
        a.widen("body", "mass", "uint8 stored as int32");
        a.widen("body", "mass", "uint8 stored as int32");
        assert!(a.is_empty());
        let mut b = LossReport::default();
        b.add("frame", "x", "dropped");
        b.merge(&a);
        assert!(!b.is_empty());
        assert_eq!(
            b.widenings().collect::<Vec<_>>(),
            [("body", "mass", "uint8 stored as int32", 2)]
        );
        assert_eq!(b.entries().count(), 1);
    }

    #[test]
    fn counts_in_bulk_add_up_with_single_ones_and_zero_adds_nothing() {
        let mut a = LossReport::default();
        a.add_n("c", "x", "rounded", 0);
        a.widen_n("c", "x", "widened", 0);
        assert!(a.is_empty());
        assert_eq!(a.widenings().count(), 0);
        a.add_n("c", "x", "rounded", 3);
        a.add("c", "x", "rounded");
        a.widen_n("c", "y", "widened", 5);
        assert_eq!(a.entries().collect::<Vec<_>>(), [("c", "x", "rounded", 4)]);
        assert_eq!(
            a.widenings().collect::<Vec<_>>(),
            [("c", "y", "widened", 5)]
        );
    }
}
