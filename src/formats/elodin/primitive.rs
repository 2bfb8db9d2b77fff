//! Elodin's element types, shared by the replay's `metadata.json` (by name) and the DB's
//! `schema` (by postcard index, the order of the enum).

use crate::model::DType;

/// A component's element type: the Rust variant names Elodin writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Primitive {
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    Bool,
    F32,
    F64,
}

impl Primitive {
    pub const ALL: [Primitive; 11] = [
        Primitive::U8,
        Primitive::U16,
        Primitive::U32,
        Primitive::U64,
        Primitive::I8,
        Primitive::I16,
        Primitive::I32,
        Primitive::I64,
        Primitive::Bool,
        Primitive::F32,
        Primitive::F64,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Primitive::U8 => "U8",
            Primitive::U16 => "U16",
            Primitive::U32 => "U32",
            Primitive::U64 => "U64",
            Primitive::I8 => "I8",
            Primitive::I16 => "I16",
            Primitive::I32 => "I32",
            Primitive::I64 => "I64",
            Primitive::Bool => "Bool",
            Primitive::F32 => "F32",
            Primitive::F64 => "F64",
        }
    }

    pub fn parse(name: &str) -> Option<Primitive> {
        Primitive::ALL.into_iter().find(|p| p.name() == name)
    }

    pub fn dtype(self) -> DType {
        match self {
            Primitive::U8 => DType::U8,
            Primitive::U16 => DType::U16,
            Primitive::U32 => DType::U32,
            Primitive::U64 => DType::U64,
            Primitive::I8 => DType::I8,
            Primitive::I16 => DType::I16,
            Primitive::I32 => DType::I32,
            Primitive::I64 => DType::I64,
            Primitive::Bool => DType::Bool,
            Primitive::F32 => DType::F32,
            Primitive::F64 => DType::F64,
        }
    }

    /// The type that holds `dtype`, where Elodin has one (it has no strings).
    pub fn from_dtype(dtype: DType) -> Option<Primitive> {
        Primitive::ALL.into_iter().find(|p| p.dtype() == dtype)
    }

    /// From a DB `schema`'s postcard index (the enum's order).
    pub fn from_index(index: u64) -> Option<Primitive> {
        Primitive::ALL.get(usize::try_from(index).ok()?).copied()
    }

    /// The postcard index a DB `schema` stores.
    pub fn index(self) -> u64 {
        self as u64
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Primitive::U8 | Primitive::I8 | Primitive::Bool => 1,
            Primitive::U16 | Primitive::I16 => 2,
            Primitive::U32 | Primitive::I32 | Primitive::F32 => 4,
            Primitive::U64 | Primitive::I64 | Primitive::F64 => 8,
        }
    }

    /// The DB client's name (`f64`), where `metadata.json` says `F64`.
    pub fn client_name(self) -> &'static str {
        match self {
            Primitive::U8 => "u8",
            Primitive::U16 => "u16",
            Primitive::U32 => "u32",
            Primitive::U64 => "u64",
            Primitive::I8 => "i8",
            Primitive::I16 => "i16",
            Primitive::I32 => "i32",
            Primitive::I64 => "i64",
            Primitive::Bool => "bool",
            Primitive::F32 => "f32",
            Primitive::F64 => "f64",
        }
    }
}
