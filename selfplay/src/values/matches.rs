//! Handicap matches (H. G. Muller's method): a player plays itself from the start
//! position with one piece taken off one side, half the games from each colour, each game
//! after a few random opening plies. The score of the full side, as log-odds, over the
//! log-odds of Pawn odds is the piece's value in Pawns. Games at the ply cap are draws:
//! adjudicating them on material would presuppose the values being measured.
//!
//! Which piece goes: for Pawn odds the Pawn nearest the file right of the King (the
//! f-pawn in chess, the traditional Pawn odds); for any other kind the one nearest the
//! a-file (the queen side), so castling on the King's side stays possible.

use super::{logit, Estimate, Method, PieceKind};
use crate::arena::{opening, play_game, run_on_workers, PlayerFactory};
use ninjazero_rules::{Color, Position, Role, Square, Variant};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// The square of the `color` piece of `role` that a handicap takes off the start position.
pub fn handicap_square(start: &Position, color: Color, role: Role) -> Option<Square> {
    let king_side = i32::from(start.king(color).file()) + 1;
    start
        .pieces()
        .filter(|(_, piece)| piece.color == color && piece.role == role)
        .map(|(square, _)| square)
        .min_by_key(|square| {
            let file = i32::from(square.file());
            if role == Role::Pawn {
                ((file - king_side).abs(), -file)
            } else {
                (file, 0)
            }
        })
}

/// The start position of `variant` with `color`'s `kind` taken off (see the module
/// documentation for which one).
pub fn handicap_start(variant: Variant, kind: PieceKind, color: Color) -> Result<Position, String> {
    let PieceKind::Board(role) = kind else {
        return Err("handicap matches take pieces off the board, not out of the hand".into());
    };
    let start = Position::start(variant);
    let square = handicap_square(&start, color, role)
        .ok_or_else(|| format!("{color} has no {} at the start of {variant}", role.name()))?;
    start
        .without_piece(square)
        .map_err(|e| format!("{variant} without the {color} {}: {e}", role.name()))
}

/// How handicap games are played.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HandicapSettings {
    /// Player spec (as for the arena), playing both sides.
    pub player: String,
    pub games: usize,
    /// Random plies from the handicap position before the player takes over.
    pub opening_plies: usize,
    /// Games reaching this many plies are draws.
    pub max_plies: u32,
    pub seed: u64,
}

/// Plays the handicap games of `kind` with `make_player` on both sides: game `g` takes
/// the piece off White when `g` is even, off Black when odd. The same settings give the
/// same games for any thread count. `progress()` is called after each game.
pub fn play_handicap_games(
    make_player: &PlayerFactory,
    variant: Variant,
    kind: PieceKind,
    settings: &HandicapSettings,
    threads: usize,
    progress: &(dyn Fn() + Sync),
) -> Result<HandicapScores, String> {
    let starts = [
        handicap_start(variant, kind, Color::White)?,
        handicap_start(variant, kind, Color::Black)?,
    ];
    let mut points = vec![0.0; settings.games];
    run_on_workers(
        settings.games,
        threads,
        &|| Ok((make_player()?, make_player()?)),
        &|(white, black), game| {
            let handicapped = Color::ALL[game % 2];
            let start = &starts[game % 2];
            let moves = opening(start, settings.opening_plies, settings.seed, game);
            let seed = settings.seed ^ (game as u64 + 1).wrapping_mul(0xa076_1d64_78bd_642f);
            white.new_game(seed);
            black.new_game(seed ^ 1);
            let (winner, _, _) = play_game(
                white.as_mut(),
                black.as_mut(),
                start,
                &moves,
                settings.max_plies,
                false,
            );
            match winner {
                Some(w) if w == handicapped => 0.0,
                Some(_) => 1.0,
                None => 0.5,
            }
        },
        &mut |game, score| {
            points[game] = score;
            progress();
            false
        },
    )?;
    Ok(HandicapScores { points })
}

/// The games of one handicap: the points (1, 0.5, 0) of the side that kept the piece, in
/// each game, both colours together.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HandicapScores {
    pub points: Vec<f64>,
}

impl HandicapScores {
    /// The full side's score, pulled half a game towards 0.5 so that a clean sweep stays
    /// finite: (points + 0.5) / (games + 1).
    pub fn score(&self) -> f64 {
        (self.points.iter().sum::<f64>() + 0.5) / (self.points.len() as f64 + 1.0)
    }

    fn resampled(&self, rng: &mut StdRng) -> HandicapScores {
        let n = self.points.len();
        HandicapScores {
            points: (0..n)
                .map(|_| self.points[rng.random_range(0..n)])
                .collect(),
        }
    }
}

/// Values in Pawns from the handicap scores of each kind and of Pawn odds. Every bootstrap
/// replicate resamples every match's games. An error if Pawn odds gave the full side no
/// edge (more games needed).
pub fn match_estimates(
    matches: &[(PieceKind, HandicapScores)],
    pawn_odds: &HandicapScores,
    bootstrap: usize,
    seed: u64,
) -> Result<Vec<Estimate>, String> {
    let pawn_logit = logit(pawn_odds.score());
    if pawn_logit <= 0.0 || pawn_odds.points.is_empty() {
        return Err(format!(
            "Pawn odds gave the side with the Pawn no edge (score {:.3} over {} games): play more games",
            pawn_odds.score(),
            pawn_odds.points.len()
        ));
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let mut replicates = vec![Vec::with_capacity(bootstrap); matches.len()];
    for _ in 0..bootstrap {
        let unit = logit(pawn_odds.resampled(&mut rng).score());
        for (column, (_, scores)) in replicates.iter_mut().zip(matches) {
            let value = logit(scores.resampled(&mut rng).score()) / unit;
            column.push(if unit > 0.0 { value } else { f64::NAN });
        }
    }
    let mut estimates = vec![Estimate::new(
        PieceKind::Board(Role::Pawn),
        Method::Matches,
        1.0,
        pawn_odds.points.len(),
        vec![1.0; bootstrap],
    )];
    for ((kind, scores), column) in matches.iter().zip(replicates) {
        let value = logit(scores.score()) / pawn_logit;
        estimates.push(Estimate::new(
            *kind,
            Method::Matches,
            value,
            scores.points.len(),
            column,
        ));
    }
    Ok(estimates)
}
