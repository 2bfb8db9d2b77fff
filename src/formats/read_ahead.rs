//! A source read on a thread of its own ([`worker::ahead`]), a batch of records ahead of
//! its caller: reading and decoding overlap the writer's work on another core. Records
//! come back by [`Source::recycle`] and are freed on the reading thread, which made them.
//! What the caller asks of the source while it runs (header, findings, progress) is as of
//! the last batch received; once the last record is taken, the source itself answers.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender};

use super::worker;
use super::{ReadError, Source};
use crate::model::{Header, Record};
use crate::report::{Fact, Findings, Severity};

/// Records a batch holds: enough that the channel's cost per record is small, few enough
/// that the batches in flight hold little memory.
const BATCH: usize = 256;
/// Batches made ahead of the caller, besides the one it reads.
const AHEAD: usize = 2;

/// A source read on a thread of its own.
pub struct ReadAhead<S: Source + Send + 'static> {
    batches: Receiver<Made<S>>,
    batch: std::vec::IntoIter<Result<Record, ReadError>>,
    /// Records handed back, sent to the reading thread to be freed a batch at a time.
    spent: Vec<Record>,
    free: Sender<Vec<Record>>,
    header: Header,
    findings: Vec<(PathBuf, Findings)>,
    progress: (u64, u64),
    /// The source, once its last record was taken.
    done: Option<S>,
    /// The reading thread stopped without giving the source back.
    stopped: bool,
}

/// What the reading thread sends: batches, then the source.
enum Made<S> {
    Batch {
        items: Vec<Result<Record, ReadError>>,
        progress: (u64, u64),
        /// The header, if it grew, and the findings, if there are more.
        header: Option<Box<Header>>,
        findings: Option<Vec<(PathBuf, Findings)>>,
    },
    End(S),
}

impl<S: Source + Send + 'static> ReadAhead<S> {
    /// Starts reading `source` on a thread named `name`.
    pub fn spawn(name: &str, source: S) -> std::io::Result<ReadAhead<S>> {
        let header = source.header().clone();
        let findings = owned(source.findings());
        let progress = source.progress();
        let (free, freed) = channel();
        let made = Batches {
            channels: header.channels.len(),
            found: found(&findings_of(&source)),
            source: Some(source),
            freed,
            ended: false,
        };
        Ok(ReadAhead {
            batches: worker::ahead(name, AHEAD, made)?,
            batch: Vec::new().into_iter(),
            spent: Vec::with_capacity(BATCH),
            free,
            header,
            findings,
            progress,
            done: None,
            stopped: false,
        })
    }
}

fn owned(findings: Vec<(&Path, &Findings)>) -> Vec<(PathBuf, Findings)> {
    (findings.into_iter())
        .map(|(p, f)| (p.to_path_buf(), f.clone()))
        .collect()
}

fn findings_of<S: Source>(source: &S) -> Vec<&Findings> {
    source.findings().into_iter().map(|(_, f)| f).collect()
}

/// How many findings there are, to know whether they changed.
fn found(findings: &[&Findings]) -> u64 {
    let severities = [Severity::Info, Severity::Warning, Severity::Error];
    (findings.iter())
        .flat_map(|f| severities.map(|s| f.count(s)))
        .sum()
}

/// The reading thread's side: the source, made into batches.
struct Batches<S> {
    source: Option<S>,
    freed: Receiver<Vec<Record>>,
    /// Channels and findings as of the last batch.
    channels: usize,
    found: u64,
    ended: bool,
}

impl<S: Source> Iterator for Batches<S> {
    type Item = Made<S>;

    fn next(&mut self) -> Option<Made<S>> {
        // The records handed back are freed here, off the caller's thread.
        while let Ok(records) = self.freed.try_recv() {
            drop(records);
        }
        if self.ended {
            return self.source.take().map(Made::End);
        }
        let source = self.source.as_mut()?;
        let mut items = Vec::with_capacity(BATCH);
        while items.len() < BATCH {
            match source.next() {
                Some(item) => items.push(item),
                None => {
                    self.ended = true;
                    break;
                }
            }
        }
        let header = source.header();
        let header = (header.channels.len() != self.channels).then(|| {
            self.channels = header.channels.len();
            Box::new(header.clone())
        });
        let found = found(&findings_of(source));
        let findings = (found != self.found).then(|| {
            self.found = found;
            owned(source.findings())
        });
        Some(Made::Batch {
            items,
            progress: source.progress(),
            header,
            findings,
        })
    }
}

impl<S: Source + Send + 'static> Iterator for ReadAhead<S> {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.batch.next() {
                return Some(item);
            }
            if self.done.is_some() {
                return None;
            }
            match self.batches.recv() {
                Ok(Made::Batch {
                    items,
                    progress,
                    header,
                    findings,
                }) => {
                    self.batch = items.into_iter();
                    self.progress = progress;
                    if let Some(header) = header {
                        self.header = *header;
                    }
                    if let Some(findings) = findings {
                        self.findings = findings;
                    }
                }
                Ok(Made::End(source)) => {
                    self.header = source.header().clone();
                    self.progress = source.progress();
                    self.done = Some(source);
                }
                // The reading thread panicked: said once, as an error of the input.
                Err(_) => {
                    let mut e =
                        ReadError::from(std::io::Error::other("its reading thread stopped"));
                    if let Some((path, _)) = self.findings.first() {
                        e = e.in_file(path);
                    }
                    return (!std::mem::replace(&mut self.stopped, true)).then_some(Err(e));
                }
            }
        }
    }
}

impl<S: Source + Send + 'static> Source for ReadAhead<S> {
    fn header(&self) -> &Header {
        &self.header
    }

    fn findings(&self) -> Vec<(&Path, &Findings)> {
        match &self.done {
            Some(source) => source.findings(),
            None => (self.findings.iter())
                .map(|(p, f)| (p.as_path(), f))
                .collect(),
        }
    }

    fn progress(&self) -> (u64, u64) {
        self.progress
    }

    fn facts(&self) -> Vec<Fact> {
        self.done.as_ref().map(S::facts).unwrap_or_default()
    }

    fn recycle(&mut self, record: Record) {
        self.spent.push(record);
        if self.spent.len() == BATCH {
            let spent = std::mem::replace(&mut self.spent, Vec::with_capacity(BATCH));
            // The reading thread may have ended: the records are freed here then.
            let _ = self.free.send(spent);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Channel, ChannelKind, Composition};
    use crate::report::Finding;

    /// Records at times 0.., a channel added at the 300th and a finding at every 100th.
    struct Counting {
        header: Header,
        findings: Findings,
        next: i64,
        end: i64,
    }

    impl Iterator for Counting {
        type Item = Result<Record, ReadError>;
        fn next(&mut self) -> Option<Self::Item> {
            let t = self.next;
            if t == self.end {
                return None;
            }
            self.next += 1;
            if t == 300 {
                let channel = Channel::new("late", ChannelKind::Signals, Composition::SampleHold);
                self.header.add_channel(channel);
            }
            if t % 100 == 0 {
                self.findings
                    .push(Finding::new(Severity::Warning, "W", "w").at(t as u64, t as u64));
            }
            Some(Ok(Record::new(t, u32::from(t >= 300))))
        }
    }

    impl Source for Counting {
        fn header(&self) -> &Header {
            &self.header
        }
        fn findings(&self) -> Vec<(&Path, &Findings)> {
            vec![(Path::new("in"), &self.findings)]
        }
        fn progress(&self) -> (u64, u64) {
            (self.next as u64, self.end as u64)
        }
    }

    #[test]
    fn records_come_in_order_with_the_header_and_findings_of_their_batch() {
        let mut header = Header::new("test", "1");
        let first = Channel::new("first", ChannelKind::Signals, Composition::SampleHold);
        header.add_channel(first);
        let source = Counting {
            header,
            findings: Findings::default(),
            next: 0,
            end: 1000,
        };
        let mut ahead = ReadAhead::spawn("test-read", source).unwrap();
        let mut t = 0;
        while let Some(record) = ahead.next() {
            let record = record.unwrap();
            assert_eq!(record.time, t);
            // A record's channel is in the header when the record comes.
            assert!((record.channel as usize) < ahead.header().channels.len());
            let (_, findings) = ahead.findings()[0];
            assert!(findings.count(Severity::Warning) as i64 > t / 100);
            ahead.recycle(record);
            t += 1;
        }
        assert_eq!(t, 1000);
        assert_eq!(ahead.progress(), (1000, 1000));
        assert_eq!(ahead.findings()[0].1.count(Severity::Warning), 10);
        assert!(ahead.next().is_none());
    }

    #[test]
    fn a_reader_dropped_early_leaves_its_thread_to_end() {
        let source = Counting {
            header: Header::new("test", "1"),
            findings: Findings::default(),
            next: 0,
            end: i64::MAX,
        };
        let mut ahead = ReadAhead::spawn("test-read", source).unwrap();
        assert!(ahead.next().is_some());
        drop(ahead);
    }
}
