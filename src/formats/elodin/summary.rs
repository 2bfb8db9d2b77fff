//! What `inspect` shows of a replay beyond the generic summary (spec §10 facts).

use std::collections::BTreeMap;

use serde_json::{json, Value as Json};

use super::metadata::UNSET_MAX_TICKS;
use super::reader::{ArchetypeView, ElodinReader, View};
use crate::report::render::{first_and_last, grouped};
use crate::report::Fact;

/// Lists in the text facts show this many items at each end, and how many are left out
/// between (the JSON facts have every item): `inspect` stays a screenful whatever the
/// replay holds.
const FEW: usize = 3;

fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", grouped(n as u64), if n == 1 { one } else { many })
}

/// The first and last few of `lines`, and how many are left out between them.
fn elide(lines: Vec<String>, what: &str) -> Vec<String> {
    first_and_last(&lines, FEW, what)
}

pub(super) fn facts(reader: &ElodinReader) -> Vec<Fact> {
    let v: View<'_> = reader.view();
    vec![
        layout_fact(&v),
        Fact::new("metadata_flavour", v.flavour.to_string(), json!(v.flavour)),
        time_step_fact(&v),
        ticks_fact(&v),
        entities_fact(&v),
        archetypes_fact(&v),
        assets_fact(&v),
    ]
}

fn layout_fact(v: &View<'_>) -> Fact {
    match &v.layout.exec {
        Some(exec) => Fact::new(
            "layout",
            format!(
                "exec dir: world/ (the replay){}{}",
                if exec.join("tick_exec").is_dir() {
                    " + tick_exec/"
                } else {
                    ""
                },
                if exec.join("startup_exec").is_dir() {
                    " + startup_exec/"
                } else {
                    ""
                }
            ),
            json!({"kind": "exec", "dir": exec.to_string_lossy(), "world": v.layout.world.to_string_lossy()}),
        ),
        None => Fact::new(
            "layout",
            "world dir",
            json!({"kind": "world", "world": v.layout.world.to_string_lossy()}),
        ),
    }
}

fn time_step_fact(v: &View<'_>) -> Fact {
    let step_s = v
        .metadata
        .get("sim_time_step")
        .or_else(|| v.metadata.get("time_step"))
        .cloned()
        .unwrap_or(Json::Null);
    Fact::new(
        "time_step",
        format!("{} ns ({step_s} s)", v.step_ns),
        json!({"step_ns": v.step_ns, "seconds": step_s}),
    )
}

fn ticks_fact(v: &View<'_>) -> Fact {
    let first = v
        .archetypes
        .iter()
        .filter_map(|a| a.ticks)
        .map(|t| t.0)
        .min();
    let last = v
        .archetypes
        .iter()
        .filter_map(|a| a.ticks)
        .map(|t| t.1)
        .max();
    let max_ticks = match v.max_ticks {
        Some(UNSET_MAX_TICKS) => "unset (u64::MAX)".to_string(),
        Some(m) => m.to_string(),
        None => "absent".to_string(),
    };
    let count = first.zip(last).map(|(a, b)| b - a + 1);
    Fact::new(
        "ticks",
        match (first, last) {
            (Some(a), Some(b)) => format!("{} ({a}..={b}); max_ticks {max_ticks}", b - a + 1),
            _ => format!("none; max_ticks {max_ticks}"),
        },
        // Elodin writes u64::MAX for "no limit": null in JSON, as every unset value is.
        json!({
            "count": count,
            "first": first,
            "last": last,
            "max_ticks": v.max_ticks.filter(|m| *m != UNSET_MAX_TICKS),
        }),
    )
}

/// Every entity with rows or a name: its name and the archetypes it has rows in.
fn entities_fact(v: &View<'_>) -> Fact {
    let mut entities: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
    for a in &v.archetypes {
        for e in a.entities {
            entities.entry(*e).or_default().push(a.name);
        }
    }
    for id in v.names.keys() {
        entities.entry(*id).or_default();
    }
    let entity_lines: Vec<String> = entities
        .iter()
        .map(|(id, archetypes)| {
            format!(
                "{id} {} ({})",
                v.names.get(id).map_or("(no name)", String::as_str),
                archetypes.join(", ")
            )
        })
        .collect();
    Fact::new(
        "entities",
        if entities.is_empty() {
            "none".into()
        } else {
            let mut text = vec![counted(entities.len(), "entity", "entities")];
            text.extend(elide(entity_lines, "entities"));
            text.join("\n")
        },
        Json::Array(
            entities
                .iter()
                .map(|(id, archetypes)| {
                    json!({"id": id, "name": v.names.get(id), "archetypes": archetypes})
                })
                .collect(),
        ),
    )
}

/// One block of text lines per archetype; past `2 * FEW + 1` of them, the first and last
/// few blocks.
fn archetypes_fact(v: &View<'_>) -> Fact {
    let blocks: Vec<Vec<String>> = v.archetypes.iter().map(archetype_block).collect();
    let list = v.archetypes.iter().map(archetype_json).collect();
    let mut text = Vec::new();
    if blocks.len() > 2 * FEW + 1 {
        let n = blocks.len();
        text.push(counted(n, "archetype", "archetypes"));
        for b in &blocks[..FEW] {
            text.extend(b.iter().cloned());
        }
        text.push(format!(
            "… {} more archetypes",
            grouped((n - 2 * FEW) as u64)
        ));
        for b in &blocks[n - FEW..] {
            text.extend(b.iter().cloned());
        }
    } else {
        text.extend(blocks.into_iter().flatten());
    }
    Fact::new("archetypes", text.join("\n"), Json::Array(list))
}

/// An archetype's line, then its components' (the first and last few), indented.
fn archetype_block(a: &ArchetypeView<'_>) -> Vec<String> {
    let rows = a.rows.unwrap_or(a.rows_seen);
    let mut block = vec![format!(
        "{}: {}, {rows} rows, {}, {}",
        a.name,
        counted(a.entities.len(), "entity", "entities"),
        a.row_groups.map_or("unreadable".into(), |g| if g == 1 {
            "1 row group".to_string()
        } else {
            format!("{g} row groups")
        }),
        a.size.map_or("no file".into(), |s| format!("{s} bytes")),
    )];
    let components: Vec<String> = a
        .components
        .iter()
        .map(|c| {
            let names = c.element_names();
            format!(
                "  {} {}{}{}",
                c.name,
                c.type_text(),
                names
                    .as_ref()
                    .map_or(String::new(), |n| format!(" ({})", n.join(","))),
                if c.asset { " asset" } else { "" }
            )
        })
        .collect();
    block.extend(elide(components, "components").into_iter().map(|l| {
        if l.starts_with('…') {
            format!("  {l}")
        } else {
            l
        }
    }));
    block
}

fn archetype_json(a: &ArchetypeView<'_>) -> Json {
    json!({
        "name": a.name,
        "entities": a.entities,
        "rows": a.rows.unwrap_or(a.rows_seen),
        "row_groups": a.row_groups,
        "size_bytes": a.size,
        "ticks": a.ticks.map(|(x, y)| [x, y]),
        "components": a.components.iter().map(|c| json!({
            "name": c.name,
            "type": c.primitive.name(),
            "dtype": c.primitive.dtype().name(),
            "shape": c.shape,
            "element_names": c.element_names(),
            "asset": c.asset,
        })).collect::<Vec<_>>(),
    })
}

fn assets_fact(v: &View<'_>) -> Fact {
    match v.assets {
        Some((bytes, items)) => Fact::new(
            "assets",
            format!(
                "{bytes} bytes, {items} items, {} entity names",
                v.names.len()
            ),
            json!({"size_bytes": bytes, "items": items, "entity_names": v.names.len()}),
        ),
        None => Fact::new("assets", "missing or unreadable", Json::Null),
    }
}
