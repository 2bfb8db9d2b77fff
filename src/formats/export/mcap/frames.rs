//! MCAP written a frame at a time (`Frames::create_frames`, from `.icarec`, Icarus HDF5
//! and an Elodin DB of one time grid).
//!
//! The file is the one the record path writes for the frame source's records (its
//! contract, in `formats::frames`: the static signals at the first frame's time and frame
//! 0, then each frame's signals in layout order at frame `i`; of a loose layout, the DB's,
//! no frame value and a scalar as an array of shape `[]`), byte for byte, and so is the
//! report. A topic whose fields the frame's signals give one each (an Icarus
//! component's) has its message made straight from the block ([`FrameMessage`]), planned
//! at [`McapFrames::create`], and written when its record path would: at its first
//! signal of the next frame, or at the end. A signal that may draw (a position, an
//! attitude) refills a record kept for it to give the scene; any other topic's signals
//! go through the record writer ([`Messages::write_record`]) as refilled records (docs/
//! performance.md, "MCAP from frames without records").

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::frame_message::FrameMessage;
use super::layout::{Encoding, FieldOf, Ready};
use super::writer::{McapWriteOptions, Messages};
use crate::formats::frames::{Frame, FrameLayout, FrameSignal, FrameSink};
use crate::formats::output::Outputs;
use crate::formats::{Failure, WriteError, WriteReport};
use crate::model::{DType, Header, Record, Value};

/// A signal's record, refilled when it is drawn or written as a record.
struct Slot {
    record: Record,
    signal: FrameSignal,
}

/// How a signal's value is written.
enum Via {
    /// The first signal of a planned topic (an index into [`McapFrames::topics`]): the
    /// topic's message of the frame before is written, and this frame's made.
    Starts(usize),
    /// Another signal of a planned topic: in the message its first signal made.
    Joins,
    /// As a record, through the record writer.
    Record,
}

struct Step {
    slot: Slot,
    via: Via,
    /// Whether its record may draw in the 3D scene (of a planned topic's signal).
    draws: bool,
}

/// A planned topic, and its message of the last instant while it waits to be written.
struct Held {
    message: FrameMessage,
    time: Option<i64>,
    data: Vec<u8>,
}

pub struct McapFrames {
    messages: Messages,
    target: PathBuf,
    statics: Vec<Step>,
    dynamics: Vec<Step>,
    topics: Vec<Held>,
    static_block: Vec<u8>,
    /// Frames written.
    frames: i64,
    /// Whether the records are a loose layout's ([`FrameLayout::loose`]).
    loose: bool,
}

/// The records of `signals`, each with its channel's one field; `None` when a signal's
/// channel is not one of `header`'s with one field, or its value is not packed (a string).
fn slots(header: &Header, signals: &[FrameSignal]) -> Option<Vec<Slot>> {
    signals
        .iter()
        .map(|s| {
            let field = s.field(header)?;
            if s.packed.dtype == DType::Str {
                return None;
            }
            let mut record = Record::new(0, s.channel);
            record.entity = s.entity.clone();
            record.values = vec![(field.name.clone(), Value::Null)];
            Some(Slot {
                record,
                signal: s.clone(),
            })
        })
        .collect()
}

impl McapFrames {
    /// `None` (and nothing created) for the JSON layout, whose records are formatted on
    /// other threads, or a layout [`slots`] refuses.
    pub fn create(
        target: &Path,
        header: &Header,
        layout: &FrameLayout,
        outputs: &mut Outputs,
        options: McapWriteOptions,
    ) -> Option<Result<McapFrames, WriteError>> {
        if options.encoding != Encoding::Protobuf {
            return None;
        }
        let statics = slots(header, &layout.statics)?;
        let dynamics = slots(header, &layout.dynamics)?;
        let writer = (|| {
            let out = outputs.create_seekable(target)?;
            let mut messages = Messages::create(out, target, header, options)?;
            let (statics, dynamics, topics) = plan(&mut messages, statics, dynamics);
            Ok(McapFrames {
                messages,
                target: target.to_path_buf(),
                statics,
                dynamics,
                topics,
                static_block: layout.static_block.clone(),
                frames: 0,
                loose: layout.loose,
            })
        })();
        Some(writer)
    }
}

/// The steps of the static and the dynamic signals, and the planned topics. The layout's
/// routes and topics are made here in the order the record path makes them (statics,
/// then dynamics, in layout order).
fn plan(
    messages: &mut Messages,
    statics: Vec<Slot>,
    dynamics: Vec<Slot>,
) -> (Vec<Step>, Vec<Step>, Vec<Held>) {
    let slots: Vec<(bool, Slot)> = (statics.into_iter().map(|s| (true, s)))
        .chain(dynamics.into_iter().map(|s| (false, s)))
        .collect();
    let placed: Vec<_> = slots
        .iter()
        .map(|(_, s)| messages.place(&s.record))
        .collect();
    // Each topic's signals (indices into `slots`), with where their values go when every
    // one has a field.
    let mut by_topic: BTreeMap<usize, Option<Vec<(usize, FieldOf)>>> = BTreeMap::new();
    for (i, p) in placed.iter().enumerate() {
        let Some(p) = p else { continue };
        let signals = by_topic.entry(p.topic).or_insert_with(|| Some(Vec::new()));
        match (signals.as_mut(), p.field) {
            (Some(signals), Some(field)) => signals.push((i, field)),
            _ => *signals = None,
        }
    }
    let mut via: Vec<Via> = slots.iter().map(|_| Via::Record).collect();
    let mut topics = Vec::new();
    for (topic, signals) in by_topic {
        let Some(signals) = signals else { continue };
        let one_block = signals
            .iter()
            .all(|(i, _)| slots[*i].0 == slots[signals[0].0].0);
        let frame_message = messages
            .message_type(topic)
            .filter(|_| one_block)
            .and_then(|m| {
                let given: Vec<_> = signals
                    .iter()
                    .map(|(i, f)| (&slots[*i].1.signal, *f))
                    .collect();
                FrameMessage::plan(topic, m, &given)
            });
        let Some(message) = frame_message else {
            continue;
        };
        for (n, (i, _)) in signals.iter().enumerate() {
            via[*i] = if n == 0 {
                Via::Starts(topics.len())
            } else {
                Via::Joins
            };
        }
        topics.push(Held {
            message,
            time: None,
            data: Vec::new(),
        });
    }
    let (mut statics, mut dynamics) = (Vec::new(), Vec::new());
    for ((is_static, slot), via) in slots.into_iter().zip(via) {
        let draws = messages.draws(&slot.record);
        let step = Step { slot, via, draws };
        if is_static {
            statics.push(step);
        } else {
            dynamics.push(step);
        }
    }
    (statics, dynamics, topics)
}

impl Held {
    /// Writes the message held, and makes the one of `frame` (numbered `number`).
    fn start(
        &mut self,
        messages: &mut Messages,
        target: &Path,
        frame: &Frame<'_>,
        number: Option<i64>,
        block: &[u8],
    ) -> Result<(), WriteError> {
        if let Some(time) = self.time.take() {
            messages.write_message(self.message.topic, time, &self.data)?;
        }
        self.message
            .encode(&mut self.data, frame.time, number, block)
            .map_err(|e| WriteError::failed(target, Failure::Encoder(e.into())))?;
        self.time = Some(frame.time);
        Ok(())
    }
}

/// `slot`'s record with its value from `block`, at `frame`'s time, as frame `number`
/// (`None`: a loose layout's record).
fn refill<'s>(
    slot: &'s mut Slot,
    frame: &Frame<'_>,
    number: Option<i64>,
    block: &[u8],
) -> &'s Record {
    let record = &mut slot.record;
    record.time = frame.time;
    record.frame = number;
    record.exact_seconds = frame.exact_seconds;
    let (packed, at) = (&slot.signal.packed, slot.signal.offset);
    let Some((_, old)) = record.values.first_mut() else {
        return record;
    };
    // An array is refilled in the buffer it has: no allocation per frame for a signal
    // that draws.
    if let Value::Array(a) = old {
        if a.shape == packed.shape && packed.fill(block, at, &mut a.data) {
            return record;
        }
    }
    let value = match number {
        Some(_) => packed.value(block, at),
        None => packed.loose_value(block, at),
    };
    if let Some(v) = value {
        *old = v;
    }
    record
}

impl McapFrames {
    /// Writes the values of `steps`' signals from `block`, at `frame`'s time, as frame
    /// `number` (of a loose layout, as records without a frame value).
    fn write(
        &mut self,
        statics: bool,
        frame: &Frame<'_>,
        number: i64,
        block: &[u8],
    ) -> Result<(), WriteError> {
        let McapFrames {
            messages,
            target,
            topics,
            statics: static_steps,
            dynamics,
            loose,
            ..
        } = self;
        let number = (!*loose).then_some(number);
        let steps = if statics { static_steps } else { dynamics };
        let mut made = 0;
        for step in steps.iter_mut() {
            match step.via {
                Via::Starts(h) => topics[h].start(messages, target, frame, number, block)?,
                Via::Joins => {}
                Via::Record => {
                    messages.write_record(refill(&mut step.slot, frame, number, block))?;
                    continue;
                }
            }
            made += 1;
            if step.draws {
                messages.draw_record(refill(&mut step.slot, frame, number, block))?;
            }
        }
        if !steps.is_empty() {
            messages.count(made, frame.time);
        }
        Ok(())
    }
}

impl FrameSink for McapFrames {
    fn write_frame(&mut self, frame: &Frame<'_>) -> Result<(), WriteError> {
        if self.frames == 0 {
            let block = std::mem::take(&mut self.static_block);
            self.write(true, frame, 0, &block)?;
        }
        self.write(false, frame, self.frames, frame.values)?;
        self.frames += 1;
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<WriteReport, WriteError> {
        let held = self.topics.into_iter().filter_map(|h| {
            let time = h.time?;
            Some(Ready {
                topic: h.message.topic,
                time,
                data: h.data,
            })
        });
        self.messages.finish(held.collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::export::mcap::writer::McapWriter;
    use crate::formats::frames::Packed;
    use crate::formats::Sink;
    use crate::model::QUATERNION_WXYZ;
    use crate::model::{Channel, ChannelKind, Composition, Entity, FieldSpec};

    /// A signal channel `name` (component, then field) of `spec`, packed as `dtype`
    /// at `offset`, of entity `entity`.
    fn signal(
        header: &mut Header,
        name: &str,
        spec: FieldSpec,
        dtype: DType,
        offset: usize,
        entity: Option<Entity>,
    ) -> FrameSignal {
        let mut channel = Channel::new(name, ChannelKind::Signals, Composition::Independent);
        let shape = spec.shape.clone().unwrap_or_default();
        channel.fields.push(spec);
        channel.declares_all = true;
        FrameSignal {
            channel: header.add_channel(channel),
            entity,
            packed: Packed {
                dtype,
                shape,
                column_major: false,
            },
            offset,
        }
    }

    fn named(n: &str) -> Option<Entity> {
        Some(Entity::Name(n.into()))
    }

    /// Planned topics (a component with a pose that draws, its statics, a flat channel)
    /// beside ones the record path writes (a value not of its field's type, a topic of
    /// entities): the file of the frames is the file of their records.
    #[test]
    fn planned_and_recorded_topics_write_the_record_paths_file() {
        let mut header = Header::new("icarus", "1");
        let mut q = FieldSpec::typed("q", DType::F64, &[4]);
        q.semantic = Some(QUATERNION_WXYZ.into());
        let mut len = FieldSpec::typed("len", DType::F64, &[]);
        len.is_static = true;
        let statics = vec![signal(
            &mut header,
            "Body.len",
            len,
            DType::F64,
            0,
            named("Body"),
        )];
        let f64s = |n: &str, shape: &[usize]| FieldSpec::typed(n, DType::F64, shape);
        let dynamics = vec![
            signal(
                &mut header,
                "Body.position",
                f64s("position", &[3]),
                DType::F64,
                0,
                named("Body"),
            ),
            signal(&mut header, "Body.q", q, DType::F64, 24, named("Body")),
            signal(
                &mut header,
                "Body.mass",
                f64s("mass", &[]),
                DType::F64,
                56,
                named("Body"),
            ),
            // Declared float64, packed float32: the record path's to write.
            signal(
                &mut header,
                "Odd.a",
                f64s("a", &[]),
                DType::F32,
                64,
                named("Odd"),
            ),
            signal(
                &mut header,
                "Odd.b",
                f64s("b", &[]),
                DType::F64,
                68,
                named("Odd"),
            ),
            signal(
                &mut header,
                "flat",
                FieldSpec::typed("flat", DType::I32, &[]),
                DType::I32,
                76,
                None,
            ),
            signal(
                &mut header,
                "ent.v",
                FieldSpec::typed("v", DType::U8, &[]),
                DType::U8,
                80,
                Some(Entity::Id(3)),
            ),
        ];
        let layout = FrameLayout {
            statics,
            dynamics,
            static_block: 2.5f64.to_le_bytes().to_vec(),
            loose: false,
        };
        let blocks: Vec<Vec<u8>> = (0..3)
            .map(|i| {
                let x = f64::from(i);
                let mut b = Vec::new();
                for v in [x, 1.0, 2.0, 1.0, 0.0, 0.0, 0.0, 7.5 + x] {
                    b.extend_from_slice(&v.to_le_bytes());
                }
                b.extend_from_slice(&(0.25f32 * x as f32).to_le_bytes());
                b.extend_from_slice(&(x - 1.0).to_le_bytes());
                b.extend_from_slice(&(-3i32 * i).to_le_bytes());
                b.push(i as u8);
                b
            })
            .collect();
        let time = |i: usize| 1_000 * i as i64 + 5;
        let dir = tempfile::tempdir().unwrap();
        let (by_frames, by_records) = (dir.path().join("f.mcap"), dir.path().join("r.mcap"));
        let options = McapWriteOptions::default();

        let mut outputs = Outputs::new(true);
        let mut sink = McapFrames::create(&by_frames, &header, &layout, &mut outputs, options)
            .unwrap()
            .unwrap();
        assert_eq!(
            sink.topics.len(),
            3,
            "Body, Body/static and flat are planned"
        );
        for (i, block) in blocks.iter().enumerate() {
            let frame = Frame {
                time: time(i),
                exact_seconds: None,
                values: block,
            };
            sink.write_frame(&frame).unwrap();
        }
        let frames_report = Box::new(sink).finish().unwrap();
        outputs.commit().unwrap();

        let mut outputs = Outputs::new(true);
        let out = outputs.create_seekable(&by_records).unwrap();
        let mut writer = McapWriter::create(out, &by_records, &header, options).unwrap();
        let mut write = |s: &FrameSignal, t: i64, frame: i64, block: &[u8]| {
            let mut r = Record::new(t, s.channel);
            r.frame = Some(frame);
            r.entity = s.entity.clone();
            let name = header.channels[s.channel as usize].fields[0].name.clone();
            r.values = vec![(name, s.packed.value(block, s.offset).unwrap())];
            writer.write(&r).unwrap();
        };
        for s in &layout.statics {
            write(s, time(0), 0, &layout.static_block);
        }
        for (i, block) in blocks.iter().enumerate() {
            for s in &layout.dynamics {
                write(s, time(i), i as i64, block);
            }
        }
        let records_report = Box::new(writer).finish().unwrap();
        outputs.commit().unwrap();

        assert_eq!(frames_report.records, records_report.records);
        let (a, b) = (
            std::fs::read(&by_frames).unwrap(),
            std::fs::read(&by_records).unwrap(),
        );
        assert!(a == b, "the two files differ");
        let tf = b"/tf";
        assert!(a.windows(tf.len()).any(|w| w == tf), "the pose is drawn");
    }
}
