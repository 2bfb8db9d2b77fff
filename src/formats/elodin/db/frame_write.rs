//! The DB writer taking whole frames (`Frames::create_frames`): a signal whose packing is
//! its component's (same type and size, row-major, no bool) has its bytes appended to the
//! component's data and the frame's time to its index, with no value or record built; any
//! other signal, and every signal of the first frame (which makes the components in the
//! record path's order), goes through the record writer as the record read gives it. The
//! same bytes and report as the record path (`Sink::write`), which takes the records in
//! time order (`pipeline::ordered`): a frame earlier than the one before is not taken.

use std::path::Path;

use super::writer::DbWriter;
use crate::formats::frames::{Frame, FrameLayout, FrameSignal, FrameSink};
use crate::formats::output::Outputs;
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::{DType, Header, Nanos, Record};

pub struct DbFrameWriter {
    writer: DbWriter,
    statics: Vec<Signal>,
    dynamics: Vec<Signal>,
    static_block: Vec<u8>,
    /// Dynamic signals whose rows are copied as packed.
    copied: u64,
    started: bool,
    /// The time of the frame before.
    last: Nanos,
}

struct Signal {
    signal: FrameSignal,
    /// Its channel's field name, the key of its records' one value.
    key: String,
    /// The component its packed bytes go to as they are, and how many bytes they are.
    copy: Option<(usize, usize)>,
}

impl DbFrameWriter {
    /// `None` (nothing created) for a signal that is no numeric value of a one-field
    /// channel.
    pub fn create(
        target: &Path,
        header: &Header,
        layout: &FrameLayout,
        outputs: &mut Outputs,
    ) -> Option<Result<DbFrameWriter, WriteError>> {
        let signal = |s: &FrameSignal| {
            (s.packed.dtype != DType::Str).then_some(())?;
            Some(Signal {
                key: s.field(header)?.name.clone(),
                signal: s.clone(),
                copy: None,
            })
        };
        let statics: Option<Vec<_>> = layout.statics.iter().map(signal).collect();
        let dynamics: Option<Vec<_>> = layout.dynamics.iter().map(signal).collect();
        let (statics, dynamics) = (statics?, dynamics?);
        Some(
            DbWriter::create(target, header, outputs).map(|writer| DbFrameWriter {
                writer,
                statics,
                dynamics,
                static_block: layout.static_block.clone(),
                copied: 0,
                started: false,
                last: Nanos::MIN,
            }),
        )
    }

    /// The first frame, and the static signals at its time, as records; then which
    /// signals' rows are copied.
    fn start(&mut self, frame: &Frame<'_>) -> Result<(), WriteError> {
        for s in &self.statics {
            write_record(&mut self.writer, s, frame, &self.static_block)?;
        }
        for s in &self.dynamics {
            write_record(&mut self.writer, s, frame, frame.values)?;
        }
        for s in &mut self.dynamics {
            let packed = &s.signal.packed;
            // A matrix stored column by column makes a row-major row only element by element.
            if packed.column_major && packed.shape.len() == 2 {
                continue;
            }
            let Some(value) = packed.value(frame.values, s.signal.offset) else {
                continue;
            };
            let ch = s.signal.channel as usize;
            let found = self.writer.packed_component(
                ch,
                &s.signal.entity,
                &s.key,
                &value,
                (packed.dtype, packed.count()),
            )?;
            s.copy = found.map(|c| (c, packed.count() * packed.element_size()));
        }
        self.copied = self.dynamics.iter().filter(|s| s.copy.is_some()).count() as u64;
        self.started = true;
        Ok(())
    }
}

/// Signal `s`'s value in `block` written as the record the record read gives.
fn write_record(
    writer: &mut DbWriter,
    s: &Signal,
    frame: &Frame<'_>,
    block: &[u8],
) -> Result<(), WriteError> {
    let mut record = Record::new(frame.time, s.signal.channel);
    record.entity.clone_from(&s.signal.entity);
    record.exact_seconds = frame.exact_seconds;
    if let Some(value) = s.signal.packed.value(block, s.signal.offset) {
        record.values.push((s.key.clone(), value));
    }
    writer.write(&record)
}

/// Signal `s`'s row from a block shorter than its layout (a source checks its sizes, so
/// never met): the elements past the block's end are zeros, as [`Packed::value`] reads them.
///
/// [`Packed::value`]: crate::formats::frames::Packed::value
fn padded(s: &Signal, block: &[u8]) -> Vec<u8> {
    let size = s.signal.packed.element_size();
    let mut row = vec![0; s.signal.packed.count() * size];
    for (i, element) in row.chunks_exact_mut(size).enumerate() {
        let at = s.signal.offset.saturating_add(i * size);
        if let Some(bytes) = block.get(at..at.saturating_add(size)) {
            element.copy_from_slice(bytes);
        }
    }
    row
}

impl FrameSink for DbFrameWriter {
    /// Not a frame earlier than the one before (a lenient read of a damaged Icarus
    /// recording): the record path puts its records in order among those before it
    /// (`pipeline::ordered`), which rows already written cannot follow.
    fn takes(&self, frame: &Frame<'_>) -> bool {
        frame.time >= self.last
    }

    fn write_frame(&mut self, frame: &Frame<'_>) -> Result<(), WriteError> {
        self.last = frame.time;
        if !self.started {
            return self.start(frame);
        }
        let us = self.writer.stamp(frame.time, self.copied);
        for s in &self.dynamics {
            let Some((c, size)) = s.copy else {
                write_record(&mut self.writer, s, frame, frame.values)?;
                continue;
            };
            let at = s.signal.offset;
            match frame.values.get(at..at.saturating_add(size)) {
                Some(row) => self.writer.write_bytes(c, us, row)?,
                None => self.writer.write_bytes(c, us, &padded(s, frame.values))?,
            }
        }
        self.writer.spill()
    }

    fn finish(self: Box<Self>) -> Result<WriteReport, WriteError> {
        Box::new(self.writer).finish()
    }
}
