//! What a family is to simrec: formats sharing one model of a recording, and the mapping
//! that reads a recording of another family in that model. Each family's folder declares
//! its `FAMILY`; the registry lists them.

use super::format::Format;
use super::mapping::Mapping;

/// A family of formats: `formats` in the order detection tries them (of formats equally
/// sure of a file the last wins, `registry::detect`), and the `mapping` its writers that
/// take the family's model (`WriterTraits::takes_family_model`) read other families through.
pub struct Family {
    /// Its name (`nanover`), which a mapping may ask about ([`Mapping::maps`]).
    pub name: &'static str,
    pub formats: &'static [&'static dyn Format],
    /// `None`: its writers take every channel as it is (the exports).
    pub mapping: Option<&'static dyn Mapping>,
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

    /// Whether `format` is one of this family's.
    pub fn has(&self, format: &dyn Format) -> bool {
        self.formats.iter().any(|f| f.name() == format.name())
    }
}
