//! The policy index space: every legal move of every variant has exactly one index.
//!
//! `index = from_cell * MOVE_KINDS + kind`, where `from_cell` is the move's origin as seen
//! by the side to move (see [`BoardShape::view_cell`]) and `kind` is one of [`MOVE_KINDS`]:
//!
//! | kinds | moves |
//! | --- | --- |
//! | 0–87 | along one of 8 directions, 1–11 squares (steps, slides, ninja leaps, Loony Rook fire-through, pawn moves) |
//! | 88–95 | knight leaps |
//! | 96–103 | camel (1,3) leaps |
//! | 104–121 | promotions: (left, straight, right) x the variant's promotion list (up to 6) |
//! | 122–128 | castling: the variant's castling options in table order (up to 7) |
//! | 129–132 | drops: from the drop square, pushed 0–3 squares |
//!
//! This layout is also the network's policy head: a 1x1 convolution with [`MOVE_KINDS`]
//! output channels over the board, flattened cell by cell (channels last, which is how the
//! convolution stores it, so flattening copies nothing).

use crate::encoding::BoardShape;
use ninjazero_rules::{Color, Move, MoveKind, Position};

/// Ray directions in view coordinates (files, rows forward).
const DIRECTIONS: [(i8, i8); 8] = [
    (0, 1),
    (0, -1),
    (1, 0),
    (-1, 0),
    (1, 1),
    (-1, 1),
    (1, -1),
    (-1, -1),
];
const KNIGHT: [(i8, i8); 8] = [
    (1, 2),
    (-1, 2),
    (2, 1),
    (-2, 1),
    (2, -1),
    (-2, -1),
    (1, -2),
    (-1, -2),
];
const CAMEL: [(i8, i8); 8] = [
    (1, 3),
    (-1, 3),
    (3, 1),
    (-3, 1),
    (3, -1),
    (-3, -1),
    (1, -3),
    (-1, -3),
];
const MAX_DISTANCE: usize = 11;
const RAY_KINDS: usize = 8 * MAX_DISTANCE;
const KNIGHT_KINDS: usize = RAY_KINDS;
const CAMEL_KINDS: usize = KNIGHT_KINDS + 8;
const PROMOTION_KINDS: usize = CAMEL_KINDS + 8;
const MAX_PROMOTIONS: usize = 6;
const CASTLE_KINDS: usize = PROMOTION_KINDS + 3 * MAX_PROMOTIONS;
const MAX_CASTLES: usize = 7;
const DROP_KINDS: usize = CASTLE_KINDS + MAX_CASTLES;

/// Move kinds per origin cell.
pub const MOVE_KINDS: usize = DROP_KINDS + 4;

/// Size of the policy vector of a variant.
pub fn policy_len(shape: &BoardShape) -> usize {
    MOVE_KINDS * shape.cells()
}

/// The policy index of a legal move `m` of `pos`.
pub fn move_index(shape: &BoardShape, pos: &Position, m: Move) -> usize {
    let us = pos.turn();
    let from_cell = shape.view_cell(m.from, us);
    let dx = m.to.file() as i8 - m.from.file() as i8;
    let dy = m.to.rank() as i8 - m.from.rank() as i8;
    let dy = if us == Color::White { dy } else { -dy };
    let kind = match m.kind {
        MoveKind::Normal | MoveKind::EnPassant => delta_kind(dx, dy),
        MoveKind::Promotion(role) => {
            let rank = pos.rules().promotions().iter().position(|&r| r == role);
            PROMOTION_KINDS + (dx + 1) as usize * MAX_PROMOTIONS + rank.unwrap_or(0)
        }
        MoveKind::Castle { rook } => {
            let option = pos
                .rules()
                .castling_options(us)
                .position(|[_, rook_from, king_to, _]| rook_from == rook && king_to == m.to);
            CASTLE_KINDS + option.unwrap_or(0)
        }
        MoveKind::Drop => DROP_KINDS + dy.unsigned_abs() as usize,
    };
    from_cell * MOVE_KINDS + kind
}

/// The kind of a plain move by its view-coordinate delta.
fn delta_kind(dx: i8, dy: i8) -> usize {
    if let Some(k) = KNIGHT.iter().position(|&d| d == (dx, dy)) {
        return KNIGHT_KINDS + k;
    }
    if let Some(k) = CAMEL.iter().position(|&d| d == (dx, dy)) {
        return CAMEL_KINDS + k;
    }
    let distance = dx.unsigned_abs().max(dy.unsigned_abs());
    let unit = (dx.signum(), dy.signum());
    let direction = DIRECTIONS
        .iter()
        .position(|&d| d == unit)
        .expect("every other move lies on a line");
    direction * MAX_DISTANCE + distance as usize - 1
}

/// The legal move of `pos` with policy index `index`, if any.
pub fn decode_move(shape: &BoardShape, pos: &Position, index: usize) -> Option<Move> {
    pos.legal_moves()
        .into_iter()
        .find(|&m| move_index(shape, pos, m) == index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ninjazero_rules::Variant;

    #[test]
    fn kinds_fit_every_variant() {
        for variant in Variant::ALL {
            let rules = variant.rules();
            assert!(rules.promotions().len() <= MAX_PROMOTIONS);
            for color in Color::ALL {
                assert!(rules.castling_options(color).count() <= MAX_CASTLES);
            }
            let shape = BoardShape::of(variant);
            assert!(shape.height <= MAX_DISTANCE + 1 && shape.width <= MAX_DISTANCE + 1);
        }
        assert_eq!(MOVE_KINDS, 133);
    }
}
