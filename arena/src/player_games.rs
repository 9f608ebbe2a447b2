//! Self-play datasets from any player (alpha-beta, random, a one-leaf-at-a-time MCTS):
//! games on worker threads after a few random opening plies, stored like the scheduler's
//! games with the player's move as the policy target of each position it chose (or the
//! policy it proposed, where it has one: alpha-beta's `soft=T`) and the player's search
//! value as its root value (so they teach a policy head to imitate the player, a value
//! head its results and its judgement, and feed the outcome regression of `values`).
//! Games at the ply cap are draws.

use crate::arena::{play_series_game, run_on_workers, PlayedGame};
use ninjazero_data::{
    DatasetWriter, FileMeta, FlushPolicy, GameRecord, GameSettings, PolicyEntry, PositionRecord,
};
use ninjazero_model::{move_index, BoardShape};
use ninjazero_rules::{Color, Position};
use ninjazero_search::EngineFactory;

/// What to play.
#[derive(Clone, Debug)]
pub struct PlayerGamesOptions {
    pub start: Position,
    /// The game ids that make up the dataset; ids already written are skipped.
    pub game_ids: std::ops::Range<u64>,
    /// Random plies (seeded per game) before the player takes over.
    pub opening_plies: usize,
    pub max_plies: u32,
    pub seed: u64,
    /// The player's spec, stored as the model id of every position.
    pub player: String,
}

/// The positions of a finished game, each with the move played from it. After the
/// `opening_plies` random plies, the player's policy is also the position's policy target
/// (the one it proposed, as alpha-beta's `soft=T` does, else all the probability on its
/// move), so the games can teach a policy head to play like the player, and the player's
/// search value its root value.
fn record(id: u64, played: PlayedGame, opening_plies: usize, player: &str) -> GameRecord {
    let game = &played.game;
    let shape = BoardShape::of(game.start().variant());
    let mut position = game.start().clone();
    let mut positions = Vec::with_capacity(game.moves().len());
    for (ply, &m) in game.moves().iter().enumerate() {
        let chosen = ply >= opening_plies;
        let root_value = if chosen {
            played.values[ply - opening_plies]
        } else {
            0.0
        };
        let policy = if chosen {
            let proposed = &played.policies[ply - opening_plies];
            let one_hot = [(m, 1.0)];
            let weights = if proposed.is_empty() {
                &one_hot[..]
            } else {
                proposed
            };
            weights
                .iter()
                .map(|&(target, probability)| PolicyEntry {
                    index: move_index(&shape, &position, target) as u32,
                    move_text: target.to_string(),
                    visits: u32::from(target == m),
                    probability,
                })
                .collect()
        } else {
            Vec::new()
        };
        positions.push(PositionRecord {
            ply: ply as u16,
            fen: position.to_fen(),
            side_to_move: position.turn(),
            policy,
            root_value,
            full_search: chosen,
            material: position.material(),
            hand: [position.hand(Color::White), position.hand(Color::Black)],
            move_played: m.to_string(),
        });
        position.play_unchecked(m);
    }
    GameRecord {
        game_id: id,
        variant: game.start().variant(),
        start_fen: game.start().to_fen(),
        positions,
        winner: played.winner,
        termination: played.termination,
        model_id: player.to_string(),
        resignation_disabled: true,
        would_resign: None,
    }
}

/// Plays the games of `options` that the dataset in `dir` does not hold yet, `make_player`
/// on both sides, on `threads` threads, and adds them to it, in files as `policy` says.
/// `dir` is locked and checked as [`crate::play_dataset`] does, before any game is played.
/// `progress(done)` counts the games in the dataset. Returns the games and positions
/// played now.
pub fn play_player_dataset(
    dir: &std::path::Path,
    options: &PlayerGamesOptions,
    make_player: &EngineFactory,
    threads: usize,
    policy: FlushPolicy,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(u64, u64), String> {
    let meta = FileMeta {
        variant: options.start.variant(),
        search_settings: GameSettings::Player {
            player: options.player.clone(),
            opening_plies: options.opening_plies,
            max_plies: options.max_plies,
            search_values: true,
        },
        seed: options.seed,
        model_id: options.player.clone(),
    };
    let (mut writer, done) = DatasetWriter::resume(dir, meta, policy).map_err(|e| e.to_string())?;
    let missing: Vec<u64> = options
        .game_ids
        .clone()
        .filter(|id| !done.contains(id))
        .collect();
    let (mut written, mut positions) = (0u64, 0u64);
    let mut failure = None;
    run_on_workers(
        missing.len(),
        threads,
        &|| Ok((make_player()?, make_player()?)),
        &|(white, black), job| {
            let id = missing[job];
            let played = play_series_game(
                white.as_mut(),
                black.as_mut(),
                &options.start,
                options.opening_plies,
                options.max_plies,
                options.seed,
                id as usize,
            );
            record(id, played, options.opening_plies, &options.player)
        },
        &mut |_, game| {
            let game_positions = game.positions.len() as u64;
            if let Err(e) = writer
                .add_game(game)
                .and_then(|()| writer.flush_if_due().map(drop))
            {
                failure = Some(e.to_string());
                return true;
            }
            written += 1;
            positions += game_positions;
            progress(done.len() as u64 + written);
            false
        },
    )?;
    if let Some(error) = failure {
        return Err(error);
    }
    writer.finish().map_err(|e| e.to_string())?;
    Ok((written, positions))
}
