//! Protobuf for the MCAP topics built from simrec channels: a message type (and its
//! FileDescriptorSet, the schema MCAP readers decode with) made at conversion from field
//! specs, and the values of records encoded as its fields with prost's wire helpers (no
//! protoc, no generated code).
//!
//! The schema is proto2 so that a field a record does not carry is absent, not zero: a frame
//! delta's missing key means "unchanged", which a zero would contradict.

use prost::encoding::{encode_key, encode_varint, WireType};
use prost::Message as _;
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{
    DescriptorProto, FieldDescriptorProto, FieldOptions, FileDescriptorProto, FileDescriptorSet,
    MessageOptions,
};

use crate::formats::export::json_text;
use crate::model::{ArrayData, DType, Value};

/// The package of every message type simrec writes.
pub const PACKAGE: &str = "simrec";

/// Field numbers every message starts with.
pub const TIME_NS: u32 = 1;
pub const FRAME: u32 = 2;
/// In a message of entities: the repeated entity message; in an entity, its id and name.
pub const ENTITIES: u32 = 3;
pub const ENTITY_ID: u32 = 1;
pub const ENTITY_NAME: u32 = 2;

/// A field's wire type as the schema declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bool,
    U32,
    U64,
    I32,
    I64,
    F32,
    F64,
    Str,
    /// A value whose type is not known up front, as its JSON text.
    Json,
}

impl Kind {
    pub fn of(dtype: Option<DType>) -> Kind {
        match dtype {
            Some(DType::Bool) => Kind::Bool,
            Some(DType::U8 | DType::U16 | DType::U32) => Kind::U32,
            Some(DType::U64) => Kind::U64,
            Some(DType::I8 | DType::I16 | DType::I32) => Kind::I32,
            Some(DType::I64) => Kind::I64,
            Some(DType::F32) => Kind::F32,
            Some(DType::F64) => Kind::F64,
            Some(DType::Str) => Kind::Str,
            None => Kind::Json,
        }
    }

    fn proto_type(self) -> Type {
        match self {
            Kind::Bool => Type::Bool,
            Kind::U32 => Type::Uint32,
            Kind::U64 => Type::Uint64,
            Kind::I32 => Type::Int32,
            Kind::I64 => Type::Int64,
            Kind::F32 => Type::Float,
            Kind::F64 => Type::Double,
            Kind::Str | Kind::Json => Type::String,
        }
    }

    fn is_numeric(self) -> bool {
        !matches!(self, Kind::Str | Kind::Json)
    }
}

/// One field of a message type.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The protobuf name: the original name with what an identifier cannot hold as `_`.
    pub name: String,
    pub number: u32,
    pub kind: Kind,
    /// An array (any shape: the elements row-major).
    pub repeated: bool,
}

/// A message type: `time_ns`, `frame`, then either its fields or `entities`, a repeated
/// message of `entity`, `name` and the fields.
#[derive(Debug, Clone)]
pub struct MessageType {
    pub name: String,
    pub fields: Vec<Field>,
    pub entities: bool,
}

impl MessageType {
    /// The schema's name, as MCAP's protobuf readers look it up in the descriptor set.
    pub fn full_name(&self) -> String {
        format!("{PACKAGE}.{}", self.name)
    }

    /// The FileDescriptorSet holding this message type.
    pub fn descriptor_set(&self) -> Vec<u8> {
        let own = self.fields.iter().map(|f| {
            let mut d = field(&f.name, f.number, f.kind.proto_type(), f.repeated);
            if f.repeated && f.kind.is_numeric() {
                // Packed: one length and the elements back to back, not a key per element.
                d.options = Some(FieldOptions {
                    packed: Some(true),
                    ..FieldOptions::default()
                });
            }
            d
        });
        let mut message = DescriptorProto {
            name: Some(self.name.clone()),
            field: vec![
                field("time_ns", TIME_NS, Type::Int64, false),
                field("frame", FRAME, Type::Int64, false),
            ],
            ..DescriptorProto::default()
        };
        if self.entities {
            let mut entity = DescriptorProto {
                name: Some("Entity".into()),
                field: vec![
                    field("entity", ENTITY_ID, Type::Uint64, false),
                    field("name", ENTITY_NAME, Type::String, false),
                ],
                ..DescriptorProto::default()
            };
            entity.field.extend(own);
            let mut entities = field("entities", ENTITIES, Type::Message, true);
            entities.type_name = Some(format!(".{}.Entity", self.full_name()));
            message.field.push(entities);
            message.nested_type.push(entity);
        } else {
            message.field.extend(own);
        }
        file_set(&self.name, message)
    }
}

/// Of a message of values whose keys are not known up front (a NanoVer state delta): its
/// `map<string, string> values` (each value as JSON text), `repeated string removed` (the
/// keys a delta removes) and the record's entity.
pub mod keyed {
    pub const VALUES: u32 = 3;
    pub const REMOVED: u32 = 4;
    pub const ENTITY: u32 = 5;
    pub const NAME: u32 = 6;
}

/// The FileDescriptorSet of message `simrec.<name>` of [`keyed`] values.
pub fn keyed_descriptor_set(name: &str) -> Vec<u8> {
    let entry = DescriptorProto {
        name: Some("ValuesEntry".into()),
        field: vec![
            field("key", 1, Type::String, false),
            field("value", 2, Type::String, false),
        ],
        options: Some(MessageOptions {
            map_entry: Some(true),
            ..MessageOptions::default()
        }),
        ..DescriptorProto::default()
    };
    let mut values = field("values", keyed::VALUES, Type::Message, true);
    values.type_name = Some(format!(".{PACKAGE}.{name}.ValuesEntry"));
    let message = DescriptorProto {
        name: Some(name.into()),
        field: vec![
            field("time_ns", TIME_NS, Type::Int64, false),
            field("frame", FRAME, Type::Int64, false),
            values,
            field("removed", keyed::REMOVED, Type::String, true),
            field("entity", keyed::ENTITY, Type::Uint64, false),
            field("name", keyed::NAME, Type::String, false),
        ],
        nested_type: vec![entry],
        ..DescriptorProto::default()
    };
    file_set(name, message)
}

/// A record as a message of [`keyed`] values.
pub fn keyed_record(
    buf: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
    record: &crate::model::Record,
    lost: &mut json_text::Lost,
) {
    use crate::model::Entity;
    int64(buf, TIME_NS, record.time);
    if let Some(frame) = record.frame {
        int64(buf, FRAME, frame);
    }
    let mut entry = Vec::new();
    for (key, value) in &record.values {
        if *value == Value::Removed {
            bytes(buf, keyed::REMOVED, key.as_bytes());
            continue;
        }
        scratch.clear();
        json_text::value(scratch, key, value, lost);
        entry.clear();
        bytes(&mut entry, 1, key.as_bytes());
        bytes(&mut entry, 2, scratch);
        bytes(buf, keyed::VALUES, &entry);
    }
    match &record.entity {
        Some(Entity::Id(id)) => uint64(buf, keyed::ENTITY, *id),
        Some(Entity::Name(n)) => bytes(buf, keyed::NAME, n.as_bytes()),
        None => {}
    }
}

/// A FileDescriptorSet of one message type.
fn file_set(name: &str, message: DescriptorProto) -> Vec<u8> {
    FileDescriptorSet {
        file: vec![FileDescriptorProto {
            name: Some(format!("{PACKAGE}/{name}.proto")),
            package: Some(PACKAGE.into()),
            message_type: vec![message],
            syntax: Some("proto2".into()),
            ..FileDescriptorProto::default()
        }],
    }
    .encode_to_vec()
}

fn field(name: &str, number: u32, kind: Type, repeated: bool) -> FieldDescriptorProto {
    FieldDescriptorProto {
        name: Some(name.into()),
        number: i32::try_from(number).ok(),
        label: Some(if repeated {
            Label::Repeated
        } else {
            Label::Optional
        } as i32),
        r#type: Some(kind as i32),
        json_name: Some(name.into()),
        ..FieldDescriptorProto::default()
    }
}

/// `name` as a protobuf identifier: letters, digits and `_`, not starting with a digit.
pub fn identifier(name: &str) -> String {
    let mut id: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !id.starts_with(|c: char| c.is_ascii_alphabetic()) {
        id.insert(0, 'f');
    }
    id
}

pub fn int64(buf: &mut Vec<u8>, number: u32, v: i64) {
    encode_key(number, WireType::Varint, buf);
    encode_varint(v as u64, buf);
}

pub fn uint64(buf: &mut Vec<u8>, number: u32, v: u64) {
    encode_key(number, WireType::Varint, buf);
    encode_varint(v, buf);
}

pub fn bytes(buf: &mut Vec<u8>, number: u32, v: &[u8]) {
    encode_key(number, WireType::LengthDelimited, buf);
    encode_varint(v.len() as u64, buf);
    buf.extend_from_slice(v);
}

/// Why a value was not written into its field.
pub type Refusal = &'static str;

/// Appends `value` as field `f` to `buf` (`scratch` holds packed elements while their
/// length is unknown). What cannot be written as the field's type is refused, and `buf`
/// is left as it was.
pub fn value(
    buf: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
    f: &Field,
    value: &Value,
    lost: &mut json_text::Lost,
) -> Result<(), Refusal> {
    if f.kind == Kind::Json {
        scratch.clear();
        json_text::value(scratch, &f.name, value, lost);
        bytes(buf, f.number, scratch);
        return Ok(());
    }
    match value {
        Value::Null | Value::Removed => Err("null written as an absent field"),
        Value::Array(a) if f.repeated => elements(buf, scratch, f, &a.data),
        Value::Array(a) if a.data.len() == 1 => match only(&a.data) {
            Some(v) => self::value(buf, scratch, f, &v, lost),
            None => Err("array written to a scalar field"),
        },
        Value::Array(_) => Err("array written to a scalar field"),
        Value::Str(s) if f.kind == Kind::Str => {
            // A repeated string is one key per element: one string is one element.
            bytes(buf, f.number, s.as_bytes());
            Ok(())
        }
        Value::Str(_) => Err("string written to a numeric field"),
        scalar => {
            let start = buf.len();
            if f.repeated {
                scratch.clear();
                number(scratch, f.kind, scalar)?;
                bytes(buf, f.number, scratch);
            } else {
                encode_key(f.number, wire(f.kind), buf);
                if let Err(e) = number(buf, f.kind, scalar) {
                    buf.truncate(start);
                    return Err(e);
                }
            }
            Ok(())
        }
    }
}

/// Appends field `f`, a float64 scalar, holding the float64 whose little-endian bytes are
/// `le`: what [`value`] writes of that float, without making it a [`Value`] (a frame's
/// values, `frames.rs`). Refused, and `buf` left as it was, for a field of another type.
pub fn double(buf: &mut Vec<u8>, f: &Field, le: [u8; 8]) -> Result<(), Refusal> {
    if f.kind != Kind::F64 || f.repeated {
        return Err("value of another type than the field's");
    }
    encode_key(f.number, wire(f.kind), buf);
    buf.extend_from_slice(&le);
    Ok(())
}

/// Appends field `f`, repeated float64 or float32, holding the elements whose
/// little-endian bytes (of the field's type) are `le`: what [`value`] writes of that array,
/// without making it a [`Value`] (a frame's values, `frames.rs`). Refused, and `buf` left
/// as it was, for a field of another type.
pub fn floats(buf: &mut Vec<u8>, f: &Field, le: &[u8]) -> Result<(), Refusal> {
    if !f.repeated || !matches!(f.kind, Kind::F64 | Kind::F32) {
        return Err("value of another type than the field's");
    }
    bytes(buf, f.number, le);
    Ok(())
}

/// The element of a one-element array as a scalar.
fn only(data: &ArrayData) -> Option<Value> {
    Some(match data {
        ArrayData::Bool(v) => Value::Bool(*v.first()?),
        ArrayData::U8(v) => Value::UInt((*v.first()?).into()),
        ArrayData::U16(v) => Value::UInt((*v.first()?).into()),
        ArrayData::U32(v) => Value::UInt((*v.first()?).into()),
        ArrayData::U64(v) => Value::UInt(*v.first()?),
        ArrayData::I8(v) => Value::Int((*v.first()?).into()),
        ArrayData::I16(v) => Value::Int((*v.first()?).into()),
        ArrayData::I32(v) => Value::Int((*v.first()?).into()),
        ArrayData::I64(v) => Value::Int(*v.first()?),
        ArrayData::F32(v) => Value::F32(*v.first()?),
        ArrayData::F64(v) => Value::Float(*v.first()?),
        ArrayData::Str(v) => Value::Str(v.first()?.clone()),
    })
}

fn wire(kind: Kind) -> WireType {
    match kind {
        Kind::F32 => WireType::ThirtyTwoBit,
        Kind::F64 => WireType::SixtyFourBit,
        Kind::Str | Kind::Json => WireType::LengthDelimited,
        _ => WireType::Varint,
    }
}

/// An array's elements as field `f`: packed numbers, or one string per element.
fn elements(
    buf: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
    f: &Field,
    data: &ArrayData,
) -> Result<(), Refusal> {
    if let ArrayData::Str(strings) = data {
        if f.kind != Kind::Str {
            return Err("string array written to a numeric field");
        }
        for s in strings {
            bytes(buf, f.number, s.as_bytes());
        }
        return Ok(());
    }
    if f.kind == Kind::Str {
        return Err("numeric array written to a string field");
    }
    scratch.clear();
    macro_rules! each {
        ($v:ident, $conv:expr) => {
            for &x in $v {
                $conv(scratch, x)?;
            }
        };
    }
    // Unsigned elements into an unsigned field of their width or wider (a mesh's indices):
    // varints as they are, without a range check per element.
    let widens = |bits: u32| matches!((f.kind, bits), (Kind::U64, _) | (Kind::U32, ..=32));
    match data {
        ArrayData::U8(v) if widens(8) => v.iter().for_each(|&x| encode_varint(x.into(), scratch)),
        ArrayData::U16(v) if widens(16) => v.iter().for_each(|&x| encode_varint(x.into(), scratch)),
        ArrayData::U32(v) if widens(32) => v.iter().for_each(|&x| encode_varint(x.into(), scratch)),
        ArrayData::U64(v) if widens(64) => v.iter().for_each(|&x| encode_varint(x, scratch)),
        ArrayData::Bool(v) => each!(v, |s: &mut Vec<u8>, x: bool| number(
            s,
            f.kind,
            &Value::Bool(x)
        )),
        ArrayData::U8(v) => each!(v, |s, x: u8| unsigned(s, f.kind, u64::from(x))),
        ArrayData::U16(v) => each!(v, |s, x: u16| unsigned(s, f.kind, u64::from(x))),
        ArrayData::U32(v) => each!(v, |s, x: u32| unsigned(s, f.kind, u64::from(x))),
        ArrayData::U64(v) => each!(v, |s, x: u64| unsigned(s, f.kind, x)),
        ArrayData::I8(v) => each!(v, |s, x: i8| signed(s, f.kind, i64::from(x))),
        ArrayData::I16(v) => each!(v, |s, x: i16| signed(s, f.kind, i64::from(x))),
        ArrayData::I32(v) => each!(v, |s, x: i32| signed(s, f.kind, i64::from(x))),
        ArrayData::I64(v) => each!(v, |s, x: i64| signed(s, f.kind, x)),
        ArrayData::F32(v) if f.kind == Kind::F32 => {
            scratch.reserve(v.len() * 4);
            for x in v {
                scratch.extend_from_slice(&x.to_le_bytes());
            }
        }
        ArrayData::F64(v) if f.kind == Kind::F64 => {
            scratch.reserve(v.len() * 8);
            for x in v {
                scratch.extend_from_slice(&x.to_le_bytes());
            }
        }
        ArrayData::F32(v) => each!(v, |s, x: f32| float(s, f.kind, f64::from(x))),
        ArrayData::F64(v) => each!(v, |s, x: f64| float(s, f.kind, x)),
        ArrayData::Str(_) => {}
    }
    bytes(buf, f.number, scratch);
    Ok(())
}

/// Appends scalars as the elements of repeated numeric field `f`, packed in one run (a
/// vector regrouped from its axes). Refused, and `buf` left as it was, when one is not a
/// number the field's type holds.
pub fn packed<'a>(
    buf: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
    f: &Field,
    values: impl IntoIterator<Item = &'a Value>,
) -> Result<(), Refusal> {
    if !f.repeated || !f.kind.is_numeric() {
        return Err("value of another type than the field's");
    }
    scratch.clear();
    for v in values {
        number(scratch, f.kind, v)?;
    }
    bytes(buf, f.number, scratch);
    Ok(())
}

/// A scalar as the element of `kind` (no key).
fn number(buf: &mut Vec<u8>, kind: Kind, v: &Value) -> Result<(), Refusal> {
    match *v {
        Value::Bool(b) if kind == Kind::Bool => {
            buf.push(u8::from(b));
            Ok(())
        }
        Value::Bool(b) => unsigned(buf, kind, u64::from(b)),
        Value::Int(i) => signed(buf, kind, i),
        Value::UInt(u) => unsigned(buf, kind, u),
        Value::Float(x) => float(buf, kind, x),
        Value::F32(x) => float(buf, kind, f64::from(x)),
        _ => Err("value of another type than the field's"),
    }
}

fn signed(buf: &mut Vec<u8>, kind: Kind, i: i64) -> Result<(), Refusal> {
    match kind {
        Kind::I64 => encode_varint(i as u64, buf),
        Kind::I32 => {
            let i = i32::try_from(i).map_err(|_| "integer out of the field's range")?;
            // int32 is sign-extended to 64 bits on the wire.
            encode_varint(i64::from(i) as u64, buf)
        }
        Kind::U32 | Kind::U64 | Kind::Bool => {
            let u = u64::try_from(i).map_err(|_| "negative integer in an unsigned field")?;
            return unsigned(buf, kind, u);
        }
        Kind::F32 | Kind::F64 => return exact_float(buf, kind, i as f64, i as f64 as i64 == i),
        Kind::Str | Kind::Json => return Err("number written to a string field"),
    }
    Ok(())
}

fn unsigned(buf: &mut Vec<u8>, kind: Kind, u: u64) -> Result<(), Refusal> {
    match kind {
        Kind::U64 => encode_varint(u, buf),
        Kind::U32 => encode_varint(
            u64::from(u32::try_from(u).map_err(|_| "integer out of the field's range")?),
            buf,
        ),
        Kind::Bool if u <= 1 => buf.push(u as u8),
        Kind::Bool => return Err("integer other than 0 or 1 in a boolean field"),
        Kind::I32 | Kind::I64 => {
            let i = i64::try_from(u).map_err(|_| "integer out of the field's range")?;
            return signed(buf, kind, i);
        }
        Kind::F32 | Kind::F64 => return exact_float(buf, kind, u as f64, u as f64 as u64 == u),
        Kind::Str | Kind::Json => return Err("number written to a string field"),
    }
    Ok(())
}

fn float(buf: &mut Vec<u8>, kind: Kind, x: f64) -> Result<(), Refusal> {
    match kind {
        Kind::F64 => buf.extend_from_slice(&x.to_le_bytes()),
        Kind::F32 => {
            let y = x as f32;
            if f64::from(y) != x && !x.is_nan() {
                return Err("float64 value rounded to the float32 field");
            }
            buf.extend_from_slice(&y.to_le_bytes());
        }
        _ if x.fract() == 0.0 && x.abs() < 9.0e15 => return signed(buf, kind, x as i64),
        _ => return Err("fractional number in an integer field"),
    }
    Ok(())
}

fn exact_float(buf: &mut Vec<u8>, kind: Kind, x: f64, exact: bool) -> Result<(), Refusal> {
    if !exact {
        return Err("integer rounded to the float field");
    }
    float(buf, kind, x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Array;

    fn f(kind: Kind, repeated: bool) -> Field {
        Field {
            name: "v".into(),
            number: 5,
            kind,
            repeated,
        }
    }

    fn enc(field: &Field, v: &Value) -> Result<Vec<u8>, Refusal> {
        let (mut buf, mut scratch, mut lost) = (Vec::new(), Vec::new(), Vec::new());
        value(&mut buf, &mut scratch, field, v, &mut lost).map(|()| buf)
    }

    #[test]
    fn scalars_keep_their_bits() {
        let nan = enc(&f(Kind::F64, false), &Value::Float(f64::NAN)).unwrap();
        assert_eq!(nan[0], 5 << 3 | 1);
        assert!(f64::from_le_bytes(nan[1..].try_into().unwrap()).is_nan());
        let big = enc(&f(Kind::I64, false), &Value::Int(9_007_199_254_740_993)).unwrap();
        let mut expected = vec![5 << 3];
        encode_varint(9_007_199_254_740_993, &mut expected);
        assert_eq!(big, expected);
        assert_eq!(
            enc(&f(Kind::I32, false), &Value::Int(-3)).unwrap().len(),
            11
        );
        assert!(enc(&f(Kind::U32, false), &Value::Int(-1)).is_err());
    }

    #[test]
    fn arrays_are_packed_row_major() {
        let a = Array::with_shape(ArrayData::F32(vec![1.0, 2.0, 3.0, 4.0]), vec![2, 2]).unwrap();
        let out = enc(&f(Kind::F32, true), &Value::Array(a)).unwrap();
        assert_eq!(&out[..2], &[5 << 3 | 2, 16]);
        assert_eq!(&out[2..6], &1.0f32.to_le_bytes());
        let le: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let mut raw = Vec::new();
        floats(&mut raw, &f(Kind::F32, true), &le).unwrap();
        assert_eq!(raw, out, "the bytes as they are make the same field");
        assert!(floats(&mut raw, &f(Kind::I64, true), &[]).is_err());
        let one = Array::flat(ArrayData::U64(vec![7]));
        assert_eq!(
            enc(&f(Kind::U64, false), &Value::Array(one)).unwrap(),
            vec![5 << 3, 7]
        );
    }

    #[test]
    fn unsigned_arrays_are_varints_and_too_wide_elements_refused() {
        // Indices 1, 300 and 2^32 - 1 as varints: 1 byte, 2 bytes, 5 bytes.
        let packed = [5 << 3 | 2, 8, 1, 0xac, 0x02, 0xff, 0xff, 0xff, 0xff, 0x0f];
        let u32s = || Value::Array(Array::flat(ArrayData::U32(vec![1, 300, u32::MAX])));
        assert_eq!(enc(&f(Kind::U32, true), &u32s()).unwrap(), packed);
        assert_eq!(enc(&f(Kind::U64, true), &u32s()).unwrap(), packed);
        let u16s = Value::Array(Array::flat(ArrayData::U16(vec![1, 300])));
        assert_eq!(
            enc(&f(Kind::U32, true), &u16s).unwrap(),
            [5 << 3 | 2, 3, 1, 0xac, 0x02]
        );
        // A 64-bit element beyond a 32-bit field is refused, not truncated.
        let wide = Value::Array(Array::flat(ArrayData::U64(vec![1, 1 << 32])));
        assert!(enc(&f(Kind::U32, true), &wide).is_err());
        let fits = Value::Array(Array::flat(ArrayData::U64(vec![1, 300])));
        assert_eq!(
            enc(&f(Kind::U32, true), &fits).unwrap(),
            [5 << 3 | 2, 3, 1, 0xac, 0x02]
        );
    }

    #[test]
    fn the_descriptor_names_the_package_and_nests_entities() {
        let t = MessageType {
            name: "body".into(),
            fields: vec![f(Kind::F64, true)],
            entities: true,
        };
        let set = FileDescriptorSet::decode(t.descriptor_set().as_slice()).unwrap();
        let m = &set.file[0].message_type[0];
        assert_eq!(m.field[2].type_name.as_deref(), Some(".simrec.body.Entity"));
        assert_eq!(m.nested_type[0].field[2].name.as_deref(), Some("v"));
        assert_eq!(identifier("3es/sphere"), "f3es_sphere");
    }
}
