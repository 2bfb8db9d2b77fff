//! One folder per family, as in `src/formats/`, and `export/` for the output-only formats.

mod elodin;
mod export;
mod icarus;
mod nanover;
mod tes;
mod xrec;
