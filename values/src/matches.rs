//! Handicap matches (H. G. Muller's method): a player plays itself from the start
//! position with one piece taken off one side, half the games from each colour, each game
//! after a few random opening plies. The score of the full side, as log-odds, over the
//! log-odds of Pawn odds is the piece's value in Pawns. Games at the ply cap are draws:
//! adjudicating them on material would presuppose the values being measured.
//!
//! The scale comes from Pawn odds of 1, 2 and 3 Pawns (see [`match_estimates`]). Which
//! pieces go: Pawns nearest the file right of the King first (the f-pawn in chess, the
//! traditional Pawn odds, then the g- and e-pawns); for any other kind the one nearest the
//! a-file (the queen side), so castling on the King's side stays possible.

use crate::{logit, Estimate, Evidence, Measurement, Method, PieceKind};
use ninjazero_arena::{play_series_game, run_on_workers, EngineFactory};
use ninjazero_rules::{Color, Position, Role, Square, Variant};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// The squares of the `count` pieces of `color` and `role` that a handicap takes off the
/// start position, in the order they go (fewer if there are not that many).
pub fn handicap_squares(start: &Position, color: Color, role: Role, count: usize) -> Vec<Square> {
    let king_side = i32::from(start.king(color).file()) + 1;
    let mut squares: Vec<Square> = start
        .pieces()
        .filter(|(_, piece)| piece.color == color && piece.role == role)
        .map(|(square, _)| square)
        .collect();
    squares.sort_by_key(|square| {
        let file = i32::from(square.file());
        if role == Role::Pawn {
            ((file - king_side).abs(), -file)
        } else {
            (file, 0)
        }
    });
    squares.truncate(count);
    squares
}

/// The start position of `variant` with `count` of `color`'s `kind` taken off (see the
/// module documentation for which).
pub fn handicap_start(
    variant: Variant,
    kind: PieceKind,
    color: Color,
    count: usize,
) -> Result<Position, String> {
    let PieceKind::Board(role) = kind else {
        return Err("handicap matches take pieces off the board, not out of the hand".into());
    };
    let start = Position::start(variant);
    let squares = handicap_squares(&start, color, role, count);
    if squares.len() < count {
        return Err(format!(
            "{color} has fewer than {count} {} at the start of {variant}",
            role.name()
        ));
    }
    squares.iter().try_fold(start, |position, &square| {
        position
            .without_piece(square)
            .map_err(|e| format!("{variant} without the {color} {}: {e}", role.name()))
    })
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

/// One handicap: `count` pieces of `kind` taken off one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handicap {
    pub kind: PieceKind,
    pub count: usize,
}

/// Plays games `games` (of [`HandicapSettings::games`]) of `handicap`, with `make_player`
/// on both sides: game `g` takes the pieces off White when `g` is even, off Black when odd. Game `g` is the same game whichever games are played with it
/// and for any thread count. `progress()` is called after each game.
pub fn play_handicap_games(
    make_player: &EngineFactory,
    variant: Variant,
    handicap: Handicap,
    settings: &HandicapSettings,
    games: Range<usize>,
    threads: usize,
    progress: &(dyn Fn() + Sync),
) -> Result<HandicapScores, String> {
    let starts = [
        handicap_start(variant, handicap.kind, Color::White, handicap.count)?,
        handicap_start(variant, handicap.kind, Color::Black, handicap.count)?,
    ];
    let mut points = vec![0.0; games.len()];
    run_on_workers(
        games.len(),
        threads,
        &|| Ok((make_player()?, make_player()?)),
        &|(white, black), job| {
            let game = games.start + job;
            let handicapped = Color::ALL[game % 2];
            let start = &starts[game % 2];
            let played = play_series_game(
                white.as_mut(),
                black.as_mut(),
                start,
                settings.opening_plies,
                settings.max_plies,
                settings.seed,
                game,
            );
            match played.winner {
                Some(w) if w == handicapped => 0.0,
                Some(_) => 1.0,
                None => 0.5,
            }
        },
        &mut |job, score| {
            points[job] = score;
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

/// The log-odds a Pawn is worth: the least-squares slope through the origin of the Pawn
/// odds' log-odds against the number of Pawns given (1, 2, 3, … Pawns give a steadier
/// scale than one Pawn alone, whose edge is small).
fn pawn_scale(pawn_odds: &[(usize, HandicapScores)]) -> f64 {
    let (moment, squares) = pawn_odds
        .iter()
        .fold((0.0, 0.0), |(m, q), (pawns, scores)| {
            let k = *pawns as f64;
            (m + k * logit(scores.score()), q + k * k)
        });
    moment / squares
}

/// Values in Pawns from the handicap scores of each kind and of Pawn odds (`(pawns given,
/// scores)`). Every bootstrap replicate resamples every match's games. A piece needs at
/// least [`crate::MIN_SAMPLES`] games. An error if Pawn odds gave the full side no edge, or
/// were played in too few games to set the scale (more games needed).
pub fn match_estimates(
    matches: &[(PieceKind, HandicapScores)],
    pawn_odds: &[(usize, HandicapScores)],
    bootstrap: usize,
    seed: u64,
) -> Result<Measurement, String> {
    let unit = pawn_scale(pawn_odds);
    let pawn_games: usize = pawn_odds.iter().map(|(_, s)| s.points.len()).sum();
    let pawn_evidence = Evidence {
        varied: pawn_games,
        of: pawn_games,
    };
    pawn_evidence.require_scale(Method::Matches)?;
    if unit <= 0.0 {
        return Err(format!(
            "Pawn odds gave the side with the Pawns no edge ({unit:.3} log-odds per Pawn over {pawn_games} games): play more games"
        ));
    }
    let mut rng = StdRng::seed_from_u64(seed);
    // The Pawn's replicates are 1, or NaN where the resampled Pawn odds give no scale.
    let mut pawn_replicates = Vec::with_capacity(bootstrap);
    let mut replicates = vec![Vec::with_capacity(bootstrap); matches.len()];
    for _ in 0..bootstrap {
        let resampled: Vec<(usize, HandicapScores)> = pawn_odds
            .iter()
            .map(|(k, scores)| (*k, scores.resampled(&mut rng)))
            .collect();
        let unit = pawn_scale(&resampled);
        pawn_replicates.push(if unit > 0.0 { 1.0 } else { f64::NAN });
        for (column, (_, scores)) in replicates.iter_mut().zip(matches) {
            let value = logit(scores.resampled(&mut rng).score()) / unit;
            column.push(if unit > 0.0 { value } else { f64::NAN });
        }
    }
    let pawn = Estimate::new(
        PieceKind::Board(Role::Pawn),
        Method::Matches,
        1.0,
        pawn_games,
        pawn_replicates,
    );
    let candidates = std::iter::once((pawn, pawn_evidence))
        .chain(
            matches
                .iter()
                .zip(replicates)
                .map(|((kind, scores), column)| {
                    let games = scores.points.len();
                    let value = logit(scores.score()) / unit;
                    let estimate = Estimate::new(*kind, Method::Matches, value, games, column);
                    let evidence = Evidence {
                        varied: games,
                        of: games,
                    };
                    (estimate, evidence)
                }),
        )
        .collect();
    Measurement::judge(candidates)
}
