//! The writer options formats declare (`--compression`, …), gathered from the registry into
//! command-line arguments: no command names a format or its options.

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};

use crate::formats::registry;
use crate::formats::GivenFlags;

/// The values given for format-declared writer options: (flag, name used, value; `None`
/// for a switch).
#[derive(Debug, Clone, Default)]
pub struct FormatOptions {
    given: Vec<(&'static str, String, Option<String>)>,
}

/// Every value some format accepts for `flag` (each writer checks its own).
fn accepted_values(flag: &str) -> Vec<&'static str> {
    let mut values: Vec<&'static str> = Vec::new();
    for (_, o) in registry::formats_with_option(flag) {
        for v in o.values {
            if !values.contains(v) {
                values.push(v);
            }
        }
    }
    values
}

/// Every older name some format accepts for `flag` (`--tes-compression`, 3es's), whichever
/// format comes first in the registry.
fn aliases(flag: &str) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for (_, o) in registry::formats_with_option(flag) {
        for a in o.aliases {
            if !names.contains(a) {
                names.push(a);
            }
        }
    }
    names
}

/// An option's help: its text, then the formats that take it, their values and default.
fn help(flag: &str, text: &str) -> String {
    let which: Vec<String> = registry::formats_with_option(flag)
        .iter()
        .map(|(f, o)| match (o.values.split_first(), o.default) {
            (None, _) => f.name().to_string(),
            (Some(_), Some(default)) => {
                format!("{}: {} (default: {default})", f.name(), o.values.join(", "))
            }
            (Some((first, rest)), None) if !rest.is_empty() => {
                format!("{}: {first} (default), {}", f.name(), rest.join(", "))
            }
            _ => format!("{}: {}", f.name(), o.values.join(", ")),
        })
        .collect();
    format!("{text} ({})", which.join("; "))
}

impl Args for FormatOptions {
    fn augment_args(mut cmd: Command) -> Command {
        for option in registry::write_options() {
            if option.values.is_empty() {
                cmd = cmd.arg(
                    Arg::new(option.flag)
                        .long(option.flag)
                        .help(help(option.flag, option.help))
                        .action(ArgAction::SetTrue),
                );
                continue;
            }
            let values = accepted_values(option.flag);
            cmd = cmd.arg(
                Arg::new(option.flag)
                    .long(option.flag)
                    .value_name("VALUE")
                    .help(help(option.flag, option.help))
                    .value_parser(clap::builder::PossibleValuesParser::new(values.clone()))
                    .action(ArgAction::Set),
            );
            for alias in aliases(option.flag) {
                cmd = cmd.arg(
                    Arg::new(alias)
                        .long(alias)
                        .value_name("VALUE")
                        .hide(true)
                        .conflicts_with(option.flag)
                        .value_parser(clap::builder::PossibleValuesParser::new(values.clone()))
                        .action(ArgAction::Set),
                );
            }
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for FormatOptions {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut given = Vec::new();
        for option in registry::write_options() {
            if option.values.is_empty() {
                if matches.get_flag(option.flag) {
                    given.push((option.flag, option.flag.to_string(), None));
                }
                continue;
            }
            for name in std::iter::once(option.flag).chain(aliases(option.flag)) {
                if let Some(value) = matches.get_one::<String>(name) {
                    given.push((option.flag, name.to_string(), Some(value.clone())));
                }
            }
        }
        Ok(FormatOptions { given })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl FormatOptions {
    /// The flags given; the pipeline checks them against the output format.
    pub fn given(&self) -> GivenFlags {
        let mut flags = GivenFlags::default();
        for (flag, given_as, value) in &self.given {
            flags.push(flag, given_as, value.clone());
        }
        flags
    }
}
