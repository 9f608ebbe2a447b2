//! A classic alpha-beta engine, the kind of generic engine Zillions of Games plays these
//! variants with: iterative deepening negamax with alpha-beta (principal variation search),
//! a transposition table, move ordering (hash move, captures by MVV-LVA, killers, history),
//! a bounded quiescence search on captures, and an evaluation of material plus mobility.
//!
//! It knows nothing of a variant beyond the rules core and a table of piece values, which is
//! what makes it a fair baseline for every variant. It is deterministic: for a given
//! configuration and limits without a time limit (depth, nodes), the same game gives the
//! same move.
//!
//! With a network ([`AlphaBeta::with_network`]) the same search evaluates with the
//! network's value instead of material plus mobility: the first position of each
//! quiescence search is scored by the network (converted to centipawns), and the captures
//! below it change that score by the material they win, so the network judges quiet
//! positions and the search keeps the full-width tactics near the root that MCTS at a few
//! hundred simulations does not see. The children of a node one ply above the horizon are
//! evaluated in one batch: the network's throughput grows with the batch.
//!
//! Or the network picks the move ([`NetworkRole::Picks`]): the search evaluates with
//! material plus mobility as without a network, proves which root moves score at most a
//! margin below its best (one search per root move, its window the margin), and of those
//! plays the one the network's policy prefers. The search keeps its tactics and its speed (one
//! network call per move); the network only judges between moves the search finds about
//! as good.
//!
//! Either way the engine may also propose a soft policy over the root moves
//! ([`AlphaBeta::with_soft_policy`]): the same margin searches give every root move within
//! a few temperatures of the best its exact score, and the policy weighs them by
//! exp(−(best − score) / temperature). A network that imitates the engine then learns its
//! ranking of the good moves, not only its choice.
//!
//! Or a learnt piece-square evaluation replaces material plus mobility
//! ([`AlphaBetaConfig::learnt`]): weights fitted to self-play games' results, evaluated at
//! the search's full speed.
//!
//! Mobility is measured cheaply: the search generates the legal moves of every node anyway,
//! so a leaf's mobility term is (our legal moves at the leaf) minus (the opponent's legal
//! moves at its parent, one ply earlier). The rules core has no null move, and this needs
//! no extra move generation.

use crate::engine::{Limits, Score};
use crate::material::MaterialTable;
pub use ninjazero_model::CENTIPAWNS_PER_LOG_ODDS;
use ninjazero_model::{EvalRequest, Evaluation, Evaluator, PieceSquareEval};
use ninjazero_rules::{
    piece_values, ByRole, Color, Game, Move, MoveList, Position, Role, MAX_MOVES,
};
use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The score of being mated now; a mate in `n` plies scores `MATE - n` for the winner.
pub const MATE: i32 = 1_000_000;
const INFINITY: i32 = 2_000_000;
/// Scores beyond this (in absolute value) are mate scores.
pub const MATE_BOUND: i32 = MATE - 1_000;
/// Deepest ply (search plus quiescence) the engine reaches.
const MAX_PLY: usize = 128;
/// Capture plies the quiescence search may add below the nominal depth.
const QUIESCENCE_PLIES: u32 = 8;
/// Transposition table entries (a power of two; about 8 MB).
const TT_SIZE: usize = 1 << 18;
/// The children a node above the horizon first sends to the network at once (then twice
/// as many, and so on): enough for most cut nodes, small enough not to waste the batch.
const FIRST_HORIZON_BATCH: usize = 4;
const HISTORY_SQUARES: usize = 120;

/// The deepest iteration the engine runs (plies, before quiescence), also without a depth
/// limit.
pub const MAX_DEPTH: u32 = MAX_PLY as u32 / 2;

/// The most a piece may be worth, in Pawns, where material is the evaluation (values from
/// 0 up: a negative one would make the engine refuse captures). Both armies together hold
/// at most 128 pieces (the 120 squares of the largest board, 10x12, plus 4 in each hand),
/// so material stays within ±128 × 20 × 100 = ±256,000 centipawns.
pub const MAX_PIECE_VALUE: f32 = 20.0;

/// The most a learnt evaluation's derived piece value may be worth, in Pawns, either sign
/// (a fit's opinion; real ones stay below 12). They only order captures and weigh what
/// captures win, the table's log-odds being the evaluation, so the bound only keeps their
/// sums far from `i32` overflow: ±128 × 10,000 centipawns of material, a capture's gain
/// times 64 in move ordering below 10^8.
pub const MAX_LEARNT_PIECE_VALUE: f32 = 100.0;

/// The most one legal move of mobility difference may be worth, in Pawns (either sign). The
/// difference is at most ±[`MAX_MOVES`] (1,024), so mobility stays within ±102,400
/// centipawns: with material, ±358,400, well inside [`MAX_EVALUATION`].
pub const MAX_MOBILITY_PAWNS: f32 = 1.0;

/// Static evaluations are clamped to ±this many centipawns, half of [`MATE`]: above every
/// evaluation that settings within [`MAX_PIECE_VALUE`] and [`MAX_MOBILITY_PAWNS`] give
/// (±358,400), so the clamp changes none of them, and far below [`MATE_BOUND`], so that no
/// evaluation (a learnt table's or a network's included) ever reads as a mate score.
pub const MAX_EVALUATION: i32 = MATE / 2;

// The arithmetic of the bounds' doc comments.
const _: () = assert!(
    128 * (MAX_PIECE_VALUE as i32) * 100 + MAX_MOVES as i32 * (MAX_MOBILITY_PAWNS as i32) * 100
        <= MAX_EVALUATION
        && MAX_EVALUATION < MATE_BOUND - MAX_PLY as i32
);

/// Why an [`AlphaBetaConfig`] cannot be searched with.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// A piece value beyond [`MAX_PIECE_VALUE`] or negative (a learnt evaluation's beyond
    /// ±[`MAX_LEARNT_PIECE_VALUE`]), or NaN.
    #[error("piece value {}={value} must be {low} to {high} Pawns", .role.upper_char())]
    PieceValue {
        role: Role,
        value: f32,
        low: f32,
        high: f32,
    },
    /// A mobility weight beyond ±[`MAX_MOBILITY_PAWNS`], or NaN.
    #[error(
        "mobility {value} must be -{MAX_MOBILITY_PAWNS} to {MAX_MOBILITY_PAWNS} Pawns per move"
    )]
    Mobility { value: f32 },
}

/// Settings of the alpha-beta engine's evaluation (how long it searches is a [`Limits`]).
#[derive(Clone, Debug, PartialEq)]
pub struct AlphaBetaConfig {
    /// Piece values in Pawns (the King's is ignored; pieces in hand count as Ninja Pawns).
    pub piece_values: ByRole<f32>,
    /// Pawns per legal move of mobility difference.
    pub mobility_weight: f32,
    /// A learnt evaluation that replaces material plus mobility (see
    /// [`AlphaBetaConfig::learnt`]).
    pub piece_squares: Option<Arc<PieceSquareEval>>,
}

impl AlphaBetaConfig {
    /// Every piece worth one Pawn and no mobility: what the rules alone give (the default
    /// of an alpha-beta search that evaluates with a network).
    pub fn counting() -> AlphaBetaConfig {
        AlphaBetaConfig {
            piece_values: ByRole::new(|_| 1.0),
            mobility_weight: 0.0,
            piece_squares: None,
        }
    }

    /// Evaluation by a learnt piece-square table (log-odds of winning, at
    /// [`CENTIPAWNS_PER_LOG_ODDS`]); its piece values, on the same scale, order the moves
    /// and score what captures win.
    pub fn learnt(eval: Arc<PieceSquareEval>) -> AlphaBetaConfig {
        let pawns_per_log_odds = CENTIPAWNS_PER_LOG_ODDS / 100.0;
        AlphaBetaConfig {
            piece_values: eval.piece_values().map(|v| v * pawns_per_log_odds),
            mobility_weight: eval.mobility() * pawns_per_log_odds,
            piece_squares: Some(eval),
        }
    }

    /// Whether the values are within the bounds that keep every evaluation far from mate
    /// scores: pieces 0 to [`MAX_PIECE_VALUE`] Pawns, or a learnt evaluation's derived
    /// values within ±[`MAX_LEARNT_PIECE_VALUE`], and mobility within
    /// ±[`MAX_MOBILITY_PAWNS`].
    pub fn check(&self) -> Result<(), ConfigError> {
        let (low, high) = if self.piece_squares.is_some() {
            (-MAX_LEARNT_PIECE_VALUE, MAX_LEARNT_PIECE_VALUE)
        } else {
            (0.0, MAX_PIECE_VALUE)
        };
        if let Some(role) = Role::ALL
            .into_iter()
            .find(|&role| !(low..=high).contains(&self.piece_values[role]))
        {
            return Err(ConfigError::PieceValue {
                role,
                value: self.piece_values[role],
                low,
                high,
            });
        }
        if !(-MAX_MOBILITY_PAWNS..=MAX_MOBILITY_PAWNS).contains(&self.mobility_weight) {
            return Err(ConfigError::Mobility {
                value: self.mobility_weight,
            });
        }
        Ok(())
    }

    /// The settings an engine takes unless told otherwise: [`AlphaBetaConfig::counting`]
    /// with a network, the rough values and mobility without.
    pub fn defaults(with_network: bool) -> AlphaBetaConfig {
        if with_network {
            AlphaBetaConfig::counting()
        } else {
            AlphaBetaConfig::default()
        }
    }
}

impl Default for AlphaBetaConfig {
    /// The [rough values](piece_values::rough) (only a baseline's opinion: estimating the
    /// real ones is `ninjazero values`' job), 0.05 Pawns per move of mobility.
    fn default() -> AlphaBetaConfig {
        AlphaBetaConfig {
            piece_values: ByRole::new(piece_values::rough),
            mobility_weight: 0.05,
            piece_squares: None,
        }
    }
}

/// What a search found.
#[derive(Clone, Debug)]
pub struct AlphaBetaInfo {
    pub best: Move,
    /// Centipawns for the side to move; beyond ±(`MATE` - 1000) a forced mate.
    pub score: i32,
    /// The last completed iteration.
    pub depth: u32,
    pub nodes: u64,
    pub elapsed: Duration,
    /// The expected line, from the transposition table.
    pub pv: Vec<Move>,
    /// With a soft policy ([`AlphaBeta::with_soft_policy`]), the root moves near the best
    /// with their weights (summing to 1, the best first); empty without.
    pub policy: Vec<(Move, f32)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Bound {
    Exact,
    Lower,
    Upper,
}

#[derive(Clone, Copy)]
struct TtEntry {
    key: u64,
    /// Entries of earlier searches are ignored, so that every search gives the same result
    /// whatever was searched before.
    generation: u32,
    depth: i32,
    score: i32,
    bound: Bound,
    best: Option<Move>,
}

const EMPTY_ENTRY: TtEntry = TtEntry {
    key: 0,
    generation: 0,
    depth: -1,
    score: 0,
    bound: Bound::Exact,
    best: None,
};

/// The network that scores quiescence searches' first positions, with the scores of the
/// current search (centipawns for the side to move, by position hash): iterations and
/// transpositions meet the same positions again.
struct NetworkLeaves {
    evaluator: Box<dyn Evaluator + Send>,
    scores: HashMap<u64, i32>,
    outputs: Vec<Evaluation>,
}

impl NetworkLeaves {
    /// Scores every position of `positions` (with their legal moves) not scored yet, in
    /// one network call.
    fn score(&mut self, positions: &[Position], moves: &[MoveList]) {
        let requests: Vec<EvalRequest> = EvalRequest::first_occurrences(positions, moves)
            .into_iter()
            .filter(|r| !self.scores.contains_key(&r.position.hash()))
            .collect();
        if requests.is_empty() {
            return;
        }
        self.outputs
            .resize_with(requests.len(), Evaluation::default);
        self.evaluator.evaluate(&requests, &mut self.outputs);
        for (request, output) in requests.iter().zip(&self.outputs) {
            let centipawns = Score::Value(output.value()).centipawns();
            self.scores.insert(request.position.hash(), centipawns);
        }
    }
}

/// What a network does in the search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NetworkRole {
    /// Scores each quiescence search's first position (the module's doc).
    Evaluates,
    /// Chooses, by its policy, among the root moves the search (material plus mobility)
    /// proves at most `margin` Pawns below its best.
    Picks { margin: f32 },
}

/// The network that chooses among the root moves within `margin_cp` of the best.
struct RootPicker {
    evaluator: Box<dyn Evaluator + Send>,
    margin_cp: i32,
    /// The policy's prior of each root move of the current search (by the root's legal
    /// move order).
    priors: Vec<f32>,
}

impl RootPicker {
    /// Evaluates the priors of `moves`, the legal moves of `game`'s position.
    fn score_root(&mut self, game: &Game, moves: &MoveList) {
        let mut outputs = vec![Evaluation::default()];
        let position = game.position();
        let repetitions = game
            .hashes()
            .iter()
            .filter(|&&h| h == position.hash())
            .count();
        let request = EvalRequest {
            position,
            moves,
            repetitions: repetitions.max(1) as u32,
        };
        self.evaluator.evaluate(&[request], &mut outputs);
        self.priors = std::mem::take(&mut outputs[0].priors);
    }
}

/// One completed iteration at the root: the best move and its score, and with a root
/// margin ([`AlphaBeta::root_margin_cp`]) the exact score of every root move found within
/// the margin below the best so far when it was searched (the best's included; those now
/// further below are filtered where used).
struct RootIteration {
    best: Move,
    score: i32,
    near_best: Vec<(Move, i32)>,
}

/// How far below the best a soft policy reaches, in temperatures: a move further below
/// would get less than e^-4 (under 2 %) of the best's weight.
const SOFT_POLICY_SPAN: f32 = 4.0;

/// The smallest temperature of a soft policy, in Pawns: one centipawn, the scores' unit.
pub const MIN_SOFT_TEMPERATURE: f32 = 0.01;

/// The largest temperature of a soft policy, in Pawns: its span stays far from mate
/// scores.
pub const MAX_SOFT_TEMPERATURE: f32 = 5.0;

/// The engine: its settings and the tables it keeps between searches (reset each search).
pub struct AlphaBeta {
    config: AlphaBetaConfig,
    /// Evaluates with a network instead of material plus mobility.
    network: Option<NetworkLeaves>,
    /// Chooses the move with a network among those about as good as the best.
    picker: Option<RootPicker>,
    /// The temperature of the soft policy it reports, in Pawns (none without).
    soft_temperature: Option<f32>,
    /// The piece values, in centipawns.
    material: MaterialTable,
    mobility_cp: f32,
    tt: Vec<TtEntry>,
    generation: u32,
    killers: [[Option<Move>; 2]; MAX_PLY],
    history: Vec<i32>,
    /// Hashes of the game's positions up to the root, then of the current search line.
    path: Vec<u64>,
    /// Index of the root's hash in `path`.
    root_index: usize,
    /// Scepter squares per colour, as bits by [`Square::index`].
    scepter: [u128; 2],
    nodes: u64,
    deadline: Option<Instant>,
    node_limit: Option<u64>,
    /// Whether the current iteration may be cut off by the deadline, the node limit or the
    /// stop flag (not depth 1).
    may_abort: bool,
    aborted: bool,
}

/// The engine during one search, with the stop flag it polls.
struct Searching<'s> {
    engine: &'s mut AlphaBeta,
    stop: &'s AtomicBool,
}

impl Deref for Searching<'_> {
    type Target = AlphaBeta;
    fn deref(&self) -> &AlphaBeta {
        self.engine
    }
}

impl DerefMut for Searching<'_> {
    fn deref_mut(&mut self) -> &mut AlphaBeta {
        self.engine
    }
}

impl AlphaBeta {
    /// The engine with `config`, which should pass [`AlphaBetaConfig::check`] (specs do).
    /// Values beyond ±[`MAX_LEARNT_PIECE_VALUE`] and ±[`MAX_MOBILITY_PAWNS`] are clamped to
    /// them (NaN counts 0), so that no sum of them can overflow; evaluations are clamped
    /// below mate scores ([`MAX_EVALUATION`]).
    pub fn new(config: AlphaBetaConfig) -> AlphaBeta {
        let bound = |v: f32, max: f32| if v.is_nan() { 0.0 } else { v.clamp(-max, max) };
        let values = config
            .piece_values
            .map(|v| bound(v, MAX_LEARNT_PIECE_VALUE));
        AlphaBeta {
            mobility_cp: bound(config.mobility_weight, MAX_MOBILITY_PAWNS) * 100.0,
            material: MaterialTable::new(&values, 100.0),
            config,
            network: None,
            picker: None,
            soft_temperature: None,
            tt: Vec::new(),
            generation: 0,
            killers: [[None; 2]; MAX_PLY],
            history: vec![0; HISTORY_SQUARES * HISTORY_SQUARES],
            path: Vec::new(),
            root_index: 0,
            scepter: [0; 2],
            nodes: 0,
            deadline: None,
            node_limit: None,
            may_abort: false,
            aborted: false,
        }
    }

    /// The engine with a network in `role`. [`NetworkRole::Evaluates`]: the network's
    /// value is the evaluation (the module's doc); the piece values of `config` only order
    /// moves and score what captures win below a quiescence search's first position, and
    /// mobility is not counted. [`NetworkRole::Picks`]: `config` evaluates as without a
    /// network, and the network's policy chooses among the root moves within the margin.
    pub fn with_network(
        config: AlphaBetaConfig,
        evaluator: Box<dyn Evaluator + Send>,
        role: NetworkRole,
    ) -> AlphaBeta {
        let mut engine = AlphaBeta::new(config);
        match role {
            NetworkRole::Evaluates => {
                engine.network = Some(NetworkLeaves {
                    evaluator,
                    scores: HashMap::new(),
                    outputs: Vec::new(),
                })
            }
            NetworkRole::Picks { margin } => {
                engine.picker = Some(RootPicker {
                    evaluator,
                    margin_cp: (margin * 100.0).round() as i32,
                    priors: Vec::new(),
                })
            }
        }
        engine
    }

    /// The engine that also reports a soft policy over the root moves
    /// ([`AlphaBetaInfo::policy`]): every root move within 4 × `temperature` Pawns of the
    /// best, weighted by exp(−(best − score) / `temperature`), from one margin search per
    /// root move. It plays the plain search's move (exact scores are the same; only a tie
    /// between equal scores may fall the other way). `temperature` is clamped to
    /// [`MIN_SOFT_TEMPERATURE`]..=[`MAX_SOFT_TEMPERATURE`] (NaN to the least; specs refuse
    /// what lies outside).
    pub fn with_soft_policy(mut self, temperature: f32) -> AlphaBeta {
        let temperature = if temperature.is_nan() {
            MIN_SOFT_TEMPERATURE
        } else {
            temperature.clamp(MIN_SOFT_TEMPERATURE, MAX_SOFT_TEMPERATURE)
        };
        self.soft_temperature = Some(temperature);
        self
    }

    /// The soft policy's temperature in Pawns, if it reports one.
    pub fn soft_temperature(&self) -> Option<f32> {
        self.soft_temperature
    }

    pub fn config(&self) -> &AlphaBetaConfig {
        &self.config
    }

    /// How far below the best the root's margin searches reach, in centipawns: a picker's
    /// margin or a soft policy's span, the wider of the two; none without either.
    fn root_margin_cp(&self) -> Option<i32> {
        let picker = self.picker.as_ref().map(|p| p.margin_cp);
        let soft = self
            .soft_temperature
            .map(|t| (SOFT_POLICY_SPAN * t * 100.0).ceil() as i32);
        picker.max(soft)
    }

    /// The soft policy of an iteration: the moves within its span of the best, weights
    /// summing to 1, the best first (empty without a soft policy).
    fn soft_policy(&self, iteration: &RootIteration) -> Vec<(Move, f32)> {
        let Some(temperature) = self.soft_temperature.map(|t| t * 100.0) else {
            return Vec::new();
        };
        let mut weights: Vec<(Move, f32)> = iteration
            .near_best
            .iter()
            .map(|&(m, score)| (m, (iteration.score - score) as f32))
            .filter(|&(_, below)| below <= SOFT_POLICY_SPAN * temperature)
            .map(|(m, below)| (m, (-below / temperature).exp()))
            .collect();
        // The best is among them with weight 1, so the total is at least 1.
        let total: f32 = weights.iter().map(|&(_, w)| w).sum();
        for (_, w) in &mut weights {
            *w /= total;
        }
        weights.sort_by(|a, b| b.1.total_cmp(&a.1));
        weights
    }

    /// What the engine's network does, if it has one.
    pub fn network_role(&self) -> Option<NetworkRole> {
        if self.network.is_some() {
            return Some(NetworkRole::Evaluates);
        }
        self.picker.as_ref().map(|p| NetworkRole::Picks {
            margin: p.margin_cp as f32 / 100.0,
        })
    }

    /// The static evaluation of a position for its side to move, in centipawns: material on
    /// the board and in hand, plus mobility against `opponent_moves` (the opponent's legal
    /// move count one ply earlier).
    /// With a learnt evaluation, its log-odds in centipawns. Clamped to ±[`MAX_EVALUATION`],
    /// which bounded settings never reach, so that no evaluation reads as a mate.
    pub fn evaluate(&self, position: &Position, our_moves: usize, opponent_moves: usize) -> i32 {
        let mobility = our_moves as i32 - opponent_moves as i32;
        let limit = MAX_EVALUATION as f32;
        match &self.config.piece_squares {
            Some(eval) => {
                // `as` maps NaN to 0.
                (CENTIPAWNS_PER_LOG_ODDS * eval.log_odds(position, mobility))
                    .clamp(-limit, limit)
                    .round() as i32
            }
            None => {
                let mobility = (self.mobility_cp * mobility as f32).clamp(-limit, limit);
                (i64::from(self.material.balance(position)) + mobility.round() as i64)
                    .clamp(-i64::from(MAX_EVALUATION), i64::from(MAX_EVALUATION))
                    as i32
            }
        }
    }

    /// Searches the game's current position by iterative deepening until a limit is
    /// reached: `limits.depth` (at most [`MAX_DEPTH`]), `limits.time` or `limits.nodes`
    /// (checked inside the search too; the last completed iteration's move is played), or
    /// `stop` is set. Depth 1 is always completed. `report` is called after every completed
    /// iteration (and at the end if an iteration was cut off). Panics if the game is over
    /// (no legal move).
    pub fn search(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&AlphaBetaInfo),
    ) -> AlphaBetaInfo {
        let started = Instant::now();
        let root = game.position().clone();
        let root_moves = root.legal_moves();
        assert!(
            !root_moves.is_empty(),
            "alpha-beta asked to move in a finished game"
        );
        self.prepare(game, started, limits);
        if let Some(picker) = &mut self.picker {
            picker.score_root(game, &root_moves);
        }

        let mut best = root_moves[0];
        let mut score = 0;
        let mut chosen = (best, score);
        let mut policy = Vec::new();
        let mut depth_done = 0;
        let max_depth = limits.depth.unwrap_or(MAX_DEPTH).clamp(1, MAX_DEPTH);
        let mut searching = Searching { engine: self, stop };
        let info = |engine: &AlphaBeta, (best, score), depth_done: u32, policy: &[(Move, f32)]| {
            AlphaBetaInfo {
                best,
                score,
                depth: depth_done,
                nodes: engine.nodes,
                elapsed: started.elapsed(),
                pv: engine.principal_variation(&root, best, depth_done as usize),
                policy: policy.to_vec(),
            }
        };
        for depth in 1..=max_depth {
            searching.may_abort = depth > 1;
            let iteration = searching.search_root(&root, &root_moves, depth, best);
            if searching.aborted {
                break;
            }
            best = iteration.best;
            score = iteration.score;
            chosen = searching.choose(&iteration, &root_moves);
            policy = searching.soft_policy(&iteration);
            depth_done = depth;
            report(&info(&searching, chosen, depth_done, &policy));
            if score.abs() > MATE_BOUND {
                break; // the shortest mate within this depth is found
            }
            if searching.deadline.is_some_and(|d| Instant::now() >= d)
                || searching.node_limit.is_some_and(|n| searching.nodes >= n)
                || stop.load(Ordering::Relaxed)
            {
                break;
            }
        }
        let result = info(&searching, chosen, depth_done, &policy);
        if searching.aborted {
            report(&result);
        }
        result
    }

    /// The move to play after `iteration` and its score: the search's
    /// best, or with a picker the move its network prefers among those within the margin
    /// (`root_moves` in the order of its priors). A mate found or feared is the search's
    /// to play.
    fn choose(&self, iteration: &RootIteration, root_moves: &MoveList) -> (Move, i32) {
        let searched = (iteration.best, iteration.score);
        let Some(picker) = &self.picker else {
            return searched;
        };
        if iteration.score.abs() > MATE_BOUND {
            return searched;
        }
        let prior = |m: Move| {
            root_moves
                .iter()
                .position(|&r| r == m)
                .map_or(0.0, |i| picker.priors[i])
        };
        iteration
            .near_best
            .iter()
            .filter(|&&(_, score)| score >= iteration.score - picker.margin_cp)
            .max_by(|a, b| prior(a.0).total_cmp(&prior(b.0)))
            .copied()
            .unwrap_or(searched)
    }

    fn prepare(&mut self, game: &Game, started: Instant, limits: &Limits) {
        if self.tt.is_empty() {
            self.tt = vec![EMPTY_ENTRY; TT_SIZE];
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.tt.fill(EMPTY_ENTRY);
            self.generation = 1;
        }
        self.killers = [[None; 2]; MAX_PLY];
        self.history.fill(0);
        self.path.clear();
        self.path.extend_from_slice(game.hashes());
        self.root_index = self.path.len() - 1;
        let rules = game.position().rules();
        for color in Color::ALL {
            self.scepter[color.index()] = rules
                .scepter_squares(color)
                .iter()
                .fold(0u128, |bits, s| bits | 1 << s.index());
        }
        if let Some(network) = &mut self.network {
            network.scores.clear();
        }
        self.nodes = 0;
        self.aborted = false;
        // A time beyond what an Instant can hold is no deadline.
        self.deadline = limits.time.and_then(|t| started.checked_add(t));
        self.node_limit = limits.nodes;
    }
}

impl Searching<'_> {
    /// One iteration at the root. With a root margin ([`AlphaBeta::root_margin_cp`]), each
    /// move after the first is searched with a window from the margin below the best so far
    /// to just above it: a move that fails low there is out of the picker's choice and the
    /// soft policy, one inside the window gets its exact score, one above it a full-window
    /// search as the new best.
    fn search_root(
        &mut self,
        root: &Position,
        moves: &MoveList,
        depth: u32,
        previous_best: Move,
    ) -> RootIteration {
        let ordered = self.order_moves(root, moves, Some(previous_best), 0);
        if depth == 1 {
            self.score_children(root, &ordered);
        }
        let margin = self.root_margin_cp();
        let (mut alpha, beta) = (-INFINITY, INFINITY);
        let mut best = ordered[0];
        let mut near_best = Vec::new();
        for (i, &m) in ordered.iter().enumerate() {
            let mut child = root.clone();
            child.play_unchecked(m);
            let score = match margin.filter(|_| i > 0) {
                Some(margin) => {
                    let floor = alpha - margin;
                    let score =
                        -self.negamax(&child, depth - 1, -alpha - 1, -floor + 1, 1, moves.len());
                    if self.aborted {
                        break;
                    }
                    if score < floor {
                        continue;
                    }
                    if score > alpha {
                        -self.negamax(&child, depth - 1, -beta, -alpha, 1, moves.len())
                    } else {
                        score
                    }
                }
                None => self.search_child(&child, depth - 1, alpha, beta, 1, moves.len(), i == 0),
            };
            if self.aborted {
                break;
            }
            if score > alpha {
                alpha = score;
                best = m;
            }
            if margin.is_some() {
                near_best.push((m, score));
            }
        }
        self.store(
            root.hash(),
            depth as i32,
            alpha,
            Bound::Exact,
            Some(best),
            0,
        );
        RootIteration {
            best,
            score: alpha,
            near_best,
        }
    }

    /// Principal variation search of a child: a null window first unless it is the first.
    #[allow(clippy::too_many_arguments)]
    fn search_child(
        &mut self,
        child: &Position,
        depth: u32,
        alpha: i32,
        beta: i32,
        ply: usize,
        parent_moves: usize,
        first: bool,
    ) -> i32 {
        if first {
            return -self.negamax(child, depth, -beta, -alpha, ply, parent_moves);
        }
        let score = -self.negamax(child, depth, -alpha - 1, -alpha, ply, parent_moves);
        if score > alpha && score < beta && !self.aborted {
            -self.negamax(child, depth, -beta, -alpha, ply, parent_moves)
        } else {
            score
        }
    }

    fn negamax(
        &mut self,
        position: &Position,
        depth: u32,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        parent_moves: usize,
    ) -> i32 {
        if self.tick() {
            return 0;
        }
        let hash = position.hash();
        if self.is_repetition(hash) {
            return 0;
        }
        let moves = position.legal_moves();
        if let Some(score) = self.end_score(position, &moves, ply) {
            return score;
        }
        if position.halfmove_clock() >= 100 {
            return 0;
        }
        if depth == 0 || ply >= MAX_PLY - 1 {
            return self.quiesce(position, &moves, alpha, beta, ply, parent_moves, 0, None);
        }

        let entry = self.probe(hash);
        if let Some(e) = entry.filter(|e| e.depth >= depth as i32) {
            let score = from_tt(e.score, ply);
            let usable = match e.bound {
                Bound::Exact => true,
                Bound::Lower => score >= beta,
                Bound::Upper => score <= alpha,
            };
            if usable {
                return score;
            }
        }
        let hash_move = entry.and_then(|e| e.best);

        let original_alpha = alpha;
        let ordered = self.order_moves(position, &moves, hash_move, ply);
        let mut best_score = -INFINITY;
        let mut best_move = None;
        self.path.push(hash);
        let mut scored = 0;
        for (i, &m) in ordered.iter().enumerate() {
            if depth == 1 && i == scored {
                // A cut node often needs only its first children: batches that double.
                scored = (2 * scored).max(FIRST_HORIZON_BATCH).min(ordered.len());
                self.score_children(position, &ordered[i..scored]);
            }
            let mut child = position.clone();
            child.play_unchecked(m);
            let score =
                self.search_child(&child, depth - 1, alpha, beta, ply + 1, moves.len(), i == 0);
            if self.aborted {
                self.path.pop();
                return 0;
            }
            if score > best_score {
                best_score = score;
                best_move = Some(m);
            }
            if score > alpha {
                alpha = score;
            }
            if alpha >= beta {
                if self.material.capture_gain(position, m) == 0 {
                    self.record_quiet_cutoff(m, depth, ply);
                }
                break;
            }
        }
        self.path.pop();
        let bound = if best_score >= beta {
            Bound::Lower
        } else if best_score > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.store(hash, depth as i32, best_score, bound, best_move, ply);
        best_score
    }

    /// With a network, scores the children of `position` (one ply above the horizon) by
    /// `moves` in one batch, before the search visits them one by one.
    fn score_children(&mut self, position: &Position, moves: &[Move]) {
        let Some(network) = &mut self.engine.network else {
            return;
        };
        let children: Vec<Position> = moves
            .iter()
            .map(|&m| {
                let mut child = position.clone();
                child.play_unchecked(m);
                child
            })
            .filter(|child| !network.scores.contains_key(&child.hash()))
            .collect();
        let child_moves: Vec<MoveList> = children.iter().map(Position::legal_moves).collect();
        let (positions, moves): (Vec<Position>, Vec<MoveList>) = children
            .into_iter()
            .zip(child_moves)
            .filter(|(_, moves)| !moves.is_empty())
            .unzip();
        network.score(&positions, &moves);
    }

    /// The static evaluation for the side to move: material plus mobility, or with a
    /// network, material plus `network_offset` (the network's score of the quiescence
    /// search's first position less its material, for this side), computed here at that
    /// first position (`None`).
    fn static_evaluation(
        &mut self,
        position: &Position,
        moves: &MoveList,
        parent_moves: usize,
        network_offset: Option<i32>,
    ) -> (i32, Option<i32>) {
        let balance = self.material.balance(position);
        let Some(network) = &mut self.engine.network else {
            return (self.evaluate(position, moves.len(), parent_moves), None);
        };
        let offset = network_offset.unwrap_or_else(|| {
            network.score(std::slice::from_ref(position), std::slice::from_ref(moves));
            network.scores[&position.hash()] - balance
        });
        let evaluation = balance.saturating_add(offset);
        (
            evaluation.clamp(-MAX_EVALUATION, MAX_EVALUATION),
            Some(offset),
        )
    }

    /// Captures only, standing pat on the static evaluation; `moves` are the legal moves of
    /// `position` (not empty).
    #[allow(clippy::too_many_arguments)]
    fn quiesce(
        &mut self,
        position: &Position,
        moves: &MoveList,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        parent_moves: usize,
        qdepth: u32,
        network_offset: Option<i32>,
    ) -> i32 {
        let (stand_pat, network_offset) =
            self.static_evaluation(position, moves, parent_moves, network_offset);
        if stand_pat >= beta || qdepth >= QUIESCENCE_PLIES || ply >= MAX_PLY - 1 {
            return stand_pat;
        }
        alpha = alpha.max(stand_pat);
        let mut captures: Vec<(i32, Move)> = moves
            .iter()
            .filter_map(|&m| {
                let gain = self.material.capture_gain(position, m);
                (gain > 0).then(|| {
                    (
                        gain * 64 - self.material.attacker_value(position, m) / 16,
                        m,
                    )
                })
            })
            .collect();
        captures.sort_by_key(|&(key, _)| std::cmp::Reverse(key));
        let mut best = stand_pat;
        for (_, m) in captures {
            let mut child = position.clone();
            child.play_unchecked(m);
            let score = -self.quiesce_node(
                &child,
                -beta,
                -alpha,
                ply + 1,
                moves.len(),
                qdepth + 1,
                network_offset.map(|o| -o),
            );
            if self.aborted {
                return 0;
            }
            if score > best {
                best = score;
            }
            if score > alpha {
                alpha = score;
            }
            if alpha >= beta {
                break;
            }
        }
        best
    }

    #[allow(clippy::too_many_arguments)]
    fn quiesce_node(
        &mut self,
        position: &Position,
        alpha: i32,
        beta: i32,
        ply: usize,
        parent_moves: usize,
        qdepth: u32,
        network_offset: Option<i32>,
    ) -> i32 {
        if self.tick() {
            return 0;
        }
        let moves = position.legal_moves();
        if let Some(score) = self.end_score(position, &moves, ply) {
            return score;
        }
        self.quiesce(
            position,
            &moves,
            alpha,
            beta,
            ply,
            parent_moves,
            qdepth,
            network_offset,
        )
    }

    /// Counts a node; true when the search must stop (node limit, out of time, stopped).
    #[inline]
    fn tick(&mut self) -> bool {
        self.nodes += 1;
        if self.may_abort {
            if self.node_limit.is_some_and(|n| self.nodes >= n) {
                self.aborted = true;
            }
            // A network evaluation takes far longer than 1024 plain nodes.
            if (self.nodes % 1024 == 0 || self.network.is_some())
                && (self.stop.load(Ordering::Relaxed)
                    || self.deadline.is_some_and(|d| Instant::now() >= d))
            {
                self.aborted = true;
            }
        }
        self.aborted
    }
}

impl AlphaBeta {
    /// A repetition inside the search (of the root or a position after it) is scored a draw
    /// at once; a position of the game before the root only on its third occurrence.
    fn is_repetition(&self, hash: u64) -> bool {
        let (before, after) = self.path.split_at(self.root_index);
        after.contains(&hash) || before.iter().filter(|&&h| h == hash).count() >= 2
    }

    /// The score of a position where the game is over by scepter, mate or stalemate.
    fn end_score(&self, position: &Position, moves: &MoveList, ply: usize) -> Option<i32> {
        if let Some(score) = self.scepter_score(position, ply) {
            return Some(score);
        }
        moves.is_empty().then(|| {
            if position.is_check() {
                -(MATE - ply as i32)
            } else {
                0
            }
        })
    }

    fn scepter_score(&self, position: &Position, ply: usize) -> Option<i32> {
        if self.scepter == [0; 2] {
            return None;
        }
        let winner = Color::ALL
            .into_iter()
            .find(|&c| self.scepter[c.index()] & (1u128 << position.king(c).index()) != 0)?;
        let mate = MATE - ply as i32;
        Some(if winner == position.turn() {
            mate
        } else {
            -mate
        })
    }

    /// The moves in search order: hash move, winning material by MVV-LVA, killers, then
    /// quiet moves by history (stable, so ties keep move generation order).
    fn order_moves(
        &self,
        position: &Position,
        moves: &MoveList,
        hash_move: Option<Move>,
        ply: usize,
    ) -> Vec<Move> {
        let killers = self.killers[ply.min(MAX_PLY - 1)];
        let mut keyed: Vec<(i64, Move)> = moves
            .iter()
            .map(|&m| {
                let key = if Some(m) == hash_move {
                    1 << 50
                } else {
                    let gain = self.material.capture_gain(position, m);
                    if gain > 0 {
                        (1i64 << 40) + gain as i64 * 1024
                            - self.material.attacker_value(position, m) as i64
                    } else if killers[0] == Some(m) {
                        (1 << 35) + 1
                    } else if killers[1] == Some(m) {
                        1 << 35
                    } else {
                        self.history[history_index(m)] as i64
                    }
                };
                (key, m)
            })
            .collect();
        keyed.sort_by_key(|&(key, _)| std::cmp::Reverse(key));
        keyed.into_iter().map(|(_, m)| m).collect()
    }

    fn record_quiet_cutoff(&mut self, m: Move, depth: u32, ply: usize) {
        let slot = &mut self.killers[ply.min(MAX_PLY - 1)];
        if slot[0] != Some(m) {
            slot[1] = slot[0];
            slot[0] = Some(m);
        }
        let h = &mut self.history[history_index(m)];
        *h = (*h + (depth * depth) as i32).min(1 << 30);
    }

    fn probe(&self, hash: u64) -> Option<TtEntry> {
        let e = self.tt[hash as usize & (TT_SIZE - 1)];
        (e.key == hash && e.generation == self.generation).then_some(e)
    }

    fn store(
        &mut self,
        hash: u64,
        depth: i32,
        score: i32,
        bound: Bound,
        best: Option<Move>,
        ply: usize,
    ) {
        let generation = self.generation;
        let slot = &mut self.tt[hash as usize & (TT_SIZE - 1)];
        if slot.generation == generation && slot.key != hash && slot.depth > depth {
            return; // keep the deeper entry of another position
        }
        *slot = TtEntry {
            key: hash,
            generation,
            depth,
            score: to_tt(score, ply),
            bound,
            best,
        };
    }

    fn principal_variation(&self, root: &Position, best: Move, max_len: usize) -> Vec<Move> {
        let mut pv = vec![best];
        let mut position = root.clone();
        position.play_unchecked(best);
        while pv.len() < max_len.max(1) {
            let Some(m) = self.probe(position.hash()).and_then(|e| e.best) else {
                break;
            };
            if !position.legal_moves().contains(&m) {
                break;
            }
            position.play_unchecked(m);
            pv.push(m);
        }
        pv
    }
}

fn history_index(m: Move) -> usize {
    m.from.index() * HISTORY_SQUARES + m.to.index()
}

/// Mate scores are stored relative to the node, not the root.
fn to_tt(score: i32, ply: usize) -> i32 {
    if score > MATE_BOUND {
        score + ply as i32
    } else if score < -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

fn from_tt(score: i32, ply: usize) -> i32 {
    if score > MATE_BOUND {
        score - ply as i32
    } else if score < -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ninjazero_model::{FitSummary, PieceSquareLayout};
    use ninjazero_rules::Variant;

    /// The variant's start with the side not to move down to its King: the most material
    /// one side has over the other.
    fn lone_king(variant: Variant) -> Position {
        let start = Position::start(variant);
        let them = !start.turn();
        start
            .pieces()
            .filter(|(_, p)| p.color == them && p.role != Role::King)
            .map(|(square, _)| square)
            .collect::<Vec<_>>()
            .into_iter()
            .fold(start.clone(), |position, square| {
                position.without_piece(square).unwrap()
            })
    }

    fn config(value: f32, mobility: f32) -> AlphaBetaConfig {
        AlphaBetaConfig {
            piece_values: ByRole::new(|_| value),
            mobility_weight: mobility,
            piece_squares: None,
        }
    }

    /// A learnt evaluation's derived values may be negative, within their wider bound.
    #[test]
    fn learnt_piece_values_have_their_own_bound() {
        let layout = PieceSquareLayout::new(Variant::Chess);
        let eval = PieceSquareEval::new(
            Variant::Chess,
            vec![0.0; layout.len()],
            FitSummary::default(),
        )
        .unwrap();
        let mut config = AlphaBetaConfig::learnt(Arc::new(eval));
        config.piece_values[Role::Knight] = -MAX_LEARNT_PIECE_VALUE;
        config.piece_values[Role::Queen] = MAX_LEARNT_PIECE_VALUE;
        assert_eq!(config.check(), Ok(()));
        config.piece_values[Role::Queen] = 150.0;
        assert_eq!(
            config.check().map_err(|e| e.to_string()),
            Err("piece value Q=150 must be -100 to 100 Pawns".to_string())
        );
        config.piece_values[Role::Queen] = 9.0;
        config.mobility_weight = -2.0;
        assert_eq!(
            config.check().map_err(|e| e.to_string()),
            Err("mobility -2 must be -1 to 1 Pawns per move".to_string())
        );
    }

    /// Every piece at the most it may be worth and the largest mobility difference at the
    /// most a move may be worth give an evaluation the clamp leaves alone, far from mates.
    #[test]
    fn an_evaluation_at_the_bounds_is_no_mate_score() {
        let bounds = config(MAX_PIECE_VALUE, MAX_MOBILITY_PAWNS);
        assert_eq!(bounds.check(), Ok(()));
        let engine = AlphaBeta::new(bounds);
        for variant in Variant::ALL {
            let position = lone_king(variant);
            let material = engine.material.balance(&position);
            assert!(material > 0, "{variant}");
            for (ours, theirs) in [(MAX_MOVES, 0), (0, MAX_MOVES)] {
                let mobility = (ours as i32 - theirs as i32) * 100;
                let score = engine.evaluate(&position, ours, theirs);
                assert_eq!(score, material + mobility, "{variant}");
                assert!(score.abs() < MAX_EVALUATION, "{variant}: {score}");
            }
        }
    }

    /// Settings beyond the bounds (a config built in code, a wild learnt table) are clamped,
    /// never read as a mate: a Queen worth 1e30 Pawns leaves the side without one losing.
    #[test]
    fn evaluations_beyond_the_bounds_are_clamped_below_mate_scores() {
        for wild in [
            config(1e30, 1e30),
            config(-1e30, -1e30),
            config(f32::NAN, f32::NAN),
        ] {
            assert!(wild.check().is_err());
            let engine = AlphaBeta::new(wild);
            for variant in Variant::ALL {
                let position = lone_king(variant);
                for (ours, theirs) in [(MAX_MOVES, 0), (0, MAX_MOVES)] {
                    let score = engine.evaluate(&position, ours, theirs);
                    assert!(score.abs() <= MAX_EVALUATION, "{variant}: {score}");
                }
            }
        }
        // White a Queen down, the Queen worth 1e30 Pawns: clamped, not a mate.
        let mut values = AlphaBetaConfig::default();
        values.piece_values[Role::Queen] = 1e30;
        let mut engine = AlphaBeta::new(values);
        let game = Game::from_position(
            Position::from_fen(Variant::Chess, "3qk3/8/8/8/8/8/8/4K3 w - - 0 1").unwrap(),
        );
        let info = engine.search(
            &game,
            &Limits::depth(2),
            &AtomicBool::new(false),
            &mut |_| {},
        );
        assert!(
            (-MAX_EVALUATION..-1000).contains(&info.score),
            "{}",
            info.score
        );
    }
}
