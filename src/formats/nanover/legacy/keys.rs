//! The conventional frame keys: which `ValueArray` kind and shape each one has (spec §4).

use std::fmt;

use super::wire::Note;
use crate::model::{Array, ArrayData, DType};

/// The member of the `ValueArray` oneof an array was stored in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayKind {
    Float,
    Index,
    String,
}

impl fmt::Display for ArrayKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ArrayKind::Float => "float_values",
            ArrayKind::Index => "index_values",
            ArrayKind::String => "string_values",
        })
    }
}

impl ArrayKind {
    pub fn dtype(self) -> DType {
        match self {
            ArrayKind::Float => DType::F32,
            ArrayKind::Index => DType::U32,
            ArrayKind::String => DType::Str,
        }
    }
}

/// How a conventional key's flat data is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Flat,
    /// [n, width]
    Rows(usize),
    /// exactly [rows, cols]
    Fixed(usize, usize),
}

/// (key, kinds it may be stored with, shape). The first kind is the one an empty array gets.
const TABLE: &[(&str, &[ArrayKind], Shape)] = {
    use ArrayKind::*;
    &[
        ("particle.positions", &[Float], Shape::Rows(3)),
        ("particle.velocities", &[Float], Shape::Rows(3)),
        ("particle.forces", &[Float], Shape::Rows(3)),
        ("particle.forces.system", &[Float], Shape::Rows(3)),
        ("particle.elements", &[Index], Shape::Flat),
        ("particle.names", &[String], Shape::Flat),
        ("particle.residues", &[Index], Shape::Flat),
        ("residue.names", &[String], Shape::Flat),
        // Python servers store residue ids as strings; nanover-rs as floats.
        ("residue.ids", &[String, Float], Shape::Flat),
        ("residue.chains", &[Index], Shape::Flat),
        ("chain.names", &[String], Shape::Flat),
        ("bond.pairs", &[Index], Shape::Rows(2)),
        ("bond.orders", &[Float], Shape::Flat),
        ("system.box.vectors", &[Float], Shape::Fixed(3, 3)),
        ("forces.user.index", &[Index], Shape::Flat),
        ("forces.user.sparse", &[Float], Shape::Rows(3)),
        // RGBA bytes, added after the legacy format was retired (NanoVer PR #593, 2026-07):
        // only conversions from `.nanover.zip` write it, as indices (spec nanover-zip §14).
        ("particle.colors", &[Index], Shape::Rows(4)),
    ]
};

/// The kinds and shape the key table gives `key`, if it is a conventional key.
pub fn conventional(key: &str) -> Option<(&'static [ArrayKind], Shape)> {
    TABLE
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|(_, kinds, shape)| (*kinds, *shape))
}

/// The shape `key`'s flat data of `len` elements gets, or `None` when it does not fit.
pub fn shape_for(key: &str, len: usize) -> Option<Vec<usize>> {
    match conventional(key).map(|(_, s)| s).unwrap_or(Shape::Flat) {
        Shape::Flat => Some(vec![len]),
        Shape::Rows(w) => len.is_multiple_of(w).then(|| vec![len / w, w]),
        Shape::Fixed(r, c) => (len == r * c).then(|| vec![r, c]),
    }
}

/// The index of the first NaN or infinity. Chunks are tested without an early exit, which
/// the compiler turns into vector code (a position search with an early exit per element
/// is not, and it was a quarter of `validate`'s time on large frames).
fn first_non_finite(v: &[f32]) -> Option<usize> {
    const CHUNK: usize = 256;
    v.chunks(CHUNK).enumerate().find_map(|(c, chunk)| {
        let bad = chunk.iter().fold(false, |bad, x| bad | !x.is_finite());
        bad.then(|| chunk.iter().position(|x| !x.is_finite()))
            .flatten()
            .map(|i| c * CHUNK + i)
    })
}

/// Turns a decoded `ValueArray` into a typed array for `key`, noting kind and shape problems.
/// `stored` is `None` for a `ValueArray` with no member set.
pub fn shape_array(
    key: &str,
    stored: Option<(ArrayKind, ArrayData)>,
    notes: &mut Vec<Note>,
) -> Array {
    let table = conventional(key);
    let (stored_kind, mut data) = match stored {
        Some(s) => (Some(s.0), s.1),
        None => (None, ArrayData::F32(Vec::new())),
    };
    if let Some((kinds, _)) = table {
        let expected = kinds[0];
        match stored_kind {
            Some(kind) if !kinds.contains(&kind) => {
                if data.is_empty() {
                    // The Python writer guesses the kind of an empty array from its content.
                    notes.push(Note::EmptyArrayKind {
                        key: key.to_string(),
                        stored: kind,
                        expected,
                    });
                    data = ArrayData::empty(expected.dtype());
                } else {
                    notes.push(Note::ArrayKind {
                        key: key.to_string(),
                        stored: kind,
                        expected,
                    });
                }
            }
            None => data = ArrayData::empty(expected.dtype()),
            Some(_) => {}
        }
    }
    if let ArrayData::F32(v) = &data {
        if let Some(index) = first_non_finite(v) {
            notes.push(Note::NonFinite {
                key: key.to_string(),
                index,
            });
        }
    }
    let len = data.len();
    match shape_for(key, len) {
        Some(shape) => Array { shape, data },
        None => {
            notes.push(Note::ArrayShape {
                key: key.to_string(),
                len,
            });
            Array::flat(data)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_non_finite_float_is_found_in_any_chunk() {
        let mut v = vec![0.5f32; 1000];
        assert_eq!(first_non_finite(&v), None);
        v[700] = f32::INFINITY;
        v[900] = f32::NAN;
        assert_eq!(first_non_finite(&v), Some(700));
        v[3] = f32::NAN;
        assert_eq!(first_non_finite(&v), Some(3));
        assert_eq!(first_non_finite(&[]), None);
    }

    #[test]
    fn conventional_shapes() {
        assert_eq!(shape_for("particle.positions", 63), Some(vec![21, 3]));
        assert_eq!(shape_for("particle.positions", 0), Some(vec![0, 3]));
        assert_eq!(shape_for("bond.pairs", 7), None);
        assert_eq!(shape_for("system.box.vectors", 9), Some(vec![3, 3]));
        assert_eq!(shape_for("system.box.vectors", 3), None);
        assert_eq!(shape_for("my.key", 5), Some(vec![5]));
    }

    #[test]
    fn empty_index_array_for_a_float_key_is_typed_by_the_table() {
        let mut notes = Vec::new();
        let a = shape_array(
            "forces.user.sparse",
            Some((ArrayKind::Index, ArrayData::U32(vec![]))),
            &mut notes,
        );
        assert_eq!(a.dtype(), DType::F32);
        assert_eq!(a.shape, vec![0, 3]);
        assert!(matches!(notes[0], Note::EmptyArrayKind { .. }));
    }
}
