//! Rules that need the scene's state (spec §14, "Messages"): live objects, multi-shape child
//! counts, mesh resources and categories. State is bounded by the live scene, never by the
//! file length. The same state answers `inspect`'s "shapes alive at the end" and categories.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::codes::*;
use super::decode::{Sem, F_COLOUR, F_POSITION, F_ROTATION, F_SCALE, F_UPDATE_MODE};
use crate::report::Severity;

/// A finding before its position is attached.
pub type Issue = (Severity, &'static str, String);

#[derive(Debug, Clone, Copy)]
struct Live {
    dp: bool,
    /// (total children, delivered) of a multi-shape.
    multi: Option<(u32, u32)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryInfo {
    pub parent: u16,
    pub name: String,
}

#[derive(Default)]
pub struct Checker {
    live: HashMap<(u16, u32), Live>,
    /// Precision of the latest transient Create per routing id (its Data has object id 0).
    transient_dp: HashMap<u16, bool>,
    resources: BTreeSet<u32>,
    defined_resources: BTreeSet<u32>,
    /// Resources referenced by MeshSet / PointCloud creates (servers send them lazily, so
    /// they are checked at the end).
    referenced: BTreeMap<u32, u64>,
    pub categories: BTreeMap<u16, CategoryInfo>,
}

pub(super) fn replace_bit(version_minor: u16) -> u16 {
    match version_minor {
        0 | 1 => 0,
        2 => 8,
        _ => 16,
    }
}

impl Checker {
    /// Precision of the shape a Data message for `id` belongs to.
    pub fn dp_of(&self, routing: u16, id: u32) -> Option<bool> {
        if id == 0 {
            self.transient_dp.get(&routing).copied()
        } else {
            self.live.get(&(routing, id)).map(|l| l.dp)
        }
    }

    /// Live persistent shapes per routing id.
    pub fn alive(&self) -> BTreeMap<u16, u64> {
        let mut out = BTreeMap::new();
        for (routing, _) in self.live.keys() {
            *out.entry(*routing).or_insert(0) += 1;
        }
        out
    }

    pub fn reset(&mut self) {
        self.live.clear();
        self.transient_dp.clear();
        self.resources.clear();
        self.categories.clear();
    }

    /// Applies one message; returns what it found, with the record index of the message.
    pub fn observe(
        &mut self,
        routing: u16,
        version_minor: u16,
        sem: &Sem,
        index: u64,
        out: &mut Vec<Issue>,
    ) {
        match sem {
            Sem::ShapeCreate {
                id,
                flags,
                attrs,
                multi,
                resources,
            } => {
                for r in resources {
                    self.referenced.entry(*r).or_insert(index);
                }
                if *id == 0 {
                    self.transient_dp.insert(routing, attrs.dp);
                    return;
                }
                self.examine_create(routing, version_minor, *id, *flags, *multi, out);
                self.live.insert(
                    (routing, *id),
                    Live {
                        dp: attrs.dp,
                        multi: *multi,
                    },
                );
            }
            Sem::ShapeUpdate { id, flags, .. } => {
                self.examine_update(routing, version_minor, *id, *flags, out)
            }
            Sem::ShapeDestroy { id } => self.destroyed(routing, *id, out),
            Sem::ShapeData { id, children } => {
                if *id == 0 {
                    return;
                }
                self.children_delivered(routing, *id, *children, out);
            }
            Sem::MeshCreate { id, .. } => {
                self.resources.insert(*id);
                self.defined_resources.insert(*id);
            }
            Sem::MeshComponent { id, .. } if !self.resources.contains(id) => {
                out.push(unknown_resource(
                    *id,
                    "a mesh component or Finalise message",
                ));
            }
            Sem::MeshDestroy { id } if !self.resources.remove(id) => {
                out.push(unknown_resource(*id, "a mesh Destroy"));
            }
            Sem::Category { id, parent, name } => {
                self.categories.insert(
                    *id,
                    CategoryInfo {
                        parent: *parent,
                        name: name.clone(),
                    },
                );
            }
            _ => {}
        }
    }

    /// A persistent shape's Create: not of a live shape unless it replaces it, and not
    /// with more children in this message than in all.
    fn examine_create(
        &self,
        routing: u16,
        version_minor: u16,
        id: u32,
        flags: u16,
        multi: Option<(u32, u32)>,
        out: &mut Vec<Issue>,
    ) {
        if self.live.contains_key(&(routing, id)) && flags & replace_bit(version_minor) == 0 {
            out.push((
                Severity::Warning,
                DUPLICATE_CREATE,
                format!("Create for object {id}, which is alive, without Replace"),
            ));
        }
        if let Some((total, n)) = multi {
            if n > total {
                out.push(multi_count(id, total, n));
            }
        }
    }

    /// An Update: of a live, persistent shape, and one that applies something.
    fn examine_update(
        &self,
        routing: u16,
        version_minor: u16,
        id: u32,
        flags: u16,
        out: &mut Vec<Issue>,
    ) {
        if id == 0 {
            out.push((
                Severity::Error,
                UPDATE_TRANSIENT,
                "an Update with object id 0 (transient shapes cannot be updated)".into(),
            ));
            return;
        }
        if !self.live.contains_key(&(routing, id)) {
            out.push(unknown(id, "Update"));
        }
        let components = F_POSITION | F_ROTATION | F_SCALE | F_COLOUR;
        if version_minor >= 2 && flags & F_UPDATE_MODE != 0 && flags & components == 0 {
            out.push((
                Severity::Info,
                UPDATE_NOOP,
                format!(
                    "Update of object {id} with UpdateMode and no component bits (applies nothing)"
                ),
            ));
        }
    }

    /// A Destroy ends a live shape; a multi-shape should have all its children by then.
    fn destroyed(&mut self, routing: u16, id: u32, out: &mut Vec<Issue>) {
        match self.live.remove(&(routing, id)) {
            None => out.push(unknown(id, "Destroy")),
            Some(Live {
                multi: Some((total, n)),
                ..
            }) if n < total => out.push((
                Severity::Error,
                MULTISHAPE_COUNT,
                format!("multi-shape {id} destroyed with {n} of its {total} children delivered"),
            )),
            Some(_) => {}
        }
    }

    /// A persistent shape's Data: counts the multi-shape children it carries.
    fn children_delivered(
        &mut self,
        routing: u16,
        id: u32,
        children: Option<u32>,
        out: &mut Vec<Issue>,
    ) {
        match self.live.get_mut(&(routing, id)) {
            None => out.push(unknown(id, "Data")),
            Some(live) => {
                if let (Some((total, n)), Some(c)) = (&mut live.multi, children) {
                    *n = n.saturating_add(c);
                    if *n > *total {
                        out.push(multi_count(id, *total, *n));
                    }
                }
            }
        }
    }

    /// Rules checked when the file ends: (record index, issue).
    pub fn finish(&self) -> Vec<(Option<u64>, Issue)> {
        let mut out = Vec::new();
        let mut incomplete: Vec<_> = self
            .live
            .iter()
            .filter_map(|((_, id), l)| l.multi.filter(|(t, n)| n < t).map(|(t, n)| (*id, t, n)))
            .collect();
        incomplete.sort_unstable();
        for (id, total, n) in incomplete {
            out.push((
                None,
                (
                    Severity::Error,
                    MULTISHAPE_COUNT,
                    format!("multi-shape {id} has {n} of its {total} children when the file ends"),
                ),
            ));
        }
        for (r, index) in &self.referenced {
            if !self.defined_resources.contains(r) {
                out.push((
                    Some(*index),
                    unknown_resource(
                        *r,
                        "a MeshSet part or PointCloud (never defined in the file)",
                    ),
                ));
            }
        }
        out
    }
}

fn unknown(id: u32, what: &str) -> Issue {
    (
        Severity::Warning,
        UNKNOWN_OBJECT,
        format!("{what} for object {id}, which is not alive"),
    )
}

fn unknown_resource(id: u32, what: &str) -> Issue {
    (
        Severity::Warning,
        UNKNOWN_RESOURCE,
        format!("mesh resource {id} referenced by {what} does not exist"),
    )
}

fn multi_count(id: u32, total: u32, n: u32) -> Issue {
    (
        Severity::Error,
        MULTISHAPE_COUNT,
        format!("multi-shape {id} has {n} children delivered but a total_count of {total}"),
    )
}
