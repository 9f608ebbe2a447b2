//! `bench`: speed measurements printed as tables.

use super::numbers::real;
use clap::Subcommand;
use ninjazero_rules::{perft, Position, Variant};
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
