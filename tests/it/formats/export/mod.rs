//! The output-only formats (JSON Lines, the Parquet table, MCAP, the wide CSV), from every source.

mod csv;
mod jsonl_bytes;
mod lake;
mod mcap;
mod mcap_proto;
mod parquet_table;
mod parquet_types;
