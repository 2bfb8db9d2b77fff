//! The lake written a frame at a time (`Frames::create_frames`): each signal's value is
//! read from its frame's block into its `values` row, instead of through a record per
//! signal and frame that the reader builds and the pipeline selects and moves (an Icarus
//! frame of 200 doubles is 200 records). Only the few signals that give `poses` rows
//! (positions, attitudes) are made into records, for the record path's `Poses`; an Elodin
//! DB's bodies' `world_pos` are not (`WorldPoses`).
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
use crate::model::pose::WORLD_POS;
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
    /// Its poses are an Elodin `world_pos` of seven float64s, gathered into a frame's
    /// [`WorldPoses`] (when no other signal gives poses).
    world_pos: bool,
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
    /// Every one is an array (an Elodin DB's): their rows are pushed together.
    arrays: bool,
    /// Per signal, the rows with a 64-bit integer element that float64 did not hold.
    inexact: Vec<u64>,
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
            arrays: list.iter().all(|s| s.array),
            inexact: vec![0; list.len()],
            list,
        }
    }
}

/// A frame's Elodin `world_pos`es, made into `poses` rows together without a record each
/// (`Poses::push_world_poses`), their channels and entities as indices.
struct WorldPoses {
    channels: Int32Array,
    entities: Int32Array,
    frame: Vec<[f64; 7]>,
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
    /// Whether each array of a frame was kept exactly (`Values::push_packed`).
    exact: Vec<bool>,
    world: WorldPoses,
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
                        world_pos: false,
                        array: layout.loose || !s.packed.shape.is_empty(),
                    };
                    // A record of zeros of its type: whether a record gives poses rows
                    // depends on its channel, key and value's type, not on the numbers.
                    let zeros = vec![0u8; s.offset + s.packed.count() * 8];
                    signal.poses = probe.gives_rows(&signal.record(&zeros, 0, None), channel);
                    signal.world_pos = signal.poses
                        && signal.key == WORLD_POS
                        && (s.packed.dtype, s.packed.shape.as_slice()) == (DType::F64, &[7]);
                    Some(signal)
                })
                .collect()
        };
        let mut statics = bind(&layout.statics)?;
        let mut dynamics = bind(&layout.dynamics)?;
        // The `poses` rows' order is the records': a frame's `world_pos`es go together only
        // when no other signal, static or dynamic, gives rows.
        let alone =
            !statics.iter().any(|s| s.poses) && (dynamics.iter()).all(|s| !s.poses || s.world_pos);
        statics.iter_mut().for_each(|s| s.world_pos = false);
        dynamics.iter_mut().for_each(|s| s.world_pos &= alone);
        // Their rows' labels are indexed by `i32` (`Signals`).
        i32::try_from(statics.len() + dynamics.len()).ok()?;
        let mut writer = match LakeWriter::create(root, name, header, outputs) {
            Ok(w) => w,
            Err(e) => return Some(Err(e)),
        };
        let all = || all_of(&statics, &dynamics);
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
        let world = WorldPoses::of(&dynamics, header, &mut writer.poses);
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
            exact: Vec::new(),
            world,
        }))
    }
}

/// Every signal, the statics first.
fn all_of<'s>(statics: &'s [Signal], dynamics: &'s [Signal]) -> impl Iterator<Item = &'s Signal> {
    statics.iter().chain(dynamics)
}

impl WorldPoses {
    /// Of `signals`' `world_pos`es: their channels, and their entities (or, without one,
    /// their channels' names, as `Poses::push` names them) given to `poses` to index.
    fn of(signals: &[Signal], header: &Header, poses: &mut Poses) -> WorldPoses {
        let bodies: Vec<&Signal> = signals.iter().filter(|s| s.world_pos).collect();
        if !bodies.is_empty() {
            let channel = |s: &Signal| header.channels.get(s.channel as usize);
            let name = (bodies.iter())
                .map(|s| (s.entity_text.as_deref()).or(channel(s).map(|c| c.name.as_str())));
            poses.bodies(name.collect());
        }
        WorldPoses {
            channels: bodies.iter().map(|s| s.channel as i32).collect(),
            entities: (0..bodies.len() as i32).collect(),
            frame: Vec::with_capacity(bodies.len()),
        }
    }
}

impl Signal {
    /// Its value in `block`, as its record carries it (text is refused at `create`).
    fn value(&self, block: &[u8]) -> Value {
        let value = if self.array {
            self.packed.loose_value(block, self.offset)
        } else {
            self.packed.value(block, self.offset)
        };
        value.unwrap_or(Value::Null)
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
            exact,
            world,
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
        writer.records += n as u64;
        if signals.floats {
            numbers.clear();
            let at = |s: &Signal| f64::from_le_bytes(le_bytes(block, s.offset));
            numbers.extend(signals.list.iter().map(at));
            values.push_floats(numbers);
            return;
        }
        if signals.arrays {
            let arrays = signals.list.iter().map(|s| (&s.packed, s.offset));
            values.push_packed(arrays, block, exact);
            count_inexact(&mut signals.inexact, exact.iter().copied());
        }
        let place = (time, time_utc, frame);
        for (i, s) in signals.list.iter().enumerate() {
            if !s.array {
                writer.push_value_of(s.channel, &s.key, &s.value(block));
            } else if !signals.arrays {
                (writer.values).push_packed(std::iter::once((&s.packed, s.offset)), block, exact);
                count_inexact(&mut signals.inexact[i..=i], exact.iter().copied());
            }
            if s.world_pos {
                let element = |e: usize| f64::from_le_bytes(le_bytes(block, s.offset + 8 * e));
                world.frame.push(std::array::from_fn(element));
            } else if s.poses {
                s.fill(record, block, time, frame);
                writer.push_poses(record, time_utc);
            }
        }
        if !world.frame.is_empty() {
            let (channels, entities) = (&world.channels, &world.entities);
            (writer.poses).push_world_poses(place, channels, entities, &world.frame);
            world.frame.clear();
        }
    }
}

/// Adds to `counts` (a signal's each) the rows `exact` says were not kept exactly.
fn count_inexact(counts: &mut [u64], exact: impl Iterator<Item = bool>) {
    for (count, exact) in counts.iter_mut().zip(exact) {
        *count += u64::from(!exact);
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
        let LakeFrames {
            mut writer,
            statics,
            dynamics,
            ..
        } = *self;
        for signals in [statics, dynamics] {
            for (s, &n) in signals.list.iter().zip(&signals.inexact) {
                writer.tally_inexact(s.channel, &s.key, n);
            }
        }
        Sink::finish(Box::new(writer))
    }
}
