//! `metadata.json`: archetypes, components, the time step and the flavour (spec §2).
//!
//! Parsed from `serde_json` values (the crate keeps key order), so nothing depends on the
//! order of keys, archetypes or components, and unknown keys are kept for rewriting.

use serde_json::{Map, Value as Json};

use super::codes::*;
use crate::report::{Finding, Severity};

pub use super::primitive::Primitive;

/// One component of an archetype.
#[derive(Debug, Clone, PartialEq)]
pub struct Component {
    pub name: String,
    pub primitive: Primitive,
    /// Declared shape; `[]` is a scalar.
    pub shape: Vec<usize>,
    /// prod(shape): elements per row.
    pub elements: usize,
    pub asset: bool,
    /// The `element_names` tag, when it names every element.
    pub tag_names: Option<Vec<String>>,
}

impl Component {
    pub fn new(name: &str, primitive: Primitive, shape: Vec<usize>) -> Option<Component> {
        let elements = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
        Some(Component {
            name: name.to_string(),
            primitive,
            shape,
            elements,
            asset: false,
            tag_names: None,
        })
    }

    /// Element names for flattening (spec §3.3): `world_pos` is always scalar-last.
    pub fn element_names(&self) -> Option<Vec<String>> {
        if self.name == "world_pos" && self.elements == 7 {
            return Some(
                ["qx", "qy", "qz", "qw", "x", "y", "z"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
            );
        }
        self.tag_names.clone()
    }

    /// `F64[7]`, `U64`, `F64[3,3]`.
    pub fn type_text(&self) -> String {
        if self.shape.is_empty() {
            self.primitive.name().to_string()
        } else {
            let dims: Vec<String> = self.shape.iter().map(usize::to_string).collect();
            format!("{}[{}]", self.primitive.name(), dims.join(","))
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Archetype {
    pub name: String,
    pub components: Vec<Component>,
}

/// Which Elodin versions wrote this `metadata.json` (spec §2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// v0.3.23: `time_step`.
    TimeStep,
    /// v0.3.24 – v0.9.x: `output_time_step`.
    OutputTimeStep,
    /// v0.10.x: `default_playback_speed`.
    DefaultPlaybackSpeed,
    /// `sim_time_step` with neither of the keys that tell the two above apart.
    SimTimeStep,
}

impl Flavour {
    pub fn name(self) -> &'static str {
        match self {
            Flavour::TimeStep => "time_step",
            Flavour::OutputTimeStep => "output_time_step",
            Flavour::DefaultPlaybackSpeed => "default_playback_speed",
            Flavour::SimTimeStep => "sim_time_step",
        }
    }

    pub fn versions(self) -> &'static str {
        match self {
            Flavour::TimeStep => "Elodin 0.3.23",
            Flavour::OutputTimeStep => "Elodin 0.3.24 - 0.9.x",
            Flavour::DefaultPlaybackSpeed => "Elodin 0.10.x",
            Flavour::SimTimeStep => "Elodin 0.3.24 or later",
        }
    }
}

/// A parsed `metadata.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Metadata {
    /// The whole object, key order kept (for rewriting).
    pub json: Map<String, Json>,
    pub archetypes: Vec<Archetype>,
    pub flavour: Flavour,
    /// round(step seconds × 10⁹).
    pub step_ns: i64,
    /// `max_ticks` as written (u64::MAX means "not set"); `None` when absent or malformed.
    pub max_ticks: Option<u64>,
}

/// `max_ticks` when a run was not limited.
pub const UNSET_MAX_TICKS: u64 = u64::MAX;

fn error(code: &'static str, message: impl Into<String>) -> Finding {
    Finding::new(Severity::Error, code, message)
}

/// Whether an archetype name can be a file name inside the directory (no path tricks).
pub fn safe_file_stem(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\', '\0'])
        && name.len() <= 200
}

/// Parses `metadata.json`. The error is fatal (no archetypes, no time step); the list
/// holds what a reader can go on after (skipped components, duplicates, the flavour).
pub fn parse(bytes: &[u8]) -> Result<(Metadata, Vec<Finding>), Finding> {
    let json: Json = serde_json::from_slice(bytes).map_err(|e| {
        error(
            METADATA_JSON,
            format!("metadata.json is not valid JSON: {e}"),
        )
    })?;
    let Json::Object(json) = json else {
        return Err(error(METADATA_JSON, "metadata.json is not a JSON object"));
    };
    let Some(Json::Object(archetypes_json)) = json.get("archetypes") else {
        return Err(error(
            METADATA_JSON,
            "metadata.json has no `archetypes` object",
        ));
    };
    let mut notes = Vec::new();
    let (step_key, step_ns) = time_step(&json)?;
    let flavour = flavour_of(&json, step_key);
    notes.push(Finding::new(
        Severity::Info,
        FLAVOUR,
        format!(
            "metadata flavour `{}` ({}); time step {step_ns} ns",
            flavour.name(),
            flavour.versions()
        ),
    ));
    let max_ticks = max_ticks(&json, &mut notes);
    let archetypes = archetypes(archetypes_json, &mut notes);
    Ok((
        Metadata {
            json,
            archetypes,
            flavour,
            step_ns,
            max_ticks,
        },
        notes,
    ))
}

/// The key that holds the time step, and the step in nanoseconds.
fn time_step(json: &Map<String, Json>) -> Result<(&'static str, i64), Finding> {
    let (step_key, step) = match (json.get("sim_time_step"), json.get("time_step")) {
        (Some(v), _) => ("sim_time_step", v),
        (None, Some(v)) => ("time_step", v),
        (None, None) => {
            return Err(error(
                NO_TIME_STEP,
                "metadata.json has neither `sim_time_step` nor `time_step`",
            ))
        }
    };
    let step_ns = step
        .as_f64()
        .filter(|s| s.is_finite() && *s > 0.0)
        .map(|s| (s * 1e9).round())
        .filter(|ns| *ns >= 1.0 && *ns < 9.0e18)
        .map(|ns| ns as i64)
        .ok_or_else(|| {
            error(
                NO_TIME_STEP,
                format!("`{step_key}` is {step}: not a positive finite number of seconds (of at least 1 ns)"),
            )
        })?;
    Ok((step_key, step_ns))
}

/// The flavour, told by the time step's key and the keys only some versions write.
fn flavour_of(json: &Map<String, Json>, step_key: &str) -> Flavour {
    if step_key == "time_step" {
        Flavour::TimeStep
    } else if json.contains_key("default_playback_speed") {
        Flavour::DefaultPlaybackSpeed
    } else if json.contains_key("output_time_step") {
        Flavour::OutputTimeStep
    } else {
        Flavour::SimTimeStep
    }
}

/// `max_ticks` when present and an unsigned 64-bit integer.
fn max_ticks(json: &Map<String, Json>, notes: &mut Vec<Finding>) -> Option<u64> {
    match json.get("max_ticks") {
        None => None,
        Some(v) => match v.as_u64() {
            Some(n) => Some(n),
            None => {
                notes.push(error(
                    METADATA_FIELD,
                    format!("`max_ticks` is {v}, not an unsigned 64-bit integer"),
                ));
                None
            }
        },
    }
}

/// The archetypes that can be read: one whose name cannot name a file, or that is not a
/// list, is skipped; so is a component another archetype declared first.
fn archetypes(archetypes_json: &Map<String, Json>, notes: &mut Vec<Finding>) -> Vec<Archetype> {
    let mut archetypes = Vec::new();
    let mut seen: Vec<(String, String)> = Vec::new();
    for (name, list) in archetypes_json {
        if !safe_file_stem(name) {
            notes.push(error(
                METADATA_FIELD,
                format!("archetype name {name:?} cannot name a file in the directory; skipped"),
            ));
            continue;
        }
        let Json::Array(list) = list else {
            notes.push(error(
                METADATA_FIELD,
                format!("archetype `{name}` is not a list of components; skipped"),
            ));
            continue;
        };
        archetypes.push(Archetype {
            name: name.clone(),
            components: components(name, list, &mut seen, notes),
        });
    }
    archetypes
}

/// An archetype's components that can be read; `seen` holds (archetype, component) of
/// every component declared so far.
fn components(
    name: &str,
    list: &[Json],
    seen: &mut Vec<(String, String)>,
    notes: &mut Vec<Finding>,
) -> Vec<Component> {
    let mut components = Vec::new();
    for (i, c) in list.iter().enumerate() {
        match component(c) {
            Ok(c) => {
                if let Some((other, _)) = seen.iter().find(|(_, n)| *n == c.name) {
                    notes.push(error(
                        DUPLICATE_COMPONENT,
                        format!(
                            "component `{}` is declared by archetype `{other}` and again by `{name}`",
                            c.name
                        ),
                    ));
                    continue;
                }
                seen.push((name.to_string(), c.name.clone()));
                components.push(c);
            }
            Err(why) => notes.push(error(
                METADATA_FIELD,
                format!("archetype `{name}`, component {i}: {why}; skipped"),
            )),
        }
    }
    components
}

fn component(c: &Json) -> Result<Component, String> {
    let name = c
        .get("name")
        .and_then(Json::as_str)
        .ok_or("no `name` string")?;
    if matches!(name, "tick" | "entity_id") {
        return Err(format!("`{name}` is a reserved column name"));
    }
    let ty = c
        .get("component_type")
        .ok_or_else(|| format!("`{name}` has no `component_type`"))?;
    let primitive = ty
        .get("primitive_ty")
        .and_then(Json::as_str)
        .ok_or_else(|| format!("`{name}` has no `primitive_ty` string"))?;
    let primitive = Primitive::parse(primitive)
        .ok_or_else(|| format!("`{name}` has unknown primitive_ty {primitive:?}"))?;
    let shape = ty
        .get("shape")
        .and_then(Json::as_array)
        .ok_or_else(|| format!("`{name}` has no `shape` list"))?;
    let shape = shape
        .iter()
        .map(|d| {
            d.as_u64()
                .and_then(|d| usize::try_from(d).ok())
                .ok_or_else(|| format!("`{name}` has shape entry {d}: not a non-negative integer"))
        })
        .collect::<Result<Vec<usize>, String>>()?;
    let mut component = Component::new(name, primitive, shape)
        .ok_or_else(|| format!("`{name}` has a shape whose product overflows"))?;
    component.asset = c.get("asset").and_then(Json::as_bool).unwrap_or(false);
    component.tag_names = c
        .get("tags")
        .and_then(|t| t.get("element_names"))
        .and_then(|e| e.get("String"))
        .and_then(Json::as_str)
        .map(|s| s.split(',').map(str::to_string).collect::<Vec<_>>())
        .filter(|names| names.len() == component.elements && !component.shape.is_empty());
    Ok(component)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flavours_and_u64_max_ticks() {
        let (m, notes) = parse(br#"{"max_ticks":18446744073709551615,"sim_time_step":0.008333333,"default_playback_speed":1.0,"archetypes":{"b":[{"asset":false,"tags":null,"component_type":{"shape":[3,3],"primitive_ty":"F32"},"name":"m"}]},"run_time_step":0.1}"#).unwrap();
        assert_eq!(m.flavour, Flavour::DefaultPlaybackSpeed);
        assert_eq!(m.step_ns, 8_333_333);
        assert_eq!(m.max_ticks, Some(u64::MAX));
        assert_eq!(m.archetypes[0].components[0].elements, 9);
        assert_eq!(notes.len(), 1);
        let (m, _) = parse(br#"{"archetypes":{},"time_step":0.01}"#).unwrap();
        assert_eq!(
            (m.flavour, m.step_ns, m.max_ticks),
            (Flavour::TimeStep, 10_000_000, None)
        );
        let (m, _) =
            parse(br#"{"archetypes":{},"sim_time_step":0.5,"output_time_step":null}"#).unwrap();
        assert_eq!(m.flavour, Flavour::OutputTimeStep);
    }

    #[test]
    fn fatal_and_skipped() {
        assert_eq!(parse(b"{").unwrap_err().code, METADATA_JSON);
        assert_eq!(
            parse(br#"{"archetypes":{}}"#).unwrap_err().code,
            NO_TIME_STEP
        );
        assert_eq!(
            parse(br#"{"archetypes":{},"sim_time_step":-1}"#)
                .unwrap_err()
                .code,
            NO_TIME_STEP
        );
        let (m, notes) = parse(br#"{"archetypes":{"../x":[],"a":[{"name":"c","component_type":{"primitive_ty":"U9","shape":[]}},{"name":"d","component_type":{"primitive_ty":"U8","shape":[-1]}}],"b":[{"name":"e","component_type":{"primitive_ty":"U8","shape":[]}},{"name":"e","component_type":{"primitive_ty":"U8","shape":[]}}]},"time_step":1,"max_ticks":-3}"#).unwrap();
        let codes: Vec<_> = notes.iter().map(|f| f.code).collect();
        assert_eq!(
            codes,
            [
                FLAVOUR,
                METADATA_FIELD,
                METADATA_FIELD,
                METADATA_FIELD,
                METADATA_FIELD,
                DUPLICATE_COMPONENT
            ][..]
        );
        assert_eq!(m.archetypes.len(), 2);
        assert_eq!(m.archetypes[1].components.len(), 1);
    }
}
