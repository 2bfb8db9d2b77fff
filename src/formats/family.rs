//! What a family is to simrec: formats sharing one model of a recording, and the mapping
//! that reads a recording of another family in that model. Each family's folder declares
//! its `FAMILY`; the registry lists them.

use super::format::Format;
use super::mapping::Mapping;
use crate::model::DType;

/// The type a key the family defines has, whichever of its formats a recording comes from
/// and however one file stores it (NanoVer's `.traj` stores counts as doubles and names as
/// string arrays, its `.nanover.zip` as integers and msgpack lists): writers that type their
/// columns per file (the wide Parquet table) give the key this type, so that the files of
/// one family agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyType {
    Scalar(DType),
    /// A list of this element type, whatever its shape.
    List(DType),
}

/// A family of formats: `formats` in the order detection tries them (of formats equally
/// sure of a file the last wins, `registry::detect`), and the `mapping` its writers that
/// take the family's model (`WriterTraits::takes_family_model`) read other families through.
pub struct Family {
    /// Its name (`nanover`), which a mapping may ask about ([`Mapping::maps`]).
    pub name: &'static str,
    pub formats: &'static [&'static dyn Format],
    /// `None`: its writers take every channel as it is (the exports).
    pub mapping: Option<&'static dyn Mapping>,
    /// The keys the family defines a type for, whatever a file stores ([`KeyType`]).
    pub key_types: &'static [(&'static str, KeyType)],
}

impl Family {
    /// Whether a recording whose header names `recorded` was read from this family's
    /// formats only: each format a merge joined (`a+b`) is one of them (`Format::names`).
    pub fn recorded(&self, recorded: &str) -> bool {
        recorded.split('+').all(|part| {
            self.formats
                .iter()
                .any(|format| format.names().contains(&part))
        })
    }

    /// The type the family gives `key`, if it defines one.
    pub fn key_type(&self, key: &str) -> Option<KeyType> {
        self.key_types
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, t)| *t)
    }

    /// Whether `format` is one of this family's.
    pub fn has(&self, format: &dyn Format) -> bool {
        self.formats.iter().any(|f| f.name() == format.name())
    }
}
