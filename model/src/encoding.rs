//! Position → input planes, from the side to move's point of view.
//!
//! Every variant uses one code path: planes over the variant's bounding rectangle (at most
//! 10 files x 12 ranks), rows counted from the side to move's own back edge. For Black the
//! ranks are flipped and the colours swapped; every variant is symmetric that way.

use ninjazero_rules::{Color, Position, Role, Square, Variant};

/// Bump when the meaning of any plane changes; checkpoints record it.
pub const ENCODING_VERSION: u32 = 1;

/// Plane layout, each block starting where the one before ends. Pieces: one plane per role
/// (in [`Role::ALL`] order) for the side to move, then as many for the opponent.
pub mod plane {
    use ninjazero_rules::Role;

    pub const OWN_PIECES: usize = 0;
    pub const THEIR_PIECES: usize = OWN_PIECES + Role::COUNT;
    /// 1 on squares, 0 on holes.
    pub const ON_BOARD: usize = THEIR_PIECES + Role::COUNT;
    /// Own King side, own Queen side, their King side, their Queen side (constant planes).
    pub const CASTLING: usize = ON_BOARD + 1;
    /// En passant target squares.
    pub const EN_PASSANT: usize = CASTLING + 4;
    /// Own and their Ninja Pawns in hand, divided by 4 (constant planes).
    pub const HAND: usize = EN_PASSANT + 1;
    /// The position occurred before once / twice (constant planes).
    pub const REPETITION: usize = HAND + 2;
    /// Halfmove clock / 100 (constant plane).
    pub const HALFMOVE: usize = REPETITION + 2;
    /// All ones: lets zero-padded convolutions see the rectangle's edge.
    pub const ONES: usize = HALFMOVE + 1;
    pub const COUNT: usize = ONES + 1;
}

/// The bounding rectangle of a variant's board and the mapping between squares and the
/// cells of a plane as seen by one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoardShape {
    pub variant: Variant,
    pub height: usize,
    pub width: usize,
    rank_min: u8,
    rank_max: u8,
}

impl BoardShape {
    pub fn of(variant: Variant) -> BoardShape {
        let rules = variant.rules();
        let (rank_min, rank_max) = rules.rank_range();
        BoardShape {
            variant,
            height: rules.height() as usize,
            width: rules.width() as usize,
            rank_min,
            rank_max,
        }
    }

    /// Cells per plane.
    pub fn cells(&self) -> usize {
        self.height * self.width
    }

    /// The row of `rank` as seen by `side` (0 = that side's back edge).
    #[inline]
    pub fn view_row(&self, rank: u8, side: Color) -> usize {
        match side {
            Color::White => (rank - self.rank_min) as usize,
            Color::Black => (self.rank_max - rank) as usize,
        }
    }

    /// The plane cell of `square` as seen by `side`.
    #[inline]
    pub fn view_cell(&self, square: Square, side: Color) -> usize {
        self.view_row(square.rank(), side) * self.width + square.file() as usize
    }

    /// The square at a plane cell as seen by `side` (the inverse of [`Self::view_cell`]).
    pub fn square_at(&self, cell: usize, side: Color) -> Option<Square> {
        let (row, file) = ((cell / self.width) as u8, (cell % self.width) as u8);
        let rank = match side {
            Color::White => self.rank_min + row,
            Color::Black => self.rank_max.checked_sub(row)?,
        };
        Square::new(file, rank)
    }

    /// Floats in one encoded position.
    pub fn input_len(&self) -> usize {
        plane::COUNT * self.cells()
    }

    /// The tensor shape of `batch` encoded positions: `[batch, plane::COUNT, height, width]`.
    pub fn input_dims(&self, batch: i64) -> [i64; 4] {
        [
            batch,
            plane::COUNT as i64,
            self.height as i64,
            self.width as i64,
        ]
    }
}

/// Writes the planes of `pos` into `out` (length [`BoardShape::input_len`]).
/// `repetitions` is how often the position has occurred, itself included.
pub fn encode_position(shape: &BoardShape, pos: &Position, repetitions: u32, out: &mut [f32]) {
    debug_assert_eq!(pos.variant(), shape.variant);
    let cells = shape.cells();
    let out = &mut out[..shape.input_len()];
    out.fill(0.0);
    let us = pos.turn();
    let mut fill_plane = |index: usize, value: f32| {
        out[index * cells..(index + 1) * cells].fill(value);
    };
    let rights = pos.castling_rights();
    let (own_rights, their_rights) = match us {
        Color::White => (rights & 3, rights >> 2 & 3),
        Color::Black => (rights >> 2 & 3, rights & 3),
    };
    for bit in 0..2 {
        fill_plane(plane::CASTLING + bit, (own_rights >> bit & 1) as f32);
        fill_plane(plane::CASTLING + 2 + bit, (their_rights >> bit & 1) as f32);
    }
    fill_plane(plane::HAND, pos.hand(us) as f32 / 4.0);
    fill_plane(plane::HAND + 1, pos.hand(!us) as f32 / 4.0);
    fill_plane(plane::REPETITION, (repetitions >= 2) as u8 as f32);
    fill_plane(plane::REPETITION + 1, (repetitions >= 3) as u8 as f32);
    fill_plane(
        plane::HALFMOVE,
        pos.halfmove_clock().min(100) as f32 / 100.0,
    );
    fill_plane(plane::ONES, 1.0);
    let rules = pos.rules();
    for &square in rules.squares() {
        out[plane::ON_BOARD * cells + shape.view_cell(square, us)] = 1.0;
    }
    for target in pos.en_passant_targets() {
        out[plane::EN_PASSANT * cells + shape.view_cell(target, us)] = 1.0;
    }
    for (square, piece) in pos.pieces() {
        let base = if piece.color == us {
            plane::OWN_PIECES
        } else {
            plane::THEIR_PIECES
        };
        out[(base + piece.role.index()) * cells + shape.view_cell(square, us)] = 1.0;
    }
}

/// The roles in plane order (for tools that display planes).
pub const ROLE_PLANES: [Role; Role::COUNT] = Role::ALL;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plane_layout_is_that_of_encoding_version_1() {
        // Checkpoints record ENCODING_VERSION: a layout change (a new role, say) must bump it
        // and this test with it.
        assert_eq!(ENCODING_VERSION, 1);
        let layout = [
            plane::THEIR_PIECES,
            plane::ON_BOARD,
            plane::CASTLING,
            plane::EN_PASSANT,
            plane::HAND,
            plane::REPETITION,
            plane::HALFMOVE,
            plane::ONES,
            plane::COUNT,
        ];
        assert_eq!(layout, [15, 30, 31, 35, 36, 38, 40, 41, 42]);
    }

    #[test]
    fn view_cells_round_trip_for_both_sides() {
        for variant in Variant::ALL {
            let shape = BoardShape::of(variant);
            for &sq in variant.rules().squares() {
                for side in Color::ALL {
                    let cell = shape.view_cell(sq, side);
                    assert!(cell < shape.cells());
                    assert_eq!(shape.square_at(cell, side), Some(sq));
                }
            }
        }
    }

    #[test]
    fn start_positions_look_the_same_from_both_sides() {
        // Every start position is symmetric under rank flip + colour swap, so White to move
        // and Black to move see identical planes.
        for variant in Variant::ALL {
            let shape = BoardShape::of(variant);
            let white = Position::start(variant);
            let black_fen = variant.start_fen().replace(" w ", " b ");
            let black = Position::from_fen(variant, &black_fen).unwrap();
            let mut a = vec![0.0; shape.input_len()];
            let mut b = vec![0.0; shape.input_len()];
            encode_position(&shape, &white, 1, &mut a);
            encode_position(&shape, &black, 1, &mut b);
            assert_eq!(a, b, "{variant}");
            let pieces: f32 = a[..plane::ON_BOARD * shape.cells()].iter().sum();
            assert_eq!(pieces as usize, white.pieces().count(), "{variant}");
        }
    }
}
