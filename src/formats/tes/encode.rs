//! Packets from a record's values, for records with no bytes of their own (a recording of
//! another family mapped into 3es, docs/formats/mapping.md): the inverse of `decode` for
//! what a mapping makes: Control messages, Category names, shape Create, Update and Destroy
//! of the simple shapes and text (attributes in float32, or float64 with the
//! DoublePrecision flag), and a MeshShape's Create and vertex Data (spec §6).

use super::names::{message_name, routing_of_channel};
use super::packet;
use crate::model::pose::{fixed, floats, number};
use crate::model::{Array, ArrayData, Record, Value};

const R_CONTROL: u16 = 2;
const R_CATEGORY: u16 = 6;
const R_MESH_SHAPE: u16 = 72;
const R_TEXT3D: u16 = 75;
const R_TEXT2D: u16 = 76;
/// ObjectFlag DoublePrecision (0.3 / 0.4).
pub const DOUBLE_PRECISION: u16 = 1;
/// MeshShape Data type of vertices, and of the End message.
const VERTICES: u16 = 0;
const END: u16 = 0xFFFF;
/// DataBuffer content types.
const F32: u8 = 9;
const F64: u8 = 10;

/// The packet `record` (on `channel`) stands for, with a fresh CRC; `Err(why)` for a message
/// this encoder does not build or a value that does not fit it.
pub fn packet(channel: &str, record: &Record) -> Result<Vec<u8>, String> {
    let routing =
        routing_of_channel(channel).ok_or_else(|| format!("{channel} is not a 3es channel"))?;
    let Some(Value::Str(name)) = record.get("message") else {
        return Err(format!("a {channel} record without its message name"));
    };
    let message = (0..16)
        .find(|&m| message_name(routing, m) == name)
        .ok_or_else(|| format!("{channel} has no message {name}"))?;
    let mut p = Vec::new();
    match (routing, message) {
        (R_CONTROL, _) => {
            put_u32(&mut p, uint(record, "control_flags")?);
            put_u32(&mut p, uint(record, "value32")?);
            p.extend_from_slice(&(uint64(record, "value64")?).to_be_bytes());
        }
        (R_CATEGORY, 0) => {
            put_u16(&mut p, uint(record, "category_id")?);
            put_u16(&mut p, uint(record, "parent_id")?);
            let active = matches!(record.get("default_active"), Some(Value::Bool(true)));
            put_u16(&mut p, active as u32);
            text(&mut p, record, "name")?;
        }
        (64..=77, 1) => {
            let flags = uint(record, "flags")?;
            put_u32(&mut p, uint(record, "object_id")?);
            put_u16(&mut p, uint(record, "category")?);
            put_u16(&mut p, flags);
            put_u16(&mut p, 0);
            attributes(&mut p, record, flags as u16 & DOUBLE_PRECISION != 0)?;
            match routing {
                R_TEXT3D | R_TEXT2D => text(&mut p, record, "text")?,
                R_MESH_SHAPE => {
                    put_u32(&mut p, uint(record, "vertex_count")?);
                    put_u32(&mut p, uint(record, "index_count")?);
                    let scale = record.get("draw_scale").and_then(number).unwrap_or(0.0);
                    p.extend_from_slice(&(scale as f32).to_be_bytes());
                    p.push(uint(record, "topology")? as u8);
                }
                _ => {}
            }
        }
        (64..=77, 2) => {
            let flags = uint(record, "flags")?;
            put_u32(&mut p, uint(record, "object_id")?);
            put_u16(&mut p, flags);
            attributes(&mut p, record, flags as u16 & DOUBLE_PRECISION != 0)?;
        }
        (64..=77, 3) => put_u32(&mut p, uint(record, "object_id")?),
        (R_MESH_SHAPE, 4) => {
            put_u32(&mut p, uint(record, "object_id")?);
            let data_type = uint(record, "data_type")?;
            put_u16(&mut p, data_type);
            if data_type as u16 == END {
                put_u32(&mut p, 0);
                put_u16(&mut p, 0);
            } else if data_type as u16 == VERTICES {
                vertices(&mut p, record)?;
            } else {
                return Err(format!("MeshShape data type {data_type} is not encoded"));
            }
        }
        _ => return Err(format!("{channel} {name} is not encoded from values")),
    }
    if p.len() > u16::MAX as usize {
        return Err(format!(
            "a {channel} {name} of {} bytes exceeds a packet",
            p.len()
        ));
    }
    Ok(packet::build(routing, message, &p))
}

fn put_u16(p: &mut Vec<u8>, v: u32) {
    p.extend_from_slice(&(v as u16).to_be_bytes());
}

fn put_u32(p: &mut Vec<u8>, v: u32) {
    p.extend_from_slice(&v.to_be_bytes());
}

/// An unsigned field that fits 32 bits (0 when absent).
fn uint(record: &Record, key: &str) -> Result<u32, String> {
    let v = uint64(record, key)?;
    u32::try_from(v).map_err(|_| format!("{key} = {v} does not fit 32 bits"))
}

fn uint64(record: &Record, key: &str) -> Result<u64, String> {
    match record.get(key) {
        None => Ok(0),
        Some(Value::UInt(v)) => Ok(*v),
        Some(Value::Int(v)) => u64::try_from(*v).map_err(|_| format!("{key} = {v} is negative")),
        Some(other) => Err(format!("{key} is {}, not an integer", other.kind_name())),
    }
}

fn text(p: &mut Vec<u8>, record: &Record, key: &str) -> Result<(), String> {
    let s = match record.get(key) {
        Some(Value::Str(s)) => s.as_str(),
        None => "",
        Some(other) => return Err(format!("{key} is {}, not text", other.kind_name())),
    };
    let n = u16::try_from(s.len()).map_err(|_| format!("{key} is longer than 65535 bytes"))?;
    p.extend_from_slice(&n.to_be_bytes());
    p.extend_from_slice(s.as_bytes());
    Ok(())
}

/// Colour, position, rotation (x, y, z, w) and scale, identity where absent (spec §6.6).
fn attributes(p: &mut Vec<u8>, record: &Record, double: bool) -> Result<(), String> {
    let colour = match record.get("colour") {
        None => [255; 4],
        Some(v) => fixed::<4>(v)
            .ok_or("colour is not 4 numbers")?
            .map(|c| c.clamp(0.0, 255.0) as u8),
    };
    p.extend_from_slice(&colour);
    let vector = |key: &str, default: &[f64]| -> Result<Vec<f64>, String> {
        match record.get(key) {
            None => Ok(default.to_vec()),
            Some(v) => floats(v)
                .filter(|f| f.len() == default.len())
                .ok_or_else(|| format!("{key} is not {} numbers", default.len())),
        }
    };
    let parts = [
        vector("position", &[0.0; 3])?,
        vector("rotation", &[0.0, 0.0, 0.0, 1.0])?,
        vector("scale", &[1.0; 3])?,
    ];
    for x in parts.iter().flatten() {
        if double {
            p.extend_from_slice(&x.to_be_bytes());
        } else {
            p.extend_from_slice(&(*x as f32).to_be_bytes());
        }
    }
    Ok(())
}

/// A DataBuffer of `data` ([count, 3] float32 or float64) at `offset` (spec §6.10).
fn vertices(p: &mut Vec<u8>, record: &Record) -> Result<(), String> {
    let Some(Value::Array(Array { data, .. })) = record.get("data") else {
        return Err("MeshShape vertices without a data array".into());
    };
    let (count, kind) = match data {
        ArrayData::F32(v) => (v.len() / 3, F32),
        ArrayData::F64(v) => (v.len() / 3, F64),
        _ => return Err("MeshShape vertices are not float32 or float64".into()),
    };
    put_u32(p, uint(record, "offset")?);
    let n = u16::try_from(count).map_err(|_| "more than 65535 vertices in one message")?;
    p.extend_from_slice(&n.to_be_bytes());
    p.push(3);
    p.push(kind);
    match data {
        ArrayData::F32(v) => v.iter().for_each(|x| p.extend_from_slice(&x.to_be_bytes())),
        ArrayData::F64(v) => v.iter().for_each(|x| p.extend_from_slice(&x.to_be_bytes())),
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::tes::decode::{decode, Ctx};
    use crate::formats::tes::packet::{PacketHeader, HEADER_LEN};

    /// The values simrec's reader decodes from a built packet, which must carry a valid CRC.
    fn decoded(p: &[u8]) -> Record {
        let h = PacketHeader::parse(p).unwrap();
        assert_eq!(h.packet_len(), p.len());
        assert_eq!(packet::crc_mismatch(&h, p), None);
        let ctx = Ctx {
            version_minor: 4,
            values: true,
            data_dp: None,
        };
        let d = decode(h.routing_id, h.message_id, &p[HEADER_LEN..p.len() - 2], ctx);
        assert!(d.notes.is_empty(), "{:?}", d.notes);
        record(
            d.values
                .iter()
                .map(|(k, v)| (k.as_str(), v.clone()))
                .collect(),
        )
    }

    fn record(values: Vec<(&str, Value)>) -> Record {
        Record::with_values(0, 0, values)
    }

    fn f32s(v: &[f32]) -> Value {
        Value::Array(Array::flat(ArrayData::F32(v.to_vec())))
    }

    /// The spec's check value (§3): a Frame of 33 time units.
    #[test]
    fn a_frame_is_the_spec_packet() {
        let p = packet(
            "3es/control",
            &record(vec![
                ("message", Value::Str("Frame".into())),
                ("value32", Value::UInt(33)),
            ]),
        )
        .unwrap();
        assert_eq!(&p[p.len() - 2..], &0x0470u16.to_be_bytes());
        assert_eq!(p.len(), 16 + 16 + 2);
    }

    #[test]
    fn a_sphere_create_decodes_to_its_values() {
        let r = record(vec![
            ("message", Value::Str("Create".into())),
            ("object_id", Value::UInt(7)),
            ("category", Value::UInt(2)),
            ("flags", Value::UInt(0)),
            (
                "colour",
                Value::Array(Array::flat(ArrayData::U8(vec![255, 0, 0, 255]))),
            ),
            ("position", f32s(&[1.0, 2.0, 3.0])),
            ("scale", f32s(&[0.5, 0.5, 0.5])),
        ]);
        let p = packet("3es/sphere", &r).unwrap();
        assert_eq!(p.len(), 16 + 10 + 44 + 2);
        let decoded = decoded(&p);
        assert_eq!(decoded.get("object_id"), Some(&Value::UInt(7)));
        assert_eq!(decoded.get("position"), Some(&f32s(&[1.0, 2.0, 3.0])));
        assert_eq!(decoded.get("rotation"), Some(&f32s(&[0.0, 0.0, 0.0, 1.0])));
        assert_eq!(
            decoded.get("colour"),
            Some(&Value::Array(Array::flat(ArrayData::U8(vec![
                255, 0, 0, 255
            ]))))
        );
    }

    #[test]
    fn what_is_not_encoded_is_refused() {
        let r = record(vec![("message", Value::Str("Create".into()))]);
        assert!(packet("3es/mesh", &r).is_err());
        assert!(packet("frame", &r).is_err());
    }
}
