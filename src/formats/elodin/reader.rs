//! Reading a replay: every archetype file walked tick by tick (one batch of each in
//! memory), one record per (archetype, entity, tick), with the validation rules of
//! spec §8 checked on the way.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value as Json};

use super::assets::Assets;
use super::codes::*;
use super::columns::{check_type, ColumnView, Layout, Mismatch, RowProblem};
use super::decode_pool::DecodePool;
use super::dir::{self, Layout as DirLayout, NAMES_ARCHETYPE};
use super::metadata::{Component, UNSET_MAX_TICKS};
use super::parquet_in::{Batch, ParquetFile, BATCH_ROWS};
use crate::formats::{ReadError, ReadOptions, Source};
use crate::model::{Channel, ChannelKind, Composition, Field, FieldSpec, Header, Record, Value};
use crate::report::{Fact, Finding, Findings, Severity};

/// Header metadata key under which the reader leaves what a writer needs.
pub const HEADER_KEY: &str = "elodin";

/// `body.parquet row 17, column world_pos: ` (the location prefix of row findings).
fn at(archetype: &str, row: u64, column: &str) -> String {
    format!("{archetype}.parquet row {row}, column {column}: ")
}

/// `ELODIN_ENTITY_SET` for a tick (ending at `row`) that has fewer entities than the first
/// tick, when its entities so far matched the first tick's in order.
fn short_tick(c: &Cursor, tick: u64, row: u64) -> Option<Finding> {
    let first = c.first_tick?;
    let n = c.first_entities.len();
    if tick == first || c.cur_pos >= n || c.cur_mismatch {
        return None;
    }
    let missing = &c.first_entities[c.cur_pos..];
    let mut list: Vec<String> = missing.iter().take(5).map(u64::to_string).collect();
    if missing.len() > 5 {
        list.push(format!("… ({} in all)", missing.len()));
    }
    let msg = format!(
        "{}tick {tick} has {} of the {n} entities of tick {first}; missing: {}",
        at(&c.name, row, "entity_id"),
        c.cur_pos,
        list.join(", ")
    );
    Some(on_row(Finding::new(Severity::Error, ENTITY_SET, msg), row))
}

/// `body.parquet every row (242), column world_pos: ` (the prefix of schema findings,
/// which hold for the whole column).
fn every_row(archetype: &str, rows: u64, column: &str) -> String {
    format!("{archetype}.parquet every row ({rows}), column {column}: ")
}

/// A finding about one row (its index in the archetype's file).
fn on_row(mut f: Finding, row: u64) -> Finding {
    f.record = Some(row);
    f
}

/// A finding of the row `row`.
fn row_finding(code: &'static str, severity: Severity, msg: String, row: u64) -> Finding {
    on_row(Finding::new(severity, code, msg), row)
}

/// The record of the cursor's current row, its values vector taken from the recycled ones
/// when decoding (filled by [`read_values`]).
#[inline]
fn start_record(c: &mut Cursor, tick: u64, entity: u64, step: i64, decode: bool) -> Record {
    let mut record = Record::new(
        i64::try_from(tick)
            .ok()
            .and_then(|t| t.checked_mul(step))
            .unwrap_or(i64::MAX),
        c.channel,
    );
    record.entity = Some(entity.into());
    record.frame = Some(i64::try_from(tick).unwrap_or(i64::MAX));
    if decode {
        match c.spare.pop() {
            Some(values) => record.values = values,
            None => record.values.reserve_exact(c.comps.len()),
        }
    }
    record
}

/// Tick order and contiguity.
#[inline]
fn examine_tick(c: &Cursor, tick: u64, found: &mut Vec<Finding>) {
    let row = c.row;
    match c.last_tick {
        None if tick != 0 => found.push(row_finding(
            TICK_GAP,
            Severity::Error,
            format!(
                "{}the first tick is {tick}, not 0",
                at(&c.name, row, "tick")
            ),
            row,
        )),
        Some(last) if tick < last => found.push(row_finding(
            TICK_ORDER,
            Severity::Error,
            format!(
                "{}tick {tick} after tick {last}: rows are not tick-major",
                at(&c.name, row, "tick")
            ),
            row,
        )),
        Some(last) if last.checked_add(1).is_some_and(|next| tick > next) => {
            found.push(row_finding(
                TICK_GAP,
                Severity::Error,
                format!(
                    "{}tick {tick} follows tick {last}: {} missing",
                    at(&c.name, row, "tick"),
                    if tick - last == 2 {
                        format!("tick {} is", last + 1)
                    } else {
                        format!("ticks {} to {} are", last + 1, tick - 1)
                    }
                ),
                row,
            ))
        }
        _ => {}
    }
}

/// At the first row of a tick: the tick before it checked for missing entities, and the
/// per-tick entity bookkeeping started again.
#[inline]
fn enter_tick(c: &mut Cursor, tick: u64, found: &mut Vec<Finding>) {
    if c.cur_tick == Some(tick) {
        return;
    }
    if let Some(prev) = c.cur_tick {
        // Reported at the last row of the short tick.
        if let Some(f) = short_tick(c, prev, c.row.saturating_sub(1)) {
            found.push(f);
        }
    }
    if c.first_tick.is_none() {
        c.first_tick = Some(tick);
    }
    c.cur_tick = Some(tick);
    c.cur_pos = 0;
    c.cur_seen.clear();
    c.cur_mismatch = false;
}

/// Entity set and order per tick: every tick has the first tick's entities, in its order,
/// each once.
#[inline]
fn examine_entity(c: &mut Cursor, tick: u64, entity: u64, found: &mut Vec<Finding>) {
    let row = c.row;
    let in_first = c.first_tick == Some(tick);
    let twice = |name: &str| {
        row_finding(
            DUPLICATE_ROW,
            Severity::Error,
            format!(
                "{}entity {entity} appears twice at tick {tick}",
                at(name, row, "entity_id")
            ),
            row,
        )
    };
    let duplicate = if in_first || c.cur_mismatch {
        !c.cur_seen.insert(entity)
    } else {
        false
    };
    if duplicate {
        found.push(twice(&c.name));
    } else if in_first {
        c.first_entities.push(entity);
    } else if !c.cur_mismatch && c.first_entities.get(c.cur_pos) != Some(&entity) {
        // From here on this tick is checked for duplicates the slow way.
        c.cur_mismatch = true;
        c.cur_seen
            .extend(c.first_entities.iter().take(c.cur_pos).copied());
        if !c.cur_seen.insert(entity) {
            found.push(twice(&c.name));
        } else {
            found.push(row_finding(
                ENTITY_SET,
                Severity::Error,
                format!(
                    "{}entity {entity} at position {} of tick {tick}, where tick {} has {}",
                    at(&c.name, row, "entity_id"),
                    c.cur_pos,
                    c.first_tick.unwrap_or(0),
                    c.first_entities
                        .get(c.cur_pos)
                        .map_or("no entity".to_string(), |e| format!("entity {e}"))
                ),
                row,
            ));
        }
    }
    c.cur_pos += 1;
}

/// Where the row's tick stands among the rows so far (for the checks at the end).
#[inline]
fn note_row(c: &mut Cursor, tick: u64) {
    let row = c.row;
    c.last_tick = Some(tick);
    if c.max_tick.is_none_or(|m| tick > m) {
        c.max_tick = Some(tick);
        c.max_tick_row = row;
    }
    if c.first_tick == Some(tick) && c.cur_pos == 1 {
        c.first_row = row;
    }
}

/// The row's component values, written over the recycled ones in `record` (when
/// decoding), each checked as it is read.
#[inline]
fn read_values(
    c: &mut Cursor,
    record: &mut Record,
    (tick, entity): (u64, u64),
    items: Option<u64>,
    decode: bool,
    found: &mut Vec<Finding>,
) {
    let (pos, row) = (c.pos, c.row);
    let mut k = 0;
    for comp in &c.comps {
        let Some(view) = comp.col.as_ref() else {
            continue;
        };
        match view.range(pos, comp.meta.elements) {
            Ok((start, len)) => {
                if comp.meta.asset || comp.sim_tick {
                    let handle = Handle {
                        archetype: &c.name,
                        comp,
                        value: view.u64_at(start),
                        row,
                        tick,
                        entity,
                    };
                    examine_handle(&handle, items, &mut c.names_first, found);
                }
                if decode {
                    fill_value(&mut record.values, k, comp, view, (start, len));
                    k += 1;
                }
            }
            Err(p) => found.push(row_problem(&c.name, row, comp, p)),
        }
    }
    record.values.truncate(k);
}

/// A `u64` component that names something: a simulation tick or an asset handle.
struct Handle<'a> {
    archetype: &'a str,
    comp: &'a Comp,
    /// The value read (`None`: unreadable).
    value: Option<u64>,
    row: u64,
    tick: u64,
    entity: u64,
}

/// `simulation_tick` equals the row's tick; an asset handle is within `assets.bin`'s
/// `items`; an entity keeps its metadata handle (`names_first`: the first one seen).
fn examine_handle(
    named: &Handle,
    items: Option<u64>,
    names_first: &mut BTreeMap<u64, u64>,
    found: &mut Vec<Finding>,
) {
    let (comp, v, row, tick, entity) =
        (named.comp, named.value, named.row, named.tick, named.entity);
    if comp.sim_tick && v != Some(tick) {
        found.push(row_finding(
            SIMULATION_TICK,
            Severity::Warning,
            format!(
                "{}simulation_tick is {} at tick {tick}",
                at(named.archetype, row, "simulation_tick"),
                v.map_or("unreadable".into(), |v| v.to_string())
            ),
            row,
        ));
    }
    if !comp.meta.asset {
        return;
    }
    if let (Some(h), Some(n)) = (v, items) {
        if h >= n {
            found.push(row_finding(
                ASSET_HANDLE,
                Severity::Error,
                format!(
                    "{}asset handle {h} but assets.bin has {n} items",
                    at(named.archetype, row, &comp.meta.name)
                ),
                row,
            ));
        }
    }
    if let (true, Some(handle)) = (comp.names, v) {
        let first = *names_first.entry(entity).or_insert(handle);
        if first != handle {
            found.push(row_finding(
                ENTITY_NAME_CHANGE,
                Severity::Info,
                format!(
                    "{}entity {entity} changes its metadata handle from {first} to {handle} at tick {tick}; the first is used for its name",
                    at(named.archetype, row, &comp.meta.name)
                ),
                row,
            ));
            names_first.insert(entity, handle);
        }
    }
}

/// Value `k` of `values`: the slot a recycled record holds written over (its key kept when
/// it is the same), or a new one.
#[inline]
fn fill_value(
    values: &mut Vec<Field>,
    k: usize,
    comp: &Comp,
    view: &ColumnView,
    (start, len): (usize, usize),
) {
    match values.get_mut(k) {
        Some((key, value)) => {
            if *key != comp.meta.name {
                key.clear();
                key.push_str(&comp.meta.name);
            }
            view.fill(value, start, len, &comp.meta.shape);
        }
        None => values.push((
            comp.meta.name.clone(),
            Value::Array(view.array(start, len, &comp.meta.shape)),
        )),
    }
}

/// A row whose value cannot be read: null, or a list of the wrong length.
fn row_problem(archetype: &str, row: u64, comp: &Comp, p: RowProblem) -> Finding {
    let (code, what) = match p {
        RowProblem::Null => (NULL, "null value".to_string()),
        RowProblem::NullItem => (NULL, "null list item".to_string()),
        RowProblem::Length(n) => (
            SHAPE_MISMATCH,
            format!(
                "a list of {n} elements where {} declares {}",
                comp.meta.type_text(),
                comp.meta.elements
            ),
        ),
    };
    row_finding(
        code,
        Severity::Error,
        format!("{}{what}", at(archetype, row, &comp.meta.name)),
        row,
    )
}

struct Comp {
    meta: Component,
    /// How to read it; `None` when its column is missing or of the wrong type.
    layout: Option<Layout>,
    /// Its column in the current batch (when it is read).
    col: Option<ColumnView>,
    /// `simulation_tick`, checked against `tick` on every row.
    sim_tick: bool,
    /// The entity-name handle column (`asset_handle_entity_metadata`).
    names: bool,
}

impl Comp {
    fn new(meta: &Component) -> Comp {
        Comp {
            meta: meta.clone(),
            layout: None,
            col: None,
            sim_tick: meta.name == "simulation_tick",
            names: meta.name == NAMES_ARCHETYPE,
        }
    }
}

/// Per archetype: its file, its current batch and row, and what validation remembers.
struct Cursor {
    channel: u32,
    name: String,
    comps: Vec<Comp>,
    file: Option<ParquetFile>,
    /// Rows of the current batch, and the position in it.
    batch_rows: usize,
    pos: usize,
    /// The `tick` and `entity_id` columns of the current batch.
    ticks: Option<ColumnView>,
    ids: Option<ColumnView>,
    /// Values vectors handed back through `Source::recycle`, reused for later records.
    spare: Vec<Vec<Field>>,
    /// Row index in the file of the current row.
    row: u64,
    /// (tick, entity) of the current row, when there is one.
    head: Option<(u64, u64)>,
    /// (rows, row groups, bytes) from the footer.
    stats: Option<(u64, usize, u64)>,
    // Validation state.
    first_entities: Vec<u64>,
    first_tick: Option<u64>,
    cur_tick: Option<u64>,
    cur_pos: usize,
    cur_seen: HashSet<u64>,
    cur_mismatch: bool,
    last_tick: Option<u64>,
    max_tick: Option<u64>,
    /// Rows where the first tick starts and where the largest tick first appears.
    first_row: u64,
    max_tick_row: u64,
    names_first: BTreeMap<u64, u64>,
}

impl Cursor {
    /// A cursor with no file yet, nothing read.
    fn new(channel: u32, name: &str, components: &[Component]) -> Cursor {
        Cursor {
            channel,
            name: name.to_string(),
            comps: components.iter().map(Comp::new).collect(),
            file: None,
            batch_rows: 0,
            pos: 0,
            ticks: None,
            ids: None,
            spare: Vec::new(),
            row: 0,
            head: None,
            stats: None,
            first_entities: Vec::new(),
            first_tick: None,
            cur_tick: None,
            cur_pos: 0,
            cur_seen: HashSet::new(),
            cur_mismatch: false,
            last_tick: None,
            max_tick: None,
            first_row: 0,
            max_tick_row: 0,
            names_first: BTreeMap::new(),
        }
    }

    /// Makes `batch` the current one: its columns are looked up once, not per row.
    fn bind(&mut self, batch: Batch) {
        self.batch_rows = batch.rows;
        self.pos = 0;
        self.ticks = batch.view("tick").cloned();
        self.ids = batch.view("entity_id").cloned();
        for comp in &mut self.comps {
            comp.col = match comp.layout {
                Some(_) => batch.view(&comp.meta.name).cloned(),
                None => None,
            };
        }
    }

    /// Ends reading this file.
    fn close(&mut self) {
        self.file = None;
        self.batch_rows = 0;
        self.pos = 0;
        self.ticks = None;
        self.ids = None;
        for comp in &mut self.comps {
            comp.col = None;
        }
    }
}

/// How many recycled values vectors a cursor keeps.
const SPARE: usize = 2;

pub struct ElodinReader {
    path: PathBuf,
    header: Header,
    options: ReadOptions,
    step_ns: i64,
    max_ticks: Option<u64>,
    flavour: String,
    layout: DirLayout,
    assets: Option<(u64, usize)>,
    names: BTreeMap<u64, String>,
    cursors: Vec<Cursor>,
    findings: Findings,
    fatal: Option<Finding>,
    total_bytes: u64,
    done: bool,
    /// Decodes the small files' batches ahead.
    _pool: DecodePool,
}

impl ElodinReader {
    pub fn open(path: &Path, options: ReadOptions) -> Result<ElodinReader, ReadError> {
        Self::open_inner(path, options).map_err(|e| e.in_file(path))
    }

    fn open_inner(path: &Path, options: ReadOptions) -> Result<ElodinReader, ReadError> {
        let layout = dir::locate(path).map_err(ReadError::invalid)?;
        let (metadata, notes) = dir::read_metadata(&layout.world).map_err(ReadError::invalid)?;
        let mut findings = Findings::default();
        let mut pending: Vec<Finding> = notes;
        let assets = match dir::read_assets(&layout.world) {
            Ok(a) => Some(a),
            Err(f) => {
                pending.push(f);
                None
            }
        };
        let names = match &assets {
            Some(a) => dir::entity_names(&layout.world, &metadata, a, &mut pending),
            None => BTreeMap::new(),
        };
        let mut header = Header::new("elodin", metadata.flavour.name());
        header.origin.system = Some("tick 0 (simulation time)".into());
        let mut cursors = Vec::new();
        let mut pool = DecodePool::default();
        for archetype in &metadata.archetypes {
            let mut declared = Channel::new(
                archetype.name.clone(),
                ChannelKind::Signals,
                Composition::Independent,
            );
            // Names only (types come from the records, as the Parquet files have them), and
            // the elements' names where Elodin gives them, for flat layouts (`world_pos.qx`).
            declared.fields = archetype
                .components
                .iter()
                .map(|c| FieldSpec {
                    elements: c.element_names(),
                    ..FieldSpec::new(c.name.clone())
                })
                .collect();
            let channel = header.add_channel(declared);
            let (cursor, found) = open_cursor(
                &layout.world,
                channel,
                &archetype.name,
                &archetype.components,
                options.decode,
                &mut pool,
            );
            pending.extend(found);
            cursors.push(cursor);
        }
        for f in pending {
            if !options.lenient && f.severity == Severity::Error {
                return Err(ReadError::invalid(f));
            }
            findings.push(f);
        }
        let ticks = cursors
            .first()
            .and_then(|c| c.file.as_ref())
            .and_then(|f| f.tick_max)
            .map(|m| m.saturating_add(1));
        let total_bytes = cursors.iter().filter_map(|c| c.stats).map(|s| s.2).sum();
        header.metadata.insert(
            HEADER_KEY.into(),
            json!({
                "metadata": Json::Object(metadata.json.clone()),
                "world_dir": layout.world.to_string_lossy(),
                "exec_dir": layout.exec.as_ref().map(|e| e.to_string_lossy().into_owned()),
                "step_ns": metadata.step_ns,
                "ticks": ticks,
                "entities": names.iter().map(|(k, v)| (k.to_string(), Json::String(v.clone()))).collect::<Map<_, _>>(),
            }),
        );
        let mut reader = ElodinReader {
            path: path.to_path_buf(),
            header,
            options,
            step_ns: metadata.step_ns,
            max_ticks: metadata.max_ticks,
            flavour: metadata.flavour.name().to_string(),
            layout,
            assets: assets
                .as_ref()
                .map(|a: &Assets| (a.bytes.len() as u64, a.items.len())),
            names,
            cursors,
            findings,
            fatal: None,
            total_bytes,
            done: false,
            _pool: pool,
        };
        for i in 0..reader.cursors.len() {
            reader.load(i);
            if let Some(f) = reader.fatal.take() {
                return Err(ReadError::invalid(f));
            }
        }
        Ok(reader)
    }

    fn problem(&mut self, finding: Finding) {
        if !self.options.lenient && finding.severity == Severity::Error && self.fatal.is_none() {
            self.fatal = Some(finding.clone());
        }
        self.findings.push(finding);
    }

    /// Moves cursor `i` to its next readable row (loading batches), setting `head`.
    fn load(&mut self, i: usize) {
        loop {
            let c = &mut self.cursors[i];
            c.head = None;
            let Some(file) = c.file.as_mut() else {
                return;
            };
            if c.pos >= c.batch_rows {
                match file.next_batch() {
                    None => {
                        c.close();
                        return;
                    }
                    Some(Ok(b)) => {
                        c.bind(b);
                        continue;
                    }
                    Some(Err(e)) => {
                        let msg = format!(
                            "{}.parquet cannot be decoded after row {}: {e}",
                            c.name, c.row
                        );
                        c.close();
                        let f = Finding::new(Severity::Error, PARQUET_UNREADABLE, msg).hint(
                            "the file is truncated or corrupt; rows before this point were read",
                        );
                        self.problem(f);
                        return;
                    }
                }
            }
            let (Some(ticks), Some(ids)) = (c.ticks.as_ref(), c.ids.as_ref()) else {
                // No usable tick or entity_id column (reported at open).
                c.close();
                return;
            };
            let pos = c.pos;
            let (code, what, column) = match (ticks.u64_row(pos), ids.u64_row(pos)) {
                (Ok(Some(t)), Ok(Some(e))) => {
                    c.head = Some((t, e));
                    return;
                }
                (Err(_), _) => (NULL, "null value", "tick"),
                (_, Err(_)) => (NULL, "null value", "entity_id"),
                (Ok(None), _) => (TYPE_MISMATCH, "a negative value", "tick"),
                (_, Ok(None)) => (TYPE_MISMATCH, "a negative value", "entity_id"),
            };
            let msg = format!("{}{what}; the row is skipped", at(&c.name, c.row, column));
            let row = c.row;
            c.pos += 1;
            c.row += 1;
            self.problem(on_row(Finding::new(Severity::Error, code, msg), row));
        }
    }

    /// The record at cursor `i`'s current row, with that row's checks; then advances.
    fn emit(&mut self, i: usize, tick: u64, entity: u64) -> Record {
        let decode = self.options.decode;
        let items = self.assets.map(|(_, n)| n as u64);
        let mut found: Vec<Finding> = Vec::new();
        let c = &mut self.cursors[i];
        let mut record = start_record(c, tick, entity, self.step_ns, decode);
        examine_tick(c, tick, &mut found);
        enter_tick(c, tick, &mut found);
        examine_entity(c, tick, entity, &mut found);
        note_row(c, tick);
        read_values(c, &mut record, (tick, entity), items, decode, &mut found);
        c.pos += 1;
        c.row += 1;
        for f in found {
            self.problem(f);
        }
        self.load(i);
        record
    }

    /// Checks that need every row: the last tick's entities, equal tick ranges, max_ticks.
    fn finish(&mut self) {
        let mut found = Vec::new();
        for c in &self.cursors {
            if let Some(last) = c.cur_tick {
                if let Some(f) = short_tick(c, last, c.row.saturating_sub(1)) {
                    found.push(f);
                }
            }
        }
        let show = |r: Option<(u64, u64)>| match r {
            Some((a, b)) => format!("ticks {a} to {b}"),
            None => "no rows".to_string(),
        };
        if let Some(first) = self.cursors.first() {
            let want = first.first_tick.zip(first.max_tick);
            for c in self.cursors.iter().skip(1) {
                let range = c.first_tick.zip(c.max_tick);
                if range == want {
                    continue;
                }
                // Name the row where this archetype's range starts or ends differently.
                let row = match (range, want) {
                    (Some((a, _)), Some((w, _))) if a != w => c.first_row,
                    _ => c.max_tick_row,
                };
                let place = match range {
                    Some(_) => at(&c.name, row, "tick"),
                    None => format!("{}.parquet, column tick: ", c.name),
                };
                let f = Finding::new(
                    Severity::Error,
                    TICK_RANGE,
                    format!(
                        "{place}{} here but {} in {}.parquet: every archetype must cover the same ticks",
                        show(range),
                        show(want),
                        first.name
                    ),
                );
                found.push(if range.is_some() { on_row(f, row) } else { f });
            }
        }
        let last = self.cursors.iter().filter_map(|c| c.max_tick).max();
        if let (Some(m), Some(last)) = (self.max_ticks, last) {
            if m != UNSET_MAX_TICKS && m != last {
                found.push(Finding::new(
                    Severity::Info,
                    MAX_TICKS,
                    format!("max_ticks is {m} but the last tick is {last} (a run stopped early, or a slice)"),
                ));
            }
        }
        for f in found {
            self.problem(f);
        }
    }

    fn advance(&mut self) -> Result<Option<Record>, ReadError> {
        if self.done {
            return Ok(None);
        }
        let next = self
            .cursors
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.head.map(|(t, e)| (t, i, e)))
            .min();
        let record = match next {
            Some((tick, i, entity)) => Some(self.emit(i, tick, entity)),
            None => {
                self.done = true;
                self.finish();
                None
            }
        };
        if let Some(f) = self.fatal.take() {
            self.done = true;
            return Err(ReadError::invalid(f).in_file(&self.path));
        }
        Ok(record)
    }
}

/// Opens one archetype's file and checks its schema against the metadata.
fn open_cursor(
    world: &Path,
    channel: u32,
    name: &str,
    components: &[Component],
    decode: bool,
    pool: &mut DecodePool,
) -> (Cursor, Vec<Finding>) {
    let mut found = Vec::new();
    let mut cursor = Cursor::new(channel, name, components);
    let path = world.join(format!("{name}.parquet"));
    if !path.is_file() {
        found.push(Finding::new(
            Severity::Error,
            MISSING_PARQUET,
            format!(
                "archetype `{name}` is declared in metadata.json but {name}.parquet is missing"
            ),
        ));
        return (cursor, found);
    }
    let file = match ParquetFile::open(&path) {
        Ok(f) => f,
        Err(e) => {
            found.push(
                Finding::new(
                    Severity::Error,
                    PARQUET_UNREADABLE,
                    format!("{name}.parquet cannot be opened: {e}"),
                )
                .hint("the file is truncated or its footer is corrupt"),
            );
            return (cursor, found);
        }
    };
    cursor.stats = Some((file.rows, file.row_groups, file.size));
    let schema = &file.schema;
    let usable = examine_key_columns(schema, name, file.rows, &mut found);
    examine_components(&mut cursor.comps, schema, name, file.rows, &mut found);
    examine_extra_columns(schema, name, &cursor.comps, &mut found);
    if usable {
        start_cursor(&mut cursor, file, decode, pool, &mut found);
    }
    (cursor, found)
}

/// The `tick` and `entity_id` columns: missing or not integers, the file cannot be read
/// (`false`); integers other than UInt64 are read anyway.
fn examine_key_columns(
    schema: &arrow_schema::Schema,
    name: &str,
    rows: u64,
    found: &mut Vec<Finding>,
) -> bool {
    let mut usable = true;
    for key in ["tick", "entity_id"] {
        match schema.field_with_name(key) {
            Err(_) => {
                found.push(Finding::new(
                    Severity::Error,
                    MISSING_COLUMN,
                    format!("{name}.parquet has no `{key}` column"),
                ));
                usable = false;
            }
            Ok(f) if !f.data_type().is_integer() => {
                found.push(Finding::new(
                    Severity::Error,
                    TYPE_MISMATCH,
                    format!(
                        "{}the column is {}, not UInt64",
                        every_row(name, rows, key),
                        f.data_type()
                    ),
                ));
                usable = false;
            }
            Ok(f) if *f.data_type() != arrow_schema::DataType::UInt64 => {
                found.push(Finding::new(
                    Severity::Error,
                    TYPE_MISMATCH,
                    format!(
                        "{}the column is {}, not UInt64 (read anyway)",
                        every_row(name, rows, key),
                        f.data_type()
                    ),
                ));
            }
            Ok(_) => {}
        }
    }
    usable
}

/// Each component's column against its metadata: how to read it when it matches (its
/// `layout`), a finding when it is missing or does not.
fn examine_components(
    comps: &mut [Comp],
    schema: &arrow_schema::Schema,
    name: &str,
    rows: u64,
    found: &mut Vec<Finding>,
) {
    let mut variable = Vec::new();
    for comp in comps {
        let cname = comp.meta.name.as_str();
        match schema.field_with_name(cname) {
            Err(_) => found.push(Finding::new(
                Severity::Error,
                MISSING_COLUMN,
                format!("{name}.parquet has no column for component `{cname}`"),
            )),
            Ok(f) => match check_type(f.data_type(), &comp.meta) {
                Ok(layout) => {
                    if layout == Layout::List {
                        variable.push(cname.to_string());
                    }
                    comp.layout = Some(layout);
                }
                Err(Mismatch::Type(m)) => found.push(Finding::new(
                    Severity::Error,
                    TYPE_MISMATCH,
                    format!("{}{m}", every_row(name, rows, cname)),
                )),
                Err(Mismatch::Shape(m)) => found.push(Finding::new(
                    Severity::Error,
                    SHAPE_MISMATCH,
                    format!("{}{m}", every_row(name, rows, cname)),
                )),
            },
        }
    }
    if !variable.is_empty() {
        found.push(Finding::new(
            Severity::Info,
            VARIABLE_LIST,
            format!(
                "{name}.parquet stores {} as variable lists, not FixedSizeList (no ARROW:schema); Elodin itself needs FixedSizeList",
                variable.join(", ")
            ),
        ));
    }
}

/// Columns that metadata.json does not declare.
fn examine_extra_columns(
    schema: &arrow_schema::Schema,
    name: &str,
    comps: &[Comp],
    found: &mut Vec<Finding>,
) {
    for f in schema.fields() {
        let n = f.name().as_str();
        if n != "tick" && n != "entity_id" && !comps.iter().any(|c| c.meta.name == n) {
            found.push(Finding::new(
                Severity::Warning,
                EXTRA_COLUMN,
                format!("{name}.parquet has column `{n}`, which metadata.json does not declare"),
            ));
        }
    }
}

/// Starts reading the columns this pass needs; the cursor holds the file from then on.
fn start_cursor(
    cursor: &mut Cursor,
    mut file: ParquetFile,
    decode: bool,
    pool: &mut DecodePool,
    found: &mut Vec<Finding>,
) {
    let name = &cursor.name;
    let mut wanted: Vec<String> = vec!["tick".into(), "entity_id".into()];
    // Components whose values are always needed: asset handles and simulation_tick checks.
    for comp in &cursor.comps {
        if comp.layout.is_some()
            && (decode || comp.meta.asset || comp.meta.name == "simulation_tick")
        {
            wanted.push(comp.meta.name.clone());
        }
    }
    let columns: Vec<&str> = wanted.iter().map(String::as_str).collect();
    if let Err(e) = file.start(&columns, BATCH_ROWS, Some(pool)) {
        found.push(Finding::new(
            Severity::Error,
            PARQUET_UNREADABLE,
            format!("{name}.parquet cannot be read: {e}"),
        ));
        return;
    }
    // Components not read this time (header-only walks) take no part in this pass.
    for comp in &mut cursor.comps {
        if !wanted.contains(&comp.meta.name) {
            comp.layout = None;
        }
    }
    cursor.file = Some(file);
}

impl Iterator for ElodinReader {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.advance().transpose()
    }
}

impl Source for ElodinReader {
    fn header(&self) -> &Header {
        &self.header
    }

    fn findings(&self) -> Vec<(&Path, &Findings)> {
        vec![(self.path.as_path(), &self.findings)]
    }

    fn progress(&self) -> (u64, u64) {
        let done = self
            .cursors
            .iter()
            .filter_map(|c| c.stats.map(|s| (c.row, s)))
            .map(|(row, (rows, _, size))| {
                if rows == 0 {
                    0
                } else {
                    (size as f64 * (row as f64 / rows as f64)) as u64
                }
            })
            .sum::<u64>();
        (done.min(self.total_bytes), self.total_bytes)
    }

    fn facts(&self) -> Vec<Fact> {
        super::summary::facts(self)
    }

    fn recycle(&mut self, record: Record) {
        if let Some(c) = self.cursors.get_mut(record.channel as usize) {
            if c.channel == record.channel && c.spare.len() < SPARE && record.values.capacity() > 0
            {
                c.spare.push(record.values);
            }
        }
    }
}

/// What the summary needs from a reader.
pub(super) struct View<'a> {
    pub layout: &'a DirLayout,
    pub flavour: &'a str,
    pub step_ns: i64,
    pub max_ticks: Option<u64>,
    pub assets: Option<(u64, usize)>,
    pub names: &'a BTreeMap<u64, String>,
    pub metadata: &'a Json,
    pub archetypes: Vec<ArchetypeView<'a>>,
}

pub(super) struct ArchetypeView<'a> {
    pub name: &'a str,
    pub components: Vec<&'a Component>,
    pub entities: &'a [u64],
    pub rows: Option<u64>,
    pub rows_seen: u64,
    pub row_groups: Option<usize>,
    pub size: Option<u64>,
    pub ticks: Option<(u64, u64)>,
}

impl ElodinReader {
    pub(super) fn view(&self) -> View<'_> {
        View {
            layout: &self.layout,
            flavour: &self.flavour,
            step_ns: self.step_ns,
            max_ticks: self.max_ticks,
            assets: self.assets,
            names: &self.names,
            metadata: &self.header.metadata[HEADER_KEY]["metadata"],
            archetypes: self
                .cursors
                .iter()
                .map(|c| ArchetypeView {
                    name: &c.name,
                    components: c.comps.iter().map(|x| &x.meta).collect(),
                    entities: &c.first_entities,
                    rows: c.stats.map(|s| s.0),
                    rows_seen: c.row,
                    row_groups: c.stats.map(|s| s.1),
                    size: c.stats.map(|s| s.2),
                    ticks: c.first_tick.zip(c.max_tick),
                })
                .collect(),
        }
    }
}
