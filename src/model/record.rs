//! One timestamped record of a recording.

use super::header::ChannelId;
use super::value::Field;

/// Integer nanoseconds from the recording's time origin.
pub type Nanos = i64;

/// A record's original bytes, as the reader found them.
///
/// A writer of the same `format` copies them verbatim, which makes same-format
/// conversion, slicing and merging bit-exact. Any operation that changes a
/// record's values or frame index must drop them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawBytes {
    /// Encoding family the bytes belong to (for example `nanover-legacy`).
    pub format: &'static str,
    pub bytes: Vec<u8>,
}

/// A record: a time, a channel and typed values.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub time: Nanos,
    pub channel: ChannelId,
    /// Entity (body, particle group, object id) the values belong to, where the format has one.
    pub entity: Option<u64>,
    /// Frame or tick index carried by the record. On frame-delta channels 0 means reset.
    pub frame: Option<u64>,
    /// Named values, in the order the source gave them.
    pub values: Vec<Field>,
    pub raw: Option<RawBytes>,
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
            group: None,
        }
    }

    /// The value of `key`, if the record has it.
    pub fn get(&self, key: &str) -> Option<&super::Value> {
        self.values.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}
