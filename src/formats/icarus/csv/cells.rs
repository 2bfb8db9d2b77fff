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
    let (negative, body) = split_sign(cell);
    let x = match decimal_prefix(body) {
        Some((x, n)) if n == body.len() => x,
        _ => special(body).ok_or(NotANumber)?,
    };
    Ok(if negative { -x } else { x })
}

/// The cell at the start of `rest` (up to its first comma, or the whole of it): its value as
/// [`parse`] reads it, and its length. A number is converted in the pass that finds its end,
/// so a cell is read once.
pub fn parse_first(rest: &[u8]) -> (Result<f64, NotANumber>, usize) {
    let (negative, body) = split_sign(rest);
    let sign = rest.len() - body.len();
    if let Some((x, n)) = decimal_prefix(body) {
        let end = sign + n;
        if matches!(rest.get(end), None | Some(b',')) {
            return (Ok(if negative { -x } else { x }), end);
        }
    }
    let end = memchr::memchr(b',', rest).unwrap_or(rest.len());
    (parse(&rest[..end]), end)
}

/// (negative, the rest) of a cell that may start with `-` or `+`.
fn split_sign(cell: &[u8]) -> (bool, &[u8]) {
    match cell.first() {
        Some(b'-') => (true, &cell[1..]),
        Some(b'+') => (false, &cell[1..]),
        _ => (false, cell),
    }
}

/// The unsigned decimal at the start of `s` (`digits [. digits] [e [sign] digits]` or
/// `. digits [e …]`) and its length, correctly rounded (as the standard library's parser
/// rounds). `None` unless `s` starts with a digit or a point: a sign is the caller's, and
/// `nan` and `inf` are read by name ([`special`]).
fn decimal_prefix(s: &[u8]) -> Option<(f64, usize)> {
    match s.first() {
        Some(b'0'..=b'9' | b'.') => fast_float2::parse_partial::<f64, _>(s).ok(),
        _ => None,
    }
}

/// `nan`, `inf` or `infinity` (which C's `strtod` also reads), in any case.
fn special(body: &[u8]) -> Option<f64> {
    if body.eq_ignore_ascii_case(b"nan") {
        Some(f64::NAN)
    } else if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
        Some(f64::INFINITY)
    } else {
        None
    }
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
    fn numbers_at_the_edges_of_exact_arithmetic() {
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
