//! Engines through the one interface: limits (whichever comes first, counted in nodes and
//! simulations, never in wall-clock time), reports, the stop flag, and the MCTS core's
//! resumable loop.

use ninjazero_model::{
    EvalRequest, EvalTimings, Evaluation, Evaluator, FitSummary, PieceSquareEval,
    PieceSquareLayout, UniformEvaluator,
};
use ninjazero_rules::{Color, Game, Position, Role, Square, Variant};
use ninjazero_search::tree::NodeState;
use ninjazero_search::{
    AlphaBetaConfig, AlphaBetaEngine, Engine, EngineSpec, LeafBlend, Limits, MctsEngine,
    MctsSearch, NetworkRole, RandomEngine, RootPolicy, RootSearch, Score, SearchConfig, SearchInfo,
    Step,
};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::collections::HashSet;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const HOUR: Duration = Duration::from_secs(3600);

fn search(engine: &mut dyn Engine, game: &Game, limits: Limits) -> (SearchInfo, Vec<SearchInfo>) {
    let mut reports = Vec::new();
    let info = engine
        .search(game, &limits, &AtomicBool::new(false), &mut |i| {
            reports.push(i.clone())
        })
        .expect("a position with moves");
    (info, reports)
}

fn alphabeta() -> AlphaBetaEngine {
    AlphaBetaEngine::new(AlphaBetaConfig::default(), Limits::depth(3))
}

fn uniform_mcts(config: SearchConfig) -> MctsEngine {
    MctsEngine::new(
        Box::new(UniformEvaluator::default()),
        Limits::simulations(64),
        "uniform:sims=64".to_string(),
    )
    .with_config(config)
}

#[test]
fn alphabeta_reports_each_iteration_up_to_its_depth_limit() {
    let game = Game::new(Variant::Chess);
    let mut engine = alphabeta();
    let (info, reports) = search(&mut engine, &game, Limits::depth(3));
    assert_eq!(info.depth, 3);
    assert_eq!(
        reports.iter().map(|r| r.depth).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(info.simulations, None);
    assert_eq!(info.pv[0], info.best);
    assert!(
        matches!(info.score, Score::Centipawns(_)),
        "{:?}",
        info.score
    );
    assert!(info.root_visits.is_empty());
    // The engine's own limits (depth 3) are the ones `choose` searches with.
    assert_eq!(engine.limits(), Limits::depth(3));
    assert_eq!(engine.choose(&game).unwrap(), info.best);
    assert_eq!(engine.last_search().unwrap().nodes, info.nodes);
}

#[test]
fn alphabeta_stops_at_whichever_limit_comes_first() {
    let game = Game::new(Variant::Chess);
    let deep = alphabeta().analyse(&game);
    let mut engine = alphabeta();
    // Depth first: a node limit far away and an hour of time change nothing.
    let (info, _) = search(
        &mut engine,
        &game,
        Limits {
            depth: Some(3),
            nodes: Some(1 << 40),
            time: Some(HOUR),
            ..Limits::default()
        },
    );
    assert_eq!(
        (info.depth, info.nodes, info.best),
        (3, deep.nodes, deep.best)
    );
    // Nodes first: the iteration that reaches the limit is cut off there, and the last
    // completed one's move is played; the same limit gives the same search.
    let limit = deep.nodes / 2;
    let nodes_first = Limits {
        depth: Some(10),
        nodes: Some(limit),
        time: Some(HOUR),
        ..Limits::default()
    };
    let (cut, reports) = search(&mut engine, &game, nodes_first);
    assert_eq!(cut.nodes, limit);
    assert!((1..3).contains(&cut.depth), "depth {}", cut.depth);
    assert_eq!(
        reports.last().unwrap().nodes,
        limit,
        "a cut-off search reports at its end"
    );
    let (again, _) = search(&mut engine, &game, nodes_first);
    assert_eq!(
        (again.best, again.depth, again.nodes),
        (cut.best, cut.depth, cut.nodes)
    );
    // Simulations do not apply to alpha-beta.
    let (info, _) = search(
        &mut engine,
        &game,
        Limits {
            simulations: Some(1),
            depth: Some(2),
            ..Limits::default()
        },
    );
    assert_eq!(info.depth, 2);
}

#[test]
fn a_set_stop_flag_ends_alphabeta_after_depth_one() {
    let game = Game::new(Variant::InsaneNinja);
    let mut engine = alphabeta();
    let info = engine
        .search(
            &game,
            &Limits::depth(5),
            &AtomicBool::new(true),
            &mut |_| {},
        )
        .unwrap();
    assert_eq!(info.depth, 1);
}

#[test]
fn alphabeta_reports_mates_as_mates() {
    let game = Game::from_position(
        Position::from_fen(Variant::Chess, "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1").unwrap(),
    );
    let (info, _) = search(&mut alphabeta(), &game, Limits::depth(3));
    assert_eq!(info.best.to_string(), "a1a8");
    assert_eq!(info.score, Score::Mate(1));
    assert_eq!(info.score.uci(), "mate 1");
    assert_eq!(info.value(), 1.0);
}

#[test]
fn mcts_stops_at_whichever_limit_comes_first() {
    let game = Game::new(Variant::Chess);
    let mut engine = uniform_mcts(SearchConfig::default());
    let cases = [
        (Limits::simulations(20), 20),
        (Limits::nodes(15), 15),
        (
            Limits {
                simulations: Some(50),
                nodes: Some(20),
                ..Limits::default()
            },
            20,
        ),
        (
            Limits {
                simulations: Some(20),
                nodes: Some(50),
                time: Some(HOUR),
                ..Limits::default()
            },
            20,
        ),
        // Depth does not apply to MCTS.
        (
            Limits {
                simulations: Some(30),
                depth: Some(1),
                ..Limits::default()
            },
            30,
        ),
    ];
    for (limits, simulations) in cases {
        let (info, reports) = search(&mut engine, &game, limits);
        assert_eq!(info.simulations, Some(simulations), "{limits:?}");
        assert_eq!(info.nodes, simulations);
        assert_eq!(reports.last().unwrap().simulations, Some(simulations));
        let visits: u32 = info.root_visits.iter().map(|(_, v)| v).sum();
        assert_eq!(
            u64::from(visits),
            simulations - 1,
            "the first expands the root"
        );
    }
    // The engine's own limits for `choose`.
    assert_eq!(engine.limits(), Limits::simulations(64));
    assert_eq!(Limits::default().simulation_budget(), 2_000_000);
    assert_eq!(Limits::nodes(0).simulation_budget(), 1);
}

#[test]
fn engines_from_specs_search_through_the_trait() {
    let game = Game::new(Variant::Palace);
    let limits = Limits {
        simulations: Some(16),
        depth: Some(1),
        ..Limits::default()
    };
    for text in ["random:seed=3", "uniform:sims=8", "alphabeta:depth=2"] {
        let spec: EngineSpec = text.parse().unwrap();
        let mut engine = spec.build(Variant::Palace, tch::Device::Cpu, 0).unwrap();
        let (info, reports) = search(engine.as_mut(), &game, limits);
        assert!(game.position().legal_moves().contains(&info.best), "{text}");
        assert!(!reports.is_empty(), "{text}");
        let m = engine.choose(&game).unwrap();
        assert!(game.position().legal_moves().contains(&m), "{text}");
    }
    // The random mover: the same game seed, the same moves.
    let mut a = RandomEngine::new(5);
    let mut b = RandomEngine::new(9);
    a.new_game(1);
    b.new_game(1);
    let moves = |e: &mut RandomEngine| (0..5).map(|_| e.choose(&game).unwrap()).collect::<Vec<_>>();
    let first = moves(&mut a);
    a.new_game(1);
    assert_eq!(moves(&mut a), first);
    assert_ne!(
        moves(&mut b),
        first,
        "another seed, other moves (most likely)"
    );
}

/// The core's resumable loop, driven by hand one leaf at a time, gives the engine's search:
/// the same visits for the same budget, root policy and random stream.
#[test]
fn the_resumable_core_is_the_engines_search() {
    let game = Game::new(Variant::Chess);
    let config = SearchConfig {
        root_search: RootSearch::Gumbel,
        gumbel_actions: 4,
        ..SearchConfig::default()
    };
    let mut engine = uniform_mcts(config.clone()).with_seed(21);
    let (info, _) = search(&mut engine, &game, Limits::simulations(30));

    let mut rng = StdRng::seed_from_u64(21);
    let mut core = MctsSearch::new(game.position().clone(), &config);
    core.start(30, RootPolicy::Gumbel { actions: 4 }, &mut rng);
    let mut evaluator = UniformEvaluator::default();
    let mut out = vec![Evaluation::default()];
    let mut leaves = 0;
    while core.next_leaf(game.hashes()) {
        evaluator.evaluate(&[core.request().unwrap()], &mut out);
        core.complete_leaf(&out[0], &mut rng);
        leaves += 1;
    }
    assert_eq!(core.step(game.hashes()), Step::Finished);
    assert!(core.is_finished());
    assert_eq!(core.simulations(), 30);
    assert_eq!(leaves, 30, "no terminal position within reach");
    let choice = core.gumbel_choice().expect("a Gumbel root");
    assert_eq!(core.root_edges()[choice].mv, info.best);
    let visits: Vec<_> = core
        .root_edges()
        .iter()
        .zip(core.visits())
        .filter(|(_, v)| *v > 0)
        .map(|(e, v)| (e.mv, v))
        .collect();
    let mut engine_visits: Vec<_> = info
        .root_visits
        .iter()
        .copied()
        .filter(|(_, v)| *v > 0)
        .collect();
    let mut core_visits = visits.clone();
    engine_visits.sort_by_key(|(m, _)| m.to_string());
    core_visits.sort_by_key(|(m, _)| m.to_string());
    assert_eq!(engine_visits, core_visits);
    assert_eq!(visits.len(), 4, "only the top 4 actions are searched");
    let target = core.policy_target();
    assert!((target.iter().sum::<f32>() - 1.0).abs() < 1e-5);
}

/// Runs `budget` simulations of `core` with uniform priors (and a material value).
fn search_uniformly(core: &mut MctsSearch, game: &Game, budget: u32, rng: &mut StdRng) {
    core.start(budget, RootPolicy::Puct, rng);
    let mut evaluator = UniformEvaluator::default();
    let mut out = vec![Evaluation::default()];
    while core.next_leaf(game.hashes()) {
        evaluator.evaluate(&[core.request().unwrap()], &mut out);
        core.complete_leaf(&out[0], rng);
    }
}

/// The root's priors after one simulation whose evaluation gives the legal moves priors
/// proportional to 1, 2, 3, ..., searched at `policy_temperature`.
fn root_priors_at(policy_temperature: f32) -> (Vec<f32>, Vec<f32>) {
    let game = Game::new(Variant::Chess);
    let config = SearchConfig {
        policy_temperature,
        ..SearchConfig::default()
    };
    let mut core = MctsSearch::new(game.position().clone(), &config);
    let rng = &mut StdRng::seed_from_u64(1);
    core.start(1, RootPolicy::Puct, rng);
    assert!(core.next_leaf(game.hashes()));
    let moves = core.request().unwrap().moves.len();
    let total = (moves * (moves + 1) / 2) as f32;
    let given: Vec<f32> = (1..=moves).map(|i| i as f32 / total).collect();
    let evaluation = Evaluation {
        priors: given.clone(),
        wdl: [0.4, 0.2, 0.4],
    };
    core.complete_leaf(&evaluation, rng);
    (given, core.priors())
}

/// A policy temperature T searches with priors p^(1/T), renormalised (softmax of the
/// logits over T); at 1 the evaluator's priors are kept bit for bit.
#[test]
fn a_policy_temperature_flattens_the_priors_the_search_uses() {
    let (given, kept) = root_priors_at(1.0);
    assert_eq!(kept, given);
    let (given, flattened) = root_priors_at(2.0);
    let roots: Vec<f32> = given.iter().map(|p| p.sqrt()).collect();
    let sum: f32 = roots.iter().sum();
    for (got, root) in flattened.iter().zip(&roots) {
        assert!((got - root / sum).abs() < 1e-6, "{got} vs {}", root / sum);
    }
    let ratio = |p: &[f32]| p[p.len() - 1] / p[0];
    assert!((ratio(&flattened) - ratio(&given).sqrt()).abs() < 1e-3);
    assert!(ratio(&flattened) < ratio(&given));
}

/// The start position after 1. Nf3 Nf6 2. Ng1 Ng8: the root has occurred twice, and
/// 3. Nf3 would repeat the position after 1. Nf3.
fn knights_out_and_back() -> Game {
    let mut game = Game::new(Variant::Chess);
    for mv in ["g1f3", "g8f6", "f3g1", "f6g8"] {
        game.play_text(mv).unwrap();
    }
    game
}

/// With a repetition penalty, a move into a position of the game's history is scored as
/// the penalty lost by the mover, while the root itself, repeated once, is searched as
/// usual (only the third occurrence ends the game); without one, the same move is a leaf
/// like any other.
#[test]
fn a_repetition_penalty_costs_the_mover_who_repeats() {
    let game = knights_out_and_back();
    let repeat = game
        .position()
        .legal_moves()
        .iter()
        .position(|m| m.to_string() == "g1f3")
        .unwrap();
    let q_of_repeat = |penalty: f32| {
        let config = SearchConfig {
            repetition_penalty: penalty,
            ..SearchConfig::default()
        };
        let mut core = MctsSearch::new(game.position().clone(), &config);
        let mut rng = StdRng::seed_from_u64(3);
        search_uniformly(&mut core, &game, 200, &mut rng);
        assert!(!core.root_is_terminal(), "a twice-seen root is searched");
        let edge = core.root_edges()[repeat];
        let child = core.tree().node(edge.child);
        (core.q()[repeat].unwrap(), child.state)
    };
    let (q, state) = q_of_repeat(0.5);
    assert_eq!(q, -0.5);
    assert_eq!(state, NodeState::Terminal(0.5), "the opponent gains it");
    let (q, state) = q_of_repeat(0.0);
    assert_ne!(q, -0.5);
    assert_eq!(state, NodeState::Expanded, "searched on");
}

/// Plays `mv` in `game` and keeps its subtree as `core`'s new root.
fn play(game: &mut Game, core: &mut MctsSearch, mv: &str) {
    let edge = core
        .root_edges()
        .iter()
        .position(|e| e.mv.to_string() == mv)
        .unwrap();
    game.play(core.root_edges()[edge].mv).unwrap();
    core.advance(edge);
}

/// A position that ended simulations as a repetition below the root goes on when the game
/// moves there: the game's rule, the third occurrence, ends the game, not the penalty.
#[test]
fn a_penalised_repetition_played_is_searched_as_the_new_root() {
    let mut game = knights_out_and_back();
    let config = SearchConfig {
        repetition_penalty: 0.5,
        ..SearchConfig::default()
    };
    let mut core = MctsSearch::new(game.position().clone(), &config);
    let mut rng = StdRng::seed_from_u64(4);
    for mv in ["g1f3", "g8f6", "f3g1", "f6g8"] {
        search_uniformly(&mut core, &game, 200, &mut rng);
        let edge = core
            .root_edges()
            .iter()
            .position(|e| e.mv.to_string() == mv);
        let child = core.tree().node(core.root_edges()[edge.unwrap()].child);
        assert!(
            matches!(child.state, NodeState::Terminal(_)),
            "{mv} repeats"
        );
        play(&mut game, &mut core, mv);
        assert!(
            !core.root_is_terminal(),
            "cleared for the game's rule to judge"
        );
    }
    assert_eq!(game.repetitions(), 3);
    search_uniformly(&mut core, &game, 50, &mut rng);
    assert!(
        core.root_is_terminal(),
        "the third occurrence ends the game"
    );
    assert!(core.is_finished());
}

/// A search carried on by the moves the game played keeps the subtree of the position
/// reached; a game that never went through its root, or left the tree, gets none.
#[test]
fn a_search_carries_its_tree_to_the_position_the_game_reached() {
    let mut game = Game::new(Variant::Chess);
    let mut core = MctsSearch::new(game.position().clone(), &SearchConfig::default());
    let mut rng = StdRng::seed_from_u64(7);
    search_uniformly(&mut core, &game, 400, &mut rng);
    let info = core.info(Duration::ZERO);
    let (ours, reply) = (info.pv[0], info.pv[1]);
    let ours_child = core
        .root_edges()
        .iter()
        .find(|e| e.mv == ours)
        .unwrap()
        .child;
    let ours_node = core.tree().node(ours_child);
    let reply_edge = core
        .tree()
        .edges(ours_child)
        .iter()
        .find(|e| e.mv == reply)
        .copied()
        .unwrap();
    let reply_visits = core.tree().child_visits(&reply_edge);
    assert!(ours_node.visits > reply_visits && reply_visits > 1);

    let mut other = Game::new(Variant::Palace);
    assert!(core.clone().carried_to(&other).is_none(), "another game");
    other.play(other.position().legal_moves()[0]).unwrap();
    assert!(core.clone().carried_to(&other).is_none());

    game.play(ours).unwrap();
    game.play(reply).unwrap();
    let carried = core
        .clone()
        .carried_to(&game)
        .expect("the game went through the root");
    assert!(carried.root_position() == game.position());
    assert_eq!(carried.tree().root().visits, reply_visits);
    assert_eq!(
        carried.tree().nodes.len() as u32,
        reply_visits,
        "the reply's subtree alone: one node per visit"
    );
    let carried_again = carried.clone().carried_to(&game).expect("no move since");
    assert_eq!(carried_again.tree().root().visits, reply_visits);

    // A search that never expanded its root, and a game taken back past the root.
    let unsearched = MctsSearch::new(Position::start(Variant::Chess), &SearchConfig::default());
    assert!(unsearched.carried_to(&game).is_none());
    game.undo();
    game.undo();
    game.play(ours).unwrap();
    assert!(
        carried.carried_to(&game).is_none(),
        "its root left the game"
    );
}

/// An engine that keeps its trees starts each search on the kept subtree (root visits
/// beyond its own simulations), and forgets it with a new game; one that does not keeps
/// nothing.
#[test]
fn an_engine_that_reuses_its_trees_searches_on_from_the_kept_subtree() {
    let root_visits = |info: &SearchInfo| info.root_visits.iter().map(|(_, v)| v).sum::<u32>();
    for (text, reuse) in [
        ("uniform:sims=300:reuse=1", true),
        ("uniform:sims=300", false),
    ] {
        let spec: EngineSpec = text.parse().unwrap();
        assert_eq!(spec.to_string(), text);
        let mut engine = spec.build(Variant::Chess, tch::Device::Cpu, 0).unwrap();
        let limits = engine.limits();
        engine.new_game(1);
        let mut game = Game::new(Variant::Chess);
        let (first, _) = search(engine.as_mut(), &game, limits);
        assert_eq!(
            root_visits(&first),
            299,
            "{text}: all but the root's own visit"
        );
        game.play(first.pv[0]).unwrap();
        game.play(first.pv[1]).unwrap();
        let (second, _) = search(engine.as_mut(), &game, limits);
        assert_eq!(second.simulations, Some(300), "{text}");
        assert_eq!(root_visits(&second) > 299, reuse, "{text}");
        engine.new_game(2);
        let (fresh, _) = search(engine.as_mut(), &game, limits);
        assert_eq!(root_visits(&fresh), 299, "{text}: a new game starts afresh");
    }
}

fn nothing_in_flight(core: &MctsSearch) -> bool {
    core.tree().nodes.iter().all(|n| n.in_flight == 0)
}

/// A batch starts with the root alone (every other descent reaches it again), then spreads
/// over distinct leaves under virtual loss; the budget is met exactly and every virtual
/// loss is withdrawn.
#[test]
fn a_batch_of_leaves_spreads_out_and_settles() {
    let game = Game::new(Variant::Chess);
    let mut core = MctsSearch::new(game.position().clone(), &SearchConfig::default());
    let mut rng = StdRng::seed_from_u64(5);
    core.start(200, RootPolicy::Puct, &mut rng);
    let mut evaluator = UniformEvaluator::default();
    let mut sizes = Vec::new();
    loop {
        let waiting = core.gather(game.hashes(), 8);
        if waiting == 0 {
            break;
        }
        let requests = core.requests();
        let distinct: HashSet<u64> = requests.iter().map(|r| r.position.hash()).collect();
        assert_eq!(distinct.len(), waiting, "no leaf twice in a batch");
        let mut out = vec![Evaluation::default(); waiting];
        evaluator.evaluate(&requests, &mut out);
        core.complete_leaves(&out, &mut rng);
        assert!(nothing_in_flight(&core));
        sizes.push(waiting);
    }
    assert_eq!(sizes[0], 1, "the root first, alone");
    assert!(sizes.iter().all(|&n| n <= 8));
    assert!(sizes.iter().filter(|&&n| n == 8).count() > 10, "{sizes:?}");
    assert_eq!(core.simulations(), 200);
    assert_eq!(core.tree().root().visits, 200);
    assert!(core.is_finished());
}

/// Leaves still waiting when the search restarts or the game moves on take their virtual
/// losses with them.
#[test]
fn waiting_leaves_are_dropped_with_their_virtual_losses() {
    let game = Game::new(Variant::Chess);
    let mut core = MctsSearch::new(game.position().clone(), &SearchConfig::default());
    let mut rng = StdRng::seed_from_u64(6);
    search_uniformly(&mut core, &game, 40, &mut rng);
    core.start(40, RootPolicy::Puct, &mut rng);
    assert_eq!(core.gather(game.hashes(), 8), 8);
    assert!(!nothing_in_flight(&core));
    core.start(40, RootPolicy::Puct, &mut rng);
    assert!(nothing_in_flight(&core));
    assert!(core.requests().is_empty());
    assert_eq!(core.gather(game.hashes(), 8), 8);
    core.advance(core.most_visited());
    assert!(nothing_in_flight(&core));
}

/// Batched engines still see a mate in one, with a PUCT or a Gumbel root, and spend their
/// simulation budget exactly.
#[test]
fn batched_engines_find_the_mate_in_one() {
    let game = Game::from_position(
        Position::from_fen(Variant::Chess, "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1").unwrap(),
    );
    for root_search in [RootSearch::Puct, RootSearch::Gumbel] {
        let config = SearchConfig {
            root_search,
            gumbel_actions: 32,
            ..SearchConfig::default()
        };
        let mut engine = uniform_mcts(config).with_batch(8);
        let (info, _) = search(&mut engine, &game, Limits::simulations(100));
        assert_eq!(info.best.to_string(), "a1a8", "{root_search:?}");
        let visits: u64 = info.root_visits.iter().map(|(_, v)| u64::from(*v)).sum();
        assert_eq!(
            visits, 99,
            "{root_search:?}: the root's evaluation and 99 below it"
        );
    }
}

/// A leaf's value with capture resolution: the root's value after its first (and only)
/// simulation, for the position `fen` (chess) and a capture logit.
fn first_leaf_value(fen: &str, capture_logit: f32) -> f32 {
    blended_first_leaf_value(fen, capture_logit, None)
}

/// The same with a learnt evaluation mixed into the leaf's value.
fn blended_first_leaf_value(fen: &str, capture_logit: f32, blend: Option<LeafBlend>) -> f32 {
    let game = Game::from_position(Position::from_fen(Variant::Chess, fen).unwrap());
    let config = SearchConfig {
        capture_logit,
        ..SearchConfig::default()
    };
    let mut core = MctsSearch::new(game.position().clone(), &config).with_blend(blend);
    search_uniformly(&mut core, &game, 1, &mut StdRng::seed_from_u64(1));
    core.root_value()
}

/// A piece left hanging at a leaf adds the capture logit to the log-odds of its value;
/// a defended one, whose capture is answered by a recapture, adds nothing.
#[test]
fn capture_resolved_leaves_see_a_hanging_piece() {
    let hanging = "4k3/8/8/3p4/8/8/8/3QK3 w - - 0 1";
    let defended = "4k3/8/4p3/3p4/8/8/8/3QK3 w - - 0 1";
    let plain = first_leaf_value(hanging, 0.0);
    let log_odds = |v: f32| 2.0 * v.atanh();
    let resolved = first_leaf_value(hanging, 1.5);
    assert!(
        (log_odds(resolved) - log_odds(plain) - 1.5).abs() < 1e-3,
        "{plain} -> {resolved}"
    );
    assert_eq!(
        first_leaf_value(defended, 1.5),
        first_leaf_value(defended, 0.0)
    );
}

/// A learnt evaluation mixed into a leaf at `mix` adds that share of its log-odds (with the
/// captures it wins, at its own piece values) to the rest of the evaluator's: 0 leaves the
/// value alone, 1 is the evaluation's alone, whatever the capture logit.
#[test]
fn a_blended_leaf_mixes_in_the_learnt_log_odds() {
    let log_odds = |v: f32| 2.0 * v.atanh();
    let blend = |mix: f32| Some(LeafBlend::new(Arc::new(learnt_chess_eval(0.0)), mix));
    // A Queen up (2 log-odds); a Queen hanging (even, 2 won by the capture).
    for fen in [
        "4k3/8/8/8/8/8/8/3QK3 w - - 0 1",
        "4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1",
    ] {
        for capture_logit in [0.0, 1.5] {
            let plain = first_leaf_value(fen, capture_logit);
            assert_eq!(
                blended_first_leaf_value(fen, capture_logit, blend(0.0)),
                plain
            );
            let learnt = log_odds(blended_first_leaf_value(fen, capture_logit, blend(1.0)));
            assert!((learnt - 2.0).abs() < 1e-3, "{fen}: {learnt}");
            let half = log_odds(blended_first_leaf_value(fen, capture_logit, blend(0.25)));
            let expected = 0.75 * log_odds(plain) + 0.25 * 2.0;
            assert!(
                (half - expected).abs() < 1e-3,
                "{fen}: {half} vs {expected}"
            );
        }
    }
}

/// `uniform:…:eval=E.eval.json` searches with the learnt evaluation at its leaves, loaded
/// for the variant played as alpha-beta's is.
#[test]
fn a_blended_mcts_is_played_from_its_spec() {
    learnt_evaluation_player(|path| format!("uniform:sims=64:eval={path}:mix=1"));
}

/// The model-free evaluator, recording the size of every batch it is given.
struct RecordingEvaluator {
    inner: UniformEvaluator,
    batches: Arc<Mutex<Vec<usize>>>,
}

impl Evaluator for RecordingEvaluator {
    fn evaluate(&mut self, batch: &[EvalRequest<'_>], out: &mut [Evaluation]) {
        self.batches.lock().unwrap().push(batch.len());
        self.inner.evaluate(batch, out);
    }

    fn timings(&self) -> EvalTimings {
        self.inner.timings()
    }
}

/// Alpha-beta evaluating with a "network" (the model-free evaluator, recording its
/// batches) to `depth` plies.
fn alphabeta_with_network(depth: u32) -> (AlphaBetaEngine, Arc<Mutex<Vec<usize>>>) {
    let batches = Arc::new(Mutex::new(Vec::new()));
    let evaluator = RecordingEvaluator {
        inner: UniformEvaluator::default(),
        batches: Arc::clone(&batches),
    };
    let engine = AlphaBetaEngine::with_network(
        AlphaBetaConfig::counting(),
        Box::new(evaluator),
        NetworkRole::Evaluates,
        "uniform".to_string(),
        Limits::depth(depth),
    );
    (engine, batches)
}

/// With a network, the horizon's positions go to the network in batches: all the root's
/// children at depth 1, then a node's children in the search order in batches that
/// double (4, 4, 8, ...), each position once per search.
#[test]
fn alphabeta_with_a_network_evaluates_the_horizon_in_batches() {
    let game = Game::new(Variant::Chess);
    let (mut engine, batches) = alphabeta_with_network(2);
    assert_eq!(engine.name(), "alphabeta:uniform:depth=2");
    let limits = engine.limits();
    let (info, reports) = search(&mut engine, &game, limits);
    assert_eq!(reports.len(), 2, "one report per iteration");
    assert!(game.position().legal_moves().contains(&info.best));
    let batches = batches.lock().unwrap().clone();
    // Depth 1 scores the root's 20 children in one batch; depth 2 their children.
    assert_eq!(batches[0], 20, "{batches:?}");
    assert_eq!(batches[1], 4, "{batches:?}");
    assert!(batches[1..].iter().all(|&n| n <= 16), "{batches:?}");
    let evaluated: usize = batches.iter().sum();
    assert!(evaluated <= 20 + 20 * 20, "each position once: {evaluated}");
}

/// The network's alpha-beta still sees tactics: it takes a hanging queen and mates in one.
#[test]
fn alphabeta_with_a_network_sees_captures_and_mates() {
    for (fen, best) in [
        ("4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1", "d1d5"),
        ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "a1a8"),
    ] {
        let game = Game::from_position(Position::from_fen(Variant::Chess, fen).unwrap());
        for depth in [1, 3] {
            let (mut engine, _) = alphabeta_with_network(depth);
            let (info, _) = search(&mut engine, &game, Limits::depth(depth));
            assert_eq!(info.best.to_string(), best, "{fen} at depth {depth}");
        }
    }
}

/// A "network" whose policy puts almost everything on one move (by its UCI text).
struct FavouriteMove(&'static str);

impl Evaluator for FavouriteMove {
    fn evaluate(&mut self, batch: &[EvalRequest<'_>], out: &mut [Evaluation]) {
        for (request, result) in batch.iter().zip(out.iter_mut()) {
            result.priors = request
                .moves
                .iter()
                .map(|m| if m.to_string() == self.0 { 0.9 } else { 0.001 })
                .collect();
            result.wdl = [0.0, 1.0, 0.0];
        }
    }

    fn timings(&self) -> EvalTimings {
        EvalTimings::default()
    }
}

/// The move alpha-beta to `depth` (default evaluation) plays in `game` when a network fond
/// of `favourite` picks among the root moves within `margin` Pawns of the best.
fn picked_move(game: &Game, favourite: &'static str, margin: f32, depth: u32) -> String {
    let mut engine = AlphaBetaEngine::with_network(
        AlphaBetaConfig::default(),
        Box::new(FavouriteMove(favourite)),
        NetworkRole::Picks { margin },
        "favourite".to_string(),
        Limits::depth(depth),
    );
    assert_eq!(
        engine.name(),
        format!("alphabeta:favourite:depth={depth}:pick={margin}")
    );
    search(&mut engine, game, Limits::depth(depth))
        .0
        .best
        .to_string()
}

/// The picking network chooses its favourite among the moves about as good as the best,
/// and nothing the search proves worse by more than the margin: not a Queen for a Pawn,
/// not a move past a mate.
#[test]
fn a_picking_network_chooses_only_among_moves_within_the_margin() {
    let start = Game::new(Variant::Chess);
    let (plain, _) = search(&mut alphabeta(), &start, Limits::depth(3));
    assert_ne!(
        plain.best.to_string(),
        "a2a3",
        "the search alone plays another move"
    );
    assert_eq!(
        picked_move(&start, "a2a3", 1.0, 3),
        "a2a3",
        "a quiet move within a Pawn"
    );

    let position = |fen| Game::from_position(Position::from_fen(Variant::Chess, fen).unwrap());
    // Qxd5 loses the Queen to exd5 (8 Pawns); every other move keeps the balance.
    let defended_pawn = position("4k3/8/4p3/3p4/8/8/8/3QK3 w - - 0 1");
    for (margin, depth) in [(1.0, 1), (1.0, 3), (5.0, 1)] {
        assert_ne!(picked_move(&defended_pawn, "d1d5", margin, depth), "d1d5");
    }
    let mate_in_one = position("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
    assert_eq!(picked_move(&mate_in_one, "a1a2", 5.0, 3), "a1a8");
}

/// A learnt chess evaluation: the Queen worth 2 log-odds, every other piece nothing, and
/// `bonus` for a Knight on the owner's d5 square.
fn learnt_chess_eval(knight_on_d5: f32) -> PieceSquareEval {
    let layout = PieceSquareLayout::new(Variant::Chess);
    let mut weights = vec![0.0; layout.len()];
    weights[layout.value_index(Role::Queen)] = 2.0;
    let d5 = layout
        .shape()
        .view_cell("d5".parse::<Square>().unwrap(), Color::White);
    weights[layout.square_index(Role::Knight, d5)] = knight_on_d5;
    PieceSquareEval::new(Variant::Chess, weights, FitSummary::default()).unwrap()
}

/// Alpha-beta with a learnt evaluation keeps its tactics (a hanging Queen, a mate in one)
/// and follows the evaluation's square bonuses in a quiet position, for either colour.
#[test]
fn alphabeta_with_a_learnt_evaluation_sees_tactics_and_its_squares() {
    let config = AlphaBetaConfig::learnt(Arc::new(learnt_chess_eval(1.0)));
    // A capture is worth what the evaluation says, on the same scale: the piece's value
    // and its mean square bonus, 2.25 Pawns per unit of log-odds.
    assert_eq!(config.piece_values[Role::Queen], 4.5);
    assert_eq!(config.piece_values[Role::Knight], 2.25 / 64.0);
    for (fen, best) in [
        ("4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1", "d1d5"),
        ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "a1a8"),
        // The Knight heads for its own d5: d4 for White, d5 (rank 4 from Black's side) for Black.
        ("4k3/8/8/8/8/2N5/8/4K3 w - - 0 1", "c3d5"),
        ("4k3/8/2n5/8/8/8/8/4K3 b - - 0 1", "c6d4"),
    ] {
        let game = Game::from_position(Position::from_fen(Variant::Chess, fen).unwrap());
        for depth in [1, 3] {
            let mut engine = AlphaBetaEngine::new(config.clone(), Limits::depth(depth));
            let (info, _) = search(&mut engine, &game, Limits::depth(depth));
            assert_eq!(info.best.to_string(), best, "{fen} at depth {depth}");
        }
    }
}

/// The player `spec_of(PATH)` with a learnt evaluation saved at PATH (the Queen worth 2):
/// it takes a hanging Queen, and refuses a missing file or one of another variant with the
/// player named. The engine built, for further checks.
fn learnt_evaluation_player(spec_of: impl Fn(&str) -> String) -> Box<dyn Engine> {
    let tmp = ninjazero_testkit::temp_dir();
    let path = tmp.path().join("queen.eval.json");
    learnt_chess_eval(0.0).save(&path).unwrap();
    let spec: EngineSpec = spec_of(&path.display().to_string()).parse().unwrap();
    let mut engine = spec.build(Variant::Chess, tch::Device::Cpu, 0).unwrap();
    let game = Game::from_position(
        Position::from_fen(Variant::Chess, "4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1").unwrap(),
    );
    assert_eq!(engine.choose(&game).unwrap().to_string(), "d1d5", "{spec}");
    let refusal =
        |variant: Variant, spec: &EngineSpec| match spec.build(variant, tch::Device::Cpu, 0) {
            Ok(_) => panic!("{spec} was built for {variant}"),
            Err(e) => e.to_string(),
        };
    let error = refusal(Variant::InsaneNinja, &spec);
    assert!(
        error.starts_with(&format!("player '{spec}': "))
            && error.ends_with("is a chess evaluation, but insane-ninja was asked for"),
        "{error}"
    );
    let missing: EngineSpec = spec_of("none.eval.json").parse().unwrap();
    assert_eq!(
        refusal(Variant::Chess, &missing),
        format!("player '{missing}': evaluation file 'none.eval.json' does not exist")
    );
    engine
}

/// `alphabeta:PATH.eval.json` loads the file for the variant played and names the player
/// after it.
#[test]
fn a_learnt_evaluation_is_played_from_its_spec() {
    let engine = learnt_evaluation_player(|path| format!("alphabeta:{path}:depth=2"));
    assert_eq!(engine.name(), "alphabeta:queen:depth=2");
}

/// A soft policy weighs each root move within four temperatures of the best by
/// exp(−(best − score) / temperature), where the score is the move's exact one: that of a
/// search of the position after it one ply shallower. The move and its score stay the plain
/// search's.
#[test]
fn a_soft_policy_weighs_the_moves_near_the_best_by_their_exact_scores() {
    // Material alone: a position's evaluation does not then depend on the path to it (as
    // mobility's does), so each move's score is its own position's search.
    let config = AlphaBetaConfig {
        mobility_weight: 0.0,
        ..AlphaBetaConfig::default()
    };
    let (depth, temperature) = (2, 0.5);
    let fens = [
        // Qxd5 loses the Queen; every other move keeps the balance.
        "4k3/8/4p3/3p4/8/8/8/3QK3 w - - 0 1",
        // The Knight takes a Rook, the Bishop a Pawn; the rest gain nothing.
        "r3k3/8/1N6/2p5/8/8/8/4K1B1 w - - 0 1",
        "rnbqkbnr/pppp1ppp/8/4p3/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2",
    ];
    for fen in fens {
        let position = Position::from_fen(Variant::Chess, fen).unwrap();
        let game = Game::from_position(position.clone());
        let plain = AlphaBetaEngine::new(config.clone(), Limits::depth(depth)).analyse(&game);
        let mut engine = AlphaBetaEngine::new(config.clone(), Limits::depth(depth))
            .with_soft_policy(temperature);
        assert_eq!(engine.name(), "alphabeta:depth=2:soft=0.5:mobility=0");
        let (info, _) = search(&mut engine, &game, Limits::depth(depth));
        let soft = engine.last_search().unwrap().clone();
        assert_eq!((soft.best, soft.score), (plain.best, plain.score), "{fen}");
        assert!(plain.policy.is_empty());
        assert_eq!(info.root_policy, soft.policy);

        let mut expected: Vec<(String, f32)> = position
            .legal_moves()
            .iter()
            .filter_map(|&m| {
                let after = Game::from_position(position.play(m).unwrap());
                let reply =
                    AlphaBetaEngine::new(config.clone(), Limits::depth(depth - 1)).analyse(&after);
                let below = (soft.score + reply.score) as f32 / 100.0;
                (below <= 4.0 * temperature).then(|| (m.to_string(), (-below / temperature).exp()))
            })
            .collect();
        let total: f32 = expected.iter().map(|(_, w)| w).sum();
        expected.iter_mut().for_each(|(_, w)| *w /= total);
        expected.sort_by(|a, b| a.0.cmp(&b.0));
        let mut policy: Vec<(String, f32)> = soft
            .policy
            .iter()
            .map(|(m, w)| (m.to_string(), *w))
            .collect();
        assert_eq!(policy[0].0, soft.best.to_string(), "{fen}: the best first");
        policy.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            policy.iter().map(|(m, _)| m).collect::<Vec<_>>(),
            expected.iter().map(|(m, _)| m).collect::<Vec<_>>(),
            "{fen}"
        );
        for ((m, weight), (_, wanted)) in policy.iter().zip(&expected) {
            assert!(
                (weight - wanted).abs() < 1e-5,
                "{fen} {m}: {weight} against {wanted}"
            );
        }
    }
    // Qxd5 is 8 Pawns below the best: out of the policy.
    let queen_lost = Game::from_position(Position::from_fen(Variant::Chess, fens[0]).unwrap());
    let mut engine =
        AlphaBetaEngine::new(config.clone(), Limits::depth(2)).with_soft_policy(temperature);
    let policy = engine.analyse(&queen_lost).policy;
    assert!(policy.len() > 1 && policy.iter().all(|(m, _)| m.to_string() != "d1d5"));
}
