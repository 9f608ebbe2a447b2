//! `worker` and `status`: stateless workers on a run stored behind one URL (a path,
//! `file:///abs/path` or `s3://bucket/prefix`), one per stage of the pipeline (the jobs the
//! Slurm driver submits), and what the stored objects say about a run. The work lives in
//! [`ninjazero_pipeline::stages`] and [`ninjazero_pipeline::worker`].

use super::numbers::{whole, MAX_THREADS};
use super::{parse_variant, StageBars};
use anyhow::Context as _;
use clap::{Args, Subcommand};
use ninjazero_model::parse_device;
use ninjazero_pipeline::layout::model_key;
use ninjazero_pipeline::scheduler::stage_status;
use ninjazero_pipeline::stages::{latest_best, selfplay_worker, MatchSet};
use ninjazero_pipeline::worker::{Manifest, ShardJob, MANIFEST_FORMAT};
use ninjazero_pipeline::{
    counted, generation_status, selfplay_shard, PipelineError, PipelinePreset, RunConfig,
    RunContext, ShardOutcome, Stage, Store,
};
use ninjazero_rules::Variant;
use ninjazero_selfplay::{MAX_CONCURRENCY, MAX_SIMULATIONS, MIN_CONCURRENCY};
use std::path::PathBuf;
use tch::Device;

use super::ladder::LadderArgs;
use super::pipeline::PresetArg;
use super::values::ValuesArgs;
use ninjazero_arena::Shard;
use ninjazero_values::rounds::play_match_shard;

#[derive(Subcommand, Debug)]
pub enum WorkerCommand {
    /// Play one self-play shard of a generation (games [K·M, (K+1)·M) of its manifest) and
    /// store it with create-only puts; a shard already stored is left alone (exit 0).
    Selfplay(SelfPlayShardArgs),
    /// Plan a generation's self-play: store its MANIFEST.json (create-only; the same
    /// manifest again is no change, another one is refused).
    Manifest(ManifestArgs),
    /// Train generation G's candidate on the complete self-play shards of its window
    /// (recorded in train/gen-G/window.json, create-only) and store it.
    Train(GenerationJobArgs),
    /// Play one shard of generation G's arenas (job J: arena J / S, shard J % S of the
    /// run's S arena shards) and store its games.
    Arena(ShardJobArgs),
    /// Decide on generation G from its arenas; stores promotion/gen-G.json once.
    Promote(GenerationJobArgs),
    /// Play one shard of the best network's games against the baselines.
    Baselines(BaselineJobArgs),
    /// Write the run's report (summary.md, elo.png) from the stored results.
    Report(StageArgs),
    /// Play one job's share of a ladder's or a piece-value study's games (e.g. one task of
    /// a Slurm array on a shared filesystem); the `ladder` or `values` command with the same
    /// arguments then merges the shares, plays what none stored, and reports.
    #[command(subcommand)]
    Match(MatchCommand),
}

#[derive(Subcommand, Debug)]
pub enum MatchCommand {
    /// Shard K of N of a ladder: its slice of every pairing's openings, stored beside the
    /// pairing's object in --dir (a directory, file:// or s3://) as PAIRING.part-F-L.json.
    Ladder(LadderShardArgs),
    /// Shard K of N of the handicap matches of `values`: its slice of every handicap's
    /// games of the first round that is not complete (self-consistent rounds: one wave of
    /// jobs per round, each after the last), stored under --out/matches/ (a directory,
    /// file:// or s3://) as parts.
    Values(ValuesShardArgs),
}

/// Which share of the games a match job plays.
#[derive(Args, Debug)]
pub struct ShardOf {
    /// This job's shard K, from 0 (e.g. $SLURM_ARRAY_TASK_ID). [range: 0 to 99999]
    #[arg(long, value_parser = whole::<usize>(0, 99_999))]
    shard: usize,
    /// The number of shards N sharing the games. [range: 1 to 100000]
    #[arg(long, value_parser = whole::<usize>(1, 100_000))]
    shards: usize,
}

impl ShardOf {
    fn shard(&self) -> anyhow::Result<Shard> {
        Shard::new(self.shard, self.shards).map_err(|e| anyhow::anyhow!("--shard: {e}"))
    }
}

#[derive(Args, Debug)]
pub struct LadderShardArgs {
    #[command(flatten)]
    of: ShardOf,
    #[command(flatten)]
    ladder: LadderArgs,
}

#[derive(Args, Debug)]
pub struct ValuesShardArgs {
    #[command(flatten)]
    of: ShardOf,
    /// Boxed: a study's arguments (its player's spec) outweigh every other worker command.
    #[command(flatten)]
    values: Box<ValuesArgs>,
}

/// What every stage worker takes.
#[derive(Args, Debug)]
pub struct StageArgs {
    /// The run: a path, file:///abs/path or s3://bucket/prefix (AWS_* variables for S3).
    #[arg(long)]
    run: String,
    /// cpu, cuda, cuda:N or auto.
    #[arg(long, value_parser = parse_device, default_value = "auto")]
    device: Device,
    /// CPU threads for tree work and libtorch (default: all cores). [range: 1 to 1024]
    #[arg(long, value_parser = whole::<usize>(1, MAX_THREADS))]
    threads: Option<usize>,
    /// Where fetched objects and training work are kept when the run is not a local
    /// directory (default: $NINJAZERO_CACHE, else ~/.cache/ninjazero).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// When an input is not stored yet (a shard still playing, a network still training),
    /// look again every few seconds for up to this many seconds instead of refusing at once:
    /// for jobs started together without a scheduler's dependencies (e.g. Kubernetes
    /// Jobs). [range: 0 to 604800]
    #[arg(long, value_parser = whole::<u64>(0, 604_800), default_value_t = 0)]
    wait: u64,
}

#[derive(Args, Debug)]
pub struct GenerationJobArgs {
    #[command(flatten)]
    stage: StageArgs,
    /// The generation. [range: 1 to 9999]
    #[arg(long, value_parser = whole::<u32>(1, 9999))]
    generation: u32,
}

#[derive(Args, Debug)]
pub struct ShardJobArgs {
    #[command(flatten)]
    stage: StageArgs,
    /// The generation. [range: 1 to 9999]
    #[arg(long, value_parser = whole::<u32>(1, 9999))]
    generation: u32,
    /// The job (a Slurm array's task id). [range: 0 to 999999]
    #[arg(long, value_parser = whole::<u32>(0, 999_999))]
    shard: u32,
}

#[derive(Args, Debug)]
pub struct BaselineJobArgs {
    #[command(flatten)]
    stage: StageArgs,
    /// The job (a Slurm array's task id). [range: 0 to 999999]
    #[arg(long, value_parser = whole::<u32>(0, 999_999))]
    shard: u32,
}

#[derive(Args, Debug)]
pub struct SelfPlayShardArgs {
    #[command(flatten)]
    stage: StageArgs,
    /// The generation whose self-play to play. [range: 0 to 9999]
    #[arg(long, value_parser = whole::<u32>(0, 9999))]
    generation: u32,
    /// The shard K. [range: 0 to 999999]
    #[arg(long, value_parser = whole::<u32>(0, 999_999))]
    shard: u32,
    /// The model's key in the run (models/gen-NNNN.safetensors); default: the manifest's.
    #[arg(long)]
    model: Option<String>,
    /// Refuse a run planned for another variant.
    #[arg(long, value_parser = parse_variant)]
    variant: Option<Variant>,
}

#[derive(Args, Debug)]
pub struct ManifestArgs {
    /// The run: a path, file:///abs/path or s3://bucket/prefix.
    #[arg(long)]
    run: String,
    /// The generation to plan. [range: 0 to 9999]
    #[arg(long, value_parser = whole::<u32>(0, 9999))]
    generation: u32,
    #[arg(long, value_parser = parse_variant)]
    variant: Variant,
    /// The search and concurrency of the pipeline preset of this name.
    #[arg(long, value_enum, default_value = "demo")]
    preset: PresetArg,
    /// The run's seed (a game's seed derives from it, the generation and the game id).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Shards K. [range: 1 to 100000]
    #[arg(long, value_parser = whole::<u32>(1, 100_000))]
    shards: u32,
    /// Games per shard M. [range: 1 to 10000000]
    #[arg(long, value_parser = whole::<u64>(1, 10_000_000))]
    games_per_shard: u64,
    /// Games per stored part of a shard (default: 64, at most M). [range: 1 to 10000000]
    #[arg(long, value_parser = whole::<u64>(1, 10_000_000))]
    games_per_part: Option<u64>,
    /// The model's key in the run (models/gen-NNNN.safetensors); default: model-free search.
    #[arg(long)]
    model: Option<String>,
    /// Simulations per full search (default: the preset's). [range: 1 to 1000000]
    #[arg(long, value_parser = whole::<u32>(1, MAX_SIMULATIONS.into()))]
    sims: Option<u32>,
    /// Simulations per cheap search (default: the preset's). [range: 1 to 1000000]
    #[arg(long, value_parser = whole::<u32>(1, MAX_SIMULATIONS.into()))]
    cheap_sims: Option<u32>,
    /// Games longer than this are adjudicated (default: the preset's). [range: 1 to 10000]
    #[arg(long, value_parser = whole::<u32>(1, 10_000))]
    max_plies: Option<u32>,
    /// Games played at once by a worker (default: the preset's). [range: 2 to 65536]
    #[arg(long, value_parser = whole::<usize>(MIN_CONCURRENCY as u64, MAX_CONCURRENCY as u64))]
    concurrency: Option<usize>,
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// The run: a path, file:///abs/path or s3://bucket/prefix.
    #[arg(long)]
    run: String,
    /// Print only where the best model is after the last decided generation: its path (its
    /// URL in a remote run), for `alphabeta:PATH` or `mcts:PATH`. Fails while nothing is
    /// decided, and while generation 0 (which has no trained model) is still the best.
    #[arg(long)]
    best: bool,
}

pub fn run(command: WorkerCommand) -> anyhow::Result<()> {
    let (stage, args, job) = match command {
        WorkerCommand::Match(command) => return play_match_share(command),
        WorkerCommand::Selfplay(args) => return run_shard(args),
        WorkerCommand::Manifest(args) => return plan(args),
        WorkerCommand::Train(a) => (Stage::Train(a.generation), a.stage, 0),
        WorkerCommand::Promote(a) => (Stage::Promote(a.generation), a.stage, 0),
        WorkerCommand::Arena(a) => (
            Stage::Arena(MatchSet::Generation(a.generation)),
            a.stage,
            a.shard,
        ),
        WorkerCommand::Baselines(a) => (Stage::Arena(MatchSet::Baselines), a.stage, a.shard),
        WorkerCommand::Report(a) => (Stage::Report, a, 0),
    };
    let (store, cache) = open_worker(&args)?;
    let ctx = RunContext::open(&store, args.device, &cache)?;
    waiting(args.wait, &mut || {
        Ok(stage.run(&ctx, job, &StageBars::default())?)
    })?;
    println!("{} (job {job}): done", stage.label());
    Ok(())
}

/// Runs `job`; while it fails for an input that is not stored yet, runs it again every
/// few seconds until `wait` seconds have passed, then fails as it did.
fn waiting<T>(wait: u64, job: &mut dyn FnMut() -> anyhow::Result<T>) -> anyhow::Result<T> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(wait);
    let mut announced = false;
    loop {
        let error = match job() {
            Err(error) if std::time::Instant::now() < deadline => error,
            done => return done,
        };
        let Some(PipelineError::NotYet { key, reason }) = error.downcast_ref() else {
            return Err(error);
        };
        if !announced {
            eprintln!("waiting up to {wait} s for {key} ({reason})");
            announced = true;
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        std::thread::sleep(left.min(std::time::Duration::from_secs(2)));
    }
}

fn play_match_share(command: MatchCommand) -> anyhow::Result<()> {
    match command {
        MatchCommand::Ladder(args) => {
            let shard = args.of.shard()?;
            let job = super::ladder::job(args.ladder, Some(shard))?;
            let report = super::ladder::play(&job)?;
            println!(
                "ladder {shard}: {} games played now, {} were stored in {}",
                report.played, report.reused, job.location
            );
        }
        MatchCommand::Values(args) => {
            let shard = args.of.shard()?;
            let (study, out) = super::values::study(*args.values)?;
            match play_match_shard(&study, &out, shard, &StageBars::default())? {
                Some(done) if done.played == 0 => println!(
                    "matches {shard}: round {}: this shard's games were stored already; the round waits for other shards",
                    done.round
                ),
                Some(done) => println!(
                    "matches {shard}: round {}: {} games played now into {out}/matches",
                    done.round,
                    done.played,
                ),
                None => println!(
                    "matches {shard}: every round is complete in {out}/matches; nothing to play"
                ),
            }
        }
    }
    Ok(())
}

/// Sizes the worker's thread pools, and opens the run; its store and the local cache.
fn open_worker(args: &StageArgs) -> anyhow::Result<(Store, PathBuf)> {
    let threads = args.threads.unwrap_or_else(super::available_threads);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .context("starting the worker threads")?;
    tch::set_num_threads(threads as i32);
    let store = Store::open(&args.run)?;
    let cache = args
        .cache
        .clone()
        .unwrap_or_else(|| default_cache(store.url()));
    Ok((store, cache))
}

fn run_shard(args: SelfPlayShardArgs) -> anyhow::Result<()> {
    let (store, cache) = open_worker(&args.stage)?;
    let name = format!("generation {} shard {}", args.generation, args.shard);
    // A pipeline's generation is planned from its settings by the first worker that needs
    // it; a generation planned by hand (`worker manifest`) is played as it is, and one
    // that is neither is refused for its missing manifest.
    let plannable = args.model.is_none()
        && !store.exists(&Manifest::key(args.generation))?
        && store.exists(ninjazero_pipeline::layout::CONFIG_KEY)?;
    if plannable {
        let ctx = RunContext::open(&store, args.stage.device, &cache)?;
        if let Some(expected) = args.variant.filter(|&v| v != ctx.variant) {
            anyhow::bail!(
                "{}: the run is of {}, not {}",
                store.url(),
                ctx.variant.id(),
                expected.id()
            );
        }
        let outcome = waiting(args.stage.wait, &mut || {
            Ok(selfplay_worker(
                &ctx,
                args.generation,
                args.shard,
                &StageBars::default(),
            )?)
        })?;
        return report_shard(&name, outcome);
    }
    let job = ShardJob {
        generation: args.generation,
        shard: args.shard,
        model: args.model.as_deref(),
        variant: args.variant,
        device: args.stage.device,
        cache: &cache,
    };
    let outcome = selfplay_shard(&store, &job, &StageBars::default())?;
    report_shard(&name, outcome)
}

fn report_shard(name: &str, outcome: ShardOutcome) -> anyhow::Result<()> {
    match outcome {
        ShardOutcome::AlreadyDone => println!("{name}: already stored, nothing to do"),
        ShardOutcome::Played {
            parts_stored,
            parts_found,
            games,
            positions,
        } => println!(
            "{name}: stored {} ({}, {}), {} {} stored already; shard done",
            counted(parts_stored, "part"),
            counted(games, "game"),
            counted(positions, "position"),
            counted(parts_found, "part"),
            if parts_found == 1 { "was" } else { "were" },
        ),
    }
    Ok(())
}

/// `$NINJAZERO_CACHE`, else `~/.cache/ninjazero`, else the temp dir; one folder per store.
pub fn default_cache(url: &str) -> PathBuf {
    let root = std::env::var_os("NINJAZERO_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/ninjazero"))
        })
        .unwrap_or_else(|| std::env::temp_dir().join("ninjazero-cache"));
    // FNV-1a of the URL: a short folder name that no two stores share in practice.
    let hash = url.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    root.join(format!("{hash:016x}"))
}

fn plan(args: ManifestArgs) -> anyhow::Result<()> {
    let store = Store::open(&args.run)?;
    if store.exists(ninjazero_pipeline::layout::CONFIG_KEY)? {
        let run = RunConfig::load_from(&store)?.variant()?;
        if run != args.variant {
            anyhow::bail!(
                "{}: the run is {run}, but --variant {} was given",
                store.url(),
                args.variant
            );
        }
    }
    if let Some(model) = &args.model {
        if !store.exists(model)? {
            anyhow::bail!("{}/{model}: no such model in the run", store.url());
        }
    }
    let preset: PipelinePreset = args.preset.into();
    let defaults = RunConfig::new(args.variant, preset, args.seed, None);
    let mut search = defaults.search;
    search.simulations = args.sims.unwrap_or(search.simulations);
    search.cheap_simulations = args.cheap_sims.unwrap_or(search.cheap_simulations);
    search.max_plies = args.max_plies.unwrap_or(search.max_plies);
    let manifest = Manifest {
        format: MANIFEST_FORMAT,
        variant: args.variant.id().to_string(),
        generation: args.generation,
        shards: args.shards,
        games_per_shard: args.games_per_shard,
        games_per_part: args.games_per_part.unwrap_or(64).min(args.games_per_shard),
        seed: args.seed,
        concurrency: args.concurrency.unwrap_or(defaults.concurrency),
        search,
        model: args.model,
        player: None,
    };
    let key = Manifest::key(args.generation);
    if manifest.publish(&store)? {
        println!("{}/{key}: stored", store.url());
    } else {
        println!("{}/{key}: already stored with these settings", store.url());
    }
    Ok(())
}

/// Where the best model of the run in `store` is, after its last decided generation.
fn best_model(store: &Store) -> anyhow::Result<String> {
    let config = RunConfig::load_from(store)?;
    let Some((decided, best)) = latest_best(store, config.generations)? else {
        anyhow::bail!("{}: no generation is decided yet", store.url());
    };
    // Generation 0 has no model of either kind: its games are the first player's or the
    // model-free search's, as self-play plans them.
    if best == 0 {
        anyhow::bail!(
            "{}: no trained model beat generation 0's player by generation {decided}",
            store.url()
        );
    }
    // A local run's path as the user spelled it, so that a script's player spec keeps it.
    let place = store.url().trim_start_matches("file://");
    Ok(format!("{place}/{}", model_key(config.model, best)))
}

pub fn status(args: StatusArgs) -> anyhow::Result<()> {
    let store = Store::open_existing(&args.run)?;
    if args.best {
        println!("{}", best_model(&store)?);
        return Ok(());
    }
    let generations = generation_status(&store)?;
    let has_settings = store.exists(ninjazero_pipeline::layout::CONFIG_KEY)?;
    if generations.is_empty() {
        // Neither settings nor self-play: not a run (a parent directory, a typo), which an
        // "empty" answer would hide. Self-play planned by `worker manifest` has no settings.
        if !has_settings {
            return Err(RunConfig::no_run_here(&store).into());
        }
        println!("{}: no self-play stored", store.url());
    }
    for generation in generations {
        println!("{generation}");
    }
    if has_settings {
        let ctx = RunContext::open(&store, Device::Cpu, &default_cache(store.url()))?;
        for (stage, done, total) in stage_status(&ctx)? {
            println!("{}: {done} of {total} jobs stored", stage.label());
        }
    }
    Ok(())
}
