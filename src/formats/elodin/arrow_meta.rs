//! The Arrow schema that Arrow and Polars writers embed in a Parquet footer
//! (`ARROW:schema`, base64 of an IPC schema message). Elodin's tensors are FixedSizeList
//! only through it: the Parquet schema itself says LIST.
//!
//! The parquet crate turns this message into an Arrow schema with arrow-ipc's
//! `fb_to_schema`, which panics on types it does not know (a damaged byte in the footer is
//! enough). simrec reads only what it needs, through the flatbuffer accessors, which
//! verify the buffer and never panic: for each top-level field, whether it is a
//! FixedSizeList and of what size.

use std::collections::HashMap;

use arrow_ipc::Type;
use base64::prelude::{Engine, BASE64_STANDARD};

pub const KEY: &str = "ARROW:schema";

/// Top-level field name → `Some(n)` for a FixedSizeList of `n` elements, `None` otherwise.
pub fn fixed_lists(encoded: &str) -> Result<HashMap<String, Option<usize>>, String> {
    let bytes = BASE64_STANDARD
        .decode(encoded)
        .map_err(|e| format!("{KEY} is not base64: {e}"))?;
    // An IPC message may start with the continuation marker and a length.
    let message = if bytes.len() > 8 && bytes[0..4] == [0xff; 4] {
        &bytes[8..]
    } else {
        &bytes[..]
    };
    let message =
        arrow_ipc::root_as_message(message).map_err(|e| format!("{KEY} is corrupt: {e}"))?;
    let schema = message
        .header_as_schema()
        .ok_or_else(|| format!("{KEY} is not a schema message"))?;
    let mut out = HashMap::new();
    for field in schema.fields().into_iter().flatten() {
        let Some(name) = field.name() else {
            continue;
        };
        let size = match field.type_type() {
            Type::FixedSizeList => field
                .type_as_fixed_size_list()
                .and_then(|l| usize::try_from(l.listSize()).ok())
                .filter(|&n| n > 0),
            _ => None,
        };
        out.insert(name.to_string(), size);
    }
    Ok(out)
}
