//! Zobrist keys, generated at compile time from a fixed seed so hashes are stable across
//! runs, machines and builds (datasets may store them).

use crate::seed::splitmix64;
use crate::types::{Color, Role, Square, MAX_FILES, MAX_RANKS};

const SQUARES: usize = MAX_FILES as usize * MAX_RANKS as usize;
/// Piece keys are laid out by colour, role code (0 unused) and square.
const ROLE_CODES: usize = Role::COUNT + 1;
const PIECE_KEYS: usize = Color::COUNT * ROLE_CODES * SQUARES;
const HAND_COUNTS: usize = 8;

const fn keys<const N: usize>(seed: u64) -> [u64; N] {
    let mut out = [0; N];
    let mut state = seed;
    let mut i = 0;
    while i < N {
        let (next, value) = splitmix64(state);
        state = next;
        out[i] = value;
        i += 1;
    }
    out
}

static PIECES: [u64; PIECE_KEYS] = keys(0x6e69_6e6a_615a_6572);
static CASTLING: [u64; 16] = keys(0x6361_7374_6c65_7321);
static EN_PASSANT: [u64; SQUARES] = keys(0x656e_7061_7373_616e);
static HAND: [u64; 2 * HAND_COUNTS] = keys(0x6861_6e64_7321_2121);
pub(crate) const BLACK_TO_MOVE: u64 = 0x1f83_d9ab_fb41_bd6b;

#[inline]
pub(crate) fn piece(color: Color, role: Role, square: Square) -> u64 {
    PIECES[(color.index() * ROLE_CODES + role as usize) * SQUARES + square.index()]
}

#[inline]
pub(crate) fn castling(rights: u8) -> u64 {
    CASTLING[rights as usize & 15]
}

#[inline]
pub(crate) fn en_passant(square: Square) -> u64 {
    EN_PASSANT[square.index()]
}

#[inline]
pub(crate) fn hand(color: Color, count: u8) -> u64 {
    HAND[color.index() * HAND_COUNTS + (count as usize).min(HAND_COUNTS - 1)]
}
