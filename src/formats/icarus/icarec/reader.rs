//! Reading a recording (spec §A5, §A6, §A10, §A11): one channel per signal; per frame one
//! record per dynamic signal, and one record per static signal at the first frame's time.
//! Frames stream through one reused buffer; records handed back through `recycle` are
//! written over for the next frame, so reading allocates nothing per value.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Map, Value as Json};
use sha2::{Digest, Sha256};

use super::codec::{self, Quirks};
use super::codes::*;
use super::container::{Container, Dynamic, Form, Member, DYNAMIC_FILE, STATIC_FILE};
use super::metadata::{self, Observed};
use super::schema::{self, hex, Lifecycle, Schema};
use super::steps::Steps;
use super::{HEADER_KEY, RAW_FRAME, RAW_STATIC};
use crate::formats::digest::StreamDigest;
use crate::formats::frames::{Frame, FrameLayout, FrameSignal};
use crate::formats::icarus::common::{
    entity_and_field, frame_window, FrameWindow, FrameWindowed, Kind,
};
use crate::formats::input::Input;
use crate::formats::{ReadError, ReadOptions, Source};
use crate::model::{
    Channel, ChannelKind, Composition, Entity, FieldSpec, Header, RawBytes, Record, TimeSpec,
    Value, QUATERNION_WXYZ,
};
use crate::report::render::plural;
use crate::report::{Fact, Finding, Findings, Severity};

/// A readable signal as the reader emits it.
struct Slot {
    channel: u32,
    ty: crate::formats::icarus::common::SignalType,
    offset: usize,
    size: usize,
    entity: Option<Entity>,
    field: String,
}

/// Non-finite values of one component of one signal (`--deep`): how many, and the first.
struct NonFinite {
    signal: usize,
    element: usize,
    count: u64,
    time: f64,
    frame: u64,
    offset: u64,
}

/// Jumps above the threshold of one component of one signal (`--discontinuity`): how many,
/// and the first.
struct Jumps {
    signal: usize,
    element: usize,
    count: u64,
    frame: u64,
    offset: u64,
    /// The first jump: from `before` at `t_before` to `now` at `t`.
    t_before: f64,
    t: f64,
    before: f64,
    now: f64,
}

/// A tally per component of every signal (`--deep`'s non-finite values, `--discontinuity`'s
/// jumps), found by index: values checked in every frame must not search a list.
struct PerComponent<T> {
    /// Index of each signal's first component.
    base: Vec<usize>,
    components: usize,
    items: Vec<Option<T>>,
}

impl<T> PerComponent<T> {
    fn new(slots: &[Slot]) -> PerComponent<T> {
        let mut base = Vec::with_capacity(slots.len());
        let mut components = 0;
        for s in slots {
            base.push(components);
            components += s.ty.count();
        }
        PerComponent {
            base,
            components,
            items: Vec::new(),
        }
    }

    /// The tally of component `element` of signal `k` (`None` before its first).
    fn entry(&mut self, k: usize, element: usize) -> &mut Option<T> {
        if self.items.is_empty() {
            self.items.resize_with(self.components, || None);
        }
        &mut self.items[self.base[k] + element]
    }

    /// Every tally, in schema order.
    fn take(&mut self) -> impl Iterator<Item = T> {
        std::mem::take(&mut self.items).into_iter().flatten()
    }
}

/// Where the reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Nothing emitted yet.
    Start,
    /// Emitting the static records (index into the static slots), then frame 0.
    Statics(usize),
    /// Emitting the dynamic records of the loaded frame (index into the dynamic slots).
    Frame(usize),
    /// The end: the findings that need all of the data are being made.
    Finish,
    Done,
}

pub struct IcarecReader {
    path: PathBuf,
    header: Header,
    options: ReadOptions,
    findings: Findings,
    pub(super) schema: Schema,
    pub(super) form: Form,
    pub(super) members: Vec<Member>,
    pub(super) metadata: Option<Map<String, Json>>,
    slots: Vec<Slot>,
    statics: Vec<usize>,
    dynamics: Vec<usize>,
    static_block: Vec<u8>,
    dynamic: Option<Dynamic>,
    archive_offset: Option<u64>,
    pub(super) frame_size: u64,
    pub(super) frames: u64,
    tail: u64,
    /// The frames read: all of them, or a slice's `[first, end)`.
    first: u64,
    end: u64,
    /// Nanoseconds taken off every time (a rebased slice).
    shift: i64,
    /// Reading a slice: the checks that need every frame (counts, digests) are not made.
    sliced: bool,
    /// Bytes of the whole recording (archive, or the directory's parts), for progress.
    total_bytes: u64,
    phase: Phase,
    /// Index of the loaded frame, and its bytes.
    frame: u64,
    buf: Vec<u8>,
    time_ns: i64,
    t: f64,
    last_t: Option<f64>,
    pub(super) t_first: Option<f64>,
    pub(super) t_last: Option<f64>,
    pub(super) steps: Steps,
    hasher: Option<StreamDigest>,
    /// `check_only`: the dynamic slots whose every value is checked without a record of
    /// their own (those that can have quirks, or all with `deep`), and a value to decode
    /// them into.
    checked: Vec<usize>,
    scratch: Value,
    pub(super) dynamic_sha: Option<String>,
    non_finite: PerComponent<NonFinite>,
    /// `--discontinuity`: the time and bytes of the frame before the loaded one (when it was
    /// read), and the jumps found.
    previous: Option<f64>,
    previous_buf: Vec<u8>,
    jumps: PerComponent<Jumps>,
    spare: Vec<Option<Record>>,
    spare_raw: Vec<Vec<u8>>,
}

fn invalid(f: Finding) -> ReadError {
    ReadError::invalid(f)
}

/// The time of a frame as model nanoseconds (round(t × 10⁹), saturating).
pub fn nanos(t: f64) -> i64 {
    (t * 1e9).round() as i64
}

impl IcarecReader {
    /// Opens the directory form or the single-file form, whichever `path` is.
    pub fn open(path: &Path, options: ReadOptions) -> Result<IcarecReader, ReadError> {
        let io = |e: std::io::Error| ReadError::from(e).in_file(path);
        let container = if path.is_dir() {
            Container::directory(path).map_err(io)?
        } else {
            let mut input = Input::open(path).map_err(io)?;
            input.set_read_ahead(4096);
            let head_len = input.len().min(512) as usize;
            let head = input.bytes(0, head_len).map_err(io)?.to_vec();
            if !super::container::is_tar(&head) {
                return Err(invalid(Finding::new(
                    Severity::Error,
                    NOT_FOUND,
                    "neither a directory holding schema.json nor a ustar archive (no `ustar` at byte 257): not an .icarec recording",
                ))
                .in_file(path));
            }
            Container::tar(input, || Input::open(path)).map_err(io)?
        };
        IcarecReader::from_container(path, container, options).map_err(|e| e.in_file(path))
    }

    /// The directory form from its four parts in memory (`None`: the part is missing).
    pub fn from_parts(
        parts: [Option<Vec<u8>>; 4],
        options: ReadOptions,
    ) -> Result<IcarecReader, ReadError> {
        IcarecReader::from_container(Path::new("memory"), Container::from_parts(parts), options)
    }

    /// The single-file form from the archive's bytes in memory.
    pub fn from_tar_bytes(bytes: Vec<u8>, options: ReadOptions) -> Result<IcarecReader, ReadError> {
        if !super::container::is_tar(&bytes) {
            return Err(invalid(Finding::new(
                Severity::Error,
                NOT_FOUND,
                "not a ustar archive (no `ustar` at byte 257)",
            )));
        }
        let copy = bytes.clone();
        let container = Container::tar(Input::from_bytes(bytes), move || {
            Ok(Input::from_bytes(copy))
        })
        .map_err(ReadError::from)?;
        IcarecReader::from_container(Path::new("memory"), container, options)
    }

    fn from_container(
        path: &Path,
        mut c: Container,
        options: ReadOptions,
    ) -> Result<IcarecReader, ReadError> {
        let mut pending = Findings::default();
        pending.extend(std::mem::take(&mut c.findings));
        let Some(schema_bytes) = c.schema.take() else {
            let f = Finding::new(
                Severity::Error,
                MISSING_PART,
                format!(
                    "no schema.json in the {}: nothing can be read",
                    c.form.name()
                ),
            );
            return Err(invalid(f));
        };
        let (mut schema, schema_findings) = schema::parse(&schema_bytes).map_err(invalid)?;
        pending.append(schema_findings);

        let archive_offset = c.dynamic_archive_offset();
        if c.dynamic.is_none() {
            pending.push(Finding::new(
                Severity::Error,
                MISSING_PART,
                format!(
                    "no {DYNAMIC_FILE} in the {}: the recording has no frames",
                    c.form.name()
                ),
            ));
        }
        let static_block = take_static_block(&mut c, &schema, &mut pending);
        let metadata = take_metadata(&mut c, &mut pending);

        let (mut header, layout) = channels(&schema, static_block.len() as u64);
        let Layout {
            slots,
            statics,
            dynamics,
        } = layout;
        header_metadata(&mut header, &mut schema, &schema_bytes, metadata.as_ref());

        let frame_size = 8u64.saturating_add(schema.dynamic_block);
        let dyn_len = c.dynamic.as_ref().map_or(0, |d| d.len);
        let (frames, tail) = (dyn_len / frame_size, dyn_len % frame_size);
        if let Some(d) = &mut c.dynamic {
            // Whole frames are read a window at a time; a header-only walk skips most bytes.
            d.input
                .set_read_ahead(if options.decode { 1 << 20 } else { 64 << 10 });
        }

        let strict_error = pending
            .list()
            .iter()
            .find(|f| f.severity == Severity::Error && !options.lenient)
            .cloned();
        let findings = pending;
        if let Some(f) = strict_error {
            return Err(invalid(f));
        }
        let spare = (0..header.channels.len()).map(|_| None).collect();
        let total_bytes = match c.form {
            Form::Tar => c.dynamic.as_ref().map_or(0, |d| d.input.len()),
            Form::Directory => c.members.iter().map(|m| m.size).sum(),
        }
        .max(dyn_len);
        let (non_finite, jumps) = (PerComponent::new(&slots), PerComponent::new(&slots));
        Ok(IcarecReader {
            path: path.to_path_buf(),
            header,
            options,
            findings,
            schema,
            form: c.form,
            members: c.members,
            metadata,
            slots,
            statics,
            dynamics,
            static_block,
            dynamic: c.dynamic,
            archive_offset,
            frame_size,
            frames,
            tail,
            first: 0,
            end: frames,
            shift: 0,
            sliced: false,
            total_bytes,
            phase: Phase::Start,
            frame: 0,
            buf: Vec::new(),
            time_ns: 0,
            t: 0.0,
            last_t: None,
            t_first: None,
            t_last: None,
            steps: Steps::default(),
            hasher: options.decode.then(|| StreamDigest::for_len(dyn_len)),
            checked: Vec::new(),
            scratch: Value::Null,
            dynamic_sha: None,
            non_finite,
            previous: None,
            previous_buf: Vec::new(),
            jumps,
            spare,
            spare_raw: Vec::new(),
        })
    }

    /// `dynamic_signals.bin, frame 3 at byte 120 (archive byte 1656)`: where a frame is.
    fn place(&self, frame: u64, offset: u64) -> String {
        match self.archive_offset {
            Some(base) => format!(
                "{DYNAMIC_FILE} frame {frame} at byte {offset} (archive byte {})",
                base + offset
            ),
            None => format!("{DYNAMIC_FILE} frame {frame} at byte {offset}"),
        }
    }

    /// Records a finding; an error stops a strict read.
    fn report(&mut self, f: Finding) -> Result<(), ReadError> {
        let stop = f.severity == Severity::Error && !self.options.lenient;
        if stop {
            self.phase = Phase::Done;
            return Err(invalid(f).in_file(&self.path));
        }
        self.findings.push(f);
        Ok(())
    }

    /// Loads frame `i` into the buffer and checks its time.
    fn load(&mut self, i: u64) -> Result<(), ReadError> {
        let offset = i * self.frame_size;
        let Some(d) = &mut self.dynamic else {
            return Ok(());
        };
        let bytes = d
            .input
            .bytes(d.start + offset, self.frame_size as usize)
            .map_err(|e| ReadError::from(e).in_file(&self.path))?;
        if self.options.deep && self.options.discontinuity.is_some() {
            // The frame before this one, when it was the one loaded.
            self.previous = (!self.buf.is_empty() && self.frame + 1 == i).then_some(self.t);
            std::mem::swap(&mut self.buf, &mut self.previous_buf);
        }
        self.buf.clear();
        self.buf.extend_from_slice(bytes);
        if let Some(h) = &mut self.hasher {
            h.update(&self.buf);
        }
        self.frame = i;
        let t = f64::from_le_bytes(self.buf[..8].try_into().unwrap_or([0; 8]));
        self.t = t;
        let at = |code, severity, why: String| {
            Finding::new(severity, code, format!("{}: {why}", self.place(i, offset))).at(offset, i)
        };
        if !t.is_finite() {
            let f = at(
                TIME_NONFINITE,
                Severity::Error,
                format!("the time is {t}; its records keep the previous frame's time"),
            );
            self.report(f)?;
            return Ok(());
        }
        if let Some(last) = self.last_t {
            if t < last {
                let f = at(
                    TIME_DECREASE,
                    Severity::Error,
                    format!("the time {t:?} s is lower than the previous frame's {last:?} s"),
                );
                self.report(f)?;
            } else if t == last {
                let f = at(
                    TIME_EQUAL,
                    Severity::Warning,
                    format!("the time {t:?} s is the previous frame's"),
                );
                self.report(f)?;
            }
            self.steps.add(t - last);
        }
        self.last_t = Some(t);
        self.t_first.get_or_insert(t);
        self.t_last = Some(t);
        self.time_ns = nanos(t);
        Ok(())
    }

    /// A record for slot `k` from `bytes` (the frame's or the static block's), reusing a
    /// recycled record of its channel.
    fn record(&mut self, k: usize, frame: u64, dynamic: bool) -> Record {
        let slot = &self.slots[k];
        let mut r = self.spare[slot.channel as usize]
            .take()
            .unwrap_or_else(|| Record::new(0, slot.channel));
        r.time = self.time_ns.saturating_sub(self.shift);
        r.exact_seconds = (self.shift == 0).then_some(self.t);
        r.channel = slot.channel;
        r.frame = Some(frame as i64);
        r.group = None;
        let same_entity = match (&r.entity, &slot.entity) {
            (Some(Entity::Name(a)), Some(Entity::Name(b))) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same_entity {
            r.entity = slot.entity.clone();
        }
        if let Some(raw) = r.raw.take() {
            self.spare_raw.push(raw.bytes);
        }
        if !self.options.decode {
            r.values.clear();
            return r;
        }
        if r.values.len() != 1 || r.values[0].0 != slot.field {
            r.values.clear();
            r.values.push((slot.field.clone(), Value::Null));
        }
        self.decode(k, frame, dynamic, &mut r.values[0].1);
        r
    }

    /// Decodes slot `k` of the loaded frame (or of the static block) into `out`, with its
    /// checks: the quirks of its bytes, and its non-finite values with `deep`.
    fn decode(&mut self, k: usize, frame: u64, dynamic: bool, out: &mut Value) {
        let slot = &self.slots[k];
        let (start, end) = if dynamic {
            (8 + slot.offset, 8 + slot.offset + slot.size)
        } else {
            (slot.offset, slot.offset + slot.size)
        };
        let block = if dynamic {
            &self.buf
        } else {
            &self.static_block
        };
        let quirks = codec::decode(slot.ty, &block[start..end], out);
        if quirks != Quirks::default() {
            self.quirks(k, quirks, frame, dynamic);
        }
        if self.options.deep {
            self.deep_check(k, frame, dynamic);
        }
    }

    /// `check_only`: every check of the loaded frame's slots that get no record (all but
    /// the first).
    fn check_frame(&mut self) {
        let mut value = std::mem::replace(&mut self.scratch, Value::Null);
        for i in 0..self.checked.len() {
            self.decode(self.checked[i], self.frame, true, &mut value);
        }
        self.scratch = value;
    }

    /// Attaches the original bytes: the whole frame, or the whole static block.
    fn attach_raw(&mut self, r: &mut Record, dynamic: bool) {
        // A rebased frame's bytes hold its old time.
        if !self.options.decode || self.options.check_only || (dynamic && self.shift != 0) {
            return;
        }
        let mut bytes = self.spare_raw.pop().unwrap_or_default();
        bytes.clear();
        bytes.extend_from_slice(if dynamic {
            &self.buf
        } else {
            &self.static_block
        });
        r.raw = Some(Box::new(RawBytes {
            format: if dynamic { RAW_FRAME } else { RAW_STATIC },
            bytes,
            time_inside: dynamic,
        }));
    }

    fn quirks(&mut self, k: usize, q: Quirks, frame: u64, dynamic: bool) {
        let s = &self.slots[k];
        let name = &self.schema.signals[k].name;
        let (place, offset) = if dynamic {
            let offset = frame * self.frame_size + 8 + s.offset as u64;
            (self.place(frame, frame * self.frame_size), offset)
        } else {
            (STATIC_FILE.to_string(), s.offset as u64)
        };
        let mut out = Vec::new();
        if q.bool_value {
            out.push(Finding::new(
                Severity::Warning,
                BOOL_VALUE,
                format!(
                    "{place}: bool signal {name:?} holds a byte other than 0 or 1 (read as true)"
                ),
            ));
        }
        if q.padding {
            out.push(Finding::new(
                Severity::Warning,
                SLOT_PADDING,
                format!("{place}: the upper bytes of {name:?}'s 8-byte slot are not the sign (or zero) extension of its value"),
            ));
        }
        for f in out {
            let f = if dynamic {
                f.at(offset, frame)
            } else {
                f.offset(offset)
            };
            self.findings.push(f);
        }
    }

    fn deep_check(&mut self, k: usize, frame: u64, dynamic: bool) {
        let s = &self.slots[k];
        let (block, base) = if dynamic {
            (&self.buf[8..], frame * self.frame_size + 8)
        } else {
            (&self.static_block[..], 0)
        };
        let bytes = &block[s.offset..s.offset + s.size];
        let (ty, offset, t) = (s.ty, s.offset as u64, self.t);
        let at = |element: usize| base + offset + (element * ty.element.size()) as u64;
        if let (true, Some(threshold), Some(t_before)) =
            (dynamic, self.options.discontinuity, self.previous)
        {
            let before = &self.previous_buf[8 + s.offset..8 + s.offset + s.size];
            let jumps = &mut self.jumps;
            codec::jumps(ty, bytes, before, threshold, |element, a, b| {
                match jumps.entry(k, element) {
                    Some(j) => j.count += 1,
                    first => {
                        *first = Some(Jumps {
                            signal: k,
                            element,
                            count: 1,
                            frame,
                            offset: at(element),
                            t_before,
                            t,
                            before: a,
                            now: b,
                        })
                    }
                }
            });
        }
        let non_finite = &mut self.non_finite;
        codec::non_finite(ty, bytes, |element| match non_finite.entry(k, element) {
            Some(n) => n.count += 1,
            first => {
                *first = Some(NonFinite {
                    signal: k,
                    element,
                    count: 1,
                    time: t,
                    frame,
                    offset: at(element),
                })
            }
        });
    }

    /// `Vehicle.Nav.position.y`: element `element` of signal `k`, or the signal of a scalar.
    fn component_name(&self, k: usize, element: usize) -> String {
        let s = &self.schema.signals[k];
        match s.ty.component_names().get(element) {
            Some(c) => format!("{}.{c}", s.name),
            None => s.name.clone(),
        }
    }

    /// The findings that need all of the data: the partial last frame, the irregular
    /// steps, non-finite values, and the metadata's counts and digests.
    fn finish(&mut self) -> Result<(), ReadError> {
        let mut out = Vec::new();
        if self.tail > 0 && self.end == self.frames {
            let offset = self.frames * self.frame_size;
            out.push(
                Finding::new(
                    Severity::Error,
                    TRUNCATED_FRAME,
                    format!(
                        "{}: the last frame is partial: {} of its {} bytes; it is not read",
                        self.place(self.frames, offset),
                        self.tail,
                        self.frame_size
                    ),
                )
                .at(offset, self.frames)
                .hint("`simrec recover` keeps the whole frames and drops the partial one"),
            );
        }
        let irregular = self.steps.irregular();
        if irregular > 0 {
            out.push(Finding::new(
                Severity::Info,
                IRREGULAR_STEP,
                format!(
                    "{DYNAMIC_FILE}: {irregular} of {} time steps differ from the median step {:?} s by more than 1e-9 relative",
                    self.steps.count,
                    self.steps.median().unwrap_or(0.0)
                ),
            ));
        }
        for j in self.jumps.take() {
            let component = self.component_name(j.signal, j.element);
            let threshold = self.options.discontinuity.unwrap_or(0.0);
            out.push(
                Finding::new(
                    Severity::Info,
                    DISCONTINUITY,
                    format!(
                        "{component} jumps from {:?} to {:?} between t = {:?} s and t = {:?} s (frame {}); {} of more than {threshold:?} in all",
                        j.before, j.now, j.t_before, j.t, j.frame, plural(j.count, "jump")
                    ),
                )
                .at(j.offset, j.frame),
            );
        }
        for n in self.non_finite.take() {
            let component = self.component_name(n.signal, n.element);
            let s = &self.schema.signals[n.signal];
            let f = Finding::new(
                Severity::Warning,
                NONFINITE_VALUE,
                format!(
                    "{component} is not finite at t = {:?} s (frame {}); {} non-finite values of this component in all",
                    n.time, n.frame, n.count
                ),
            );
            out.push(if s.lifecycle == Lifecycle::Dynamic {
                f.at(n.offset, n.frame)
            } else {
                f.offset(n.offset)
            });
        }
        if let Some(m) = self.metadata.as_ref().filter(|_| !self.sliced) {
            let mut files = vec![(
                STATIC_FILE,
                self.static_block.len() as u64,
                Some(hex(&Sha256::digest(&self.static_block))),
            )];
            if let Some(mut h) = self.hasher.take() {
                // The partial frame's bytes are part of the file too.
                if let Some(d) = &mut self.dynamic {
                    let start = d.start + self.frames * self.frame_size;
                    if let Ok(b) = d.input.bytes(start, self.tail as usize) {
                        h.update(b);
                    }
                }
                self.dynamic_sha = h.finalize().map(|d| hex(&d));
            }
            if self.dynamic.is_some() {
                let len = self.frames * self.frame_size + self.tail;
                files.push((DYNAMIC_FILE, len, self.dynamic_sha.clone()));
            }
            let seen = Observed {
                frames: self.frames,
                t_first: self.t_first,
                t_last: self.t_last,
                files,
            };
            out.extend(metadata::check(m, &seen));
        }
        for f in out {
            self.report(f)?;
        }
        Ok(())
    }

    fn step(&mut self) -> Result<Option<Record>, ReadError> {
        loop {
            match self.phase {
                Phase::Start => {
                    if self.options.check_only && self.options.decode {
                        let slots = &self.slots;
                        let deep = self.options.deep;
                        let checked = self.dynamics.iter().skip(1).copied().filter(|&k| {
                            deep || codec::can_have_quirks(slots[k].ty, slots[k].size)
                        });
                        self.checked = checked.collect();
                    }
                    if self.end > self.first {
                        self.load(self.first)?;
                    }
                    self.phase = Phase::Statics(0);
                }
                Phase::Statics(i) => {
                    let Some(&k) = self.statics.get(i) else {
                        self.phase = if self.end > self.first {
                            Phase::Frame(0)
                        } else {
                            Phase::Finish
                        };
                        continue;
                    };
                    self.phase = Phase::Statics(i + 1);
                    let mut r = self.record(k, self.first, false);
                    if i == 0 {
                        self.attach_raw(&mut r, false);
                    }
                    return Ok(Some(r));
                }
                Phase::Frame(i) => {
                    let Some(&k) = self.dynamics.get(i) else {
                        let next = self.frame + 1;
                        if next < self.end {
                            self.load(next)?;
                            self.phase = Phase::Frame(0);
                        } else {
                            self.phase = Phase::Finish;
                        }
                        continue;
                    };
                    self.phase = Phase::Frame(i + 1);
                    let mut r = self.record(k, self.frame, true);
                    if i == 0 && self.options.check_only {
                        // One record for the frame; its other slots are only checked.
                        self.phase = Phase::Frame(self.dynamics.len());
                        self.check_frame();
                    }
                    if i == 0 {
                        self.attach_raw(&mut r, true);
                    }
                    return Ok(Some(r));
                }
                Phase::Finish => {
                    self.phase = Phase::Done;
                    self.finish()?;
                }
                Phase::Done => return Ok(None),
            }
        }
    }

    /// The time of frame `i`, as model nanoseconds (0 for a time that is not finite).
    fn frame_ns(&mut self, i: u64) -> Result<i64, ReadError> {
        let Some(d) = &mut self.dynamic else {
            return Ok(0);
        };
        let b = d
            .input
            .bytes(d.start + i * self.frame_size, 8)
            .map_err(|e| ReadError::from(e).in_file(&self.path))?;
        let t = f64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        Ok(if t.is_finite() { nanos(t) } else { 0 })
    }

    /// The times of the first and last frames, `None` without frames.
    pub(super) fn time_span(&mut self) -> Result<Option<(i64, i64)>, ReadError> {
        if self.frames == 0 {
            return Ok(None);
        }
        Ok(Some((self.frame_ns(0)?, self.frame_ns(self.frames - 1)?)))
    }

    /// Restricts reading to the frames of `[start, end)` found by binary search (spec §A14),
    /// rebased to start at 0 when `rebase`: only the frames of the slice are read. The static
    /// records come at the first frame of the slice.
    pub fn slice(
        mut self,
        start: Option<TimeSpec>,
        end: Option<TimeSpec>,
        rebase: bool,
    ) -> Result<IcarecReader, ReadError> {
        let w = self.frames_of(start, end)?;
        Ok(self.slice_frames(&w, rebase))
    }

    /// The layout of a frame read ([`IcarecFrames`](super::frames::IcarecFrames)), when one
    /// gives what the record read gives: a whole, decoded, unsliced recording with frames and
    /// dynamic signals, every static signal inside the static block, and nothing read yet.
    pub(super) fn frame_layout(&self) -> Option<FrameLayout> {
        let whole = self.first == 0 && self.end == self.frames && !self.sliced;
        let fits = self.statics.len() + self.dynamics.len() == self.slots.len();
        // Without `decode` (inspect), frames are read for their times and checks, as the
        // record read then reads them.
        let plain = !self.options.check_only;
        // Without a dynamic signal the record read makes one frame of the static records.
        let framed = self.frames > 0 && !self.dynamics.is_empty();
        if !(whole && fits && plain && framed && self.phase == Phase::Start) {
            return None;
        }
        let signal = |&k: &usize| FrameSignal {
            channel: self.slots[k].channel,
            entity: self.slots[k].entity.clone(),
            packed: self.slots[k].ty.packed(),
            offset: self.slots[k].offset,
        };
        Some(FrameLayout {
            statics: self.statics.iter().map(signal).collect(),
            dynamics: self.dynamics.iter().map(signal).collect(),
            static_block: self.static_block.clone(),
            loose: false,
        })
    }

    /// Reads the next frame for a frame read, with every check the record read makes in
    /// the same order (the frame's time, then the static values once, then the values that
    /// can hold a quirk, or all with `deep`); `None` after the end's checks.
    pub(super) fn next_frame(&mut self) -> Result<Option<Frame<'_>>, ReadError> {
        match self.phase {
            Phase::Start => {
                let deep = self.options.deep;
                let slots = &self.slots;
                // Without `decode` the record read checks no value, and neither does this.
                let decode = self.options.decode;
                self.checked = (self.dynamics.iter().copied())
                    .filter(|&k| {
                        decode && (deep || codec::can_have_quirks(slots[k].ty, slots[k].size))
                    })
                    .collect();
                if self.end > self.first {
                    self.load(self.first)?;
                }
                let mut value = std::mem::replace(&mut self.scratch, Value::Null);
                for i in (0..self.statics.len()).filter(|_| decode) {
                    self.decode(self.statics[i], self.first, false, &mut value);
                }
                self.scratch = value;
                self.phase = if self.end > self.first {
                    Phase::Frame(0)
                } else {
                    Phase::Finish
                };
            }
            Phase::Frame(_) => {
                let next = self.frame + 1;
                if next < self.end {
                    self.load(next)?;
                } else {
                    self.phase = Phase::Finish;
                }
            }
            Phase::Statics(_) | Phase::Finish | Phase::Done => {}
        }
        match self.phase {
            Phase::Frame(_) => {
                self.check_frame();
                Ok(Some(Frame {
                    time: self.time_ns.saturating_sub(self.shift),
                    exact_seconds: (self.shift == 0).then_some(self.t),
                    values: self.buf.get(8..).unwrap_or_default(),
                }))
            }
            Phase::Finish => {
                self.phase = Phase::Done;
                self.finish()?;
                Ok(None)
            }
            _ => Ok(None),
        }
    }

    /// The schema object as read (kept in the header, for writers).
    pub(super) fn schema_object(&self) -> Option<&Map<String, Json>> {
        let meta = self.header.metadata.get(HEADER_KEY)?;
        meta.get("schema")?.as_object()
    }

    /// What `inspect` shows of the recording (see `facts.rs`).
    pub(super) fn static_len(&self) -> usize {
        self.static_block.len()
    }
}

impl Iterator for IcarecReader {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.step().transpose()
    }
}

impl Source for IcarecReader {
    fn header(&self) -> &Header {
        &self.header
    }

    fn findings(&self) -> Vec<(&Path, &Findings)> {
        vec![(self.path.as_path(), &self.findings)]
    }

    fn progress(&self) -> (u64, u64) {
        let total = self.total_bytes;
        let done = match self.phase {
            Phase::Finish | Phase::Done => total,
            // The small parts were read at open.
            _ => total.saturating_sub(self.end.saturating_sub(self.frame) * self.frame_size),
        };
        (done, total)
    }

    fn facts(&self) -> Vec<Fact> {
        super::facts::facts(self)
    }

    fn recycle(&mut self, record: Record) {
        if let Some(spare) = self.spare.get_mut(record.channel as usize) {
            *spare = Some(record);
        }
    }

    /// Signals the caller does not use are neither decoded nor checked (each frame is still
    /// read, hashed and its time checked). Taken only before the first record: the phase
    /// indexes into the lists.
    fn select_channels(&mut self, wanted: &[bool]) {
        if self.phase != Phase::Start {
            return;
        }
        let slots = &self.slots;
        let used = |k: &usize| {
            wanted
                .get(slots[*k].channel as usize)
                .copied()
                .unwrap_or(true)
        };
        self.statics.retain(used);
        self.dynamics.retain(used);
    }
}

/// A summary of the metadata for `inspect`.
pub(super) fn metadata_json(m: &Option<Map<String, Json>>) -> Json {
    match m {
        None => Json::Null,
        Some(m) => json!({
            "complete": metadata::complete(m),
            "frame_count": m.get("frame_count"),
            "producer": m.get("producer"),
        }),
    }
}

/// The static block (empty when its file is missing), checked against the schema's size.
fn take_static_block(c: &mut Container, schema: &Schema, pending: &mut Findings) -> Vec<u8> {
    match c.statics.take() {
        Some(b) => {
            if b.len() as u64 != schema.static_block {
                pending.push(Finding::new(
                    Severity::Error,
                    STATIC_SIZE,
                    format!(
                        "{STATIC_FILE} has {} bytes but the static block is {} bytes",
                        b.len(),
                        schema.static_block
                    ),
                ));
            }
            b
        }
        None => {
            if schema.static_block > 0 && !c.members.iter().any(|m| m.name == STATIC_FILE) {
                pending.push(Finding::new(
                    Severity::Error,
                    MISSING_PART,
                    format!(
                        "no {STATIC_FILE} but the static block is {} bytes: static signals cannot be read",
                        schema.static_block
                    ),
                ));
            }
            Vec::new()
        }
    }
}

/// `metadata.json`, parsed: `None` when it is missing (an unfinished recording) or bad.
fn take_metadata(c: &mut Container, pending: &mut Findings) -> Option<Map<String, Json>> {
    match c.metadata.take() {
        None => {
            pending.push(
                Finding::new(
                    Severity::Warning,
                    METADATA_MISSING,
                    format!(
                        "no {}: the recording was not finished cleanly",
                        metadata::FILE
                    ),
                )
                .hint(
                    "`simrec recover` writes the whole frames again with a complete metadata.json",
                ),
            );
            None
        }
        Some(bytes) => match metadata::parse(&bytes) {
            Ok(m) => Some(m),
            Err(f) => {
                pending.push(f);
                None
            }
        },
    }
}

/// Where each signal's channel reads its value, in schema order.
struct Layout {
    slots: Vec<Slot>,
    /// Indices into `slots` of the static signals that fit the static block, and of the
    /// dynamic ones.
    statics: Vec<usize>,
    dynamics: Vec<usize>,
}

/// A channel per signal, in schema order, and where each is read; static signals past
/// the end of a static block of `static_len` bytes are not read.
fn channels(schema: &Schema, static_len: u64) -> (Header, Layout) {
    let mut header = Header::new("icarec", schema.schema_version.clone());
    header.origin = schema.origin.clone();
    let mut slots = Vec::with_capacity(schema.signals.len());
    let (mut statics, mut dynamics) = (Vec::new(), Vec::new());
    for s in &schema.signals {
        let (entity, field) = entity_and_field(&s.name);
        let is_static = s.lifecycle == Lifecycle::Static;
        let spec = FieldSpec {
            name: field.to_string(),
            dtype: Some(s.ty.element.dtype()),
            shape: Some(s.ty.shape().to_vec()),
            unit: s.units.clone(),
            // A Quat is scalar first (w, x, y, z): said in the model so that writers
            // that store rotations another way can reorder it (Elodin's world_pos).
            semantic: s
                .semantic
                .clone()
                .or_else(|| (s.ty.kind == Kind::Quat).then(|| QUATERNION_WXYZ.to_string())),
            is_static,
            elements: None,
        };
        let composition = if is_static {
            Composition::SampleHold
        } else {
            Composition::Independent
        };
        let mut channel = Channel::new(s.name.clone(), ChannelKind::Signals, composition);
        channel.fields.push(spec);
        channel.declares_all = true;
        let id = header.add_channel(channel);
        // Static signals past the end of a short static file are not emitted (reported
        // as ICAREC_STATIC_SIZE).
        let fits = !is_static || s.offset.saturating_add(s.size) <= static_len;
        if fits {
            (if is_static {
                &mut statics
            } else {
                &mut dynamics
            })
            .push(slots.len());
        }
        slots.push(Slot {
            channel: id,
            ty: s.ty,
            offset: s.offset as usize,
            size: s.size as usize,
            entity: entity.map(|e| Entity::Name(Arc::from(e))),
            field: field.to_string(),
        });
    }
    let layout = Layout {
        slots,
        statics,
        dynamics,
    };
    (header, layout)
}

/// The header's `icarec` object: the schema (moved out of `schema`), its text when it is
/// what the object holds, and the metadata.
fn header_metadata(
    header: &mut Header,
    schema: &mut Schema,
    schema_bytes: &[u8],
    metadata: Option<&Map<String, Json>>,
) {
    let mut meta = Map::new();
    // Moved, not copied: the header is where the object is read from (facts too).
    meta.insert(
        "schema".into(),
        Json::Object(std::mem::take(&mut schema.object)),
    );
    // The text as it was, for a writer that changes nothing in it (a slice, a copy); the
    // object lacks elements of `signals` that are not signals, and then the text is not
    // what it holds.
    let text = std::str::from_utf8(schema_bytes).ok();
    if let Some(text) = text.filter(|_| schema.unreadable == 0) {
        meta.insert("schema_text".into(), Json::String(text.to_string()));
    }
    meta.insert(
        "metadata".into(),
        metadata.cloned().map_or(Json::Null, Json::Object),
    );
    header
        .metadata
        .insert(HEADER_KEY.into(), Json::Object(meta));
}

impl FrameWindowed for IcarecReader {
    /// The frames of the window `[start, end)`, by binary search over frame times.
    fn frames_of(
        &mut self,
        start: Option<TimeSpec>,
        end: Option<TimeSpec>,
    ) -> Result<FrameWindow, ReadError> {
        frame_window(self.frames, start, end, |i| self.frame_ns(i))
    }

    /// [`IcarecReader::slice`] of the window found.
    fn slice_frames(mut self, w: &FrameWindow, rebase: bool) -> Self {
        let (start_ns, end_ns) = (w.start_ns, w.end_ns);
        self.first = w.first;
        self.end = w.end;
        self.frame = self.first;
        self.sliced = true;
        self.hasher = None;
        if rebase {
            self.shift = start_ns;
            self.header.origin = self.header.origin.shifted(start_ns);
        }
        let t = |ns: i64| metadata::time_json(ns as f64 / 1e9);
        if let Some(Json::Object(m)) = self.header.metadata.get_mut(HEADER_KEY) {
            m.insert(
                "slice".into(),
                json!({
                    "from": self.path.display().to_string(),
                    "t0": t(start_ns),
                    "t1": if end_ns == i64::MAX { Json::Null } else { t(end_ns) },
                }),
            );
        }
        self
    }
}
