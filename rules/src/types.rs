//! Small value types: colours, piece roles, pieces and squares.

use std::fmt;

/// A side: White moves up the board (towards higher ranks), Black down.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Color {
    White = 0,
    Black = 1,
}

impl Color {
    /// How many colours there are: the length of [`Color::ALL`] and of a [`ByColor`].
    pub const COUNT: usize = 2;

    /// Both colours, White first.
    pub const ALL: [Color; Color::COUNT] = [Color::White, Color::Black];

    /// The index (White 0, Black 1) used by per-colour arrays.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The other side.
    #[inline]
    pub const fn opponent(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// `'w'` or `'b'`, as in FEN.
    pub const fn fen_char(self) -> char {
        match self {
            Color::White => 'w',
            Color::Black => 'b',
        }
    }
}

impl std::ops::Not for Color {
    type Output = Color;
    #[inline]
    fn not(self) -> Color {
        self.opponent()
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Color::White => "white",
            Color::Black => "black",
        })
    }
}

/// A kind of piece, independent of colour. See RULES.md section 2.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
#[repr(u8)]
pub enum Role {
    King = 1,
    Queen = 2,
    Rook = 3,
    Bishop = 4,
    Knight = 5,
    Pawn = 6,
    /// `M`: steps one square in any direction, not royal.
    QueenGuard = 7,
    /// `G`: one diagonal step or a two-step diagonal ninja leap.
    NinjaGuard = 8,
    /// `W`: one orthogonal step or a two-step orthogonal ninja leap.
    NinjaWarrior = 9,
    /// `I`: one step or a two-step ninja leap in any of the 8 directions.
    InsaneNinja = 10,
    /// `J`: Insane Ninja plus Knight.
    InsaneNinjaKnight = 11,
    /// `L`: Ninja Guard plus Camel (1,3) leap.
    LeapingNinjaGuard = 12,
    /// `C`: Bishop plus Camel (1,3) leap.
    MadLeapingBishop = 13,
    /// `S`: the Asylum rook that fires through a piece (RULES.md section 3).
    LoonyRook = 14,
    /// `Y`: the droppable Ninja Pawn of `insane-ninja-drops`.
    NinjaPawn = 15,
}

impl Role {
    /// How many roles there are: the length of [`Role::ALL`] and of a [`ByRole`]. Codes
    /// (the enum's discriminants) run from 1 to `COUNT`.
    pub const COUNT: usize = 15;

    /// Every role, in code order.
    pub const ALL: [Role; Role::COUNT] = [
        Role::King,
        Role::Queen,
        Role::Rook,
        Role::Bishop,
        Role::Knight,
        Role::Pawn,
        Role::QueenGuard,
        Role::NinjaGuard,
        Role::NinjaWarrior,
        Role::InsaneNinja,
        Role::InsaneNinjaKnight,
        Role::LeapingNinjaGuard,
        Role::MadLeapingBishop,
        Role::LoonyRook,
        Role::NinjaPawn,
    ];

    /// Zero-based index into [`Role::ALL`], for per-role arrays.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize - 1
    }

    /// The upper-case FEN letter.
    pub const fn upper_char(self) -> char {
        match self {
            Role::King => 'K',
            Role::Queen => 'Q',
            Role::Rook => 'R',
            Role::Bishop => 'B',
            Role::Knight => 'N',
            Role::Pawn => 'P',
            Role::QueenGuard => 'M',
            Role::NinjaGuard => 'G',
            Role::NinjaWarrior => 'W',
            Role::InsaneNinja => 'I',
            Role::InsaneNinjaKnight => 'J',
            Role::LeapingNinjaGuard => 'L',
            Role::MadLeapingBishop => 'C',
            Role::LoonyRook => 'S',
            Role::NinjaPawn => 'Y',
        }
    }

    /// The lower-case letter, as used for promotion suffixes.
    pub const fn lower_char(self) -> char {
        self.upper_char().to_ascii_lowercase()
    }

    /// The role for a FEN letter of either case.
    pub fn from_char(c: char) -> Option<Role> {
        let upper = c.to_ascii_uppercase();
        Role::ALL.into_iter().find(|r| r.upper_char() == upper)
    }

    /// The English name, as on the source pages.
    pub const fn name(self) -> &'static str {
        match self {
            Role::King => "King",
            Role::Queen => "Queen",
            Role::Rook => "Rook",
            Role::Bishop => "Bishop",
            Role::Knight => "Knight",
            Role::Pawn => "Pawn",
            Role::QueenGuard => "Queen Guard",
            Role::NinjaGuard => "Ninja Guard",
            Role::NinjaWarrior => "Ninja Warrior",
            Role::InsaneNinja => "Insane Ninja",
            Role::InsaneNinjaKnight => "Insane Ninja Knight",
            Role::LeapingNinjaGuard => "Leaping Ninja Guard",
            Role::MadLeapingBishop => "Mad Leaping Bishop",
            Role::LoonyRook => "Super Loony Rook",
            Role::NinjaPawn => "Ninja Pawn",
        }
    }

    #[inline]
    pub(crate) fn from_code(code: u8) -> Role {
        debug_assert!((1..=Role::COUNT).contains(&(code as usize)));
        Role::ALL[(code - 1) as usize]
    }
}

// `Role::index` and `Role::from_code` rely on `ALL` listing the codes 1, 2, … in order.
const _: () = {
    let mut i = 0;
    while i < Role::COUNT {
        assert!(
            Role::ALL[i] as usize == i + 1,
            "Role::ALL must be in code order"
        );
        i += 1;
    }
};

/// A set of roles: one bit per role code (bit 0 unused), so that the role field of a mailbox
/// cell tests membership with one shift.
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
pub(crate) struct RoleSet(u32);

const _: () = assert!(
    Role::COUNT < u32::BITS as usize,
    "role codes must fit a RoleSet"
);

impl RoleSet {
    pub const fn of(roles: &[Role]) -> RoleSet {
        let mut bits = 0;
        let mut i = 0;
        while i < roles.len() {
            bits |= 1 << roles[i] as u32;
            i += 1;
        }
        RoleSet(bits)
    }

    #[inline]
    pub const fn union(self, other: RoleSet) -> RoleSet {
        RoleSet(self.0 | other.0)
    }

    #[inline]
    pub const fn intersects(self, other: RoleSet) -> bool {
        self.0 & other.0 != 0
    }

    #[inline]
    pub const fn contains(self, role: Role) -> bool {
        self.contains_code(role as u8)
    }

    /// Whether the role with this code (a cell's role field) is in the set; codes outside
    /// `1..=Role::COUNT` are not.
    #[inline]
    pub const fn contains_code(self, code: u8) -> bool {
        code < u32::BITS as u8 && (self.0 >> code) & 1 != 0
    }

    #[inline]
    pub fn insert(&mut self, role: Role) {
        self.0 |= 1 << role as u32;
    }

    #[inline]
    pub fn remove(&mut self, role: Role) {
        self.0 &= !(1 << role as u32);
    }
}

/// A fixed-size table with one entry per member of a small enum (`$key::ALL` in order, indexed
/// by `$key::index`): `ByColor` and `ByRole` share this one definition.
macro_rules! table_by {
    ($(#[$doc:meta])* $name:ident, $key:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
        pub struct $name<T>([T; $key::COUNT]);

        impl<T> $name<T> {
            #[doc = concat!("A table holding `f(key)` for every [`", stringify!($key), "`].")]
            pub fn new(f: impl FnMut($key) -> T) -> $name<T> {
                $name($key::ALL.map(f))
            }

            #[doc = concat!("Entries with their keys, in [`", stringify!($key), "::ALL`] order.")]
            pub fn iter(&self) -> impl Iterator<Item = ($key, &T)> + '_ {
                $key::ALL.into_iter().zip(&self.0)
            }

            /// The table of `f(entry)`.
            pub fn map<U>(self, f: impl FnMut(T) -> U) -> $name<U> {
                $name(self.0.map(f))
            }
        }

        impl<T> IntoIterator for $name<T> {
            type Item = ($key, T);
            type IntoIter = std::iter::Zip<
                std::array::IntoIter<$key, { $key::COUNT }>,
                std::array::IntoIter<T, { $key::COUNT }>,
            >;

            /// The entries with their keys, in the order of `iter`.
            fn into_iter(self) -> Self::IntoIter {
                $key::ALL.into_iter().zip(self.0)
            }
        }

        impl<T> std::ops::Index<$key> for $name<T> {
            type Output = T;
            #[inline]
            fn index(&self, key: $key) -> &T {
                &self.0[key.index()]
            }
        }

        impl<T> std::ops::IndexMut<$key> for $name<T> {
            #[inline]
            fn index_mut(&mut self, key: $key) -> &mut T {
                &mut self.0[key.index()]
            }
        }
    };
}

table_by! {
    /// One value per colour, indexed by [`Color`].
    ///
    /// ```
    /// use ninjazero_rules::{ByColor, ByRole, Color, Position, Role, Variant};
    ///
    /// let material: ByColor<ByRole<u8>> = Position::start(Variant::Chess).material();
    /// assert_eq!(material[Color::Black][Role::Pawn], 8);
    /// let pieces = material.map(|side| side.iter().map(|(_, &n)| u32::from(n)).sum::<u32>());
    /// assert_eq!(pieces, ByColor::new(|_| 16));
    /// ```
    ByColor,
    Color
}

table_by! {
    /// One value per piece role, indexed by [`Role`]: per-role tables are sized by
    /// [`Role::COUNT`], so a new role needs no table resized by hand.
    ///
    /// ```
    /// use ninjazero_rules::{ByRole, Role};
    ///
    /// let mut letters = ByRole::new(Role::upper_char);
    /// assert_eq!(letters[Role::Knight], 'N');
    /// letters[Role::Knight] = '?';
    /// let lower = letters.map(|c| c.to_ascii_lowercase());
    /// assert_eq!(lower.iter().nth(4), Some((Role::Knight, &'?')));
    /// assert_eq!(lower.iter().next(), Some((Role::King, &'k')));
    /// ```
    ByRole,
    Role
}

/// A coloured piece.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Piece {
    pub color: Color,
    pub role: Role,
}

impl Piece {
    /// The FEN letter: upper case for White, lower case for Black.
    pub fn char(self) -> char {
        match self.color {
            Color::White => self.role.upper_char(),
            Color::Black => self.role.lower_char(),
        }
    }

    /// The piece for a FEN letter.
    pub fn from_char(c: char) -> Option<Piece> {
        let role = Role::from_char(c)?;
        let color = if c.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        Some(Piece { color, role })
    }
}

/// The largest file count of any variant (Asylum and Insane Ninja are 10 wide).
pub const MAX_FILES: u8 = 10;
/// The largest rank number plus one (Insane Ninja has ranks 0 to 11).
pub const MAX_RANKS: u8 = 12;

/// Internal board layout: a 16x16 mailbox with the file at column `file + 3` and the rank at
/// row `rank + 2`. The padding is wide enough that every step, leap and camel jump from a
/// real square lands on a padding cell or a real cell (with `u8` wrap-around for the top and
/// bottom rows), so move generation needs no bounds checks.
pub(crate) const MAILBOX: usize = 256;

/// A square on the largest board (files a-j, ranks 0-11). Whether it exists in a given
/// variant is a property of the variant's board.
///
/// ```
/// use ninjazero_rules::Square;
/// let sq: Square = "e10".parse().unwrap();
/// assert_eq!((sq.file(), sq.rank()), (4, 10));
/// assert_eq!(sq.to_string(), "e10");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(pub(crate) u8);

impl Square {
    /// The square at a zero-based file (a = 0) and a rank number (as written: 0 to 11).
    pub const fn new(file: u8, rank: u8) -> Option<Square> {
        if file < MAX_FILES && rank < MAX_RANKS {
            Some(Square((rank + 2) * 16 + file + 3))
        } else {
            None
        }
    }

    /// Zero-based file: a = 0 … j = 9.
    #[inline]
    pub const fn file(self) -> u8 {
        (self.0 & 15) - 3
    }

    /// The rank number as written in square names (0 to 11).
    #[inline]
    pub const fn rank(self) -> u8 {
        (self.0 >> 4) - 2
    }

    /// A dense index `rank * 10 + file` in `0..120`, for tables and tensors.
    #[inline]
    pub const fn index(self) -> usize {
        self.rank() as usize * MAX_FILES as usize + self.file() as usize
    }

    /// The inverse of [`Square::index`].
    pub const fn from_index(index: usize) -> Option<Square> {
        if index < (MAX_FILES as usize * MAX_RANKS as usize) {
            Square::new(
                (index % MAX_FILES as usize) as u8,
                (index / MAX_FILES as usize) as u8,
            )
        } else {
            None
        }
    }

    #[inline]
    pub(crate) const fn cell(self) -> usize {
        self.0 as usize
    }

    #[inline]
    pub(crate) const fn offset(self, delta: i8) -> u8 {
        self.0.wrapping_add(delta as u8)
    }

    /// Parses a square name from the start of `text`, returning it and the bytes consumed.
    pub(crate) fn parse_prefix(text: &str) -> Option<(Square, usize)> {
        let bytes = text.as_bytes();
        let file = bytes.first()?.wrapping_sub(b'a');
        let digits = bytes[1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits > 2 || (digits == 2 && bytes[1] == b'0') {
            return None;
        }
        let rank: u8 = text[1..1 + digits].parse().ok()?;
        Some((Square::new(file, rank)?, 1 + digits))
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'a' + self.file()) as char, self.rank())
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Error for a string that is not a square name (`a0` … `j11`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a square name (files a-j, ranks 0-11)")]
pub struct ParseSquareError(pub String);

impl std::str::FromStr for Square {
    type Err = ParseSquareError;
    fn from_str(s: &str) -> Result<Square, ParseSquareError> {
        match Square::parse_prefix(s) {
            Some((sq, used)) if used == s.len() => Ok(sq),
            _ => Err(ParseSquareError(s.to_string())),
        }
    }
}

/// Cell contents in the mailbox: 0 is empty, a piece is `role | colour bit`, and the two
/// non-square kinds have the high bit set so that one mask test rejects both.
pub(crate) mod cell {
    use super::{Color, Piece, Role};

    pub const EMPTY: u8 = 0;
    pub const HOLE: u8 = 0x80;
    pub const OFF: u8 = 0x81;
    pub const NOT_SQUARE: u8 = 0x80;
    pub const ROLE_MASK: u8 = 0x1f;

    const _: () = assert!(
        Role::COUNT <= ROLE_MASK as usize,
        "role codes must fit a cell"
    );

    #[inline]
    pub const fn color_bit(color: Color) -> u8 {
        0x20 << color as u8
    }

    #[inline]
    pub const fn piece(color: Color, role: Role) -> u8 {
        color_bit(color) | role as u8
    }

    #[inline]
    pub const fn is_piece(c: u8) -> bool {
        c != EMPTY && c & NOT_SQUARE == 0
    }

    #[inline]
    pub fn role_of(c: u8) -> Role {
        Role::from_code(c & ROLE_MASK)
    }

    #[inline]
    pub const fn color_of(c: u8) -> Color {
        if c & 0x40 != 0 {
            Color::Black
        } else {
            Color::White
        }
    }

    pub fn decode(c: u8) -> Option<Piece> {
        is_piece(c).then(|| Piece {
            color: color_of(c),
            role: role_of(c),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_names_round_trip() {
        for index in 0..120 {
            let sq = Square::from_index(index).unwrap();
            assert_eq!(sq.index(), index);
            assert_eq!(sq.to_string().parse::<Square>().unwrap(), sq);
        }
        assert!("k1".parse::<Square>().is_err());
        assert!("a12".parse::<Square>().is_err());
        assert!("a01".parse::<Square>().is_err());
        assert!("a".parse::<Square>().is_err());
    }

    #[test]
    fn role_sets_hold_every_role_and_only_real_codes() {
        let mut set = RoleSet::default();
        for role in Role::ALL {
            assert!(!set.contains(role));
            set.insert(role);
            assert!(set.contains(role) && set.contains_code(role as u8));
        }
        assert_eq!(set, RoleSet::of(&Role::ALL));
        assert!(!set.contains_code(0) && !set.contains_code(Role::COUNT as u8 + 1));
        assert!(!set.contains_code(cell::ROLE_MASK));
        set.remove(Role::Knight);
        assert!(!set.contains(Role::Knight) && set.contains(Role::Bishop));
        assert!(!RoleSet::of(&[Role::Knight]).intersects(set));
        let both = RoleSet::of(&[Role::Knight]).union(RoleSet::of(&[Role::Pawn]));
        assert!(both.intersects(set) && both.contains(Role::Knight));
    }

    #[test]
    fn tables_are_indexed_by_their_keys_in_order() {
        let codes = ByRole::new(|role| role as u8);
        assert!(codes.iter().all(|(role, &code)| code == role as u8));
        assert_eq!(codes.iter().count(), Role::COUNT);
        let sides = ByColor::new(Color::fen_char);
        assert_eq!((sides[Color::White], sides[Color::Black]), ('w', 'b'));
        assert_eq!(sides.map(|c| c.to_ascii_uppercase())[Color::Black], 'B');
    }
}
