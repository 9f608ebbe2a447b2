//! Searching a position.
//!
//! - [`mcts`]: the one MCTS core, resumable (a leaf at a time, for batched evaluation),
//!   with the root policy a parameter: PUCT with first-play urgency, PUCT with Dirichlet
//!   noise, or a Gumbel root with Sequential Halving ([`gumbel`]), over the tree of
//!   [`tree`]. Self-play (`ninjazero-selfplay`) and the single-position MCTS engine both
//!   run it.
//! - [`alphabeta`]: the classic alpha-beta engine.
//! - [`material`]: material counted with piece values, and captures resolved by a small
//!   quiescence search (the alpha-beta engine's evaluation, the MCTS's capture-resolved
//!   leaves).
//! - [`engine`]: the one interface of every engine ([`Engine`], with [`Limits`] and a
//!   [`SearchInfo`] report) that play, UCI, the arena, player datasets and the values
//!   matches drive, and the engines: MCTS, alpha-beta, random.
//! - [`uci_engine`]: external UCI engines (Fairy-Stockfish) as players, whose faults lose
//!   the game instead of hanging it.
//! - [`spec`]: engines named by text (`alphabeta:depth=3`), parsed once into an
//!   [`EngineSpec`] and built for a variant.

pub mod alphabeta;
pub mod engine;
pub mod gumbel;
pub mod material;
pub mod mcts;
pub mod spec;
pub mod tree;
pub mod uci_engine;

pub use alphabeta::{
    AlphaBeta, AlphaBetaConfig, AlphaBetaInfo, ConfigError, NetworkRole, CENTIPAWNS_PER_LOG_ODDS,
    MAX_EVALUATION, MAX_LEARNT_PIECE_VALUE, MAX_MOBILITY_PAWNS, MAX_PIECE_VALUE,
};
pub use engine::{
    AlphaBetaEngine, Engine, EngineFactory, Limits, MctsEngine, MctsMoveSearch, RandomEngine,
    Score, SearchError, SearchInfo,
};
pub use material::MaterialTable;
pub use mcts::{LeafBlend, MctsSearch, RootPolicy, Step};
/// The MCTS settings are stored with every dataset, so they live beside the file format.
pub use ninjazero_data::settings::{RootSearch, SearchConfig};
pub use spec::{
    BlendSpec, EngineSpec, MctsBudget, SpecError, DEFAULT_BLEND_MIX, MAX_MCTS_BATCH,
    PIECE_SQUARE_SUFFIX, SPEC_HELP,
};
pub use uci_engine::{UciEngine, UciSettings, MAX_TIMEOUT};
