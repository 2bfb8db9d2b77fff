//! `%.15g` per value: simrec's formatter against C's `snprintf("%.15g")` (glibc, through the
//! libc crate: in this benchmark only) and the standard library's exact `{:.14e}` (what a
//! formatter built on it would pay before any reformatting), on three kinds of doubles:
//!
//! - computed: results of arithmetic, which need 16 or 17 digits (the usual simulation value);
//! - short: values read from a `%.15g` text (an Icarus CSV round trip), 15 digits or fewer;
//! - bits: random bit patterns (every exponent, NaN and infinities included).
//!
//! Usage: cargo run --release --example g15_speed [N]   (N values per kind, default 2 000 000)

use std::hint::black_box;
use std::io::Write;

use simrec::formats::icarus::csv::G15;

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn c_g15(x: f64, buf: &mut [u8; 64]) -> usize {
    // SAFETY: 64-byte buffer, and the format takes one double.
    unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), c"%.15g".as_ptr(), x) as usize }
}

/// This thread's CPU time in nanoseconds: on a shared machine, wall time counts the other
/// processes' turns too.
fn cpu_ns() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 * 1e9 + t.tv_nsec as f64
}

/// CPU nanoseconds per value of `f` over `values` (best of 5).
fn time(values: &[f64], mut f: impl FnMut(f64) -> usize) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..5 {
        let start = cpu_ns();
        let mut total = 0usize;
        for &x in values {
            total += f(x);
        }
        black_box(total);
        best = best.min((cpu_ns() - start) / values.len() as f64);
    }
    best
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let computed: Vec<f64> = (0..n)
        .map(|i| (rng.unit() - 0.5) * 2000.0 * (1.0 + i as f64).sqrt())
        .collect();
    let short: Vec<f64> = computed
        .iter()
        .map(|&x| G15::new(x).as_str().parse().unwrap_or(0.0))
        .collect();
    let bits: Vec<f64> = (0..n).map(|_| f64::from_bits(rng.next())).collect();
    // The outputs agree (the test suite checks this exhaustively; here a cheap guard).
    let mut buf = [0u8; 64];
    for &x in computed.iter().take(1000) {
        let len = c_g15(x, &mut buf);
        assert_eq!(G15::new(x).as_bytes(), &buf[..len]);
    }
    println!("{n} values per kind; CPU ns per value (best of 5)");
    println!(
        "{:<10} {:>8} {:>10} {:>10}",
        "kind", "simrec", "snprintf", "std {:.14e}"
    );
    for (name, values) in [("computed", &computed), ("short", &short), ("bits", &bits)] {
        let ours = time(values, |x| G15::new(x).as_bytes().len());
        let mut cbuf = [0u8; 64];
        let c = time(values, |x| c_g15(x, &mut cbuf));
        let mut sbuf = [0u8; 64];
        let std = time(values, |x| {
            let mut cursor = std::io::Cursor::new(&mut sbuf[..]);
            let _ = write!(cursor, "{x:.14e}");
            cursor.position() as usize
        });
        let mut rbuf = ryu::Buffer::new();
        let ryu_only = time(values, |x| rbuf.format(x).len());
        println!("{name:<10} {ours:>8.1} {c:>10.1} {std:>10.1}   (ryu alone {ryu_only:.1})");
    }
}
