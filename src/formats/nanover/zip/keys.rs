//! The key table (spec §5): a packed key's dtype and row shape are fixed by its name.

use crate::model::DType;

/// How a packed key's flat elements are shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    Flat,
    /// [n, width]
    Of(usize),
    /// exactly [3, 3]
    Box3,
}

impl Rows {
    /// Elements per row (the bin length must be a multiple of itemsize × this).
    pub fn width(self) -> usize {
        match self {
            Rows::Flat => 1,
            Rows::Of(w) => w,
            Rows::Box3 => 9,
        }
    }

    /// The shape of `len` elements, or `None` when they do not fit.
    pub fn shape(self, len: usize) -> Option<Vec<usize>> {
        match self {
            Rows::Flat => Some(vec![len]),
            Rows::Of(w) => len.is_multiple_of(w).then(|| vec![len / w, w]),
            Rows::Box3 => (len == 9).then(|| vec![3, 3]),
        }
    }
}

/// A key stored as a msgpack bin of raw little-endian elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packed {
    pub dtype: DType,
    pub rows: Rows,
}

impl Packed {
    pub fn itemsize(self) -> usize {
        match self.dtype {
            DType::U8 => 1,
            _ => 4,
        }
    }
}

/// The packed encoding of `key`, if the table has one.
pub fn packed(key: &str) -> Option<Packed> {
    let (dtype, rows) = match key {
        "particle.positions"
        | "particle.velocities"
        | "particle.forces"
        | "particle.forces.system"
        | "forces.user.sparse" => (DType::F32, Rows::Of(3)),
        "system.box.vectors" => (DType::F32, Rows::Box3),
        "particle.elements" | "bond.orders" => (DType::U8, Rows::Flat),
        "particle.colors" => (DType::U8, Rows::Of(4)),
        "particle.residues" | "residue.chains" | "forces.user.index" => (DType::U32, Rows::Flat),
        "bond.pairs" => (DType::U32, Rows::Of(2)),
        _ => return None,
    };
    Some(Packed { dtype, rows })
}

/// Keys forced to integers by the writer.
pub fn forced_int(key: &str) -> bool {
    matches!(
        key,
        "frame.index" | "particle.count" | "residue.count" | "chain.count"
    )
}

/// The frame key that holds the frame index.
pub const FRAME_INDEX: &str = "frame.index";
