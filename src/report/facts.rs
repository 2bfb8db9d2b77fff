//! Format-specific facts for `inspect`, beyond the generic [`Summary`](super::Summary).

use serde_json::Value as Json;

use super::render::fact_text;

/// What a reader knows of its file that the generic summary does not (ZIP members, replay
/// layout, 3es frames...). `inspect` shows `text` as a row `name` of its table and puts
/// `json` under the key `name` of the file's JSON object, so `name` is a snake_case key.
/// A fact with empty `text` is for scripts only.
#[derive(Debug, Clone, PartialEq)]
pub struct Fact {
    pub name: String,
    pub text: String,
    pub json: Json,
}

impl Fact {
    pub fn new(name: &str, text: impl Into<String>, json: Json) -> Fact {
        Fact {
            name: name.to_string(),
            text: text.into(),
            json,
        }
    }

    /// A fact whose text is its JSON laid out for people (one `key: value` per line).
    pub fn from_json(name: &str, json: Json) -> Fact {
        Fact::new(name, fact_text(&json), json)
    }
}
