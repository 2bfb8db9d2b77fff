//! The world state at a frame boundary (spec §11.1), folded from packets, and the packets
//! that rebuild it (spec §11.2 step 3). State is bounded by the live scene.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::decode::{
    self, Attrs, Ctx, Sem, F_COLOUR, F_DOUBLE, F_POSITION, F_REPLACE, F_ROTATION, F_SCALE,
    F_UPDATE_MODE,
};
use super::packet::{self, PacketHeader};

struct Shape {
    seq: u64,
    packets: Vec<Vec<u8>>,
    attrs: Attrs,
    changed: bool,
    dp: bool,
}

#[derive(Default)]
pub struct World {
    pub server_info: Option<(u64, u32, u8)>,
    categories: BTreeMap<u16, (u16, Vec<u8>)>,
    resources: BTreeMap<u32, Vec<Vec<u8>>>,
    shapes: HashMap<(u16, u32), Shape>,
    /// Transients alive in the current frame (Create and Data packets).
    transients: Vec<Vec<u8>>,
    cameras: BTreeMap<u8, Vec<u8>>,
    seq: u64,
    /// Packets of user or unassigned routing ids, which cannot be folded.
    pub not_carried: u64,
}

impl World {
    /// Applies one (non-collated) packet in stream order.
    pub fn apply(&mut self, p: &[u8]) {
        let Some(h) = PacketHeader::parse(p).filter(|h| h.packet_len() == p.len()) else {
            return;
        };
        let payload = &p[h.payload_start()..h.payload_start() + h.payload_size as usize];
        let (routing, message) = (h.routing_id, h.message_id);
        let data_dp = if routing >= decode::R_SHAPE_FIRST
            && message == decode::S_DATA
            && payload.len() >= 4
        {
            let id = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]);
            self.shapes.get(&(routing, id)).map(|s| s.dp)
        } else {
            None
        };
        let ctx = Ctx {
            version_minor: h.version_minor.min(4),
            values: false,
            data_dp,
        };
        let d = decode::decode(routing, message, payload, ctx);
        match d.sem {
            Sem::ServerInfo {
                time_unit,
                frame_time,
                coordinate_frame,
            } => {
                self.server_info = Some((time_unit.max(1), frame_time, coordinate_frame));
            }
            Sem::Control {
                id, flags, value32, ..
            } => match id {
                decode::C_FRAME if flags & 1 == 0 => self.transients.clear(),
                decode::C_COORDINATE_FRAME => {
                    let si = self.server_info.get_or_insert((1000, 33, 0));
                    si.2 = value32.min(255) as u8;
                }
                decode::C_RESET => {
                    self.shapes.clear();
                    self.transients.clear();
                    self.resources.clear();
                    self.categories.clear();
                }
                _ => {}
            },
            Sem::Category { id, parent, .. } => {
                self.categories.insert(id, (parent, p.to_vec()));
            }
            Sem::Camera { id } => {
                self.cameras.insert(id, p.to_vec());
            }
            Sem::MeshCreate { id, .. } => {
                if message == decode::M_CREATE {
                    self.resources.insert(id, vec![p.to_vec()]);
                } else if let Some(v) = self.resources.get_mut(&id) {
                    v.push(p.to_vec());
                }
            }
            Sem::MeshComponent { id, .. } => {
                if let Some(v) = self.resources.get_mut(&id) {
                    v.push(p.to_vec());
                }
            }
            Sem::MeshDestroy { id } => {
                self.resources.remove(&id);
            }
            Sem::ShapeCreate { id: 0, .. } => self.transients.push(p.to_vec()),
            Sem::ShapeCreate {
                id, attrs, flags, ..
            } => {
                let _ = flags & F_REPLACE;
                self.seq += 1;
                self.shapes.insert(
                    (routing, id),
                    Shape {
                        seq: self.seq,
                        packets: vec![p.to_vec()],
                        attrs,
                        changed: false,
                        dp: attrs.dp,
                    },
                );
            }
            Sem::ShapeUpdate { id, flags, attrs } => {
                if let Some(s) = self.shapes.get_mut(&(routing, id)) {
                    let partial = flags & F_UPDATE_MODE != 0;
                    let a = &mut s.attrs;
                    if !partial || flags & F_POSITION != 0 {
                        a.position = attrs.position;
                    }
                    if !partial || flags & F_ROTATION != 0 {
                        a.rotation = attrs.rotation;
                    }
                    if !partial || flags & F_SCALE != 0 {
                        a.scale = attrs.scale;
                    }
                    if !partial || flags & F_COLOUR != 0 {
                        a.colour = attrs.colour;
                    }
                    s.dp |= attrs.dp;
                    s.changed = true;
                }
            }
            Sem::ShapeDestroy { id } => {
                self.shapes.remove(&(routing, id));
            }
            Sem::ShapeData { id: 0, .. } => self.transients.push(p.to_vec()),
            Sem::ShapeData { id, .. } => {
                if let Some(s) = self.shapes.get_mut(&(routing, id)) {
                    s.packets.push(p.to_vec());
                }
            }
            Sem::None => {
                if !(1..=7).contains(&routing) && !(64..=77).contains(&routing) {
                    self.not_carried += 1;
                }
            }
        }
    }

    /// The packets that rebuild this state: categories (parents first), mesh resources,
    /// persistent shapes in creation order (with one full Update where updates changed
    /// them), live transients, then the last Camera per id.
    pub fn packets(&self) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut done = BTreeSet::new();
        for id in self.categories.keys() {
            self.category(*id, &mut done, &mut out, 0);
        }
        for msgs in self.resources.values() {
            out.extend(msgs.iter().cloned());
        }
        let mut shapes: Vec<_> = self.shapes.iter().collect();
        shapes.sort_by_key(|(_, s)| s.seq);
        for ((routing, id), s) in shapes {
            out.extend(s.packets.iter().cloned());
            if s.changed {
                let mut a = s.attrs;
                a.dp = s.dp;
                let mut payload = Vec::with_capacity(90);
                payload.extend_from_slice(&id.to_be_bytes());
                payload.extend_from_slice(&(if a.dp { F_DOUBLE } else { 0 }).to_be_bytes());
                a.write(&mut payload);
                out.push(packet::build(*routing, decode::S_UPDATE, &payload));
            }
        }
        out.extend(self.transients.iter().cloned());
        out.extend(self.cameras.values().cloned());
        out
    }

    /// The scene as a viewer would show it, for comparing two folds: effective attributes
    /// of persistent shapes with their Create/Data packets, categories, resources,
    /// transients and cameras (how the state was reached is left out).
    pub fn snapshot(&self) -> String {
        let mut shapes: Vec<_> = self
            .shapes
            .iter()
            .map(|(k, s)| {
                (
                    k,
                    format!(
                        "{:?}",
                        (
                            s.attrs.colour,
                            s.attrs.position,
                            s.attrs.rotation,
                            s.attrs.scale
                        )
                    ),
                    &s.packets,
                )
            })
            .collect();
        shapes.sort_by_key(|x| *x.0);
        format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
            shapes, self.categories, self.resources, self.transients, self.cameras
        )
    }

    fn category(&self, id: u16, done: &mut BTreeSet<u16>, out: &mut Vec<Vec<u8>>, depth: usize) {
        if done.contains(&id) || depth > self.categories.len() {
            return;
        }
        let Some((parent, p)) = self.categories.get(&id) else {
            return;
        };
        if *parent != 0 && *parent != id {
            self.category(*parent, done, out, depth + 1);
        }
        if done.insert(id) {
            out.push(p.clone());
        }
    }
}
