//! Bad input gets a typed error that says what is wrong and where; never a panic.

use ninjazero_rules::{FenError, MoveError, Position, Variant};

fn fen_error(variant: Variant, fen: &str) -> (FenError, String) {
    let err = Position::from_fen(variant, fen).expect_err(fen);
    let message = err.to_string();
    (err, message)
}

#[test]
fn malformed_fens_name_the_field_and_place() {
    use Variant::*;
    let cases: &[(Variant, &str, &str)] = &[
        (Chess, "", "0 fields"),
        (Chess, "8/8/8/8/8/8/8/K6k", "1 fields"),
        (Chess, "8/8/8/8/8/8/K6k w - -", "7 rows"),
        (Chess, "8/8/8/8/8/8/8/K7k w - -", "rank 1 describes 9 cells"),
        (
            Chess,
            "8/8/8/8/8/8/8/K6x w - -",
            "unexpected 'x' in the row for rank 1",
        ),
        (Chess, "8/8/8/8/8/8/8/K06k w - -", "unexpected '06'"),
        (
            Chess,
            "8/8/8/8/8/8/8/K6k x - -",
            "side to move must be 'w' or 'b', found 'x'",
        ),
        (
            Chess,
            "8/8/8/8/8/8/8/K6k w - - zero 1",
            "halfmove clock must be a whole number",
        ),
        (
            Palace,
            "***gg***/rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/**GG**** w KQkq - 0 1",
            "c0 is a hole",
        ),
        (
            Palace,
            "***gg***/rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/***G**** w KQkq - 0 1",
            "e0 is a square",
        ),
        (
            Chess,
            "8/8/8/8/8/8/8/K6k w X -",
            "'X' is not one of K, Q, k, q",
        ),
        (
            Chess,
            "8/8/8/8/8/8/8/K6k w K -",
            "'K' needs the white King on e1",
        ),
        (Chess, "4k3/8/8/8/8/8/8/4K2R w KK -", "'K' appears twice"),
        (
            Chess,
            "4k3/8/8/8/8/8/8/4K3 w K -",
            "'K' needs a white Rook on h1",
        ),
        (
            Ninjutsu,
            "wwnggk*/pppppmn/5**/5**/5**/5**/PPPPPMN/WWNGGK* w K - 0 1",
            "ninjutsu has no castling",
        ),
        (Chess, "4k3/8/8/8/8/8/8/4K3 b - e3", "no white Pawn on e4"),
        (Chess, "4k3/8/8/8/4P3/8/8/4K3 b - e3,e2", "at most 1 target"),
        (Chess, "4k3/8/8/8/8/8/8/4K3 b - z9", "'z9' is not a square"),
        (
            Asylum,
            "4k5/10/10/10/10/10/4P5/10/10/5K4 b - e3,e5",
            "consecutive squares",
        ),
        (
            InsaneNinja,
            "****2****/5k4/10/10/10/10/10/10/10/10/5K4/****2****[Y] w - -",
            "only insane-ninja-drops has pieces in hand",
        ),
        (
            InsaneNinjaDrops,
            "****2****/5k4/10/10/10/10/10/10/10/10/5K4/****2****[YYYYY] w - -",
            "at most 4 Ninja Pawns",
        ),
        (
            InsaneNinjaDrops,
            "****2****/5k4/10/10/10/10/10/10/10/10/5K4/****2****[Q] w - -",
            "only Ninja Pawns",
        ),
        (
            InsaneNinja,
            "****2****/5k4/10/10/10/10/10/4Y5/10/10/5K4/****2**** w - -",
            "Ninja Pawn (Y) is not used in insane-ninja",
        ),
    ];
    for (variant, fen, expected) in cases {
        let (_, message) = fen_error(*variant, fen);
        assert!(
            message.contains(expected),
            "{variant} {fen:?}: got '{message}', expected '{expected}'"
        );
    }
}

#[test]
fn impossible_positions_are_refused() {
    use Variant::*;
    let (err, _) = fen_error(Chess, "8/8/8/8/8/8/8/K7 w - -");
    assert_eq!(
        err,
        FenError::KingCount {
            color: ninjazero_rules::Color::Black,
            count: 0
        }
    );
    let (_, msg) = fen_error(Chess, "k7/8/8/8/8/8/8/KK6 w - -");
    assert!(msg.contains("white has 2 Kings"), "{msg}");
    let (_, msg) = fen_error(Chess, "k6P/8/8/8/8/8/8/K7 w - -");
    assert!(
        msg.contains("white Pawn on h8 stands on its promotion rank"),
        "{msg}"
    );
    let (_, msg) = fen_error(Chess, "k6R/8/8/8/8/8/8/K7 w - -");
    assert!(
        msg.contains("black is in check but it is not black's turn"),
        "{msg}"
    );
    let (_, msg) = fen_error(Chess, "k7/8/8/8/8/P7/PPPPPPPP/KNNNNNNN w - -");
    assert!(
        msg.contains("white has 17 pieces (hand included); a chess army has at most 16"),
        "{msg}"
    );
    let (_, msg) = fen_error(PalaceScepter, "***K1***/8/8/8/8/8/8/8/8/***k1*** w - -");
    assert!(
        msg.contains("both Kings stand on a winning scepter square"),
        "{msg}"
    );
}

#[test]
fn move_text_errors_say_why() {
    let pos = Position::start(Variant::InsaneNinja);
    let cases = [
        ("e2", "cannot read 'e2' as a move"),
        ("e2e4x", "cannot read"),
        ("z2z4", "cannot read"),
        ("a0a1", "a0 is not a square of the insane-ninja board"),
        ("e5e6", "there is no piece on e5"),
        ("e9e8", "the piece on e9 is black's, but white is to move"),
        ("e2e6", "the Pawn on e2 cannot move to e6"),
        ("f1i1g1", "castling is not possible"),
        ("Y@e4", "insane-ninja has no drops"),
    ];
    for (text, expected) in cases {
        let message = pos.parse_move(text).expect_err(text).to_string();
        assert!(
            message.contains(expected),
            "{text}: got '{message}', expected '{expected}'"
        );
    }
    let check = Position::from_fen(Variant::Chess, "4k3/8/8/8/8/8/3r4/4K3 w - -").unwrap();
    let err = check.parse_move("e1d1").unwrap_err();
    assert!(matches!(err, MoveError::Illegal { .. }));
    assert!(
        err.to_string().contains("it would leave the King in check"),
        "{err}"
    );
    let mate = Position::from_fen(Variant::Chess, "k7/1Q6/1K6/8/8/8/8/8 b - -").unwrap();
    assert!(mate
        .parse_move("a8b8")
        .unwrap_err()
        .to_string()
        .contains("the game is over (white wins by checkmate)"));
}

#[test]
fn promotion_errors_name_what_is_wrong_with_the_promotion() {
    let chess = |fen| Position::from_fen(Variant::Chess, fen).unwrap();
    let start = Position::start(Variant::Chess);
    let last_rank = chess("4k3/P7/8/8/8/8/8/4K3 w - -");
    let pushed = chess("4k3/8/8/8/4P3/8/8/4K3 w - -");
    let cases = [
        (
            &pushed,
            "e4e5q",
            "e5 is not a promotion square: drop the 'q'",
        ),
        (
            &start,
            "e2e4n",
            "e4 is not a promotion square: drop the 'n'",
        ),
        (&start, "b1c3q", "a Knight does not promote: drop the 'q'"),
        (
            &last_rank,
            "a7a8",
            "the Pawn reaching a8 must promote: add a piece letter (q, r, b, n)",
        ),
        (
            &last_rank,
            "a7a8g",
            "cannot promote to a Ninja Guard here; allowed: q, r, b, n",
        ),
        (
            &last_rank,
            "a7a8k",
            "cannot promote to a King here; allowed: q, r, b, n",
        ),
        // Not a pawn move at all: the move itself is what is wrong.
        (&pushed, "e4e6q", "the Pawn on e4 cannot move to e6"),
    ];
    for (position, text, expected) in cases {
        let message = position.parse_move(text).expect_err(text).to_string();
        assert!(
            message.contains(expected),
            "{text}: got '{message}', expected '{expected}'"
        );
    }
    let message = last_rank.parse_move("a7a8i").unwrap_err().to_string();
    assert!(
        message.contains("cannot promote to an Insane Ninja here"),
        "{message}"
    );
    // Insane Ninja promotions list the variant's own pieces.
    let insane = Position::from_fen(
        Variant::InsaneNinja,
        "****2****/5k4/P9/10/10/10/10/10/10/10/5K4/****2**** w - -",
    )
    .unwrap();
    let message = insane.parse_move("a9a10k").unwrap_err().to_string();
    assert!(
        message.contains("cannot promote to a King here; allowed:"),
        "{message}"
    );
    let allowed = message.rsplit("allowed: ").next().unwrap_or_default();
    let legal: Vec<String> = insane
        .legal_moves()
        .iter()
        .filter_map(|m| m.promotion())
        .map(|r| r.lower_char().to_string())
        .collect();
    assert_eq!(allowed, legal.join(", "), "{message}");
}

#[test]
fn errors_repeat_at_most_40_characters_of_the_input() {
    let long = "e".repeat(5000);
    let pos = Position::start(Variant::Chess);
    let move_text = format!("e2e4{long}");
    for (input, message) in [
        (&long, pos.parse_move(&long).unwrap_err().to_string()),
        (
            &move_text,
            pos.parse_move(&move_text).unwrap_err().to_string(),
        ),
        (&long, long.parse::<Variant>().unwrap_err().to_string()),
        (
            &long,
            Position::from_fen(Variant::Chess, &format!("8/8/8/8/8/8/8/K6k {long} - -"))
                .unwrap_err()
                .to_string(),
        ),
    ] {
        assert!(message.len() < 400, "{} characters", message.len());
        let head: String = input.chars().take(40).collect();
        assert!(message.contains(&format!("'{head}…'")), "{message}");
    }
    assert_eq!(ninjazero_rules::excerpt("e2e4"), "e2e4");
    // Characters, not bytes: a multi-byte character is never cut in two.
    assert_eq!(
        ninjazero_rules::excerpt(&"é".repeat(41)),
        "é".repeat(40) + "…"
    );
}

#[test]
fn playing_an_illegal_move_changes_nothing() {
    let pos = Position::start(Variant::Asylum);
    let other = Position::start(Variant::Chess);
    let foreign = other.parse_move("e2e4").unwrap();
    let before = pos.to_fen();
    assert!(pos.play(other.parse_move("g1f3").unwrap()).is_err());
    assert!(pos.play(foreign).is_ok(), "e2e4 is also legal in asylum");
    assert_eq!(pos.to_fen(), before);
}

#[test]
fn move_counters_at_their_largest_stay_there() {
    let fen = "4k3/8/8/8/8/8/8/4K3 b - - 4294967295 4294967295";
    let position = Position::from_fen(Variant::Chess, fen).unwrap();
    let after = position.play(position.parse_move("e8d8").unwrap()).unwrap();
    assert_eq!(
        after.to_fen(),
        "3k4/8/8/8/8/8/8/4K3 w - - 4294967295 4294967295"
    );
}
