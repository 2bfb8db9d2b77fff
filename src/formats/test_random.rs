//! Numbers for the unit tests that sweep many cases: the same on every run (xorshift64,
//! from a seed), without a dependency for it.

/// A generator of 64-bit numbers from `seed` (not zero).
pub fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}
