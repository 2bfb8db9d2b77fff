//! simrec's `%.15g` against C's own `printf("%.15g")` (glibc's `snprintf` through the libc
//! crate, in this test only): random f64 bit patterns, then the values where rounding is
//! hardest (exact ties at the 16th digit, subnormals, powers of ten and their neighbours).

use std::ffi::CStr;

use proptest::prelude::*;
use simrec::formats::icarus::csv::{survives, G15};

fn c_g15(x: f64) -> String {
    let mut buf = [0u8; 64];
    // SAFETY: the buffer is 64 bytes and snprintf writes at most that many, NUL included;
    // the format takes exactly one double.
    unsafe {
        libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), c"%.15g".as_ptr(), x);
    }
    CStr::from_bytes_until_nul(&buf)
        .unwrap()
        .to_str()
        .unwrap()
        .to_string()
}

fn check(x: f64) {
    let ours = G15::new(x);
    let c = c_g15(x);
    assert_eq!(ours.as_str(), c, "bits {:#018x}", x.to_bits());
    // Survival: the text reads back to the same double (NaN to NaN).
    let back: f64 = match c.trim_start_matches('-') {
        "nan" => f64::NAN,
        _ => c.parse().unwrap(),
    };
    let same = (back.is_nan() && x.is_nan()) || back.to_bits() == x.to_bits();
    assert_eq!(ours.exact(), same, "{c} for bits {:#018x}", x.to_bits());
    assert_eq!(survives(x), same, "{c}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200_000, ..ProptestConfig::default() })]

    #[test]
    fn random_bit_patterns(bits in any::<u64>()) {
        check(f64::from_bits(bits));
    }

    #[test]
    fn integers_around_2_pow_53(n in 0u64..(1 << 55)) {
        check(n as f64);
        check(-(n as f64));
    }

    #[test]
    fn halves_and_quarters_with_sixteen_digits(n in (1u64 << 48)..(1u64 << 52), shift in 0i32..8) {
        // n / 2^shift: exact binary values whose 16th and 17th digits are often exactly 5 or 50.
        check(n as f64 / f64::from(1u32 << shift));
    }

    #[test]
    fn short_decimals_survive(m in 1i64..1_000_000_000_000_000, e in -320i32..300) {
        let x: f64 = format!("{m}e{e}").parse().unwrap();
        check(x);
    }
}

#[test]
fn powers_of_ten_and_their_neighbours() {
    for e in -324..=308 {
        let x: f64 = format!("1e{e}").parse().unwrap();
        for y in [
            x,
            f64::from_bits(x.to_bits().wrapping_sub(1)),
            f64::from_bits(x.to_bits() + 1),
        ] {
            check(y);
            check(-y);
        }
    }
    for bits in 0..10_000u64 {
        check(f64::from_bits(bits)); // the smallest subnormals
        check(f64::from_bits(0x0010_0000_0000_0000 - bits)); // the largest
    }
    for x in [
        f64::MAX,
        f64::MIN_POSITIVE,
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
    ] {
        check(x);
    }
}
