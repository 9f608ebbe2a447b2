//! Searching one position for a player (terminal play, UCI, arena): PUCT without noise,
//! limited by simulations, time or a stop flag, reporting the principal variation.

use crate::tree::{NodeState, Puct, Tree};
use crate::SearchConfig;
use ninjazero_model::{EvalRequest, Evaluation, Evaluator};
use ninjazero_rules::{Game, Move, MoveList, Position};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Occurrences of the position at the end of `path`, counting the game's positions before
/// the root (`history`, ending with the root) and the path below the root.
pub fn repetitions(history: &[u64], tree: &Tree, path: &[u32]) -> u32 {
    let hash = tree
        .node(*path.last().expect("a path holds the root"))
        .position
        .hash();
    let in_game = history.iter().filter(|&&h| h == hash).count();
    let in_tree = path[1..]
        .iter()
        .filter(|&&n| tree.node(n).position.hash() == hash)
        .count();
    (in_game + in_tree) as u32
}

/// The value of a finished position for its side to move, or None if play goes on.
pub fn terminal_value(position: &Position, moves: &MoveList, repetitions: u32) -> Option<f32> {
    if moves.is_empty() {
        let outcome = position.outcome()?;
        return Some(match outcome.winner {
            Some(winner) if winner == position.turn() => 1.0,
            Some(_) => -1.0,
            None => 0.0,
        });
    }
    (position.halfmove_clock() >= 100 || repetitions >= 3).then_some(0.0)
}

/// When to stop searching (whichever comes first; at least one simulation is run).
#[derive(Clone, Debug, Default)]
pub struct SearchLimits {
    pub simulations: Option<u64>,
    pub time: Option<Duration>,
}

/// The state of a search, as reported while it runs and at its end.
#[derive(Clone, Debug)]
pub struct SearchInfo {
    pub best: Move,
    /// Expected score in [-1, 1] for the side to move.
    pub value: f32,
    pub simulations: u64,
    pub elapsed: Duration,
    /// The most visited line from the root.
    pub pv: Vec<Move>,
    /// Each root move with its visit count, most visited first.
    pub root_visits: Vec<(Move, u32)>,
}

impl SearchInfo {
    /// The value as centipawns, for engine protocols (the usual logistic-style mapping).
    pub fn centipawns(&self) -> i32 {
        let v = self.value.clamp(-0.999, 0.999);
        (290.68 * (1.548 * v).tan()).round() as i32
    }
}

/// Searches positions one leaf at a time with a given evaluator.
pub struct Searcher<'e> {
    evaluator: &'e mut dyn Evaluator,
    puct: Puct,
}

impl<'e> Searcher<'e> {
    pub fn new(evaluator: &'e mut dyn Evaluator, config: &SearchConfig) -> Searcher<'e> {
        Searcher {
            evaluator,
            puct: Puct {
                c_puct: config.c_puct,
                fpu_reduction: config.fpu_reduction,
            },
        }
    }

    /// Searches the current position of `game`. `report` is called about every 100 ms
    /// and at the end; `stop` ends the search early when set. None if the game is over.
    pub fn search(
        &mut self,
        game: &Game,
        limits: &SearchLimits,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&SearchInfo),
    ) -> Option<SearchInfo> {
        let started = Instant::now();
        let mut tree = Tree::new(game.position().clone());
        let mut evaluation = vec![Evaluation::default()];
        let mut simulations = 0u64;
        let mut last_report = started;
        loop {
            self.simulate(&mut tree, game.hashes(), &mut evaluation);
            simulations += 1;
            if tree.root().state != NodeState::Expanded {
                return None;
            }
            let out_of_time = limits.time.is_some_and(|t| started.elapsed() >= t);
            let enough = limits.simulations.is_some_and(|n| simulations >= n);
            let done = out_of_time || enough || stop.load(Ordering::Relaxed);
            if done || last_report.elapsed() >= Duration::from_millis(100) {
                last_report = Instant::now();
                let info = summarize(&tree, simulations, started.elapsed());
                report(&info);
                if done {
                    return Some(info);
                }
            }
        }
    }

    fn simulate(&mut self, tree: &mut Tree, history: &[u64], evaluation: &mut [Evaluation]) {
        let mut node = tree.root;
        let mut path = vec![node];
        while tree.node(node).state == NodeState::Expanded {
            let edge = tree.select_edge(node, self.puct, None);
            node = tree.child(node, edge);
            path.push(node);
        }
        if let NodeState::Terminal(value) = tree.node(node).state {
            tree.backup(&path, value);
            return;
        }
        let moves = tree.node(node).position.legal_moves();
        let reps = repetitions(history, tree, &path);
        if let Some(value) = terminal_value(&tree.node(node).position, &moves, reps) {
            tree.nodes[node as usize].state = NodeState::Terminal(value);
            tree.backup(&path, value);
            return;
        }
        let request = EvalRequest {
            position: &tree.node(node).position,
            moves: &moves,
            repetitions: reps,
        };
        self.evaluator.evaluate(&[request], evaluation);
        tree.expand(node, &moves, &evaluation[0].priors);
        tree.backup(&path, evaluation[0].value());
    }
}

/// Best move, value and principal variation of a searched tree.
fn summarize(tree: &Tree, simulations: u64, elapsed: Duration) -> SearchInfo {
    let most_visited = |node: u32| {
        tree.edges(node)
            .iter()
            .max_by_key(|e| tree.child_visits(e))
            .filter(|e| tree.child_visits(e) > 0)
            .copied()
    };
    let mut pv = Vec::new();
    let mut node = tree.root;
    while let Some(edge) = most_visited(node) {
        pv.push(edge.mv);
        node = edge.child;
    }
    let root_edges = tree.edges(tree.root);
    let mut root_visits: Vec<(Move, u32)> = root_edges
        .iter()
        .map(|e| (e.mv, tree.child_visits(e)))
        .collect();
    root_visits.sort_by_key(|&(_, visits)| std::cmp::Reverse(visits));
    let best = pv.first().copied().unwrap_or(root_edges[0].mv);
    let value = most_visited(tree.root)
        .and_then(|e| tree.child_q(&e))
        .unwrap_or(tree.root().value());
    SearchInfo {
        best,
        value,
        simulations,
        elapsed,
        pv,
        root_visits,
    }
}
