//! Training speed measurements for `ninjazero bench train`.

use crate::loader::{BatchSource, Loader, TargetSettings};
use crate::{Batch, TrainConfig, TrainError, Trainer};
use ninjazero_model::{policy_len, synchronize, BoardShape, Model};
use ninjazero_rules::Variant;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tch::{Device, Kind, Tensor};

/// A batch of random inputs and targets: uniform [0, 1) planes, a policy spread over 8
/// random indices per row, half the rows with a full search, random WDL classes
/// (`scripts/bench_train.py` builds the same).
pub fn synthetic_batch(shape: &BoardShape, batch: usize, device: Device) -> Batch {
    let b = batch as i64;
    let p = policy_len(shape) as i64;
    let options = (Kind::Float, device);
    let inputs = Tensor::rand(shape.input_dims(b), options);
    let index = Tensor::randint(p, [b, 8], (Kind::Int64, device));
    let policy = Tensor::zeros([b, p], options).scatter_value(1, &index, 0.125);
    let policy_mask = Tensor::rand([b], options).lt(0.5).to_kind(Kind::Float);
    let wdl = Tensor::randint(3, [b], (Kind::Int64, device));
    Batch {
        inputs,
        policy,
        policy_mask,
        wdl,
        value_target: None,
        material: None,
        size: batch,
    }
}

/// Training samples/s of full steps (forward in train mode, losses, backward, clipping,
/// optimizer update, statistics) on one synthetic batch, for at least `min`, after 3
/// warm-up steps.
pub fn synthetic_samples_per_s(
    model: Model,
    config: &TrainConfig,
    batch: &Batch,
    min: Duration,
) -> f64 {
    crate::tune_allocator();
    let device = model.vs.device();
    let mut trainer = Trainer::new(model, config);
    for _ in 0..3 {
        trainer.step(batch, config.learning_rate);
    }
    synchronize(device);
    let (mut steps, start) = (0u64, Instant::now());
    while steps < 2 || start.elapsed() < min {
        trainer.step(batch, config.learning_rate);
        steps += 1;
    }
    synchronize(device);
    (steps * batch.size as u64) as f64 / start.elapsed().as_secs_f64()
}

/// Samples/s the real loader (window over `data_dirs`, `config.loader_threads` workers,
/// `config.batch_size`) delivers on its own, for at least `min`; also the window size.
pub fn loader_samples_per_s(
    variant: Variant,
    data_dirs: &[PathBuf],
    config: &TrainConfig,
    device: Device,
    min: Duration,
) -> Result<(f64, usize), TrainError> {
    crate::loader::check_batch_memory(variant, config)?;
    let mut index = crate::window::DataIndex::default();
    let (snapshot, samples, _) = crate::window::take_window(
        variant,
        data_dirs,
        config,
        &mut index,
        &mut crate::warn_skipped,
    )?;
    let source = Arc::new(BatchSource::new(
        Arc::new(samples),
        variant,
        config.seed,
        TargetSettings::of(config),
    ));
    let mut loader = Loader::start(source, 0, config.batch_size, config.loader_threads, device)?;
    // The first batches include thread start-up.
    loader.next_batch()?;
    let (mut batches, start) = (0u64, Instant::now());
    while batches < 2 || start.elapsed() < min {
        loader.next_batch()?;
        batches += 1;
    }
    synchronize(device);
    let rate = (batches * config.batch_size as u64) as f64 / start.elapsed().as_secs_f64();
    Ok((rate, snapshot.size))
}
