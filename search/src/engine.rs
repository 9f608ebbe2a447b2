//! One interface for every engine: play, UCI, the arena, player datasets and the values
//! matches drive an [`Engine`] the same way, whatever searches behind it (MCTS with a
//! network or the model-free evaluator, alpha-beta, the random mover).
//!
//! A search gets [`Limits`] (simulations, depth, nodes, time: whichever comes first; each
//! engine honours those that apply to it), a stop flag and a report callback, and returns
//! a [`SearchInfo`]: best move, score, depth, nodes, principal variation, time.

use crate::alphabeta::{
    AlphaBeta, AlphaBetaConfig, AlphaBetaInfo, NetworkRole, MATE, MATE_BOUND, MAX_DEPTH,
};
use crate::mcts::{LeafBlend, MctsSearch, RootPolicy};
use crate::SearchConfig;
use ninjazero_model::score::{centipawns_from_value, value_from_centipawns};
use ninjazero_model::{EvalRequest, Evaluation, Evaluator};
use ninjazero_rules::seed::{derive_seed, SeedStream};
use ninjazero_rules::{Game, Move};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The most simulations one MCTS search runs, whatever the limits: the tree takes about
/// 1 KB per simulation, and the model-free evaluator runs some 200 000 simulations a second.
pub const MAX_SIMULATIONS: u64 = 2_000_000;

/// When a search stops: at the first limit reached (at least one simulation, or depth 1, is
/// always completed). Each engine honours the limits that apply to it: MCTS simulations,
/// nodes (its simulations too) and time; alpha-beta depth, nodes and time. No limit at
/// all means "until stopped" (MCTS: at most [`MAX_SIMULATIONS`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    pub simulations: Option<u64>,
    /// Plies of iterative deepening.
    pub depth: Option<u32>,
    /// Positions searched (MCTS: simulations).
    pub nodes: Option<u64>,
    pub time: Option<Duration>,
}

impl Limits {
    pub fn simulations(n: u64) -> Limits {
        Limits {
            simulations: Some(n),
            ..Limits::default()
        }
    }

    pub fn depth(plies: u32) -> Limits {
        Limits {
            depth: Some(plies),
            ..Limits::default()
        }
    }

    pub fn nodes(n: u64) -> Limits {
        Limits {
            nodes: Some(n),
            ..Limits::default()
        }
    }

    pub fn time(time: Duration) -> Limits {
        Limits {
            time: Some(time),
            ..Limits::default()
        }
    }

    /// The simulations an MCTS search may run: the smaller of the simulation and node
    /// limits, at most [`MAX_SIMULATIONS`], at least 1.
    pub fn simulation_budget(&self) -> u64 {
        [self.simulations, self.nodes]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(MAX_SIMULATIONS)
            .clamp(1, MAX_SIMULATIONS)
    }
}

/// An engine's opinion of the position, for the side to move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Score {
    /// Expected score in [-1, 1] (MCTS).
    Value(f32),
    /// Centipawns (alpha-beta).
    Centipawns(i32),
    /// A forced mate in this many plies: positive when the side to move mates, negative
    /// when it is mated.
    Mate(i32),
}

impl Score {
    /// The expected score in [-1, 1] (centipawns by the inverse of [`Score::centipawns`]'s
    /// mapping, a mate as ±1).
    pub fn value(&self) -> f32 {
        match *self {
            Score::Value(v) => v,
            Score::Centipawns(cp) => value_from_centipawns(cp),
            Score::Mate(plies) => plies.signum() as f32,
        }
    }

    /// Centipawns, for engine protocols: a value by the usual logistic-style mapping, a mate
    /// as ±100 000.
    pub fn centipawns(&self) -> i32 {
        match *self {
            Score::Value(v) => centipawns_from_value(v),
            Score::Centipawns(cp) => cp,
            Score::Mate(plies) => 100_000 * plies.signum(),
        }
    }

    /// The UCI form: `cp C`, or `mate M` with M in moves (negative when mated).
    pub fn uci(&self) -> String {
        match *self {
            Score::Mate(plies) => format!("mate {}", plies.signum() * (plies.abs() + 1) / 2),
            _ => format!("cp {}", self.centipawns()),
        }
    }
}

/// The state of a search, as reported while it runs and at its end.
#[derive(Clone, Debug)]
pub struct SearchInfo {
    pub best: Move,
    pub score: Score,
    /// Alpha-beta: the last completed iteration; MCTS: the length of the principal
    /// variation.
    pub depth: u32,
    /// Positions searched (MCTS: simulations).
    pub nodes: u64,
    /// Simulations, for the engines that run them (MCTS).
    pub simulations: Option<u64>,
    pub elapsed: Duration,
    /// The expected line, starting with the best move (empty before MCTS has visited one).
    pub pv: Vec<Move>,
    /// MCTS: each root move with its visit count, most visited first (empty for others).
    pub root_visits: Vec<(Move, u32)>,
    /// A policy over the root moves that the engine proposes as a training target, weights
    /// summing to 1 (alpha-beta with a soft policy, `soft=T`); empty for the others, whose
    /// move is the target.
    pub root_policy: Vec<(Move, f32)>,
}

impl SearchInfo {
    /// The expected score in [-1, 1] for the side to move.
    pub fn value(&self) -> f32 {
        self.score.value()
    }

    /// The score in centipawns (see [`Score::centipawns`]).
    pub fn centipawns(&self) -> i32 {
        self.score.centipawns()
    }
}

/// Why a search gave no move.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    /// The game is over: there is nothing to search.
    #[error("the game is over: there is nothing to search")]
    GameOver,
    /// The engine could not give a move: an external engine that crashed, hung, replied
    /// nonsense or named an illegal move. Internal engines never fail; a failing engine
    /// loses the game (see the arena), so that one broken player cannot stop a match.
    #[error("{0}")]
    Failed(String),
}

/// Something that searches positions and picks moves.
pub trait Engine: Send {
    /// A short name for reports (`alphabeta:depth=3`, `mcts:gen-0003:sims=64`); stored in
    /// result files.
    fn name(&self) -> String;

    /// Called before each game with a seed of that game, so that an engine's random
    /// choices depend on the game, not on the games it happened to play before.
    fn new_game(&mut self, _seed: u64) {}

    /// The limits of the engine's own settings (its spec's `sims=`, `depth=`, `ms=`), which
    /// [`Engine::choose`] searches with.
    fn limits(&self) -> Limits;

    /// Searches the game's current position within `limits` (or until `stop` is set),
    /// calling `report` as it goes (MCTS about every 100 ms, alpha-beta after each
    /// iteration) and at the end. [`SearchError::GameOver`] if there is nothing to search,
    /// [`SearchError::Failed`] if an external engine gave no usable move.
    fn search(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&SearchInfo),
    ) -> Result<SearchInfo, SearchError>;

    /// A legal move in the game's current position, searched with the engine's own limits.
    fn choose(&mut self, game: &Game) -> Result<Move, SearchError> {
        let limits = self.limits();
        self.search(game, &limits, &AtomicBool::new(false), &mut |_| {})
            .map(|info| info.best)
    }

    /// The engine as an [`MctsEngine`], whose moves a driver of many games can search a
    /// network call at a time ([`MctsEngine::move_search`]); None for other engines.
    fn as_mcts(&mut self) -> Option<&mut MctsEngine> {
        None
    }
}

/// Builds an engine; every worker thread of an arena builds its own.
pub type EngineFactory<'f> = dyn Fn() -> Result<Box<dyn Engine>, String> + Sync + 'f;

/// MCTS with a given evaluator: the search core of [`crate::mcts`] with its root policy
/// from the settings (PUCT without noise, or the Gumbel root), a fresh tree every search
/// unless it keeps its trees ([`MctsEngine::with_tree_reuse`]), and the most visited move
/// (or the Gumbel root's choice) played. It evaluates one leaf at a time, or up to
/// [`MctsEngine::with_batch`] leaves per network call (virtual loss): a network's
/// positions per second grow with the batch, which buys simulations where the time per
/// move is fixed.
pub struct MctsEngine {
    evaluator: Box<dyn Evaluator + Send>,
    config: SearchConfig,
    blend: Option<LeafBlend>,
    limits: Limits,
    name: String,
    seed: u64,
    /// The Gumbel root's noise.
    rng: StdRng,
    /// Leaves evaluated per network call.
    batch: usize,
    /// Whether a search starts from the subtree of the last one's tree.
    reuse: bool,
    /// The last search's tree, while the engine keeps its trees.
    kept: Option<MctsSearch>,
    evaluation: Vec<Evaluation>,
}

impl MctsEngine {
    /// With the default search settings ([`SearchConfig::default`]: PUCT, c_puct, FPU).
    pub fn new(evaluator: Box<dyn Evaluator + Send>, limits: Limits, name: String) -> MctsEngine {
        MctsEngine {
            evaluator,
            config: SearchConfig::default(),
            blend: None,
            limits,
            name,
            seed: 0,
            rng: StdRng::seed_from_u64(0),
            batch: 1,
            reuse: false,
            kept: None,
            evaluation: Vec::new(),
        }
    }

    /// Evaluates up to `batch` leaves per network call (at least 1; 1 searches one leaf at
    /// a time).
    pub fn with_batch(mut self, batch: usize) -> MctsEngine {
        self.batch = batch.max(1);
        self
    }

    /// Keeps each search's tree and starts the next search of the same game from the
    /// subtree of the position reached (tree reuse, as in lc0 and KataGo): the visits the
    /// last search spent on the line played count again. A simulation limit is then the
    /// simulations added to the kept subtree, as in self-play.
    pub fn with_tree_reuse(mut self, reuse: bool) -> MctsEngine {
        self.reuse = reuse;
        self
    }

    /// Replaces the search settings (c_puct, the FPU reduction, the root search and the
    /// Gumbel root's actions matter here).
    pub fn with_config(mut self, config: SearchConfig) -> MctsEngine {
        self.config = config;
        self
    }

    /// Mixes a learnt evaluation into every leaf's value ([`LeafBlend`]; none: the
    /// evaluator's value alone).
    pub fn with_blend(mut self, blend: Option<LeafBlend>) -> MctsEngine {
        self.blend = blend;
        self
    }

    /// Seeds the random stream (the Gumbel root's noise; [`Engine::new_game`] derives the
    /// stream of each game from this seed).
    pub fn with_seed(mut self, seed: u64) -> MctsEngine {
        self.seed = seed;
        self.rng = StdRng::seed_from_u64(seed);
        self
    }

    /// The random stream of the game [`Engine::new_game`] is told `seed`.
    pub fn game_rng(&self, seed: u64) -> StdRng {
        StdRng::seed_from_u64(derive_seed(self.seed, SeedStream::Game, seed))
    }

    /// How the engine searches a move, apart from its network: a driver of many games
    /// starts their searches with it and evaluates all their leaves in one call of
    /// [`MctsEngine::evaluate`].
    pub fn move_search(&self) -> MctsMoveSearch {
        MctsMoveSearch {
            config: self.config.clone(),
            blend: self.blend.clone(),
            limits: self.limits,
            leaves_per_call: self.batch,
            reuse: self.reuse,
        }
    }

    /// Evaluates `requests` (of any number of searches) in one network call.
    pub fn evaluate(&mut self, requests: &[EvalRequest<'_>], out: &mut Vec<Evaluation>) {
        evaluate(&mut *self.evaluator, requests, out);
    }
}

/// An [`MctsEngine`]'s move search without its network ([`MctsEngine::move_search`]).
#[derive(Clone, Debug)]
pub struct MctsMoveSearch {
    config: SearchConfig,
    blend: Option<LeafBlend>,
    limits: Limits,
    leaves_per_call: usize,
    reuse: bool,
}

impl MctsMoveSearch {
    /// The search of `game`'s move with the engine's settings and limits, `rng` the game's
    /// random stream ([`MctsEngine::game_rng`]): gather its leaves
    /// ([`MctsSearch::gather`] with [`MctsMoveSearch::leaves_per_call`]), have them
    /// evaluated and complete them until it is finished, as the engine's own search does.
    /// `kept` is this player's last search of the game, if [`MctsMoveSearch::keeps_trees`].
    pub fn start(&self, game: &Game, rng: &mut StdRng, kept: Option<MctsSearch>) -> MctsSearch {
        start_move(&self.config, &self.blend, game, &self.limits, rng, kept)
    }

    pub fn leaves_per_call(&self) -> usize {
        self.leaves_per_call
    }

    /// Whether the next search starts from the last one's tree
    /// ([`MctsEngine::with_tree_reuse`]): keep each finished search for it.
    pub fn keeps_trees(&self) -> bool {
        self.reuse
    }
}

/// The search of `game`'s move within `limits`: on the subtree of `kept` (an earlier search
/// of the game) where the game went on through it, else on a fresh tree.
fn start_move(
    config: &SearchConfig,
    blend: &Option<LeafBlend>,
    game: &Game,
    limits: &Limits,
    rng: &mut StdRng,
    kept: Option<MctsSearch>,
) -> MctsSearch {
    let mut search = kept
        .and_then(|search| search.carried_to(game))
        .unwrap_or_else(|| {
            MctsSearch::new(game.position().clone(), config).with_blend(blend.clone())
        });
    let budget = limits.simulation_budget() as u32;
    search.start(budget, RootPolicy::of(config, false), rng);
    search
}

/// `requests` evaluated in one call into `out`, one evaluation each.
fn evaluate(
    evaluator: &mut (dyn Evaluator + Send),
    requests: &[EvalRequest<'_>],
    out: &mut Vec<Evaluation>,
) {
    out.resize_with(requests.len(), Evaluation::default);
    evaluator.evaluate(requests, out);
}

impl Engine for MctsEngine {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn new_game(&mut self, seed: u64) {
        self.rng = self.game_rng(seed);
        self.kept = None;
    }

    fn limits(&self) -> Limits {
        self.limits
    }

    fn as_mcts(&mut self) -> Option<&mut MctsEngine> {
        Some(self)
    }

    /// Simulations up to [`Limits::simulation_budget`], stopping early on the time limit or
    /// the stop flag (checked after every network call); reports about every 100 ms and at
    /// the end. A Gumbel root plans its Sequential Halving for that budget: with a time
    /// limit alone (a budget of [`MAX_SIMULATIONS`]) it spends the time in its first round,
    /// visiting the considered actions evenly, so give Gumbel a simulation limit.
    fn search(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&SearchInfo),
    ) -> Result<SearchInfo, SearchError> {
        let started = Instant::now();
        let kept = self.kept.take();
        let mut search = start_move(&self.config, &self.blend, game, limits, &mut self.rng, kept);
        let mut last_report = started;
        loop {
            if search.gather(game.hashes(), self.batch) > 0 {
                evaluate(
                    &mut *self.evaluator,
                    &search.requests(),
                    &mut self.evaluation,
                );
                search.complete_leaves(&self.evaluation, &mut self.rng);
            }
            if search.root_is_terminal() {
                return Err(SearchError::GameOver);
            }
            let out_of_time = limits.time.is_some_and(|t| started.elapsed() >= t);
            let done = search.is_finished() || out_of_time || stop.load(Ordering::Relaxed);
            if done || last_report.elapsed() >= Duration::from_millis(100) {
                last_report = Instant::now();
                let info = search.info(started.elapsed());
                report(&info);
                if done {
                    if self.reuse {
                        self.kept = Some(search);
                    }
                    return Ok(info);
                }
            }
        }
    }
}

/// Plays a uniformly random legal move (seeded: the same seed gives the same moves).
pub struct RandomEngine {
    seed: u64,
    rng: StdRng,
}

impl RandomEngine {
    pub fn new(seed: u64) -> RandomEngine {
        RandomEngine {
            seed,
            rng: StdRng::seed_from_u64(seed),
        }
    }
}

impl Engine for RandomEngine {
    fn name(&self) -> String {
        "random".to_string()
    }

    fn new_game(&mut self, seed: u64) {
        self.rng = StdRng::seed_from_u64(derive_seed(self.seed, SeedStream::Game, seed));
    }

    fn limits(&self) -> Limits {
        Limits::default()
    }

    /// A random move at once, whatever the limits; it has no opinion of the position
    /// (score 0).
    fn search(
        &mut self,
        game: &Game,
        _limits: &Limits,
        _stop: &AtomicBool,
        report: &mut dyn FnMut(&SearchInfo),
    ) -> Result<SearchInfo, SearchError> {
        let started = Instant::now();
        let moves = game.position().legal_moves();
        if moves.is_empty() {
            return Err(SearchError::GameOver);
        }
        let best = moves[self.rng.random_range(0..moves.len())];
        let info = SearchInfo {
            best,
            score: Score::Value(0.0),
            depth: 0,
            nodes: 0,
            simulations: None,
            elapsed: started.elapsed(),
            pv: vec![best],
            root_visits: Vec::new(),
            root_policy: Vec::new(),
        };
        report(&info);
        Ok(info)
    }
}

/// The classic alpha-beta engine of [`crate::alphabeta`] with its own limits (depth and/or
/// time per move).
pub struct AlphaBetaEngine {
    engine: AlphaBeta,
    limits: Limits,
    last: Option<AlphaBetaInfo>,
    /// The name of the network or learnt evaluation it evaluates with, if any.
    evaluator: Option<String>,
}

impl AlphaBetaEngine {
    pub fn new(config: AlphaBetaConfig, limits: Limits) -> AlphaBetaEngine {
        AlphaBetaEngine {
            engine: AlphaBeta::new(config),
            limits,
            last: None,
            evaluator: None,
        }
    }

    /// The engine that also proposes a soft policy ([`AlphaBeta::with_soft_policy`]) as
    /// its searches' [`SearchInfo::root_policy`].
    pub fn with_soft_policy(mut self, temperature: f32) -> AlphaBetaEngine {
        self.engine = self.engine.with_soft_policy(temperature);
        self
    }

    /// The engine named `alphabeta:NAME:...` after the learnt evaluation it searches with.
    pub fn named_after(mut self, evaluation: String) -> AlphaBetaEngine {
        self.evaluator = Some(evaluation);
        self
    }

    /// The engine with a network in `role` ([`AlphaBeta::with_network`]), named
    /// `alphabeta:NETWORK:...`.
    pub fn with_network(
        config: AlphaBetaConfig,
        evaluator: Box<dyn Evaluator + Send>,
        role: NetworkRole,
        network: String,
        limits: Limits,
    ) -> AlphaBetaEngine {
        AlphaBetaEngine {
            engine: AlphaBeta::with_network(config, evaluator, role),
            limits,
            last: None,
            evaluator: Some(network),
        }
    }

    /// Searches the game's position with the engine's own limits and returns what the
    /// alpha-beta search found.
    pub fn analyse(&mut self, game: &Game) -> AlphaBetaInfo {
        self.engine
            .search(game, &self.limits, &AtomicBool::new(false), &mut |_| {})
    }

    /// The last search made through [`Engine::search`] or [`Engine::choose`] (depth
    /// reached, nodes, score, time).
    pub fn last_search(&self) -> Option<&AlphaBetaInfo> {
        self.last.as_ref()
    }
}

impl From<&AlphaBetaInfo> for SearchInfo {
    fn from(info: &AlphaBetaInfo) -> SearchInfo {
        let score = if info.score > MATE_BOUND {
            Score::Mate(MATE - info.score)
        } else if info.score < -MATE_BOUND {
            Score::Mate(-(MATE + info.score))
        } else {
            Score::Centipawns(info.score)
        };
        SearchInfo {
            best: info.best,
            score,
            depth: info.depth,
            nodes: info.nodes,
            simulations: None,
            elapsed: info.elapsed,
            pv: info.pv.clone(),
            root_visits: Vec::new(),
            root_policy: info.policy.clone(),
        }
    }
}

impl Engine for AlphaBetaEngine {
    /// `alphabeta[:NETWORK|:EVALUATION]:depth=D`, `…:ms=T` or both, then `:pick=M` for a
    /// picking network, `:soft=T` with a soft policy, `:values=custom` and `:mobility=W` when they differ from the
    /// defaults (every piece 1 with an evaluating network; a learnt evaluation holds its
    /// own, so it shows neither).
    fn name(&self) -> String {
        let config = self.engine.config();
        let mut name = String::from("alphabeta");
        if let Some(evaluator) = &self.evaluator {
            name += &format!(":{evaluator}");
        }
        let role = self.engine.network_role();
        let defaults = AlphaBetaConfig::defaults(role == Some(NetworkRole::Evaluates));
        let depth = self.limits.depth.unwrap_or(MAX_DEPTH);
        if depth < MAX_DEPTH || self.limits.time.is_none() {
            name += &format!(":depth={depth}");
        }
        if let Some(time) = self.limits.time {
            name += &format!(":ms={}", time.as_millis());
        }
        if let Some(NetworkRole::Picks { margin }) = role {
            name += &format!(":pick={margin}");
        }
        if let Some(temperature) = self.engine.soft_temperature() {
            name += &format!(":soft={temperature}");
        }
        if config.piece_squares.is_some() {
            return name;
        }
        if config.piece_values != defaults.piece_values {
            name += ":values=custom";
        }
        if config.mobility_weight != defaults.mobility_weight {
            name += &format!(":mobility={}", config.mobility_weight);
        }
        name
    }

    fn limits(&self) -> Limits {
        self.limits
    }

    fn search(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&SearchInfo),
    ) -> Result<SearchInfo, SearchError> {
        if game.position().legal_moves().is_empty() {
            return Err(SearchError::GameOver);
        }
        let info = self.engine.search(game, limits, stop, &mut |info| {
            report(&SearchInfo::from(info))
        });
        let result = SearchInfo::from(&info);
        self.last = Some(info);
        Ok(result)
    }
}
