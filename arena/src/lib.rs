//! Games between players on worker threads (or all at once in lockstep, their network
//! leaves batched: [`lockstep`]): paired openings, the score with its Elo interval and an
//! SPRT, ratings of many players on one scale (the strength ladder), and
//! datasets of games played by any player.

pub mod arena;
pub mod ladder;
pub mod lockstep;
pub mod player_games;
pub mod rating;
pub mod series;

pub use arena::{
    play_series_game, run_arena, run_on_workers, ArenaConfig, ArenaGame, ArenaResult, SprtConfig,
    MAX_PAIRS,
};
pub use ladder::{
    run_ladder, LadderError, LadderJob, LadderReport, LadderSettings, OpponentResult,
};
pub use ninjazero_data::GameResult;
pub use ninjazero_search::EngineFactory;
pub use player_games::{play_player_dataset, PlayerGamesOptions};
pub use rating::{fit_ratings, PairingScore, Rating, RatingError};
pub use series::{Series, Shard};
