//! Perft: counting the leaf nodes of the legal move tree, the standard test of a move
//! generator. The last ply is bulk-counted (legal moves are counted, not played).

use crate::moves::{Move, MoveList};
use crate::position::Position;

/// Leaf nodes of the legal move tree of `depth` plies below `pos`.
///
/// ```
/// use ninjazero_rules::{perft, Position, Variant};
/// assert_eq!(perft(&Position::start(Variant::Chess), 3), 8_902);
/// ```
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_legal_moves() as u64,
        _ => {
            let moves = pos.legal_moves();
            moves.iter().map(|&m| perft_after(pos, m, depth - 1)).sum()
        }
    }
}

/// Perft below each legal root move, in move generation order.
pub fn perft_divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    let moves: MoveList = pos.legal_moves();
    moves
        .iter()
        .map(|&m| (m, perft_after(pos, m, depth.saturating_sub(1))))
        .collect()
}

fn perft_after(pos: &Position, m: Move, depth: u32) -> u64 {
    let mut child = pos.clone();
    child.play_unchecked(m);
    perft(&child, depth)
}
