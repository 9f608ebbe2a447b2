//! Attack detection on a mailbox, shared by check detection, castling and legality tests.

use crate::types::{cell, Color, Role, RoleSet, Square, MAILBOX};

pub(crate) const ORTH: [i8; 4] = [16, -16, 1, -1];
pub(crate) const DIAG: [i8; 4] = [17, 15, -15, -17];
pub(crate) const ALL8: [i8; 8] = [16, -16, 1, -1, 17, 15, -15, -17];
pub(crate) const KNIGHT: [i8; 8] = [33, 31, 18, 14, -14, -18, -31, -33];
pub(crate) const CAMEL: [i8; 8] = [49, 47, 19, 13, -13, -19, -47, -49];

use Role::*;
/// Roles that step one square orthogonally / diagonally.
pub(crate) const ORTH_STEPPERS: RoleSet = RoleSet::of(&[
    King,
    QueenGuard,
    NinjaWarrior,
    InsaneNinja,
    InsaneNinjaKnight,
]);
pub(crate) const DIAG_STEPPERS: RoleSet = RoleSet::of(&[
    King,
    QueenGuard,
    NinjaGuard,
    InsaneNinja,
    InsaneNinjaKnight,
    LeapingNinjaGuard,
]);
/// Roles with the two-step ninja leap orthogonally / diagonally.
pub(crate) const ORTH_NINJAS: RoleSet =
    RoleSet::of(&[NinjaWarrior, InsaneNinja, InsaneNinjaKnight]);
pub(crate) const DIAG_NINJAS: RoleSet = RoleSet::of(&[
    NinjaGuard,
    InsaneNinja,
    InsaneNinjaKnight,
    LeapingNinjaGuard,
]);
pub(crate) const NINJAS: RoleSet = ORTH_NINJAS.union(DIAG_NINJAS);
pub(crate) const KNIGHTS: RoleSet = RoleSet::of(&[Knight, InsaneNinjaKnight]);
pub(crate) const CAMELS: RoleSet = RoleSet::of(&[LeapingNinjaGuard, MadLeapingBishop]);
/// Pieces whose attack along a line can be uncovered by removing a piece from the line.
pub(crate) const ORTH_SLIDERS: RoleSet = RoleSet::of(&[Rook, Queen, LoonyRook]);
pub(crate) const DIAG_SLIDERS: RoleSet = RoleSet::of(&[Bishop, Queen, MadLeapingBishop]);
const PAWNS: RoleSet = RoleSet::of(&[Pawn, NinjaPawn]);

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
    present: RoleSet,
    friendly_fire: bool,
) -> bool {
    let bit = cell::color_bit(by);
    let is = |c: u8, roles: RoleSet| c & bit != 0 && roles.contains_code(c & cell::ROLE_MASK);
    let at = |delta: i8| board[step(target, delta) as usize];

    if present.intersects(PAWNS) {
        let behind = -forward(by);
        if is(at(behind + 1), PAWNS) || is(at(behind - 1), PAWNS) {
            return true;
        }
        let ninja_pawn = cell::piece(by, NinjaPawn);
        if present.contains(NinjaPawn)
            && in_enemy_half(by, Square(target).rank())
            && (at(1) == ninja_pawn || at(-1) == ninja_pawn)
        {
            return true;
        }
    }
    if present.intersects(ORTH_STEPPERS.union(ORTH_NINJAS))
        && ORTH
            .iter()
            .any(|&d| is(at(d), ORTH_STEPPERS) || is(at(2 * d), ORTH_NINJAS))
    {
        return true;
    }
    if present.intersects(DIAG_STEPPERS.union(DIAG_NINJAS))
        && DIAG
            .iter()
            .any(|&d| is(at(d), DIAG_STEPPERS) || is(at(2 * d), DIAG_NINJAS))
    {
        return true;
    }
    if present.intersects(KNIGHTS) && KNIGHT.iter().any(|&d| is(at(d), KNIGHTS)) {
        return true;
    }
    if present.intersects(CAMELS) && CAMEL.iter().any(|&d| is(at(d), CAMELS)) {
        return true;
    }
    if present.intersects(DIAG_SLIDERS)
        && DIAG
            .iter()
            .any(|&d| is(next_piece(board, target, d).1, DIAG_SLIDERS))
    {
        return true;
    }
    if present.intersects(ORTH_SLIDERS) {
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
            if present.contains(LoonyRook) && fire_through && next_piece(board, at, d).1 == loony {
                return true;
            }
        }
    }
    false
}
