//! Property tests over seeded random games in every variant, and `Game` end-of-game tests.
//!
//! At every ply of every game: incremental hash = hash from scratch, FEN round trip, move text
//! round trip and uniqueness, copy-make leaves the original alone, bulk count = list length,
//! material table = pieces on the board, every legal move leaves the mover's King safe, the
//! game result is consistent with the move list, and `Game`'s repetition count matches an
//! independent count keyed by FEN.

use ninjazero_rules::{
    ByColor, ByRole, Color, Game, Move, MoveKind, Outcome, Position, Role, Termination, Variant,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{HashMap, HashSet};

const GAMES: usize = 60;
const MAX_PLIES: usize = 200;

/// What happened over a variant's random games.
#[derive(Default, Debug)]
struct Stats {
    games: usize,
    plies: usize,
    moves_checked: usize,
    captures: usize,
    /// Moves that removed two pieces (ninja leap over and onto enemies, Loony Rook).
    double_captures: usize,
    ninja_double_captures: usize,
    loony_double_captures: usize,
    /// Loony Rook moves that fired through a piece and stopped on an empty square.
    loony_fire_through_to_empty: usize,
    /// Loony Rook moves that removed one of the mover's own pieces (Friendly Fire).
    friendly_fire: usize,
    promotions: usize,
    drops: usize,
    en_passant: usize,
    castles: usize,
    endings: HashMap<String, usize>,
}

fn piece_count(pos: &Position) -> usize {
    pos.pieces().count()
}

fn count_color(pos: &Position, color: Color) -> usize {
    pos.pieces().filter(|(_, p)| p.color == color).count()
}

fn is_ninja(role: Role) -> bool {
    matches!(
        role,
        Role::NinjaGuard
            | Role::NinjaWarrior
            | Role::InsaneNinja
            | Role::InsaneNinjaKnight
            | Role::LeapingNinjaGuard
    )
}

/// FEN without the clocks: board (with hand), side, castling.
fn key_fields(fen: &str) -> String {
    fen.split(' ').take(3).collect::<Vec<_>>().join(" ")
}

/// The repetition key of RULES.md section 7: pieces, side, castling, hand, and the en passant
/// captures actually available (read from the legal move list, not from the hash).
fn repetition_key(pos: &Position, legal: &[Move]) -> String {
    let mut ep: Vec<String> = legal
        .iter()
        .filter(|m| m.kind == MoveKind::EnPassant)
        .map(|m| m.to.to_string())
        .collect();
    ep.sort();
    ep.dedup();
    format!("{} {}", key_fields(&pos.to_fen()), ep.join(","))
}

/// Checks every per-ply property of `pos`; returns its legal moves.
fn check_position(pos: &Position, stats: &mut Stats) -> Vec<Move> {
    let v = pos.variant();
    let fen = pos.to_fen();
    let hash = pos.hash();
    let ctx = || format!("[{v}] {fen}");

    // (a) incremental hash equals the hash from scratch.
    assert_eq!(hash, pos.recompute_hash(), "hash drift: {}", ctx());

    // (b) FEN round trip.
    let reparsed = Position::from_fen(v, &fen)
        .unwrap_or_else(|e| panic!("own FEN does not parse ({e}): {}", ctx()));
    assert_eq!(&reparsed, pos, "FEN round trip changes position: {}", ctx());
    assert_eq!(
        reparsed.to_fen(),
        fen,
        "FEN round trip changes text: {}",
        ctx()
    );
    assert_eq!(
        reparsed.hash(),
        hash,
        "FEN round trip changes hash: {}",
        ctx()
    );

    // (g) material table, counts and the pieces on the board agree; pieces stand on squares.
    let mut material = ByColor::<ByRole<u8>>::default();
    for (square, piece) in pos.pieces() {
        assert!(
            pos.rules().is_square(square),
            "{} on non-square {square}: {}",
            piece.char(),
            ctx()
        );
        assert_eq!(pos.piece_at(square), Some(piece), "{}", ctx());
        material[piece.color][piece.role] += 1;
    }
    assert_eq!(pos.material(), material, "material mismatch: {}", ctx());
    for color in Color::ALL {
        for role in Role::ALL {
            assert_eq!(
                pos.count(color, role),
                material[color][role] as u32,
                "count({color}, {role:?}): {}",
                ctx()
            );
        }
        assert_eq!(
            pos.count(color, Role::King),
            1,
            "{color} King count: {}",
            ctx()
        );
        let king = pos.king(color);
        assert_eq!(
            pos.piece_at(king).map(|p| (p.color, p.role)),
            Some((color, Role::King)),
            "king({color}) is not a King: {}",
            ctx()
        );
    }
    assert_eq!(
        pos.is_check(),
        pos.is_attacked_by(pos.king(pos.turn()), !pos.turn()),
        "is_check: {}",
        ctx()
    );

    // (f) bulk count equals the list.
    let legal: Vec<Move> = pos.legal_moves().into_iter().collect();
    assert_eq!(pos.count_legal_moves(), legal.len(), "count: {}", ctx());

    // (d) texts are unique, (c) and parse back to the same move.
    let mut texts = HashSet::new();
    for &m in &legal {
        let text = m.to_string();
        assert!(
            texts.insert(text.clone()),
            "two moves print {text}: {}",
            ctx()
        );
        assert_eq!(pos.parse_move(&text), Ok(m), "text {text}: {}", ctx());
        assert!(pos.is_legal(m), "{text} not is_legal: {}", ctx());
    }

    // (e) copy-make, (h) the mover's King is safe after every legal move, and the effects
    // of each move are plausible.
    let mover = pos.turn();
    let before = piece_count(pos);
    let ours_before = count_color(pos, mover);
    let hand_before = pos.hand(mover);
    for &m in &legal {
        let mut child = pos.clone();
        child.play_unchecked(m);
        let text = m.to_string();
        assert_eq!(
            pos.hash(),
            hash,
            "copy-make changed the original ({text}): {}",
            ctx()
        );
        assert_eq!(child.turn(), !mover, "{text}: {}", ctx());
        assert!(
            !child.is_attacked_by(child.king(mover), child.turn()),
            "legal move {text} leaves the {mover} King attacked: {}",
            ctx()
        );
        assert_eq!(
            child.hash(),
            child.recompute_hash(),
            "hash drift after {text}: {}",
            ctx()
        );
        assert_eq!(pos.play(m).as_ref(), Ok(&child), "play({text}): {}", ctx());

        let moving = pos.piece_at(m.from);
        let after = piece_count(&child);
        let removed = (before + m.is_drop() as usize).saturating_sub(after);
        let own_removed = (ours_before + m.is_drop() as usize) - count_color(&child, mover);
        assert!(removed <= 2, "{text} removes {removed} pieces: {}", ctx());
        assert!(
            own_removed == 0 || v == Variant::AsylumFriendlyFire,
            "{text} removes a piece of the mover: {}",
            ctx()
        );
        match m.kind {
            MoveKind::Drop => {
                assert!(
                    v.rules().has_drops() && hand_before > 0,
                    "{text}: {}",
                    ctx()
                );
                assert_eq!(child.hand(mover), hand_before - 1, "{text}: {}", ctx());
                assert_eq!(
                    after,
                    before + 1,
                    "a drop never captures ({text}): {}",
                    ctx()
                );
            }
            _ => {
                assert_eq!(child.hand(mover), hand_before, "{text}: {}", ctx());
                let moving = moving.unwrap_or_else(|| panic!("{text}: no piece: {}", ctx()));
                assert_eq!(moving.color, mover, "{text}: {}", ctx());
                let landed = child.piece_at(m.to).map(|p| (p.color, p.role));
                match m.kind {
                    MoveKind::Castle { .. } => {
                        assert_eq!(landed, Some((mover, Role::King)), "{text}: {}", ctx());
                        assert_eq!(removed, 0, "{text}: {}", ctx());
                    }
                    MoveKind::Promotion(role) => {
                        assert_eq!(landed, Some((mover, role)), "{text}: {}", ctx());
                        assert_eq!(m.to.rank(), v.rules().last_rank(mover), "{text}");
                        assert!(v.rules().promotions().contains(&role), "{text}: {}", ctx());
                    }
                    MoveKind::EnPassant => {
                        assert_eq!(moving.role, Role::Pawn, "{text}: {}", ctx());
                        assert_eq!(removed, 1, "{text}: {}", ctx());
                    }
                    _ => {
                        assert_eq!(landed.map(|l| l.0), Some(mover), "{text}: {}", ctx());
                        if removed >= 1 && !is_ninja(moving.role) && moving.role != Role::LoonyRook
                        {
                            assert_eq!(removed, 1, "{text}: {}", ctx());
                        }
                    }
                }
            }
        }
        let resets = removed > 0
            || m.is_drop()
            || matches!(moving.map(|p| p.role), Some(Role::Pawn | Role::NinjaPawn));
        let expected_clock = if resets { 0 } else { pos.halfmove_clock() + 1 };
        assert_eq!(
            child.halfmove_clock(),
            expected_clock,
            "clock after {text}: {}",
            ctx()
        );
    }
    assert_eq!(
        pos.to_fen(),
        fen,
        "copy-make changed the original: {}",
        ctx()
    );
    assert_eq!(
        pos.hash(),
        hash,
        "copy-make changed the original: {}",
        ctx()
    );

    // The result agrees with the move list.
    match pos.outcome() {
        Some(Outcome {
            termination: Termination::Scepter,
            winner,
        }) => {
            assert!(winner.is_some(), "{}", ctx());
            assert!(legal.is_empty(), "won position has moves: {}", ctx());
        }
        Some(Outcome {
            termination: Termination::Checkmate,
            winner,
        }) => {
            assert!(legal.is_empty() && pos.is_check(), "{}", ctx());
            assert_eq!(winner, Some(!mover), "{}", ctx());
        }
        Some(Outcome {
            termination: Termination::Stalemate,
            winner,
        }) => {
            assert!(
                legal.is_empty() && !pos.is_check() && winner.is_none(),
                "{}",
                ctx()
            );
        }
        Some(Outcome {
            termination: Termination::HundredPlyRule,
            winner,
        }) => {
            assert!(!legal.is_empty() && winner.is_none(), "{}", ctx());
            assert!(pos.halfmove_clock() >= 100, "{}", ctx());
        }
        Some(o) => panic!("Position::outcome gave {o}: {}", ctx()),
        None => {
            assert!(!legal.is_empty(), "no moves but no result: {}", ctx());
            assert!(pos.halfmove_clock() < 100, "{}", ctx());
        }
    }
    if legal.is_empty() {
        assert!(pos.outcome().is_some(), "{}", ctx());
    }
    stats.moves_checked += legal.len();
    legal
}

/// Random texts: whatever `parse_move` accepts must be a legal move.
fn check_random_texts(pos: &Position, legal: &[Move], rng: &mut StdRng) {
    let squares = pos.rules().squares();
    for _ in 0..8 {
        let a = squares[rng.random_range(0..squares.len())];
        let b = squares[rng.random_range(0..squares.len())];
        let text = match rng.random_range(0..4) {
            0 => format!("Y@{b}"),
            1 => format!("{a}{b}q"),
            _ => format!("{a}{b}"),
        };
        if let Ok(m) = pos.parse_move(&text) {
            assert!(
                legal.contains(&m),
                "'{text}' parsed to illegal {m}: {pos:?}"
            );
        }
    }
}

/// Classifies a move for the statistics; true if it is "interesting" (captures, promotes,
/// drops, castles or takes en passant).
fn classify(pos: &Position, m: Move, stats: Option<&mut Stats>) -> bool {
    let mut child = pos.clone();
    child.play_unchecked(m);
    let before = piece_count(pos) + m.is_drop() as usize;
    let removed = before - piece_count(&child);
    let interesting = removed > 0 || m.kind != MoveKind::Normal;
    if let Some(stats) = stats {
        let role = pos.piece_at(m.from).map(|p| p.role);
        let own_removed =
            count_color(pos, pos.turn()) + m.is_drop() as usize - count_color(&child, pos.turn());
        stats.captures += (removed > 0) as usize;
        stats.double_captures += (removed == 2) as usize;
        stats.friendly_fire += (own_removed > 0) as usize;
        match m.kind {
            MoveKind::Drop => stats.drops += 1,
            MoveKind::EnPassant => stats.en_passant += 1,
            MoveKind::Promotion(_) => stats.promotions += 1,
            MoveKind::Castle { .. } => stats.castles += 1,
            MoveKind::Normal => {}
        }
        if m.kind == MoveKind::Normal {
            if role.is_some_and(is_ninja) && removed == 2 {
                stats.ninja_double_captures += 1;
            }
            if role == Some(Role::LoonyRook) {
                stats.loony_double_captures += (removed == 2) as usize;
                if removed >= 1 && pos.piece_at(m.to).is_none() {
                    stats.loony_fire_through_to_empty += 1;
                }
            }
        }
    }
    interesting
}

fn random_games(v: Variant, seed: u64) -> Stats {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut stats = Stats::default();
    // Equal hash must mean equal pieces/side/castling/hand; equal FEN key without en passant
    // must mean equal hash.
    let mut by_hash: HashMap<u64, String> = HashMap::new();
    let mut by_key: HashMap<String, u64> = HashMap::new();
    for g in 0..GAMES {
        // Games differ in how strongly they prefer "interesting" moves (captures,
        // promotions, drops, castling, en passant) and pawn moves (for promotions and en
        // passant on the big boards).
        let (bias, pawn_bias) = [(0.0, 0.0), (0.5, 0.0), (0.9, 0.0), (0.5, 0.4)][g % 4];
        let mut game = Game::new(v);
        let mut seen: Vec<String> = Vec::new();
        stats.games += 1;
        for _ in 0..MAX_PLIES {
            let pos = game.position().clone();
            let legal = check_position(&pos, &mut stats);
            check_random_texts(&pos, &legal, &mut rng);
            stats.plies += 1;

            let fen = pos.to_fen();
            let key = key_fields(&fen);
            if let Some(old) = by_hash.insert(pos.hash(), key.clone()) {
                assert_eq!(old, key, "[{v}] hash collision or bad hash at {fen}");
            }
            if fen.split(' ').nth(3) == Some("-") {
                if let Some(old) = by_key.insert(key.clone(), pos.hash()) {
                    assert_eq!(old, pos.hash(), "[{v}] same position, other hash: {fen}");
                }
            }

            // Repetition count of `Game` against an independent count.
            let rep = repetition_key(&pos, &legal);
            seen.push(rep.clone());
            // Over the whole game, not just since the last clock reset: Ninja Pawn sideways
            // moves reset the clock but can be undone.
            let occurrences = seen.iter().filter(|k| **k == rep).count();
            assert_eq!(
                game.repetitions(),
                occurrences,
                "[{v}] repetitions at {fen}"
            );

            // Game::outcome: a decisive result or stalemate stands; otherwise threefold
            // repetition and the 100-ply rule are draws.
            let outcome = game.outcome();
            match pos.outcome() {
                Some(o) if o.termination != Termination::HundredPlyRule => {
                    assert_eq!(outcome, Some(o), "[{v}] {fen}")
                }
                hundred => {
                    let draw = hundred.is_some() || occurrences >= 3;
                    assert_eq!(outcome.is_some(), draw, "[{v}] {fen}: {outcome:?}");
                    if let Some(o) = outcome {
                        assert_eq!(o.winner, None, "[{v}] {fen}");
                        let t = o.termination;
                        assert!(
                            (t == Termination::HundredPlyRule && hundred.is_some())
                                || (t == Termination::ThreefoldRepetition && occurrences >= 3),
                            "[{v}] {fen}: {o}"
                        );
                    }
                }
            }
            if let Some(o) = outcome {
                *stats.endings.entry(o.termination.to_string()).or_default() += 1;
                break;
            }

            if legal.is_empty() {
                break;
            }
            let pawn_moves: Vec<Move> = legal
                .iter()
                .copied()
                .filter(|m| {
                    m.is_drop()
                        || matches!(
                            pos.piece_at(m.from).map(|p| p.role),
                            Some(Role::Pawn | Role::NinjaPawn)
                        )
                })
                .collect();
            let m = if !pawn_moves.is_empty() && rng.random_bool(pawn_bias) {
                pawn_moves[rng.random_range(0..pawn_moves.len())]
            } else if rng.random_bool(bias) {
                let interesting: Vec<Move> = legal
                    .iter()
                    .copied()
                    .filter(|&m| classify(&pos, m, None))
                    .collect();
                if interesting.is_empty() {
                    legal[rng.random_range(0..legal.len())]
                } else {
                    interesting[rng.random_range(0..interesting.len())]
                }
            } else {
                legal[rng.random_range(0..legal.len())]
            };
            classify(&pos, m, Some(&mut stats));
            game.play_unchecked(m);
            assert_eq!(game.moves().last(), Some(&m));
        }
    }
    eprintln!("{v}: {stats:?}");
    stats
}

fn seed(v: Variant) -> u64 {
    0x5eed_0000 + v as u64
}

#[test]
fn random_games_chess() {
    let s = random_games(Variant::Chess, seed(Variant::Chess));
    assert!(s.captures > 0 && s.promotions > 0 && s.castles > 0 && s.en_passant > 0);
    assert_eq!(s.double_captures, 0);
}

#[test]
fn random_games_palace() {
    let s = random_games(Variant::Palace, seed(Variant::Palace));
    assert!(s.captures > 0 && s.promotions > 0 && s.castles > 0 && s.en_passant > 0);
    assert!(s.ninja_double_captures > 0);
}

#[test]
fn random_games_palace_scepter() {
    let s = random_games(Variant::PalaceScepter, seed(Variant::PalaceScepter));
    assert!(s.captures > 0 && s.promotions > 0);
}

#[test]
fn random_games_ninjutsu() {
    let s = random_games(Variant::Ninjutsu, seed(Variant::Ninjutsu));
    assert!(s.captures > 0 && s.ninja_double_captures > 0 && s.promotions > 0);
    assert_eq!(s.castles, 0, "ninjutsu has no castling");
}

fn check_asylum_stats(s: &Stats) {
    assert!(s.captures > 0 && s.promotions > 0 && s.en_passant > 0);
    assert!(s.loony_double_captures > 0 && s.loony_fire_through_to_empty > 0);
    assert_eq!(s.friendly_fire, 0);
}

#[test]
fn random_games_asylum() {
    check_asylum_stats(&random_games(Variant::Asylum, seed(Variant::Asylum)));
}

/// Black's queen takes the White pawn on b4 that walls in White's Loony Rook on b3; the rook
/// could then fire through the queen and take the King on b8 (RULES.md section 3), so e7b4
/// must be illegal.
#[test]
fn asylum_capturing_a_loony_rook_blocker_may_expose_the_king() {
    let fen = "10/10/1k8/4q5/10/10/1P8/1S8/10/9K b - - 0 1";
    let pos = Position::from_fen(Variant::Asylum, fen).unwrap();
    assert!(
        pos.parse_move("e7b4").is_err(),
        "e7b4 exposes the King to b3b8"
    );
    // The same capture on a line without a Loony Rook behind it is fine.
    let pos = Position::from_fen(
        Variant::Asylum,
        "10/10/1k8/4q5/10/10/1P8/10/10/9K b - - 0 1",
    )
    .unwrap();
    assert!(pos.parse_move("e7b4").is_ok());
}

#[test]
fn random_games_asylum_ff() {
    let s = random_games(
        Variant::AsylumFriendlyFire,
        seed(Variant::AsylumFriendlyFire),
    );
    assert!(s.captures > 0 && s.promotions > 0);
    assert!(s.loony_double_captures > 0 && s.friendly_fire > 0);
}

#[test]
fn random_games_insane_ninja() {
    let s = random_games(Variant::InsaneNinja, seed(Variant::InsaneNinja));
    assert!(s.captures > 0 && s.ninja_double_captures > 0 && s.promotions > 0);
    assert!(s.castles > 0 && s.en_passant > 0);
}

#[test]
fn random_games_insane_ninja_2() {
    let s = random_games(Variant::InsaneNinja2, seed(Variant::InsaneNinja2));
    assert!(s.captures > 0 && s.ninja_double_captures > 0 && s.promotions > 0);
}

fn check_drops_stats(s: &Stats) {
    assert!(s.captures > 0 && s.ninja_double_captures > 0 && s.drops > 0);
}

#[test]
fn random_games_insane_ninja_drops() {
    check_drops_stats(&random_games(
        Variant::InsaneNinjaDrops,
        seed(Variant::InsaneNinjaDrops),
    ));
}

// ---------------------------------------------------------------------------------------
// Game: end of the game (RULES.md section 7).

fn play_all(game: &mut Game, moves: &[&str]) {
    for text in moves {
        game.play_text(text)
            .unwrap_or_else(|e| panic!("{text}: {e} in {:?}", game.position()));
    }
}

fn check_knight_shuffle_repetition(v: Variant, cycle: [&str; 4]) {
    let mut game = Game::new(v);
    assert_eq!(game.repetitions(), 1);
    play_all(&mut game, &cycle);
    assert_eq!(game.repetitions(), 2, "{v}");
    assert_eq!(game.outcome(), None, "{v}: twofold is no draw");
    play_all(&mut game, &cycle[..3]);
    assert_eq!(game.outcome(), None, "{v}");
    play_all(&mut game, &cycle[3..]);
    assert_eq!(game.repetitions(), 3, "{v}");
    assert_eq!(
        game.outcome(),
        Some(Outcome {
            winner: None,
            termination: Termination::ThreefoldRepetition
        }),
        "{v}"
    );
    // The position alone knows nothing of repetition.
    assert_eq!(game.position().outcome(), None);
    // Undo takes the repetition back.
    assert_eq!(
        game.undo().map(|m| m.to_string()),
        Some(cycle[3].to_string())
    );
    assert_eq!(game.outcome(), None, "{v}");
    assert_eq!(game.position().to_fen(), {
        let mut g = Game::new(v);
        play_all(&mut g, &cycle);
        play_all(&mut g, &cycle[..3]);
        g.position().to_fen()
    });
}

#[test]
fn threefold_repetition_by_knight_shuffle() {
    check_knight_shuffle_repetition(Variant::Chess, ["g1f3", "g8f6", "f3g1", "f6g8"]);
    check_knight_shuffle_repetition(Variant::Chess, ["b1c3", "b8c6", "c3b1", "c6b8"]);
    check_knight_shuffle_repetition(Variant::InsaneNinja, ["c1d3", "c10d8", "d3c1", "d8c10"]);
    check_knight_shuffle_repetition(Variant::Asylum, ["b1c3", "b10c8", "c3b1", "c8b10"]);
}

/// RULES.md section 7: threefold repetition of the same position is a draw. Ninja Pawns may
/// step sideways, which resets the 100-ply counter (section 4.4) but can be undone, so a
/// position can repeat across clock resets.
#[test]
fn ninja_pawn_shuffle_repetition() {
    let fen = "****2****/5k4/10/y9/10/10/10/10/Y9/10/5K4/****2****[] w - - 0 1";
    let mut game = Game::from_position(Position::from_fen(Variant::InsaneNinjaDrops, fen).unwrap());
    let cycle = ["a3b3", "a8b8", "b3a3", "b8a8"];
    play_all(&mut game, &cycle);
    play_all(&mut game, &cycle);
    assert_eq!(
        game.position().to_fen().split(' ').next(),
        fen.split(' ').next()
    );
    assert_eq!(game.position().hash(), game.start().hash());
    assert_eq!(game.repetitions(), 3);
    assert_eq!(
        game.outcome().map(|o| o.termination),
        Some(Termination::ThreefoldRepetition)
    );
}

#[test]
fn repetition_needs_same_side_to_move_and_rights() {
    // Same pieces after the King went out and back, but castling rights are lost: the
    // start position does not count as a repetition of the later ones.
    let mut game = Game::new(Variant::Chess);
    play_all(&mut game, &["e2e4", "e7e5", "e1e2", "e8e7", "e2e1", "e7e8"]);
    play_all(&mut game, &["e1e2", "e8e7", "e2e1", "e7e8"]);
    assert_eq!(game.repetitions(), 2);
    assert_eq!(game.outcome(), None);
    play_all(&mut game, &["e1e2", "e8e7", "e2e1", "e7e8"]);
    assert_eq!(
        game.outcome().map(|o| o.termination),
        Some(Termination::ThreefoldRepetition)
    );
}

#[test]
fn hundred_ply_rule() {
    let fen = "4k3/8/8/8/8/8/8/R3K3 w - - 99 60";
    let pos = Position::from_fen(Variant::Chess, fen).unwrap();
    assert_eq!(pos.outcome(), None);
    let mut game = Game::from_position(pos);
    game.play_text("a1a2").unwrap();
    assert_eq!(game.position().halfmove_clock(), 100);
    let draw = Some(Outcome {
        winner: None,
        termination: Termination::HundredPlyRule,
    });
    assert_eq!(game.position().outcome(), draw);
    assert_eq!(game.outcome(), draw);

    // A pawn move on the 100th ply resets the clock instead.
    let pos = Position::from_fen(Variant::Chess, "4k3/8/8/8/8/8/P7/4K3 w - - 99 60").unwrap();
    let next = pos.play(pos.parse_move("a2a3").unwrap()).unwrap();
    assert_eq!(next.halfmove_clock(), 0);
    assert_eq!(next.outcome(), None);

    // A mate on the 100th ply stands.
    let pos = Position::from_fen(Variant::Chess, "6k1/5ppp/8/8/8/8/8/R3K3 w - - 99 60").unwrap();
    let mut game = Game::from_position(pos);
    game.play_text("a1a8").unwrap();
    assert_eq!(game.position().halfmove_clock(), 100);
    assert_eq!(
        game.outcome(),
        Some(Outcome {
            winner: Some(Color::White),
            termination: Termination::Checkmate
        })
    );

    // The same rule in a drop variant: a drop resets the clock, a King move does not.
    let fen = "****2****/4k5/10/10/10/10/10/10/10/10/5K4/****2****[Yy] w - - 99 60";
    let pos = Position::from_fen(Variant::InsaneNinjaDrops, fen).unwrap();
    let next = pos.play(pos.parse_move("Y@a2").unwrap()).unwrap();
    assert_eq!(next.halfmove_clock(), 0);
    assert_eq!(next.outcome(), None);
    let next = pos.play(pos.parse_move("f1f2").unwrap()).unwrap();
    assert_eq!(next.halfmove_clock(), 100);
    assert_eq!(
        next.outcome().map(|o| o.termination),
        Some(Termination::HundredPlyRule)
    );
}

#[test]
fn stalemate() {
    let pos = Position::from_fen(Variant::Chess, "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1").unwrap();
    assert!(!pos.is_check());
    assert_eq!(pos.count_legal_moves(), 0);
    let draw = Some(Outcome {
        winner: None,
        termination: Termination::Stalemate,
    });
    assert_eq!(pos.outcome(), draw);
    assert_eq!(Game::from_position(pos).outcome(), draw);

    // Reached by a move in a game.
    let pos = Position::from_fen(Variant::Chess, "7k/8/6K1/8/8/8/5Q2/8 w - - 0 1").unwrap();
    let mut game = Game::from_position(pos);
    game.play_text("f2f7").unwrap();
    assert_eq!(game.outcome(), draw);
    assert!(game.play_text("h8g8").is_err());
}

#[test]
fn checkmate_fools_mate() {
    let mut game = Game::new(Variant::Chess);
    play_all(&mut game, &["f2f3", "e7e5", "g2g4"]);
    assert_eq!(game.outcome(), None);
    play_all(&mut game, &["d8h4"]);
    let mate = Some(Outcome {
        winner: Some(Color::Black),
        termination: Termination::Checkmate,
    });
    assert!(game.position().is_check());
    assert!(game.position().legal_moves().is_empty());
    assert_eq!(game.position().outcome(), mate);
    assert_eq!(game.outcome(), mate);
    // No move is accepted once the game is over.
    assert!(game.play_text("e1f2").is_err());
    assert_eq!(game.moves().len(), 4);
}

#[test]
fn checkmate_scholars_mate_white_wins() {
    let mut game = Game::new(Variant::Chess);
    play_all(
        &mut game,
        &["e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7"],
    );
    assert_eq!(
        game.outcome(),
        Some(Outcome {
            winner: Some(Color::White),
            termination: Termination::Checkmate
        })
    );
}

#[test]
fn illegal_move_leaves_game_unchanged() {
    let mut game = Game::new(Variant::Chess);
    let before = game.position().to_fen();
    assert!(game.play_text("e2e5").is_err());
    assert!(game.play_text("e7e5").is_err());
    assert!(game.play_text("xyz").is_err());
    assert_eq!(game.position().to_fen(), before);
    assert!(game.moves().is_empty());
}

#[test]
fn scepter_wins() {
    // palace-scepter: a White King that steps onto d9 wins at once.
    let fen = "***2***/3K4/8/8/8/8/8/8/4k3/***2*** w - - 0 1";
    let pos = Position::from_fen(Variant::PalaceScepter, fen).unwrap();
    let next = pos.play(pos.parse_move("d8d9").unwrap()).unwrap();
    assert_eq!(
        next.outcome(),
        Some(Outcome {
            winner: Some(Color::White),
            termination: Termination::Scepter
        })
    );
    assert_eq!(next.count_legal_moves(), 0);
    // In plain palace it is an ordinary King move.
    let pos = Position::from_fen(Variant::Palace, fen).unwrap();
    let next = pos.play(pos.parse_move("d8d9").unwrap()).unwrap();
    assert_eq!(next.outcome(), None);

    // ninjutsu: a White King that reaches f7 (Black's palace) wins at once.
    let fen = "k5*/7/4K**/5**/5**/5**/7/6* w - - 0 1";
    let pos = Position::from_fen(Variant::Ninjutsu, fen).unwrap();
    let next = pos.play(pos.parse_move("e6f7").unwrap()).unwrap();
    assert_eq!(
        next.outcome(),
        Some(Outcome {
            winner: Some(Color::White),
            termination: Termination::Scepter
        })
    );
    assert!(next.legal_moves().is_empty());
}
