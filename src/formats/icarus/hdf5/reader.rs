//! Reads an Icarus HDF5 file as records (spec §B4, model mapping §A10): one channel per
//! signal dataset, one record per frame for every signal, frames read `WINDOW` rows of every
//! dataset at a time, and each record written over a recycled one.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value as Json};

use super::bytes::Bytes;
use super::codes;
use super::column::{Elem, Values};
use super::layout::Layout;
use super::timeline::{at_frame, Timeline};
use crate::formats::frames::{FrameLayout, FrameSignal, Packed};
use crate::formats::icarus::common::{entity_and_field, frame_window, FrameWindow, FrameWindowed};
use crate::formats::{ReadError, ReadOptions, Source};
use crate::model::{
    Channel, ChannelKind, Composition, DType, Entity, FieldSpec, Header, Nanos, Record, TimeSpec,
    Value,
};
use crate::report::render::first_and_last;
use crate::report::{Fact, Finding, Findings, Severity};

/// Frames read per window: the chunk length Vulcan writes, so a window is one chunk of each
/// dataset.
pub const WINDOW: u64 = 1000;

/// Seconds to the model's integer nanoseconds: round(t × 10⁹), saturating.
pub fn nanos(t: f64) -> Nanos {
    (t * 1e9).round() as Nanos
}

pub struct IcarusH5Reader {
    path: PathBuf,
    layout: Layout,
    header: Header,
    options: ReadOptions,
    findings: Findings,
    /// The window in memory: its first frame and its times.
    window_start: u64,
    times: Values,
    values: Vec<Values>,
    scratch: Vec<u8>,
    /// The next record: frame `frame`, signal `signal`.
    frame: u64,
    signal: usize,
    /// Frames whose time was checked, and the model time of the last one.
    checked: u64,
    frame_ns: Nanos,
    /// Per signal: its entity and field name (spec §A10).
    entities: Vec<Option<Entity>>,
    fields: Vec<String>,
    /// Per signal: where the key of the last record handed out lives, so that a recycled
    /// record's key is known unchanged without comparing it (nothing edits a key in place).
    keys: Vec<usize>,
    /// A recycled record per channel, written over for its next record.
    spare: Vec<Option<Record>>,
    timeline: Timeline,
    /// Per signal (`--deep`): non-finite values and the first frame holding one.
    nonfinite: Vec<(u64, Option<u64>)>,
    /// Per signal: read and handed out (`Source::select_channels` may leave some out).
    wanted: Vec<bool>,
    /// The frames read end here: the file's frame count, or a slice's end.
    end: u64,
    /// Nanoseconds taken off every time (a rebased slice).
    shift: Nanos,
    done: bool,
}

impl IcarusH5Reader {
    pub fn open(path: &Path, options: ReadOptions) -> Result<IcarusH5Reader, ReadError> {
        let bytes = Bytes::open(path).map_err(|e| ReadError::from(e).in_file(path))?;
        IcarusH5Reader::from_bytes(path, bytes, options)
    }

    /// Reads `bytes` (a file, or memory for tests and the fuzzer); `path` names it.
    pub fn from_bytes(
        path: &Path,
        bytes: Bytes,
        options: ReadOptions,
    ) -> Result<IcarusH5Reader, ReadError> {
        let layout = Layout::open(bytes).map_err(|f| ReadError::invalid(f).in_file(path))?;
        if !options.lenient {
            if let Some(f) = layout
                .findings
                .iter()
                .find(|f| f.severity == Severity::Error)
            {
                return Err(ReadError::invalid(f.clone().hint(format!(
                    "`simrec validate {0}` lists every problem; `simrec recover {0} -o fixed.h5` keeps what can be read",
                    path.display()
                )))
                .in_file(path));
            }
        }
        let mut findings = Findings::default();
        findings.extend(layout.findings.iter().cloned());
        let header = header(&layout);
        let n = layout.signals.len();
        let (entities, fields) = layout
            .signals
            .iter()
            .map(|s| {
                let (entity, field) = entity_and_field(&s.name);
                (
                    entity.map(|e| Entity::Name(Arc::from(e))),
                    field.to_string(),
                )
            })
            .unzip();
        Ok(IcarusH5Reader {
            path: path.to_path_buf(),
            values: layout
                .signals
                .iter()
                .map(|s| Values::new(s.column.elem))
                .collect(),
            header,
            options,
            findings,
            window_start: 0,
            times: Values::F64(Vec::new()),
            scratch: Vec::new(),
            frame: 0,
            signal: 0,
            checked: 0,
            frame_ns: 0,
            entities,
            fields,
            keys: vec![0; n],
            spare: (0..n).map(|_| None).collect(),
            timeline: Timeline::default(),
            nonfinite: vec![(0, None); n],
            wanted: vec![true; n],
            end: layout.frames,
            shift: 0,
            done: false,
            layout,
        })
    }

    fn times(&self) -> &[f64] {
        match &self.times {
            Values::F64(v) => v,
            _ => &[],
        }
    }

    /// Loads the window holding frame `frame`: `/time`, and every signal when decoding.
    fn load_window(&mut self, frame: u64) -> Result<(), Finding> {
        let start = frame - frame % WINDOW;
        let count = WINDOW.min(self.layout.frames - start);
        let bytes = self.layout.bytes.clone();
        let storage = |what: &str, e: String| {
            let f = Finding::new(
                Severity::Error,
                codes::STORAGE,
                format!("{what}: cannot read rows {start}..{}: {e}", start + count),
            );
            at_frame(f, start)
        };
        if let Some(time) = &self.layout.time {
            time.read(&bytes, start, count, &mut self.times, &mut self.scratch)
                .map_err(|e| storage("/time", e))?;
        }
        if self.options.decode {
            for (i, s) in self.layout.signals.iter().enumerate() {
                if !self.wanted[i] {
                    continue;
                }
                s.column
                    .read(&bytes, start, count, &mut self.values[i], &mut self.scratch)
                    .map_err(|e| storage(&format!("/signals/{}", s.name), e))?;
            }
            if self.options.deep {
                self.count_nonfinite(start);
            }
        }
        self.window_start = start;
        Ok(())
    }

    fn count_nonfinite(&mut self, start: u64) {
        // A signal left out is not read: its values are empty.
        for (i, v) in self.values.iter().enumerate() {
            let first_bad = match v {
                Values::F64(v) => v.iter().position(|x| !x.is_finite()),
                Values::F32(v) => v.iter().position(|x| !x.is_finite()),
                _ => None,
            };
            if let Some(at) = first_bad {
                let bad = match v {
                    Values::F64(v) => v.iter().filter(|x| !x.is_finite()).count(),
                    Values::F32(v) => v.iter().filter(|x| !x.is_finite()).count(),
                    _ => 0,
                };
                let n = &mut self.nonfinite[i];
                n.0 += bad as u64;
                n.1.get_or_insert(start + at as u64);
            }
        }
    }

    /// Findings that need the whole file: non-finite values per signal (`--deep`).
    fn finish(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        for (i, (count, first)) in self.nonfinite.iter().enumerate() {
            let Some(first) = first else { continue };
            let t = self
                .frame_time(*first)
                .map_or(String::new(), |t| format!(" (t = {t} s)"));
            self.findings.push(at_frame(
                Finding::new(
                    Severity::Warning,
                    codes::NONFINITE,
                    format!(
                        "/signals/{} holds {count} NaN or infinite value(s), the first at frame {first}{t}",
                        self.layout.signals[i].name
                    ),
                ),
                *first,
            ));
        }
    }

    /// The time of a frame, when it is in the window in memory.
    fn frame_time(&self, frame: u64) -> Option<f64> {
        let i = frame.checked_sub(self.window_start)?;
        self.times().get(i as usize).copied()
    }

    /// Record of signal `s` in the current frame, over a recycled record when there is one.
    fn record(&mut self, s: usize, t: f64, ns: Nanos) -> Record {
        let mut r = self.spare[s]
            .take()
            .unwrap_or_else(|| Record::new(0, s as u32));
        r.time = ns;
        r.channel = s as u32;
        r.frame = Some(self.frame as i64);
        r.group = None;
        // A recycled record of this channel holds this very entity: no string compared.
        let same = match (&r.entity, &self.entities[s]) {
            (Some(Entity::Name(a)), Some(Entity::Name(b))) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            r.entity = self.entities[s].clone();
        }
        // A rebased record's time is no longer the one the file stores.
        r.exact_seconds = (self.shift == 0).then_some(t);
        if !self.options.decode {
            r.values.clear();
            return r;
        }
        let i = (self.frame - self.window_start) as usize;
        let value = match &self.values[s] {
            Values::F64(v) => Value::Float(v[i]),
            Values::F32(v) => Value::F32(v[i]),
            Values::I32(v) => Value::Int(i64::from(v[i])),
            Values::I64(v) => Value::Int(v[i]),
        };
        match r.values.as_mut_slice() {
            // The key this reader gave the record, unchanged (its allocation is known).
            [(key, v)]
                if key.as_ptr() as usize == self.keys[s] && key.len() == self.fields[s].len() =>
            {
                *v = value;
            }
            [(key, v)] => {
                if *key != self.fields[s] {
                    key.clone_from(&self.fields[s]);
                }
                self.keys[s] = key.as_ptr() as usize;
                *v = value;
            }
            _ => {
                r.values.clear();
                let key = self.fields[s].clone();
                self.keys[s] = key.as_ptr() as usize;
                r.values.push((key, value));
            }
        }
        r
    }

    /// The time of frame `i` as model nanoseconds (0 for a time that is not finite): one
    /// value of `/time` read.
    fn frame_ns(&mut self, i: u64) -> Result<Nanos, ReadError> {
        let Some(time) = &self.layout.time else {
            return Ok(0);
        };
        let mut one = Values::F64(Vec::new());
        time.read(&self.layout.bytes, i, 1, &mut one, &mut self.scratch)
            .map_err(|e| {
                let f = Finding::new(
                    Severity::Error,
                    codes::STORAGE,
                    format!("/time: cannot read row {i}: {e}"),
                );
                ReadError::invalid(at_frame(f, i)).in_file(&self.path)
            })?;
        let t = match &one {
            Values::F64(v) => v.first().copied().unwrap_or(f64::NAN),
            _ => f64::NAN,
        };
        Ok(if t.is_finite() { nanos(t) } else { 0 })
    }

    /// Restricts reading to the frames of `[start, end)`, found by binary search on `/time`
    /// (spec §B4), rebased to start at 0 when `rebase`: only the windows of the slice are
    /// read, so the cost grows with the slice, not the file.
    pub fn slice(
        mut self,
        start: Option<TimeSpec>,
        end: Option<TimeSpec>,
        rebase: bool,
    ) -> Result<IcarusH5Reader, ReadError> {
        let w = self.frames_of(start, end)?;
        Ok(self.slice_frames(&w, rebase))
    }

    /// Starts frame `self.frame`: its window loaded and its time checked. `Err` ends the
    /// read (strict reading stops at the first error).
    fn start_frame(&mut self) -> Result<(f64, Nanos), ReadError> {
        let in_window = self.frame >= self.window_start
            && self.frame < self.window_start + self.times().len() as u64;
        if !in_window {
            if let Err(f) = self.load_window(self.frame) {
                self.findings.push(f.clone());
                return Err(ReadError::invalid(f).in_file(&self.path));
            }
        }
        let t = self.frame_time(self.frame).unwrap_or(f64::NAN);
        if self.checked == self.frame {
            self.checked += 1;
            self.frame_ns = nanos(t).saturating_sub(self.shift);
            if let Some(f) = self.timeline.observe(self.frame, t) {
                let stop = f.severity == Severity::Error && !self.options.lenient;
                self.findings.push(f.clone());
                if stop {
                    return Err(ReadError::invalid(f).in_file(&self.path));
                }
            }
        }
        Ok((t, self.frame_ns))
    }
}

impl IcarusH5Reader {
    /// The layout of a frame read ([`IcarusH5Frames`](super::frames::IcarusH5Frames)), when
    /// one gives what the record read gives: a whole recording with frames and signals,
    /// every signal read, nothing read yet. Every signal is dynamic (the file stores static
    /// ones in every frame too), packed one after the other. Without `decode` (inspect) the
    /// frames are read for their times and checks alone, `/time` only, as the record read
    /// then reads them: a frame lends no values.
    pub(super) fn frame_layout(&self) -> Option<FrameLayout> {
        let fresh = self.frame == 0 && self.checked == 0 && self.times().is_empty() && !self.done;
        let whole = self.end == self.layout.frames && self.shift == 0;
        let plain = !self.options.check_only;
        let framed = self.layout.frames > 0 && !self.layout.signals.is_empty();
        if !(fresh && whole && plain && framed && self.wanted.iter().all(|w| *w)) {
            return None;
        }
        let mut offset = 0;
        let mut dynamics = Vec::with_capacity(self.layout.signals.len());
        for (s, signal) in self.layout.signals.iter().enumerate() {
            let elem = signal.column.elem;
            dynamics.push(FrameSignal {
                channel: s as u32,
                entity: self.entities[s].clone(),
                packed: Packed {
                    dtype: elem_dtype(elem),
                    shape: Vec::new(),
                    column_major: false,
                },
                offset,
            });
            offset += elem.size() as usize;
        }
        Some(FrameLayout {
            statics: Vec::new(),
            dynamics,
            static_block: Vec::new(),
            loose: false,
        })
    }

    /// Reads the next frame for a frame read into `block` (every signal's value, packed as
    /// [`IcarusH5Reader::frame_layout`] says), with the checks the record read makes: its
    /// time as stored and as model time; `None` at the end.
    pub(super) fn next_frame(
        &mut self,
        block: &mut Vec<u8>,
    ) -> Result<Option<(f64, Nanos)>, ReadError> {
        if self.done || self.frame >= self.end {
            self.finish();
            return Ok(None);
        }
        let (t, ns) = match self.start_frame() {
            Ok(t) => t,
            Err(e) => {
                self.finish();
                self.frame = self.end;
                return if self.options.lenient {
                    Ok(None)
                } else {
                    Err(e)
                };
            }
        };
        let i = (self.frame - self.window_start) as usize;
        block.clear();
        // Without `decode` no value was read: the frame lends none.
        for v in self.values.iter().filter(|_| self.options.decode) {
            match v {
                Values::F64(v) => {
                    block.extend_from_slice(&v.get(i).copied().unwrap_or(0.0).to_le_bytes())
                }
                Values::F32(v) => {
                    block.extend_from_slice(&v.get(i).copied().unwrap_or(0.0).to_le_bytes())
                }
                Values::I32(v) => {
                    block.extend_from_slice(&v.get(i).copied().unwrap_or(0).to_le_bytes())
                }
                Values::I64(v) => {
                    block.extend_from_slice(&v.get(i).copied().unwrap_or(0).to_le_bytes())
                }
            }
        }
        self.frame += 1;
        Ok(Some((t, ns)))
    }
}

fn elem_dtype(elem: Elem) -> DType {
    match elem {
        Elem::F64 => DType::F64,
        Elem::F32 => DType::F32,
        Elem::I32 => DType::I32,
        Elem::I64 => DType::I64,
    }
}

fn header(layout: &Layout) -> Header {
    let mut h = Header::new(super::NAME, "vulcan");
    h.origin = layout.origin.clone();
    if let Some(c) = &layout.created_at {
        h.metadata.insert("created_at".into(), json!(c));
    }
    h.metadata
        .insert("schema".into(), json!(layout.schema.name()));
    for s in &layout.signals {
        let (_, field) = entity_and_field(&s.name);
        let dtype = elem_dtype(s.column.elem);
        let mut channel = Channel::new(&s.name, ChannelKind::Signals, Composition::SampleHold);
        channel.fields.push(FieldSpec {
            unit: s.unit.clone(),
            semantic: s.semantic.clone(),
            is_static: s.is_static,
            ..FieldSpec::typed(field, dtype, &[])
        });
        channel.declares_all = true;
        h.add_channel(channel);
    }
    h
}

impl Iterator for IcarusH5Reader {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.done || self.frame >= self.end {
                self.finish();
                return None;
            }
            let (t, ns) = match self.start_frame() {
                Ok(t) => t,
                Err(e) => {
                    self.finish();
                    self.frame = self.end;
                    // Lenient reading reports damage as findings and stops quietly.
                    return (!self.options.lenient).then_some(Err(e));
                }
            };
            let n = self.layout.signals.len();
            let Some(s) = (self.signal..n).find(|&s| self.wanted[s]) else {
                // No (wanted) signal left: the frame's time is checked, nothing more to hand out.
                self.signal = 0;
                self.frame += 1;
                continue;
            };
            let r = self.record(s, t, ns);
            // A check-only read gets one record per frame: every value was checked when the
            // window was read.
            self.signal = if self.options.check_only { n } else { s + 1 };
            if self.signal == n {
                self.signal = 0;
                self.frame += 1;
            }
            return Some(Ok(r));
        }
    }
}

impl Source for IcarusH5Reader {
    fn header(&self) -> &Header {
        &self.header
    }

    fn findings(&self) -> Vec<(&Path, &Findings)> {
        vec![(self.path.as_path(), &self.findings)]
    }

    fn progress(&self) -> (u64, u64) {
        let total = self.layout.bytes.size();
        let frames = self.end.max(1);
        (total.saturating_mul(self.frame.min(frames)) / frames, total)
    }

    fn facts(&self) -> Vec<Fact> {
        let l = &self.layout;
        let signals: Vec<Json> = l
            .signals
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "type": s.column.elem.name(),
                    "unit": s.unit,
                    "semantic": s.semantic,
                    "lifecycle": if s.is_static { "static" } else { "dynamic" },
                })
            })
            .collect();
        let lines: Vec<String> = l
            .signals
            .iter()
            .map(|s| {
                let mut line = format!("{} {}", s.name, s.column.elem.name());
                if let Some(u) = &s.unit {
                    line.push_str(&format!(" [{u}]"));
                }
                if let Some(m) = &s.semantic {
                    line.push_str(&format!(" ({m})"));
                }
                if s.is_static {
                    line.push_str(" static");
                }
                line
            })
            .collect();
        let steps = self.timeline.summary();
        let mut facts = vec![
            Fact::new(
                "signals",
                first_and_last(&lines, 8, "signals").join("\n"),
                Json::Array(signals),
            ),
            Fact::new("frames", l.frames.to_string(), json!(l.frames)),
            Fact::from_json("time_steps", steps),
            Fact::new(
                "created_at",
                l.created_at.clone().unwrap_or_else(|| "absent".into()),
                json!(l.created_at),
            ),
            Fact::new("schema", l.schema.name(), json!(l.schema.name())),
        ];
        if l.user_block > 0 {
            facts.push(Fact::new(
                "user_block",
                format!("{} bytes before the HDF5 superblock", l.user_block),
                json!(l.user_block),
            ));
        }
        facts
    }

    fn recycle(&mut self, record: Record) {
        if let Some(slot) = self.spare.get_mut(record.channel as usize) {
            if slot.is_none() {
                *slot = Some(record);
            }
        }
    }

    /// Datasets of signals the caller does not use are not read. Taken only before the
    /// first window is read (a slice's first frame may be any), and narrows what an earlier
    /// call selected.
    fn select_channels(&mut self, wanted: &[bool]) {
        if !self.times().is_empty() {
            return;
        }
        for (i, w) in self.wanted.iter_mut().enumerate() {
            *w &= wanted.get(i).copied().unwrap_or(true);
        }
    }
}

impl FrameWindowed for IcarusH5Reader {
    /// The frames of the window `[start, end)`, by binary search on `/time`.
    fn frames_of(
        &mut self,
        start: Option<TimeSpec>,
        end: Option<TimeSpec>,
    ) -> Result<FrameWindow, ReadError> {
        frame_window(self.layout.frames, start, end, |i| self.frame_ns(i))
    }

    /// [`IcarusH5Reader::slice`] of the window found.
    fn slice_frames(mut self, w: &FrameWindow, rebase: bool) -> Self {
        self.frame = w.first;
        self.checked = w.first;
        self.end = w.end;
        if rebase {
            self.shift = w.start_ns;
            self.header.origin = self.header.origin.shifted(w.start_ns);
        }
        self
    }
}
