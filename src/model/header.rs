//! What a recording declares up front: format, time origin, metadata, channels.

use serde_json::{Map, Value as Json};

/// Index of a channel in [`Header::channels`].
pub type ChannelId = u32;

/// How the records of a channel combine over time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Composition {
    /// Every record stands on its own.
    Independent,
    /// Each record carries the keys that changed; a key replaces its previous value.
    /// A record whose frame index is 0 is a reset: it discards everything before it.
    FrameDelta,
    /// Each record carries keys that changed; `Value::Removed` deletes a key.
    StateDelta,
}

/// What a channel's records carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelKind {
    /// Records with typed fields sampled over time.
    Signals,
    /// Discrete events.
    Events,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    pub name: String,
    pub kind: ChannelKind,
    pub composition: Composition,
    /// Unit of each field, where the format fixes it (`particle.positions` → `nm`).
    pub units: Vec<(String, String)>,
}

impl Channel {
    pub fn new(name: impl Into<String>, kind: ChannelKind, composition: Composition) -> Channel {
        Channel {
            name: name.into(),
            kind,
            composition,
            units: Vec::new(),
        }
    }
}

/// Where time zero of a recording is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimeOrigin {
    /// Absolute epoch of time zero in Unix nanoseconds, where the format records one.
    pub epoch_ns: Option<i64>,
    /// Time system of the absolute epoch (`UTC`, `TAI`, `GPS`...), or a description of the
    /// relative origin ("recorder start").
    pub system: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// Format name as simrec calls it (`nanover-traj`).
    pub format: String,
    pub format_version: String,
    pub origin: TimeOrigin,
    pub metadata: Map<String, Json>,
    pub channels: Vec<Channel>,
}

impl Header {
    pub fn new(format: impl Into<String>, format_version: impl Into<String>) -> Header {
        Header {
            format: format.into(),
            format_version: format_version.into(),
            origin: TimeOrigin::default(),
            metadata: Map::new(),
            channels: Vec::new(),
        }
    }

    pub fn channel(&self, id: ChannelId) -> Option<&Channel> {
        self.channels.get(id as usize)
    }

    pub fn channel_id(&self, name: &str) -> Option<ChannelId> {
        self.channels
            .iter()
            .position(|c| c.name == name)
            .map(|i| i as ChannelId)
    }

    /// Adds a channel and returns its id.
    pub fn add_channel(&mut self, channel: Channel) -> ChannelId {
        self.channels.push(channel);
        (self.channels.len() - 1) as ChannelId
    }
}
