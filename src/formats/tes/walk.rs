//! The fast way to the world state at a cut (spec §11.2): walk packet headers (and the first
//! bytes of each payload: an object, resource, category or camera id and the update flags)
//! up to the first packet of the cut frame, remembering where the packets are that the
//! world state needs; then read only those, in stream order, and fold them.
//!
//! What the state needs of what precedes the cut: the last ServerInfo (and CoordinateFrame
//! after it), the last Category per id, the last Camera per id, each live mesh resource's
//! messages since its Create, each live persistent shape's Create and Data and, of its
//! Updates, the last full one, the partial ones after it and the first double-precision one
//! (the synthesised Update is f64 if any was), and the transients of the frame before the
//! cut (and of the frames Persist carried into it). Everything else (transients of ended
//! frames, superseded updates, destroyed shapes, their data) is skipped unread.
//!
//! Collated packets are walked inside when stored raw; a gzip-compressed collated body is
//! decoded in memory and the needed packets are kept as bytes. The walk gives up (`None`,
//! and the caller folds everything as before) at anything unusual: whole-file gzip, a bad
//! marker or header, a packet running past the data, or a cut frame that starts inside a
//! collated packet.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;

use super::decode::{
    self, Ctx, Sem, F_COLOUR, F_DOUBLE, F_POSITION, F_ROTATION, F_SCALE, F_UPDATE_MODE,
};
use super::packet::{PacketHeader, HEADER_LEN};
use super::reader::{DEFAULT_FRAME_TIME, DEFAULT_TIME_UNIT};
use super::world::World;
use crate::formats::input::Input;

/// Bytes fetched per read while walking: a few packet headers at a time, so that the
/// payloads of skipped large packets are not read.
const WALK_READ_AHEAD: usize = 1024;

/// Where a needed packet is.
enum Loc {
    File(u64, usize),
    Bytes(Vec<u8>),
}

/// A packet as the walk meets it: its place in the sequence, where it is in the file, and
/// its bytes when it is already in memory (from a gzip body).
struct Met<'b> {
    seq: u64,
    at: u64,
    len: usize,
    full: Option<&'b [u8]>,
}

impl Met<'_> {
    fn needed(&self) -> Needed {
        let loc = match self.full {
            Some(b) => Loc::Bytes(b.to_vec()),
            None => Loc::File(self.at, self.len),
        };
        Needed { seq: self.seq, loc }
    }
}

/// The object or resource id that starts a payload.
fn id32(payload: &[u8]) -> Option<u32> {
    payload
        .get(..4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

struct Needed {
    seq: u64,
    loc: Loc,
}

/// A live persistent shape's packets. Of its updates only those that still decide an
/// attribute are kept (the last full one, and after it, per component, the last partial one
/// that set it), plus its first update and its first f64 one: applied in stream order,
/// anything they set that a later one sets again is overwritten, so the fold sees the same
/// attributes, the same "changed" and the same precision as from every update. At most
/// seven updates per shape, however long the capture.
#[derive(Default)]
struct ShapePlan {
    create: Option<Needed>,
    data: Vec<Needed>,
    first_update: Option<Needed>,
    first_dp_update: Option<Needed>,
    last_full: Option<Needed>,
    /// (component bits this update still decides, the update).
    partials: Vec<(u16, Needed)>,
}

const COMPONENTS: u16 = F_POSITION | F_ROTATION | F_SCALE | F_COLOUR;

/// How a walk stops: before the first packet of frame n, or of the first frame starting at
/// or after t (µs).
#[derive(Debug, Clone, Copy)]
pub enum Cut {
    Frame(u64),
    TimeUs(u64),
}

/// Where the cut is, and the world state there.
pub struct Folded {
    /// File offset of the first packet of the cut frame (a top-level packet).
    pub pos: u64,
    pub frame: u64,
    pub time_us: u64,
    pub time_unit: u64,
    pub frame_time: u32,
    pub world: World,
}

#[derive(Default)]
struct Plan {
    seq: u64,
    server_info: Option<Needed>,
    coordinate_frame: Option<Needed>,
    categories: BTreeMap<u16, Needed>,
    cameras: BTreeMap<u8, Needed>,
    resources: BTreeMap<u32, Vec<Needed>>,
    shapes: HashMap<(u16, u32), ShapePlan>,
    transients: Vec<Needed>,
    not_carried: u64,
}

/// The first bytes of a packet: its header and up to `PEEK` payload bytes.
const PEEK: usize = 6;

struct Walker<'a> {
    input: &'a mut Input,
    plan: Plan,
    frame: u64,
    time_us: u64,
    time_unit: u64,
    frame_time: u32,
    cut: Cut,
    /// The version of the packet being looked at.
    version: u16,
}

/// What one packet tells the walk.
enum Step {
    Go,
    /// A Frame message ended a frame.
    FrameEnded,
    GiveUp,
}

impl Walker<'_> {
    fn fetch(&mut self, at: u64, n: usize) -> Option<Vec<u8>> {
        let end = at.checked_add(n as u64)?;
        if end > self.input.len() {
            return None;
        }
        let b = self.input.bytes(at, n).ok()?.to_vec();
        Some(b)
    }

    fn next_seq(&mut self) -> u64 {
        self.plan.seq += 1;
        self.plan.seq
    }

    /// Looks at one (non-collated) packet; `full` is the whole packet when it is already in
    /// memory (from a gzip body), `at` its file offset otherwise.
    fn packet(&mut self, head: &[u8], h: &PacketHeader, at: u64, full: Option<&[u8]>) -> Step {
        let payload_peek = &head[HEADER_LEN.min(head.len())..];
        self.version = h.version_minor;
        let (routing, message) = (h.routing_id, h.message_id);
        let met = Met {
            seq: self.next_seq(),
            at,
            len: h.packet_len(),
            full,
        };
        match routing {
            decode::R_SERVER_INFO | decode::R_CONTROL => {
                // Small: read whole, they decide frames and time.
                let Some(bytes) = self.whole(&met) else {
                    return Step::GiveUp;
                };
                return self.control(h, bytes, met.seq);
            }
            decode::R_CATEGORY if message == 0 => {
                if let Some(b) = payload_peek.get(..2) {
                    let id = u16::from_be_bytes([b[0], b[1]]);
                    self.plan.categories.insert(id, met.needed());
                }
            }
            decode::R_CAMERA if message == 0 => {
                if let Some(id) = payload_peek.first() {
                    self.plan.cameras.insert(*id, met.needed());
                }
            }
            decode::R_MESH => {
                if let Some(id) = id32(payload_peek) {
                    self.mesh(message, id, &met);
                }
            }
            decode::R_SHAPE_FIRST..=decode::R_SHAPE_LAST => {
                let Some(id) = id32(payload_peek) else {
                    return Step::Go;
                };
                return self.shape(h, id, payload_peek, &met);
            }
            1..=7 => {}
            _ => self.plan.not_carried += 1,
        }
        Step::Go
    }

    /// The whole packet, from memory or read from the file; `None` past the file's end.
    fn whole(&mut self, met: &Met) -> Option<Vec<u8>> {
        match met.full {
            Some(b) => Some(b.to_vec()),
            None => self.fetch(met.at, met.len),
        }
    }

    /// A server-info or control packet (`bytes`, whole): the time base, frame ends, the
    /// coordinate frame and resets.
    fn control(&mut self, h: &PacketHeader, bytes: Vec<u8>, seq: u64) -> Step {
        let payload = &bytes[h.payload_start()..h.payload_start() + h.payload_size as usize];
        let d = decode::decode(h.routing_id, h.message_id, payload, self.ctx());
        let needed = |l| Needed { seq, loc: l };
        match d.sem {
            Sem::ServerInfo {
                time_unit,
                frame_time,
                ..
            } => {
                self.time_unit = if time_unit == 0 {
                    DEFAULT_TIME_UNIT
                } else {
                    time_unit
                };
                self.frame_time = frame_time;
                self.plan.server_info = Some(needed(Loc::Bytes(bytes)));
                self.plan.coordinate_frame = None;
            }
            Sem::Control {
                id, flags, value32, ..
            } => match id {
                decode::C_FRAME => {
                    let units = if value32 == 0 || value32 == u32::MAX {
                        self.frame_time
                    } else {
                        value32
                    };
                    self.time_us = self
                        .time_us
                        .saturating_add(u64::from(units).saturating_mul(self.time_unit));
                    self.frame += 1;
                    if flags & 1 == 0 {
                        self.plan.transients.clear();
                    }
                    return Step::FrameEnded;
                }
                decode::C_COORDINATE_FRAME => {
                    self.plan.coordinate_frame = Some(needed(Loc::Bytes(bytes)));
                }
                decode::C_RESET => {
                    let p = &mut self.plan;
                    p.shapes.clear();
                    p.transients.clear();
                    p.resources.clear();
                    p.categories.clear();
                }
                _ => {}
            },
            _ => {}
        }
        Step::Go
    }

    /// A mesh resource's packet: its Create starts what it needs, its Destroy drops it.
    fn mesh(&mut self, message: u16, id: u32, met: &Met) {
        match message {
            decode::M_CREATE => {
                self.plan.resources.insert(id, vec![met.needed()]);
            }
            decode::M_DESTROY => {
                self.plan.resources.remove(&id);
            }
            _ => {
                if let Some(v) = self.plan.resources.get_mut(&id) {
                    v.push(met.needed());
                }
            }
        }
    }

    /// A shape's packet (object `id`, its payload starting `payload_peek`).
    fn shape(&mut self, h: &PacketHeader, id: u32, payload_peek: &[u8], met: &Met) -> Step {
        let (routing, message) = (h.routing_id, h.message_id);
        match (message, id) {
            (decode::S_CREATE | decode::S_DATA, 0) => self.plan.transients.push(met.needed()),
            (decode::S_CREATE, _) => {
                // Read whole: only a Create that decodes replaces a shape.
                let Some(bytes) = self.whole(met) else {
                    return Step::GiveUp;
                };
                let start = h.payload_start();
                let payload = &bytes[start..start + h.payload_size as usize];
                let d = decode::decode(routing, message, payload, self.ctx());
                if matches!(d.sem, Sem::ShapeCreate { .. }) {
                    let l = match met.full {
                        Some(_) => Loc::Bytes(bytes),
                        None => Loc::File(met.at, met.len),
                    };
                    self.plan.shapes.insert(
                        (routing, id),
                        ShapePlan {
                            create: Some(Needed {
                                seq: met.seq,
                                loc: l,
                            }),
                            ..ShapePlan::default()
                        },
                    );
                }
            }
            (decode::S_DATA, _) => {
                if let Some(s) = self.plan.shapes.get_mut(&(routing, id)) {
                    s.data.push(met.needed());
                }
            }
            (decode::S_DESTROY, _) => {
                self.plan.shapes.remove(&(routing, id));
            }
            (decode::S_UPDATE, _) => self.shape_update(h, id, payload_peek, met),
            _ => {}
        }
        Step::Go
    }

    /// A shape's Update: which of them a window that starts later needs (the first, the
    /// first in double precision, the last full one and the partial ones after it).
    fn shape_update(&mut self, h: &PacketHeader, id: u32, payload_peek: &[u8], met: &Met) {
        let Some(f) = payload_peek.get(4..6) else {
            return;
        };
        let flags = u16::from_be_bytes([f[0], f[1]]);
        let size = h.payload_size as usize;
        let legacy = self.version < 3;
        let dp = !legacy
            && (flags & F_DOUBLE != 0
                || (self.version == 3 && flags & 64 != 0 && size >= 6 + decode::ATTR_F64));
        let attr = if dp {
            decode::ATTR_F64
        } else {
            decode::ATTR_F32
        };
        if size < 6 + attr {
            // Too short to decode: the fold ignores it too.
            return;
        }
        let Some(s) = self.plan.shapes.get_mut(&(h.routing_id, id)) else {
            return;
        };
        if s.first_update.is_none() {
            s.first_update = Some(met.needed());
        }
        if dp && s.first_dp_update.is_none() {
            s.first_dp_update = Some(met.needed());
        }
        if flags & F_UPDATE_MODE == 0 {
            s.last_full = Some(met.needed());
            s.partials.clear();
        } else {
            let bits = flags & COMPONENTS;
            for p in &mut s.partials {
                p.0 &= !bits;
            }
            s.partials.retain(|p| p.0 != 0);
            if bits != 0 {
                s.partials.push((bits, met.needed()));
            }
        }
    }

    fn ctx(&self) -> Ctx {
        Ctx {
            version_minor: self.version.min(4),
            values: false,
            data_dp: None,
        }
    }

    /// Walks the inner packets of a collated body (in memory when `body` is given, else in
    /// the file at `at`, `n` bytes). `None` to give up.
    fn body(&mut self, at: u64, n: usize, body: Option<&[u8]>) -> Option<()> {
        let mut p = 0usize;
        while p < n {
            let head = match body {
                Some(b) => b.get(p..(p + HEADER_LEN + PEEK).min(n))?.to_vec(),
                None => {
                    let k = (HEADER_LEN + PEEK).min(n - p);
                    self.fetch(at + p as u64, k)?
                }
            };
            let h = PacketHeader::parse(&head).filter(|h| h.plausible())?;
            let len = h.packet_len();
            if p + len > n || h.routing_id == decode::R_COLLATED {
                return None;
            }
            let full = body.map(|b| &b[p..p + len]);
            match self.packet(&head, &h, at + p as u64, full) {
                Step::GiveUp => return None,
                // The cut frame would start inside this collated body, where the reader
                // cannot start: give up.
                Step::FrameEnded if p + len < n && self.reached(self.cut) => return None,
                _ => {}
            }
            p += len;
        }
        Some(())
    }

    fn reached(&self, cut: Cut) -> bool {
        match cut {
            Cut::Frame(n) => self.frame >= n,
            Cut::TimeUs(t) => self.time_us >= t,
        }
    }
}

/// Walks `input` to the cut and folds the world state there; `None` when the walk cannot
/// (the caller then reads everything). The file must start with a packet (no gzip at 0).
pub fn fold_to(input: &mut Input, cut: Cut) -> Option<Folded> {
    input.set_read_ahead(WALK_READ_AHEAD);
    let mut w = Walker {
        input,
        plan: Plan::default(),
        frame: 0,
        time_us: 0,
        time_unit: DEFAULT_TIME_UNIT,
        frame_time: DEFAULT_FRAME_TIME,
        cut,
        version: 4,
    };
    let mut pos = 0u64;
    let len = w.input.len();
    loop {
        if w.reached(cut) {
            break;
        }
        if pos >= len {
            // The data ends before the cut.
            return None;
        }
        let k = ((HEADER_LEN + 8) as u64).min(len - pos) as usize;
        let head = w.fetch(pos, k)?;
        let h = PacketHeader::parse(&head).filter(|h| h.plausible())?;
        if h.routing_id == decode::R_COLLATED {
            if head.len() < HEADER_LEN + 8 {
                return None;
            }
            let flags = u16::from_be_bytes([head[16], head[17]]);
            let ub = u32::from_be_bytes([head[20], head[21], head[22], head[23]]) as usize;
            if h.no_crc() && ub > 65535 {
                // Oversized file-only collated packets: rare; the reader handles them.
                return None;
            }
            let plen = h.packet_len();
            if pos + plen as u64 > len || (h.payload_size as usize) < 8 {
                return None;
            }
            let stored = h.payload_size as usize - 8;
            let body_at = pos + (HEADER_LEN + 8) as u64;
            if flags & 1 != 0 {
                let bytes = w.fetch(body_at, stored)?;
                let mut body = Vec::with_capacity(ub.min(1 << 16));
                flate2::bufread::GzDecoder::new(&bytes[..])
                    .take(ub as u64 + 1)
                    .read_to_end(&mut body)
                    .ok()?;
                if body.len() != ub {
                    return None;
                }
                w.body(body_at, ub, Some(&body))?;
            } else {
                if stored != ub {
                    return None;
                }
                w.body(body_at, ub, None)?;
            }
            pos += plen as u64;
            continue;
        }
        let plen = h.packet_len();
        if pos + plen as u64 > len {
            return None;
        }
        let peek_len = (HEADER_LEN + PEEK).min(plen).min(head.len());
        let peek = head[..peek_len].to_vec();
        if let Step::GiveUp = w.packet(&peek, &h, pos, None) {
            return None;
        }
        pos += plen as u64;
    }
    // Read what the state needs, in stream order, and fold it.
    let plan = std::mem::take(&mut w.plan);
    let mut needed: Vec<Needed> = Vec::new();
    needed.extend(plan.server_info);
    needed.extend(plan.coordinate_frame);
    needed.extend(plan.categories.into_values());
    needed.extend(plan.cameras.into_values());
    for v in plan.resources.into_values() {
        needed.extend(v);
    }
    for (_, s) in plan.shapes {
        needed.extend(s.create);
        needed.extend(s.data);
        let mut updates: Vec<Needed> = Vec::new();
        updates.extend(s.first_update);
        updates.extend(s.first_dp_update);
        updates.extend(s.last_full);
        updates.extend(s.partials.into_iter().map(|p| p.1));
        updates.sort_by_key(|n| n.seq);
        updates.dedup_by_key(|n| n.seq);
        needed.extend(updates);
    }
    needed.extend(plan.transients);
    needed.sort_by_key(|n| n.seq);
    let mut world = World::default();
    world.not_carried = plan.not_carried;
    for n in needed {
        match n.loc {
            Loc::Bytes(b) => world.apply(&b),
            Loc::File(at, l) => {
                let b = w.fetch(at, l)?;
                world.apply(&b);
            }
        }
    }
    Some(Folded {
        pos,
        frame: w.frame,
        time_us: w.time_us,
        time_unit: w.time_unit,
        frame_time: w.frame_time,
        world,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::formats::tes::TesReader;
    use crate::formats::ReadOptions;

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/tes")
            .join(name)
    }

    /// The walk's world state equals the fold of every packet before the cut, and the cut
    /// is where frame n starts.
    #[test]
    fn the_walk_folds_what_a_full_fold_folds() {
        for name in [
            "small_plain.3es",
            "small_collate.3es",
            "small_compress.3es",
            "medium_collate.3es",
        ] {
            let path = fixture(name);
            let options = ReadOptions {
                decode: false,
                lenient: false,
                until_damage: false,
                assume_version: None,
                deep: false,
                epoch: None,
                time_system: None,
                check_only: false,
                discontinuity: None,
            };
            let records: Vec<_> = TesReader::open(&path, options)
                .unwrap()
                .map(|r| r.unwrap())
                .collect();
            for n in [1u64, 7, 20, 33, 49, 50] {
                let mut input = Input::open(&path).unwrap();
                let f = fold_to(&mut input, Cut::Frame(n))
                    .unwrap_or_else(|| panic!("{name}: the walk gave up at frame {n}"));
                assert_eq!(f.frame, n);
                let mut full = World::default();
                for r in records.iter().filter(|r| r.frame.unwrap() < n as i64) {
                    full.apply(&r.raw.as_ref().unwrap().bytes);
                }
                assert_eq!(f.world.snapshot(), full.snapshot(), "{name} frame {n}");
                assert_eq!(f.world.packets(), full.packets(), "{name} frame {n}");
                assert_eq!(f.world.server_info, full.server_info);
                let first = records.iter().find(|r| r.frame.unwrap() >= n as i64);
                assert_eq!(
                    first.map(|r| r.time),
                    first.map(|_| f.time_us as i64 * 1000),
                    "{name} frame {n}"
                );
                // By time: the first frame starting at or after the cut's start.
                let mut input = Input::open(&path).unwrap();
                let g = fold_to(&mut input, Cut::TimeUs(f.time_us)).unwrap();
                assert_eq!((g.pos, g.frame), (f.pos, f.frame));
            }
        }
        // Every truncation and a flipped byte anywhere: an answer or a refusal, never a panic.
        let bytes = std::fs::read(fixture("small_compress.3es")).unwrap();
        for cut in (0..bytes.len()).step_by(3) {
            let mut input = Input::from_bytes(bytes[..cut].to_vec());
            let _ = fold_to(&mut input, Cut::Frame(30));
            let mut flipped = bytes.clone();
            flipped[cut] ^= 0x5a;
            let mut input = Input::from_bytes(flipped);
            let _ = fold_to(&mut input, Cut::TimeUs(700_000));
        }
        // Whole-file gzip cannot be walked: the caller folds everything.
        let mut input = Input::open(&fixture("small_filegzip.3es")).unwrap();
        assert!(fold_to(&mut input, Cut::Frame(5)).is_none());
    }

    /// Partial, full, f64 and no-op updates, transients carried by Persist, a destroyed and
    /// recreated id, a reset: the few packets the walk keeps fold to the same scene.
    #[test]
    fn kept_updates_fold_like_all_of_them() {
        use crate::formats::tes::packet::{build, control_payload, server_info_payload};
        fn attrs(p: &mut Vec<u8>, dp: bool, v: f64) {
            p.extend_from_slice(&0x11223344u32.to_be_bytes());
            for k in 0..10 {
                let x = v + k as f64;
                if dp {
                    p.extend_from_slice(&x.to_be_bytes());
                } else {
                    p.extend_from_slice(&(x as f32).to_be_bytes());
                }
            }
        }
        let create = |id: u32, v: f64| {
            let mut p = id.to_be_bytes().to_vec();
            p.extend_from_slice(&[0; 6]);
            attrs(&mut p, false, v);
            build(64, 1, &p)
        };
        let update = |id: u32, flags: u16, v: f64| {
            let mut p = id.to_be_bytes().to_vec();
            p.extend_from_slice(&flags.to_be_bytes());
            attrs(&mut p, flags & 1 != 0, v);
            build(64, 2, &p)
        };
        let frame = |persist: bool| build(2, 1, &control_payload(u32::from(persist), 10, 0));
        let (mode, pos, rot, colour) = (512, 1024, 2048, 8192);
        let packets = vec![
            build(1, 0, &server_info_payload(1000, 10, 0)),
            create(1, 0.0),
            create(2, 0.0),
            create(3, 0.0),
            update(1, mode | pos | 1, 1.0), // f64 partial, overridden later
            update(2, mode, 2.0),           // a no-op partial: still "changed"
            frame(false),
            update(1, mode | pos | colour, 3.0),
            update(1, mode | rot, 4.0),
            update(1, mode | pos, 5.0),
            update(3, 0, 6.0), // full
            update(3, mode | colour, 7.0),
            create(0, 8.0), // a transient carried by Persist
            frame(true),
            update(3, 0, 9.0),
            build(64, 3, &4u32.to_be_bytes()),
            create(4, 10.0),
            build(64, 3, &4u32.to_be_bytes()),
            create(4, 11.0),
            update(4, mode | rot, 12.0),
            frame(false),
            create(0, 13.0),
            frame(true),
            update(1, mode | rot | 1, 14.0),
            frame(false),
        ];
        let mut full = World::default();
        let mut bytes = Vec::new();
        for (i, p) in packets.iter().enumerate() {
            bytes.extend_from_slice(p);
            full.apply(p);
            if p[9] == 2 && p[11] == 1 {
                let frames = packets[..=i]
                    .iter()
                    .filter(|q| q[9] == 2 && q[11] == 1)
                    .count();
                let mut input = Input::from_bytes(bytes.clone());
                let f = fold_to(&mut input, Cut::Frame(frames as u64)).unwrap();
                assert_eq!(f.world.snapshot(), full.snapshot(), "after frame {frames}");
                assert_eq!(f.world.packets(), full.packets(), "after frame {frames}");
            }
        }
        // A reset empties the scene for the walk too.
        bytes.extend_from_slice(&build(2, 5, &control_payload(0, 0, 0)));
        bytes.extend_from_slice(&frame(false));
        let mut input = Input::from_bytes(bytes);
        let f = fold_to(&mut input, Cut::Frame(6)).unwrap();
        assert_eq!(f.world.packets(), Vec::<Vec<u8>>::new());
        assert_eq!(f.world.server_info, Some((1000, 10, 0)));
    }
}
