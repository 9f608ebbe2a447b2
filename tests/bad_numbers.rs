//! Every numeric option of every command, given numbers it cannot honour, through the real
//! binary: each must be a usage error that names the option (exit 2), never a panic and
//! never work started. The options and their ranges are read from `--help`, so an option
//! added later is covered as soon as its help states its range (a unit test in the binary
//! makes sure every numeric option does).

use ninjazero_testkit::Binary;

const NINJAZERO: Binary = Binary(env!("CARGO_BIN_EXE_ninjazero"));

fn help_of(path: &[&str]) -> String {
    let mut args = path.to_vec();
    args.push("--help");
    let out = NINJAZERO.output(&args);
    assert!(out.status.success(), "{args:?} --help failed");
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

/// The subcommand names listed under `Commands:` in a help text.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// Every leaf command, as its argument path (`["bench", "nn"]`).
fn leaf_commands() -> Vec<Vec<String>> {
    let mut leaves = Vec::new();
    let mut pending = vec![Vec::<String>::new()];
    while let Some(path) = pending.pop() {
        let refs: Vec<&str> = path.iter().map(String::as_str).collect();
        let subs = subcommands(&help_of(&refs));
        if subs.is_empty() {
            leaves.push(path);
            continue;
        }
        for sub in subs {
            let mut child = path.clone();
            child.push(sub);
            pending.push(child);
        }
    }
    leaves
}

/// (option, min, max, min excluded) for each option whose help states a range.
fn ranged_options(help: &str) -> Vec<(String, f64, f64, bool)> {
    let mut found = Vec::new();
    let mut option = None;
    for line in help.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('-') {
            option = trimmed
                .split([' ', ','])
                .find(|word| word.starts_with("--"))
                .map(str::to_string);
        }
        let (Some(name), Some(at)) = (&option, line.find("[range: ")) else {
            continue;
        };
        let body = &line[at + "[range: ".len()..];
        let body = &body[..body.find(']').expect("a closed range")];
        let (above, body) = match body.strip_prefix("above ") {
            Some(rest) => (true, rest),
            None => (false, body),
        };
        let (min, max) = body.split_once(" to ").expect("MIN to MAX");
        found.push((
            name.clone(),
            min.parse().expect("a number"),
            max.parse().expect("a number"),
            above,
        ));
        option = None;
    }
    found
}

/// Numbers each option must refuse: both sides of its range and one that is no number
/// (the unit test in the binary tries many more against the parsers themselves).
fn bad_values(min: f64, max: f64, above: bool) -> Vec<String> {
    let whole = min.fract() == 0.0 && max.fract() == 0.0 && !above;
    if whole {
        vec![
            format!("{}", min as i128 - 1),
            format!("{}", max as i128 + 1),
            "abc".to_string(),
        ]
    } else {
        let below = if above { min } else { min - 1.0 };
        vec![below.to_string(), format!("{max}1"), "NaN".to_string()]
    }
}

#[test]
fn every_numeric_option_rejects_numbers_out_of_range() {
    let mut invocations = Vec::new();
    let mut commands_with_numbers = 0;
    for path in leaf_commands() {
        let refs: Vec<&str> = path.iter().map(String::as_str).collect();
        let options = ranged_options(&help_of(&refs));
        commands_with_numbers += usize::from(!options.is_empty());
        for (option, min, max, above) in options {
            for bad in bad_values(min, max, above) {
                let mut args = path.clone();
                args.push(format!("{option}={bad}"));
                invocations.push((option.clone(), args));
            }
        }
    }
    // perft, bench perft/nn/train, fuzz, selfplay, arena, play, train, pipeline, values.
    assert!(
        commands_with_numbers >= 11,
        "{commands_with_numbers} commands"
    );
    assert!(
        invocations.len() > 100,
        "only {} bad invocations",
        invocations.len()
    );
    // Each start of the binary loads libtorch: spread them over a few threads.
    let chunk = invocations.len().div_ceil(4);
    std::thread::scope(|scope| {
        for part in invocations.chunks(chunk) {
            scope.spawn(move || {
                for (option, args) in part {
                    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                    let out = NINJAZERO.output(&refs);
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    assert_eq!(
                        out.status.code(),
                        Some(2),
                        "ninjazero {} should be a usage error: {stderr}",
                        args.join(" ")
                    );
                    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
                    assert!(
                        stderr.contains(option.as_str()) && stderr.contains("expected"),
                        "{args:?}: the message names neither the option nor the range: {stderr}"
                    );
                }
            });
        }
    });
}
