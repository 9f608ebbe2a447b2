//! The worked examples of the inventor's pages (shared/seeds/*.txt), rebuilt as positions
//! and checked against RULES.md (which is binding where the pages are vague). Each test
//! asserts the exact set of legal moves of the example piece, and the pieces a capture
//! removes. Where a page's diagram is not in the text, only the pieces the text names are
//! placed, with both Kings far away.

use ninjazero_rules::{Color, Outcome, Position, Square, Termination, Variant};

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn sq(name: &str) -> Square {
    name.parse()
        .unwrap_or_else(|e| panic!("bad square {name}: {e}"))
}

/// Bounding rectangle of each board as (files, lowest rank, highest rank), written out
/// from RULES.md section 1 independently of the engine's tables.
fn geometry(v: Variant) -> (u8, u8, u8) {
    use Variant::*;
    match v {
        Chess => (8, 1, 8),
        Palace | PalaceScepter => (8, 0, 9),
        Ninjutsu => (7, 1, 8),
        Asylum | AsylumFriendlyFire => (10, 1, 10),
        InsaneNinja | InsaneNinja2 | InsaneNinjaDrops => (10, 0, 11),
    }
}

/// Whether (file, rank) is a square (not a hole) of the variant's board (RULES.md 1).
fn on_board(v: Variant, file: u8, rank: u8) -> bool {
    use Variant::*;
    let (width, lo, hi) = geometry(v);
    if file >= width || rank < lo || rank > hi {
        return false;
    }
    match v {
        Chess | Asylum | AsylumFriendlyFire => true,
        // d0, e0, d9, e9 only on the protruding ranks.
        Palace | PalaceScepter => !(rank == 0 || rank == 9) || file == 3 || file == 4,
        // a1-e8 plus f1, f2, g2, f7, f8, g7.
        Ninjutsu => match file {
            0..=4 => true,
            5 => matches!(rank, 1 | 2 | 7 | 8),
            _ => matches!(rank, 2 | 7),
        },
        // e0, f0, e11, f11 only on the protruding ranks.
        InsaneNinja | InsaneNinja2 | InsaneNinjaDrops => {
            !(rank == 0 || rank == 11) || file == 4 || file == 5
        }
    }
}

/// The FEN board field for pieces given as "Kf1 pe7 ..." (letter + square).
fn board(v: Variant, pieces: &str) -> String {
    let placed: Vec<(Square, char)> = pieces
        .split_whitespace()
        .map(|t| (sq(&t[1..]), t.chars().next().unwrap()))
        .collect();
    for &(s, c) in &placed {
        assert!(
            on_board(v, s.file(), s.rank()),
            "{c}{s} is not on the {v} board"
        );
    }
    let (width, lo, hi) = geometry(v);
    let mut rows = Vec::new();
    for rank in (lo..=hi).rev() {
        let mut row = String::new();
        let mut run = 0;
        for file in 0..width {
            let content = if !on_board(v, file, rank) {
                Some('*')
            } else {
                placed
                    .iter()
                    .find(|(s, _)| s.file() == file && s.rank() == rank)
                    .map(|&(_, c)| c)
            };
            match content {
                None => run += 1,
                Some(c) => {
                    if run > 0 {
                        row += &run.to_string();
                        run = 0;
                    }
                    row.push(c);
                }
            }
        }
        if run > 0 {
            row += &run.to_string();
        }
        rows.push(row);
    }
    rows.join("/")
}

/// A position from a piece list and the remaining FEN fields (a hand in brackets first,
/// for `insane-ninja-drops`).
fn setup(v: Variant, pieces: &str, rest: &str) -> Position {
    let sep = if rest.starts_with('[') { "" } else { " " };
    let fen = format!("{}{sep}{rest}", board(v, pieces));
    Position::from_fen(v, &fen).unwrap_or_else(|e| panic!("{v}: {fen}: {e}"))
}

/// The sorted texts of the legal moves whose `from` square is `from` (for a drop, `from`
/// is the drop square on the second rank).
fn moves_from(pos: &Position, from: &str) -> Vec<String> {
    let from = sq(from);
    let mut moves: Vec<String> = pos
        .legal_moves()
        .iter()
        .filter(|m| m.from == from)
        .map(|m| m.to_string())
        .collect();
    moves.sort();
    moves
}

fn sorted(expected: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

/// Asserts the exact legal moves from `from`.
fn expect_moves(pos: &Position, from: &str, expected: &[&str]) {
    assert_eq!(
        moves_from(pos, from),
        sorted(expected),
        "legal moves from {from} in {} ({})",
        pos.to_fen(),
        pos.variant()
    );
}

/// Asserts the exact set of all legal moves.
fn expect_all_moves(pos: &Position, expected: &[&str]) {
    let mut all: Vec<String> = pos.legal_moves().iter().map(|m| m.to_string()).collect();
    all.sort();
    assert_eq!(all, sorted(expected), "all legal moves in {}", pos.to_fen());
}

fn all_drops(pos: &Position) -> Vec<String> {
    let mut v: Vec<String> = pos
        .legal_moves()
        .iter()
        .filter(|m| m.is_drop())
        .map(|m| m.to_string())
        .collect();
    v.sort();
    v
}

fn play(pos: &Position, text: &str) -> Position {
    let m = pos
        .parse_move(text)
        .unwrap_or_else(|e| panic!("{text} in {}: {e}", pos.to_fen()));
    assert_eq!(m.to_string(), text);
    pos.play(m).unwrap()
}

fn at(pos: &Position, square: &str) -> Option<char> {
    pos.piece_at(sq(square)).map(|p| p.char())
}

/// Asserts the contents of squares after a move: `'.'` for an empty square.
fn expect_board(pos: &Position, contents: &[(&str, char)]) {
    for &(square, c) in contents {
        let want = if c == '.' { None } else { Some(c) };
        assert_eq!(at(pos, square), want, "{square} in {}", pos.to_fen());
    }
}

fn ep_field(pos: &Position) -> String {
    pos.to_fen().split_whitespace().nth(3).unwrap().to_string()
}

fn castling_field(pos: &Position) -> String {
    pos.to_fen().split_whitespace().nth(2).unwrap().to_string()
}

fn scepter_win(color: Color) -> Option<Outcome> {
    Some(Outcome {
        winner: Some(color),
        termination: Termination::Scepter,
    })
}

// ---------------------------------------------------------------------------------------
// 1. Insane Ninja (seed 000)
// ---------------------------------------------------------------------------------------

/// Seed 000: "The Insane Ninja on d4 can capture all the pieces in the diagram ... capture
/// the pawn on d5 by moving to that square or capture both pawns on d5 and d6 by jumping to
/// d6. It can capture the knight on b4 by jumping over the pawn at c4. It can capture the
/// rook at e4 by moving to e4 or leaping to f4. ... it must capture the rook if it jumps to
/// f4."
#[test]
fn insane_ninja_on_d4() {
    let v = Variant::InsaneNinja;
    let pos = setup(v, "Ka1 Id4 pd5 pd6 nb4 pc4 re4 kj10", "w - - 0 1");
    expect_moves(
        &pos,
        "d4",
        &[
            "d4c3", "d4d3", "d4e3", "d4c4", "d4e4", "d4c5", "d4d5", "d4e5", // steps
            "d4d6", "d4d2", "d4f4", "d4b4", "d4f6", "d4b6", "d4f2", "d4b2", // leaps
        ],
    );
    let p = play(&pos, "d4d6");
    expect_board(&p, &[("d4", '.'), ("d5", '.'), ("d6", 'I')]);
    let p = play(&pos, "d4d5");
    expect_board(&p, &[("d5", 'I'), ("d6", 'p')]);
    let p = play(&pos, "d4b4");
    expect_board(&p, &[("c4", '.'), ("b4", 'I')]);
    let p = play(&pos, "d4f4");
    expect_board(&p, &[("e4", '.'), ("f4", 'I')]);
    let p = play(&pos, "d4e4");
    expect_board(&p, &[("e4", 'I'), ("f4", '.')]);
    let p = play(&pos, "d4d2");
    expect_board(&p, &[("d3", '.'), ("d2", 'I')]);
}

/// RULES.md 2, the ninja leap: "it cannot be blocked ... Interposing on m never parries
/// it." Black King d6 is checked by the leap d4-d6; the Knight may not interpose on d5.
#[test]
fn insane_ninja_leap_check_cannot_be_blocked() {
    let pos = setup(Variant::InsaneNinja, "Ka1 Id4 kd6 nb6", "b - - 0 1");
    assert!(pos.is_check());
    expect_all_moves(&pos, &["d6c6", "d6c7", "d6d7", "d6e6", "d6e7"]);
}

// ---------------------------------------------------------------------------------------
// 2. Leaping Ninja Guard (seed 000)
// ---------------------------------------------------------------------------------------

/// Seed 000: "The Ninja Guard on d5 can capture all the pieces in the diagram ... capture
/// the pawn on c4 by moving to that square or capture both pawns on c4 and b3 by jumping to
/// b3. It can capture the knight on f7 by jumping over the pawn at e6. It can capture the
/// rook at e4 by moving to e4 or leaping to f3." Plus the (3,1) leaps, which "only capture
/// one piece on the square it lands" (an extra black pawn on g6 shows that).
#[test]
fn leaping_ninja_guard_on_d5() {
    let v = Variant::InsaneNinja;
    let pos = setup(v, "Ka1 Ld5 pc4 pb3 pe6 nf7 re4 pg6 kj10", "w - - 0 1");
    expect_moves(
        &pos,
        "d5",
        &[
            "d5c4", "d5e4", "d5c6", "d5e6", // diagonal steps
            "d5b3", "d5f3", "d5f7", "d5b7", // diagonal ninja leaps
            "d5e8", "d5e2", "d5c8", "d5c2", "d5g6", "d5g4", "d5a6", "d5a4", // camel
        ],
    );
    let p = play(&pos, "d5b3");
    expect_board(&p, &[("c4", '.'), ("b3", 'L')]);
    let p = play(&pos, "d5f7");
    expect_board(&p, &[("e6", '.'), ("f7", 'L')]);
    let p = play(&pos, "d5f3");
    expect_board(&p, &[("e4", '.'), ("f3", 'L')]);
    let p = play(&pos, "d5c4");
    expect_board(&p, &[("c4", 'L'), ("b3", 'p')]);
    // The camel leap captures only on its landing square.
    let p = play(&pos, "d5g6");
    expect_board(&p, &[("g6", 'L'), ("e6", 'p'), ("f7", 'n'), ("e4", 'r')]);
    assert_eq!(p.pieces().count(), pos.pieces().count() - 1);
}

// ---------------------------------------------------------------------------------------
// 3. Ninja Guard (seed 001, palace)
// ---------------------------------------------------------------------------------------

/// Seed 001: "The Ninja Guard on d4 ... can capture the pawn on b6 by jumping over the
/// knight at c5. It can capture the knight on c3 by moving to c3 or by jumping over the
/// knight and landing on b2. It can capture the rook on e5 by moving to e5 or it can
/// capture both the rook and the pawn by jumping over to f6." And "It can leap over a
/// diagonally adjacent friendly piece" (second position, a white pawn on e3).
#[test]
fn palace_ninja_guard_on_d4() {
    let v = Variant::Palace;
    let pos = setup(v, "Kh1 Gd4 pb6 nc5 nc3 re5 pf6 kh8", "w - - 0 1");
    expect_moves(
        &pos,
        "d4",
        &[
            "d4b2", "d4b6", "d4c3", "d4c5", "d4e3", "d4e5", "d4f2", "d4f6",
        ],
    );
    let p = play(&pos, "d4b6");
    expect_board(&p, &[("c5", '.'), ("b6", 'G')]);
    let p = play(&pos, "d4b2");
    expect_board(&p, &[("c3", '.'), ("b2", 'G')]);
    let p = play(&pos, "d4c3");
    expect_board(&p, &[("c3", 'G'), ("b2", '.')]);
    let p = play(&pos, "d4f6");
    expect_board(&p, &[("e5", '.'), ("f6", 'G')]);
    let p = play(&pos, "d4e5");
    expect_board(&p, &[("e5", 'G'), ("f6", 'p')]);

    let pos = setup(v, "Kh1 Gd4 Pe3 pb6 nc5 nc3 re5 pf6 kh8", "w - - 0 1");
    expect_moves(
        &pos,
        "d4",
        &["d4b2", "d4b6", "d4c3", "d4c5", "d4e5", "d4f2", "d4f6"],
    );
    let p = play(&pos, "d4f2");
    expect_board(&p, &[("e3", 'P'), ("f2", 'G')]);
}

// ---------------------------------------------------------------------------------------
// 4. Ninjutsu (seed 002)
// ---------------------------------------------------------------------------------------

/// Seed 002: "The Ninja Guard on c4 ... can capture the pawn on a6 by jumping over the
/// knight at b5. It can capture the pawn on b3 by moving to b3 or by jumping over the pawn
/// and landing on a2. It can capture the knight on d5 by moving to d5 or it can capture both
/// the knight and the pawn by jumping over to e6."
#[test]
fn ninjutsu_ninja_guard_on_c4() {
    let pos = setup(
        Variant::Ninjutsu,
        "Ka1 Gc4 nb5 pa6 pb3 nd5 pe6 ka8",
        "w - - 0 1",
    );
    expect_moves(
        &pos,
        "c4",
        &[
            "c4a2", "c4a6", "c4b3", "c4b5", "c4d3", "c4d5", "c4e2", "c4e6",
        ],
    );
    let p = play(&pos, "c4a6");
    expect_board(&p, &[("b5", '.'), ("a6", 'G')]);
    let p = play(&pos, "c4a2");
    expect_board(&p, &[("b3", '.'), ("a2", 'G')]);
    let p = play(&pos, "c4e6");
    expect_board(&p, &[("d5", '.'), ("e6", 'G')]);
    let p = play(&pos, "c4d5");
    expect_board(&p, &[("d5", 'G'), ("e6", 'p')]);
}

/// Seed 002: "The Ninja Warrior on d4 ... can capture the pawn on d6 by jumping over the
/// knight at d5. It can capture the pawn on d3 by moving to d3 or by jumping over the pawn
/// and landing on d2. It can capture the knight on c4 by moving to c4 or ... both the knight
/// and the pawn by jumping over to b4." f4 is a hole, so there is no leap east.
#[test]
fn ninjutsu_ninja_warrior_on_d4() {
    let pos = setup(
        Variant::Ninjutsu,
        "Ka1 Wd4 nd5 pd6 pd3 nc4 pb4 ka8",
        "w - - 0 1",
    );
    expect_moves(
        &pos,
        "d4",
        &["d4b4", "d4c4", "d4d2", "d4d3", "d4d5", "d4d6", "d4e4"],
    );
    let p = play(&pos, "d4d6");
    expect_board(&p, &[("d5", '.'), ("d6", 'W')]);
    let p = play(&pos, "d4d2");
    expect_board(&p, &[("d3", '.'), ("d2", 'W')]);
    let p = play(&pos, "d4b4");
    expect_board(&p, &[("c4", '.'), ("b4", 'W')]);
    let p = play(&pos, "d4c4");
    expect_board(&p, &[("c4", 'W'), ("b4", 'p')]);
}

/// RULES.md 1: "a leap may pass over a hole": a Ninja Guard on g2 leaps over the hole f3
/// to e4 (its other targets are holes or off the board).
#[test]
fn ninjutsu_leap_passes_over_a_hole() {
    let pos = setup(Variant::Ninjutsu, "Ka1 Gg2 kc6", "w - - 0 1");
    expect_moves(&pos, "g2", &["g2e4", "g2f1"]);
}

/// Seed 002: "The ninja guard or the ninja warrior promote to ... the Insane Ninja Knight
/// by landing on the opposite side's palace. E.g white can promote ninja piece to insane
/// ninja knight by landing it on f8,f7,or g7"; RULES.md 5.
#[test]
fn ninjutsu_palace_promotes_ninjas() {
    let pos = setup(Variant::Ninjutsu, "Ka1 Ge6 We7 kc3", "w - - 0 1");
    expect_moves(&pos, "e6", &["e6c4", "e6c8", "e6d5", "e6d7", "e6f7"]);
    expect_moves(
        &pos,
        "e7",
        &["e7c7", "e7d7", "e7e5", "e7e8", "e7f7", "e7g7"],
    );
    let p = play(&pos, "e6f7");
    expect_board(&p, &[("e6", '.'), ("f7", 'J')]);
    let p = play(&pos, "e7g7");
    expect_board(&p, &[("e7", '.'), ("f7", '.'), ("g7", 'J')]);
    let p = play(&pos, "e7f7");
    expect_board(&p, &[("f7", 'J')]);
    let p = play(&pos, "e7e8");
    expect_board(&p, &[("e8", 'W')]);
    let p = play(&p, "c3b3");
    let p = play(&p, "e8f8");
    expect_board(&p, &[("f8", 'J')]);

    // Black's Ninjas become Insane Ninja Knights in White's palace (f1, f2, g2).
    let pos = setup(Variant::Ninjutsu, "Ka8 ge3 we2 kc6", "b - - 0 1");
    expect_board(&play(&pos, "e3f2"), &[("e3", '.'), ("f2", 'j')]);
    expect_board(&play(&pos, "e2g2"), &[("e2", '.'), ("g2", 'j')]);
    expect_board(&play(&pos, "e2f2"), &[("f2", 'j')]);
}

/// Seed 002: "Pawns promote on the last rank to Insane Ninja Knight, Queen Guard, Ninja
/// Warrior, Ninja Guard, or Knight"; RULES.md 5: on f8 only J, M or N.
#[test]
fn ninjutsu_pawn_promotion_choices() {
    let pos = setup(Variant::Ninjutsu, "Ka1 Pd7 Pf7 kc3", "w - - 0 1");
    expect_moves(&pos, "d7", &["d7d8g", "d7d8j", "d7d8m", "d7d8n", "d7d8w"]);
    expect_moves(&pos, "f7", &["f7f8j", "f7f8m", "f7f8n"]);
    assert!(pos.parse_move("f7f8g").is_err());
    assert!(pos.parse_move("f7f8w").is_err());
    expect_board(&play(&pos, "f7f8m"), &[("f8", 'M'), ("f7", '.')]);
    expect_board(&play(&pos, "f7f8j"), &[("f8", 'J')]);
    expect_board(&play(&pos, "d7d8g"), &[("d8", 'G')]);
}

// ---------------------------------------------------------------------------------------
// 5. Super Loony Rook (seed 004)
// ---------------------------------------------------------------------------------------

/// Seed 004: "the rook is threatening all the pieces shown, pinning the pawn at e3 and
/// giving check at g3 ... The black king must move to get out of the check or the bishop
/// can interpose at f3."
#[test]
fn loony_rook_check_through_pawn_and_pin() {
    let pos = setup(Variant::Asylum, "Sb3 pb5 nb7 pe3 kg3 bh1 Kj10", "b - - 0 1");
    assert!(pos.is_check());
    // The pawn e3 is pinned; f3/h3 stay on the line of fire; only Bf3 interposes.
    expect_moves(&pos, "e3", &[]);
    expect_all_moves(
        &pos,
        &["g3f2", "g3f4", "g3g2", "g3g4", "g3h2", "g3h4", "h1f3"],
    );
}

/// Seed 004: "If black interposes with bishop ..., white can capture the pawn at e3 and give
/// check through the bishop! ... it can also capture both pawn at e3 and interposing bishop
/// giving check, but then the king can capture the rook. Alternatively, if black moves the
/// king, then the rook can capture both pieces on b5 and b7." "The loony rook MUST capture
/// the piece at b5 to land on b6."
#[test]
fn loony_rook_fire_through_examples() {
    let pos = setup(Variant::Asylum, "Sb3 pb5 nb7 pe3 kg3 bh1 Kj10", "b - - 0 1");
    let after_bf3 = play(&pos, "h1f3");
    expect_moves(
        &after_bf3,
        "b3",
        &[
            "b3a3", "b3b1", "b3b2", "b3b4", "b3b5", "b3b6", "b3b7", "b3c3", "b3d3", "b3e3", "b3f3",
        ],
    );
    let p = play(&after_bf3, "b3e3");
    expect_board(&p, &[("b3", '.'), ("e3", 'S'), ("f3", 'b')]);
    assert!(p.is_check(), "check through the bishop");
    let p = play(&after_bf3, "b3f3");
    expect_board(&p, &[("e3", '.'), ("f3", 'S')]);
    assert!(p.is_check());
    assert!(moves_from(&p, "g3").contains(&"g3f3".to_string()));

    let after_kg2 = play(&pos, "g3g2");
    let p = play(&after_kg2, "b3b7");
    expect_board(&p, &[("b5", '.'), ("b6", '.'), ("b7", 'S')]);
    let p = play(&after_kg2, "b3b6");
    expect_board(&p, &[("b5", '.'), ("b6", 'S'), ("b7", 'n')]);
    let p = play(&after_kg2, "b3b5");
    expect_board(&p, &[("b5", 'S'), ("b7", 'n')]);
}

/// Seed 004: "you cannot interpose a piece if the rook directly checks a king"; RULES.md 3:
/// "the interposed piece would be fired through." Bishop (to b4) and pawn (to f4) can't help.
#[test]
fn loony_rook_direct_check_cannot_be_blocked() {
    let pos = setup(Variant::Asylum, "Sa4 kh4 be7 pf5 Kj10", "b - - 0 1");
    assert!(pos.is_check());
    expect_all_moves(&pos, &["h4g3", "h4g5", "h4h3", "h4h5", "h4i3", "h4i5"]);
}

/// Seed 004 (Friendly Fire): "the rook is giving check through its own piece! ... The black
/// king must move to get out of check." Without Friendly Fire the pawn is a wall.
#[test]
fn friendly_fire_check_through_own_piece() {
    let ff = setup(Variant::AsylumFriendlyFire, "Sb3 Pd3 kf3 Kj10", "b - - 0 1");
    assert!(ff.is_check());
    expect_moves(&ff, "f3", &["f3e2", "f3f2", "f3f4", "f3g2", "f3g4"]);

    let plain = setup(Variant::Asylum, "Sb3 Pd3 kf3 Kj10", "b - - 0 1");
    assert!(!plain.is_check());
    expect_moves(
        &plain,
        "f3",
        &["f3e2", "f3e3", "f3f2", "f3f4", "f3g2", "f3g3", "f3g4"],
    );
}

/// Seed 004 / RULES.md 3 (Friendly Fire): fire through one friendly piece and capture behind
/// it (d4f4), through a friendly and an enemy to an empty square (d4g4) but not on to a
/// third piece, through two own pieces to an empty square (d4d8, "fire through 2 of its own
/// pieces"), never through two enemies (no d4a4), and the own King is a wall (d2).
#[test]
fn friendly_fire_rook_lines() {
    let pieces = "Sd4 Pe4 nf4 ph4 bc4 nb4 Nd6 Bd7 pd9 Kd2 kj10";
    let ff = setup(Variant::AsylumFriendlyFire, pieces, "w - - 0 1");
    expect_moves(
        &ff,
        "d4",
        &["d4b4", "d4c4", "d4d3", "d4d5", "d4d8", "d4f4", "d4g4"],
    );
    expect_board(&play(&ff, "d4f4"), &[("e4", '.'), ("f4", 'S'), ("h4", 'p')]);
    expect_board(
        &play(&ff, "d4g4"),
        &[("e4", '.'), ("f4", '.'), ("g4", 'S'), ("h4", 'p')],
    );
    expect_board(
        &play(&ff, "d4d8"),
        &[("d6", '.'), ("d7", '.'), ("d8", 'S'), ("d9", 'p')],
    );
    expect_board(&play(&ff, "d4b4"), &[("c4", '.'), ("b4", 'S')]);

    let plain = setup(Variant::Asylum, pieces, "w - - 0 1");
    expect_moves(&plain, "d4", &["d4b4", "d4c4", "d4d3", "d4d5"]);
}

/// Seed 004 (Friendly Fire): "the white rook can capture the black queen by firing through
/// the white bishop (sacrificing it). However, the white rook after capturing the black
/// queen CANNOT give check to the black king because it has to fire through its own king."
/// RULES.md 3 also allows firing through the Bishop and the Queen to the empty f1 (a1f1).
#[test]
fn friendly_fire_captures_queen_but_not_through_own_king() {
    let pieces = "Sa1 Bc1 qe1 Kg1 ki1";
    let ff = setup(Variant::AsylumFriendlyFire, pieces, "w - - 0 1");
    assert!(ff.is_check());
    expect_all_moves(&ff, &["a1e1", "a1f1", "g1g2"]);
    let p = play(&ff, "a1e1");
    expect_board(&p, &[("a1", '.'), ("c1", '.'), ("e1", 'S'), ("g1", 'K')]);
    assert!(!p.is_check(), "no check through the own King");
    let p = play(&ff, "a1f1");
    expect_board(&p, &[("c1", '.'), ("e1", '.'), ("f1", 'S'), ("g1", 'K')]);
    assert!(!p.is_check());

    let plain = setup(Variant::Asylum, pieces, "w - - 0 1");
    expect_all_moves(&plain, &["g1g2"]);
}

// ---------------------------------------------------------------------------------------
// 6. Pawns
// ---------------------------------------------------------------------------------------

/// Seed 000: "The white pawn at f2 can start f2-f5 or it can move f2-f4 then f4-f5, or
/// f2-f3 followed by f3-f5"; RULES.md 4.2: "f4-f6 is not" legal; from the centre row on, 1.
#[test]
fn insane_ninja_pawn_steps() {
    let v = Variant::InsaneNinja;
    let cases: [(&str, &[&str]); 5] = [
        ("f2", &["f2f3", "f2f4", "f2f5"]),
        ("f3", &["f3f4", "f3f5"]),
        ("f4", &["f4f5"]),
        ("f5", &["f5f6"]),
        ("f7", &["f7f8"]),
    ];
    for (from, expected) in cases {
        let pos = setup(v, &format!("Ka1 ka10 P{from}"), "w - - 0 1");
        expect_moves(&pos, from, expected);
    }
    let cases: [(&str, &[&str]); 3] = [
        ("e9", &["e9e6", "e9e7", "e9e8"]),
        ("e7", &["e7e6"]),
        ("e6", &["e6e5"]),
    ];
    for (from, expected) in cases {
        let pos = setup(v, &format!("Ka1 ka10 p{from}"), "b - - 0 1");
        expect_moves(&pos, from, expected);
    }
}

/// Seed 000: "or move f2-g3 to capture enemy piece at g3 followed by g3-g5 next time it
/// moves."
#[test]
fn insane_ninja_pawn_keeps_multi_step_after_capture() {
    let pos = setup(Variant::InsaneNinja, "Ka1 ka10 Pf2 ng3", "w - - 0 1");
    expect_moves(&pos, "f2", &["f2f3", "f2f4", "f2f5", "f2g3"]);
    let p = play(&pos, "f2g3");
    let p = play(&p, "a10b10");
    expect_moves(&p, "g3", &["g3g4", "g3g5"]);
}

/// Seed 000: "White pawn on a2 black pawn on b4. If the white pawn moves from a2 to a4 or
/// a5, the black pawn on b4 can capture it as if it had moved to a3. Similarly, if the
/// black pawn is on b5 ... and the white pawn moves to a5 from a2 then the black pawn can
/// capture the white pawn as if it moved to a4." "The capture must be made on the next
/// move." RULES.md 8: the FEN lists `a3,a4`.
#[test]
fn insane_ninja_en_passant_from_a2() {
    let pos = setup(Variant::InsaneNinja, "Pa2 pb4 pb5 Kj1 kj10", "w - - 0 1");
    expect_moves(&pos, "a2", &["a2a3", "a2a4", "a2a5"]);

    let a5 = play(&pos, "a2a5");
    assert_eq!(ep_field(&a5), "a3,a4");
    expect_moves(&a5, "b4", &["b4a3", "b4b3"]);
    expect_moves(&a5, "b5", &["b5a4"]);
    let p = play(&a5, "b4a3");
    expect_board(&p, &[("a5", '.'), ("a4", '.'), ("a3", 'p'), ("b4", '.')]);
    let p = play(&a5, "b5a4");
    expect_board(&p, &[("a5", '.'), ("a4", 'p'), ("b5", '.'), ("b4", 'p')]);
    // Only on the next move.
    let later = play(&play(&a5, "j10i10"), "j1i1");
    assert_eq!(ep_field(&later), "-");
    expect_moves(&later, "b4", &["b4b3"]);
    expect_moves(&later, "b5", &[]);

    let a4 = play(&pos, "a2a4");
    assert_eq!(ep_field(&a4), "a3");
    expect_moves(&a4, "b4", &["b4a3", "b4b3"]);
    let p = play(&a4, "b4a3");
    expect_board(&p, &[("a4", '.'), ("a3", 'p')]);
}

/// Seed 000: "If a pawn slides forward 2 squares on its second move, it can also be captured
/// en passant ... white pawn on a3 and black pawn on b5. White plays a3-a5, black pawn on
/// b5 can capture the pawn en passant by moving to a4."
#[test]
fn insane_ninja_en_passant_from_a3() {
    let pos = setup(Variant::InsaneNinja, "Pa3 pb5 Kj1 kj10", "w - - 0 1");
    expect_moves(&pos, "a3", &["a3a4", "a3a5"]);
    let p = play(&pos, "a3a5");
    assert_eq!(ep_field(&p), "a4");
    expect_moves(&p, "b5", &["b5a4", "b5b4"]);
    let p = play(&p, "b5a4");
    expect_board(&p, &[("a5", '.'), ("a4", 'p')]);
}

/// Seed 004 rule 2: "The pawn can move from its original position either 1, 2 or 3 squares
/// forward. ... If a pawn moves 1 square forward from its original position, it loses its
/// ability to move more than 1 square"; rule 3 en passant over both passed squares.
#[test]
fn asylum_pawn_steps_and_en_passant() {
    let v = Variant::Asylum;
    let pos = setup(v, "Pc2 Pe3 ph9 pd5 Kj1 kj10", "w - - 0 1");
    expect_moves(&pos, "c2", &["c2c3", "c2c4", "c2c5"]);
    expect_moves(&pos, "e3", &["e3e4"]);

    let p = play(&pos, "c2c3");
    assert_eq!(ep_field(&p), "-");
    expect_moves(&p, "h9", &["h9h6", "h9h7", "h9h8"]);
    let p = play(&p, "h9h8");
    expect_moves(&p, "c3", &["c3c4"]);
    let p = play(&play(&p, "c3c4"), "j10i10");
    let p = play(&p, "j1i1");
    expect_moves(&p, "h8", &["h8h7"]);

    let p = play(&pos, "c2c5");
    assert_eq!(ep_field(&p), "c3,c4");
    expect_moves(&p, "d5", &["d5c4", "d5d4"]);
    let p = play(&p, "d5c4");
    expect_board(&p, &[("c5", '.'), ("c4", 'p'), ("d5", '.')]);
}

/// Seed 002: "the sliding pawn can, ... only if it is blocked, slide pass the enemy piece or
/// pawn with the same 1-step diagonal movement"; RULES.md 4.3: only when the square ahead
/// holds an ENEMY piece, onto an empty square; a friendly blocker gives no slide.
#[test]
fn ninjutsu_sliding_pawn() {
    let pos = setup(
        Variant::Ninjutsu,
        "Ka1 Pb4 pb5 na5 Pd4 Nd5 Pc2 ke8",
        "w - - 0 1",
    );
    expect_moves(&pos, "b4", &["b4a5", "b4c5"]); // capture a5, slide to c5
    expect_moves(&pos, "d4", &[]); // blocked by its own Knight
    expect_moves(&pos, "c2", &["c2c3", "c2c4"]); // not blocked: no slide
    let p = play(&pos, "b4c5");
    expect_board(&p, &[("b4", '.'), ("b5", 'p'), ("c5", 'P'), ("a5", 'n')]);
    assert_eq!(p.pieces().count(), pos.pieces().count());
}

/// RULES.md 4.3: "When that empty square is the en passant target, the move there is the en
/// passant capture; there is no separate sliding move to it."
#[test]
fn ninjutsu_slide_onto_en_passant_target_captures() {
    let pos = setup(Variant::Ninjutsu, "pc7 nb6 Pb5 Ka1 ke8", "b - - 0 1");
    let p = play(&pos, "c7c5");
    assert_eq!(ep_field(&p), "c6");
    expect_moves(&p, "b5", &["b5a6", "b5c6"]);
    let q = play(&p, "b5c6");
    expect_board(&q, &[("c5", '.'), ("c6", 'P'), ("b6", 'n')]);
}

/// Seed 000 (Ninja Pawn drops): "The square must be vacant to drop the pawn. You can
/// optionally move the pawn forward towards the center on the same move but you cannot make
/// a capture on the same move as the drop. You can however drop a pawn to check".
#[test]
fn ninja_pawn_drops_white() {
    let v = Variant::InsaneNinjaDrops;
    let pos = setup(v, "Ka1 Ng2 Nf3 ne5 kc6", "[Y] w - - 0 1");
    let mut expected = Vec::new();
    for file in ['a', 'b', 'c', 'd', 'h', 'i', 'j'] {
        for rank in 2..=5 {
            expected.push(format!("Y@{file}{rank}"));
        }
    }
    for s in ["Y@e2", "Y@e3", "Y@e4", "Y@f2"] {
        expected.push(s.to_string());
    }
    expected.sort();
    assert_eq!(all_drops(&pos), expected, "drops in {}", pos.to_fen());
    expect_moves(&pos, "e2", &["Y@e2", "Y@e3", "Y@e4"]);

    let p = play(&pos, "Y@e2");
    expect_board(&p, &[("e2", 'Y')]);
    assert_eq!(p.hand(Color::White), 0);
    let p = play(&pos, "Y@d5");
    expect_board(&p, &[("d2", '.'), ("d5", 'Y')]);
    assert!(p.is_check(), "a drop may give check (d5 attacks c6)");
    assert_eq!(p.hand(Color::White), 0);
}

/// RULES.md 8: "for Black, `Y@e7` drops on e9 and pushes it to e7".
#[test]
fn ninja_pawn_drops_black() {
    let pos = setup(Variant::InsaneNinjaDrops, "Ka1 kj10", "[y] b - - 0 1");
    expect_moves(&pos, "e9", &["Y@e6", "Y@e7", "Y@e8", "Y@e9"]);
    let p = play(&pos, "Y@e7");
    expect_board(&p, &[("e9", '.'), ("e8", '.'), ("e7", 'y')]);
    assert_eq!(p.hand(Color::Black), 0);
}

/// Seed 000: "The ninja pawn can always move 1 square up or 1 square sideways to an empty
/// square ... Like the standard pawn it can capture one square diagonally up ... When the
/// ninja pawn is on the top half of board (White rank 6 +...), it can also capture one square
/// horizontally." Promotion as the Pawn (RULES.md 4.4: Q R B N L I).
#[test]
fn ninja_pawn_moves() {
    let pos = setup(
        Variant::InsaneNinjaDrops,
        "Ka1 Yd3 nc4 be3 Yg7 ph7 nf8 Yb9 kj10",
        "[] w - - 0 1",
    );
    // Own half: forward up to the centre row, sideways only to an empty square.
    expect_moves(&pos, "d3", &["d3c3", "d3c4", "d3d4", "d3d5"]);
    // Enemy half: one step forward, sideways capture allowed.
    expect_moves(&pos, "g7", &["g7f7", "g7f8", "g7g8", "g7h7"]);
    expect_moves(
        &pos,
        "b9",
        &[
            "b9a9", "b9b10b", "b9b10i", "b9b10l", "b9b10n", "b9b10q", "b9b10r", "b9c9",
        ],
    );
    expect_board(&play(&pos, "g7h7"), &[("g7", '.'), ("h7", 'Y')]);
    expect_board(&play(&pos, "d3c4"), &[("d3", '.'), ("c4", 'Y')]);
}

/// Seed 000: "There is no en passant. It cannot capture another pawn or ninja pawn en
/// passant nor can any other pawn capture it this way."
#[test]
fn ninja_pawn_no_en_passant() {
    let v = Variant::InsaneNinjaDrops;
    // A Ninja Pawn's two-step move gives no en passant.
    let pos = setup(v, "Ka1 Yd3 pe5 kj10", "[] w - - 0 1");
    let p = play(&pos, "d3d5");
    assert_eq!(ep_field(&p), "-");
    expect_moves(&p, "e5", &["e5e4"]);
    // Nor does a drop pushed past an enemy pawn.
    let pos = setup(v, "Ka1 pe5 kj10", "[Y] w - - 0 1");
    let p = play(&pos, "Y@d5");
    assert_eq!(ep_field(&p), "-");
    expect_moves(&p, "e5", &["e5e4"]);
    // A Ninja Pawn never captures en passant (d7 is a target, yet no e6d7).
    let pos = setup(v, "Ka1 Ye6 pd9 kj10", "[] b - - 0 1");
    let p = play(&pos, "d9d6");
    assert_eq!(ep_field(&p), "d7,d8");
    expect_moves(&p, "e6", &["e6d6", "e6e7", "e6f6"]);
}

// ---------------------------------------------------------------------------------------
// 7. Castling
// ---------------------------------------------------------------------------------------

/// Seed 000: "There are 7 possible castling positions ... the rook must always be next to
/// the king after castling ... The insane ninja can remain at j1, j10, a10 or a1";
/// RULES.md 6: the 1-space option and the King step f1-g1 are different moves.
#[test]
fn insane_ninja_castling_options() {
    let pos = setup(
        Variant::InsaneNinja,
        "Ia1 Rb1 Kf1 Ri1 Ij1 kf10",
        "w KQ - 0 1",
    );
    expect_moves(
        &pos,
        "f1",
        &[
            "f1e0", "f1f0", "f1e1", "f1g1", "f1e2", "f1f2", "f1g2", // King steps
            "f1i1g1", "f1i1h1", "f1i1i1", "f1b1e1", "f1b1d1", "f1b1c1", "f1b1b1",
        ],
    );
    let step = pos.parse_move("f1g1").unwrap();
    let castle = pos.parse_move("f1i1g1").unwrap();
    assert_ne!(step, castle);
    let p = pos.play(step).unwrap();
    expect_board(&p, &[("f1", '.'), ("g1", 'K'), ("i1", 'R')]);
    assert_eq!(castling_field(&p), "-");
    let p = pos.play(castle).unwrap();
    expect_board(&p, &[("f1", 'R'), ("g1", 'K'), ("i1", '.'), ("j1", 'I')]);

    let cases = [
        ("f1i1h1", "h1", "g1", "i1"),
        ("f1i1i1", "i1", "h1", "f1"),
        ("f1b1e1", "e1", "f1", "b1"),
        ("f1b1d1", "d1", "e1", "b1"),
        ("f1b1c1", "c1", "d1", "b1"),
        ("f1b1b1", "b1", "c1", "f1"),
    ];
    for (text, king, rook, empty) in cases {
        let p = play(&pos, text);
        expect_board(&p, &[(king, 'K'), (rook, 'R'), (empty, '.'), ("a1", 'I')]);
        assert_eq!(castling_field(&p), "-", "{text}");
    }

    // Black mirrors White.
    let pos = setup(
        Variant::InsaneNinja,
        "ia10 rb10 kf10 ri10 ij10 Kf1",
        "b kq - 0 1",
    );
    expect_moves(
        &pos,
        "f10",
        &[
            "f10e11",
            "f10f11",
            "f10e10",
            "f10g10",
            "f10e9",
            "f10f9",
            "f10g9",
            "f10i10g10",
            "f10i10h10",
            "f10i10i10",
            "f10b10e10",
            "f10b10d10",
            "f10b10c10",
            "f10b10b10",
        ],
    );
    let p = play(&pos, "f10b10c10");
    expect_board(
        &p,
        &[("c10", 'k'), ("d10", 'r'), ("b10", '.'), ("a10", 'i')],
    );
}

/// Seed 000: "King cannot pass over or land on squares attacked by enemy, but rook can",
/// "cannot castle out of check". Black Rooks attack c1 and h1.
#[test]
fn insane_ninja_castling_through_attacked_squares() {
    let pos = setup(
        Variant::InsaneNinja,
        "Ia1 Rb1 Kf1 Ri1 Ij1 kf10 rc7 rh5",
        "w KQ - 0 1",
    );
    expect_moves(
        &pos,
        "f1",
        &[
            "f1e0", "f1f0", "f1e1", "f1g1", "f1e2", "f1f2", "f1g2", // King steps
            "f1i1g1", "f1b1e1", "f1b1d1", // f1b1d1: only the Rook passes c1
        ],
    );
    let pos = setup(
        Variant::InsaneNinja,
        "Ia1 Rb1 Kf1 Ri1 Ij1 kf10 rf7",
        "w KQ - 0 1",
    );
    assert!(pos.is_check());
    expect_moves(&pos, "f1", &["f1e0", "f1e1", "f1e2", "f1g1", "f1g2"]);
}

/// Seed 004 rule 1: "moving his king from f1 to i1 and his rook from j1 to h1. On the
/// queenside, white king moves from f1 to c1 and rook from a1 to d1."
#[test]
fn asylum_castling() {
    let pos = setup(Variant::Asylum, "Sa1 Kf1 Sj1 kf10", "w KQ - 0 1");
    expect_moves(
        &pos,
        "f1",
        &["f1a1c1", "f1e1", "f1e2", "f1f2", "f1g1", "f1g2", "f1j1i1"],
    );
    let p = play(&pos, "f1j1i1");
    expect_board(&p, &[("f1", '.'), ("i1", 'K'), ("h1", 'S'), ("j1", '.')]);
    let p = play(&pos, "f1a1c1");
    expect_board(&p, &[("f1", '.'), ("c1", 'K'), ("d1", 'S'), ("a1", '.')]);
}

/// RULES.md 6 and 8: orthodox castling is written King, Rook, King target (`e1h1g1`).
#[test]
fn orthodox_castling() {
    let pos = Position::from_fen(Variant::Chess, "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").unwrap();
    expect_moves(
        &pos,
        "e1",
        &["e1a1c1", "e1d1", "e1d2", "e1e2", "e1f1", "e1f2", "e1h1g1"],
    );
    let p = play(&pos, "e1h1g1");
    expect_board(&p, &[("e1", '.'), ("g1", 'K'), ("f1", 'R'), ("h1", '.')]);
    let p = play(&pos, "e1a1c1");
    expect_board(&p, &[("c1", 'K'), ("d1", 'R'), ("a1", '.')]);
    assert_eq!(castling_field(&p), "kq");

    // Palace Ninja Guards castles as orthodox chess; d0 and e0 are ordinary King steps.
    let pos = setup(Variant::Palace, "Ra1 Ke1 Rh1 ke8", "w KQ - 0 1");
    expect_moves(
        &pos,
        "e1",
        &[
            "e1a1c1", "e1d0", "e1d1", "e1d2", "e1e0", "e1e2", "e1f1", "e1f2", "e1h1g1",
        ],
    );
}

// ---------------------------------------------------------------------------------------
// 8. Scepter
// ---------------------------------------------------------------------------------------

/// Seed 001 (Capture the Scepter): "any side can also win by moving its king to the
/// opponent's rear side of the palace (the squares: d9,e9 for white or d0,e0 for black)
/// without being captured i.e. if the squares are not protected by the opponent's pieces."
#[test]
fn palace_scepter() {
    let v = Variant::PalaceScepter;
    // The Bishop b7 guards c8 and d9, not e9.
    let pos = setup(v, "Kd8 bb7 kh1", "w - - 0 1");
    expect_moves(&pos, "d8", &["d8c7", "d8d7", "d8e7", "d8e8", "d8e9"]);
    let p = play(&pos, "d8e9");
    assert_eq!(p.outcome(), scepter_win(Color::White));
    assert!(p.legal_moves().is_empty());
    assert_eq!(play(&pos, "d8e8").outcome(), None);

    let pos = setup(v, "Kd8 kh1", "w - - 0 1");
    assert_eq!(play(&pos, "d8d9").outcome(), scepter_win(Color::White));
    let pos = setup(v, "Ka8 ke1", "b - - 0 1");
    assert_eq!(play(&pos, "e1d0").outcome(), scepter_win(Color::Black));

    // Without the optional rule d9 is an ordinary square.
    let pos = setup(Variant::Palace, "Kd8 kh1", "w - - 0 1");
    assert_eq!(play(&pos, "d8d9").outcome(), None);
}

/// Seed 002: "Black's scepter is in the palace on f8,f7,or g7 ... If the opposing king
/// enters your palace, you have lost the game"; RULES.md 7: only by a legal move.
#[test]
fn ninjutsu_scepter() {
    let v = Variant::Ninjutsu;
    let pos = setup(v, "Ke7 ka2", "w - - 0 1");
    expect_moves(
        &pos,
        "e7",
        &["e7d6", "e7d7", "e7d8", "e7e6", "e7e8", "e7f7", "e7f8"],
    );
    assert_eq!(play(&pos, "e7f8").outcome(), scepter_win(Color::White));
    assert_eq!(play(&pos, "e7f7").outcome(), scepter_win(Color::White));
    assert_eq!(play(&pos, "e7e8").outcome(), None);

    // The Knight d6 guards f7 (and e8): the King may still take the scepter on f8.
    let pos = setup(v, "Ke7 nd6 ka2", "w - - 0 1");
    expect_moves(&pos, "e7", &["e7d6", "e7d7", "e7d8", "e7e6", "e7f8"]);

    // Black's King wins on f1, f2 or g2.
    let pos = setup(v, "Ka8 ke2", "b - - 0 1");
    assert_eq!(play(&pos, "e2f2").outcome(), scepter_win(Color::Black));
    assert_eq!(play(&pos, "e2f1").outcome(), scepter_win(Color::Black));
}
