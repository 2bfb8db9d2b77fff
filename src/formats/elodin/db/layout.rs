//! The bytes of an Elodin DB directory, both ways and without I/O: append-log headers,
//! postcard's varints, strings and maps, the `schema`, `metadata`, `db_state` and message-log
//! records, message buffers, and the two name hashes. Spec: `docs/formats/elodin-db.md`
//! (from Elodin's `libs/db` and `libs/impeller2`, 0.12 – 0.18).
//!
//! Every decoder checks each length against the bytes there are before it takes them, so
//! any input gives a value or a [`LayoutError`] naming the byte where it went wrong.

use crate::formats::cursor::{Cursor, OutOfBounds};

pub use crate::formats::elodin::primitive::Primitive;

/// What is wrong with a record's bytes, at a byte offset into the record (the file).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("{what} ends at byte {at}: the bytes end first")]
    Truncated { what: &'static str, at: usize },
    #[error("{what} at byte {at}: a varint longer than its type")]
    Varint { what: &'static str, at: usize },
    #[error("{what} at byte {at}: not UTF-8")]
    Utf8 { what: &'static str, at: usize },
    #[error("{what} at byte {at}: {value} is not one of Elodin's values")]
    Value {
        what: &'static str,
        at: usize,
        value: u64,
    },
    #[error("{count} bytes after the record's end at byte {at}")]
    Trailing { at: usize, count: usize },
}

impl LayoutError {
    /// The byte the error is at.
    pub fn at(&self) -> usize {
        match self {
            LayoutError::Truncated { at, .. }
            | LayoutError::Varint { at, .. }
            | LayoutError::Utf8 { at, .. }
            | LayoutError::Value { at, .. }
            | LayoutError::Trailing { at, .. } => *at,
        }
    }
}

/// A postcard reader: a cursor that names what it was reading when the bytes run out.
#[derive(Clone)]
pub struct Postcard<'a> {
    cur: Cursor<'a>,
}

impl<'a> Postcard<'a> {
    pub fn new(bytes: &'a [u8]) -> Postcard<'a> {
        Postcard {
            cur: Cursor::new(bytes),
        }
    }

    pub fn pos(&self) -> usize {
        self.cur.pos()
    }

    fn cut(&self, what: &'static str) -> impl Fn(OutOfBounds) -> LayoutError {
        move |e| LayoutError::Truncated { what, at: e.at }
    }

    /// An unsigned LEB128 of at most `max_bytes` bytes (10 for a u64, 5 for a u32).
    fn varint(&mut self, what: &'static str, max_bytes: u32) -> Result<u64, LayoutError> {
        let at = self.cur.pos();
        let mut value: u64 = 0;
        for i in 0..max_bytes {
            let b = self.cur.u8().map_err(self.cut(what))?;
            let bits = u64::from(b & 0x7f);
            // The last byte of a u64 holds one bit.
            if i == 9 && bits > 1 {
                return Err(LayoutError::Varint { what, at });
            }
            value |= bits << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(LayoutError::Varint { what, at })
    }

    pub fn u64(&mut self, what: &'static str) -> Result<u64, LayoutError> {
        self.varint(what, 10)
    }

    pub fn u32(&mut self, what: &'static str) -> Result<u32, LayoutError> {
        let at = self.cur.pos();
        let v = self.varint(what, 5)?;
        u32::try_from(v).map_err(|_| LayoutError::Varint { what, at })
    }

    pub fn u8(&mut self, what: &'static str) -> Result<u8, LayoutError> {
        self.cur.u8().map_err(self.cut(what))
    }

    pub fn bool(&mut self, what: &'static str) -> Result<bool, LayoutError> {
        let at = self.cur.pos();
        match self.u8(what)? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(LayoutError::Value {
                what,
                at,
                value: v.into(),
            }),
        }
    }

    pub fn string(&mut self, what: &'static str) -> Result<String, LayoutError> {
        let len = self.u64(what)?;
        let at = self.cur.pos();
        // The length is checked against the bytes there are before anything is taken.
        let len = usize::try_from(len)
            .ok()
            .filter(|&n| n <= self.cur.remaining())
            .ok_or(LayoutError::Truncated {
                what,
                at: self.cur.bytes().len(),
            })?;
        let bytes = self.cur.take(len).map_err(self.cut(what))?;
        std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|_| LayoutError::Utf8 { what, at })
    }

    /// A `HashMap<String, String>`, in the order of the bytes (Rust's is arbitrary).
    pub fn map(&mut self, what: &'static str) -> Result<Vec<(String, String)>, LayoutError> {
        let count = self.u64(what)?;
        // Each entry takes at least two bytes: a count past that is damage, not a size.
        if count > (self.cur.remaining() / 2) as u64 {
            return Err(LayoutError::Truncated {
                what,
                at: self.cur.bytes().len(),
            });
        }
        (0..count)
            .map(|_| Ok((self.string(what)?, self.string(what)?)))
            .collect()
    }

    pub fn duration(&mut self, what: &'static str) -> Result<Duration, LayoutError> {
        let secs = self.u64(what)?;
        let at = self.cur.pos();
        let nanos = self.u32(what)?;
        if nanos >= 1_000_000_000 {
            return Err(LayoutError::Value {
                what,
                at,
                value: nanos.into(),
            });
        }
        Ok(Duration { secs, nanos })
    }

    pub fn is_empty(&self) -> bool {
        self.cur.is_empty()
    }

    /// Fails when bytes remain.
    pub fn end(&self) -> Result<(), LayoutError> {
        match self.cur.remaining() {
            0 => Ok(()),
            count => Err(LayoutError::Trailing {
                at: self.cur.pos(),
                count,
            }),
        }
    }

    pub fn rest(&self) -> &'a [u8] {
        self.cur.rest()
    }
}

pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub fn put_string(out: &mut Vec<u8>, s: &str) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

pub fn put_map(out: &mut Vec<u8>, map: &[(String, String)]) {
    put_varint(out, map.len() as u64);
    for (k, v) in map {
        put_string(out, k);
        put_string(out, v);
    }
}

/// A `std::time::Duration` as postcard has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Duration {
    pub secs: u64,
    pub nanos: u32,
}

impl Duration {
    pub fn as_nanos(self) -> u128 {
        u128::from(self.secs) * 1_000_000_000 + u128::from(self.nanos)
    }

    pub fn encode(self, out: &mut Vec<u8>) {
        put_varint(out, self.secs);
        put_varint(out, self.nanos.into());
    }
}

/// The header of an append log: `committed` counts the valid bytes of the file, header
/// included; `extra` is the index's start timestamp or the data's row size (absent in
/// message logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogHeader {
    pub committed: u64,
    pub head: u64,
    pub extra: Option<u64>,
}

/// Header sizes: a component's `index` and `data`, and a message log's files.
pub const COMPONENT_LOG_HEADER: usize = 24;
pub const MSG_LOG_HEADER: usize = 16;

impl LogHeader {
    /// The header at the start of `bytes` of a log whose header is `size` bytes (16 or 24).
    pub fn decode(bytes: &[u8], size: usize) -> Result<LogHeader, LayoutError> {
        let mut cur = Cursor::new(bytes);
        let cut = |e: OutOfBounds| LayoutError::Truncated {
            what: "append-log header",
            at: e.at,
        };
        let committed = cur.u64_le().map_err(cut)?;
        let head = cur.u64_le().map_err(cut)?;
        let extra = if size > MSG_LOG_HEADER {
            Some(cur.u64_le().map_err(cut)?)
        } else {
            None
        };
        Ok(LogHeader {
            committed,
            head,
            extra,
        })
    }

    pub fn size(&self) -> usize {
        if self.extra.is_some() {
            COMPONENT_LOG_HEADER
        } else {
            MSG_LOG_HEADER
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.size());
        out.extend_from_slice(&self.committed.to_le_bytes());
        out.extend_from_slice(&self.head.to_le_bytes());
        if let Some(extra) = self.extra {
            out.extend_from_slice(&extra.to_le_bytes());
        }
        out
    }
}

/// The index's start timestamp Elodin writes when it creates a component: "none yet".
pub const NO_START: i64 = i64::MAX;

/// A component's `schema`: its primitive type and shape (`[]` for a scalar).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    pub prim: Primitive,
    pub shape: Vec<u64>,
}

impl Schema {
    pub fn decode(bytes: &[u8]) -> Result<Schema, LayoutError> {
        let mut p = Postcard::new(bytes);
        let at = p.pos();
        let index = p.u64("schema's type")?;
        let prim = Primitive::from_index(index).ok_or(LayoutError::Value {
            what: "schema's type",
            at,
            value: index,
        })?;
        let ndim = p.u64("schema's rank")?;
        if ndim > bytes.len() as u64 {
            return Err(LayoutError::Truncated {
                what: "schema's shape",
                at: bytes.len(),
            });
        }
        let shape = (0..ndim)
            .map(|_| p.u64("schema's shape"))
            .collect::<Result<_, _>>()?;
        p.end()?;
        Ok(Schema { prim, shape })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, self.prim.index());
        put_varint(&mut out, self.shape.len() as u64);
        for &d in &self.shape {
            put_varint(&mut out, d);
        }
        out
    }

    /// Elements per row, or `None` when the product overflows.
    pub fn elements(&self) -> Option<usize> {
        self.shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?))
    }

    /// Bytes per row, or `None` when it overflows.
    pub fn row_size(&self) -> Option<usize> {
        self.elements()?.checked_mul(self.prim.size())
    }
}

/// A component's `metadata`: its id, full name and string map; `asset` only in the
/// 0.12 – 0.14 layout (a trailing bool: the component holds asset handles).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentMetadata {
    pub component_id: u64,
    pub name: String,
    pub metadata: Vec<(String, String)>,
    pub asset: Option<bool>,
}

impl ComponentMetadata {
    /// `legacy`: the 0.12 – 0.14 layout, with its trailing `asset` byte.
    pub fn decode(bytes: &[u8], legacy: bool) -> Result<ComponentMetadata, LayoutError> {
        let mut p = Postcard::new(bytes);
        let component_id = p.u64("component id")?;
        let name = p.string("component name")?;
        let metadata = p.map("component metadata")?;
        let asset = if legacy {
            Some(p.bool("asset flag")?)
        } else {
            None
        };
        // Elodin's postcard decoding ignores what follows; so does simrec.
        Ok(ComponentMetadata {
            component_id,
            name,
            metadata,
            asset,
        })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, self.component_id);
        put_string(&mut out, &self.name);
        put_map(&mut out, &self.metadata);
        if let Some(asset) = self.asset {
            out.push(asset.into());
        }
        out
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// An entity's record in the 0.12 – 0.14 layout's `entity_metadata/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityMetadata {
    pub entity_id: u64,
    pub name: String,
    pub metadata: Vec<(String, String)>,
}

impl EntityMetadata {
    pub fn decode(bytes: &[u8]) -> Result<EntityMetadata, LayoutError> {
        let mut p = Postcard::new(bytes);
        Ok(EntityMetadata {
            entity_id: p.u64("entity id")?,
            name: p.string("entity name")?,
            metadata: p.map("entity metadata")?,
        })
    }
}

/// `db_state`: 0.15+'s `DbConfig` (with a string map) or 0.12 – 0.14's `DbSettings` (a
/// second duration, no map). The two never read as each other: each ends exactly at the
/// end of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbState {
    Config {
        recording: bool,
        default_stream_time_step: Duration,
        metadata: Vec<(String, String)>,
    },
    Settings {
        recording: bool,
        time_step: Duration,
        default_stream_time_step: Duration,
    },
}

impl DbState {
    pub fn decode(bytes: &[u8]) -> Result<DbState, LayoutError> {
        let mut p = Postcard::new(bytes);
        let recording = p.bool("db_state's recording flag")?;
        let step = p.duration("db_state's time step")?;
        let mut config = p.clone();
        let as_config = config
            .map("db_state's metadata")
            .and_then(|m| config.end().map(|()| m));
        match as_config {
            Ok(metadata) => Ok(DbState::Config {
                recording,
                default_stream_time_step: step,
                metadata,
            }),
            Err(config_error) => {
                let mut settings = p;
                match settings
                    .duration("db_state's stream time step")
                    .and_then(|d| settings.end().map(|()| d))
                {
                    Ok(second) => Ok(DbState::Settings {
                        recording,
                        time_step: step,
                        default_stream_time_step: second,
                    }),
                    Err(_) => Err(config_error),
                }
            }
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            DbState::Config {
                recording,
                default_stream_time_step,
                metadata,
            } => {
                out.push((*recording).into());
                default_stream_time_step.encode(&mut out);
                put_map(&mut out, metadata);
            }
            DbState::Settings {
                recording,
                time_step,
                default_stream_time_step,
            } => {
                out.push((*recording).into());
                time_step.encode(&mut out);
                default_stream_time_step.encode(&mut out);
            }
        }
        out
    }

    /// The 0.12 – 0.14 layout.
    pub fn is_legacy(&self) -> bool {
        matches!(self, DbState::Settings { .. })
    }

    pub fn metadata(&self) -> &[(String, String)] {
        match self {
            DbState::Config { metadata, .. } => metadata,
            DbState::Settings { .. } => &[],
        }
    }
}

/// The postcard-schema of a message log of raw bytes (`Vec<u8>`), the only one Elodin's
/// clients write: `NamedType { "Vec<T>", Seq(NamedType { "u8", U8 }) }`.
pub const BYTES_SCHEMA: &[u8] = b"\x06Vec<T>\x16\x02u8\x02";

/// A message log's `metadata`: its name, the postcard-schema of its messages (kept as
/// bytes) and a string map (read only after the schema simrec knows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MsgMetadata {
    pub name: String,
    pub schema: Vec<u8>,
    pub metadata: Vec<(String, String)>,
}

impl MsgMetadata {
    pub fn decode(bytes: &[u8]) -> Result<MsgMetadata, LayoutError> {
        let mut p = Postcard::new(bytes);
        let name = p.string("message log name")?;
        let rest = p.rest();
        match rest.strip_prefix(BYTES_SCHEMA) {
            Some(after) => {
                let mut m = Postcard::new(after);
                Ok(MsgMetadata {
                    name,
                    schema: BYTES_SCHEMA.to_vec(),
                    metadata: m.map("message log metadata").unwrap_or_default(),
                })
            }
            // Another schema: its grammar is postcard-schema's, which simrec does not
            // walk; the name is what the reader needs.
            None => Ok(MsgMetadata {
                name,
                schema: rest.to_vec(),
                metadata: Vec::new(),
            }),
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_string(&mut out, &self.name);
        out.extend_from_slice(&self.schema);
        put_map(&mut out, &self.metadata);
        out
    }
}

/// A message's entry in `offsets` (Umbra-style string): up to 12 bytes inline, else the
/// length, the first four bytes and an offset into `data_log`'s payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UmbraBuf {
    Inline {
        len: u32,
        bytes: [u8; 12],
    },
    Outside {
        len: u32,
        prefix: [u8; 4],
        buffer: u32,
        offset: u32,
    },
}

pub const UMBRA_SIZE: usize = 16;
const UMBRA_INLINE: u32 = 12;

impl UmbraBuf {
    pub fn decode(bytes: &[u8; UMBRA_SIZE]) -> UmbraBuf {
        let word =
            |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        let len = word(0);
        if len <= UMBRA_INLINE {
            let mut inline = [0; 12];
            inline.copy_from_slice(&bytes[4..]);
            UmbraBuf::Inline { len, bytes: inline }
        } else {
            UmbraBuf::Outside {
                len,
                prefix: [bytes[4], bytes[5], bytes[6], bytes[7]],
                buffer: word(8),
                offset: word(12),
            }
        }
    }

    /// The entry of a message of `payload` bytes whose long form would lie at `offset`
    /// of `data_log`'s payload; whether it goes there.
    pub fn for_payload(payload: &[u8], offset: u32) -> Option<UmbraBuf> {
        let len = u32::try_from(payload.len()).ok()?;
        Some(if len <= UMBRA_INLINE {
            let mut bytes = [0; 12];
            bytes[..payload.len()].copy_from_slice(payload);
            UmbraBuf::Inline { len, bytes }
        } else {
            let mut prefix = [0; 4];
            prefix.copy_from_slice(&payload[..4]);
            UmbraBuf::Outside {
                len,
                prefix,
                buffer: 0,
                offset,
            }
        })
    }

    pub fn encode(&self) -> [u8; UMBRA_SIZE] {
        let mut out = [0; UMBRA_SIZE];
        match self {
            UmbraBuf::Inline { len, bytes } => {
                out[..4].copy_from_slice(&len.to_le_bytes());
                out[4..].copy_from_slice(bytes);
            }
            UmbraBuf::Outside {
                len,
                prefix,
                buffer,
                offset,
            } => {
                out[..4].copy_from_slice(&len.to_le_bytes());
                out[4..8].copy_from_slice(prefix);
                out[8..12].copy_from_slice(&buffer.to_le_bytes());
                out[12..].copy_from_slice(&offset.to_le_bytes());
            }
        }
        out
    }

    pub fn len(&self) -> u32 {
        match self {
            UmbraBuf::Inline { len, .. } | UmbraBuf::Outside { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A component's id, its directory's name: FNV-1a 64 of the full name, top bit cleared
/// (Elodin keeps ids within an i64).
pub fn component_id(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in name.as_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h & !(1 << 63)
}

/// A message log's id, its directory's name: FNV-1a 32 of the name folded to 16 bits, read
/// little-endian; a first byte of 224 (reserved by Elodin) becomes 223.
pub fn msg_id(name: &str) -> u16 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in name.as_bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    let mut bytes = (((h >> 16) ^ (h & 0xffff)) as u16).to_le_bytes();
    if bytes[0] == 224 {
        bytes[0] = 223;
    }
    u16::from_le_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(rel: &str) -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/elodin-db")
            .join(rel);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn ids_hash_names_as_elodin_does() {
        assert_eq!(component_id("a.world_pos"), 6412982479418929775);
        assert_eq!(component_id("Globals.tick"), 2621284420631214018);
        assert_eq!(component_id("a"), 3414815163700866188);
        assert_eq!(component_id("probe.imu"), 6594786791153203538);
        assert_eq!(component_id("world_pos"), 6709265627763630702);
        assert_eq!(msg_id("log"), 28160);
        assert_eq!(msg_id("event"), 11951);
        assert_eq!(msg_id("note"), 40359);
    }

    #[test]
    fn component_records_decode_and_encode_to_the_fixture_bytes() {
        let id = component_id("a.world_pos");
        let schema = fixture(&format!("three_body_v0180/{id}/schema"));
        let s = Schema::decode(&schema).unwrap();
        assert_eq!((s.prim, s.shape.clone()), (Primitive::F64, vec![7]));
        assert_eq!(s.row_size(), Some(56));
        assert_eq!(s.encode(), schema);

        let meta = fixture(&format!("three_body_v0180/{id}/metadata"));
        let m = ComponentMetadata::decode(&meta, false).unwrap();
        assert_eq!((m.component_id, m.name.as_str()), (id, "a.world_pos"));
        assert_eq!(m.get("element_names"), Some("q0,q1,q2,q3,x,y,z"));
        assert_eq!(m.encode(), meta);

        let dcm = fixture(&format!("types_v0180/{}/schema", component_id("probe.dcm")));
        assert_eq!(dcm, [0x0a, 0x02, 0x03, 0x03]);
        assert_eq!(Schema::decode(&dcm).unwrap().shape, vec![3, 3]);

        let index = fixture(&format!("three_body_v0180/{id}/index"));
        let h = LogHeader::decode(&index, COMPONENT_LOG_HEADER).unwrap();
        assert_eq!(h.committed, index.len() as u64);
        assert_eq!(h.extra, Some(NO_START as u64));
        assert_eq!(h.encode(), index[..24]);
        let data = fixture(&format!("three_body_v0180/{id}/data"));
        let h = LogHeader::decode(&data, COMPONENT_LOG_HEADER).unwrap();
        assert_eq!(
            (h.committed, h.head, h.extra),
            (data.len() as u64, 0, Some(56))
        );
    }

    #[test]
    fn db_state_tells_the_two_layouts_apart() {
        let new = fixture("three_body_v0180/db_state");
        let state = DbState::decode(&new).unwrap();
        assert!(!state.is_legacy());
        assert!(state.metadata().iter().any(|(k, _)| k == "version.created"));
        assert_eq!(state.encode().len(), new.len());
        let old = fixture("ball_v0142/db_state");
        let state = DbState::decode(&old).unwrap();
        assert!(state.is_legacy());
        assert_eq!(state.encode(), old);
        let minimal = [1, 0, 0xab, 0xa0, 0xf9, 0x07, 0];
        match DbState::decode(&minimal).unwrap() {
            DbState::Config {
                default_stream_time_step,
                metadata,
                ..
            } => {
                assert_eq!(default_stream_time_step.nanos, 16_666_667);
                assert!(metadata.is_empty());
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            DbState::decode(&minimal).unwrap().encode(),
            minimal.to_vec()
        );
        // A cut may read as a minimal 0.15 state (its first 7 bytes are one), never as the
        // state it was cut from.
        for cut in 0..old.len() {
            assert_ne!(
                DbState::decode(&old[..cut]).ok().as_ref(),
                Some(&state),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn legacy_metadata_has_an_asset_flag() {
        let id = component_id("world_pos");
        let meta = fixture(&format!("ball_v0142/{id}/metadata"));
        let m = ComponentMetadata::decode(&meta, true).unwrap();
        assert_eq!((m.name.as_str(), m.asset), ("world_pos", Some(false)));
        assert_eq!(m.encode(), meta);
        let e = EntityMetadata::decode(&fixture("ball_v0142/entity_metadata/1")).unwrap();
        assert_eq!((e.entity_id, e.name.as_str()), (1, "Ball"));
    }

    #[test]
    fn message_logs_decode_and_encode() {
        let meta = fixture("types_v0180/msgs/28160/metadata");
        let m = MsgMetadata::decode(&meta).unwrap();
        assert_eq!(
            (m.name.as_str(), m.schema.as_slice()),
            ("log", BYTES_SCHEMA)
        );
        assert_eq!(m.encode(), meta);
        let offsets = fixture("types_v0180/msgs/28160/offsets");
        let first: [u8; 16] = offsets[16..32].try_into().unwrap();
        let u = UmbraBuf::decode(&first);
        assert_eq!(u, UmbraBuf::for_payload(b"tick 0", 0).unwrap());
        assert_eq!(u.encode(), first);
        let long: [u8; 16] = fixture("types_v0180/msgs/11951/offsets")[32..48]
            .try_into()
            .unwrap();
        match UmbraBuf::decode(&long) {
            UmbraBuf::Outside {
                len,
                prefix,
                offset,
                ..
            } => {
                assert_eq!((len, &prefix, offset), (42, b"{\"i\"", 41));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn decoders_take_any_bytes() {
        for bytes in [
            &[][..],
            &[0xff; 11],
            &[0x0b],
            &[0x0a, 0xff, 0xff, 0xff, 0x7f],
        ] {
            assert!(Schema::decode(bytes).is_err());
            assert!(ComponentMetadata::decode(bytes, false).is_err());
            assert!(DbState::decode(bytes).is_err());
            assert!(MsgMetadata::decode(bytes).is_err());
        }
        let mut huge_map = vec![0, 0, 0];
        put_varint(&mut huge_map, u64::MAX);
        assert!(DbState::decode(&huge_map).is_err());
    }
}
