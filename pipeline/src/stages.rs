//! The stages of a generation, each a function of the run directory and the settings: it
//! skips work whose output is already there and resumes work that was interrupted, so any
//! process may run any stage of a run (in order).

use crate::{PipelineError, Progress, RunConfig, RunDir};
use ninjazero_arena::{run_arena, ArenaConfig, ArenaResult};
use ninjazero_data::{finished_game_ids, FlushPolicy, DEFAULT_FLUSH_SECONDS};
use ninjazero_model::{load_evaluator, Model};
use ninjazero_rules::seed::{derive_seed, SeedStream};
use ninjazero_rules::{Position, Variant};
use ninjazero_search::EngineSpec;
use ninjazero_selfplay::{play_dataset, RunStats, SelfPlayOptions};
use ninjazero_train::{train, RunControl, TrainConfig, TrainJob, TrainReport};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tch::Device;

/// Writes generation 0, a freshly initialised network (seeded with the run's seed), unless
/// it exists. Returns whether it was written.
pub fn initial_model(
    run: &RunDir,
    config: &RunConfig,
    variant: Variant,
) -> Result<bool, PipelineError> {
    if run.model(0).exists() {
        return Ok(false);
    }
    tch::manual_seed(config.seed as i64);
    Model::new(variant, &config.network.config(), Device::Cpu).save(&run.model(0))?;
    Ok(true)
}

/// Self-play data for training generation `generation + 1`: the run's games played with
/// `model` (the best network so far; `None`: the model-free search), into
/// [`RunDir::selfplay`]`(generation)`. Continues an interrupted dataset; `None` when it
/// was already complete.
pub fn self_play(
    run: &RunDir,
    config: &RunConfig,
    variant: Variant,
    generation: u32,
    model: Option<&Path>,
    device: Device,
    progress: &dyn Progress,
) -> Result<Option<RunStats>, PipelineError> {
    let dir = run.selfplay(generation);
    let done = finished_game_ids(&dir)?;
    if done.len() as u64 >= config.selfplay_games {
        return Ok(None);
    }
    let (mut evaluator, model_id) = load_evaluator(model, variant, device)?;
    let options = SelfPlayOptions {
        start: Position::start(variant),
        game_ids: 0..config.selfplay_games,
        concurrency: config.concurrency,
        seed: self_play_seed(config.seed, generation),
        config: config.search.clone(),
        model_id,
    };
    progress.stage_started("selfplay", config.selfplay_games);
    let played = play_dataset(
        &dir,
        &options,
        evaluator.as_mut(),
        FlushPolicy {
            games_per_file: 64,
            max_age: Some(Duration::from_secs(DEFAULT_FLUSH_SECONDS)),
        },
        &|already, s| {
            progress.stage_progress(
                already + s.games,
                config.selfplay_games,
                &format!("{} positions", s.positions),
            );
        },
    );
    progress.stage_finished();
    let (_, stats) = played?;
    progress.log(&format!(
        "self-play for generation {}: {} games, {} positions, {:.0} positions/s",
        generation + 1,
        stats.games,
        stats.positions,
        stats.positions as f64 / stats.wall.as_secs_f64().max(1e-9)
    ));
    Ok(Some(stats))
}

/// The seed of generation `generation`'s self-play in a run seeded `run_seed`; each game's
/// own seed derives from it and the game id ([`ninjazero_selfplay::SelfPlayGame::new`]), so
/// a game's moves depend on the run seed, the generation and its id alone.
pub fn self_play_seed(run_seed: u64, generation: u32) -> u64 {
    derive_seed(run_seed, SeedStream::Generation, generation.into())
}

/// Trains the candidate of `generation` from `parent`'s network on the self-play data of
/// the last [`RunConfig::window_generations`] generations. Resumes an interrupted job;
/// `None` when the candidate exists already.
pub fn train_candidate(
    run: &RunDir,
    config: &RunConfig,
    variant: Variant,
    generation: u32,
    parent: u32,
    device: Device,
    progress: &dyn Progress,
) -> Result<Option<TrainReport>, PipelineError> {
    let out = run.model(generation);
    if out.exists() {
        return Ok(None);
    }
    let first = generation.saturating_sub(config.window_generations);
    let data: Vec<PathBuf> = (first..generation).map(|g| run.selfplay(g)).collect();
    let train_config = TrainConfig::preset(&config.train)
        .ok_or_else(|| PipelineError::UnknownTrainPreset(config.train.clone()))?;
    progress.stage_started("train", train_config.steps);
    let job = TrainJob {
        variant,
        data_dirs: data,
        init: run.model(parent),
        out,
        work_dir: run.train_work(generation),
        config: train_config,
        device,
    };
    let trained = train(
        &job,
        &|step, total, line| progress.stage_progress(step, total, line),
        &RunControl::default(),
    );
    progress.stage_finished();
    let report = trained?;
    progress.log(&format!(
        "training generation {generation} from {parent}: {} steps, policy loss {:.3}, value loss {:.3}, {:.0} samples/s, loader wait {:.1} %",
        report.steps_done,
        report.final_policy_loss,
        report.final_value_loss,
        report.samples_per_s,
        100.0 * report.loader_wait_share
    ));
    Ok(Some(report))
}

/// The player spec of `generation`'s network in the arenas: MCTS at
/// [`RunConfig::arena_simulations`].
pub fn mcts_spec(run: &RunDir, generation: u32, config: &RunConfig) -> EngineSpec {
    EngineSpec::mcts(run.model(generation), config.arena_simulations)
}

/// Plays the arena `name` between two player specs (`a` named first), or reads back its
/// saved result ([`RunDir::arena`]).
#[allow(clippy::too_many_arguments)]
pub fn arena(
    run: &RunDir,
    config: &RunConfig,
    variant: Variant,
    name: &str,
    a: &EngineSpec,
    b: &EngineSpec,
    device: Device,
    progress: &dyn Progress,
) -> Result<ArenaResult, PipelineError> {
    let path = run.arena(name);
    if let Ok(text) = std::fs::read_to_string(&path) {
        if let Ok(result) = serde_json::from_str::<ArenaResult>(&text) {
            return Ok(result);
        }
    }
    let arena_config = ArenaConfig {
        pairs: config.arena_pairs,
        first_pair: 0,
        opening_plies: 4,
        max_plies: config.search.max_plies,
        seed: config.seed,
        sprt: None,
    };
    progress.stage_started("arena", 2 * config.arena_pairs as u64);
    // Arena players search one leaf at a time: one game per core, each with a single
    // libtorch thread, beats several threads synchronising for every batch-1 operation.
    tch::set_num_threads(1);
    let result = run_arena(
        &a.factory(variant, device, config.seed),
        &b.factory(variant, device, config.seed + 1),
        variant,
        &arena_config,
        available_threads(),
        &|done, total, partial| {
            progress.stage_progress(
                done as u64,
                total as u64,
                &format!("{name}: score {:.3}", partial.score),
            );
        },
    );
    tch::set_num_threads(available_threads() as i32);
    progress.stage_finished();
    let result = result.map_err(PipelineError::Arena)?;
    let io = |path: &Path, error| PipelineError::Io {
        path: path.to_path_buf(),
        error,
    };
    let folder = path.parent().expect("arena files live in a folder");
    std::fs::create_dir_all(folder).map_err(|e| io(folder, e))?;
    result.save(&path).map_err(|e| io(&path, e))?;
    progress.log(&format!("arena {name}: {}", result.summary_line()));
    Ok(result)
}

/// The promotion rule: a candidate is held back only when its whole 95 % Elo interval
/// against the best lies below zero.
pub fn measurably_worse(versus_best: &ArenaResult) -> bool {
    versus_best.elo_high < 0.0
}

/// The cores this process may use.
fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
