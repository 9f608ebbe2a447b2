//! The closed loop. Each generation: self-play with the current best model → train a
//! candidate from it → arena against the best → promote it unless it is measurably worse.
//!
//! Promotion is the AlphaZero rule (the newest network plays) with a safety net: a
//! candidate is only held back when its whole Elo interval against the best lies below
//! zero ([`measurably_worse`]). Gating at "scores over 50 %" on a few dozen games would
//! reject improvements by the coin flip of a noisy arena.
//!
//! Every stage ([`stages`]) reads and writes files in the run directory ([`RunDir`]) and is
//! skipped when its output is already there, so killing the pipeline and running it again
//! continues where it stopped (self-play and training also resume inside a stage). The
//! settings ([`RunConfig`]) are stored in the run directory too, so a stage needs nothing
//! but the directory: [`run`] drives the whole loop in one process; a cluster worker can
//! call the stages itself.
//!
//! The library prints nothing: progress and log lines go to a [`Progress`].

pub mod config;
pub mod run_dir;
pub mod stages;
pub mod store;
pub mod summary;
pub mod worker;

pub use config::{
    load_or_create, PipelinePreset, RunConfig, Setting, SettingDifference, UnknownPreset,
};
pub use run_dir::{generation_name, RunDir};
pub use stages::{arena, initial_model, mcts_spec, measurably_worse, self_play, train_candidate};
pub use store::{RunStore, StoreError, StoredObject};
pub use summary::{plot_elo, write_summary, GenerationRow};
pub use worker::{
    generation_status, selfplay_shard, GenerationStatus, Manifest, ShardOutcome, ShardState,
};

/// Where a run reports its stages' progress and its log lines (shared with the values study).
pub use ninjazero_data::progress::{Progress, Silent};
use ninjazero_data::DataError;
use ninjazero_model::ModelError;
use ninjazero_rules::UnknownVariant;
use ninjazero_search::{EngineSpec, MctsBudget};
use ninjazero_train::TrainError;
use std::path::PathBuf;
use tch::Device;

/// Why a run (or a stage of it) failed. Each message is complete, so no variant also
/// reports the error it wraps as its `source()`: a chain printed with anyhow's `{:#}` says
/// nothing twice.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// A file or folder of the run could not be read or written.
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// `run.toml` is no run configuration this build reads.
    #[error("{}: {error}", path.display())]
    BadConfig {
        path: PathBuf,
        error: toml::de::Error,
    },
    /// The run directory holds a run with other settings than those chosen.
    #[error(
        "{} holds a run with other settings (stored → given): {}; continue it with the stored settings, or use another run directory",
        path.display(),
        differences.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
    )]
    OtherSettings {
        path: PathBuf,
        differences: Vec<SettingDifference>,
    },
    /// Settings that could not be encoded (TOML or JSON).
    #[error("cannot encode the run's settings: {0}")]
    Encode(String),
    #[error(transparent)]
    Variant(#[from] UnknownVariant),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Data(#[from] DataError),
    #[error(transparent)]
    Train(#[from] TrainError),
    #[error("unknown training preset '{0}'")]
    UnknownTrainPreset(String),
    /// A player could not be made, or an arena game failed.
    #[error("{0}")]
    Arena(String),
    #[error("{}: {message}", path.display())]
    Plot { path: PathBuf, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A generation's manifest is missing, unreadable, or does not fit the request.
    #[error("{key}: {reason}")]
    Manifest { key: String, reason: String },
}

/// What a run ended with.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The best generation (0: nothing was promoted).
    pub best: u32,
    pub history: Vec<GenerationRow>,
}

/// The baselines the best network plays at the end of a run: name and player spec.
pub fn baselines(config: &RunConfig) -> [(&'static str, EngineSpec); 3] {
    [
        ("random", EngineSpec::Random { seed: None }),
        (
            "uniform",
            EngineSpec::Uniform(MctsBudget::simulations(config.arena_simulations)),
        ),
        ("alphabeta", EngineSpec::alphabeta(2)),
    ]
}

/// Runs (or continues) the whole loop in `run` with the settings `config` (see
/// [`load_or_create`]): generation 0, then each generation's stages and promotion, then the
/// best network against generation 0 and the [`baselines`], and the report
/// ([`RunDir::summary`], [`RunDir::elo_plot`]).
pub fn run(
    run: &RunDir,
    config: &RunConfig,
    device: Device,
    progress: &dyn Progress,
) -> Result<Outcome, PipelineError> {
    let variant = config.variant()?;
    if initial_model(run, config, variant)? {
        progress.log(&format!("generation 0: initial {} network", config.network));
    }
    let versus = |name: &str, a: u32, b: &EngineSpec| {
        arena(
            run,
            config,
            variant,
            &format!("{}-vs-{name}", generation_name(a)),
            &mcts_spec(run, a, config),
            b,
            device,
            progress,
        )
    };
    let mut best = 0;
    let mut history = Vec::new();
    for generation in 1..=config.generations {
        // Generation 0's network knows nothing: its games would teach nothing, so the first
        // data comes from the model-free search (uniform priors, material value).
        let data_model = (best > 0).then(|| run.model(best));
        self_play(
            run,
            config,
            variant,
            generation - 1,
            data_model.as_deref(),
            device,
            progress,
        )?;
        train_candidate(run, config, variant, generation, best, device, progress)?;
        let versus_best = versus(
            &generation_name(best),
            generation,
            &mcts_spec(run, best, config),
        )?;
        let promoted = !measurably_worse(&versus_best);
        let versus_zero = if best == 0 {
            (versus_best.elo, versus_best.elo_low, versus_best.elo_high)
        } else {
            let result = versus(&generation_name(0), generation, &mcts_spec(run, 0, config))?;
            (result.elo, result.elo_low, result.elo_high)
        };
        progress.log(&format!(
            "generation {generation}: vs best (gen {best}) {}; {}",
            versus_best.summary_line(),
            if promoted { "promoted" } else { "not promoted" }
        ));
        if promoted {
            best = generation;
        }
        history.push(GenerationRow {
            generation,
            promoted,
            versus_best: versus_best.summary_line(),
            elo_vs_zero: versus_zero,
        });
    }
    let mut baseline_rows = Vec::new();
    for (name, spec) in baselines(config) {
        let result = versus(name, best, &spec)?;
        baseline_rows.push((name, result.summary_line()));
    }
    let best_vs_zero = if best == 0 {
        None
    } else {
        Some(versus(
            &generation_name(0),
            best,
            &mcts_spec(run, 0, config),
        )?)
    };
    write_summary(
        &run.summary(),
        config,
        best,
        &history,
        best_vs_zero.as_ref(),
        &baseline_rows,
    )?;
    plot_elo(&run.elo_plot(), &history)?;
    Ok(Outcome { best, history })
}
