//! Players for the arena and for showing strength: MCTS with a checkpoint or with the
//! no-model evaluator, a random mover, and the classic alpha-beta engine.

use crate::alphabeta::{AlphaBeta, AlphaBetaConfig, AlphaBetaInfo};
use crate::mcts::{SearchLimits, Searcher};
use crate::SearchConfig;
use ninjazero_model::{Evaluator, Model, NetworkEvaluator, UniformEvaluator};
use ninjazero_rules::seed::{derive_seed, SeedStream};
use ninjazero_rules::{ByRole, Game, Move, Role, Variant};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Something that picks moves.
pub trait Player: Send {
    /// A short name for reports (`alphabeta:depth=3`, `mcts:gen-0003:sims=64`).
    fn name(&self) -> String;
    /// A legal move in the game's current position (the game is not over).
    fn choose(&mut self, game: &Game) -> Move;
    /// Called before each arena game with a seed of that game, so that a player's random
    /// choices depend on the game, not on the games it happened to play before.
    fn new_game(&mut self, _seed: u64) {}
}

/// PUCT search (no noise, no temperature) with a given evaluator; plays the most visited
/// move after a fixed number of simulations.
pub struct MctsPlayer {
    evaluator: Box<dyn Evaluator + Send>,
    config: SearchConfig,
    simulations: u64,
    name: String,
}

impl MctsPlayer {
    /// With the default search settings ([`SearchConfig::default`]: c_puct, FPU).
    pub fn new(evaluator: Box<dyn Evaluator + Send>, simulations: u64, name: String) -> MctsPlayer {
        MctsPlayer {
            evaluator,
            config: SearchConfig::default(),
            simulations: simulations.max(1),
            name,
        }
    }

    /// Replaces the search settings (only c_puct and the FPU reduction matter here).
    pub fn with_config(mut self, config: SearchConfig) -> MctsPlayer {
        self.config = config;
        self
    }
}

impl Player for MctsPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn choose(&mut self, game: &Game) -> Move {
        let limits = SearchLimits {
            simulations: Some(self.simulations),
            time: None,
        };
        let stop = AtomicBool::new(false);
        let mut searcher = Searcher::new(&mut *self.evaluator, &self.config);
        searcher
            .search(game, &limits, &stop, &mut |_| {})
            .expect("MctsPlayer asked to move in a finished game")
            .best
    }
}

/// Plays a uniformly random legal move (seeded: the same seed gives the same moves).
pub struct RandomPlayer {
    seed: u64,
    rng: StdRng,
}

impl RandomPlayer {
    pub fn new(seed: u64) -> RandomPlayer {
        RandomPlayer {
            seed,
            rng: StdRng::seed_from_u64(seed),
        }
    }
}

impl Player for RandomPlayer {
    fn name(&self) -> String {
        "random".to_string()
    }

    fn choose(&mut self, game: &Game) -> Move {
        let moves = game.position().legal_moves();
        assert!(
            !moves.is_empty(),
            "RandomPlayer asked to move in a finished game"
        );
        moves[self.rng.random_range(0..moves.len())]
    }

    fn new_game(&mut self, seed: u64) {
        self.rng = StdRng::seed_from_u64(derive_seed(self.seed, SeedStream::Game, seed));
    }
}

/// The classic alpha-beta engine of [`crate::alphabeta`].
pub struct AlphaBetaPlayer {
    engine: AlphaBeta,
    last: Option<AlphaBetaInfo>,
}

impl AlphaBetaPlayer {
    pub fn new(config: AlphaBetaConfig) -> AlphaBetaPlayer {
        AlphaBetaPlayer {
            engine: AlphaBeta::new(config),
            last: None,
        }
    }

    /// Searches the game's position and returns what the search found (`choose` plays its
    /// best move).
    pub fn search(&mut self, game: &Game) -> AlphaBetaInfo {
        self.engine.search(game)
    }

    /// The last search `choose` made (depth reached, nodes, score, time).
    pub fn last_search(&self) -> Option<&AlphaBetaInfo> {
        self.last.as_ref()
    }
}

impl Player for AlphaBetaPlayer {
    fn name(&self) -> String {
        let config = self.engine.config();
        let mut name = String::from("alphabeta");
        let unbounded = config.max_depth >= UNBOUNDED_DEPTH;
        if !unbounded || config.time_per_move.is_none() {
            name += &format!(":depth={}", config.max_depth);
        }
        if let Some(time) = config.time_per_move {
            name += &format!(":ms={}", time.as_millis());
        }
        if config.piece_values != AlphaBetaConfig::default().piece_values {
            name += ":values=custom";
        }
        if config.mobility_weight != AlphaBetaConfig::default().mobility_weight {
            name += &format!(":mobility={}", config.mobility_weight);
        }
        name
    }

    fn choose(&mut self, game: &Game) -> Move {
        let info = self.engine.search(game);
        let best = info.best;
        self.last = Some(info);
        best
    }
}

/// The depth limit of a time-limited alpha-beta spec without `depth=`.
const UNBOUNDED_DEPTH: u32 = 64;
const DEFAULT_SIMULATIONS: u64 = 64;
const SPEC_HELP: &str = "expected random, uniform[:sims=N], mcts:PATH.safetensors[:sims=N] \
     or alphabeta:depth=D and/or :ms=T [:values=P=1,N=3,...] [:mobility=W]";

/// A player from a spec:
/// - `random` (seeded with `seed`);
/// - `uniform:sims=64`: MCTS with [`UniformEvaluator`] (uniform priors, material value);
/// - `mcts:PATH.safetensors:sims=64`: MCTS with a checkpoint (on `device`);
/// - `alphabeta:depth=3`, `alphabeta:ms=200` (iterative deepening until the time is spent)
///   or both, optionally with `:values=P=1,N=3,...` (piece letters, Pawns; the others keep
///   their defaults) and `:mobility=0.05` (Pawns per move).
///
/// `sims` defaults to 64.
pub fn parse_player(
    spec: &str,
    variant: Variant,
    device: tch::Device,
    seed: u64,
) -> Result<Box<dyn Player>, String> {
    let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
    let segments: Vec<&str> = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split(':').collect()
    };
    match kind {
        "random" => {
            let options = parse_options(spec, &segments, &["seed"])?;
            let seed = match options.first() {
                Some((_, v)) => parse_number::<u64>(spec, "seed", v, "a whole number")?,
                None => seed,
            };
            Ok(Box::new(RandomPlayer::new(seed)))
        }
        "uniform" => {
            let options = parse_options(spec, &segments, &["sims"])?;
            let sims = simulations(spec, &options)?;
            Ok(Box::new(MctsPlayer::new(
                Box::new(UniformEvaluator::default()),
                sims,
                format!("uniform:sims={sims}"),
            )))
        }
        "mcts" => {
            // The path may itself hold ':'; options are the trailing `key=value` segments.
            let split = segments
                .iter()
                .rposition(|s| !s.starts_with("sims="))
                .map_or(0, |i| i + 1);
            let path = segments[..split].join(":");
            if path.is_empty() {
                return Err(format!(
                    "player '{spec}': mcts needs a checkpoint path (mcts:PATH.safetensors:sims=N)"
                ));
            }
            let options = parse_options(spec, &segments[split..], &["sims"])?;
            let sims = simulations(spec, &options)?;
            let path = Path::new(&path);
            if !path.is_file() {
                return Err(format!(
                    "player '{spec}': checkpoint file '{}' does not exist",
                    path.display()
                ));
            }
            let model = Model::load(path, Some(variant), device)
                .map_err(|e| format!("player '{spec}': {e}"))?;
            let stem = path.file_stem().map_or_else(
                || path.display().to_string(),
                |s| s.to_string_lossy().into(),
            );
            Ok(Box::new(MctsPlayer::new(
                Box::new(NetworkEvaluator::new(model)),
                sims,
                format!("mcts:{stem}:sims={sims}"),
            )))
        }
        "alphabeta" => {
            let options = parse_options(spec, &segments, &["depth", "ms", "values", "mobility"])?;
            let mut config = AlphaBetaConfig::default();
            let (mut depth, mut ms) = (None, None);
            for (key, value) in options {
                match key {
                    "depth" => {
                        let d: u32 = parse_number(spec, key, value, "a whole number of plies")?;
                        if !(1..=UNBOUNDED_DEPTH).contains(&d) {
                            return Err(format!(
                                "player '{spec}': depth must be 1 to {UNBOUNDED_DEPTH} plies, got {d}"
                            ));
                        }
                        depth = Some(d);
                    }
                    "ms" => {
                        let t: u64 =
                            parse_number(spec, key, value, "a whole number of milliseconds")?;
                        if t == 0 {
                            return Err(format!("player '{spec}': ms must be positive"));
                        }
                        ms = Some(t);
                    }
                    "values" => config.piece_values = parse_values(spec, value)?,
                    _ => {
                        let w: f32 = parse_number(spec, key, value, "a number (Pawns per move)")?;
                        if !w.is_finite() {
                            return Err(format!("player '{spec}': mobility must be finite"));
                        }
                        config.mobility_weight = w;
                    }
                }
            }
            if depth.is_none() && ms.is_none() {
                return Err(format!(
                    "player '{spec}': alphabeta needs depth=D (plies) or ms=T (milliseconds per move), e.g. alphabeta:depth=3"
                ));
            }
            config.max_depth = depth.unwrap_or(UNBOUNDED_DEPTH);
            config.time_per_move = ms.map(Duration::from_millis);
            Ok(Box::new(AlphaBetaPlayer::new(config)))
        }
        _ => Err(format!(
            "player '{spec}': unknown kind '{kind}' ({SPEC_HELP})"
        )),
    }
}

/// Splits `key=value` segments, allowing only `allowed` keys, each at most once.
fn parse_options<'s>(
    spec: &str,
    segments: &[&'s str],
    allowed: &[&str],
) -> Result<Vec<(&'s str, &'s str)>, String> {
    let mut options: Vec<(&str, &str)> = Vec::new();
    for segment in segments {
        let Some((key, value)) = segment.split_once('=') else {
            return Err(format!(
                "player '{spec}': cannot read option '{segment}': expected key=value ({SPEC_HELP})"
            ));
        };
        if !allowed.contains(&key) {
            return Err(format!(
                "player '{spec}': unknown option '{key}' (this player takes: {})",
                if allowed.is_empty() {
                    "none".to_string()
                } else {
                    allowed.join(", ")
                }
            ));
        }
        if options.iter().any(|(k, _)| *k == key) {
            return Err(format!("player '{spec}': option '{key}' given twice"));
        }
        options.push((key, value));
    }
    Ok(options)
}

fn parse_number<T: std::str::FromStr>(
    spec: &str,
    key: &str,
    value: &str,
    what: &str,
) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("player '{spec}': {key} must be {what}, got '{value}'"))
}

fn simulations(spec: &str, options: &[(&str, &str)]) -> Result<u64, String> {
    match options.iter().find(|(k, _)| *k == "sims") {
        None => Ok(DEFAULT_SIMULATIONS),
        Some((_, v)) => {
            let n: u64 = parse_number(spec, "sims", v, "a positive whole number")?;
            if n == 0 {
                return Err(format!("player '{spec}': sims must be at least 1"));
            }
            Ok(n)
        }
    }
}

/// `P=1,N=3,...`: piece letters with values in Pawns; roles not named keep their defaults.
fn parse_values(spec: &str, text: &str) -> Result<ByRole<f32>, String> {
    let mut values = AlphaBetaConfig::default().piece_values;
    for item in text.split(',').filter(|s| !s.is_empty()) {
        let bad = |why: String| format!("player '{spec}': piece value '{item}': {why}");
        let Some((letter, value)) = item.split_once('=') else {
            return Err(bad("expected LETTER=VALUE, e.g. N=3".into()));
        };
        let mut chars = letter.chars();
        let role = match (chars.next(), chars.next()) {
            (Some(c), None) => Role::from_char(c),
            _ => None,
        }
        .ok_or_else(|| {
            let letters = Role::ALL.map(|r| r.upper_char().to_string()).join(" ");
            bad(format!("'{letter}' is not a piece letter ({letters})"))
        })?;
        let value: f32 = value
            .parse()
            .ok()
            .filter(|v: &f32| v.is_finite())
            .ok_or_else(|| bad(format!("'{value}' is not a number")))?;
        values[role] = value;
    }
    Ok(values)
}
