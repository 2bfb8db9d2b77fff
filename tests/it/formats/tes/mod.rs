//! 3es captures: the reader, merge and the commands.

mod cli;
mod cli_field;
mod merge;
mod reader;
