//! Moves, their text form (RULES.md section 8) and a fixed-capacity move list.

use crate::types::{Role, Square};
use std::fmt;

/// What kind of move a [`Move`] is. Captures (including ninja double captures and Loony Rook
/// fire-through) are not a kind of their own: what a move removes follows from the position.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum MoveKind {
    /// A piece moves from `from` to `to`.
    Normal,
    /// A pawn captures en passant on the target square `to`.
    EnPassant,
    /// A pawn moves to its last rank and becomes the given role.
    Promotion(Role),
    /// The King moves from `from` to `to` and the Rook from `rook` to the square next to it.
    Castle { rook: Square },
    /// A Ninja Pawn from the hand is dropped on `from` (its second rank) and pushed to `to`
    /// (`from == to` for a plain drop).
    Drop,
}

/// A move in a position. `Move`s are compared by what they do, and each legal move in a
/// position has a unique text (RULES.md section 8).
///
/// ```
/// use ninjazero_rules::{Position, Variant};
/// let pos = Position::start(Variant::InsaneNinja);
/// let m = pos.parse_move("f2f5").unwrap();
/// assert_eq!(m.to_string(), "f2f5");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Move {
    pub from: Square,
    pub to: Square,
    pub kind: MoveKind,
}

impl Move {
    pub(crate) const fn new(from: Square, to: Square, kind: MoveKind) -> Move {
        Move { from, to, kind }
    }

    /// The promotion role, if this move promotes a pawn by choice.
    pub fn promotion(self) -> Option<Role> {
        match self.kind {
            MoveKind::Promotion(role) => Some(role),
            _ => None,
        }
    }

    pub fn is_drop(self) -> bool {
        self.kind == MoveKind::Drop
    }

    pub fn is_castle(self) -> bool {
        matches!(self.kind, MoveKind::Castle { .. })
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            MoveKind::Normal | MoveKind::EnPassant => write!(f, "{}{}", self.from, self.to),
            MoveKind::Promotion(role) => {
                write!(f, "{}{}{}", self.from, self.to, role.lower_char())
            }
            MoveKind::Castle { rook } => write!(f, "{}{}{}", self.from, rook, self.to),
            MoveKind::Drop => write!(f, "Y@{}", self.to),
        }
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The syntactic shape of a move text, before it is matched against a position.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum MoveText {
    Step {
        from: Square,
        to: Square,
        promotion: Option<Role>,
    },
    Castle {
        king: Square,
        rook: Square,
        to: Square,
    },
    Drop {
        to: Square,
    },
}

impl MoveText {
    /// Parses the text form; `None` when the text has no valid shape.
    pub(crate) fn parse(text: &str) -> Option<MoveText> {
        if let Some(rest) = text.strip_prefix("Y@") {
            return Some(MoveText::Drop {
                to: rest.parse().ok()?,
            });
        }
        let (from, a) = Square::parse_prefix(text)?;
        let (to, b) = Square::parse_prefix(&text[a..])?;
        let rest = &text[a + b..];
        if rest.is_empty() {
            return Some(MoveText::Step {
                from,
                to,
                promotion: None,
            });
        }
        if let Some((king_to, c)) = Square::parse_prefix(rest) {
            return (c == rest.len()).then_some(MoveText::Castle {
                king: from,
                rook: to,
                to: king_to,
            });
        }
        let mut chars = rest.chars();
        let letter = chars.next()?;
        if chars.next().is_some() || !letter.is_ascii_lowercase() {
            return None;
        }
        Some(MoveText::Step {
            from,
            to,
            promotion: Some(Role::from_char(letter)?),
        })
    }

    /// Whether `m` has exactly this text.
    pub(crate) fn matches(self, m: Move) -> bool {
        match (self, m.kind) {
            (MoveText::Drop { to }, MoveKind::Drop) => to == m.to,
            (MoveText::Castle { king, rook, to }, MoveKind::Castle { rook: r }) => {
                king == m.from && rook == r && to == m.to
            }
            (
                MoveText::Step {
                    from,
                    to,
                    promotion,
                },
                MoveKind::Promotion(role),
            ) => from == m.from && to == m.to && promotion == Some(role),
            (
                MoveText::Step {
                    from,
                    to,
                    promotion,
                },
                MoveKind::Normal | MoveKind::EnPassant,
            ) => from == m.from && to == m.to && promotion.is_none(),
            _ => false,
        }
    }
}

/// The capacity of a [`MoveList`]. Positions are limited to the variant's starting army
/// (see `fen`), which keeps every legal position well below this bound.
pub const MAX_MOVES: usize = 1024;

/// A list of moves on the stack: move generation never allocates.
pub type MoveList = arrayvec::ArrayVec<Move, MAX_MOVES>;

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(s: &str) -> Square {
        s.parse().unwrap()
    }

    #[test]
    fn parses_every_shape() {
        assert_eq!(
            MoveText::parse("e10e11"),
            Some(MoveText::Step {
                from: sq("e10"),
                to: sq("e11"),
                promotion: None
            })
        );
        assert_eq!(
            MoveText::parse("a9a10q"),
            Some(MoveText::Step {
                from: sq("a9"),
                to: sq("a10"),
                promotion: Some(Role::Queen)
            })
        );
        assert_eq!(
            MoveText::parse("f1i1g1"),
            Some(MoveText::Castle {
                king: sq("f1"),
                rook: sq("i1"),
                to: sq("g1")
            })
        );
        assert_eq!(
            MoveText::parse("Y@e4"),
            Some(MoveText::Drop { to: sq("e4") })
        );
        for bad in [
            "", "e2", "e2e", "e2e4Q", "e2e4qq", "k1a1", "Y@", "Y@z9", "e2e4x", "y@e4", "e2e13",
        ] {
            assert_eq!(MoveText::parse(bad), None, "{bad}");
        }
    }
}
