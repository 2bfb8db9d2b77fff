//! A topic's message made straight from a frame's block (`frames.rs`): which signals give
//! its fields and in which order is planned once, from the layout's own topic
//! ([`Layout::place`](super::layout::Layout::place)) and message type; per frame only each
//! field's key and value are appended, by the same `proto.rs` code, in the order
//! `layout.rs` appends the values of the frame's records: each signal's field as its
//! record comes, then each vector regrouped from axes, in field order.

use super::layout::FieldOf;
use super::proto::{self, Field, Kind, MessageType, Refusal};
use crate::formats::frames::{le_bytes, FrameSignal, Packed};
use crate::model::{DType, Value};

/// A field given by one signal.
struct Part {
    field: Field,
    packed: Packed,
    offset: usize,
    put: Put,
}

/// How a part's value goes into its field.
enum Put {
    /// Made a [`Value`] first, then encoded ([`proto::value`]).
    Value,
    /// A float64 scalar in a float64 field: its bytes as they are ([`proto::double`]).
    Double,
    /// A float array in row-major order, in a repeated field of its type: its bytes as they
    /// are ([`proto::floats`]), this many.
    Floats(usize),
}

impl Put {
    fn of(packed: &Packed) -> Put {
        let float = matches!(packed.dtype, DType::F64 | DType::F32);
        match (float, packed.shape.as_slice(), packed.column_major) {
            (true, [], _) if packed.dtype == DType::F64 => Put::Double,
            (true, [_, ..], false) => Put::Floats(packed.count() * packed.element_size()),
            _ => Put::Value,
        }
    }
}

/// An element's packing and its offset in the block.
type Axis = (Packed, usize);

/// A vector regrouped from the signals of its axes, in element order.
struct Vector {
    field: Field,
    axes: Vec<Axis>,
}

pub struct FrameMessage {
    /// The layout's topic.
    pub topic: usize,
    parts: Vec<Part>,
    vectors: Vec<Vector>,
    /// A vector's elements, and packed elements while their length is unknown.
    values: Vec<Value>,
    scratch: Vec<u8>,
}

impl FrameMessage {
    /// The message of `topic` (of type `message`) from `signals`, in layout order, with
    /// where each one's value goes; `None` when the record path could write it otherwise:
    /// a field given twice, a vector missing an axis, or a value whose type is not its
    /// field's (the record path would move it to `extra_json`).
    pub fn plan(
        topic: usize,
        message: &MessageType,
        signals: &[(&FrameSignal, FieldOf)],
    ) -> Option<FrameMessage> {
        let mut parts = Vec::new();
        let mut vectors: Vec<(usize, Vec<Option<Axis>>)> = Vec::new();
        let mut given = vec![false; message.fields.len()];
        for (signal, (f, axis)) in signals {
            let field = message.fields.get(*f)?;
            let packed = &signal.packed;
            if field.kind != Kind::of(Some(packed.dtype)) || packed.dtype == DType::Str {
                return None;
            }
            let Some((element, n)) = *axis else {
                if std::mem::replace(&mut given[*f], true)
                    || field.repeated == packed.shape.is_empty()
                {
                    return None;
                }
                parts.push(Part {
                    field: field.clone(),
                    packed: packed.clone(),
                    offset: signal.offset,
                    put: Put::of(packed),
                });
                continue;
            };
            if !field.repeated || !packed.shape.is_empty() {
                return None;
            }
            let at = match vectors.iter().position(|(g, _)| g == f) {
                Some(at) => at,
                None => {
                    vectors.push((*f, vec![None; n]));
                    vectors.len() - 1
                }
            };
            let slot = vectors[at].1.get_mut(element)?;
            if slot.replace((packed.clone(), signal.offset)).is_some() {
                return None;
            }
        }
        vectors.sort_by_key(|(f, _)| *f);
        let vectors = vectors
            .into_iter()
            .map(|(f, axes)| {
                Some(Vector {
                    field: message.fields[f].clone(),
                    axes: axes.into_iter().collect::<Option<_>>()?,
                })
            })
            .collect::<Option<_>>()?;
        Some(FrameMessage {
            topic,
            parts,
            vectors,
            values: Vec::new(),
            scratch: Vec::new(),
        })
    }

    /// The message of the instant at `time`, frame `frame` (none for the records of a
    /// loose layout, which carry no frame value), its values in `block`, into `out`
    /// (cleared first).
    pub fn encode(
        &mut self,
        out: &mut Vec<u8>,
        time: i64,
        frame: Option<i64>,
        block: &[u8],
    ) -> Result<(), Refusal> {
        out.clear();
        proto::int64(out, proto::TIME_NS, time);
        if let Some(frame) = frame {
            proto::int64(out, proto::FRAME, frame);
        }
        // Only fields of type JSON note what they lose, and a plan has none.
        let mut lost = Vec::new();
        for p in &self.parts {
            let end = |n: usize| p.offset.saturating_add(n);
            match p.put {
                Put::Double => proto::double(out, &p.field, le_bytes(block, p.offset))?,
                Put::Floats(n) if end(n) <= block.len() => {
                    proto::floats(out, &p.field, &block[p.offset..end(n)])?
                }
                // A block shorter than its layout (a frame source checked its sizes) reads as
                // zeros, as `Packed::value` reads it.
                Put::Floats(_) | Put::Value => {
                    let v = p.packed.value(block, p.offset).ok_or(NOT_PACKED)?;
                    proto::value(out, &mut self.scratch, &p.field, &v, &mut lost)?;
                }
            }
        }
        for v in &self.vectors {
            self.values.clear();
            for (packed, offset) in &v.axes {
                self.values
                    .push(packed.value(block, *offset).ok_or(NOT_PACKED)?);
            }
            proto::packed(out, &mut self.scratch, &v.field, &self.values)?;
        }
        Ok(())
    }
}

const NOT_PACKED: Refusal = "a string is not packed in a frame";
