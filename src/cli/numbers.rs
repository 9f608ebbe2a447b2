//! Numeric options: one way to parse and bound them, for every command.
//!
//! Every numeric option ends its help with its accepted range, `[range: MIN to MAX]` (or
//! `[range: above MIN to MAX]` for a real number that must exceed MIN), and parses with
//! [`whole`] or [`real`] over exactly that range. A value outside it, `NaN`, an infinity or
//! text that is no number is a usage error (exit 2) that names the option and the range, so
//! no command starts work with a number it cannot honour. The unit test below walks every
//! command and checks both halves for each numeric option.

use clap::builder::{StringValueParser, TypedValueParser};

/// A whole number in `[min, max]`, converted to the option's type `T`.
pub fn whole<T>(min: u64, max: u64) -> impl TypedValueParser<Value = T>
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
{
    StringValueParser::new().try_map(move |text: String| {
        let out_of_range = || format!("expected a whole number from {min} to {max}");
        let value: u64 = text.trim().parse().map_err(|_| out_of_range())?;
        if !(min..=max).contains(&value) {
            return Err(out_of_range());
        }
        T::try_from(value).map_err(|_| out_of_range())
    })
}

/// A finite real number in `[min, max]`, or in `(min, max]` when `above_min`.
pub fn real(min: f64, max: f64, above_min: bool) -> impl TypedValueParser<Value = f64> {
    StringValueParser::new().try_map(move |text: String| {
        let out_of_range = || {
            let lower = if above_min { "above " } else { "" };
            format!("expected a number {lower}{min} to {max}")
        };
        let value: f64 = text.trim().parse().map_err(|_| out_of_range())?;
        let above_lower = if above_min { value > min } else { value >= min };
        // NaN fails both comparisons, so it is rejected here too.
        if above_lower && value <= max {
            Ok(value)
        } else {
            Err(out_of_range())
        }
    })
}

/// Threads a command may use: one per core by default, bounded by what libtorch accepts.
pub const MAX_THREADS: u64 = 1024;

#[cfg(test)]
mod tests {
    use crate::cli::Cli;
    use clap::error::ErrorKind;
    use clap::{Arg, Command, CommandFactory};
    use std::any::TypeId;

    /// The range an option's help states: (min, max, min excluded).
    fn stated_range(help: &str) -> Option<(f64, f64, bool)> {
        let start = help.rfind("[range: ")? + "[range: ".len();
        let body = help[start..].strip_suffix(']')?;
        let (above, body) = match body.strip_prefix("above ") {
            Some(rest) => (true, rest),
            None => (false, body),
        };
        let (min, max) = body.split_once(" to ")?;
        Some((min.parse().ok()?, max.parse().ok()?, above))
    }

    /// Whether `--ARG=value` gets past the option's parser (a missing required option,
    /// checked after all values are parsed, does not count against it).
    fn accepts(command: &Command, arg: &Arg, value: &str) -> bool {
        let given = format!("--{}={value}", arg.get_long().expect("a long option"));
        match command
            .clone()
            .try_get_matches_from([command.get_name(), &given])
        {
            Ok(_) => true,
            Err(e) => !matches!(
                e.kind(),
                ErrorKind::ValueValidation | ErrorKind::InvalidValue
            ),
        }
    }

    /// Options whose parser yields a number, with their command's path.
    fn numeric_options() -> Vec<(String, Command, Arg)> {
        let numbers = [
            TypeId::of::<u8>(),
            TypeId::of::<u16>(),
            TypeId::of::<u32>(),
            TypeId::of::<u64>(),
            TypeId::of::<usize>(),
            TypeId::of::<i32>(),
            TypeId::of::<i64>(),
            TypeId::of::<f32>(),
            TypeId::of::<f64>(),
        ];
        let mut found = Vec::new();
        let mut pending = vec![(String::from("ninjazero"), Cli::command())];
        while let Some((path, mut command)) = pending.pop() {
            command.build();
            for arg in command.get_arguments() {
                let type_id = arg.get_value_parser().type_id();
                if numbers.iter().any(|t| type_id == *t) {
                    found.push((path.clone(), command.clone(), arg.clone()));
                }
            }
            for sub in command.get_subcommands() {
                pending.push((format!("{path} {}", sub.get_name()), sub.clone()));
            }
        }
        found
    }

    #[test]
    fn every_numeric_option_states_and_enforces_its_range() {
        let options = numeric_options();
        assert!(options.len() > 40, "found only {} options", options.len());
        for (path, command, arg) in options {
            let name = format!("{path} --{}", arg.get_id());
            // A seed is any 64-bit number: there is no range to state.
            if arg.get_id() == "seed" {
                assert!(!accepts(&command, &arg, "-1.5"), "{name}");
                continue;
            }
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            let (min, max, above) = stated_range(&help)
                .unwrap_or_else(|| panic!("{name}: help states no [range: ...]: {help:?}"));
            let is_whole = min.fract() == 0.0 && max.fract() == 0.0 && !above;
            for good in [min, max] {
                if good == min && above {
                    continue;
                }
                let text = if is_whole {
                    format!("{good:.0}")
                } else {
                    good.to_string()
                };
                assert!(accepts(&command, &arg, &text), "{name} refuses {text}");
            }
            if above {
                let just_above = format!("{}", min + (max - min) * 1e-6);
                assert!(accepts(&command, &arg, &just_above), "{name} {just_above}");
                assert!(!accepts(&command, &arg, &min.to_string()), "{name} {min}");
            }
            let below = if is_whole {
                format!("{}", min as i128 - 1)
            } else {
                format!("{}", min - (max - min).max(1.0) * 1e-3)
            };
            let beyond = if is_whole {
                format!("{}", max as i128 + 1)
            } else {
                format!("{}", max * 1.001 + 1e-9)
            };
            for bad in [
                below.as_str(),
                beyond.as_str(),
                "NaN",
                "inf",
                "-inf",
                "1e400",
                "abc",
                "",
                "99999999999999999999999",
            ] {
                assert!(!accepts(&command, &arg, bad), "{name} accepts {bad:?}");
            }
        }
    }

    #[test]
    fn ranges_are_read_from_help() {
        assert_eq!(stated_range("x [range: 1 to 8]"), Some((1.0, 8.0, false)));
        assert_eq!(
            stated_range("x [range: above 0 to 0.5]"),
            Some((0.0, 0.5, true))
        );
        assert_eq!(stated_range("no range"), None);
    }
}
