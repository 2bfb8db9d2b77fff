//! Merging replays (spec §7): side by side or end to end, anything else refused.
//!
//! - **End to end**: every input has the same archetypes (same components, types and
//!   shapes) and the same entities in the same order: the later inputs' ticks follow the
//!   earlier ones'. `assets.bin` is kept when the stores are identical; otherwise the later
//!   stores' items are appended and their handles shifted.
//! - **Side by side**: every input covers the same ticks: archetypes are united (one that
//!   several inputs share must have the same components in each; a component name may
//!   belong to one archetype only), the entity ids of a later input that an earlier one
//!   uses are moved above every id in use, its `assets.bin` items are appended and its
//!   asset handles shifted by the items before them.
//! - Inputs with different time steps, or that are neither, are refused before anything
//!   is written (`ReadError::Conflict`, a usage error).
//!
//! Each input is first walked header-only (ticks and entity ids) to decide; then the
//! records stream from one reader per input, tick by tick (side by side: all of the first
//! input's rows of a tick, then the second's) or input after input (end to end). The
//! output takes the first input's `metadata.json` (its flavour and unknown keys) with the
//! archetypes of all.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value as Json};

use super::assets::Assets;
use super::dir;
use super::metadata::{self, Metadata, UNSET_MAX_TICKS};
use super::reader::{ElodinReader, HEADER_KEY};
use crate::formats::{ReadError, ReadOptions, Source};
use crate::model::{ArrayData, ChannelId, Entity, Header, Record, Value};
use crate::report::Findings;

/// One archetype of one input, as the header-only walk saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Rows {
    /// Entities of the first tick, in row order.
    entities: Vec<u64>,
    ticks: Option<(u64, u64)>,
}

/// What deciding a merge needs from one input.
struct Survey {
    path: PathBuf,
    metadata: Metadata,
    world: PathBuf,
    assets: Assets,
    names: BTreeMap<u64, String>,
    rows: BTreeMap<String, Rows>,
    /// Ticks 0..ticks.
    ticks: u64,
}

fn survey(path: &Path, options: ReadOptions) -> Result<Survey, ReadError> {
    let walk = ReadOptions {
        decode: false,
        ..options
    };
    let mut reader = ElodinReader::open(path, walk)?;
    let header = reader.header().clone();
    let mut rows: Vec<Rows> = vec![Rows::default(); header.channels.len()];
    for record in reader.by_ref() {
        let record = record?;
        let tick = record.frame.and_then(|f| u64::try_from(f).ok());
        let (Some(tick), Some(entity)) = (tick, record.entity.as_ref().and_then(Entity::id)) else {
            continue;
        };
        let r = &mut rows[record.channel as usize];
        let first = r.ticks.map_or(tick, |t| t.0);
        if tick == first {
            r.entities.push(entity);
        }
        r.ticks = Some(match r.ticks {
            None => (tick, tick),
            Some((a, b)) => (a.min(tick), b.max(tick)),
        });
    }
    let source = &header.metadata[HEADER_KEY];
    let json = source["metadata"].as_object().cloned().unwrap_or_default();
    let bytes = serde_json::to_vec(&json).unwrap_or_default();
    let (metadata, _) = metadata::parse(&bytes).map_err(|f| ReadError::invalid(f).in_file(path))?;
    let world = PathBuf::from(source["world_dir"].as_str().unwrap_or_default());
    let assets = dir::read_assets(&world).map_err(|f| ReadError::invalid(f).in_file(path))?;
    let names = source["entities"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.parse().ok()?, v.as_str()?.to_string())))
        .collect();
    let ticks = rows
        .iter()
        .filter_map(|r| r.ticks)
        .map(|t| t.1 + 1)
        .max()
        .unwrap_or(0);
    Ok(Survey {
        path: path.to_path_buf(),
        world,
        assets,
        names,
        rows: header
            .channels
            .iter()
            .zip(rows)
            .map(|(c, r)| (c.name.clone(), r))
            .collect(),
        ticks,
        metadata,
    })
}

/// (archetype, component) → type text, for comparing inputs.
fn components(m: &Metadata) -> BTreeMap<String, ComponentList> {
    m.archetypes
        .iter()
        .map(|a| {
            let mut list: ComponentList = a
                .components
                .iter()
                .map(|c| (c.name.clone(), c.type_text()))
                .collect();
            list.sort();
            (a.name.clone(), list)
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    SideBySide,
    EndToEnd,
}

/// Why inputs `a` and `b` are not end to end, or `None` when they are.
fn not_end_to_end(a: &Survey, b: &Survey) -> Option<Difference> {
    let (ca, cb) = (components(&a.metadata), components(&b.metadata));
    if ca.keys().ne(cb.keys()) {
        return Some(Difference::Archetypes);
    }
    for (name, list) in &ca {
        if cb.get(name) != Some(list) {
            return Some(Difference::Components(name.clone()));
        }
        let ea = a.rows.get(name).map(|r| &r.entities);
        let eb = b.rows.get(name).map(|r| &r.entities);
        if ea != eb {
            return Some(Difference::Entities(name.clone()));
        }
    }
    None
}

/// An archetype's (component, type) list.
type ComponentList = Vec<(String, String)>;

/// Checks that side-by-side inputs can be united; the conflict otherwise.
fn side_by_side_conflict(surveys: &[Survey]) -> Option<Clash> {
    let mut owner: HashMap<String, (String, String, &Path)> = HashMap::new();
    let mut archetypes: HashMap<String, (ComponentList, &Path)> = HashMap::new();
    for s in surveys {
        for (name, list) in components(&s.metadata) {
            if let Some((other, p)) = archetypes.get(&name) {
                if *other != list {
                    return Some(Clash::Components {
                        archetype: name,
                        paths: [p.to_path_buf(), s.path.clone()],
                    });
                }
                continue;
            }
            for (c, ty) in &list {
                if let Some((arch, other_ty, p)) = owner.get(c) {
                    return Some(Clash::Owners {
                        component: c.clone(),
                        archetypes: [arch.clone(), name],
                        types: [other_ty.clone(), ty.clone()],
                        paths: [p.to_path_buf(), s.path.clone()],
                    });
                }
                owner.insert(c.clone(), (name.clone(), ty.clone(), &s.path));
            }
            archetypes.insert(name, (list, &s.path));
        }
    }
    None
}

/// One input of the merge, as it is read.
struct Part {
    reader: ElodinReader,
    /// Merged channel of each of its channels.
    channels: Vec<ChannelId>,
    /// Entity ids that move (side by side), and the shift of its asset handles.
    entities: HashMap<u64, u64>,
    handle_shift: u64,
    /// Its channels' asset-handle components.
    asset_components: Vec<Vec<String>>,
    tick_shift: u64,
    head: Option<Record>,
}

pub struct ElodinMerge {
    parts: Vec<Part>,
    header: Header,
    mode: Mode,
    step_ns: i64,
    primed: bool,
    /// End to end: the part being read.
    current: usize,
}

/// Opens `paths` as one merged replay, or says why they cannot be merged.
pub fn open(paths: &[PathBuf], options: ReadOptions) -> Result<ElodinMerge, ReadError> {
    let surveys = paths
        .iter()
        .map(|p| survey(p, options))
        .collect::<Result<Vec<_>, _>>()?;
    let first = &surveys[0];
    for s in &surveys[1..] {
        if s.metadata.step_ns != first.metadata.step_ns {
            return Err(ReadError::family_conflict(MergeConflict::Steps {
                paths: [first.path.clone(), s.path.clone()],
                steps: [first.metadata.step_ns, s.metadata.step_ns],
            }));
        }
    }
    let end_to_end = surveys[1..].iter().find_map(|s| not_end_to_end(first, s));
    let same_ticks = surveys[1..].iter().find(|s| s.ticks != first.ticks);
    let mode = match (end_to_end, same_ticks) {
        (None, _) => Mode::EndToEnd,
        (Some(_), None) => {
            if let Some(why) = side_by_side_conflict(&surveys) {
                return Err(ReadError::family_conflict(MergeConflict::SideBySide(why)));
            }
            Mode::SideBySide
        }
        (Some(why), Some(other)) => {
            return Err(ReadError::family_conflict(MergeConflict::Neither {
                paths: [first.path.clone(), other.path.clone()],
                why,
                ticks: [first.ticks, other.ticks],
            }))
        }
    };
    // Assets: one store when they are all the same (end to end), else all of them, each
    // later input's handles shifted by the items before it.
    let identical = surveys.iter().all(|s| s.assets.bytes == first.assets.bytes);
    let mut assets_from = Vec::new();
    let mut shifts = Vec::new();
    let mut items = 0u64;
    for s in &surveys {
        if mode == Mode::EndToEnd && identical {
            shifts.push(0);
        } else {
            shifts.push(items);
            items += s.assets.items.len() as u64;
            assets_from.push(s.world.to_string_lossy().into_owned());
        }
    }
    if assets_from.is_empty() {
        assets_from.push(first.world.to_string_lossy().into_owned());
    }
    // Entities: side by side, an id a previous input uses moves above every id in use.
    let mut moves: Vec<HashMap<u64, u64>> = vec![HashMap::new(); surveys.len()];
    if mode == Mode::SideBySide {
        let ids = |s: &Survey| -> BTreeSet<u64> {
            s.rows
                .values()
                .flat_map(|r| r.entities.iter().copied())
                .collect()
        };
        let mut used: BTreeSet<u64> = ids(first);
        for (k, s) in surveys.iter().enumerate().skip(1) {
            let own = ids(s);
            let mut next = used.iter().chain(own.iter()).max().map_or(0, |m| m + 1);
            for e in &own {
                if used.contains(e) {
                    moves[k].insert(*e, next);
                    next += 1;
                }
            }
            used.extend(own.iter().map(|e| moves[k].get(e).copied().unwrap_or(*e)));
        }
    }
    // The merged metadata: the first input's, with every input's archetypes.
    let mut json = first.metadata.json.clone();
    let mut archetypes: Map<String, Json> = match json.get("archetypes") {
        Some(Json::Object(a)) => a.clone(),
        _ => Map::new(),
    };
    for s in &surveys[1..] {
        if let Some(Json::Object(a)) = s.metadata.json.get("archetypes") {
            for (k, v) in a {
                archetypes.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    json.insert("archetypes".into(), Json::Object(archetypes));
    let ticks = match mode {
        Mode::EndToEnd => surveys.iter().map(|s| s.ticks).sum::<u64>(),
        Mode::SideBySide => first.ticks,
    };
    if mode == Mode::EndToEnd {
        if let Some(m) = first.metadata.max_ticks {
            if m != UNSET_MAX_TICKS {
                json.insert("max_ticks".into(), json!(ticks.saturating_sub(1)));
            }
        }
    }
    let mut names = Map::new();
    for (k, s) in surveys.iter().enumerate() {
        for (id, name) in &s.names {
            let id = moves[k].get(id).copied().unwrap_or(*id);
            names
                .entry(id.to_string())
                .or_insert_with(|| Json::String(name.clone()));
        }
    }
    let mut header = Header::new("elodin", first.metadata.flavour.name());
    header.origin.system = Some("tick 0 (simulation time)".into());
    let mut parts = Vec::new();
    let mut tick_shift = 0;
    for (k, (path, s)) in paths.iter().zip(&surveys).enumerate() {
        let reader = ElodinReader::open(path, options)?;
        let mut channels = Vec::new();
        let mut asset_components = Vec::new();
        for c in &reader.header().channels {
            channels.push(match header.channel_id(&c.name) {
                Some(id) => id,
                None => header.add_channel(c.clone()),
            });
            asset_components.push(
                s.metadata
                    .archetypes
                    .iter()
                    .filter(|a| a.name == c.name)
                    .flat_map(|a| a.components.iter().filter(|c| c.asset))
                    .map(|c| c.name.clone())
                    .collect(),
            );
        }
        parts.push(Part {
            reader,
            channels,
            entities: std::mem::take(&mut moves[k]),
            handle_shift: shifts[k],
            asset_components,
            tick_shift: if mode == Mode::EndToEnd {
                tick_shift
            } else {
                0
            },
            head: None,
        });
        tick_shift += s.ticks;
    }
    header.metadata.insert(
        HEADER_KEY.into(),
        json!({
            "metadata": Json::Object(json),
            "world_dir": first.world.to_string_lossy(),
            "assets_from": assets_from,
            "exec_dir": null,
            "step_ns": first.metadata.step_ns,
            "ticks": ticks,
            "entities": names,
            "merge": match mode { Mode::EndToEnd => "end to end", Mode::SideBySide => "side by side" },
        }),
    );
    Ok(ElodinMerge {
        parts,
        header,
        mode,
        step_ns: first.metadata.step_ns,
        primed: false,
        current: 0,
    })
}

impl ElodinMerge {
    /// The next record of part `k`, moved onto the merged replay.
    fn pull(&mut self, k: usize) -> Result<Option<Record>, ReadError> {
        let step = self.step_ns;
        let part = &mut self.parts[k];
        let Some(mut record) = part.reader.next().transpose()? else {
            return Ok(None);
        };
        let input_channel = record.channel as usize;
        record.channel = part.channels[input_channel];
        if let Some(Entity::Id(e)) = record.entity.as_mut() {
            if let Some(moved) = part.entities.get(e) {
                *e = *moved;
            }
        }
        if part.tick_shift > 0 {
            if let Some(tick) = record.frame.as_mut() {
                *tick = tick.saturating_add(i64::try_from(part.tick_shift).unwrap_or(i64::MAX));
                record.time = tick.checked_mul(step).unwrap_or(i64::MAX);
            }
        }
        if part.handle_shift > 0 {
            let assets = &part.asset_components[input_channel];
            for (key, value) in record.values.iter_mut() {
                if let (true, Value::Array(a)) = (assets.contains(key), value) {
                    if let ArrayData::U64(v) = &mut a.data {
                        for h in v.iter_mut() {
                            *h = h.saturating_add(part.handle_shift);
                        }
                    }
                }
            }
        }
        Ok(Some(record))
    }

    fn advance(&mut self) -> Result<Option<Record>, ReadError> {
        match self.mode {
            Mode::EndToEnd => {
                while self.current < self.parts.len() {
                    if let Some(r) = self.pull(self.current)? {
                        return Ok(Some(r));
                    }
                    self.current += 1;
                }
                Ok(None)
            }
            Mode::SideBySide => {
                if !self.primed {
                    self.primed = true;
                    for k in 0..self.parts.len() {
                        self.parts[k].head = self.pull(k)?;
                    }
                }
                // The lowest tick first; on equal ticks, input order.
                let next = self
                    .parts
                    .iter()
                    .enumerate()
                    .filter_map(|(k, p)| p.head.as_ref().map(|r| (r.frame, k)))
                    .min();
                let Some((_, k)) = next else {
                    return Ok(None);
                };
                let record = self.parts[k].head.take();
                self.parts[k].head = self.pull(k)?;
                Ok(record)
            }
        }
    }
}

impl Iterator for ElodinMerge {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.advance().transpose()
    }
}

impl Source for ElodinMerge {
    fn header(&self) -> &Header {
        &self.header
    }

    fn findings(&self) -> Vec<(&Path, &Findings)> {
        self.parts
            .iter()
            .flat_map(|p| p.reader.findings())
            .collect()
    }

    fn progress(&self) -> (u64, u64) {
        self.parts.iter().fold((0, 0), |(d, t), p| {
            let (a, b) = p.reader.progress();
            (d + a, t + b)
        })
    }
}

/// Why replays cannot be merged.
#[derive(Debug, thiserror::Error)]
enum MergeConflict {
    #[error(
        "cannot merge replays with different time steps: {} has {} ns, {} has {} ns",
        paths[0].display(), steps[0], paths[1].display(), steps[1]
    )]
    Steps {
        paths: [PathBuf; 2],
        steps: [i64; 2],
    },
    #[error("cannot merge side by side: {0}")]
    SideBySide(Clash),
    /// Neither end to end (`why`) nor side by side (`ticks`: each input's tick count).
    #[error(
        "cannot merge {} and {}: not end to end ({why}) and not side by side (ticks 0..={} and \
         0..={}); Elodin replays merge end to end (same archetypes and entities) or side by \
         side (same ticks)",
        paths[0].display(), paths[1].display(),
        ticks[0].saturating_sub(1), ticks[1].saturating_sub(1)
    )]
    Neither {
        paths: [PathBuf; 2],
        why: Difference,
        ticks: [u64; 2],
    },
}

/// Why two replays do not follow each other.
#[derive(Debug, thiserror::Error)]
enum Difference {
    #[error("they have different archetypes")]
    Archetypes,
    #[error("archetype `{0}` has different components")]
    Components(String),
    #[error("archetype `{0}` has different entities")]
    Entities(String),
}

/// Why replays cannot be united side by side.
#[derive(Debug, thiserror::Error)]
enum Clash {
    #[error(
        "archetype `{archetype}` has different components in {} and {}",
        paths[0].display(), paths[1].display()
    )]
    Components {
        archetype: String,
        paths: [PathBuf; 2],
    },
    /// A component of two archetypes (`types`: its type in each).
    #[error(
        "component `{component}` is {} of `{}` in {} but {} of `{}` in {}",
        types[0], archetypes[0], paths[0].display(), types[1], archetypes[1], paths[1].display()
    )]
    Owners {
        component: String,
        archetypes: [String; 2],
        types: [String; 2],
        paths: [PathBuf; 2],
    },
}
