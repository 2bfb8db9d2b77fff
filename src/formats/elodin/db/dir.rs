//! The catalogue of a DB directory: one walk of the tree that reads `db_state`, each
//! component's `schema` and `metadata`, and the headers (and first and last timestamps) of
//! its append logs, checking every length against the file that holds it. No row is read
//! here: `inspect` needs nothing more, and the reader starts from it.
//!
//! Files are opened read-only and read only below their committed length: Elodin leaves
//! each log an 8 GiB sparse file, of which the committed bytes are the start.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::codes;
use super::layout::{
    ComponentMetadata, DbState, EntityMetadata, LayoutError, LogHeader, MsgMetadata, Schema,
    COMPONENT_LOG_HEADER, MSG_LOG_HEADER, UMBRA_SIZE,
};
use crate::formats::ReadError;
use crate::report::{Finding, Severity};

/// The largest `db_state`, `schema` or `metadata` file read (0.16.2's `db_state`, with its
/// schematic inline, is under 1 KiB).
const SMALL_FILE: u64 = 1 << 20;

/// Which of Elodin's two layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// 0.15 – 0.18: `<component id>/{schema,metadata,index,data}`.
    V15,
    /// 0.12 – 0.14: `<component id>/<entity id>/{index,data}`, `entity_metadata/`.
    V12,
}

impl Layout {
    pub fn name(self) -> &'static str {
        match self {
            Layout::V15 => "0.15+",
            Layout::V12 => "0.12-0.14",
        }
    }
}

/// An append log's committed payload: `[header, header + len)` of `path`.
#[derive(Debug, Clone)]
pub struct Log {
    pub path: PathBuf,
    pub header: LogHeader,
    /// Payload bytes that can be read: the committed ones, within the file.
    pub len: u64,
}

impl Log {
    pub fn start(&self) -> u64 {
        self.header.size() as u64
    }
}

/// One component (one entity's component in the 0.12 – 0.14 layout): a channel.
#[derive(Debug, Clone)]
pub struct Component {
    /// The full name (`a.world_pos`; `Ball.world_pos` in the old layout).
    pub name: String,
    pub entity: Option<String>,
    pub field: String,
    pub id: u64,
    /// The entity's number, in the 0.12 – 0.14 layout.
    pub entity_id: Option<u64>,
    pub schema: Schema,
    pub row_size: usize,
    pub metadata: ComponentMetadata,
    pub element_names: Option<Vec<String>>,
    pub index: Log,
    pub data: Log,
    /// Rows served: the committed timestamps that have a committed row.
    pub rows: u64,
    /// First, second-to-last and last timestamps (µs since the Unix epoch).
    pub first_us: Option<i64>,
    pub before_last_us: Option<i64>,
    pub last_us: Option<i64>,
}

impl Component {
    pub fn creation_index(&self) -> Option<u64> {
        self.metadata.get("_creation_index")?.parse().ok()
    }

    /// Elodin leaves a timestamp source out of the recording's time range.
    pub fn is_timestamp_source(&self) -> bool {
        self.metadata.get("_is_timestamp_source") == Some("true")
    }
}

/// A message log: an event channel.
#[derive(Debug, Clone)]
pub struct MsgLog {
    pub name: String,
    pub id: u16,
    pub metadata: Option<MsgMetadata>,
    pub timestamps: Log,
    pub offsets: Log,
    pub data_log: Log,
    pub count: u64,
    pub first_us: Option<i64>,
    pub last_us: Option<i64>,
}

/// What a DB directory holds, from its headers.
#[derive(Debug, Clone)]
pub struct Catalogue {
    pub layout: Layout,
    pub state: DbState,
    /// In channel order: Elodin's creation order where it is recorded, then by name.
    pub components: Vec<Component>,
    /// Names of the directories with metadata and no schema (Elodin's sims write one per
    /// entity).
    pub metadata_only: Vec<String>,
    /// The 0.12 – 0.14 layout's entities (id, name).
    pub entities: Vec<(u64, String)>,
    pub msgs: Vec<MsgLog>,
    /// Files under `assets/` (relative name, bytes), not read.
    pub assets: Vec<(String, u64)>,
    /// What the walk found, each with the file it is about.
    pub problems: Vec<(PathBuf, Finding)>,
}

/// Whether `dir` holds a `db_state` that reads as either layout's: cheap, for detection.
pub fn looks_like_db(dir: &Path) -> bool {
    read_small(&dir.join("db_state"))
        .ok()
        .flatten()
        .is_some_and(|b| DbState::decode(&b).is_ok())
}

/// Reads a small file whole, refusing one larger than [`SMALL_FILE`]; `None` when absent.
fn read_small(path: &Path) -> io::Result<Option<Vec<u8>>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut bytes = Vec::new();
    file.take(SMALL_FILE + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > SMALL_FILE {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {SMALL_FILE} bytes"),
        ));
    }
    Ok(Some(bytes))
}

/// Reads `buf.len()` bytes at `offset` of `file`.
pub fn read_at(file: &mut File, offset: u64, buf: &mut [u8]) -> io::Result<()> {
    // One `pread`, not a seek and a read: half the system calls of a block.
    file.read_exact_at(buf, offset)
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> ReadError + '_ {
    move |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The walk's state: the root and what it found.
struct Walk<'a> {
    root: &'a Path,
    problems: Vec<(PathBuf, Finding)>,
}

impl Walk<'_> {
    fn relative<'p>(&self, path: &'p Path) -> std::borrow::Cow<'p, str> {
        path.strip_prefix(self.root)
            .unwrap_or(path)
            .to_string_lossy()
    }

    fn problem(&mut self, path: &Path, severity: Severity, code: &'static str, message: String) {
        self.problems
            .push((path.to_path_buf(), Finding::new(severity, code, message)));
    }

    fn layout_problem(&mut self, path: &Path, code: &'static str, what: &str, e: LayoutError) {
        let at = e.at() as u64;
        let message = format!("{what}: {} ({e})", self.relative(path));
        self.problems.push((
            path.to_path_buf(),
            Finding::new(Severity::Error, code, message).offset(at),
        ));
    }

    /// Opens an append log with a `header_size`-byte header and checks its committed length
    /// against the file; `None` (with the problem) when nothing of it can be read.
    fn log(
        &mut self,
        path: &Path,
        header_size: usize,
        owner: &str,
    ) -> Result<Option<(Log, File)>, ReadError> {
        let mut file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let message = format!("{owner}: {} is missing", self.relative(path));
                self.problem(path, Severity::Error, codes::MISSING_LOG, message);
                return Ok(None);
            }
            Err(e) => return Err(io_error(path)(e)),
        };
        let file_len = file.metadata().map_err(io_error(path))?.len();
        let mut head = [0; COMPONENT_LOG_HEADER];
        let head = &mut head[..header_size];
        if file_len < header_size as u64 {
            let message = format!(
                "{owner}: {} is {file_len} bytes, shorter than its {header_size}-byte header",
                self.relative(path)
            );
            self.problem(path, Severity::Error, codes::HEADER, message);
            return Ok(None);
        }
        read_at(&mut file, 0, head).map_err(io_error(path))?;
        let header = match LogHeader::decode(head, header_size) {
            Ok(h) => h,
            Err(e) => {
                self.layout_problem(path, codes::HEADER, owner, e);
                return Ok(None);
            }
        };
        let mut end = header.committed;
        if end < header_size as u64 {
            let message = format!(
                "{owner}: {} commits {end} bytes, fewer than its {header_size}-byte header",
                self.relative(path)
            );
            self.problems.push((
                path.to_path_buf(),
                Finding::new(Severity::Error, codes::HEADER, message).offset(0),
            ));
            end = header_size as u64;
        } else if end > file_len {
            let message = format!(
                "{owner}: {} commits {end} bytes but the file has {file_len}: the rest is read \
                 as far as the file goes",
                self.relative(path)
            );
            self.problems.push((
                path.to_path_buf(),
                Finding::new(Severity::Error, codes::HEADER, message).offset(0),
            ));
            end = file_len;
        }
        let log = Log {
            path: path.to_path_buf(),
            header,
            len: end - header_size as u64,
        };
        Ok(Some((log, file)))
    }

    /// The count of `size`-byte entries in `log`, reporting a partial last entry.
    fn entries(
        &mut self,
        log: &Log,
        size: u64,
        owner: &str,
        code: &'static str,
        severity: Severity,
    ) -> u64 {
        let rest = log.len % size;
        if rest != 0 {
            let message = format!(
                "{owner}: {} holds {} committed bytes, not a whole number of {size}-byte \
                 entries ({rest} left over)",
                self.relative(&log.path),
                log.len
            );
            self.problems.push((
                log.path.clone(),
                Finding::new(severity, code, message).offset(log.start() + log.len - rest),
            ));
        }
        log.len / size
    }
}

/// The timestamp of entry `i` of a timestamps log (the file already open).
fn timestamp(file: &mut File, log: &Log, i: u64) -> Result<i64, ReadError> {
    let mut b = [0; 8];
    read_at(file, log.start() + i * 8, &mut b).map_err(io_error(&log.path))?;
    Ok(i64::from_le_bytes(b))
}

/// Walks `root`.
pub fn catalogue(root: &Path) -> Result<Catalogue, ReadError> {
    let state_path = root.join("db_state");
    let state_bytes = read_small(&state_path)
        .map_err(io_error(&state_path))?
        .ok_or_else(|| {
            ReadError::invalid(Finding::new(
                Severity::Error,
                codes::DB_STATE,
                "no db_state: not an Elodin DB directory",
            ))
            .in_file(&state_path)
        })?;
    let state = DbState::decode(&state_bytes).map_err(|e| {
        let at = e.at() as u64;
        ReadError::invalid(
            Finding::new(Severity::Error, codes::DB_STATE, format!("db_state: {e}")).offset(at),
        )
        .in_file(&state_path)
    })?;
    let layout = if state.is_legacy() {
        Layout::V12
    } else {
        Layout::V15
    };
    let mut walk = Walk {
        root,
        problems: Vec::new(),
    };
    let entries = subdirs(root)?;
    let entities = match layout {
        Layout::V12 => entity_names(&mut walk, &root.join("entity_metadata"))?,
        Layout::V15 => Vec::new(),
    };
    let mut catalogue = Catalogue {
        layout,
        state,
        components: Vec::new(),
        metadata_only: Vec::new(),
        entities,
        msgs: Vec::new(),
        assets: Vec::new(),
        problems: Vec::new(),
    };
    for (name, path) in &entries {
        match name.as_str() {
            "msgs" => catalogue.msgs = msg_logs(&mut walk, path)?,
            "assets" => catalogue.assets = assets(path),
            "simulation_source" | "entity_metadata" => {}
            _ => match name.parse::<u64>() {
                Ok(id) => component_dir(&mut walk, &mut catalogue, id, path)?,
                Err(_) => {
                    let message = format!(
                        "directory {name} is not a component (its name is not a number): \
                         Elodin refuses to open the DB; simrec skips it"
                    );
                    walk.problem(path, Severity::Warning, codes::BAD_DIR_NAME, message);
                }
            },
        }
    }
    catalogue.components.sort_by(|a, b| {
        (a.creation_index().unwrap_or(u64::MAX), &a.name)
            .cmp(&(b.creation_index().unwrap_or(u64::MAX), &b.name))
    });
    catalogue.metadata_only.sort();
    catalogue.problems = walk.problems;
    Ok(catalogue)
}

/// The 0.12 – 0.14 layout's entity names, by id.
fn entity_names(walk: &mut Walk, dir: &Path) -> Result<Vec<(u64, String)>, ReadError> {
    let mut names = Vec::new();
    let Ok(read) = std::fs::read_dir(dir) else {
        return Ok(names);
    };
    for entry in read.filter_map(|e| e.ok()) {
        let path = entry.path();
        let Some(bytes) = read_small(&path).map_err(io_error(&path))? else {
            continue;
        };
        match EntityMetadata::decode(&bytes) {
            Ok(e) => names.push((e.entity_id, e.name)),
            Err(e) => walk.layout_problem(&path, codes::METADATA, "entity metadata", e),
        }
    }
    names.sort();
    Ok(names)
}

/// The entity and field of a component's full name: the entity is the part before the
/// last dot.
pub(crate) fn split_name(name: &str) -> (Option<String>, String) {
    match name.rsplit_once('.') {
        Some((entity, field)) if !entity.is_empty() && !field.is_empty() => {
            (Some(entity.to_string()), field.to_string())
        }
        _ => (None, name.to_string()),
    }
}

/// A component directory: a component, a metadata-only entity, or (old layout) one
/// component per entity subdirectory.
fn component_dir(
    walk: &mut Walk,
    catalogue: &mut Catalogue,
    id: u64,
    dir: &Path,
) -> Result<(), ReadError> {
    let legacy = catalogue.layout == Layout::V12;
    let meta_path = dir.join("metadata");
    let metadata = match read_small(&meta_path).map_err(io_error(&meta_path))? {
        Some(bytes) => match ComponentMetadata::decode(&bytes, legacy) {
            Ok(m) => Some(m),
            Err(e) => {
                walk.layout_problem(&meta_path, codes::METADATA, "component metadata", e);
                None
            }
        },
        None => None,
    };
    let schema_path = dir.join("schema");
    let Some(schema_bytes) = read_small(&schema_path).map_err(io_error(&schema_path))? else {
        if let Some(m) = metadata {
            catalogue.metadata_only.push(m.name);
        }
        return Ok(());
    };
    let schema = match Schema::decode(&schema_bytes) {
        Ok(s) => s,
        Err(e) => {
            walk.layout_problem(&schema_path, codes::SCHEMA, "component schema", e);
            return Ok(());
        }
    };
    let metadata = metadata.unwrap_or_else(|| ComponentMetadata {
        component_id: id,
        name: id.to_string(),
        metadata: Vec::new(),
        asset: legacy.then_some(false),
    });
    if !legacy && metadata.component_id != id {
        let message = format!(
            "{}: metadata says component id {}, the directory {id}",
            metadata.name, metadata.component_id
        );
        walk.problem(&meta_path, Severity::Warning, codes::ID_MISMATCH, message);
    }
    let Some(row_size) = schema.row_size() else {
        let message = format!(
            "{}: the schema's shape {:?} overflows",
            metadata.name, schema.shape
        );
        walk.problem(&schema_path, Severity::Error, codes::SCHEMA, message);
        return Ok(());
    };
    if legacy {
        let mut entities: Vec<(u64, PathBuf)> = subdirs(dir)?
            .into_iter()
            .filter_map(|(name, path)| Some((name.parse().ok()?, path)))
            .collect();
        entities.sort();
        for (entity_id, path) in entities {
            let entity = catalogue
                .entities
                .iter()
                .find(|(e, _)| *e == entity_id)
                .map_or_else(|| entity_id.to_string(), |(_, n)| n.clone());
            let name = format!("{entity}.{}", metadata.name);
            let part = Part {
                name,
                entity: Some(entity),
                field: metadata.name.clone(),
                entity_id: Some(entity_id),
            };
            if let Some(c) = component(walk, id, &path, part, &schema, row_size, &metadata)? {
                catalogue.components.push(c);
            }
        }
    } else {
        let (entity, field) = split_name(&metadata.name);
        let part = Part {
            name: metadata.name.clone(),
            entity,
            field,
            entity_id: None,
        };
        if let Some(c) = component(walk, id, dir, part, &schema, row_size, &metadata)? {
            catalogue.components.push(c);
        }
    }
    Ok(())
}

/// How a component is named in the recording.
struct Part {
    name: String,
    entity: Option<String>,
    field: String,
    entity_id: Option<u64>,
}

/// A component's logs in `dir`, checked.
fn component(
    walk: &mut Walk,
    id: u64,
    dir: &Path,
    part: Part,
    schema: &Schema,
    row_size: usize,
    metadata: &ComponentMetadata,
) -> Result<Option<Component>, ReadError> {
    let owner = part.name.as_str();
    let Some((index, mut index_file)) =
        walk.log(&dir.join("index"), COMPONENT_LOG_HEADER, owner)?
    else {
        return Ok(None);
    };
    let Some((data, _)) = walk.log(&dir.join("data"), COMPONENT_LOG_HEADER, owner)? else {
        return Ok(None);
    };
    let stated = data.header.extra.unwrap_or(0);
    if stated != row_size as u64 {
        let message = format!(
            "{owner}: {} says rows of {stated} bytes, the schema ({} {:?}) {row_size}",
            walk.relative(&data.path),
            schema.prim.client_name(),
            schema.shape
        );
        walk.problems.push((
            data.path.clone(),
            Finding::new(Severity::Error, codes::ELEMENT_SIZE, message).offset(16),
        ));
        return Ok(None);
    }
    let timestamps = walk.entries(&index, 8, owner, codes::INDEX_ALIGN, Severity::Error);
    let rows_stored = if row_size == 0 {
        timestamps
    } else {
        walk.entries(
            &data,
            row_size as u64,
            owner,
            codes::ROW_REMAINDER,
            Severity::Warning,
        )
    };
    if rows_stored < timestamps {
        let message = format!(
            "{owner}: {timestamps} timestamps but {rows_stored} rows: the rows past {rows_stored} \
             are missing (Elodin serves none of this component)"
        );
        walk.problems.push((
            data.path.clone(),
            Finding::new(Severity::Error, codes::DATA_SHORT, message)
                .offset(data.start() + data.len),
        ));
    } else if rows_stored > timestamps {
        let message = format!(
            "{owner}: {} rows but {timestamps} timestamps: the last {} rows were written without \
             their timestamps (a run stopped mid-write) and are not read",
            rows_stored,
            rows_stored - timestamps
        );
        walk.problem(&data.path, Severity::Info, codes::UNCOMMITTED_ROW, message);
    }
    let rows = timestamps.min(rows_stored);
    let at = |i: u64, file: &mut File| timestamp(file, &index, i);
    let first_us = (rows > 0).then(|| at(0, &mut index_file)).transpose()?;
    let last_us = (rows > 0)
        .then(|| at(rows - 1, &mut index_file))
        .transpose()?;
    let before_last_us = (rows > 1)
        .then(|| at(rows - 2, &mut index_file))
        .transpose()?;
    let element_names = metadata.get("element_names").and_then(|names| {
        let names: Vec<String> = names.split(',').map(str::to_string).collect();
        (names.len() == schema.elements().unwrap_or(0) && !names.iter().all(String::is_empty))
            .then_some(names)
    });
    Ok(Some(Component {
        name: part.name,
        entity: part.entity,
        field: part.field,
        id,
        entity_id: part.entity_id,
        schema: schema.clone(),
        row_size,
        metadata: metadata.clone(),
        element_names,
        index,
        data,
        rows,
        first_us,
        before_last_us,
        last_us,
    }))
}

/// `msgs/<id>/`: the message logs.
fn msg_logs(walk: &mut Walk, dir: &Path) -> Result<Vec<MsgLog>, ReadError> {
    let mut logs = Vec::new();
    for (name, path) in subdirs(dir)? {
        let Ok(id) = name.parse::<u16>() else {
            let message = format!("msgs/{name} is not a message log (its name is not a u16)");
            walk.problem(&path, Severity::Warning, codes::BAD_DIR_NAME, message);
            continue;
        };
        let meta_path = path.join("metadata");
        let metadata = match read_small(&meta_path).map_err(io_error(&meta_path))? {
            Some(bytes) => match MsgMetadata::decode(&bytes) {
                Ok(m) => Some(m),
                Err(e) => {
                    walk.layout_problem(&meta_path, codes::MSG_LOG, "message log metadata", e);
                    None
                }
            },
            None => None,
        };
        let log_name = metadata
            .as_ref()
            .map_or_else(|| name.clone(), |m| m.name.clone());
        let owner = format!("message log {log_name}");
        let mut open = |file: &str| walk.log(&path.join(file), MSG_LOG_HEADER, &owner);
        let (Some((timestamps, mut ts_file)), Some((offsets, _)), Some((data_log, _))) =
            (open("timestamps")?, open("offsets")?, open("data_log")?)
        else {
            continue;
        };
        let n_ts = walk.entries(&timestamps, 8, &owner, codes::MSG_LOG, Severity::Error);
        let n_off = walk.entries(
            &offsets,
            UMBRA_SIZE as u64,
            &owner,
            codes::MSG_LOG,
            Severity::Error,
        );
        let count = n_ts.min(n_off);
        let first_us = (count > 0)
            .then(|| timestamp(&mut ts_file, &timestamps, 0))
            .transpose()?;
        let last_us = (count > 0)
            .then(|| timestamp(&mut ts_file, &timestamps, count - 1))
            .transpose()?;
        logs.push(MsgLog {
            name: log_name,
            id,
            metadata,
            timestamps,
            offsets,
            data_log,
            count,
            first_us,
            last_us,
        });
    }
    Ok(logs)
}

/// The files under `assets/`, by relative name, with their sizes.
fn assets(dir: &Path) -> Vec<(String, u64)> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(read) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in read.filter_map(|e| e.ok()) {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                todo.push(e.path());
            } else if let Ok(m) = e.metadata() {
                let rel = e.path();
                let rel = rel
                    .strip_prefix(dir)
                    .unwrap_or(&rel)
                    .to_string_lossy()
                    .into_owned();
                found.push((rel, m.len()));
            }
        }
    }
    found.sort();
    found
}

impl Catalogue {
    /// The recording's first instant (µs since the Unix epoch): the earliest first row of
    /// its components (timestamp sources left out, as Elodin does) and message logs.
    pub fn earliest_us(&self) -> Option<i64> {
        let components = self
            .components
            .iter()
            .filter(|c| !c.is_timestamp_source())
            .filter_map(|c| c.first_us);
        components
            .chain(self.msgs.iter().filter_map(|m| m.first_us))
            .min()
    }

    /// A torn tick: a run stopped while it wrote one tick leaves the components it had
    /// written with one row more than the others. Those are the ones whose last row lies past
    /// every other component's last row while their row before it does not, and (where
    /// Elodin records creation order) the first components in that order, which the sims
    /// write first. Two rates (a 100 Hz and a 10 Hz group) do not match: the faster
    /// group's rows before last lie past the slower's last too. Returns (time, names).
    pub fn torn_tick(&self) -> Option<(i64, Vec<&str>)> {
        let last = self.components.iter().filter_map(|c| c.last_us).max()?;
        let (torn, rest): (Vec<&Component>, Vec<&Component>) = self
            .components
            .iter()
            .filter(|c| c.last_us.is_some())
            .partition(|c| c.last_us == Some(last));
        let rest_last = rest.iter().filter_map(|c| c.last_us).max()?;
        let one_row_more = torn
            .iter()
            .all(|c| c.before_last_us.is_none_or(|b| b <= rest_last));
        let creation: Vec<Option<u64>> =
            self.components.iter().map(|c| c.creation_index()).collect();
        let in_order = creation.iter().all(Option::is_some);
        // Components are sorted by creation index: the torn ones must come first.
        let prefix = !in_order
            || self.components[..torn.len()]
                .iter()
                .all(|c| c.last_us == Some(last));
        (one_row_more && prefix).then(|| (last, torn.iter().map(|c| c.name.as_str()).collect()))
    }
}

/// The folders in `dir`, by name, sorted.
fn subdirs(dir: &Path) -> Result<Vec<(String, PathBuf)>, ReadError> {
    let mut entries: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .map_err(io_error(dir))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    entries.sort();
    Ok(entries)
}
