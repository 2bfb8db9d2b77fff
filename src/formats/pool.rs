//! Several threads running one function over jobs from one bounded queue, for the writers
//! that spread their work over cores (the JSON text of records, Elodin's row groups); the
//! one-thread case is [`super::worker`]. Shutdown, errors and back-pressure live here:
//!
//! - the queue's bound is the back-pressure: [`Pool::submit`] waits while it is full, so at
//!   most `threads + queue` jobs wait or run;
//! - results come back in the order the jobs were submitted ([`Pool::next_result`]), each job's
//!   own: a job that returns an error is that job's result, so the caller meets the first
//!   error in submission order, and a job that panicked is [`Panicked`] in its place (the
//!   thread goes on with the next job);
//! - results wait until taken: a caller bounds its memory by taking them
//!   ([`Pool::outstanding`]);
//! - dropping a `Pool` ends its input and joins its threads, after the jobs already queued.
//!
//! [`Pool::detached`] is the form for work whose results go elsewhere (a table's own file):
//! it keeps no results and can be shared by submitters through [`Submitter`].

use std::collections::BTreeMap;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// A job that panicked: its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Panicked;

/// The threads are gone (every one panicked outside a job, or the pool is shut): the job
/// is handed back, for the caller to run itself or drop.
#[derive(Debug, PartialEq, Eq)]
pub struct Gone<In>(pub In);

type Done<Out> = (u64, Result<Out, Panicked>);

/// `threads` threads running `work` over the jobs submitted, results handed back in order.
pub struct Pool<In, Out> {
    jobs: Option<SyncSender<(u64, In)>>,
    done: Receiver<Done<Out>>,
    threads: Vec<JoinHandle<()>>,
    /// Results that came before their turn.
    ready: BTreeMap<u64, Result<Out, Panicked>>,
    sent: u64,
    taken: u64,
}

impl<In: Send + 'static, Out: Send + 'static> Pool<In, Out> {
    /// Starts `threads` threads named `name` (at least one); at most `queue` jobs wait for a
    /// free thread (0: `submit` waits until a thread takes the job).
    pub fn spawn(
        name: &str,
        threads: usize,
        queue: usize,
        work: impl Fn(In) -> Out + Send + Sync + 'static,
    ) -> io::Result<Self> {
        let (finished, done) = channel();
        let (jobs, threads) = start(name, threads, queue, move |(seq, job)| {
            let out = catch_unwind(AssertUnwindSafe(|| work(job))).map_err(|_| Panicked);
            // The pool was dropped: nobody waits for the result.
            let _ = finished.send((seq, out));
        })?;
        Ok(Pool {
            jobs: Some(jobs),
            done,
            threads,
            ready: BTreeMap::new(),
            sent: 0,
            taken: 0,
        })
    }

    /// Queues `job`, waiting while the queue is full.
    pub fn submit(&mut self, job: In) -> Result<(), Gone<In>> {
        let Some(jobs) = self.jobs.as_ref() else {
            return Err(Gone(job));
        };
        match jobs.send((self.sent, job)) {
            Ok(()) => {
                self.sent += 1;
                Ok(())
            }
            Err(e) => Err(Gone(e.0 .1)),
        }
    }

    /// Jobs submitted whose results were not taken.
    pub fn outstanding(&self) -> usize {
        (self.sent - self.taken) as usize
    }

    /// The result of the oldest job not taken, waiting for it; `None` when none is
    /// outstanding, or when the threads ended without it (they cannot: a job's panic is
    /// caught, so this is a thread that could not run at all).
    pub fn next_result(&mut self) -> Option<Result<Out, Panicked>> {
        if self.outstanding() == 0 {
            return None;
        }
        loop {
            if let Some(out) = self.ready.remove(&self.taken) {
                self.taken += 1;
                return Some(out);
            }
            let (seq, out) = self.done.recv().ok()?;
            self.ready.insert(seq, out);
        }
    }
}

impl<In, Out> Drop for Pool<In, Out> {
    fn drop(&mut self) {
        self.jobs = None;
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

impl<In: Send + 'static> Pool<In, ()> {
    /// Threads as [`spawn`](Self::spawn) starts them, for jobs whose results go elsewhere:
    /// nothing is handed back, so nothing waits to be taken. A job's panic is caught (the
    /// job's own state must say so). The threads end once the pool and every [`Submitter`]
    /// are gone; they are joined by whichever goes last.
    pub fn detached(
        name: &str,
        threads: usize,
        queue: usize,
        work: impl Fn(In) + Send + Sync + 'static,
    ) -> io::Result<Submitter<In>> {
        let (jobs, threads) = start(name, threads, queue, move |job| {
            let _ = catch_unwind(AssertUnwindSafe(|| work(job)));
        })?;
        Ok(Submitter {
            jobs,
            _threads: Arc::new(Joined(Mutex::new(threads))),
        })
    }
}

/// A handle on a detached pool: clones share its threads.
pub struct Submitter<In> {
    jobs: SyncSender<In>,
    _threads: Arc<Joined>,
}

// Derived `Clone` would ask `In: Clone`.
impl<In> Clone for Submitter<In> {
    fn clone(&self) -> Self {
        Submitter {
            jobs: self.jobs.clone(),
            _threads: Arc::clone(&self._threads),
        }
    }
}

impl<In> Submitter<In> {
    /// Queues `job`, waiting while the queue is full.
    pub fn submit(&self, job: In) -> Result<(), Gone<In>> {
        self.jobs.send(job).map_err(|e| Gone(e.0))
    }
}

/// The threads of a detached pool, joined when the last handle goes. Its field drops after
/// the handle's sender (fields drop in order), but another handle's sender may be alive
/// then: only the last `Arc` joins, once every sender is gone.
struct Joined(Mutex<Vec<JoinHandle<()>>>);

impl Drop for Joined {
    fn drop(&mut self) {
        let threads = std::mem::take(self.0.get_mut().unwrap_or_else(|e| e.into_inner()));
        for thread in threads {
            let _ = thread.join();
        }
    }
}

/// `threads` threads named `name` taking jobs from one queue of `queue` and running `run`
/// on each, until the queue's senders are gone.
fn start<J: Send + 'static>(
    name: &str,
    threads: usize,
    queue: usize,
    run: impl Fn(J) + Send + Sync + 'static,
) -> io::Result<(SyncSender<J>, Vec<JoinHandle<()>>)> {
    let (jobs, inbox) = sync_channel::<J>(queue);
    let inbox = Arc::new(Mutex::new(inbox));
    let run = Arc::new(run);
    let mut handles = Vec::with_capacity(threads.max(1));
    for _ in 0..threads.max(1) {
        let inbox = Arc::clone(&inbox);
        let run = Arc::clone(&run);
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || loop {
                // The lock is held while waiting for a job, not while running it; `run`
                // catches panics, so the lock is never poisoned by one.
                let job = inbox.lock().unwrap_or_else(|e| e.into_inner()).recv();
                match job {
                    Ok(job) => run(job),
                    Err(_) => return,
                }
            });
        match handle {
            Ok(h) => handles.push(h),
            Err(e) => {
                drop(jobs);
                for h in handles {
                    let _ = h.join();
                }
                return Err(e);
            }
        }
    }
    Ok((jobs, handles))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn results_come_back_in_submission_order() {
        // Earlier jobs sleep longer, so they finish after later ones.
        let mut pool = Pool::spawn("order", 3, 2, |i: u64| {
            std::thread::sleep(Duration::from_millis(3 * (8 - i % 8)));
            i * 10
        })
        .unwrap();
        let mut got = Vec::new();
        for i in 0..40 {
            pool.submit(i).unwrap();
            if pool.outstanding() > 5 {
                got.push(pool.next_result().unwrap().unwrap());
            }
        }
        while let Some(r) = pool.next_result() {
            got.push(r.unwrap());
        }
        assert_eq!(got, (0..40).map(|i| i * 10).collect::<Vec<_>>());
        assert_eq!(pool.next_result(), None);
    }

    #[test]
    fn an_error_and_a_panic_are_their_jobs_results_and_the_pool_goes_on() {
        let mut pool = Pool::spawn("errors", 2, 0, |i: u32| match i {
            3 => Err(format!("job {i}")),
            5 => panic!("job panics on purpose"),
            _ => Ok(i),
        })
        .unwrap();
        for i in 0..8 {
            pool.submit(i).unwrap();
        }
        let got: Vec<_> = std::iter::from_fn(|| pool.next_result()).collect();
        assert_eq!(got[2], Ok(Ok(2)));
        assert_eq!(got[3], Ok(Err("job 3".to_string())));
        assert_eq!(got[5], Err(Panicked));
        assert_eq!(got[7], Ok(Ok(7)));
        // The first error in order is the one a caller stopping at errors meets.
        let first = got.iter().find(|r| !matches!(r, Ok(Ok(_))));
        assert_eq!(first, Some(&Ok(Err("job 3".to_string()))));
    }

    #[test]
    fn a_full_queue_holds_the_submitter_back() {
        let (release, gate) = std::sync::mpsc::channel::<()>();
        let gate = Mutex::new(gate);
        let started = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&started);
        let mut pool = Pool::spawn("pressure", 1, 1, move |i: u32| {
            counted.fetch_add(1, Ordering::SeqCst);
            let _ = gate.lock().unwrap().recv();
            i
        })
        .unwrap();
        // One job runs (held at the gate), one waits in the queue: a third submit waits.
        pool.submit(0).unwrap();
        pool.submit(1).unwrap();
        let submitter = std::thread::spawn(move || {
            pool.submit(2).unwrap();
            pool
        });
        std::thread::sleep(Duration::from_millis(50));
        assert!(!submitter.is_finished());
        assert_eq!(started.load(Ordering::SeqCst), 1);
        for _ in 0..3 {
            release.send(()).unwrap();
        }
        let mut pool = submitter.join().unwrap();
        let got: Vec<_> = std::iter::from_fn(|| pool.next_result()).collect();
        assert_eq!(got, vec![Ok(0), Ok(1), Ok(2)]);
    }

    #[test]
    fn dropping_a_pool_finishes_the_queued_jobs_and_joins() {
        let ran = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&ran);
        let mut pool = Pool::spawn("shutdown", 2, 4, move |_: u32| {
            std::thread::sleep(Duration::from_millis(2));
            counted.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
        for i in 0..6 {
            pool.submit(i).unwrap();
        }
        drop(pool);
        assert_eq!(ran.load(Ordering::SeqCst), 6);
    }

    #[test]
    fn a_detached_pool_runs_until_its_last_submitter_goes() {
        let ran = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&ran);
        let first = Pool::detached("detached", 1, 0, move |i: usize| {
            if i == 2 {
                panic!("job panics on purpose");
            }
            counted.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
        let second = first.clone();
        for i in 0..3 {
            first.submit(i).unwrap();
        }
        drop(first);
        // The panic was caught: the thread still takes jobs.
        second.submit(3).unwrap();
        drop(second);
        assert_eq!(ran.load(Ordering::SeqCst), 3);
    }
}
