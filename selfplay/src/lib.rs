//! MCTS self-play: playout cap randomization, resignation with a share of games where it
//! is disabled, and a scheduler that plays many games at once with one network batch per
//! step, on top of the search core of `ninjazero-search`. Finished games go to Arrow files
//! through `ninjazero-data`.

pub mod game;
pub mod scheduler;

pub use game::SelfPlayGame;
pub use scheduler::{play_dataset, run_selfplay, RunStats, SelfPlayOptions};
