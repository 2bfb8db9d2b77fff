//! Timestamps for messages that lost their index entry (spec §11 step 3): from a clock the
//! frames carry, else the previous message's time.
//!
//! The clock is the first one a frame of the scan carries: `server.timestamp` (the
//! server's monotonic clock, seconds) as the spec says, else `system.simulation.time`
//! (simulated picoseconds; frames of servers that do not send `server.timestamp` still
//! carry it). A clock value maps to microseconds from an anchor: the first value is the
//! previous message's time (0 at the start), and every message whose time was kept from
//! the index re-anchors the clock, so derived times continue from kept ones.

use super::keys;
use super::message;
use super::msgpack::{self, Head};

/// The largest time in microseconds that nanoseconds hold.
const MAX_MICROS: i64 = i64::MAX / 1000;

/// A clock a frame can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// `server.timestamp`: seconds of the server's monotonic clock.
    Server,
    /// `system.simulation.time`: simulated picoseconds, taken as seconds (so one frame of
    /// a typical 1.25 fs step is 1.25 ms apart); it restarts at each reset.
    Simulation,
}

impl Clock {
    pub fn key(self) -> &'static str {
        match self {
            Clock::Server => "server.timestamp",
            Clock::Simulation => "system.simulation.time",
        }
    }

    /// How one unit of the clock becomes recording time, for the summary.
    fn scale(self) -> &'static str {
        match self {
            Clock::Server => "seconds",
            Clock::Simulation => "simulated picoseconds, 1 ps taken as 1 s",
        }
    }
}

/// The clock values of one message's frame.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Clocks {
    pub server: Option<f64>,
    pub simulation: Option<f64>,
    /// The frame is a reset (`frame.index` 0).
    pub reset: bool,
}

impl Clocks {
    /// The clocks of a message in memory, found by walking its keys only.
    pub fn of(bytes: &[u8]) -> Clocks {
        let Some(range) = message::top_level(bytes)
            .ok()
            .and_then(|parts| parts.into_iter().find(|(n, _)| n == "frame"))
            .map(|(_, r)| r)
        else {
            return Clocks::default();
        };
        let number = |key: &str| {
            let pos = message::value_of(bytes, range.clone(), key)?;
            let x = match msgpack::head(bytes, pos).ok()?.0 {
                Head::F64(x) => x,
                Head::F32(x) => f64::from(x),
                Head::Int(i) => i as f64,
                Head::UInt(u) => u as f64,
                _ => return None,
            };
            x.is_finite().then_some(x)
        };
        Clocks {
            server: number(Clock::Server.key()),
            simulation: number(Clock::Simulation.key()),
            reset: number(keys::FRAME_INDEX) == Some(0.0),
        }
    }
}

/// What one message's synthesised timestamp is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Microseconds, never below the previous message's.
    pub micros: i64,
    /// The time the clock gave when it was below the previous message's (then clamped).
    pub clamped_from: Option<i64>,
}

/// Timestamps of a scan, one message after another.
#[derive(Debug, Default)]
pub struct Stamps {
    clock: Option<Clock>,
    /// (clock value, microseconds) that clock values are measured from.
    anchor: Option<(f64, i64)>,
    /// The last clock value seen.
    previous: Option<f64>,
    /// A reset came after the last clock value (the simulation clock may start again).
    reset_since: bool,
    last: i64,
    pub kept: u64,
    pub derived: u64,
    pub invented: u64,
    pub clamped: u64,
    /// Resets at which the simulation clock started again.
    pub restarts: u64,
}

impl Stamps {
    /// The timestamp of the next message (`bytes`), `kept` when its index entry had one.
    #[cfg(test)]
    pub fn next(&mut self, bytes: &[u8], kept: Option<i64>) -> Stamp {
        self.next_with(Clocks::of(bytes), kept)
    }

    /// The same, from the clocks of a message that was walked rather than read.
    pub fn next_with(&mut self, clocks: Clocks, kept: Option<i64>) -> Stamp {
        if self.clock.is_none() {
            self.clock = if clocks.server.is_some() {
                Some(Clock::Server)
            } else if clocks.simulation.is_some() {
                Some(Clock::Simulation)
            } else {
                None
            };
        }
        let value = match self.clock {
            Some(Clock::Server) => clocks.server,
            Some(Clock::Simulation) => clocks.simulation,
            None => None,
        };
        let previous = self.previous;
        self.reset_since |= clocks.reset;
        let reset_since = self.reset_since;
        if value.is_some() {
            self.previous = value;
            self.reset_since = false;
        }
        let micros = if let Some(t) = kept {
            self.kept += 1;
            if let Some(v) = value {
                self.anchor = Some((v, t));
            }
            t
        } else if let Some(v) = value {
            self.derived += 1;
            let restarted = self.clock == Some(Clock::Simulation)
                && reset_since
                && previous.is_some_and(|p| v < p);
            if restarted {
                self.restarts += 1;
            }
            if restarted || self.anchor.is_none() {
                self.anchor = Some((v, self.last));
            }
            let (a, at) = self.anchor.unwrap_or((v, self.last));
            // Saturating (`as` saturates, then the clamp), in integers: a wild clock must
            // not overflow nanoseconds, and i64::MAX / 1000 does not survive a trip
            // through f64.
            ((at as f64 + ((v - a) * 1e6).round()) as i64).clamp(0, MAX_MICROS)
        } else {
            self.invented += 1;
            self.last
        };
        let stamp = if micros < self.last {
            self.clamped += 1;
            Stamp {
                micros: self.last,
                clamped_from: Some(micros),
            }
        } else {
            Stamp {
                micros,
                clamped_from: None,
            }
        };
        self.last = stamp.micros;
        stamp
    }

    /// Where the times came from, for the scan's finding.
    pub fn summary(&self) -> String {
        let clock = self.clock.unwrap_or(Clock::Server);
        let mut s = format!(
            "{} kept from the index, {} derived from `{}` ({}), {} invented (the previous message's time)",
            self.kept,
            self.derived,
            clock.key(),
            clock.scale(),
            self.invented
        );
        if self.derived == 0 && self.clock.is_none() {
            s.push_str(
                "; no frame carries `server.timestamp` or `system.simulation.time`, so every time not kept is 0 or the previous message's",
            );
        }
        if self.restarts > 0 {
            s.push_str(&format!(
                ", the simulation clock started again at {} resets (times continue from the previous message)",
                self.restarts
            ));
        }
        if self.clamped > 0 {
            s.push_str(&format!(
                ", {} clamped to keep time from going back",
                self.clamped
            ));
        }
        s
    }

    /// The clock the derived times came from, if any frame carried one.
    pub fn clock(&self) -> Option<Clock> {
        self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::nanover::zip::msgpack::Encoder;

    fn frame(fields: &[(&str, f64)]) -> Vec<u8> {
        let mut e = Encoder::new();
        e.map_len(1);
        e.str("frame");
        e.map_len(fields.len() as u32);
        for (k, v) in fields {
            e.str(k);
            if *k == "frame.index" {
                e.int(*v as i64);
            } else {
                e.f64(*v);
            }
        }
        e.into_vec()
    }

    fn state() -> Vec<u8> {
        let mut e = Encoder::new();
        e.map_len(1);
        e.str("state");
        e.map_len(0);
        e.into_vec()
    }

    #[test]
    fn simulation_time_is_the_clock_without_server_timestamp_and_restarts_at_resets() {
        let mut s = Stamps::default();
        let sim = |i: f64, t: f64| frame(&[("frame.index", i), ("system.simulation.time", t)]);
        let times: Vec<i64> = [
            state(),
            sim(0.0, 0.5),
            sim(1.0, 0.75),
            state(),
            sim(2.0, 1.0),
            sim(0.0, 0.25),
            sim(1.0, 0.5),
        ]
        .iter()
        .map(|m| s.next(m, None).micros)
        .collect();
        assert_eq!(times, [0, 0, 250_000, 250_000, 500_000, 500_000, 750_000]);
        assert_eq!(s.clock(), Some(Clock::Simulation));
        assert_eq!((s.derived, s.invented, s.restarts, s.clamped), (5, 2, 1, 0));
        // A reset frame without the clock, then the clock lower: it started again too.
        assert_eq!(
            s.next(&frame(&[("frame.index", 0.0)]), None).micros,
            750_000
        );
        assert_eq!(s.next(&sim(1.0, 0.125), None).micros, 750_000);
        assert_eq!(s.next(&sim(2.0, 0.375), None).micros, 1_000_000);
        // Without a reset, a clock going back is clamped.
        assert_eq!(s.next(&sim(3.0, 0.25), None).micros, 1_000_000);
        assert_eq!((s.restarts, s.clamped), (2, 1));
    }

    #[test]
    fn server_timestamp_wins_and_going_back_is_clamped() {
        let mut s = Stamps::default();
        let both = |i: f64, server: f64, sim: f64| {
            frame(&[
                ("frame.index", i),
                ("server.timestamp", server),
                ("system.simulation.time", sim),
            ])
        };
        let a = s.next(&both(0.0, 100.0, 9.0), None);
        let b = s.next(&both(1.0, 100.5, 1.0), None);
        let c = s.next(&both(0.0, 100.25, 0.0), None);
        assert_eq!((a.micros, b.micros, c.micros), (0, 500_000, 500_000));
        assert_eq!(c.clamped_from, Some(250_000));
        assert_eq!(s.clock(), Some(Clock::Server));
    }

    #[test]
    fn derived_times_continue_from_kept_ones() {
        let mut s = Stamps::default();
        let f = |t: f64| frame(&[("frame.index", 5.0), ("server.timestamp", t)]);
        assert_eq!(s.next(&f(10.0), Some(7_000_000)).micros, 7_000_000);
        assert_eq!(s.next(&f(10.5), None).micros, 7_500_000);
        assert_eq!((s.kept, s.derived), (1, 1));
    }

    #[test]
    fn a_wild_clock_saturates_within_nanoseconds() {
        let mut s = Stamps::default();
        let f = |t: f64| frame(&[("frame.index", 1.0), ("server.timestamp", t)]);
        assert_eq!(s.next(&f(-1e300), None).micros, 0);
        assert_eq!(s.next(&f(1e300), None).micros, MAX_MICROS);
        assert_eq!(s.next(&f(9.2e12), None).micros, MAX_MICROS);
    }

    #[test]
    fn no_clock_at_all_is_zero_and_said() {
        let mut s = Stamps::default();
        assert_eq!(s.next(&frame(&[("frame.index", 0.0)]), None).micros, 0);
        assert!(s.summary().contains("no frame carries"), "{}", s.summary());
    }
}
