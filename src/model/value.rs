//! Typed values carried by records.

use std::fmt;

/// One named value of a record (a frame key, a state key, a component...).
pub type Field = (String, Value);

/// A value as read from a recording.
///
/// Arrays are typed and contiguous (`Array`); JSON-like state uses `List` and
/// `Map`. `Removed` is the explicit deletion marker of key-value streams: it
/// is not a null value (a null nested inside a map is data). `F32` keeps a single-precision
/// scalar single (msgpack float 32, HDF5 float), `Bytes` and `Ext` keep binary data and
/// msgpack extension types as they are, and `Dict` a map whose keys are not all strings.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    F32(f32),
    Str(String),
    Bytes(Vec<u8>),
    /// An application-defined type code and its bytes (msgpack ext).
    Ext {
        type_id: i8,
        bytes: Vec<u8>,
    },
    Array(Array),
    List(Vec<Value>),
    Map(Vec<Field>),
    /// A map with keys that are not all strings, in the source's order.
    Dict(Vec<(Value, Value)>),
    Removed,
}

impl Value {
    /// Short description of the kind, for summaries: `float32 [21,3]`, `number`, `map`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::UInt(_) | Value::Float(_) | Value::F32(_) => "number",
            Value::Str(_) => "string",
            Value::Bytes(_) => "bytes",
            Value::Ext { .. } => "ext",
            Value::Array(_) => "array",
            Value::List(_) => "list",
            Value::Map(_) | Value::Dict(_) => "map",
            Value::Removed => "removed",
        }
    }
}

/// Element type of an [`Array`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
    Str,
}

impl DType {
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::Str => "string",
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Contiguous element storage of an [`Array`], one variant per dtype.
#[derive(Debug, Clone, PartialEq)]
pub enum ArrayData {
    Bool(Vec<bool>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Str(Vec<String>),
}

/// Applies `$body` to the vector inside any [`ArrayData`] variant.
macro_rules! with_array_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            ArrayData::Bool($v) => $body,
            ArrayData::U8($v) => $body,
            ArrayData::U16($v) => $body,
            ArrayData::U32($v) => $body,
            ArrayData::U64($v) => $body,
            ArrayData::I8($v) => $body,
            ArrayData::I16($v) => $body,
            ArrayData::I32($v) => $body,
            ArrayData::I64($v) => $body,
            ArrayData::F32($v) => $body,
            ArrayData::F64($v) => $body,
            ArrayData::Str($v) => $body,
        }
    };
}

impl ArrayData {
    pub fn dtype(&self) -> DType {
        match self {
            ArrayData::Bool(_) => DType::Bool,
            ArrayData::U8(_) => DType::U8,
            ArrayData::U16(_) => DType::U16,
            ArrayData::U32(_) => DType::U32,
            ArrayData::U64(_) => DType::U64,
            ArrayData::I8(_) => DType::I8,
            ArrayData::I16(_) => DType::I16,
            ArrayData::I32(_) => DType::I32,
            ArrayData::I64(_) => DType::I64,
            ArrayData::F32(_) => DType::F32,
            ArrayData::F64(_) => DType::F64,
            ArrayData::Str(_) => DType::Str,
        }
    }

    pub fn len(&self) -> usize {
        with_array_data!(self, v => v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the elements take (a string element counts its `String`, not its text).
    pub fn byte_len(&self) -> usize {
        with_array_data!(self, v => std::mem::size_of_val(v.as_slice()))
    }

    /// Element `i` as text (`0.5`, `true`, `"C"`), for people.
    pub fn element_text(&self, i: usize) -> Option<String> {
        with_array_data!(self, v => v.get(i).map(|x| format!("{x:?}")))
    }

    /// Appends `other`'s elements when it has the same dtype; `false` (nothing appended)
    /// when it does not.
    pub fn extend_from(&mut self, other: &ArrayData) -> bool {
        self.extend_from_range(other, 0..other.len())
    }

    /// Appends `other`'s elements `range` when it has the same dtype and holds them;
    /// `false` (nothing appended) when it does not.
    pub fn extend_from_range(&mut self, other: &ArrayData, range: std::ops::Range<usize>) -> bool {
        if range.start > range.end || range.end > other.len() {
            return false;
        }
        match (self, other) {
            (ArrayData::Bool(d), ArrayData::Bool(s)) => d.extend_from_slice(&s[range]),
            (ArrayData::U8(d), ArrayData::U8(s)) => d.extend_from_slice(&s[range]),
            (ArrayData::U16(d), ArrayData::U16(s)) => d.extend_from_slice(&s[range]),
            (ArrayData::U32(d), ArrayData::U32(s)) => d.extend_from_slice(&s[range]),
            (ArrayData::U64(d), ArrayData::U64(s)) => d.extend_from_slice(&s[range]),
            (ArrayData::I8(d), ArrayData::I8(s)) => d.extend_from_slice(&s[range]),
            (ArrayData::I16(d), ArrayData::I16(s)) => d.extend_from_slice(&s[range]),
            (ArrayData::I32(d), ArrayData::I32(s)) => d.extend_from_slice(&s[range]),
            (ArrayData::I64(d), ArrayData::I64(s)) => d.extend_from_slice(&s[range]),
            (ArrayData::F32(d), ArrayData::F32(s)) => d.extend_from_slice(&s[range]),
            (ArrayData::F64(d), ArrayData::F64(s)) => d.extend_from_slice(&s[range]),
            (ArrayData::Str(d), ArrayData::Str(s)) => d.extend_from_slice(&s[range]),
            _ => return false,
        }
        true
    }

    /// Replaces the elements by `other`'s when it has the same dtype, in the same buffer
    /// (`clone_from`: no allocation when it is large enough); `false` (nothing changed) when
    /// it does not.
    pub fn assign(&mut self, other: &ArrayData) -> bool {
        match (self, other) {
            (ArrayData::Bool(d), ArrayData::Bool(s)) => d.clone_from(s),
            (ArrayData::U8(d), ArrayData::U8(s)) => d.clone_from(s),
            (ArrayData::U16(d), ArrayData::U16(s)) => d.clone_from(s),
            (ArrayData::U32(d), ArrayData::U32(s)) => d.clone_from(s),
            (ArrayData::U64(d), ArrayData::U64(s)) => d.clone_from(s),
            (ArrayData::I8(d), ArrayData::I8(s)) => d.clone_from(s),
            (ArrayData::I16(d), ArrayData::I16(s)) => d.clone_from(s),
            (ArrayData::I32(d), ArrayData::I32(s)) => d.clone_from(s),
            (ArrayData::I64(d), ArrayData::I64(s)) => d.clone_from(s),
            (ArrayData::F32(d), ArrayData::F32(s)) => d.clone_from(s),
            (ArrayData::F64(d), ArrayData::F64(s)) => d.clone_from(s),
            (ArrayData::Str(d), ArrayData::Str(s)) => d.clone_from(s),
            _ => return false,
        }
        true
    }

    /// An empty vector of the given dtype.
    pub fn empty(dtype: DType) -> ArrayData {
        match dtype {
            DType::Bool => ArrayData::Bool(Vec::new()),
            DType::U8 => ArrayData::U8(Vec::new()),
            DType::U16 => ArrayData::U16(Vec::new()),
            DType::U32 => ArrayData::U32(Vec::new()),
            DType::U64 => ArrayData::U64(Vec::new()),
            DType::I8 => ArrayData::I8(Vec::new()),
            DType::I16 => ArrayData::I16(Vec::new()),
            DType::I32 => ArrayData::I32(Vec::new()),
            DType::I64 => ArrayData::I64(Vec::new()),
            DType::F32 => ArrayData::F32(Vec::new()),
            DType::F64 => ArrayData::F64(Vec::new()),
            DType::Str => ArrayData::Str(Vec::new()),
        }
    }
}

/// A typed n-dimensional array: dtype, shape and contiguous row-major data.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    pub shape: Vec<usize>,
    pub data: ArrayData,
}

impl Array {
    /// A 1-D array holding `data`.
    pub fn flat(data: ArrayData) -> Array {
        Array {
            shape: vec![data.len()],
            data,
        }
    }

    /// `data` with `shape`, or `None` when the shape does not hold exactly its elements.
    pub fn with_shape(data: ArrayData, shape: Vec<usize>) -> Option<Array> {
        let elements = shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))?;
        (elements == data.len()).then_some(Array { shape, data })
    }

    pub fn dtype(&self) -> DType {
        self.data.dtype()
    }

    /// The shape, or the flat length when the shape does not cover exactly the data
    /// (the fields are public: writers must not trust them to agree).
    pub fn checked_shape(&self) -> Vec<usize> {
        let elements = self
            .shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d));
        if elements == Some(self.len()) {
            self.shape.clone()
        } else {
            vec![self.len()]
        }
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extend_from_appends_only_the_same_dtype() {
        let mut a = ArrayData::F32(vec![1.0]);
        assert!(a.extend_from(&ArrayData::F32(vec![2.0, 3.0])));
        assert_eq!(a, ArrayData::F32(vec![1.0, 2.0, 3.0]));
        assert!(!a.extend_from(&ArrayData::F64(vec![4.0])));
        assert_eq!(a.len(), 3);
    }

    #[test]
    fn shape_must_cover_exactly_the_data() {
        let data = ArrayData::F32(vec![0.0; 6]);
        assert_eq!(
            Array::with_shape(data.clone(), vec![2, 3]).map(|a| a.shape),
            Some(vec![2, 3])
        );
        assert!(Array::with_shape(data.clone(), vec![4, 3]).is_none());
        assert!(Array::with_shape(data, vec![usize::MAX, 2]).is_none());
    }

    #[test]
    fn a_shape_that_does_not_fit_reads_as_flat() {
        let bad = Array {
            shape: vec![4, 3],
            data: ArrayData::U8(vec![1; 6]),
        };
        assert_eq!(bad.checked_shape(), vec![6]);
        let scalar = Array {
            shape: vec![],
            data: ArrayData::F64(vec![2.0]),
        };
        assert_eq!(scalar.checked_shape(), Vec::<usize>::new());
    }
}
