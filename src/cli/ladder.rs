//! `ladder`: a player rated on one Elo scale against the variant's fixed anchors
//! ([`ninjazero_arena::ladder`]), the games kept in the ladder directory for the next run.

use super::numbers::{whole, MAX_THREADS};
use super::{available_threads, parse_variant, progress_bar};
use anyhow::Context;
use clap::Args;
use ninjazero_arena::{run_ladder, LadderJob, LadderReport, LadderSettings, Shard};
use ninjazero_model::parse_device;
use ninjazero_rules::Variant;
use ninjazero_search::EngineSpec;
use tch::Device;

#[derive(Args, Debug)]
pub struct LadderArgs {
    /// Variant id (see `ninjazero perft --help`).
    #[arg(long, value_parser = parse_variant)]
    variant: Variant,
    /// The player to rate, as for `arena` (random, uniform:ms=T, mcts:PATH.safetensors:ms=T,
    /// alphabeta:depth=D or :ms=T, uci:COMMAND:depth=D|nodes=N|ms=T[:OPTION=VALUE...]). It
    /// plays with its spec's own limits: give it :ms=T for the same time as the
    /// time-limited anchors.
    #[arg(long)]
    player: String,
    /// Milliseconds per move of the time-limited anchors (uniform:ms=T, alphabeta:ms=T);
    /// the others are fixed-depth. [range: 1 to 600000]
    #[arg(long, value_parser = whole::<u64>(1, 600_000), default_value_t = 100)]
    ms: u64,
    /// Games per pairing (rounded up to an even number: each opening is played with both
    /// colours). [range: 1 to 100000]
    #[arg(long, value_parser = whole::<usize>(1, 100_000), default_value_t = 20)]
    games: usize,
    /// Where the games are stored, one file per pairing: a directory, file:///abs/path or
    /// s3://bucket/prefix (default: ladders/VARIANT). A rerun reuses them, as do later
    /// ladders of other players, and it merges the parts that `worker match ladder` jobs
    /// stored there.
    #[arg(long)]
    dir: Option<String>,
    /// Random legal plies from the start position that make an opening. [range: 0 to 200]
    #[arg(long, value_parser = whole::<usize>(0, 200), default_value_t = 6)]
    opening_plies: usize,
    /// Games reaching this many plies are adjudicated: won by a side 3 Pawns or more ahead
    /// in material, else drawn. [range: 1 to 10000]
    #[arg(long, value_parser = whole::<u32>(1, 10_000), default_value_t = 300)]
    max_plies: u32,
    /// Seed of the openings.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Games played at the same time (default: one per core). With time-limited players,
    /// more threads than cores starve them of time. [range: 1 to 1024]
    #[arg(long, value_parser = whole::<usize>(1, MAX_THREADS))]
    threads: Option<usize>,
    /// cpu, cuda, cuda:N or auto (for checkpoint players).
    #[arg(long, value_parser = parse_device, default_value = "auto")]
    device: Device,
}

/// The ladder job the arguments ask for (`shard`: one job's share of it).
pub fn job(args: LadderArgs, shard: Option<Shard>) -> anyhow::Result<LadderJob> {
    // The spec's own error names the player: `player 'x': ...`.
    let player: EngineSpec = args.player.parse()?;
    let threads = args.threads.unwrap_or_else(available_threads).max(1);
    Ok(LadderJob {
        variant: args.variant,
        player,
        ms: args.ms,
        games: args.games,
        location: args
            .dir
            .unwrap_or_else(|| format!("ladders/{}", args.variant.id())),
        settings: LadderSettings {
            opening_plies: args.opening_plies,
            max_plies: args.max_plies,
            seed: args.seed,
        },
        threads,
        device: args.device,
        shard,
    })
}

/// Plays (or reuses) the ladder's games with a progress bar.
pub fn play(job: &LadderJob) -> anyhow::Result<LadderReport> {
    let bar = progress_bar(0, "{bar:30} {pos}/{len} games, {elapsed} elapsed | {msg}");
    let report = run_ladder(job, &|done, total, pairing| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        bar.set_message(pairing.to_string());
    })
    .with_context(|| format!("ladder of {}", job.player))?;
    bar.finish_and_clear();
    Ok(report)
}

pub fn run(args: LadderArgs) -> anyhow::Result<()> {
    let job = job(args, None)?;
    let report = play(&job)?;
    print!("{}", report.table());
    println!(
        "{} games played now, {} reused from {} (random fixed at 0; 95 % intervals)",
        report.played, report.reused, job.location
    );
    Ok(())
}
