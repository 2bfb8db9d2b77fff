//! The data model every format reads into and writes from. No I/O here.

pub mod fold;
pub mod header;
pub mod pose;
pub mod record;
pub mod time;
pub mod time_scale;
pub mod value;

pub use fold::{Context, Folded};
pub use header::{
    Channel, ChannelId, ChannelKind, Composition, Epoch, FieldSpec, Header, TimeOrigin,
    FRAME_VALUE, MAPPED_FROM, QUATERNION_WXYZ, QUATERNION_XYZW,
};
pub use record::{Entity, Nanos, RawBytes, Record, CONTEXT_GROUP};
pub use time::{iso8601, Seconds, TimeSpec};
pub use value::{Array, ArrayData, DType, Field, Value};
