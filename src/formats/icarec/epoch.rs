//! The schema's `time.epoch` (spec §A8): a UTC calendar instant
//! `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, as Unix nanoseconds and the fraction digits given.

use crate::model::Epoch;

/// 1972-01-01T00:00:00Z, before which ΔAT is approximated (spec §A8, `ICAREC_PRE_1972`).
pub const UTC_1972_NS: i64 = 63_072_000 * 1_000_000_000;

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Parses an epoch, or `None` when the text is not exactly the profile's form (a leap
/// second `:60` has no Unix time and is refused, as are more than 9 fraction digits).
pub fn parse(text: &str) -> Option<Epoch> {
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(r)?;
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    if b.len() < 20 || b.last() != Some(&b'Z') {
        return None;
    }
    let seps = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if seps.iter().any(|&(i, c)| b[i] != c) {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=days_in_month(year, month)).contains(&day)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let (fraction, fraction_digits) = match &b[19..b.len() - 1] {
        [] => (0, 0),
        [b'.', rest @ ..] if (1..=9).contains(&rest.len()) => {
            let f = digits(20..b.len() - 1)?;
            (f * 10i64.pow(9 - rest.len() as u32), rest.len() as u8)
        }
        _ => return None,
    };
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    Some(Epoch {
        unix_ns: seconds.checked_mul(1_000_000_000)?.checked_add(fraction)?,
        fraction_digits,
    })
}

/// Unix seconds of an ISO-8601 UTC instant (the tar form's mtime is `created_at`), or
/// `None` when it does not parse or is before 1970.
pub fn unix_seconds(text: &str) -> Option<u64> {
    parse(text).and_then(|e| u64::try_from(e.unix_ns.div_euclid(1_000_000_000)).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_parse_and_print_back_with_their_digits() {
        for text in [
            "2026-03-01T12:00:00Z",
            "2016-12-31T23:59:59Z",
            "2000-02-29T00:00:00.000000001Z",
            "1969-12-31T23:59:59.5Z",
            "1980-01-06T00:00:00.250Z",
        ] {
            let e = parse(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(e.iso8601(), text);
        }
        assert_eq!(parse("1970-01-01T00:00:00Z").unwrap().unix_ns, 0);
        assert_eq!(parse("1972-01-01T00:00:00Z").unwrap().unix_ns, UTC_1972_NS);
        for bad in [
            "",
            "2026-03-01 12:00:00Z",
            "2026-03-01T12:00:00",
            "2026-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2016-12-31T23:59:60Z",
            "2026-03-01T12:00:00.Z",
            "2026-03-01T12:00:00.1234567890Z",
            "2026-03-01T12:00:00+01:00",
            "+026-03-01T12:00:00Z",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert_eq!(unix_seconds("2026-03-01T12:00:00Z"), Some(1_772_366_400));
    }
}
