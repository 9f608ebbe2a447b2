//! Background batch loading.
//!
//! The order of the samples is a pure function of the seed and the window: sample number
//! `i` of the job (counting every sample of every batch since the job started) is
//! `perm(seed, i / N)[i % N]`, where `perm(seed, epoch)` is a Fisher-Yates shuffle of the
//! window's `N` positions. A batch is the next `B` samples from a cursor, so a resumed job
//! continues the very same sequence from the cursor stored in its checkpoint.
//!
//! Worker `w` of `T` builds batches `w, w + T, w + 2T, ...` into its own bounded channel;
//! the trainer takes them round-robin, so the order never depends on thread timing.

use crate::window::Samples;
use crate::TrainError;
use ninjazero_model::{encode_position, policy_len, BoardShape};
use ninjazero_rules::seed::{derive_seed, splitmix64, SeedStream};
use ninjazero_rules::{Position, Role, Variant};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use tch::{Device, Kind, Tensor};

/// One training batch, on the training device.
#[derive(Debug)]
pub struct Batch {
    /// `[B, planes, H, W]` input planes ([`BoardShape::input_dims`]).
    pub inputs: Tensor,
    /// `[B, P]` search policy (dense; rows without a full search are zero).
    pub policy: Tensor,
    /// `[B]`: 1 for rows whose policy is a training target (full search), else 0.
    pub policy_mask: Tensor,
    /// `[B]` int64: 0 win, 1 draw, 2 loss for the side to move.
    pub wdl: Tensor,
    /// `[B, 3]` the value target (win, draw, loss) when the result is mixed with the
    /// search value ([`value_target`]); None when the target is the result alone (`wdl`).
    pub value_target: Option<Tensor>,
    /// `[B, Role::COUNT]` the material head's target (`TrainConfig::material_plies`);
    /// None when it is not trained.
    pub material: Option<Tensor>,
    pub size: usize,
}

/// Search value `q` in [-1, 1] as a (win, draw, loss) distribution: `q` read as a point
/// between the two results it lies between, so `q = 0.6` is 60 % win and 40 % draw,
/// `q = -0.2` 20 % loss and 80 % draw. Its expected value (win − loss) is `q`, and results
/// map to themselves (1 a win, 0 a draw, -1 a loss), so the value head's expected value
/// learns the mix of result and search value whatever the draw share; of the distributions
/// with expected value `q` it is the one closest to a result (no mass on the far outcome).
pub(crate) fn search_wdl(q: f32) -> [f32; 3] {
    let q = q.clamp(-1.0, 1.0);
    [q.max(0.0), 1.0 - q.abs(), (-q).max(0.0)]
}

/// The value target of a row: `(1 − mix) · result + mix · search_wdl(search value)`, or the
/// result alone on a row without a search value. `wdl`: 0 win, 1 draw, 2 loss.
pub(crate) fn value_target(wdl: u8, search_value: Option<f32>, mix: f32) -> [f32; 3] {
    let mut target = [0.0; 3];
    target[wdl.min(2) as usize] = 1.0;
    let Some(q) = search_value else {
        return target;
    };
    let searched = search_wdl(q);
    for (t, s) in target.iter_mut().zip(searched) {
        *t = (1.0 - mix) * *t + mix * s;
    }
    target
}

/// The policy `probs` raised to `power` and renormalised: for a softmax target at
/// temperature T, the same softmax at T / `power` (a player's `soft=T` policy,
/// sharpened or flattened without playing its games again). Taken relative to the largest
/// entry, so a large power leaves the best move(s) at weight 1 instead of underflowing to
/// nothing. Power 1 and a row with no positive entry keep the stored numbers exactly.
pub(crate) fn sharpened(probs: &[f32], power: f32) -> impl Iterator<Item = f32> + '_ {
    let best = probs.iter().copied().fold(0.0f32, f32::max);
    let keep = power == 1.0 || best <= 0.0;
    let weight = move |p: f32| if keep { p } else { (p / best).powf(power) };
    let total: f32 = if keep {
        1.0
    } else {
        probs.iter().map(|&p| weight(p)).sum()
    };
    probs.iter().map(move |&p| weight(p) / total)
}

/// SplitMix64: a tiny generator whose whole state is one `u64`.
#[derive(Clone, Copy, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        let (state, value) = splitmix64(self.0);
        self.0 = state;
        value
    }

    /// Uniform in `0..n` (multiply-shift; the bias is below 2^-32 for any window size).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// The shuffle of epoch `epoch`.
pub(crate) fn permutation(seed: u64, epoch: u64, n: usize) -> Vec<u32> {
    let mut rng = SplitMix64(derive_seed(seed, SeedStream::Epoch, epoch));
    rng.next_u64();
    let mut perm: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        perm.swap(i, rng.below(i + 1));
    }
    perm
}

/// Recently used epoch permutations, shared by the workers.
struct Permutations {
    seed: u64,
    n: usize,
    cache: Mutex<Vec<(u64, Arc<Vec<u32>>)>>,
}

impl Permutations {
    fn get(&self, epoch: u64) -> Arc<Vec<u32>> {
        let mut cache = self.cache.lock().expect("permutation cache");
        if let Some((_, p)) = cache.iter().find(|(e, _)| *e == epoch) {
            return p.clone();
        }
        let p = Arc::new(permutation(self.seed, epoch, self.n));
        if cache.len() >= 4 {
            cache.remove(0);
        }
        cache.push((epoch, p.clone()));
        p
    }
}

/// How a batch's targets are made from the stored rows: [`crate::TrainConfig`]'s target
/// settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TargetSettings {
    /// `TrainConfig::value_target_mix`.
    pub value_target_mix: f64,
    /// `TrainConfig::material_plies` (0: no material target).
    pub material_plies: u32,
    /// `TrainConfig::policy_target_power` (1: the stored policy as it is).
    pub policy_target_power: f64,
}

impl TargetSettings {
    pub fn of(config: &crate::TrainConfig) -> TargetSettings {
        TargetSettings {
            value_target_mix: config.value_target_mix,
            material_plies: config.material_plies,
            policy_target_power: config.policy_target_power,
        }
    }
}

impl Default for TargetSettings {
    /// The stored targets as they are: the result alone, no material target.
    fn default() -> TargetSettings {
        TargetSettings {
            value_target_mix: 0.0,
            material_plies: 0,
            policy_target_power: 1.0,
        }
    }
}

/// What every worker needs to build a batch.
pub(crate) struct BatchSource {
    samples: Arc<Samples>,
    variant: Variant,
    shape: BoardShape,
    policy_len: usize,
    /// The search value's weight in the value target (`TrainConfig::value_target_mix`).
    value_target_mix: f32,
    /// `TrainConfig::material_plies` (0: no material target).
    material_plies: usize,
    /// `TrainConfig::policy_target_power`.
    policy_target_power: f32,
    permutations: Permutations,
}

impl BatchSource {
    pub fn new(
        samples: Arc<Samples>,
        variant: Variant,
        seed: u64,
        targets: TargetSettings,
    ) -> BatchSource {
        let shape = BoardShape::of(variant);
        let n = samples.len();
        BatchSource {
            samples,
            variant,
            shape,
            policy_len: policy_len(&shape),
            value_target_mix: targets.value_target_mix as f32,
            material_plies: targets.material_plies as usize,
            policy_target_power: targets.policy_target_power as f32,
            permutations: Permutations {
                seed,
                n,
                cache: Mutex::new(Vec::new()),
            },
        }
    }

    /// The window index of job sample number `i`.
    fn sample_at(&self, i: u64) -> usize {
        let n = self.samples.len() as u64;
        self.permutations.get(i / n)[(i % n) as usize] as usize
    }

    /// The batch of the `size` samples from job sample number `first`, on `device`. An
    /// allocation that fails (a batch too large for the machine) is an error, not a panic.
    pub fn build(&self, first: u64, size: usize, device: Device) -> Result<Batch, TrainError> {
        let failed = |what: &str, e: &dyn std::fmt::Display| {
            TrainError::Loader(format!("a batch of {size} samples: {what}: {e}"))
        };
        let input_len = self.shape.input_len();
        let b = i64::try_from(size).map_err(|e| failed("size", &e))?;
        let dims = self.shape.input_dims(b);
        let mut indices: Vec<usize> = Vec::new();
        indices
            .try_reserve_exact(size)
            .map_err(|e| failed("sample indices", &e))?;
        indices.extend((0..size as u64).map(|j| self.sample_at(first + j)));
        let samples = &*self.samples;
        let mut bad_fen = None;
        let inputs = cpu_tensor(&dims, Kind::Float, |data: &mut [f32]| {
            for (j, &s) in indices.iter().enumerate() {
                // Checked when the window was loaded; a failure here is reported, not hidden.
                let pos = match Position::from_fen(self.variant, samples.fen(s)) {
                    Ok(pos) => pos,
                    Err(e) => {
                        bad_fen = Some(format!("window position {s}: {e}"));
                        return;
                    }
                };
                let out = &mut data[j * input_len..(j + 1) * input_len];
                encode_position(&self.shape, &pos, samples.repetitions[s] as u32, out);
            }
        })
        .map_err(|e| failed("inputs", &e))?;
        if let Some(reason) = bad_fen {
            return Err(TrainError::Loader(reason));
        }
        let policy = cpu_tensor(
            &[b, self.policy_len as i64],
            Kind::Float,
            |data: &mut [f32]| {
                for (j, &s) in indices.iter().enumerate() {
                    let row = &mut data[j * self.policy_len..(j + 1) * self.policy_len];
                    let (index, prob) = samples.policy(s);
                    for (&k, p) in index.iter().zip(sharpened(prob, self.policy_target_power)) {
                        row[k as usize] += p;
                    }
                }
            },
        )
        .map_err(|e| failed("policy", &e))?;
        let policy_mask = cpu_tensor(&[b], Kind::Float, |data: &mut [f32]| {
            for (j, &s) in indices.iter().enumerate() {
                data[j] = samples.full_search[s] as u8 as f32;
            }
        })
        .map_err(|e| failed("policy mask", &e))?;
        let wdl = cpu_tensor(&[b], Kind::Int64, |data: &mut [i64]| {
            for (j, &s) in indices.iter().enumerate() {
                data[j] = samples.wdl[s] as i64;
            }
        })
        .map_err(|e| failed("WDL", &e))?;
        let value_target = self
            .value_targets(&indices, b)
            .map_err(|e| failed("value target", &e))?;
        let material = self
            .material_targets(&indices, b)
            .map_err(|e| failed("material target", &e))?;
        let to = |t: Tensor| {
            if device == Device::Cpu {
                Ok(t)
            } else {
                t.f_to_device(device)
                    .map_err(|e| failed("copy to the device", &e))
            }
        };
        Ok(Batch {
            inputs: to(inputs)?,
            policy: to(policy)?,
            policy_mask: to(policy_mask)?,
            wdl: to(wdl)?,
            value_target: value_target.map(to).transpose()?,
            material: material.map(to).transpose()?,
            size,
        })
    }

    /// The `[b, 3]` mixed value targets of the rows `indices`; None without a mix, where the
    /// result alone is the target (and the loss is exactly the one of a hard target).
    fn value_targets(&self, indices: &[usize], b: i64) -> Result<Option<Tensor>, tch::TchError> {
        if self.value_target_mix == 0.0 {
            return Ok(None);
        }
        let samples = &*self.samples;
        let targets = cpu_tensor(&[b, 3], Kind::Float, |data: &mut [f32]| {
            for (j, &s) in indices.iter().enumerate() {
                let target = value_target(
                    samples.wdl[s],
                    samples.search_value[s],
                    self.value_target_mix,
                );
                data[3 * j..3 * j + 3].copy_from_slice(&target);
            }
        })?;
        Ok(Some(targets))
    }

    /// The `[b, Role::COUNT]` material targets of the rows `indices`; None when the material
    /// head is not trained.
    fn material_targets(&self, indices: &[usize], b: i64) -> Result<Option<Tensor>, tch::TchError> {
        if self.material_plies == 0 {
            return Ok(None);
        }
        let samples = &*self.samples;
        let targets = cpu_tensor(
            &[b, Role::COUNT as i64],
            Kind::Float,
            |data: &mut [f32]| {
                for (j, &s) in indices.iter().enumerate() {
                    let row = &mut data[j * Role::COUNT..(j + 1) * Role::COUNT];
                    row.copy_from_slice(&samples.material_swing(s, self.material_plies));
                }
            },
        )?;
        Ok(Some(targets))
    }
}

/// Bytes of one batch's tensors (inputs, dense policy, mask, WDL, value and material
/// targets) for `variant`.
fn batch_bytes(variant: Variant, batch_size: usize) -> u128 {
    let shape = BoardShape::of(variant);
    let per_sample = 4 * shape.input_len() + 4 * policy_len(&shape) + 4 + 8 + 12 + 4 * Role::COUNT;
    per_sample as u128 * batch_size as u128
}

/// Batches alive at once: two queued and one being built per loader thread, plus the one
/// being trained on.
fn batches_in_flight(loader_threads: usize) -> u128 {
    3 * loader_threads.max(1) as u128 + 1
}

/// Refuses a batch size whose batches in flight would take more than half of the
/// machine's memory, before anything is allocated. Where the memory size is unknown the
/// loader still reports a failed allocation as an error.
pub(crate) fn check_batch_memory(
    variant: Variant,
    config: &crate::TrainConfig,
) -> Result<(), TrainError> {
    let needed = batch_bytes(variant, config.batch_size) * batches_in_flight(config.loader_threads);
    match physical_memory() {
        Some(memory) if needed > memory as u128 / 2 => Err(TrainError::BatchTooLarge {
            batch_size: config.batch_size,
            needed,
            memory,
        }),
        _ => Ok(()),
    }
}

/// The machine's physical memory in bytes, where known.
fn physical_memory() -> Option<u64> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: sysconf only reads system parameters.
        let (pages, page_size) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        if pages > 0 && page_size > 0 {
            return (pages as u64).checked_mul(page_size as u64);
        }
    }
    None
}

/// A zeroed contiguous CPU tensor of `shape`, filled in place by `fill`.
///
/// Allocated with `empty` and zeroed here rather than with `Tensor::zeros`: libtorch fills
/// large tensors with an OpenMP parallel loop, and an OpenMP region opened from a loader
/// thread starts a second team of threads that competes with the trainer's for the cores.
fn cpu_tensor<T: Copy + Default>(
    shape: &[i64],
    kind: Kind,
    fill: impl FnOnce(&mut [T]),
) -> Result<Tensor, tch::TchError> {
    let tensor = Tensor::f_empty(shape, (kind, Device::Cpu))?;
    assert_eq!(kind.elt_size_in_bytes(), std::mem::size_of::<T>());
    assert!(tensor.is_contiguous());
    let len = tensor.numel();
    // SAFETY: `tensor` was just allocated (contiguous, on the CPU, `len` elements of a
    // kind whose size and alignment match `T`) and nothing else refers to its storage; every
    // element is written (`fill(default)`) before being read.
    let data = unsafe { std::slice::from_raw_parts_mut(tensor.data_ptr() as *mut T, len) };
    data.fill(T::default());
    fill(data);
    Ok(tensor)
}

/// Worker threads building batches ahead of the trainer.
pub(crate) struct Loader {
    receivers: Vec<Receiver<Result<Batch, TrainError>>>,
    next: usize,
    stop: Arc<AtomicBool>,
    handles: Vec<Option<JoinHandle<()>>>,
}

impl Loader {
    /// Starts `threads` workers producing batches of `batch_size` from job sample `cursor`.
    pub fn start(
        source: Arc<BatchSource>,
        cursor: u64,
        batch_size: usize,
        threads: usize,
        device: Device,
    ) -> Result<Loader, TrainError> {
        let threads = threads.max(1);
        // Built up in place, so that a failed spawn stops the workers already started.
        let mut loader = Loader {
            receivers: Vec::with_capacity(threads),
            next: 0,
            stop: Arc::new(AtomicBool::new(false)),
            handles: Vec::with_capacity(threads),
        };
        for worker in 0..threads {
            // Two batches queued per worker, one being built.
            let (sender, receiver) = sync_channel::<Result<Batch, TrainError>>(2);
            let source = source.clone();
            let stop = loader.stop.clone();
            let handle = std::thread::Builder::new()
                .name(format!("loader-{worker}"))
                .spawn(move || {
                    // Batch construction is single-threaded by design: the trainer's
                    // libtorch threads keep the cores for the network.
                    let mut k = worker as u64;
                    while !stop.load(Ordering::Relaxed) {
                        let first = cursor + k * batch_size as u64;
                        let batch = source.build(first, batch_size, device);
                        // A failed batch is handed to the trainer, and this worker ends.
                        let failed = batch.is_err();
                        if sender.send(batch).is_err() || failed {
                            break;
                        }
                        k += threads as u64;
                    }
                })
                .map_err(|e| TrainError::Loader(format!("starting a loader thread: {e}")))?;
            loader.receivers.push(receiver);
            loader.handles.push(Some(handle));
        }
        Ok(loader)
    }

    /// The next batch in order (blocks until it is ready), or the error that stopped the
    /// worker building it.
    pub fn next_batch(&mut self) -> Result<Batch, TrainError> {
        let k = self.next % self.receivers.len();
        self.next += 1;
        match self.receivers[k].recv() {
            Ok(batch) => batch,
            Err(_) => {
                // The worker ended without a batch or an error: it panicked; say why.
                let reason = match self.handles[k].take().map(JoinHandle::join) {
                    Some(Err(payload)) => payload
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| payload.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "unknown panic".to_string()),
                    _ => "it ended".to_string(),
                };
                Err(TrainError::Loader(format!(
                    "loader thread {k} stopped: {reason}"
                )))
            }
        }
    }
}

impl Drop for Loader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Dropping the receivers makes blocked senders fail and their threads end.
        self.receivers.clear();
        for handle in self.handles.drain(..).flatten() {
            let _ = handle.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::{random_game, FullSearch};

    #[test]
    fn permutations_are_deterministic_and_complete() {
        let a = permutation(7, 3, 1000);
        assert_eq!(a, permutation(7, 3, 1000));
        assert_ne!(a, permutation(7, 4, 1000));
        assert_ne!(a, permutation(8, 3, 1000));
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..1000).collect::<Vec<u32>>());
    }

    #[test]
    fn a_batch_that_cannot_be_allocated_is_an_error_from_the_loader() {
        let variant = Variant::InsaneNinja;
        let start = Position::start(variant);
        let game = random_game(&start, 0, 8, FullSearch::Random, &mut SplitMix64(1));
        let samples = Samples::from_game(variant, &game, 0, false).unwrap();
        let source = Arc::new(BatchSource::new(
            Arc::new(samples),
            variant,
            3,
            TargetSettings::default(),
        ));
        assert_eq!(source.build(0, 4, Device::Cpu).unwrap().size, 4);
        // 2^46 samples need more memory than any address space holds.
        let mut loader = Loader::start(source, 0, 1 << 46, 2, Device::Cpu).unwrap();
        for _ in 0..2 {
            match loader.next_batch() {
                Err(TrainError::Loader(message)) => {
                    assert!(message.contains("sample indices"), "{message}")
                }
                other => panic!("expected a loader error, got {other:?}"),
            }
        }
    }

    /// The dense policy rows of a batch of the first `n` samples with `power`.
    fn policy_rows(samples: &Arc<Samples>, n: usize, power: f64) -> Vec<Vec<f32>> {
        let targets = TargetSettings {
            policy_target_power: power,
            ..TargetSettings::default()
        };
        let source = BatchSource::new(samples.clone(), Variant::InsaneNinja, 3, targets);
        let policy = source.build(0, n, Device::Cpu).unwrap().policy;
        let width = policy.size()[1] as usize;
        let flat = Vec::<f32>::try_from(policy.reshape([-1])).unwrap();
        flat.chunks(width).map(|row| row.to_vec()).collect()
    }

    #[test]
    fn a_policy_target_power_sharpens_each_row_as_a_lower_temperature() {
        let variant = Variant::InsaneNinja;
        let game = random_game(
            &Position::start(variant),
            0,
            12,
            FullSearch::EvenPlies,
            &mut SplitMix64(5),
        );
        let samples = Arc::new(Samples::from_game(variant, &game, 0, false).unwrap());
        let n = samples.len();
        let stored = policy_rows(&samples, n, 1.0);
        let halved = policy_rows(&samples, n, 2.0);
        let alone = policy_rows(&samples, n, 1000.0);
        let mut searched = 0;
        for ((p, q), r) in stored.iter().zip(&halved).zip(&alone) {
            let squares: f32 = p.iter().map(|x| x * x).sum();
            if squares == 0.0 {
                // No full search: no target, whatever the power.
                assert!(q.iter().chain(r).all(|&x| x == 0.0));
                continue;
            }
            searched += 1;
            // exp(-s/T) squared is exp(-s/(T/2)): the square renormalised.
            for (x, y) in p.iter().zip(q) {
                assert!((x * x / squares - y).abs() < 1e-6, "{x} squared vs {y}");
            }
            // The synthetic policy's move played holds half the mass: alone it holds all.
            let best = p.iter().copied().fold(0.0, f32::max);
            assert_eq!(best, 0.5);
            for (x, z) in p.iter().zip(r) {
                assert_eq!(*z, if *x == best { 1.0 } else { 0.0 });
            }
        }
        assert_eq!(searched, n.div_ceil(2), "the even plies have a target");
        // A row without a positive entry stays as it is (no division by nothing), and
        // power 1 keeps the stored numbers bit for bit, even where they do not sum to 1.
        assert_eq!(sharpened(&[0.0, 0.0], 2.0).collect::<Vec<_>>(), [0.0, 0.0]);
        let stored = [0.3f32, 0.1, 0.2];
        assert_eq!(sharpened(&stored, 1.0).collect::<Vec<_>>(), stored);
    }

    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn an_absurd_batch_size_is_refused_before_allocating() {
        let config = crate::TrainConfig {
            batch_size: 100_000_000,
            ..crate::TrainConfig::preset("demo").unwrap()
        };
        let err = check_batch_memory(Variant::InsaneNinja, &config).unwrap_err();
        assert!(
            matches!(
                err,
                TrainError::BatchTooLarge {
                    batch_size: 100_000_000,
                    ..
                }
            ),
            "{err}"
        );
        let small = crate::TrainConfig::preset("gpu").unwrap();
        check_batch_memory(Variant::InsaneNinja, &small).unwrap();
    }
}
