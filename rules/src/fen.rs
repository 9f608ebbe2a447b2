//! FEN parsing and printing (RULES.md section 8), with validation that rejects impossible
//! positions by name instead of panicking later.

use crate::attacks::forward;
use crate::position::{EnPassant, Position};
use crate::types::{cell, Color, Piece, Role, Square};
use crate::variant::{
    CASTLE_BLACK_KING, CASTLE_BLACK_QUEEN, CASTLE_WHITE_KING, CASTLE_WHITE_QUEEN,
};
use crate::{excerpt, with_article, Variant};
use std::fmt::Write;

/// Why a FEN could not be read. Each message names the field, rank or square at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    #[error("FEN has {found} fields; expected board, side to move, castling, en passant, and optionally the halfmove clock and fullmove number")]
    FieldCount { found: usize },
    #[error("board has {found} rows; {variant} needs {expected} (ranks {top} down to {bottom})")]
    RowCount {
        variant: Variant,
        found: usize,
        expected: u8,
        top: u8,
        bottom: u8,
    },
    #[error(
        "row for rank {rank} describes {found} cells; the {variant} board is {expected} files wide"
    )]
    RowWidth {
        variant: Variant,
        rank: u8,
        found: usize,
        expected: u8,
    },
    #[error("unexpected '{}' in the row for rank {rank}: expected a piece letter, a count of empty squares or '*'", excerpt(.found))]
    BadChar { rank: u8, found: String },
    #[error("{square} is a hole on the {variant} board: the FEN must write '*' there")]
    NotASquare { variant: Variant, square: Square },
    #[error("{square} is a square of the {variant} board, not a hole: '*' is wrong there")]
    NotAHole { variant: Variant, square: Square },
    #[error("{piece} ({letter}) is not used in {variant}")]
    ForeignPiece {
        variant: Variant,
        piece: &'static str,
        letter: char,
    },
    #[error("bad hand '{}': {reason}", excerpt(.found))]
    Hand { found: String, reason: String },
    #[error("side to move must be 'w' or 'b', found '{}'", excerpt(.0))]
    Side(String),
    #[error("castling field '{}': {reason}", excerpt(.field))]
    Castling { field: String, reason: String },
    #[error("en passant field '{}': {reason}", excerpt(.field))]
    EnPassant { field: String, reason: String },
    #[error("{name} must be a whole number, found '{}'", excerpt(.found))]
    Counter { name: &'static str, found: String },
    #[error("{color} has {count} Kings; exactly one is required")]
    KingCount { color: Color, count: usize },
    #[error("{color} {role} on {square} stands on its promotion rank")]
    PawnOnLastRank {
        color: Color,
        role: &'static str,
        square: Square,
    },
    #[error("{color} has {count} pieces (hand included); {} army has at most {max}", with_article(variant.id()))]
    TooManyPieces {
        variant: Variant,
        color: Color,
        count: usize,
        max: usize,
    },
    #[error("{color} is in check but it is not {color}'s turn")]
    OpponentInCheck { color: Color },
    #[error("both Kings stand on a winning scepter square")]
    BothScepters,
    #[error("no piece on {square} to take off")]
    NoPiece { square: Square },
}

impl Position {
    /// Reads a FEN of `variant`. The halfmove clock and fullmove number may be left out
    /// (they default to 0 and 1); in `insane-ninja-drops` a missing hand means an empty one.
    /// A fullmove number of 0, which some tools write for a set-up position, reads as 1 (as
    /// python-chess reads it): the moves are counted from 1.
    ///
    /// ```
    /// use ninjazero_rules::{Position, Variant};
    /// let pos = Position::from_fen(Variant::Chess, "8/8/8/8/8/8/8/K6k w - -").unwrap();
    /// assert_eq!(pos.to_fen(), "8/8/8/8/8/8/8/K6k w - - 0 1");
    /// let pos = Position::from_fen(Variant::Chess, "8/8/8/8/8/8/8/K6k w - - 3 0").unwrap();
    /// assert_eq!(pos.to_fen(), "8/8/8/8/8/8/8/K6k w - - 3 1");
    /// let err = Position::from_fen(Variant::Chess, "8/8/8/8/8/8/8/K6 w - -").unwrap_err();
    /// assert!(err.to_string().contains("rank 1"));
    /// ```
    pub fn from_fen(variant: Variant, fen: &str) -> Result<Position, FenError> {
        let fields: Vec<&str> = fen.split_whitespace().collect();
        if !(4..=6).contains(&fields.len()) {
            return Err(FenError::FieldCount {
                found: fields.len(),
            });
        }
        let mut pos = Position::empty(variant);
        let (board, hand) = match fields[0].split_once('[') {
            Some((board, hand)) => (board, Some(hand)),
            None => (fields[0], None),
        };
        pos.read_board(board)?;
        if let Some(hand) = hand {
            pos.read_hand(hand)?;
        }
        pos.turn = match fields[1] {
            "w" => Color::White,
            "b" => Color::Black,
            other => return Err(FenError::Side(other.to_string())),
        };
        pos.read_castling(fields[2])?;
        pos.read_en_passant(fields[3])?;
        pos.halfmoves = read_counter("halfmove clock", fields.get(4).copied().unwrap_or("0"))?;
        pos.fullmoves =
            read_counter("fullmove number", fields.get(5).copied().unwrap_or("1"))?.max(1);
        pos.validate()?;
        pos.finish_setup();
        Ok(pos)
    }

    fn read_board(&mut self, text: &str) -> Result<(), FenError> {
        let rules = self.rules;
        let variant = rules.variant;
        let rows: Vec<&str> = text.split('/').collect();
        if rows.len() != rules.height() as usize {
            return Err(FenError::RowCount {
                variant,
                found: rows.len(),
                expected: rules.height(),
                top: rules.rank_max,
                bottom: rules.rank_min,
            });
        }
        for (row, row_text) in rows.iter().enumerate() {
            let rank = rules.rank_max - row as u8;
            let cells = parse_row(rank, row_text)?;
            if cells.len() != rules.width as usize {
                return Err(FenError::RowWidth {
                    variant,
                    rank,
                    found: cells.len(),
                    expected: rules.width,
                });
            }
            for (file, content) in cells.into_iter().enumerate() {
                let square = Square::new(file as u8, rank).expect("rank and file are in range");
                match content {
                    RowCell::Hole if !rules.is_hole(square) => {
                        return Err(FenError::NotAHole { variant, square })
                    }
                    RowCell::Hole => {}
                    _ if !rules.is_square(square) => {
                        return Err(FenError::NotASquare { variant, square })
                    }
                    RowCell::Empty => {}
                    RowCell::Piece(piece) => {
                        if piece.role == Role::NinjaPawn && !rules.drops {
                            return Err(FenError::ForeignPiece {
                                variant,
                                piece: piece.role.name(),
                                letter: piece.char(),
                            });
                        }
                        self.set_cell(square.0, cell::piece(piece.color, piece.role));
                    }
                }
            }
        }
        Ok(())
    }

    fn read_hand(&mut self, text: &str) -> Result<(), FenError> {
        let bad = |reason: &str| FenError::Hand {
            found: format!("[{text}"),
            reason: reason.to_string(),
        };
        if !self.rules.drops {
            return Err(bad("only insane-ninja-drops has pieces in hand"));
        }
        let inner = text.strip_suffix(']').ok_or_else(|| bad("missing ']'"))?;
        for c in inner.chars() {
            match c {
                'Y' => self.hand[0] += 1,
                'y' => self.hand[1] += 1,
                _ => return Err(bad("only Ninja Pawns (Y, y) can be in hand")),
            }
        }
        if self.hand.iter().any(|&n| n > 4) {
            return Err(bad("each side has at most 4 Ninja Pawns to drop"));
        }
        Ok(())
    }

    fn read_castling(&mut self, field: &str) -> Result<(), FenError> {
        let bad = |reason: String| FenError::Castling {
            field: field.to_string(),
            reason,
        };
        if field == "-" {
            return Ok(());
        }
        for c in field.chars() {
            let (right, color) = match c {
                'K' => (CASTLE_WHITE_KING, Color::White),
                'Q' => (CASTLE_WHITE_QUEEN, Color::White),
                'k' => (CASTLE_BLACK_KING, Color::Black),
                'q' => (CASTLE_BLACK_QUEEN, Color::Black),
                _ => return Err(bad(format!("'{c}' is not one of K, Q, k, q"))),
            };
            if self.castling & right != 0 {
                return Err(bad(format!("'{c}' appears twice")));
            }
            let option = self.rules.castles[color.index()]
                .iter()
                .find(|o| o.right == right)
                .ok_or_else(|| bad(format!("{} has no castling", self.rules.variant)))?;
            let king = cell::piece(color, Role::King);
            let rook = cell::piece(color, self.rules.castling_rook);
            if self.board[option.king_from.cell()] != king {
                return Err(bad(format!(
                    "'{c}' needs the {color} King on {}",
                    option.king_from
                )));
            }
            if self.board[option.rook_from.cell()] != rook {
                return Err(bad(format!(
                    "'{c}' needs a {color} {} on {}",
                    self.rules.castling_rook.name(),
                    option.rook_from
                )));
            }
            self.castling |= right;
        }
        Ok(())
    }

    fn read_en_passant(&mut self, field: &str) -> Result<(), FenError> {
        let bad = |reason: String| FenError::EnPassant {
            field: field.to_string(),
            reason,
        };
        if field == "-" {
            return Ok(());
        }
        let mover = !self.turn;
        let mut targets = Vec::new();
        for name in field.split(',') {
            let square: Square = name
                .parse()
                .map_err(|_| bad(format!("'{}' is not a square", excerpt(name))))?;
            if !self.rules.is_square(square) {
                return Err(bad(format!("{square} is not on the board")));
            }
            targets.push(square);
        }
        let max_targets = match self.rules.pawn {
            crate::variant::PawnKind::MultiStepFromStart
            | crate::variant::PawnKind::MultiStepOwnHalf => 2,
            _ => 1,
        };
        if targets.len() > max_targets {
            return Err(bad(format!(
                "at most {max_targets} target square(s) in this variant"
            )));
        }
        // Order along the mover's direction; the targets must be consecutive on one file.
        targets.sort_by_key(|sq| sq.rank());
        if mover == Color::Black {
            targets.reverse();
        }
        let fwd = forward(mover);
        for pair in targets.windows(2) {
            if pair[0].offset(fwd) != pair[1].0 {
                return Err(bad(
                    "targets must be consecutive squares of one file".to_string()
                ));
            }
        }
        let first = targets[0];
        let last = targets[targets.len() - 1];
        let origin = first.offset(-fwd);
        let victim = last.offset(fwd);
        let pawn = cell::piece(mover, Role::Pawn);
        if self.board[victim as usize] != pawn {
            return Err(bad(format!(
                "no {mover} Pawn on {} that could have just passed over it",
                Square(victim)
            )));
        }
        if targets.iter().any(|t| self.board[t.cell()] != cell::EMPTY)
            || self.board[origin as usize] != cell::EMPTY
        {
            return Err(bad("the squares the pawn passed must be empty".to_string()));
        }
        for (slot, target) in targets.iter().enumerate() {
            self.ep.targets[slot] = target.0;
        }
        self.ep.victim = victim;
        Ok(())
    }

    fn validate(&self) -> Result<(), FenError> {
        let variant = self.rules.variant;
        for color in Color::ALL {
            let kings = self.count(color, Role::King) as usize;
            if kings != 1 {
                return Err(FenError::KingCount {
                    color,
                    count: kings,
                });
            }
            let count = self.occupied[color.index()].count_ones() as usize
                + self.hand[color.index()] as usize;
            let max = self.rules.army[color.index()];
            if count > max {
                return Err(FenError::TooManyPieces {
                    variant,
                    color,
                    count,
                    max,
                });
            }
        }
        for (square, piece) in self.pieces() {
            if matches!(piece.role, Role::Pawn | Role::NinjaPawn)
                && square.rank() == self.rules.last_rank[piece.color.index()]
            {
                return Err(FenError::PawnOnLastRank {
                    color: piece.color,
                    role: piece.role.name(),
                    square,
                });
            }
        }
        if Color::ALL
            .iter()
            .all(|c| self.rules.scepter[c.index()].contains(self.kings[c.index()]))
        {
            return Err(FenError::BothScepters);
        }
        let waiting = !self.turn;
        if self.is_attacked(self.kings[waiting.index()], self.turn) {
            return Err(FenError::OpponentInCheck { color: waiting });
        }
        Ok(())
    }

    /// The position as FEN (RULES.md section 8).
    pub fn to_fen(&self) -> String {
        let rules = self.rules;
        let mut fen = String::new();
        for rank in (rules.rank_min..=rules.rank_max).rev() {
            let mut empty = 0;
            for file in 0..rules.width {
                let square = Square::new(file, rank).expect("rank and file are in range");
                let content = self.board[square.cell()];
                if content == cell::EMPTY {
                    empty += 1;
                    continue;
                }
                if empty > 0 {
                    write!(fen, "{empty}").expect("writing to a String");
                    empty = 0;
                }
                fen.push(match cell::decode(content) {
                    Some(piece) => piece.char(),
                    None => '*',
                });
            }
            if empty > 0 {
                write!(fen, "{empty}").expect("writing to a String");
            }
            if rank != rules.rank_min {
                fen.push('/');
            }
        }
        if rules.drops {
            fen.push('[');
            fen.extend(std::iter::repeat_n('Y', self.hand[0] as usize));
            fen.extend(std::iter::repeat_n('y', self.hand[1] as usize));
            fen.push(']');
        }
        fen.push(' ');
        fen.push(self.turn.fen_char());
        fen.push(' ');
        if self.castling == 0 {
            fen.push('-');
        }
        for (bit, letter) in [
            (CASTLE_WHITE_KING, 'K'),
            (CASTLE_WHITE_QUEEN, 'Q'),
            (CASTLE_BLACK_KING, 'k'),
            (CASTLE_BLACK_QUEEN, 'q'),
        ] {
            if self.castling & bit != 0 {
                fen.push(letter);
            }
        }
        fen.push(' ');
        let mut targets: Vec<Square> = self.ep.target_squares().collect();
        targets.sort_by_key(|sq| sq.rank());
        if targets.is_empty() {
            fen.push('-');
        }
        let names: Vec<String> = targets.iter().map(|t| t.to_string()).collect();
        fen.push_str(&names.join(","));
        write!(fen, " {} {}", self.halfmoves, self.fullmoves).expect("writing to a String");
        fen
    }

    /// The position with the piece on `square` taken off the board, for handicap games and
    /// piece-value probes. Castling rights that needed the piece, and an en passant chance
    /// against it, go with it. An error if no piece stands there or if what is left is no
    /// legal position (a King taken off, or the side not to move left in check).
    ///
    /// ```
    /// use ninjazero_rules::{Position, Variant};
    /// let start = Position::start(Variant::Chess);
    /// let rook_odds = start.without_piece("a1".parse().unwrap()).unwrap();
    /// assert_eq!(rook_odds.to_fen(), "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/1NBQKBNR w Kkq - 0 1");
    /// assert!(start.without_piece("e1".parse().unwrap()).is_err());
    /// assert!(start.without_piece("e4".parse().unwrap()).is_err());
    /// ```
    pub fn without_piece(&self, square: Square) -> Result<Position, FenError> {
        if self.piece_at(square).is_none() {
            return Err(FenError::NoPiece { square });
        }
        let mut edited = self.clone();
        edited.board[square.cell()] = cell::EMPTY;
        for option in self.rules.castles.iter().flatten() {
            if option.rook_from == square || option.king_from == square {
                edited.castling &= !option.right;
            }
        }
        if edited.ep.victim == square.0 {
            edited.ep = EnPassant::default();
        }
        Position::from_fen(self.variant(), &edited.to_fen())
    }
}

enum RowCell {
    Empty,
    Hole,
    Piece(Piece),
}

/// Splits one FEN row into cells, file by file.
fn parse_row(rank: u8, text: &str) -> Result<Vec<RowCell>, FenError> {
    let bad = |found: &str| FenError::BadChar {
        rank,
        found: found.to_string(),
    };
    let mut cells = Vec::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c.is_ascii_digit() {
            let digits = rest.chars().take_while(|d| d.is_ascii_digit()).count();
            let run: usize = rest[..digits].parse().map_err(|_| bad(&rest[..digits]))?;
            if run == 0 || run > 12 || rest.starts_with('0') {
                return Err(bad(&rest[..digits]));
            }
            cells.extend((0..run).map(|_| RowCell::Empty));
            rest = &rest[digits..];
            continue;
        }
        cells.push(match c {
            '*' => RowCell::Hole,
            _ => RowCell::Piece(Piece::from_char(c).ok_or_else(|| bad(&c.to_string()))?),
        });
        rest = &rest[c.len_utf8()..];
    }
    Ok(cells)
}

fn read_counter(name: &'static str, text: &str) -> Result<u32, FenError> {
    text.parse().map_err(|_| FenError::Counter {
        name,
        found: text.to_string(),
    })
}
