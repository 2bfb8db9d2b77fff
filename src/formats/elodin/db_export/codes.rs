//! Stable finding codes of `elodin-db export` directories (docs/formats/elodin-db.md,
//! "Export directories").

pub const EXPORT_DIR: &str = "ELODIN_EXPORT_DIR";
pub const EXPORT_FILE: &str = "ELODIN_EXPORT_FILE";
pub const EXPORT_DUPLICATE: &str = "ELODIN_EXPORT_DUPLICATE";
pub const EXPORT_ORDER: &str = "ELODIN_EXPORT_ORDER";
