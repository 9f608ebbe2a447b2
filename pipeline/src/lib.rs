//! The closed loop. Each generation: self-play with the current best model → train a
//! candidate from it → arena against the best → promote it unless it is measurably worse.
//!
//! Promotion is the AlphaZero rule (the newest network plays) with a safety net: a
//! candidate is only held back when its whole Elo interval against the best lies below
//! zero ([`measurably_worse`]). Gating at "scores over 50 %" on a few dozen games would
//! reject improvements by the coin flip of a noisy arena.
//!
//! A run lives behind one URL ([`Store`]: a directory, `file://` or `s3://`, laid out
//! as [`layout`] says). Every stage ([`stages`]) reads its inputs from there, is skipped
//! when its output is stored already, and stores what it makes with create-only puts, so
//! killing the pipeline and running it again continues where it stopped. The settings
//! ([`RunConfig`]) are stored in the run too, so a stage needs nothing but the URL:
//! [`scheduler::run_local`] runs the stages in one process, [`scheduler::run_slurm`] as
//! Slurm jobs of `ninjazero worker`.
//!
//! The library prints nothing: progress and log lines go to a [`Progress`].

pub mod config;
pub mod cost;
pub mod layout;
pub mod scheduler;
pub mod stages;
pub mod summary;
pub mod worker;

pub use config::{
    load_or_create, ModelKind, PipelinePreset, Reach, RunConfig, Setting, SettingDifference,
    UnknownPreset, COUNTING_DEPTH, EVALUATION_DEPTH, MAX_ARENA_SHARDS, MAX_GENERATIONS, MAX_HOURS,
    MAX_SELFPLAY_SHARDS,
};
pub use layout::generation_name;
pub use scheduler::{
    next_generation_fits, run_local, run_local_budgeted, run_slurm, slurm_time_limit, BudgetCheck,
    SlurmOptions, SlurmOutcome, Stage,
};
pub use stages::{measurably_worse, Outcome, Promotion, RunContext};
// The run's storage lives in `data` so that ladders and piece-value studies share it.
pub use ninjazero_data::store::{Store, StoreError, StoredObject};
pub use summary::{
    counted, ladder_scale, plot_elo, write_summary, GenerationRow, RunReport, Scale,
};
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
    /// A new run sets (the option named) how the first player's games are played or
    /// learnt from, without a first player.
    #[error("{0} needs --first-player: it is a setting of the first player's games or of the training on them")]
    WithoutFirstPlayer(&'static str),
    /// A new run sets (the option named) how a network trains where no network learns.
    #[error("{0} is a setting of a network's training; --model evaluation fits its evaluations to the games' results")]
    WithoutNetwork(&'static str),
    /// A new run sets (the option named) how a learnt evaluation is fitted where a network
    /// learns.
    #[error("{0} is a setting of a learnt evaluation's fits: it needs --model evaluation")]
    WithoutEvaluation(&'static str),
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
    /// An evaluation could not be fitted to a generation's games.
    #[error("fitting the evaluation: {0}")]
    Fit(String),
    #[error("unknown training preset '{0}'")]
    UnknownTrainPreset(String),
    /// A player could not be made, or an arena game failed.
    #[error("{0}")]
    Arena(String),
    #[error("{}: {message}", path.display())]
    Plot { path: PathBuf, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A stored object of the run (a manifest, a decision, a window) is missing, unreadable,
    /// or does not fit the request.
    #[error("{key}: {reason}")]
    Manifest { key: String, reason: String },
    /// An input of a stage is not stored yet: another job (a self-play shard, a training,
    /// an arena shard, a promotion) has still to make it. A worker started with `--wait`
    /// looks again until it is there.
    #[error("{key}: {reason}")]
    NotYet { key: String, reason: String },
    /// The cluster's scheduler could not be asked, or refused.
    #[error("{0}")]
    Scheduler(String),
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
