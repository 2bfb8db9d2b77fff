//! Completing channels' field specs for a writer that lays out its columns before the first
//! record (`WriterTraits::needs_schema`): what the source declared is kept; a field it did not
//! declare, or declared without type or shape, takes them from the first value a bounded
//! look-ahead at the first records shows.
//!
//! The look-ahead reads until every channel has shown a record and at least
//! [`AT_LEAST`] records were read, and never past [`MAX_RECORDS`] records or [`MAX_BYTES`]
//! of values (or the end). What it read is then handed on unchanged, in order. A source
//! that declares every field completely (Icarus, Elodin) is not read ahead at all.

use std::collections::VecDeque;
use std::path::Path;

use crate::formats::mapping::learn;
use crate::formats::{ReadError, Source};
use crate::model::{FieldSpec, Header, Record};
use crate::report::{Fact, Findings};

/// Records always read ahead (once some field needs completing): fields that only a
/// channel's second or third record carries are still seen.
pub const AT_LEAST: usize = 64;
/// At most this many records are held.
pub const MAX_RECORDS: usize = 4096;
/// At most this many bytes of values are held.
pub const MAX_BYTES: usize = 32 << 20;

/// Whether there are channels and every one declares at least one field, each with type
/// and shape.
pub fn is_complete(header: &Header) -> bool {
    // No channel yet: a source that discovers its channels while reading (XREC) declares
    // nothing up front, so the look-ahead must see its records.
    !header.channels.is_empty()
        && header
            .channels
            .iter()
            .all(|c| !c.fields.is_empty() && c.fields.iter().all(FieldSpec::is_complete))
}

/// A source whose header has every field the look-ahead could complete.
pub struct Completed<'s> {
    source: &'s mut dyn Source,
    header: Header,
    held: VecDeque<Record>,
    /// An error met while reading ahead, handed on after the records before it.
    failed: Option<ReadError>,
}

impl<'s> Completed<'s> {
    pub fn new(source: &'s mut dyn Source) -> Completed<'s> {
        let mut header = source.header().clone();
        let mut held = VecDeque::new();
        let mut failed = None;
        if !is_complete(&header) {
            let mut seen = vec![false; header.channels.len()];
            let mut bytes = 0;
            while held.len() < MAX_RECORDS && bytes < MAX_BYTES {
                if held.len() >= AT_LEAST && seen.iter().all(|&s| s) {
                    break;
                }
                let record = match source.next() {
                    None => break,
                    Some(Err(e)) => {
                        failed = Some(e);
                        break;
                    }
                    Some(Ok(r)) => r,
                };
                header.follow_channels(source.header());
                seen.resize(header.channels.len(), false);
                if let Some(channel) = header.channels.get_mut(record.channel as usize) {
                    learn(channel, &record);
                    seen[record.channel as usize] = true;
                }
                bytes += record.approx_bytes();
                held.push_back(record);
            }
        }
        Completed {
            source,
            header,
            held,
            failed,
        }
    }
}

impl Iterator for Completed<'_> {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(record) = self.held.pop_front() {
            return Some(Ok(record));
        }
        if let Some(e) = self.failed.take() {
            return Some(Err(e));
        }
        let next = self.source.next();
        self.header.follow_channels(self.source.header());
        next
    }
}

impl Source for Completed<'_> {
    fn header(&self) -> &Header {
        &self.header
    }
    fn findings(&self) -> Vec<(&Path, &Findings)> {
        self.source.findings()
    }
    fn progress(&self) -> (u64, u64) {
        self.source.progress()
    }
    fn facts(&self) -> Vec<Fact> {
        self.source.facts()
    }
    fn recycle(&mut self, record: Record) {
        self.source.recycle(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Array, ArrayData, Channel, ChannelKind, Composition, DType, Value};

    struct Listed {
        header: Header,
        records: VecDeque<Record>,
        pulled: usize,
    }

    impl Iterator for Listed {
        type Item = Result<Record, ReadError>;
        fn next(&mut self) -> Option<Self::Item> {
            self.pulled += 1;
            self.records.pop_front().map(Ok)
        }
    }

    impl Source for Listed {
        fn header(&self) -> &Header {
            &self.header
        }
        fn findings(&self) -> Vec<(&Path, &Findings)> {
            Vec::new()
        }
        fn progress(&self) -> (u64, u64) {
            (0, 0)
        }
    }

    fn rec(time: i64, channel: u32, values: Vec<(&str, Value)>) -> Record {
        let mut r = Record::new(time, channel);
        r.values = values.into_iter().map(|(k, v)| (k.into(), v)).collect();
        r
    }

    #[test]
    fn undeclared_fields_take_the_first_value_seen_and_records_pass_unchanged() {
        let mut header = Header::new("test", "1");
        let mut body = Channel::new("body", ChannelKind::Signals, Composition::SampleHold);
        body.fields = vec![FieldSpec::new("x").with_unit("m")];
        header.add_channel(body);
        let v = Value::Array(Array::flat(ArrayData::F32(vec![1.0, 2.0, 3.0])));
        let records: VecDeque<Record> = (0..100)
            .map(|i| match i {
                0 => rec(0, 0, vec![("x", Value::Float(0.0))]),
                2 => rec(2, 0, vec![("x", Value::Int(7)), ("v", v.clone())]),
                _ => rec(i, 0, vec![("x", Value::Float(i as f64))]),
            })
            .collect();
        let mut source = Listed {
            header,
            records: records.clone(),
            pulled: 0,
        };
        let mut completed = Completed::new(&mut source);
        let fields = &completed.header().channels[0].fields;
        assert_eq!(
            fields[0],
            FieldSpec::typed("x", DType::F64, &[]).with_unit("m")
        );
        assert_eq!(fields[1], FieldSpec::typed("v", DType::F32, &[3]));
        let out: Vec<Record> = completed.by_ref().map(Result::unwrap).collect();
        assert_eq!(out, Vec::from(records));
    }

    #[test]
    fn a_complete_declaration_is_not_read_ahead() {
        let mut header = Header::new("test", "1");
        let mut body = Channel::new("body", ChannelKind::Signals, Composition::SampleHold);
        body.fields = vec![FieldSpec::typed("x", DType::F64, &[])];
        header.add_channel(body);
        let mut source = Listed {
            header,
            records: (0..10)
                .map(|i| rec(i, 0, vec![("x", Value::Float(1.0))]))
                .collect(),
            pulled: 0,
        };
        let completed = Completed::new(&mut source);
        assert_eq!(completed.held.len(), 0);
        drop(completed);
        assert_eq!(source.pulled, 0);
    }

    #[test]
    fn the_look_ahead_stops_at_its_budget_when_a_channel_never_shows() {
        let mut header = Header::new("test", "1");
        for name in ["often", "never"] {
            header.add_channel(Channel::new(
                name,
                ChannelKind::Signals,
                Composition::SampleHold,
            ));
        }
        let mut source = Listed {
            header,
            records: (0..(MAX_RECORDS as i64 + 10))
                .map(|i| rec(i, 0, vec![("x", Value::Float(1.0))]))
                .collect(),
            pulled: 0,
        };
        let completed = Completed::new(&mut source);
        assert_eq!(completed.held.len(), MAX_RECORDS);
        assert!(completed.header().channels[1].fields.is_empty());
        drop(completed);
        assert_eq!(source.pulled, MAX_RECORDS);
    }
}
