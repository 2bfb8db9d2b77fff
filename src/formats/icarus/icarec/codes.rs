//! Stable finding codes of `.icarec` recordings (spec §A11).

pub const NOT_FOUND: &str = "ICAREC_NOT_FOUND";
pub const MISSING_PART: &str = "ICAREC_MISSING_PART";
pub const TAR: &str = "ICAREC_TAR";
pub const SCHEMA_JSON: &str = "ICAREC_SCHEMA_JSON";
pub const SIGNAL_FIELD: &str = "ICAREC_SIGNAL_FIELD";
pub const UNKNOWN_TYPE: &str = "ICAREC_UNKNOWN_TYPE";
pub const SIZE_MISMATCH: &str = "ICAREC_SIZE_MISMATCH";
pub const SIGNAL_OVERLAP: &str = "ICAREC_SIGNAL_OVERLAP";
pub const SIGNAL_OUT_OF_BLOCK: &str = "ICAREC_SIGNAL_OUT_OF_BLOCK";
pub const BYTE_ORDER: &str = "ICAREC_BYTE_ORDER";
pub const TIME_BLOCK: &str = "ICAREC_TIME_BLOCK";
pub const NO_EPOCH: &str = "ICAREC_NO_EPOCH";
pub const PRE_1972: &str = "ICAREC_PRE_1972";
pub const STATIC_SIZE: &str = "ICAREC_STATIC_SIZE";
pub const TRUNCATED_FRAME: &str = "ICAREC_TRUNCATED_FRAME";
pub const TIME_NONFINITE: &str = "ICAREC_TIME_NONFINITE";
pub const TIME_DECREASE: &str = "ICAREC_TIME_DECREASE";
pub const TIME_EQUAL: &str = "ICAREC_TIME_EQUAL";
pub const IRREGULAR_STEP: &str = "ICAREC_IRREGULAR_STEP";
pub const CHECKSUM_MISSING: &str = "ICAREC_CHECKSUM_MISSING";
pub const CHECKSUM_MISMATCH: &str = "ICAREC_CHECKSUM_MISMATCH";
pub const METADATA_MISSING: &str = "ICAREC_METADATA_MISSING";
pub const METADATA_JSON: &str = "ICAREC_METADATA_JSON";
pub const METADATA_KEY: &str = "ICAREC_METADATA_KEY";
pub const INCOMPLETE: &str = "ICAREC_INCOMPLETE";
pub const COUNT_MISMATCH: &str = "ICAREC_COUNT_MISMATCH";
pub const DIGEST_MISMATCH: &str = "ICAREC_DIGEST_MISMATCH";
pub const BOOL_VALUE: &str = "ICAREC_BOOL_VALUE";
pub const SLOT_PADDING: &str = "ICAREC_SLOT_PADDING";
pub const COMPONENT_RANGES: &str = "ICAREC_COMPONENT_RANGES";
pub const NONFINITE_VALUE: &str = "ICAREC_NONFINITE_VALUE";
pub const DISCONTINUITY: &str = "ICAREC_DISCONTINUITY";
/// A file or archive member simrec does not read (info; the spec says such members are
/// reported, and names no code: this one is simrec's).
pub const UNKNOWN_MEMBER: &str = "ICAREC_UNKNOWN_MEMBER";
