//! The lake written a frame at a time (`Frames::create_frames`): each signal's value is
//! read from its frame's block into its `values` row, instead of through a record per
//! signal and frame that the reader builds and the pipeline selects and moves (an Icarus
//! frame of 200 doubles is 200 records). Only the few signals that give `poses` rows
//! (positions, attitudes) are made into records, for the record path's `Poses`.
//!
//! What it writes and reports is what [`LakeWriter`] writes for the same recording read as
//! records (the rows in the same order: the static signals at the first frame, then each
//! frame's signals, as `FrameSource` promises the record read gives them).

use std::path::Path;

use super::file::{entity_text, utc_micros};
use super::file::{Common, BATCH_ROWS};
use super::poses::Poses;
use super::writer::LakeWriter;
use crate::formats::frames::{le_bytes, Frame, FrameLayout, FrameSignal, FrameSink, Packed};
use crate::formats::output::Outputs;
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::{Array, ArrayData, ChannelId, DType, Entity, Header, Nanos, Record, Value};

/// A signal bound to its channel: the key of its value and whether its records give poses.
struct Signal {
    channel: ChannelId,
    entity: Option<Entity>,
    entity_text: Option<String>,
    key: String,
    packed: Packed,
    offset: usize,
    poses: bool,
}

pub struct LakeFrames {
    writer: LakeWriter,
    statics: Vec<Signal>,
    dynamics: Vec<Signal>,
    static_block: Vec<u8>,
    /// Frames written.
    frames: u64,
    /// The record of a signal that gives poses, reused.
    record: Record,
}

impl LakeFrames {
    /// `None` (nothing created) when a signal is not one field of its channel or its value
    /// is not packed (text).
    pub fn create(
        root: &Path,
        name: &str,
        header: &Header,
        layout: &FrameLayout,
        outputs: &mut Outputs,
    ) -> Option<Result<LakeFrames, WriteError>> {
        let mut probe = Poses::new(Common::new("", ""), &header.channels);
        let mut bind = |signals: &[FrameSignal]| -> Option<Vec<Signal>> {
            (signals.iter())
                .map(|s| {
                    let channel = header.channels.get(s.channel as usize)?;
                    let [field] = channel.fields.as_slice() else {
                        return None;
                    };
                    if s.packed.dtype == DType::Str {
                        return None;
                    }
                    let mut signal = Signal {
                        channel: s.channel,
                        entity: s.entity.clone(),
                        entity_text: (s.entity.as_ref())
                            .map(|e| entity_text(e, &mut itoa::Buffer::new()).to_string()),
                        key: field.name.clone(),
                        packed: s.packed.clone(),
                        offset: s.offset,
                        poses: false,
                    };
                    // A record of zeros of its type: whether a record gives poses rows
                    // depends on its channel, key and value's type, not on the numbers.
                    let zeros = vec![0u8; s.offset + s.packed.count() * 8];
                    signal.poses = probe.gives_rows(&signal.record(&zeros, 0, 0), channel);
                    Some(signal)
                })
                .collect()
        };
        let statics = bind(&layout.statics)?;
        let dynamics = bind(&layout.dynamics)?;
        let writer = match LakeWriter::create(root, name, header, outputs) {
            Ok(w) => w,
            Err(e) => return Some(Err(e)),
        };
        Some(Ok(LakeFrames {
            writer,
            statics,
            dynamics,
            static_block: layout.static_block.clone(),
            frames: 0,
            record: Record::new(0, 0),
        }))
    }
}

impl Signal {
    /// Its value in `block`, as its record carries it.
    fn value(&self, block: &[u8]) -> Value {
        let p = &self.packed;
        if p.shape.is_empty() {
            return scalar(p.dtype, block, self.offset);
        }
        let size = p.element_size();
        let n = p.count();
        let at = |i: usize| self.offset + i * size;
        // Storage order to the model's row-major order.
        let order = |i: usize| (0..n).find(|&j| p.model_index(j) == i).unwrap_or(i);
        let index = |i: usize| if p.column_major { order(i) } else { i };
        macro_rules! elements {
            ($variant:ident, $t:ty, $w:literal) => {
                ArrayData::$variant(
                    (0..n)
                        .map(|i| <$t>::from_le_bytes(le_bytes::<$w>(block, at(index(i)))))
                        .collect(),
                )
            };
        }
        let data = match p.dtype {
            DType::Bool => ArrayData::Bool(
                (0..n)
                    .map(|i| le_bytes::<1>(block, at(index(i)))[0] != 0)
                    .collect(),
            ),
            DType::U8 => elements!(U8, u8, 1),
            DType::U16 => elements!(U16, u16, 2),
            DType::U32 => elements!(U32, u32, 4),
            DType::U64 => elements!(U64, u64, 8),
            DType::I8 => elements!(I8, i8, 1),
            DType::I16 => elements!(I16, i16, 2),
            DType::I32 => elements!(I32, i32, 4),
            DType::I64 => elements!(I64, i64, 8),
            DType::F32 => elements!(F32, f32, 4),
            DType::F64 => elements!(F64, f64, 8),
            DType::Str => ArrayData::Str(Vec::new()),
        };
        Value::Array(Array {
            shape: p.shape.clone(),
            data,
        })
    }

    /// Its record at `time`, frame value `frame`, of its value in `block`.
    fn record(&self, block: &[u8], time: Nanos, frame: i64) -> Record {
        let mut record = Record::new(time, self.channel);
        self.fill(&mut record, block, time, frame);
        record
    }

    fn fill(&self, record: &mut Record, block: &[u8], time: Nanos, frame: i64) {
        record.time = time;
        record.channel = self.channel;
        record.entity.clone_from(&self.entity);
        record.frame = Some(frame);
        record.values.clear();
        record.values.push((self.key.clone(), self.value(block)));
    }
}

/// A scalar of `dtype` at `at` in `block`.
fn scalar(dtype: DType, block: &[u8], at: usize) -> Value {
    match dtype {
        DType::Bool => Value::Bool(le_bytes::<1>(block, at)[0] != 0),
        DType::U8 => Value::UInt(u64::from(le_bytes::<1>(block, at)[0])),
        DType::U16 => Value::UInt(u64::from(u16::from_le_bytes(le_bytes(block, at)))),
        DType::U32 => Value::UInt(u64::from(u32::from_le_bytes(le_bytes(block, at)))),
        DType::U64 => Value::UInt(u64::from_le_bytes(le_bytes(block, at))),
        DType::I8 => Value::Int(i64::from(i8::from_le_bytes(le_bytes(block, at)))),
        DType::I16 => Value::Int(i64::from(i16::from_le_bytes(le_bytes(block, at)))),
        DType::I32 => Value::Int(i64::from(i32::from_le_bytes(le_bytes(block, at)))),
        DType::I64 => Value::Int(i64::from_le_bytes(le_bytes(block, at))),
        DType::F32 => Value::F32(f32::from_le_bytes(le_bytes(block, at))),
        DType::F64 => Value::Float(f64::from_le_bytes(le_bytes(block, at))),
        DType::Str => Value::Null,
    }
}

impl LakeFrames {
    /// The rows of `signals` (statics or dynamics) with their values in `block`.
    fn rows(&mut self, statics: bool, block: &[u8], time: Nanos, frame: i64) {
        let LakeFrames {
            writer,
            record,
            statics: s0,
            dynamics,
            ..
        } = self;
        let signals = if statics { s0 } else { dynamics };
        let time_utc = utc_micros(writer.epoch_ns, time);
        for s in signals {
            let value = s.value(block);
            let at = (time, time_utc, Some(frame));
            writer.push_value(s.channel, s.entity_text.as_deref(), at, &s.key, &value);
            if s.poses {
                s.fill(record, block, time, frame);
                writer.push_poses(record, time_utc);
            }
            writer.records += 1;
        }
    }
}

impl FrameSink for LakeFrames {
    fn write_frame(&mut self, frame: &Frame<'_>) -> Result<(), WriteError> {
        let n = i64::try_from(self.frames).unwrap_or(i64::MAX);
        if self.frames == 0 {
            let block = std::mem::take(&mut self.static_block);
            self.rows(true, &block, frame.time, 0);
            self.static_block = block;
        }
        self.rows(false, frame.values, frame.time, n);
        self.frames += 1;
        self.writer.flush(BATCH_ROWS)
    }

    fn finish(self: Box<Self>) -> Result<WriteReport, WriteError> {
        Sink::finish(Box::new(self.writer))
    }
}
