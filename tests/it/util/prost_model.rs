//! What the spec says a prost-decoded NanoVer message means in the simrec model: an oracle
//! written from the spec alone (its own key table), independent of simrec's decoder.
//! Shared by `formats::nanover::legacy_prost_crosscheck` and the fuzz target
//! (`fuzz/fuzz_targets/nanover_legacy.rs`), which includes it with `#[path]`: it depends on
//! simrec alone, nothing else of `util`.

use simrec::formats::nanover::legacy::proto::{self, Kind, ProtoValue, ValueArrayKind};
use simrec::model::{Array, ArrayData, Field, Value};

/// Spec §2.4: a later duplicate key overrides an earlier one (kept where the last one is).
pub fn last_wins(fields: Vec<Field>) -> Vec<Field> {
    let mut out: Vec<Field> = Vec::with_capacity(fields.len());
    for (i, (key, value)) in fields.iter().enumerate() {
        if !fields[i + 1..].iter().any(|(k, _)| k == key) {
            out.push((key.clone(), value.clone()));
        }
    }
    out
}

pub fn value(v: Option<&ProtoValue>) -> Value {
    match v.and_then(|v| v.kind.as_ref()) {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::NumberValue(x)) => Value::Float(*x),
        Some(Kind::StringValue(s)) => Value::Str(s.clone()),
        Some(Kind::BoolValue(b)) => Value::Bool(*b),
        Some(Kind::StructValue(s)) => Value::Map(struct_fields(s, false)),
        Some(Kind::ListValue(l)) => Value::List(l.values.iter().map(|v| value(Some(v))).collect()),
    }
}

/// A `Struct`; at the top of a state update a null is the removal marker (spec §5).
pub fn struct_fields(s: &proto::Struct, removals: bool) -> Vec<Field> {
    last_wins(
        s.fields
            .iter()
            .map(|e| {
                let v = value(e.value.as_ref());
                let v = if removals && v == Value::Null {
                    Value::Removed
                } else {
                    v
                };
                (e.key.clone(), v)
            })
            .collect(),
    )
}

/// Spec §4: (kinds the key may be stored with, first = the kind an empty array gets; shape).
pub enum Shape {
    Flat,
    Rows(usize),
    Fixed(usize, usize),
}

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum K {
    Float,
    Index,
    Str,
}

pub fn key_table(key: &str) -> Option<(&'static [K], Shape)> {
    Some(match key {
        "particle.positions"
        | "particle.velocities"
        | "particle.forces"
        | "particle.forces.system"
        | "forces.user.sparse" => (&[K::Float], Shape::Rows(3)),
        "particle.elements" | "particle.residues" | "residue.chains" | "forces.user.index" => {
            (&[K::Index], Shape::Flat)
        }
        "particle.names" | "residue.names" | "chain.names" => (&[K::Str], Shape::Flat),
        "residue.ids" => (&[K::Str, K::Float], Shape::Flat),
        "bond.pairs" => (&[K::Index], Shape::Rows(2)),
        "bond.orders" => (&[K::Float], Shape::Flat),
        "system.box.vectors" => (&[K::Float], Shape::Fixed(3, 3)),
        _ => return None,
    })
}

pub fn empty(kind: K) -> ArrayData {
    match kind {
        K::Float => ArrayData::F32(vec![]),
        K::Index => ArrayData::U32(vec![]),
        K::Str => ArrayData::Str(vec![]),
    }
}

pub fn array(key: &str, va: Option<&proto::ValueArray>) -> Array {
    let stored = va.and_then(|v| v.values.as_ref()).map(|v| match v {
        ValueArrayKind::FloatValues(f) => (K::Float, ArrayData::F32(f.values.clone())),
        ValueArrayKind::IndexValues(i) => (K::Index, ArrayData::U32(i.values.clone())),
        ValueArrayKind::StringValues(s) => (K::Str, ArrayData::Str(s.values.clone())),
    });
    let table = key_table(key);
    let data = match (stored, &table) {
        // An empty array in another kind, or no kind at all, is typed by the key table.
        (Some((kind, data)), Some((kinds, _))) if !kinds.contains(&kind) && data.is_empty() => {
            empty(kinds[0])
        }
        (None, Some((kinds, _))) => empty(kinds[0]),
        (None, None) => ArrayData::F32(vec![]),
        (Some((_, data)), _) => data,
    };
    let len = data.len();
    let shape = match table.map(|t| t.1) {
        Some(Shape::Rows(w)) if len % w == 0 => vec![len / w, w],
        Some(Shape::Fixed(r, c)) if len == r * c => vec![r, c],
        _ => vec![len],
    };
    Array { shape, data }
}

pub fn frame_fields(frame: &proto::FrameData) -> Vec<Field> {
    let values = last_wins(
        frame
            .values
            .iter()
            .map(|e| (e.key.clone(), value(e.value.as_ref())))
            .collect(),
    );
    let arrays = last_wins(
        frame
            .arrays
            .iter()
            .map(|e| (e.key.clone(), Value::Array(array(&e.key, e.value.as_ref()))))
            .collect(),
    );
    last_wins(values.into_iter().chain(arrays).collect())
}

/// Values equal, floats compared by their bits (so a NaN equals itself).
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Array(x), Value::Array(y)) => {
            x.shape == y.shape
                && match (&x.data, &y.data) {
                    (ArrayData::F32(p), ArrayData::F32(q)) => {
                        p.len() == q.len()
                            && p.iter().zip(q).all(|(u, v)| u.to_bits() == v.to_bits())
                    }
                    (p, q) => p == q,
                }
        }
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(u, v)| same(u, v))
        }
        (Value::Map(x), Value::Map(y)) => same_fields(x, y),
        (x, y) => x == y,
    }
}

pub fn same_fields(a: &[Field], b: &[Field]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
}
