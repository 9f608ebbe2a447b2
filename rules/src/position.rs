//! The position: board, side to move, rights, clocks and incremental hash; making moves.

use crate::attacks::{self, forward, step, NINJAS};
use crate::moves::{Move, MoveKind};
use crate::types::{
    cell, ByColor, ByRole, Color, Piece, Role, RoleSet, Square, MAILBOX, MAX_FILES, MAX_RANKS,
};
use crate::variant::{Rules, Variant};
use crate::zobrist;
use arrayvec::ArrayVec;
use std::fmt;

const DENSE_SQUARES: usize = MAX_FILES as usize * MAX_RANKS as usize;

/// Mailbox cell of each dense square index, for iterating occupancy bits.
static DENSE_TO_CELL: [u8; DENSE_SQUARES] = {
    let mut table = [0; DENSE_SQUARES];
    let mut i = 0;
    while i < DENSE_SQUARES {
        table[i] = ((i / 10 + 2) * 16 + i % 10 + 3) as u8;
        i += 1;
    }
    table
};

/// En passant state: the squares a multi-step pawn move passed over (targets), and the pawn
/// that made it (the victim of an en passant capture). Cell 0 (padding) means "none".
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct EnPassant {
    pub targets: [u8; 2],
    pub victim: u8,
}

impl EnPassant {
    #[inline]
    pub(crate) fn is_target(&self, at: u8) -> bool {
        at != 0 && (self.targets[0] == at || self.targets[1] == at)
    }

    pub(crate) fn target_squares(&self) -> impl Iterator<Item = Square> + '_ {
        self.targets.iter().filter(|&&t| t != 0).map(|&t| Square(t))
    }
}

/// The changes a move makes to the board: (cell, new contents), applied in order.
pub(crate) type Changes = ArrayVec<(u8, u8), 6>;

/// Why a game ended.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Termination {
    Checkmate,
    Stalemate,
    /// A King reached the square(s) where it wins at once (`palace-scepter`, `ninjutsu`).
    Scepter,
    ThreefoldRepetition,
    /// 100 plies without a capture, pawn move or drop.
    HundredPlyRule,
}

impl Termination {
    /// Every way the rules end a game.
    pub const ALL: [Termination; 5] = [
        Termination::Checkmate,
        Termination::Stalemate,
        Termination::Scepter,
        Termination::ThreefoldRepetition,
        Termination::HundredPlyRule,
    ];
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Termination::Checkmate => "checkmate",
            Termination::Stalemate => "stalemate",
            Termination::Scepter => "scepter captured",
            Termination::ThreefoldRepetition => "threefold repetition",
            Termination::HundredPlyRule => "100-ply rule",
        })
    }
}

/// The end of a game: who won (None for a draw) and why.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Outcome {
    pub winner: Option<Color>,
    pub termination: Termination,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.winner {
            Some(color) => write!(f, "{color} wins by {}", self.termination),
            None => write!(f, "draw by {}", self.termination),
        }
    }
}

/// A position of one variant. Copying it is cheap (a few hundred bytes, no heap), so
/// searchers may copy-make; [`Position::play_unchecked`] updates it in place.
///
/// ```
/// use ninjazero_rules::{Position, Variant};
/// let pos = Position::start(Variant::Asylum);
/// assert_eq!(pos.legal_moves().len(), 42);
/// let pos = pos.play(pos.parse_move("e2e5").unwrap()).unwrap();
/// assert_eq!(pos.to_fen(), "sjbcqkcbjs/pppppppppp/10/10/10/4P5/10/10/PPPP1PPPPP/SJBCQKCBJS b KQkq e3,e4 0 1");
/// ```
#[derive(Clone)]
pub struct Position {
    pub(crate) rules: &'static Rules,
    pub(crate) board: [u8; MAILBOX],
    /// Occupied squares per colour, by dense square index.
    pub(crate) occupied: [u128; 2],
    /// Pieces on the board per colour and role.
    pub(crate) counts: ByColor<ByRole<u8>>,
    /// The roles the colour has on the board.
    pub(crate) present: ByColor<RoleSet>,
    pub(crate) kings: [u8; 2],
    pub(crate) turn: Color,
    pub(crate) castling: u8,
    pub(crate) ep: EnPassant,
    /// XOR of the en passant keys currently in `hash` (targets with a legal capture).
    pub(crate) ep_key: u64,
    pub(crate) hand: [u8; 2],
    pub(crate) halfmoves: u32,
    pub(crate) fullmoves: u32,
    pub(crate) hash: u64,
}

impl Position {
    /// The variant's start position.
    pub fn start(variant: Variant) -> Position {
        Position::from_fen(variant, variant.start_fen()).expect("start FENs are valid")
    }

    /// An empty board of `variant` with nothing set; FEN parsing fills it in.
    pub(crate) fn empty(variant: Variant) -> Position {
        let rules = variant.rules();
        let mut pos = Position {
            rules,
            board: rules.template,
            occupied: [0; 2],
            counts: ByColor::default(),
            present: ByColor::default(),
            kings: [0; 2],
            turn: Color::White,
            castling: 0,
            ep: EnPassant::default(),
            ep_key: 0,
            hand: [0; 2],
            halfmoves: 0,
            fullmoves: 1,
            hash: 0,
        };
        pos.hash = pos.compute_hash_without_ep();
        pos
    }

    pub fn variant(&self) -> Variant {
        self.rules.variant
    }

    /// The variant's rule tables (board shape, promotions, castling options).
    pub fn rules(&self) -> &'static Rules {
        self.rules
    }

    /// The side to move.
    pub fn turn(&self) -> Color {
        self.turn
    }

    /// The piece on `square`, if any.
    pub fn piece_at(&self, square: Square) -> Option<Piece> {
        cell::decode(self.board[square.cell()])
    }

    /// The square of `color`'s King.
    pub fn king(&self, color: Color) -> Square {
        Square(self.kings[color.index()])
    }

    /// Ninja Pawns in `color`'s hand (`insane-ninja-drops`).
    pub fn hand(&self, color: Color) -> u8 {
        self.hand[color.index()]
    }

    /// Plies since the last capture, pawn move or drop.
    pub fn halfmove_clock(&self) -> u32 {
        self.halfmoves
    }

    /// The move number, starting at 1 and increased after each Black move.
    pub fn fullmove_number(&self) -> u32 {
        self.fullmoves
    }

    /// Castling rights as FEN letters would show them (bits: K=1, Q=2, k=4, q=8).
    pub fn castling_rights(&self) -> u8 {
        self.castling
    }

    /// The en passant target squares (the squares the last multi-step pawn move passed over).
    pub fn en_passant_targets(&self) -> impl Iterator<Item = Square> + '_ {
        self.ep.target_squares()
    }

    /// The Zobrist hash: pieces, side to move, castling rights, pieces in hand, and the en
    /// passant targets on which a legal capture is available. Updated incrementally.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Number of pieces of this colour and role on the board (the hand is not counted).
    pub fn count(&self, color: Color, role: Role) -> u32 {
        self.counts[color][role] as u32
    }

    /// Pieces on the board, per colour and role.
    pub fn material(&self) -> ByColor<ByRole<u8>> {
        self.counts
    }

    /// Every piece on the board with its square.
    pub fn pieces(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        let all = self.occupied[0] | self.occupied[1];
        BitIter(all)
            .filter_map(|cell| Some((Square(cell), cell::decode(self.board[cell as usize])?)))
    }

    /// Whether the side to move is in check.
    pub fn is_check(&self) -> bool {
        self.is_attacked(self.kings[self.turn.index()], !self.turn)
    }

    /// Whether a piece of `by` could capture on `square` (ignoring whose turn it is).
    pub fn is_attacked_by(&self, square: Square, by: Color) -> bool {
        self.is_attacked(square.0, by)
    }

    #[inline]
    pub(crate) fn is_attacked(&self, target: u8, by: Color) -> bool {
        attacks::attacked(
            &self.board,
            target,
            by,
            self.present[by],
            self.rules.friendly_fire,
        )
    }

    /// The King of this colour stands on a square where it has won (scepter rules).
    pub(crate) fn scepter_winner(&self) -> Option<Color> {
        Color::ALL
            .into_iter()
            .find(|c| self.rules.scepter[c.index()].contains(self.kings[c.index()]))
    }

    /// The result if the game is over by the rules of the position alone: scepter, checkmate,
    /// stalemate or the 100-ply rule. Repetition needs the history: see [`crate::Game`].
    pub fn outcome(&self) -> Option<Outcome> {
        if let Some(winner) = self.scepter_winner() {
            return Some(Outcome {
                winner: Some(winner),
                termination: Termination::Scepter,
            });
        }
        if self.count_legal_moves() == 0 {
            return Some(if self.is_check() {
                Outcome {
                    winner: Some(!self.turn),
                    termination: Termination::Checkmate,
                }
            } else {
                Outcome {
                    winner: None,
                    termination: Termination::Stalemate,
                }
            });
        }
        (self.halfmoves >= 100).then_some(Outcome {
            winner: None,
            termination: Termination::HundredPlyRule,
        })
    }

    /// Occupied cells of `color`.
    #[inline]
    pub(crate) fn cells_of(&self, color: Color) -> BitIter {
        BitIter(self.occupied[color.index()])
    }

    /// Puts `new` on `at`, keeping occupancy, counts, kings and the hash in step.
    #[inline]
    pub(crate) fn set_cell(&mut self, at: u8, new: u8) {
        let old = self.board[at as usize];
        let bit = 1u128 << Square(at).index();
        if cell::is_piece(old) {
            let (color, role) = (cell::color_of(old), cell::role_of(old));
            self.hash ^= zobrist::piece(color, role, Square(at));
            self.occupied[color.index()] &= !bit;
            let count = &mut self.counts[color][role];
            *count -= 1;
            if *count == 0 {
                self.present[color].remove(role);
            }
        }
        self.board[at as usize] = new;
        if cell::is_piece(new) {
            let (color, role) = (cell::color_of(new), cell::role_of(new));
            self.hash ^= zobrist::piece(color, role, Square(at));
            self.occupied[color.index()] |= bit;
            self.counts[color][role] += 1;
            self.present[color].insert(role);
            if role == Role::King {
                self.kings[color.index()] = at;
            }
        }
    }

    /// What `m` does to the board, as an ordered list of cell updates.
    pub(crate) fn changes(&self, m: Move) -> Changes {
        let us = self.turn;
        let (from, to) = (m.from.0, m.to.0);
        let mut changes = Changes::new();
        match m.kind {
            MoveKind::Drop => changes.push((to, cell::piece(us, Role::NinjaPawn))),
            MoveKind::Castle { rook } => {
                let rook_to = if rook.file() > m.from.file() {
                    step(to, -1)
                } else {
                    step(to, 1)
                };
                changes.push((from, cell::EMPTY));
                changes.push((rook.0, cell::EMPTY));
                changes.push((to, cell::piece(us, Role::King)));
                changes.push((rook_to, cell::piece(us, self.rules.castling_rook)));
            }
            MoveKind::EnPassant => {
                changes.push((from, cell::EMPTY));
                changes.push((self.ep.victim, cell::EMPTY));
                changes.push((to, self.board[from as usize]));
            }
            MoveKind::Promotion(role) => {
                changes.push((from, cell::EMPTY));
                changes.push((to, cell::piece(us, role)));
            }
            MoveKind::Normal => {
                let moving = self.board[from as usize];
                let role = cell::role_of(moving);
                if NINJAS.contains(role) && is_ninja_leap(from, to) {
                    let middle = midpoint(from, to);
                    if self.board[middle as usize] & cell::color_bit(!us) != 0 {
                        changes.push((middle, cell::EMPTY));
                    }
                } else if role == Role::LoonyRook {
                    self.push_fired_through(from, to, &mut changes);
                }
                changes.push((from, cell::EMPTY));
                let lands_as = if matches!(role, Role::NinjaGuard | Role::NinjaWarrior)
                    && self.rules.palace_promotion[us.index()].contains(to)
                {
                    cell::piece(us, Role::InsaneNinjaKnight)
                } else {
                    moving
                };
                changes.push((to, lands_as));
            }
        }
        changes
    }

    /// The pieces a Loony Rook move from `from` to `to` fires through.
    fn push_fired_through(&self, from: u8, to: u8, changes: &mut Changes) {
        let dir = line_direction(from, to);
        let mut at = step(from, dir);
        while at != to {
            if cell::is_piece(self.board[at as usize]) {
                changes.push((at, cell::EMPTY));
            }
            at = step(at, dir);
        }
    }

    /// Plays a move known to be legal (from [`Position::legal_moves`] or
    /// [`Position::parse_move`]). Playing anything else leaves an unspecified position.
    pub fn play_unchecked(&mut self, m: Move) {
        let us = self.turn;
        let pieces_before = self.piece_count();
        let moving = self.board[m.from.cell()];
        let resets_clock = m.kind == MoveKind::Drop
            || matches!(cell::role_of(moving), Role::Pawn | Role::NinjaPawn);
        let long_pawn_move = m.kind == MoveKind::Normal
            && cell::role_of(moving) == Role::Pawn
            && m.from.rank().abs_diff(m.to.rank()) >= 2;

        self.hash ^= self.ep_key ^ zobrist::castling(self.castling);
        for (at, new) in self.changes(m) {
            self.castling &= self.rules.castle_keep[at as usize];
            self.set_cell(at, new);
        }
        self.hash ^= zobrist::castling(self.castling);
        if m.kind == MoveKind::Drop {
            let hand = &mut self.hand[us.index()];
            self.hash ^= zobrist::hand(us, *hand) ^ zobrist::hand(us, *hand - 1);
            *hand -= 1;
        }
        self.halfmoves = if resets_clock || self.piece_count() < pieces_before {
            0
        } else {
            self.halfmoves.saturating_add(1)
        };
        self.ep = EnPassant::default();
        if long_pawn_move {
            let dir = forward(us);
            let mut at = step(m.from.0, dir);
            let mut slot = 0;
            while at != m.to.0 {
                self.ep.targets[slot] = at;
                slot += 1;
                at = step(at, dir);
            }
            self.ep.victim = m.to.0;
        }
        if us == Color::Black {
            // A FEN may start the count anywhere up to the largest; it stays there.
            self.fullmoves = self.fullmoves.saturating_add(1);
        }
        self.turn = !us;
        self.hash ^= zobrist::BLACK_TO_MOVE;
        self.ep_key = self.available_en_passant_key();
        self.hash ^= self.ep_key;
    }

    /// Copy-make for a checked move: an error when `m` is not legal here.
    pub fn play(&self, m: Move) -> Result<Position, crate::MoveError> {
        if !self.legal_moves().contains(&m) {
            return Err(self.explain_illegal(&m.to_string()));
        }
        let mut next = self.clone();
        next.play_unchecked(m);
        Ok(next)
    }

    #[inline]
    fn piece_count(&self) -> u32 {
        self.occupied[0].count_ones() + self.occupied[1].count_ones()
    }

    /// XOR of the keys of the en passant targets on which a legal capture exists.
    fn available_en_passant_key(&self) -> u64 {
        let mut key = 0;
        if self.ep.victim == 0 {
            return key;
        }
        let us = self.turn;
        let pawn = cell::piece(us, Role::Pawn);
        for target in self.ep.target_squares() {
            let available = [1, -1].into_iter().any(|side| {
                let from = step(target.0, side - forward(us));
                self.board[from as usize] == pawn
                    && self.is_legal_slow(Move::new(Square(from), target, MoveKind::EnPassant))
            });
            if available {
                key ^= zobrist::en_passant(target);
            }
        }
        key
    }

    /// The hash recomputed from scratch (pieces, side, castling, hand; no en passant).
    pub(crate) fn compute_hash_without_ep(&self) -> u64 {
        let mut hash = zobrist::castling(self.castling);
        for (square, piece) in self.pieces() {
            hash ^= zobrist::piece(piece.color, piece.role, square);
        }
        if self.turn == Color::Black {
            hash ^= zobrist::BLACK_TO_MOVE;
        }
        for color in Color::ALL {
            hash ^= zobrist::hand(color, self.hand[color.index()]);
        }
        hash
    }

    /// The full hash recomputed from scratch; equals [`Position::hash`] in every position.
    pub fn recompute_hash(&self) -> u64 {
        self.compute_hash_without_ep() ^ self.available_en_passant_key()
    }

    /// Finishes a position built square by square: en passant key and hash.
    pub(crate) fn finish_setup(&mut self) {
        self.ep_key = self.available_en_passant_key();
        self.hash = self.recompute_hash();
    }
}

/// Whether `from` → `to` is a two-step leap along a line (the ninja leap's shape).
#[inline]
pub(crate) fn is_ninja_leap(from: u8, to: u8) -> bool {
    matches!(
        to.wrapping_sub(from) as i8,
        32 | -32 | 2 | -2 | 34 | -34 | 30 | -30
    )
}

#[inline]
pub(crate) fn midpoint(from: u8, to: u8) -> u8 {
    ((from as u16 + to as u16) / 2) as u8
}

/// The unit step from `from` towards `to` along a file or rank.
#[inline]
pub(crate) fn line_direction(from: u8, to: u8) -> i8 {
    let (a, b) = (Square(from), Square(to));
    if a.rank() == b.rank() {
        if b.file() > a.file() {
            1
        } else {
            -1
        }
    } else if b.rank() > a.rank() {
        16
    } else {
        -16
    }
}

/// Iterates the mailbox cells of a dense occupancy set.
pub(crate) struct BitIter(pub(crate) u128);

impl Iterator for BitIter {
    type Item = u8;
    #[inline]
    fn next(&mut self) -> Option<u8> {
        if self.0 == 0 {
            return None;
        }
        let index = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(DENSE_TO_CELL[index])
    }
}

impl PartialEq for Position {
    /// Positions are equal when everything FEN shows is equal.
    fn eq(&self, other: &Position) -> bool {
        self.rules.variant == other.rules.variant
            && self.board == other.board
            && self.turn == other.turn
            && self.castling == other.castling
            && self.ep == other.ep
            && self.hand == other.hand
            && self.halfmoves == other.halfmoves
            && self.fullmoves == other.fullmoves
    }
}

impl Eq for Position {}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({}, \"{}\")", self.variant(), self.to_fen())
    }
}
