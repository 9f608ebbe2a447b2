//! Attack detection on a mailbox, shared by check detection, castling and legality tests.

use crate::types::{cell, Color, Role, Square, MAILBOX};

pub(crate) const ORTH: [i8; 4] = [16, -16, 1, -1];
pub(crate) const DIAG: [i8; 4] = [17, 15, -15, -17];
pub(crate) const ALL8: [i8; 8] = [16, -16, 1, -1, 17, 15, -15, -17];
pub(crate) const KNIGHT: [i8; 8] = [33, 31, 18, 14, -14, -18, -31, -33];
pub(crate) const CAMEL: [i8; 8] = [49, 47, 19, 13, -13, -19, -47, -49];

const fn roles(list: &[Role]) -> u16 {
    let mut bits = 0;
    let mut i = 0;
    while i < list.len() {
        bits |= 1 << list[i] as u16;
        i += 1;
    }
    bits
}

use Role::*;
/// Roles that step one square orthogonally / diagonally.
pub(crate) const ORTH_STEPPERS: u16 = roles(&[
    King,
    QueenGuard,
    NinjaWarrior,
    InsaneNinja,
    InsaneNinjaKnight,
]);
pub(crate) const DIAG_STEPPERS: u16 = roles(&[
    King,
    QueenGuard,
    NinjaGuard,
    InsaneNinja,
    InsaneNinjaKnight,
    LeapingNinjaGuard,
]);
/// Roles with the two-step ninja leap orthogonally / diagonally.
pub(crate) const ORTH_NINJAS: u16 = roles(&[NinjaWarrior, InsaneNinja, InsaneNinjaKnight]);
pub(crate) const DIAG_NINJAS: u16 = roles(&[
    NinjaGuard,
    InsaneNinja,
    InsaneNinjaKnight,
    LeapingNinjaGuard,
]);
pub(crate) const NINJAS: u16 = ORTH_NINJAS | DIAG_NINJAS;
pub(crate) const KNIGHTS: u16 = roles(&[Knight, InsaneNinjaKnight]);
pub(crate) const CAMELS: u16 = roles(&[LeapingNinjaGuard, MadLeapingBishop]);
/// Pieces whose attack along a line can be uncovered by removing a piece from the line.
pub(crate) const ORTH_SLIDERS: u16 = roles(&[Rook, Queen, LoonyRook]);
pub(crate) const DIAG_SLIDERS: u16 = roles(&[Bishop, Queen, MadLeapingBishop]);
const PAWNS: u16 = roles(&[Pawn, NinjaPawn]);

#[inline]
pub(crate) fn step(from: u8, delta: i8) -> u8 {
    from.wrapping_add(delta as u8)
}

/// The forward direction of a colour's pawns.
#[inline]
pub(crate) const fn forward(color: Color) -> i8 {
    match color {
        Color::White => 16,
        Color::Black => -16,
    }
}

/// Whether a Ninja Pawn of `color` on `rank` stands in the enemy half.
#[inline]
pub(crate) fn in_enemy_half(color: Color, rank: u8) -> bool {
    match color {
        Color::White => rank >= 6,
        Color::Black => rank <= 5,
    }
}

/// The first cell along `dir` from `from` that is a piece or off the board (holes are passed
/// over, as RULES.md says), and its contents.
#[inline]
pub(crate) fn next_piece(board: &[u8; MAILBOX], from: u8, dir: i8) -> (u8, u8) {
    let mut at = from;
    loop {
        at = step(at, dir);
        let content = board[at as usize];
        if content != cell::EMPTY && content != cell::HOLE {
            return (at, content);
        }
    }
}

/// Whether a piece of colour `by` could capture on `target`. `present` holds the roles `by`
/// has (a superset is fine) so that absent piece kinds cost nothing.
pub(crate) fn attacked(
    board: &[u8; MAILBOX],
    target: u8,
    by: Color,
    present: u16,
    friendly_fire: bool,
) -> bool {
    let bit = cell::color_bit(by);
    let is = |c: u8, roles: u16| c & bit != 0 && (roles >> (c & cell::ROLE_MASK)) & 1 != 0;
    let at = |delta: i8| board[step(target, delta) as usize];

    if present & PAWNS != 0 {
        let behind = -forward(by);
        if is(at(behind + 1), PAWNS) || is(at(behind - 1), PAWNS) {
            return true;
        }
        let ninja_pawn = cell::piece(by, NinjaPawn);
        if present & NinjaPawn.bit() != 0
            && in_enemy_half(by, Square(target).rank())
            && (at(1) == ninja_pawn || at(-1) == ninja_pawn)
        {
            return true;
        }
    }
    if present & (ORTH_STEPPERS | ORTH_NINJAS) != 0
        && ORTH
            .iter()
            .any(|&d| is(at(d), ORTH_STEPPERS) || is(at(2 * d), ORTH_NINJAS))
    {
        return true;
    }
    if present & (DIAG_STEPPERS | DIAG_NINJAS) != 0
        && DIAG
            .iter()
            .any(|&d| is(at(d), DIAG_STEPPERS) || is(at(2 * d), DIAG_NINJAS))
    {
        return true;
    }
    if present & KNIGHTS != 0 && KNIGHT.iter().any(|&d| is(at(d), KNIGHTS)) {
        return true;
    }
    if present & CAMELS != 0 && CAMEL.iter().any(|&d| is(at(d), CAMELS)) {
        return true;
    }
    if present & DIAG_SLIDERS != 0
        && DIAG
            .iter()
            .any(|&d| is(next_piece(board, target, d).1, DIAG_SLIDERS))
    {
        return true;
    }
    if present & ORTH_SLIDERS != 0 {
        let loony = cell::piece(by, LoonyRook);
        for d in ORTH {
            let (at, first) = next_piece(board, target, d);
            if is(first, ORTH_SLIDERS) {
                return true;
            }
            // A Loony Rook behind `first` fires through it when it may: `first` belongs to
            // the other side, or (Friendly Fire) to the rook's side but is not its King.
            let fire_through = first != cell::OFF
                && (first & bit == 0 || (friendly_fire && first != cell::piece(by, King)));
            if present & LoonyRook.bit() != 0 && fire_through && next_piece(board, at, d).1 == loony
            {
                return true;
            }
        }
    }
    false
}
