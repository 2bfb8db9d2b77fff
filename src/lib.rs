//! simrec: inspect, validate, convert, slice and merge simulation recordings.
//!
//! Layers, from the bottom: [`model`] (records and values, no I/O), [`report`]
//! (findings, summaries, loss), [`formats`] (one folder per family of formats:
//! readers, writers, validation, detection, mappings), [`pipeline`] (merge, windows,
//! selection), and the command-line front end in [`cli`].

pub mod cli;
// Its stage macro (`stage_source!`) serves the pipeline's stages too.
#[macro_use]
pub mod formats;
pub mod model;
pub mod pipeline;
pub mod report;
