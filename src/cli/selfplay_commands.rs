//! `selfplay` and `data`: producing and looking at datasets.

use super::numbers::{real, whole, MAX_THREADS};
use super::{load_evaluator, parse_variant, progress_bar, stage_bar, CliResult};
use clap::{Args, Subcommand};
use ninjazero_arena::{play_player_dataset, PlayerGamesOptions};
use ninjazero_data::{
    existing_dataset_files, export_pgn, summarize, FlushPolicy, DEFAULT_FLUSH_SECONDS,
};
use ninjazero_model::parse_device;
use ninjazero_rules::{Position, Variant};
use ninjazero_search::{EngineSpec, RootSearch, SearchConfig};
use ninjazero_selfplay::{
    play_dataset, RunStats, SelfPlayOptions, MAX_CONCURRENCY, MAX_GAMES, MAX_SIMULATIONS,
    MIN_CONCURRENCY,
};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tch::Device;

#[derive(Args, Debug)]
pub struct SelfPlayArgs {
    /// Variant id (see `ninjazero perft --help`).
    #[arg(long, value_parser = parse_variant)]
    variant: Variant,
    /// Checkpoint (`.safetensors` with its `.json` sidecar). Without one, the search uses
    /// uniform priors and a material value: self-play from nothing but the rules.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Games the dataset should hold; games already in OUT are kept and not replayed. [range: 1 to 1000000000]
    #[arg(long, value_parser = whole::<u64>(1, MAX_GAMES))]
    games: u64,
    /// Dataset directory (Arrow IPC files, written atomically).
    #[arg(long)]
    out: PathBuf,
    /// Simulations per full search. [range: 1 to 1000000]
    #[arg(long, value_parser = whole::<u32>(1, MAX_SIMULATIONS.into()), default_value_t = 128)]
    sims: u32,
    /// Simulations per cheap search (playout cap randomization). [range: 1 to 1000000]
    #[arg(long, value_parser = whole::<u32>(1, MAX_SIMULATIONS.into()), default_value_t = 32)]
    cheap_sims: u32,
    /// Share of moves searched fully (their policies become training targets). [range: 0 to 1]
    #[arg(long, value_parser = real(0.0, 1.0, false), default_value_t = 0.25)]
    full_search_probability: f64,
    /// Root search: puct (with Dirichlet noise) or gumbel (Sequential Halving; for few
    /// simulations).
    #[arg(long, default_value = "puct")]
    search: RootSearch,
    /// Games played at once; the network batch is about half of it. [range: 2 to 65536]
    #[arg(long, value_parser = whole::<usize>(MIN_CONCURRENCY as u64, MAX_CONCURRENCY as u64), default_value_t = 256)]
    concurrency: usize,
    /// CPU threads for tree work and libtorch (default: all cores). [range: 1 to 1024]
    #[arg(long, value_parser = whole::<usize>(1, MAX_THREADS))]
    threads: Option<usize>,
    /// cpu, cuda, cuda:N or auto.
    #[arg(long, value_parser = parse_device, default_value = "auto")]
    device: Device,
    /// Random seed: the same seed and settings give the same games on a CPU.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Games longer than this are adjudicated on the search value. [range: 1 to 10000]
    #[arg(long, value_parser = whole::<u32>(1, 10_000), default_value_t = 300)]
    max_plies: u32,
    /// Score games that reach --max-plies as draws instead of adjudicating them on the
    /// search value.
    #[arg(long)]
    draw_at_max_plies: bool,
    /// What moving into a threefold repetition costs the mover inside the search (the
    /// game is still a draw): against two copies of one network settling into repeated
    /// moves. 0 scores it a draw. [range: 0 to 1]
    #[arg(long, value_parser = real(0.0, 1.0, false), default_value_t = 0.0)]
    repetition_penalty: f64,
    /// Never resign: every game is played out (results that do not lean on the
    /// evaluator's judgement, e.g. for `ninjazero values`).
    #[arg(long)]
    no_resign: bool,
    /// Games per data file. [range: 1 to 1000000]
    #[arg(long, value_parser = whole::<usize>(1, 1_000_000), default_value_t = 64)]
    games_per_file: usize,
    /// Also write a data file once the oldest finished game not yet written is this many
    /// seconds old, so that a killed run loses little (0: write the finished games after
    /// every step). [range: 0 to 86400]
    #[arg(long, value_parser = whole::<u64>(0, 86_400), default_value_t = DEFAULT_FLUSH_SECONDS)]
    flush_seconds: u64,
    /// Play the games with this player instead of the batched MCTS, in the arena's spec
    /// form (e.g. alphabeta:depth=2:values=P=1,N=3,...): one game per thread, games at
    /// --max-plies drawn, the player's move the policy target of each position after the
    /// opening, or the policy it proposes where it has one, as alphabeta:...:soft=T does
    /// (to train a network that plays like the player, and for `ninjazero values`).
    #[arg(long, conflicts_with = "model")]
    player: Option<EngineSpec>,
    /// With --player: random plies that open each game (the player itself may be
    /// deterministic). [range: 0 to 200]
    #[arg(long, value_parser = whole::<usize>(0, 200), default_value_t = 4)]
    opening_plies: usize,
}

impl SelfPlayArgs {
    fn flush_policy(&self) -> FlushPolicy {
        FlushPolicy {
            games_per_file: self.games_per_file,
            max_age: Some(Duration::from_secs(self.flush_seconds)),
        }
    }
}

/// `selfplay --player`: games of any player, on worker threads.
fn run_player_games(args: &SelfPlayArgs, spec: &EngineSpec, threads: usize) -> CliResult {
    let make_player = spec.factory(args.variant, args.device, args.seed);
    make_player()?;
    let player = spec.to_string();
    if threads > 1 {
        // Batch-1 searches: one libtorch thread per game beats threads that synchronise.
        tch::set_num_threads(1);
    }
    let options = PlayerGamesOptions {
        start: Position::start(args.variant),
        game_ids: 0..args.games,
        opening_plies: args.opening_plies,
        max_plies: args.max_plies,
        seed: args.seed,
        player: player.clone(),
    };
    let bar = stage_bar(args.games, "selfplay");
    let started = std::time::Instant::now();
    let (played, _) = play_player_dataset(
        &args.out,
        &options,
        &make_player,
        threads,
        args.flush_policy(),
        &|done| bar.set_position(done),
    )?;
    bar.finish_and_clear();
    println!(
        "selfplay: {played} new games by {player} in {:.1} s into {}",
        started.elapsed().as_secs_f64(),
        args.out.display()
    );
    Ok(())
}

pub fn run_selfplay_command(args: SelfPlayArgs) -> CliResult {
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if let Some(player) = &args.player {
        return run_player_games(&args, player, threads);
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .map_err(|e| e.to_string())?;
    tch::set_num_threads(threads as i32);
    let (mut evaluator, model_id) =
        load_evaluator(args.model.as_deref(), args.variant, args.device)?;
    let config = SearchConfig {
        root_search: args.search,
        simulations: args.sims,
        cheap_simulations: args.cheap_sims,
        full_search_probability: args.full_search_probability,
        max_plies: args.max_plies,
        adjudicate_on_value: !args.draw_at_max_plies,
        repetition_penalty: args.repetition_penalty as f32,
        resign_disabled_fraction: if args.no_resign {
            1.0
        } else {
            SearchConfig::default().resign_disabled_fraction
        },
        ..SearchConfig::default()
    };
    let options = SelfPlayOptions {
        start: Position::start(args.variant),
        game_ids: 0..args.games,
        concurrency: args.concurrency,
        seed: args.seed,
        config: config.clone(),
        model_id: model_id.clone(),
    };
    let bar = progress_bar(
        args.games,
        "{bar:30} {pos}/{len} games, {elapsed} elapsed, eta {eta} | {msg}",
    );
    let show = |already: u64, stats: &RunStats| {
        bar.set_position(already + stats.games);
        bar.set_message(progress_message(stats));
    };
    let (already, stats) = play_dataset(
        &args.out,
        &options,
        evaluator.as_mut(),
        args.flush_policy(),
        &show,
    )
    .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    println!(
        "selfplay: {} new games ({} already in {}), {} positions, {}",
        stats.games,
        already,
        args.out.display(),
        stats.positions,
        progress_message(&stats)
    );
    println!("time: {}", stats.breakdown());
    let core_hours = stats.wall.as_secs_f64() * threads as f64 / 3600.0;
    println!(
        "games/hour/core: {:.1}",
        stats.games as f64 / core_hours.max(1e-9)
    );
    Ok(())
}

fn progress_message(stats: &RunStats) -> String {
    let secs = stats.wall.as_secs_f64().max(1e-9);
    format!(
        "{:.0} positions/s, average length {:.1} plies, White/draw/Black {}/{}/{}",
        stats.positions as f64 / secs,
        stats.average_length(),
        stats.results[0],
        stats.results[1],
        stats.results[2]
    )
}

#[derive(Subcommand, Debug)]
pub enum DataCommand {
    /// Summarise a dataset: games, positions, results, lengths, termination reasons.
    Inspect {
        /// Dataset directory.
        dir: PathBuf,
    },
    /// Export the games as PGN (with Variant and FEN tags) for people and GUIs.
    Pgn {
        /// Dataset directory.
        dir: PathBuf,
        /// Output file (standard output if left out).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

/// Refuses a dataset directory that is missing or holds no dataset files, instead of an
/// empty summary or PGN.
fn require_games(dir: &Path) -> CliResult {
    if existing_dataset_files(dir)
        .map_err(|e| e.to_string())?
        .is_empty()
    {
        return Err(format!(
            "{} holds no games (no *.arrow dataset files)",
            dir.display()
        ));
    }
    Ok(())
}

pub fn run_data_command(command: DataCommand) -> CliResult {
    match command {
        DataCommand::Inspect { dir } => {
            require_games(&dir)?;
            let summary = summarize(&dir).map_err(|e| e.to_string())?;
            println!("{summary}");
        }
        DataCommand::Pgn { dir, out } => {
            require_games(&dir)?;
            let count = match &out {
                Some(path) => {
                    let file = std::fs::File::create(path)
                        .map_err(|e| format!("{}: {e}", path.display()))?;
                    let mut writer = std::io::BufWriter::new(file);
                    export_pgn(&dir, &mut writer).map_err(|e| e.to_string())?
                }
                None => {
                    export_pgn(&dir, &mut std::io::stdout().lock()).map_err(|e| e.to_string())?
                }
            };
            if let Some(path) = out {
                eprintln!("wrote {count} games to {}", path.display());
            }
        }
    }
    Ok(())
}
