//! Format-specific facts for `inspect`, beyond the generic [`Summary`](super::Summary).

use serde_json::{Map, Value as Json};

/// What a reader knows of its file that the generic summary does not (3es frames and
/// per-message counts, ZIP member facts...), gathered while reading.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// Fields merged into the file's `inspect --format json` object.
    pub json: Map<String, Json>,
    /// Text printed after the summary tables.
    pub text: String,
}
