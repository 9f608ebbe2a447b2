//! The baseline players and the arena: alpha-beta tactics, determinism and limits through the
//! engine interface, paired openings, Elo and SPRT arithmetic, JSON files and player specs.

mod common;

use common::games_from_pairs;
use ninjazero_arena::arena::{elo_from_score, score_from_elo, sprt_verdict, SprtVerdict};
use ninjazero_arena::{run_arena, ArenaConfig, ArenaResult, SprtConfig};
use ninjazero_rules::{Color, Game, Position, Termination, Variant};
use ninjazero_search::{
    AlphaBetaConfig, AlphaBetaEngine, Engine, EngineSpec, Limits, RandomEngine,
};

fn game_from(variant: Variant, fen: &str) -> Game {
    Game::from_position(Position::from_fen(variant, fen).expect("test FEN is valid"))
}

/// Player factories for `run_arena`.
fn alphabeta(d: u32) -> impl Fn() -> Result<Box<dyn Engine>, String> + Sync {
    move || Ok(Box::new(depth(d)) as Box<dyn Engine>)
}

fn random(seed: u64) -> impl Fn() -> Result<Box<dyn Engine>, String> + Sync {
    move || Ok(Box::new(RandomEngine::new(seed)) as Box<dyn Engine>)
}

fn spec(text: &'static str, seed: u64) -> impl Fn() -> Result<Box<dyn Engine>, String> + Sync {
    move || build(text, seed)
}

/// A spec's engine for chess, with any error as text.
fn build(text: &str, seed: u64) -> Result<Box<dyn Engine>, String> {
    let spec: EngineSpec = text.parse().map_err(|e| format!("{e}"))?;
    spec.build(Variant::Chess, tch::Device::Cpu, seed)
        .map_err(|e| e.to_string())
}

/// Alpha-beta to depth `d` with the default evaluation.
fn depth(d: u32) -> AlphaBetaEngine {
    AlphaBetaEngine::new(AlphaBetaConfig::default(), Limits::depth(d))
}

const INSANE_MATE: &str = "****2****/k9/pp8/10/10/10/10/10/10/10/5K3Q/****2**** w - - 0 1";

#[test]
fn alphabeta_finds_mate_in_one() {
    let cases = [
        (Variant::Chess, "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"),
        // The Black King in the corner a10, walled in by its own pawns.
        (Variant::InsaneNinja, INSANE_MATE),
    ];
    for (variant, fen) in cases {
        for d in [1, 3] {
            let mut game = game_from(variant, fen);
            let mut player = depth(d);
            let m = player.choose(&game).unwrap();
            game.play(m).unwrap();
            let outcome = game.outcome().expect("the move mates");
            assert_eq!(outcome.termination, Termination::Checkmate, "{variant} {m}");
            assert_eq!(outcome.winner, Some(Color::White));
            assert!(player.last_search().unwrap().score > 900_000);
        }
    }
}

#[test]
fn alphabeta_wins_a_free_queen_deterministically() {
    let cases = [
        (Variant::Chess, "4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1", "d2d5"),
        (
            Variant::InsaneNinja,
            "****2****/5k4/10/10/10/3q6/10/10/10/3R6/5K4/****2**** w - - 0 1",
            "d2d6",
        ),
    ];
    for (variant, fen, capture) in cases {
        let game = game_from(variant, fen);
        let mut first = depth(3);
        let info = first.analyse(&game);
        assert_eq!(info.best.to_string(), capture, "{variant}");
        assert!(info.score > 500, "{variant}: score {}", info.score);
        // The same search again, and a fresh engine, give the same move, score and nodes.
        let again = first.analyse(&game);
        let fresh = depth(3).analyse(&game);
        for other in [again, fresh] {
            assert_eq!(other.best, info.best);
            assert_eq!(other.score, info.score);
            assert_eq!(other.nodes, info.nodes);
            assert_eq!(other.pv, info.pv);
        }
    }
}

/// Fast in work, not in seconds (which a loaded machine stretches): a depth-3 search of
/// the largest board takes 2,500 to 5,100 nodes per move with pruning and move ordering
/// working (deterministic, see above), against the cube of the branching factor (tens of
/// thousands and more) for plain minimax.
#[test]
fn alphabeta_depth_3_on_insane_ninja_is_fast() {
    let mut game = Game::new(Variant::InsaneNinja);
    let mut player = depth(3);
    let mut most = 0u64;
    for _ in 0..4 {
        let m = player.choose(&game).unwrap();
        let info = player.last_search().unwrap();
        eprintln!(
            "insane-ninja depth 3: {m} score {} nodes {} in {:?}",
            info.score, info.nodes, info.elapsed
        );
        assert_eq!(info.depth, 3);
        most = most.max(info.nodes);
        game.play(m).unwrap();
    }
    assert!(most <= 20_000, "depth 3 searched {most} nodes");
}

#[test]
fn alphabeta_plays_every_variant() {
    for variant in Variant::ALL {
        let config = ArenaConfig {
            pairs: 1,
            first_pair: 0,
            opening_plies: 2,
            max_plies: 80,
            seed: 3,
            sprt: None,
        };
        let result = run_arena(
            &alphabeta(2),
            &random(1),
            variant,
            &config,
            2,
            &|_, _, _| {},
        )
        .unwrap();
        assert_eq!(result.variant, variant.id());
        for g in &result.game_results {
            assert!(!g.termination.starts_with("illegal"), "{variant}: {g:?}");
        }
        assert_eq!(result.losses, 0, "{variant}: {}", result.summary_line());
    }
}

#[test]
fn time_limited_alphabeta_deepens_within_its_time() {
    let game = Game::new(Variant::Chess);
    let limits = Limits::time(std::time::Duration::from_millis(200));
    let info = AlphaBetaEngine::new(AlphaBetaConfig::default(), limits).analyse(&game);
    assert!(info.depth >= 2, "reached depth {}", info.depth);
    // The clock ended it, not the depth limit (no mate is near the start position).
    assert!(info.depth < 64, "reached depth {}", info.depth);
}

#[test]
fn alphabeta_beats_the_random_mover() {
    let config = ArenaConfig {
        pairs: 3,
        first_pair: 0,
        opening_plies: 4,
        max_plies: 300,
        seed: 1,
        sprt: None,
    };
    let result = run_arena(
        &alphabeta(2),
        &random(7),
        Variant::Chess,
        &config,
        2,
        &|_, _, _| {},
    )
    .unwrap();
    eprintln!("{}", result.summary_line());
    assert_eq!(result.games, 6);
    assert_eq!(result.losses, 0, "{}", result.summary_line());
    assert!(result.score >= 0.75, "{}", result.summary_line());
    assert!(result.elo_low > 0.0, "{}", result.summary_line());
}

#[test]
fn openings_are_paired_with_colours_swapped() {
    let config = ArenaConfig {
        pairs: 3,
        first_pair: 0,
        opening_plies: 4,
        max_plies: 30,
        seed: 11,
        sprt: None,
    };
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let (a, b) = (spec("uniform:sims=8", 0), spec("random", 3));
    let result = run_arena(&a, &b, Variant::Chess, &config, 2, &|done, total, r| {
        assert_eq!(total, 6);
        assert_eq!(r.games, done);
        calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    })
    .unwrap();
    assert_eq!(calls.into_inner(), 3, "one report per pair");
    // The thread count does not change the games.
    let alone = run_arena(&a, &b, Variant::Chess, &config, 1, &|_, _, _| {}).unwrap();
    assert_eq!(alone, result);
    assert_eq!(result.games, 6);
    assert_eq!(result.wins + result.draws + result.losses, 6);
    assert_eq!(result.player_a, "uniform:sims=8");
    assert_eq!(result.player_b, "random");
    for pair in result.game_results.chunks(2) {
        assert_eq!(pair[0].opening, pair[1].opening);
        assert_eq!(pair[0].opening.len(), 4);
        assert!(pair[0].a_is_white && !pair[1].a_is_white);
        for g in pair {
            assert!(["1-0", "0-1", "1/2-1/2"].contains(&g.result.as_str()));
            assert!(g.plies >= 4 && g.plies <= 30, "{} plies", g.plies);
        }
    }
    let openings: std::collections::HashSet<_> =
        result.game_results.iter().map(|g| &g.opening).collect();
    assert_eq!(openings.len(), 3, "each pair has its own opening");
}

/// The model-free evaluator's outputs do not depend on the batch, so an arena of MCTS
/// players without a time limit (all games in lockstep, their leaves batched) plays
/// exactly the games of one game per thread (forced by a time limit far beyond the
/// simulations), the SPRT stopping after the same pairs; players that keep their trees
/// between moves keep them alike in both, and play other games than fresh trees.
#[test]
fn games_in_lockstep_are_the_games_played_one_at_a_time() {
    let config = ArenaConfig {
        pairs: 3,
        first_pair: 1,
        opening_plies: 4,
        max_plies: 60,
        seed: 5,
        sprt: Some(SprtConfig::new(0.0, 300.0)),
    };
    let play = |a: &'static str, b: &'static str| {
        run_arena(
            &spec(a, 0),
            &spec(b, 1),
            Variant::Chess,
            &config,
            2,
            &|_, _, _| {},
        )
        .unwrap()
    };
    // A, A with a time limit far beyond its simulations (one game per thread), B.
    let (fresh, timed) = ("uniform:sims=16", "uniform:sims=16:ms=600000");
    let (keeping, keeping_timed) = (
        "uniform:sims=16:reuse=1",
        "uniform:sims=16:ms=600000:reuse=1",
    );
    let cases = [
        (fresh, timed, "alphabeta:depth=1"),
        (fresh, timed, "uniform:sims=12:batch=4"),
        (fresh, timed, "random"),
        (keeping, keeping_timed, "uniform:sims=12:batch=4:reuse=1"),
    ];
    for (a, a_timed, b) in cases {
        let lockstep = play(a, b);
        let one_at_a_time = play(a_timed, b);
        assert_eq!(lockstep.game_results, one_at_a_time.game_results, "{a} {b}");
        assert_eq!(lockstep.sprt, one_at_a_time.sprt, "{a} {b}");
        assert!(lockstep.games >= 2, "{b}: {}", lockstep.summary_line());
        assert!(
            lockstep.game_results.iter().any(|g| g.plies > 20),
            "{b}: the games were played"
        );
    }
    assert_ne!(
        play(fresh, "uniform:sims=12:batch=4").game_results,
        play(keeping, "uniform:sims=12:batch=4:reuse=1").game_results
    );
}

#[test]
fn elo_arithmetic() {
    assert!(elo_from_score(0.5).abs() < 1e-9);
    assert!((elo_from_score(0.75) - 190.848).abs() < 0.01);
    assert!((elo_from_score(0.25) + 190.848).abs() < 0.01);
    assert!((score_from_elo(elo_from_score(0.64)) - 0.64).abs() < 1e-12);

    // 3 pairs: A wins both, wins one and draws one, loses one and wins one (as Black).
    let games = games_from_pairs(&[("1-0", "0-1"), ("1-0", "1/2-1/2"), ("0-1", "0-1")]);
    let r = ArenaResult::from_games("chess", "A", "B", games, None);
    assert_eq!((r.wins, r.draws, r.losses), (4, 1, 1));
    assert!((r.score - 0.75).abs() < 1e-12);
    assert!((r.elo - 190.848).abs() < 0.01);
    assert!(r.elo_low < r.elo && r.elo < r.elo_high);
    assert!(r.sprt.is_none());
    // The interval is worked out in arena_known_answers.rs (elo_interval_of_three_pairs).
    assert_eq!(
        r.summary_line(),
        "A vs B: +4 =1 -1, score 0.750, Elo +191 [-42, +573] (95 %)"
    );

    // All won: finite, corrected score (games + 0.5) / (games + 1).
    let all = ArenaResult::from_games(
        "chess",
        "A",
        "B",
        games_from_pairs(&[("1-0", "0-1"); 5]),
        None,
    );
    assert_eq!(all.score, 1.0);
    // E(10.5 / 11) = -400 log10(1/21) = 400 log10 21.
    assert!((all.elo - 528.887_718).abs() < 1e-6, "{}", all.elo);
    assert!(all.elo_low.is_finite() && all.elo_high.is_finite());
    assert!(all.elo_low > 0.0 && all.elo_low < all.elo && all.elo < all.elo_high);
    let none = ArenaResult::from_games("chess", "A", "B", Vec::new(), None);
    assert_eq!(none.elo, 0.0);
    assert!(
        none.summary_line().contains("Elo +0 ["),
        "{}",
        none.summary_line()
    );
    // No games: the prior variance 0.125 over one unit, margin 1.96·√0.125 = 0.69296
    // around 0.5, clamped to [0.25, 0.75]: E(0.25) = -400 log10 3 and E(0.75) = 400 log10 3.
    assert!(
        (none.elo_low + 190.848_502).abs() < 1e-6,
        "{}",
        none.elo_low
    );
    assert!(
        (none.elo_high - 190.848_502).abs() < 1e-6,
        "{}",
        none.elo_high
    );

    // More games narrow the interval.
    let many = games_from_pairs(&[("1-0", "1/2-1/2"); 40]);
    let few = games_from_pairs(&[("1-0", "1/2-1/2"); 4]);
    let width = |g| {
        let r = ArenaResult::from_games("chess", "A", "B", g, None);
        r.elo_high - r.elo_low
    };
    assert!(width(many) < width(few) / 2.0);
}

#[test]
fn sprt_verdicts() {
    let config = SprtConfig::new(0.0, 50.0);
    let (lower, upper) = config.bounds();
    // ln(0.05 / 0.95) = -ln 19 and ln(0.95 / 0.05) = ln 19.
    assert!((lower + 2.944_439).abs() < 1e-6, "{lower}");
    assert!((upper - 2.944_439).abs() < 1e-6, "{upper}");

    let wins = games_from_pairs(&[("1-0", "0-1"); 10]);
    assert_eq!(sprt_verdict(&wins[..2], &config).0, SprtVerdict::Continue);
    assert_eq!(sprt_verdict(&wins, &config).0, SprtVerdict::AcceptH1);
    let draws = games_from_pairs(&[("1/2-1/2", "1/2-1/2"); 20]);
    assert_eq!(sprt_verdict(&draws, &config).0, SprtVerdict::AcceptH0);
    let losses = games_from_pairs(&[("0-1", "1-0"); 10]);
    assert_eq!(sprt_verdict(&losses, &config).0, SprtVerdict::AcceptH0);
    let r = ArenaResult::from_games("chess", "A", "B", wins, Some(&config));
    assert!(r.sprt.as_deref().unwrap().starts_with("H1 accepted"));
    assert!(r.summary_line().contains("SPRT: H1 accepted"));

    // A real run: alpha-beta against the random mover stops early with H1.
    let arena = ArenaConfig {
        pairs: 20,
        first_pair: 0,
        opening_plies: 4,
        max_plies: 300,
        seed: 2,
        sprt: Some(config),
    };
    let result = run_arena(
        &alphabeta(2),
        &random(5),
        Variant::Chess,
        &arena,
        2,
        &|_, _, _| {},
    )
    .unwrap();
    eprintln!("{}", result.summary_line());
    assert!(result.games < 40, "{}", result.summary_line());
    assert_eq!(result.games % 2, 0);
    assert!(result.sprt.as_deref().unwrap().starts_with("H1 accepted"));
}

#[test]
fn results_round_trip_through_json() {
    let tmp = ninjazero_testkit::temp_dir();
    let path = tmp.path().join("arena/gen-0001-vs-0000.json");
    let games = games_from_pairs(&[("1-0", "1/2-1/2"), ("0-1", "1-0")]);
    let result =
        ArenaResult::from_games("chess", "A", "B", games, Some(&SprtConfig::new(0.0, 10.0)));
    result.save(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let back: ArenaResult = serde_json::from_str(&text).unwrap();
    // Floats come back to within parsing precision; everything else exactly.
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * x.abs().max(1.0);
    assert!(close(back.score, result.score) && close(back.elo, result.elo));
    assert!(close(back.elo_low, result.elo_low) && close(back.elo_high, result.elo_high));
    let floats_equal = ArenaResult {
        score: result.score,
        elo: result.elo,
        elo_low: result.elo_low,
        elo_high: result.elo_high,
        ..back
    };
    assert_eq!(floats_equal, result);
    let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "no temporary file is left: {leftovers:?}"
    );
}

#[test]
fn player_specs() {
    let cpu = tch::Device::Cpu;
    let v = Variant::Chess;
    let name = |spec: &str| {
        let spec: EngineSpec = spec.parse().unwrap();
        spec.build(v, cpu, 0).unwrap().name()
    };
    assert_eq!(name("random"), "random");
    assert_eq!(name("uniform"), "uniform:sims=64");
    assert_eq!(name("uniform:sims=16"), "uniform:sims=16");
    assert_eq!(name("uniform:ms=100"), "uniform:ms=100");
    assert_eq!(name("uniform:ms=100:sims=8"), "uniform:sims=8:ms=100");
    assert_eq!(name("alphabeta:depth=3"), "alphabeta:depth=3");
    assert_eq!(name("alphabeta:ms=200"), "alphabeta:ms=200");
    assert_eq!(name("alphabeta:depth=4:ms=50"), "alphabeta:depth=4:ms=50");
    assert_eq!(
        name("alphabeta:depth=2:values=N=3.5,b=3.25"),
        "alphabeta:depth=2:values=custom"
    );

    let error = |spec: &str| match build(spec, 0) {
        Ok(p) => panic!("'{spec}' was accepted as {}", p.name()),
        Err(e) => e,
    };
    let e = error("mcts:missing.safetensors");
    assert!(
        e.contains("missing.safetensors") && e.contains("does not exist"),
        "{e}"
    );
    let e = error("mcts:missing.safetensors:sims=32");
    assert!(e.contains("'missing.safetensors'"), "{e}");
    let e = error("alphabeta:depth=x");
    assert!(e.contains("depth") && e.contains("'x'"), "{e}");
    let e = error("alphabeta");
    assert!(e.contains("depth=D") && e.contains("ms=T"), "{e}");
    let e = error("alphabeta:depth=0");
    assert!(e.contains("depth must be"), "{e}");
    let e = error("alphabeta:depth=3:values=X=2");
    assert!(e.contains("'X' is not a piece letter"), "{e}");
    let e = error("uniform:sims=many");
    assert!(e.contains("sims") && e.contains("'many'"), "{e}");
    let e = error("uniform:simulations=8");
    assert!(e.contains("unknown option 'simulations'"), "{e}");
    let e = error("minimax:depth=3");
    assert!(
        e.contains("unknown kind 'minimax'") && e.contains("alphabeta"),
        "{e}"
    );
}
