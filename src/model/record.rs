//! One timestamped record of a recording.

use std::fmt;
use std::sync::Arc;

use super::header::ChannelId;
use super::time::seconds_of;
use super::value::{Field, Value};

/// Integer nanoseconds from the recording's time origin.
pub type Nanos = i64;

/// A record's original bytes, as the reader found them.
///
/// A writer of the same `format` copies them verbatim, which makes same-format
/// conversion, slicing and merging bit-exact. Any operation that changes a
/// record's values or frame index must drop them; a change of time drops them only when
/// the time is written inside the bytes ([`Record::shift_time`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawBytes {
    /// Encoding family the bytes belong to (for example `nanover-legacy`).
    pub format: &'static str,
    pub bytes: Vec<u8>,
    /// The record's time is encoded inside `bytes` (an Icarus frame, an XREC event), so the
    /// bytes no longer describe the record once its time changes. When false the format
    /// writes the time beside the bytes (NanoVer's record header, a 3es frame) and a
    /// writer puts the new time there.
    pub time_inside: bool,
}

impl RawBytes {
    /// Bytes whose format keeps the record's time outside them.
    pub fn new(format: &'static str, bytes: Vec<u8>) -> RawBytes {
        RawBytes {
            format,
            bytes,
            time_inside: false,
        }
    }
}

/// The thing a record's values belong to: a body, an object, a component. Formats number
/// them (Elodin, 3es) or name them (Icarus components, XREC ids given as strings).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Entity {
    Id(u64),
    Name(Arc<str>),
}

impl Entity {
    /// The number of a numbered entity.
    pub fn id(&self) -> Option<u64> {
        match self {
            Entity::Id(id) => Some(*id),
            Entity::Name(_) => None,
        }
    }
}

impl From<u64> for Entity {
    fn from(id: u64) -> Entity {
        Entity::Id(id)
    }
}

macro_rules! entity_from_unsigned {
    ($($t:ty),*) => {$(
        impl From<$t> for Entity {
            fn from(id: $t) -> Entity {
                Entity::Id(id.into())
            }
        }
    )*};
}
entity_from_unsigned!(u8, u16, u32);

impl From<&str> for Entity {
    fn from(name: &str) -> Entity {
        Entity::Name(name.into())
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Entity::Id(id) => write!(f, "{id}"),
            Entity::Name(name) => f.write_str(name),
        }
    }
}

/// The [`Record::group`] of the context records that open a time window (the folded state at
/// its start, which `pipeline::window` emits before the first record it keeps). A writer of a
/// flat format may take them as the values held at the start rather than as a frame.
pub const CONTEXT_GROUP: u64 = u64::MAX;

/// A record: a time, a channel and typed values.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub time: Nanos,
    pub channel: ChannelId,
    /// Entity (body, particle group, object id) the values belong to, where the format has one.
    pub entity: Option<Entity>,
    /// The frame value the format stores with the record (NanoVer's `frame.index`, an Elodin
    /// tick, an XREC `create_frame`, which may be negative or sparse), not its position in
    /// the recording (`pipeline::frames` counts those). On frame-delta channels 0 means reset.
    pub frame: Option<i64>,
    /// Named values, in the order the source gave them.
    pub values: Vec<Field>,
    /// Boxed: a record is moved through every layer of a pipeline, and at 120 bytes (160
    /// with the bytes' 48 inline) a move is a few vector stores instead of a `memcpy` call.
    pub raw: Option<Box<RawBytes>>,
    /// The time as a source of float seconds stores it (Icarus, XREC), from the origin:
    /// integer nanoseconds do not give every f64 back (0.35000000000000003 s and 0.35 s are
    /// both 350,000,000 ns). A writer of float seconds takes it while it still rounds to
    /// `time` ([`Record::seconds`]), so a stage that moves the time need not clear it.
    pub exact_seconds: Option<f64>,
    /// Records with the same group are parts of one message (NanoVer's combined
    /// frame + state message) and arrive one after another. A writer whose format can
    /// hold several parts in one message writes them together; others ignore it.
    pub group: Option<u64>,
}

impl Record {
    pub fn new(time: Nanos, channel: ChannelId) -> Record {
        Record {
            time,
            channel,
            entity: None,
            frame: None,
            values: Vec::new(),
            raw: None,
            exact_seconds: None,
            group: None,
        }
    }

    /// A record at `time` on `channel` with `values`.
    pub fn with_values<'k>(
        time: Nanos,
        channel: ChannelId,
        values: impl IntoIterator<Item = (&'k str, Value)>,
    ) -> Record {
        let mut r = Record::new(time, channel);
        r.values = values
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        r
    }

    /// Moves the record `by` nanoseconds, dropping original bytes that encode the old time.
    pub fn shift_time(&mut self, by: i64) {
        if by == 0 {
            return;
        }
        self.time = self.time.saturating_add(by);
        self.exact_seconds = None;
        if self.raw.as_ref().is_some_and(|r| r.time_inside) {
            self.raw = None;
        }
    }

    /// The time in seconds from the origin: the source's own float seconds while they
    /// still say `time`, else `time` / 10⁹.
    pub fn seconds(&self) -> f64 {
        seconds_of(self.time, self.exact_seconds)
    }

    /// Roughly the bytes a copy of the record holds: each value's key, its data and what a
    /// value costs besides (enum, vector and string headers), and the record itself. For
    /// memory budgets: batches of records held by a writer, records read ahead. (Counting
    /// the data alone, batches of small records, an Elodin body per tick, held four times
    /// their weight.)
    pub fn approx_bytes(&self) -> usize {
        use super::Value;
        let values: usize = self
            .values
            .iter()
            .map(|(k, v)| {
                k.len()
                    + 64
                    + match v {
                        Value::Array(a) => a.data.byte_len(),
                        Value::Str(s) => s.len(),
                        Value::Bytes(b) | Value::Ext { bytes: b, .. } => b.len(),
                        Value::List(l) => l.len() * 8,
                        Value::Map(m) => m.len() * 16,
                        _ => 8,
                    }
            })
            .sum();
        values + 96
    }

    /// The value of `key`, if the record has it.
    pub fn get(&self, key: &str) -> Option<&super::Value> {
        self.values.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_change_drops_only_bytes_that_hold_the_time() {
        let mut outside = Record::new(1_000, 0);
        outside.raw = Some(Box::new(RawBytes::new("nanover-legacy", vec![1, 2])));
        outside.shift_time(-400);
        assert_eq!(outside.time, 600);
        assert!(outside.raw.is_some());

        let mut inside = Record::new(1_000, 0);
        inside.raw = Some(Box::new(RawBytes {
            time_inside: true,
            ..RawBytes::new("icarec", vec![1, 2])
        }));
        inside.shift_time(0);
        assert!(inside.raw.is_some(), "no change, bytes kept");
        inside.shift_time(-1_000);
        assert_eq!(inside.time, 0);
        assert_eq!(inside.raw, None);
    }

    #[test]
    fn entities_are_numbers_or_names() {
        assert_eq!(Entity::from(7u32), Entity::Id(7));
        assert_eq!(Entity::from("Satellite.Body").to_string(), "Satellite.Body");
        assert_eq!(Entity::Id(3).id(), Some(3));
        assert_eq!(Entity::from("x").id(), None);
    }
}
