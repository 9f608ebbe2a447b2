//! The NinjaZero trainer: a sliding replay window over self-play datasets, background
//! batch loading, hand-written checkpointable optimizers (SGD with momentum, AdamW), a
//! learning-rate schedule with warm-up, gradient clipping, resumable checkpoints, per-step
//! metrics and loss-curve plots.
//!
//! ```no_run
//! use ninjazero_train::{train, RunControl, TrainConfig, TrainJob};
//! use ninjazero_rules::Variant;
//! use std::path::PathBuf;
//!
//! let job = TrainJob {
//!     variant: Variant::InsaneNinja,
//!     data_dirs: vec![PathBuf::from("runs/demo/selfplay/gen-0000")],
//!     init: PathBuf::from("runs/demo/models/gen-0000.safetensors"),
//!     out: PathBuf::from("runs/demo/models/gen-0001.safetensors"),
//!     work_dir: PathBuf::from("runs/demo/train"),
//!     config: TrainConfig::preset("demo").unwrap(),
//!     device: tch::Device::Cpu,
//! };
//! let progress = |step, total, line: &str| eprintln!("{step}/{total} {line}");
//! let report = train(&job, &progress, &RunControl::default())?;
//! println!("{:.0} samples/s", report.samples_per_s);
//! # Ok::<(), ninjazero_train::TrainError>(())
//! ```
//!
//! A job is defined by its settings: variant, initial checkpoint (name and contents), data
//! directories and the [`TrainConfig`] (less how often to checkpoint and how many loader
//! threads). The work directory records them; calling [`train`] again with the same settings
//! and work directory resumes from the last checkpoint there: the window is the one recorded
//! when the job started and the batches continue the same sequence, so an interrupted job
//! ends with exactly the weights of an uninterrupted one. Other settings are refused with
//! [`TrainError::OtherJob`], naming each difference.
//!
//! A run stops with [`TrainError::NonFinite`] at the first loss or gradient norm that is not
//! finite, and no checkpoint or output model with a non-finite value is ever written.

pub mod bench;
pub mod config;
mod loader;
pub mod metrics;
mod optim;
pub mod piece_square;
mod state;
pub mod synthetic;
mod window;

pub use config::{
    OptimizerKind, Schedule, TrainConfig, MAX_MATERIAL_PLIES, MAX_POLICY_TARGET_POWER,
};
pub use loader::{Batch, SplitMix64};
pub use metrics::{plot_metrics, read_metrics, register_plot_font, MetricsRecord};
pub use optim::Optimizer;
pub use piece_square::{
    fit_piece_squares, fit_piece_squares_on, FitConfig, FitError, SquarePenalties, AUTO_SQUARE_L2,
};
pub use window::{GameKey, SkippedFile, WindowFile, WindowSnapshot};

use loader::{BatchSource, Loader, TargetSettings};
use metrics::{truncate_metrics, MetricsWriter};
use ninjazero_data::atomic::AtomicFile;
use ninjazero_model::{Model, ModelError};
use ninjazero_rules::Variant;
use state::{JobSettings, TrainState};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tch::{Device, Kind, Tensor};

/// File names inside the work directory.
pub const METRICS_FILE: &str = "metrics.jsonl";
pub const PLOT_FILE: &str = "loss.png";
const DATA_INDEX_FILE: &str = "data-index.json";

/// Why training failed. Each message is complete, so no variant also reports the error it
/// wraps as its `source()`: a caller printing the chain (anyhow's `{:#}`) says nothing twice.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("{}: {}", path.display(), ninjazero_model::torch_message(error))]
    Torch { path: PathBuf, error: tch::TchError },
    #[error("bad training configuration: {0}")]
    Config(String),
    #[error("data: {0}")]
    Data(String),
    #[error("no training data: {0}")]
    NoData(String),
    #[error("training state: {0}")]
    State(String),
    #[error("loader: {0}")]
    Loader(String),
    #[error("plot: {0}")]
    Plot(String),
    /// The run stopped before the job's last step (see [`RunControl`]); the work directory
    /// holds the last checkpoint to resume from.
    #[error("training stopped after step {step}; the last checkpoint is step {checkpoint}")]
    Interrupted { step: u64, checkpoint: u64 },
    /// A loss, the gradient norm, a weight or an optimizer state became NaN or infinite at
    /// `step` (1-based); nothing of that step was saved.
    #[error("step {step}: the {quantity} is not finite; training stopped (a lower learning rate may help) and no checkpoint of it was written")]
    NonFinite { step: u64, quantity: String },
    /// The work directory holds a job with other settings.
    #[error("{} holds a job with other settings ({}); rerun with that job's settings to resume it, or use another work directory", .work_dir.display(), describe_changes(.changes))]
    OtherJob {
        work_dir: PathBuf,
        changes: Vec<SettingChange>,
    },
    /// The loader's batches would not fit in memory.
    #[error("batch size {batch_size}: the batches in flight would take {} GiB, more than half of this machine's {} GiB", .needed / (1 << 30), .memory >> 30)]
    BatchTooLarge {
        batch_size: usize,
        needed: u128,
        memory: u64,
    },
    /// An output path that cannot be used (checked before any work).
    #[error("{}: {reason}", path.display())]
    BadPath { path: PathBuf, reason: String },
}

/// A job setting that differs between the work directory's job and a new request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingChange {
    pub name: String,
    pub old: String,
    pub new: String,
}

fn describe_changes(changes: &[SettingChange]) -> String {
    changes
        .iter()
        .map(|c| format!("{}: {} → {}", c.name, c.old, c.new))
        .collect::<Vec<_>>()
        .join("; ")
}

impl TrainError {
    pub(crate) fn io(path: &Path, error: std::io::Error) -> TrainError {
        TrainError::Io {
            path: path.to_path_buf(),
            error,
        }
    }

    pub(crate) fn torch(path: &Path, error: tch::TchError) -> TrainError {
        TrainError::Torch {
            path: path.to_path_buf(),
            error,
        }
    }
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct TrainReport {
    /// Steps of the job done (the configured steps, once finished).
    pub steps_done: u64,
    /// Steps this call ran (0 when the job was already finished).
    pub steps_this_run: u64,
    /// Training samples per second over this run (loader waits and checkpoints included).
    pub samples_per_s: f64,
    /// Share of this run's training time spent waiting for batches.
    pub loader_wait_share: f64,
    /// Mean over the job's last (up to) 10 steps.
    pub final_policy_loss: f64,
    pub final_value_loss: f64,
    pub final_material_loss: f64,
    /// The trained model (`out`).
    pub checkpoint: PathBuf,
    /// Positions in the window, and in all usable files when it was taken.
    pub window_positions: usize,
    pub total_positions: usize,
    /// Data files that were not used, with the reason (also printed as warnings).
    pub skipped_files: Vec<SkippedFile>,
}

/// Optional controls of a run, for tests and for callers that stop training themselves.
#[derive(Clone, Debug, Default)]
pub struct RunControl {
    /// Stop abruptly after this many steps of this run, as if the process were killed: no
    /// checkpoint, no output model. [`TrainError::Interrupted`] is returned.
    pub max_steps_this_run: Option<u64>,
    /// When set (e.g. from a signal handler), stop after the current step, write a
    /// checkpoint and return [`TrainError::Interrupted`].
    pub stop: Option<Arc<AtomicBool>>,
}

/// The losses and statistics of one step.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepStats {
    /// Policy cross-entropy over the rows with a full search.
    pub policy_loss: f64,
    /// Win/draw/loss cross-entropy against the value target: the game result, or its mix
    /// with the search value (`TrainConfig::value_target_mix`).
    pub value_loss: f64,
    /// Mean squared error of the material head against its target, summed over the roles
    /// (`TrainConfig::material_plies`; 0 when it is not trained).
    #[serde(default)]
    pub material_loss: f64,
    /// `policy_loss + value_loss + material_loss` (weight decay is applied by the
    /// optimizer).
    pub loss: f64,
    /// Share of full-search rows whose most likely move is the search's most visited one.
    pub policy_accuracy: f64,
    /// Mean squared error of the expected score (win 1, draw 0.5, loss 0) against the game
    /// result, whatever the value target (comparable across mixes).
    pub value_mse: f64,
    /// Rows with a full search in the batch.
    pub policy_rows: u64,
    /// Gradient global norm before clipping.
    pub grad_norm: f64,
}

impl StepStats {
    /// The first of the losses and the gradient norm that is NaN or infinite, as a
    /// description with its value.
    pub fn non_finite(&self) -> Option<String> {
        [
            ("policy loss", self.policy_loss),
            ("value loss", self.value_loss),
            ("material loss", self.material_loss),
            ("gradient norm", self.grad_norm),
        ]
        .into_iter()
        .find(|(_, value)| !value.is_finite())
        .map(|(name, value)| format!("{name} ({value})"))
    }
}

/// Fails with [`TrainError::NonFinite`] (at `step`) when a variable of `model` (weights and
/// batch-norm statistics) or a state tensor of `optimizer` holds a NaN or an infinity.
pub(crate) fn ensure_finite(
    step: u64,
    model: &Model,
    optimizer: Option<&Optimizer>,
) -> Result<(), TrainError> {
    let mut named: Vec<(String, Tensor)> = model
        .vs
        .variables()
        .into_iter()
        .map(|(name, t)| (format!("weight {name}"), t))
        .collect();
    named.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some(optimizer) = optimizer {
        named.extend(
            optimizer
                .named_state()
                .into_iter()
                .map(|(name, t)| (format!("optimizer state {name}"), t.shallow_clone())),
        );
    }
    if named.is_empty() {
        return Ok(());
    }
    // One flag per tensor, brought to the host at once.
    let flags = tch::no_grad(|| {
        let flags: Vec<Tensor> = named
            .iter()
            .map(|(_, t)| t.isfinite().all().to_device(Device::Cpu))
            .collect();
        Tensor::stack(&flags, 0).to_kind(Kind::Int64)
    });
    let flags = Vec::<i64>::try_from(flags)
        .map_err(|e| TrainError::State(format!("checking the weights: {e}")))?;
    match flags.iter().position(|&finite| finite == 0) {
        Some(k) => Err(TrainError::NonFinite {
            step,
            quantity: named.swap_remove(k).0,
        }),
        None => Ok(()),
    }
}

/// Checks, before any work, that the outputs can be written: `out` names a file (not a
/// directory) in a directory that exists or can be created and is writable, and so is
/// `work_dir`.
fn check_outputs(out: &Path, work_dir: &Path) -> Result<(), TrainError> {
    let bad = |path: &Path, reason: String| TrainError::BadPath {
        path: path.to_path_buf(),
        reason,
    };
    if out.file_name().is_none() {
        return Err(bad(out, "the output model needs a file name".into()));
    }
    for path in [
        out.to_path_buf(),
        ninjazero_model::checkpoint::sidecar_path(out),
    ] {
        if path.is_dir() {
            return Err(bad(
                &path,
                "is a directory; the output model and its sidecar must be files".into(),
            ));
        }
    }
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    for dir in [parent, work_dir] {
        std::fs::create_dir_all(dir).map_err(|e| TrainError::io(dir, e))?;
        ninjazero_data::atomic::check_writable(dir)
            .map_err(|e| bad(dir, format!("cannot write here: {e}")))?;
    }
    Ok(())
}

/// A model and its optimizer: one call of [`Trainer::step`] is forward (train mode),
/// losses, backward, gradient clipping and the optimizer update.
pub struct Trainer {
    pub model: Model,
    pub optimizer: Optimizer,
    weight_decay: f64,
    grad_clip: f64,
}

impl Trainer {
    pub fn new(model: Model, config: &TrainConfig) -> Trainer {
        let optimizer = Optimizer::new(&model.vs, config.optimizer);
        Trainer {
            model,
            optimizer,
            weight_decay: config.weight_decay,
            grad_clip: config.grad_clip,
        }
    }

    /// One optimizer step on `batch` with learning rate `lr`.
    pub fn step(&mut self, batch: &Batch, lr: f64) -> StepStats {
        let net = &self.model.net;
        // The material head runs only when it has a target.
        let (policy_logits, wdl_logits, material) = match batch.material {
            Some(_) => net.forward_with_material(&batch.inputs, true),
            None => {
                let (policy, wdl) = net.forward(&batch.inputs, true);
                (policy, wdl, None)
            }
        };
        let log_policy = policy_logits.log_softmax(-1, Kind::Float);
        let row_loss = -(&batch.policy * &log_policy).sum_dim_intlist(-1, false, Kind::Float);
        let rows = batch.policy_mask.sum(Kind::Float);
        let denominator = rows.clamp_min(1.0);
        let policy_loss = (&row_loss * &batch.policy_mask).sum(Kind::Float) / &denominator;
        let value_loss = match &batch.value_target {
            // Cross-entropy against the soft target (its own entropy is the loss's floor).
            Some(target) => -(target * wdl_logits.log_softmax(-1, Kind::Float))
                .sum_dim_intlist(-1, false, Kind::Float)
                .mean(Kind::Float),
            None => wdl_logits.cross_entropy_for_logits(&batch.wdl),
        };
        // `train` refuses a material target for a network without the head.
        let material_loss = match (&batch.material, &material) {
            (Some(target), Some(predicted)) => (predicted - target)
                .square()
                .sum_dim_intlist(-1, false, Kind::Float)
                .mean(Kind::Float),
            _ => Tensor::zeros([], (Kind::Float, policy_loss.device())),
        };
        let loss = &policy_loss + &value_loss + &material_loss;
        let mut grads = self.optimizer.gradients(&loss);
        let grad_norm = Optimizer::clip_grad_norm(&mut grads, self.grad_clip);
        self.optimizer.step(&grads, lr, self.weight_decay);
        drop(grads);
        let stats = tch::no_grad(|| {
            let hits = policy_logits
                .argmax(-1, false)
                .eq_tensor(&batch.policy.argmax(-1, false))
                .to_kind(Kind::Float);
            let accuracy = (hits * &batch.policy_mask).sum(Kind::Float) / &denominator;
            let probs = wdl_logits.softmax(-1, Kind::Float);
            let expected: Tensor = probs.select(1, 0) + probs.select(1, 1) * 0.5;
            let target: Tensor = 1.0 - batch.wdl.to_kind(Kind::Float) * 0.5;
            let mse = (expected - target).square().mean(Kind::Float);
            Tensor::stack(
                &[
                    policy_loss.detach(),
                    value_loss.detach(),
                    material_loss.detach(),
                    accuracy,
                    mse,
                    rows,
                    grad_norm.to_kind(Kind::Float).to_device(loss.device()),
                ],
                0,
            )
            .to_kind(Kind::Double)
            .to_device(Device::Cpu)
        });
        let v: Vec<f64> = Vec::try_from(stats).expect("seven statistics");
        StepStats {
            policy_loss: v[0],
            value_loss: v[1],
            material_loss: v[2],
            loss: v[0] + v[1] + v[2],
            policy_accuracy: v[3],
            value_mse: v[4],
            policy_rows: v[5] as u64,
            grad_norm: v[6],
        }
    }
}

/// Keeps freed tensor memory in the process instead of returning it to the system after
/// every step. glibc serves allocations above a (dynamic) threshold with `mmap` and gives
/// them back with `munmap`, so each step's activations are page-faulted in anew: about 10 %
/// of a CPU training step. Raising the mmap threshold to its maximum (32 MiB) and the trim
/// threshold to 1 GiB makes them reuse heap memory. Process-wide, idempotent; only on
/// glibc.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: mallopt only changes allocator parameters; it is thread-safe.
            unsafe {
                libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
                libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
            }
        });
    }
}

/// Prints a skipped file as a warning line.
fn warn_skipped(file: &SkippedFile) {
    eprintln!(
        "warning: skipping data file {}: {}",
        file.path.display(),
        file.reason
    );
}

/// What one training job reads and writes.
#[derive(Clone, Debug)]
pub struct TrainJob {
    pub variant: Variant,
    /// Dataset directories; the window takes the newest positions (see [`window`]).
    pub data_dirs: Vec<PathBuf>,
    /// The checkpoint training starts from.
    pub init: PathBuf,
    /// Where the trained model goes (safetensors + sidecar, `parent` = init's file name,
    /// training_step accumulated).
    pub out: PathBuf,
    /// The job's resumable state: checkpoints, metrics and the loss plot.
    pub work_dir: PathBuf,
    pub config: TrainConfig,
    pub device: Device,
}

/// Trains `job.init` on the newest positions of `job.data_dirs`, keeping state in
/// `job.work_dir` (resumes if state of the same job is there), and writes the trained
/// model to `job.out`. `progress` gets (step, total, metrics line) for a progress bar;
/// `control` can end the run early (tests of resuming; [`RunControl::default`] runs to the
/// end).
pub fn train(
    job: &TrainJob,
    progress: &dyn Fn(u64, u64, &str),
    control: &RunControl,
) -> Result<TrainReport, TrainError> {
    let TrainJob {
        variant,
        data_dirs,
        init,
        out,
        work_dir,
        config,
        device,
    } = job;
    let (variant, device) = (*variant, *device);
    config.validate().map_err(TrainError::Config)?;
    // Everything that can be checked without data, before reading any.
    check_outputs(out, work_dir)?;
    loader::check_batch_memory(variant, config)?;
    tune_allocator();
    let init_name = init
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let settings = JobSettings {
        variant: variant.id().to_string(),
        init: init_name.clone(),
        init_contents: state::fingerprint(init)?,
        data: window::absolute_dirs(data_dirs)?,
        config: config.clone(),
    };
    let metrics_path = work_dir.join(METRICS_FILE);

    // Resume the job in the work directory (only with its settings), or start it.
    let previous = TrainState::read(work_dir)?;
    if let Some(state) = &previous {
        let changes = state.job.changes_to(&settings);
        if !changes.is_empty() {
            return Err(TrainError::OtherJob {
                work_dir: work_dir.to_path_buf(),
                changes,
            });
        }
    }
    let mut skipped_files = Vec::new();
    let (mut state, mut model, samples) = match previous {
        Some(state) => {
            let checkpoint = state.checkpoint_dir(work_dir).join("model.safetensors");
            let model = Model::load(&checkpoint, Some(variant), device)?;
            let samples = window::load_window(variant, &state.window, config.player_values)?;
            truncate_metrics(&metrics_path, state.step)?;
            (state, model, samples)
        }
        None => {
            let mut model = Model::load(init, Some(variant), device)?;
            if config.material_plies > 0 && !model.net.config.material_head {
                return Err(TrainError::Config(format!(
                    "a material target needs a network with the material head; {} has none (start from `ninjazero model init --material-head`)",
                    init.display()
                )));
            }
            let mut index = window::DataIndex::load(&work_dir.join(DATA_INDEX_FILE));
            let (snapshot, samples, skipped) =
                window::take_window(variant, data_dirs, config, &mut index, &mut warn_skipped)?;
            index.save(&work_dir.join(DATA_INDEX_FILE))?;
            skipped_files = skipped;
            let init_step = model.meta.training_step;
            model.meta.parent = Some(init_name.clone());
            let state = TrainState::new(settings, init_step, snapshot);
            for stale in [METRICS_FILE, PLOT_FILE, state::STATE_FILE] {
                let _ = std::fs::remove_file(work_dir.join(stale));
            }
            (state, model, samples)
        }
    };
    model.meta.parent = Some(init_name);
    let mut trainer = Trainer::new(model, config);
    if state.checkpoint.is_empty() {
        // The job's starting point, so that a kill before the first checkpoint resumes
        // on the same window.
        state::save_checkpoint(work_dir, &mut state, &trainer.model, &trainer.optimizer)?;
    } else {
        let path = state.checkpoint_dir(work_dir).join("optimizer.safetensors");
        trainer.optimizer.load(&path, state.optimizer.step)?;
    }

    let mut steps_this_run = 0u64;
    let mut wait_total = 0.0f64;
    let mut samples_this_run = 0u64;
    let loop_start = Instant::now();
    if state.step < config.steps {
        let source = Arc::new(BatchSource::new(
            Arc::new(samples),
            variant,
            state.rng.seed,
            TargetSettings::of(config),
        ));
        let mut loader = Loader::start(
            source,
            state.rng.samples_cursor,
            config.batch_size,
            config.loader_threads,
            device,
        )?;
        let mut metrics = MetricsWriter::append_to(&metrics_path)?;
        while state.step < config.steps {
            if control.max_steps_this_run == Some(steps_this_run) {
                return Err(TrainError::Interrupted {
                    step: state.step,
                    checkpoint: checkpoint_step(&state),
                });
            }
            let step_start = Instant::now();
            let batch = loader.next_batch()?;
            let wait = step_start.elapsed().as_secs_f64();
            let lr = config.learning_rate_at(state.step);
            let stats = trainer.step(&batch, lr);
            // Stop at once: the update is already in the weights, and every later step
            // (and the summary's mean loss) would carry the NaN on.
            if let Some(quantity) = stats.non_finite() {
                return Err(TrainError::NonFinite {
                    step: state.step + 1,
                    quantity,
                });
            }
            state.step += 1;
            state.rng.samples_cursor += batch.size as u64;
            state.optimizer.step = trainer.optimizer.step;
            steps_this_run += 1;
            samples_this_run += batch.size as u64;
            wait_total += wait;
            let step_s = step_start.elapsed().as_secs_f64();
            let record = MetricsRecord {
                step: state.step,
                stats,
                learning_rate: lr,
                samples_per_s: batch.size as f64 / step_s,
                loader_wait_s: wait,
                step_s,
            };
            metrics.write(&record)?;
            let run_time = loop_start.elapsed().as_secs_f64();
            progress(
                state.step,
                config.steps,
                &format!(
                    "loss {:.3} (policy {:.3}, value {:.3}), top-1 {:.1}%, lr {:.2e}, {:.0} samples/s, loader wait {:.1}%",
                    stats.loss,
                    stats.policy_loss,
                    stats.value_loss,
                    100.0 * stats.policy_accuracy,
                    lr,
                    samples_this_run as f64 / run_time,
                    100.0 * wait_total / run_time
                ),
            );
            let stopping = control
                .stop
                .as_ref()
                .is_some_and(|s| s.load(Ordering::Relaxed));
            let due = config.checkpoint_every > 0 && state.step % config.checkpoint_every == 0;
            if due || stopping || state.step == config.steps {
                trainer.model.meta.training_step = state.init_training_step + state.step;
                state::save_checkpoint(work_dir, &mut state, &trainer.model, &trainer.optimizer)?;
            }
            if stopping && state.step < config.steps {
                return Err(TrainError::Interrupted {
                    step: state.step,
                    checkpoint: state.step,
                });
            }
        }
    }
    let run_time = loop_start.elapsed().as_secs_f64();

    let records = metrics::read_metrics(&metrics_path);
    if !records.is_empty() {
        let plot = work_dir.join(PLOT_FILE);
        // The plotting library picks the image format by the extension.
        let file =
            AtomicFile::create_keeping_extension(&plot).map_err(|e| TrainError::io(&plot, e))?;
        metrics::plot_metrics(&records, file.path())?;
        file.commit().map_err(|e| TrainError::io(&plot, e))?;
    }
    trainer.model.meta.training_step = state.init_training_step + state.step;
    ensure_finite(state.step, &trainer.model, None)?;
    // Each file atomically, the sidecar first (see Model::save).
    trainer.model.save(out)?;

    let tail = &records[records.len().saturating_sub(10)..];
    let mean = |f: fn(&MetricsRecord) -> f64| {
        if tail.is_empty() {
            f64::NAN
        } else {
            tail.iter().map(f).sum::<f64>() / tail.len() as f64
        }
    };
    Ok(TrainReport {
        steps_done: state.step,
        steps_this_run,
        samples_per_s: if run_time > 0.0 {
            samples_this_run as f64 / run_time
        } else {
            0.0
        },
        loader_wait_share: if run_time > 0.0 {
            wait_total / run_time
        } else {
            0.0
        },
        final_policy_loss: mean(|r| r.stats.policy_loss),
        final_value_loss: mean(|r| r.stats.value_loss),
        final_material_loss: mean(|r| r.stats.material_loss),
        checkpoint: out.to_path_buf(),
        window_positions: state.window.size,
        total_positions: state.window.total_positions,
        skipped_files,
    })
}

fn checkpoint_step(state: &TrainState) -> u64 {
    state
        .checkpoint
        .strip_prefix("ckpt-")
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}
