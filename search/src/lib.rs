//! Searching a position: one MCTS core (PUCT with first-play urgency, or a Gumbel root with
//! Sequential Halving), the classic alpha-beta engine, and the players built from a spec
//! that play, UCI, the arena and self-play datasets use.

pub mod alphabeta;
pub mod gumbel;
pub mod mcts;
pub mod players;
pub mod tree;

pub use alphabeta::{AlphaBeta, AlphaBetaConfig, AlphaBetaInfo};
pub use mcts::{SearchInfo, SearchLimits, Searcher};
/// The MCTS settings are stored with every dataset, so they live beside the file format.
pub use ninjazero_data::settings::{RootSearch, SearchConfig};
pub use players::{parse_player, AlphaBetaPlayer, MctsPlayer, Player, RandomPlayer};
