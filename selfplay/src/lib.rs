//! MCTS self-play: PUCT (with first-play urgency, Dirichlet noise, temperature, tree reuse)
//! or a Gumbel root with Sequential Halving, playout cap randomization, resignation with a
//! share of games where it is disabled, and a scheduler that plays many games at once with
//! one network batch per step. Finished games go to Arrow files through `ninjazero-data`.

pub mod alphabeta;
pub mod arena;
pub mod config;
pub mod game;
pub mod gumbel;
pub mod player_games;
pub mod players;
pub mod scheduler;
pub mod search;
pub mod tree;
pub mod values;

pub use alphabeta::{AlphaBeta, AlphaBetaConfig, AlphaBetaInfo};
pub use arena::{run_arena, ArenaConfig, ArenaGame, ArenaResult, SprtConfig};
pub use config::{RootSearch, SearchConfig};
pub use game::SelfPlayGame;
pub use player_games::{play_player_dataset, PlayerGamesOptions};
pub use players::{parse_player, AlphaBetaPlayer, MctsPlayer, Player, RandomPlayer};
pub use scheduler::{play_dataset, run_selfplay, RunStats, SelfPlayOptions};
pub use search::{SearchInfo, SearchLimits, Searcher};
