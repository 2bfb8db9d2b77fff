//! Absolute times in the time scales simulation recordings use (Icarus spec §A8): a record
//! time is elapsed SI nanoseconds since the origin's epoch, a UTC instant; shown as MET (the
//! elapsed time itself), TAI, GPS (calendar or week and seconds of week) or UTC (with
//! `:60` during an inserted leap second).
//!
//! Instants are counted internally as "TAI calendar" nanoseconds: the POSIX-style count of
//! TAI seconds, so that 1972-01-01T00:00:10 TAI is 1972-01-01T00:00:00 UTC.

use std::fmt;
use std::str::FromStr;

use super::time::iso8601;
use super::{Epoch, Nanos};

const NS: i64 = 1_000_000_000;

/// ΔAT = TAI − UTC in seconds from each date on (Unix seconds of 00:00:00 UTC that day),
/// IERS Bulletin C; the last entry is 2017-01-01 (37 s).
const LEAP_SECONDS: [(i64, i64); 28] = [
    (63_072_000, 10),    // 1972-01-01
    (78_796_800, 11),    // 1972-07-01
    (94_694_400, 12),    // 1973-01-01
    (126_230_400, 13),   // 1974-01-01
    (157_766_400, 14),   // 1975-01-01
    (189_302_400, 15),   // 1976-01-01
    (220_924_800, 16),   // 1977-01-01
    (252_460_800, 17),   // 1978-01-01
    (283_996_800, 18),   // 1979-01-01
    (315_532_800, 19),   // 1980-01-01
    (362_793_600, 20),   // 1981-07-01
    (394_329_600, 21),   // 1982-07-01
    (425_865_600, 22),   // 1983-07-01
    (489_024_000, 23),   // 1985-07-01
    (567_993_600, 24),   // 1988-01-01
    (631_152_000, 25),   // 1990-01-01
    (662_688_000, 26),   // 1991-01-01
    (709_948_800, 27),   // 1992-07-01
    (741_484_800, 28),   // 1993-07-01
    (773_020_800, 29),   // 1994-07-01
    (820_454_400, 30),   // 1996-01-01
    (867_715_200, 31),   // 1997-07-01
    (915_148_800, 32),   // 1999-01-01
    (1_136_073_600, 33), // 2006-01-01
    (1_230_768_000, 34), // 2009-01-01
    (1_341_100_800, 35), // 2012-07-01
    (1_435_708_800, 36), // 2015-07-01
    (1_483_228_800, 37), // 2017-01-01
];

/// GPS time is TAI − 19 s.
const GPS_MINUS_TAI: i64 = -19;
/// 1980-01-06T00:00:00 (the GPS epoch) as Unix seconds.
const GPS_EPOCH_UNIX: i64 = 315_964_800;
const WEEK: i64 = 604_800;

/// ΔAT in seconds at a UTC instant (Unix nanoseconds), and whether the instant is before
/// 1972, where 10 s is an approximation (as Vulcan uses).
pub fn delta_at(unix_ns: i64) -> (i64, bool) {
    let secs = unix_ns.div_euclid(NS);
    match LEAP_SECONDS.iter().rev().find(|(from, _)| secs >= *from) {
        Some((_, d)) => (*d, false),
        None => (10, true),
    }
}

/// A time scale to show absolute times in (`--time-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeFormat {
    /// Elapsed seconds since the epoch (mission elapsed time): the record time itself.
    Met,
    Utc,
    Tai,
    Gps,
    /// GPS week and seconds of week.
    GpsWeek,
}

impl TimeFormat {
    pub const NAMES: &'static [&'static str] = &["met", "utc", "tai", "gps", "gps-week"];

    /// Whether showing a time needs the epoch (every scale but MET).
    pub fn needs_epoch(self) -> bool {
        self != TimeFormat::Met
    }
}

/// A `--time-format` value that names no scale (the name given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected one of {}", TimeFormat::NAMES.join(", "))]
pub struct UnknownTimeFormat(pub String);

impl FromStr for TimeFormat {
    type Err = UnknownTimeFormat;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "met" => TimeFormat::Met,
            "utc" => TimeFormat::Utc,
            "tai" => TimeFormat::Tai,
            "gps" => TimeFormat::Gps,
            "gps-week" => TimeFormat::GpsWeek,
            _ => return Err(UnknownTimeFormat(s.to_string())),
        })
    }
}

impl fmt::Display for TimeFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = *self as usize;
        f.write_str(TimeFormat::NAMES[i])
    }
}

/// The TAI calendar instant of `elapsed` nanoseconds after `epoch`.
fn tai_ns(epoch: &Epoch, elapsed: Nanos) -> i64 {
    let (d, _) = delta_at(epoch.unix_ns);
    epoch.unix_ns.saturating_add(d * NS).saturating_add(elapsed)
}

/// The UTC text of a TAI calendar instant, `:60` inside an inserted leap second.
fn utc_text(tai: i64, digits: Option<u8>) -> String {
    // The table entry in force: the last whose start, counted in TAI, is not after `tai`.
    let mut delta = 10;
    for &(from, d) in &LEAP_SECONDS {
        if tai >= (from + d) * NS {
            delta = d;
        } else if tai >= (from + d - 1) * NS && d == delta + 1 {
            // The inserted second before `from`: 23:59:59 of the old count, shown as
            // 23:59:60.
            let mut text = iso8601(tai - d * NS, digits);
            if let Some(t) = text.find('T') {
                text.replace_range(t + 7..t + 9, "60");
            }
            return text;
        } else {
            break;
        }
    }
    iso8601(tai - delta * NS, digits)
}

/// `elapsed` nanoseconds after the origin, shown in `format`. `None` without an epoch for
/// every scale but MET. `digits` fraction digits, or as many as the value needs.
pub fn show(
    format: TimeFormat,
    epoch: Option<&Epoch>,
    elapsed: Nanos,
    digits: Option<u8>,
) -> Option<String> {
    if format == TimeFormat::Met {
        return Some(seconds(elapsed, digits));
    }
    let tai = tai_ns(epoch?, elapsed);
    Some(match format {
        TimeFormat::Met => seconds(elapsed, digits),
        TimeFormat::Utc => utc_text(tai, digits),
        TimeFormat::Tai => iso8601(tai, digits).replace('Z', " TAI"),
        TimeFormat::Gps => iso8601(tai + GPS_MINUS_TAI * NS, digits).replace('Z', " GPS"),
        TimeFormat::GpsWeek => {
            // GPS seconds since the GPS epoch (1980-01-06T00:00:00 GPS, which is that
            // instant in UTC: ΔAT was 19 s).
            let gps = tai + GPS_MINUS_TAI * NS - GPS_EPOCH_UNIX * NS;
            let week = gps.div_euclid(WEEK * NS);
            let sow = gps.rem_euclid(WEEK * NS);
            format!("{week} {}", seconds(sow, digits))
        }
    })
}

/// Nanoseconds as decimal seconds (`12.5`, `-0.25`) with `digits` fraction digits, or as
/// many as the value needs.
fn seconds(ns: Nanos, digits: Option<u8>) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let ns = ns.unsigned_abs();
    let (secs, frac) = (ns / NS as u64, ns % NS as u64);
    let all = format!("{frac:09}");
    let shown = match digits {
        Some(d) => &all[..usize::from(d.min(9))],
        None => all.trim_end_matches('0'),
    };
    if shown.is_empty() {
        format!("{sign}{secs}")
    } else {
        format!("{sign}{secs}.{shown}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn epoch(text_unix_s: i64) -> Epoch {
        Epoch {
            unix_ns: text_unix_s * NS,
            fraction_digits: 0,
        }
    }

    #[test]
    fn a_leap_second_shows_as_60_in_utc_and_not_in_tai() {
        // 2016-12-31T23:59:59Z (spec §A8's test vector).
        let e = epoch(1_483_228_799);
        let at = |t: i64, f| show(f, Some(&e), t * NS, None).unwrap();
        assert_eq!(at(0, TimeFormat::Utc), "2016-12-31T23:59:59Z");
        assert_eq!(at(1, TimeFormat::Utc), "2016-12-31T23:59:60Z");
        assert_eq!(at(2, TimeFormat::Utc), "2017-01-01T00:00:00Z");
        assert_eq!(at(2, TimeFormat::Tai), "2017-01-01T00:00:37 TAI");
        assert_eq!(at(2, TimeFormat::Gps), "2017-01-01T00:00:18 GPS");
        assert_eq!(at(0, TimeFormat::Tai), "2017-01-01T00:00:35 TAI");
        assert_eq!(
            show(TimeFormat::Utc, Some(&e), 1_500_000_000, None).unwrap(),
            "2016-12-31T23:59:60.5Z"
        );
    }

    #[test]
    fn gps_week_and_seconds_of_week() {
        // The GPS epoch itself: week 0, second 0.
        let gps0 = epoch(GPS_EPOCH_UNIX);
        assert_eq!(
            show(TimeFormat::GpsWeek, Some(&gps0), 0, None).unwrap(),
            "0 0"
        );
        // 2017-01-01T00:00:00Z = GPS 00:00:18 on Sunday, week 1930.
        let e = epoch(1_483_228_800);
        assert_eq!(
            show(TimeFormat::GpsWeek, Some(&e), 250_000_000, None).unwrap(),
            "1930 18.25"
        );
    }

    #[test]
    fn met_needs_no_epoch_and_others_do() {
        assert_eq!(
            show(TimeFormat::Met, None, 12_500_000_000, None).as_deref(),
            Some("12.5")
        );
        assert_eq!(
            show(TimeFormat::Met, None, -250_000_000, None).as_deref(),
            Some("-0.25")
        );
        assert_eq!(show(TimeFormat::Utc, None, 0, None), None);
        assert_eq!(delta_at(0), (10, true));
        assert_eq!(delta_at(1_483_228_800 * NS), (37, false));
        assert_eq!(delta_at(1_483_228_799 * NS), (36, false));
    }
}
