//! One cell as a number, in the grammar Icarus's files use (spec §C2, §C3): decimal or
//! exponent form with an optional sign, `nan`, `inf` (and `infinity`, which C's `strtod`
//! also reads) in any case with an optional sign; an empty cell is NaN.

/// Why a cell is not a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotANumber;

/// The value of a cell; `-nan` keeps its sign bit, so it is written back as `-nan`.
pub fn parse(cell: &[u8]) -> Result<f64, NotANumber> {
    if cell.is_empty() {
        return Ok(f64::NAN);
    }
    let (negative, body) = match cell[0] {
        b'-' => (true, &cell[1..]),
        b'+' => (false, &cell[1..]),
        _ => (false, cell),
    };
    let special = if body.eq_ignore_ascii_case(b"nan") {
        Some(f64::NAN)
    } else if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
        Some(f64::INFINITY)
    } else {
        None
    };
    if let Some(x) = special {
        return Ok(if negative { -x } else { x });
    }
    if !is_decimal(body) {
        return Err(NotANumber);
    }
    // ASCII digits, signs, `.` and `e` only: valid UTF-8, and a number Rust's parser (correctly
    // rounded) reads.
    std::str::from_utf8(cell)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .ok_or(NotANumber)
}

/// `digits [. digits] [e [sign] digits]` or `. digits [e …]`, at least one mantissa digit.
fn is_decimal(s: &[u8]) -> bool {
    let mut i = 0;
    let mut mantissa_digits = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        i += 1;
        mantissa_digits += 1;
    }
    if i < s.len() && s[i] == b'.' {
        i += 1;
        while i < s.len() && s[i].is_ascii_digit() {
            i += 1;
            mantissa_digits += 1;
        }
    }
    if mantissa_digits == 0 {
        return false;
    }
    if i < s.len() && (s[i] == b'e' || s[i] == b'E') {
        i += 1;
        if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
            i += 1;
        }
        let start = i;
        while i < s.len() && s[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    i == s.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_their_special_spellings() {
        assert_eq!(parse(b"805"), Ok(805.0));
        assert_eq!(parse(b"1e-05"), Ok(1e-5));
        assert_eq!(parse(b"1.23456789012346e+17"), Ok(1.23456789012346e17));
        assert_eq!(parse(b"-.5"), Ok(-0.5));
        assert_eq!(parse(b"5."), Ok(5.0));
        assert_eq!(parse(b"-inf"), Ok(f64::NEG_INFINITY));
        assert_eq!(parse(b"INF"), Ok(f64::INFINITY));
        assert!(parse(b"NaN").unwrap().is_nan());
        assert!(parse(b"").unwrap().is_nan());
        let minus_nan = parse(b"-nan").unwrap();
        assert!(minus_nan.is_nan() && minus_nan.is_sign_negative());
        assert!(parse(b"nan").unwrap().is_sign_positive());
        for bad in [
            &b"abc"[..],
            b"1e",
            b"e5",
            b".",
            b"-",
            b"1.2.3",
            b" 1",
            b"1 ",
            b"0x10",
            b"nan(1)",
        ] {
            assert_eq!(
                parse(bad),
                Err(NotANumber),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
