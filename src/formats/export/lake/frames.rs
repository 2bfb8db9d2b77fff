//! The lake written a frame at a time (`Frames::create_frames`): each signal's value is
//! read from its frame's block into its `values` row, instead of through a record per
//! signal and frame that the reader builds and the pipeline selects and moves (an Icarus
//! frame of 200 doubles is 200 records). Only the few signals that give `poses` rows
//! (positions, attitudes) are made into records, for the record path's `Poses`.
//!
//! What it writes and reports is what [`LakeWriter`] writes for the same recording read as
//! records (the rows in the same order: the static signals at the first frame, then each
//! frame's signals, as `FrameSource` promises the record read gives them). A loose layout's
//! records (an Elodin DB's, `FrameLayout::loose`) carry no frame value and every value as
//! an array, a scalar of shape `[]`: so do its rows.

use std::path::Path;

use arrow_array::Int32Array;

use super::file::{entity_text, utc_micros};
use super::file::{Common, BATCH_ROWS};
use super::poses::Poses;
use super::writer::LakeWriter;
use crate::formats::frames::{le_bytes, Frame, FrameLayout, FrameSignal, FrameSink, Packed};
use crate::formats::output::Outputs;
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::{ChannelId, DType, Entity, Header, Nanos, Record, Value};

/// A signal bound to its channel: the key of its value and whether its records give poses.
struct Signal {
    channel: ChannelId,
    entity: Option<Entity>,
    entity_text: Option<String>,
    key: String,
    packed: Packed,
    offset: usize,
    poses: bool,
    /// Its records carry its value as an array, a scalar too (a loose layout's).
    array: bool,
}

/// Signals that come together (the statics, or a frame's dynamics), and their rows' places
/// in the label columns' dictionaries (of every signal, the statics first), the same at
/// every frame.
struct Signals {
    list: Vec<Signal>,
    /// Of their channels and keys.
    rows: Int32Array,
    /// Of their entities: null for a signal without one.
    entities: Int32Array,
    /// Every one is a float64 scalar without poses (most Icarus frames): their values are
    /// copied into the `value` column as a slice.
    floats: bool,
}

impl Signals {
    /// `list`, whose first signal is number `first` of the dictionaries.
    fn new(list: Vec<Signal>, first: usize) -> Signals {
        let index = |i: usize| i32::try_from(first + i).unwrap_or(i32::MAX);
        Signals {
            rows: (0..list.len()).map(index).collect(),
            entities: (list.iter().enumerate())
                .map(|(i, s)| s.entity.as_ref().map(|_| index(i)))
                .collect(),
            floats: (list.iter()).all(|s| {
                !s.poses && !s.array && s.packed.dtype == DType::F64 && s.packed.shape.is_empty()
            }),
            list,
        }
    }
}

pub struct LakeFrames {
    writer: LakeWriter,
    statics: Signals,
    dynamics: Signals,
    static_block: Vec<u8>,
    /// Frames written.
    frames: u64,
    /// The layout is loose: rows without a frame value.
    loose: bool,
    /// The record of a signal that gives poses, reused.
    record: Record,
    /// A frame's numbers, when they are all float64 (`Signals::floats`).
    numbers: Vec<f64>,
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
                    let field = s.field(header)?;
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
                        array: layout.loose || !s.packed.shape.is_empty(),
                    };
                    // A record of zeros of its type: whether a record gives poses rows
                    // depends on its channel, key and value's type, not on the numbers.
                    let zeros = vec![0u8; s.offset + s.packed.count() * 8];
                    signal.poses = probe.gives_rows(&signal.record(&zeros, 0, None), channel);
                    Some(signal)
                })
                .collect()
        };
        let statics = bind(&layout.statics)?;
        let dynamics = bind(&layout.dynamics)?;
        // Their rows' labels are indexed by `i32` (`Signals`).
        i32::try_from(statics.len() + dynamics.len()).ok()?;
        let mut writer = match LakeWriter::create(root, name, header, outputs) {
            Ok(w) => w,
            Err(e) => return Some(Err(e)),
        };
        let all = || statics.iter().chain(&dynamics);
        let channel = |s: &Signal| (header.channels.get(s.channel as usize)).map(|c| &c.name);
        let values = &mut writer.values;
        values
            .common
            .channels
            .dictionary(all().map(channel).collect());
        let entities = all().map(|s| s.entity_text.as_deref());
        values.common.entities.dictionary(entities.collect());
        values
            .keys
            .dictionary(all().map(|s| Some(&s.key)).collect());
        let statics = Signals::new(statics, 0);
        let dynamics = Signals::new(dynamics, statics.list.len());
        Some(Ok(LakeFrames {
            writer,
            statics,
            dynamics,
            static_block: layout.static_block.clone(),
            frames: 0,
            loose: layout.loose,
            record: Record::new(0, 0),
            numbers: Vec::new(),
        }))
    }
}

impl Signal {
    /// Its value in `block`, as its record carries it (text is refused at `create`).
    fn value(&self, block: &[u8]) -> Value {
        if self.array && self.packed.shape.is_empty() {
            let one = Packed {
                shape: vec![1],
                ..self.packed.clone()
            };
            if let Some(Value::Array(mut a)) = one.value(block, self.offset) {
                a.shape.clear();
                return Value::Array(a);
            }
        }
        self.packed.value(block, self.offset).unwrap_or(Value::Null)
    }

    /// Its record at `time`, frame value `frame`, of its value in `block`.
    fn record(&self, block: &[u8], time: Nanos, frame: Option<i64>) -> Record {
        let mut record = Record::new(time, self.channel);
        self.fill(&mut record, block, time, frame);
        record
    }

    fn fill(&self, record: &mut Record, block: &[u8], time: Nanos, frame: Option<i64>) {
        record.time = time;
        record.channel = self.channel;
        record.entity.clone_from(&self.entity);
        record.frame = frame;
        record.values.clear();
        record.values.push((self.key.clone(), self.value(block)));
    }
}

impl LakeFrames {
    /// The rows of `signals` (statics or dynamics) with their values in `block`.
    fn rows(&mut self, statics: bool, block: &[u8], time: Nanos, frame: i64) {
        let frame = (!self.loose).then_some(frame);
        let LakeFrames {
            writer,
            record,
            statics: s0,
            dynamics,
            numbers,
            ..
        } = self;
        let signals = if statics { s0 } else { dynamics };
        let time_utc = utc_micros(writer.epoch_ns, time);
        let n = signals.list.len();
        let values = &mut writer.values;
        values.common.push_times(n, time, time_utc, frame);
        values.common.channels.push_keys(&signals.rows);
        values.common.entities.push_keys(&signals.entities);
        values.keys.push_keys(&signals.rows);
        if signals.floats {
            numbers.clear();
            let at = |s: &Signal| f64::from_le_bytes(le_bytes(block, s.offset));
            numbers.extend(signals.list.iter().map(at));
            values.push_floats(numbers);
            writer.records += n as u64;
            return;
        }
        for s in &signals.list {
            if s.array {
                writer.push_packed_of(s.channel, &s.key, (&s.packed, block, s.offset));
            } else {
                writer.push_value_of(s.channel, &s.key, &s.value(block));
            }
            if s.poses {
                s.fill(record, block, time, frame);
                writer.push_poses(record, time_utc);
            }
        }
        writer.records += n as u64;
    }
}

impl FrameSink for LakeFrames {
    fn write_frame(&mut self, frame: &Frame<'_>) -> Result<(), WriteError> {
        let n = i64::try_from(self.frames).unwrap_or(i64::MAX);
        let statics = if self.frames == 0 {
            self.statics.list.len()
        } else {
            0
        };
        self.writer.make_room(statics + self.dynamics.list.len())?;
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
