//! Writing replay directories Elodin 0.10 loads (spec §6).
//!
//! From an Elodin source the archetypes, components and `assets.bin` of the source are
//! kept and every value is copied exactly; ticks are renumbered from the first one
//! written (a slice starts at tick 0). From any other source each channel becomes an
//! archetype, except the channels that are the components of one named entity (Icarus
//! signals), which share one (`foreign.rs`: the family's mapping of other families, done
//! here); see docs/formats/elodin.md for the mapping and what it cannot carry.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value as Json};

use super::assets::Assets;
use super::dir::read_small;
use super::foreign::Foreign;
use super::metadata::{self, Component, UNSET_MAX_TICKS};
use super::parquet_out::{widening, Cell, Table, Tables};
use super::reader::HEADER_KEY;
use crate::formats::output::Outputs;
use crate::formats::{Failure, Sink, Unsupported, WriteError, WriteReport};
use crate::model::{Channel, Entity, Header, Record, Value};

pub(super) const GLOBALS: &str = "system_globals";
/// Elodin's spatial transform component: [qx, qy, qz, qw, x, y, z].
pub(super) const WORLD_POS: &str = "world_pos";

pub struct ElodinWriter {
    /// Before `tables`: its tables are dropped before the encoding threads they share.
    mode: Mode,
    /// The directory being filled (a temporary one beside the target), and the encoding
    /// threads and buffer budget of its tables.
    tables: Tables,
    report: WriteReport,
}

#[allow(clippy::large_enum_variant)]
enum Mode {
    Same(Same),
    Foreign(Foreign),
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

pub(super) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    fs::write(path, bytes).map_err(|e| WriteError::io(path, e))
}

impl ElodinWriter {
    pub fn create(
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<ElodinWriter, WriteError> {
        let source = header
            .metadata
            .get(HEADER_KEY)
            .filter(|_| header.format == "elodin");
        let root = outputs.create_dir(target)?;
        let exec = source
            .and_then(|s| s.get("exec_dir"))
            .and_then(Json::as_str)
            .map(PathBuf::from);
        let world = match &exec {
            Some(exec) => {
                for sub in ["tick_exec", "startup_exec"] {
                    let from = exec.join(sub);
                    if from.is_dir() {
                        copy_tree(&from, &root.join(sub))
                            .map_err(|e| WriteError::io(&root.join(sub), e))?;
                    }
                }
                let w = root.join("world");
                fs::create_dir(&w).map_err(|e| WriteError::io(&w, e))?;
                w
            }
            None => root,
        };
        let mode = match source {
            Some(s) => Mode::Same(Same::new(s, header)?),
            None => Mode::Foreign(Foreign::new(header)),
        };
        Ok(ElodinWriter {
            mode,
            tables: Tables::new(world)?,
            report: WriteReport::default(),
        })
    }
}

impl Sink for ElodinWriter {
    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        match &mut self.mode {
            Mode::Same(s) => s.write(&self.tables, record, &mut self.report)?,
            Mode::Foreign(f) => f.write(&self.tables, record, &mut self.report)?,
        }
        self.report.records += 1;
        Ok(())
    }

    /// A channel announced mid-stream becomes an archetype like the others; an Elodin
    /// source announces none.
    fn add_channel(&mut self, channel: &Channel) -> Result<(), WriteError> {
        if let Mode::Foreign(f) = &mut self.mode {
            f.add_channel(channel);
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<WriteReport, WriteError> {
        let ElodinWriter {
            mode,
            tables,
            mut report,
        } = *self;
        match mode {
            Mode::Same(s) => s.finish(&tables, &mut report)?,
            Mode::Foreign(f) => f.finish(&tables, &mut report)?,
        }
        Ok(report)
    }
}

// ---------------------------------------------------------------------------------------
// Elodin to Elodin: the source's archetypes, exactly.

/// The value of `key` in `record` and its index, looking at index `hint` first (records of
/// one archetype carry their keys in the same order, so the hint is nearly always right).
fn value_of<'r>(record: &'r Record, key: &str, hint: usize) -> Option<(usize, &'r Value)> {
    match record.values.get(hint) {
        Some((k, v)) if k == key => Some((hint, v)),
        _ => record
            .values
            .iter()
            .position(|(k, _)| k == key)
            .map(|i| (i, &record.values[i].1)),
    }
}

struct SameArch {
    name: String,
    /// Per output component, where its value was in the last record.
    hints: Vec<usize>,
    declared: Vec<Component>,
    table: Option<Table>,
    /// Components of the table stored in a wider type, and why (counted per row).
    widened: Vec<(String, &'static str)>,
    first_tick: Option<u64>,
    first_entities: Vec<u64>,
    cur_tick: Option<u64>,
    cur_pos: usize,
}

struct Same {
    json: Map<String, Json>,
    /// World dirs whose `assets.bin` items make the output's, in order (one for a
    /// convert or slice; the inputs of a merge).
    assets_from: Vec<PathBuf>,
    source_ticks: Option<u64>,
    step_ns: i64,
    max_ticks: Option<u64>,
    /// Archetype of each input channel (by name), if it is one.
    archs: Vec<Option<SameArch>>,
    base: Option<u64>,
    last_tick: Option<u64>,
}

impl Same {
    fn new(source: &Json, header: &Header) -> Result<Same, WriteError> {
        let json = source
            .get("metadata")
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default();
        let bytes = serde_json::to_vec(&json).unwrap_or_default();
        let (meta, _) = metadata::parse(&bytes)
            .map_err(|f| WriteError::encoder(format!("the source's metadata.json: {f}")))?;
        let archs = header
            .channels
            .iter()
            .map(|c| {
                meta.archetypes
                    .iter()
                    .find(|a| a.name == c.name)
                    .map(|a| SameArch {
                        name: a.name.clone(),
                        hints: Vec::new(),
                        declared: a.components.clone(),
                        table: None,
                        widened: Vec::new(),
                        first_tick: None,
                        first_entities: Vec::new(),
                        cur_tick: None,
                        cur_pos: 0,
                    })
            })
            .collect();
        let world = || {
            source
                .get("world_dir")
                .and_then(Json::as_str)
                .map(PathBuf::from)
        };
        let assets_from = match source.get("assets_from").and_then(Json::as_array) {
            Some(list) => list
                .iter()
                .filter_map(Json::as_str)
                .map(PathBuf::from)
                .collect(),
            None => world().into_iter().collect(),
        };
        Ok(Same {
            json,
            assets_from,
            source_ticks: source.get("ticks").and_then(Json::as_u64),
            step_ns: meta.step_ns,
            max_ticks: meta.max_ticks,
            archs,
            base: None,
            last_tick: None,
        })
    }

    fn write(
        &mut self,
        tables: &Tables,
        record: &Record,
        report: &mut WriteReport,
    ) -> Result<(), WriteError> {
        let Some(Some(arch)) = self.archs.get_mut(record.channel as usize) else {
            report.loss.add(
                &format!("channel {}", record.channel),
                "*",
                "not an archetype of the source replay",
            );
            return Ok(());
        };
        let tick = record
            .frame
            .and_then(|f| u64::try_from(f).ok())
            .unwrap_or_else(|| u64::try_from(record.time / self.step_ns.max(1)).unwrap_or(0));
        let base = *self.base.get_or_insert(tick);
        let Some(out_tick) = tick.checked_sub(base) else {
            report.loss.add(
                &arch.name,
                "*",
                "a row before the first tick written: dropped",
            );
            return Ok(());
        };
        let entity = record.entity.as_ref().and_then(Entity::id).unwrap_or(0);
        if arch.table.is_none() {
            // Components the first row carries (a key selection may have dropped some).
            let present: Vec<Component> = arch
                .declared
                .iter()
                .filter(|c| record.get(&c.name).is_some())
                .cloned()
                .collect();
            arch.widened = present
                .iter()
                .filter_map(|c| widening(c).map(|why| (c.name.clone(), why)))
                .collect();
            arch.table = Some(tables.create(&arch.name, present)?);
            arch.first_tick = Some(out_tick);
        }
        if arch.cur_tick != Some(out_tick) {
            arch.cur_tick = Some(out_tick);
            arch.cur_pos = 0;
        }
        if arch.first_tick == Some(out_tick) {
            arch.first_entities.push(entity);
        } else if arch.first_entities.get(arch.cur_pos) != Some(&entity) {
            report.loss.add(
                &arch.name,
                "*",
                "entity set or order differs from the first tick: row dropped",
            );
            return Ok(());
        }
        arch.cur_pos += 1;
        self.last_tick = Some(self.last_tick.map_or(out_tick, |t| t.max(out_tick)));
        let Some(table) = arch.table.as_mut() else {
            return Ok(());
        };
        let hints = &mut arch.hints;
        hints.resize(table.components.len(), 0);
        let value = |i: usize, c: &Component, hints: &mut Vec<usize>| {
            let found = value_of(record, &c.name, hints[i]);
            if let Some((at, _)) = found {
                hints[i] = at;
            }
            match found {
                Some((_, Value::Array(a))) if a.dtype() == c.primitive.dtype() => Some(&a.data),
                _ => None,
            }
        };
        let exact = table.push_with(out_tick, entity, |i, c| {
            if c.name == "simulation_tick" {
                return Cell::U64(out_tick);
            }
            value(i, c, hints).map_or(Cell::Zeros, Cell::Data)
        })?;
        for (name, why) in &arch.widened {
            report.loss.widen(&arch.name, name, why);
        }
        if !exact {
            for (i, c) in table.components.iter().enumerate() {
                let written = value(i, c, hints).is_some_and(|d| d.len() == c.elements);
                if c.name != "simulation_tick" && !written {
                    report.loss.add(
                        &arch.name,
                        &c.name,
                        "missing, or not the declared type and shape: zeros written",
                    );
                }
            }
        }
        Ok(())
    }

    fn finish(self, tables: &Tables, report: &mut WriteReport) -> Result<(), WriteError> {
        let world = tables.dir();
        let Some(last_tick) = self.last_tick else {
            return Err(WriteError::Unsupported(Unsupported::Limit(NO_TICKS)));
        };
        let mut json = self.json;
        // Archetype → its components as written (their stored types).
        let mut kept: BTreeMap<String, Vec<Component>> = BTreeMap::new();
        for arch in self.archs.into_iter().flatten() {
            match arch.table {
                Some(t) => {
                    kept.insert(arch.name.clone(), t.stored_components());
                    t.close()?;
                }
                // Elodin 0.10 cannot load an archetype without rows (its loader divides
                // each column into ticks): left out, and said so.
                None => report.loss.add(
                    &arch.name,
                    "*",
                    "no rows to write: the archetype is left out (Elodin cannot load an empty one)",
                ),
            }
        }
        if let Some(Json::Object(archetypes)) = json.get_mut("archetypes") {
            archetypes.retain(|name, _| kept.contains_key(name));
            for (name, list) in archetypes.iter_mut() {
                let (Json::Array(list), Some(keep)) = (list, kept.get(name)) else {
                    continue;
                };
                list.retain(|c| {
                    c.get("name")
                        .and_then(Json::as_str)
                        .is_some_and(|n| keep.iter().any(|k| k.name == n))
                });
                for c in list.iter_mut() {
                    let written = keep
                        .iter()
                        .find(|k| c.get("name").and_then(Json::as_str) == Some(k.name.as_str()));
                    if let (Some(k), Some(ty)) = (written, c.get_mut("component_type")) {
                        if ty.get("primitive_ty").and_then(Json::as_str) != Some(k.primitive.name())
                        {
                            ty["primitive_ty"] = json!(k.primitive.name());
                        }
                    }
                }
            }
        }
        let ticks = last_tick.saturating_add(1);
        let sliced = self.base.unwrap_or(0) != 0 || Some(ticks) != self.source_ticks;
        // The source's own metadata flavour is kept (a v0.9 replay stays v0.9: no
        // `default_playback_speed` beside its `output_time_step`); only `max_ticks`
        // follows a slice, where the source set it.
        if let Some(m) = self.max_ticks {
            if m != UNSET_MAX_TICKS && sliced {
                json.insert("max_ticks".into(), json!(ticks - 1));
            }
        }
        let text = serde_json::to_vec(&Json::Object(json)).unwrap_or_default();
        write_file(&world.join("metadata.json"), &text)?;
        write_file(
            &world.join("assets.bin"),
            &merged_assets(&self.assets_from)?,
        )?;
        Ok(())
    }
}

/// Why nothing can be written for a recording without records.
pub(super) const NO_TICKS: &str = "the recording has no records: an Elodin replay needs at least one tick (Elodin 0.10 cannot load one without rows)";

/// `assets.bin` of the output: the items of each source world's store, in order (their
/// handles were shifted by the merge that listed several). One store is copied byte for
/// byte.
fn merged_assets(worlds: &[PathBuf]) -> Result<Vec<u8>, WriteError> {
    match worlds {
        [] => Ok(vec![0]),
        [one] => Ok(read_small(&one.join("assets.bin")).unwrap_or_else(|_| vec![0])),
        many => {
            let mut stores = Vec::new();
            for w in many {
                let path = w.join("assets.bin");
                let bytes = read_small(&path).map_err(|e| WriteError::io(&path, e))?;
                let store = Assets::parse(bytes)
                    .map_err(|e| WriteError::failed(&path, Failure::Encoder(e.to_string())))?;
                stores.push(store);
            }
            Ok(Assets::concat(&stores))
        }
    }
}
