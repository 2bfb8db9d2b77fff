//! What `recover` needs beyond dropping damaged packets: once a packet is gone, the messages
//! that name what it created (an object's updates, data and destroy, a mesh resource's
//! parts) would refer to nothing, which viewers report as errors. The guard follows the
//! scene as written (live objects, transients of the current frame, mesh resources) and says
//! which packets to drop, or what to insert, so that the written capture replays cleanly.
//!
//! Only the ids at the start of each payload are read; state is bounded by the live scene.

use std::collections::HashSet;

use super::decode::{
    C_FRAME, C_RESET, M_CREATE, M_DESTROY, R_CONTROL, R_MESH, R_SHAPE_FIRST, R_SHAPE_LAST,
    S_CREATE, S_DATA, S_DESTROY, S_UPDATE,
};
use super::packet::{self, PacketHeader};
use super::validate::replace_bit;

/// What to do with a packet.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Keep,
    /// Drop it, for this reason.
    Drop(&'static str),
    /// Write this packet first (a Destroy of what the packet re-creates), then the packet.
    Insert(Vec<u8>, &'static str),
}

#[derive(Default)]
pub struct SceneGuard {
    live: HashSet<(u16, u32)>,
    /// Routing ids with a transient Create still shown (object id 0 Data goes to it).
    transients: HashSet<u16>,
    resources: HashSet<u32>,
}

fn id_at(payload: &[u8], at: usize) -> Option<u32> {
    let b = payload.get(at..at + 4)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

impl SceneGuard {
    /// Judges one packet about to be written and, unless it is dropped, applies it.
    pub fn check(&mut self, h: &PacketHeader, payload: &[u8]) -> Verdict {
        let (routing, message) = (h.routing_id, h.message_id);
        match routing {
            R_CONTROL => {
                match message {
                    // Transients last one frame unless the Frame says Persist (flag bit 0).
                    C_FRAME if id_at(payload, 0).is_some_and(|flags| flags & 1 == 0) => {
                        self.transients.clear()
                    }
                    C_RESET => *self = SceneGuard::default(),
                    _ => {}
                }
                Verdict::Keep
            }
            R_MESH => {
                let Some(id) = id_at(payload, 0) else {
                    return Verdict::Keep;
                };
                let exists = self.resources.contains(&id);
                match message {
                    M_CREATE if exists => Verdict::Insert(
                        packet::build(R_MESH, M_DESTROY, &id.to_be_bytes()),
                        "a mesh resource Destroy inserted before a Create of a resource that exists (its own Destroy was dropped)",
                    ),
                    M_CREATE => {
                        self.resources.insert(id);
                        Verdict::Keep
                    }
                    M_DESTROY if exists => {
                        self.resources.remove(&id);
                        Verdict::Keep
                    }
                    M_DESTROY => {
                        Verdict::Drop("a mesh resource Destroy for a resource whose Create was dropped")
                    }
                    _ if exists => Verdict::Keep,
                    _ => Verdict::Drop(
                        "a mesh resource message for a resource whose Create was dropped",
                    ),
                }
            }
            R_SHAPE_FIRST..=R_SHAPE_LAST => {
                let Some(id) = id_at(payload, 0) else {
                    return Verdict::Keep;
                };
                let key = (routing, id);
                let alive = self.live.contains(&key);
                match message {
                    S_CREATE if id == 0 => {
                        self.transients.insert(routing);
                        Verdict::Keep
                    }
                    S_CREATE => {
                        let flags = payload
                            .get(6..8)
                            .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]));
                        if alive && flags & replace_bit(h.version_minor) == 0 {
                            return Verdict::Insert(
                                packet::build(routing, S_DESTROY, &id.to_be_bytes()),
                                "a Destroy inserted before a Create of an object that is alive (its own Destroy was dropped)",
                            );
                        }
                        self.live.insert(key);
                        Verdict::Keep
                    }
                    S_UPDATE if id == 0 => Verdict::Drop("an Update with object id 0"),
                    S_DATA if id == 0 && !self.transients.contains(&routing) => {
                        Verdict::Drop("transient Data whose Create was dropped")
                    }
                    S_DATA if id == 0 => Verdict::Keep,
                    S_DESTROY if alive => {
                        self.live.remove(&key);
                        Verdict::Keep
                    }
                    S_UPDATE | S_DATA | S_DESTROY if !alive => {
                        Verdict::Drop("a message for an object whose Create was dropped")
                    }
                    _ => Verdict::Keep,
                }
            }
            _ => Verdict::Keep,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::tes::packet::{build, control_payload};

    fn judge(g: &mut SceneGuard, p: &[u8]) -> Verdict {
        let h = PacketHeader::parse(p).unwrap();
        g.check(&h, &p[16..16 + h.payload_size as usize])
    }

    fn create(routing: u16, id: u32, flags: u16) -> Vec<u8> {
        let mut payload = id.to_be_bytes().to_vec();
        payload.extend_from_slice(&[0, 0]);
        payload.extend_from_slice(&flags.to_be_bytes());
        payload.extend_from_slice(&[0; 46]);
        build(routing, S_CREATE, &payload)
    }

    #[test]
    fn orphans_are_dropped_and_a_lost_destroy_is_reinserted() {
        let mut g = SceneGuard::default();
        let update = |id: u32| build(64, S_UPDATE, &[&id.to_be_bytes()[..], &[0; 46]].concat());
        assert_eq!(
            judge(&mut g, &update(7)),
            Verdict::Drop("a message for an object whose Create was dropped")
        );
        assert_eq!(judge(&mut g, &create(64, 7, 0)), Verdict::Keep);
        assert_eq!(judge(&mut g, &update(7)), Verdict::Keep);
        // A second Create without Replace: its Destroy went missing.
        match judge(&mut g, &create(64, 7, 0)) {
            Verdict::Insert(p, _) => assert_eq!(p, build(64, S_DESTROY, &7u32.to_be_bytes())),
            v => panic!("{v:?}"),
        }
        assert_eq!(judge(&mut g, &create(64, 7, 16)), Verdict::Keep);
        assert_eq!(
            judge(&mut g, &build(64, S_DESTROY, &7u32.to_be_bytes())),
            Verdict::Keep
        );
        assert!(matches!(
            judge(&mut g, &build(64, S_DESTROY, &7u32.to_be_bytes())),
            Verdict::Drop(_)
        ));
        // Transient data belongs to the frame's transient Create.
        let data0 = build(72, S_DATA, &[0; 8]);
        assert!(matches!(judge(&mut g, &data0), Verdict::Drop(_)));
        assert_eq!(judge(&mut g, &create(72, 0, 0)), Verdict::Keep);
        assert_eq!(judge(&mut g, &data0), Verdict::Keep);
        let persist = build(R_CONTROL, C_FRAME, &control_payload(1, 0, 0));
        assert_eq!(judge(&mut g, &persist), Verdict::Keep);
        assert_eq!(judge(&mut g, &data0), Verdict::Keep);
        let frame = build(R_CONTROL, C_FRAME, &control_payload(0, 0, 0));
        assert_eq!(judge(&mut g, &frame), Verdict::Keep);
        assert!(matches!(judge(&mut g, &data0), Verdict::Drop(_)));
        // Mesh resources, and a Reset that empties everything.
        let vertex = build(R_MESH, 3, &[0, 0, 0, 5, 0, 0]);
        assert!(matches!(judge(&mut g, &vertex), Verdict::Drop(_)));
        assert_eq!(
            judge(&mut g, &build(R_MESH, M_CREATE, &[0, 0, 0, 5, 0, 0])),
            Verdict::Keep
        );
        assert_eq!(judge(&mut g, &vertex), Verdict::Keep);
        let destroy = build(R_MESH, M_DESTROY, &[0, 0, 0, 5]);
        assert_eq!(judge(&mut g, &destroy), Verdict::Keep);
        assert!(matches!(judge(&mut g, &destroy), Verdict::Drop(_)));
        assert!(matches!(judge(&mut g, &vertex), Verdict::Drop(_)));
        assert_eq!(
            judge(&mut g, &build(R_MESH, M_CREATE, &[0, 0, 0, 5, 0, 0])),
            Verdict::Keep
        );
        let reset = build(R_CONTROL, C_RESET, &control_payload(0, 0, 0));
        assert_eq!(judge(&mut g, &reset), Verdict::Keep);
        assert!(matches!(judge(&mut g, &vertex), Verdict::Drop(_)));
    }
}
