//! The lake's two schemas (docs/formats/lake.md). They are the same in every file whatever
//! the source, so that any engine reads a folder of them as one table with no options: a
//! column is never added, dropped or retyped per file. What a file came from goes in the
//! schema's metadata, which engines do not compare.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::file::metadata::KeyValue;

/// The version of the schemas, in every file's metadata (`simrec.lake.version`).
pub const LAKE_VERSION: &str = "1";

/// Columns both tables start with: where the row is in which recording.
fn common() -> Vec<Field> {
    vec![
        Field::new("recording", DataType::Utf8, false),
        Field::new("format", DataType::Utf8, false),
        Field::new("time_ns", DataType::Int64, false),
        // Microseconds: Spark refuses nanosecond Parquet timestamps.
        Field::new(
            "time_utc",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new("channel", DataType::Utf8, false),
        Field::new("entity", DataType::Utf8, true),
        Field::new("frame", DataType::Int64, true),
    ]
}

/// A list of `item`s, as the `arrow` list builders name their elements.
pub fn list_of(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("item", item, true)))
}

/// `values`: one row per record and key.
pub fn values() -> Schema {
    let mut fields = common();
    fields.extend([
        Field::new("key", DataType::Utf8, false),
        Field::new("value", DataType::Float64, true),
        Field::new("int", DataType::Int64, true),
        Field::new("values", list_of(DataType::Float64), true),
        Field::new("shape", list_of(DataType::Int64), true),
        Field::new("text", DataType::Utf8, true),
        Field::new("bytes", DataType::Binary, true),
        Field::new("removed", DataType::Boolean, false),
    ]);
    Schema::new(fields)
}

/// `poses`: one row per thing with a position or attitude per instant.
pub fn poses() -> Schema {
    let mut fields = common();
    fields.extend(
        ["x", "y", "z", "qx", "qy", "qz", "qw"].map(|n| Field::new(n, DataType::Float64, true)),
    );
    Schema::new(fields)
}

/// `schema` carrying `metadata` (the source's facts), so that readers that show the Arrow
/// schema's metadata (pyarrow's `read_schema(f).metadata`) see them, not only the footer.
pub fn with_metadata(schema: Schema, metadata: &[KeyValue]) -> SchemaRef {
    let map: HashMap<String, String> = metadata
        .iter()
        .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
        .collect();
    Arc::new(schema.with_metadata(map))
}
