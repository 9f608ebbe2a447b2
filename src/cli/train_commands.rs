//! `train` (train a network on self-play data) and `bench train` (training speed against
//! the same loop in PyTorch).

use super::bench::{output_within, venv_python, REFERENCE_GRACE};
use super::numbers::{real, whole, MAX_THREADS};
use super::{parse_variant, progress_bar};
use anyhow::{bail, Context as _};
use clap::Args;
use ninjazero_model::{device_text, parse_device, BoardShape, Model, Preset};
use ninjazero_rules::Variant;
use ninjazero_train::bench::{loader_samples_per_s, synthetic_batch, synthetic_samples_per_s};
use ninjazero_train::synthetic::write_random_games;
use ninjazero_train::{
    train, OptimizerKind, RunControl, TrainConfig, TrainError, TrainJob, MAX_MATERIAL_PLIES,
    MAX_POLICY_TARGET_POWER,
};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tch::Device;

/// A training preset's name, checked (`train --preset`, `pipeline --first-train`).
pub(crate) fn parse_preset(text: &str) -> Result<String, String> {
    TrainConfig::preset_named(text).map(|_| text.to_string())
}

fn parse_optimizer(text: &str) -> Result<OptimizerKind, String> {
    OptimizerKind::from_name(text)
        .ok_or_else(|| format!("unknown optimizer '{text}' (expected sgd or adamw)"))
}

#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Variant id.
    #[arg(long, value_parser = parse_variant)]
    variant: Variant,
    /// Dataset directory (Arrow files from `selfplay`); repeat for several. The newest
    /// positions form the window; foreign or corrupt files are skipped with a warning.
    #[arg(long = "data", required = true)]
    data: Vec<PathBuf>,
    /// Checkpoint to start from (`.safetensors` with its `.json` sidecar).
    #[arg(long)]
    init: PathBuf,
    /// Where to write the trained checkpoint (`.safetensors`; sidecar beside it).
    #[arg(long, value_parser = super::model_commands::checkpoint_out)]
    out: PathBuf,
    /// Work directory: checkpoints, metrics.jsonl, loss.png. A job interrupted here
    /// resumes from its last checkpoint when run again with the same settings (other
    /// settings are refused: use another work directory for them).
    #[arg(long)]
    work: PathBuf,
    /// Training preset: demo, cpu, gpu, imitate (a first network learning from a
    /// player's games: every position, 32,000 steps of 256, its search values ¾ of the
    /// value target) or smoke (default: gpu on a CUDA device, else cpu).
    #[arg(long, value_parser = parse_preset)]
    preset: Option<String>,
    /// Total optimizer steps of the job. [range: 1 to 1000000000]
    #[arg(long, value_parser = whole::<u64>(1, 1_000_000_000))]
    steps: Option<u64>,
    /// [range: 1 to 65536]
    #[arg(long, value_parser = whole::<usize>(1, 65_536))]
    batch_size: Option<usize>,
    /// sgd (momentum 0.9) or adamw (betas 0.9, 0.999).
    #[arg(long, value_parser = parse_optimizer)]
    optimizer: Option<OptimizerKind>,
    /// Peak learning rate (after warm-up). [range: above 0 to 10]
    #[arg(long, value_parser = real(0.0, 10.0, true))]
    lr: Option<f64>,
    /// Write a resumable checkpoint every N steps. [range: 1 to 1000000000]
    #[arg(long, value_parser = whole::<u64>(1, 1_000_000_000))]
    checkpoint_every: Option<u64>,
    /// Shuffling seed.
    #[arg(long)]
    seed: Option<u64>,
    /// The search value's weight λ in the value target, (1 − λ) · result + λ · root search
    /// value, on rows of MCTS games (and of a player's games with --player-values true);
    /// default: the preset's (0.5 for demo and cpu, 0 for gpu). [range: 0 to 1]
    #[arg(long, value_parser = real(0.0, 1.0, false))]
    value_target_mix: Option<f64>,
    /// true: a player's games that kept its search values (`selfplay --player`, a
    /// pipeline's first player) mix them into the value target as MCTS games do; false:
    /// they teach their results alone. Default: the preset's.
    #[arg(long)]
    player_values: Option<bool>,
    /// Train on the newest N positions of the data (all of them when there are fewer).
    /// Default: the preset's window, which grows with the data as in KataGo (a fresh
    /// dataset of 400k positions gives the cpu preset 63k); a first network learning from
    /// a player's games may want them all. [range: 1 to 10000000000]
    #[arg(long, value_parser = whole::<usize>(1, 10_000_000_000))]
    window: Option<usize>,
    /// Also train the network's material head (`model init --material-head`) to predict,
    /// per piece kind, how the material balance changes N plies ahead: a dense tactical
    /// signal beside the one result per game. 0: no such target (the presets').
    /// [range: 0 to 1000]
    #[arg(long, value_parser = whole::<u32>(0, u64::from(MAX_MATERIAL_PLIES)))]
    material_plies: Option<u32>,
    /// Raise every policy target to the power K and renormalise. A player's `soft=T`
    /// targets become those of `soft=T/K` (2 halves the temperature; 1000 is, in practice,
    /// its best move alone), from the same games; K below 1 flattens them over the moves
    /// the player kept (those within 4T of its best). On MCTS visit shares it acts the same
    /// way: K above 1 sharpens them, below 1 flattens them. Default 1: the stored targets
    /// as they are. [range: above 0 to 1000]
    #[arg(long, value_name = "K", value_parser = real(0.0, MAX_POLICY_TARGET_POWER, true))]
    policy_target_power: Option<f64>,
    /// cpu, cuda, cuda:N or auto.
    #[arg(long, value_parser = parse_device, default_value = "auto")]
    device: Device,
    /// libtorch intra-op threads (default: all cores). [range: 1 to 1024]
    #[arg(long, value_parser = whole::<usize>(1, MAX_THREADS))]
    threads: Option<usize>,
}

pub fn run_train(args: TrainArgs) -> anyhow::Result<()> {
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let Ok(threads) = i32::try_from(threads) else {
        bail!("--threads {threads} is too many");
    };
    tch::set_num_threads(threads);
    let preset = args
        .preset
        .clone()
        .unwrap_or_else(|| if args.device.is_cuda() { "gpu" } else { "cpu" }.to_string());
    let mut config = TrainConfig::preset(&preset).expect("checked by clap");
    if let Some(steps) = args.steps {
        config.steps = steps;
    }
    if let Some(batch) = args.batch_size {
        config.batch_size = batch;
    }
    if let Some(optimizer) = args.optimizer {
        config.optimizer = optimizer;
    }
    if let Some(lr) = args.lr {
        config.learning_rate = lr;
    }
    if let Some(every) = args.checkpoint_every {
        config.checkpoint_every = every;
    }
    if let Some(seed) = args.seed {
        config.seed = seed;
    }
    if let Some(mix) = args.value_target_mix {
        config.value_target_mix = mix;
    }
    if let Some(player_values) = args.player_values {
        config.player_values = player_values;
    }
    if let Some(window) = args.window {
        config.fix_window(window);
    }
    if let Some(plies) = args.material_plies {
        config.material_plies = plies;
    }
    if let Some(power) = args.policy_target_power {
        config.policy_target_power = power;
    }
    let bar = progress_bar(
        config.steps,
        "{bar:30} {pos}/{len} steps, {elapsed} elapsed, eta {eta} | {msg}",
    );
    let job = TrainJob {
        variant: args.variant,
        data_dirs: args.data.clone(),
        init: args.init.clone(),
        out: args.out.clone(),
        work_dir: args.work.clone(),
        config,
        device: args.device,
    };
    let show = |step, total, line: &str| {
        bar.set_length(total);
        bar.set_position(step);
        bar.set_message(line.to_string());
    };
    let result = train(&job, &show, &RunControl::default());
    // Cleared on failure too, so the error is not printed after a stale bar.
    bar.finish_and_clear();
    let report = match result {
        Err(e @ TrainError::OtherJob { .. }) => {
            bail!("{e}\nhint: to train with these settings, pass another --work")
        }
        result => result?,
    };
    let material = if job.config.material_plies > 0 {
        format!(", material loss {:.3}", report.final_material_loss)
    } else {
        String::new()
    };
    println!(
        "train: {} steps ({} this run) of batch {} with {} on {} of {} positions: policy loss {:.3}, value loss {:.3}{material}; {:.0} samples/s, loader wait {:.1} %; wrote {} (metrics and loss.png in {})",
        report.steps_done,
        report.steps_this_run,
        job.config.batch_size,
        job.config.optimizer.name(),
        report.window_positions,
        report.total_positions,
        report.final_policy_loss,
        report.final_value_loss,
        report.samples_per_s,
        100.0 * report.loader_wait_share,
        report.checkpoint.display(),
        args.work.display()
    );
    Ok(())
}

#[derive(Args, Debug)]
pub struct BenchTrainArgs {
    /// Variant whose board the networks cover.
    #[arg(long, value_parser = parse_variant, default_value = "insane-ninja")]
    variant: Variant,
    /// Training presets to measure (comma-separated: demo, cpu, gpu, imitate), each with
    /// its network (tiny, cpu, gpu; imitate tiny) and batch size. Default: demo,cpu (and
    /// gpu on CUDA).
    #[arg(long, value_delimiter = ',', value_parser = parse_preset)]
    presets: Vec<String>,
    /// Override the presets' optimizer (sgd or adamw).
    #[arg(long, value_parser = parse_optimizer)]
    optimizer: Option<OptimizerKind>,
    /// cpu, cuda, cuda:N or auto.
    #[arg(long, value_parser = parse_device, default_value = "cpu")]
    device: Device,
    /// Intra-op threads for libtorch (and for the PyTorch reference). [range: 1 to 1024]
    #[arg(long, value_parser = whole::<i32>(1, MAX_THREADS), default_value_t = 2)]
    threads: i32,
    /// Measuring time per method and round. [range: above 0 to 3600]
    #[arg(long, value_parser = real(0.0, 3600.0, true), default_value_t = 3.0)]
    seconds: f64,
    /// Steps of the real training run (window, loader, checkpoint, metrics) per preset. [range: 1 to 1000000]
    #[arg(long, value_parser = whole::<u64>(1, 1_000_000), default_value_t = 30)]
    real_steps: u64,
    /// Skip the PyTorch (Python) reference.
    #[arg(long)]
    no_python: bool,
}

/// The network preset a training preset is meant for.
fn network_of(preset: &str) -> Preset {
    match preset {
        "demo" | "imitate" => Preset::Tiny,
        "gpu" => Preset::Gpu,
        _ => Preset::Cpu,
    }
}

/// `scripts/bench_train.py`'s samples/s for the same network, batch, optimizer and threads.
fn pytorch_samples_per_s(
    sidecar: &Path,
    config: &TrainConfig,
    args: &BenchTrainArgs,
) -> anyhow::Result<f64> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = venv_python()?;
    let mut command = Command::new(python);
    command
        .arg(root.join("scripts/bench_train.py"))
        .arg("--sidecar")
        .arg(sidecar)
        .args(["--batch", &config.batch_size.to_string()])
        .args(["--lr", &config.learning_rate.to_string()])
        .args(["--weight-decay", &config.weight_decay.to_string()])
        .args(["--grad-clip", &config.grad_clip.to_string()])
        .args(["--threads", &args.threads.to_string()])
        .args(["--seconds", &args.seconds.to_string()])
        .args(["--device", &device_text(args.device)]);
    match config.optimizer {
        OptimizerKind::Sgd { momentum } => {
            command.args(["--optimizer", "sgd", "--momentum", &momentum.to_string()]);
        }
        OptimizerKind::AdamW { beta1, beta2 } => {
            command.args([
                "--optimizer",
                "adamw",
                "--beta1",
                &beta1.to_string(),
                "--beta2",
                &beta2.to_string(),
            ]);
        }
    }
    // The script measures its loop for `--seconds`, after a few warm-up steps.
    let limit = REFERENCE_GRACE + Duration::from_secs_f64(args.seconds);
    let output = output_within(command, limit, "scripts/bench_train.py")?;
    if !output.status.success() {
        bail!(
            "scripts/bench_train.py failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    let reply: serde_json::Value =
        serde_json::from_str(line).with_context(|| format!("scripts/bench_train.py: '{line}'"))?;
    reply["samples_per_s"]
        .as_f64()
        .with_context(|| format!("no samples_per_s in '{line}'"))
}

pub fn run_bench(args: BenchTrainArgs) -> anyhow::Result<()> {
    tch::set_num_threads(args.threads);
    let presets = if args.presets.is_empty() {
        let mut p = vec!["demo".to_string(), "cpu".to_string()];
        if args.device.is_cuda() {
            p.push("gpu".to_string());
        }
        p
    } else {
        args.presets.clone()
    };
    let min = Duration::from_secs_f64(args.seconds);
    let dir = std::env::temp_dir().join(format!("ninjazero-bench-train-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let result = bench_presets(&args, &presets, min, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn bench_presets(
    args: &BenchTrainArgs,
    presets: &[String],
    min: Duration,
    dir: &Path,
) -> anyhow::Result<()> {
    let shape = BoardShape::of(args.variant);
    // Real data for the loader: games of random legal moves (about 10k positions).
    let data = dir.join("data");
    write_random_games(&data, args.variant, 100, 100, 1, 25)?;
    println!(
        "bench train: variant {}, device {:?}, {} threads, {:.1} s per measurement",
        args.variant, args.device, args.threads, args.seconds
    );
    println!(
        "{:<6} {:<8} {:>6} {:<6} {:>13} {:>13} {:>7} {:>13} {:>13} {:>8}",
        "preset",
        "network",
        "batch",
        "optim",
        "ninjazero/s",
        "pytorch/s",
        "ratio",
        "loader/s",
        "real run/s",
        "wait %"
    );
    for preset in presets {
        let mut config = TrainConfig::preset(preset).expect("checked by clap");
        if let Some(optimizer) = args.optimizer {
            config.optimizer = optimizer;
        }
        let network = network_of(preset);
        let model = Model::seeded(args.variant, &network.config(), args.device, 0);
        let init = dir.join(format!("{preset}.safetensors"));
        model.save(&init)?;
        let batch = synthetic_batch(&shape, config.batch_size, args.device);

        // Synthetic steps, interleaved with PyTorch: Rust, Python, Rust, Python.
        let mut rust = Vec::new();
        let mut python = Vec::new();
        let mut python_error = None;
        for _ in 0..2 {
            let model = Model::load(&init, Some(args.variant), args.device)?;
            rust.push(synthetic_samples_per_s(model, &config, &batch, min));
            if args.no_python || python_error.is_some() {
                continue;
            }
            match pytorch_samples_per_s(&init.with_extension("json"), &config, args) {
                Ok(rate) => python.push(rate),
                Err(e) => python_error = Some(e),
            }
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let rust_rate = mean(&rust);
        let (python_text, ratio_text) = if python.is_empty() {
            ("-".to_string(), "-".to_string())
        } else {
            let p = mean(&python);
            (format!("{p:.0}"), format!("{:.2}x", rust_rate / p))
        };

        // The real loader alone, then a short real training run.
        let (loader_rate, _) = loader_samples_per_s(
            args.variant,
            std::slice::from_ref(&data),
            &config,
            args.device,
            min,
        )?;
        let real_config = TrainConfig {
            steps: args.real_steps,
            checkpoint_every: 0,
            ..config.clone()
        };
        let job = TrainJob {
            variant: args.variant,
            data_dirs: vec![data.clone()],
            init: init.clone(),
            out: dir.join(format!("{preset}-trained.safetensors")),
            work_dir: dir.join(format!("{preset}-work")),
            config: real_config,
            device: args.device,
        };
        let report = train(&job, &|_, _, _| {}, &RunControl::default())?;
        println!(
            "{:<6} {:<8} {:>6} {:<6} {:>13.0} {:>13} {:>7} {:>13.0} {:>13.0} {:>7.1}%",
            preset,
            network.name(),
            config.batch_size,
            config.optimizer.name(),
            rust_rate,
            python_text,
            ratio_text,
            loader_rate,
            report.samples_per_s,
            100.0 * report.loader_wait_share
        );
        if let Some(e) = python_error {
            println!("       (no PyTorch reference: {e:#})");
        }
    }
    println!("\nninjazero/s, pytorch/s: training samples/s of full steps (forward in train mode, policy and WDL losses, backward,");
    println!("clipping, optimizer step, statistics) on a synthetic batch, same network, batch, optimizer and threads; ratio = ninjazero/pytorch.");
    println!("loader/s: the real loader alone (window over Arrow files, background threads, encoding, dense targets).");
    println!("real run/s, wait %: a short `train` run on that data (loader, checkpoint, metrics included) and its share of time waiting for batches.");
    Ok(())
}
