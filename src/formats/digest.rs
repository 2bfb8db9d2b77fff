//! SHA-256 of a byte stream, on a thread of its own for long streams: with SHA-NI the digest
//! runs at the same order of speed as reading and checking an Icarus recording, so on two
//! cores the two overlap instead of adding up (docs/performance.md, "Icarus `.icarec`").

use std::convert::Infallible;
use std::sync::mpsc::{sync_channel, Receiver};

use sha2::{Digest, Sha256};

use super::worker::Worker;

/// Bytes handed to the thread at a time.
const CHUNK: usize = 1 << 20;
/// Streams shorter than this are hashed inline: a thread costs more than it saves.
pub const THREAD_FROM: u64 = 8 << 20;

/// The running digest of a stream.
pub struct StreamDigest {
    state: State,
}

enum State {
    Inline(Sha256),
    Threaded {
        /// Bytes not yet handed over.
        buf: Vec<u8>,
        /// Buffers the thread is done with, for reuse.
        back: Receiver<Vec<u8>>,
        thread: Worker<Vec<u8>, Sha256, Infallible>,
    },
}

impl StreamDigest {
    /// A digest for a stream of `len` bytes: threaded when it is long (and a thread can be
    /// started), inline otherwise.
    pub fn for_len(len: u64) -> StreamDigest {
        if len < THREAD_FROM {
            return StreamDigest::inline();
        }
        // Two chunks queued and one being hashed: at most about 4 MiB held.
        let (to_main, back) = sync_channel::<Vec<u8>>(4);
        let spawned = Worker::spawn("sha256", 2, move |chunks: Receiver<Vec<u8>>| {
            let mut hasher = Sha256::new();
            for chunk in chunks {
                hasher.update(&chunk);
                // The main thread may have stopped taking buffers back: they are dropped.
                let _ = to_main.try_send(chunk);
            }
            Ok(hasher)
        });
        match spawned {
            Ok(thread) => StreamDigest {
                state: State::Threaded {
                    buf: Vec::with_capacity(CHUNK),
                    back,
                    thread,
                },
            },
            Err(_) => StreamDigest::inline(),
        }
    }

    pub fn inline() -> StreamDigest {
        StreamDigest {
            state: State::Inline(Sha256::new()),
        }
    }

    pub fn update(&mut self, bytes: &[u8]) {
        match &mut self.state {
            State::Inline(h) => h.update(bytes),
            State::Threaded { buf, back, thread } => {
                buf.extend_from_slice(bytes);
                if buf.len() >= CHUNK {
                    let next = back.try_recv().map_or_else(
                        |_| Vec::with_capacity(CHUNK),
                        |mut b| {
                            b.clear();
                            b
                        },
                    );
                    let full = std::mem::replace(buf, next);
                    // A thread that is gone is found at `finalize`.
                    let _ = thread.send(full);
                }
            }
        }
    }

    /// The digest of every byte given. `None` only if the hashing thread died.
    pub fn finalize(self) -> Option<[u8; 32]> {
        let hasher = match self.state {
            State::Inline(h) => h,
            State::Threaded {
                buf, mut thread, ..
            } => {
                let _ = thread.send(buf);
                thread.finish().ok()?
            }
        };
        Some(hasher.finalize().into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threaded_and_inline_digests_are_sha256() {
        // Uneven pieces across several chunks, and an empty stream.
        let data: Vec<u8> = (0..(3 * CHUNK + 12345))
            .map(|i| (i * 31 % 251) as u8)
            .collect();
        let want: [u8; 32] = Sha256::digest(&data).into();
        for mut d in [StreamDigest::for_len(THREAD_FROM), StreamDigest::inline()] {
            for piece in data.chunks(1608) {
                d.update(piece);
            }
            assert_eq!(d.finalize(), Some(want));
        }
        let empty: [u8; 32] = Sha256::digest([]).into();
        assert_eq!(StreamDigest::for_len(THREAD_FROM).finalize(), Some(empty));
    }
}
