//! `arena`: two players over paired openings, with score, Elo and an optional SPRT.

use super::numbers::{whole, MAX_THREADS};
use super::{available_threads, parse_variant, progress_bar, CliResult};
use clap::Args;
use ninjazero_arena::{run_arena, ArenaConfig, SprtConfig, MAX_PAIRS};
use ninjazero_model::parse_device;
use ninjazero_rules::seed::{derive_seed, SeedStream};
use ninjazero_rules::Variant;
use ninjazero_search::EngineSpec;
use std::path::PathBuf;
use tch::Device;

#[derive(Args, Debug)]
pub struct ArenaArgs {
    /// Variant id (see `ninjazero perft --help`).
    #[arg(long, value_parser = parse_variant)]
    variant: Variant,
    /// Player A: random, uniform:sims=N (MCTS without a model),
    /// mcts:PATH.safetensors:sims=N, alphabeta:depth=D or alphabeta:ms=T
    /// (optionally :values=P=1,N=3,... and :mobility=W), alphabeta:PATH.safetensors:ms=T
    /// (alpha-beta evaluating with a network's value; with :pick=M instead evaluating
    /// material and mobility, the network's policy choosing among the moves at most M
    /// Pawns below the best), alphabeta:PATH.eval.json:ms=T (a learnt evaluation, `ninjazero
    /// fit-eval`); MCTS players take :ms=T (time per move) as well as or instead of
    /// :sims=N, :batch=B to evaluate B leaves per network call (more simulations in the
    /// same time), :captures=L to resolve captures at the leaves (L log-odds per piece won
    /// by force), and :eval=E.eval.json[:mix=M] to mix a learnt evaluation into every
    /// leaf's value (M of its log-odds, 0 to 1, default 0.5). An external UCI engine:
    /// uci:COMMAND with :depth=D, :nodes=N and/or :ms=T, optionally :timeout=S (seconds
    /// beyond its move time before it counts as hung, default 10) and engine options as
    /// :NAME=VALUE (e.g. uci:fairy-stockfish:depth=5:Skill Level=3); UCI_Variant is set
    /// from --variant. An engine that crashes, hangs or replies nonsense loses the game.
    #[arg(long)]
    a: EngineSpec,
    /// Player B, in the same form as A.
    #[arg(long)]
    b: EngineSpec,
    /// Openings; each is played twice with colours swapped. [range: 1 to 1000000]
    #[arg(long, value_parser = whole::<usize>(1, MAX_PAIRS as u64), default_value_t = 50)]
    pairs: usize,
    /// Random legal plies from the start position that make an opening. [range: 0 to 200]
    #[arg(long, value_parser = whole::<usize>(0, 200), default_value_t = 6)]
    opening_plies: usize,
    /// Games reaching this many plies are adjudicated: won by a side 3 Pawns or more ahead
    /// in material, else drawn. [range: 1 to 10000]
    #[arg(long, value_parser = whole::<u32>(1, 10_000), default_value_t = 300)]
    max_plies: u32,
    /// Seed of the openings (and of a random player).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Stop early by an SPRT of ELO0 against ELO1 (logistic Elo, alpha = beta = 0.05),
    /// e.g. `--sprt 0,10`; each from -1000 to 1000.
    #[arg(long, value_parser = parse_sprt, allow_hyphen_values = true)]
    sprt: Option<SprtConfig>,
    /// Write the result (games, score, Elo, SPRT verdict) as JSON.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Games played at the same time, each with its own players (the results do not depend
    /// on it). Default: one per core. Players without a time limit, one of them MCTS,
    /// instead play all the games at once, each MCTS player's leaves of every game going to
    /// its network in one call (results repeat on one machine, but may differ in a close
    /// move from one game at a time). [range: 1 to 1024]
    #[arg(long, value_parser = whole::<usize>(1, MAX_THREADS))]
    threads: Option<usize>,
    /// cpu, cuda, cuda:N or auto (for checkpoint players).
    #[arg(long, value_parser = parse_device, default_value = "auto")]
    device: Device,
}

/// The widest SPRT hypotheses, in Elo either side of level.
const MAX_SPRT_ELO: f64 = 1000.0;

fn parse_sprt(text: &str) -> Result<SprtConfig, String> {
    let bad = || format!("cannot read '{text}' as ELO0,ELO1 (e.g. 0,10)");
    let (a, b) = text.split_once(',').ok_or_else(bad)?;
    let elo0: f64 = a.trim().parse().map_err(|_| bad())?;
    let elo1: f64 = b.trim().parse().map_err(|_| bad())?;
    // Beyond ±1000 Elo (a score of 0.997) one game decides the test: no test at all.
    if ![elo0, elo1]
        .iter()
        .all(|e| (-MAX_SPRT_ELO..=MAX_SPRT_ELO).contains(e))
    {
        return Err(format!(
            "--sprt {text}: ELO0 and ELO1 must be -{MAX_SPRT_ELO} to {MAX_SPRT_ELO}"
        ));
    }
    if elo0 >= elo1 {
        return Err(format!("--sprt {text}: ELO0 must be below ELO1"));
    }
    Ok(SprtConfig::new(elo0, elo1))
}

pub fn run(args: ArenaArgs) -> CliResult {
    if args.pairs == 0 {
        return Err("--pairs must be at least 1".to_string());
    }
    let make_a = args.a.factory(args.variant, args.device, args.seed);
    // A different random stream for B, so that random against random is no mirror match.
    let make_b = args.b.factory(
        args.variant,
        args.device,
        derive_seed(args.seed, SeedStream::SecondPlayer, 1),
    );
    if let Some(path) = &args.out {
        ninjazero_data::atomic::check_file_writable(path)
            .map_err(|e| format!("--out {}: {e}", path.display()))?;
    }
    let threads = args.threads.unwrap_or_else(available_threads).max(1);
    let config = ArenaConfig {
        pairs: args.pairs,
        first_pair: 0,
        opening_plies: args.opening_plies,
        max_plies: args.max_plies,
        seed: args.seed,
        sprt: args.sprt,
    };
    let bar = progress_bar(
        2 * args.pairs as u64,
        "{bar:30} {pos}/{len} games, {elapsed} elapsed | {msg}",
    );
    bar.set_message(format!("{} vs {}", args.a, args.b));
    let result = run_arena(
        &make_a,
        &make_b,
        args.variant,
        &config,
        threads,
        &|done, _, partial| {
            bar.set_position(done as u64);
            let mut message = format!(
                "+{} ={} -{}, score {:.3}, Elo {:+.0}",
                partial.wins, partial.draws, partial.losses, partial.score, partial.elo
            );
            if let Some(sprt) = &partial.sprt {
                message += &format!(", {sprt}");
            }
            bar.set_message(message);
        },
    )?;
    bar.finish_and_clear();
    println!("{}", result.summary_line());
    if let Some(path) = &args.out {
        result
            .save(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}
