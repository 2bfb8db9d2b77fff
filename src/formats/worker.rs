//! One background thread fed through a bounded channel, for the writers and digests that
//! hand work to a thread of their own (MCAP, the Parquet table's one-thread encoder, the
//! threaded SHA-256), and [`ahead`], a thread that produces ahead of its reader (Parquet
//! decoding). Shutdown, errors and back-pressure live here:
//!
//! - the channel's bound is the back-pressure: [`Worker::send`] waits while it is full;
//! - [`Worker::finish`] ends the input, joins, and returns what the worker returned;
//! - a worker that stopped early (its own error, or a panic) makes the next `send` fail
//!   with that error, which is the one to report;
//! - dropping a `Worker` unfinished (an error elsewhere) ends its input and joins it, so
//!   no thread outlives its writer.

use std::io;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Why a worker gave no result.
#[derive(Debug, PartialEq, Eq)]
pub enum Stopped<E> {
    /// It returned this error.
    Failed(E),
    /// It panicked.
    Panicked,
    /// It ended without error but before its input did, or it was already finished.
    Gone,
}

/// A thread running `work` over the items sent to it, returning `Result<R, E>` at the end.
pub struct Worker<In, R, E> {
    inbox: Option<SyncSender<In>>,
    thread: Option<JoinHandle<Result<R, E>>>,
}

impl<In: Send + 'static, R: Send + 'static, E: Send + 'static> Worker<In, R, E> {
    /// Starts `work` on a thread named `name`; at most `capacity` items wait for it (0: each
    /// `send` waits until the worker takes the item). `work` ends when its receiver ends
    /// (every item taken, the `Worker` finished or dropped) or when it returns early.
    pub fn spawn(
        name: &str,
        capacity: usize,
        work: impl FnOnce(Receiver<In>) -> Result<R, E> + Send + 'static,
    ) -> io::Result<Self> {
        let (inbox, items) = sync_channel(capacity);
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || work(items))?;
        Ok(Worker {
            inbox: Some(inbox),
            thread: Some(thread),
        })
    }

    /// Hands `item` over, waiting while the channel is full. If the worker has stopped, it
    /// is joined and its error (or panic) returned.
    #[inline]
    pub fn send(&mut self, item: In) -> Result<(), Stopped<E>> {
        let sent = self.inbox.as_ref().map(|inbox| inbox.send(item));
        match sent {
            Some(Ok(())) => Ok(()),
            _ => Err(match self.finish() {
                Ok(_) => Stopped::Gone,
                Err(stopped) => stopped,
            }),
        }
    }

    /// Ends the input and waits for the worker: what it returned. A second call is
    /// [`Stopped::Gone`].
    pub fn finish(&mut self) -> Result<R, Stopped<E>> {
        self.inbox = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(Ok(r))) => Ok(r),
            Some(Ok(Err(e))) => Err(Stopped::Failed(e)),
            Some(Err(_)) => Err(Stopped::Panicked),
            None => Err(Stopped::Gone),
        }
    }
}

impl<In, R, E> Drop for Worker<In, R, E> {
    fn drop(&mut self) {
        self.inbox = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Runs `items` on a thread named `name`, at most `capacity` of them made ahead of the
/// receiver. The thread ends after the last item, or once the receiver is dropped (after
/// making at most one more item): a reader that stops early leaves nothing running for
/// long. The receiver ends (`recv` fails) after the last item or if the thread panicked.
pub fn ahead<T: Send + 'static>(
    name: &str,
    capacity: usize,
    items: impl Iterator<Item = T> + Send + 'static,
) -> io::Result<Receiver<T>> {
    let (tx, rx) = sync_channel(capacity);
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            for item in items {
                if tx.send(item).is_err() {
                    return;
                }
            }
        })?;
    Ok(rx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_returns_its_result_at_finish() {
        let mut w = Worker::spawn("sum", 1, |items: Receiver<u64>| {
            Ok::<u64, String>(items.iter().sum())
        })
        .unwrap();
        for i in 1..=100 {
            w.send(i).unwrap();
        }
        assert_eq!(w.finish(), Ok(5050));
        assert_eq!(w.finish(), Err(Stopped::Gone));
    }

    #[test]
    fn a_worker_that_stops_reports_its_error_at_the_next_send() {
        let mut w = Worker::spawn("fails", 0, |items: Receiver<u32>| {
            for i in items {
                if i == 3 {
                    return Err(format!("item {i}"));
                }
            }
            Ok(())
        })
        .unwrap();
        let mut sent = 0;
        let err = loop {
            match w.send(sent) {
                Ok(()) => sent += 1,
                Err(e) => break e,
            }
        };
        assert_eq!(err, Stopped::Failed("item 3".to_string()));
        assert!(sent >= 4);
    }

    #[test]
    fn a_panic_is_an_error_and_a_dropped_worker_ends() {
        let mut w = Worker::spawn("panics", 0, |items: Receiver<u32>| -> Result<(), ()> {
            if items.recv().is_ok() {
                panic!("worker panics on purpose");
            }
            Ok(())
        })
        .unwrap();
        // Taken by the worker, which panics; the next item finds it gone.
        assert_eq!(w.send(1), Ok(()));
        assert_eq!(w.send(2), Err(Stopped::Panicked));
        assert_eq!(w.finish(), Err(Stopped::Gone));
        let idle = Worker::spawn("idle", 4, |items: Receiver<u32>| {
            Ok::<usize, ()>(items.iter().count())
        })
        .unwrap();
        drop(idle);
    }

    #[test]
    fn ahead_makes_items_in_order_and_stops_when_the_receiver_goes() {
        let rx = ahead("count", 2, 0..10u32).unwrap();
        assert_eq!(rx.iter().collect::<Vec<_>>(), (0..10).collect::<Vec<_>>());
        let rx = ahead("endless", 1, 0u64..).unwrap();
        assert_eq!(rx.recv(), Ok(0));
        drop(rx);
    }
}
