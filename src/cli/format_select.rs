//! Selectors a format defines for itself (XREC's `--type` and `--chapter`), gathered from
//! the formats' slicers into command-line arguments: given to the format's own slice
//! (`Slicer::open_slice`, `SliceRequest::selectors`), refused by formats that have none.

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};

use crate::formats::registry;

/// Format-specific selectors given: (selector, value), in the order the formats declare them.
#[derive(Debug, Clone, Default)]
pub struct FormatSelectArgs {
    given: Vec<(String, String)>,
}

impl Args for FormatSelectArgs {
    fn augment_args(mut cmd: Command) -> Command {
        for s in registry::selectors() {
            let action = match s.repeatable {
                true => ArgAction::Append,
                false => ArgAction::Set,
            };
            cmd = cmd.arg(
                Arg::new(s.flag)
                    .long(s.flag)
                    .value_name(s.value_name)
                    .help(s.help)
                    .action(action),
            );
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for FormatSelectArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut given = Vec::new();
        for s in registry::selectors() {
            for value in matches.get_many::<String>(s.flag).into_iter().flatten() {
                given.push((s.flag.to_string(), value.clone()));
            }
        }
        Ok(FormatSelectArgs { given })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl FormatSelectArgs {
    /// (selector, value) pairs, as `SliceRequest::selectors` carries them.
    pub fn selectors(&self) -> Vec<(String, String)> {
        self.given.clone()
    }
}
