//! `bench`: speed measurements printed as tables.

use super::numbers::real;
use anyhow::{bail, Context as _};
use clap::Subcommand;
use ninjazero_rules::{perft, Position, Variant};
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Perft nodes/second (single thread, bulk counting at the last ply) from each
    /// variant's start position, each run for at least `--seconds`.
    Perft {
        /// Minimum measuring time per position. [range: 0.01 to 3600]
        #[arg(long, value_parser = real(0.01, 3600.0, false), default_value_t = 2.0)]
        seconds: f64,
    },
    /// Network positions/s per preset and batch size, achieved GFLOP/s against a same-run
    /// matrix multiply, time outside the forward pass, and the same network in PyTorch.
    Nn(super::bench_nn::BenchNnArgs),
    /// Training samples/s per preset (network and batch) against the same loop in
    /// PyTorch, the real loader's rate and a short real run's loader wait share.
    Train(super::train_commands::BenchTrainArgs),
    /// One game's MCTS with a network: simulations/s by leaves per network call (virtual
    /// loss, the `batch=` of an mcts player) against one leaf at a time, and how often the
    /// batched search picks the same move.
    Search(super::bench_search::BenchSearchArgs),
}

pub fn run(command: BenchCommand) -> anyhow::Result<()> {
    match command {
        BenchCommand::Perft { seconds } => bench_perft(Duration::from_secs_f64(seconds)),
        BenchCommand::Nn(args) => super::bench_nn::run(args),
        BenchCommand::Train(args) => super::train_commands::run_bench(args),
        BenchCommand::Search(args) => super::bench_search::run(args),
    }
}

fn bench_perft(min_time: Duration) -> anyhow::Result<()> {
    println!(
        "{:<20} {:>5} {:>14} {:>9} {:>10}",
        "variant", "depth", "nodes", "seconds", "Mnps"
    );
    for variant in Variant::ALL {
        let pos = Position::start(variant);
        // Deepen until one perft takes a noticeable share of the budget, then repeat it.
        let mut depth = 1;
        while depth < 8 {
            let start = Instant::now();
            perft(&pos, depth);
            if start.elapsed() * 8 > min_time {
                break;
            }
            depth += 1;
        }
        let (mut nodes, start) = (0u64, Instant::now());
        // At least one perft, so that a row never reads zero nodes.
        loop {
            nodes += perft(&pos, depth);
            if start.elapsed() >= min_time {
                break;
            }
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{:<20} {:>5} {:>14} {:>9.2} {:>10.1}",
            variant.id(),
            depth,
            nodes,
            secs,
            nodes as f64 / secs / 1e6
        );
    }
    Ok(())
}

/// How long a PyTorch reference may take beyond its own measuring time before a bench goes
/// on without it: importing torch and starting CUDA take seconds, so a reference that has
/// not answered after this is stuck, and the bench must not hang with it.
pub const REFERENCE_GRACE: Duration = Duration::from_secs(120);

/// The project's Python (`.venv/bin/python`, made by scripts/setup.sh), which runs the
/// PyTorch reference scripts.
pub fn venv_python() -> anyhow::Result<PathBuf> {
    let python = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    if !python.exists() {
        bail!("{} not found (run scripts/setup.sh)", python.display());
    }
    Ok(python)
}

/// Runs `command` to its end and returns its output, unless it takes longer than `limit`:
/// then it is killed and the error says so (`what` names it).
pub fn output_within(mut command: Command, limit: Duration, what: &str) -> anyhow::Result<Output> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| what.to_string())?;
    // Read while waiting, so that a chatty child never blocks on a full pipe.
    let stdout = read_in_background(child.stdout.take());
    let stderr = read_in_background(child.stderr.take());
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().with_context(|| what.to_string())? {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let seconds = limit.as_secs_f64();
            bail!("{what} did not finish within {seconds:.1} s and was stopped");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let collected = |reader: std::thread::JoinHandle<Vec<u8>>| reader.join().unwrap_or_default();
    Ok(Output {
        status,
        stdout: collected(stdout),
        stderr: collected(stderr),
    })
}

/// All of `pipe`, read on a thread of its own.
fn read_in_background(
    pipe: Option<impl Read + Send + 'static>,
) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_that_does_not_finish_in_time_is_stopped() {
        let mut echo = Command::new("echo");
        echo.arg("ready");
        let output = output_within(echo, Duration::from_secs(30), "echo").unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout), "ready\n");

        let mut sleep = Command::new("sleep");
        sleep.arg("30");
        let start = Instant::now();
        let error = output_within(sleep, Duration::from_millis(200), "sleep").unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(10));
        assert_eq!(
            error.to_string(),
            "sleep did not finish within 0.2 s and was stopped"
        );
    }
}
