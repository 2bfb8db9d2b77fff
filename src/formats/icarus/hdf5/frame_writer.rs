//! The Vulcan layout written a frame at a time (`Frames::create_frames`): the record
//! writer's file, datasets and report, with each frame's values taken straight from its
//! block into the columns instead of one record per signal.
//!
//! What it writes is what `IcarusH5Writer` writes for the same recording read as records: the
//! header plans the same datasets; every signal has a value from the first frame on (static
//! ones from the static block, held); frames of one model time are one row (the record
//! writer assembles a frame of every record with one time, the later values winning); the
//! records, widenings and loss counted are those of the record read.

use std::path::Path;

use super::reader::WINDOW;
use super::writer::{plan, IcarusH5Writer, Store};
use crate::formats::frames::{Frame, FrameLayout, FrameSignal, FrameSink};
use crate::formats::icarus::common::{element_f64, element_i64, Element, SignalType};
use crate::formats::output::Outputs;
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::time::seconds_of;
use crate::model::{Header, Nanos};

/// Rows buffered per dataset before they are appended: several chunks per `append`, since
/// hdf5-pure's cost is per call (about ten small metadata reads and writes each), not per
/// byte. 8 chunks of 200 doubles is 12.8 MB.
const APPEND_ROWS: usize = 8 * WINDOW as usize;

/// A signal of the layout and the columns it is written to.
#[derive(Debug, Clone, Copy)]
struct Bound {
    offset: usize,
    ty: SignalType,
    /// Its first column; a composite's components follow in storage order.
    first: usize,
    /// Its channel and field in the writer's bindings (for the widening count).
    channel: usize,
}

/// Every signal of `layout` bound to its columns, when they cover the plan `header` makes
/// exactly: every channel one field of the signal's type, with its datasets. `None` when
/// a record read would count something a frame write cannot (a dropped field, a channel
/// without a signal, a signal of another type).
fn bind(header: &Header, layout: &FrameLayout) -> Option<(Vec<Bound>, Vec<Bound>)> {
    let plan = plan(header);
    let mut covered = vec![false; plan.channels.len()];
    let mut bind_all = |signals: &[FrameSignal]| -> Option<Vec<Bound>> {
        signals
            .iter()
            .map(|s| {
                let ci = s.channel as usize;
                let c = plan.channels.get(ci)?;
                let [f] = c.fields.as_slice() else {
                    return None;
                };
                let ty = SignalType::of_packed(&s.packed)?;
                if f.ty != ty || !c.dropped.is_empty() || std::mem::replace(&mut covered[ci], true)
                {
                    return None;
                }
                Some(Bound {
                    offset: s.offset,
                    ty,
                    first: f.first,
                    channel: ci,
                })
            })
            .collect()
    };
    let statics = bind_all(&layout.statics)?;
    let dynamics = bind_all(&layout.dynamics)?;
    covered.iter().all(|c| *c).then_some((statics, dynamics))
}

pub struct IcarusH5FrameWriter {
    inner: IcarusH5Writer,
    statics: Vec<Bound>,
    dynamics: Vec<Bound>,
    static_block: Vec<u8>,
    /// The model time of the last row written.
    last: Option<Nanos>,
    /// Frames taken (rows, and frames merged into a row).
    frames: u64,
}

impl IcarusH5FrameWriter {
    /// `None` (and nothing created) when `layout` does not cover `header`'s plan exactly.
    pub fn create(
        target: &Path,
        header: &Header,
        layout: &FrameLayout,
        outputs: &mut Outputs,
    ) -> Option<Result<IcarusH5FrameWriter, WriteError>> {
        let (statics, dynamics) = bind(header, layout)?;
        Some(
            IcarusH5Writer::create(target, header, outputs).map(|inner| IcarusH5FrameWriter {
                inner,
                statics,
                dynamics,
                static_block: layout.static_block.clone(),
                last: None,
                frames: 0,
            }),
        )
    }

    /// Appends a row for `frame`, or writes its values over the last row (`replace`: a frame
    /// of the same model time). Static values come from the static block in every row.
    fn put(&mut self, frame: &Frame<'_>, replace: bool) {
        let columns = &mut self.inner.columns;
        let blocks = [
            (&self.statics, self.static_block.as_slice()),
            (&self.dynamics, frame.values),
        ];
        for (signals, block) in blocks {
            for b in signals {
                for i in 0..b.ty.count() {
                    let Some(c) = columns.get_mut(b.first + i) else {
                        continue;
                    };
                    match c.store {
                        Store::F64 => {
                            put(&mut c.f64s, element_f64(block, b.offset, b.ty, i), replace)
                        }
                        Store::I32 => put(
                            &mut c.i32s,
                            element_i64(block, b.offset, b.ty, i) as i32,
                            replace,
                        ),
                        Store::I64 => {
                            put(&mut c.i64s, element_i64(block, b.offset, b.ty, i), replace)
                        }
                    }
                }
            }
        }
    }
}

/// Pushes `v`, or writes it over the last value.
fn put<T>(column: &mut Vec<T>, v: T, replace: bool) {
    match column.last_mut() {
        Some(last) if replace => *last = v,
        _ => column.push(v),
    }
}

impl FrameSink for IcarusH5FrameWriter {
    fn write_frame(&mut self, frame: &Frame<'_>) -> Result<(), WriteError> {
        self.frames += 1;
        if self.last == Some(frame.time) {
            self.put(frame, true);
            return Ok(());
        }
        if self.inner.times.len() >= APPEND_ROWS {
            self.inner.flush()?;
        }
        // As the record writer: the source's own f64 when it carries one that is this time.
        let seconds = seconds_of(frame.time, frame.exact_seconds);
        self.inner.times.push(seconds);
        self.put(frame, false);
        self.last = Some(frame.time);
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<WriteReport, WriteError> {
        // What the record read would have counted: a record per static signal (at the first
        // frame) and per dynamic signal and frame, each float or bool one widened.
        let frames = self.frames;
        let mut records = 0u64;
        let counts = [(&self.statics, frames.min(1)), (&self.dynamics, frames)];
        for (signals, n) in counts {
            for b in signals {
                records += n;
                if matches!(b.ty.element, Element::Float | Element::Bool) {
                    if let Some(f) = self.inner.plan.channels[b.channel].fields.first_mut() {
                        f.widened += n;
                    }
                }
            }
        }
        self.inner.records = records;
        Box::new(self.inner).finish()
    }
}
