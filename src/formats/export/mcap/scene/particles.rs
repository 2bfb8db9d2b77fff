//! NanoVer particles → `foxglove.PointCloud`: each frame record that carries
//! `particle.positions` (n × 3) becomes one cloud in frame `world`, the float32 positions
//! copied as they are (NanoVer's nanometres: Foxglove shows them as metres), coloured by
//! element (CPK colours) when the frame's `particle.elements`, or the last ones a frame
//! delta carried since the last reset, give one per particle.

use bytes::Bytes;
use foxglove::messages::packed_element_field::NumericType;
use foxglove::messages::{PackedElementField, PointCloud, Timestamp};

use super::encode;
use crate::model::{Array, ArrayData, Channel, Composition, Record, Value};

pub(super) const POSITIONS: &str = "particle.positions";
const ELEMENTS: &str = "particle.elements";

#[derive(Default)]
pub struct Particles {
    /// Atomic numbers held since the last reset, with the channel that carried them.
    elements: Option<(u32, Vec<u8>)>,
    /// Clouds written without colours because the element count did not match.
    uncoloured: u64,
}

/// Whether a record of `channel` holding `key` may change the particles or draw them.
pub(super) fn reads(channel: &Channel, key: &str) -> bool {
    channel.composition == Composition::FrameDelta || key == POSITIONS || key == ELEMENTS
}

impl Particles {
    pub fn record(
        &mut self,
        channel: &Channel,
        record: &Record,
        stamp: Timestamp,
    ) -> Option<Vec<u8>> {
        if channel.composition == Composition::FrameDelta && record.frame == Some(0) {
            self.elements = None;
        }
        if let Some(elements) = record.get(ELEMENTS).and_then(atomic_numbers) {
            self.elements = Some((record.channel, elements));
        }
        let Some(Value::Array(positions)) = record.get(POSITIONS) else {
            return None;
        };
        let n = positions.len() / 3;
        if positions.len() % 3 != 0 || n == 0 {
            return None;
        }
        let elements = self
            .elements
            .as_ref()
            .filter(|(c, e)| *c == record.channel && e.len() == n)
            .map(|(_, e)| e.as_slice());
        if elements.is_none() && self.elements.is_some() {
            self.uncoloured += 1;
        }
        Some(encode(&cloud(positions, elements, stamp)?))
    }

    pub fn notes(&self) -> Vec<String> {
        if self.uncoloured == 0 {
            return Vec::new();
        }
        vec![format!(
            "/particles: {} clouds without colours (particle.elements did not give one per particle)",
            self.uncoloured
        )]
    }
}

/// Element numbers clamped to a byte (the colour table's index).
fn atomic_numbers(value: &Value) -> Option<Vec<u8>> {
    let Value::Array(Array { data, .. }) = value else {
        return None;
    };
    let byte = |x: u64| u8::try_from(x).unwrap_or(0);
    Some(match data {
        ArrayData::U8(v) => v.clone(),
        ArrayData::U16(v) => v.iter().map(|&x| byte(x.into())).collect(),
        ArrayData::U32(v) => v.iter().map(|&x| byte(x.into())).collect(),
        ArrayData::U64(v) => v.iter().map(|&x| byte(x)).collect(),
        ArrayData::I32(v) => v.iter().map(|&x| byte(x.max(0) as u64)).collect(),
        ArrayData::I64(v) => v.iter().map(|&x| byte(x.max(0) as u64)).collect(),
        _ => return None,
    })
}

pub(super) fn field(name: &str, offset: u32, ty: NumericType) -> PackedElementField {
    PackedElementField {
        name: name.into(),
        offset,
        r#type: ty as i32,
    }
}

/// Points x, y, z (float32, or float64 when the positions are) then, with elements, red,
/// green, blue, alpha bytes.
fn cloud(positions: &Array, elements: Option<&[u8]>, stamp: Timestamp) -> Option<PointCloud> {
    let (width, ty) = match positions.data {
        ArrayData::F32(_) => (4u32, NumericType::Float32),
        ArrayData::F64(_) => (8, NumericType::Float64),
        _ => return None,
    };
    let mut fields = vec![
        field("x", 0, ty),
        field("y", width, ty),
        field("z", 2 * width, ty),
    ];
    let mut stride = 3 * width;
    if elements.is_some() {
        for (i, name) in ["red", "green", "blue", "alpha"].iter().enumerate() {
            fields.push(field(name, stride + i as u32, NumericType::Uint8));
        }
        stride += 4;
    }
    let n = positions.len() / 3;
    let mut data = Vec::with_capacity(n * stride as usize);
    for i in 0..n {
        match &positions.data {
            ArrayData::F32(v) => {
                for x in &v[3 * i..3 * i + 3] {
                    data.extend_from_slice(&x.to_le_bytes());
                }
            }
            ArrayData::F64(v) => {
                for x in &v[3 * i..3 * i + 3] {
                    data.extend_from_slice(&x.to_le_bytes());
                }
            }
            _ => return None,
        }
        if let Some(elements) = elements {
            data.extend_from_slice(&cpk(elements[i]));
        }
    }
    Some(PointCloud {
        timestamp: Some(stamp),
        frame_id: "world".into(),
        pose: None,
        point_stride: stride,
        fields,
        data: Bytes::from(data),
    })
}

/// CPK colours (Jmol's) of the common elements; pink for the rest.
pub fn cpk(element: u8) -> [u8; 4] {
    match element {
        1 => [255, 255, 255, 255],
        6 => [144, 144, 144, 255],
        7 => [48, 80, 248, 255],
        8 => [255, 13, 13, 255],
        9 | 17 => [31, 240, 31, 255],
        15 => [255, 128, 0, 255],
        16 => [255, 255, 48, 255],
        11 => [171, 92, 242, 255],
        12 => [138, 255, 0, 255],
        19 => [143, 64, 212, 255],
        20 => [61, 255, 0, 255],
        26 => [224, 102, 51, 255],
        35 => [166, 41, 41, 255],
        53 => [148, 0, 148, 255],
        _ => [255, 20, 147, 255],
    }
}
