//! Recordings read and written a frame at a time (`Frames::open_frames`,
//! `Frames::create_frames`): for a conversion that changes nothing record by record, a
//! reader lends each frame's values packed as one block and a writer takes them from it,
//! instead of one record per signal and frame (1 GB of 200-double Icarus frames is 120
//! million records). The Icarus formats and the Elodin DB read frames (`.icarec` and the
//! CSV do not write them), and HDF5, the DB, the Parquet table, MCAP and the lake write
//! them; these types say nothing of any one format, so none imports another.

use std::path::Path;

use super::{ReadError, Source, WriteError, WriteReport};
use crate::model::{Array, ArrayData, ChannelId, DType, Entity, FieldSpec, Header, Nanos, Value};
use crate::report::{Fact, Findings};

/// How a signal's value is packed in a block: its elements at their canonical size (8 bytes
/// for a float64 or an int64, 4 for a float32 or an int32, 1 for a bool, nonzero is true),
/// little-endian, one after the other in storage order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packed {
    pub dtype: DType,
    /// The value's shape in the model: `[]` for a scalar, `[3]`, `[3, 3]`.
    pub shape: Vec<usize>,
    /// A two-dimensional value stored column by column (the model's arrays are row-major).
    pub column_major: bool,
}

impl Packed {
    /// Number of elements.
    pub fn count(&self) -> usize {
        self.shape.iter().product()
    }

    /// Canonical size of one element in bytes (0 for strings, which are not packed).
    pub fn element_size(&self) -> usize {
        match self.dtype {
            DType::Bool | DType::U8 | DType::I8 => 1,
            DType::U16 | DType::I16 => 2,
            DType::U32 | DType::I32 | DType::F32 => 4,
            DType::U64 | DType::I64 | DType::F64 => 8,
            DType::Str => 0,
        }
    }

    /// The value packed at `at` in `block`, as the frame source's records carry it: a scalar,
    /// or an array of the packed shape in the model's (row-major) order. `None` for a string
    /// (never packed).
    pub fn value(&self, block: &[u8], at: usize) -> Option<Value> {
        if self.shape.is_empty() {
            return Some(match self.dtype {
                DType::Bool => Value::Bool(le_bytes::<1>(block, at)[0] != 0),
                DType::U8 => Value::UInt(le_bytes::<1>(block, at)[0].into()),
                DType::U16 => Value::UInt(u16::from_le_bytes(le_bytes(block, at)).into()),
                DType::U32 => Value::UInt(u32::from_le_bytes(le_bytes(block, at)).into()),
                DType::U64 => Value::UInt(u64::from_le_bytes(le_bytes(block, at))),
                DType::I8 => Value::Int(i8::from_le_bytes(le_bytes(block, at)).into()),
                DType::I16 => Value::Int(i16::from_le_bytes(le_bytes(block, at)).into()),
                DType::I32 => Value::Int(i32::from_le_bytes(le_bytes(block, at)).into()),
                DType::I64 => Value::Int(i64::from_le_bytes(le_bytes(block, at))),
                DType::F32 => Value::F32(f32::from_le_bytes(le_bytes(block, at))),
                DType::F64 => Value::Float(f64::from_le_bytes(le_bytes(block, at))),
                DType::Str => return None,
            });
        }
        self.loose_value(block, at)
    }

    /// The value packed at `at` in `block` as a loose layout's records carry it
    /// ([`FrameLayout::loose`]): as [`Packed::value`], but a scalar is an array of shape `[]`.
    pub fn loose_value(&self, block: &[u8], at: usize) -> Option<Value> {
        let mut data = ArrayData::empty(self.dtype);
        self.fill(block, at, &mut data).then(|| {
            Value::Array(Array {
                shape: self.shape.clone(),
                data,
            })
        })
    }

    /// Puts the elements packed at `at` in `block` into `data`, in the model's (row-major)
    /// order, in its own buffer (a value refilled frame after frame costs no allocation);
    /// `false`, and `data` as it was, when its dtype is not the packed one or is a string.
    pub fn fill(&self, block: &[u8], at: usize, data: &mut ArrayData) -> bool {
        let (n, size) = (self.count(), self.element_size());
        let element = |i: usize| at.saturating_add(i.saturating_mul(size));
        macro_rules! elements {
            ($v:expr, $n:literal, $from:expr) => {{
                $v.resize(n, Default::default());
                for i in 0..n {
                    $v[self.model_index(i)] = $from(le_bytes::<$n>(block, element(i)));
                }
            }};
        }
        match (data, self.dtype) {
            (ArrayData::Bool(v), DType::Bool) => elements!(v, 1, |b: [u8; 1]| b[0] != 0),
            (ArrayData::U8(v), DType::U8) => elements!(v, 1, u8::from_le_bytes),
            (ArrayData::U16(v), DType::U16) => elements!(v, 2, u16::from_le_bytes),
            (ArrayData::U32(v), DType::U32) => elements!(v, 4, u32::from_le_bytes),
            (ArrayData::U64(v), DType::U64) => elements!(v, 8, u64::from_le_bytes),
            (ArrayData::I8(v), DType::I8) => elements!(v, 1, i8::from_le_bytes),
            (ArrayData::I16(v), DType::I16) => elements!(v, 2, i16::from_le_bytes),
            (ArrayData::I32(v), DType::I32) => elements!(v, 4, i32::from_le_bytes),
            (ArrayData::I64(v), DType::I64) => elements!(v, 8, i64::from_le_bytes),
            (ArrayData::F32(v), DType::F32) => elements!(v, 4, f32::from_le_bytes),
            (ArrayData::F64(v), DType::F64) => elements!(v, 8, f64::from_le_bytes),
            _ => return false,
        }
        true
    }

    /// The model's (row-major) index of the element at storage index `i`.
    pub fn model_index(&self, i: usize) -> usize {
        match (self.column_major, self.shape.as_slice()) {
            (true, &[rows, columns]) if rows > 0 => (i % rows) * columns + i / rows,
            _ => i,
        }
    }
}

/// One signal of a recording read or written a frame at a time ([`FrameSource`],
/// [`FrameSink`]): the header channel that declares it (one field: its name, type, unit and
/// semantic; the key of its records' one value), the entity of its records, how its value
/// is packed and where it lies in a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameSignal {
    pub channel: ChannelId,
    pub entity: Option<Entity>,
    pub packed: Packed,
    /// Byte offset of the value in its block (the static block, or a frame's values). A
    /// scalar int32 or bool may sit in an 8-byte slot, low bytes first (as the `.icarec`
    /// profile stores them, spec §A3), so a frame is handed out as it is in the file; its
    /// value is in the first bytes.
    pub offset: usize,
}

impl FrameSignal {
    /// Its channel's one field in `header`, which its records carry; `None` when the
    /// channel is not there or has another number of fields (a writer then takes records).
    pub fn field<'h>(&self, header: &'h Header) -> Option<&'h FieldSpec> {
        match header
            .channels
            .get(self.channel as usize)?
            .fields
            .as_slice()
        {
            [field] => Some(field),
            _ => None,
        }
    }
}

/// The signals of a frame stream: static ones (one value, in `static_block`) and dynamic
/// ones (a value in every frame's block).
#[derive(Debug, Clone, Default)]
pub struct FrameLayout {
    pub statics: Vec<FrameSignal>,
    pub dynamics: Vec<FrameSignal>,
    pub static_block: Vec<u8>,
    /// Whether the record read's records differ from what [`FrameSource`] says in two ways
    /// a writer may not care about: they carry no frame value, and a scalar is an array of
    /// shape `[]` (an Elodin DB's). Only a writer that says it takes them
    /// ([`Frames::takes_loose`](super::Frames::takes_loose)) gets such frames.
    pub loose: bool,
}

/// One frame: its model time and the values of every dynamic signal
/// ([`FrameSignal::offset`] into `values`). A read without values (`ReadOptions::decode`
/// off: `inspect`, which wants the frames' times and checks) may lend none.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    pub time: Nanos,
    /// The time as the source stores it, in float seconds (what its records carry as
    /// [`Record::exact_seconds`](crate::model::Record::exact_seconds)), so that a writer of
    /// float seconds keeps it bit for bit; `None` when the source has none.
    pub exact_seconds: Option<f64>,
    pub values: &'a [u8],
}

/// A recording read a frame at a time. Its record read, for the same file and options,
/// gives first one record per static signal (in layout order, at the first frame's time
/// and frame value 0), then for each frame `i` (from 0) one record per dynamic signal (in
/// layout order, at the frame's time, frame value `i`; but see [`FrameLayout::loose`]), each
/// with its signal's entity and one value under its channel's field name; the frame read
/// makes the same checks, findings and errors.
pub trait FrameSource {
    /// The record read the frames come from: its header, findings, progress and facts are
    /// the frame read's.
    fn records(&self) -> &dyn Source;
    fn layout(&self) -> &FrameLayout;
    /// The next frame, lent until the next call; `None` at the end (after the checks that
    /// need all of the data).
    fn next_frame(&mut self) -> Result<Option<Frame<'_>>, ReadError>;

    /// Whether the frames lent so far are the record read's frames 0, 1, 2… (by default,
    /// yes). When not (a lenient read that skipped a damaged row, whose records keep the
    /// rows' indices), the run writes nothing of its frames and goes the record path.
    fn numbered(&self) -> bool {
        true
    }

    /// The header its record read has (channels, one per signal, with their field specs).
    fn header(&self) -> &Header {
        self.records().header()
    }
    fn findings(&self) -> Vec<(&Path, &Findings)> {
        self.records().findings()
    }
    /// Bytes done and in all, as [`Source::progress`].
    fn progress(&self) -> (u64, u64) {
        self.records().progress()
    }
    /// What `inspect` shows of the recording, as [`Source::facts`].
    fn facts(&self) -> Vec<Fact> {
        self.records().facts()
    }
}

/// A writer taking whole frames of a [`FrameLayout`]. What it writes and reports (records,
/// loss, widenings) is what its record writer writes and reports for the same recording
/// read as records.
pub trait FrameSink {
    /// Whether it writes `frame` as its record writer would write the frame's records
    /// (asked before each frame; by default, yes). When not (the Elodin DB, which needs
    /// time order, at a frame earlier than the one before: the record path puts those in
    /// order first), the run writes nothing of its frames and goes the record path.
    fn takes(&self, _frame: &Frame<'_>) -> bool {
        true
    }
    fn write_frame(&mut self, frame: &Frame<'_>) -> Result<(), WriteError>;
    fn finish(self: Box<Self>) -> Result<WriteReport, WriteError>;
}

/// A frame source opened (`Frames::open_frames`), boxed as the trait gives it.
pub fn boxed_source<F: FrameSource + 'static>(
    opened: Option<Result<F, ReadError>>,
) -> Option<Result<Box<dyn FrameSource>, ReadError>> {
    opened.map(|r| r.map(|f| Box::new(f) as Box<dyn FrameSource>))
}

/// A frame sink created (`Frames::create_frames`), boxed as the trait gives it.
pub fn boxed_sink<S: FrameSink + 'static>(
    created: Option<Result<S, WriteError>>,
) -> Option<Result<Box<dyn FrameSink>, WriteError>> {
    created.map(|r| r.map(|w| Box::new(w) as Box<dyn FrameSink>))
}

/// The `N` bytes at `at` in `block`; zeros when the block holds fewer (a frame source
/// checked its sizes).
pub fn le_bytes<const N: usize>(block: &[u8], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    if let Some(s) = at.checked_add(N).and_then(|end| block.get(at..end)) {
        out.copy_from_slice(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_major_matrix_maps_to_row_major_indices() {
        let m = Packed {
            dtype: DType::F64,
            shape: vec![3, 3],
            column_major: true,
        };
        let order: Vec<usize> = (0..9).map(|i| m.model_index(i)).collect();
        assert_eq!(order, [0, 3, 6, 1, 4, 7, 2, 5, 8]);
        let v = Packed {
            dtype: DType::F32,
            shape: vec![4],
            column_major: false,
        };
        assert_eq!((v.count(), v.element_size(), v.model_index(2)), (4, 4, 2));
        let s = Packed {
            dtype: DType::Bool,
            shape: vec![],
            column_major: false,
        };
        assert_eq!((s.count(), s.element_size()), (1, 1));
        let mut block = vec![9u8; 2];
        for x in [1.0f64, 2.0, 3.0, 4.0] {
            block.extend_from_slice(&x.to_le_bytes());
        }
        let m2 = Packed {
            dtype: DType::F64,
            shape: vec![2, 2],
            column_major: true,
        };
        let Some(Value::Array(a)) = m2.value(&block, 2) else {
            panic!("an array");
        };
        assert_eq!(a.data, ArrayData::F64(vec![1.0, 3.0, 2.0, 4.0]));
        let int = Packed {
            dtype: DType::I32,
            shape: vec![],
            column_major: false,
        };
        let slot = [(-2i64).to_le_bytes(), [0; 8]].concat();
        assert_eq!(int.value(&slot, 0), Some(Value::Int(-2)));
        assert_eq!(s.value(&[2], 0), Some(Value::Bool(true)));
        let Some(Value::Array(loose)) = int.loose_value(&slot, 0) else {
            panic!("an array");
        };
        assert_eq!(
            (loose.shape, loose.data),
            (vec![], ArrayData::I32(vec![-2]))
        );
        assert_eq!(m2.loose_value(&block, 2), m2.value(&block, 2));
        // Refilled in its own buffer; another dtype is left as it was.
        let mut data = ArrayData::F64(vec![9.0; 8]);
        assert!(m2.fill(&block, 2, &mut data));
        assert_eq!(data, ArrayData::F64(vec![1.0, 3.0, 2.0, 4.0]));
        let mut other = ArrayData::F32(vec![1.0]);
        assert!(!m2.fill(&block, 2, &mut other));
        assert_eq!(other, ArrayData::F32(vec![1.0]));
        assert_eq!(le_bytes::<4>(&[1, 2, 3, 4, 5], 1), [2, 3, 4, 5]);
        assert_eq!(le_bytes::<4>(&[1, 2, 3], 1), [0; 4]);
        assert_eq!(le_bytes::<2>(&[1, 2, 3], usize::MAX), [0, 0]);
    }
}
