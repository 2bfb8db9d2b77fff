//! The Icarus family: Icarus's signal recordings, one value per signal per frame. Its
//! formats: `.icarec` (`icarec/`), Icarus HDF5 (`hdf5/`) and Icarus CSV (`csv/`); what they
//! share: signal types, names and frame windows (`common.rs`), the schema checks of
//! `validate --against` (`compat.rs`) and the values of a warm-start snapshot
//! (`snapshot.rs`); and how a recording of another family becomes signals (`mapping.rs`).

pub mod common;
pub mod compat;
pub mod csv;
pub mod hdf5;
pub mod icarec;
pub mod mapping;
pub mod snapshot;
