//! Who runs a run's stages ([`crate::stages`]): this process, one after another
//! ([`run_local`]), or a Slurm cluster ([`run_slurm`]): one job chain per generation, a
//! self-play job array → training (`--dependency afterok`) → an arena job array →
//! promotion, and at the end the baselines and the report. Both run the same stage code
//! through the same stored objects, so a run may be started on one and continued on the
//! other, and a rerun only does (or submits) what is missing.

use crate::cost::{stored_costs, Cost};
use crate::layout::{
    arena_cost_prefix, arena_shard_key, model_key, promotion_key, report_key, selfplay_cost_prefix,
    train_cost_prefix, COST_PREFIX,
};
use crate::stages::{
    arena_worker, best_after, generation_cost_prefixes, initial_model, promote, report,
    selfplay_worker, shard_has_pairs, train_generation, ArenaShardOutcome, MatchSet, Outcome,
    RunContext,
};
use crate::worker::{done_key, ShardOutcome};
use crate::Store;
use crate::{generation_name, PipelineError, Progress, MAX_GENERATIONS};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A stage of a run, in the order the stages run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The self-play of generation `g`'s best network (it trains generation `g + 1`).
    SelfPlay(u32),
    Train(u32),
    Arena(MatchSet),
    Promote(u32),
    Report,
}

impl Stage {
    /// Every stage of a run of `generations`, in order.
    pub fn all(generations: u32) -> Vec<Stage> {
        let mut stages: Vec<Stage> = (1..=generations).flat_map(Stage::of_generation).collect();
        stages.extend(Stage::FINAL);
        stages
    }

    /// The stages that make generation `g`: the self-play it learns from, its training, its
    /// arenas and the decision on it.
    pub fn of_generation(g: u32) -> [Stage; 4] {
        [
            Stage::SelfPlay(g - 1),
            Stage::Train(g),
            Stage::Arena(MatchSet::Generation(g)),
            Stage::Promote(g),
        ]
    }

    /// The stages after the last generation.
    pub const FINAL: [Stage; 2] = [Stage::Arena(MatchSet::Baselines), Stage::Report];

    /// `selfplay gen-0001`, `report`: how messages and job names call the stage.
    pub fn label(self) -> String {
        match self {
            Stage::SelfPlay(g) => format!("selfplay {}", generation_name(g)),
            Stage::Train(g) => format!("train {}", generation_name(g)),
            Stage::Arena(MatchSet::Generation(g)) => format!("arena {}", generation_name(g)),
            Stage::Arena(MatchSet::Baselines) => "baselines".to_string(),
            Stage::Promote(g) => format!("promote {}", generation_name(g)),
            Stage::Report => "report".to_string(),
        }
    }

    /// Jobs of the stage (an array's tasks, or 1).
    fn jobs(self, ctx: &RunContext) -> u32 {
        match self {
            Stage::SelfPlay(_) => ctx.config.selfplay_shards,
            Stage::Arena(set) => set.jobs(&ctx.config),
            Stage::Train(_) | Stage::Promote(_) | Stage::Report => 1,
        }
    }

    /// Whether the stage runs as a job array (its jobs take the task id as `--shard`).
    fn is_array(self) -> bool {
        matches!(self, Stage::SelfPlay(_) | Stage::Arena(_))
    }

    /// The stage's jobs whose output is not stored.
    pub fn missing(self, ctx: &RunContext) -> Result<Vec<u32>, PipelineError> {
        let store = ctx.store;
        let single = |done: bool| if done { Vec::new() } else { vec![0] };
        Ok(match self {
            Stage::SelfPlay(g) => {
                let mut missing = Vec::new();
                for shard in 0..ctx.config.selfplay_shards {
                    if !store.exists(&done_key(g, shard))? {
                        missing.push(shard);
                    }
                }
                missing
            }
            Stage::Train(g) => single(store.exists(&model_key(ctx.config.model, g))?),
            Stage::Promote(g) => single(store.exists(&promotion_key(g))?),
            Stage::Report => single(store.exists(&report_key(ctx.config.generations))?),
            Stage::Arena(set) => {
                // Before the players are decided, every job may have an arena to play.
                let Ok(matches) = set.matches(ctx) else {
                    return Ok((0..set.jobs(&ctx.config)).collect());
                };
                let mut missing = Vec::new();
                for job in 0..set.jobs(&ctx.config) {
                    let (slot, shard) = MatchSet::place(&ctx.config, job);
                    let Some(arena) = matches.get(slot) else {
                        continue;
                    };
                    let key = arena_shard_key(&arena.name(), shard);
                    if shard_has_pairs(&ctx.config, shard) && !store.exists(&key)? {
                        missing.push(job);
                    }
                }
                missing
            }
        })
    }

    /// Runs job `job` of the stage in this process.
    pub fn run(
        self,
        ctx: &RunContext,
        job: u32,
        progress: &dyn Progress,
    ) -> Result<(), PipelineError> {
        match self {
            Stage::SelfPlay(g) => {
                let started = Instant::now();
                if let ShardOutcome::Played {
                    games, positions, ..
                } = selfplay_worker(ctx, g, job, progress)?
                {
                    progress.log(&format!(
                        "self-play {} shard {job}: {games} games, {positions} positions, {:.0} positions/s",
                        generation_name(g),
                        positions as f64 / started.elapsed().as_secs_f64().max(1e-9)
                    ));
                }
            }
            Stage::Train(g) => drop(train_generation(ctx, g, progress)?),
            Stage::Arena(set) => {
                if let ArenaShardOutcome::Played { name, result } =
                    arena_worker(ctx, set, job, progress)?
                {
                    progress.log(&format!(
                        "arena {name} (job {job}): {}",
                        result.summary_line()
                    ));
                }
            }
            Stage::Promote(g) => drop(promote(ctx, g, progress)?),
            Stage::Report => drop(report(ctx)?),
        }
        Ok(())
    }
}

/// Runs (or continues) the whole run in this process: generation 0, every generation's
/// stages, the baselines and the report. Work already stored is skipped.
pub fn run_local(ctx: &RunContext, progress: &dyn Progress) -> Result<Outcome, PipelineError> {
    start(ctx, progress)?;
    run_stages(ctx, Stage::all(ctx.config.generations), progress)?;
    report(ctx)
}

/// Stores generation 0 unless it is stored.
fn start(ctx: &RunContext, progress: &dyn Progress) -> Result<(), PipelineError> {
    if initial_model(ctx)? {
        progress.log(&format!(
            "generation 0: initial {} network",
            ctx.config.network
        ));
    }
    Ok(())
}

/// Runs every job of `stages` in this process, in order (a stored job returns at once).
fn run_stages(
    ctx: &RunContext,
    stages: impl IntoIterator<Item = Stage>,
    progress: &dyn Progress,
) -> Result<(), PipelineError> {
    for stage in stages {
        for job in 0..stage.jobs(ctx) {
            stage.run(ctx, job, progress)?;
        }
    }
    Ok(())
}

/// Runs (or continues) a run with a wall-time budget ([`RunConfig::hours`]) in this
/// process: generation after generation while the next one is expected to end in time
/// ([`next_generation_fits`]), each added to `run.toml`'s `generations` as it is begun, then
/// the baselines and the report. Work already stored is skipped, and the time it took
/// counts, so a rerun continues the same budget.
pub fn run_local_budgeted(
    store: &Store,
    device: tch::Device,
    cache: &Path,
    progress: &dyn Progress,
) -> Result<Outcome, PipelineError> {
    loop {
        let ctx = RunContext::open(store, device, cache)?;
        start(&ctx, progress)?;
        let generations = (1..=ctx.config.generations).flat_map(Stage::of_generation);
        run_stages(&ctx, generations, progress)?;
        let budget = next_generation_fits(&ctx)?;
        progress.log(&budget.to_string());
        if !budget.fits || ctx.config.generations >= MAX_GENERATIONS {
            break;
        }
        let mut config = ctx.config.clone();
        config.generations += 1;
        config.save_to(store)?;
    }
    let ctx = RunContext::open(store, device, cache)?;
    run_stages(&ctx, Stage::FINAL, progress)?;
    report(&ctx)
}

/// Whether one more generation fits a run's budget, and why.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BudgetCheck {
    /// Generations decided so far.
    pub generations: u32,
    pub budget_hours: f64,
    /// Wall hours of every job stored so far.
    pub spent_hours: f64,
    /// Wall hours the next generation is expected to take: the last one's.
    pub next_hours: f64,
    /// Wall hours kept for the baselines: each of their arenas as long as the last
    /// generation's arenas were on average.
    pub baselines_hours: f64,
    pub fits: bool,
}

impl std::fmt::Display for BudgetCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "budget: {:.2} of {:.2} h spent after generation {}; the next one is expected to take {:.2} h and the baselines {:.2} h: {}",
            self.spent_hours,
            self.budget_hours,
            self.generations,
            self.next_hours,
            self.baselines_hours,
            if self.fits { "it fits" } else { "stopping here" }
        )
    }
}

/// Whether the run's next generation is expected to end within [`RunConfig::hours`]: the
/// wall time of every job stored so far, plus the last generation's (the next one plays as
/// many games with a network of the same size; a first player's `first_player_games` count
/// as the run's games per generation, a first training with `first_train` as the run's
/// preset by its steps × batch), plus the baselines' arenas, at most the
/// budget. A baseline arena's games search with the network on one side only, so each is
/// expected to take half as long as the last generation's arenas on average (the final
/// best against generation 0 is the arena its own generation played). Wall times are the jobs'
/// own (one process runs one job at a time, so they add up to the run's wall time). A run
/// that learns an evaluation expects the generation after the first player's games to cost
/// [`EVALUATION_FIRST_STEP`] times the one before, every later one the last one's.
///
/// # Panics
/// If the run has no budget (`hours`).
pub fn next_generation_fits(ctx: &RunContext) -> Result<BudgetCheck, PipelineError> {
    let hours = |cost: Option<Cost>| cost.map_or(0.0, |c| c.wall_seconds / 3600.0);
    let generation = ctx.config.generations;
    let mut next = 0.0;
    for prefix in generation_cost_prefixes(ctx, generation)? {
        next += hours(stored_costs(ctx.store, &prefix)?);
    }
    let arenas = MatchSet::Generation(generation).matches(ctx)?;
    let mut arena_hours = 0.0;
    for arena in &arenas {
        arena_hours += hours(stored_costs(ctx.store, &arena_cost_prefix(&arena.name()))?);
    }
    // The next generation plays the run's games per generation, where a first player's
    // generation 0 may have played more (`first_player_games`).
    let stored_games = hours(stored_costs(
        ctx.store,
        &selfplay_cost_prefix(generation - 1),
    )?);
    let same_games = stored_games * ctx.config.selfplay_games as f64
        / ctx.config.selfplay_games_of(generation - 1) as f64;
    next += same_games - stored_games;
    if best_after(ctx.store, generation - 1)? == 0 && best_after(ctx.store, generation)? > 0 {
        // The games behind this generation were a first player's or the model-free
        // search's, far cheaper than the self-play with the trained model the next one plays,
        // which trains from that model with the run's own preset.
        match ctx.config.model {
            crate::ModelKind::Network => {
                let arena_games = arenas.len() * 2 * ctx.config.arena_pairs;
                let network = network_selfplay_hours(&ctx.config, arena_games, arena_hours);
                next += network.max(same_games) - same_games;
                let trained = hours(stored_costs(ctx.store, &train_cost_prefix(generation))?);
                next -= trained * (1.0 - run_training_share(&ctx.config, generation));
            }
            crate::ModelKind::Evaluation => next *= EVALUATION_FIRST_STEP,
        }
    }
    // Half a network-against-network arena each: on the `cpu` preset the three took 7.0 min
    // where a whole arena each, plus the best against generation 0 (which is stored
    // already), had reserved 22 min.
    let baseline_arenas = 0.5 * crate::baselines(&ctx.config).len() as f64;
    let baselines = arena_hours / arenas.len() as f64 * baseline_arenas;
    let spent = hours(stored_costs(ctx.store, COST_PREFIX)?);
    let budget = ctx.config.hours.expect("a run with a budget");
    Ok(BudgetCheck {
        generations: generation,
        budget_hours: budget,
        spent_hours: spent,
        next_hours: next,
        baselines_hours: baselines,
        fits: spent + next + baselines <= budget,
    })
}

/// How many times the generation after the first player's games costs the one before in a
/// run that learns an evaluation: its games search deeper (the `cpu` preset: depth 2 instead
/// of the first player's 1) and last longer between closer players, and its arenas pit two
/// learnt evaluations instead of one against the first player. Measured 2.4 (chess) to
/// 3.9 (Asylum Chess) on the `cpu` preset's runs, seeds 0 and 1; the largest, rounded up.
const EVALUATION_FIRST_STEP: f64 = 4.0;

/// The next training's samples (steps × batch) over generation `generation`'s, which
/// trained from generation 0: less than 1 when that training took the first player's games
/// with [`crate::RunConfig::first_train`] (in the window of generations 1 to
/// `window_generations`), and the next one, from a trained network, the run's own preset.
fn run_training_share(config: &crate::RunConfig, generation: u32) -> f64 {
    let samples = |preset: &str| {
        ninjazero_train::TrainConfig::preset(preset)
            .map(|train| train.steps as f64 * train.batch_size as f64)
    };
    let first_training = config
        .first_train
        .as_deref()
        .filter(|_| config.first_player.is_some() && generation <= config.window_generations);
    match (first_training.and_then(samples), samples(&config.train)) {
        (Some(first), Some(own)) => own / first,
        _ => 1.0,
    }
}

/// Wall hours of a generation's self-play with a network, from arenas of `games` games
/// between networks that took `hours`: an arena game's time per simulation per move, times
/// the self-play's games and mean simulations per move (the full search with the
/// full-search probability, the cheap one otherwise). Games are taken to be as long as the
/// arena's.
fn network_selfplay_hours(config: &crate::RunConfig, games: usize, hours: f64) -> f64 {
    let search = &config.search;
    let simulations_per_move = search.full_search_probability * f64::from(search.simulations)
        + (1.0 - search.full_search_probability) * f64::from(search.cheap_simulations);
    let hours_per_game = hours / games.max(1) as f64;
    hours_per_game * simulations_per_move / config.arena_simulations.max(1) as f64
        * config.selfplay_games as f64
}

/// How the Slurm driver submits its jobs.
#[derive(Clone, Debug)]
pub struct SlurmOptions {
    /// The worker program and the arguments before `worker` (the running binary, unless
    /// the cluster's nodes see it elsewhere).
    pub worker: Vec<String>,
    /// `--device` of the workers.
    pub device: String,
    pub partition: Option<String>,
    pub gpus_per_task: Option<u32>,
    /// `--time` of every job (Slurm's format, e.g. `2:00:00`).
    pub time_limit: Option<String>,
    /// More `sbatch` arguments, as given.
    pub extra_args: Vec<String>,
    /// Where the jobs write their output (`%x-%A_%a.out`): a folder the nodes share.
    pub log_dir: PathBuf,
    /// How often the driver looks at the queue and the store.
    pub poll: Duration,
}

/// Checks a job time limit in one of the forms `sbatch --time` takes: minutes,
/// minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes,
/// days-hours:minutes:seconds, or UNLIMITED / INFINITE. Refused here, a bad one would
/// otherwise stop the run at its first submitted job.
pub fn slurm_time_limit(text: &str) -> Result<String, String> {
    let unlimited = ["UNLIMITED", "INFINITE"]
        .iter()
        .any(|word| text.eq_ignore_ascii_case(word));
    let (days, clock) = match text.split_once('-') {
        Some((days, clock)) => (Some(days), clock),
        None => (None, text),
    };
    let whole =
        |field: &str| (1..=9).contains(&field.len()) && field.bytes().all(|b| b.is_ascii_digit());
    let numbers = days.into_iter().chain(clock.split(':')).all(whole);
    if unlimited || (clock.split(':').count() <= 3 && numbers) {
        Ok(text.to_string())
    } else {
        Err(format!(
            "'{text}' is not a Slurm time limit: give minutes, minutes:seconds, \
             hours:minutes:seconds, days-hours, days-hours:minutes or \
             days-hours:minutes:seconds (e.g. 2:00:00), or UNLIMITED"
        ))
    }
}

/// What the Slurm driver did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlurmOutcome {
    /// Jobs (arrays count once) submitted by this driver.
    pub submitted: Vec<String>,
    /// The best generation.
    pub best: u32,
}

/// A Slurm job of the run, as `squeue` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueuedJob {
    pub id: String,
    pub name: String,
    pub state: String,
}

/// Runs (or continues) the run on a Slurm cluster: submits the chain of every stage whose
/// output is missing and which is not queued already, then waits for the chain, showing
/// each stage's jobs done / running / failed, and returns once the report is stored.
pub fn run_slurm(
    ctx: &RunContext,
    options: &SlurmOptions,
    progress: &dyn Progress,
) -> Result<SlurmOutcome, PipelineError> {
    start(ctx, progress)?;
    std::fs::create_dir_all(&options.log_dir).map_err(|error| PipelineError::Io {
        path: options.log_dir.clone(),
        error,
    })?;
    let tag = run_tag(ctx.store.url());
    let queued = queued_jobs(&tag)?;
    let stages = Stage::all(ctx.config.generations);
    let mut submitted = Vec::new();
    let mut waiting_on: Option<String> = None;
    let mut ours: Vec<String> = Vec::new();
    for &stage in &stages {
        let name = job_name(&tag, stage);
        if let Some(job) = queued.iter().find(|j| j.name == name) {
            waiting_on = Some(job.id.clone());
            ours.push(job.id.clone());
            continue;
        }
        let missing = stage.missing(ctx)?;
        if missing.is_empty() {
            continue;
        }
        let id = submit(ctx, options, stage, &name, &missing, waiting_on.as_deref())?;
        progress.log(&format!(
            "submitted {} as Slurm job {id}{}",
            stage.label(),
            if stage.is_array() {
                format!(" (array {})", array_list(&missing))
            } else {
                String::new()
            }
        ));
        submitted.push(name);
        waiting_on = Some(id.clone());
        ours.push(id);
    }
    if ours.is_empty() {
        progress.log("every stage is stored: nothing to submit");
    } else {
        wait_for(ctx, &tag, &ours, &stages, options, progress)?;
    }
    for &stage in &stages {
        let missing = stage.missing(ctx)?;
        if !missing.is_empty() {
            return Err(PipelineError::Scheduler(format!(
                "{} did not complete (jobs {} of {}): see the job output in {}",
                stage.label(),
                array_list(&missing),
                job_name(&tag, stage),
                options.log_dir.display()
            )));
        }
    }
    Ok(SlurmOutcome {
        submitted,
        best: best_after(ctx.store, ctx.config.generations)?,
    })
}

/// `nz-1a2b3c4d`: the prefix of the run's job names (a hash of its URL), so that a rerun
/// of the driver recognises the run's queued jobs.
fn run_tag(url: &str) -> String {
    let hash = url.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    format!("nz-{hash:08x}")
}

/// `nz-1a2b3c4d-selfplay-gen-0001`.
fn job_name(tag: &str, stage: Stage) -> String {
    format!("{tag}-{}", stage.label().replace(' ', "-"))
}

/// `0-3` or `1,3`: an array's task ids as sbatch takes them.
fn array_list(ids: &[u32]) -> String {
    match ids {
        [first, .., last] if (last - first) as usize + 1 == ids.len() => format!("{first}-{last}"),
        _ => ids.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
    }
}

/// The worker command of `stage` (`$SLURM_ARRAY_TASK_ID` for an array's shard), quoted for
/// the shell that `sbatch --wrap` starts.
fn worker_command(ctx: &RunContext, options: &SlurmOptions, stage: Stage) -> String {
    let mut args: Vec<String> = options.worker.clone();
    args.push("worker".to_string());
    let (command, generation) = match stage {
        Stage::SelfPlay(g) => ("selfplay", Some(g)),
        Stage::Train(g) => ("train", Some(g)),
        Stage::Arena(MatchSet::Generation(g)) => ("arena", Some(g)),
        Stage::Arena(MatchSet::Baselines) => ("baselines", None),
        Stage::Promote(g) => ("promote", Some(g)),
        Stage::Report => ("report", None),
    };
    args.extend(
        [
            command,
            "--run",
            ctx.store.url(),
            "--device",
            &options.device,
        ]
        .map(String::from),
    );
    if let Some(g) = generation {
        args.extend(["--generation".to_string(), g.to_string()]);
    }
    let mut line: Vec<String> = args.iter().map(|a| shell_quote(a)).collect();
    if stage.is_array() {
        line.extend([
            "--shard".to_string(),
            "\"$SLURM_ARRAY_TASK_ID\"".to_string(),
        ]);
    }
    line.join(" ")
}

/// `text` in single quotes for a POSIX shell.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Submits `stage`'s jobs `jobs` after `after` (afterok); the job id.
fn submit(
    ctx: &RunContext,
    options: &SlurmOptions,
    stage: Stage,
    name: &str,
    jobs: &[u32],
    after: Option<&str>,
) -> Result<String, PipelineError> {
    let mut sbatch = Command::new("sbatch");
    sbatch.args([
        "--parsable",
        "--job-name",
        name,
        "--kill-on-invalid-dep=yes",
    ]);
    let output_pattern = if stage.is_array() {
        "%x-%A_%a.out"
    } else {
        "%x-%j.out"
    };
    sbatch.arg(format!(
        "--output={}",
        options.log_dir.join(output_pattern).display()
    ));
    if stage.is_array() {
        sbatch.arg(format!("--array={}", array_list(jobs)));
    }
    if let Some(after) = after {
        sbatch.arg(format!("--dependency=afterok:{after}"));
    }
    if let Some(partition) = &options.partition {
        sbatch.arg(format!("--partition={partition}"));
    }
    if let Some(gpus) = options.gpus_per_task {
        sbatch.arg(format!("--gpus-per-task={gpus}"));
    }
    if let Some(time) = &options.time_limit {
        sbatch.arg(format!("--time={time}"));
    }
    sbatch.args(&options.extra_args);
    sbatch.arg(format!("--wrap={}", worker_command(ctx, options, stage)));
    let output = run_command(&mut sbatch, "sbatch")?;
    let id = output
        .trim()
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(PipelineError::Scheduler(format!(
            "sbatch gave no job id for {name} (it printed {:?})",
            output.trim()
        )));
    }
    Ok(id)
}

/// Runs a Slurm command; its standard output, or one line saying why it failed.
fn run_command(command: &mut Command, program: &str) -> Result<String, PipelineError> {
    let output = command.output().map_err(|e| {
        PipelineError::Scheduler(if e.kind() == std::io::ErrorKind::NotFound {
            format!("{program}: not found on PATH (the slurm scheduler needs Slurm's client commands; is this a Slurm login node?)")
        } else {
            format!("{program}: {e}")
        })
    })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(PipelineError::Scheduler(format!(
            "{program} refused ({}): {}",
            output.status,
            stderr.trim().replace('\n', "; ")
        )));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The run's jobs in the queue (job names starting with `tag`).
fn queued_jobs(tag: &str) -> Result<Vec<QueuedJob>, PipelineError> {
    let mut squeue = Command::new("squeue");
    squeue.args(["--noheader", "--format=%A|%j|%T"]);
    let text = run_command(&mut squeue, "squeue")?;
    Ok(text
        .lines()
        .filter_map(|line| {
            let mut fields = line.trim().splitn(3, '|');
            let (id, name, state) = (fields.next()?, fields.next()?, fields.next()?);
            name.starts_with(&format!("{tag}-")).then(|| QueuedJob {
                id: id.to_string(),
                name: name.to_string(),
                state: state.to_string(),
            })
        })
        .collect())
}

/// Waits until none of `ours` is queued, showing the earliest unfinished stage's jobs done,
/// running and failed.
fn wait_for(
    ctx: &RunContext,
    tag: &str,
    ours: &[String],
    stages: &[Stage],
    options: &SlurmOptions,
    progress: &dyn Progress,
) -> Result<(), PipelineError> {
    let mut shown: Option<Stage> = None;
    loop {
        let queued: Vec<QueuedJob> = queued_jobs(tag)?
            .into_iter()
            .filter(|j| ours.contains(&j.id))
            .collect();
        let mut current = None;
        for &stage in stages {
            let missing = stage.missing(ctx)?;
            if !missing.is_empty() {
                current = Some((stage, missing.len() as u32));
                break;
            }
        }
        if let Some((stage, missing)) = current {
            let name = job_name(tag, stage);
            let mut states: BTreeMap<&str, u32> = BTreeMap::new();
            for job in queued.iter().filter(|j| j.name == name) {
                *states.entry(job.state.as_str()).or_default() += 1;
            }
            let total = stage.jobs(ctx);
            let running = states.get("RUNNING").copied().unwrap_or(0);
            let pending = states.get("PENDING").copied().unwrap_or(0);
            let failed = if queued.iter().any(|j| j.name == name) {
                0
            } else {
                missing
            };
            if shown != Some(stage) {
                if shown.is_some() {
                    progress.stage_finished();
                }
                progress.stage_started(&stage.label(), u64::from(total));
                shown = Some(stage);
            }
            progress.stage_progress(
                u64::from(total - missing.min(total)),
                u64::from(total),
                &format!("{running} running, {pending} pending, {failed} failed"),
            );
        }
        if queued.is_empty() {
            break;
        }
        std::thread::sleep(options.poll);
    }
    if shown.is_some() {
        progress.stage_finished();
    }
    Ok(())
}

/// The stages' states as the stored objects show them, for `status`.
pub fn stage_status(ctx: &RunContext) -> Result<Vec<(Stage, u32, u32)>, PipelineError> {
    let mut rows = Vec::new();
    for stage in Stage::all(ctx.config.generations) {
        let total = stage.jobs(ctx);
        let missing = stage.missing(ctx)?.len() as u32;
        rows.push((stage, total - missing.min(total), total));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ModelKind, PipelinePreset, RunConfig};
    use ninjazero_rules::Variant;

    /// A run after generation 1 whose jobs took `selfplay`, `train` and `arena` wall
    /// seconds, with a budget of one hour; generation 1 promoted or not, its arena 4 pairs
    /// at 64 simulations, self-play 100 games at 32 simulations a
    /// quarter of the moves and 8 otherwise (14 a move on average).
    fn check_after(selfplay: f64, train: f64, arena: f64, promoted: bool) -> BudgetCheck {
        check_after_model(selfplay, train, arena, promoted, ModelKind::Network)
    }

    /// [`check_after`] for a run that learns `model`.
    fn check_after_model(
        selfplay: f64,
        train: f64,
        arena: f64,
        promoted: bool,
        model: ModelKind,
    ) -> BudgetCheck {
        let config = RunConfig {
            model,
            ..RunConfig::new(Variant::Chess, PipelinePreset::Smoke, 0, Some(1))
        };
        check_run_after(config, selfplay, train, arena, promoted)
    }

    /// [`check_after`] for a run of `config`'s first player and trainings.
    fn check_run_after(
        config: RunConfig,
        selfplay: f64,
        train: f64,
        arena: f64,
        promoted: bool,
    ) -> BudgetCheck {
        let tmp = ninjazero_testkit::temp_dir();
        let store = Store::open(ninjazero_testkit::text(tmp.path())).unwrap();
        let mut config = RunConfig {
            hours: Some(1.0),
            selfplay_games: 100,
            arena_simulations: 64,
            arena_pairs: 4,
            ..config
        };
        config.search.simulations = 32;
        config.search.cheap_simulations = 8;
        config.search.full_search_probability = 0.25;
        config.save_to(&store).unwrap();
        for (key, wall_seconds) in [
            ("cost/selfplay/gen-0000/shard-0000.json", selfplay),
            ("cost/train/gen-0001/train.json", train),
            ("cost/arena/gen-0001-vs-gen-0000/shard-0000.json", arena),
        ] {
            let cost = Cost {
                cpu_seconds: 2.0 * wall_seconds,
                wall_seconds,
                gpu_seconds: 0.0,
            };
            store
                .put_new(key, serde_json::to_vec(&cost).unwrap())
                .unwrap();
        }
        let promotion = crate::stages::Promotion {
            generation: 1,
            parent: 0,
            promoted,
            best: u32::from(promoted),
            versus_best: String::new(),
            elo_vs_zero: (0.0, 0.0, 0.0),
        };
        let promotion = serde_json::to_vec(&promotion).unwrap();
        store.put_new("promotion/gen-0001.json", promotion).unwrap();
        let ctx = RunContext::open(&store, tch::Device::Cpu, tmp.path()).unwrap();
        next_generation_fits(&ctx).unwrap()
    }

    #[test]
    fn time_limits_in_slurms_forms_pass_and_others_are_refused() {
        for good in [
            "30",
            "90:30",
            "2:00:00",
            "1-12",
            "1-12:30",
            "1-12:30:15",
            "unlimited",
        ] {
            assert_eq!(slurm_time_limit(good).as_deref(), Ok(good));
        }
        for bad in [
            "",
            "abc",
            "2h",
            "1:2:3:4",
            "1-2:3:4:5",
            "-5",
            "1-",
            ":30",
            "1.5",
            "9999999999",
        ] {
            let error = slurm_time_limit(bad).unwrap_err();
            assert!(error.contains("not a Slurm time limit"), "{bad}: {error}");
        }
    }

    #[test]
    fn a_generation_is_added_while_it_and_the_baselines_fit_the_budget() {
        // Spent 0.3 h; the next generation 0.3 h; half the arena's 0.025 h for each of the
        // 3 baselines.
        let check = check_after(600.0, 390.0, 90.0, false);
        assert!((check.spent_hours - 0.3).abs() < 1e-9, "{check}");
        assert!((check.next_hours - 0.3).abs() < 1e-9, "{check}");
        assert!((check.baselines_hours - 0.0375).abs() < 1e-9, "{check}");
        assert!(check.fits, "{check}");
        assert!(check.to_string().ends_with("it fits"), "{check}");
        // 2 x (800 + 460 + a) + 1.5 a = 3600 s at a = 308.6: just under the budget fits,
        // just over does not.
        assert!(check_after(800.0, 460.0, 308.0, false).fits);
        let over = check_after(800.0, 460.0, 309.0, false);
        assert!(!over.fits, "{over}");
        assert!(over.to_string().ends_with("stopping here"), "{over}");
    }

    #[test]
    fn the_first_networks_self_play_is_expected_at_the_networks_arena_speed() {
        // An arena game took 100 s / 8 at 64 simulations a move; self-play's 100 games at
        // 14 a move: 12.5 s x 14 / 64 x 100 = 273.4375 s, instead of the 60 s the games
        // before the first network took.
        let check = check_after(60.0, 390.0, 100.0, true);
        let expected = (273.4375 + 390.0 + 100.0) / 3600.0;
        assert!((check.next_hours - expected).abs() < 1e-9, "{check}");
        // Not promoted: the next games are again the model-free search's, as cheap.
        let check = check_after(60.0, 390.0, 100.0, false);
        assert!((check.next_hours - 550.0 / 3600.0).abs() < 1e-9, "{check}");
    }

    #[test]
    fn a_first_players_many_games_and_long_first_training_are_not_expected_again() {
        // 1,000 player games took 600 s (60 s per 100), the first training (the demo
        // preset's 1,500 steps of 64) 390 s: the next one, the run's smoke preset's 20
        // steps of 32, is expected to take 390 x 640 / 96,000 = 2.6 s.
        let config = RunConfig {
            first_player: Some("alphabeta:depth=1".to_string()),
            first_player_games: Some(1_000),
            first_train: Some("demo".to_string()),
            ..RunConfig::new(Variant::Chess, PipelinePreset::Smoke, 0, Some(1))
        };
        let check = check_run_after(config.clone(), 600.0, 390.0, 100.0, true);
        let expected = (273.4375 + 2.6 + 100.0) / 3600.0;
        assert!((check.next_hours - expected).abs() < 1e-9, "{check}");
        // Not promoted: the next generation trains from generation 0 again (on the first
        // player's games, with the first training's preset) after the run's 100 games of
        // the model-free search, taken to cost as many of the player's.
        let check = check_run_after(config, 600.0, 390.0, 100.0, false);
        assert!((check.next_hours - 550.0 / 3600.0).abs() < 1e-9, "{check}");
    }

    #[test]
    fn the_first_learnt_evaluations_generation_is_expected_four_times_dearer() {
        let check = check_after_model(60.0, 390.0, 100.0, true, ModelKind::Evaluation);
        assert!(
            (check.next_hours - 4.0 * 550.0 / 3600.0).abs() < 1e-9,
            "{check}"
        );
        let check = check_after_model(60.0, 390.0, 100.0, false, ModelKind::Evaluation);
        assert!((check.next_hours - 550.0 / 3600.0).abs() < 1e-9, "{check}");
    }
}
