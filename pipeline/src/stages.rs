//! The stages of a run, each a stateless worker on the run's store ([`Store`]): it reads
//! its inputs from the store, skips work whose output is stored already, and stores what
//! it makes with create-only puts. So any process on any machine may run any stage (or a
//! shard of one), twice or after a crash, and the run still holds each result once. The
//! single-machine driver and the Slurm driver ([`crate::scheduler`]) run the same stages.
//!
//! A generation `g ≥ 1`: the self-play of generation `g − 1`'s best network (shards of
//! [`selfplay_worker`]) → [`train_generation`] → arena shards ([`arena_worker`] of
//! [`MatchSet::Generation`]) → [`promote`]. At the end, the best network against the
//! baselines ([`MatchSet::Baselines`]) and the [`report`].

use crate::cost::{stored_costs, Cost, Meter};
use crate::layout::{
    arena_cost_prefix, arena_key, arena_shard_key, generation_name, model_key, promotion_key,
    report_key, selfplay_cost_prefix, train_cost_prefix, window_key, ELO_PLOT_KEY, SUMMARY_KEY,
};
use crate::worker::{self, done_key, part_key, selfplay_shard, Manifest, ShardJob, ShardOutcome};
use crate::{
    baselines, ladder_scale, plot_elo, write_summary, GenerationRow, ModelKind, PipelineError,
    Progress, RunConfig, RunReport, Store, StoreError, EVALUATION_DEPTH,
};
use ninjazero_arena::{run_arena, ArenaConfig, ArenaGame, ArenaResult};
use ninjazero_data::finished_game_ids;
use ninjazero_model::Model;
use ninjazero_rules::seed::{derive_seed, SeedStream};
use ninjazero_rules::Variant;
use ninjazero_search::{EngineSpec, PIECE_SQUARE_SUFFIX};
use ninjazero_train::{fit_piece_squares_on, train, FitConfig, RunControl, TrainConfig, TrainJob};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use tch::Device;

/// What every stage needs: the run's store and settings, the device, and a local folder
/// for fetched objects and training work (the run's own directory when it is local).
pub struct RunContext<'a> {
    pub store: &'a Store,
    pub config: RunConfig,
    pub variant: Variant,
    pub device: Device,
    pub local: PathBuf,
}

impl<'a> RunContext<'a> {
    /// The run's stored settings, with `cache` as the local folder unless the run is a
    /// local directory.
    pub fn open(
        store: &'a Store,
        device: Device,
        cache: &Path,
    ) -> Result<RunContext<'a>, PipelineError> {
        let config = RunConfig::load_from(store)?;
        let variant = config.variant()?;
        let local = store
            .local_root()
            .map_or_else(|| cache.to_path_buf(), Path::to_path_buf);
        Ok(RunContext {
            store,
            config,
            variant,
            device,
            local,
        })
    }

    /// The model of `generation` as a local file (a network with its sidecar).
    fn model(&self, generation: u32) -> Result<PathBuf, PipelineError> {
        let key = model_key(self.config.model, generation);
        worker::fetch_model(self.store, &key, &self.local).map_err(|e| match e {
            PipelineError::Store(StoreError::NotFound { url, key }) => PipelineError::NotYet {
                key: format!("{url}/{key}"),
                reason: format!(
                    "generation {generation}'s {} is not stored yet",
                    self.config.model.name()
                ),
            },
            other => other,
        })
    }

    /// A scratch folder inside the local folder (so a finished file moves by rename).
    fn scratch(&self) -> Result<tempfile::TempDir, PipelineError> {
        std::fs::create_dir_all(&self.local).map_err(|error| self.io(&self.local, error))?;
        tempfile::Builder::new()
            .prefix(".scratch-")
            .tempdir_in(&self.local)
            .map_err(|error| self.io(&self.local, error))
    }

    fn io(&self, path: &Path, error: std::io::Error) -> PipelineError {
        PipelineError::Io {
            path: path.to_path_buf(),
            error,
        }
    }
}

/// Stores a model saved at `file` at `key`: a network with its sidecar, the sidecar first,
/// so a reader that finds the weights finds their sidecar; a learnt evaluation alone.
/// Another writer's copy is kept.
fn store_model(store: &Store, key: &str, file: &Path) -> Result<(), PipelineError> {
    let mut objects = Vec::new();
    if !worker::is_evaluation(key) {
        let sidecar = ninjazero_model::checkpoint::sidecar_path(file);
        objects.push((worker::sidecar_key(key)?, sidecar));
    }
    objects.push((key.to_string(), file.to_path_buf()));
    for (key, file) in &objects {
        match store.put_new_file(key, file) {
            Ok(()) | Err(StoreError::AlreadyExists { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// `value` as pretty JSON with a final newline.
fn json_bytes(value: &impl Serialize) -> Result<Vec<u8>, PipelineError> {
    let json =
        serde_json::to_string_pretty(value).map_err(|e| PipelineError::Encode(e.to_string()))?;
    Ok((json + "\n").into_bytes())
}

/// Stores `value` at `key` unless an object is there (then the stored one is kept).
fn put_json_new(store: &Store, key: &str, value: &impl Serialize) -> Result<(), PipelineError> {
    match store.put_new(key, json_bytes(value)?) {
        Ok(()) | Err(StoreError::AlreadyExists { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The JSON object at `key` (`what` names its kind in messages); `None` if there is none.
fn get_json<T: serde::de::DeserializeOwned>(
    store: &Store,
    key: &str,
    what: &str,
) -> Result<Option<T>, PipelineError> {
    let bytes = match store.get(key) {
        Ok(bytes) => bytes,
        Err(StoreError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| PipelineError::Manifest {
            key: format!("{}/{key}", store.url()),
            reason: format!("not {what}: {e}"),
        })
}

/// Stores generation 0, a freshly initialised network (seeded with the run's seed), unless
/// it is stored. Returns whether it was written. A run that learns an evaluation has no
/// generation 0 to store: its first player is generation 0.
pub fn initial_model(ctx: &RunContext) -> Result<bool, PipelineError> {
    let key = model_key(ctx.config.model, 0);
    if ctx.config.model == ModelKind::Evaluation || ctx.store.exists(&key)? {
        return Ok(false);
    }
    let scratch = ctx.scratch()?;
    let file = scratch.path().join("initial.safetensors");
    let seed = ctx.config.seed as i64;
    Model::seeded(ctx.variant, &ctx.config.network.config(), Device::Cpu, seed).save(&file)?;
    store_model(ctx.store, &key, &file)?;
    Ok(true)
}

/// The decision on a generation: written once by [`promote`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Promotion {
    pub generation: u32,
    /// The best generation before this one.
    pub parent: u32,
    pub promoted: bool,
    /// The best generation after the decision.
    pub best: u32,
    /// The candidate against the parent ([`ArenaResult::summary_line`]).
    pub versus_best: String,
    /// Elo against generation 0 and its 95 % interval.
    pub elo_vs_zero: (f64, f64, f64),
}

impl Promotion {
    /// The stored decision on `generation`, if there is one.
    pub fn load(store: &Store, generation: u32) -> Result<Option<Promotion>, PipelineError> {
        get_json(store, &promotion_key(generation), "a promotion decision")
    }
}

/// The best generation once `generation` is decided (0 for generation 0).
pub fn best_after(store: &Store, generation: u32) -> Result<u32, PipelineError> {
    if generation == 0 {
        return Ok(0);
    }
    match Promotion::load(store, generation)? {
        Some(promotion) => Ok(promotion.best),
        None => Err(PipelineError::NotYet {
            key: format!("{}/{}", store.url(), promotion_key(generation)),
            reason: format!("generation {generation} is not decided yet"),
        }),
    }
}

/// The last decided of the run's `generations` and the best generation once it is decided;
/// `None` while none is decided. A run stopped part way (or by its hours) still has a best.
pub fn latest_best(store: &Store, generations: u32) -> Result<Option<(u32, u32)>, PipelineError> {
    for generation in (1..=generations).rev() {
        if let Some(promotion) = Promotion::load(store, generation)? {
            return Ok(Some((generation, promotion.best)));
        }
    }
    Ok(None)
}

/// The seed of generation `generation`'s self-play in a run seeded `run_seed`; each game's
/// own seed derives from it and the game id ([`ninjazero_selfplay::SelfPlayGame::new`]), so
/// a game's moves depend on the run seed, the generation and its id alone.
pub fn self_play_seed(run_seed: u64, generation: u32) -> u64 {
    derive_seed(run_seed, SeedStream::Generation, generation.into())
}

/// The manifest of generation `generation`'s self-play, from the run's settings and the
/// best model once `generation` is decided. Generation 0's network knows nothing, so
/// while nothing is promoted the data comes from the model-free search (uniform priors,
/// material value), and generation 0's from [`RunConfig::first_player`] when the run
/// names one. A learnt evaluation's games are alpha-beta's at [`EVALUATION_DEPTH`] with
/// the best evaluation, or the first player's while nothing is promoted.
pub fn plan_selfplay(ctx: &RunContext, generation: u32) -> Result<Manifest, PipelineError> {
    let best = best_after(ctx.store, generation)?;
    let games_per_shard = ctx.config.games_per_shard(generation);
    let first_player = ctx.config.first_player.clone();
    let player = match ctx.config.model {
        ModelKind::Network => (generation == 0).then_some(first_player).flatten(),
        ModelKind::Evaluation if best == 0 => first_player,
        ModelKind::Evaluation => Some(EngineSpec::alphabeta(EVALUATION_DEPTH).to_string()),
    };
    let mut search = ctx.config.search.clone();
    if player.is_some() {
        // A player's games cost next to nothing beside the network's: they run to the long
        // presets' cap, so that fewer end undecided and the value head learns from results.
        search.max_plies = search.max_plies.max(PLAYER_MAX_PLIES);
    }
    Ok(Manifest {
        format: worker::MANIFEST_FORMAT,
        variant: ctx.config.variant.clone(),
        generation,
        shards: ctx.config.selfplay_shards,
        games_per_shard,
        // Parts of a few batches: a preempted worker loses little, and batches stay full.
        games_per_part: games_per_shard.min(4 * ctx.config.concurrency as u64),
        seed: ctx.config.seed,
        concurrency: ctx.config.concurrency,
        search,
        model: (best > 0).then(|| model_key(ctx.config.model, best)),
        player,
    })
}

/// The ply cap of a first player's games (at least the run's own).
pub const PLAYER_MAX_PLIES: u32 = 300;

/// Plays shard `shard` of generation `generation`'s self-play, planning the generation
/// first unless its manifest is stored, and records what playing it cost.
pub fn selfplay_worker(
    ctx: &RunContext,
    generation: u32,
    shard: u32,
    progress: &dyn Progress,
) -> Result<ShardOutcome, PipelineError> {
    let meter = Meter::start(ctx.device);
    if !ctx.store.exists(&Manifest::key(generation))? {
        plan_selfplay(ctx, generation)?.publish(ctx.store)?;
    }
    let job = ShardJob {
        generation,
        shard,
        model: None,
        variant: Some(ctx.variant),
        device: ctx.device,
        cache: &ctx.local,
    };
    let outcome = selfplay_shard(ctx.store, &job, progress)?;
    if let ShardOutcome::Played { .. } = outcome {
        let prefix = selfplay_cost_prefix(generation);
        meter.record(ctx.store, &format!("{prefix}shard-{shard:04}.json"))?;
    }
    Ok(outcome)
}

/// The self-play objects one generation was trained on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainingWindow {
    pub generation: u32,
    /// The network training started from.
    pub parent: u32,
    /// Per self-play generation: its game ids and the part objects that hold them.
    pub data: Vec<WindowGeneration>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowGeneration {
    pub generation: u32,
    /// Game ids `[first, end)`, each exactly once.
    pub game_ids: (u64, u64),
    pub objects: Vec<String>,
}

/// The window of generation `generation`: the complete shards of the last
/// [`window_length`] self-play generations, every part once.
fn plan_window(ctx: &RunContext, generation: u32) -> Result<TrainingWindow, PipelineError> {
    let parent = best_after(ctx.store, generation - 1)?;
    let first = generation.saturating_sub(window_length(&ctx.config, generation, parent));
    let mut data = Vec::new();
    for source in first..generation {
        let manifest = Manifest::load(ctx.store, source)?;
        let mut objects = Vec::new();
        for shard in 0..manifest.shards {
            if !ctx.store.exists(&done_key(source, shard))? {
                return Err(PipelineError::NotYet {
                    key: format!("{}/{}", ctx.store.url(), done_key(source, shard)),
                    reason: format!(
                        "generation {generation} trains on this shard, which is not done yet"
                    ),
                });
            }
            objects.extend((0..manifest.parts()).map(|part| part_key(source, shard, part)));
        }
        data.push(WindowGeneration {
            generation: source,
            game_ids: (0, u64::from(manifest.shards) * manifest.games_per_shard),
            objects,
        });
    }
    Ok(TrainingWindow {
        generation,
        parent,
        data,
    })
}

/// How many self-play generations generation `generation`, trained after the best
/// generation `parent`, trains on: the run's [`RunConfig::window_generations`], twice that
/// for a learnt evaluation after a candidate was held back (the parent is not the
/// generation before). Then the last window's games were all the best player's own, and
/// fits to a player's own games alone fell back late in the runs measured (README); the
/// wider window adds the earlier players' games.
fn window_length(config: &RunConfig, generation: u32, parent: u32) -> u32 {
    let held_back = parent + 1 != generation;
    match config.model {
        ModelKind::Evaluation if held_back => 2 * config.window_generations,
        _ => config.window_generations,
    }
}

/// The stored window of `generation`, or a new one stored create-only: a retried training
/// job (or a second one racing it) trains on exactly the same objects.
fn training_window(ctx: &RunContext, generation: u32) -> Result<TrainingWindow, PipelineError> {
    let key = window_key(generation);
    if let Some(stored) = get_json(ctx.store, &key, "a training window")? {
        return Ok(stored);
    }
    put_json_new(ctx.store, &key, &plan_window(ctx, generation)?)?;
    // Another job's window, if it stored one first.
    get_json(ctx.store, &key, "a training window")?.ok_or_else(|| PipelineError::Manifest {
        key: format!("{}/{key}", ctx.store.url()),
        reason: "the training window vanished after it was stored".to_string(),
    })
}

/// Puts the window's objects into one local folder per self-play generation (hard links
/// when the run is local) and checks that each generation holds its game ids exactly once.
fn stage_window(
    ctx: &RunContext,
    window: &TrainingWindow,
    into: &Path,
) -> Result<Vec<PathBuf>, PipelineError> {
    let mut dirs = Vec::new();
    for source in &window.data {
        let dir = into.join(generation_name(source.generation));
        std::fs::create_dir_all(&dir).map_err(|e| ctx.io(&dir, e))?;
        for key in &source.objects {
            let file = dir.join(key.replace('/', "-"));
            if !file.is_file() {
                stage_object(ctx, key, &file)?;
            }
        }
        let ids = finished_game_ids(&dir)?;
        let (first, end) = source.game_ids;
        let expected = (end - first) as usize;
        if ids.len() != expected || ids.iter().any(|id| !(first..end).contains(id)) {
            return Err(PipelineError::Manifest {
                key: format!("{}/{}", ctx.store.url(), worker::generation_prefix(source.generation)),
                reason: format!(
                    "the stored parts hold {} distinct game ids, not exactly the ids {first}..{end}",
                    ids.len()
                ),
            });
        }
        dirs.push(dir);
    }
    Ok(dirs)
}

/// The stored object `key` as the local file `file`.
fn stage_object(ctx: &RunContext, key: &str, file: &Path) -> Result<(), PipelineError> {
    if let Some(root) = ctx.store.local_root() {
        let source = root.join(key);
        if std::fs::hard_link(&source, file).is_ok() {
            return Ok(());
        }
        return std::fs::copy(&source, file)
            .map(drop)
            .map_err(|e| ctx.io(&source, e));
    }
    let bytes = ctx.store.get(key)?;
    ninjazero_data::atomic::write_atomically(file, &bytes).map_err(|e| ctx.io(file, e))
}

/// Whether the window holds a first player's games (generation 0 of a run with
/// [`RunConfig::first_player`], in the window of generations 1 to
/// [`RunConfig::window_generations`]): then every position of the window's generations is
/// trained on, not the growing window's newest share. The growing window forgets the
/// self-play of weaker networks; a player's games are the lesson the first networks' own
/// cheap self-play cannot repeat (README's lever table: on the demo the first network
/// learnt more from all of them, and the second kept what the first learnt).
fn holds_the_first_players_games(config: &RunConfig, window: &TrainingWindow) -> bool {
    config.first_player.is_some() && window.data.iter().any(|source| source.generation == 0)
}

/// The training preset of the network trained on `window`: the run's
/// [`RunConfig::first_train`] when it trains from generation 0 (the untrained network) on
/// the first player's games, else the run's own.
fn training_preset<'a>(config: &'a RunConfig, window: &TrainingWindow) -> &'a str {
    match &config.first_train {
        Some(first) if window.parent == 0 && holds_the_first_players_games(config, window) => first,
        _ => &config.train,
    }
}

/// Makes the candidate of `generation` from the objects of its [`TrainingWindow`]
/// (`train/gen-NNNN/window.json`) and stores it, with what making it cost: a network
/// trained from the best before it, or an evaluation fitted afresh. `false` when the
/// candidate is stored already.
pub fn train_generation(
    ctx: &RunContext,
    generation: u32,
    progress: &dyn Progress,
) -> Result<bool, PipelineError> {
    let key = model_key(ctx.config.model, generation);
    if ctx.store.exists(&key)? {
        return Ok(false);
    }
    let meter = Meter::start(ctx.device);
    let window = training_window(ctx, generation)?;
    let work = ctx.local.join("train").join(generation_name(generation));
    let data_dirs = stage_window(ctx, &window, &work.join("data"))?;
    match ctx.config.model {
        ModelKind::Network => train_network(ctx, &window, data_dirs, &work, progress)?,
        ModelKind::Evaluation => fit_evaluation(ctx, &window, &data_dirs, &work, progress)?,
    }
    let prefix = train_cost_prefix(generation);
    meter.record(ctx.store, &format!("{prefix}train.json"))?;
    Ok(true)
}

/// Trains generation `window.generation`'s network from the best before it and stores it.
/// Resumes an interrupted training on the same machine.
fn train_network(
    ctx: &RunContext,
    window: &TrainingWindow,
    data_dirs: Vec<PathBuf>,
    work: &Path,
    progress: &dyn Progress,
) -> Result<(), PipelineError> {
    let preset = training_preset(&ctx.config, window);
    let mut config = TrainConfig::preset(preset)
        .ok_or_else(|| PipelineError::UnknownTrainPreset(preset.to_string()))?;
    if holds_the_first_players_games(&ctx.config, window) {
        config.fix_window(usize::MAX);
    }
    config.player_values = ctx.config.player_values;
    let out = work.join("candidate.safetensors");
    progress.stage_started("train", config.steps);
    let job = TrainJob {
        variant: ctx.variant,
        data_dirs,
        init: ctx.model(window.parent)?,
        out: out.clone(),
        work_dir: work.join("work"),
        config,
        device: ctx.device,
    };
    let trained = train(
        &job,
        &|step, total, line| progress.stage_progress(step, total, line),
        &RunControl::default(),
    );
    progress.stage_finished();
    let report = trained?;
    store_model(
        ctx.store,
        &model_key(ModelKind::Network, window.generation),
        &out,
    )?;
    progress.log(&format!(
        "training generation {} from {}: {} steps on {} of {} positions, policy loss {:.3}, value loss {:.3}, {:.0} samples/s, loader wait {:.1} %",
        window.generation,
        window.parent,
        report.steps_done,
        report.window_positions,
        report.total_positions,
        report.final_policy_loss,
        report.final_value_loss,
        report.samples_per_s,
        100.0 * report.loader_wait_share
    ));
    Ok(())
}

/// Fits generation `window.generation`'s evaluation to its window's games (`fit-eval`'s
/// settings) and stores it.
fn fit_evaluation(
    ctx: &RunContext,
    window: &TrainingWindow,
    data_dirs: &[PathBuf],
    work: &Path,
    progress: &dyn Progress,
) -> Result<(), PipelineError> {
    let first_players_games = first_players_generations(ctx.store, window)?;
    let config = fit_config(&ctx.config, &first_players_games);
    let eval = fit_piece_squares_on(ctx.variant, data_dirs, &config, progress)
        .map_err(|e| PipelineError::Fit(e.to_string()))?;
    let out = work.join(format!("candidate{PIECE_SQUARE_SUFFIX}"));
    eval.save(&out)
        .map_err(|e| PipelineError::Fit(format!("{}: {e}", out.display())))?;
    store_model(
        ctx.store,
        &model_key(ModelKind::Evaluation, window.generation),
        &out,
    )?;
    let fit = &eval.fit;
    let mix = if fit.value_target_mix > 0.0 {
        format!(", search value share {}", fit.value_target_mix)
    } else if ctx.config.value_target_mix.is_some_and(|mix| mix > 0.0) {
        let sources: Vec<String> = first_players_games.iter().map(u32::to_string).collect();
        format!(
            ", results alone (the window holds the first player's games: self-play generation {})",
            sources.join(", ")
        )
    } else {
        String::new()
    };
    progress.log(&format!(
        "fitting generation {}'s evaluation: {} quiet positions of {} games, held-out loss {:.4} (material alone {:.4}), square penalty {}{mix}",
        window.generation, fit.positions, fit.games, fit.validation_loss, fit.validation_loss_material, fit.square_l2
    ));
    Ok(())
}

/// The fit's settings: the run's, except that a window holding any of the first player's
/// games (`first_players_games`, self-play generations) is fitted to the results alone,
/// since that player's search values are poor targets (generation 1's held-out loss was
/// worse with them on both variants measured).
fn fit_config(run: &RunConfig, first_players_games: &[u32]) -> FitConfig {
    let mut config = FitConfig::default();
    if let Some(penalties) = &run.square_l2 {
        config.square_l2 = penalties.clone();
    }
    if let Some(mix) = run
        .value_target_mix
        .filter(|_| first_players_games.is_empty())
    {
        config.value_target_mix = mix;
    }
    config
}

/// The self-play generations of `window` that the run's first player played
/// ([`Manifest::played_by_the_first_player`]: in an evaluation run also those after a
/// held-back generation 1, which [`holds_the_first_players_games`], written for networks,
/// does not count).
fn first_players_generations(
    store: &Store,
    window: &TrainingWindow,
) -> Result<Vec<u32>, PipelineError> {
    let mut generations = Vec::new();
    for source in &window.data {
        if Manifest::load(store, source.generation)?.played_by_the_first_player() {
            generations.push(source.generation);
        }
    }
    Ok(generations)
}

/// A player of an arena: a generation's model (a network: MCTS at the run's arena
/// simulations; an evaluation: alpha-beta at [`EVALUATION_DEPTH`], generation 0 the first
/// player) or a named baseline.
#[derive(Clone, Debug, PartialEq)]
pub enum Player {
    Generation(u32),
    Baseline(&'static str, EngineSpec),
}

impl Player {
    /// `gen-0002`, or the baseline's name.
    pub fn label(&self) -> String {
        match self {
            Player::Generation(g) => generation_name(*g),
            Player::Baseline(name, _) => name.to_string(),
        }
    }

    fn spec(&self, ctx: &RunContext) -> Result<EngineSpec, PipelineError> {
        Ok(match self {
            Player::Generation(g) => match ctx.config.model {
                ModelKind::Network => {
                    EngineSpec::mcts(ctx.model(*g)?, ctx.config.arena_simulations)
                }
                ModelKind::Evaluation if *g == 0 => first_player(&ctx.config)?,
                ModelKind::Evaluation => EngineSpec::alphabeta(EVALUATION_DEPTH)
                    .with_evaluation(ctx.model(*g)?)
                    .expect("alpha-beta searches with an evaluation"),
            },
            Player::Baseline(_, spec) => spec.clone(),
        })
    }
}

/// The run's first player, which a run learning an evaluation has (see
/// [`RunConfig::learning_an_evaluation`]).
fn first_player(config: &RunConfig) -> Result<EngineSpec, PipelineError> {
    let text = config.first_player.as_deref().ok_or_else(|| {
        PipelineError::Arena(
            "a run that learns an evaluation needs a first player (run.toml's first_player)"
                .to_string(),
        )
    })?;
    text.parse()
        .map_err(|e| PipelineError::Arena(format!("run.toml's first_player {text}: {e}")))
}

/// An arena between two players, named `A-vs-B`.
#[derive(Clone, Debug, PartialEq)]
pub struct Match {
    pub a: Player,
    pub b: Player,
}

impl Match {
    pub fn name(&self) -> String {
        format!("{}-vs-{}", self.a.label(), self.b.label())
    }
}

/// The arenas of a stage, played as `slots × arena_shards` jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchSet {
    /// A candidate against the best before it, and against generation 0.
    Generation(u32),
    /// The best network against the baselines and generation 0.
    Baselines,
}

impl MatchSet {
    /// Arenas the set may hold (the jobs of a stage are sized before its players are known).
    pub fn slots(self) -> u32 {
        match self {
            MatchSet::Generation(_) => 2,
            MatchSet::Baselines => 4,
        }
    }

    /// The jobs of the set: `slots × arena_shards`.
    pub fn jobs(self, config: &RunConfig) -> u32 {
        self.slots() * config.arena_shards
    }

    /// Where job `job` plays: its arena's slot and its shard.
    pub fn place(config: &RunConfig, job: u32) -> (usize, u32) {
        let shards = config.arena_shards.max(1);
        ((job / shards) as usize, job % shards)
    }

    /// The arenas, once the generations they need are decided. A slot whose arena repeats
    /// another (against generation 0 when the best is generation 0) is left out.
    pub fn matches(self, ctx: &RunContext) -> Result<Vec<Match>, PipelineError> {
        let gen = Player::Generation;
        Ok(match self {
            MatchSet::Generation(g) => {
                let best = best_after(ctx.store, g - 1)?;
                let mut matches = vec![Match {
                    a: gen(g),
                    b: gen(best),
                }];
                if best != 0 {
                    matches.push(Match {
                        a: gen(g),
                        b: gen(0),
                    });
                }
                matches
            }
            MatchSet::Baselines => {
                let best = best_after(ctx.store, ctx.config.generations)?;
                let mut matches: Vec<Match> = baselines(&ctx.config)
                    .into_iter()
                    .map(|(name, spec)| Match {
                        a: gen(best),
                        b: Player::Baseline(name, spec),
                    })
                    .collect();
                if best != 0 {
                    matches.push(Match {
                        a: gen(best),
                        b: gen(0),
                    });
                }
                matches
            }
        })
    }
}

/// The pairs of arena shard `shard`: the arena's pairs split evenly over the shards.
fn shard_pairs(config: &RunConfig, shard: u32) -> std::ops::Range<usize> {
    let per_shard = config
        .arena_pairs
        .div_ceil(config.arena_shards.max(1) as usize);
    let first = (shard as usize * per_shard).min(config.arena_pairs);
    first..(first + per_shard).min(config.arena_pairs)
}

/// Whether arena shard `shard` has pairs to play (more shards than pairs leave some empty).
pub fn shard_has_pairs(config: &RunConfig, shard: u32) -> bool {
    !shard_pairs(config, shard).is_empty()
}

/// What an arena job did.
#[derive(Clone, Debug, PartialEq)]
pub enum ArenaShardOutcome {
    /// The job's slot holds no arena (see [`MatchSet::matches`]), or its shard no pairs.
    Nothing,
    AlreadyStored(String),
    Played {
        name: String,
        result: ArenaResult,
    },
}

/// Plays job `job` of `set` (arena `job / arena_shards`, shard `job % arena_shards`) and
/// stores its games create-only.
pub fn arena_worker(
    ctx: &RunContext,
    set: MatchSet,
    job: u32,
    progress: &dyn Progress,
) -> Result<ArenaShardOutcome, PipelineError> {
    if job >= set.jobs(&ctx.config) {
        return Err(PipelineError::Arena(format!(
            "arena job {job} asked for, this stage has jobs 0 to {}",
            set.jobs(&ctx.config) - 1
        )));
    }
    let (slot, shard) = MatchSet::place(&ctx.config, job);
    let pairs = shard_pairs(&ctx.config, shard);
    let matches = set.matches(ctx)?;
    let Some(arena) = matches.get(slot).filter(|_| !pairs.is_empty()) else {
        return Ok(ArenaShardOutcome::Nothing);
    };
    let name = arena.name();
    let key = arena_shard_key(&name, shard);
    if ctx.store.exists(&key)? {
        return Ok(ArenaShardOutcome::AlreadyStored(name));
    }
    let meter = Meter::start(ctx.device);
    let arena_config = ArenaConfig {
        pairs: pairs.len(),
        first_pair: pairs.start,
        opening_plies: 4,
        max_plies: ctx.config.search.max_plies,
        seed: ctx.config.seed,
        sprt: None,
    };
    let (a, b) = (arena.a.spec(ctx)?, arena.b.spec(ctx)?);
    progress.stage_started("arena", 2 * pairs.len() as u64);
    let result = run_arena(
        &a.factory(ctx.variant, ctx.device, ctx.config.seed),
        &b.factory(ctx.variant, ctx.device, ctx.config.seed + 1),
        ctx.variant,
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
    progress.stage_finished();
    let result = result.map_err(PipelineError::Arena)?;
    put_json_new(ctx.store, &key, &result)?;
    let prefix = arena_cost_prefix(&name);
    meter.record(ctx.store, &format!("{prefix}shard-{shard:04}.json"))?;
    Ok(ArenaShardOutcome::Played { name, result })
}

/// The result of `arena` from its stored shards, in pair order; also stored as
/// `arena/NAME.json`, which later calls read (it is stored only once every shard is, and
/// shards never change, so it stays the merge of them).
pub fn merged_arena(ctx: &RunContext, arena: &Match) -> Result<ArenaResult, PipelineError> {
    let name = arena.name();
    if let Some(merged) = get_json::<ArenaResult>(ctx.store, &arena_key(&name), "an arena result")?
    {
        return Ok(merged);
    }
    let mut games: Vec<ArenaGame> = Vec::new();
    for shard in 0..ctx.config.arena_shards {
        if !shard_has_pairs(&ctx.config, shard) {
            continue;
        }
        let key = arena_shard_key(&name, shard);
        let Some(shard_result) = get_json::<ArenaResult>(ctx.store, &key, "an arena result")?
        else {
            return Err(PipelineError::NotYet {
                key: format!("{}/{key}", ctx.store.url()),
                reason: "this arena shard is not played yet".to_string(),
            });
        };
        games.extend(shard_result.game_results);
    }
    let result = ArenaResult::from_games(
        ctx.variant.id(),
        &arena.a.label(),
        &arena.b.label(),
        games,
        None,
    );
    let json =
        serde_json::to_string_pretty(&result).map_err(|e| PipelineError::Encode(e.to_string()))?;
    ctx.store
        .put(&arena_key(&name), (json + "\n").into_bytes())?;
    Ok(result)
}

/// The promotion rule: a candidate is held back only when its whole 95 % Elo interval
/// against the best lies below zero.
pub fn measurably_worse(versus_best: &ArenaResult) -> bool {
    versus_best.elo_high < 0.0
}

/// Decides on `generation` from its arenas and stores the decision create-only; a stored
/// decision is returned as it is.
pub fn promote(
    ctx: &RunContext,
    generation: u32,
    progress: &dyn Progress,
) -> Result<Promotion, PipelineError> {
    if let Some(stored) = Promotion::load(ctx.store, generation)? {
        return Ok(stored);
    }
    let matches = MatchSet::Generation(generation).matches(ctx)?;
    let versus_best = merged_arena(ctx, &matches[0])?;
    let versus_zero = match matches.get(1) {
        Some(arena) => merged_arena(ctx, arena)?,
        None => versus_best.clone(),
    };
    let parent = best_after(ctx.store, generation - 1)?;
    let promoted = !measurably_worse(&versus_best);
    let promotion = Promotion {
        generation,
        parent,
        promoted,
        best: if promoted { generation } else { parent },
        versus_best: versus_best.summary_line(),
        elo_vs_zero: (versus_zero.elo, versus_zero.elo_low, versus_zero.elo_high),
    };
    put_json_new(ctx.store, &promotion_key(generation), &promotion)?;
    // The stored decision: another driver's, if it decided first (from the same arenas).
    let stored = Promotion::load(ctx.store, generation)?.unwrap_or(promotion);
    progress.log(&format!(
        "generation {generation}: vs best (gen {parent}) {}; {}",
        stored.versus_best,
        if stored.promoted {
            "promoted"
        } else {
            "not promoted"
        }
    ));
    Ok(stored)
}

/// What a run ended with.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The best generation (0: nothing was promoted).
    pub best: u32,
    pub history: Vec<GenerationRow>,
}

/// Writes the report of the run taken to its [`RunConfig::generations`]: `summary.md` and
/// `elo.png` (rewritten), and `reports/gen-NNNN.md` (create-only: the report is done).
pub fn report(ctx: &RunContext) -> Result<Outcome, PipelineError> {
    let mut history = Vec::new();
    let mut arenas = Vec::new();
    let mut spent = Some(Cost::default());
    for generation in 1..=ctx.config.generations {
        let promotion =
            Promotion::load(ctx.store, generation)?.ok_or_else(|| PipelineError::NotYet {
                key: format!("{}/{}", ctx.store.url(), promotion_key(generation)),
                reason: format!("generation {generation} is not decided yet"),
            })?;
        for arena in MatchSet::Generation(generation).matches(ctx)? {
            arenas.push(merged_arena(ctx, &arena)?);
        }
        spent = add_costs(
            spent,
            ctx.store,
            &generation_cost_prefixes(ctx, generation)?,
        )?;
        history.push(GenerationRow {
            generation,
            promoted: promotion.promoted,
            versus_best: promotion.versus_best,
            elo_vs_zero: promotion.elo_vs_zero,
            spent,
        });
    }
    let best = best_after(ctx.store, ctx.config.generations)?;
    let mut baseline_rows = Vec::new();
    let mut best_vs_zero = None;
    let mut baseline_prefixes = Vec::new();
    for arena in MatchSet::Baselines.matches(ctx)? {
        let result = merged_arena(ctx, &arena)?;
        match arena.b {
            Player::Baseline(name, _) => {
                baseline_rows.push((name, result.summary_line()));
                baseline_prefixes.push(arena_cost_prefix(&arena.name()));
                arenas.push(result);
            }
            // The best's own generation played it: its games and cost are counted there.
            Player::Generation(_) => best_vs_zero = Some(result),
        }
    }
    let scale = ladder_scale(&arenas)?;
    let report = RunReport {
        config: &ctx.config,
        best,
        history: &history,
        best_vs_zero: best_vs_zero.as_ref(),
        baselines: &baseline_rows,
        scale: &scale,
        baselines_spent: add_costs(Some(Cost::default()), ctx.store, &baseline_prefixes)?,
    };
    let scratch = ctx.scratch()?;
    let (summary, plot) = (
        scratch.path().join("summary.md"),
        scratch.path().join("elo.png"),
    );
    write_summary(&summary, &report)?;
    plot_elo(&plot, &report)?;
    let read = |path: &Path| std::fs::read(path).map_err(|e| ctx.io(path, e));
    ctx.store.put(ELO_PLOT_KEY, read(&plot)?)?;
    ctx.store.put(SUMMARY_KEY, read(&summary)?)?;
    match ctx
        .store
        .put_new(&report_key(ctx.config.generations), read(&summary)?)
    {
        Ok(()) | Err(StoreError::AlreadyExists { .. }) => {}
        Err(e) => return Err(e.into()),
    }
    Ok(Outcome { best, history })
}

/// `total` plus the costs stored under each of `prefixes`; `None` once one is unknown.
/// Where the costs of generation `generation`'s jobs are kept: the self-play it learnt
/// from, its training and its arenas.
pub(crate) fn generation_cost_prefixes(
    ctx: &RunContext,
    generation: u32,
) -> Result<Vec<String>, PipelineError> {
    let mut prefixes = vec![
        selfplay_cost_prefix(generation - 1),
        train_cost_prefix(generation),
    ];
    for arena in MatchSet::Generation(generation).matches(ctx)? {
        prefixes.push(arena_cost_prefix(&arena.name()));
    }
    Ok(prefixes)
}

fn add_costs(
    total: Option<Cost>,
    store: &Store,
    prefixes: &[String],
) -> Result<Option<Cost>, PipelineError> {
    let mut total = total;
    for prefix in prefixes {
        total = total.zip(stored_costs(store, prefix)?).map(|(a, b)| a + b);
    }
    Ok(total)
}

/// The cores this process may use.
pub(crate) fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PipelinePreset;

    /// The windows of generations 1 to 4 of a run of `model` whose generation 2 was held
    /// back: their parents are 0, 1, 1 and 3.
    fn windows_after_a_held_back_candidate(model: ModelKind) -> Vec<u32> {
        let config = RunConfig::new(Variant::Chess, PipelinePreset::Smoke, 0, Some(4));
        let config = match model {
            ModelKind::Network => config,
            ModelKind::Evaluation => config.learning_an_evaluation(),
        };
        [(1, 0), (2, 1), (3, 1), (4, 3)]
            .into_iter()
            .map(|(generation, parent)| window_length(&config, generation, parent))
            .collect()
    }

    /// Generation `generation`'s window after the best generation `parent`, on the
    /// self-play generations `sources`.
    fn window(generation: u32, parent: u32, sources: &[u32]) -> TrainingWindow {
        TrainingWindow {
            generation,
            parent,
            data: sources
                .iter()
                .map(|&generation| WindowGeneration {
                    generation,
                    game_ids: (0, 1),
                    objects: Vec::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn the_first_training_preset_trains_from_generation_zero_on_the_first_players_games() {
        let config = RunConfig {
            first_player: Some("alphabeta:depth=2".to_string()),
            first_train: Some("imitate".to_string()),
            ..RunConfig::new(Variant::Chess, PipelinePreset::Demo, 0, Some(4))
        };
        // Generation 1, and generation 2 after generation 1 was held back.
        assert_eq!(training_preset(&config, &window(1, 0, &[0])), "imitate");
        assert_eq!(training_preset(&config, &window(2, 0, &[0, 1])), "imitate");
        // From a trained network, or on a window without the player's games: the run's.
        assert_eq!(training_preset(&config, &window(2, 1, &[0, 1])), "demo");
        assert_eq!(
            training_preset(&config, &window(6, 0, &[2, 3, 4, 5])),
            "demo"
        );
        let without_player = RunConfig {
            first_player: None,
            ..config.clone()
        };
        assert_eq!(
            training_preset(&without_player, &window(1, 0, &[0])),
            "demo"
        );
        // Generation 0's games are the first player's count; the later ones the run's.
        let games = RunConfig {
            first_player_games: Some(15_000),
            selfplay_shards: 4,
            ..config
        };
        assert_eq!(
            (games.selfplay_games_of(0), games.games_per_shard(0)),
            (15_000, 3_750)
        );
        assert_eq!(
            (games.selfplay_games_of(1), games.games_per_shard(1)),
            (1_000, 250)
        );
    }

    #[test]
    fn a_window_with_the_first_players_games_is_fitted_to_the_results_alone() {
        let tmp = ninjazero_testkit::temp_dir();
        let store = Store::open(ninjazero_testkit::text(tmp.path())).unwrap();
        // Generation 1 was held back, so its games are the first player's again.
        let played_by = [None, None, Some(model_key(ModelKind::Evaluation, 2))];
        for (generation, model) in (0..).zip(played_by) {
            let manifest = Manifest {
                generation,
                model,
                player: Some(EngineSpec::alphabeta_counting(1).to_string()),
                ..crate::worker::tests::manifest()
            };
            manifest.publish(&store).unwrap();
        }
        let firsts = |sources: &[u32]| first_players_generations(&store, &window(4, 1, sources));
        assert_eq!(firsts(&[0, 1, 2]).unwrap(), [0, 1]);
        assert_eq!(firsts(&[2]).unwrap(), [] as [u32; 0]);
        let run = RunConfig {
            square_l2: Some(vec![0.3]),
            value_target_mix: Some(0.5),
            ..RunConfig::new(Variant::Asylum, PipelinePreset::Smoke, 0, Some(4))
        }
        .learning_an_evaluation();
        let fitted = |firsts: &[u32]| {
            let config = fit_config(&run, firsts);
            (config.square_l2, config.value_target_mix)
        };
        assert_eq!(fitted(&[1]), (vec![0.3], 0.0));
        assert_eq!(fitted(&[]), (vec![0.3], 0.5));
        let results_alone = RunConfig {
            value_target_mix: None,
            ..run.clone()
        };
        assert_eq!(fit_config(&results_alone, &[]).value_target_mix, 0.0);
    }

    #[test]
    fn an_evaluation_widens_its_window_after_a_held_back_candidate() {
        assert_eq!(
            windows_after_a_held_back_candidate(ModelKind::Evaluation),
            [2, 2, 4, 2]
        );
        assert_eq!(
            windows_after_a_held_back_candidate(ModelKind::Network),
            [4, 4, 4, 4]
        );
    }
}
