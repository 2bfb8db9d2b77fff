//! The formats simrec writes and does not read: JSON Lines (`jsonl/`), the Parquet table
//! (`parquet_table/`), the lake (`lake/`, whose Parquet files go through the table's
//! encoder) and MCAP (`mcap/`, whose scene adapter draws what other families'
//! records show). They take every channel as it is, so they map nothing first; the JSON
//! text of values (`json_text.rs`) and its formatting on other threads (`json_batches.rs`)
//! are shared by JSON Lines and MCAP.

pub mod json_batches;
pub mod json_text;
pub mod jsonl;
pub mod lake;
pub mod mcap;
pub mod parquet_table;

use crate::formats::Family;

/// The family, as the registry lists it.
pub static FAMILY: Family = Family {
    name: "export",
    formats: &[
        &jsonl::JsonLines,
        &parquet_table::ParquetTable,
        &lake::Lake,
        &mcap::Mcap,
    ],
    mapping: None,
    key_types: &[],
};
