//! MCTS self-play on the search core of `ninjazero-search` (`MctsSearch`, the same loop
//! the single-position engine runs): playout cap randomization, resignation with a share of
//! games where it is disabled, and a scheduler that plays many games at once with one
//! network batch per step. Finished games go to Arrow files through `ninjazero-data`.

pub mod game;
pub mod scheduler;

pub use game::SelfPlayGame;
pub use scheduler::{
    play_dataset, run_selfplay, RunStats, SelfPlayOptions, MAX_CONCURRENCY, MAX_GAMES,
    MAX_SIMULATIONS, MIN_CONCURRENCY,
};
