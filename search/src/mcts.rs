//! The MCTS core: one resumable search loop, with the root policy a parameter (in the
//! spirit of DeepMind's mctx).
//!
//! [`MctsSearch`] owns the tree of one game's current position. [`MctsSearch::start`]
//! begins the search of a move with a budget and a [`RootPolicy`]; [`MctsSearch::next_leaf`]
//! (or one simulation at a time, [`MctsSearch::step`]) descends, finishing the simulations
//! that end in a terminal position at once, until a leaf needs an evaluation, which
//! [`MctsSearch::complete_leaf`] takes back. The results are read off the root (visits, Q,
//! the Gumbel root's choice, the improved policy target, the principal variation), and
//! [`MctsSearch::advance`] keeps the subtree of the move played for the next search.
//!
//! The evaluation is the caller's business: the single-position engine
//! ([`crate::engine::MctsEngine`]) evaluates each leaf at once (batch 1), self-play
//! (`ninjazero-selfplay`) batches the leaves of many games into one network call.
//!
//! Below the root, children are chosen by PUCT with first-play urgency; at the root by the
//! root policy: the same PUCT, PUCT on priors mixed with Dirichlet noise (AlphaZero's
//! self-play exploration), or Gumbel top-k sampling with Sequential Halving over the
//! search's budget (see [`crate::gumbel`]). A new root policy is one more [`RootPolicy`]
//! variant and its cases in [`MctsSearch::set_up_root`], the root descent and the results.

use crate::engine::{Score, SearchInfo};
use crate::gumbel::{improved_policy, GumbelRoot};
use crate::material::MaterialTable;
use crate::tree::{Edge, NodeState, Puct, Tree};
use crate::{RootSearch, SearchConfig};
use ninjazero_model::{EvalRequest, Evaluation, PieceSquareEval};
use ninjazero_rules::{Game, Move, MoveList, Position};
use rand::Rng;
use rand_distr::{Distribution, Gamma};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How the root chooses the move to simulate next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RootPolicy {
    /// PUCT, as below the root.
    Puct,
    /// PUCT on the priors mixed with Dirichlet noise, `(1 - epsilon) p + epsilon n` with
    /// `n ~ Dir(alpha_total / legal moves)` (AlphaZero). The noise is drawn from the
    /// caller's random stream once the root has priors.
    DirichletPuct { alpha_total: f64, epsilon: f32 },
    /// Gumbel top-`actions` sampling and Sequential Halving over the search's budget
    /// (Danihelka et al., ICLR 2022); the Gumbel noise is drawn from the caller's stream.
    Gumbel { actions: usize },
}

impl RootPolicy {
    /// The root policy `config` asks for: Gumbel for [`RootSearch::Gumbel`]; for
    /// [`RootSearch::Puct`], PUCT with Dirichlet noise when `exploring` (full self-play
    /// searches), plain PUCT otherwise (cheap self-play searches, playing strength).
    pub fn of(config: &SearchConfig, exploring: bool) -> RootPolicy {
        match config.root_search {
            RootSearch::Gumbel => RootPolicy::Gumbel {
                actions: config.gumbel_actions,
            },
            RootSearch::Puct if exploring => RootPolicy::DirichletPuct {
                alpha_total: config.dirichlet_alpha_total,
                epsilon: config.dirichlet_epsilon,
            },
            RootSearch::Puct => RootPolicy::Puct,
        }
    }
}

/// Capture plies the leaves' quiescence search may look ahead: capture, recapture and one
/// more exchange. Deeper costs more than it finds: with 8 plies a tiny network's search
/// ran at 0.23x the simulations per second of unresolved leaves, with 4 at 0.89x
/// (`ninjazero bench search --captures 1`, insane-ninja).
const CAPTURE_PLIES: u32 = 4;

/// The log-odds of an expected score `value` in [-1, 1] (clamped short of ±1).
fn log_odds(value: f32) -> f32 {
    2.0 * value.clamp(-0.999, 0.999).atanh()
}

/// The expected score in [-1, 1] of `log_odds`.
fn expected_score(log_odds: f32) -> f32 {
    (log_odds / 2.0).tanh()
}

/// A leaf's value `value` (expected score in [-1, 1]) with `pieces` won by force added to
/// the log-odds of its expected score, `logit` each.
fn with_captures(value: f32, pieces: i32, logit: f32) -> f32 {
    if pieces == 0 {
        return value;
    }
    expected_score(log_odds(value) + logit * pieces as f32)
}

/// `priors` raised to `1 / temperature` and renormalised, into `out`: softmax(logits / T)
/// for priors that are softmax(logits). Priors summing to nothing stay as they are.
fn temper(priors: &[f32], temperature: f32, out: &mut Vec<f32>) {
    out.clear();
    out.extend(priors.iter().map(|p| p.powf(1.0 / temperature)));
    let sum: f32 = out.iter().sum();
    if sum > 0.0 && sum.is_finite() {
        out.iter_mut().for_each(|p| *p /= sum);
    } else {
        out.clear();
        out.extend_from_slice(priors);
    }
}

/// Units of a [`LeafBlend`]'s capture table per unit of log-odds (whole units, as
/// [`MaterialTable`] counts).
const BLEND_UNITS_PER_LOG_ODDS: f32 = 1000.0;

/// A learnt piece-square evaluation mixed into every leaf's value, as AlphaGo mixed its
/// value network with rollouts: the leaf's log-odds are `1 - mix` times the evaluator's
/// (after [`SearchConfig::capture_logit`]) plus `mix` times the learnt evaluation's, whose
/// captures are resolved with its own piece values. The network keeps the priors; 0 leaves
/// its values as they are, 1 replaces them. The evaluation's mobility is the leaf's legal
/// moves less its parent's (none at the root).
#[derive(Clone, Debug)]
pub struct LeafBlend {
    eval: Arc<PieceSquareEval>,
    captures: MaterialTable,
    mix: f32,
}

impl LeafBlend {
    /// `eval` mixed in at `mix`, clamped to [0, 1] (NaN to 0).
    pub fn new(eval: Arc<PieceSquareEval>, mix: f32) -> LeafBlend {
        LeafBlend {
            captures: MaterialTable::new(&eval.piece_values(), BLEND_UNITS_PER_LOG_ODDS),
            eval,
            mix: if mix.is_nan() {
                0.0
            } else {
                mix.clamp(0.0, 1.0)
            },
        }
    }

    /// The learnt evaluation's log-odds for the side to move at `position` (legal `moves`,
    /// `parent_moves` at the position before), with what its captures win by force.
    pub fn log_odds(&self, position: &Position, moves: &MoveList, parent_moves: usize) -> f32 {
        let mobility = moves.len() as i32 - parent_moves as i32;
        let won = self
            .captures
            .capture_sequence_gain(position, moves, CAPTURE_PLIES);
        self.eval.log_odds(position, mobility) + won as f32 / BLEND_UNITS_PER_LOG_ODDS
    }

    /// The evaluator's `value` mixed with the learnt `learnt_log_odds`.
    fn blend(&self, value: f32, learnt_log_odds: f32) -> f32 {
        expected_score((1.0 - self.mix) * log_odds(value) + self.mix * learnt_log_odds)
    }
}

/// What one simulation step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A leaf waits for its evaluation ([`MctsSearch::request`], then
    /// [`MctsSearch::complete_leaf`]).
    Evaluate,
    /// A simulation ended in a terminal position and was backed up.
    Simulated,
    /// The budget is spent, or the root itself is terminal: nothing to simulate.
    Finished,
}

/// A leaf waiting for its evaluation.
#[derive(Clone, Debug)]
struct PendingLeaf {
    path: Vec<u32>,
    moves: MoveList,
    repetitions: u32,
    /// Pieces the side to move wins by force with captures (0 without capture resolution).
    capture_gain: i32,
    /// The [`LeafBlend`]'s log-odds of the leaf, if the search mixes one in.
    learnt_log_odds: Option<f32>,
}

impl PendingLeaf {
    fn node(&self) -> u32 {
        *self.path.last().expect("a path holds the root")
    }
}

/// The search tree of a game's current position and the search of its move.
#[derive(Clone, Debug)]
pub struct MctsSearch {
    tree: Tree,
    puct: Puct,
    /// How a repetition below the root is scored ([`SearchConfig::repetition_penalty`]).
    repetition: RepetitionScore,
    /// Log-odds per piece won by force in captures at a leaf
    /// ([`SearchConfig::capture_logit`]); 0 leaves leaves unresolved.
    capture_logit: f32,
    blend: Option<LeafBlend>,
    /// [`SearchConfig::policy_temperature`], and the buffer its tempered priors go
    /// through (kept, so that expanding a leaf allocates nothing).
    policy_temperature: f32,
    tempered: Vec<f32>,
    policy: RootPolicy,
    /// Simulations of this search (on top of what a reused tree holds).
    budget: u32,
    done: u32,
    /// Whether the root policy is set up (it needs the root's priors).
    ready: bool,
    noisy_priors: Option<Vec<f32>>,
    gumbel: Option<GumbelRoot>,
    /// Leaves waiting for their evaluations, in the order they were reached.
    leaves: Vec<PendingLeaf>,
    movegen: Duration,
}

/// Where one descent ended.
enum Descent {
    /// At a leaf that now waits for its evaluation.
    Leaf,
    /// At a terminal position: the simulation is backed up.
    Terminal,
    /// At a leaf already waiting: nothing to add to this batch.
    Collision,
    /// Nothing to descend: the budget is spent or the root is terminal.
    Finished,
}

/// Occurrences of the position at the end of `path`, counting the game's positions before
/// the root (`history`, ending with the root) and the path below the root.
fn repetitions(history: &[u64], tree: &Tree, path: &[u32]) -> u32 {
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

/// The value of a finished position for its side to move, or None if play goes on. A
/// repetition ends the game at the third occurrence; inside the search, `repetition`
/// also says when and at what value it ends the simulation.
fn terminal_value(
    position: &Position,
    moves: &MoveList,
    repetitions: u32,
    repetition: RepetitionScore,
) -> Option<f32> {
    if moves.is_empty() {
        let outcome = position.outcome()?;
        return Some(match outcome.winner {
            Some(winner) if winner == position.turn() => 1.0,
            Some(_) => -1.0,
            None => 0.0,
        });
    }
    if repetitions >= repetition.ends_at {
        return Some(repetition.value);
    }
    (position.halfmove_clock() >= 100).then_some(0.0)
}

/// How the search scores a repeated position.
#[derive(Clone, Copy, Debug)]
struct RepetitionScore {
    /// Occurrences (counting this one) that end a simulation.
    ends_at: u32,
    /// The value for the side to move at the repetition.
    value: f32,
}

impl RepetitionScore {
    /// The game's rule: a draw at the third occurrence.
    const RULE: RepetitionScore = RepetitionScore {
        ends_at: 3,
        value: 0.0,
    };

    /// With a penalty, below the root a position repeated at all costs the mover who
    /// repeats it the penalty (as alpha-beta engines score a first repetition): waiting
    /// for the third occurrence would let both sides start every cycle for free. The
    /// opponent, to move at the repeated position, gains it.
    fn below_root(penalty: f32) -> RepetitionScore {
        if penalty == 0.0 {
            return RepetitionScore::RULE;
        }
        RepetitionScore {
            ends_at: 2,
            value: penalty,
        }
    }
}

impl MctsSearch {
    /// A tree holding only `position`, searched with `config`'s exploration settings and
    /// repetition penalty. Call [`MctsSearch::start`] before searching.
    pub fn new(position: Position, config: &SearchConfig) -> MctsSearch {
        MctsSearch {
            tree: Tree::new(position),
            puct: Puct::from(config),
            repetition: RepetitionScore::below_root(config.repetition_penalty),
            capture_logit: config.capture_logit,
            blend: None,
            policy_temperature: config.policy_temperature,
            tempered: Vec::new(),
            policy: RootPolicy::Puct,
            budget: 0,
            done: 0,
            ready: false,
            noisy_priors: None,
            gumbel: None,
            leaves: Vec::new(),
            movegen: Duration::ZERO,
        }
    }

    /// Mixes `blend`'s learnt evaluation into every leaf's value from now on (none: the
    /// evaluator's value alone).
    pub fn with_blend(mut self, blend: Option<LeafBlend>) -> MctsSearch {
        self.blend = blend;
        self
    }

    /// Starts the search of the root's move: `budget` simulations (at least one) with the
    /// root `policy`. A root that already has priors (a reused tree) gets its noise or Gumbel
    /// schedule from `rng` now, a new root once its evaluation is in.
    pub fn start<R: Rng + ?Sized>(&mut self, budget: u32, policy: RootPolicy, rng: &mut R) {
        self.policy = policy;
        self.budget = budget.max(1);
        self.done = 0;
        self.ready = false;
        self.noisy_priors = None;
        self.gumbel = None;
        self.abandon_leaves();
        if self.tree.root().state == NodeState::Expanded {
            self.set_up_root(rng);
        }
    }

    /// Whether the search is over: its budget is spent (or the root is terminal).
    pub fn is_finished(&self) -> bool {
        self.root_is_terminal() || (self.ready && self.done >= self.budget)
    }

    /// Whether the root's game is over (mate, stalemate, or a draw by rule with the
    /// repetitions of the game's history): there is nothing to search.
    pub fn root_is_terminal(&self) -> bool {
        matches!(self.tree.root().state, NodeState::Terminal(_))
    }

    /// One simulation: descends from the root and either finishes it (a terminal position)
    /// or stops at the leaf that needs an evaluation. `history` holds the hashes of the
    /// game's positions, ending with the root's (for repetitions).
    pub fn step(&mut self, history: &[u64]) -> Step {
        if !self.leaves.is_empty() {
            return Step::Evaluate;
        }
        match self.descend_once(history) {
            Descent::Leaf => Step::Evaluate,
            Descent::Terminal => Step::Simulated,
            Descent::Finished => Step::Finished,
            Descent::Collision => unreachable!("no leaf waits when a step descends"),
        }
    }

    /// Simulates until a leaf needs an evaluation (true) or the search is finished (false).
    pub fn next_leaf(&mut self, history: &[u64]) -> bool {
        loop {
            match self.step(history) {
                Step::Evaluate => return true,
                Step::Finished => return false,
                Step::Simulated => {}
            }
        }
    }

    /// Simulates until up to `max_leaves` leaves wait for their evaluations, for one
    /// network call ([`MctsSearch::requests`], then [`MctsSearch::complete_leaves`]); the
    /// number waiting. Each waiting simulation counts as a loss along its path (virtual
    /// loss), so that the batch's descents spread out; the batch ends early where a descent
    /// reaches a leaf already waiting, where the budget is spoken for, and at the end of a
    /// Gumbel round (whose halving needs the round's results). With `max_leaves` 1 it
    /// searches exactly as [`MctsSearch::next_leaf`].
    pub fn gather(&mut self, history: &[u64], max_leaves: usize) -> usize {
        while self.leaves.len() < max_leaves.max(1) {
            let round_spent = self.gumbel.as_ref().is_some_and(GumbelRoot::round_spent);
            if !self.leaves.is_empty() && round_spent {
                break;
            }
            match self.descend_once(history) {
                Descent::Leaf | Descent::Terminal => {}
                Descent::Collision | Descent::Finished => break,
            }
        }
        self.leaves.len()
    }

    /// One descent: a terminal position is backed up at once, a new leaf joins the
    /// waiting ones.
    fn descend_once(&mut self, history: &[u64]) -> Descent {
        let spoken_for = self.done + self.leaves.len() as u32;
        if self.is_finished() || (self.ready && spoken_for >= self.budget) {
            return Descent::Finished;
        }
        let path = self.descend();
        let node = *path.last().expect("a path holds the root");
        if let NodeState::Terminal(value) = self.tree.node(node).state {
            self.finish_simulation(&path, value);
            return Descent::Terminal;
        }
        if self.leaves.iter().any(|leaf| leaf.node() == node) {
            return Descent::Collision;
        }
        let started = Instant::now();
        let moves = self.tree.node(node).position.legal_moves();
        self.movegen += started.elapsed();
        let repetitions = repetitions(history, &self.tree, &path);
        let position = &self.tree.node(node).position;
        let repetition = if node == self.tree.root {
            RepetitionScore::RULE
        } else {
            self.repetition
        };
        match terminal_value(position, &moves, repetitions, repetition) {
            Some(value) => {
                self.tree.nodes[node as usize].state = NodeState::Terminal(value);
                self.finish_simulation(&path, value);
                Descent::Terminal
            }
            None => {
                let capture_gain = if self.capture_logit > 0.0 {
                    let started = Instant::now();
                    let gain = MaterialTable::counting().capture_sequence_gain(
                        position,
                        &moves,
                        CAPTURE_PLIES,
                    );
                    self.movegen += started.elapsed();
                    gain
                } else {
                    0
                };
                let learnt_log_odds = self.blend.as_ref().map(|blend| {
                    let started = Instant::now();
                    let parent_moves = match path.len() {
                        1 => moves.len(),
                        n => self.tree.edges(path[n - 2]).len(),
                    };
                    let log_odds = blend.log_odds(position, &moves, parent_moves);
                    self.movegen += started.elapsed();
                    log_odds
                });
                self.tree.set_in_flight(&path, 1);
                self.leaves.push(PendingLeaf {
                    path,
                    moves,
                    repetitions,
                    capture_gain,
                    learnt_log_odds,
                });
                Descent::Leaf
            }
        }
    }

    /// The evaluation request of the first waiting leaf, if any.
    pub fn request(&self) -> Option<EvalRequest<'_>> {
        self.leaves.first().map(|leaf| self.request_of(leaf))
    }

    /// The evaluation requests of every waiting leaf, in order.
    pub fn requests(&self) -> Vec<EvalRequest<'_>> {
        self.leaves
            .iter()
            .map(|leaf| self.request_of(leaf))
            .collect()
    }

    fn request_of<'a>(&'a self, leaf: &'a PendingLeaf) -> EvalRequest<'a> {
        EvalRequest {
            position: &self.tree.node(leaf.node()).position,
            moves: &leaf.moves,
            repetitions: leaf.repetitions,
        }
    }

    /// Takes the evaluation of the waiting leaf (nothing happens without one): expands it
    /// and backs its value up. Sets up the root policy (with `rng`) once the root has
    /// priors.
    pub fn complete_leaf<R: Rng + ?Sized>(&mut self, evaluation: &Evaluation, rng: &mut R) {
        if !self.leaves.is_empty() {
            self.complete_leaves(std::slice::from_ref(evaluation), rng);
        }
    }

    /// Takes the evaluations of the waiting leaves, one per leaf in the order of
    /// [`MctsSearch::requests`]: withdraws their virtual losses, expands them and backs
    /// their values up.
    ///
    /// # Panics
    /// If the evaluations are not one per waiting leaf.
    pub fn complete_leaves<R: Rng + ?Sized>(&mut self, evaluations: &[Evaluation], rng: &mut R) {
        assert_eq!(
            evaluations.len(),
            self.leaves.len(),
            "one evaluation per waiting leaf"
        );
        for (leaf, evaluation) in std::mem::take(&mut self.leaves).iter().zip(evaluations) {
            self.tree.set_in_flight(&leaf.path, -1);
            let priors = if self.policy_temperature == 1.0 {
                &evaluation.priors
            } else {
                temper(
                    &evaluation.priors,
                    self.policy_temperature,
                    &mut self.tempered,
                );
                &self.tempered
            };
            self.tree.expand(leaf.node(), &leaf.moves, priors);
            let mut value =
                with_captures(evaluation.value(), leaf.capture_gain, self.capture_logit);
            if let (Some(blend), Some(learnt)) = (&self.blend, leaf.learnt_log_odds) {
                value = blend.blend(value, learnt);
            }
            self.finish_simulation(&leaf.path, value);
        }
        if !self.ready {
            self.set_up_root(rng);
        }
    }

    /// Drops the waiting leaves with their virtual losses.
    fn abandon_leaves(&mut self) {
        for leaf in std::mem::take(&mut self.leaves) {
            self.tree.set_in_flight(&leaf.path, -1);
        }
    }

    fn finish_simulation(&mut self, path: &[u32], value: f32) {
        self.tree.backup(path, value);
        self.done += 1;
    }

    /// Root to leaf: the root's choice follows the root policy, below it PUCT.
    fn descend(&mut self) -> Vec<u32> {
        let mut node = self.tree.root;
        let mut path = vec![node];
        while self.tree.node(node).state == NodeState::Expanded {
            let edge = if node == self.tree.root {
                self.root_edge()
            } else {
                self.tree.select_edge(node, self.puct, None)
            };
            node = self.tree.child(node, edge);
            path.push(node);
        }
        path
    }

    fn root_edge(&mut self) -> usize {
        let tree = &self.tree;
        let edges = tree.edges(tree.root);
        match self.gumbel.as_mut() {
            Some(gumbel) => gumbel.next_action(
                |a| tree.child_q(&edges[a]),
                |a| tree.child_visits(&edges[a]),
                tree.root().value(),
            ),
            None => tree.select_edge(tree.root, self.puct, self.noisy_priors.as_deref()),
        }
    }

    /// The root policy's set-up, once the root has priors: Dirichlet noise, or the Gumbel
    /// schedule for this search's budget.
    fn set_up_root<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let priors = self.priors();
        match self.policy {
            RootPolicy::Gumbel { actions } => {
                self.gumbel = Some(GumbelRoot::new(&priors, actions, self.budget, rng));
            }
            RootPolicy::DirichletPuct {
                alpha_total,
                epsilon,
            } if priors.len() > 1 => {
                let alpha = (alpha_total / priors.len() as f64).max(1e-3);
                let gamma = Gamma::new(alpha, 1.0).expect("alpha is positive");
                let noise: Vec<f64> = priors.iter().map(|_| gamma.sample(rng)).collect();
                let sum: f64 = noise.iter().sum::<f64>().max(1e-12);
                self.noisy_priors = Some(
                    priors
                        .iter()
                        .zip(&noise)
                        .map(|(&p, &n)| (1.0 - epsilon) * p + epsilon * (n / sum) as f32)
                        .collect(),
                );
            }
            RootPolicy::DirichletPuct { .. } | RootPolicy::Puct => {}
        }
        self.ready = true;
    }

    /// Makes the child behind the root's edge `edge` the new root, keeping its subtree.
    pub fn advance(&mut self, edge: usize) {
        self.abandon_leaves();
        self.tree.advance(edge);
        if matches!(self.tree.root().state, NodeState::Terminal(_)) {
            // A repetition that ended simulations below the root need not end the game:
            // the next step judges the new root by the game's rules.
            let root = self.tree.root as usize;
            self.tree.nodes[root].state = NodeState::Leaf;
        }
        self.ready = false;
        self.noisy_priors = None;
        self.gumbel = None;
    }

    /// This search's tree carried on to `game`'s current position (tree reuse between an
    /// engine's moves): when the game went through this root and on by moves whose nodes
    /// the tree holds, the subtree of the position reached; `None` otherwise (another
    /// game, or a reply the search never expanded).
    pub fn carried_to(mut self, game: &Game) -> Option<MctsSearch> {
        let (hashes, moves) = (game.hashes(), game.moves());
        let root_hash = self.tree.root().position.hash();
        // The root's latest occurrence in the game (a repeated position: its last visit).
        let plies_since = (0..hashes.len()).find(|&k| hashes[hashes.len() - 1 - k] == root_hash)?;
        let played = moves.get(moves.len().checked_sub(plies_since)?..)?;
        for &m in played {
            if self.tree.root().state != NodeState::Expanded {
                return None;
            }
            let edge = self.root_edges().iter().position(|e| e.mv == m)?;
            self.advance(edge);
        }
        (self.tree.root().position == *game.position()).then_some(self)
    }

    /// The tree (read only).
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// The root's position.
    pub fn root_position(&self) -> &Position {
        &self.tree.root().position
    }

    /// The root's mean value for its side to move.
    pub fn root_value(&self) -> f32 {
        self.tree.root().value()
    }

    /// Simulations of the current search so far.
    pub fn simulations(&self) -> u32 {
        self.done
    }

    /// Time spent generating legal moves at leaves (resolving their captures and scoring
    /// them with a [`LeafBlend`]'s evaluation), over every search of this tree.
    pub fn movegen(&self) -> Duration {
        self.movegen
    }

    /// The root's edges (its legal moves with their priors), in move generation order; the
    /// per-move results below follow this order.
    pub fn root_edges(&self) -> &[Edge] {
        self.tree.edges(self.tree.root)
    }

    /// The root's priors, from the evaluator (without noise).
    pub fn priors(&self) -> Vec<f32> {
        self.root_edges().iter().map(|e| e.prior).collect()
    }

    /// Visits of each root move.
    pub fn visits(&self) -> Vec<u32> {
        let edges = self.root_edges();
        edges.iter().map(|e| self.tree.child_visits(e)).collect()
    }

    /// Q of each root move for the side to move at the root, if visited.
    pub fn q(&self) -> Vec<Option<f32>> {
        let edges = self.root_edges();
        edges.iter().map(|e| self.tree.child_q(e)).collect()
    }

    /// The most visited root move (the first of equals).
    pub fn most_visited(&self) -> usize {
        let visits = self.visits();
        (0..visits.len())
            .max_by_key(|&i| (visits[i], std::cmp::Reverse(i)))
            .unwrap_or(0)
    }

    /// The Gumbel root's choice (the best remaining action by g + logit + sigma(completed
    /// Q)); None for the PUCT root policies, whose move the caller picks from the visits.
    pub fn gumbel_choice(&self) -> Option<usize> {
        let gumbel = self.gumbel.as_ref()?;
        let (q, visits) = (self.q(), self.visits());
        Some(gumbel.chosen(|a| q[a], |a| visits[a], self.root_value()))
    }

    /// The policy training target per root move: the improved policy softmax(logit +
    /// sigma(completed Q)) of a Gumbel root, else the visit distribution.
    pub fn policy_target(&self) -> Vec<f32> {
        let visits = self.visits();
        if self.gumbel.is_some() {
            return improved_policy(&self.priors(), &self.q(), &visits, self.root_value());
        }
        let total = visits.iter().sum::<u32>().max(1) as f32;
        visits.iter().map(|&v| v as f32 / total).collect()
    }

    /// The search's report: the best move (the Gumbel root's choice, else the most visited
    /// move), its value, the principal variation (the best move, then the most visited line),
    /// each root move's visits. Call once the root is expanded.
    pub fn info(&self, elapsed: Duration) -> SearchInfo {
        let tree = &self.tree;
        let most_visited = |node: u32| {
            tree.edges(node)
                .iter()
                .max_by_key(|e| tree.child_visits(e))
                .filter(|e| tree.child_visits(e) > 0)
                .copied()
        };
        let root_edges = self.root_edges();
        let first = match self.gumbel_choice() {
            Some(choice) => Some(root_edges[choice]),
            None => most_visited(tree.root),
        };
        let mut pv = Vec::new();
        let mut edge = first;
        while let Some(e) = edge.filter(|e| e.child != crate::tree::NO_CHILD) {
            pv.push(e.mv);
            edge = most_visited(e.child);
        }
        let mut root_visits: Vec<(Move, u32)> = root_edges
            .iter()
            .map(|e| (e.mv, tree.child_visits(e)))
            .collect();
        root_visits.sort_by_key(|&(_, visits)| std::cmp::Reverse(visits));
        let best = first.map_or(root_edges[0].mv, |e| e.mv);
        let value = first
            .and_then(|e| tree.child_q(&e))
            .unwrap_or(tree.root().value());
        SearchInfo {
            best,
            score: Score::Value(value),
            depth: pv.len() as u32,
            nodes: u64::from(self.done),
            simulations: Some(u64::from(self.done)),
            elapsed,
            pv,
            root_visits,
            root_policy: Vec::new(),
        }
    }
}
