//! Recordings of one family read in the model of another, for a writer that takes only its
//! own family's channels (docs/formats/mapping.md).

pub mod nanover;

pub use nanover::ToNanover;
