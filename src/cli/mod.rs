//! Command definitions and dispatch.

mod arena_commands;
mod bench;
mod bench_nn;
mod bench_search;
mod fit_eval;
mod fuzz;
mod ladder;
mod model_commands;
mod numbers;
mod pipeline;
mod play;
mod rules_commands;
mod selfplay_commands;
mod train_commands;
mod uci;
mod values;
mod worker;

use clap::{Parser, Subcommand};
use ninjazero_rules::Variant;

/// NinjaZero: AlphaZero-style self-play training for the ninja chess variants.
#[derive(Parser, Debug)]
#[command(
    name = "ninjazero",
    version,
    about,
    long_about = None,
    after_help = "Environment: NINJAZERO_CPU_KERNELS=avx2 (the default) asks libtorch for AVX2 CPU \
kernels on every x86-64 machine that has them, so that the same command gives the same \
networks and games on another such machine with as many cores; native lets it use the \
machine's widest kernels (faster on AVX-512 machines; results then repeat only on the same \
CPU model). GPU kernels are not affected."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Count the leaf nodes of the legal move tree (move generator test).
    Perft(rules_commands::PerftArgs),
    /// List the legal moves of a position, one per line, in RULES.md move text.
    Moves(rules_commands::MovesArgs),
    /// Measure speed: `bench perft` reports nodes/second per variant start position.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Throw random and mutated FEN and move text at the parsers; report any panic.
    Fuzz(fuzz::FuzzArgs),
    /// Play games against itself with MCTS and write them to an Arrow dataset.
    Selfplay(selfplay_commands::SelfPlayArgs),
    /// Create or describe network checkpoints: `model init`, `model info`.
    #[command(subcommand)]
    Model(model_commands::ModelCommand),
    /// Look at a dataset: `data inspect DIR`, `data pgn DIR`.
    #[command(subcommand)]
    Data(selfplay_commands::DataCommand),
    /// Play two players against each other over paired openings: score, Elo, SPRT.
    Arena(arena_commands::ArenaArgs),
    /// Rate a player on one Elo scale (random = 0) against fixed anchors of the variant:
    /// random, model-free MCTS, alpha-beta at depths 1-3 and at equal time, and on chess
    /// Fairy-Stockfish; games are kept for later ladders and reruns.
    Ladder(ladder::LadderArgs),
    /// Play a game against NinjaZero in the terminal (libtorch on one CPU thread, the
    /// fastest for a one-position search).
    Play(play::PlayArgs),
    /// Speak UCI (Fairy-Stockfish variant conventions) on standard input and output
    /// (libtorch on one CPU thread, the fastest for a one-position search).
    Uci(uci::UciArgs),
    /// Train a network on self-play data (resumable; metrics and loss plot in --work).
    Train(train_commands::TrainArgs),
    /// Fit a piece-square evaluation (piece values, square bonuses, tempo, mobility) to a
    /// dataset's game results, for alpha-beta: `alphabeta:PATH.eval.json:ms=T`.
    FitEval(fit_eval::FitEvalArgs),
    /// The closed loop: self-play → train → arena → promote, generation after generation;
    /// writes summary.md and elo.png in the run directory. Rerun the same command to continue.
    Pipeline(pipeline::PipelineArgs),
    /// Piece values in Pawns with 95 % intervals: outcome regression over a dataset,
    /// handicap matches against Pawn odds, and a value-network probe (with --model).
    Values(values::ValuesArgs),
    /// Stateless workers on a run stored behind one URL (path, file://, s3://):
    /// `worker selfplay` plays one shard, `worker manifest` plans a generation.
    #[command(subcommand)]
    Worker(worker::WorkerCommand),
    /// Per generation: the self-play manifest (K, M, seed) and the shards done, partial
    /// and missing, from the stored objects alone.
    Status(worker::StatusArgs),
}

/// The error type of the commands not yet on [`anyhow`] (play, uci, arena, selfplay and
/// data): a message for the user. The others return `anyhow::Result<()>`.
pub type CliResult = Result<(), String>;

/// Runs a parsed command line; `matches` are the parser's, which tell given options from
/// defaults.
pub fn run(cli: Cli, matches: &clap::ArgMatches) -> anyhow::Result<()> {
    match cli.command {
        Command::Perft(args) => rules_commands::run_perft(args),
        Command::Moves(args) => rules_commands::run_moves(args),
        Command::Bench(command) => bench::run(command),
        Command::Fuzz(args) => fuzz::run(args),
        Command::Selfplay(args) => {
            selfplay_commands::run_selfplay_command(args).map_err(anyhow::Error::msg)
        }
        Command::Data(command) => {
            selfplay_commands::run_data_command(command).map_err(anyhow::Error::msg)
        }
        Command::Model(command) => model_commands::run(command),
        Command::Arena(args) => arena_commands::run(args).map_err(anyhow::Error::msg),
        Command::Ladder(args) => ladder::run(args),
        Command::Play(args) => play::run(args).map_err(anyhow::Error::msg),
        Command::Uci(args) => uci::run(args).map_err(anyhow::Error::msg),
        Command::Train(args) => train_commands::run_train(args),
        Command::FitEval(args) => fit_eval::run(args),
        Command::Pipeline(args) => {
            let given = matches.subcommand_matches("pipeline").unwrap_or(matches);
            pipeline::run(args, given)
        }
        Command::Values(args) => values::run(args),
        Command::Worker(command) => worker::run(command),
        Command::Status(args) => worker::status(args),
    }
}

/// Parses a variant id for clap, listing the valid ids on error.
pub fn parse_variant(text: &str) -> Result<Variant, String> {
    text.parse()
        .map_err(|e: ninjazero_rules::UnknownVariant| e.to_string())
}

/// The cores this process may use.
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// [`ninjazero_model::load_evaluator`] with the error put into words, for the commands
/// still on [`CliResult`].
pub fn load_evaluator(
    model: Option<&std::path::Path>,
    variant: Variant,
    device: tch::Device,
) -> Result<(Box<dyn ninjazero_model::Evaluator + Send>, String), String> {
    ninjazero_model::load_evaluator(model, variant, device).map_err(|e| e.to_string())
}

/// A progress bar of `len` steps drawn by `template` (indicatif's syntax; the templates are
/// the program's own, so a bad one is a bug).
pub fn progress_bar(len: u64, template: &str) -> indicatif::ProgressBar {
    let style = indicatif::ProgressStyle::with_template(template).expect("a valid template");
    indicatif::ProgressBar::new(len).with_style(style)
}

/// A progress bar for one stage: `what`, the bar, done/total and a message.
pub fn stage_bar(len: u64, what: &str) -> indicatif::ProgressBar {
    progress_bar(
        len,
        &format!("{what:>9} {{bar:30}} {{pos}}/{{len}} {{elapsed}} {{msg}}"),
    )
}

/// The libraries' progress reports as [`stage_bar`]s on the terminal, one stage at a time;
/// pipeline log lines on standard output, each after its UTC clock time.
#[derive(Default)]
pub struct StageBars {
    bar: std::sync::Mutex<Option<indicatif::ProgressBar>>,
}

impl StageBars {
    fn bar(&self) -> std::sync::MutexGuard<'_, Option<indicatif::ProgressBar>> {
        self.bar
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl ninjazero_data::progress::Progress for StageBars {
    fn stage_started(&self, what: &str, len: u64) {
        if let Some(old) = self.bar().replace(stage_bar(len, what)) {
            old.finish_and_clear();
        }
    }

    fn stage_progress(&self, done: u64, total: u64, message: &str) {
        if let Some(bar) = self.bar().as_ref() {
            bar.set_length(total);
            bar.set_position(done);
            bar.set_message(message.to_string());
        }
    }

    fn stage_finished(&self) {
        if let Some(bar) = self.bar().take() {
            bar.finish_and_clear();
        }
    }

    fn log(&self, line: &str) {
        println!("[{}] {line}", chrono::Utc::now().format("%H:%M:%S"));
    }
}
