//! The JSON Schema of a channel's messages, from its field specs. A message is the record as
//! JSON Lines writes it, without the channel (the topic names it): `{"time_ns", "frame",
//! "entity", "values": {...}, "removed": [...]}`. Each declared field is typed by its dtype
//! and shape (nested arrays of fixed length); a field without them, or one that shows up
//! later, is allowed by `additionalProperties` (the default).

use serde_json::{json, Map, Value as Json};

use crate::model::{Channel, Composition, DType, FieldSpec};

/// `jsonschema` schema text for `channel`.
pub fn channel_schema(channel: &Channel) -> Vec<u8> {
    let fields: Map<String, Json> = channel
        .fields
        .iter()
        .map(|f| (f.name.clone(), field_schema(f)))
        .collect();
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": channel.name,
        "description": format!("simrec channel {} ({})", channel.name, composition(channel.composition)),
        "type": "object",
        "properties": {
            "time_ns": {
                "type": "integer",
                "description": "nanoseconds from the recording's time origin"
            },
            "frame": {"type": "integer", "description": "the frame value the source stores"},
            "entity": {"type": ["integer", "string"]},
            "values": {"type": "object", "properties": fields},
            "removed": {
                "type": "array",
                "items": {"type": "string"},
                "description": "keys this record removes"
            }
        },
        "required": ["time_ns", "values"]
    });
    // A json! value always serialises.
    serde_json::to_vec(&schema).unwrap_or_default()
}

/// How a channel's records combine, as the channel metadata and schema name it.
pub fn composition(c: Composition) -> &'static str {
    match c {
        Composition::Independent => "independent",
        Composition::FrameDelta => "frame_delta",
        Composition::StateDelta => "state_delta",
        Composition::SampleHold => "sample_hold",
    }
}

fn field_schema(spec: &FieldSpec) -> Json {
    let mut schema = match (spec.dtype, &spec.shape) {
        (Some(dtype), Some(shape)) => shape.iter().rev().fold(
            scalar(dtype),
            |items, &n| json!({"type": "array", "items": items, "minItems": n, "maxItems": n}),
        ),
        _ => json!({}),
    };
    let mut about = Vec::new();
    if let Some(dtype) = spec.dtype {
        about.push(format!("dtype {dtype}"));
    }
    if let Some(unit) = &spec.unit {
        about.push(format!("unit {unit}"));
    }
    if let Some(semantic) = &spec.semantic {
        about.push(format!("semantic {semantic}"));
    }
    if spec.is_static {
        about.push("static".into());
    }
    if let (Json::Object(map), false) = (&mut schema, about.is_empty()) {
        map.insert("description".into(), Json::String(about.join("; ")));
    }
    schema
}

fn scalar(dtype: DType) -> Json {
    match dtype {
        DType::Bool => json!({"type": "boolean"}),
        DType::F32 | DType::F64 => {
            // NaN and infinities are written as null (and counted as lost).
            json!({"type": ["number", "null"]})
        }
        DType::Str => json!({"type": "string"}),
        _ => json!({"type": "integer"}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ChannelKind;

    #[test]
    fn fields_are_typed_by_dtype_and_shape() {
        let mut c = Channel::new("frame", ChannelKind::Signals, Composition::FrameDelta);
        c.fields = vec![
            FieldSpec::typed("particle.positions", DType::F32, &[2, 3]).with_unit("nm"),
            FieldSpec::typed("frame.index", DType::U32, &[]),
            FieldSpec::new("undeclared"),
        ];
        let s: Json = serde_json::from_slice(&channel_schema(&c)).unwrap();
        let values = &s["properties"]["values"]["properties"];
        assert_eq!(
            values["particle.positions"],
            json!({"type": "array", "minItems": 2, "maxItems": 2, "description": "dtype float32; unit nm",
                   "items": {"type": "array", "minItems": 3, "maxItems": 3,
                             "items": {"type": ["number", "null"]}}})
        );
        assert_eq!(
            values["frame.index"],
            json!({"type": "integer", "description": "dtype uint32"})
        );
        assert_eq!(values["undeclared"], json!({}));
        assert_eq!(s["title"], "frame");
    }
}
