//! Search behaviour and the self-play run: terminal values, determinism, restarts.

use ninjazero_data::{finished_game_ids, read_games, DatasetWriter, FileMeta, GameRecord};
use ninjazero_model::{EvalRequest, Evaluation, Evaluator, UniformEvaluator};
use ninjazero_rules::{Color, Position, Variant};
use ninjazero_selfplay::{
    parse_player, play_player_dataset, run_selfplay, PlayerGamesOptions, RootSearch, SearchConfig,
    SelfPlayGame, SelfPlayOptions,
};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

fn quiet_config() -> SearchConfig {
    SearchConfig {
        simulations: 24,
        cheap_simulations: 8,
        max_plies: 30,
        resign_disabled_fraction: 1.0,
        ..SearchConfig::default()
    }
}

/// Plays `game` to its end with `evaluator`, one leaf at a time.
fn play_out(
    mut game: SelfPlayGame,
    evaluator: &mut dyn Evaluator,
    config: &SearchConfig,
) -> GameRecord {
    let mut out = vec![Evaluation::default()];
    while game.prepare_leaf(config) {
        let request: EvalRequest = game.request().expect("a pending leaf");
        evaluator.evaluate(&[request], &mut out);
        game.complete_leaf(&out[0], config);
    }
    game.into_record("test")
}

#[test]
fn search_finds_a_mate_in_one_through_terminal_values() {
    let cases = [
        (Variant::Chess, "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "a1a8"),
        // A back-rank mate on the 10x10 board; the pawn on c3 closes the other one.
        (
            Variant::Asylum,
            "5k4/4ppp3/10/10/10/10/10/2P7/10/Q4K4 w - - 0 1",
            "a1a10",
        ),
    ];
    for (variant, fen, mate) in cases {
        for root_search in [RootSearch::Puct, RootSearch::Gumbel] {
            let config = SearchConfig {
                root_search,
                simulations: 200,
                full_search_probability: 1.0,
                temperature_plies: 0,
                ..quiet_config()
            };
            let start = Position::from_fen(variant, fen).unwrap();
            let game = SelfPlayGame::new(0, start, 1, &config);
            let record = play_out(game, &mut UniformEvaluator::default(), &config);
            assert_eq!(
                record.positions[0].move_played, mate,
                "{variant} {root_search:?}"
            );
            assert_eq!(record.termination, "checkmate");
            assert_eq!(record.winner, Some(Color::White));
            let policy = &record.positions[0].policy;
            let total: f32 = policy.iter().map(|p| p.probability).sum();
            assert!((total - 1.0).abs() < 1e-4, "policy sums to {total}");
            let best = policy
                .iter()
                .max_by(|a, b| a.probability.total_cmp(&b.probability))
                .unwrap();
            assert_eq!(
                best.move_text, mate,
                "{variant} {root_search:?}: the target favours the mate"
            );
        }
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("ninjazero-selfplay-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn run(dir: &Path, variant: Variant, games: u64, seed: u64, config: &SearchConfig) -> u64 {
    let options = SelfPlayOptions {
        start: Position::start(variant),
        games,
        concurrency: 4,
        seed,
        config: config.clone(),
        model_id: "uniform".to_string(),
    };
    let meta = FileMeta {
        variant,
        search_settings: "{}".to_string(),
        seed,
        model_id: "uniform".to_string(),
    };
    let done = finished_game_ids(dir).unwrap();
    let mut writer = DatasetWriter::create(dir, meta, 2).unwrap();
    let stats = run_selfplay(
        &options,
        &mut UniformEvaluator::default(),
        &mut writer,
        &done,
        &|_| {},
    )
    .unwrap();
    writer.finish().unwrap();
    stats.games
}

fn moves_by_game(dir: &Path, variant: Variant) -> Vec<(u64, Vec<String>)> {
    let mut games: Vec<_> = read_games(dir, Some(variant))
        .unwrap()
        .into_iter()
        .map(|g| {
            (
                g.game_id,
                g.positions.into_iter().map(|p| p.move_played).collect(),
            )
        })
        .collect();
    games.sort();
    games
}

#[test]
fn the_same_seed_gives_the_same_games() {
    let variant = Variant::InsaneNinjaDrops;
    let config = quiet_config();
    let (a, b, c) = (temp_dir("seed-a"), temp_dir("seed-b"), temp_dir("seed-c"));
    run(&a, variant, 5, 7, &config);
    run(&b, variant, 5, 7, &config);
    run(&c, variant, 5, 8, &config);
    let games = moves_by_game(&a, variant);
    assert_eq!(games.len(), 5);
    assert_eq!(games, moves_by_game(&b, variant));
    assert_ne!(games, moves_by_game(&c, variant));
    for dir in [a, b, c] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}

#[test]
fn a_restarted_run_adds_only_the_missing_games() {
    let variant = Variant::Ninjutsu;
    let config = SearchConfig {
        root_search: RootSearch::Gumbel,
        ..quiet_config()
    };
    let dir = temp_dir("restart");
    assert_eq!(run(&dir, variant, 3, 1, &config), 3);
    std::fs::write(dir.join("games-killed.arrow.tmp"), b"half a file").unwrap();
    assert_eq!(run(&dir, variant, 5, 1, &config), 2);
    assert_eq!(run(&dir, variant, 5, 1, &config), 0);
    let ids: HashSet<u64> = finished_game_ids(&dir).unwrap();
    assert_eq!(ids, (0..5).collect());
    let games = read_games(&dir, Some(variant)).unwrap();
    assert_eq!(games.len(), 5);
    for game in &games {
        // Every recorded move replays legally from the start position.
        let mut pos = Position::from_fen(variant, &game.start_fen).unwrap();
        for record in &game.positions {
            assert_eq!(record.fen, pos.to_fen());
            pos = pos
                .play(pos.parse_move(&record.move_played).unwrap())
                .unwrap();
        }
    }
    // Same seed as a single uninterrupted run of 5 games.
    let single = temp_dir("restart-single");
    run(&single, variant, 5, 1, &config);
    assert_eq!(
        moves_by_game(&dir, variant),
        moves_by_game(&single, variant)
    );
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(single).unwrap();
}

/// With uniform priors neither colour may be favoured by the search itself (an early
/// version broke ties by move generation order, and Black won three games in four).
#[test]
fn model_free_self_play_favours_neither_colour() {
    let variant = Variant::Chess;
    let dir = temp_dir("colours");
    let config = SearchConfig {
        max_plies: 200,
        ..SearchConfig::default()
    };
    let options = SelfPlayOptions {
        start: Position::start(variant),
        games: 64,
        concurrency: 64,
        seed: 5,
        config,
        model_id: "uniform".to_string(),
    };
    let meta = FileMeta {
        variant,
        search_settings: "{}".to_string(),
        seed: 5,
        model_id: "uniform".to_string(),
    };
    let mut writer = DatasetWriter::create(&dir, meta, 64).unwrap();
    let stats = run_selfplay(
        &options,
        &mut UniformEvaluator::default(),
        &mut writer,
        &HashSet::new(),
        &|_| {},
    )
    .unwrap();
    let [white, _, black] = stats.results;
    let decisive = (white + black) as f64;
    assert!(
        white as f64 > 0.3 * decisive && black as f64 > 0.3 * decisive,
        "White/draw/Black {:?}",
        stats.results
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_searcher_finds_mates_and_respects_its_limits() {
    use ninjazero_rules::Game;
    use ninjazero_selfplay::{SearchLimits, Searcher};
    use std::sync::atomic::AtomicBool;
    let config = SearchConfig::default();
    let mut evaluator = UniformEvaluator::default();
    let mut searcher = Searcher::new(&mut evaluator, &config);
    let stop = AtomicBool::new(false);
    let position = Position::from_fen(Variant::Chess, "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1").unwrap();
    let game = Game::from_position(position);
    let limits = SearchLimits {
        simulations: Some(300),
        time: None,
    };
    let mut reports = 0;
    let info = searcher
        .search(&game, &limits, &stop, &mut |_| reports += 1)
        .unwrap();
    assert_eq!(info.best.to_string(), "a1a8");
    assert_eq!(info.simulations, 300);
    assert!(info.value > 0.9, "a mate scores as a win: {}", info.value);
    assert_eq!(info.pv[0], info.best);
    assert!(reports >= 1);

    let stopped = AtomicBool::new(true);
    let info = searcher
        .search(&game, &SearchLimits::default(), &stopped, &mut |_| {})
        .unwrap();
    assert_eq!(
        info.simulations, 1,
        "a set stop flag ends the search after one simulation"
    );

    let mated = Game::from_position(
        Position::from_fen(Variant::Chess, "R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1").unwrap(),
    );
    assert!(searcher
        .search(&mated, &limits, &stop, &mut |_| {})
        .is_none());
}

#[test]
fn player_games_make_a_dataset_that_any_thread_count_reproduces() {
    let options = PlayerGamesOptions {
        start: Position::start(Variant::Chess),
        games: 6,
        opening_plies: 2,
        max_plies: 60,
        seed: 9,
        player: "alphabeta:depth=1".to_string(),
    };
    let make = || parse_player(&options.player, Variant::Chess, tch::Device::Cpu, 0);
    let play = |dir: &Path, games: u64, threads: usize| {
        let options = PlayerGamesOptions {
            games,
            ..options.clone()
        };
        play_player_dataset(dir, &options, &make, threads, "{}".into(), &|_| {}).unwrap()
    };
    let (two, one) = (temp_dir("player-two"), temp_dir("player-one"));
    assert_eq!(play(&two, 6, 2), 6);
    assert_eq!(play(&one, 4, 1), 4);
    // A rerun plays only the missing games.
    assert_eq!(play(&one, 6, 1), 2);
    assert_eq!(play(&one, 6, 1), 0);
    let sorted = |dir: &Path| {
        let mut games = read_games(dir, Some(Variant::Chess)).unwrap();
        games.sort_by_key(|g| g.game_id);
        games
    };
    let games = sorted(&two);
    assert_eq!(games, sorted(&one));
    for game in &games {
        assert_eq!(game.model_id, "alphabeta:depth=1");
        // Each position is the one before its move; the last move leads to the end.
        let mut position = Position::from_fen(Variant::Chess, &game.start_fen).unwrap();
        for record in &game.positions {
            assert_eq!(record.fen, position.to_fen());
            assert!(record.policy.is_empty() && !record.full_search);
            let m = position.parse_move(&record.move_played).unwrap();
            position = position.play(m).unwrap();
        }
        let ended = position.outcome().map(|o| o.winner);
        match ended {
            Some(winner) => assert_eq!(winner, game.winner, "game {}", game.game_id),
            None => {
                assert!(game.winner.is_none());
                let reason = game.termination.as_str();
                assert!(
                    ["max plies", "threefold repetition"].contains(&reason),
                    "{reason}"
                );
            }
        }
    }
    for dir in [two, one] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
