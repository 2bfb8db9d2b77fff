//! Where a record says a thing is, whatever family it came from: the positions and
//! attitudes that writers of another family turn into their own (Foxglove transforms,
//! NanoVer particles). Recognised from field names and declared semantics alone:
//!
//! - `world_pos` (7 numbers: Elodin's spatial transform) is a scalar-last quaternion
//!   `[qx, qy, qz, qw]` then the position `[x, y, z]`;
//! - a field declared with semantic [`QUATERNION_WXYZ`] (4 numbers: an Icarus `Quat`) is a
//!   scalar-first quaternion `[w, x, y, z]`;
//! - a field named `position` (3 numbers: an Icarus `Vec3`, a 3es shape's, an XREC
//!   transform's) is the position.

use std::collections::HashMap;

use serde_json::Value as Json;

use super::{
    Array, ArrayData, Channel, Entity, Header, Record, Value, QUATERNION_WXYZ, QUATERNION_XYZW,
};

/// Elodin's spatial transform: quaternion (scalar last) then position.
pub const WORLD_POS: &str = "world_pos";
/// A position of three numbers.
pub const POSITION: &str = "position";

/// What one record says of its entity's place; either part may be missing.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pose {
    pub translation: Option<[f64; 3]>,
    /// Scalar last: x, y, z, w.
    pub rotation: Option<[f64; 4]>,
}

impl Pose {
    /// The pose `record` carries; `quaternions` names its channel's scalar-first
    /// quaternion fields ([`wxyz_fields`]).
    pub fn of(record: &Record, quaternions: &[String]) -> Pose {
        let mut pose = Pose::default();
        for (key, value) in &record.values {
            if key == WORLD_POS {
                if let Some([qx, qy, qz, qw, x, y, z]) = fixed::<7>(value) {
                    pose.rotation = Some([qx, qy, qz, qw]);
                    pose.translation = Some([x, y, z]);
                }
            } else if key == POSITION {
                if let Some(p) = fixed::<3>(value) {
                    pose.translation = Some(p);
                }
            } else if quaternions.iter().any(|n| n == key) {
                if let Some([w, x, y, z]) = fixed::<4>(value) {
                    pose.rotation = Some([x, y, z, w]);
                }
            }
        }
        pose
    }

    pub fn is_empty(&self) -> bool {
        self.translation.is_none() && self.rotation.is_none()
    }
}

/// The names of `channel`'s fields declared as scalar-first quaternions.
pub fn wxyz_fields(channel: &Channel) -> Vec<String> {
    channel
        .fields
        .iter()
        .filter(|f| f.semantic.as_deref() == Some(QUATERNION_WXYZ))
        .map(|f| f.name.clone())
        .collect()
}

/// The names of `channel`'s fields declared as scalar-last quaternions (an XREC
/// transform's `rotation`).
pub fn xyzw_fields(channel: &Channel) -> Vec<String> {
    channel
        .fields
        .iter()
        .filter(|f| f.semantic.as_deref() == Some(QUATERNION_XYZW))
        .map(|f| f.name.clone())
        .collect()
}

/// `{"entities": {"0": "Ball", ...}}` under any key of the header's metadata (the Elodin
/// reader lists its entity names so).
pub fn entity_names(header: &Header) -> HashMap<u64, String> {
    let mut names = HashMap::new();
    for value in header.metadata.values() {
        if let Some(Json::Object(entities)) = value.get("entities") {
            for (id, name) in entities {
                if let (Ok(id), Json::String(name)) = (id.parse::<u64>(), name) {
                    names.insert(id, name.clone());
                }
            }
        }
    }
    names
}

/// The name of `entity`: its own, the header's name for its number, or `entity N`.
pub fn entity_name(entity: &Entity, names: &HashMap<u64, String>) -> String {
    match entity {
        Entity::Name(name) => name.to_string(),
        Entity::Id(id) => names
            .get(id)
            .cloned()
            .unwrap_or_else(|| format!("entity {id}")),
    }
}

/// The elements of a numeric value as f64 (an array of any numeric dtype, or a list of
/// numbers), `None` for anything else.
pub fn floats(value: &Value) -> Option<Vec<f64>> {
    match value {
        Value::Array(Array { data, .. }) => Some(match data {
            ArrayData::F32(v) => v.iter().map(|&x| x as f64).collect(),
            ArrayData::F64(v) => v.clone(),
            ArrayData::I8(v) => v.iter().map(|&x| x as f64).collect(),
            ArrayData::I16(v) => v.iter().map(|&x| x as f64).collect(),
            ArrayData::I32(v) => v.iter().map(|&x| x as f64).collect(),
            ArrayData::I64(v) => v.iter().map(|&x| x as f64).collect(),
            ArrayData::U8(v) => v.iter().map(|&x| x as f64).collect(),
            ArrayData::U16(v) => v.iter().map(|&x| x as f64).collect(),
            ArrayData::U32(v) => v.iter().map(|&x| x as f64).collect(),
            ArrayData::U64(v) => v.iter().map(|&x| x as f64).collect(),
            ArrayData::Bool(_) | ArrayData::Str(_) => return None,
        }),
        Value::List(items) => items.iter().map(number).collect(),
        _ => None,
    }
}

/// A scalar number as f64.
pub fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Float(x) => Some(*x),
        Value::F32(x) => Some(*x as f64),
        Value::Int(i) => Some(*i as f64),
        Value::UInt(u) => Some(*u as f64),
        _ => None,
    }
}

/// `N` numbers from a value that holds exactly `N` (float arrays, the common case, are
/// read without the vector [`floats`] allocates).
pub fn fixed<const N: usize>(value: &Value) -> Option<[f64; N]> {
    match value {
        Value::Array(Array {
            data: ArrayData::F64(v),
            ..
        }) => <[f64; N]>::try_from(v.as_slice()).ok(),
        Value::Array(Array {
            data: ArrayData::F32(v),
            ..
        }) => {
            let v = <[f32; N]>::try_from(v.as_slice()).ok()?;
            Some(v.map(f64::from))
        }
        _ => floats(value)?.try_into().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(values: Vec<(&str, Value)>) -> Record {
        Record::with_values(0, 0, values)
    }

    #[test]
    fn world_pos_is_quaternion_then_position() {
        let v = Value::Array(Array::flat(ArrayData::F64(vec![
            0.0, 0.0, 0.6, 0.8, 1.0, 2.0, 3.0,
        ])));
        let pose = Pose::of(&record(vec![(WORLD_POS, v)]), &[]);
        assert_eq!(pose.translation, Some([1.0, 2.0, 3.0]));
        assert_eq!(pose.rotation, Some([0.0, 0.0, 0.6, 0.8]));
    }

    #[test]
    fn scalar_first_quaternions_are_reordered_and_positions_taken_from_lists() {
        let q = Value::Array(Array::flat(ArrayData::F32(vec![0.8, 0.0, 0.6, 0.0])));
        let p = Value::List(vec![Value::Int(1), Value::Float(2.5), Value::UInt(3)]);
        let pose = Pose::of(
            &record(vec![("attitude", q), (POSITION, p)]),
            &["attitude".to_string()],
        );
        assert_eq!(pose.translation, Some([1.0, 2.5, 3.0]));
        assert_eq!(
            pose.rotation,
            Some([0.0, 0.6000000238418579, 0.0, 0.800000011920929])
        );
        assert!(Pose::of(&record(vec![(POSITION, Value::Int(1))]), &[]).is_empty());
    }
}
