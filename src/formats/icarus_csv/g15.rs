//! C's `%.15g` for f64 (what Icarus's CSV export prints, spec §C1), and whether a value
//! survives it.
//!
//! How: the shortest decimal that reads back to `x` (ryu) is D, with n significant digits.
//! For a normal double, the interval of decimals that read back to `x` is narrower than half
//! a step of the 15-digit grid at `x` (2^-53 relative against at least 5·10^-16), so:
//!
//! - n ≤ 15: D is the 15-digit value nearest to `x`: `%.15g` prints D.
//! - n = 17: no 16-digit decimal reads back to `x`, so the 15-digit rounding midpoint M (a
//!   16-digit decimal) lies outside the interval, and `x` and D are on the same side of it:
//!   rounding D's digits gives `x`'s rounding (D's 16th and 17th digits are never exactly
//!   "50": D's last digit is not 0).
//! - n = 16: D is the 16-digit decimal nearest to `x` (ryu picks the nearest of the
//!   shortest), so M cannot lie strictly between `x` and D; rounding D is right unless D is
//!   M itself (its 16th digit is 5). Then whether `x` is above, below or on M decides, and
//!   the standard library's exact formatting (`{:.14e}`, round-half-even like glibc)
//!   answers. So does it for subnormals, whose interval is wider than the grid.
//!
//! A value survives `%.15g` (reads back to the same double) exactly when n ≤ 15: the
//! 15-digit output is the 15-digit decimal nearest to `x`, and if any 15-digit decimal read
//! back to `x`, that nearest one would too.

use std::io::Write;

/// Longest `%.15g` text: `-1.23456789012346e-308` is 22 bytes.
pub const MAX_LEN: usize = 24;

/// `%.15g` text of one value, on the stack.
#[derive(Clone, Copy)]
pub struct G15 {
    bytes: [u8; MAX_LEN],
    len: u8,
    exact: bool,
}

impl G15 {
    /// `x` as C's `printf("%.15g", x)` prints it.
    pub fn new(x: f64) -> G15 {
        let mut out = G15 {
            bytes: [0; MAX_LEN],
            len: 0,
            exact: true,
        };
        if x.is_sign_negative() {
            out.push(b'-');
        }
        if x.is_nan() {
            out.extend(b"nan");
        } else if x.is_infinite() {
            out.extend(b"inf");
        } else if x == 0.0 {
            out.push(b'0');
        } else {
            let (digits, exponent, exact) = rounded_digits(x.abs());
            out.exact = exact;
            out.lay_out(&digits, exponent);
        }
        out
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    pub fn as_str(&self) -> &str {
        // Only ASCII is ever pushed.
        std::str::from_utf8(self.as_bytes()).unwrap_or("")
    }

    /// Whether the text reads back to the same double (NaN reads back as NaN, whatever its
    /// payload; infinities and zeros keep their sign).
    pub fn exact(&self) -> bool {
        self.exact
    }

    fn push(&mut self, b: u8) {
        self.bytes[self.len as usize] = b;
        self.len += 1;
    }

    fn extend(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.push(b);
        }
    }

    /// `%g`'s choice for 15 digits: exponent form when the exponent is below −4 or at least
    /// 15, else positional; trailing zeros (and a trailing point) are already gone from
    /// `digits`.
    fn lay_out(&mut self, digits: &Digits, exponent: i32) {
        let d = digits.as_slice();
        if !(-4..15).contains(&exponent) {
            self.push(d[0]);
            if d.len() > 1 {
                self.push(b'.');
                self.extend(&d[1..]);
            }
            self.push(b'e');
            self.push(if exponent < 0 { b'-' } else { b'+' });
            let e = exponent.unsigned_abs();
            if e >= 100 {
                self.push(b'0' + (e / 100) as u8);
            }
            self.push(b'0' + (e / 10 % 10) as u8);
            self.push(b'0' + (e % 10) as u8);
        } else if exponent >= 0 {
            let whole = exponent as usize + 1;
            for i in 0..whole {
                self.push(d.get(i).copied().unwrap_or(b'0'));
            }
            if d.len() > whole {
                self.push(b'.');
                self.extend(&d[whole..]);
            }
        } else {
            self.extend(b"0.");
            for _ in 0..(-exponent - 1) {
                self.push(b'0');
            }
            self.extend(d);
        }
    }
}

/// Appends `x` as `%.15g` to `out`; returns whether it reads back exactly.
pub fn push_g15(out: &mut Vec<u8>, x: f64) -> bool {
    let g = G15::new(x);
    out.extend_from_slice(g.as_bytes());
    g.exact()
}

/// Whether `x` reads back to the same double after `%.15g` (NaN counts as surviving).
pub fn survives(x: f64) -> bool {
    if !x.is_finite() || x == 0.0 {
        return true;
    }
    let mut buf = ryu::Buffer::new();
    shortest(buf.format_finite(x)).count <= 15
}

/// Up to 17 significant digits as ASCII, no leading or trailing zeros.
#[derive(Clone, Copy)]
struct Digits {
    bytes: [u8; 17],
    len: usize,
}

impl Digits {
    fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// The digits of `n` (at most 17), trailing zeros dropped.
    fn of(mut n: u64) -> Digits {
        while n != 0 && n % 10 == 0 {
            n /= 10;
        }
        let mut bytes = [0u8; 17];
        let mut len = 0;
        let mut tmp = [0u8; 20];
        let mut k = 0;
        while n != 0 {
            tmp[k] = b'0' + (n % 10) as u8;
            n /= 10;
            k += 1;
        }
        while k > 0 && len < 17 {
            k -= 1;
            bytes[len] = tmp[k];
            len += 1;
        }
        Digits { bytes, len }
    }
}

/// A positive decimal: `value` (no trailing zeros) with `count` digits, the first of which
/// has the place value 10^`exponent`.
struct Decimal {
    value: u64,
    count: u32,
    exponent: i32,
}

/// Reads ryu's text (`123.456`, `0.00123`, `1.2345e-7`, `1e16`, `1.0`) as a [`Decimal`].
fn shortest(text: &str) -> Decimal {
    let mut value = 0u64;
    let mut count = 0u32;
    // Power of ten of the last digit taken, before the exponent is added.
    let mut point_shift = 0i32;
    let mut seen_point = false;
    let mut exp = 0i32;
    let mut bytes = text.as_bytes().iter();
    for &b in bytes.by_ref() {
        match b {
            b'0'..=b'9' => {
                if seen_point {
                    point_shift -= 1;
                }
                if value != 0 || b != b'0' {
                    value = value * 10 + u64::from(b - b'0');
                    count += 1;
                }
            }
            b'.' => seen_point = true,
            b'e' | b'E' => break,
            _ => {}
        }
    }
    let mut negative = false;
    for &b in bytes {
        match b {
            b'-' => negative = true,
            b'0'..=b'9' => exp = exp * 10 + i32::from(b - b'0'),
            _ => {}
        }
    }
    if negative {
        exp = -exp;
    }
    let mut last = point_shift + exp;
    while value != 0 && value % 10 == 0 {
        value /= 10;
        count -= 1;
        last += 1;
    }
    Decimal {
        value,
        count,
        exponent: last + count as i32 - 1,
    }
}

const TEN_15: u64 = 1_000_000_000_000_000;

/// The 15 significant digits `%.15g` prints for a positive finite non-zero `x`, trailing
/// zeros dropped, with the exponent of the first; and whether they read back to `x`.
fn rounded_digits(x: f64) -> (Digits, i32, bool) {
    let mut buf = ryu::Buffer::new();
    let d = shortest(buf.format_finite(x));
    let subnormal = x < f64::MIN_POSITIVE;
    let exact = d.count <= 15;
    if exact && !subnormal {
        return (Digits::of(d.value), d.exponent, true);
    }
    let (kept, rest, half) = match d.count {
        16 => (d.value / 10, d.value % 10, 5),
        17 => (d.value / 100, d.value % 100, 50),
        _ => (0, 0, 0),
    };
    if subnormal || (d.count == 16 && rest == half) {
        let (digits, exponent) = exact_rounding(x);
        return (digits, exponent, exact);
    }
    let mut q = kept + u64::from(rest >= half);
    let mut exponent = d.exponent;
    if q == TEN_15 {
        q = TEN_15 / 10;
        exponent += 1;
    }
    (Digits::of(q), exponent, false)
}

/// The standard library's exact `{:.14e}` (correctly rounded, ties to even), for the rare
/// cases the shortest digits cannot decide.
fn exact_rounding(x: f64) -> (Digits, i32) {
    let mut buf = [0u8; 40];
    let len = {
        let mut cursor = std::io::Cursor::new(&mut buf[..]);
        // 40 bytes hold `d.dddddddddddddde-324`.
        let _ = write!(cursor, "{x:.14e}");
        cursor.position() as usize
    };
    let text = std::str::from_utf8(&buf[..len]).unwrap_or("0");
    let d = shortest(text);
    (Digits::of(d.value), d.exponent)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(x: f64) -> String {
        G15::new(x).as_str().to_string()
    }

    #[test]
    fn the_spec_examples() {
        assert_eq!(g(0.1 + 0.2), "0.3");
        assert_eq!(g(1e-5), "1e-05");
        assert_eq!(g(2.0 / 3.0), "0.666666666666667");
        assert_eq!(g(805.0), "805");
        assert_eq!(g(123456789012345678.0), "1.23456789012346e+17");
        assert_eq!(g(f64::NAN), "nan");
        assert_eq!(g(-f64::NAN), "-nan");
        assert_eq!(g(f64::INFINITY), "inf");
        assert_eq!(g(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn edges_of_the_notation_and_of_rounding() {
        assert_eq!(g(0.0), "0");
        assert_eq!(g(-0.0), "-0");
        assert_eq!(g(1e-4), "0.0001");
        assert_eq!(g(0.00012345), "0.00012345");
        assert_eq!(g(1e15), "1e+15");
        assert_eq!(g(999999999999999.0), "999999999999999");
        // Rounds up into the next power of ten, and so into exponent form.
        assert_eq!(g(9999999999999998.0), "1e+16");
        assert_eq!(g(1e100), "1e+100");
        assert_eq!(g(-1.5e-300), "-1.5e-300");
        assert_eq!(g(f64::MAX), "1.79769313486232e+308");
        assert_eq!(g(f64::MIN_POSITIVE), "2.2250738585072e-308");
        // Subnormals: the shortest digits (5e-324) are not what printf prints.
        assert_eq!(g(5e-324), "4.94065645841247e-324");
        // Exact ties at the 16th digit go to the even digit.
        assert_eq!(g(562949953421312.5), "562949953421312");
        assert_eq!(g(562949953421313.5), "562949953421314");
        assert_eq!(g(1234567890123455.0), "1.23456789012346e+15");
    }

    #[test]
    fn survival_is_fifteen_digits_or_fewer() {
        assert!(survives(0.3));
        assert!(!survives(0.1 + 0.2));
        assert!(!survives(2.0 / 3.0));
        assert!(survives(f64::NAN));
        assert!(survives(5e-324));
        assert!(survives(9007199254740992.0 / 1024.0));
        assert!(!survives(9007199254740993.0 - 1.0)); // 2^53: 16 digits
        assert!(G15::new(0.25).exact());
        assert!(!G15::new(1.0 / 3.0).exact());
    }
}
