//! Engine specs: the text form of an engine that command lines, pipeline settings and result
//! files use (`random`, `uniform:sims=64`, `mcts:PATH.safetensors:sims=64`,
//! `alphabeta:depth=3`, `uci:fairy-stockfish:depth=5`), parsed once into an [`EngineSpec`] and built into an
//! [`Engine`] for a variant.
//!
//! `Display` writes the canonical text back: parsing it gives the same spec.

use crate::alphabeta::{
    AlphaBetaConfig, NetworkRole, MAX_DEPTH, MAX_MOBILITY_PAWNS, MAX_PIECE_VALUE,
    MAX_SOFT_TEMPERATURE, MIN_SOFT_TEMPERATURE,
};
use crate::engine::{AlphaBetaEngine, Engine, Limits, MctsEngine, RandomEngine};
use crate::mcts::LeafBlend;
use crate::uci_engine::{UciEngine, UciSettings, DEFAULT_TIMEOUT, MAX_TIMEOUT};
use crate::SearchConfig;
use ninjazero_data::settings::{
    MAX_FPU_REDUCTION, MAX_POLICY_TEMPERATURE, MIN_FPU_REDUCTION, MIN_POLICY_TEMPERATURE,
};
use ninjazero_model::{Model, NetworkEvaluator, PieceSquareEval, UniformEvaluator};
use ninjazero_rules::{ByRole, Role, Variant};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// Simulations per move of an MCTS spec without `sims=` or `ms=`.
pub const DEFAULT_SIMULATIONS: u64 = 64;

/// The spec forms, for error messages and help texts.
pub const SPEC_HELP: &str = "expected random, uniform[:sims=N][:ms=T][:batch=B][:captures=L][:eval=E.eval.json[:mix=M]][:cpuct=C][:fpu=R][:ptemp=T][:reuse=1], \
     mcts:PATH.safetensors[:sims=N][:ms=T][:batch=B][:captures=L][:eval=E.eval.json[:mix=M]][:cpuct=C][:fpu=R][:ptemp=T][:reuse=1], \
     alphabeta[:PATH.safetensors|:PATH.eval.json]:depth=D and/or :ms=T [:soft=T] [:values=P=1,N=3,...] [:mobility=W] [:pick=M] \
     or uci:COMMAND with depth=D, nodes=N and/or ms=T [:timeout=S] [:OPTION=VALUE...]";

/// How long an MCTS engine searches each move: simulations, milliseconds, or both
/// (whichever comes first; a parsed spec has at least one), how many leaves it
/// evaluates per network call (`batch=`, default 1), whether its leaves resolve
/// captures (`captures=L`: [`SearchConfig::capture_logit`], default 0), whether a
/// learnt evaluation is mixed into their values (`eval=E.eval.json:mix=M`: [`LeafBlend`]),
/// its exploration constant (`cpuct=C`: [`SearchConfig::c_puct`]), its first-play urgency
/// (`fpu=R`: [`SearchConfig::fpu_reduction`]), its policy temperature (`ptemp=T`:
/// [`SearchConfig::policy_temperature`]), and whether each
/// search starts from the subtree of the engine's last one (`reuse=1`:
/// [`MctsEngine::with_tree_reuse`], default off).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MctsBudget {
    pub sims: Option<u64>,
    pub ms: Option<u64>,
    pub batch: Option<usize>,
    pub capture_logit: Option<f32>,
    pub blend: Option<BlendSpec>,
    pub c_puct: Option<f32>,
    pub fpu_reduction: Option<f32>,
    pub policy_temperature: Option<f32>,
    pub reuse: bool,
}

/// A learnt evaluation's file mixed into an MCTS engine's leaf values at `mix` ([`LeafBlend`]).
#[derive(Clone, Debug, PartialEq)]
pub struct BlendSpec {
    pub path: PathBuf,
    pub mix: f32,
}

/// The share of a leaf's log-odds a learnt evaluation gets without `mix=`: AlphaGo's
/// even mix of its value network and its rollouts.
pub const DEFAULT_BLEND_MIX: f32 = 0.5;

impl MctsBudget {
    /// `sims` simulations per move.
    pub fn simulations(sims: u64) -> MctsBudget {
        MctsBudget {
            sims: Some(sims),
            ..MctsBudget::default()
        }
    }

    pub fn limits(&self) -> Limits {
        Limits {
            simulations: self.sims,
            time: self.ms.map(Duration::from_millis),
            ..Limits::default()
        }
    }

    /// The engine's search settings: the defaults with the spec's capture logit,
    /// exploration constant, first-play urgency and policy temperature.
    pub fn search_config(&self) -> SearchConfig {
        let defaults = SearchConfig::default();
        SearchConfig {
            capture_logit: self.capture_logit.unwrap_or(0.0),
            c_puct: self.c_puct.unwrap_or(defaults.c_puct),
            fpu_reduction: self.fpu_reduction.unwrap_or(defaults.fpu_reduction),
            policy_temperature: self
                .policy_temperature
                .unwrap_or(defaults.policy_temperature),
            ..defaults
        }
    }
}

impl fmt::Display for MctsBudget {
    /// `:sims=N`, `:ms=T` or both, then `:batch=B`, `:captures=L`, `:eval=E:mix=M`,
    /// `:cpuct=C`, `:fpu=R`, `:ptemp=T` and `:reuse=1` if given.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(sims) = self.sims {
            write!(f, ":sims={sims}")?;
        }
        if let Some(ms) = self.ms {
            write!(f, ":ms={ms}")?;
        }
        if let Some(batch) = self.batch {
            write!(f, ":batch={batch}")?;
        }
        if let Some(logit) = self.capture_logit {
            write!(f, ":captures={logit}")?;
        }
        if let Some(blend) = &self.blend {
            write!(f, ":eval={}:mix={}", blend.path.display(), blend.mix)?;
        }
        if let Some(c_puct) = self.c_puct {
            write!(f, ":cpuct={c_puct}")?;
        }
        if let Some(reduction) = self.fpu_reduction {
            write!(f, ":fpu={reduction}")?;
        }
        if let Some(temperature) = self.policy_temperature {
            write!(f, ":ptemp={temperature}")?;
        }
        if self.reuse {
            write!(f, ":reuse=1")?;
        }
        Ok(())
    }
}

/// An engine as a spec names it.
#[derive(Clone, Debug, PartialEq)]
pub enum EngineSpec {
    /// `random[:seed=N]`: a uniformly random legal move; without a seed, the one
    /// [`EngineSpec::build`] is given.
    Random { seed: Option<u64> },
    /// `uniform[:sims=N][:ms=T][:batch=B][:captures=L][:eval=E.eval.json[:mix=M]]`: MCTS
    /// with [`UniformEvaluator`] (uniform priors, material value).
    Uniform(MctsBudget),
    /// `mcts:PATH.safetensors[:sims=N][:ms=T][:batch=B][:captures=L][:eval=E.eval.json[:mix=M]]`:
    /// MCTS with a checkpoint, `B` leaves per network call (virtual loss; more positions
    /// per second, a little less exact per simulation), leaves resolving captures at `L`
    /// log-odds per piece won, and the learnt evaluation `E` mixed into the leaves' values
    /// at `M` (0 to 1, default [`DEFAULT_BLEND_MIX`]; [`LeafBlend`]).
    Mcts {
        checkpoint: PathBuf,
        budget: MctsBudget,
    },
    /// `alphabeta:depth=D`, `alphabeta:ms=T` (iterative deepening until the time is spent)
    /// or both, optionally with `:values=P=1,N=3,...` (piece letters, Pawns, 0 to
    /// [`MAX_PIECE_VALUE`]; the others keep their defaults) and `:mobility=0.05` (Pawns per
    /// move, within ±[`MAX_MOBILITY_PAWNS`]).
    /// `alphabeta:PATH.safetensors:...` evaluates with that checkpoint's network
    /// ([`crate::NetworkRole::Evaluates`]); its pieces are then each worth 1 unless
    /// `values=` says otherwise, and it takes no `mobility=`. With `:pick=M` the network
    /// instead chooses among the root moves at most M Pawns below the search's best
    /// ([`crate::NetworkRole::Picks`]); the search evaluates as without a network.
    /// `alphabeta:PATH.eval.json:...` evaluates with that learnt piece-square evaluation
    /// ([`AlphaBetaConfig::learnt`]; `ninjazero fit-eval` writes it), which takes only the
    /// limits and `soft=`. Any of them with `:soft=T` (Pawns, [`MIN_SOFT_TEMPERATURE`] to
    /// [`MAX_SOFT_TEMPERATURE`]) also proposes a soft policy over the root moves as the
    /// training target of the games it plays ([`AlphaBeta::with_soft_policy`](crate::AlphaBeta::with_soft_policy)).
    AlphaBeta {
        depth: Option<u32>,
        ms: Option<u64>,
        config: AlphaBetaConfig,
        network: Option<PathBuf>,
        pick: Option<f32>,
        piece_squares: Option<PathBuf>,
        soft: Option<f32>,
    },
    /// `uci:COMMAND[:depth=D][:nodes=N][:ms=T][:timeout=S][:OPTION=VALUE...]`: an external
    /// UCI engine (see [`crate::uci_engine`]) searching with `go depth D nodes N movetime T`
    /// (at least one limit), counted as hung `S` seconds (default 10, at most a day:
    /// [`MAX_TIMEOUT`]) after its move time;
    /// every other `OPTION=VALUE` is sent as `setoption name OPTION value VALUE`, in the
    /// order given (option names may hold spaces, `Skill Level=3`; values no ':').
    Uci {
        command: String,
        depth: Option<u32>,
        nodes: Option<u64>,
        ms: Option<u64>,
        timeout: Option<u64>,
        options: Vec<(String, String)>,
    },
}

/// Why a spec cannot be read or built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// The text is no valid spec.
    #[error("player '{spec}': {problem}")]
    Invalid { spec: String, problem: String },
    /// The spec's checkpoint or learnt evaluation (`what`) is not there.
    #[error("player '{spec}': {what} file '{shown}' does not exist", shown = .path.display())]
    MissingFile {
        spec: String,
        what: &'static str,
        path: PathBuf,
    },
    /// The checkpoint cannot be loaded (for the variant, on the device).
    #[error("player '{spec}': {message}")]
    Checkpoint { spec: String, message: String },
    /// An external engine cannot be started or set up.
    #[error("player '{spec}': {message}")]
    Engine { spec: String, message: String },
}

/// A file's name without `suffix` (`gen-0001` of `runs/x/gen-0001.safetensors`), the name
/// a player shows for its network or evaluation.
fn short_name(path: &Path, suffix: &str) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |name| {
            let name = name.to_string_lossy();
            name.strip_suffix(suffix).unwrap_or(&name).to_string()
        },
    )
}

fn invalid(spec: &str, problem: String) -> SpecError {
    SpecError::Invalid {
        spec: spec.to_string(),
        problem,
    }
}

impl EngineSpec {
    /// MCTS with the checkpoint at `path`, `sims` simulations per move.
    pub fn mcts(path: impl Into<PathBuf>, sims: u64) -> EngineSpec {
        EngineSpec::Mcts {
            checkpoint: path.into(),
            budget: MctsBudget::simulations(sims),
        }
    }

    /// Alpha-beta to `depth` plies with the default evaluation.
    pub fn alphabeta(depth: u32) -> EngineSpec {
        EngineSpec::AlphaBeta {
            depth: Some(depth),
            ms: None,
            config: AlphaBetaConfig::default(),
            network: None,
            pick: None,
            piece_squares: None,
            soft: None,
        }
    }

    /// Alpha-beta to `depth` plies with every piece worth one Pawn (and the default
    /// mobility): the player the rules alone give.
    pub fn alphabeta_counting(depth: u32) -> EngineSpec {
        EngineSpec::AlphaBeta {
            depth: Some(depth),
            ms: None,
            config: AlphaBetaConfig {
                // The King's value is never counted; 0 as `values=` leaves it.
                piece_values: ByRole::new(|role| if role == Role::King { 0.0 } else { 1.0 }),
                ..AlphaBetaConfig::default()
            },
            network: None,
            pick: None,
            piece_squares: None,
            soft: None,
        }
    }

    /// This alpha-beta player searching with the learnt evaluation at `path` instead of its
    /// own (its limits and soft policy kept); `None` for any other player, or alpha-beta
    /// with a network.
    pub fn with_evaluation(&self, path: impl Into<PathBuf>) -> Option<EngineSpec> {
        match self {
            EngineSpec::AlphaBeta {
                depth,
                ms,
                network: None,
                soft,
                ..
            } => Some(EngineSpec::AlphaBeta {
                depth: *depth,
                ms: *ms,
                config: AlphaBetaConfig::default(),
                network: None,
                pick: None,
                piece_squares: Some(path.into()),
                soft: *soft,
            }),
            _ => None,
        }
    }

    /// The engine for `variant`: a checkpoint is loaded on `device`; `seed` seeds a random
    /// mover without its own seed and the random stream of an MCTS engine.
    pub fn build(
        &self,
        variant: Variant,
        device: tch::Device,
        seed: u64,
    ) -> Result<Box<dyn Engine>, SpecError> {
        Ok(match self {
            EngineSpec::Random { seed: own } => Box::new(RandomEngine::new(own.unwrap_or(seed))),
            EngineSpec::Uniform(budget) => Box::new(
                MctsEngine::new(
                    Box::new(UniformEvaluator::default()),
                    budget.limits(),
                    format!("uniform{budget}"),
                )
                .with_seed(seed)
                .with_batch(budget.batch.unwrap_or(1))
                .with_tree_reuse(budget.reuse)
                .with_config(budget.search_config())
                .with_blend(self.leaf_blend(budget, variant)?),
            ),
            EngineSpec::Mcts { checkpoint, budget } => {
                let (model, stem) = self.load_network(checkpoint, variant, device)?;
                Box::new(
                    MctsEngine::new(
                        Box::new(NetworkEvaluator::new(model)),
                        budget.limits(),
                        format!("mcts:{stem}{budget}"),
                    )
                    .with_seed(seed)
                    .with_batch(budget.batch.unwrap_or(1))
                    .with_tree_reuse(budget.reuse)
                    .with_config(budget.search_config())
                    .with_blend(self.leaf_blend(budget, variant)?),
                )
            }
            EngineSpec::AlphaBeta {
                depth,
                ms,
                config,
                network,
                pick,
                piece_squares,
                soft,
            } => {
                let limits = Limits {
                    depth: *depth,
                    time: ms.map(Duration::from_millis),
                    ..Limits::default()
                };
                let engine = match (piece_squares, network) {
                    (Some(path), _) => {
                        let eval = self.load_piece_squares(path, variant)?;
                        let config = AlphaBetaConfig::learnt(Arc::new(eval));
                        // The file's weights are finite but not bounded.
                        config.check().map_err(|e| SpecError::Checkpoint {
                            spec: self.to_string(),
                            message: format!("evaluation '{}': {e}", path.display()),
                        })?;
                        AlphaBetaEngine::new(config, limits)
                            .named_after(short_name(path, PIECE_SQUARE_SUFFIX))
                    }
                    (None, network) => {
                        // Parsed specs are checked already; one built in code (`ninjazero
                        // values`' measured values) is checked here.
                        config
                            .check()
                            .map_err(|e| invalid(&self.to_string(), e.to_string()))?;
                        match network {
                            None => AlphaBetaEngine::new(config.clone(), limits),
                            Some(checkpoint) => {
                                let (model, stem) =
                                    self.load_network(checkpoint, variant, device)?;
                                let evaluator = Box::new(NetworkEvaluator::new(model));
                                let role = match *pick {
                                    Some(margin) => NetworkRole::Picks { margin },
                                    None => NetworkRole::Evaluates,
                                };
                                AlphaBetaEngine::with_network(
                                    config.clone(),
                                    evaluator,
                                    role,
                                    stem,
                                    limits,
                                )
                            }
                        }
                    }
                };
                Box::new(match soft {
                    Some(temperature) => engine.with_soft_policy(*temperature),
                    None => engine,
                })
            }
            EngineSpec::Uci { .. } => Box::new(self.build_uci(variant)?),
        })
    }

    /// Loads a spec's checkpoint for `variant` on `device`, with the file's stem as the
    /// network's name.
    fn load_network(
        &self,
        checkpoint: &Path,
        variant: Variant,
        device: tch::Device,
    ) -> Result<(Model, String), SpecError> {
        self.require_file(checkpoint, "checkpoint")?;
        let model =
            Model::load(checkpoint, Some(variant), device).map_err(|e| SpecError::Checkpoint {
                spec: self.to_string(),
                message: e.to_string(),
            })?;
        Ok((model, short_name(checkpoint, CHECKPOINT_SUFFIX)))
    }

    /// A missing file is refused before anything is read, naming the spec.
    fn require_file(&self, path: &Path, what: &'static str) -> Result<(), SpecError> {
        if path.is_file() {
            return Ok(());
        }
        Err(SpecError::MissingFile {
            spec: self.to_string(),
            what,
            path: path.to_path_buf(),
        })
    }

    /// Loads a spec's learnt evaluation for `variant`.
    /// The learnt evaluation an MCTS spec mixes into its leaves, loaded for `variant`.
    fn leaf_blend(
        &self,
        budget: &MctsBudget,
        variant: Variant,
    ) -> Result<Option<LeafBlend>, SpecError> {
        let Some(blend) = &budget.blend else {
            return Ok(None);
        };
        let eval = self.load_piece_squares(&blend.path, variant)?;
        Ok(Some(LeafBlend::new(Arc::new(eval), blend.mix)))
    }

    fn load_piece_squares(
        &self,
        path: &Path,
        variant: Variant,
    ) -> Result<PieceSquareEval, SpecError> {
        self.require_file(path, "evaluation")?;
        PieceSquareEval::load(path, Some(variant)).map_err(|e| SpecError::Checkpoint {
            spec: self.to_string(),
            message: e.to_string(),
        })
    }

    /// Starts a `uci:` spec's engine (a missing program is reported here, not mid-game).
    fn build_uci(&self, variant: Variant) -> Result<UciEngine, SpecError> {
        let EngineSpec::Uci {
            command,
            depth,
            nodes,
            ms,
            timeout,
            options,
        } = self
        else {
            unreachable!("build_uci is called for uci specs only")
        };
        let settings = UciSettings {
            command: command.clone(),
            options: options.clone(),
            limits: Limits {
                depth: *depth,
                nodes: *nodes,
                time: ms.map(Duration::from_millis),
                ..Limits::default()
            },
            timeout: timeout.map_or(DEFAULT_TIMEOUT, Duration::from_secs),
        };
        UciEngine::start(self.to_string(), settings, variant).map_err(|message| SpecError::Engine {
            spec: self.to_string(),
            message,
        })
    }

    /// A factory of this spec's engine (for the arena's worker threads), with build errors
    /// as text.
    pub fn factory(
        &self,
        variant: Variant,
        device: tch::Device,
        seed: u64,
    ) -> impl Fn() -> Result<Box<dyn Engine>, String> + Sync + '_ {
        move || self.build(variant, device, seed).map_err(|e| e.to_string())
    }
}

impl FromStr for EngineSpec {
    type Err = SpecError;

    fn from_str(spec: &str) -> Result<EngineSpec, SpecError> {
        let (kind, segments): (&str, Vec<&str>) = match spec.split_once(':') {
            Some((kind, rest)) => (kind, fields(rest)),
            None => (spec, Vec::new()),
        };
        // An empty path would otherwise read as no path ("alphabeta::depth=2" as material).
        if segments.iter().any(|segment| segment.is_empty()) {
            return Err(invalid(
                spec,
                "an empty field (two ':' in a row, or one at the end)".into(),
            ));
        }
        match kind {
            "random" => {
                let options = parse_options(spec, &segments, &["seed"])?;
                let seed = match options.first() {
                    Some((_, v)) => Some(parse_number::<u64>(spec, "seed", v, "a whole number")?),
                    None => None,
                };
                Ok(EngineSpec::Random { seed })
            }
            "uniform" => {
                let options = parse_options(spec, &segments, MCTS_OPTIONS)?;
                Ok(EngineSpec::Uniform(mcts_budget(spec, &options)?))
            }
            "mcts" => {
                let (path, options) = split_path(&segments, MCTS_OPTIONS);
                if path.is_empty() {
                    return Err(invalid(
                        spec,
                        "mcts needs a checkpoint path (mcts:PATH.safetensors:sims=N)".into(),
                    ));
                }
                let options = parse_options(spec, options, MCTS_OPTIONS)?;
                Ok(EngineSpec::Mcts {
                    checkpoint: PathBuf::from(path),
                    budget: mcts_budget(spec, &options)?,
                })
            }
            "alphabeta" => {
                let (path, options) = split_path(&segments, ALPHABETA_OPTIONS);
                if path.ends_with(PIECE_SQUARE_SUFFIX) {
                    return learnt_alphabeta(spec, &path, options);
                }
                let (network, allowed) = if path.is_empty() {
                    (None, &ALPHABETA_OPTIONS[..5])
                } else if !path.ends_with(CHECKPOINT_SUFFIX) {
                    // Not a checkpoint: most likely a mistyped option.
                    return Err(invalid(
                        spec,
                        format!("cannot read option '{path}': expected key=value, a checkpoint PATH.safetensors or a learnt evaluation PATH{PIECE_SQUARE_SUFFIX} ({SPEC_HELP})"),
                    ));
                } else {
                    (Some(PathBuf::from(path)), ALPHABETA_OPTIONS)
                };
                let options = parse_options(spec, options, allowed)?;
                let pick = match options.iter().find(|(key, _)| *key == "pick") {
                    Some(&(key, value)) => Some(parse_margin(spec, key, value)?),
                    None => None,
                };
                let soft = parse_soft(spec, &options)?;
                let network_evaluates = network.is_some() && pick.is_none();
                let mut config = AlphaBetaConfig::defaults(network_evaluates);
                let (mut depth, mut ms) = (None, None);
                for (key, value) in options {
                    match key {
                        "depth" | "ms" => read_limit(spec, key, value, &mut depth, &mut ms)?,
                        "values" => {
                            config.piece_values = parse_values(spec, value, &config.piece_values)?
                        }
                        "mobility" if network_evaluates => {
                            return Err(invalid(
                                spec,
                                "mobility is counted only with pick=M (a network that evaluates replaces material plus mobility)".into(),
                            ))
                        }
                        "mobility" => {
                            config.mobility_weight = parse_real_in(
                                spec,
                                key,
                                value,
                                -MAX_MOBILITY_PAWNS..=MAX_MOBILITY_PAWNS,
                                "Pawns per move",
                            )?
                        }
                        _ => {} // pick and soft, read above
                    }
                }
                require_alphabeta_limit(spec, depth, ms)?;
                Ok(EngineSpec::AlphaBeta {
                    depth,
                    ms,
                    config,
                    network,
                    pick,
                    piece_squares: None,
                    soft,
                })
            }
            "uci" => parse_uci(spec, &segments),
            _ => Err(invalid(
                spec,
                format!("unknown kind '{kind}' ({SPEC_HELP})"),
            )),
        }
    }
}

impl fmt::Display for EngineSpec {
    /// The canonical text: options in a fixed order, MCTS specs with their simulations
    /// written out, alpha-beta piece values only where they differ from the defaults.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineSpec::Random { seed: None } => write!(f, "random"),
            EngineSpec::Random { seed: Some(seed) } => write!(f, "random:seed={seed}"),
            EngineSpec::Uniform(budget) => write!(f, "uniform{budget}"),
            EngineSpec::Mcts { checkpoint, budget } => {
                write!(f, "mcts:{}{budget}", checkpoint.display())
            }
            EngineSpec::AlphaBeta {
                depth,
                ms,
                config,
                network,
                pick,
                piece_squares,
                soft,
            } => {
                write!(f, "alphabeta")?;
                if let Some(path) = network.as_ref().or(piece_squares.as_ref()) {
                    write!(f, ":{}", path.display())?;
                }
                let defaults = AlphaBetaConfig::defaults(network.is_some() && pick.is_none());
                if let Some(depth) = depth {
                    write!(f, ":depth={depth}")?;
                }
                if let Some(ms) = ms {
                    write!(f, ":ms={ms}")?;
                }
                if let Some(margin) = pick {
                    write!(f, ":pick={margin}")?;
                }
                if let Some(temperature) = soft {
                    write!(f, ":soft={temperature}")?;
                }
                let values: Vec<String> = Role::ALL
                    .iter()
                    .filter(|&&role| config.piece_values[role] != defaults.piece_values[role])
                    .map(|&role| format!("{}={}", role.upper_char(), config.piece_values[role]))
                    .collect();
                if !values.is_empty() {
                    write!(f, ":values={}", values.join(","))?;
                }
                if config.mobility_weight != defaults.mobility_weight {
                    write!(f, ":mobility={}", config.mobility_weight)?;
                }
                Ok(())
            }
            EngineSpec::Uci {
                command,
                depth,
                nodes,
                ms,
                timeout,
                options,
            } => {
                write!(f, "uci:{command}")?;
                let limits = [("depth", depth.map(u64::from)), ("nodes", *nodes)];
                for (key, value) in limits
                    .into_iter()
                    .chain([("ms", *ms), ("timeout", *timeout)])
                {
                    if let Some(value) = value {
                        write!(f, ":{key}={value}")?;
                    }
                }
                for (name, value) in options {
                    write!(f, ":{name}={value}")?;
                }
                Ok(())
            }
        }
    }
}

/// `uci:COMMAND[:key=value...]` (see [`EngineSpec::Uci`]).
fn parse_uci(spec: &str, segments: &[&str]) -> Result<EngineSpec, SpecError> {
    let command = segments.first().copied().unwrap_or("");
    if command.is_empty() || command.contains('=') {
        return Err(invalid(
            spec,
            "uci needs a program first, e.g. uci:fairy-stockfish:depth=5".into(),
        ));
    }
    let (mut depth, mut nodes, mut ms, mut timeout) = (None, None, None, None);
    let mut options: Vec<(String, String)> = Vec::new();
    // Keys are matched ignoring case, as UCI option names are: `depth`, `nodes`, `ms` and
    // `timeout` are the player's own settings, every other key an engine option.
    let mut seen: Vec<String> = Vec::new();
    for segment in &segments[1..] {
        let Some((key, value)) = segment.split_once('=') else {
            return Err(invalid(
                spec,
                format!("cannot read option '{segment}': expected key=value ({SPEC_HELP})"),
            ));
        };
        let lower = key.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(invalid(spec, format!("option '{key}' given twice")));
        }
        seen.push(lower.clone());
        match lower.as_str() {
            "depth" => depth = Some(positive(spec, key, value, "a whole number of plies")?),
            "nodes" => nodes = Some(positive(spec, key, value, "a whole number of nodes")?),
            "ms" => ms = Some(parse_milliseconds(spec, value)?),
            "timeout" => {
                timeout = Some(parse_in_range(
                    spec,
                    key,
                    value,
                    1..=MAX_TIMEOUT.as_secs(),
                    "seconds",
                )?)
            }
            "uci_variant" => {
                return Err(invalid(
                    spec,
                    "UCI_Variant is set from the variant being played".into(),
                ))
            }
            _ if key.trim().is_empty() => {
                return Err(invalid(spec, format!("option '{segment}' has no name")))
            }
            _ => options.push((key.to_string(), value.to_string())),
        }
    }
    if depth.is_none() && nodes.is_none() && ms.is_none() {
        return Err(invalid(
            spec,
            "uci needs depth=D, nodes=N or ms=T, e.g. uci:fairy-stockfish:depth=5".into(),
        ));
    }
    Ok(EngineSpec::Uci {
        command: command.to_string(),
        depth,
        nodes,
        ms,
        timeout,
        options,
    })
}

/// A number of at least 1.
fn positive<T: FromStr + PartialOrd + From<u8>>(
    spec: &str,
    key: &str,
    value: &str,
    what: &str,
) -> Result<T, SpecError> {
    let n: T = parse_number(spec, key, value, what)?;
    if n < T::from(1) {
        return Err(invalid(spec, format!("{key} must be at least 1")));
    }
    Ok(n)
}

/// A whole number of `unit` from `range`, e.g. `depth must be 1 to 64 plies, got 0`.
fn parse_in_range<T>(
    spec: &str,
    key: &str,
    value: &str,
    range: std::ops::RangeInclusive<T>,
    unit: &str,
) -> Result<T, SpecError>
where
    T: FromStr + PartialOrd + std::fmt::Display,
{
    let n: T = parse_number(spec, key, value, &format!("a whole number of {unit}"))?;
    if !range.contains(&n) {
        let (low, high) = (range.start(), range.end());
        return Err(invalid(
            spec,
            format!("{key} must be {low} to {high} {unit}, got {n}"),
        ));
    }
    Ok(n)
}

/// A number from `range` in `what`, e.g. `captures must be 0 to 10 (log-odds per piece),
/// got -1` (NaN is out of every range).
fn parse_real_in(
    spec: &str,
    key: &str,
    value: &str,
    range: std::ops::RangeInclusive<f32>,
    what: &str,
) -> Result<f32, SpecError> {
    let x: f32 = parse_number(spec, key, value, &format!("a number ({what})"))?;
    if !range.contains(&x) {
        let (low, high) = (range.start(), range.end());
        return Err(invalid(
            spec,
            format!("{key} must be {low} to {high} ({what}), got {value}"),
        ));
    }
    Ok(x)
}

/// Splits `key=value` segments, allowing only `allowed` keys, each at most once.
fn parse_options<'s>(
    spec: &str,
    segments: &[&'s str],
    allowed: &[&str],
) -> Result<Vec<(&'s str, &'s str)>, SpecError> {
    let mut options: Vec<(&str, &str)> = Vec::new();
    for segment in segments {
        let Some((key, value)) = segment.split_once('=') else {
            return Err(invalid(
                spec,
                format!("cannot read option '{segment}': expected key=value ({SPEC_HELP})"),
            ));
        };
        if !allowed.contains(&key) {
            return Err(invalid(
                spec,
                format!(
                    "unknown option '{key}' (this player takes: {})",
                    if allowed.is_empty() {
                        "none".to_string()
                    } else {
                        allowed.join(", ")
                    }
                ),
            ));
        }
        if options.iter().any(|(k, _)| *k == key) {
            return Err(invalid(spec, format!("option '{key}' given twice")));
        }
        options.push((key, value));
    }
    Ok(options)
}

fn parse_number<T: FromStr>(
    spec: &str,
    key: &str,
    value: &str,
    what: &str,
) -> Result<T, SpecError> {
    value
        .parse()
        .map_err(|_| invalid(spec, format!("{key} must be {what}, got '{value}'")))
}

fn parse_milliseconds(spec: &str, value: &str) -> Result<u64, SpecError> {
    let t: u64 = parse_number(spec, "ms", value, "a whole number of milliseconds")?;
    if t == 0 {
        return Err(invalid(spec, "ms must be positive".into()));
    }
    Ok(t)
}

/// The options of an MCTS spec.
const MCTS_OPTIONS: &[&str] = &[
    "sims", "ms", "batch", "captures", "eval", "mix", "cpuct", "fpu", "ptemp", "reuse",
];

/// The options of an alpha-beta spec (without a network, the first four).
/// The options of an alpha-beta spec (with a learnt evaluation, the first three; without a
/// network, the first five).
const ALPHABETA_OPTIONS: &[&str] = &["depth", "ms", "soft", "values", "mobility", "pick"];

/// How a checkpoint's file is named.
const CHECKPOINT_SUFFIX: &str = ".safetensors";

/// How the file of a learnt piece-square evaluation is named (`ninjazero fit-eval --out`).
pub const PIECE_SQUARE_SUFFIX: &str = ".eval.json";

/// `alphabeta:PATH.eval.json:depth=D|ms=T`: the limits only, since the file holds the
/// whole evaluation.
fn learnt_alphabeta(spec: &str, path: &str, options: &[&str]) -> Result<EngineSpec, SpecError> {
    let options = parse_options(spec, options, &ALPHABETA_OPTIONS[..3])?;
    let soft = parse_soft(spec, &options)?;
    let (mut depth, mut ms) = (None, None);
    for (key, value) in options.into_iter().filter(|&(key, _)| key != "soft") {
        read_limit(spec, key, value, &mut depth, &mut ms)?;
    }
    require_alphabeta_limit(spec, depth, ms)?;
    Ok(EngineSpec::AlphaBeta {
        depth,
        ms,
        config: AlphaBetaConfig::default(),
        network: None,
        pick: None,
        piece_squares: Some(PathBuf::from(path)),
        soft,
    })
}

/// An alpha-beta spec's `depth=` (plies) or `ms=` (milliseconds per move).
fn read_limit(
    spec: &str,
    key: &str,
    value: &str,
    depth: &mut Option<u32>,
    ms: &mut Option<u64>,
) -> Result<(), SpecError> {
    if key == "depth" {
        *depth = Some(parse_in_range(spec, key, value, 1..=MAX_DEPTH, "plies")?);
    } else {
        *ms = Some(parse_milliseconds(spec, value)?);
    }
    Ok(())
}

fn require_alphabeta_limit(
    spec: &str,
    depth: Option<u32>,
    ms: Option<u64>,
) -> Result<(), SpecError> {
    if depth.is_none() && ms.is_none() {
        return Err(invalid(
            spec,
            "alphabeta needs depth=D (plies) or ms=T (milliseconds per move), e.g. alphabeta:depth=3".into(),
        ));
    }
    Ok(())
}

/// The most Pawns below the search's best a picking network may choose (far from mate
/// scores, which are the search's to play).
pub const MAX_PICK_MARGIN: f32 = 5.0;

/// `soft=T`, if given: Pawns from [`MIN_SOFT_TEMPERATURE`] to [`MAX_SOFT_TEMPERATURE`].
fn parse_soft(spec: &str, options: &[(&str, &str)]) -> Result<Option<f32>, SpecError> {
    let Some(&(key, value)) = options.iter().find(|(key, _)| *key == "soft") else {
        return Ok(None);
    };
    let range = MIN_SOFT_TEMPERATURE..=MAX_SOFT_TEMPERATURE;
    parse_real_in(spec, key, value, range, "Pawns").map(Some)
}

/// `pick=M`: Pawns from 0 to [`MAX_PICK_MARGIN`], in whole centipawns.
fn parse_margin(spec: &str, key: &str, value: &str) -> Result<f32, SpecError> {
    let margin = parse_real_in(spec, key, value, 0.0..=MAX_PICK_MARGIN, "Pawns")?;
    // The search scores in whole centipawns: a finer margin would be rounded unseen.
    let centipawns = margin * 100.0;
    if (centipawns - centipawns.round()).abs() > 1e-3 {
        return Err(invalid(
            spec,
            format!("pick must be a whole number of centipawns (e.g. 0.25), got {value}"),
        ));
    }
    Ok(margin)
}

/// The ':'-separated fields of a spec after its kind, except that a learnt evaluation's
/// path after `eval=` may hold ':' (a run named by the time, `runs/10:30`): its field runs
/// on to the first one that ends in [`PIECE_SQUARE_SUFFIX`], or, without such a field, up
/// to the next option, so that the option's own error shows the whole path. Checkpoint
/// paths are told from the options later ([`split_path`]).
fn fields(rest: &str) -> Vec<&str> {
    let ends: Vec<usize> = rest
        .match_indices(':')
        .map(|(at, _)| at)
        .chain([rest.len()])
        .collect();
    let field = |k: usize| &rest[if k == 0 { 0 } else { ends[k - 1] + 1 }..ends[k]];
    let mut fields = Vec::with_capacity(ends.len());
    let (mut start, mut next) = (0, 0);
    while next < ends.len() {
        if field(next).starts_with("eval=") && !field(next).ends_with(PIECE_SQUARE_SUFFIX) {
            next = (next + 1..ends.len())
                .find(|&k| rest[start..ends[k]].ends_with(PIECE_SQUARE_SUFFIX))
                .unwrap_or_else(|| {
                    (next + 1..ends.len())
                        .find(|&k| looks_like_an_option(field(k)))
                        .map_or(ends.len() - 1, |option| option - 1)
                });
        }
        fields.push(&rest[start..ends[next]]);
        start = ends[next] + 1;
        next += 1;
    }
    fields
}

/// Whether a field reads as `key=value` with a lower-case key, as every option does.
fn looks_like_an_option(field: &str) -> bool {
    field
        .split_once('=')
        .is_some_and(|(key, _)| !key.is_empty() && key.bytes().all(|b| b.is_ascii_lowercase()))
}

/// Splits a checkpoint path, which may itself hold ':', from the trailing `key=value`
/// segments whose keys are `options`.
fn split_path<'a, 's>(segments: &'a [&'s str], options: &[&str]) -> (String, &'a [&'s str]) {
    let split = segments
        .iter()
        .rposition(|s| {
            !options
                .iter()
                .any(|key| s.strip_prefix(key).is_some_and(|v| v.starts_with('=')))
        })
        .map_or(0, |i| i + 1);
    (segments[..split].join(":"), &segments[split..])
}

/// The most leaves an MCTS spec may evaluate per network call.
pub const MAX_MCTS_BATCH: usize = 1024;

/// `sims=`, `ms=` and `batch=` of an MCTS spec; [`DEFAULT_SIMULATIONS`] without `sims=`
/// or `ms=`.
fn mcts_budget(spec: &str, options: &[(&str, &str)]) -> Result<MctsBudget, SpecError> {
    let mut budget = MctsBudget::default();
    let mut mix = None;
    for &(key, value) in options {
        match key {
            "ms" => budget.ms = Some(parse_milliseconds(spec, value)?),
            "batch" => {
                budget.batch = Some(parse_in_range(
                    spec,
                    key,
                    value,
                    1..=MAX_MCTS_BATCH,
                    "leaves",
                )?)
            }
            "captures" => {
                let logit = parse_real_in(spec, key, value, 0.0..=10.0, "log-odds per piece")?;
                budget.capture_logit = Some(logit);
            }
            "eval" => {
                if !value.ends_with(PIECE_SQUARE_SUFFIX) {
                    return Err(invalid(
                        spec,
                        format!("eval must name a learnt evaluation PATH{PIECE_SQUARE_SUFFIX} (ninjazero fit-eval --out), got '{value}'"),
                    ));
                }
                budget.blend = Some(BlendSpec {
                    path: PathBuf::from(value),
                    mix: DEFAULT_BLEND_MIX,
                });
            }
            "cpuct" => {
                let c_puct = parse_real_in(spec, key, value, 0.0..=100.0, "exploration constant")?;
                budget.c_puct = Some(c_puct);
            }
            "fpu" => {
                let reduction = parse_real_in(
                    spec,
                    key,
                    value,
                    MIN_FPU_REDUCTION..=MAX_FPU_REDUCTION,
                    "first-play urgency reduction",
                )?;
                budget.fpu_reduction = Some(reduction);
            }
            "ptemp" => {
                let temperature = parse_real_in(
                    spec,
                    key,
                    value,
                    MIN_POLICY_TEMPERATURE..=MAX_POLICY_TEMPERATURE,
                    "policy temperature",
                )?;
                budget.policy_temperature = Some(temperature);
            }
            "reuse" => {
                budget.reuse = match value {
                    "0" => false,
                    "1" => true,
                    _ => {
                        let what = "reuse must be 0 or 1 (keep the search tree between moves)";
                        return Err(invalid(spec, format!("{what}, got '{value}'")));
                    }
                }
            }
            "mix" => {
                let what = "share of the learnt evaluation";
                mix = Some(parse_real_in(spec, key, value, 0.0..=1.0, what)?);
            }
            _ => {
                let n: u64 = parse_number(spec, "sims", value, "a positive whole number")?;
                if n == 0 {
                    return Err(invalid(spec, "sims must be at least 1".into()));
                }
                budget.sims = Some(n);
            }
        }
    }
    if let Some(share) = mix {
        let Some(blend) = budget.blend.as_mut() else {
            return Err(invalid(
                spec,
                "mix is the share of a learnt evaluation: give it with eval=E.eval.json".into(),
            ));
        };
        blend.mix = share;
    }
    if budget.sims.is_none() && budget.ms.is_none() {
        budget.sims = Some(DEFAULT_SIMULATIONS);
    }
    Ok(budget)
}

/// `P=1,N=3,...`: piece letters with values in Pawns, 0 to [`MAX_PIECE_VALUE`] (a negative
/// value would make the engine refuse captures, a huge one read as mate); roles not named
/// keep `defaults`.
fn parse_values(spec: &str, text: &str, defaults: &ByRole<f32>) -> Result<ByRole<f32>, SpecError> {
    let mut values = *defaults;
    for item in text.split(',').filter(|s| !s.is_empty()) {
        let bad = |why: String| invalid(spec, format!("piece value '{item}': {why}"));
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
        if !(0.0..=MAX_PIECE_VALUE).contains(&value) {
            return Err(bad(format!("must be 0 to {MAX_PIECE_VALUE} Pawns")));
        }
        values[role] = value;
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> EngineSpec {
        text.parse()
            .unwrap_or_else(|e| panic!("'{text}' is rejected: {e}"))
    }

    #[test]
    fn an_alpha_beta_player_searches_with_an_evaluation_and_keeps_its_limits() {
        let counting = EngineSpec::alphabeta_counting(1);
        assert_eq!(
            parse(&counting.to_string()),
            parse(
                "alphabeta:depth=1:values=P=1,N=1,B=1,R=1,Q=1,M=1,G=1,W=1,I=1,J=1,L=1,C=1,S=1,Y=1"
            )
        );
        for (player, searching) in [
            ("alphabeta:depth=2", "alphabeta:e.eval.json:depth=2"),
            (
                "alphabeta:ms=100:values=Q=1",
                "alphabeta:e.eval.json:ms=100",
            ),
            (
                "alphabeta:old.eval.json:depth=3",
                "alphabeta:e.eval.json:depth=3",
            ),
            (
                "alphabeta:depth=1:soft=0.5:mobility=0",
                "alphabeta:e.eval.json:depth=1:soft=0.5",
            ),
        ] {
            assert_eq!(
                parse(player).with_evaluation("e.eval.json"),
                Some(parse(searching))
            );
        }
        for player in [
            "alphabeta:n.safetensors:depth=2",
            "uniform:sims=8",
            "random",
        ] {
            assert_eq!(
                parse(player).with_evaluation("e.eval.json"),
                None,
                "{player}"
            );
        }
    }

    #[test]
    fn paths_may_hold_colons() {
        let EngineSpec::Mcts { checkpoint, budget } =
            parse("mcts:runs/10:30/s.safetensors:ms=100:eval=runs/10:30/e.eval.json:mix=0.5")
        else {
            panic!("not an MCTS spec");
        };
        assert_eq!(checkpoint, PathBuf::from("runs/10:30/s.safetensors"));
        let blend = budget.blend.expect("a blended leaf");
        assert_eq!(blend.path, PathBuf::from("runs/10:30/e.eval.json"));
        assert_eq!(blend.mix, 0.5);
        // Without a field that ends the evaluation's path, the path runs to the next option
        // and is refused whole.
        for spec in [
            "uniform:sims=8:eval=runs/10:30/e.json",
            "uniform:eval=runs/10:30/e.json:sims=8",
        ] {
            let e = spec.parse::<EngineSpec>().unwrap_err().to_string();
            assert!(e.contains("got 'runs/10:30/e.json'"), "{e}");
        }
    }

    #[test]
    fn specs_round_trip_through_their_canonical_text() {
        let canonical = [
            "random",
            "random:seed=7",
            "uniform:sims=16",
            "uniform:ms=250",
            "uniform:sims=16:ms=250",
            "mcts:runs/a:b/gen-0003.safetensors:sims=64",
            "mcts:gen-0001.safetensors:ms=100",
            "mcts:gen-0001.safetensors:sims=8:ms=100",
            "mcts:gen-0001.safetensors:ms=100:batch=8",
            "uniform:sims=32:batch=4",
            "mcts:gen-0001.safetensors:sims=64:captures=1.5",
            "mcts:gen-0001.safetensors:ms=100:captures=1:eval=runs/e.eval.json:mix=0.25",
            "mcts:runs/10:30/s.safetensors:ms=100:eval=runs/10:30/e.eval.json:mix=0.5:reuse=1",
            "uniform:sims=8:eval=a:b:c.eval.json:mix=1",
            "uniform:sims=8:eval=e.eval.json:mix=1",
            "mcts:gen-0001.safetensors:ms=100:captures=1:eval=e.eval.json:mix=0.5:reuse=1",
            "uniform:sims=8:cpuct=2.5:reuse=1",
            "mcts:gen-0001.safetensors:ms=100:fpu=0.5:ptemp=1.5",
            "alphabeta:depth=3",
            "alphabeta:ms=200",
            "alphabeta:depth=4:ms=50",
            "alphabeta:depth=2:values=B=3.25,N=3.5",
            "alphabeta:depth=2:mobility=0.125",
            "alphabeta:depth=1:values=Q=9.75,P=0.9:mobility=0",
            "alphabeta:gen-0001.safetensors:ms=100",
            "alphabeta:runs/a:b/gen-0001.safetensors:depth=2:values=R=5,N=3",
            "alphabeta:gen-0001.safetensors:ms=100:pick=0.25:values=R=13.9:mobility=0",
            "alphabeta:e2.eval.json:depth=3",
            "alphabeta:e2.eval.json:depth=2:soft=0.25",
            "alphabeta:depth=2:soft=5:values=N=3.5",
            "alphabeta:gen-0001.safetensors:depth=1:pick=0.5:soft=0.01",
            "alphabeta:runs/a:b/e2.eval.json:depth=4:ms=100",
            "uci:fairy-stockfish:depth=5",
            "uci:/usr/games/fairy-stockfish:ms=100:Skill Level=3",
            "uci:sf:depth=2:nodes=1000:ms=50:timeout=3:Hash=32:Skill Level=-5",
        ];
        for text in canonical {
            let spec = parse(text);
            assert_eq!(spec.to_string(), text);
            assert_eq!(parse(&spec.to_string()), spec);
        }
        // Other spellings of the same specs, and their canonical text.
        let spellings = [
            ("uniform", "uniform:sims=64"),
            ("uniform:ms=20:sims=5", "uniform:sims=5:ms=20"),
            ("uniform:batch=4", "uniform:sims=64:batch=4"),
            ("uniform:reuse=1:sims=8", "uniform:sims=8:reuse=1"),
            ("uniform:sims=8:reuse=0", "uniform:sims=8"),
            (
                "mcts:x.safetensors:batch=2:ms=9",
                "mcts:x.safetensors:ms=9:batch=2",
            ),
            ("mcts:x.safetensors", "mcts:x.safetensors:sims=64"),
            (
                "mcts:x.safetensors:mix=0:eval=e.eval.json:ms=9",
                "mcts:x.safetensors:ms=9:eval=e.eval.json:mix=0",
            ),
            (
                "uniform:eval=e.eval.json",
                "uniform:sims=64:eval=e.eval.json:mix=0.5",
            ),
            ("alphabeta:ms=50:depth=4", "alphabeta:depth=4:ms=50"),
            (
                "alphabeta:e.eval.json:ms=9:depth=2",
                "alphabeta:e.eval.json:depth=2:ms=9",
            ),
            (
                "alphabeta:depth=2:values=n=3.5,b=3.25,P=1",
                "alphabeta:depth=2:values=B=3.25,N=3.5",
            ),
            (
                "alphabeta:n.safetensors:depth=2:values=P=1,N=1,Q=9",
                "alphabeta:n.safetensors:depth=2:values=Q=9",
            ),
            (
                "uci:sf:Skill Level=0:Timeout=4:DEPTH=1",
                "uci:sf:depth=1:timeout=4:Skill Level=0",
            ),
        ];
        for (text, canonical) in spellings {
            let spec = parse(text);
            assert_eq!(spec.to_string(), canonical, "{text}");
            assert_eq!(parse(canonical), spec, "{text}");
        }
        assert_eq!(
            parse("mcts:a:b.safetensors:sims=8"),
            EngineSpec::mcts("a:b.safetensors", 8)
        );
        assert_eq!(parse("alphabeta:depth=2"), EngineSpec::alphabeta(2));
        let EngineSpec::AlphaBeta { config, .. } = parse("alphabeta:depth=2:values=N=3.5") else {
            panic!("not alpha-beta");
        };
        assert_eq!(config.piece_values[Role::Knight], 3.5);
        let EngineSpec::AlphaBeta {
            config, network, ..
        } = parse("alphabeta:n.safetensors:ms=100:values=N=3.5")
        else {
            panic!("not alpha-beta");
        };
        assert_eq!(network, Some(PathBuf::from("n.safetensors")));
        // With a network, the pieces not named are worth 1: no human values.
        assert_eq!(config.piece_values[Role::Knight], 3.5);
        assert_eq!(config.piece_values[Role::Queen], 1.0);
        // A picking network leaves the evaluation to material plus mobility.
        let EngineSpec::AlphaBeta { config, pick, .. } =
            parse("alphabeta:n.safetensors:ms=100:pick=0.5:values=N=3.5")
        else {
            panic!("not alpha-beta");
        };
        assert_eq!(pick, Some(0.5));
        assert_eq!(
            config.piece_values[Role::Queen],
            AlphaBetaConfig::default().piece_values[Role::Queen]
        );
        assert_eq!(
            config.mobility_weight,
            AlphaBetaConfig::default().mobility_weight
        );
    }

    /// `fpu=` and `ptemp=` reach the search settings; without them the defaults hold.
    #[test]
    fn an_mcts_spec_sets_its_first_play_urgency_and_policy_temperature() {
        let config = |text: &str| match parse(text) {
            EngineSpec::Uniform(budget) | EngineSpec::Mcts { budget, .. } => budget.search_config(),
            other => panic!("'{text}' is not an MCTS spec: {other:?}"),
        };
        let tuned = config("mcts:n.safetensors:ms=100:fpu=-0.25:ptemp=1.5");
        assert_eq!(tuned.fpu_reduction, -0.25);
        assert_eq!(tuned.policy_temperature, 1.5);
        assert_eq!(config("uniform:sims=8"), SearchConfig::default());
        tuned
            .validate()
            .expect("the parser keeps to the settings' ranges");
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        let error = |text: &str| match text.parse::<EngineSpec>() {
            Ok(spec) => panic!("'{text}' was accepted as {spec}"),
            Err(e) => e.to_string(),
        };
        let cases = [
            ("alphabeta:depth=x", "player 'alphabeta:depth=x': depth must be a whole number of plies, got 'x'"),
            ("alphabeta", "player 'alphabeta': alphabeta needs depth=D (plies) or ms=T (milliseconds per move), e.g. alphabeta:depth=3"),
            ("alphabeta:depth=0", "player 'alphabeta:depth=0': depth must be 1 to 64 plies, got 0"),
            ("alphabeta:ms=0", "player 'alphabeta:ms=0': ms must be positive"),
            ("alphabeta:depth=2:depth=3", "player 'alphabeta:depth=2:depth=3': option 'depth' given twice"),
            ("alphabeta:depth=2:mobility=inf", "player 'alphabeta:depth=2:mobility=inf': mobility must be -1 to 1 (Pawns per move), got inf"),
            ("alphabeta:n.safetensors:ms=100:mobility=0.1", "player 'alphabeta:n.safetensors:ms=100:mobility=0.1': mobility is counted only with pick=M (a network that evaluates replaces material plus mobility)"),
            ("alphabeta:depth=2:pick=0.5", "player 'alphabeta:depth=2:pick=0.5': unknown option 'pick' (this player takes: depth, ms, soft, values, mobility)"),
            ("alphabeta:n.safetensors:depth=2:pick=6", "player 'alphabeta:n.safetensors:depth=2:pick=6': pick must be 0 to 5 (Pawns), got 6"),
            ("alphabeta:n.safetensors:depth=2:pick=NaN", "player 'alphabeta:n.safetensors:depth=2:pick=NaN': pick must be 0 to 5 (Pawns), got NaN"),
            ("alphabeta:n.safetensors:depth=2:pick=-0.1", "player 'alphabeta:n.safetensors:depth=2:pick=-0.1': pick must be 0 to 5 (Pawns), got -0.1"),
            ("alphabeta:n.safetensors:depth=2:pick=x", "player 'alphabeta:n.safetensors:depth=2:pick=x': pick must be a number (Pawns), got 'x'"),
            ("alphabeta:n.safetensors:depth=2:pick=0.123", "player 'alphabeta:n.safetensors:depth=2:pick=0.123': pick must be a whole number of centipawns (e.g. 0.25), got 0.123"),
            ("alphabeta:e.eval.json", "player 'alphabeta:e.eval.json': alphabeta needs depth=D (plies) or ms=T (milliseconds per move), e.g. alphabeta:depth=3"),
            ("alphabeta:e.eval.json:depth=2:values=N=3", "player 'alphabeta:e.eval.json:depth=2:values=N=3': unknown option 'values' (this player takes: depth, ms, soft)"),
            ("alphabeta:depth=2:soft=0", "player 'alphabeta:depth=2:soft=0': soft must be 0.01 to 5 (Pawns), got 0"),
            ("alphabeta:depth=2:soft=0.009", "player 'alphabeta:depth=2:soft=0.009': soft must be 0.01 to 5 (Pawns), got 0.009"),
            ("alphabeta:depth=2:soft=-1", "player 'alphabeta:depth=2:soft=-1': soft must be 0.01 to 5 (Pawns), got -1"),
            ("alphabeta:depth=2:soft=NaN", "player 'alphabeta:depth=2:soft=NaN': soft must be 0.01 to 5 (Pawns), got NaN"),
            ("alphabeta:e.eval.json:depth=2:soft=5.5", "player 'alphabeta:e.eval.json:depth=2:soft=5.5': soft must be 0.01 to 5 (Pawns), got 5.5"),
            ("alphabeta:n.safetensors:depth=2:soft=warm", "player 'alphabeta:n.safetensors:depth=2:soft=warm': soft must be a number (Pawns), got 'warm'"),
            ("alphabeta:depth=2:soft=0.5:soft=1", "player 'alphabeta:depth=2:soft=0.5:soft=1': option 'soft' given twice"),
            ("alphabeta:e.eval.json:depth=65", "player 'alphabeta:e.eval.json:depth=65': depth must be 1 to 64 plies, got 65"),
            ("alphabeta:n.safetensors", "player 'alphabeta:n.safetensors': alphabeta needs depth=D (plies) or ms=T (milliseconds per move), e.g. alphabeta:depth=3"),
            ("uniform:sims=many", "player 'uniform:sims=many': sims must be a positive whole number, got 'many'"),
            ("uniform:sims=0", "player 'uniform:sims=0': sims must be at least 1"),
            ("uniform:ms=x", "player 'uniform:ms=x': ms must be a whole number of milliseconds, got 'x'"),
            ("uniform:simulations=8", "player 'uniform:simulations=8': unknown option 'simulations' (this player takes: sims, ms, batch, captures, eval, mix, cpuct, fpu, ptemp, reuse)"),
            ("uniform:sims=8:ptemp=0", "player 'uniform:sims=8:ptemp=0': ptemp must be 0.1 to 10 (policy temperature), got 0"),
            ("uniform:sims=8:ptemp=inf", "player 'uniform:sims=8:ptemp=inf': ptemp must be 0.1 to 10 (policy temperature), got inf"),
            ("uniform:sims=8:fpu=3", "player 'uniform:sims=8:fpu=3': fpu must be -2 to 2 (first-play urgency reduction), got 3"),
            ("uniform:sims=8:fpu=x", "player 'uniform:sims=8:fpu=x': fpu must be a number (first-play urgency reduction), got 'x'"),
            ("uniform:sims=8:cpuct=-1", "player 'uniform:sims=8:cpuct=-1': cpuct must be 0 to 100 (exploration constant), got -1"),
            ("uniform:sims=8:cpuct=NaN", "player 'uniform:sims=8:cpuct=NaN': cpuct must be 0 to 100 (exploration constant), got NaN"),
            ("uniform:sims=8:reuse=yes", "player 'uniform:sims=8:reuse=yes': reuse must be 0 or 1 (keep the search tree between moves), got 'yes'"),
            ("uniform:sims=8:mix=0.5", "player 'uniform:sims=8:mix=0.5': mix is the share of a learnt evaluation: give it with eval=E.eval.json"),
            ("uniform:sims=8:eval=e.json", "player 'uniform:sims=8:eval=e.json': eval must name a learnt evaluation PATH.eval.json (ninjazero fit-eval --out), got 'e.json'"),
            ("mcts:x.safetensors:eval=e.eval.json:mix=1.5", "player 'mcts:x.safetensors:eval=e.eval.json:mix=1.5': mix must be 0 to 1 (share of the learnt evaluation), got 1.5"),
            ("mcts:x.safetensors:eval=e.eval.json:mix=NaN", "player 'mcts:x.safetensors:eval=e.eval.json:mix=NaN': mix must be 0 to 1 (share of the learnt evaluation), got NaN"),
            ("mcts:x.safetensors:eval=e.eval.json:mix=half", "player 'mcts:x.safetensors:eval=e.eval.json:mix=half': mix must be a number (share of the learnt evaluation), got 'half'"),
            ("uniform:batch=0", "player 'uniform:batch=0': batch must be 1 to 1024 leaves, got 0"),
            ("mcts:x.safetensors:batch=-3", "player 'mcts:x.safetensors:batch=-3': batch must be a whole number of leaves, got '-3'"),
            ("uniform:sims=8:batch=1025", "player 'uniform:sims=8:batch=1025': batch must be 1 to 1024 leaves, got 1025"),
            ("uniform:sims=8:captures=-1", "player 'uniform:sims=8:captures=-1': captures must be 0 to 10 (log-odds per piece), got -1"),
            ("uniform:sims=8:captures=NaN", "player 'uniform:sims=8:captures=NaN': captures must be 0 to 10 (log-odds per piece), got NaN"),
            ("uniform:sims=8:captures=x", "player 'uniform:sims=8:captures=x': captures must be a number (log-odds per piece), got 'x'"),
            ("random:seed=-1", "player 'random:seed=-1': seed must be a whole number, got '-1'"),
            ("alphabeta::depth=1", "player 'alphabeta::depth=1': an empty field (two ':' in a row, or one at the end)"),
            ("random:", "player 'random:': an empty field (two ':' in a row, or one at the end)"),
            ("mcts:n.safetensors:sims=8:", "player 'mcts:n.safetensors:sims=8:': an empty field (two ':' in a row, or one at the end)"),
            ("mcts", "player 'mcts': mcts needs a checkpoint path (mcts:PATH.safetensors:sims=N)"),
            ("mcts:sims=8", "player 'mcts:sims=8': mcts needs a checkpoint path (mcts:PATH.safetensors:sims=N)"),
            ("uci", "player 'uci': uci needs a program first, e.g. uci:fairy-stockfish:depth=5"),
            ("uci:depth=3", "player 'uci:depth=3': uci needs a program first, e.g. uci:fairy-stockfish:depth=5"),
            ("uci:sf", "player 'uci:sf': uci needs depth=D, nodes=N or ms=T, e.g. uci:fairy-stockfish:depth=5"),
            ("uci:sf:depth=0", "player 'uci:sf:depth=0': depth must be at least 1"),
            ("uci:sf:depth=1:Depth=2", "player 'uci:sf:depth=1:Depth=2': option 'Depth' given twice"),
            ("uci:sf:depth=1:Hash=1:hash=2", "player 'uci:sf:depth=1:Hash=1:hash=2': option 'hash' given twice"),
            ("uci:sf:depth=1:UCI_Variant=chess", "player 'uci:sf:depth=1:UCI_Variant=chess': UCI_Variant is set from the variant being played"),
        ];
        for (text, message) in cases {
            assert_eq!(error(text), message);
        }
        let e = error("alphabeta:depth=3:values=X=2");
        assert!(e.contains("'X' is not a piece letter"), "{e}");
        let e = error("alphabeta:depth=3:values=N3");
        assert!(e.contains("expected LETTER=VALUE"), "{e}");
        let e = error("alphabeta:deep");
        assert!(e.contains("cannot read option 'deep'"), "{e}");
        let e = error("minimax:depth=3");
        assert!(
            e.contains("unknown kind 'minimax'") && e.contains("alphabeta"),
            "{e}"
        );
    }

    /// Numbers that would overflow a deadline or read as a mate are refused with their range;
    /// the bounds themselves are accepted.
    #[test]
    fn numbers_beyond_their_range_are_refused() {
        let error = |text: &str| match text.parse::<EngineSpec>() {
            Ok(spec) => panic!("'{text}' was accepted as {spec}"),
            Err(e) => e.to_string(),
        };
        let cases = [
            ("uci:/bin/cat:depth=1:timeout=18446744073709551615", "player 'uci:/bin/cat:depth=1:timeout=18446744073709551615': timeout must be 1 to 86400 seconds, got 18446744073709551615"),
            ("uci:sf:depth=1:timeout=9000000000000000000", "player 'uci:sf:depth=1:timeout=9000000000000000000': timeout must be 1 to 86400 seconds, got 9000000000000000000"),
            ("uci:sf:depth=1:Timeout=86401", "player 'uci:sf:depth=1:Timeout=86401': Timeout must be 1 to 86400 seconds, got 86401"),
            ("uci:sf:depth=1:timeout=0", "player 'uci:sf:depth=1:timeout=0': timeout must be 1 to 86400 seconds, got 0"),
            ("uci:sf:depth=1:timeout=1e3", "player 'uci:sf:depth=1:timeout=1e3': timeout must be a whole number of seconds, got '1e3'"),
            ("alphabeta:depth=2:values=Q=10001", "player 'alphabeta:depth=2:values=Q=10001': piece value 'Q=10001': must be 0 to 20 Pawns"),
            ("alphabeta:depth=2:values=Q=1e30", "player 'alphabeta:depth=2:values=Q=1e30': piece value 'Q=1e30': must be 0 to 20 Pawns"),
            ("alphabeta:depth=2:values=N=3,Q=-9", "player 'alphabeta:depth=2:values=N=3,Q=-9': piece value 'Q=-9': must be 0 to 20 Pawns"),
            ("alphabeta:depth=2:values=Q=20.01", "player 'alphabeta:depth=2:values=Q=20.01': piece value 'Q=20.01': must be 0 to 20 Pawns"),
            ("alphabeta:n.safetensors:depth=2:values=Q=-1", "player 'alphabeta:n.safetensors:depth=2:values=Q=-1': piece value 'Q=-1': must be 0 to 20 Pawns"),
            ("alphabeta:depth=2:mobility=100000", "player 'alphabeta:depth=2:mobility=100000': mobility must be -1 to 1 (Pawns per move), got 100000"),
            ("alphabeta:depth=2:mobility=1e30", "player 'alphabeta:depth=2:mobility=1e30': mobility must be -1 to 1 (Pawns per move), got 1e30"),
            ("alphabeta:depth=2:mobility=-1.5", "player 'alphabeta:depth=2:mobility=-1.5': mobility must be -1 to 1 (Pawns per move), got -1.5"),
        ];
        for (text, message) in cases {
            assert_eq!(error(text), message);
        }
        for text in [
            "uci:sf:depth=1:timeout=86400",
            "alphabeta:depth=2:values=Q=20,P=0",
            "alphabeta:depth=2:mobility=1",
            "alphabeta:depth=2:mobility=-1",
        ] {
            assert_eq!(parse(text).to_string(), text);
        }
    }

    /// A spec built in code (as `ninjazero values` builds its players) is checked when it is
    /// built, as a parsed one is when it is read.
    #[test]
    fn a_spec_built_in_code_is_checked_when_built() {
        let built = |config: AlphaBetaConfig| {
            let spec = EngineSpec::AlphaBeta {
                depth: Some(1),
                ms: None,
                config,
                network: None,
                pick: None,
                piece_squares: None,
                soft: None,
            };
            spec.build(Variant::Chess, tch::Device::Cpu, 0)
                .map(|engine| engine.name())
                .map_err(|e| e.to_string())
        };
        let mut config = AlphaBetaConfig::default();
        config.piece_values[Role::Queen] = -9.0;
        assert_eq!(
            built(config),
            Err(
                "player 'alphabeta:depth=1:values=Q=-9': piece value Q=-9 must be 0 to 20 Pawns"
                    .into()
            )
        );
        let mut config = AlphaBetaConfig::default();
        config.piece_values[Role::Rook] = f32::NAN;
        assert_eq!(
            built(config),
            Err(
                "player 'alphabeta:depth=1:values=R=NaN': piece value R=NaN must be 0 to 20 Pawns"
                    .into()
            )
        );
        let config = AlphaBetaConfig {
            mobility_weight: 2.5,
            ..AlphaBetaConfig::default()
        };
        assert_eq!(
            built(config),
            Err("player 'alphabeta:depth=1:mobility=2.5': mobility 2.5 must be -1 to 1 Pawns per move".into())
        );
        assert_eq!(
            built(AlphaBetaConfig::default()),
            Ok("alphabeta:depth=1".into())
        );
    }
}
