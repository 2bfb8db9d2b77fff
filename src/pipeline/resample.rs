//! `--resample DT`: a recording on a fixed time grid (docs/formats/mapping.md, "Resampling"),
//! for targets whose frames or ticks have one step (Elodin, the Icarus formats) when the
//! source's times are irregular.
//!
//! Ticks are the multiples of DT from the recording's time zero, from the first at or after
//! the first record to the first at or after the last. At each tick, every signal channel's
//! entities hold their latest values (the latest record at or before the tick, folded key by
//! key: a removal removes, a frame reset clears); an event is written once, at the first
//! tick at or after it. Records whose time is not a tick are counted as resampled. Memory:
//! one set of values per channel and entity.

use std::collections::HashMap;

use super::LossHandle;
use crate::formats::mapping::queued::{Queue, Queued};
use crate::formats::mapping::Tally;
use crate::formats::{ReadError, Source};
use crate::model::{ChannelKind, Composition, Entity, Field, Record, Value};

const RESAMPLED: &str = "resampled: on the --resample grid, values held from the latest record";
const MOVED: &str = "resampled: an event moved to the next tick of the --resample grid";

/// The values one (channel, entity) holds.
struct Held {
    channel: u32,
    entity: Option<Entity>,
    values: Vec<Field>,
}

pub struct Resample<'a> {
    inner: Box<dyn Source + 'a>,
    step: i64,
    held: Vec<Held>,
    index: HashMap<(u32, Option<Entity>), usize>,
    /// Events waiting for the next tick.
    events: Vec<Record>,
    /// The next tick to write, and how many were written.
    tick: Option<i64>,
    ticks: i64,
    last_time: i64,
    queue: Queue,
    tally: (Tally, Tally),
    loss: LossHandle,
}

impl<'a> Resample<'a> {
    /// `step` in nanoseconds, more than 0.
    pub fn new(inner: Box<dyn Source + 'a>, step: i64, loss: LossHandle) -> Resample<'a> {
        Resample {
            inner,
            step: step.max(1),
            held: Vec::new(),
            index: HashMap::new(),
            events: Vec::new(),
            tick: None,
            ticks: 0,
            last_time: 0,
            queue: Queue::default(),
            tally: (Tally::default(), Tally::default()),
            loss,
        }
    }

    /// Writes tick `at`: every held value set, then the events up to it.
    fn write_tick(&mut self, at: i64) {
        for h in &self.held {
            let mut r = Record::new(at, h.channel);
            r.entity = h.entity.clone();
            r.frame = Some(self.ticks);
            r.values = h.values.clone();
            self.queue.out.push_back(r);
        }
        for mut e in self.events.drain(..) {
            e.time = at;
            e.raw = None;
            self.queue.out.push_back(e);
        }
        self.ticks += 1;
    }

    fn gather(&mut self, record: Record) {
        let header = self.inner.header();
        let Some(channel) = header.channels.get(record.channel as usize) else {
            return;
        };
        let on_grid = record.time.rem_euclid(self.step) == 0;
        if channel.kind == ChannelKind::Events {
            if !on_grid {
                self.tally.1.add(record.channel, "time");
            }
            self.events.push(record);
            return;
        }
        if !on_grid {
            self.tally.0.add(record.channel, "time");
        }
        let reset = channel.composition == Composition::FrameDelta && record.frame == Some(0);
        let key = (record.channel, record.entity.clone());
        let i = match self.index.get(&key) {
            Some(&i) => i,
            None => {
                self.held.push(Held {
                    channel: record.channel,
                    entity: record.entity.clone(),
                    values: Vec::new(),
                });
                self.index.insert(key, self.held.len() - 1);
                self.held.len() - 1
            }
        };
        let held = &mut self.held[i].values;
        if reset {
            held.clear();
        }
        for (k, v) in record.values {
            let at = held.iter().position(|(name, _)| *name == k);
            match (at, v) {
                (Some(at), Value::Removed) => {
                    held.remove(at);
                }
                (None, Value::Removed) => {}
                (Some(at), v) => held[at].1 = v,
                (None, v) => held.push((k, v)),
            }
        }
    }
}

impl Queued for Resample<'_> {
    fn queue(&mut self) -> &mut Queue {
        &mut self.queue
    }
    fn pull(&mut self) -> Option<Result<Record, ReadError>> {
        self.inner.next()
    }
    fn take(&mut self, record: Record) {
        let step = self.step;
        // The first tick at or after the first record.
        let first = record.time.div_euclid(step) * step;
        let first = first + if first == record.time { 0 } else { step };
        let mut tick = *self.tick.get_or_insert(first);
        while tick < record.time {
            self.write_tick(tick);
            tick += step;
        }
        self.tick = Some(tick);
        self.last_time = self.last_time.max(record.time);
        self.gather(record);
    }
    fn end(&mut self) {
        // Up to the first tick at or after the last record.
        if let Some(mut tick) = self.tick {
            loop {
                self.write_tick(tick);
                if tick >= self.last_time {
                    break;
                }
                tick += self.step;
            }
        }
        let header = self.inner.header();
        self.tally.0.report(header, RESAMPLED, &self.loss);
        self.tally.1.report(header, MOVED, &self.loss);
    }
}

stage_source!(Resample, inner, queued);
