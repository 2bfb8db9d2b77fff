//! Threads (as many as [`decoding_threads`]) that decode the batches of a replay's small
//! Parquet files ahead of their reader. A replay walks all its archetype files at once,
//! tick by tick; a decoding thread per file (with its own batches ahead and its own
//! allocator heap) cost more memory than the files themselves (docs/performance.md, "Lake,
//! fourth pass"), while threads serving them all keep decoding beside the reading thread.
//!
//! A thread decodes, for the file with the fewest batches waiting, one batch at a time,
//! while some file has fewer than [`AHEAD`] waiting; the reader takes a file's batches in
//! order. A file dropped unfinished is forgotten; dropping the pool ends the threads. Once
//! a thread has panicked, a file with no batch waiting gives an error.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use arrow_array::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReader;

use super::parquet_in::decoding_threads;

/// Batches decoded ahead per file.
const AHEAD: usize = 2;

/// A batch, an error, or the end (`None`).
pub type Decoded = Option<Result<RecordBatch, String>>;

struct Slot {
    /// `None` while its batch is being decoded, after its last batch, or once dropped.
    reader: Option<Box<ParquetRecordBatchReader>>,
    waiting: VecDeque<Decoded>,
    /// The last batch (or an error) was decoded, or the file was dropped.
    ended: bool,
}

#[derive(Default)]
struct State {
    files: Vec<Slot>,
    /// The pool was dropped.
    closed: bool,
    /// A thread ended (closed, or a panic).
    stopped: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// A file was added or a batch taken: there may be work.
    to_decoder: Condvar,
    /// A batch is waiting, or the thread stopped.
    to_readers: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing is decoded under the lock, so a panic cannot leave the state half-changed.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The decoding threads of one replay, started with its first file.
#[derive(Default)]
pub struct DecodePool {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

/// One file's place in the pool.
pub struct Pooled {
    shared: Arc<Shared>,
    id: usize,
}

impl DecodePool {
    /// Hands `reader` to the decoding threads (started now if they are not yet).
    pub fn add(&mut self, reader: ParquetRecordBatchReader) -> std::io::Result<Pooled> {
        while self.threads.len() < decoding_threads() {
            let shared = Arc::clone(&self.shared);
            self.threads.push(
                std::thread::Builder::new()
                    .name("parquet-decode".into())
                    .spawn(move || decode(&shared))?,
            );
        }
        let mut state = self.shared.lock();
        state.files.push(Slot {
            reader: Some(Box::new(reader)),
            waiting: VecDeque::new(),
            ended: false,
        });
        let id = state.files.len() - 1;
        drop(state);
        self.shared.to_decoder.notify_one();
        Ok(Pooled {
            shared: Arc::clone(&self.shared),
            id,
        })
    }
}

impl Drop for DecodePool {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.to_decoder.notify_all();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

impl Pooled {
    /// The file's next batch (`Some(None)` after its last); `None` if a thread stopped
    /// first.
    pub fn recv(&mut self) -> Option<Decoded> {
        let mut state = self.shared.lock();
        loop {
            let slot = &mut state.files[self.id];
            if let Some(item) = slot.waiting.pop_front() {
                drop(state);
                self.shared.to_decoder.notify_one();
                return Some(item);
            }
            if slot.ended {
                return Some(None);
            }
            if state.stopped {
                return None;
            }
            state = self
                .shared
                .to_readers
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        let slot = &mut state.files[self.id];
        slot.ended = true;
        slot.waiting.clear();
        // A reader being decoded is dropped by its thread when it sees `ended`.
        slot.reader = None;
    }
}

/// Marks a thread stopped however it ends, so that no reader waits for it forever.
struct Stopped<'a>(&'a Shared);

impl Drop for Stopped<'_> {
    fn drop(&mut self) {
        self.0.lock().stopped = true;
        self.0.to_readers.notify_all();
    }
}

/// A thread: decodes a batch of the neediest file until the pool is dropped.
fn decode(shared: &Shared) {
    let _stopped = Stopped(shared);
    let mut state = shared.lock();
    loop {
        if state.closed {
            return;
        }
        let next = state
            .files
            .iter()
            .enumerate()
            .filter(|(_, s)| s.reader.is_some() && s.waiting.len() < AHEAD)
            .min_by_key(|(_, s)| s.waiting.len())
            .map(|(i, _)| i);
        let Some(i) = next else {
            state = shared
                .to_decoder
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        };
        let Some(mut reader) = state.files[i].reader.take() else {
            continue;
        };
        drop(state);
        let item = reader.next().map(|r| r.map_err(|e| e.to_string()));
        state = shared.lock();
        let slot = &mut state.files[i];
        if slot.ended {
            // Dropped while this batch was decoded.
            continue;
        }
        if matches!(item, Some(Ok(_))) {
            slot.reader = Some(reader);
        } else {
            slot.ended = true;
        }
        slot.waiting.push_back(item);
        shared.to_readers.notify_all();
    }
}
