//! `pipeline`: the closed loop of [`ninjazero_pipeline`] (self-play → train → arena →
//! promote, generation after generation) on the command line, in this process or as Slurm
//! jobs. Rerunning the same command continues a run where it stopped.

use super::numbers::{real, whole};
use super::{parse_variant, StageBars};
use anyhow::Context as _;
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, ValueEnum};
use ninjazero_model::{device_text, parse_device};
use ninjazero_pipeline::layout::SUMMARY_KEY;
use ninjazero_pipeline::{
    run_local, run_local_budgeted, run_slurm, slurm_time_limit, ModelKind, PipelineError,
    PipelinePreset, Progress as _, Reach, RunConfig, RunContext, Setting, SlurmOptions, Store,
    MAX_ARENA_SHARDS, MAX_GENERATIONS, MAX_HOURS, MAX_SELFPLAY_SHARDS,
};
use ninjazero_rules::Variant;
use ninjazero_search::EngineSpec;
use ninjazero_train::SquarePenalties;
use std::path::PathBuf;
use std::time::Instant;
use tch::Device;

/// The presets of [`PipelinePreset`], as clap shows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PresetArg {
    /// Minutes on a laptop CPU: tiny network, few games.
    Demo,
    /// Hours on a CPU machine.
    Cpu,
    /// A GPU machine.
    Gpu,
    /// Seconds per generation: checks the machinery (a cluster's set-up), learns nothing.
    Smoke,
}

impl From<PresetArg> for PipelinePreset {
    fn from(preset: PresetArg) -> PipelinePreset {
        match preset {
            PresetArg::Demo => PipelinePreset::Demo,
            PresetArg::Cpu => PipelinePreset::Cpu,
            PresetArg::Gpu => PipelinePreset::Gpu,
            PresetArg::Smoke => PipelinePreset::Smoke,
        }
    }
}

/// What the run learns ([`ModelKind`]), as clap shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModelArg {
    /// A policy/value network that MCTS searches with (AlphaZero).
    Network,
    /// A piece-square evaluation fitted to the games' results, which alpha-beta searches
    /// with at depth 2: from alpha-beta at depth 1 with every piece worth one (or
    /// --first-player) to a player that beats alpha-beta with hand-set values (README).
    Evaluation,
}

impl From<ModelArg> for ModelKind {
    fn from(model: ModelArg) -> ModelKind {
        match model {
            ModelArg::Network => ModelKind::Network,
            ModelArg::Evaluation => ModelKind::Evaluation,
        }
    }
}

/// Who runs the stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Scheduler {
    /// This process, one stage after another.
    Local,
    /// Slurm: one job chain per generation (`sbatch`), the driver waits and shows progress.
    Slurm,
}

#[derive(Args, Debug)]
pub struct PipelineArgs {
    #[arg(long, value_parser = parse_variant, default_value = "insane-ninja")]
    variant: Variant,
    /// The run: a directory (created if needed; an existing run is continued),
    /// file:///abs/path on a shared filesystem, or s3://bucket/prefix (AWS_* variables).
    #[arg(long)]
    run: String,
    #[arg(long, value_enum, default_value = "demo")]
    preset: PresetArg,
    /// What the run learns, and so how its generations play.
    #[arg(long, value_enum, default_value = "network")]
    model: ModelArg,
    /// Generations to train (counting from 1; generation 0 is the initial network). [range: 1 to 1000]
    #[arg(long, value_parser = whole::<u32>(1, MAX_GENERATIONS.into()), conflicts_with = "hours")]
    generations: Option<u32>,
    /// Instead of a number of generations, a wall-time budget: generations are added while
    /// the next one is expected to end in time (the last one's time, plus its arenas' again
    /// for the baselines), so a faster machine trains more of them. Stored in run.toml; a
    /// rerun continues the same budget (the time already spent counts), a new --hours or
    /// --generations replaces it. Local scheduler only. [range: above 0 to 8760]
    #[arg(long, value_parser = real(0.0, MAX_HOURS, true))]
    hours: Option<f64>,
    /// cpu, cuda, cuda:N or auto (also the workers' device under Slurm).
    #[arg(long, value_parser = parse_device, default_value = "auto")]
    device: Device,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Self-play shards per generation (a Slurm array's tasks). [range: 1 to 100000]
    #[arg(long, value_parser = whole::<u32>(1, MAX_SELFPLAY_SHARDS.into()), default_value_t = 1)]
    selfplay_shards: u32,
    /// The player of generation 0's games instead of the model-free MCTS (the first
    /// network learns to imitate it), e.g. alpha-beta with every piece worth the same:
    /// alphabeta:depth=1:values=P=1,N=1,B=1,R=1,Q=1 (plus the variant's new pieces).
    /// With --model evaluation it is generation 0 itself (default: that player).
    #[arg(long)]
    first_player: Option<EngineSpec>,
    /// true: the trainings mix the first player's search values into the value target
    /// (with the train preset's value target mix), as the root values of the network's
    /// self-play are; false: the player's games teach their results alone. Needs
    /// --first-player.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set)]
    player_values: bool,
    /// Generation 0's games by --first-player (default: the preset's self-play games per
    /// generation): a player's games cost little beside a network's, and a first network
    /// imitating a strong player learns from as many as there is time for. Needs
    /// --first-player. [range: 1 to 1000000000]
    #[arg(long, value_parser = whole::<u64>(1, ninjazero_selfplay::MAX_GAMES))]
    first_player_games: Option<u64>,
    /// The training preset of the first network, trained on --first-player's games
    /// (default: the preset's), e.g. imitate: every position, 32,000 steps of 256, the
    /// player's search values ¾ of the value target (with --player-values true). The
    /// README's imitating network, as a run: --preset demo --first-player
    /// alphabeta:EVAL.eval.json:depth=2 --first-player-games 15000 --first-train imitate
    /// --player-values true. Needs --first-player.
    #[arg(long, value_parser = super::train_commands::parse_preset)]
    first_train: Option<String>,
    /// With --model evaluation: the L2 penalties on the square bonuses and king zones each
    /// fit tries, keeping the one with the lowest held-out loss, as `fit-eval
    /// --square-l2`: auto (0.01,0.03,0.1,0.3), one number or several separated by commas,
    /// each 0 to 100 (default: auto on asylum, where it was measured ahead; 0.1 alone
    /// elsewhere).
    #[arg(long)]
    square_l2: Option<SquarePenalties>,
    /// With --model evaluation: the share of the player's search value in each fitted
    /// position's target, the rest the game's result, as `fit-eval --value-target-mix`;
    /// a window that holds the first player's games (generation 0's) is fitted to the
    /// results alone; 0 fits every window to the results alone. Measured ahead on asylum
    /// and ninjutsu, behind on insane-ninja (docs/levers.md) (default: 0.5 on asylum and
    /// ninjutsu, the results alone elsewhere). [range: 0 to 1]
    #[arg(long, value_parser = real(0.0, 1.0, false))]
    value_target_mix: Option<f64>,
    /// Shards per arena. [range: 1 to 10000]
    #[arg(long, value_parser = whole::<u32>(1, MAX_ARENA_SHARDS.into()), default_value_t = 1)]
    arena_shards: u32,
    /// Who runs the stages.
    #[arg(long, value_enum, default_value = "local")]
    scheduler: Scheduler,
    /// Store the run's settings and generation 0, then stop: for running the workers
    /// yourself (`ninjazero worker …`, e.g. as Kubernetes Jobs).
    #[arg(long)]
    init_only: bool,
    #[command(flatten)]
    slurm: SlurmArgs,
}

/// The options of `--scheduler slurm`.
#[derive(Args, Debug)]
pub struct SlurmArgs {
    /// The partition of every job (default: the cluster's).
    #[arg(long)]
    partition: Option<String>,
    /// GPUs per task of every job. [range: 1 to 64]
    #[arg(long, value_parser = whole::<u32>(1, 64))]
    gpus_per_task: Option<u32>,
    /// The time limit of every job, in Slurm's format (e.g. 2:00:00).
    #[arg(long, value_parser = slurm_time_limit)]
    time_limit: Option<String>,
    /// One more sbatch argument for every job (repeat for more), e.g. --sbatch-arg=--qos=low.
    #[arg(long = "sbatch-arg", allow_hyphen_values = true)]
    sbatch_args: Vec<String>,
    /// Where the jobs write their output; a folder every node sees (default: slurm-logs in
    /// the run directory, or in the current directory for s3:// runs).
    #[arg(long)]
    slurm_log_dir: Option<PathBuf>,
    /// The program the jobs run (default: this binary), when the nodes see it elsewhere.
    #[arg(long)]
    worker_program: Option<PathBuf>,
    /// Seconds between looks at the queue and the store. [range: 1 to 3600]
    #[arg(long, value_parser = whole::<u64>(1, 3600), default_value_t = 5)]
    poll_seconds: u64,
}

/// `matches`: the command line's, which tell the options given from clap's defaults.
pub fn run(args: PipelineArgs, matches: &ArgMatches) -> anyhow::Result<()> {
    let store = Store::open(&args.run)?;
    if let Some(player) = &args.first_player {
        // Checked for the run's variant before anything is stored.
        let variant = match RunConfig::load_from(&store) {
            Ok(stored) => stored.variant()?,
            Err(_) => args.variant,
        };
        player.factory(variant, Device::Cpu, 0)()
            .map_err(|e| anyhow::anyhow!("--first-player {player}: {e}"))?;
    }
    let config = load_or_create_config(&store, &args, matches)?;
    let cache = super::worker::default_cache(store.url());
    let ctx = RunContext::open(&store, args.device, &cache)?;
    let progress = StageBars::default();
    if args.init_only {
        ninjazero_pipeline::stages::initial_model(&ctx)?;
        println!("{}: settings and generation 0 stored", store.url());
        return Ok(());
    }
    let started = Instant::now();
    let reach = match config.hours {
        Some(hours) => format!("generations while {hours} h last"),
        None => format!("{} generations", config.generations),
    };
    progress.log(&format!(
        "pipeline: {}, preset {:?}, {reach}, run {}, scheduler {:?}",
        config.variant()?,
        config.preset,
        store.url(),
        args.scheduler
    ));
    let best = match args.scheduler {
        Scheduler::Local if config.hours.is_some() => {
            run_local_budgeted(&store, args.device, &cache, &progress)?.best
        }
        Scheduler::Local => run_local(&ctx, &progress)?.best,
        Scheduler::Slurm if config.hours.is_some() => anyhow::bail!(
            "{}: the run has a budget of {} hours, which only the local scheduler keeps; give --generations N to run it under Slurm",
            store.url(),
            config.hours.unwrap_or_default()
        ),
        Scheduler::Slurm => {
            let options = slurm_options(&store, &args)?;
            let outcome = run_slurm(&ctx, &options, &progress)?;
            progress.log(&format!("submitted {} stages", outcome.submitted.len()));
            outcome.best
        }
    };
    progress.log(&format!(
        "pipeline done in {:.1} min: best generation {best}; summary in {}/{SUMMARY_KEY}",
        started.elapsed().as_secs_f64() / 60.0,
        store.url()
    ));
    Ok(())
}

/// The Slurm options from the command line, with their defaults.
fn slurm_options(store: &Store, args: &PipelineArgs) -> anyhow::Result<SlurmOptions> {
    let program = match &args.slurm.worker_program {
        Some(program) => program.clone(),
        None => std::env::current_exe().context("finding this program for the workers")?,
    };
    let log_dir = match (&args.slurm.slurm_log_dir, store.local_root()) {
        (Some(dir), _) => dir.clone(),
        (None, Some(root)) => root.join("slurm-logs"),
        (None, None) => PathBuf::from("slurm-logs"),
    };
    let device = device_text(args.device);
    Ok(SlurmOptions {
        worker: vec![program.display().to_string()],
        device,
        partition: args.slurm.partition.clone(),
        gpus_per_task: args.slurm.gpus_per_task,
        time_limit: args.slurm.time_limit.clone(),
        extra_args: args.slurm.sbatch_args.clone(),
        log_dir: std::path::absolute(&log_dir).unwrap_or(log_dir),
        poll: std::time::Duration::from_secs(args.slurm.poll_seconds),
    })
}

/// The run's settings ([`ninjazero_pipeline::load_or_create`]): the options given on the
/// command line are the chosen settings, which a stored run must agree with.
/// `--generations` is not among them: it is how far to take the run, and may be changed to
/// extend it.
fn load_or_create_config(
    store: &Store,
    args: &PipelineArgs,
    matches: &ArgMatches,
) -> anyhow::Result<RunConfig> {
    // A budgeted run starts with one generation and adds the others as they fit.
    let generations = args.hours.map_or(args.generations, |_| Some(1));
    let mut wanted = RunConfig {
        selfplay_shards: args.selfplay_shards,
        arena_shards: args.arena_shards,
        first_player: args.first_player.as_ref().map(ToString::to_string),
        player_values: args.player_values,
        first_player_games: args.first_player_games,
        first_train: args.first_train.clone(),
        square_l2: args.square_l2.as_ref().map(|p| p.0.clone()),
        value_target_mix: args.value_target_mix,
        hours: args.hours,
        ..RunConfig::new(args.variant, args.preset.into(), args.seed, generations)
    };
    if args.model == ModelArg::Evaluation {
        wanted = wanted.learning_an_evaluation();
    }
    let reach = match (args.generations, args.hours) {
        (Some(generations), _) => Some(Reach::Generations(generations)),
        (None, Some(hours)) => Some(Reach::Hours(hours)),
        (None, None) => None,
    };
    // An option's clap id is its setting's key.
    let chosen: Vec<Setting> = Setting::ALL
        .into_iter()
        .filter(|setting| {
            matches
                .value_source(setting.key())
                .is_some_and(|source| source != ValueSource::DefaultValue)
        })
        .collect();
    match ninjazero_pipeline::load_or_create(store, &wanted, &chosen, reach) {
        Err(PipelineError::OtherSettings { path, differences }) => {
            let options: Vec<String> = differences
                .iter()
                .map(|d| {
                    let option = d.setting.key().replace('_', "-");
                    format!("--{option} {} → {}", d.stored, d.given)
                })
                .collect();
            anyhow::bail!(
                "{} holds a run with other settings (stored → given): {}. Give the stored values (or leave those options out) to continue it, or use another --run",
                path.display(),
                options.join(", ")
            )
        }
        result => Ok(result?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::{CommandFactory, FromArgMatches};
    use ninjazero_train::AUTO_SQUARE_L2;

    /// `pipeline ARGS`: the parsed options and their matches.
    fn parse(args: &[&str]) -> (PipelineArgs, ArgMatches) {
        let matches = Cli::command()
            .try_get_matches_from(["ninjazero", "pipeline"].iter().chain(args))
            .expect("valid options");
        let sub = matches
            .subcommand_matches("pipeline")
            .expect("the pipeline command")
            .clone();
        let args = PipelineArgs::from_arg_matches(&sub).expect("pipeline options");
        (args, sub)
    }

    /// The settings of the run in `run` given the options `extra`, or the error's text.
    fn load_run(run: &str, extra: &[&str]) -> Result<RunConfig, String> {
        let options: Vec<&str> = ["--run", run].iter().chain(extra).copied().collect();
        let (args, matches) = parse(&options);
        load_or_create_config(&Store::open(run).unwrap(), &args, &matches)
            .map_err(|e| format!("{e:#}"))
    }

    #[test]
    fn a_run_refuses_other_settings_and_continues_with_its_own() {
        let tmp = ninjazero_testkit::temp_dir();
        let dir = tmp.path();
        let run = ninjazero_testkit::text(dir);
        let load = |extra: &[&str]| {
            let options: Vec<&str> = ["--run", run].iter().chain(extra).copied().collect();
            let (args, matches) = parse(&options);
            let store = Store::open(run).unwrap();
            load_or_create_config(&store, &args, &matches).map_err(|e| format!("{e:#}"))
        };
        let created = load(&["--variant", "chess", "--seed", "0"]).unwrap();
        assert_eq!((created.variant.as_str(), created.seed), ("chess", 0));

        let refused = load(&["--variant", "chess", "--seed", "5"]).unwrap_err();
        assert!(refused.contains("--seed 0 → 5"), "{refused}");
        assert!(!refused.contains("--variant"), "{refused}");
        // Every differing setting in one message; the defaults of options left out
        // (variant insane-ninja, seed 0) are no mismatch.
        let refused = load(&["--preset", "cpu", "--seed", "5"]).unwrap_err();
        assert!(
            refused.contains("--preset demo → cpu, --seed 0 → 5"),
            "{refused}"
        );
        assert!(refused.contains("another --run"), "{refused}");

        assert_eq!(
            load(&["--variant", "chess", "--seed", "0"]).unwrap(),
            created
        );
        assert_eq!(load(&[]).unwrap(), created);
        // --generations extends the run, and the run remembers it.
        let extended = load(&["--generations", "5"]).unwrap();
        assert_eq!(extended.generations, 5);
        assert_eq!(load(&[]).unwrap(), extended);
        // --hours gives it a budget from there on; a new run with one starts at one
        // generation.
        let budgeted = load(&["--hours", "0.5"]).unwrap();
        assert_eq!((budgeted.generations, budgeted.hours), (5, Some(0.5)));
        assert_eq!(load(&[]).unwrap(), budgeted);
        let other = ninjazero_testkit::temp_dir();
        let other = ninjazero_testkit::text(other.path());
        let (args, matches) = parse(&["--run", other, "--hours", "2"]);
        let fresh = load_or_create_config(&Store::open(other).unwrap(), &args, &matches).unwrap();
        assert_eq!((fresh.generations, fresh.hours), (1, Some(2.0)));
    }

    /// `option value` is refused for a network run and stored by an evaluation run, which
    /// then reads back with no options and refuses `option other` naming `difference`.
    /// Returns the stored settings.
    fn assert_a_setting_of_evaluation_runs(
        option: &str,
        value: &str,
        other: &str,
        difference: &str,
    ) -> RunConfig {
        let tmp = ninjazero_testkit::temp_dir();
        let run = ninjazero_testkit::text(tmp.path());
        let load = |extra: &[&str]| load_run(run, extra);
        let refused = load(&[option, value]).unwrap_err();
        assert!(
            refused.contains(&format!(
                "{option} is a setting of a learnt evaluation's fits"
            )),
            "{refused}"
        );
        let created = load(&["--model", "evaluation", option, value]).unwrap();
        assert_eq!(load(&[]).unwrap(), created);
        let refused = load(&[option, other]).unwrap_err();
        assert!(refused.contains(difference), "{refused}");
        created
    }

    #[test]
    fn square_penalties_are_a_setting_of_an_evaluation_run() {
        let created = assert_a_setting_of_evaluation_runs(
            "--square-l2",
            "auto",
            "0.1",
            "--square-l2 [0.01, 0.03, 0.1, 0.3] → [0.1]",
        );
        assert_eq!(created.square_l2, Some(AUTO_SQUARE_L2.to_vec()));
        // A new asylum evaluation run tries them all unless penalties are named.
        let asylum = ["--variant", "asylum", "--model", "evaluation"];
        for (named, expected) in [(None, AUTO_SQUARE_L2.to_vec()), (Some("0.1"), vec![0.1])] {
            let tmp = ninjazero_testkit::temp_dir();
            let mut options = asylum.to_vec();
            options.extend(named.iter().flat_map(|penalty| ["--square-l2", penalty]));
            let created = load_run(ninjazero_testkit::text(tmp.path()), &options).unwrap();
            assert_eq!(created.square_l2, Some(expected));
        }
    }

    #[test]
    fn the_value_target_mix_is_a_setting_of_an_evaluation_run() {
        let created = assert_a_setting_of_evaluation_runs(
            "--value-target-mix",
            "0.5",
            "0",
            "--value-target-mix 0.5 → 0",
        );
        assert_eq!(created.value_target_mix, Some(0.5));
        // A new asylum evaluation run takes half unless a share is named.
        let asylum = ["--variant", "asylum", "--model", "evaluation"];
        for (named, expected) in [(None, 0.5), (Some("0"), 0.0)] {
            let tmp = ninjazero_testkit::temp_dir();
            let mut options = asylum.to_vec();
            options.extend(named.iter().flat_map(|share| ["--value-target-mix", share]));
            let created = load_run(ninjazero_testkit::text(tmp.path()), &options).unwrap();
            assert_eq!(created.value_target_mix, Some(expected));
        }
    }

    #[test]
    fn the_first_players_settings_need_a_first_player_and_are_settings_of_the_run() {
        let tmp = ninjazero_testkit::temp_dir();
        let run = ninjazero_testkit::text(tmp.path());
        let load = |extra: &[&str]| load_run(run, extra);
        for (option, value) in [
            ("--player-values", "true"),
            ("--first-player-games", "15000"),
            ("--first-train", "imitate"),
        ] {
            let refused = load(&[option, value]).unwrap_err();
            assert!(refused.contains(option), "{refused}");
            assert!(refused.contains("needs --first-player"), "{refused}");
        }
        let evaluation = ["--model", "evaluation", "--first-train", "imitate"];
        let refused = load(&evaluation).unwrap_err();
        assert!(
            refused.contains("--first-train is a setting of a network's training"),
            "{refused}"
        );
        assert!(
            RunConfig::load_from(&Store::open(run).unwrap()).is_err(),
            "nothing stored"
        );
        let unknown = Cli::command()
            .try_get_matches_from(["ninjazero", "pipeline", "--run", run, "--first-train", "x"])
            .unwrap_err()
            .to_string();
        assert!(
            unknown.contains(
                "unknown training preset 'x' (expected one of demo, cpu, gpu, imitate, smoke)"
            ),
            "{unknown}"
        );

        let player = [
            "--first-player",
            "alphabeta:depth=1",
            "--player-values",
            "true",
            "--first-player-games",
            "30",
            "--first-train",
            "imitate",
        ];
        let created = load(&player).unwrap();
        assert!(created.player_values);
        assert_eq!(created.first_player_games, Some(30));
        assert_eq!(created.first_train.as_deref(), Some("imitate"));
        let refused = load(&["--first-player-games", "31"]).unwrap_err();
        assert!(
            refused.contains("--first-player-games 30 → 31"),
            "{refused}"
        );
        let refused = load(&["--first-train", "demo"]).unwrap_err();
        assert!(
            refused.contains("--first-train imitate → demo"),
            "{refused}"
        );
        // Kept when left out, refused when changed; the stored first player suffices.
        assert_eq!(load(&[]).unwrap(), created);
        assert_eq!(load(&["--player-values", "true"]).unwrap(), created);
        let refused = load(&["--player-values", "false"]).unwrap_err();
        assert!(
            refused.contains("--player-values true → false"),
            "{refused}"
        );
    }
}
