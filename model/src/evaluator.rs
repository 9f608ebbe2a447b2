//! The searcher-facing evaluation interface and its two implementations.

use crate::checkpoint::{Model, ModelError};
use crate::encoding::encode_position;
use crate::policy::{move_index, policy_len};
use ninjazero_rules::{piece_values, Color, Move, MoveList, Position, Role, Variant};
use rayon::prelude::*;
use std::path::Path;
use std::time::{Duration, Instant};
use tch::{Device, Kind, Tensor};

/// One position to evaluate: the position, its legal moves (in the order the priors are
/// wanted) and how often it has occurred in the game (itself included).
#[derive(Clone, Copy, Debug)]
pub struct EvalRequest<'a> {
    pub position: &'a Position,
    pub moves: &'a [Move],
    pub repetitions: u32,
}

impl<'a> EvalRequest<'a> {
    /// Requests for positions seen once each, with their legal moves (`moves[i]` belongs to
    /// `positions[i]`).
    pub fn first_occurrences(
        positions: &'a [Position],
        moves: &'a [MoveList],
    ) -> Vec<EvalRequest<'a>> {
        positions
            .iter()
            .zip(moves)
            .map(|(position, moves)| EvalRequest {
                position,
                moves,
                repetitions: 1,
            })
            .collect()
    }
}

/// The result for one position. `priors` is reused between calls (no reallocation once it
/// has grown to the largest move count).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    /// Prior probability of each requested move, summing to 1.
    pub priors: Vec<f32>,
    /// Win, draw, loss probabilities for the side to move.
    pub wdl: [f32; 3],
}

impl Evaluation {
    /// Expected score in [-1, 1] for the side to move.
    pub fn value(&self) -> f32 {
        self.wdl[0] - self.wdl[2]
    }
}

/// Where an evaluator's time went.
#[derive(Clone, Copy, Debug, Default)]
pub struct EvalTimings {
    pub positions: u64,
    pub batches: u64,
    /// Writing input planes and the legal moves' policy indices.
    pub encode: Duration,
    /// Building the input tensor, the forward pass and copying the outputs back.
    pub forward: Duration,
    /// Softmax over each position's legal moves.
    pub decode: Duration,
}

/// Gives priors over legal moves and a WDL value for a batch of positions.
pub trait Evaluator {
    /// Fills `out[i]` for `batch[i]`; `out` has at least `batch.len()` entries.
    fn evaluate(&mut self, batch: &[EvalRequest<'_>], out: &mut [Evaluation]);

    /// Time spent so far.
    fn timings(&self) -> EvalTimings;
}

/// Uniform priors over the legal moves and a WDL from the material balance: search from
/// nothing but the rules.
#[derive(Clone, Debug, Default)]
pub struct UniformEvaluator {
    timings: EvalTimings,
}

impl Evaluator for UniformEvaluator {
    fn evaluate(&mut self, batch: &[EvalRequest<'_>], out: &mut [Evaluation]) {
        let started = Instant::now();
        for (request, result) in batch.iter().zip(out.iter_mut()) {
            let p = 1.0 / request.moves.len().max(1) as f32;
            result.priors.clear();
            result.priors.resize(request.moves.len(), p);
            let value = (material_balance(request.position) / 5.0).tanh();
            result.wdl = [(1.0 + value) / 2.0, 0.0, (1.0 - value) / 2.0];
        }
        self.timings.decode += started.elapsed();
        self.timings.positions += batch.len() as u64;
        self.timings.batches += 1;
    }

    fn timings(&self) -> EvalTimings {
        self.timings
    }
}

/// Material balance for the side to move, in Pawns, by the [rough values](piece_values::rough)
/// (only to give a model-free search a sense of material; they are no estimate of the new
/// pieces). Pieces in hand are Ninja Pawns.
pub fn material_balance(position: &Position) -> f32 {
    let side = |color: Color| -> f32 {
        Role::ALL
            .iter()
            .map(|&r| piece_values::rough(r) * position.count(color, r) as f32)
            .sum::<f32>()
            + position.hand(color) as f32 * piece_values::rough(Role::NinjaPawn)
    };
    side(position.turn()) - side(!position.turn())
}

/// The policy/value network: one forward pass per batch; input and output buffers are kept
/// between calls. Only the legal moves' logits leave the device.
pub struct NetworkEvaluator {
    model: Model,
    device: Device,
    input: Vec<f32>,
    /// Flat indices (`position * policy_len + move_index`) of the wanted logits.
    wanted: Vec<i64>,
    /// Where each position's wanted logits start in `wanted` (and `logits`).
    starts: Vec<usize>,
    logits: Vec<f32>,
    wdl: Vec<f32>,
    timings: EvalTimings,
}

impl NetworkEvaluator {
    /// Takes `model` for play: its batch norms are folded into its convolutions
    /// ([`PolicyValueNet::fold_batch_norms`](crate::net::PolicyValueNet::fold_batch_norms)).
    pub fn new(mut model: Model) -> NetworkEvaluator {
        model.net.fold_batch_norms();
        let device = model.vs.device();
        NetworkEvaluator {
            model,
            device,
            input: Vec::new(),
            wanted: Vec::new(),
            starts: Vec::new(),
            logits: Vec::new(),
            wdl: Vec::new(),
            timings: EvalTimings::default(),
        }
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Writes the input planes and the wanted logit indices of `batch`.
    fn encode(&mut self, batch: &[EvalRequest<'_>]) {
        let shape = self.model.net.shape;
        let (input_len, policy_size) = (shape.input_len(), policy_len(&shape));
        grow(&mut self.input, batch.len() * input_len);
        self.starts.clear();
        let mut total = 0;
        for request in batch {
            self.starts.push(total);
            total += request.moves.len();
        }
        self.wanted.resize(total, 0);
        let wanted = split_at_starts(&mut self.wanted, &self.starts);
        batch
            .par_iter()
            .zip(self.input[..batch.len() * input_len].par_chunks_exact_mut(input_len))
            .zip(wanted)
            .enumerate()
            .with_min_len(PER_THREAD_AT_LEAST)
            .for_each(|(i, ((request, planes), wanted))| {
                encode_position(&shape, request.position, request.repetitions, planes);
                let base = (i * policy_size) as i64;
                for (index, &m) in wanted.iter_mut().zip(request.moves) {
                    *index = base + move_index(&shape, request.position, m) as i64;
                }
            });
    }

    /// Each request's priors (a softmax over its moves' logits) and WDL from the forward
    /// pass's outputs.
    fn decode(&self, batch: &[EvalRequest<'_>], out: &mut [Evaluation]) {
        // The buffers alone: the model's tensors may not be shared among threads.
        let (starts, logits, wdl) = (&self.starts, &self.logits, &self.wdl);
        batch
            .par_iter()
            .zip(out.par_iter_mut())
            .enumerate()
            .with_min_len(PER_THREAD_AT_LEAST)
            .for_each(|(i, (request, result))| {
                let start = starts[i];
                softmax_into(
                    &logits[start..start + request.moves.len()],
                    &mut result.priors,
                );
                result.wdl.copy_from_slice(&wdl[i * 3..i * 3 + 3]);
            });
    }

    /// One forward pass over the encoded batch; gathers the wanted logits and the WDL.
    fn forward(&mut self, n: usize) {
        let shape = self.model.net.shape;
        let xs = Tensor::from_slice(&self.input[..n * shape.input_len()])
            .view(shape.input_dims(n as i64))
            .to_device(self.device);
        let wanted = Tensor::from_slice(&self.wanted).to_device(self.device);
        let (logits, wdl) = tch::no_grad(|| {
            let (policy, wdl) = self.model.net.forward(&xs, false);
            (
                policy.reshape([-1]).index_select(0, &wanted),
                wdl.softmax(-1, Kind::Float),
            )
        });
        let count = self.wanted.len();
        grow(&mut self.logits, count);
        grow(&mut self.wdl, n * 3);
        logits
            .to_device(Device::Cpu)
            .copy_data(&mut self.logits[..count], count);
        wdl.to_device(Device::Cpu)
            .copy_data(&mut self.wdl[..n * 3], n * 3);
    }
}

/// The fewest positions one of rayon's threads encodes or decodes: a batch below twice
/// this stays on the calling thread (rayon does not split it), as a single game's search
/// wants, while on a GPU large batches spread over the cores (there the encoding and
/// priors on one thread took 71–90 % of the evaluator's time at batches of 256–4096,
/// `cpu` network, one H200 with 16 cores; one position takes a few microseconds).
pub const PER_THREAD_AT_LEAST: usize = 64;

/// `values` cut into the consecutive slices that begin at `starts` (ascending, the first 0);
/// the last runs to the end.
fn split_at_starts<'a, T>(mut values: &'a mut [T], starts: &[usize]) -> Vec<&'a mut [T]> {
    let mut slices = Vec::with_capacity(starts.len());
    for (i, &start) in starts.iter().enumerate() {
        let len = starts.get(i + 1).map_or(values.len(), |&next| next - start);
        let (slice, rest) = values.split_at_mut(len);
        slices.push(slice);
        values = rest;
    }
    slices
}

fn grow<T: Default + Clone>(buffer: &mut Vec<T>, len: usize) {
    if buffer.len() < len {
        buffer.resize(len, T::default());
    }
}

impl Evaluator for NetworkEvaluator {
    fn evaluate(&mut self, batch: &[EvalRequest<'_>], out: &mut [Evaluation]) {
        let n = batch.len();
        if n == 0 {
            return;
        }
        let start = Instant::now();
        self.encode(batch);
        let encoded = Instant::now();
        self.forward(n);
        let forwarded = Instant::now();
        self.decode(batch, &mut out[..n]);
        let t = &mut self.timings;
        t.encode += encoded - start;
        t.forward += forwarded - encoded;
        t.decode += forwarded.elapsed();
        t.positions += n as u64;
        t.batches += 1;
    }

    fn timings(&self) -> EvalTimings {
        self.timings
    }
}

/// Normalised probabilities from logits.
fn softmax_into(logits: &[f32], priors: &mut Vec<f32>) {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    priors.clear();
    priors.extend(logits.iter().map(|&l| (l - max).exp()));
    let sum: f32 = priors.iter().sum();
    priors.iter_mut().for_each(|p| *p /= sum);
}

/// The network of checkpoint `model` (loaded on `device`, refused unless it was made for
/// `variant`) with its id ([`checkpoint_id`](crate::checkpoint::checkpoint_id)); without a
/// checkpoint, the model-free [`UniformEvaluator`] with the id `uniform`.
pub fn load_evaluator(
    model: Option<&Path>,
    variant: Variant,
    device: Device,
) -> Result<(Box<dyn Evaluator + Send>, String), ModelError> {
    let Some(path) = model else {
        return Ok((Box::new(UniformEvaluator::default()), "uniform".to_string()));
    };
    // Loading first: its errors name the path once and say what is wrong with the file.
    let model = Model::load(path, Some(variant), device)?;
    let id = crate::checkpoint::checkpoint_id(path)?;
    Ok((Box::new(NetworkEvaluator::new(model)), id))
}
