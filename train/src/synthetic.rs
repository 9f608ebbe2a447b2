//! Small synthetic datasets: games of random legal moves with made-up search targets, for
//! tests, demos and `bench train` when no self-play data is at hand.

use crate::loader::SplitMix64;
use ninjazero_data::{
    DataError, DatasetWriter, FileMeta, GameRecord, GameSettings, PolicyEntry, PositionRecord,
};
use ninjazero_model::{move_index, BoardShape};
use ninjazero_rules::{Color, Game, Move, Position, Variant};
use std::path::{Path, PathBuf};

/// Writes `games` games of random legal moves (at most `max_plies` each) to `dir`,
/// `games_per_file` per file, and returns the files written: [`random_game`]s from the start
/// position, with a full search at random.
pub fn write_random_games(
    dir: &Path,
    variant: Variant,
    games: usize,
    max_plies: u16,
    seed: u64,
    games_per_file: usize,
) -> Result<Vec<PathBuf>, DataError> {
    let meta = FileMeta {
        variant,
        search_settings: GameSettings::Synthetic,
        seed,
        model_id: "random".to_string(),
    };
    let mut writer = DatasetWriter::create(dir, meta, games_per_file)?;
    let mut rng = SplitMix64(seed);
    let start = Position::start(variant);
    for g in 0..games {
        let game_id = seed.wrapping_mul(1_000_003).wrapping_add(g as u64);
        let game = random_game(&start, game_id, max_plies, FullSearch::Random, &mut rng);
        writer.add_game(game)?;
    }
    let mut files = writer.files_written().to_vec();
    let buffered = writer.buffered_games() > 0;
    writer.finish()?;
    if buffered {
        // `finish` wrote the last file; find it by listing.
        files = ninjazero_data::dataset_files(dir)?;
    }
    Ok(files)
}

/// Which positions of a [`random_game`] have a full search (and so a policy target).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FullSearch {
    /// One in two, at random.
    Random,
    /// Those at even plies: a count known in advance, for tests. The moves are the same as
    /// with `Random`.
    EvenPlies,
}

/// One game of random legal moves from `start` (a position with a legal move; at most
/// `max_plies`) with synthetic
/// targets: a full search's policy puts half its mass on the move played and spreads the
/// rest over up to 7 other legal moves; the winner is the rules' result when the game
/// ended, else drawn at random.
pub fn random_game(
    start: &Position,
    game_id: u64,
    max_plies: u16,
    searches: FullSearch,
    rng: &mut SplitMix64,
) -> GameRecord {
    let variant = start.variant();
    let shape = BoardShape::of(variant);
    let mut game = Game::from_position(start.clone());
    let mut positions = Vec::new();
    for ply in 0..max_plies.max(1) {
        if game.outcome().is_some() {
            break;
        }
        let pos = game.position().clone();
        let moves: Vec<_> = pos.legal_moves().iter().copied().collect();
        let chosen = moves[rng.below(moves.len())];
        let coin = rng.next_u64() % 2 == 0;
        let full_search = match searches {
            FullSearch::Random => coin,
            FullSearch::EvenPlies => ply % 2 == 0,
        };
        let policy = if full_search {
            synthetic_policy(&shape, &pos, chosen, &moves)
        } else {
            Vec::new()
        };
        positions.push(PositionRecord {
            policy,
            full_search,
            ..position_row(ply, &pos, chosen)
        });
        game.play_unchecked(chosen);
    }
    // A game is stored as its positions' rows.
    assert!(
        !positions.is_empty(),
        "a synthetic game starts from a position with a move"
    );
    let (winner, termination) = match game.outcome() {
        Some(outcome) => (outcome.winner, outcome.termination.to_string()),
        None => {
            let winner = match rng.below(3) {
                0 => Some(Color::White),
                1 => Some(Color::Black),
                _ => None,
            };
            (winner, "adjudication".to_string())
        }
    };
    GameRecord {
        game_id,
        variant,
        start_fen: start.to_fen(),
        positions,
        winner,
        termination,
        model_id: "random".to_string(),
        resignation_disabled: false,
        would_resign: None,
    }
}

/// A game of `moves` (move text) from `variant`'s start without search targets, each row
/// the position the moves reach; ended as the rules end it, else an adjudicated draw.
/// Panics on an illegal move (a test's script).
pub fn scripted_game(variant: Variant, game_id: u64, moves: &[&str]) -> GameRecord {
    let start = Position::start(variant);
    let mut game = Game::from_position(start.clone());
    let mut positions = Vec::new();
    for (ply, text) in (0u16..).zip(moves) {
        let pos = game.position().clone();
        let played = pos.parse_move(text).expect("a scripted move is legal");
        positions.push(position_row(ply, &pos, played));
        game.play_unchecked(played);
    }
    let outcome = game.outcome();
    GameRecord {
        game_id,
        variant,
        start_fen: start.to_fen(),
        positions,
        winner: outcome.and_then(|o| o.winner),
        termination: outcome.map_or("adjudication".to_string(), |o| o.termination.to_string()),
        model_id: "scripted".to_string(),
        resignation_disabled: false,
        would_resign: None,
    }
}

/// The row of `pos` where `played` was played, without search targets.
fn position_row(ply: u16, pos: &Position, played: Move) -> PositionRecord {
    PositionRecord {
        ply,
        fen: pos.to_fen(),
        side_to_move: pos.turn(),
        policy: Vec::new(),
        root_value: 0.0,
        full_search: false,
        material: pos.material(),
        hand: [pos.hand(Color::White), pos.hand(Color::Black)],
        move_played: played.to_string(),
    }
}

/// A full search's made-up target: half its mass on the move played, the rest spread over
/// up to 7 other legal moves.
fn synthetic_policy(
    shape: &BoardShape,
    pos: &Position,
    chosen: Move,
    moves: &[Move],
) -> Vec<PolicyEntry> {
    let others: Vec<_> = moves.iter().filter(|&&m| m != chosen).take(7).collect();
    let mut entries = vec![PolicyEntry {
        index: move_index(shape, pos, chosen) as u32,
        move_text: chosen.to_string(),
        visits: 8,
        probability: if others.is_empty() { 1.0 } else { 0.5 },
    }];
    for &&m in &others {
        entries.push(PolicyEntry {
            index: move_index(shape, pos, m) as u32,
            move_text: m.to_string(),
            visits: 1,
            probability: 0.5 / others.len() as f32,
        });
    }
    entries
}
