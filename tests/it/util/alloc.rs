//! The test binary's allocator: the binary's (mimalloc), counting what each thread
//! allocates, for the tests that bound the memory a read takes (DESIGN invariants 3 and 4).
//! The library's code runs on the allocator it runs on in `simrec`, and the suite's
//! allocations cost what they cost there (docs/performance.md, "Build").
//!
//! Tests run side by side, each on a thread of its own. Counting per thread keeps another
//! test's allocations out of a measurement without a lock between tests; in exchange, what
//! a measured closure hands to a thread of its own is not counted (the readers measured here
//! read on the calling thread).

use std::alloc::{GlobalAlloc, Layout};

use mimalloc::MiMalloc;
use std::cell::Cell;

/// What one thread has allocated.
#[derive(Clone, Copy)]
struct Counts {
    /// Bytes allocated and not yet freed by this thread (negative when it frees what
    /// another thread allocated).
    held: isize,
    /// The most `held` has been since the current measurement began.
    peak: isize,
    /// The largest single allocation since then.
    largest: usize,
    /// Allocations and reallocations since then.
    allocations: u64,
}

thread_local! {
    // A const initialiser and no destructor: reaching it never allocates, so the allocator
    // cannot re-enter itself through it.
    static COUNTS: Cell<Counts> = const {
        Cell::new(Counts { held: 0, peak: 0, largest: 0, allocations: 0 })
    };
}

/// Notes an allocation of `size` bytes (0 for a free) that changes what the thread holds by
/// `change`.
fn note(size: usize, change: isize) {
    // `try_with`: an allocation while the thread's locals are torn down goes uncounted
    // rather than panicking inside the allocator.
    let _ = COUNTS.try_with(|c| {
        let mut n = c.get();
        n.held += change;
        n.peak = n.peak.max(n.held);
        if size > 0 {
            n.largest = n.largest.max(size);
            n.allocations += 1;
        }
        c.set(n);
    });
}

struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size(), layout.size() as isize);
        unsafe { MiMalloc.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(0, -(layout.size() as isize));
        unsafe { MiMalloc.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size, new_size as isize - layout.size() as isize);
        unsafe { MiMalloc.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What a measured closure allocated on the calling thread.
#[derive(Debug, Clone, Copy)]
pub struct Allocated {
    /// The most bytes it held at once, beyond those held when it began.
    pub peak: usize,
    /// Its largest single allocation (a reallocation counts with its new size).
    pub largest: usize,
    /// How many allocations and reallocations it made.
    pub allocations: u64,
}

/// What `f` returns, and what it allocated on this thread. Measurements do not nest.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, Allocated) {
    let start = COUNTS.with(|c| {
        let mut n = c.get();
        n.peak = n.held;
        n.largest = 0;
        n.allocations = 0;
        c.set(n);
        n.held
    });
    let out = f();
    let n = COUNTS.with(Cell::get);
    let allocated = Allocated {
        peak: (n.peak - start).max(0) as usize,
        largest: n.largest,
        allocations: n.allocations,
    };
    (out, allocated)
}
