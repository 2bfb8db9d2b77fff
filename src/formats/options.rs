//! Writer flags as given on the command line (or built by a library user), checked once
//! against the declarations of the format they go to. Each format turns them into its own
//! typed options (`XrecWriteOptions::from_flags`, …) when it creates its writer.

use super::format::{Format, WriteOption};

/// One flag given: the declared flag, the name it was given as (an alias, for messages),
/// and its value (`None` for a switch).
#[derive(Debug, Clone)]
struct Given {
    flag: &'static str,
    given_as: String,
    value: Option<String>,
}

/// The writer flags of one run, and what the run asks of every writer beyond them.
#[derive(Debug, Clone, Default)]
pub struct GivenFlags {
    given: Vec<Given>,
    /// `recover` writes: repair what dropping damaged records breaks (an XREC End, a 3es
    /// scene's frame count).
    pub repair: bool,
}

/// A flag the chosen output format does not take, or not with that value (a usage error).
#[derive(Debug, thiserror::Error)]
pub enum OptionError {
    #[error("--{given_as} applies to {} output; this output is {format}", takers.join(", "))]
    NotTaken {
        given_as: String,
        takers: Vec<&'static str>,
        format: &'static str,
    },
    #[error("--{given_as} {value}: {format} takes {}", takes.join(", "))]
    Value {
        given_as: String,
        value: String,
        format: &'static str,
        takes: &'static [&'static str],
    },
}

impl GivenFlags {
    /// No flags, for `recover`: repair what dropping damaged records breaks.
    pub fn repairing() -> GivenFlags {
        GivenFlags {
            repair: true,
            ..GivenFlags::default()
        }
    }

    /// `flag` given as `given_as` (an alias, or the flag itself), with its value (`None`:
    /// a switch).
    pub fn push(&mut self, flag: &'static str, given_as: &str, value: Option<String>) {
        self.given.push(Given {
            flag,
            given_as: given_as.to_string(),
            value,
        });
    }

    /// A flag's value, as given.
    pub fn value(&self, flag: &str) -> Option<&str> {
        self.given
            .iter()
            .find(|g| g.flag == flag)
            .and_then(|g| g.value.as_deref())
    }

    /// Whether a switch was given.
    pub fn switch(&self, flag: &str) -> bool {
        self.given.iter().any(|g| g.flag == flag)
    }

    /// A flag's value as one of `choices` (value, meaning); the value was checked against
    /// the declaration by [`GivenFlags::check`], so an unknown one is the format's own
    /// inconsistency, refused the same way.
    pub fn choice<T: Copy>(
        &self,
        option: &WriteOption,
        format: &'static str,
        choices: &[(&str, T)],
    ) -> Result<Option<T>, OptionError> {
        let Some(given) = self.given.iter().find(|g| g.flag == option.flag) else {
            return Ok(None);
        };
        let value = given.value.as_deref().unwrap_or_default();
        match choices.iter().find(|(name, _)| *name == value) {
            Some((_, meaning)) => Ok(Some(*meaning)),
            None => Err(OptionError::Value {
                given_as: given.given_as.clone(),
                value: value.to_string(),
                format,
                takes: option.values,
            }),
        }
    }

    /// Checks that `format` takes every flag given, with the values given; `takers` names
    /// the formats that take a flag (the registry knows them, not a format).
    pub fn check(
        &self,
        format: &dyn Format,
        takers: &dyn Fn(&str) -> Vec<&'static str>,
    ) -> Result<(), OptionError> {
        for g in &self.given {
            let Some(option) = format.write_options().iter().find(|o| o.flag == g.flag) else {
                return Err(OptionError::NotTaken {
                    given_as: g.given_as.clone(),
                    takers: takers(g.flag),
                    format: format.name(),
                });
            };
            if let Some(value) = &g.value {
                if !option.values.is_empty() && !option.values.contains(&value.as_str()) {
                    return Err(OptionError::Value {
                        given_as: g.given_as.clone(),
                        value: value.clone(),
                        format: format.name(),
                        takes: option.values,
                    });
                }
            }
        }
        Ok(())
    }
}
