//! Elodin replay directories: the library, damaged Parquet and side files, the commands.

mod cli;
mod cli_write;
mod db_write;
mod library;
mod parquet_damage;
mod truncation;
