//! simrec's integration tests, in one binary (ripgrep's layout): the crate is linked once
//! for all of them, not once per file. `cargo test --test it <filter>` runs a part, e.g.
//! `cargo test --test it formats::icarus::` or `cargo test --test it cli::slice`.
//!
//! - `cli/`: commands through the built binary that hold for every format;
//! - `formats/<family>/`: one family's formats, through the library and the binary
//!   (`cli*.rs`), and `formats/export/` for the output-only formats;
//! - `mapping/`: one family's recordings in another family's model;
//! - `pipeline/`: the pipeline's stages through the library;
//! - `util/`: the helpers, and the counting allocator (`util/alloc.rs`), the binary's one
//!   global allocator.

mod cli;
mod formats;
mod mapping;
mod pipeline;
mod util;
