//! Stable finding codes of Elodin DB directories (docs/formats/elodin-db.md, "Checks").

pub const DB_STATE: &str = "ELODIN_DB_STATE";
pub const BAD_DIR_NAME: &str = "ELODIN_DB_BAD_DIR_NAME";
pub const SCHEMA: &str = "ELODIN_DB_SCHEMA";
pub const METADATA: &str = "ELODIN_DB_METADATA";
pub const ID_MISMATCH: &str = "ELODIN_DB_ID_MISMATCH";
pub const MISSING_LOG: &str = "ELODIN_DB_MISSING_LOG";
pub const HEADER: &str = "ELODIN_DB_HEADER";
pub const ELEMENT_SIZE: &str = "ELODIN_DB_ELEMENT_SIZE";
pub const INDEX_ALIGN: &str = "ELODIN_DB_INDEX_ALIGN";
pub const ROW_REMAINDER: &str = "ELODIN_DB_ROW_REMAINDER";
pub const INDEX_ORDER: &str = "ELODIN_DB_INDEX_ORDER";
pub const DATA_SHORT: &str = "ELODIN_DB_DATA_SHORT";
pub const UNCOMMITTED_ROW: &str = "ELODIN_DB_UNCOMMITTED_ROW";
pub const TORN_TICK: &str = "ELODIN_DB_TORN_TICK";
pub const MSG_LOG: &str = "ELODIN_DB_MSG_LOG";
pub const LEGACY_LAYOUT: &str = "ELODIN_DB_LEGACY_LAYOUT";
