//! `bench nn`: network evaluation speed per preset and batch size, against a plain matrix
//! multiply and the same network in PyTorch, all measured in one run.

use super::bench::{venv_python, REFERENCE_GRACE};
use super::numbers::{real, whole, MAX_THREADS};
use anyhow::{bail, Context as _};
use clap::Args;
use ninjazero_model::{
    device_text, parse_device, synchronize, EvalRequest, Evaluation, Evaluator, Model,
    NetworkEvaluator, Preset,
};
use ninjazero_rules::{MoveList, Position, Variant};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};
use tch::{Device, Kind, Tensor};

#[derive(Args, Debug)]
pub struct BenchNnArgs {
    /// Variant whose board the network covers.
    #[arg(long, value_parser = super::parse_variant, default_value = "insane-ninja")]
    variant: Variant,
    /// Network presets to measure (comma-separated: tiny, cpu, gpu).
    #[arg(long, value_delimiter = ',', default_value = "tiny,cpu")]
    presets: Vec<Preset>,
    /// Batch sizes (comma-separated) [range: 1 to 65536]
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = whole::<usize>(1, 65_536),
        default_value = "1,2,4,8,16,32,64,128,256,512,1024"
    )]
    batches: Vec<usize>,
    /// cpu, cuda, cuda:N or auto.
    #[arg(long, value_parser = parse_device, default_value = "cpu")]
    device: Device,
    /// Intra-op threads for libtorch (and for the PyTorch reference). [range: 1 to 1024]
    #[arg(long, value_parser = whole::<i32>(1, MAX_THREADS), default_value_t = 2)]
    threads: i32,
    /// Minimum measuring time per row and method. [range: above 0 to 3600]
    #[arg(long, value_parser = real(0.0, 3600.0, true), default_value_t = 0.5)]
    seconds: f64,
    /// Skip the PyTorch (Python) reference.
    #[arg(long)]
    no_python: bool,
}

/// Repeats `work` for at least `min` and returns the mean time per call.
fn time_per_call(min: Duration, mut work: impl FnMut()) -> Duration {
    work(); // warm-up
    let (mut calls, start) = (0u32, Instant::now());
    while calls == 0 || start.elapsed() < min {
        work();
        calls += 1;
    }
    start.elapsed() / calls
}

/// GFLOP/s of a square single-precision matrix multiply on `device`.
fn matmul_gflops(device: Device, min: Duration) -> f64 {
    let n = 1024;
    let a = Tensor::rand([n, n], (Kind::Float, device));
    let b = Tensor::rand([n, n], (Kind::Float, device));
    let per_call = time_per_call(min, || {
        let c = a.matmul(&b);
        synchronize(device);
        drop(c);
    });
    2.0 * (n * n * n) as f64 / per_call.as_secs_f64() / 1e9
}

/// Positions from random games, as a searcher would meet them.
pub(super) fn sample_positions(variant: Variant, count: usize) -> Vec<Position> {
    let mut rng = StdRng::seed_from_u64(1);
    let mut positions = Vec::with_capacity(count);
    while positions.len() < count {
        let mut pos = Position::start(variant);
        for _ in 0..rng.random_range(0..80) {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos.play_unchecked(moves[rng.random_range(0..moves.len())]);
        }
        if pos.outcome().is_none() {
            positions.push(pos);
        }
    }
    positions
}

/// The same network in PyTorch (`scripts/reference_net.py bench`), kept running so that
/// its measurements interleave with ours. Its lines arrive through a channel, so that a
/// reference that stops answering is waited for [`REFERENCE_GRACE`] at most.
struct PytorchReference {
    child: Child,
    replies: Receiver<String>,
    dir: PathBuf,
}

impl PytorchReference {
    fn start(model: &Model, threads: i32, device: Device) -> anyhow::Result<PytorchReference> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let python = venv_python()?;
        let dir = std::env::temp_dir().join(format!("ninjazero-bench-{}", std::process::id()));
        let checkpoint = dir.join("bench.safetensors");
        model.save(&checkpoint)?;
        let mut child = Command::new(python)
            .arg(root.join("scripts/reference_net.py"))
            .arg("bench")
            .arg("--sidecar")
            .arg(checkpoint.with_extension("json"))
            .args(["--threads", &threads.to_string()])
            .args(["--device", &device_text(device)])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("scripts/reference_net.py")?;
        let stdout = child
            .stdout
            .take()
            .context("no stdout from the reference")?;
        let (sender, replies) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let reference = PytorchReference {
            child,
            replies,
            dir,
        };
        match reference.replies.recv_timeout(REFERENCE_GRACE) {
            Ok(line) if line == "ready" => Ok(reference),
            _ => bail!(
                "scripts/reference_net.py did not start within {} s",
                REFERENCE_GRACE.as_secs()
            ),
        }
    }

    /// PyTorch's forward positions/s at `batch`; `None` once the reference has failed or
    /// stopped answering (it is then stopped, and later rows go without it).
    fn measure(&mut self, batch: usize, seconds: f64) -> Option<f64> {
        let stdin = self.child.stdin.as_mut()?;
        writeln!(stdin, "{batch} {seconds}").ok()?;
        let limit = REFERENCE_GRACE + Duration::from_secs_f64(seconds);
        let Ok(line) = self.replies.recv_timeout(limit) else {
            println!(
                "(PyTorch reference stopped: no answer within {} s)",
                limit.as_secs()
            );
            self.stop();
            return None;
        };
        let reply: serde_json::Value = serde_json::from_str(&line).ok()?;
        reply["positions_per_s"].as_f64()
    }

    fn stop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for PytorchReference {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The largest differences between `evaluator`'s priors and values and those of the same
/// weights on the CPU, over `requests`: what the device's kernels (TF32 convolutions
/// included) change in what the search sees.
fn cpu_differences(
    evaluator: &mut NetworkEvaluator,
    variant: Variant,
    requests: &[EvalRequest],
) -> anyhow::Result<(f32, f32)> {
    let model = evaluator.model();
    let mut copy = Model::new(variant, &model.net.config, Device::Cpu);
    copy.vs
        .copy(&model.vs)
        .context("copying the network to the CPU")?;
    let mut on_cpu = vec![Evaluation::default(); requests.len()];
    NetworkEvaluator::new(copy).evaluate(requests, &mut on_cpu);
    let mut on_device = vec![Evaluation::default(); requests.len()];
    evaluator.evaluate(requests, &mut on_device);
    let (mut priors, mut values) = (0f32, 0f32);
    for (device, cpu) in on_device.iter().zip(&on_cpu) {
        values = values.max((device.value() - cpu.value()).abs());
        for (p, q) in device.priors.iter().zip(&cpu.priors) {
            priors = priors.max((p - q).abs());
        }
    }
    Ok((priors, values))
}

pub fn run(args: BenchNnArgs) -> anyhow::Result<()> {
    tch::set_num_threads(args.threads);
    let min = Duration::from_secs_f64(args.seconds);
    let matmul = matmul_gflops(args.device, min);
    println!(
        "variant {}, device {:?}, {} threads; matmul 1024x1024: {matmul:.1} GFLOP/s",
        args.variant, args.device, args.threads
    );
    let largest = args.batches.iter().copied().max().unwrap_or(1);
    let positions = sample_positions(args.variant, largest);
    let moves: Vec<MoveList> = positions.iter().map(|p| p.legal_moves()).collect();
    for &preset in &args.presets {
        let model = Model::seeded(args.variant, &preset.config(), args.device, 0);
        let flops = model.net.config.flops_per_position(&model.net.shape);
        let mut reference = if args.no_python {
            Err(anyhow::anyhow!("skipped"))
        } else {
            PytorchReference::start(&model, args.threads, args.device)
        };
        if let Err(why) = &reference {
            println!("(no PyTorch reference: {})", format!("{why:#}").trim());
        }
        println!(
            "\npreset {preset}: {:?}, {:.1} MFLOP/position",
            model.net.config,
            flops / 1e6
        );
        println!(
            "{:>6} {:>12} {:>12} {:>9} {:>10} {:>10} {:>11} {:>8}",
            "batch",
            "forward/s",
            "evaluator/s",
            "GFLOP/s",
            "% matmul",
            "outside %",
            "pytorch/s",
            "ratio"
        );
        let mut evaluator = NetworkEvaluator::new(model);
        if args.device.is_cuda() {
            let count = positions.len().min(256);
            let requests = EvalRequest::first_occurrences(&positions[..count], &moves);
            let (priors, values) = cpu_differences(&mut evaluator, args.variant, &requests)?;
            println!("same weights on the CPU: priors differ by at most {priors:.1e}, values by {values:.1e} ({count} positions)");
        }
        for &batch in &args.batches {
            let requests = EvalRequest::first_occurrences(&positions[..batch], &moves);
            let mut out = vec![Evaluation::default(); batch];
            let shape = evaluator.model().net.shape;
            let xs = Tensor::rand(shape.input_dims(batch as i64), (Kind::Float, args.device));
            let forward = time_per_call(min, || {
                let (p, v) = tch::no_grad(|| evaluator.model().net.forward(&xs, false));
                synchronize(args.device);
                drop((p, v));
            });
            let full = time_per_call(min, || evaluator.evaluate(&requests, &mut out));
            // Encoding, building the input tensor, copying outputs back and the priors.
            let outside = 1.0 - forward.as_secs_f64() / full.as_secs_f64();
            let forward_rate = batch as f64 / forward.as_secs_f64();
            let full_rate = batch as f64 / full.as_secs_f64();
            let gflops = forward_rate * flops / 1e9;
            let pytorch = reference
                .as_mut()
                .ok()
                .and_then(|r| r.measure(batch, args.seconds));
            let (pytorch_text, ratio_text) = match pytorch {
                Some(r) => (format!("{r:.0}"), format!("{:.2}x", full_rate / r)),
                None => ("-".to_string(), "-".to_string()),
            };
            println!(
                "{batch:>6} {forward_rate:>12.0} {full_rate:>12.0} {gflops:>9.1} {:>9.0}% {:>9.1}% {pytorch_text:>11} {ratio_text:>8}",
                100.0 * gflops / matmul,
                100.0 * outside,
            );
        }
    }
    println!("\nforward/s: the network alone on a prepared tensor; evaluator/s: encoding, forward and priors over the legal moves;");
    println!("outside %: evaluator time outside the forward pass (encoding, copying, priors); ratio: evaluator/s over PyTorch's forward/s for the same network and batch.");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_copy_is_the_same_network() {
        // The copy starts from other random weights: only a real copy differs by nothing.
        let variant = Variant::Chess;
        let model = Model::new(variant, &Preset::Tiny.config(), Device::Cpu);
        let mut evaluator = NetworkEvaluator::new(model);
        let positions = sample_positions(variant, 4);
        let moves: Vec<MoveList> = positions.iter().map(|p| p.legal_moves()).collect();
        let requests = EvalRequest::first_occurrences(&positions, &moves);
        let differences = cpu_differences(&mut evaluator, variant, &requests).unwrap();
        assert_eq!(differences, (0.0, 0.0));
    }
}
