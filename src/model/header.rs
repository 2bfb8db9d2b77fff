//! What a recording declares up front: format, time origin, metadata, channels.

use serde_json::{Map, Value as Json};

use super::value::DType;

/// Index of a channel in [`Header::channels`].
pub type ChannelId = u32;

/// How the records of a channel combine over time: what a reader must have seen to know the
/// channel's full value at some instant. Folding (a slice's context, a writer that needs
/// whole values) is per channel and per entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Composition {
    /// Every record stands on its own: nothing carries over to the next one.
    Independent,
    /// Each record carries the keys that changed; a key replaces its previous value.
    /// A record whose frame value is 0 is a reset: it discards everything before it.
    FrameDelta,
    /// Each record carries keys that changed; `Value::Removed` deletes a key.
    StateDelta,
    /// Each record carries the channel's whole value, which holds until the next record
    /// (an Icarus static signal, a slowly sampled sensor).
    SampleHold,
}

/// What a channel's records carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelKind {
    /// Records with typed fields sampled over time.
    Signals,
    /// Discrete events.
    Events,
}

/// Key of [`Header::metadata`] naming the format a recording was mapped from, on a header a
/// mapping made (a family's `mapping.rs`): its records have no bytes of their own, and a writer
/// builds them from their values.
pub const MAPPED_FROM: &str = "simrec.mapped_from";

/// [`FieldSpec::semantic`] of a unit quaternion stored scalar first: w, x, y, z (an Icarus
/// `Quat<T>`). Writers that store rotations another way reorder it (Elodin's `world_pos`).
pub const QUATERNION_WXYZ: &str = "quaternion_wxyz";

/// [`FieldSpec::semantic`] of a unit quaternion stored scalar last: x, y, z, w (Unity's, an
/// XREC transform's rotation). Writers that name components name them so.
pub const QUATERNION_XYZW: &str = "quaternion_xyzw";

/// [`FieldSpec::semantic`] of a key that holds the record's frame value ([`Record::frame`]),
/// which a format keeps among the values too (NanoVer's `frame.index` in a `.nanover.zip`):
/// where the two agree, the key says nothing the frame value does not (`diff` leaves it out).
///
/// [`Record::frame`]: super::Record::frame
pub const FRAME_VALUE: &str = "frame_value";

/// What a channel declares about one of its fields before any record is read. Every part
/// but the name is optional: a format declares what it knows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FieldSpec {
    pub name: String,
    /// Element type; `None` when the format does not fix it.
    pub dtype: Option<DType>,
    /// Shape of the value (`[]` a scalar, `[3]` a vector); `None` when it varies or is unknown.
    pub shape: Option<Vec<usize>>,
    pub unit: Option<String>,
    /// What the value means beyond its type (`quaternion_wxyz`, `position`), as the format
    /// names it.
    pub semantic: Option<String>,
    /// Written once and constant for the whole recording.
    pub is_static: bool,
    /// Names of the value's elements in storage order, when the format names them (Elodin's
    /// `element_names`: `world_pos` is `qx, qy, qz, qw, x, y, z`): flat layouts name their
    /// columns with them.
    pub elements: Option<Vec<String>>,
}

impl FieldSpec {
    pub fn new(name: impl Into<String>) -> FieldSpec {
        FieldSpec {
            name: name.into(),
            ..FieldSpec::default()
        }
    }

    pub fn typed(name: impl Into<String>, dtype: DType, shape: &[usize]) -> FieldSpec {
        FieldSpec {
            dtype: Some(dtype),
            shape: Some(shape.to_vec()),
            ..FieldSpec::new(name)
        }
    }

    pub fn with_unit(mut self, unit: impl Into<String>) -> FieldSpec {
        self.unit = Some(unit.into());
        self
    }

    /// Whether type and shape are both declared: enough for a writer to lay out a column.
    pub fn is_complete(&self) -> bool {
        self.dtype.is_some() && self.shape.is_some()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    pub name: String,
    pub kind: ChannelKind,
    pub composition: Composition,
    /// Fields declared up front, in the format's order. Empty when the format declares none
    /// (their types are then known only from records); it may also declare only some
    /// fields, or only their units.
    pub fields: Vec<FieldSpec>,
    /// The records carry no key but the declared fields (an Icarus signal), so a reader of
    /// values can tell from the header alone which channels hold a key.
    pub declares_all: bool,
}

impl Channel {
    pub fn new(name: impl Into<String>, kind: ChannelKind, composition: Composition) -> Channel {
        Channel {
            name: name.into(),
            kind,
            composition,
            fields: Vec::new(),
            declares_all: false,
        }
    }
}

/// An absolute instant: time zero of a recording whose format stores one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Epoch {
    /// Nanoseconds since 1970-01-01T00:00:00Z.
    pub unix_ns: i64,
    /// Digits of the second's fraction the format gave (0–9): how the instant is shown.
    pub fraction_digits: u8,
}

impl Epoch {
    /// ISO-8601 UTC with the fraction digits the format gave (`2024-05-01T12:00:00.250Z`).
    pub fn iso8601(&self) -> String {
        super::time::iso8601(self.unix_ns, Some(self.fraction_digits))
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (a UTC instant, up to 9 fraction digits), keeping
    /// the number of fraction digits; `None` for anything else (another zone, a leap
    /// second `:60`, an impossible date).
    pub fn parse_iso8601(text: &str) -> Option<Epoch> {
        let text = text.strip_suffix('Z')?;
        let (date, time) = text.split_once('T')?;
        let number = |s: &str, len: usize| -> Option<i64> {
            (s.len() == len && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse().ok())
                .flatten()
        };
        let mut d = date.split('-');
        let (year, month, day) = (
            number(d.next()?, 4)?,
            number(d.next()?, 2)?,
            number(d.next()?, 2)?,
        );
        let (hms, fraction) = match time.split_once('.') {
            Some((hms, f)) if (1..=9).contains(&f.len()) => (hms, Some(f)),
            Some(_) => return None,
            None => (time, None),
        };
        let mut t = hms.split(':');
        let (hour, minute, second) = (
            number(t.next()?, 2)?,
            number(t.next()?, 2)?,
            number(t.next()?, 2)?,
        );
        if d.next().is_some() || t.next().is_some() {
            return None;
        }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        let month_days = [
            31,
            if leap { 29 } else { 28 },
            31,
            30,
            31,
            30,
            31,
            31,
            30,
            31,
            30,
            31,
        ];
        let valid = (1..=12).contains(&month)
            && day >= 1
            && day <= month_days[(month - 1) as usize]
            && hour < 24
            && minute < 60
            && second < 60;
        if !valid {
            return None;
        }
        // Days since 1970-01-01 of a civil date (H. Hinnant's algorithm).
        let y = if month <= 2 { year - 1 } else { year };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let mp = (month + 9) % 12;
        let doy = (153 * mp + 2) / 5 + day - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146_097 + doe - 719_468;
        let (frac_ns, digits) = match fraction {
            Some(f) => {
                let digits = f.len();
                let value: i64 = number(f, digits)?;
                (value * 10i64.pow(9 - digits as u32), digits as u8)
            }
            None => (0, 0),
        };
        let secs = days * 86_400 + hour * 3600 + minute * 60 + second;
        Some(Epoch {
            unix_ns: secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)?,
            fraction_digits: digits,
        })
    }
}

/// Where time zero of a recording is. Record times are always relative to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimeOrigin {
    /// The absolute instant of time zero, where the format records one.
    pub epoch: Option<Epoch>,
    /// Time system of the epoch (`UTC`, `TAI`, `GPS`, `MET`...); with no epoch, what time
    /// zero is ("recorder start").
    pub system: Option<String>,
}

impl TimeOrigin {
    /// The same origin moved `by` nanoseconds later (a rebased slice starts at its window).
    pub fn shifted(&self, by: i64) -> TimeOrigin {
        TimeOrigin {
            epoch: self.epoch.map(|e| Epoch {
                unix_ns: e.unix_ns.saturating_add(by),
                fraction_digits: e.fraction_digits.max(fraction_digits_needed(by)),
            }),
            system: self.system.clone(),
        }
    }
}

/// The fewest fraction-of-a-second digits that show `ns` exactly (20 ms: 2).
fn fraction_digits_needed(ns: i64) -> u8 {
    let mut digits = 9;
    let mut rest = ns.rem_euclid(1_000_000_000);
    while digits > 0 && rest % 10 == 0 {
        rest /= 10;
        digits -= 1;
    }
    digits
}

#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// Format name as simrec calls it (`nanover-traj`).
    pub format: String,
    pub format_version: String,
    pub origin: TimeOrigin,
    pub metadata: Map<String, Json>,
    pub channels: Vec<Channel>,
}

impl Header {
    pub fn new(format: impl Into<String>, format_version: impl Into<String>) -> Header {
        Header {
            format: format.into(),
            format_version: format_version.into(),
            origin: TimeOrigin::default(),
            metadata: Map::new(),
            channels: Vec::new(),
        }
    }

    pub fn channel(&self, id: ChannelId) -> Option<&Channel> {
        self.channels.get(id as usize)
    }

    pub fn channel_id(&self, name: &str) -> Option<ChannelId> {
        self.channels
            .iter()
            .position(|c| c.name == name)
            .map(|i| i as ChannelId)
    }

    /// Adds a channel and returns its id.
    pub fn add_channel(&mut self, channel: Channel) -> ChannelId {
        self.channels.push(channel);
        (self.channels.len() - 1) as ChannelId
    }

    /// Appends the channels `source` has beyond this header's (a copy of a reader's header
    /// kept by an adapter follows the channels the reader adds mid-stream).
    pub fn follow_channels(&mut self, source: &Header) {
        for channel in source
            .channels
            .get(self.channels.len()..)
            .unwrap_or_default()
        {
            self.channels.push(channel.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_epochs_parse_and_print_back_with_their_digits() {
        for text in [
            "1970-01-01T00:00:00Z",
            "2026-03-01T12:00:00Z",
            "2016-12-31T23:59:59.5Z",
            "2000-02-29T01:02:03.123456789Z",
            "1960-06-15T08:00:00.250Z",
        ] {
            let e = Epoch::parse_iso8601(text).unwrap();
            assert_eq!(e.iso8601(), text);
        }
        assert_eq!(
            Epoch::parse_iso8601("2026-03-01T12:00:00Z")
                .unwrap()
                .unix_ns,
            1_772_366_400_000_000_000
        );
        for bad in [
            "2026-03-01T12:00:00",
            "2026-03-01 12:00:00Z",
            "2026-02-29T00:00:00Z",
            "2016-12-31T23:59:60Z",
            "2026-03-01T12:00:00.Z",
            "2026-03-01T12:00:00.1234567890Z",
            "2026-3-01T12:00:00Z",
            "2026-03-01T12:00:00+01:00",
        ] {
            assert_eq!(Epoch::parse_iso8601(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_shifted_origin_moves_its_epoch_with_the_digits_the_shift_needs() {
        let o = TimeOrigin {
            epoch: Some(Epoch {
                unix_ns: 1_700_000_000_000_000_000,
                fraction_digits: 0,
            }),
            system: Some("TAI".into()),
        };
        let s = o.shifted(2_000_000_000);
        assert_eq!(s.epoch.unwrap().unix_ns, 1_700_000_002_000_000_000);
        assert_eq!(s.epoch.unwrap().fraction_digits, 0);
        assert_eq!(s.system.as_deref(), Some("TAI"));
        assert_eq!(o.shifted(1_500).epoch.unwrap().fraction_digits, 7);
        assert_eq!(
            o.shifted(20_000_000).epoch.unwrap().iso8601(),
            "2023-11-14T22:13:20.02Z"
        );
        assert_eq!(o.shifted(-250_000_000).epoch.unwrap().fraction_digits, 2);
        assert_eq!(TimeOrigin::default().shifted(5), TimeOrigin::default());
    }
}
