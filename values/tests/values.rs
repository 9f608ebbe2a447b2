//! Piece-value methods on data whose true values are known: synthetic games drawn from a
//! logistic model, handicap scores, and a probe of an evaluator with known material values.

use ninjazero_data::{GameRecord, PositionRecord};
use ninjazero_model::UniformEvaluator;
use ninjazero_rules::{ByColor, ByRole, Color, Position, Role, Variant};
use ninjazero_testkit::random_positions;
use ninjazero_values::matches::{
    handicap_squares, handicap_start, match_estimates, play_handicap_games, Handicap,
    HandicapScores, HandicapSettings,
};
use ninjazero_values::probe::probe;
use ninjazero_values::regression::outcome_regression;
use ninjazero_values::{
    in_starting_army, verdicts, Estimate, NotEnoughData, PieceKind, MIN_SAMPLES,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const PAWN: PieceKind = PieceKind::Board(Role::Pawn);
const KNIGHT: PieceKind = PieceKind::Board(Role::Knight);
const BISHOP: PieceKind = PieceKind::Board(Role::Bishop);
const ROOK: PieceKind = PieceKind::Board(Role::Rook);
const QUEEN: PieceKind = PieceKind::Board(Role::Queen);

fn find(estimates: &[Estimate], kind: PieceKind) -> &Estimate {
    estimates
        .iter()
        .find(|e| e.piece == kind)
        .unwrap_or_else(|| panic!("no estimate for {}", kind.name()))
}

fn lines_of(not_enough: &[NotEnoughData]) -> Vec<String> {
    not_enough.iter().map(NotEnoughData::line).collect()
}

/// `count` games of [`synthetic_game`], ids from 0, drawn with an rng seeded with `seed`.
fn synthetic_games(count: u64, seed: u64, true_values: &[(Role, f64)]) -> Vec<GameRecord> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count)
        .map(|id| synthetic_game(id, &mut rng, true_values))
        .collect()
}

/// A game of `plies` positions with the given material per colour
/// and White's result drawn from `P(White wins) = sigmoid(0.4 * value difference)`.
fn synthetic_game(id: u64, rng: &mut StdRng, true_values: &[(Role, f64)]) -> GameRecord {
    let mut material = ByColor::<ByRole<u8>>::default();
    material[Color::White][Role::King] = 1;
    material[Color::Black][Role::King] = 1;
    let mut difference = 0.0;
    for &(role, value) in true_values {
        for (side, sign) in [(Color::White, 1.0), (Color::Black, -1.0)] {
            let count = rng.random_range(0..3u8);
            material[side][role] = count;
            difference += sign * value * f64::from(count);
        }
    }
    let p_white = 1.0 / (1.0 + (-0.4 * difference).exp());
    let winner = if rng.random_bool(p_white) {
        Some(Color::White)
    } else {
        Some(Color::Black)
    };
    let position = PositionRecord {
        ply: 0,
        fen: String::new(),
        side_to_move: Color::White,
        policy: Vec::new(),
        root_value: 0.0,
        full_search: false,
        material,
        hand: [0, 0],
        move_played: String::new(),
    };
    GameRecord {
        game_id: id,
        variant: Variant::Chess,
        start_fen: String::new(),
        positions: vec![position; 3],
        winner,
        termination: "checkmate".to_string(),
        model_id: "test".to_string(),
        resignation_disabled: false,
        would_resign: None,
    }
}

#[test]
fn outcome_regression_recovers_the_values_behind_the_results() {
    let truth = [(Role::Pawn, 1.0), (Role::Knight, 3.0), (Role::Rook, 5.0)];
    let games = synthetic_games(6000, 1, &truth);
    let kinds = [PAWN, KNIGHT, BISHOP, ROOK];
    let measured = outcome_regression(&games, &kinds, 200, 7).unwrap();
    let estimates = &measured.estimates;
    // The Bishop never differs in these games: it gets no value, and says why.
    assert!(estimates.iter().all(|e| e.piece != BISHOP));
    assert_eq!(
        lines_of(&measured.not_enough),
        ["Bishop: not enough data (6000 games, Bishop never unbalanced)"]
    );
    assert_eq!(find(estimates, PAWN).value, 1.0);
    for (kind, want) in [(KNIGHT, 3.0), (ROOK, 5.0)] {
        let e = find(estimates, kind);
        assert!(
            e.low <= want && want <= e.high,
            "{}: {:.2} [{:.2}, {:.2}], truth {want}",
            kind.name(),
            e.value,
            e.low,
            e.high
        );
        assert!(
            e.high - e.low < 0.6 * want,
            "{}: interval too wide",
            kind.name()
        );
        assert_eq!(e.samples, 3 * games.len());
    }
    let lines: Vec<String> = verdicts(estimates).iter().map(|v| v.line()).collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with("Rook > Knight"), "{lines:?}");
}

#[test]
fn regression_skips_positions_in_the_middle_of_an_exchange() {
    // White is a Knight up only in the position whose move takes it back: not quiet, so
    // nothing is measured for the Knight.
    let mut games = synthetic_games(400, 2, &[(Role::Pawn, 1.0)]);
    for game in &mut games {
        game.positions[1].material[Color::White][Role::Knight] = 1;
    }
    let measured = outcome_regression(&games, &[PAWN, KNIGHT], 50, 1).unwrap();
    assert!(measured.estimates.iter().all(|e| e.piece != KNIGHT));
    assert_eq!(
        lines_of(&measured.not_enough),
        ["Knight: not enough data (400 games, Knight never unbalanced)"]
    );
}

#[test]
fn regression_needs_a_pawn_imbalance() {
    let games = synthetic_games(50, 3, &[(Role::Knight, 3.0)]);
    let error = outcome_regression(&games, &[PAWN, KNIGHT], 50, 1).unwrap_err();
    assert!(error.contains("Pawn"), "{error}");
}

#[test]
fn a_pawn_that_does_not_help_to_win_cannot_be_the_unit() {
    // A Pawn more costs here: the regression says so, with the coefficient, and values
    // nothing in Pawns.
    let truth = [(Role::Pawn, -1.0), (Role::Knight, 3.0)];
    let games = synthetic_games(2000, 4, &truth);
    let error = outcome_regression(&games, &[PAWN, KNIGHT], 50, 1).unwrap_err();
    assert!(
        error.starts_with("the Pawn's coefficient is not positive (-0.")
            && error.ends_with("a Pawn more does not score better, so the Pawn cannot be the unit"),
        "{error}"
    );
}

#[test]
fn handicaps_take_the_traditional_pieces_off() {
    let start = Position::start(Variant::Chess);
    let squares = |color, role, count| -> Vec<String> {
        handicap_squares(&start, color, role, count)
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    assert_eq!(squares(Color::White, Role::Pawn, 3), ["f2", "g2", "e2"]);
    assert_eq!(squares(Color::Black, Role::Pawn, 1), ["f7"]);
    assert_eq!(squares(Color::White, Role::Knight, 1), ["b1"]);
    assert_eq!(squares(Color::Black, Role::Rook, 1), ["a8"]);
    let rook_odds = handicap_start(Variant::Chess, ROOK, Color::Black, 1).unwrap();
    assert_eq!(
        rook_odds.to_fen(),
        "1nbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQk - 0 1"
    );
    let two_pawns = handicap_start(Variant::Chess, PAWN, Color::White, 2).unwrap();
    assert_eq!(
        two_pawns.to_fen(),
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPP2P/RNBQKBNR w KQkq - 0 1"
    );
    assert!(handicap_start(Variant::Chess, QUEEN, Color::White, 2).is_err());
    // Every variant can give every board kind of its starting army as a handicap, and no
    // other kind (ninjutsu's Insane Ninja Knight comes only by promotion).
    for variant in Variant::ALL {
        for kind in PieceKind::of_variant(variant) {
            match kind {
                PieceKind::Board(role) if in_starting_army(variant, role) => {
                    for color in Color::ALL {
                        let position = handicap_start(variant, kind, color, 1).unwrap();
                        assert!(!position.legal_moves().is_empty(), "{variant} {kind:?}");
                    }
                }
                _ => assert!(
                    handicap_start(variant, kind, Color::White, 1).is_err(),
                    "{variant} {kind:?}"
                ),
            }
        }
    }
}

#[test]
fn every_piece_that_can_stand_on_the_board_is_a_kind_to_value() {
    let names = |variant| -> Vec<String> {
        PieceKind::of_variant(variant)
            .into_iter()
            .map(PieceKind::name)
            .collect()
    };
    assert_eq!(
        names(Variant::Chess),
        ["Pawn", "Queen", "Rook", "Bishop", "Knight"]
    );
    // The Insane Ninja Knight: only a promotion (or a Ninja Guard or Warrior entering the
    // enemy palace) brings it.
    let ninjutsu = names(Variant::Ninjutsu);
    assert!(
        ninjutsu.contains(&"Insane Ninja Knight".to_string()),
        "{ninjutsu:?}"
    );
    assert!(!in_starting_army(
        Variant::Ninjutsu,
        Role::InsaneNinjaKnight
    ));
    // Dropped Ninja Pawns stand on the board; those in hand are a kind of their own.
    let drops = names(Variant::InsaneNinjaDrops);
    assert!(drops.contains(&"Ninja Pawn".to_string()), "{drops:?}");
    assert_eq!(drops.last().map(String::as_str), Some("Ninja Pawn in hand"));
}

#[test]
fn a_piece_that_only_promotion_brings_is_valued_from_the_games() {
    let truth = [
        (Role::Pawn, 1.0),
        (Role::Knight, 3.0),
        (Role::InsaneNinjaKnight, 9.0),
    ];
    let games = synthetic_games(6000, 9, &truth);
    let kinds = PieceKind::of_variant(Variant::Ninjutsu);
    let measured = outcome_regression(&games, &kinds, 200, 7).unwrap();
    let e = find(
        &measured.estimates,
        PieceKind::Board(Role::InsaneNinjaKnight),
    );
    assert!(
        e.low <= 9.0 && 9.0 <= e.high,
        "{:.2} [{:.2}, {:.2}]",
        e.value,
        e.low,
        e.high
    );
}

#[test]
fn match_scores_become_pawns_through_pawn_odds() {
    // Pawn odds of 1, 2 and 3 Pawns at log-odds 0.4, 0.8 and 1.2: 0.4 per Pawn. Knight odds
    // at log-odds 1.2: 3 Pawns.
    let scores = |log_odds: f64, games: usize| {
        let wins = (games as f64 / (1.0 + (-log_odds).exp())).round() as usize;
        HandicapScores {
            points: (0..games)
                .map(|i| if i < wins { 1.0 } else { 0.0 })
                .collect(),
        }
    };
    let pawns: Vec<(usize, HandicapScores)> =
        (1..=3).map(|k| (k, scores(0.4 * k as f64, 4000))).collect();
    let measured = match_estimates(&[(KNIGHT, scores(1.2, 4000))], &pawns, 300, 5).unwrap();
    assert!(measured.not_enough.is_empty());
    let estimates = &measured.estimates;
    let e = find(estimates, KNIGHT);
    assert!((e.value - 3.0).abs() < 0.05, "{}", e.value);
    assert!(
        e.low < 3.0 && 3.0 < e.high && e.high - e.low < 1.0,
        "[{}, {}]",
        e.low,
        e.high
    );
    assert_eq!(e.samples, 4000);
    assert_eq!(find(estimates, PAWN).samples, 12000);
    // No edge from Pawn odds: no scale.
    let even = vec![(1, scores(0.0, 1000))];
    assert!(match_estimates(&[], &even, 50, 5).is_err());
}

#[test]
fn handicap_games_favour_the_full_side_and_ignore_threads_and_shards() {
    let settings = HandicapSettings {
        player: "alphabeta:depth=2".to_string(),
        games: 8,
        opening_plies: 2,
        max_plies: 300,
        seed: 3,
    };
    let spec: ninjazero_search::EngineSpec = settings.player.parse().unwrap();
    let make = spec.factory(Variant::Chess, tch::Device::Cpu, 0);
    let play_games = |games, threads| {
        play_handicap_games(
            &make,
            Variant::Chess,
            Handicap {
                kind: QUEEN,
                count: 1,
            },
            &settings,
            games,
            threads,
            &|| {},
        )
        .unwrap()
    };
    let play = |threads| play_games(0..settings.games, threads);
    let scores = play(2);
    assert_eq!(scores.points.len(), 8);
    assert!(scores.score() > 0.7, "Queen odds: {:?}", scores.points);
    assert!(
        scores.points.iter().all(|&p| p >= 0.5),
        "{:?}",
        scores.points
    );
    assert_eq!(play(1), scores);
    // A shard's games are the same games as in the whole series.
    assert_eq!(play_games(3..8, 2).points, scores.points[3..]);
}

#[test]
fn the_probe_reads_back_an_evaluators_material_values() {
    // The model-free evaluator's score is sigmoid(2/5 * material in rough Pawns), so its
    // log-odds drop is proportional to the value taken off: the probe must return the
    // rough values (Knight and Bishop 3, Rook 5, Queen 9).
    let positions = random_positions(Variant::Chess, 2, 30..31, 4);
    let mut evaluator = UniformEvaluator::default();
    let kinds = PieceKind::of_variant(Variant::Chess);
    let measured = probe(&mut evaluator, &positions, &kinds, 100, 1, &|_, _| {}).unwrap();
    assert!(measured.not_enough.is_empty(), "{:?}", measured.not_enough);
    for (kind, want) in [(KNIGHT, 3.0), (BISHOP, 3.0), (ROOK, 5.0), (QUEEN, 9.0)] {
        let e = find(&measured.estimates, kind);
        assert!(
            (e.value - want).abs() < 0.05,
            "{}: {}",
            kind.name(),
            e.value
        );
        assert!(e.samples > 0);
    }
}

#[test]
fn two_games_are_not_enough_to_value_anything() {
    let truth = [(Role::Pawn, 1.0), (Role::Rook, 5.0), (Role::Queen, 9.0)];
    let games = synthetic_games(2, 6, &truth);
    let kinds = PieceKind::of_variant(Variant::Chess);
    let error = outcome_regression(&games, &kinds, 200, 1).unwrap_err();
    assert!(
        error.starts_with("not enough data to measure the Pawn, the unit (2 games, Pawn "),
        "{error}"
    );
}

#[test]
fn a_piece_rarely_unbalanced_gets_no_value_and_no_verdict() {
    let truth = [(Role::Pawn, 1.0), (Role::Knight, 3.0), (Role::Rook, 5.0)];
    let mut games = synthetic_games(3000, 8, &truth);
    // White is a Queen up in the few games just short of the minimum.
    let few = MIN_SAMPLES - 1;
    for game in games.iter_mut().take(few) {
        for position in &mut game.positions {
            position.material[Color::White][Role::Queen] = 1;
        }
        game.winner = Some(Color::White);
    }
    let measured = outcome_regression(&games, &[PAWN, KNIGHT, ROOK, QUEEN], 100, 3).unwrap();
    assert!(measured.estimates.iter().all(|e| e.piece != QUEEN));
    assert_eq!(
        lines_of(&measured.not_enough),
        [format!(
            "Queen: not enough data (3000 games, Queen unbalanced in {few}; {MIN_SAMPLES} needed)"
        )]
    );
    let lines: Vec<String> = verdicts(&measured.estimates)
        .iter()
        .map(|v| v.line())
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines.iter().all(|l| !l.contains("Queen")), "{lines:?}");
}

#[test]
fn matches_value_no_piece_from_too_few_or_uninformative_games() {
    let scores = |wins: usize, draws: usize, losses: usize| HandicapScores {
        points: [(wins, 1.0), (draws, 0.5), (losses, 0.0)]
            .iter()
            .flat_map(|&(n, p)| std::iter::repeat_n(p, n))
            .collect(),
    };
    let pawns: Vec<(usize, HandicapScores)> = (1..=3)
        .map(|k| (k, scores(200 + 40 * k, 0, 200 - 40 * k)))
        .collect();
    let matches = [
        (KNIGHT, scores(3, 1, 0)),
        // Every game drawn: each resample scores 0.5, so the value never moves.
        (BISHOP, scores(0, 100, 0)),
        (ROOK, scores(150, 40, 10)),
    ];
    let measured = match_estimates(&matches, &pawns, 200, 2).unwrap();
    assert_eq!(
        lines_of(&measured.not_enough),
        [
            format!("Knight: not enough data (4 games, Knight given as odds in 4; {MIN_SAMPLES} needed)"),
            "Bishop: not enough data (100 games: every bootstrap replicate gives the Bishop the same value)".to_string(),
        ]
    );
    let valued: Vec<PieceKind> = measured.estimates.iter().map(|e| e.piece).collect();
    assert_eq!(valued, [PAWN, ROOK]);
    assert!(verdicts(&measured.estimates).is_empty());
    // Pawn odds in too few games: no scale, so no value at all.
    let short: Vec<(usize, HandicapScores)> = vec![(1, scores(3, 0, 1))];
    let error = match_estimates(&matches, &short, 200, 2).unwrap_err();
    assert!(error.contains("not enough data"), "{error}");
}
