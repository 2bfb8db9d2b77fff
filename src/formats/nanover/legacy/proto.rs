//! The NanoVer protobuf messages, derived by hand for prost (there is no `protoc` here).
//!
//! Maps are declared as repeated entry messages, which is their wire form; that
//! keeps key order and duplicates visible. Field numbers follow
//! `nanover-protocol` (spec §2).

#[derive(Clone, PartialEq, prost::Message)]
pub struct GetFrameResponse {
    #[prost(uint32, tag = "1")]
    pub frame_index: u32,
    #[prost(message, optional, tag = "2")]
    pub frame: Option<FrameData>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct FrameData {
    #[prost(message, repeated, tag = "1")]
    pub values: Vec<ValueEntry>,
    #[prost(message, repeated, tag = "2")]
    pub arrays: Vec<ArrayEntry>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueEntry {
    #[prost(string, tag = "1")]
    pub key: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<ProtoValue>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ArrayEntry {
    #[prost(string, tag = "1")]
    pub key: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<ValueArray>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueArray {
    #[prost(oneof = "ValueArrayKind", tags = "1, 2, 3")]
    pub values: Option<ValueArrayKind>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum ValueArrayKind {
    #[prost(message, tag = "1")]
    FloatValues(FloatArray),
    #[prost(message, tag = "2")]
    IndexValues(IndexArray),
    #[prost(message, tag = "3")]
    StringValues(StringArray),
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct FloatArray {
    #[prost(float, repeated, tag = "1")]
    pub values: Vec<f32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct IndexArray {
    #[prost(uint32, repeated, tag = "1")]
    pub values: Vec<u32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct StringArray {
    #[prost(string, repeated, tag = "1")]
    pub values: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct StateUpdate {
    #[prost(message, optional, tag = "1")]
    pub changed_keys: Option<Struct>,
}

/// `google.protobuf.Struct`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Struct {
    #[prost(message, repeated, tag = "1")]
    pub fields: Vec<ValueEntry>,
}

/// `google.protobuf.ListValue`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ListValue {
    #[prost(message, repeated, tag = "1")]
    pub values: Vec<ProtoValue>,
}

/// `google.protobuf.Value`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProtoValue {
    #[prost(oneof = "Kind", tags = "1, 2, 3, 4, 5, 6")]
    pub kind: Option<Kind>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Kind {
    #[prost(int32, tag = "1")]
    NullValue(i32),
    #[prost(double, tag = "2")]
    NumberValue(f64),
    #[prost(string, tag = "3")]
    StringValue(String),
    #[prost(bool, tag = "4")]
    BoolValue(bool),
    #[prost(message, tag = "5")]
    StructValue(Struct),
    #[prost(message, tag = "6")]
    ListValue(ListValue),
}
