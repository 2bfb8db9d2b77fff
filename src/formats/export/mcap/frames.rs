//! MCAP written a frame at a time (`Frames::create_frames`, from `.icarec` and Icarus HDF5):
//! each frame's values are taken from its block into one record per signal that is kept
//! and refilled, not built and freed anew for every value (docs/performance.md, "MCAP,
//! protobuf").
//!
//! The records are those the frame source's record read gives (its contract, in
//! `formats::frames`): the static signals at the first frame's time and frame 0, then each
//! frame's signals in layout order at frame `i`. They go through the record writer's own
//! layout and scene ([`Messages::write_record`]), so the file is the one the record path
//! writes, byte for byte, and so is the report.

use std::path::Path;

use super::layout::Encoding;
use super::writer::{McapWriteOptions, Messages};
use crate::formats::frames::{Frame, FrameLayout, FrameSignal, FrameSink};
use crate::formats::output::Outputs;
use crate::formats::{WriteError, WriteReport};
use crate::model::{DType, Header, Record, Value};

/// A signal's record, refilled each frame.
struct Slot {
    record: Record,
    signal: FrameSignal,
}

pub struct McapFrames {
    messages: Messages,
    statics: Vec<Slot>,
    dynamics: Vec<Slot>,
    static_block: Vec<u8>,
    /// Frames written.
    frames: i64,
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
            Ok(McapFrames {
                messages: Messages::create(out, target, header, options)?,
                statics,
                dynamics,
                static_block: layout.static_block.clone(),
                frames: 0,
            })
        })();
        Some(writer)
    }
}

/// Writes each of `slots`' records with its value from `block`, at `frame`'s time.
fn write(
    messages: &mut Messages,
    slots: &mut [Slot],
    frame: &Frame<'_>,
    number: i64,
    block: &[u8],
) -> Result<(), WriteError> {
    for slot in slots {
        let record = &mut slot.record;
        record.time = frame.time;
        record.frame = Some(number);
        record.exact_seconds = frame.exact_seconds;
        let value = slot.signal.packed.value(block, slot.signal.offset);
        if let (Some(v), Some((_, old))) = (value, record.values.first_mut()) {
            *old = v;
        }
        messages.write_record(record)?;
    }
    Ok(())
}

impl FrameSink for McapFrames {
    fn write_frame(&mut self, frame: &Frame<'_>) -> Result<(), WriteError> {
        if self.frames == 0 {
            let block = std::mem::take(&mut self.static_block);
            write(&mut self.messages, &mut self.statics, frame, 0, &block)?;
        }
        let n = self.frames;
        write(
            &mut self.messages,
            &mut self.dynamics,
            frame,
            n,
            frame.values,
        )?;
        self.frames += 1;
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<WriteReport, WriteError> {
        self.messages.finish()
    }
}
