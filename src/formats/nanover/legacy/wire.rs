//! Decoding NanoVer payloads straight into model values.
//!
//! prost's generated decoders skip unknown fields silently and give no
//! position for an error; validation needs both, so payloads are walked here
//! with one pass that builds the values and notes what it met. Encoding uses
//! the prost messages in `proto.rs`, and a test decodes every fixture record
//! with both and compares.

use std::fmt;

use super::keys::{shape_array, ArrayKind};
use crate::formats::cursor;
use crate::model::{ArrayData, Field, Value};

/// A payload that is not a valid message, with the position inside the payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub pos: usize,
    pub what: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at payload byte {}", self.what, self.pos)
    }
}

/// Something legal but noteworthy met while decoding (becomes an info or warning finding).
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    UnknownField {
        message: &'static str,
        field: u32,
        pos: usize,
    },
    UnsetOneof {
        message: &'static str,
        key: String,
    },
    DuplicateKey {
        key: String,
    },
    ArrayShape {
        key: String,
        len: usize,
    },
    ArrayKind {
        key: String,
        stored: ArrayKind,
        expected: ArrayKind,
    },
    EmptyArrayKind {
        key: String,
        stored: ArrayKind,
        expected: ArrayKind,
    },
    NonFinite {
        key: String,
        index: usize,
    },
}

/// Decoding mode. Strict decoding is the test resynchronisation and v1 detection use:
/// unknown top-level fields are errors there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strictness {
    Lenient,
    Strict,
}

/// A decoded `GetFrameResponse` (or v1 `FrameData`).
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub frame_index: u32,
    pub fields: Vec<Field>,
}

const MAX_DEPTH: u32 = 100;

type Result<T> = std::result::Result<T, DecodeError>;

const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const FIXED32: u8 = 5;

/// A cursor over one message's bytes; `base` is the message's offset in the payload.
struct Cursor<'a> {
    inner: cursor::Cursor<'a>,
    base: usize,
    /// Where the last field key started (for notes about that field).
    key_at: usize,
}

impl<'a> Cursor<'a> {
    fn new(buf: &'a [u8], base: usize) -> Self {
        Cursor {
            inner: cursor::Cursor::new(buf),
            base,
            key_at: 0,
        }
    }

    /// The message's bytes, read or not.
    fn bytes(&self) -> &'a [u8] {
        self.inner.bytes()
    }

    fn at(&self) -> usize {
        self.base + self.inner.pos()
    }

    fn err<T>(&self, what: impl Into<String>) -> Result<T> {
        Err(DecodeError {
            pos: self.at(),
            what: what.into(),
        })
    }

    fn done(&self) -> bool {
        self.inner.is_empty()
    }

    fn varint(&mut self) -> Result<u64> {
        let mut value: u64 = 0;
        for i in 0..10 {
            let Ok(b) = self.inner.u8() else {
                return self.err("varint runs past the end of its message");
            };
            if i == 9 && b > 1 {
                return self.err("varint longer than 64 bits");
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(value);
            }
        }
        self.err("varint longer than 10 bytes")
    }

    /// Reads a field key: (field number, wire type).
    fn key(&mut self) -> Result<(u32, u8)> {
        let start = self.inner.pos();
        self.key_at = start;
        let key = self.varint()?;
        let wire = (key & 7) as u8;
        let field = key >> 3;
        if field == 0 || field > u64::from(u32::MAX >> 3) {
            self.inner.set_pos(start);
            return self.err(format!("invalid field number {field}"));
        }
        if !matches!(wire, VARINT | FIXED64 | LEN | FIXED32) {
            self.inner.set_pos(start);
            return self.err(format!("unsupported wire type {wire} (field {field})"));
        }
        Ok((field as u32, wire))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        match self.inner.take(n) {
            Ok(s) => Ok(s),
            Err(e) => self.err(format!(
                "field of {n} bytes runs past the end of its message ({} left)",
                e.available
            )),
        }
    }

    /// A length-delimited field as a cursor over its contents.
    fn nested(&mut self) -> Result<Cursor<'a>> {
        let len = self.varint()?;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        let base = self.at();
        let bytes = self.take(len)?;
        Ok(Cursor::new(bytes, base))
    }

    fn string(&mut self) -> Result<String> {
        let start = self.at();
        let bytes = self.nested()?.bytes();
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(s.to_string()),
            Err(_) => Err(DecodeError {
                pos: start,
                what: "string is not valid UTF-8".into(),
            }),
        }
    }

    fn fixed64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes([
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
        ]))
    }

    fn skip(&mut self, wire: u8) -> Result<()> {
        match wire {
            VARINT => self.varint().map(drop),
            FIXED64 => self.take(8).map(drop),
            FIXED32 => self.take(4).map(drop),
            _ => self.nested().map(drop),
        }
    }

    fn expect_wire(&self, field: u32, wire: u8, want: u8, message: &str) -> Result<()> {
        if wire == want {
            Ok(())
        } else {
            self.err(format!(
                "{message} field {field} has wire type {wire}, expected {want}"
            ))
        }
    }
}

/// Decoder state shared by one payload: mode and notes.
pub struct Decoder<'n> {
    strictness: Strictness,
    notes: &'n mut Vec<Note>,
}

impl<'n> Decoder<'n> {
    pub fn new(strictness: Strictness, notes: &'n mut Vec<Note>) -> Self {
        Decoder { strictness, notes }
    }

    fn unknown(
        &mut self,
        c: &mut Cursor,
        message: &'static str,
        field: u32,
        wire: u8,
        top: bool,
    ) -> Result<()> {
        let pos = c.base + c.key_at;
        if top && self.strictness == Strictness::Strict {
            return Err(DecodeError {
                pos,
                what: format!("unknown field {field} in {message}"),
            });
        }
        c.skip(wire)?;
        self.notes.push(Note::UnknownField {
            message,
            field,
            pos,
        });
        Ok(())
    }

    /// `GetFrameResponse`: the payload of a version-2 `.traj` record.
    pub fn frame_response(&mut self, payload: &[u8]) -> Result<Frame> {
        let mut c = Cursor::new(payload, 0);
        let mut frame_index = 0u32;
        let mut fields = Vec::new();
        while !c.done() {
            let (field, wire) = c.key()?;
            match field {
                1 => {
                    c.expect_wire(field, wire, VARINT, "GetFrameResponse")?;
                    // uint32 keeps the low 32 bits of the varint, as protobuf does.
                    frame_index = c.varint()? as u32;
                }
                2 => {
                    c.expect_wire(field, wire, LEN, "GetFrameResponse")?;
                    let mut inner = c.nested()?;
                    // A repeated message field merges: keys of later parts override.
                    fields.extend(self.frame_data_fields(&mut inner)?);
                    dedup_last_wins(&mut fields, self.notes);
                }
                _ => self.unknown(&mut c, "GetFrameResponse", field, wire, true)?,
            }
        }
        Ok(Frame {
            frame_index,
            fields,
        })
    }

    /// A bare `FrameData`: the payload of a version-1 `.traj` record.
    pub fn frame_data(&mut self, payload: &[u8]) -> Result<Vec<Field>> {
        let mut c = Cursor::new(payload, 0);
        self.frame_data_inner(&mut c, true)
    }

    fn frame_data_fields(&mut self, c: &mut Cursor) -> Result<Vec<Field>> {
        self.frame_data_inner(c, false)
    }

    fn frame_data_inner(&mut self, c: &mut Cursor, top: bool) -> Result<Vec<Field>> {
        let mut values: Vec<Field> = Vec::new();
        let mut arrays: Vec<Field> = Vec::new();
        while !c.done() {
            let (field, wire) = c.key()?;
            match field {
                1 => {
                    c.expect_wire(field, wire, LEN, "FrameData")?;
                    let mut entry = c.nested()?;
                    values.push(self.value_entry(&mut entry, "FrameData.values", false, 0)?);
                }
                2 => {
                    c.expect_wire(field, wire, LEN, "FrameData")?;
                    let mut entry = c.nested()?;
                    arrays.push(self.array_entry(&mut entry)?);
                }
                _ => self.unknown(c, "FrameData", field, wire, top)?,
            }
        }
        dedup_last_wins(&mut values, self.notes);
        dedup_last_wins(&mut arrays, self.notes);
        values.extend(arrays);
        Ok(values)
    }

    /// `StateUpdate`: the payload of a `.state` record. Top-level nulls become `Removed`.
    pub fn state_update(&mut self, payload: &[u8]) -> Result<Vec<Field>> {
        let mut c = Cursor::new(payload, 0);
        let mut fields = Vec::new();
        while !c.done() {
            let (field, wire) = c.key()?;
            match field {
                1 => {
                    c.expect_wire(field, wire, LEN, "StateUpdate")?;
                    let mut s = c.nested()?;
                    fields.extend(self.struct_fields(&mut s, true, 0)?);
                    dedup_last_wins(&mut fields, self.notes);
                }
                _ => self.unknown(&mut c, "StateUpdate", field, wire, true)?,
            }
        }
        Ok(fields)
    }

    /// `google.protobuf.Struct`; with `removals`, a null value is the removal marker.
    fn struct_fields(&mut self, c: &mut Cursor, removals: bool, depth: u32) -> Result<Vec<Field>> {
        let mut fields = Vec::new();
        while !c.done() {
            let (field, wire) = c.key()?;
            match field {
                1 => {
                    c.expect_wire(field, wire, LEN, "Struct")?;
                    let mut entry = c.nested()?;
                    fields.push(self.value_entry(&mut entry, "Struct", removals, depth)?);
                }
                _ => self.unknown(c, "Struct", field, wire, false)?,
            }
        }
        dedup_last_wins(&mut fields, self.notes);
        Ok(fields)
    }

    /// A `map<string, Value>` entry.
    fn value_entry(
        &mut self,
        c: &mut Cursor,
        message: &'static str,
        removals: bool,
        depth: u32,
    ) -> Result<Field> {
        let mut key = String::new();
        let mut value = None;
        while !c.done() {
            let (field, wire) = c.key()?;
            match field {
                1 => {
                    c.expect_wire(field, wire, LEN, message)?;
                    key = c.string()?;
                }
                2 => {
                    c.expect_wire(field, wire, LEN, message)?;
                    let mut v = c.nested()?;
                    value = Some(self.value(&mut v, depth + 1)?);
                }
                _ => self.unknown(c, message, field, wire, false)?,
            }
        }
        let value = match value {
            Some(Some(v)) => v,
            // An omitted value or a Value with no kind set reads as null.
            Some(None) | None => {
                if value.is_some() {
                    self.notes.push(Note::UnsetOneof {
                        message: "Value",
                        key: key.clone(),
                    });
                }
                Value::Null
            }
        };
        let value = if removals && value == Value::Null {
            Value::Removed
        } else {
            value
        };
        Ok((key, value))
    }

    /// `google.protobuf.Value`; `None` when no kind is set.
    fn value(&mut self, c: &mut Cursor, depth: u32) -> Result<Option<Value>> {
        if depth > MAX_DEPTH {
            return c.err(format!("values nested deeper than {MAX_DEPTH}"));
        }
        let mut kind = None;
        while !c.done() {
            let (field, wire) = c.key()?;
            kind = Some(match field {
                1 => {
                    c.expect_wire(field, wire, VARINT, "Value")?;
                    c.varint()?;
                    Value::Null
                }
                2 => {
                    c.expect_wire(field, wire, FIXED64, "Value")?;
                    Value::Float(f64::from_bits(c.fixed64()?))
                }
                3 => {
                    c.expect_wire(field, wire, LEN, "Value")?;
                    Value::Str(c.string()?)
                }
                4 => {
                    c.expect_wire(field, wire, VARINT, "Value")?;
                    Value::Bool(c.varint()? != 0)
                }
                5 => {
                    c.expect_wire(field, wire, LEN, "Value")?;
                    let mut s = c.nested()?;
                    Value::Map(self.struct_fields(&mut s, false, depth + 1)?)
                }
                6 => {
                    c.expect_wire(field, wire, LEN, "Value")?;
                    let mut l = c.nested()?;
                    Value::List(self.list(&mut l, depth + 1)?)
                }
                _ => {
                    self.unknown(c, "Value", field, wire, false)?;
                    continue;
                }
            });
        }
        Ok(kind)
    }

    /// `google.protobuf.ListValue`.
    fn list(&mut self, c: &mut Cursor, depth: u32) -> Result<Vec<Value>> {
        let mut items = Vec::new();
        while !c.done() {
            let (field, wire) = c.key()?;
            match field {
                1 => {
                    c.expect_wire(field, wire, LEN, "ListValue")?;
                    let mut v = c.nested()?;
                    let item = self.value(&mut v, depth + 1)?;
                    if item.is_none() {
                        self.notes.push(Note::UnsetOneof {
                            message: "Value",
                            key: String::new(),
                        });
                    }
                    items.push(item.unwrap_or(Value::Null));
                }
                _ => self.unknown(c, "ListValue", field, wire, false)?,
            }
        }
        Ok(items)
    }

    /// A `map<string, ValueArray>` entry, shaped by the key table.
    fn array_entry(&mut self, c: &mut Cursor) -> Result<Field> {
        let mut key = String::new();
        let mut stored: Option<(ArrayKind, ArrayData)> = None;
        let mut saw_value = false;
        while !c.done() {
            let (field, wire) = c.key()?;
            match field {
                1 => {
                    c.expect_wire(field, wire, LEN, "FrameData.arrays")?;
                    key = c.string()?;
                }
                2 => {
                    c.expect_wire(field, wire, LEN, "FrameData.arrays")?;
                    let mut v = c.nested()?;
                    saw_value = true;
                    stored = self.value_array(&mut v)?;
                }
                _ => self.unknown(c, "FrameData.arrays", field, wire, false)?,
            }
        }
        if stored.is_none() && saw_value {
            self.notes.push(Note::UnsetOneof {
                message: "ValueArray",
                key: key.clone(),
            });
        }
        let array = shape_array(&key, stored, self.notes);
        Ok((key, Value::Array(array)))
    }

    /// `ValueArray`: the last oneof member present wins.
    fn value_array(&mut self, c: &mut Cursor) -> Result<Option<(ArrayKind, ArrayData)>> {
        let mut out = None;
        while !c.done() {
            let (field, wire) = c.key()?;
            if !(1..=3).contains(&field) {
                self.unknown(c, "ValueArray", field, wire, false)?;
                continue;
            }
            c.expect_wire(field, wire, LEN, "ValueArray")?;
            let mut inner = c.nested()?;
            out = Some(match field {
                1 => (ArrayKind::Float, ArrayData::F32(self.floats(&mut inner)?)),
                2 => (ArrayKind::Index, ArrayData::U32(self.indices(&mut inner)?)),
                _ => (ArrayKind::String, ArrayData::Str(self.strings(&mut inner)?)),
            });
        }
        Ok(out)
    }

    /// `FloatArray.values`: packed and unpacked forms, mixed freely.
    fn floats(&mut self, c: &mut Cursor) -> Result<Vec<f32>> {
        let mut out = Vec::new();
        while !c.done() {
            let (field, wire) = c.key()?;
            match (field, wire) {
                (1, LEN) => {
                    let packed = c.nested()?;
                    if packed.bytes().len() % 4 != 0 {
                        return packed.err(format!(
                            "packed floats of {} bytes (not a multiple of 4)",
                            packed.bytes().len()
                        ));
                    }
                    out.extend(
                        packed
                            .bytes()
                            .chunks_exact(4)
                            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                    );
                }
                (1, FIXED32) => {
                    let b = c.take(4)?;
                    out.push(f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                }
                (1, _) => return c.err(format!("FloatArray field 1 has wire type {wire}")),
                _ => self.unknown(c, "FloatArray", field, wire, false)?,
            }
        }
        Ok(out)
    }

    /// `IndexArray.values`: packed and unpacked forms, mixed freely.
    fn indices(&mut self, c: &mut Cursor) -> Result<Vec<u32>> {
        let mut out = Vec::new();
        while !c.done() {
            let (field, wire) = c.key()?;
            match (field, wire) {
                (1, LEN) => {
                    let mut packed = c.nested()?;
                    while !packed.done() {
                        out.push(packed.varint()? as u32);
                    }
                }
                (1, VARINT) => out.push(c.varint()? as u32),
                (1, _) => return c.err(format!("IndexArray field 1 has wire type {wire}")),
                _ => self.unknown(c, "IndexArray", field, wire, false)?,
            }
        }
        Ok(out)
    }

    fn strings(&mut self, c: &mut Cursor) -> Result<Vec<String>> {
        let mut out = Vec::new();
        while !c.done() {
            let (field, wire) = c.key()?;
            match (field, wire) {
                (1, LEN) => out.push(c.string()?),
                (1, _) => return c.err(format!("StringArray field 1 has wire type {wire}")),
                _ => self.unknown(c, "StringArray", field, wire, false)?,
            }
        }
        Ok(out)
    }
}

/// Keeps the last occurrence of each key (protobuf map semantics), noting duplicates.
fn dedup_last_wins(fields: &mut Vec<Field>, notes: &mut Vec<Note>) {
    // Maps here are small (a frame has ~25 keys): comparing pairs is cheaper than hashing
    // every key of every record; large maps hash.
    const LINEAR: usize = 32;
    let n = fields.len();
    let duplicate: Vec<bool> = if n < 2 {
        return;
    } else if n <= LINEAR {
        (0..n)
            .map(|i| fields[i + 1..].iter().any(|(k, _)| *k == fields[i].0))
            .collect()
    } else {
        let mut seen = std::collections::HashSet::with_capacity(n);
        let mut later = vec![false; n];
        for (i, (key, _)) in fields.iter().enumerate().rev() {
            later[i] = !seen.insert(key.as_str());
        }
        later
    };
    if !duplicate.contains(&true) {
        return;
    }
    for (i, (key, _)) in fields.iter().enumerate() {
        if duplicate[i] {
            notes.push(Note::DuplicateKey { key: key.clone() });
        }
    }
    let mut i = 0;
    fields.retain(|_| {
        i += 1;
        !duplicate[i - 1]
    });
}

/// Bytes of a payload's start that [`peek_frame_index`] needs: a key, a 32-bit varint, a
/// key and a 64-bit length.
pub const PEEK_LEN: usize = 1 + 5 + 1 + 10;

/// The frame index of a `GetFrameResponse` of `payload_len` bytes, from its first bytes
/// `head`, without decoding it. Only the layout every writer produces is trusted:
/// `[08 index] 12 length` with the frame running exactly to the end of the payload.
/// Anything else (field 1 repeated, fields after the frame…) needs a full decode, since
/// the last occurrence of a field wins.
pub fn peek_frame_index(head: &[u8], payload_len: usize) -> Option<u32> {
    if payload_len == 0 {
        return Some(0);
    }
    let mut c = Cursor::new(head, 0);
    let mut index = 0;
    let mut key = c.key().ok()?;
    if key == (1, VARINT) {
        index = c.varint().ok()? as u32;
        key = c.key().ok()?;
    }
    if key != (2, LEN) {
        return None;
    }
    let frame_len = usize::try_from(c.varint().ok()?).ok()?;
    (c.inner.pos().checked_add(frame_len)? == payload_len).then_some(index)
}

/// Checks that `payload` decodes strictly as the given message, without keeping anything.
pub fn decodes_strictly(payload: &[u8], message: Message) -> bool {
    let mut notes = Vec::new();
    let mut d = Decoder::new(Strictness::Strict, &mut notes);
    match message {
        Message::FrameResponse => d.frame_response(payload).is_ok(),
        Message::FrameData => d.frame_data(payload).is_ok(),
        Message::StateUpdate => d.state_update(payload).is_ok(),
    }
}

/// The payload message types of legacy files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message {
    /// `.traj` version 2.
    FrameResponse,
    /// `.traj` version 1.
    FrameData,
    /// `.state`, both versions.
    StateUpdate,
}

impl Message {
    pub fn name(self) -> &'static str {
        match self {
            Message::FrameResponse => "GetFrameResponse",
            Message::FrameData => "FrameData",
            Message::StateUpdate => "StateUpdate",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Array;

    fn frame(payload: &[u8]) -> (Result<Frame>, Vec<Note>) {
        let mut notes = Vec::new();
        let r = Decoder::new(Strictness::Lenient, &mut notes).frame_response(payload);
        (r, notes)
    }

    #[test]
    fn absent_frame_index_is_zero_and_empty_frame_is_valid() {
        let (f, notes) = frame(&[0x12, 0x00]);
        assert_eq!(
            f.unwrap(),
            Frame {
                frame_index: 0,
                fields: vec![]
            }
        );
        assert!(notes.is_empty());
    }

    #[test]
    fn unpacked_and_packed_floats_mix() {
        // arrays entry "x": FloatArray with one unpacked 1.0 then packed [2.0]
        let float_array = [0x0d, 0, 0, 0x80, 0x3f, 0x0a, 4, 0, 0, 0, 0x40];
        let mut value_array = vec![0x0a, float_array.len() as u8];
        value_array.extend(float_array);
        let mut entry = vec![0x0a, 1, b'x', 0x12, value_array.len() as u8];
        entry.extend(value_array);
        let mut data = vec![0x12, entry.len() as u8];
        data.extend(entry);
        let mut payload = vec![0x08, 5, 0x12, data.len() as u8];
        payload.extend(data);
        let (f, _) = frame(&payload);
        let f = f.unwrap();
        assert_eq!(f.frame_index, 5);
        assert_eq!(
            f.fields,
            vec![(
                "x".into(),
                Value::Array(Array::flat(ArrayData::F32(vec![1.0, 2.0])))
            )]
        );
    }

    #[test]
    fn unpacked_indices_and_map_entry_without_key_or_value() {
        // values entry with no key and no value; arrays entry "i" with unpacked indices 3, 300
        let index_array = [0x08, 3, 0x08, 0xac, 0x02];
        let mut va = vec![0x12, index_array.len() as u8];
        va.extend(index_array);
        let mut arr_entry = vec![0x0a, 1, b'i', 0x12, va.len() as u8];
        arr_entry.extend(va);
        let mut data = vec![0x0a, 0x00, 0x12, arr_entry.len() as u8];
        data.extend(arr_entry);
        let mut payload = vec![0x12, data.len() as u8];
        payload.extend(data);
        let (f, notes) = frame(&payload);
        let f = f.unwrap();
        assert_eq!(f.fields[0], (String::new(), Value::Null));
        assert_eq!(
            f.fields[1],
            (
                "i".into(),
                Value::Array(Array::flat(ArrayData::U32(vec![3, 300])))
            )
        );
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn duplicate_keys_keep_the_last_and_unknown_fields_are_noted() {
        // StateUpdate{ changed_keys: { a: 1.0, a: "x" } } plus unknown field 7 (varint 1)
        let num = [0x11, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f];
        let s = [0x1a, 1, b'x'];
        let mut st = Vec::new();
        for v in [&num[..], &s[..]] {
            let mut e = vec![0x0a, 1, b'a', 0x12, v.len() as u8];
            e.extend(v);
            st.push(0x0a);
            st.push(e.len() as u8);
            st.extend(e);
        }
        let mut payload = vec![0x0a, st.len() as u8];
        payload.extend(&st);
        payload.extend([0x38, 1]);
        let mut notes = Vec::new();
        let fields = Decoder::new(Strictness::Lenient, &mut notes)
            .state_update(&payload)
            .unwrap();
        assert_eq!(fields, vec![("a".into(), Value::Str("x".into()))]);
        assert_eq!(notes[0], Note::DuplicateKey { key: "a".into() });
        assert_eq!(
            notes[1],
            Note::UnknownField {
                message: "StateUpdate",
                field: 7,
                pos: payload.len() - 2
            }
        );
        let mut notes = Vec::new();
        let strict = Decoder::new(Strictness::Strict, &mut notes).state_update(&payload);
        assert_eq!(strict.unwrap_err().pos, payload.len() - 2);
    }

    #[test]
    fn null_nested_in_a_list_inside_a_struct_is_data() {
        // state key "k" = list[ struct{ n: null } ]
        let null = [0x08, 0x00];
        let mut n_entry = vec![0x0a, 1, b'n', 0x12, null.len() as u8];
        n_entry.extend(null);
        let mut strukt = vec![0x0a, n_entry.len() as u8];
        strukt.extend(n_entry);
        let mut struct_value = vec![0x2a, strukt.len() as u8];
        struct_value.extend(strukt);
        let mut list = vec![0x0a, struct_value.len() as u8];
        list.extend(struct_value);
        let mut list_value = vec![0x32, list.len() as u8];
        list_value.extend(list);
        let mut k_entry = vec![0x0a, 1, b'k', 0x12, list_value.len() as u8];
        k_entry.extend(list_value);
        let mut s = vec![0x0a, k_entry.len() as u8];
        s.extend(k_entry);
        let mut payload = vec![0x0a, s.len() as u8];
        payload.extend(s);
        let mut notes = Vec::new();
        let fields = Decoder::new(Strictness::Lenient, &mut notes)
            .state_update(&payload)
            .unwrap();
        assert_eq!(
            fields,
            vec![(
                "k".into(),
                Value::List(vec![Value::Map(vec![("n".into(), Value::Null)])])
            )]
        );
    }

    #[test]
    fn lengths_past_the_parent_are_errors_with_positions() {
        let (f, _) = frame(&[0x12, 0x05, 0x0a]);
        assert_eq!(f.unwrap_err().pos, 2);
        assert_eq!(
            peek_frame_index(&[0x08, 0x96, 0x01, 0x12, 0x00], 5),
            Some(150)
        );
        assert_eq!(peek_frame_index(&[0x12, 0x00], 2), Some(0));
        // Field 1 again after the frame: the last one wins, so only a full decode can tell.
        assert_eq!(
            peek_frame_index(&[0x08, 0x01, 0x12, 0x00, 0x08, 0x02], 6),
            None
        );
        assert_eq!(
            peek_frame_index(&[0x08, 0x00, 0x08, 0x07, 0x12, 0x00], 6),
            None
        );
    }

    fn varint_bytes(mut n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                return out;
            }
            out.push(b | 0x80);
        }
    }

    #[test]
    fn nesting_limit_stops_recursion() {
        // Value{list_value{values: Value{list_value{...}}}} nested 150 deep, built inside out.
        let mut v: Vec<u8> = Vec::new();
        for _ in 0..150 {
            let mut list = vec![0x0a];
            list.extend(varint_bytes(v.len()));
            list.extend(&v);
            let mut value = vec![0x32];
            value.extend(varint_bytes(list.len()));
            value.extend(list);
            v = value;
        }
        let mut entry = vec![0x0a, 1, b'k', 0x12];
        entry.extend(varint_bytes(v.len()));
        entry.extend(&v);
        let mut s = vec![0x0a];
        s.extend(varint_bytes(entry.len()));
        s.extend(entry);
        let mut payload = vec![0x0a];
        payload.extend(varint_bytes(s.len()));
        payload.extend(s);
        let mut notes = Vec::new();
        let err = Decoder::new(Strictness::Lenient, &mut notes)
            .state_update(&payload)
            .unwrap_err();
        assert!(err.what.contains("nested deeper"), "{err}");
    }
}
