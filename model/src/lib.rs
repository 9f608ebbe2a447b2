//! The NinjaZero model: position → tensor encoding, the move ↔ policy index map, the
//! policy/value ResNet (libtorch through `tch`), checkpoints, the batched evaluators the
//! searcher calls, and the learnt piece-square evaluation alpha-beta searches with.
//!
//! ```no_run
//! use ninjazero_model::{EvalRequest, Evaluation, Evaluator, Model, NetworkEvaluator, Preset};
//! use ninjazero_rules::{Position, Variant};
//!
//! let model = Model::new(Variant::InsaneNinja, &Preset::Tiny.config(), tch::Device::Cpu);
//! let mut evaluator = NetworkEvaluator::new(model);
//! let pos = Position::start(Variant::InsaneNinja);
//! let moves = pos.legal_moves();
//! let mut out = vec![Evaluation::default()];
//! evaluator.evaluate(&[EvalRequest { position: &pos, moves: &moves, repetitions: 1 }], &mut out);
//! assert_eq!(out[0].priors.len(), moves.len());
//! ```

pub mod checkpoint;
pub mod device;
pub mod encoding;
pub mod evaluator;
pub mod kernels;
pub mod net;
pub mod piece_square;
pub mod policy;
pub mod score;
pub mod threads;

pub use checkpoint::{checkpoint_id, torch_message, CheckpointMeta, Model, ModelError};
pub use device::{device_text, parse_device, synchronize};
pub use encoding::{encode_position, BoardShape, ENCODING_VERSION};
pub use evaluator::{
    load_evaluator, material_balance, EvalRequest, EvalTimings, Evaluation, Evaluator,
    NetworkEvaluator, UniformEvaluator, PER_THREAD_AT_LEAST,
};
pub use kernels::{select_cpu_kernels, CpuKernels, UnknownCpuKernels, CPU_KERNELS_VAR};
pub use net::{
    NetConfig, PolicyValueNet, Preset, MAX_BLOCKS, MAX_CHANNELS, MAX_VALUE_CHANNELS,
    MAX_VALUE_HIDDEN,
};
pub use piece_square::{
    FitSummary, PieceSquareError, PieceSquareEval, PieceSquareLayout, MAX_LOG_ODDS,
    MAX_MOBILITY_WEIGHT, MAX_POSITIONAL_WEIGHT, MAX_VALUE_WEIGHT, PIECE_SQUARE_VERSION,
};
pub use policy::{decode_move, move_index, policy_len, MOVE_KINDS};
pub use score::CENTIPAWNS_PER_LOG_ODDS;
pub use threads::OneTorchThread;
