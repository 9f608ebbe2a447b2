//! The meaning of a stored game, beyond its columns' types: each row must be the position
//! its game's moves reach, with the counts and side that position has, the moves must be
//! legal, the targets in range, and an ending the rules decide must be the one the rules
//! give. A hand-edited or damaged file is refused here instead of training, exporting or
//! measuring piece values from positions that never occurred.

use ninjazero_rules::{Color, Game, Position, Termination};

use crate::GameRecord;

/// How far a position's policy probabilities may sum from 1 (float rounding of the
/// searcher's normalisation).
const PROBABILITY_SUM_TOLERANCE: f32 = 1e-3;

/// Replays `game` from its start FEN and says what first disagrees with the replay.
pub(crate) fn check_replay(game: &GameRecord) -> Result<(), String> {
    let start = Position::from_fen(game.variant, &game.start_fen)
        .map_err(|e| format!("start FEN '{}': {e}", game.start_fen))?;
    let mut replay = Game::from_position(start);
    for (index, row) in game.positions.iter().enumerate() {
        let at = |what: String| format!("ply {index}: {what}");
        if usize::from(row.ply) != index {
            return Err(at(format!("row numbered ply {}", row.ply)));
        }
        let position = replay.position();
        let fen = position.to_fen();
        if row.fen != fen {
            return Err(at(format!(
                "FEN '{}' is not the position the moves reach ('{fen}')",
                row.fen
            )));
        }
        let hand = [position.hand(Color::White), position.hand(Color::Black)];
        if row.side_to_move != position.turn() || row.material != position.material() {
            return Err(at(
                "side_to_move or material columns disagree with the FEN".into()
            ));
        }
        if row.hand != hand {
            return Err(at("hand columns disagree with the FEN".into()));
        }
        check_targets(row.root_value, &row.policy).map_err(at)?;
        let played = position
            .parse_move(&row.move_played)
            .map_err(|e| at(format!("move '{}': {e}", row.move_played)))?;
        replay.play_unchecked(played);
    }
    check_ending(game, &replay)?;
    match game.would_resign {
        Some((_, ply)) if usize::from(ply) > game.positions.len() => Err(format!(
            "would_resign_ply {ply} is past the game's {} plies",
            game.positions.len()
        )),
        _ => Ok(()),
    }
}

/// A root value in [-1, 1] and a policy of probabilities that sum to 1 (or none).
fn check_targets(root_value: f32, policy: &[crate::PolicyEntry]) -> Result<(), String> {
    if !(-1.0..=1.0).contains(&root_value) {
        return Err(format!("root_value {root_value} is outside [-1, 1]"));
    }
    if let Some(entry) = policy
        .iter()
        .find(|entry| !(0.0..=1.0).contains(&entry.probability))
    {
        return Err(format!(
            "policy probability {} of '{}' is outside [0, 1]",
            entry.probability, entry.move_text
        ));
    }
    let sum: f32 = policy.iter().map(|entry| entry.probability).sum();
    if !policy.is_empty() && (sum - 1.0).abs() > PROBABILITY_SUM_TOLERANCE {
        return Err(format!("policy probabilities sum to {sum}, not 1"));
    }
    Ok(())
}

/// The stored result against the replayed final position: a game the rules ended must be
/// stored with the rules' winner and reason; a reason the rules give must be the rules'
/// verdict; a resignation is a win for the side not to move.
fn check_ending(game: &GameRecord, replay: &Game) -> Result<(), String> {
    let stored = |winner: Option<Color>| match winner {
        Some(color) => format!("{color} wins by {}", game.termination),
        None => format!("draw by {}", game.termination),
    };
    match replay.outcome() {
        Some(outcome)
            if outcome.winner != game.winner
                || outcome.termination.to_string() != game.termination =>
        {
            Err(format!(
                "the moves end in {outcome}, the game is stored as {}",
                stored(game.winner)
            ))
        }
        Some(_) => Ok(()),
        None if Termination::ALL
            .iter()
            .any(|t| t.to_string() == game.termination) =>
        {
            Err(format!(
                "stored as ended by {}, but the moves do not end the game",
                game.termination
            ))
        }
        None if game.termination == "resignation"
            && game.winner != Some(!replay.position().turn()) =>
        {
            Err(format!(
                "stored as {}, but {} was to move and resigned",
                stored(game.winner),
                replay.position().turn()
            ))
        }
        None => Ok(()),
    }
}
