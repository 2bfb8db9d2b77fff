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

use crate::formats::Family;

/// The family, as the registry lists it.
pub static FAMILY: Family = Family {
    name: "icarus",
    // CSV before `.icarec`: of formats equally sure of a file the last wins, and a ustar
    // archive is an `.icarec` before anything its first member's bytes may look like (spec §A1).
    formats: &[&hdf5::IcarusHdf5, &csv::IcarusCsv, &icarec::Icarec],
    mapping: Some(&mapping::IntoIcarus),
    key_types: &[],
};
