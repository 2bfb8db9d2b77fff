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
        let mut at = 0;
        if x.is_sign_negative() {
            out.bytes[0] = b'-';
            at = 1;
        }
        if x.is_nan() {
            at = put(&mut out.bytes, at, b"nan");
        } else if x.is_infinite() {
            at = put(&mut out.bytes, at, b"inf");
        } else if x == 0.0 {
            at = put(&mut out.bytes, at, b"0");
        } else {
            let (digits, exact) = rounded_digits(x.abs());
            out.exact = exact;
            at = lay_out(&mut out.bytes, at, &digits);
        }
        out.len = at as u8;
        out
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    pub fn as_str(&self) -> &str {
        // Only ASCII is ever written.
        std::str::from_utf8(self.as_bytes()).unwrap_or("")
    }

    /// Whether the text reads back to the same double (NaN reads back as NaN, whatever its
    /// payload; infinities and zeros keep their sign).
    pub fn exact(&self) -> bool {
        self.exact
    }
}

/// Copies `bytes` into `buf` at `at`; returns the end.
fn put(buf: &mut [u8; MAX_LEN], at: usize, bytes: &[u8]) -> usize {
    buf[at..at + bytes.len()].copy_from_slice(bytes);
    at + bytes.len()
}

/// `%g`'s choice for 15 digits: exponent form when the exponent is below −4 or at least 15,
/// else positional; trailing zeros (and so a trailing point) are already gone from `d`.
fn lay_out(buf: &mut [u8; MAX_LEN], mut at: usize, d: &Digits) -> usize {
    let digits = d.as_slice();
    let exponent = d.exponent;
    if !(-4..15).contains(&exponent) {
        buf[at] = digits[0];
        at += 1;
        if digits.len() > 1 {
            buf[at] = b'.';
            at = put(buf, at + 1, &digits[1..]);
        }
        let e = exponent.unsigned_abs();
        buf[at] = b'e';
        buf[at + 1] = if exponent < 0 { b'-' } else { b'+' };
        at += 2;
        if e >= 100 {
            buf[at] = b'0' + (e / 100) as u8;
            at += 1;
        }
        buf[at] = b'0' + (e / 10 % 10) as u8;
        buf[at + 1] = b'0' + (e % 10) as u8;
        at + 2
    } else if exponent >= 0 {
        let whole = exponent as usize + 1;
        if digits.len() > whole {
            at = put(buf, at, &digits[..whole]);
            buf[at] = b'.';
            put(buf, at + 1, &digits[whole..])
        } else {
            at = put(buf, at, digits);
            let zeros = whole - digits.len();
            buf[at..at + zeros].fill(b'0');
            at + zeros
        }
    } else {
        let zeros = (-exponent - 1) as usize;
        at = put(buf, at, b"0.");
        buf[at..at + zeros].fill(b'0');
        put(buf, at + zeros, digits)
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
    significant(buf.format_finite(x).as_bytes()).len <= 15
}

/// A positive decimal's significant digits as ASCII (no leading or trailing zeros, at most
/// 17), and the power of ten of the first.
#[derive(Clone, Copy)]
struct Digits {
    bytes: [u8; 17],
    len: usize,
    exponent: i32,
}

impl Digits {
    fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    fn strip_trailing_zeros(&mut self) {
        while self.len > 1 && self.bytes[self.len - 1] == b'0' {
            self.len -= 1;
        }
    }
}

/// The significant digits of a decimal text as ryu (`123.456`, `0.00123`, `1.2345e-7`, `1e16`,
/// `1.0`) or `{:e}` (`1.23456789012346e-5`) write it.
fn significant(text: &[u8]) -> Digits {
    let mut d = Digits {
        bytes: [b'0'; 17],
        len: 0,
        exponent: 0,
    };
    let mut seen = 0i32;
    let mut first = None;
    let mut whole = None;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if b == b'.' {
            whole = Some(seen);
        } else if b.is_ascii_digit() {
            if first.is_none() && b != b'0' {
                first = Some(seen);
            }
            if first.is_some() && d.len < 17 {
                d.bytes[d.len] = b;
                d.len += 1;
            }
            seen += 1;
        } else if b == b'e' || b == b'E' {
            break;
        }
        i += 1;
    }
    let mut exp = 0i32;
    let mut negative = false;
    for &b in &text[(i + 1).min(text.len())..] {
        match b {
            b'-' => negative = true,
            b'0'..=b'9' => exp = exp * 10 + i32::from(b - b'0'),
            _ => {}
        }
    }
    if negative {
        exp = -exp;
    }
    d.strip_trailing_zeros();
    d.exponent = whole.unwrap_or(seen) - 1 - first.unwrap_or(0) + exp;
    d
}

/// The significant digits `%.15g` prints for a positive finite non-zero `x`, and whether they
/// read back to `x`.
fn rounded_digits(x: f64) -> (Digits, bool) {
    let mut buf = ryu::Buffer::new();
    let mut d = significant(buf.format_finite(x).as_bytes());
    let exact = d.len <= 15;
    let subnormal = x < f64::MIN_POSITIVE;
    if exact && !subnormal {
        return (d, true);
    }
    // d.len is 16 or 17 (or x is subnormal): the 16th digit decides, except when it is the
    // last and a 5 (D may be the rounding midpoint itself).
    if subnormal || (d.len == 16 && d.bytes[15] == b'5') {
        return (exact_rounding(x), exact);
    }
    let up = d.bytes[15] >= b'5';
    d.len = 15;
    if up {
        let mut i = 14;
        loop {
            if d.bytes[i] < b'9' {
                d.bytes[i] += 1;
                break;
            }
            d.bytes[i] = b'0';
            if i == 0 {
                // 999… rounds up to the next power of ten.
                d.bytes[0] = b'1';
                d.exponent += 1;
                break;
            }
            i -= 1;
        }
    }
    d.strip_trailing_zeros();
    (d, false)
}

/// The standard library's exact `{:.14e}` (correctly rounded, ties to even), for the rare
/// cases the shortest digits cannot decide.
fn exact_rounding(x: f64) -> Digits {
    let mut buf = [0u8; 40];
    let len = {
        let mut cursor = std::io::Cursor::new(&mut buf[..]);
        // 40 bytes hold `d.dddddddddddddde-324`.
        let _ = write!(cursor, "{x:.14e}");
        cursor.position() as usize
    };
    significant(&buf[..len])
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
