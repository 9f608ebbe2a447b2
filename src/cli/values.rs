//! `values`: what each piece is worth, in Pawns with 95 % intervals, by outcome
//! regression over self-play games, handicap matches and (with a model) a value-network
//! probe ([`ninjazero_values::study`]); written as Markdown, CSV and a PNG chart.

use super::numbers::{whole, MAX_THREADS};
use super::{available_threads, parse_variant, StageBars};
use clap::Args;
use ninjazero_model::parse_device;
use ninjazero_rules::Variant;
use ninjazero_search::EngineSpec;
use ninjazero_values::rounds::default_player;
use ninjazero_values::Study;
use std::path::PathBuf;
use tch::Device;

#[derive(Args, Debug)]
pub struct ValuesArgs {
    /// Variant id (see `ninjazero perft --help`).
    #[arg(long, value_parser = parse_variant)]
    variant: Variant,
    /// Self-play dataset for the outcome regression (and the probe's positions): a
    /// directory of `.arrow` files or a pipeline generation's (`RUN/selfplay/gen-0009`).
    /// Repeat it to read several as one (a run's last window). Without one the study is
    /// the handicap matches alone.
    #[arg(long)]
    data: Vec<PathBuf>,
    /// Checkpoint: the handicap matches search with it, and the value-network probe runs.
    /// Without one the matches use the model-free search and there is no probe.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Player of the handicap matches, as for `arena` (e.g. alphabeta:depth=3). Default:
    /// MCTS with --model at --sims simulations, or the model-free MCTS.
    #[arg(long)]
    player: Option<EngineSpec>,
    /// Output: a directory, file:///abs/path or s3://bucket/prefix, holding values.md,
    /// values.csv, values.png, match-values.txt (the match values as an alpha-beta
    /// `values=` option) and the match results under matches/ (a rerun keeps the games
    /// already played, and merges what `worker match values` jobs stored). Default:
    /// values-VARIANT.
    #[arg(long)]
    out: Option<String>,
    /// Games per handicap (Pawn odds and each piece), half with each colour handicapped;
    /// 0 skips the matches. [range: 0 to 10000000]
    #[arg(long, value_parser = whole::<usize>(0, 10_000_000), default_value_t = 400)]
    games: usize,
    /// Simulations per move of the default (MCTS) match player; a --player says its own.
    /// [range: 1 to 1000000]
    #[arg(long, value_parser = whole::<u64>(1, 1_000_000), default_value_t = 64, conflicts_with = "player")]
    sims: u64,
    /// Self-consistent rounds for an alpha-beta --player: round 1 plays with every piece
    /// worth 1, each later round with the values the previous round measured, so that the
    /// engine is told nothing about the answer. [range: 1 to 20]
    #[arg(long, value_parser = whole::<usize>(1, 20), default_value_t = 1)]
    rounds: usize,
    /// Random plies from the handicap position that open each match game. [range: 0 to 200]
    #[arg(long, value_parser = whole::<usize>(0, 200), default_value_t = 4)]
    opening_plies: usize,
    /// Handicap games longer than this are drawn (adjudicating them on material would
    /// presuppose the values being measured). [range: 1 to 10000]
    #[arg(long, value_parser = whole::<u32>(1, 10_000), default_value_t = 400)]
    max_plies: u32,
    /// Match games played at once, one per thread (default: one per core). [range: 1 to 1024]
    #[arg(long, value_parser = whole::<usize>(1, MAX_THREADS))]
    threads: Option<usize>,
    /// Positions sampled from the data for the probe. [range: 1 to 10000000]
    #[arg(long, value_parser = whole::<usize>(1, 10_000_000), default_value_t = 4000)]
    positions: usize,
    /// Bootstrap replicates behind each interval (at least 20, so that a 95 % interval has
    /// a sample on each side). [range: 20 to 100000]
    #[arg(long, value_parser = whole::<usize>(20, 100_000), default_value_t = 500)]
    bootstrap: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// cpu, cuda, cuda:N or auto.
    #[arg(long, value_parser = parse_device, default_value = "auto")]
    device: Device,
}

/// The study the arguments ask for, and its output directory; refused when it cannot give
/// a result (see [`Study::check`]).
pub fn study(args: ValuesArgs) -> anyhow::Result<(Study, String)> {
    let player = args
        .player
        .clone()
        .unwrap_or_else(|| default_player(args.model.as_deref(), args.sims));
    let variant = args.variant;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| format!("values-{variant}"));
    let study = Study {
        variant,
        data: args.data,
        model: args.model,
        player,
        games: args.games,
        rounds: args.rounds,
        opening_plies: args.opening_plies,
        max_plies: args.max_plies,
        threads: args.threads.unwrap_or_else(available_threads),
        positions: args.positions,
        bootstrap: args.bootstrap,
        seed: args.seed,
        device: args.device,
    };
    study.check()?;
    Ok((study, out))
}

pub fn run(args: ValuesArgs) -> anyhow::Result<()> {
    let (study, out) = study(args)?;
    let report = ninjazero_values::study::run(&study, &out, &StageBars::default())?;
    println!("{}", report.markdown);
    println!("wrote {out}/values.md, values.csv and values.png");
    Ok(())
}
