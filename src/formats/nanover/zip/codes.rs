//! Stable finding codes of `.nanover.zip` recordings (spec §15).

pub const EMPTY_FILE: &str = "NVZIP_EMPTY_FILE";
pub const NOT_ZIP: &str = "NVZIP_NOT_ZIP";
pub const UNFINISHED: &str = "NVZIP_UNFINISHED";
pub const MISSING_MEMBER: &str = "NVZIP_MISSING_MEMBER";
pub const EXTRA_MEMBER: &str = "NVZIP_EXTRA_MEMBER";
pub const COMPRESSED_MEMBER: &str = "NVZIP_COMPRESSED_MEMBER";
pub const ENCRYPTED: &str = "NVZIP_ENCRYPTED";
pub const BAD_ZIP_STRUCTURE: &str = "NVZIP_BAD_ZIP_STRUCTURE";
pub const LOCAL_CENTRAL_MISMATCH: &str = "NVZIP_LOCAL_CENTRAL_MISMATCH";
pub const CRC_MISMATCH: &str = "NVZIP_CRC_MISMATCH";
pub const INDEX_DECODE: &str = "NVZIP_INDEX_DECODE";
pub const INDEX_OUT_OF_BOUNDS: &str = "NVZIP_INDEX_OUT_OF_BOUNDS";
pub const INDEX_GAP: &str = "NVZIP_INDEX_GAP";
pub const MESSAGE_DECODE: &str = "NVZIP_MESSAGE_DECODE";
pub const MESSAGE_NOT_MAP: &str = "NVZIP_MESSAGE_NOT_MAP";
pub const UNKNOWN_PART: &str = "NVZIP_UNKNOWN_PART";
pub const TYPES_MISMATCH: &str = "NVZIP_TYPES_MISMATCH";
pub const FRAME_INDEX_MISMATCH: &str = "NVZIP_FRAME_INDEX_MISMATCH";
pub const TIMESTAMP_MISSING: &str = "NVZIP_TIMESTAMP_MISSING";
pub const TIMESTAMP_TYPE: &str = "NVZIP_TIMESTAMP_TYPE";
pub const TIMESTAMP_DECREASE: &str = "NVZIP_TIMESTAMP_DECREASE";
pub const TIMESTAMP_JUMP: &str = "NVZIP_TIMESTAMP_JUMP";
pub const FRAME_NO_INDEX: &str = "NVZIP_FRAME_NO_INDEX";
pub const ARRAY_LENGTH: &str = "NVZIP_ARRAY_LENGTH";
pub const ARRAY_LIST: &str = "NVZIP_ARRAY_LIST";
pub const ARRAY_RANGE: &str = "NVZIP_ARRAY_RANGE";
pub const KEY_TYPE: &str = "NVZIP_KEY_TYPE";
pub const STATE_SHAPE: &str = "NVZIP_STATE_SHAPE";
pub const STATE_BOTH: &str = "NVZIP_STATE_BOTH";
pub const COMMAND_SHAPE: &str = "NVZIP_COMMAND_SHAPE";
pub const NONFINITE_FLOAT: &str = "NVZIP_NONFINITE_FLOAT";
pub const COUNT_MISMATCH: &str = "NVZIP_COUNT_MISMATCH";
pub const EXT_VALUE: &str = "NVZIP_EXT_VALUE";
/// simrec's own: messages after the last index entry's end, which no entry lists.
pub const INDEX_SHORT: &str = "NVZIP_INDEX_SHORT";
/// simrec's own: timestamps a recovery had to derive or invent (spec §11).
pub const TIMESTAMP_SYNTHESISED: &str = "NVZIP_TIMESTAMP_SYNTHESISED";
