//! One message's bytes to model values (spec §3–§6): its parts, packed keys decoded to
//! typed arrays by the key table, and notes on everything a validator reports.

use std::ops::Range;

use super::codes::*;
use super::keys::{self, Packed};
use super::msgpack::{self, Head, Oddities};
use crate::model::{Array, ArrayData, DType, Field, Value};
use crate::report::Severity;

/// The top-level parts simrec knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PartKind {
    Frame,
    State,
    Command,
}

impl PartKind {
    pub fn name(self) -> &'static str {
        match self {
            PartKind::Frame => "frame",
            PartKind::State => "state",
            PartKind::Command => "command",
        }
    }

    pub fn from_name(name: &str) -> Option<PartKind> {
        match name {
            "frame" => Some(PartKind::Frame),
            "state" => Some(PartKind::State),
            "command" => Some(PartKind::Command),
            _ => None,
        }
    }

    pub const ALL: [PartKind; 3] = [PartKind::Frame, PartKind::State, PartKind::Command];
}

/// Something worth reporting about a message, `at` bytes into it.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    pub severity: Severity,
    pub code: &'static str,
    pub message: String,
    pub at: usize,
}

fn note(notes: &mut Vec<Note>, severity: Severity, code: &'static str, at: usize, m: String) {
    notes.push(Note {
        severity,
        code,
        message: m,
        at,
    });
}

/// The top-level keys of a message and the byte range of each value, without decoding.
pub fn top_level(bytes: &[u8]) -> Result<Vec<(String, Range<usize>)>, msgpack::Error> {
    let n = match msgpack::head(bytes, 0)? {
        (Head::Map(n), _) => n,
        _ => {
            return Err(msgpack::Error {
                at: 0,
                what: "the message is not a map".into(),
            })
        }
    };
    let end = msgpack::skip(bytes, 0)?;
    if end != bytes.len() {
        return Err(msgpack::Error {
            at: end,
            what: format!(
                "{} bytes follow the message's one msgpack value",
                bytes.len() - end
            ),
        });
    }
    let mut p = msgpack::head(bytes, 0)?.1;
    let mut parts = Vec::with_capacity(n);
    for _ in 0..n {
        let (key, next) = match msgpack::head(bytes, p)? {
            (Head::Str(r), next) => (msgpack::text(bytes, r, p)?.to_string(), next),
            _ => {
                return Err(msgpack::Error {
                    at: p,
                    what: "a top-level key is not a string".into(),
                })
            }
        };
        let end = msgpack::skip(bytes, next)?;
        parts.push((key, next..end));
        p = end;
    }
    Ok(parts)
}

/// A decoded frame part: its fields and its frame index (a non-negative integer
/// `frame.index`).
pub fn frame(
    bytes: &[u8],
    range: Range<usize>,
    notes: &mut Vec<Note>,
) -> (Vec<Field>, Option<u64>) {
    let mut odd = Oddities::default();
    let at = range.start;
    let n = match msgpack::head(bytes, at) {
        Ok((Head::Map(n), _)) => n,
        _ => {
            note(
                notes,
                Severity::Warning,
                KEY_TYPE,
                at,
                "`frame` is not a map".into(),
            );
            return (Vec::new(), None);
        }
    };
    let mut fields = Vec::with_capacity(n);
    let mut p = msgpack::head(bytes, at).map_or(range.end, |(_, p)| p);
    let mut index = None;
    for _ in 0..n {
        // The ranges were checked by `top_level`; a failure here cannot happen on
        // checked bytes, so it ends the part quietly.
        let Ok((key, vpos)) = msgpack::key(bytes, p, &mut odd) else {
            break;
        };
        let Ok(vend) = msgpack::skip(bytes, vpos) else {
            break;
        };
        let value = if let Some(packed) = keys::packed(&key) {
            packed_value(&key, packed, bytes, vpos, notes)
        } else {
            let v = generic(bytes, vpos, &mut odd, notes);
            if keys::forced_int(&key) {
                forced_int(&key, v, vpos, notes)
            } else {
                v
            }
        };
        if key == keys::FRAME_INDEX {
            index = match value {
                Value::Int(i) => u64::try_from(i).ok(),
                _ => None,
            };
        }
        fields.push((key, value));
        p = vend;
    }
    report_odd(odd, at, notes);
    (fields, index)
}

fn generic(bytes: &[u8], pos: usize, odd: &mut Oddities, notes: &mut Vec<Note>) -> Value {
    match msgpack::value(bytes, pos, odd, 2) {
        Ok((v, _)) => v,
        Err(e) => {
            note(notes, Severity::Error, MESSAGE_DECODE, e.at, e.what);
            Value::Null
        }
    }
}

fn report_odd(odd: Oddities, at: usize, notes: &mut Vec<Note>) {
    if odd.ext {
        note(
            notes,
            Severity::Warning,
            EXT_VALUE,
            at,
            "a msgpack ext value (kept as it is: type and bytes)".into(),
        );
    }
    if odd.non_str_key {
        note(
            notes,
            Severity::Error,
            MESSAGE_NOT_MAP,
            at,
            "a map key that is not a string".into(),
        );
    }
}

fn forced_int(key: &str, v: Value, at: usize, notes: &mut Vec<Note>) -> Value {
    match v {
        Value::Int(_) | Value::UInt(_) => v,
        Value::Float(x) if x.is_finite() && x.abs() < 9.2e18 => {
            let t = x.trunc();
            let how = if t == x {
                ""
            } else {
                ", truncated toward zero"
            };
            note(
                notes,
                Severity::Warning,
                KEY_TYPE,
                at,
                format!("`{key}` is the float {x}, read as the integer {t}{how}"),
            );
            Value::Int(t as i64)
        }
        other => {
            note(
                notes,
                Severity::Warning,
                KEY_TYPE,
                at,
                format!("`{key}` should be an integer, not a {}", other.kind_name()),
            );
            other
        }
    }
}

/// A packed key: a bin of raw elements, or (the list fallback) a msgpack array of numbers.
fn packed_value(
    key: &str,
    packed: Packed,
    bytes: &[u8],
    pos: usize,
    notes: &mut Vec<Note>,
) -> Value {
    let mut odd = Oddities::default();
    match msgpack::head(bytes, pos) {
        Ok((Head::Bin(r), _)) => {
            let raw = &bytes[r];
            let unit = packed.itemsize() * packed.rows.width();
            let fits = match packed.rows {
                keys::Rows::Box3 => raw.len() == unit,
                _ => raw.len().is_multiple_of(unit),
            };
            if !fits {
                note(
                    notes,
                    Severity::Error,
                    ARRAY_LENGTH,
                    pos,
                    format!(
                    "`{key}` holds {} bytes, not a multiple of {unit} ({} × {}); kept as raw bytes",
                    raw.len(), packed.itemsize(), packed.rows.width()
                ),
                );
                return Value::Array(Array::flat(ArrayData::U8(raw.to_vec())));
            }
            let data = match packed.dtype {
                DType::F32 => {
                    let v: Vec<f32> = raw
                        .chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect();
                    if let Some(i) = v.iter().position(|x| !x.is_finite()) {
                        note(
                            notes,
                            Severity::Warning,
                            NONFINITE_FLOAT,
                            pos,
                            format!("`{key}` element {i} is {}", v[i]),
                        );
                    }
                    ArrayData::F32(v)
                }
                DType::U32 => ArrayData::U32(
                    raw.chunks_exact(4)
                        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect(),
                ),
                _ => ArrayData::U8(raw.to_vec()),
            };
            shaped(packed, data)
        }
        Ok((Head::Array(_), _)) => {
            let list = generic(bytes, pos, &mut odd, notes);
            note(
                notes,
                Severity::Info,
                ARRAY_LIST,
                pos,
                format!("`{key}` is stored as a msgpack list (the list fallback)"),
            );
            match cast_list(&list, packed.dtype) {
                Ok(data) => shaped(packed, data),
                Err(why) => {
                    note(
                        notes,
                        Severity::Error,
                        ARRAY_RANGE,
                        pos,
                        format!("`{key}`: {why}; kept as a list"),
                    );
                    list
                }
            }
        }
        _ => {
            let v = generic(bytes, pos, &mut odd, notes);
            note(
                notes,
                Severity::Warning,
                KEY_TYPE,
                pos,
                format!(
                    "`{key}` should be a bin of {}, not a {}",
                    packed.dtype,
                    v.kind_name()
                ),
            );
            v
        }
    }
}

/// Elements in their table shape, or flat (with the shape noted) when they do not fit.
fn shaped(packed: Packed, data: ArrayData) -> Value {
    let len = data.len();
    Value::Array(match packed.rows.shape(len) {
        Some(shape) => Array { shape, data },
        None => Array::flat(data),
    })
}

/// A list of numbers cast to `dtype`: floats to integers truncate toward zero.
fn cast_list(list: &Value, dtype: DType) -> Result<ArrayData, String> {
    let Value::List(items) = list else {
        return Err("not a list".into());
    };
    let num = |v: &Value| -> Result<f64, String> {
        match v {
            Value::Int(i) => Ok(*i as f64),
            Value::UInt(u) => Ok(*u as f64),
            Value::Float(x) => Ok(*x),
            other => Err(format!("holds a {}, not a number", other.kind_name())),
        }
    };
    let int = |v: &Value, max: f64| -> Result<f64, String> {
        let x = num(v)?.trunc();
        if (0.0..=max).contains(&x) {
            Ok(x)
        } else {
            Err(format!("the value {x} does not fit {dtype}"))
        }
    };
    Ok(match dtype {
        DType::F32 => ArrayData::F32(
            items
                .iter()
                .map(|v| num(v).map(|x| x as f32))
                .collect::<Result<_, _>>()?,
        ),
        DType::U8 => ArrayData::U8(
            items
                .iter()
                .map(|v| int(v, 255.0).map(|x| x as u8))
                .collect::<Result<_, _>>()?,
        ),
        _ => ArrayData::U32(
            items
                .iter()
                .map(|v| int(v, u32::MAX as f64).map(|x| x as u32))
                .collect::<Result<_, _>>()?,
        ),
    })
}

/// A decoded state part: updates, then each removal as `Removed` (a key in both lists
/// yields only the removal).
pub fn state(bytes: &[u8], range: Range<usize>, notes: &mut Vec<Note>) -> Vec<Field> {
    let at = range.start;
    let mut odd = Oddities::default();
    let shape_error = |notes: &mut Vec<Note>, what: &str| {
        note(notes, Severity::Error, STATE_SHAPE, at, what.to_string());
    };
    let parts = match msgpack::value(bytes, at, &mut odd, 1) {
        Ok((Value::Map(parts), _)) => parts,
        Ok(_) => {
            shape_error(notes, "`state` is not a map");
            return Vec::new();
        }
        Err(e) => {
            note(notes, Severity::Error, MESSAGE_DECODE, e.at, e.what);
            return Vec::new();
        }
    };
    report_odd(odd, at, notes);
    let mut updates = Vec::new();
    let mut removals = Vec::new();
    for (key, value) in parts {
        match (key.as_str(), value) {
            ("updates", Value::Map(u)) => updates = u,
            ("updates", _) => shape_error(notes, "`state.updates` is not a map"),
            ("removals", Value::List(r)) => {
                for k in r {
                    match k {
                        Value::Str(s) => removals.push(s),
                        _ => {
                            shape_error(notes, "`state.removals` holds a key that is not a string")
                        }
                    }
                }
            }
            ("removals", _) => shape_error(notes, "`state.removals` is not a list"),
            _ => {}
        }
    }
    let mut fields = Vec::with_capacity(updates.len() + removals.len());
    for (k, v) in updates {
        if removals.contains(&k) {
            note(
                notes,
                Severity::Info,
                STATE_BOTH,
                at,
                format!("`{k}` is both updated and removed: it ends up removed"),
            );
        } else {
            fields.push((k, v));
        }
    }
    fields.extend(removals.into_iter().map(|k| (k, Value::Removed)));
    fields
}

/// A decoded command part: the command map's entries.
pub fn command(bytes: &[u8], range: Range<usize>, notes: &mut Vec<Note>) -> Vec<Field> {
    let at = range.start;
    let mut odd = Oddities::default();
    let fields = match msgpack::value(bytes, at, &mut odd, 1) {
        Ok((Value::Map(f), _)) => f,
        Ok((other, _)) => vec![("command".to_string(), other)],
        Err(e) => {
            note(notes, Severity::Error, MESSAGE_DECODE, e.at, e.what);
            Vec::new()
        }
    };
    report_odd(odd, at, notes);
    if !fields
        .iter()
        .any(|(k, _)| k == "request" || k == "register")
    {
        note(
            notes,
            Severity::Warning,
            COMMAND_SHAPE,
            at,
            "a `command` without `request` or `register`".into(),
        );
    }
    fields
}

/// The `frame.index` value inside a frame part, without decoding the rest: the
/// message's own copy, for the index entry.
pub fn frame_index_of(bytes: &[u8], range: Range<usize>) -> Option<Value> {
    let pos = value_of(bytes, range, keys::FRAME_INDEX)?;
    let mut odd = Oddities::default();
    msgpack::value(bytes, pos, &mut odd, 1).ok().map(|(v, _)| v)
}

/// Where `key`'s value starts inside the map at `range`, walking only its keys.
pub fn value_of(bytes: &[u8], range: Range<usize>, key: &str) -> Option<usize> {
    let (Head::Map(n), mut p) = msgpack::head(bytes, range.start).ok()? else {
        return None;
    };
    for _ in 0..n {
        let (h, vpos) = msgpack::head(bytes, p).ok()?;
        if matches!(&h, Head::Str(r) if bytes[r.clone()] == *key.as_bytes()) {
            return Some(vpos);
        }
        p = msgpack::skip(bytes, vpos).ok()?;
    }
    None
}
