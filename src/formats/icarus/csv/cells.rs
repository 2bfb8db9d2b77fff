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
    if let Some((x, n)) = exact_prefix(body) {
        if n == body.len() {
            return Ok(if negative { -x } else { x });
        }
    }
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

/// Powers of ten that a double holds exactly.
const EXACT_POWERS: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The cell at the start of `rest` (up to its first comma, or the whole of it): its value as
/// [`parse`] reads it, and its length. A number of the common kind is converted as it is
/// scanned, so a cell is read once.
pub fn parse_first(rest: &[u8]) -> (Result<f64, NotANumber>, usize) {
    let (negative, sign) = match rest.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    if let Some((x, n)) = exact_prefix(&rest[sign..]) {
        let end = sign + n;
        if matches!(rest.get(end), None | Some(b',')) {
            return (Ok(if negative { -x } else { x }), end);
        }
    }
    let end = memchr::memchr(b',', rest).unwrap_or(rest.len());
    (parse(&rest[..end]), end)
}

/// The unsigned decimal at the start of `s` and its length, in one pass, when the correctly
/// rounded value is one exact operation (Clinger's fast path: a mantissa of at most 2^53 and
/// a power of ten up to 10^22, both exact as doubles, so their product or quotient is rounded
/// once, as the standard library's parser rounds). That covers what `%.15g` writes but for
/// exponents beyond ±22 less the digits; `None` for anything else (the general path then
/// reads it, or rejects it).
fn exact_prefix(s: &[u8]) -> Option<(f64, usize)> {
    let (mut mantissa, mut digits) = (0u64, 0usize);
    let mut i = digit_run(s, 0, &mut mantissa, &mut digits)?;
    let mut fraction = 0;
    if s.get(i) == Some(&b'.') {
        let end = digit_run(s, i + 1, &mut mantissa, &mut digits)?;
        fraction = end - (i + 1);
        i = end;
    }
    if digits == 0 {
        return None;
    }
    let mut exponent = 0i32;
    if let Some(b'e' | b'E') = s.get(i) {
        i += 1;
        let negative = match s.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        while let Some(d) = s.get(i).map(|b| b.wrapping_sub(b'0')).filter(|d| *d < 10) {
            exponent = exponent * 10 + i32::from(d);
            i += 1;
            if exponent > 9999 {
                return None;
            }
        }
        if i == start {
            return None;
        }
        if negative {
            exponent = -exponent;
        }
    }
    if mantissa > 1 << 53 {
        return None;
    }
    let power = exponent - fraction as i32;
    let m = mantissa as f64;
    match power {
        0..=22 => Some((m * EXACT_POWERS[power as usize], i)),
        -22..=-1 => Some((m / EXACT_POWERS[(-power) as usize], i)),
        _ => None,
    }
}

/// The end of the run of digits from `i`, each added to `mantissa` and counted in `digits`;
/// `None` past 19 digits in all, which could overflow it.
fn digit_run(s: &[u8], mut i: usize, mantissa: &mut u64, digits: &mut usize) -> Option<usize> {
    while let Some(d) = s.get(i).map(|b| b.wrapping_sub(b'0')).filter(|d| *d < 10) {
        if *digits == 19 {
            return None;
        }
        *mantissa = *mantissa * 10 + u64::from(d);
        *digits += 1;
        i += 1;
    }
    Some(i)
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
    use proptest::prelude::*;

    /// The standard library's reading of a cell the grammar takes, bit for bit, alone and
    /// as the first cell of a row.
    fn same_as_std(text: &str) {
        let std: f64 = text.parse().unwrap();
        let ours = parse(text.as_bytes()).unwrap();
        assert_eq!(ours.to_bits(), std.to_bits(), "{text}");
        for row in [text.to_string(), format!("{text},1,x")] {
            let (first, n) = parse_first(row.as_bytes());
            assert_eq!(
                (first.map(f64::to_bits), n),
                (Ok(std.to_bits()), text.len())
            );
        }
    }

    #[test]
    fn the_first_cell_of_a_row() {
        for (row, first, n) in [
            (&b",1"[..], None, 0),
            (b"", None, 0),
            (b"-nan,2", None, 4),
            (b"abc,2", Some(NotANumber), 3),
            (b"1e,2", Some(NotANumber), 2),
            (b"1 ,2", Some(NotANumber), 2),
            (b"0x10", Some(NotANumber), 4),
        ] {
            let (x, end) = parse_first(row);
            assert_eq!(end, n, "{}", String::from_utf8_lossy(row));
            match first {
                Some(e) => assert_eq!(x, Err(e)),
                None => assert!(x.unwrap().is_nan()),
            }
        }
    }

    #[test]
    fn the_one_step_path_at_its_edges() {
        for text in [
            "0",
            "-0",
            "+0",
            "0.0",
            "-0.0",
            "0e400",
            "1e22",
            "1e23",
            "1e-22",
            "1e-23",
            "9007199254740992",
            "9007199254740993",
            "-9007199254740993e-3",
            "9007199254740992e22",
            "9007199254740992e-22",
            "1234567890123456789",
            "12345678901234567890",
            "0.1",
            "0.30000000000000004",
            ".000000000000000000001",
            "1.23456789012346e+17",
            "4.94065645841247e-324",
            "1.79769313486232e+308",
            "5e-324",
            "1.5E+3",
            "00000000000000000001.5",
            "2.5e-0010",
        ] {
            same_as_std(text);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

        #[test]
        fn any_decimal_reads_as_std_reads_it(
            sign in 0..3usize,
            int in proptest::collection::vec(0..10u8, 0..22),
            point in any::<bool>(),
            frac in proptest::collection::vec(0..10u8, 0..22),
            exponent in proptest::option::of((0..3usize, 0..400u32)),
        ) {
            let digits = |d: &[u8]| d.iter().map(|d| char::from(b'0' + d)).collect::<String>();
            let mut text = ["", "-", "+"][sign].to_string() + &digits(&int);
            if point {
                text += ".";
                text += &digits(&frac);
            }
            if let Some((sign, e)) = exponent {
                text += &format!("e{}{e}", ["", "-", "+"][sign]);
            }
            if text.is_empty() {
                prop_assert!(parse(b"").unwrap().is_nan());
            } else if int.is_empty() && (!point || frac.is_empty()) {
                prop_assert_eq!(parse(text.as_bytes()), Err(NotANumber));
            } else {
                same_as_std(&text);
            }
        }
    }

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
