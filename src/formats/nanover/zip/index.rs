//! `index.msgpack` (spec §7): one entry per message with its place, parts, frame index
//! and timestamp.

use super::message::PartKind;
use super::msgpack::{self, Encoder, Head, Oddities};
use crate::formats::input::Input;
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

/// Entries parsed per look at the index member: memory follows this, not the index.
const BATCH: usize = 1024;
/// Bytes looked at for a batch (grown for an entry that does not fit).
const WINDOW: usize = 64 << 10;

/// The index's entries, parsed from the member a batch at a time as they are asked for.
/// Error positions are relative to the member's first byte.
pub struct Entries {
    /// File offset of the member's first byte.
    start: u64,
    /// Member offset of the next unparsed byte.
    pos: u64,
    size: u64,
    total: u64,
    parsed: u64,
    batch: std::collections::VecDeque<Entry>,
}

impl Entries {
    /// Reads the array header of the index member at `start` (`size` bytes).
    pub fn open(input: &mut Input, start: u64, size: u64) -> Result<Entries, msgpack::Error> {
        let bytes = input
            .bytes(start, size.min(9) as usize)
            .map_err(|e| fail(0, e.to_string()))?;
        let (n, p) = match msgpack::head(bytes, 0)? {
            (Head::Array(n), p) => (n as u64, p as u64),
            _ => return Err(fail(0, "the index is not a msgpack array".into())),
        };
        if n > size {
            return Err(fail(
                0,
                format!("the index claims {n} entries in {size} bytes"),
            ));
        }
        Ok(Entries {
            start,
            pos: p,
            size,
            total: n,
            parsed: 0,
            batch: Default::default(),
        })
    }

    /// How many entries the index says it has.
    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn next(&mut self, input: &mut Input) -> Result<Option<Entry>, msgpack::Error> {
        if self.batch.is_empty() {
            self.refill(input)?;
        }
        Ok(self.batch.pop_front())
    }

    fn refill(&mut self, input: &mut Input) -> Result<(), msgpack::Error> {
        let left = self.size - self.pos;
        if self.parsed == self.total {
            if left > 0 {
                return Err(fail(
                    self.pos as usize,
                    format!("{left} bytes follow the index array"),
                ));
            }
            return Ok(());
        }
        let mut window = (WINDOW as u64).min(left) as usize;
        loop {
            let bytes = input
                .bytes(self.start + self.pos, window)
                .map_err(|e| fail(self.pos as usize, e.to_string()))?;
            let mut p = 0;
            while self.parsed < self.total && self.batch.len() < BATCH {
                match entry(bytes, p, self.parsed) {
                    Ok((e, next)) => {
                        self.batch.push_back(e);
                        self.parsed += 1;
                        p = next;
                    }
                    // Cut off by the window, perhaps: the next batch starts here.
                    Err(_) if (window as u64) < left => break,
                    Err(e) => {
                        return Err(fail(self.pos as usize + e.at, e.what));
                    }
                }
            }
            if self.batch.is_empty() {
                // One entry larger than the window: look again at a wider one.
                window = (window as u64 * 4).min(left) as usize;
                continue;
            }
            self.pos += p as u64;
            return Ok(());
        }
    }
}

fn fail(at: usize, what: String) -> msgpack::Error {
    msgpack::Error { at, what }
}

/// Parses entry `i` at `p`; returns it and the position after it.
fn entry(bytes: &[u8], p: usize, i: u64) -> Result<(Entry, usize), msgpack::Error> {
    let at = p;
    let (v, next) = msgpack::value(bytes, p, &mut Oddities::default(), 0)?;
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
            ("timestamp", other) => entry.timestamp = Some(Err(format!("a {}", other.kind_name()))),
            _ => {}
        }
    }
    Ok((entry, next))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An index of `n` entries, entry `big` with a `frame.index` larger than a window.
    fn index_bytes(n: u32, big: u64) -> Vec<u8> {
        let mut enc = Encoder::new();
        enc.array_len(n);
        let mut types = Types::default();
        types.push("frame");
        for i in 0..u64::from(n) {
            let fi = if i == big {
                Value::Str("x".repeat(3 * WINDOW))
            } else {
                Value::Int(i as i64)
            };
            encode_entry(&mut enc, i * 10, 10, types, Some(&fi), 1000 + i as i64);
        }
        enc.into_vec()
    }

    fn read_all(bytes: Vec<u8>) -> Result<Vec<Entry>, msgpack::Error> {
        let size = bytes.len() as u64;
        let mut input = Input::from_bytes(bytes);
        let mut entries = Entries::open(&mut input, 0, size)?;
        let mut out = Vec::new();
        while let Some(e) = entries.next(&mut input)? {
            out.push(e);
        }
        Ok(out)
    }

    #[test]
    fn entries_stream_across_batches_windows_and_an_entry_wider_than_a_window() {
        let n = 3 * BATCH as u32 + 7;
        let bytes = index_bytes(n, 2000);
        assert!(bytes.len() > 4 * WINDOW);
        let entries = read_all(bytes).unwrap();
        assert_eq!(entries.len(), n as usize);
        for (i, e) in entries.iter().enumerate() {
            assert_eq!((e.offset, e.length), (i as u64 * 10, 10), "entry {i}");
            assert_eq!(e.timestamp, Some(Ok(1000 + i as i64)), "entry {i}");
            assert!(e.types.contains(PartKind::Frame));
        }
        assert_eq!(entries[1999].frame_index, Some(Value::Int(1999)));
        assert!(matches!(&entries[2000].frame_index, Some(Value::Str(s)) if s.len() == 3 * WINDOW));
    }

    #[test]
    fn a_cut_index_or_trailing_bytes_are_errors_with_member_positions() {
        let bytes = index_bytes(2000, u64::MAX);
        let cut = bytes[..bytes.len() - 5].to_vec();
        let e = read_all(cut).unwrap_err();
        assert!(e.at > WINDOW, "{e:?}");
        let mut longer = bytes.clone();
        longer.extend_from_slice(&[0xc0; 3]);
        let e = read_all(longer).unwrap_err();
        assert_eq!(
            (e.at, e.what.as_str()),
            (bytes.len(), "3 bytes follow the index array")
        );
        // One entry announced, none there: the error is where it should start.
        let e = read_all(vec![0x91]).unwrap_err();
        assert_eq!(e.at, 1);
    }
}
