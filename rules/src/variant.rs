//! The nine games of RULES.md and the per-variant rule tables.
//!
//! Each board is the bounding rectangle of its squares with a hole mask; the geometry is read
//! from the variant's start FEN (`*` marks a hole), so the start FEN is the single source of
//! each board's shape.

use crate::types::{cell, Color, Role, Square, MAILBOX};
use std::fmt;
use std::sync::OnceLock;

/// A game of the ninja family (or orthodox chess, kept to validate the core).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Variant {
    Chess,
    Palace,
    PalaceScepter,
    Ninjutsu,
    Asylum,
    AsylumFriendlyFire,
    InsaneNinja,
    InsaneNinja2,
    InsaneNinjaDrops,
}

impl Variant {
    /// All variants, in the order of RULES.md section 1.
    pub const ALL: [Variant; 9] = [
        Variant::Chess,
        Variant::Palace,
        Variant::PalaceScepter,
        Variant::Ninjutsu,
        Variant::Asylum,
        Variant::AsylumFriendlyFire,
        Variant::InsaneNinja,
        Variant::InsaneNinja2,
        Variant::InsaneNinjaDrops,
    ];

    /// The id used on the command line and in files (`insane-ninja-drops`, …).
    pub const fn id(self) -> &'static str {
        match self {
            Variant::Chess => "chess",
            Variant::Palace => "palace",
            Variant::PalaceScepter => "palace-scepter",
            Variant::Ninjutsu => "ninjutsu",
            Variant::Asylum => "asylum",
            Variant::AsylumFriendlyFire => "asylum-ff",
            Variant::InsaneNinja => "insane-ninja",
            Variant::InsaneNinja2 => "insane-ninja-2",
            Variant::InsaneNinjaDrops => "insane-ninja-drops",
        }
    }

    /// The game's name.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Chess => "Orthodox chess",
            Variant::Palace => "Palace Ninja Guards",
            Variant::PalaceScepter => "Palace Ninja Guards (Capture the Scepter)",
            Variant::Ninjutsu => "Claustrophobia 2: Ninjutsu",
            Variant::Asylum => "Asylum Chess",
            Variant::AsylumFriendlyFire => "Asylum Chess (Friendly Fire)",
            Variant::InsaneNinja => "Insane Ninja Chess (setup #1)",
            Variant::InsaneNinja2 => "Insane Ninja Chess (setup #2)",
            Variant::InsaneNinjaDrops => "Insane Ninja Chess (setup #1, Ninja Pawn drops)",
        }
    }

    /// The start position (RULES.md section 8).
    pub const fn start_fen(self) -> &'static str {
        match self {
            Variant::Chess => "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            Variant::Palace | Variant::PalaceScepter => {
                "***gg***/rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/***GG*** w KQkq - 0 1"
            }
            Variant::Ninjutsu => "wwnggk*/pppppmn/5**/5**/5**/5**/PPPPPMN/WWNGGK* w - - 0 1",
            Variant::Asylum | Variant::AsylumFriendlyFire => {
                "sjbcqkcbjs/pppppppppp/10/10/10/10/10/10/PPPPPPPPPP/SJBCQKCBJS w KQkq - 0 1"
            }
            Variant::InsaneNinja => {
                "****ll****/irnbqkbnri/pppppppppp/10/10/10/10/10/10/PPPPPPPPPP/IRNBQKBNRI/****LL**** w KQkq - 0 1"
            }
            Variant::InsaneNinja2 => {
                "****ii****/grnbqkbnrg/pppppppppp/10/10/10/10/10/10/PPPPPPPPPP/GRNBQKBNRG/****II**** w KQkq - 0 1"
            }
            Variant::InsaneNinjaDrops => {
                "****ll****/irnbqkbnri/pppppppppp/10/10/10/10/10/10/PPPPPPPPPP/IRNBQKBNRI/****LL****[YYYYyyyy] w KQkq - 0 1"
            }
        }
    }

    /// The variant's rule tables.
    #[inline]
    pub fn rules(self) -> &'static Rules {
        static TABLES: OnceLock<Vec<Rules>> = OnceLock::new();
        &TABLES.get_or_init(|| Variant::ALL.iter().map(|&v| Rules::build(v)).collect())
            [self as usize]
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// Error for an unknown variant id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown variant '{}' (expected one of: chess, palace, palace-scepter, ninjutsu, asylum, asylum-ff, insane-ninja, insane-ninja-2, insane-ninja-drops)", crate::excerpt(.0))]
pub struct UnknownVariant(pub String);

impl std::str::FromStr for Variant {
    type Err = UnknownVariant;
    fn from_str(s: &str) -> Result<Variant, UnknownVariant> {
        Variant::ALL
            .into_iter()
            .find(|v| v.id() == s)
            .ok_or_else(|| UnknownVariant(s.to_string()))
    }
}

/// A set of squares, one bit per mailbox cell.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct SquareSet([u64; 4]);

impl SquareSet {
    pub(crate) const EMPTY: SquareSet = SquareSet([0; 4]);

    #[inline]
    pub(crate) fn insert(&mut self, cell: u8) {
        self.0[(cell >> 6) as usize] |= 1 << (cell & 63);
    }

    #[inline]
    pub(crate) fn contains(&self, cell: u8) -> bool {
        self.0[(cell >> 6) as usize] >> (cell & 63) & 1 != 0
    }

    #[inline]
    pub(crate) fn union(&mut self, other: &SquareSet) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a |= b;
        }
    }

    pub(crate) fn from_squares(squares: &[Square]) -> SquareSet {
        let mut set = SquareSet::EMPTY;
        squares.iter().for_each(|sq| set.insert(sq.0));
        set
    }
}

/// How pawns move forward (RULES.md section 4).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum PawnKind {
    /// One step, two from the second rank (`chess`, `palace*`).
    Orthodox,
    /// Orthodox, plus the non-capturing diagonal slide past an enemy piece (`ninjutsu`).
    Sliding,
    /// One, two or three steps from the starting rank (`asylum*`).
    MultiStepFromStart,
    /// Up to three steps while in the own half, never past the centre row (`insane-ninja*`).
    MultiStepOwnHalf,
}

/// One castling option: the King and Rook squares before and after.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct CastleOption {
    pub right: u8,
    pub king_from: Square,
    pub rook_from: Square,
    pub king_to: Square,
    pub rook_to: Square,
}

/// The castling options of one wing as (Rook file, King to, Rook to) letters.
type CastleWing = &'static [(u8, u8, u8)];

/// Castling right bits, in FEN order.
pub(crate) const CASTLE_WHITE_KING: u8 = 1;
pub(crate) const CASTLE_WHITE_QUEEN: u8 = 2;
pub(crate) const CASTLE_BLACK_KING: u8 = 4;
pub(crate) const CASTLE_BLACK_QUEEN: u8 = 8;

/// Everything that differs between variants, precomputed once per variant.
#[derive(Debug)]
pub struct Rules {
    pub(crate) variant: Variant,
    /// Files in the bounding rectangle.
    pub(crate) width: u8,
    /// Lowest and highest rank number of the rectangle.
    pub(crate) rank_min: u8,
    pub(crate) rank_max: u8,
    /// The empty board: `EMPTY` on squares, `HOLE` on holes, `OFF` elsewhere.
    pub(crate) template: [u8; MAILBOX],
    pub(crate) squares: Vec<Square>,
    pub(crate) pawn: PawnKind,
    /// Rank a pawn promotes on, per colour.
    pub(crate) last_rank: [u8; 2],
    /// Rank from which a pawn may make its long first move (orthodox, sliding, asylum).
    pub(crate) start_rank: [u8; 2],
    /// The centre row a multi-step move may not pass (insane-ninja), per colour.
    pub(crate) centre_rank: [u8; 2],
    pub(crate) promotions: &'static [Role],
    pub(crate) castling_rook: Role,
    /// Castling options per colour.
    pub(crate) castles: [Vec<CastleOption>; 2],
    /// Castling rights that survive a move touching each cell.
    pub(crate) castle_keep: [u8; MAILBOX],
    /// Squares on which that colour's King wins at once (scepter rules).
    pub(crate) scepter: [SquareSet; 2],
    /// Squares on which that colour's Ninja Guards and Warriors become Insane Ninja Knights.
    pub(crate) palace_promotion: [SquareSet; 2],
    pub(crate) drops: bool,
    pub(crate) friendly_fire: bool,
    /// Pieces per side in the start position, hand included: no legal position has more.
    pub(crate) army: [usize; 2],
}

const ORTHODOX_PROMOTIONS: &[Role] = &[Role::Queen, Role::Rook, Role::Bishop, Role::Knight];
const PALACE_PROMOTIONS: &[Role] = &[
    Role::Queen,
    Role::Rook,
    Role::Bishop,
    Role::Knight,
    Role::NinjaGuard,
];
const NINJUTSU_PROMOTIONS: &[Role] = &[
    Role::InsaneNinjaKnight,
    Role::QueenGuard,
    Role::NinjaWarrior,
    Role::NinjaGuard,
    Role::Knight,
];
const ASYLUM_PROMOTIONS: &[Role] = &[
    Role::Queen,
    Role::MadLeapingBishop,
    Role::Bishop,
    Role::InsaneNinjaKnight,
    Role::LoonyRook,
];
const INSANE_PROMOTIONS: &[Role] = &[
    Role::Queen,
    Role::Rook,
    Role::Bishop,
    Role::Knight,
    Role::LeapingNinjaGuard,
    Role::InsaneNinja,
];
const INSANE2_PROMOTIONS: &[Role] = &[
    Role::Queen,
    Role::Rook,
    Role::Bishop,
    Role::Knight,
    Role::NinjaGuard,
    Role::InsaneNinja,
];

fn sq(name: &str) -> Square {
    name.parse().expect("rule tables name valid squares")
}

fn squares(names: &[&str]) -> SquareSet {
    SquareSet::from_squares(&names.iter().map(|n| sq(n)).collect::<Vec<_>>())
}

impl Rules {
    fn build(variant: Variant) -> Rules {
        use Variant::*;
        let rank_min = match variant {
            Palace | PalaceScepter | InsaneNinja | InsaneNinja2 | InsaneNinjaDrops => 0,
            _ => 1,
        };
        let board_text = variant.start_fen().split([' ', '[']).next().unwrap_or("");
        let rows: Vec<&str> = board_text.split('/').collect();
        let rank_max = rank_min + rows.len() as u8 - 1;
        let mut template = [cell::OFF; MAILBOX];
        let mut all_squares = Vec::new();
        let mut width = 0;
        let mut army = [0; 2];
        for (row, text) in rows.iter().enumerate() {
            let rank = rank_max - row as u8;
            let mut file = 0u8;
            let mut digits = String::new();
            let flush = |digits: &mut String, file: &mut u8, squares: &mut Vec<Square>| {
                let run: u8 = digits.parse().unwrap_or(0);
                for _ in 0..run {
                    squares.extend(Square::new(*file, rank));
                    *file += 1;
                }
                digits.clear();
            };
            for c in text.chars() {
                if c.is_ascii_digit() {
                    digits.push(c);
                    continue;
                }
                flush(&mut digits, &mut file, &mut all_squares);
                let square = Square::new(file, rank).expect("start FEN fits the largest board");
                if c == '*' {
                    template[square.cell()] = cell::HOLE;
                } else {
                    all_squares.push(square);
                    let color = if c.is_ascii_uppercase() { 0 } else { 1 };
                    army[color] += 1;
                }
                file += 1;
            }
            flush(&mut digits, &mut file, &mut all_squares);
            width = width.max(file);
        }
        for square in &all_squares {
            template[square.cell()] = cell::EMPTY;
        }
        let drops = variant == InsaneNinjaDrops;
        if drops {
            army = [army[0] + 4, army[1] + 4];
        }

        let (pawn, last_rank, start_rank, centre_rank) = match variant {
            Chess | Palace | PalaceScepter => (PawnKind::Orthodox, [8, 1], [2, 7], [0, 0]),
            Ninjutsu => (PawnKind::Sliding, [8, 1], [2, 7], [0, 0]),
            Asylum | AsylumFriendlyFire => (PawnKind::MultiStepFromStart, [10, 1], [2, 9], [0, 0]),
            InsaneNinja | InsaneNinja2 | InsaneNinjaDrops => {
                (PawnKind::MultiStepOwnHalf, [10, 1], [2, 9], [5, 6])
            }
        };
        let promotions = match variant {
            Chess => ORTHODOX_PROMOTIONS,
            Palace | PalaceScepter => PALACE_PROMOTIONS,
            Ninjutsu => NINJUTSU_PROMOTIONS,
            Asylum | AsylumFriendlyFire => ASYLUM_PROMOTIONS,
            InsaneNinja | InsaneNinjaDrops => INSANE_PROMOTIONS,
            InsaneNinja2 => INSANE2_PROMOTIONS,
        };
        let castling_rook = match variant {
            Asylum | AsylumFriendlyFire => Role::LoonyRook,
            _ => Role::Rook,
        };
        // King file, then per wing the options (Rook file, King to, Rook to), as letters.
        let (king_file, king_side, queen_side): (u8, CastleWing, CastleWing) = match variant {
            Chess | Palace | PalaceScepter => (b'e', &[(b'h', b'g', b'f')], &[(b'a', b'c', b'd')]),
            Asylum | AsylumFriendlyFire => (b'f', &[(b'j', b'i', b'h')], &[(b'a', b'c', b'd')]),
            InsaneNinja | InsaneNinja2 | InsaneNinjaDrops => (
                b'f',
                &[(b'i', b'g', b'f'), (b'i', b'h', b'g'), (b'i', b'i', b'h')],
                &[
                    (b'b', b'e', b'f'),
                    (b'b', b'd', b'e'),
                    (b'b', b'c', b'd'),
                    (b'b', b'b', b'c'),
                ],
            ),
            Ninjutsu => (0, &[], &[]),
        };
        let back_rank = [1, last_rank[0]];
        let mut castles = [Vec::new(), Vec::new()];
        let mut castle_keep = [0x0f; MAILBOX];
        for color in Color::ALL {
            let rank = back_rank[color.index()];
            let at = |file: u8| Square::new(file - b'a', rank).expect("castling squares exist");
            let (k_right, q_right) = match color {
                Color::White => (CASTLE_WHITE_KING, CASTLE_WHITE_QUEEN),
                Color::Black => (CASTLE_BLACK_KING, CASTLE_BLACK_QUEEN),
            };
            for (right, options) in [(k_right, king_side), (q_right, queen_side)] {
                for &(rook, king_to, rook_to) in options {
                    castles[color.index()].push(CastleOption {
                        right,
                        king_from: at(king_file),
                        rook_from: at(rook),
                        king_to: at(king_to),
                        rook_to: at(rook_to),
                    });
                    castle_keep[at(rook).cell()] &= !right;
                    castle_keep[at(king_file).cell()] &= !(k_right | q_right);
                }
            }
        }
        let (scepter, palace_promotion) = match variant {
            PalaceScepter => (
                [squares(&["d9", "e9"]), squares(&["d0", "e0"])],
                [SquareSet::EMPTY; 2],
            ),
            Ninjutsu => {
                let palaces = [squares(&["f8", "f7", "g7"]), squares(&["f1", "f2", "g2"])];
                (palaces, palaces)
            }
            _ => ([SquareSet::EMPTY; 2], [SquareSet::EMPTY; 2]),
        };
        Rules {
            variant,
            width,
            rank_min,
            rank_max,
            template,
            squares: all_squares,
            pawn,
            last_rank,
            start_rank,
            centre_rank,
            promotions,
            castling_rook,
            castles,
            castle_keep,
            scepter,
            palace_promotion,
            drops,
            friendly_fire: variant == AsylumFriendlyFire,
            army,
        }
    }

    /// The variant these rules belong to.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Files in the bounding rectangle.
    pub fn width(&self) -> u8 {
        self.width
    }

    /// Lowest and highest rank numbers of the bounding rectangle.
    pub fn rank_range(&self) -> (u8, u8) {
        (self.rank_min, self.rank_max)
    }

    /// Ranks in the bounding rectangle.
    pub fn height(&self) -> u8 {
        self.rank_max - self.rank_min + 1
    }

    /// Every square of the board (holes excluded), from the highest rank down.
    pub fn squares(&self) -> &[Square] {
        &self.squares
    }

    /// Whether `square` is a square of this board (not a hole, not outside).
    #[inline]
    pub fn is_square(&self, square: Square) -> bool {
        self.template[square.cell()] == cell::EMPTY
    }

    /// Whether `square` lies in the bounding rectangle but is not a square.
    pub fn is_hole(&self, square: Square) -> bool {
        self.template[square.cell()] == cell::HOLE
    }

    /// The roles a pawn may promote to (before the `ninjutsu` palace rule).
    pub fn promotions(&self) -> &'static [Role] {
        self.promotions
    }

    /// Whether Ninja Pawns are dropped from the hand.
    pub fn has_drops(&self) -> bool {
        self.drops
    }

    /// The rank a pawn of `color` promotes on.
    pub fn last_rank(&self, color: Color) -> u8 {
        self.last_rank[color.index()]
    }

    /// Every castling option of `color` as (King from, Rook from, King to, Rook to).
    pub fn castling_options(&self, color: Color) -> impl Iterator<Item = [Square; 4]> + '_ {
        self.castles[color.index()]
            .iter()
            .map(|c| [c.king_from, c.rook_from, c.king_to, c.rook_to])
    }

    /// Squares where a King of `color` wins at once (empty outside the scepter games).
    pub fn scepter_squares(&self, color: Color) -> Vec<Square> {
        self.squares
            .iter()
            .copied()
            .filter(|sq| self.scepter[color.index()].contains(sq.0))
            .collect()
    }

    /// The second rank of `color`, where Ninja Pawns are dropped.
    pub(crate) fn drop_rank(&self, color: Color) -> u8 {
        self.start_rank[color.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boards_have_the_documented_square_counts() {
        for variant in Variant::ALL {
            // An exhaustive match: a new variant cannot be skipped without a count.
            let count = match variant {
                Variant::Chess => 64,
                Variant::Palace | Variant::PalaceScepter => 68,
                Variant::Ninjutsu => 46,
                Variant::Asylum | Variant::AsylumFriendlyFire => 100,
                Variant::InsaneNinja | Variant::InsaneNinja2 | Variant::InsaneNinjaDrops => 104,
            };
            assert_eq!(variant.rules().squares().len(), count, "{variant}");
        }
        let palace = Variant::Palace.rules();
        assert!(palace.is_square(sq("d0")) && palace.is_hole(sq("c0")));
        let ninjutsu = Variant::Ninjutsu.rules();
        assert!(ninjutsu.is_square(sq("g2")) && ninjutsu.is_hole(sq("g1")));
        assert!(ninjutsu.is_hole(sq("f5")) && !ninjutsu.is_square(sq("h1")));
        assert_eq!((ninjutsu.width(), ninjutsu.height()), (7, 8));
        let insane = Variant::InsaneNinja.rules();
        assert_eq!(insane.rank_range(), (0, 11));
        assert!(insane.is_square(sq("f11")) && insane.is_hole(sq("g11")));
    }

    #[test]
    fn variant_ids_round_trip() {
        for v in Variant::ALL {
            assert_eq!(v.id().parse::<Variant>(), Ok(v));
        }
        assert!("shogi".parse::<Variant>().is_err());
    }
}
