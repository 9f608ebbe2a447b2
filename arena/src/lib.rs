//! Games between players on worker threads: paired openings, the score with its Elo
//! interval and an SPRT, and datasets of games played by any player.

pub mod arena;
pub mod player_games;

pub use arena::{
    play_series_game, run_arena, run_on_workers, ArenaConfig, ArenaGame, ArenaResult, SprtConfig,
};
pub use ninjazero_search::EngineFactory;
pub use player_games::{play_player_dataset, PlayerGamesOptions};
