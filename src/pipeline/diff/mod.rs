//! `diff`: two recordings streamed side by side and compared in the model. Records are
//! matched per channel (by name) and entity, by time, frame value or position; each side
//! keeps a window of unmatched records per channel and entity, so memory does not grow with
//! the recordings.

pub mod compare;
pub mod output;

use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet, VecDeque};

use crate::formats::{ReadError, Source};
use crate::model::{Entity, Header, Nanos, Record, Value, FRAME_VALUE};

use super::convert::{Notes, ReadRequest};
use super::select::SelectionHandle;
pub use compare::{Comparer, Found, Kind, Shown, Tolerance};

/// Records of one channel and entity waiting for their counterpart on the other side, at
/// most this many per side: beyond it the oldest is taken as having none.
pub const WINDOW: usize = 64;

/// How records of the two sides are paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Same channel, entity and time.
    Time,
    /// Same channel, entity and frame value (records without one by position).
    Frame,
    /// The n-th record of a channel and entity in A with the n-th in B.
    Index,
}

impl Align {
    pub fn name(self) -> &'static str {
        match self {
            Align::Time => "time",
            Align::Frame => "frame",
            Align::Index => "index",
        }
    }
}

/// What to compare, and how.
pub struct DiffRequest<'a> {
    pub a: ReadRequest<'a>,
    pub b: ReadRequest<'a>,
    pub align: Align,
    pub tolerance: Tolerance,
    /// Differences listed in full (the earliest ones); all are counted.
    pub max_diffs: usize,
}

/// One difference, where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// The time of A's record (B's for a record only in B).
    pub time: Nanos,
    /// B's time when it differs from A's (records aligned by frame or position).
    pub time_b: Option<Nanos>,
    pub channel: String,
    pub entity: Option<Entity>,
    pub frame_a: Option<i64>,
    pub frame_b: Option<i64>,
    /// The record's position in A's stream (0-based, after selection), and in B's.
    pub record_a: Option<u64>,
    pub record_b: Option<u64>,
    /// The top-level key; `None` for a whole record only on one side, or a frame value.
    pub key: Option<String>,
    pub found: Found,
}

/// What was compared of one key of one channel.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeyStats {
    /// Records in which both sides have the key.
    pub compared: u64,
    /// Elements that differ, over all records.
    pub differing: u64,
    pub max_abs: f64,
    pub max_rel: f64,
}

/// What was compared of one channel.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChannelStats {
    pub compared: u64,
    pub only_in_a: u64,
    pub only_in_b: u64,
    /// Aligned records whose frame values differ.
    pub frames_differing: u64,
    pub keys: BTreeMap<String, KeyStats>,
}

impl ChannelStats {
    pub fn keys_differing(&self) -> usize {
        self.keys.values().filter(|k| k.differing > 0).count()
    }
}

/// The result of a diff.
#[derive(Debug, Default)]
pub struct DiffReport {
    /// The earliest differences (at most `max_diffs`), in time order.
    pub differences: Vec<Difference>,
    /// Every difference: elements, keys and records.
    pub total: u64,
    /// Per channel name, in the order met.
    pub channels: Vec<(String, ChannelStats)>,
    /// Records read from each side.
    pub records: [u64; 2],
}

impl DiffReport {
    pub fn equal(&self) -> bool {
        self.total == 0
    }
}

/// A record waiting on one side.
struct Pending {
    record: Record,
    /// Position in its side's stream.
    position: u64,
    /// The place among its values of a copy of its frame value ([`frame_copy`]).
    frame_copy: Option<usize>,
    /// What it aligns on: its time, frame value or position in its channel and entity.
    on: (bool, i64),
}

type Key = (String, Option<Entity>);

#[derive(Default)]
struct Queues {
    waiting: [VecDeque<Pending>; 2],
    /// Records of this channel and entity read per side (index alignment).
    seen: [u64; 2],
}

/// Differences kept: the `max` earliest by (time, order found).
struct Earliest {
    max: usize,
    heap: BinaryHeap<Ordered>,
    seq: u64,
}

struct Ordered(Nanos, u64, Box<Difference>);
impl PartialEq for Ordered {
    fn eq(&self, o: &Self) -> bool {
        (self.0, self.1) == (o.0, o.1)
    }
}
impl Eq for Ordered {}
impl PartialOrd for Ordered {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ordered {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.0, self.1).cmp(&(o.0, o.1))
    }
}

impl Earliest {
    /// Whether a difference at `time` would be kept.
    fn wants(&self, time: Nanos) -> bool {
        self.heap.len() < self.max || self.heap.peek().is_some_and(|w| time < w.0)
    }

    fn push(&mut self, d: Difference) {
        self.seq += 1;
        if !self.wants(d.time) {
            return;
        }
        self.heap.push(Ordered(d.time, self.seq, Box::new(d)));
        if self.heap.len() > self.max {
            self.heap.pop();
        }
    }

    fn into_sorted(self) -> Vec<Difference> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|o| *o.2)
            .collect()
    }
}

struct Side {
    source: Box<dyn Source>,
    selection: SelectionHandle,
    peeked: Option<Record>,
    done: bool,
    read: u64,
}

impl Side {
    fn open(request: ReadRequest) -> Result<Side, ReadError> {
        let (source, selection) = request.open()?.into_parts();
        Ok(Side {
            source,
            selection,
            peeked: None,
            done: false,
            read: 0,
        })
    }

    /// The next record's time, reading it if needed.
    fn peek_time(&mut self) -> Result<Option<Nanos>, ReadError> {
        if self.peeked.is_none() && !self.done {
            match self.source.next() {
                Some(r) => self.peeked = Some(r?),
                None => self.done = true,
            }
        }
        Ok(self.peeked.as_ref().map(|r| r.time))
    }

    fn notes(&self) -> Notes {
        Notes::of(&*self.source, &self.selection)
    }
}

/// The run's state: the windows, the statistics and the differences kept.
struct Differ {
    align: Align,
    comparer: Comparer,
    queues: HashMap<Key, Queues>,
    channels: Vec<(String, ChannelStats)>,
    channel_index: HashMap<String, usize>,
    earliest: Earliest,
    total: u64,
}

impl Differ {
    fn stats(&mut self, channel: &str) -> &mut ChannelStats {
        let i = match self.channel_index.get(channel) {
            Some(&i) => i,
            None => {
                self.channels
                    .push((channel.to_string(), ChannelStats::default()));
                self.channel_index
                    .insert(channel.to_string(), self.channels.len() - 1);
                self.channels.len() - 1
            }
        };
        &mut self.channels[i].1
    }

    /// A record of side `s` (0 is A) under channel name `channel`.
    fn take(
        &mut self,
        s: usize,
        channel: String,
        record: Record,
        position: u64,
        frame_copy: Option<usize>,
    ) {
        let key = (channel, record.entity.clone());
        let queues = self.queues.entry(key.clone()).or_default();
        let ordinal = queues.seen[s];
        queues.seen[s] += 1;
        let on = match self.align {
            Align::Time => (true, record.time),
            Align::Frame => match record.frame {
                Some(f) => (true, f),
                None => (false, ordinal as i64),
            },
            Align::Index => (true, ordinal as i64),
        };
        let other = &mut queues.waiting[1 - s];
        let hit = other.iter().position(|p| p.on == on);
        // Records of the other side before the match, or (by time) earlier than this one,
        // can no longer find a counterpart.
        let stale = match (hit, self.align) {
            (Some(i), _) => i,
            (None, Align::Time) => other
                .iter()
                .take_while(|p| p.record.time < record.time)
                .count(),
            (None, _) => 0,
        };
        let mut unmatched: Vec<Pending> = other.drain(..stale).collect();
        let matched = hit.and_then(|_| other.pop_front());
        let mine = Pending {
            record,
            position,
            frame_copy,
            on,
        };
        let (pair, overflow) = match matched {
            Some(theirs) => (Some((mine, theirs)), None),
            None => {
                let own = &mut queues.waiting[s];
                own.push_back(mine);
                (
                    None,
                    (own.len() > WINDOW).then(|| own.pop_front()).flatten(),
                )
            }
        };
        for p in unmatched.drain(..) {
            self.only(1 - s, &key, p);
        }
        if let Some(p) = overflow {
            self.only(s, &key, p);
        }
        if let Some((mine, theirs)) = pair {
            let (a, b) = if s == 0 {
                (mine, theirs)
            } else {
                (theirs, mine)
            };
            self.pair(&key, a, b);
        }
    }

    /// A record of side `s` with no counterpart.
    fn only(&mut self, s: usize, key: &Key, p: Pending) {
        let stats = self.stats(&key.0);
        if s == 0 {
            stats.only_in_a += 1;
        } else {
            stats.only_in_b += 1;
        }
        self.total += 1;
        let (kind, a, b) = if s == 0 {
            (Kind::OnlyInA, Shown::Text("record".into()), Shown::Missing)
        } else {
            (Kind::OnlyInB, Shown::Missing, Shown::Text("record".into()))
        };
        if self.earliest.wants(p.record.time) {
            self.earliest.push(Difference {
                time: p.record.time,
                time_b: None,
                channel: key.0.clone(),
                entity: key.1.clone(),
                frame_a: if s == 0 { p.record.frame } else { None },
                frame_b: if s == 1 { p.record.frame } else { None },
                record_a: (s == 0).then_some(p.position),
                record_b: (s == 1).then_some(p.position),
                key: None,
                found: Found {
                    kind,
                    path: String::new(),
                    index: None,
                    a,
                    b,
                    abs_error: None,
                    rel_error: None,
                },
            });
        } else {
            self.earliest.seq += 1;
        }
    }

    /// Two aligned records.
    fn pair(&mut self, key: &Key, a: Pending, b: Pending) {
        let keep = self.earliest.wants(a.record.time);
        let base = |found: Found, field: Option<String>| Difference {
            time: a.record.time,
            time_b: (b.record.time != a.record.time).then_some(b.record.time),
            channel: key.0.clone(),
            entity: key.1.clone(),
            frame_a: a.record.frame,
            frame_b: b.record.frame,
            record_a: Some(a.position),
            record_b: Some(b.position),
            key: field,
            found,
        };
        let mut found: Vec<Difference> = Vec::new();
        let mut differing = 0u64;
        let comparer = &self.comparer;
        let stats = {
            let i = match self.channel_index.get(&key.0) {
                Some(&i) => i,
                None => {
                    self.channels.push((key.0.clone(), ChannelStats::default()));
                    self.channel_index
                        .insert(key.0.clone(), self.channels.len() - 1);
                    self.channels.len() - 1
                }
            };
            &mut self.channels[i].1
        };
        stats.compared += 1;
        if a.record.frame != b.record.frame && self.align != Align::Frame {
            stats.frames_differing += 1;
            differing += 1;
            if keep {
                let show = |f: Option<i64>| f.map_or(Shown::Missing, |f| Shown::Int(f.into()));
                found.push(base(
                    Found {
                        kind: Kind::Frame,
                        path: String::new(),
                        index: None,
                        a: show(a.record.frame),
                        b: show(b.record.frame),
                        abs_error: None,
                        rel_error: None,
                    },
                    None,
                ));
            }
        }
        // Records with many keys (a large state update) look keys up in a map, not a scan.
        let index: Option<HashMap<&str, &Value>> = (b.record.values.len() > 32).then(|| {
            b.record
                .values
                .iter()
                .map(|(k, v)| (k.as_str(), v))
                .collect()
        });
        let in_a: Option<HashSet<&str>> = (a.record.values.len() > 32)
            .then(|| a.record.values.iter().map(|(k, _)| k.as_str()).collect());
        for (i, (k, va)) in a.record.values.iter().enumerate() {
            let vb = match &index {
                Some(index) => index.get(k.as_str()).copied(),
                None => b.record.get(k),
            };
            if vb.is_none() && a.frame_copy == Some(i) {
                continue;
            }
            if !stats.keys.contains_key(k) {
                stats.keys.insert(k.clone(), KeyStats::default());
            }
            let Some(ks) = stats.keys.get_mut(k) else {
                continue;
            };
            let Some(vb) = vb else {
                ks.differing += 1;
                differing += 1;
                if keep {
                    found.push(base(
                        Found {
                            kind: Kind::KeyOnlyInA,
                            path: String::new(),
                            index: None,
                            a: Shown::Text(crate::report::render::value_text(va)),
                            b: Shown::Missing,
                            abs_error: None,
                            rel_error: None,
                        },
                        Some(k.clone()),
                    ));
                }
                continue;
            };
            ks.compared += 1;
            let mut out = compare::Outcome::default();
            comparer.compare(va, vb, keep, &mut out);
            ks.max_abs = ks.max_abs.max(out.max_abs);
            ks.max_rel = ks.max_rel.max(out.max_rel);
            ks.differing += out.differing;
            differing += out.differing;
            for f in out.found {
                found.push(base(f, Some(k.clone())));
            }
        }
        for (i, (k, vb)) in b.record.values.iter().enumerate() {
            let in_a = match &in_a {
                Some(keys) => keys.contains(k.as_str()),
                None => a.record.get(k).is_some(),
            };
            if in_a || b.frame_copy == Some(i) {
                continue;
            }
            stats.keys.entry(k.clone()).or_default().differing += 1;
            differing += 1;
            if keep {
                found.push(base(
                    Found {
                        kind: Kind::KeyOnlyInB,
                        path: String::new(),
                        index: None,
                        a: Shown::Missing,
                        b: Shown::Text(crate::report::render::value_text(vb)),
                        abs_error: None,
                        rel_error: None,
                    },
                    Some(k.clone()),
                ));
            }
        }
        self.total += differing;
        for d in found {
            self.earliest.push(d);
        }
    }

    /// Everything still waiting has no counterpart.
    fn finish(&mut self) {
        let mut keys: Vec<Key> = self.queues.keys().cloned().collect();
        keys.sort();
        for key in keys {
            let Some(q) = self.queues.get_mut(&key) else {
                continue;
            };
            let waiting: [Vec<Pending>; 2] = [
                q.waiting[0].drain(..).collect(),
                q.waiting[1].drain(..).collect(),
            ];
            for (s, list) in waiting.into_iter().enumerate() {
                for p in list {
                    self.only(s, &key, p);
                }
            }
        }
    }
}

/// Runs a diff. Reading errors end it; the notes of both sides come back either way.
pub fn diff(request: DiffRequest) -> (Result<DiffReport, ReadError>, Notes) {
    let align = request.align;
    let mut sides = match (Side::open(request.a), Side::open(request.b)) {
        (Ok(a), Ok(b)) => [a, b],
        (Err(e), _) | (_, Err(e)) => return (Err(e), Notes::default()),
    };
    let mut differ = Differ {
        align,
        comparer: Comparer {
            tolerance: request.tolerance,
        },
        queues: HashMap::new(),
        channels: Vec::new(),
        channel_index: HashMap::new(),
        earliest: Earliest {
            max: request.max_diffs,
            heap: BinaryHeap::new(),
            seq: 0,
        },
        total: 0,
    };
    let result = run(&mut sides, &mut differ);
    let notes = both(sides[0].notes(), sides[1].notes());
    let result = result.map(|()| {
        differ.finish();
        DiffReport {
            total: differ.total,
            channels: std::mem::take(&mut differ.channels),
            records: [sides[0].read, sides[1].read],
            differences: differ.earliest.into_sorted(),
        }
    });
    (result, notes)
}

/// The notes of both sides: what reading each found, and the parts of the selection that
/// matched nothing on either side (a key one side has and the other lacks was matched).
fn both(a: Notes, b: Notes) -> Notes {
    let mut read_findings = a.read_findings;
    read_findings.extend(b.read_findings);
    Notes {
        read_findings,
        unmatched: a
            .unmatched
            .into_iter()
            .filter(|u| b.unmatched.contains(u))
            .collect(),
    }
}

fn run(sides: &mut [Side; 2], differ: &mut Differ) -> Result<(), ReadError> {
    loop {
        let (ta, tb) = (sides[0].peek_time()?, sides[1].peek_time()?);
        // By time the sides advance together, so the windows stay short; by frame or
        // position they advance record for record.
        let s = match (ta, tb) {
            (None, None) => return Ok(()),
            (Some(_), None) => 0,
            (None, Some(_)) => 1,
            (Some(a), Some(b)) => match differ.align {
                Align::Time => usize::from(b < a),
                _ => usize::from(sides[1].read < sides[0].read),
            },
        };
        let side = &mut sides[s];
        let Some(record) = side.peeked.take() else {
            continue;
        };
        let position = side.read;
        side.read += 1;
        let header = side.source.header();
        let copy = frame_copy(header, &record);
        let channel = header
            .channel(record.channel)
            .map_or_else(|| format!("#{}", record.channel), |c| c.name.clone());
        differ.take(s, channel, record, position, copy);
    }
}

/// The place among `record`'s values of the key that holds a copy of its frame value
/// ([`FRAME_VALUE`]), where it is one. The frame values are compared themselves, so the copy
/// on one side only is no difference: a format that keeps it (a `.nanover.zip`'s
/// `frame.index`) and one that does not (legacy NanoVer) compare equal.
fn frame_copy(header: &Header, record: &Record) -> Option<usize> {
    let frame = record.frame?;
    let channel = header.channel(record.channel)?;
    let spec = channel
        .fields
        .iter()
        .find(|f| f.semantic.as_deref() == Some(FRAME_VALUE))?;
    record.values.iter().position(|(k, v)| {
        *k == spec.name
            && match v {
                Value::Int(i) => *i == frame,
                Value::UInt(u) => i64::try_from(*u) == Ok(frame),
                _ => false,
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn differ(align: Align) -> Differ {
        Differ {
            align,
            comparer: Comparer {
                tolerance: Tolerance::default(),
            },
            queues: HashMap::new(),
            channels: Vec::new(),
            channel_index: HashMap::new(),
            earliest: Earliest {
                max: 10,
                heap: BinaryHeap::new(),
                seq: 0,
            },
            total: 0,
        }
    }

    fn record(time: Nanos, keys: usize, changed: Option<usize>) -> Record {
        let mut r = Record::new(time, 0);
        r.values = (0..keys)
            .map(|i| {
                let v = if Some(i) == changed { 1.5 } else { i as f64 };
                (format!("k{i:02}"), Value::Float(v))
            })
            .collect();
        r
    }

    #[test]
    fn records_with_many_keys_compare_key_by_key() {
        let mut d = differ(Align::Time);
        // 40 keys (looked up through a map); B changes k07 and has one key more, in
        // another order.
        d.take(0, "state".into(), record(5, 40, None), 0, None);
        let mut b = record(5, 41, Some(7));
        b.values.reverse();
        d.take(1, "state".into(), b, 0, None);
        d.finish();
        assert_eq!(d.total, 2);
        let found: Vec<(Option<String>, Kind)> = d
            .earliest
            .into_sorted()
            .into_iter()
            .map(|x| (x.key, x.found.kind))
            .collect();
        assert_eq!(
            found,
            [
                (Some("k07".into()), Kind::Value),
                (Some("k40".into()), Kind::KeyOnlyInB)
            ]
        );
        let stats = &d.channels[0].1;
        assert_eq!((stats.compared, stats.keys.len()), (1, 41));
    }

    #[test]
    fn by_time_a_record_passed_by_the_other_side_has_no_counterpart() {
        let mut d = differ(Align::Time);
        d.take(0, "frame".into(), record(1, 1, None), 0, None);
        d.take(1, "frame".into(), record(2, 1, None), 0, None);
        d.take(0, "frame".into(), record(2, 1, None), 1, None);
        d.finish();
        let s = &d.channels[0].1;
        assert_eq!((s.compared, s.only_in_a, s.only_in_b), (1, 1, 0));
        let first = &d.earliest.into_sorted()[0];
        assert_eq!(
            (first.found.kind, first.record_a, first.time),
            (Kind::OnlyInA, Some(0), 1)
        );
    }

    #[test]
    fn a_window_overflow_counts_the_oldest_as_unpaired() {
        let mut d = differ(Align::Index);
        for i in 0..(WINDOW as u64 + 3) {
            d.take(0, "only_a".into(), record(i as Nanos, 1, None), i, None);
        }
        assert_eq!(d.channels[0].1.only_in_a, 3);
        assert_eq!(d.queues.values().next().unwrap().waiting[0].len(), WINDOW);
        d.finish();
        assert_eq!(d.channels[0].1.only_in_a, WINDOW as u64 + 3);
    }
}
