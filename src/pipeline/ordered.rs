//! Records in time order for a writer that needs it (`WriterTraits::needs_time_order`): XREC
//! stores events as they arrived, so an event can come after later ones. The last
//! [`HOLD`] records are held back and a late one is put in its place among them (records of
//! one time keep their order); one later than that is given the time of the record written
//! before it, and counted, so that frames and rows never go back. Memory: [`HOLD`] records.

use std::collections::VecDeque;

use super::LossHandle;
use crate::formats::{ReadError, Source};
use crate::model::Record;

/// Records held back to put a late one in its place.
pub const HOLD: usize = 64;

pub struct InTimeOrder<'a> {
    inner: Box<dyn Source + 'a>,
    held: VecDeque<Record>,
    /// The time of the last record handed on.
    last: Option<i64>,
    ended: bool,
    loss: LossHandle,
}

impl<'a> InTimeOrder<'a> {
    pub fn new(inner: Box<dyn Source + 'a>, loss: LossHandle) -> InTimeOrder<'a> {
        InTimeOrder {
            inner,
            held: VecDeque::with_capacity(HOLD + 1),
            last: None,
            ended: false,
            loss,
        }
    }

    /// Puts `record` among the held records by time, after those of the same time.
    fn hold(&mut self, mut record: Record) {
        if self.last.is_some_and(|last| record.time < last) {
            let channel = self
                .inner
                .header()
                .channels
                .get(record.channel as usize)
                .map_or("?", |c| c.name.as_str());
            self.loss.borrow_mut().add(
                channel,
                "time",
                "earlier than the record written before it: written at that record's time",
            );
            record.time = self.last.unwrap_or(record.time);
            // The bytes hold the old time: a writer must build the record anew.
            record.raw = None;
        }
        if self.held.back().is_none_or(|r| r.time <= record.time) {
            self.held.push_back(record);
        } else {
            let at = self.held.partition_point(|r| r.time <= record.time);
            self.held.insert(at, record);
        }
    }

    fn hand_on(&mut self) -> Option<Record> {
        let record = self.held.pop_front()?;
        self.last = Some(record.time);
        Some(record)
    }
}

impl Iterator for InTimeOrder<'_> {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.ended && self.held.len() <= HOLD {
            match self.inner.next() {
                Some(Ok(record)) => self.hold(record),
                Some(Err(e)) => return Some(Err(e)),
                None => self.ended = true,
            }
        }
        self.hand_on().map(Ok)
    }
}

stage_source!(InTimeOrder, passing);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Channel, ChannelKind, Composition, Header};
    use crate::report::Findings;
    use std::path::Path;

    struct Times(Header, std::vec::IntoIter<i64>);

    impl Iterator for Times {
        type Item = Result<Record, ReadError>;
        fn next(&mut self) -> Option<Self::Item> {
            self.1.next().map(|t| Ok(Record::new(t, 0)))
        }
    }

    impl Source for Times {
        fn header(&self) -> &Header {
            &self.0
        }
        fn findings(&self) -> Vec<(&Path, &Findings)> {
            Vec::new()
        }
        fn progress(&self) -> (u64, u64) {
            (0, 0)
        }
    }

    fn ordered(times: Vec<i64>) -> (Vec<i64>, u64) {
        let mut header = Header::new("test", "1");
        header.add_channel(Channel::new(
            "c",
            ChannelKind::Events,
            Composition::Independent,
        ));
        let loss = LossHandle::default();
        let out = InTimeOrder::new(Box::new(Times(header, times.into_iter())), loss.clone())
            .map(|r| r.unwrap().time)
            .collect();
        let lost = loss.borrow().entries().map(|(_, _, _, n)| n).sum();
        (out, lost)
    }

    #[test]
    fn a_late_record_within_the_hold_takes_its_place() {
        assert_eq!(
            ordered(vec![0, 500, 1000, 750, 2000]),
            (vec![0, 500, 750, 1000, 2000], 0)
        );
    }

    #[test]
    fn a_record_later_than_the_hold_takes_the_time_before_it() {
        let mut times: Vec<i64> = (1..=HOLD as i64 + 2).map(|t| t * 10).collect();
        times.push(5);
        let (out, lost) = ordered(times);
        assert_eq!(lost, 1);
        assert!(out.windows(2).all(|w| w[0] <= w[1]));
        // Handed on when the hold was full: the records up to the 3rd had gone.
        assert_eq!(out.iter().filter(|&&t| t == 20).count(), 2);
    }
}
