//! Merging captures onto one timeline (spec §11.3): one ServerInfo in the greatest common
//! time unit, output frames at the sorted union of the inputs' frame start times, ids that
//! collide between inputs remapped in every message that names them, resets turned into
//! destroys of the input's own shapes and resources, transients re-emitted while their
//! input frame spans several output frames.
//!
//! A pre-scan (header walk, no values) collects the ids each input uses and its time units;
//! then every input is read once more, k-way by frame start time. Memory holds one record
//! per input, the id maps and each input's live scene (shape ids, resource ids, transients).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use super::decode::{self, Ctx, Sem};
use super::packet::{self, PacketHeader};
use super::reader::{TesReader, DEFAULT_FRAME_TIME, DEFAULT_TIME_UNIT};
use super::{packet_record, RAW_FORMAT};
use crate::formats::{ReadError, ReadOptions, Source, Unreadable};
use crate::model::{Header, Record};
use crate::report::{Finding, Findings, Severity};

/// Finding codes of a merge.
pub const MERGE_COORDINATE_FRAME: &str = "TES_MERGE_COORDINATE_FRAME";
pub const MERGE_USER_IDS: &str = "TES_MERGE_USER_IDS";
pub const MERGE_LONG_FRAME: &str = "TES_MERGE_LONG_FRAME";

/// An id namespace (spec §11.3): object ids per shape routing id, mesh resources,
/// categories, cameras.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Ns {
    Object(u16),
    Mesh,
    Category,
    Camera,
}

impl Ns {
    /// Largest id the namespace's field holds.
    fn max(self) -> u32 {
        match self {
            Ns::Object(_) | Ns::Mesh => u32::MAX,
            Ns::Category => u16::MAX as u32,
            Ns::Camera => u8::MAX as u32,
        }
    }

    /// Whether id 0 has a meaning of its own and is never remapped (a transient shape;
    /// no category).
    fn zero_fixed(self) -> bool {
        matches!(self, Ns::Object(_) | Ns::Category)
    }
}

/// One id field of a packet: its namespace, byte offset in the packet, width and value.
#[derive(Debug, Clone, Copy)]
struct IdField {
    ns: Ns,
    at: usize,
    width: usize,
    value: u32,
}

/// The id fields of one (non-collated) packet and what it means.
fn id_fields(p: &[u8], out: &mut Vec<IdField>) -> Option<(PacketHeader, Sem)> {
    out.clear();
    let h = PacketHeader::parse(p).filter(|h| h.packet_len() == p.len())?;
    let start = h.payload_start();
    let payload = &p[start..start + h.payload_size as usize];
    let (routing, message) = (h.routing_id, h.message_id);
    let d = decode::decode(
        routing,
        message,
        payload,
        Ctx {
            version_minor: h.version_minor.min(4),
            values: false,
            data_dp: None,
        },
    );
    let be32 = |at: usize| {
        payload
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let mut push = |ns, at: usize, width, value| {
        out.push(IdField {
            ns,
            at: start + at,
            width,
            value,
        })
    };
    match routing {
        decode::R_MESH if (1..=10).contains(&message) => {
            if let Some(id) = be32(0) {
                push(Ns::Mesh, 0, 4, id);
            }
        }
        decode::R_CATEGORY => {
            if let Sem::Category { id, parent, .. } = &d.sem {
                push(Ns::Category, 0, 2, u32::from(*id));
                if *parent != 0 {
                    push(Ns::Category, 2, 2, u32::from(*parent));
                }
            }
        }
        decode::R_CAMERA => {
            if let Sem::Camera { id } = &d.sem {
                push(Ns::Camera, 0, 1, u32::from(*id));
            }
        }
        decode::R_SHAPE_FIRST..=decode::R_SHAPE_LAST if (1..=4).contains(&message) => {
            if let Some(id) = be32(0).filter(|id| *id != 0) {
                push(Ns::Object(routing), 0, 4, id);
            }
            if message == decode::S_CREATE {
                if let Some(c) = payload.get(4..6) {
                    let category = u16::from_be_bytes([c[0], c[1]]);
                    if category != 0 {
                        push(Ns::Category, 4, 2, u32::from(category));
                    }
                }
                if let Sem::ShapeCreate {
                    attrs, resources, ..
                } = &d.sem
                {
                    let asize = if attrs.dp {
                        decode::ATTR_F64
                    } else {
                        decode::ATTR_F32
                    };
                    let mut at = match routing {
                        decode::R_MESH_SET => 10 + asize + 2,
                        _ => 10 + asize,
                    };
                    let step = if routing == decode::R_MESH_SET {
                        4 + asize
                    } else {
                        0
                    };
                    for r in resources {
                        // Only where the layout puts it (a defensive check of the offsets).
                        if be32(at) == Some(*r) {
                            push(Ns::Mesh, at, 4, *r);
                        }
                        at += step;
                    }
                }
            }
        }
        _ => {}
    }
    Some((h, d.sem))
}

/// What the pre-scan learns about one input.
#[derive(Default)]
struct Scan {
    used: BTreeMap<Ns, BTreeSet<u32>>,
    /// Category definitions: id → (parent, name); the last one wins.
    categories: BTreeMap<u32, (u32, String)>,
    /// Every time unit in effect (µs) at some point.
    time_units: BTreeSet<u64>,
    /// The first ServerInfo: (time unit, default frame time, coordinate frame).
    server_info: Option<(u64, u32, u8)>,
    user_packets: u64,
}

fn scan(path: &Path, options: ReadOptions) -> Result<Scan, ReadError> {
    let mut reader = TesReader::open_packets(path, options)?;
    let mut s = Scan::default();
    let mut fields = Vec::new();
    let mut first = true;
    for r in reader.by_ref() {
        let r = r?;
        let Some(raw) = &r.raw else { continue };
        let Some((h, sem)) = id_fields(&raw.bytes, &mut fields) else {
            continue;
        };
        if first && h.routing_id != decode::R_SERVER_INFO {
            // Defaults apply until a ServerInfo appears.
            s.time_units.insert(DEFAULT_TIME_UNIT);
        }
        first = false;
        for f in &fields {
            s.used.entry(f.ns).or_default().insert(f.value);
        }
        match sem {
            Sem::Category { id, parent, name } => {
                s.categories
                    .insert(u32::from(id), (u32::from(parent), name));
            }
            Sem::ServerInfo {
                time_unit,
                frame_time,
                coordinate_frame,
            } => {
                let tu = if time_unit == 0 {
                    DEFAULT_TIME_UNIT
                } else {
                    time_unit
                };
                s.time_units.insert(tu);
                s.server_info
                    .get_or_insert((tu, frame_time, coordinate_frame));
            }
            _ => {}
        }
        if h.routing_id >= 78 || (8..=63).contains(&h.routing_id) || h.routing_id == 0 {
            s.user_packets += 1;
        }
    }
    if s.time_units.is_empty() {
        s.time_units.insert(DEFAULT_TIME_UNIT);
    }
    Ok(s)
}

/// Per input, per namespace: original id → output id (only ids that change).
type Maps = HashMap<Ns, HashMap<u32, u32>>;

/// Hands out ids above every id used in a namespace, then the smallest free ones.
struct Alloc {
    taken: BTreeSet<u32>,
    next: Option<u32>,
    max: u32,
    zero_fixed: bool,
}

impl Alloc {
    fn new(ns: Ns, all: BTreeSet<u32>) -> Alloc {
        let next = match all.last() {
            Some(m) => m.checked_add(1).filter(|n| *n <= ns.max()),
            None => Some(1),
        };
        Alloc {
            taken: all,
            next,
            max: ns.max(),
            zero_fixed: ns.zero_fixed(),
        }
    }

    fn take(&mut self) -> Option<u32> {
        let v = match self.next {
            Some(v) => {
                self.next = v.checked_add(1).filter(|n| *n <= self.max);
                v
            }
            None => {
                let from = u32::from(self.zero_fixed);
                (from..=self.max).find(|v| !self.taken.contains(v))?
            }
        };
        self.taken.insert(v);
        Some(v)
    }
}

/// The id maps of every input (spec §11.3): the first input keeps its ids; a later input's
/// id already used by an earlier input moves above every id of the namespace. A category
/// defined with the same id, name and parent as the category the output already has under
/// that id is shared.
fn plan(scans: &[Scan]) -> Result<Vec<Maps>, ReadError> {
    let mut maps: Vec<Maps> = scans.iter().map(|_| Maps::new()).collect();
    let namespaces: BTreeSet<Ns> = scans.iter().flat_map(|s| s.used.keys().copied()).collect();
    for ns in namespaces {
        let all: BTreeSet<u32> = scans
            .iter()
            .filter_map(|s| s.used.get(&ns))
            .flatten()
            .copied()
            .collect();
        let mut alloc = Alloc::new(ns, all);
        let empty = BTreeSet::new();
        let mut earlier: BTreeSet<u32> = scans[0].used.get(&ns).unwrap_or(&empty).clone();
        // Output category definitions so far: id → (parent, name).
        let mut defs: BTreeMap<u32, (u32, String)> = if ns == Ns::Category {
            scans[0].categories.clone()
        } else {
            BTreeMap::new()
        };
        for (k, s) in scans.iter().enumerate().skip(1) {
            let used = s.used.get(&ns).unwrap_or(&empty);
            let mut shared = BTreeSet::new();
            if ns == Ns::Category {
                shared = s
                    .categories
                    .iter()
                    .filter(|(id, def)| defs.get(id) == Some(def))
                    .map(|(id, _)| *id)
                    .collect();
                // A child is shared only if its parent keeps its id too.
                loop {
                    let drop: Vec<u32> = shared
                        .iter()
                        .copied()
                        .filter(|id| {
                            let p = s.categories.get(id).map_or(0, |d| d.0);
                            p != 0 && earlier.contains(&p) && !shared.contains(&p)
                        })
                        .collect();
                    if drop.is_empty() {
                        break;
                    }
                    for id in drop {
                        shared.remove(&id);
                    }
                }
            }
            let map = maps[k].entry(ns).or_default();
            for &id in used {
                if (ns.zero_fixed() && id == 0) || !earlier.contains(&id) || shared.contains(&id) {
                    continue;
                }
                let new = alloc.take().ok_or_else(|| {
                    ReadError::Unsupported(Unreadable::Family(Box::new(NoFreeId {
                        namespace: ns,
                        id,
                        input: k,
                    })))
                })?;
                map.insert(id, new);
            }
            if ns == Ns::Category {
                for (id, (parent, name)) in &s.categories {
                    let m = |v: &u32| *map.get(v).unwrap_or(v);
                    defs.entry(m(id)).or_insert((m(parent), name.clone()));
                }
            }
            earlier.extend(used.iter().copied());
        }
    }
    Ok(maps)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// One input being merged.
struct Input {
    path: PathBuf,
    reader: TesReader,
    maps: Maps,
    /// The next record, not yet placed.
    peek: Option<Record>,
    /// Transients alive in the input's current frame (remapped packets).
    transients: Vec<Vec<u8>>,
    /// The input's last Frame message did not persist them: they go when its next frame
    /// starts (until then its frame may span further output frames).
    drop_transients: bool,
    /// Live persistent shapes and mesh resources (output ids), for resets.
    shapes: BTreeSet<(u16, u32)>,
    resources: BTreeSet<u32>,
    /// Capture end (µs) once the input is exhausted.
    end_us: u64,
}

pub struct TesMerge {
    inputs: Vec<Input>,
    header: Header,
    decode: bool,
    time_unit: u64,
    coordinate_frame: u8,
    queue: VecDeque<Record>,
    /// Start (µs) and index of the output frame being filled.
    boundary: Option<u64>,
    frame: u64,
    started: bool,
    done: bool,
    fields: Vec<IdField>,
    path: PathBuf,
    findings: Findings,
    warned_cf: HashSet<usize>,
}

impl TesMerge {
    pub fn open(paths: &[PathBuf], options: ReadOptions) -> Result<TesMerge, ReadError> {
        let scans = paths
            .iter()
            .map(|p| scan(p, options))
            .collect::<Result<Vec<_>, _>>()?;
        let maps = plan(&scans)?;
        let time_unit = scans
            .iter()
            .flat_map(|s| s.time_units.iter().copied())
            .fold(0, gcd)
            .max(1);
        let (tu0, ft0, cf) =
            scans[0]
                .server_info
                .unwrap_or((DEFAULT_TIME_UNIT, DEFAULT_FRAME_TIME, 0));
        let frame_time = (u64::from(ft0) * tu0 / time_unit).min(u64::from(u32::MAX - 1)) as u32;
        let mut header = super::header(packet::VERSION_MINOR);
        header
            .metadata
            .insert("time_unit_us".into(), time_unit.into());
        header
            .metadata
            .insert("default_frame_time".into(), frame_time.into());
        header.metadata.insert("coordinate_frame".into(), cf.into());
        let mut findings = Findings::default();
        for (k, s) in scans.iter().enumerate() {
            if let Some((_, _, c)) = s.server_info.filter(|si| si.2 != cf) {
                findings.push(Finding::new(
                    Severity::Warning,
                    MERGE_COORDINATE_FRAME,
                    format!(
                        "{} uses coordinate frame {c}, the first input {cf}: one capture has one coordinate frame, so the first input's is used",
                        paths[k].display()
                    ),
                ));
            }
            if k > 0 && s.user_packets > 0 {
                findings.push(Finding::new(
                    Severity::Warning,
                    MERGE_USER_IDS,
                    format!(
                        "{} has {} packets of user or unassigned routing ids: copied as they are, their ids cannot be remapped",
                        paths[k].display(),
                        s.user_packets
                    ),
                ));
            }
        }
        let mut inputs = Vec::with_capacity(paths.len());
        for (path, maps) in paths.iter().zip(maps) {
            inputs.push(Input {
                path: path.clone(),
                reader: TesReader::open_packets(path, options)?,
                maps,
                peek: None,
                transients: Vec::new(),
                drop_transients: false,
                shapes: BTreeSet::new(),
                resources: BTreeSet::new(),
                end_us: 0,
            });
        }
        Ok(TesMerge {
            inputs,
            header,
            decode: options.decode,
            time_unit,
            coordinate_frame: cf,
            queue: VecDeque::new(),
            boundary: None,
            frame: 0,
            started: false,
            done: false,
            fields: Vec::new(),
            path: PathBuf::from("merge"),
            findings,
            warned_cf: HashSet::new(),
        })
    }

    /// A record for a packet of the output, at the current output frame.
    fn record(&self, p: Vec<u8>) -> Option<Record> {
        let t = self.boundary.unwrap_or(0);
        let time = t.saturating_mul(1000).min(i64::MAX as u64) as i64;
        packet_record(p, self.decode, time, self.frame)
    }

    fn push(&mut self, p: Vec<u8>) {
        if let Some(r) = self.record(p) {
            self.queue.push_back(r);
        }
    }

    fn refill(&mut self, k: usize) -> Result<(), ReadError> {
        let input = &mut self.inputs[k];
        input.peek = input.reader.next().transpose()?;
        if input.peek.is_none() {
            input.end_us = input.reader.stats.duration_us;
            input.transients.clear();
        }
        Ok(())
    }

    /// Start (µs) of the frame an input's next record belongs to.
    fn next_start(&self, k: usize) -> Option<u64> {
        self.inputs[k]
            .peek
            .as_ref()
            .map(|r| r.time.max(0) as u64 / 1000)
    }

    /// The Frame message that ends the current output frame after `dur_us`.
    fn end_frame(&mut self, dur_us: u64) {
        let units = dur_us / self.time_unit;
        let value32 = if units >= u64::from(u32::MAX) {
            self.findings.push(Finding::new(
                Severity::Warning,
                MERGE_LONG_FRAME,
                format!(
                    "output frame {} lasts {units} time units, more than a Frame message holds: shortened",
                    self.frame
                ),
            ));
            u32::MAX - 1
        } else {
            units.max(1) as u32
        };
        let p = packet::build(
            decode::R_CONTROL,
            decode::C_FRAME,
            &packet::control_payload(0, value32, 0),
        );
        self.push(p);
        self.frame += 1;
    }

    /// Places one record of input `k` in the current output frame.
    fn place(&mut self, k: usize, r: Record) {
        let Some(raw) = r.raw.filter(|raw| raw.format == RAW_FORMAT) else {
            return;
        };
        let mut p = raw.bytes;
        let mut fields = std::mem::take(&mut self.fields);
        let Some((h, sem)) = id_fields(&p, &mut fields) else {
            self.fields = fields;
            return;
        };
        // Rewrite colliding ids.
        let mut changed = false;
        for f in &fields {
            let Some(new) = self.inputs[k].maps.get(&f.ns).and_then(|m| m.get(&f.value)) else {
                continue;
            };
            let bytes = new.to_be_bytes();
            p[f.at..f.at + f.width].copy_from_slice(&bytes[4 - f.width..]);
            changed = true;
        }
        self.fields = fields;
        if changed {
            packet::refresh_crc(&mut p);
        }
        let mapped = |ns: Ns, id: u32, maps: &Maps| {
            maps.get(&ns)
                .and_then(|m| m.get(&id))
                .copied()
                .unwrap_or(id)
        };
        let routing = h.routing_id;
        let input = &mut self.inputs[k];
        match sem {
            Sem::ServerInfo { .. } => return,
            Sem::Control { id, flags, .. } => match id {
                decode::C_FRAME => {
                    input.drop_transients = flags & 1 == 0;
                    return;
                }
                decode::C_FRAME_COUNT | decode::C_END => return,
                decode::C_RESET => {
                    // Only this input's scene is cleared.
                    let shapes = std::mem::take(&mut input.shapes);
                    let resources = std::mem::take(&mut input.resources);
                    input.transients.clear();
                    for (routing, id) in shapes {
                        self.push(packet::build(routing, decode::S_DESTROY, &id.to_be_bytes()));
                    }
                    for id in resources {
                        self.push(packet::build(
                            decode::R_MESH,
                            decode::M_DESTROY,
                            &id.to_be_bytes(),
                        ));
                    }
                    return;
                }
                decode::C_COORDINATE_FRAME if k > 0 => {
                    if self.warned_cf.insert(k) {
                        let path = self.inputs[k].path.display().to_string();
                        self.findings.push(Finding::new(
                            Severity::Warning,
                            MERGE_COORDINATE_FRAME,
                            format!("{path} changes the coordinate frame: dropped, the first input's coordinate frame is kept"),
                        ));
                    }
                    return;
                }
                _ => {}
            },
            Sem::ShapeCreate { id: 0, .. } | Sem::ShapeData { id: 0, .. } => {
                input.transients.push(p.clone());
            }
            Sem::ShapeCreate { id, .. } => {
                input
                    .shapes
                    .insert((routing, mapped(Ns::Object(routing), id, &input.maps)));
            }
            Sem::ShapeDestroy { id } => {
                input
                    .shapes
                    .remove(&(routing, mapped(Ns::Object(routing), id, &input.maps)));
            }
            Sem::MeshCreate { id, .. } if h.message_id == decode::M_CREATE => {
                input.resources.insert(mapped(Ns::Mesh, id, &input.maps));
            }
            Sem::MeshDestroy { id } => {
                input.resources.remove(&mapped(Ns::Mesh, id, &input.maps));
            }
            _ => {}
        }
        self.push(p);
    }

    /// Fills the queue with the next output frame (or the end).
    fn step(&mut self) -> Result<(), ReadError> {
        if !self.started {
            self.started = true;
            let ft = self
                .header
                .metadata
                .get("default_frame_time")
                .and_then(|v| v.as_u64())
                .unwrap_or(u64::from(DEFAULT_FRAME_TIME)) as u32;
            let si = packet::build(
                decode::R_SERVER_INFO,
                0,
                &packet::server_info_payload(self.time_unit, ft, self.coordinate_frame),
            );
            self.push(si);
            for k in 0..self.inputs.len() {
                self.refill(k)?;
            }
            return Ok(());
        }
        let next = (0..self.inputs.len())
            .filter_map(|k| self.next_start(k))
            .min();
        let Some(b) = next else {
            // Every input is exhausted: the last frame runs to the latest input end.
            if let Some(cur) = self.boundary {
                let end = self.inputs.iter().map(|i| i.end_us).max().unwrap_or(0);
                if end > cur {
                    self.end_frame(end - cur);
                }
            }
            self.done = true;
            return Ok(());
        };
        if let Some(cur) = self.boundary {
            self.end_frame(b.saturating_sub(cur));
        }
        self.boundary = Some(b);
        for k in 0..self.inputs.len() {
            if self.next_start(k) == Some(b) && self.inputs[k].drop_transients {
                self.inputs[k].transients.clear();
                self.inputs[k].drop_transients = false;
            }
            // Transients still alive in this input's frame (one that spans this output
            // boundary, or carried by Persist) are shown again: output frames never persist.
            let again = self.inputs[k].transients.clone();
            for p in again {
                self.push(p);
            }
            while self.next_start(k) == Some(b) {
                if let Some(r) = self.inputs[k].peek.take() {
                    self.place(k, r);
                }
                self.refill(k)?;
            }
        }
        Ok(())
    }
}

impl Iterator for TesMerge {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.queue.pop_front() {
                return Some(Ok(r));
            }
            if self.done {
                return None;
            }
            if let Err(e) = self.step() {
                self.done = true;
                return Some(Err(e));
            }
        }
    }
}

impl Source for TesMerge {
    fn header(&self) -> &Header {
        &self.header
    }

    fn findings(&self) -> Vec<(&Path, &Findings)> {
        let mut v: Vec<(&Path, &Findings)> = self
            .inputs
            .iter()
            .flat_map(|i| i.reader.findings())
            .collect();
        v.push((self.path.as_path(), &self.findings));
        v
    }

    fn progress(&self) -> (u64, u64) {
        self.inputs
            .iter()
            .map(|i| i.reader.progress())
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_of(ns: Ns, ids: &[u32]) -> Scan {
        let mut s = Scan::default();
        s.used.insert(ns, ids.iter().copied().collect());
        s
    }

    #[test]
    fn colliding_ids_move_above_every_used_id() {
        let o = Ns::Object(64);
        let maps = plan(&[scan_of(o, &[1, 2, 5]), scan_of(o, &[2, 3, 5, 9])]).unwrap();
        assert!(maps[0].values().all(|m| m.is_empty()));
        let m = &maps[1][&o];
        assert_eq!(m.get(&2), Some(&10));
        assert_eq!(m.get(&5), Some(&11));
        assert_eq!(m.get(&3), None);
        assert_eq!(m.get(&9), None);
    }

    #[test]
    fn full_namespaces_reuse_the_smallest_free_id() {
        let maps = plan(&[scan_of(Ns::Camera, &[0, 255]), scan_of(Ns::Camera, &[255])]).unwrap();
        assert_eq!(maps[1][&Ns::Camera].get(&255), Some(&1));
        let full: Vec<u32> = (0..=255).collect();
        let err = plan(&[scan_of(Ns::Camera, &full), scan_of(Ns::Camera, &[3])]);
        assert!(err.is_err());
    }

    #[test]
    fn identical_categories_are_shared_and_children_follow_parents() {
        let mut a = scan_of(Ns::Category, &[1, 2]);
        a.categories.insert(1, (0, "root".into()));
        a.categories.insert(2, (1, "child".into()));
        let mut b = scan_of(Ns::Category, &[1, 2]);
        b.categories.insert(1, (0, "other".into()));
        b.categories.insert(2, (1, "child".into()));
        let maps = plan(&[a, b]).unwrap();
        let m = &maps[1][&Ns::Category];
        // 1 differs, so it moves; 2 matches but its parent moved, so it moves too.
        assert_eq!(m.get(&1), Some(&3));
        assert_eq!(m.get(&2), Some(&4));
    }
}

/// A merge that runs out of ids in `namespace` remapping `id` of input `input` (from 0).
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot merge: no free id left for {namespace:?} (needed to remap id {id} of input {})",
    input + 1
)]
struct NoFreeId {
    namespace: Ns,
    id: u32,
    input: usize,
}
