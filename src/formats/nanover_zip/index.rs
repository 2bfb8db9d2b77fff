//! `index.msgpack` (spec §7): one entry per message with its place, parts, frame index
//! and timestamp.

use super::message::PartKind;
use super::msgpack::{self, Encoder, Head, Oddities};
use crate::model::Value;

/// The parts of a message in order, packed two bits each (at most 16 parts); unknown
/// parts are not listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Types {
    bits: u32,
    len: u8,
    /// Names that are not frame, state or command.
    pub unknown: bool,
}

impl Types {
    pub fn push(&mut self, name: &str) {
        match PartKind::from_name(name) {
            Some(kind) if self.len < 16 => {
                self.bits |= (kind as u32 + 1) << (2 * self.len);
                self.len += 1;
            }
            _ => self.unknown = true,
        }
    }

    pub fn iter(self) -> impl Iterator<Item = PartKind> {
        (0..self.len).map(move |i| match (self.bits >> (2 * i)) & 3 {
            1 => PartKind::Frame,
            2 => PartKind::State,
            _ => PartKind::Command,
        })
    }

    pub fn contains(self, kind: PartKind) -> bool {
        self.iter().any(|k| k == kind)
    }

    pub fn names(self) -> Vec<&'static str> {
        self.iter().map(PartKind::name).collect()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub offset: u64,
    pub length: u64,
    pub types: Types,
    /// `metadata.frame.index`, as written.
    pub frame_index: Option<Value>,
    /// `metadata.timestamp`: `None` when absent or nil; `Err` holds a value of another type.
    pub timestamp: Option<Result<i64, String>>,
}

/// Parses the whole index. The error names the entry and byte (relative to the member).
pub fn parse(bytes: &[u8]) -> Result<Vec<Entry>, msgpack::Error> {
    let fail = |at: usize, what: String| msgpack::Error { at, what };
    let (n, mut p) = match msgpack::head(bytes, 0)? {
        (Head::Array(n), p) => (n, p),
        _ => return Err(fail(0, "the index is not a msgpack array".into())),
    };
    if n > bytes.len() {
        return Err(fail(
            0,
            format!("the index claims {n} entries in {} bytes", bytes.len()),
        ));
    }
    let mut entries = Vec::with_capacity(n);
    let mut odd = Oddities::default();
    for i in 0..n {
        let at = p;
        let (v, next) = msgpack::value(bytes, p, &mut odd, 0)?;
        p = next;
        let Value::Map(fields) = v else {
            return Err(fail(at, format!("index entry {i} is not a map")));
        };
        let get = |k: &str| fields.iter().find(|(key, _)| key == k).map(|(_, v)| v);
        let uint = |k: &str| match get(k) {
            Some(Value::Int(x)) if *x >= 0 => Ok(*x as u64),
            Some(Value::UInt(x)) => Ok(*x),
            _ => Err(fail(at, format!("index entry {i} has no integer `{k}`"))),
        };
        let (offset, length) = (uint("offset")?, uint("length")?);
        let Some(Value::Map(meta)) = get("metadata") else {
            return Err(fail(at, format!("index entry {i} has no `metadata` map")));
        };
        let mut entry = Entry {
            offset,
            length,
            types: Types::default(),
            frame_index: None,
            timestamp: None,
        };
        for (k, v) in meta {
            match (k.as_str(), v) {
                ("types", Value::List(names)) => {
                    for name in names {
                        match name {
                            Value::Str(s) => entry.types.push(s),
                            _ => entry.types.unknown = true,
                        }
                    }
                }
                ("frame.index", v) => entry.frame_index = Some(v.clone()),
                ("timestamp", Value::Null) => {}
                ("timestamp", Value::Int(t)) => entry.timestamp = Some(Ok(*t)),
                ("timestamp", Value::UInt(t)) => entry.timestamp = Some(Err(t.to_string())),
                ("timestamp", other) => {
                    entry.timestamp = Some(Err(format!("a {}", other.kind_name())))
                }
                _ => {}
            }
        }
        entries.push(entry);
    }
    if p != bytes.len() {
        return Err(fail(
            p,
            format!("{} bytes follow the index array", bytes.len() - p),
        ));
    }
    Ok(entries)
}

/// One entry as NanoVer writes it: `{offset, length, metadata: {types, frame.index?, timestamp}}`.
pub fn encode_entry(
    enc: &mut Encoder,
    offset: u64,
    length: u64,
    types: Types,
    frame_index: Option<&Value>,
    timestamp: i64,
) {
    enc.map_len(3);
    enc.str("offset");
    enc.uint(offset);
    enc.str("length");
    enc.uint(length);
    enc.str("metadata");
    enc.map_len(if frame_index.is_some() { 3 } else { 2 });
    enc.str("types");
    let names = types.names();
    enc.array_len(names.len() as u32);
    for name in names {
        enc.str(name);
    }
    if let Some(v) = frame_index {
        enc.str("frame.index");
        enc.value(v);
    }
    enc.str("timestamp");
    enc.int(timestamp);
}
