//! XREC-S sessions: the library and the commands.

mod cli;
mod library;
