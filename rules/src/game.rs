//! A game: a position plus the history needed for threefold repetition.

use crate::moves::Move;
use crate::position::{Outcome, Position, Termination};
use crate::{MoveError, Variant};

/// A game from a start position, keeping the hashes of earlier positions so that threefold
/// repetition can be detected.
///
/// ```
/// use ninjazero_rules::{Game, Termination, Variant};
/// let mut game = Game::new(Variant::Chess);
/// for text in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"] {
///     game.play_text(text).unwrap();
/// }
/// assert_eq!(game.outcome().unwrap().termination, Termination::ThreefoldRepetition);
/// ```
#[derive(Clone, Debug)]
pub struct Game {
    start: Position,
    position: Position,
    moves: Vec<Move>,
    /// Hash of the position before each move, then of the current one.
    hashes: Vec<u64>,
}

impl Game {
    /// A game from the variant's start position.
    pub fn new(variant: Variant) -> Game {
        Game::from_position(Position::start(variant))
    }

    /// A game from any position.
    pub fn from_position(start: Position) -> Game {
        Game {
            hashes: vec![start.hash()],
            position: start.clone(),
            start,
            moves: Vec::new(),
        }
    }

    pub fn start(&self) -> &Position {
        &self.start
    }

    pub fn position(&self) -> &Position {
        &self.position
    }

    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Hashes of every position of the game so far, the current one last.
    pub fn hashes(&self) -> &[u64] {
        &self.hashes
    }

    /// Plays a legal move (an error, with nothing changed, if it is not legal).
    pub fn play(&mut self, m: Move) -> Result<(), MoveError> {
        self.position = self.position.play(m)?;
        self.record(m);
        Ok(())
    }

    /// Plays a move known to be legal, without checking it.
    pub fn play_unchecked(&mut self, m: Move) {
        self.position.play_unchecked(m);
        self.record(m);
    }

    /// Parses and plays a move given as text.
    pub fn play_text(&mut self, text: &str) -> Result<Move, MoveError> {
        let m = self.position.parse_move(text)?;
        self.play_unchecked(m);
        Ok(m)
    }

    /// Takes back the last move; `None` at the start.
    pub fn undo(&mut self) -> Option<Move> {
        let last = self.moves.pop()?;
        self.hashes.pop();
        let mut position = self.start.clone();
        for &m in &self.moves {
            position.play_unchecked(m);
        }
        self.position = position;
        Some(last)
    }

    fn record(&mut self, m: Move) {
        self.moves.push(m);
        self.hashes.push(self.position.hash());
    }

    /// How often the current position has occurred (it counts itself). The whole history is
    /// searched: the 100-ply clock is no bound, since a Ninja Pawn's sideways step resets it
    /// and can be taken back.
    pub fn repetitions(&self) -> usize {
        let current = self.position.hash();
        self.hashes
            .iter()
            .rev()
            .step_by(2)
            .filter(|&&h| h == current)
            .count()
    }

    /// The result if the game is over: scepter, checkmate, stalemate, threefold repetition or
    /// the 100-ply rule (a mate on the last ply stands).
    pub fn outcome(&self) -> Option<Outcome> {
        match self.position.outcome() {
            Some(o) if o.termination != Termination::HundredPlyRule => Some(o),
            other if self.repetitions() >= 3 => other.or(Some(Outcome {
                winner: None,
                termination: Termination::ThreefoldRepetition,
            })),
            other => other,
        }
    }
}
