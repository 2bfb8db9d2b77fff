//! The Elodin family: replay directories (the library, damaged Parquet and side files, the
//! commands) and DB directories (`db_*`).

mod cli;
mod cli_write;
mod db_cli;
mod db_damage;
mod db_export;
mod db_read;
mod db_write;
mod library;
mod parquet_damage;
mod truncation;
