//! Searching a position: one MCTS core (PUCT with first-play urgency, or a Gumbel root with
//! Sequential Halving), the classic alpha-beta engine, and the players built from a spec
//! that play, UCI, the arena and self-play datasets use.

pub mod alphabeta;
pub mod config;
pub mod gumbel;
pub mod mcts;
pub mod players;
pub mod tree;

pub use alphabeta::{AlphaBeta, AlphaBetaConfig, AlphaBetaInfo};
pub use config::{RootSearch, SearchConfig};
pub use mcts::{SearchInfo, SearchLimits, Searcher};
pub use players::{parse_player, AlphaBetaPlayer, MctsPlayer, Player, RandomPlayer};
