//! Time flags as users type them: `12.5`, `12.5s`, `850ms`, `3us`, `10ns`, `#120`, `-5s`.

use std::fmt;
use std::str::FromStr;

use super::record::Nanos;

/// A point on a recording's timeline, before it is resolved against the recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeSpec {
    /// Nanoseconds from the time origin.
    At(Nanos),
    /// Nanoseconds before the end of the recording (`-5s`).
    FromEnd(Nanos),
    /// The time of the n-th (0-based) frame (`#120`).
    Frame(u64),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid time `{input}`: {reason} (examples: 12.5, 12.5s, 850ms, 3us, 10ns, #120, -5s)")]
pub struct TimeSpecError {
    pub input: String,
    pub reason: &'static str,
}

impl FromStr for TimeSpec {
    type Err = TimeSpecError;

    fn from_str(input: &str) -> Result<TimeSpec, TimeSpecError> {
        let err = |reason| TimeSpecError {
            input: input.to_string(),
            reason,
        };
        let s = input.trim();
        if let Some(frame) = s.strip_prefix('#') {
            return frame
                .parse()
                .map(TimeSpec::Frame)
                .map_err(|_| err("a frame is `#` and a non-negative integer"));
        }
        let (from_end, s) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let ns = parse_duration(s).map_err(err)?;
        Ok(if from_end {
            TimeSpec::FromEnd(ns)
        } else {
            TimeSpec::At(ns)
        })
    }
}

/// Float seconds as the model's integer nanoseconds: round(t × 10⁹), saturating (the rule of
/// every format that stores float seconds).
pub fn nanos_of_seconds(t: f64) -> Nanos {
    (t * 1e9).round() as Nanos
}

/// A time in seconds: `exact`, the source's own float seconds, while they still say `time`
/// (a stage may have moved it since), else `time` / 10⁹.
pub fn seconds_of(time: Nanos, exact: Option<f64>) -> f64 {
    exact
        .filter(|t| t.is_finite() && nanos_of_seconds(*t) == time)
        .unwrap_or(time as f64 / 1e9)
}

/// Parses a non-negative duration into exact integer nanoseconds (no float rounding).
pub fn parse_duration(s: &str) -> Result<Nanos, &'static str> {
    let units: [(&str, u32); 6] = [
        ("ns", 0),
        ("us", 3),
        ("µs", 3),
        ("ms", 6),
        ("s", 9),
        ("", 9),
    ];
    let (number, scale) = units
        .iter()
        .find_map(|(suffix, scale)| s.strip_suffix(suffix).map(|n| (n, *scale)))
        .unwrap_or((s, 9));
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return Err("no number");
    }
    let digits_ok = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if !digits_ok(int_part) || !digits_ok(frac_part) {
        return Err("not a number with an optional unit");
    }
    if frac_part.len() > scale as usize {
        return Err("finer than one nanosecond");
    }
    let mut ns: i64 = 0;
    for b in int_part.bytes().chain(frac_part.bytes()) {
        ns = ns
            .checked_mul(10)
            .and_then(|n| n.checked_add(i64::from(b - b'0')))
            .ok_or("too large")?;
    }
    let pad = scale - frac_part.len() as u32;
    ns.checked_mul(10i64.pow(pad)).ok_or("too large")
}

impl fmt::Display for TimeSpec {
    /// As a flag takes it: `12.500000s`, `-5.000000s`, `#120`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeSpec::At(t) => Seconds(*t).fmt(f),
            TimeSpec::FromEnd(d) => write!(f, "-{}", Seconds(*d)),
            TimeSpec::Frame(n) => write!(f, "#{n}"),
        }
    }
}

// The one rule on windows `[start, end)`, for every format's slice (`pipeline::slice` and
// the formats that cut their own): a window that ends where or before it starts, or that
// lies wholly before the first record or after the last, holds nothing of the recording and
// is refused (a usage error: nothing is written). A window between two records is not: it
// holds the recording's state at its start.

/// Why a window is refused: its bounds as given (`#N`, a time, a time from the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowRefusal {
    /// It ends where it starts.
    Empty { start: TimeSpec, end: TimeSpec },
    /// It ends before it starts.
    Backwards { start: TimeSpec, end: TimeSpec },
    /// It lies wholly before the first record or after the last (`None`: open to the end).
    Outside {
        start: TimeSpec,
        end: Option<TimeSpec>,
    },
}

impl fmt::Display for WindowRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowRefusal::Empty { start, end } => write!(
                f,
                "the window [{start}, {end}) is empty: it ends where it starts"
            ),
            WindowRefusal::Backwards { start, end } => {
                write!(f, "the window ends ({end}) before it starts ({start})")
            }
            WindowRefusal::Outside { start, end } => {
                let end = end.map_or("the end".to_string(), |e| e.to_string());
                write!(
                    f,
                    "the window [{start}, {end}) lies outside the recording: it holds no record"
                )
            }
        }
    }
}

/// A time on the recording's axis as a bound, as `Seconds` shows it.
impl From<Seconds> for TimeSpec {
    fn from(s: Seconds) -> TimeSpec {
        TimeSpec::At(s.0)
    }
}

/// Why a window is refused before the recording is read: its bounds are of one kind (two
/// times, two frames, two times from the end; no start is time 0 or frame 0) and it ends
/// where or before it starts. `None` when that shows only once the bounds are resolved.
pub fn unordered_window(start: Option<TimeSpec>, end: Option<TimeSpec>) -> Option<WindowRefusal> {
    let end = end?;
    let start = match (start, end) {
        (Some(s), _) => s,
        (None, TimeSpec::Frame(_)) => TimeSpec::Frame(0),
        (None, _) => TimeSpec::At(0),
    };
    let order = match (start, end) {
        (TimeSpec::At(a), TimeSpec::At(b)) => b.cmp(&a),
        (TimeSpec::Frame(a), TimeSpec::Frame(b)) => b.cmp(&a),
        (TimeSpec::FromEnd(a), TimeSpec::FromEnd(b)) => a.cmp(&b),
        _ => return None,
    };
    unordered(start, end, order)
}

/// Why a window resolved to times on the recording's axis is refused for its bounds alone.
pub fn unordered_span(start: Nanos, end: Option<Nanos>) -> Option<WindowRefusal> {
    let end = end?;
    unordered(TimeSpec::At(start), TimeSpec::At(end), end.cmp(&start))
}

/// Why a window whose end is `order` from its start is refused (`None`: it ends after it).
pub fn unordered(
    start: TimeSpec,
    end: TimeSpec,
    order: std::cmp::Ordering,
) -> Option<WindowRefusal> {
    match order {
        std::cmp::Ordering::Greater => None,
        std::cmp::Ordering::Equal => Some(WindowRefusal::Empty { start, end }),
        std::cmp::Ordering::Less => Some(WindowRefusal::Backwards { start, end }),
    }
}

/// Whether the window `[start, end)` lies wholly outside a recording whose records lie in
/// `[first, last]`: after the last record, or ending at or before the first.
pub fn window_outside(start: Nanos, end: Option<Nanos>, first: Nanos, last: Nanos) -> bool {
    start > last || end.is_some_and(|e| e <= first)
}

/// The refusal of a window outside the recording.
pub fn outside(start: impl Into<TimeSpec>, end: Option<impl Into<TimeSpec>>) -> WindowRefusal {
    WindowRefusal::Outside {
        start: start.into(),
        end: end.map(Into::into),
    }
}

/// Formats nanoseconds as seconds with microsecond precision (`5.380761s`).
pub struct Seconds(pub Nanos);

impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        let (s, frac) = (abs / 1_000_000_000, abs % 1_000_000_000);
        if frac % 1000 == 0 {
            write!(f, "{sign}{s}.{:06}s", frac / 1000)
        } else {
            write!(f, "{sign}{s}.{frac:09}s")
        }
    }
}

/// Unix nanoseconds as an ISO-8601 UTC date and time (`2024-05-01T12:00:00.250Z`) with
/// `digits` fraction digits (0–9: the precision the format gave; the value is truncated to
/// it), or as many as the value needs when `digits` is `None`.
pub fn iso8601(unix_ns: i64, digits: Option<u8>) -> String {
    let secs = unix_ns.div_euclid(1_000_000_000);
    let frac = unix_ns.rem_euclid(1_000_000_000);
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let mut text = format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    );
    let all = format!("{frac:09}");
    let shown = match digits {
        Some(d) => &all[..usize::from(d.min(9))],
        None => all.trim_end_matches('0'),
    };
    if !shown.is_empty() {
        text.push('.');
        text.push_str(shown);
    }
    text.push('Z');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_documented_form() {
        let cases = [
            ("12.5", TimeSpec::At(12_500_000_000)),
            ("12.5s", TimeSpec::At(12_500_000_000)),
            ("850ms", TimeSpec::At(850_000_000)),
            ("3us", TimeSpec::At(3_000)),
            ("10ns", TimeSpec::At(10)),
            ("0.000000001", TimeSpec::At(1)),
            ("#120", TimeSpec::Frame(120)),
            ("-5s", TimeSpec::FromEnd(5_000_000_000)),
        ];
        for (text, want) in cases {
            assert_eq!(text.parse::<TimeSpec>(), Ok(want), "{text}");
        }
    }

    #[test]
    fn rejects_what_it_cannot_represent() {
        for bad in [
            "",
            "s",
            "1.5ns",
            "abc",
            "1e3",
            "#-1",
            "99999999999999999999",
            "0.0000000001",
        ] {
            assert!(bad.parse::<TimeSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn iso8601_dates() {
        assert_eq!(iso8601(0, None), "1970-01-01T00:00:00Z");
        assert_eq!(
            iso8601(1_714_564_800_250_000_000, None),
            "2024-05-01T12:00:00.25Z"
        );
        // The precision the format has, digits kept or cut to it.
        assert_eq!(
            iso8601(1_714_564_800_250_000_000, Some(3)),
            "2024-05-01T12:00:00.250Z"
        );
        assert_eq!(
            iso8601(1_714_564_800_250_000_000, Some(0)),
            "2024-05-01T12:00:00Z"
        );
        assert_eq!(
            iso8601(951_782_400_000_000_001, None),
            "2000-02-29T00:00:00.000000001Z"
        );
        assert_eq!(iso8601(-1, None), "1969-12-31T23:59:59.999999999Z");
        // GPS epoch, as Unix time.
        assert_eq!(
            iso8601(315_964_800_000_000_000, None),
            "1980-01-06T00:00:00Z"
        );
    }

    #[test]
    fn seconds_display() {
        assert_eq!(Seconds(5_380_761_000).to_string(), "5.380761s");
        assert_eq!(Seconds(1).to_string(), "0.000000001s");
    }
}
