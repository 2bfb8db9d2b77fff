//! The pull loop of a stage that makes records of its own from its source's (a mapping,
//! resampling): each source record may make any number, and the source's end may make
//! more; they wait in a queue and are handed on in order.

use std::collections::VecDeque;

use crate::formats::ReadError;
use crate::model::Record;

/// Records made and not yet handed on, and whether the source ended.
#[derive(Debug, Default)]
pub struct Queue {
    pub out: VecDeque<Record>,
    ended: bool,
}

pub trait Queued {
    fn queue(&mut self) -> &mut Queue;
    /// The source's next record.
    fn pull(&mut self) -> Option<Result<Record, ReadError>>;
    /// Makes (queues) the records of one source record.
    fn take(&mut self, record: Record);
    /// Makes the records due when the source has ended.
    fn end(&mut self);
}

/// The stage's next record: queued ones first, then what the source's next records make;
/// a read error is handed on and ends the stage.
pub fn next_queued(stage: &mut impl Queued) -> Option<Result<Record, ReadError>> {
    loop {
        if let Some(record) = stage.queue().out.pop_front() {
            return Some(Ok(record));
        }
        if stage.queue().ended {
            return None;
        }
        match stage.pull() {
            Some(Ok(record)) => stage.take(record),
            Some(Err(e)) => {
                stage.queue().ended = true;
                return Some(Err(e));
            }
            None => {
                stage.end();
                stage.queue().ended = true;
            }
        }
    }
}
