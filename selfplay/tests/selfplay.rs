//! Search behaviour and the self-play run: terminal values, determinism, restarts.

use ninjazero_arena::{play_player_dataset, PlayerGamesOptions};
use ninjazero_data::{
    dataset_files, finished_game_ids, read_games, DataError, DatasetWriter, FileMeta, FlushPolicy,
    GameRecord,
};
use ninjazero_model::{
    decode_move, BoardShape, EvalRequest, Evaluation, Evaluator, UniformEvaluator,
};
use ninjazero_rules::{Color, Game, Position, Variant};
use ninjazero_search::{Engine, EngineSpec, Limits, MctsEngine, RootSearch, SearchConfig};
use ninjazero_selfplay::{play_dataset, run_selfplay, RunStats, SelfPlayGame, SelfPlayOptions};
use ninjazero_testkit::{sorted_game_ids, temp_dir};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

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
        game.complete_leaf(&out[0]);
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

/// After the opening plies, the most visited move is played (every game from one position
/// alike, without root noise); an endgame temperature samples, so games part ways.
#[test]
fn an_endgame_temperature_samples_the_moves_after_the_opening() {
    let moves_of = |temperature_endgame: f32| -> HashSet<Vec<String>> {
        let config = SearchConfig {
            temperature_plies: 0,
            temperature_endgame,
            dirichlet_epsilon: 0.0,
            full_search_probability: 1.0,
            max_plies: 8,
            ..quiet_config()
        };
        (0..6)
            .map(|seed| {
                let game = SelfPlayGame::new(0, Position::start(Variant::Chess), seed, &config);
                let record = play_out(game, &mut UniformEvaluator::default(), &config);
                record
                    .positions
                    .iter()
                    .map(|p| p.move_played.clone())
                    .collect()
            })
            .collect()
    };
    assert_eq!(moves_of(0.0).len(), 1, "the most visited move, every game");
    assert!(moves_of(1.0).len() > 1, "sampled moves part the games");
}

/// A repetition penalty keeps both sides from repeating a position when anything else
/// is on offer; the same rook endgame without it shuffles back and forth.
#[test]
fn a_repetition_penalty_keeps_both_sides_from_repeating() {
    let play = |repetition_penalty: f32| -> (String, usize) {
        let config = SearchConfig {
            temperature_plies: 0,
            dirichlet_epsilon: 0.0,
            full_search_probability: 1.0,
            max_plies: 60,
            repetition_penalty,
            ..quiet_config()
        };
        let start = Position::from_fen(Variant::Chess, "r3k3/8/8/8/8/8/8/R3K3 w - - 0 1").unwrap();
        let game = SelfPlayGame::new(0, start, 7, &config);
        let record = play_out(game, &mut UniformEvaluator::default(), &config);
        // Piece placement, side to move, castling and en passant: the FEN without clocks.
        let seen: Vec<String> = record
            .positions
            .iter()
            .map(|p| p.fen.split(' ').take(4).collect::<Vec<_>>().join(" "))
            .collect();
        let repeats = seen.len() - seen.iter().collect::<HashSet<_>>().len();
        (record.termination, repeats)
    };
    let (termination, repeats) = play(0.0);
    assert_eq!(termination, "threefold repetition");
    assert!(repeats >= 2);
    let (termination, repeats) = play(1.0);
    assert_eq!(termination, "adjudication", "played to the ply cap");
    assert_eq!(repeats, 0);
}

fn options(variant: Variant, games: u64, seed: u64, config: &SearchConfig) -> SelfPlayOptions {
    SelfPlayOptions {
        start: Position::start(variant),
        game_ids: 0..games,
        concurrency: 4,
        seed,
        config: config.clone(),
        model_id: "uniform".to_string(),
    }
}

const TWO_PER_FILE: FlushPolicy = FlushPolicy {
    games_per_file: 2,
    max_age: None,
};

/// `play_dataset` with `policy`; `progress` sees the run's counts after every step.
fn play(
    dir: &Path,
    options: &SelfPlayOptions,
    policy: FlushPolicy,
    progress: &dyn Fn(u64, &RunStats),
) -> Result<(u64, RunStats), DataError> {
    let evaluator = &mut UniformEvaluator::default();
    play_dataset(dir, options, evaluator, policy, progress)
}

/// Plays the missing games of a dataset, two per file; returns the games played.
fn run(dir: &Path, variant: Variant, games: u64, seed: u64, config: &SearchConfig) -> u64 {
    let options = options(variant, games, seed, config);
    play(dir, &options, TWO_PER_FILE, &|_, _| {})
        .unwrap()
        .1
        .games
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

/// Workers given disjoint id ranges of one seed play the games a single run of the whole
/// range plays: a game's random stream depends on the seed and its id alone.
#[test]
fn disjoint_id_ranges_play_the_games_of_one_run() {
    let variant = Variant::Ninjutsu;
    let config = quiet_config();
    let tmp = temp_dir();
    let whole = tmp.path().join("whole");
    run(&whole, variant, 4, 3, &config);
    let shards = tmp.path().join("shards");
    for ids in [2..4, 0..2] {
        let shard = SelfPlayOptions {
            game_ids: ids,
            ..options(variant, 0, 3, &config)
        };
        play(&shards, &shard, TWO_PER_FILE, &|_, _| {}).unwrap();
    }
    let games = moves_by_game(&shards, variant);
    assert_eq!(games.iter().map(|g| g.0).collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert_eq!(games, moves_by_game(&whole, variant));
}

#[test]
fn the_same_seed_gives_the_same_games() {
    let variant = Variant::InsaneNinjaDrops;
    let config = quiet_config();
    let tmp = temp_dir();
    let [a, b, c] = ["seed-a", "seed-b", "seed-c"].map(|name| tmp.path().join(name));
    run(&a, variant, 5, 7, &config);
    run(&b, variant, 5, 7, &config);
    run(&c, variant, 5, 8, &config);
    let games = moves_by_game(&a, variant);
    assert_eq!(games.len(), 5);
    assert_eq!(games, moves_by_game(&b, variant));
    assert_ne!(games, moves_by_game(&c, variant));
}

#[test]
fn a_restarted_run_adds_only_the_missing_games() {
    let variant = Variant::Ninjutsu;
    let config = SearchConfig {
        root_search: RootSearch::Gumbel,
        ..quiet_config()
    };
    let tmp = temp_dir();
    let dir = tmp.path().join("restart");
    assert_eq!(run(&dir, variant, 3, 1, &config), 3);
    let killed = dir.join("games-killed.arrow.tmp");
    std::fs::write(&killed, b"half a file").unwrap();
    assert_eq!(run(&dir, variant, 5, 1, &config), 2);
    assert!(!killed.exists(), "the killed run's file is removed");
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
    let single = tmp.path().join("restart-single");
    run(&single, variant, 5, 1, &config);
    assert_eq!(
        moves_by_game(&dir, variant),
        moves_by_game(&single, variant)
    );
}

/// With uniform priors neither colour may be favoured by the search itself (an early
/// version broke ties by move generation order, and Black won three games in four).
#[test]
fn model_free_self_play_favours_neither_colour() {
    let variant = Variant::Chess;
    let tmp = temp_dir();
    let dir = tmp.path().join("colours");
    let config = SearchConfig {
        max_plies: 200,
        ..SearchConfig::default()
    };
    let options = SelfPlayOptions {
        start: Position::start(variant),
        game_ids: 0..64,
        concurrency: 64,
        seed: 5,
        config,
        model_id: "uniform".to_string(),
    };
    let meta = FileMeta {
        variant,
        search_settings: ninjazero_data::GameSettings::Synthetic,
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
}

#[test]
fn the_mcts_engine_finds_mates_and_respects_its_limits() {
    use ninjazero_rules::Game;
    use std::sync::atomic::AtomicBool;
    let stop = AtomicBool::new(false);
    let position = Position::from_fen(Variant::Chess, "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1").unwrap();
    let game = Game::from_position(position);
    let limits = Limits::simulations(300);
    for root_search in [RootSearch::Puct, RootSearch::Gumbel] {
        let config = SearchConfig {
            root_search,
            ..SearchConfig::default()
        };
        let mut engine = MctsEngine::new(
            Box::new(UniformEvaluator::default()),
            limits,
            "test".to_string(),
        )
        .with_config(config);
        let mut reports = 0;
        let info = engine
            .search(&game, &limits, &stop, &mut |_| reports += 1)
            .unwrap();
        assert_eq!(info.best.to_string(), "a1a8", "{root_search:?}");
        assert_eq!(info.simulations, Some(300));
        assert_eq!(info.nodes, 300);
        assert!(
            info.value() > 0.9,
            "a mate scores as a win: {:?}",
            info.score
        );
        assert_eq!(info.pv[0], info.best);
        assert_eq!(info.depth as usize, info.pv.len());
        assert!(reports >= 1);
        assert_eq!(engine.choose(&game).unwrap(), info.best, "{root_search:?}");

        let stopped = AtomicBool::new(true);
        let info = engine
            .search(&game, &Limits::default(), &stopped, &mut |_| {})
            .unwrap();
        assert_eq!(
            info.simulations,
            Some(1),
            "a set stop flag ends the search after one simulation"
        );

        let mated = Game::from_position(
            Position::from_fen(Variant::Chess, "R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1").unwrap(),
        );
        assert!(engine.search(&mated, &limits, &stop, &mut |_| {}).is_err());
    }
}

/// The single-position engine and self-play run the same search core: with a Gumbel root,
/// the same budget and the same random stream (self-play draws nothing before the Gumbel
/// noise when resignation is always disabled and every search is full), the first move's
/// root visits, policy target and move are the same.
#[test]
fn the_engine_and_self_play_search_alike() {
    use ninjazero_rules::Game;
    use std::sync::atomic::AtomicBool;
    let config = SearchConfig {
        root_search: RootSearch::Gumbel,
        simulations: 40,
        gumbel_actions: 8,
        full_search_probability: 1.0,
        resign_disabled_fraction: 1.0,
        ..quiet_config()
    };
    let (seed, id) = (11, 3);
    for variant in [Variant::Chess, Variant::InsaneNinja] {
        let start = Position::start(variant);
        let mut game = SelfPlayGame::new(id, start.clone(), seed, &config);
        let mut evaluator = UniformEvaluator::default();
        let mut out = vec![Evaluation::default()];
        while game.positions_played() == 0 {
            assert!(game.prepare_leaf(&config));
            if game.positions_played() > 0 {
                break;
            }
            evaluator.evaluate(&[game.request().expect("a pending leaf")], &mut out);
            game.complete_leaf(&out[0]);
        }
        let record = game.into_record("test");
        let first = &record.positions[0];

        let mut engine = MctsEngine::new(
            Box::new(UniformEvaluator::default()),
            Limits::simulations(u64::from(config.simulations)),
            "test".to_string(),
        )
        .with_config(config.clone())
        .with_seed(seed);
        engine.new_game(id);
        let info = engine
            .search(
                &Game::from_position(start),
                &Limits::simulations(u64::from(config.simulations)),
                &AtomicBool::new(false),
                &mut |_| {},
            )
            .unwrap();
        let mut engine_visits: Vec<(String, u32)> = info
            .root_visits
            .iter()
            .map(|(m, v)| (m.to_string(), *v))
            .collect();
        let mut game_visits: Vec<(String, u32)> = first
            .policy
            .iter()
            .map(|p| (p.move_text.clone(), p.visits))
            .collect();
        engine_visits.sort();
        game_visits.sort();
        assert_eq!(engine_visits, game_visits, "{variant}");
        assert_eq!(
            game_visits.iter().map(|(_, v)| v).sum::<u32>(),
            config.simulations - 1,
            "{variant}: every simulation but the root's expansion visits a child"
        );
        assert_eq!(info.best.to_string(), first.move_played, "{variant}");
    }
}

#[test]
fn player_games_make_a_dataset_that_any_thread_count_reproduces() {
    player_games_reproduce("alphabeta:depth=1");
}

/// A player that proposes a policy (alpha-beta's soft one) has it stored as the target.
#[test]
fn a_players_soft_policy_is_its_games_policy_target() {
    let spread = player_games_reproduce("alphabeta:depth=2:soft=0.5");
    assert!(
        spread > 0,
        "no position with more than one move in its target"
    );
}

/// Plays 6 games of `player` on 2 threads and again on 1 in two runs, checks that they are
/// the same games and that every stored target is the player's own search's; returns how
/// many positions have more than one move in their policy target.
fn player_games_reproduce(player: &str) -> usize {
    let options = PlayerGamesOptions {
        start: Position::start(Variant::Chess),
        game_ids: 0..6,
        opening_plies: 2,
        max_plies: 60,
        seed: 9,
        player: player.to_string(),
    };
    let spec: EngineSpec = options.player.parse().unwrap();
    let make = spec.factory(Variant::Chess, tch::Device::Cpu, 0);
    let play = |dir: &Path, games: u64, threads: usize| {
        let options = PlayerGamesOptions {
            game_ids: 0..games,
            ..options.clone()
        };
        let policy = FlushPolicy {
            games_per_file: 64,
            max_age: None,
        };
        play_player_dataset(dir, &options, &make, threads, policy, &|_| {})
            .unwrap()
            .0
    };
    let tmp = temp_dir();
    let [two, one] = ["player-two", "player-one"].map(|name| tmp.path().join(name));
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
    let mut player = make().unwrap();
    let mut spread = 0;
    for game in &games {
        assert_eq!(game.model_id, options.player);
        // Each position is the one before its move; the last move leads to the end.
        let mut position = Position::from_fen(Variant::Chess, &game.start_fen).unwrap();
        let mut replay = Game::from_position(position.clone());
        let shape = BoardShape::of(Variant::Chess);
        for record in &game.positions {
            assert_eq!(record.fen, position.to_fen());
            let m = position.parse_move(&record.move_played).unwrap();
            // The random opening plies teach nothing; every later move is the target.
            if usize::from(record.ply) < options.opening_plies {
                assert!(record.policy.is_empty() && !record.full_search);
                assert_eq!(record.root_value, 0.0);
            } else {
                // The player's own search value of the position is its root value.
                let limits = player.limits();
                let info = player
                    .search(&replay, &limits, &AtomicBool::new(false), &mut |_| {})
                    .unwrap();
                assert_eq!(record.root_value, info.value(), "ply {}", record.ply);
                assert!(record.full_search, "ply {}", record.ply);
                // The policy it proposed, else all the probability on its move; the move
                // played has the one visit.
                let proposed = if info.root_policy.is_empty() {
                    vec![(m, 1.0)]
                } else {
                    info.root_policy.clone()
                };
                let stored: Vec<_> = record
                    .policy
                    .iter()
                    .map(|entry| {
                        let decoded = decode_move(&shape, &position, entry.index as usize)
                            .expect("a legal move's index");
                        assert_eq!(entry.move_text, decoded.to_string());
                        assert_eq!(entry.visits, u32::from(decoded == m));
                        (decoded, entry.probability)
                    })
                    .collect();
                assert_eq!(stored, proposed, "ply {}", record.ply);
                spread += usize::from(stored.len() > 1);
            }
            position = position.play(m).unwrap();
            replay.play(m).unwrap();
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
    spread
}

#[test]
fn a_dataset_of_another_variant_or_seed_is_not_continued() {
    let config = quiet_config();
    let tmp = temp_dir();
    let dir = tmp.path().join("foreign");
    assert_eq!(run(&dir, Variant::Chess, 2, 1, &config), 2);
    let chess_files = dataset_files(&dir).unwrap();
    let played = std::cell::Cell::new(false);
    let insane = options(Variant::InsaneNinja, 4, 1, &config);
    let err = play(&dir, &insane, TWO_PER_FILE, &|_, _| played.set(true)).unwrap_err();
    assert!(matches!(err, DataError::WrongVariant { .. }), "{err}");
    let text = err.to_string();
    let name = chess_files[0].file_name().unwrap().to_str().unwrap();
    for part in [name, "chess", "insane-ninja"] {
        assert!(text.contains(part), "{text}");
    }
    let other_seed = options(Variant::Chess, 4, 2, &config);
    let err = play(&dir, &other_seed, TWO_PER_FILE, &|_, _| played.set(true)).unwrap_err();
    assert!(matches!(err, DataError::OtherSettings { .. }), "{err}");
    assert!(err.to_string().contains("seed 1, this run has 2"), "{err}");
    assert!(!played.get(), "refused before any game");
    assert_eq!(dataset_files(&dir).unwrap(), chess_files);
}

#[test]
fn two_writers_on_one_directory_store_each_game_once() {
    let variant = Variant::Ninjutsu;
    let config = quiet_config();
    let tmp = temp_dir();
    let dir = tmp.path().join("two-writers");
    let games = 8;
    let options = options(variant, games, 3, &config);
    let barrier = std::sync::Barrier::new(2);
    let outcomes: Vec<Result<u64, DataError>> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    play(&dir, &options, TWO_PER_FILE, &|_, _| {}).map(|(_, stats)| stats.games)
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    // Either one was locked out at once, or (started apart) the second found nothing to do.
    let mut played = 0;
    for outcome in outcomes {
        match outcome {
            Ok(games) => played += games,
            Err(e) => {
                assert!(matches!(e, DataError::Locked { .. }), "{e}");
                assert!(e.to_string().contains("being written by another"), "{e}");
            }
        }
    }
    assert_eq!(played, games);
    assert_eq!(
        sorted_game_ids(&dir, Some(variant)),
        (0..games).collect::<Vec<_>>()
    );
}

#[test]
fn with_no_flush_delay_every_finished_game_is_on_disk_at_the_next_step() {
    let variant = Variant::Ninjutsu;
    let config = quiet_config();
    let tmp = temp_dir();
    let dir = tmp.path().join("flush-now");
    let options = options(variant, 6, 4, &config);
    let policy = FlushPolicy {
        games_per_file: 64,
        max_age: Some(Duration::ZERO),
    };
    let checked = std::cell::Cell::new(0);
    let (_, stats) = play(&dir, &options, policy, &|already, stats| {
        let on_disk = finished_game_ids(&dir).unwrap().len() as u64;
        assert_eq!(on_disk, already + stats.games);
        checked.set(checked.get() + 1);
    })
    .unwrap();
    assert_eq!(stats.games, 6);
    assert!(checked.get() > 0);
    // With only the count, the games wait for the end of the run.
    let by_count = tmp.path().join("flush-by-count");
    let policy = FlushPolicy {
        games_per_file: 64,
        max_age: Some(Duration::from_secs(3600)),
    };
    play(&by_count, &options, policy, &|_, _| {
        assert!(dataset_files(&by_count).unwrap().is_empty());
    })
    .unwrap();
    assert_eq!(finished_game_ids(&by_count).unwrap().len(), 6);
}

#[test]
fn an_unwritable_output_is_refused_before_any_game() {
    let config = quiet_config();
    let options = options(Variant::Chess, 2, 1, &config);
    let tmp = temp_dir();
    let parent = tmp.path().join("unwritable");
    std::fs::write(&parent, b"a file where a directory should be").unwrap();
    let mut outputs = vec![parent.join("data")];
    // A directory that takes no new files, even for root.
    if cfg!(target_os = "linux") {
        outputs.push(PathBuf::from("/proc/self"));
    }
    for out in outputs {
        let played = std::cell::Cell::new(false);
        let err = play(&out, &options, TWO_PER_FILE, &|_, _| played.set(true)).unwrap_err();
        assert!(!played.get(), "{}: a game was played", out.display());
        assert!(err.to_string().contains(&*out.to_string_lossy()), "{err}");
    }
    std::fs::remove_file(parent).unwrap();
}
