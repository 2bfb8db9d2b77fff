//! What `inspect` shows of a DB directory beyond the generic summary: its layout and
//! `db_state`, its components with their types and committed rows, message logs, entities
//! and assets. All from the catalogue's headers.

use serde_json::{json, Value as Json};

use super::dir::Catalogue;
use super::layout::DbState;
use crate::report::render::first_and_last;
use crate::report::Fact;

/// Lists in the text facts show this many items at each end (the JSON has every item).
const FEW: usize = 3;

pub(super) fn facts(c: &Catalogue) -> Vec<Fact> {
    let mut out = Vec::new();
    let state = &c.state;
    let created = state
        .metadata()
        .iter()
        .find(|(k, _)| k == "version.created")
        .map(|(_, v)| v.as_str());
    out.push(Fact::new(
        "layout",
        format!(
            "Elodin DB, {} layout{}",
            c.layout.name(),
            created.map_or(String::new(), |v| format!(" (created by {v})"))
        ),
        json!({
            "layout": c.layout.name(),
            "recording": match state {
                DbState::Config { recording, .. } | DbState::Settings { recording, .. } => *recording,
            },
            "db_state": state.metadata().iter().map(|(k, v)| (k.clone(), Json::String(v.clone()))).collect::<serde_json::Map<_, _>>(),
        }),
    ));
    let lines: Vec<String> = c
        .components
        .iter()
        .map(|x| {
            format!(
                "{}: {}{:?}, {} rows",
                x.name,
                x.schema.prim.client_name(),
                x.schema.shape,
                x.rows
            )
        })
        .collect();
    let mut text = vec![format!("{} with data", c.components.len())];
    text.extend(first_and_last(&lines, FEW, "components"));
    out.push(Fact::new(
        "components",
        text.join("\n"),
        Json::Array(
            c.components
                .iter()
                .map(|x| {
                    json!({
                        "name": x.name,
                        "id": x.id,
                        "type": x.schema.prim.client_name(),
                        "shape": x.schema.shape,
                        "rows": x.rows,
                        "first_us": x.first_us,
                        "last_us": x.last_us,
                    })
                })
                .collect(),
        ),
    ));
    if !c.metadata_only.is_empty() {
        out.push(Fact::new(
            "metadata_only",
            first_and_last(&c.metadata_only, FEW, "names").join(", "),
            json!(c.metadata_only),
        ));
    }
    if !c.entities.is_empty() {
        let names: Vec<String> = c
            .entities
            .iter()
            .map(|(id, n)| format!("{id} {n}"))
            .collect();
        out.push(Fact::new(
            "entities",
            names.join(", "),
            Json::Array(
                c.entities
                    .iter()
                    .map(|(id, n)| json!({"id": id, "name": n}))
                    .collect(),
            ),
        ));
    }
    if !c.msgs.is_empty() {
        let names: Vec<String> = c
            .msgs
            .iter()
            .map(|m| format!("{} ({} messages)", m.name, m.count))
            .collect();
        out.push(Fact::new(
            "message_logs",
            names.join(", "),
            Json::Array(
                c.msgs
                    .iter()
                    .map(|m| json!({"name": m.name, "id": m.id, "count": m.count}))
                    .collect(),
            ),
        ));
    }
    if !c.assets.is_empty() {
        let bytes: u64 = c.assets.iter().map(|(_, n)| n).sum();
        out.push(Fact::new(
            "assets",
            format!("{} files, {bytes} bytes", c.assets.len()),
            Json::Array(
                c.assets
                    .iter()
                    .map(|(n, b)| json!({"name": n, "bytes": b}))
                    .collect(),
            ),
        ));
    }
    out
}
