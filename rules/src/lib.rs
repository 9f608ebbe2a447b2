//! The NinjaZero rules core: every variant of the ninja chess family (RULES.md), with
//! legal move generation that never allocates, an incremental Zobrist hash, FEN and move
//! text, game results and perft.
//!
//! ```
//! use ninjazero_rules::{perft, Position, Variant};
//!
//! let pos = Position::start(Variant::InsaneNinja);
//! let m = pos.parse_move("f0g3").unwrap(); // a Leaping Ninja Guard's camel leap
//! let next = pos.play(m).unwrap();
//! assert_eq!(next.turn(), ninjazero_rules::Color::Black);
//! assert_eq!(perft(&pos, 2), 1_764);
//! ```
//!
//! Design: a 16x16 mailbox (every step, leap and camel jump from a square lands inside it),
//! occupancy bitsets for iterating pieces, pseudo-legal generation per piece kind and a
//! legality filter that replays only the few moves that could expose the King.

mod attacks;
mod fen;
mod game;
mod movegen;
mod moves;
mod perft;
pub mod piece_values;
mod position;
pub mod seed;
mod types;
mod variant;
mod zobrist;

pub use fen::FenError;
pub use game::Game;
pub use moves::{Move, MoveKind, MoveList, MAX_MOVES};
pub use perft::{perft, perft_divide};
pub use position::{Outcome, Position, Termination};
pub use types::{
    ByColor, ByRole, Color, ParseSquareError, Piece, Role, Square, MAX_FILES, MAX_RANKS,
};
pub use variant::{Rules, UnknownVariant, Variant};

/// Why a move text was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    #[error("cannot read '{}' as a move: expected from and to squares (e2e4), a promotion (a9a10q), castling as King, Rook and King-target squares (e1h1g1) or a drop (Y@e4)", excerpt(.0))]
    Malformed(String),
    #[error("illegal move '{}': {reason}", excerpt(.text))]
    Illegal { text: String, reason: String },
}

/// Longest user input an error message repeats in full.
const EXCERPT_CHARS: usize = 40;

/// `text` as an error message repeats it: the first 40 characters, then "…" if there were
/// more, so that a pasted page does not bury the reason.
pub fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// `noun` with its indefinite article: "a chess", "an insane-ninja", "an Insane Ninja".
/// By the first letter, which suits every variant id and piece name.
pub fn with_article(noun: &str) -> String {
    let vowel = noun
        .chars()
        .next()
        .is_some_and(|c| "aeiouAEIOU".contains(c));
    format!("{} {noun}", if vowel { "an" } else { "a" })
}
