//! Finding a replay on disk: world dir or exec dir, `metadata.json`, `assets.bin`, and
//! the entity names that `asset_handle_entity_metadata` points at.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::assets::{Assets, EntityMetadata};
use super::codes::*;
use super::metadata::{self, Metadata};
use super::parquet_in::open_parquet;
use crate::report::{Finding, Severity};

/// Largest `metadata.json` or `assets.bin` read into memory (real ones are kilobytes).
pub const MAX_SIDE_FILE: u64 = 256 << 20;

/// Where the replay's files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The directory holding `metadata.json`, `assets.bin` and the Parquet files.
    pub world: PathBuf,
    /// The exec dir around it (with `tick_exec/`), when there is one.
    pub exec: Option<PathBuf>,
}

/// Whether `dir` looks like a replay (for detection): `metadata.json` or
/// `world/metadata.json` with an `archetypes` object.
pub fn looks_like_replay(dir: &Path) -> bool {
    [dir.join("metadata.json"), dir.join("world/metadata.json")]
        .iter()
        .any(|m| {
            read_small(m)
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .is_some_and(|j| j.get("archetypes").is_some_and(|a| a.is_object()))
        })
}

pub fn locate(dir: &Path) -> Result<Layout, Finding> {
    if dir.join("metadata.json").is_file() {
        return Ok(Layout {
            world: dir.to_path_buf(),
            exec: None,
        });
    }
    if dir.join("world/metadata.json").is_file() {
        return Ok(Layout {
            world: dir.join("world"),
            exec: Some(dir.to_path_buf()),
        });
    }
    Err(Finding::new(
        Severity::Error,
        NO_METADATA,
        format!(
            "{} has no metadata.json (nor world/metadata.json): not an Elodin replay directory",
            dir.display()
        ),
    ))
}

/// Reads a side file whole, refusing absurd sizes.
pub fn read_small(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    if len > MAX_SIDE_FILE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{len} bytes: larger than simrec reads for this file"),
        ));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(MAX_SIDE_FILE).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// `metadata.json` of a world dir: the parsed metadata and the non-fatal findings.
pub fn read_metadata(world: &Path) -> Result<(Metadata, Vec<Finding>), Finding> {
    let bytes = read_small(&world.join("metadata.json")).map_err(|e| {
        Finding::new(
            Severity::Error,
            NO_METADATA,
            format!("cannot read metadata.json: {e}"),
        )
    })?;
    metadata::parse(&bytes)
}

/// `assets.bin`, or the finding that says why there is none.
pub fn read_assets(world: &Path) -> Result<Assets, Finding> {
    let path = world.join("assets.bin");
    let bytes = match read_small(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Finding::new(
                Severity::Error,
                ASSETS_MISSING,
                "no assets.bin (Elodin needs it to load the replay)",
            ))
        }
        Err(e) => {
            return Err(Finding::new(
                Severity::Error,
                ASSETS_DECODE,
                format!("cannot read assets.bin: {e}"),
            ))
        }
    };
    Assets::parse(bytes).map_err(|e| {
        Finding::new(
            Severity::Error,
            ASSETS_DECODE,
            format!("assets.bin is not a postcard item list: {e}"),
        )
        .offset(e.offset as u64)
    })
}

pub const NAMES_ARCHETYPE: &str = "asset_handle_entity_metadata";

/// Entity names: for each entity of `asset_handle_entity_metadata` at its first tick,
/// the `entity_metadata` item its handle selects. Reads only that first tick.
pub fn entity_names(
    world: &Path,
    metadata: &Metadata,
    assets: &Assets,
    findings: &mut Vec<Finding>,
) -> BTreeMap<u64, String> {
    let mut names = BTreeMap::new();
    let Some(archetype) = metadata
        .archetypes
        .iter()
        .find(|a| a.name == NAMES_ARCHETYPE)
    else {
        return names;
    };
    let Some(component) = archetype
        .components
        .iter()
        .find(|c| c.name == NAMES_ARCHETYPE)
    else {
        return names;
    };
    let path = world.join(format!("{NAMES_ARCHETYPE}.parquet"));
    let Ok(mut file) = open_parquet(&path, &[component.name.as_str(), "tick", "entity_id"], 4096)
    else {
        return names; // reported when the archetype itself is read
    };
    let mut first_tick = None;
    while let Some(Ok(batch)) = file.next_batch() {
        let (Some(h), Some(t), Some(e)) = (
            batch.view(&component.name),
            batch.view("tick"),
            batch.view("entity_id"),
        ) else {
            return names;
        };
        for row in 0..batch.rows {
            let (Some(handle), Some(tick), Some(entity)) =
                (h.u64_at(row), t.u64_at(row), e.u64_at(row))
            else {
                continue;
            };
            if *first_tick.get_or_insert(tick) != tick {
                return names;
            }
            let Some(inner) = usize::try_from(handle).ok().and_then(|i| assets.inner(i)) else {
                continue; // ELODIN_ASSET_HANDLE, reported by the reader
            };
            match EntityMetadata::decode(inner) {
                Ok(m) => {
                    names.insert(entity, m.name);
                }
                Err(why) => findings.push(Finding::new(
                    Severity::Warning,
                    ENTITY_METADATA,
                    format!(
                        "entity {entity}: asset item {handle} is not an entity_metadata (name + colour): {why}"
                    ),
                )),
            }
        }
    }
    names
}
