//! Move generation: pseudo-legal moves per piece kind, then a legality filter that only
//! replays the moves that could possibly expose the King.

use crate::attacks::{
    self, forward, next_piece, step, ALL8, CAMEL, DIAG, DIAG_SLIDERS, KNIGHT, NINJAS, ORTH,
    ORTH_SLIDERS,
};
use crate::moves::{Move, MoveKind, MoveList, MoveText};
use crate::position::{is_ninja_leap, line_direction, midpoint, Position};
use crate::types::{cell, Color, Role, Square};
use crate::variant::{PawnKind, SquareSet};
use crate::{with_article, MoveError};

/// What the legality filter needs to know about the side to move's King.
struct KingSafety {
    king: u8,
    in_check: bool,
    /// Squares on a line between the King and an enemy slider further along it: removing a
    /// piece from one of them may uncover an attack. Other removals never can, because
    /// leaps and steps attack whatever stands between, and adding a piece to a line never
    /// creates an attack (not even for the Loony Rook, which may pass at most one piece).
    lines: SquareSet,
    /// Whether capturing on one of `lines` can uncover an attack too: without Friendly Fire
    /// a Loony Rook cannot fire through its own side's piece, but can through the capturer.
    captures_on_lines_matter: bool,
}

impl Position {
    /// All legal moves.
    pub fn legal_moves(&self) -> MoveList {
        let mut moves = MoveList::new();
        self.generate_pseudo_legal(&mut moves);
        let safety = self.king_safety();
        moves.retain(|m| self.is_legal_with(*m, &safety));
        moves
    }

    /// The number of legal moves, without building the filtered list (perft's bulk count).
    pub fn count_legal_moves(&self) -> usize {
        let mut moves = MoveList::new();
        self.generate_pseudo_legal(&mut moves);
        let safety = self.king_safety();
        moves
            .iter()
            .filter(|m| self.is_legal_with(**m, &safety))
            .count()
    }

    /// Whether `m` is legal here.
    pub fn is_legal(&self, m: Move) -> bool {
        self.legal_moves().contains(&m)
    }

    /// Reads a move in RULES.md text form (`e2e4`, `a9a10q`, `e1h1g1`, `Y@e4`) and returns
    /// the legal move it names, or an error that says why there is none.
    pub fn parse_move(&self, text: &str) -> Result<Move, MoveError> {
        let shape = MoveText::parse(text).ok_or_else(|| MoveError::Malformed(text.to_string()))?;
        self.legal_moves()
            .into_iter()
            .find(|m| shape.matches(*m))
            .ok_or_else(|| self.explain_illegal(text))
    }

    /// Builds the error for a well-formed text that names no legal move.
    pub(crate) fn explain_illegal(&self, text: &str) -> MoveError {
        let illegal = |reason: String| MoveError::Illegal {
            text: text.to_string(),
            reason,
        };
        if let Some(outcome) = self.outcome() {
            return illegal(format!("the game is over ({outcome})"));
        }
        let Some(shape) = MoveText::parse(text) else {
            return MoveError::Malformed(text.to_string());
        };
        let (from, to) = match shape {
            MoveText::Step { from, to, .. } | MoveText::Castle { king: from, to, .. } => (from, to),
            MoveText::Drop { to } => (to, to),
        };
        for square in [from, to] {
            if !self.rules.is_square(square) {
                return illegal(format!(
                    "{square} is not a square of the {} board",
                    self.variant()
                ));
            }
        }
        if let MoveText::Drop { .. } = shape {
            return illegal(if !self.rules.drops {
                format!("{} has no drops", self.variant())
            } else if self.hand[self.turn.index()] == 0 {
                format!("{} has no Ninja Pawn in hand", self.turn)
            } else {
                format!("a Ninja Pawn cannot be dropped and pushed to {to}")
            });
        }
        let Some(piece) = self.piece_at(from) else {
            return illegal(format!("there is no piece on {from}"));
        };
        if piece.color != self.turn {
            return illegal(format!(
                "the piece on {from} is {}'s, but {} is to move",
                piece.color, self.turn
            ));
        }
        let mut pseudo = MoveList::new();
        self.generate_pseudo_legal(&mut pseudo);
        if pseudo.iter().any(|m| shape.matches(*m)) {
            return illegal("it would leave the King in check".to_string());
        }
        // from -> to is possible: only the promotion part of the text can be wrong.
        let steps = || pseudo.iter().filter(|m| m.from == from && m.to == to);
        let promotions: Vec<Role> = steps().filter_map(|m| m.promotion()).collect();
        let plain_step = steps().any(|m| matches!(m.kind, MoveKind::Normal | MoveKind::EnPassant));
        let letters = || {
            let letters: Vec<String> = promotions
                .iter()
                .map(|r| r.lower_char().to_string())
                .collect();
            letters.join(", ")
        };
        let reason = match shape {
            MoveText::Castle { .. } => "castling is not possible".to_string(),
            MoveText::Step {
                promotion: None, ..
            } if !promotions.is_empty() => format!(
                "the {} reaching {to} must promote: add a piece letter ({})",
                piece.role.name(),
                letters()
            ),
            MoveText::Step {
                promotion: Some(role),
                ..
            } if !promotions.is_empty() => format!(
                "cannot promote to {} here; allowed: {}",
                with_article(role.name()),
                letters()
            ),
            MoveText::Step {
                promotion: Some(role),
                ..
            } if plain_step => {
                let promotes = matches!(piece.role, Role::Pawn | Role::NinjaPawn);
                let why = if promotes {
                    format!("{to} is not a promotion square")
                } else {
                    format!("{} does not promote", with_article(piece.role.name()))
                };
                format!("{why}: drop the '{}'", role.lower_char())
            }
            _ => format!("the {} on {from} cannot move to {to}", piece.role.name()),
        };
        illegal(reason)
    }

    /// Every pseudo-legal move: legal except possibly for leaving the own King attacked.
    /// Castling is fully checked here except for the landing square.
    pub(crate) fn generate_pseudo_legal(&self, moves: &mut MoveList) {
        if self.scepter_winner().is_some() {
            return;
        }
        let us = self.turn;
        for from in self.cells_of(us) {
            match cell::role_of(self.board[from as usize]) {
                Role::King => {
                    self.jumps(from, &ALL8, moves);
                    self.castles(moves);
                }
                Role::Queen => self.slides(from, &ALL8, moves),
                Role::Rook => self.slides(from, &ORTH, moves),
                Role::Bishop => self.slides(from, &DIAG, moves),
                Role::Knight => self.jumps(from, &KNIGHT, moves),
                Role::Pawn => self.pawn_moves(from, moves),
                Role::QueenGuard => self.jumps(from, &ALL8, moves),
                Role::NinjaGuard => self.ninja_moves(from, &DIAG, moves),
                Role::NinjaWarrior => self.ninja_moves(from, &ORTH, moves),
                Role::InsaneNinja => self.ninja_moves(from, &ALL8, moves),
                Role::InsaneNinjaKnight => {
                    self.ninja_moves(from, &ALL8, moves);
                    self.jumps(from, &KNIGHT, moves);
                }
                Role::LeapingNinjaGuard => {
                    self.ninja_moves(from, &DIAG, moves);
                    self.jumps(from, &CAMEL, moves);
                }
                Role::MadLeapingBishop => {
                    self.slides(from, &DIAG, moves);
                    self.jumps(from, &CAMEL, moves);
                }
                Role::LoonyRook => self.loony_rook_moves(from, moves),
                Role::NinjaPawn => self.ninja_pawn_moves(from, moves),
            }
        }
        if self.rules.drops && self.hand[us.index()] > 0 {
            self.drops(moves);
        }
    }

    /// Cells a piece of the side to move cannot land on: own pieces, holes, off the board.
    #[inline]
    fn blocked_for_us(&self, at: u8) -> bool {
        self.board[at as usize] & (cell::color_bit(self.turn) | cell::NOT_SQUARE) != 0
    }

    #[inline]
    fn is_enemy(&self, at: u8) -> bool {
        self.board[at as usize] & cell::color_bit(!self.turn) != 0
    }

    #[inline]
    fn is_empty(&self, at: u8) -> bool {
        self.board[at as usize] == cell::EMPTY
    }

    #[inline]
    fn push(moves: &mut MoveList, from: u8, to: u8, kind: MoveKind) {
        moves.push(Move::new(Square(from), Square(to), kind));
    }

    /// Steps and plain leaps: land on an empty or enemy square.
    fn jumps(&self, from: u8, offsets: &[i8], moves: &mut MoveList) {
        for &d in offsets {
            let to = step(from, d);
            if !self.blocked_for_us(to) {
                Self::push(moves, from, to, MoveKind::Normal);
            }
        }
    }

    /// One step, or the two-step ninja leap over anything (capturing an enemy it jumps).
    fn ninja_moves(&self, from: u8, dirs: &[i8], moves: &mut MoveList) {
        self.jumps(from, dirs, moves);
        for &d in dirs {
            let to = step(from, 2 * d);
            if !self.blocked_for_us(to) {
                Self::push(moves, from, to, MoveKind::Normal);
            }
        }
    }

    fn slides(&self, from: u8, dirs: &[i8], moves: &mut MoveList) {
        let them = cell::color_bit(!self.turn);
        for &d in dirs {
            let mut to = from;
            loop {
                to = step(to, d);
                let content = self.board[to as usize];
                if content == cell::EMPTY {
                    Self::push(moves, from, to, MoveKind::Normal);
                } else if content == cell::HOLE {
                    continue;
                } else {
                    if content & them != 0 {
                        Self::push(moves, from, to, MoveKind::Normal);
                    }
                    break;
                }
            }
        }
    }

    /// The Super Loony Rook (RULES.md section 3): slides, captures, fires through one enemy
    /// (or, with Friendly Fire, up to two pieces of which at most one enemy, never the own
    /// King), and removes at most two pieces in one move.
    fn loony_rook_moves(&self, from: u8, moves: &mut MoveList) {
        let us = self.turn;
        let own_king = cell::piece(us, Role::King);
        let friendly_fire = self.rules.friendly_fire;
        for d in ORTH {
            let mut to = from;
            let mut fired = 0;
            let mut fired_enemies = 0;
            loop {
                to = step(to, d);
                let content = self.board[to as usize];
                if content == cell::EMPTY {
                    Self::push(moves, from, to, MoveKind::Normal);
                    continue;
                }
                if content == cell::HOLE {
                    continue;
                }
                if content == cell::OFF || content == own_king {
                    break;
                }
                let enemy = self.is_enemy(to);
                if enemy {
                    Self::push(moves, from, to, MoveKind::Normal);
                }
                let max_fired = if friendly_fire { 2 } else { 1 };
                let may_fire = (enemy || friendly_fire)
                    && fired < max_fired
                    && fired_enemies + enemy as u8 <= 1;
                if !may_fire {
                    break;
                }
                fired += 1;
                fired_enemies += enemy as u8;
                if fired == 2 {
                    // Two pieces fired through: only empty squares remain reachable.
                    self.loony_empty_run(from, to, d, moves);
                    break;
                }
            }
        }
    }

    /// After firing through two pieces: the empty squares beyond, up to the next piece.
    fn loony_empty_run(&self, from: u8, mut to: u8, d: i8, moves: &mut MoveList) {
        loop {
            to = step(to, d);
            let content = self.board[to as usize];
            if content == cell::EMPTY {
                Self::push(moves, from, to, MoveKind::Normal);
            } else if content != cell::HOLE {
                return;
            }
        }
    }

    /// A pawn's moves that land on `to`: one per promotion role on the last rank.
    fn pawn_to(&self, from: u8, to: u8, moves: &mut MoveList) {
        let us = self.turn;
        if Square(to).rank() != self.rules.last_rank[us.index()] {
            Self::push(moves, from, to, MoveKind::Normal);
            return;
        }
        // Ninjutsu: a Ninja Guard or Warrior on the enemy palace becomes an Insane Ninja
        // Knight at once, so promoting to one there is the same as promoting to J.
        let palace = self.rules.palace_promotion[us.index()].contains(to);
        for &role in self.rules.promotions {
            if !(palace && matches!(role, Role::NinjaGuard | Role::NinjaWarrior)) {
                Self::push(moves, from, to, MoveKind::Promotion(role));
            }
        }
    }

    /// How many squares forward a pawn (or Ninja Pawn) on `from` may move at most.
    fn max_pawn_steps(&self, from: u8) -> u8 {
        let us = self.turn;
        let rank = Square(from).rank();
        let start = self.rules.start_rank[us.index()];
        match self.rules.pawn {
            PawnKind::Orthodox | PawnKind::Sliding => 1 + (rank == start) as u8,
            PawnKind::MultiStepFromStart => {
                if rank == start {
                    3
                } else {
                    1
                }
            }
            PawnKind::MultiStepOwnHalf => {
                let centre = self.rules.centre_rank[us.index()];
                let to_centre = match us {
                    Color::White => centre.saturating_sub(rank),
                    Color::Black => rank.saturating_sub(centre),
                };
                // Own half: short of the centre row by 2 or more ranks.
                if to_centre >= 2 {
                    to_centre.min(3)
                } else {
                    1
                }
            }
        }
    }

    /// Forward moves over empty squares, up to `max_steps`.
    fn pawn_pushes(&self, from: u8, max_steps: u8, moves: &mut MoveList) {
        let fwd = forward(self.turn);
        let mut to = from;
        for _ in 0..max_steps {
            to = step(to, fwd);
            if !self.is_empty(to) {
                break;
            }
            self.pawn_to(from, to, moves);
        }
    }

    fn pawn_moves(&self, from: u8, moves: &mut MoveList) {
        let fwd = forward(self.turn);
        self.pawn_pushes(from, self.max_pawn_steps(from), moves);
        let ahead_is_enemy = self.is_enemy(step(from, fwd));
        for side in [1, -1] {
            let to = step(from, fwd + side);
            if self.is_enemy(to) {
                self.pawn_to(from, to, moves);
            } else if self.ep.is_target(to) {
                Self::push(moves, from, to, MoveKind::EnPassant);
            } else if self.rules.pawn == PawnKind::Sliding && ahead_is_enemy && self.is_empty(to) {
                self.pawn_to(from, to, moves);
            }
        }
    }

    /// The Ninja Pawn (RULES.md 4.4): forward (far while in the own half), sideways to an
    /// empty square, captures diagonally forward and, in the enemy half, sideways.
    fn ninja_pawn_moves(&self, from: u8, moves: &mut MoveList) {
        let us = self.turn;
        let fwd = forward(us);
        self.pawn_pushes(from, self.max_pawn_steps(from), moves);
        let capture_sideways = attacks::in_enemy_half(us, Square(from).rank());
        for side in [1, -1] {
            let to = step(from, side);
            if self.is_empty(to) || (capture_sideways && self.is_enemy(to)) {
                Self::push(moves, from, to, MoveKind::Normal);
            }
            let diagonal = step(from, fwd + side);
            if self.is_enemy(diagonal) {
                self.pawn_to(from, diagonal, moves);
            }
        }
    }

    /// Drops on an empty square of the second rank, optionally pushed up to the centre row.
    fn drops(&self, moves: &mut MoveList) {
        let us = self.turn;
        let fwd = forward(us);
        let rank = self.rules.drop_rank(us);
        let centre = self.rules.centre_rank[us.index()];
        for file in 0..self.rules.width {
            let Some(drop_square) = Square::new(file, rank) else {
                continue;
            };
            let mut to = drop_square.0;
            while self.is_empty(to) {
                Self::push(moves, drop_square.0, to, MoveKind::Drop);
                if Square(to).rank() == centre {
                    break;
                }
                to = step(to, fwd);
            }
        }
    }

    /// Castling options whose path is clear and whose King neither starts in nor passes
    /// through check. The landing square is checked by the legality filter.
    fn castles(&self, moves: &mut MoveList) {
        let us = self.turn;
        let rights = self.castling;
        let mut in_check = None;
        for option in &self.rules.castles[us.index()] {
            if rights & option.right == 0 {
                continue;
            }
            let (king, rook) = (option.king_from.0, option.rook_from.0);
            let toward_rook = line_direction(king, rook);
            let mut between = step(king, toward_rook);
            let mut clear = true;
            while between != rook {
                clear &= self.is_empty(between);
                between = step(between, toward_rook);
            }
            if !clear || *in_check.get_or_insert_with(|| self.is_attacked(king, !us)) {
                continue;
            }
            let toward_target = line_direction(king, option.king_to.0);
            let mut passed = step(king, toward_target);
            let mut safe = true;
            while safe && passed != option.king_to.0 {
                safe = !self.attacked_with_king_on(passed);
                passed = step(passed, toward_target);
            }
            if safe {
                Self::push(
                    moves,
                    king,
                    option.king_to.0,
                    MoveKind::Castle {
                        rook: option.rook_from,
                    },
                );
            }
        }
    }

    /// Whether the side to move's King would be attacked standing on `at`, everything else
    /// unchanged.
    fn attacked_with_king_on(&self, at: u8) -> bool {
        let us = self.turn;
        let mut board = self.board;
        board[self.kings[us.index()] as usize] = cell::EMPTY;
        board[at as usize] = cell::piece(us, Role::King);
        attacks::attacked(&board, at, !us, self.present[!us], self.rules.friendly_fire)
    }

    fn king_safety(&self) -> KingSafety {
        let us = self.turn;
        let them = !us;
        let king = self.kings[us.index()];
        let enemy = self.present[them];
        let mut lines = SquareSet::EMPTY;
        for (dirs, sliders) in [(&ORTH, ORTH_SLIDERS), (&DIAG, DIAG_SLIDERS)] {
            if !enemy.intersects(sliders) {
                continue;
            }
            let their_slider = |c: u8| {
                c & cell::color_bit(them) != 0 && sliders.contains_code(c & cell::ROLE_MASK)
            };
            for &d in dirs {
                let mut ray = SquareSet::EMPTY;
                let (mut at, mut content) = next_piece(&self.board, king, d);
                while content != cell::OFF {
                    ray.insert(at);
                    if their_slider(content) {
                        lines.union(&ray);
                    }
                    (at, content) = next_piece(&self.board, at, d);
                }
            }
        }
        KingSafety {
            king,
            in_check: self.is_attacked(king, them),
            lines,
            captures_on_lines_matter: !self.rules.friendly_fire && enemy.contains(Role::LoonyRook),
        }
    }

    /// The legality filter: most moves are proven safe without being played.
    #[inline]
    fn is_legal_with(&self, m: Move, safety: &KingSafety) -> bool {
        let (from, to) = (m.from.0, m.to.0);
        if safety.in_check || from == safety.king {
            return self.is_legal_slow(m);
        }
        match m.kind {
            MoveKind::Drop => true,
            MoveKind::EnPassant => {
                !(safety.lines.contains(from) || safety.lines.contains(self.ep.victim))
                    || self.is_legal_slow(m)
            }
            MoveKind::Castle { .. } => self.is_legal_slow(m),
            MoveKind::Normal | MoveKind::Promotion(_) => {
                if safety.lines.contains(from)
                    || (safety.captures_on_lines_matter
                        && safety.lines.contains(to)
                        && self.is_enemy(to))
                {
                    return self.is_legal_slow(m);
                }
                let role = cell::role_of(self.board[from as usize]);
                let removes_from_line = if NINJAS.contains(role) && is_ninja_leap(from, to) {
                    let middle = midpoint(from, to);
                    self.is_enemy(middle) && safety.lines.contains(middle)
                } else if role == Role::LoonyRook {
                    self.fires_through_line(from, to, &safety.lines)
                } else {
                    false
                };
                !removes_from_line || self.is_legal_slow(m)
            }
        }
    }

    /// Whether a Loony Rook move removes a piece standing on one of `lines` on its way.
    fn fires_through_line(&self, from: u8, to: u8, lines: &SquareSet) -> bool {
        let dir = line_direction(from, to);
        let mut at = step(from, dir);
        while at != to {
            if lines.contains(at) && cell::is_piece(self.board[at as usize]) {
                return true;
            }
            at = step(at, dir);
        }
        false
    }

    /// Plays the move's board changes on a scratch board and looks at the King.
    pub(crate) fn is_legal_slow(&self, m: Move) -> bool {
        let us = self.turn;
        let mut board = self.board;
        let mut king = self.kings[us.index()];
        let own_king = cell::piece(us, Role::King);
        for (at, new) in self.changes(m) {
            board[at as usize] = new;
            if new == own_king {
                king = at;
            }
        }
        !attacks::attacked(
            &board,
            king,
            !us,
            self.present[!us],
            self.rules.friendly_fire,
        )
    }
}
