//! One message of a scan walked through the input's read window, never held whole:
//! its length, its parts, its `frame.index` and the clocks its frame carries. A header
//! walk of a crashed archive (`inspect`) and the count of what `recover` would keep use
//! it, so a message of any size is walked in the memory of the window.

use super::index::Types;
use super::keys;
use super::msgpack::{self, Head, Kind, Shape};
use super::stamps::Clocks;
use crate::formats::input::Input;
use crate::model::Value;

/// Keys longer than this are not among those a walk looks for.
const MAX_KEY: u64 = 64;

/// What a walk learnt about one message.
#[derive(Debug, Default, PartialEq)]
pub struct Walked {
    pub len: u64,
    pub types: Types,
    /// The frame's `frame.index`, when it is an integer.
    pub frame_index: Option<Value>,
    pub clocks: Clocks,
}

/// Why a walk stopped: the message is cut off or invalid, or not a map.
#[derive(Debug, PartialEq)]
pub enum Stop {
    Invalid(msgpack::Error),
    NotMap,
}

impl From<msgpack::Error> for Stop {
    fn from(e: msgpack::Error) -> Stop {
        Stop::Invalid(e)
    }
}

struct Walker<'i> {
    input: &'i mut Input,
    start: u64,
    end: u64,
}

impl Walker<'_> {
    fn fail<T>(&self, at: u64, what: impl Into<String>) -> Result<T, msgpack::Error> {
        Err(msgpack::Error {
            at: (at - self.start) as usize,
            what: what.into(),
        })
    }

    fn head_bytes(&mut self, p: u64) -> Result<&[u8], msgpack::Error> {
        let n = (self.end.saturating_sub(p)).min(9) as usize;
        if n == 0 {
            return self.fail(p, "the value is cut off by the end of its data");
        }
        let start = self.start;
        self.input.bytes(p, n).map_err(|e| msgpack::Error {
            at: (p - start) as usize,
            what: e.to_string(),
        })
    }

    fn shape(&mut self, p: u64) -> Result<Shape, msgpack::Error> {
        let start = self.start;
        let sh = msgpack::shape(self.head_bytes(p)?).map_err(|e| msgpack::Error {
            at: (p - start) as usize + e.at,
            what: e.what,
        })?;
        if p + sh.header as u64 + sh.payload > self.end {
            return self.fail(p, "the value is cut off by the end of its data");
        }
        Ok(sh)
    }

    /// Position after the value at `p`, walking headers with a counter of values to go.
    fn skip(&mut self, p: u64) -> Result<u64, msgpack::Error> {
        let mut pending = 1u64;
        let mut p = p;
        while pending > 0 {
            let sh = self.shape(p)?;
            let at = p;
            p += sh.header as u64 + sh.payload;
            pending = pending - 1 + sh.children;
            // Every value is at least one byte: a count beyond what is left cannot be real.
            if pending > self.end - p {
                return self.fail(at, "a container claims more values than its data can hold");
            }
        }
        Ok(p)
    }

    /// The text of a short string at `p` (None for anything else), and the position after it.
    fn key(&mut self, p: u64) -> Result<(Option<String>, u64), msgpack::Error> {
        let sh = self.shape(p)?;
        if sh.kind != Kind::Str {
            return Ok((None, self.skip(p)?));
        }
        let next = p + sh.header as u64 + sh.payload;
        if sh.payload > MAX_KEY {
            return Ok((Some(String::new()), next));
        }
        let start = self.start;
        let text = self
            .input
            .bytes(p + sh.header as u64, sh.payload as usize)
            .map_err(|e| msgpack::Error {
                at: (p - start) as usize,
                what: e.to_string(),
            })?;
        Ok((Some(String::from_utf8_lossy(text).into_owned()), next))
    }

    /// A scalar at `p` (numbers only; anything else is None).
    fn number(&mut self, p: u64) -> Result<Option<Head>, msgpack::Error> {
        let bytes = self.head_bytes(p)?;
        Ok(match msgpack::head(bytes, 0) {
            Ok((h @ (Head::Int(_) | Head::UInt(_) | Head::F32(_) | Head::F64(_)), _)) => Some(h),
            _ => None,
        })
    }
}

fn finite(h: Option<Head>) -> Option<f64> {
    let x = match h? {
        Head::F64(x) => x,
        Head::F32(x) => f64::from(x),
        Head::Int(i) => i as f64,
        Head::UInt(u) => u as f64,
        _ => return None,
    };
    x.is_finite().then_some(x)
}

/// Walks the message at `pos` (its data ends by `end`).
pub fn walk(input: &mut Input, pos: u64, end: u64) -> Result<Walked, Stop> {
    let mut w = Walker {
        input,
        start: pos,
        end,
    };
    let top = w.shape(pos)?;
    if top.kind != Kind::Map {
        return Err(Stop::NotMap);
    }
    let mut out = Walked::default();
    let mut p = pos + top.header as u64;
    for _ in 0..top.children / 2 {
        let (name, vpos) = w.key(p)?;
        let Some(name) = name else {
            return Err(Stop::NotMap);
        };
        out.types.push(&name);
        let vend = w.skip(vpos)?;
        if name == "frame" {
            let sh = w.shape(vpos)?;
            if sh.kind == Kind::Map {
                let mut q = vpos + sh.header as u64;
                for _ in 0..sh.children / 2 {
                    let (key, kv) = w.key(q)?;
                    match key.as_deref() {
                        Some(keys::FRAME_INDEX) => {
                            let h = w.number(kv)?;
                            out.clocks.reset = finite(h.clone()) == Some(0.0);
                            out.frame_index = match h {
                                Some(Head::Int(i)) => Some(Value::Int(i)),
                                Some(Head::UInt(u)) => {
                                    Some(i64::try_from(u).map_or(Value::UInt(u), Value::Int))
                                }
                                _ => None,
                            };
                        }
                        Some("server.timestamp") => out.clocks.server = finite(w.number(kv)?),
                        Some("system.simulation.time") => {
                            out.clocks.simulation = finite(w.number(kv)?)
                        }
                        _ => {}
                    }
                    q = w.skip(kv)?;
                }
            }
        }
        p = vend;
    }
    out.len = p - pos;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::nanover::zip::msgpack::Encoder;
    use crate::formats::nanover::zip::stamps::Clocks;

    fn message() -> Vec<u8> {
        let mut e = Encoder::new();
        e.map_len(2);
        e.str("frame");
        e.map_len(4);
        e.str("particle.positions");
        e.bin(&[0; 300]);
        e.str("frame.index");
        e.int(7);
        e.str("system.simulation.time");
        e.f64(0.5);
        e.str("server.timestamp");
        e.f64(12.25);
        e.str("state");
        e.map_len(1);
        e.str("updates");
        e.map_len(0);
        e.into_vec()
    }

    #[test]
    fn a_walk_finds_what_decoding_finds() {
        let m = message();
        let mut bytes = m.clone();
        bytes.extend_from_slice(&m);
        let end = bytes.len() as u64;
        let mut input = Input::from_bytes(bytes);
        let w = walk(&mut input, 0, end).unwrap();
        assert_eq!(w.len, m.len() as u64);
        assert_eq!(w.types.names(), ["frame", "state"]);
        assert_eq!(w.frame_index, Some(Value::Int(7)));
        assert_eq!(w.clocks, Clocks::of(&m));
        assert_eq!(
            (w.clocks.server, w.clocks.simulation, w.clocks.reset),
            (Some(12.25), Some(0.5), false)
        );
        assert_eq!(walk(&mut input, w.len, end).unwrap().len, m.len() as u64);
    }

    #[test]
    fn every_cut_stops_cleanly() {
        let m = message();
        for cut in 0..m.len() {
            let mut input = Input::from_bytes(m[..cut].to_vec());
            assert!(walk(&mut input, 0, cut as u64).is_err(), "cut at {cut}");
        }
        let mut input = Input::from_bytes(vec![0x92, 1, 2]);
        assert_eq!(walk(&mut input, 0, 3), Err(Stop::NotMap));
        // A map claiming 2^32-1 entries in a few bytes.
        let mut input = Input::from_bytes(vec![0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, b'k', 1]);
        assert!(matches!(walk(&mut input, 0, 8), Err(Stop::Invalid(_))));
    }
}
