//! A run's settings: the presets, `run.toml`, and the check that a continued run keeps the
//! settings it was started with.

use crate::layout::CONFIG_KEY;
use crate::{PipelineError, Store, StoreError};
use ninjazero_model::Preset;
use ninjazero_rules::Variant;
use ninjazero_search::{EngineSpec, SearchConfig};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// How big a run is: the network, the games and simulations of each stage, the training
/// preset of the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PipelinePreset {
    /// Minutes on a laptop CPU: tiny network, few games.
    Demo,
    /// Hours on a CPU machine.
    Cpu,
    /// A GPU machine.
    Gpu,
    /// Seconds per generation: checks the machinery (tests, a cluster's set-up), learns
    /// nothing.
    Smoke,
}

impl PipelinePreset {
    pub const ALL: [PipelinePreset; 4] = [
        PipelinePreset::Demo,
        PipelinePreset::Cpu,
        PipelinePreset::Gpu,
        PipelinePreset::Smoke,
    ];

    /// `demo`, `cpu`, `gpu` or `smoke`: the name in `run.toml`, and the training preset it
    /// uses.
    pub fn name(self) -> &'static str {
        match self {
            PipelinePreset::Demo => "demo",
            PipelinePreset::Cpu => "cpu",
            PipelinePreset::Gpu => "gpu",
            PipelinePreset::Smoke => "smoke",
        }
    }
}

impl fmt::Display for PipelinePreset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A preset name that is not `demo`, `cpu` or `gpu`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown pipeline preset '{0}' (expected demo, cpu, gpu or smoke)")]
pub struct UnknownPreset(pub String);

impl FromStr for PipelinePreset {
    type Err = UnknownPreset;

    fn from_str(text: &str) -> Result<PipelinePreset, UnknownPreset> {
        PipelinePreset::ALL
            .into_iter()
            .find(|p| p.name() == text)
            .ok_or_else(|| UnknownPreset(text.to_string()))
    }
}

/// What a run learns, and so how its generations play.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelKind {
    /// A policy/value network that MCTS searches with (AlphaZero): `models/gen-NNNN.safetensors`.
    #[default]
    Network,
    /// A piece-square evaluation fitted to the games' results (`ninjazero fit-eval`) that
    /// alpha-beta searches with at [`EVALUATION_DEPTH`]: `models/gen-NNNN.eval.json`.
    /// Generation 0 is the first player; the CPU's shallow searches learn more this way
    /// (README, "A learnt evaluation for alpha-beta").
    Evaluation,
}

impl ModelKind {
    /// `network` or `evaluation`, as `run.toml` writes it.
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Network => "network",
            ModelKind::Evaluation => "evaluation",
        }
    }
}

/// The fixed depth at which a learnt evaluation plays its self-play and its arenas: the
/// depth the evaluation loop was measured at (README), affordable for 1,000 games a
/// generation on two cores.
pub const EVALUATION_DEPTH: u32 = 2;

/// The depth of the first player a learnt evaluation starts from (every piece worth one).
pub const COUNTING_DEPTH: u32 = 1;

/// Training windows of a learnt evaluation: the last two generations' games (README: wider
/// windows hold weaker players' games, which hurt while the loop still climbs), widened
/// after a held-back candidate (`stages::window_length`).
const EVALUATION_WINDOW: u32 = 2;

/// Arena pairs of a learnt evaluation's runs (but the smoke preset): fixed-depth alpha-beta
/// games cost little, and 200 games separate generations some 50 Elo apart.
const EVALUATION_ARENA_PAIRS: usize = 100;

/// Self-play games of a learnt evaluation's generation at least: a fit needs a few thousand
/// quiet positions, held out and fitted ([`ninjazero_train::piece_square::MIN_FIT_POSITIONS`] each).
const EVALUATION_MIN_GAMES: u64 = 100;

/// The square penalties a new evaluation run of `variant` tries when none is named: on
/// asylum the fits choose theirs by held-out loss (`auto`: its loop ends ahead head to head
/// on two run seeds of three and level on the third, README's lever table); elsewhere none,
/// the fitter's 0.1 (insane-ninja's loop ends behind with the choice on two run seeds of two).
fn default_square_penalties(variant: &str) -> Option<Vec<f64>> {
    (variant == Variant::Asylum.id()).then(|| ninjazero_train::AUTO_SQUARE_L2.to_vec())
}

/// The search value share of a new evaluation run of `variant` when none is named: half on
/// asylum and ninjutsu, from the first window without the first player's games (asylum's
/// loop ahead at 100 ms per move on three run seeds of three; ninjutsu's ahead head to head
/// at depth 2 and not behind at 100 ms, one run seed; README's lever table); elsewhere
/// none, the results alone (insane-ninja's loop ends behind with it).
fn default_value_target_mix(variant: &str) -> Option<f64> {
    [Variant::Asylum, Variant::Ninjutsu]
        .iter()
        .any(|v| v.id() == variant)
        .then_some(0.5)
}

/// Everything a run needs to continue: written once as `run.toml` in the run directory, and
/// read back by every later command (or worker) on that run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Variant id ([`Variant::id`]); [`RunConfig::variant`] parses it.
    pub variant: String,
    pub preset: PipelinePreset,
    /// Seed of everything random in the run: initial weights, self-play, arenas.
    pub seed: u64,
    /// Generations to train (counting from 1; generation 0 is the initial network). The one
    /// setting a continued run may change, to take the run further.
    pub generations: u32,
    /// The network's size.
    pub network: Preset,
    /// Self-play games per generation.
    pub selfplay_games: u64,
    /// Self-play games played at once (their leaves evaluated in one batch).
    pub concurrency: usize,
    /// The self-play search.
    pub search: SearchConfig,
    /// Training preset name ([`ninjazero_train::TrainConfig::preset`]).
    pub train: String,
    /// Arena games are played in pairs (each opening once with each colour).
    pub arena_pairs: usize,
    /// Simulations per move of the arena's MCTS players.
    pub arena_simulations: u64,
    /// Self-play generations whose data the trainer reads.
    pub window_generations: u32,
    /// Self-play shards K per generation: the jobs of a cluster's self-play array (each
    /// plays `ceil(selfplay_games / K)` games).
    #[serde(default = "one")]
    pub selfplay_shards: u32,
    /// Shards per arena: its pairs are split among this many jobs.
    #[serde(default = "one")]
    pub arena_shards: u32,
    /// The player of generation 0's games (an engine spec such as
    /// `alphabeta:depth=1:values=P=1,N=1,…`) instead of the model-free MCTS: the first
    /// network learns to imitate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_player: Option<String>,
    /// Whether the trainings mix the first player's search values into the value target
    /// ([`ninjazero_train::TrainConfig::player_values`]), as the root values of MCTS
    /// games are. Runs stored before the setting existed read `false`.
    #[serde(default)]
    pub player_values: bool,
    /// Generation 0's self-play games when a first player plays them, instead of
    /// `selfplay_games`: a player's games cost little beside a network's, and a first
    /// network imitating a strong player learns from as many as the run can afford
    /// (README: 15,000 of a learnt evaluation's games on Asylum Chess).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_player_games: Option<u64>,
    /// The training preset ([`ninjazero_train::TrainConfig::preset`]) of a network trained
    /// from generation 0 on the first player's games, instead of `train`: e.g. `imitate`,
    /// many passes over every position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_train: Option<String>,
    /// A wall-time budget in hours: generations are added while the next one is expected to
    /// end in time ([`crate::next_generation_fits`]), and `generations` counts those decided
    /// so far. Like `generations`, a continued run may change it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hours: Option<f64>,
    /// What the run learns. Runs stored before the setting existed read `network`.
    #[serde(default)]
    pub model: ModelKind,
    /// The square penalties a learnt evaluation's fits try, the one with the lowest
    /// held-out loss kept ([`ninjazero_train::FitConfig::square_l2`]); none: the fitter's
    /// default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub square_l2: Option<Vec<f64>>,
    /// The share of the player's search value in a learnt evaluation's fitted targets
    /// ([`ninjazero_train::FitConfig::value_target_mix`]); none: the results alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_target_mix: Option<f64>,
}

fn one() -> u32 {
    1
}

impl RunConfig {
    /// The settings of `preset`; `generations` defaults to the preset's.
    pub fn new(
        variant: Variant,
        preset: PipelinePreset,
        seed: u64,
        generations: Option<u32>,
    ) -> RunConfig {
        let (network, games, concurrency, sims, cheap, pairs, arena_sims, default_generations) =
            match preset {
                PipelinePreset::Demo => (Preset::Tiny, 1000, 256, 32, 8, 16, 128, 2),
                PipelinePreset::Cpu => (Preset::Cpu, 1000, 256, 32, 8, 16, 128, 10),
                PipelinePreset::Gpu => (Preset::Gpu, 8192, 1024, 400, 100, 100, 400, 30),
                PipelinePreset::Smoke => (Preset::Tiny, 16, 8, 8, 2, 2, 8, 2),
            };
        RunConfig {
            variant: variant.id().to_string(),
            preset,
            seed,
            generations: generations.unwrap_or(default_generations),
            network,
            selfplay_games: games,
            concurrency,
            search: SearchConfig {
                simulations: sims,
                cheap_simulations: cheap,
                max_plies: match preset {
                    PipelinePreset::Demo => 120,
                    PipelinePreset::Smoke => 40,
                    PipelinePreset::Cpu | PipelinePreset::Gpu => 300,
                },
                // Measured on the demo (README's lever table); the `cpu` preset is the demo's
                // recipe with the larger network, not yet measured on the GPU preset.
                repetition_penalty: match preset {
                    PipelinePreset::Demo | PipelinePreset::Cpu => 0.5,
                    _ => 0.0,
                },
                ..SearchConfig::default()
            },
            train: preset.name().to_string(),
            arena_pairs: pairs,
            arena_simulations: arena_sims,
            window_generations: 4,
            selfplay_shards: 1,
            arena_shards: 1,
            first_player: None,
            player_values: false,
            first_player_games: None,
            first_train: None,
            hours: None,
            model: ModelKind::Network,
            square_l2: None,
            value_target_mix: None,
        }
    }

    /// These settings for a run that learns a piece-square evaluation ([`ModelKind::Evaluation`]):
    /// generation 0 is the first player (alpha-beta at [`COUNTING_DEPTH`] with every piece
    /// worth one, unless one is named), each later generation alpha-beta with its fitted
    /// evaluation at [`EVALUATION_DEPTH`], fitted to the last two generations' games (four
    /// after a held-back candidate), trying the variant's square penalties and taking its
    /// search value share unless they are named ([`default_square_penalties`],
    /// [`default_value_target_mix`]).
    pub fn learning_an_evaluation(self) -> RunConfig {
        let smoke = self.preset == PipelinePreset::Smoke;
        RunConfig {
            model: ModelKind::Evaluation,
            square_l2: self
                .square_l2
                .or_else(|| default_square_penalties(&self.variant)),
            value_target_mix: self
                .value_target_mix
                .or_else(|| default_value_target_mix(&self.variant)),
            window_generations: EVALUATION_WINDOW,
            first_player: self
                .first_player
                .or_else(|| Some(EngineSpec::alphabeta_counting(COUNTING_DEPTH).to_string())),
            arena_pairs: if smoke {
                self.arena_pairs
            } else {
                self.arena_pairs.max(EVALUATION_ARENA_PAIRS)
            },
            selfplay_games: self.selfplay_games.max(EVALUATION_MIN_GAMES),
            ..self
        }
    }

    /// Self-play games of generation `generation`: [`RunConfig::first_player_games`] for
    /// the first player's, else [`RunConfig::selfplay_games`].
    pub fn selfplay_games_of(&self, generation: u32) -> u64 {
        match self.first_player_games {
            Some(games) if generation == 0 && self.first_player.is_some() => games,
            _ => self.selfplay_games,
        }
    }

    /// Games per self-play shard M of generation `generation`: its games over the run's
    /// shards, rounded up.
    pub fn games_per_shard(&self, generation: u32) -> u64 {
        self.selfplay_games_of(generation)
            .div_ceil(u64::from(self.selfplay_shards.max(1)))
    }

    /// The run's variant.
    pub fn variant(&self) -> Result<Variant, PipelineError> {
        Ok(self.variant.parse()?)
    }

    /// Stores the settings as the run's `run.toml` (replacing it: a run may be extended).
    pub fn save_to(&self, store: &Store) -> Result<(), PipelineError> {
        let text =
            toml::to_string_pretty(self).map_err(|e| PipelineError::Encode(e.to_string()))?;
        Ok(store.put(CONFIG_KEY, text.into_bytes())?)
    }

    /// The run's stored settings.
    pub fn load_from(store: &Store) -> Result<RunConfig, PipelineError> {
        RunConfig::stored(store)?.ok_or_else(|| RunConfig::no_run_here(store))
    }

    /// The error for a store that holds no run's settings.
    pub fn no_run_here(store: &Store) -> PipelineError {
        PipelineError::Manifest {
            key: format!("{}/{CONFIG_KEY}", store.url()),
            reason: "no run here (start one with `ninjazero pipeline`)".to_string(),
        }
    }

    /// The run's stored settings, if it has any.
    fn stored(store: &Store) -> Result<Option<RunConfig>, PipelineError> {
        let bytes = match store.get(CONFIG_KEY) {
            Ok(bytes) => bytes,
            Err(StoreError::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let location = format!("{}/{CONFIG_KEY}", store.url());
        let text = String::from_utf8(bytes).map_err(|e| PipelineError::Manifest {
            key: location.clone(),
            reason: e.to_string(),
        })?;
        let config: RunConfig =
            toml::from_str(&text).map_err(|error| PipelineError::BadConfig {
                path: PathBuf::from(&location),
                error,
            })?;
        config
            .validate()
            .map_err(|reason| PipelineError::Manifest {
                key: location,
                reason,
            })?;
        Ok(Some(config))
    }

    /// Every number of the settings within the range the command line allows, so that an
    /// edited `run.toml` is refused where it is read rather than failing (or training
    /// nothing) stages later.
    pub fn validate(&self) -> Result<(), String> {
        fn within<T: PartialOrd + std::fmt::Display>(
            name: &str,
            value: T,
            low: T,
            high: T,
        ) -> Result<(), String> {
            if value < low || value > high {
                return Err(format!("{name} must be {low} to {high}, got {value}"));
            }
            Ok(())
        }
        within("generations", self.generations, 1, MAX_GENERATIONS)?;
        within(
            "selfplay_games",
            self.selfplay_games,
            1,
            ninjazero_selfplay::MAX_GAMES,
        )?;
        within(
            "concurrency",
            self.concurrency,
            ninjazero_selfplay::MIN_CONCURRENCY,
            ninjazero_selfplay::MAX_CONCURRENCY,
        )?;
        within(
            "arena_pairs",
            self.arena_pairs,
            1,
            ninjazero_arena::MAX_PAIRS,
        )?;
        within(
            "arena_simulations",
            self.arena_simulations,
            1,
            u64::from(ninjazero_selfplay::MAX_SIMULATIONS),
        )?;
        within(
            "window_generations",
            self.window_generations,
            1,
            MAX_GENERATIONS,
        )?;
        within(
            "selfplay_shards",
            self.selfplay_shards,
            1,
            MAX_SELFPLAY_SHARDS,
        )?;
        within("arena_shards", self.arena_shards, 1, MAX_ARENA_SHARDS)?;
        if let Some(games) = self.first_player_games {
            within(
                "first_player_games",
                games,
                1,
                ninjazero_selfplay::MAX_GAMES,
            )?;
        }
        if let Some(preset) = &self.first_train {
            ninjazero_train::TrainConfig::preset_named(preset)
                .map_err(|reason| format!("first_train: {reason}"))?;
        }
        if let Some(penalties) = &self.square_l2 {
            ninjazero_train::SquarePenalties::check(penalties)
                .map_err(|reason| format!("square_l2: {reason}"))?;
        }
        if let Some(mix) = self.value_target_mix {
            if !(0.0..=1.0).contains(&mix) {
                return Err(format!(
                    "value_target_mix must be a number from 0 to 1, got {mix}"
                ));
            }
        }
        if let Some(h) = self.hours {
            if !(h > 0.0 && h <= MAX_HOURS) {
                return Err(format!(
                    "hours must be a number above 0 and at most {MAX_HOURS}, got {h}"
                ));
            }
        }
        self.search
            .validate()
            .map_err(|reason| format!("[search] {reason}"))
    }
}

/// The most generations a run may have.
pub const MAX_GENERATIONS: u32 = 1000;
/// The most self-play shards (a Slurm array's tasks) per generation.
pub const MAX_SELFPLAY_SHARDS: u32 = 100_000;
/// The most shards per arena.
pub const MAX_ARENA_SHARDS: u32 = 10_000;

/// The settings of `run.toml` a user chooses; the others follow from the preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    Variant,
    Preset,
    Seed,
    SelfplayShards,
    ArenaShards,
    FirstPlayer,
    PlayerValues,
    FirstPlayerGames,
    FirstTrain,
    Model,
    SquareL2,
    ValueTargetMix,
}

impl Setting {
    pub const ALL: [Setting; 12] = [
        Setting::Variant,
        Setting::Preset,
        Setting::Seed,
        Setting::SelfplayShards,
        Setting::ArenaShards,
        Setting::FirstPlayer,
        Setting::PlayerValues,
        Setting::FirstPlayerGames,
        Setting::FirstTrain,
        Setting::Model,
        Setting::SquareL2,
        Setting::ValueTargetMix,
    ];

    /// The setting's key in `run.toml` (also the pipeline command's option).
    pub fn key(self) -> &'static str {
        match self {
            Setting::Variant => "variant",
            Setting::Preset => "preset",
            Setting::Seed => "seed",
            Setting::SelfplayShards => "selfplay_shards",
            Setting::ArenaShards => "arena_shards",
            Setting::FirstPlayer => "first_player",
            Setting::PlayerValues => "player_values",
            Setting::FirstPlayerGames => "first_player_games",
            Setting::FirstTrain => "first_train",
            Setting::Model => "model",
            Setting::SquareL2 => "square_l2",
            Setting::ValueTargetMix => "value_target_mix",
        }
    }
}

/// A chosen setting whose stored value differs from the one asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingDifference {
    pub setting: Setting,
    /// The value in `run.toml`, as written there.
    pub stored: String,
    pub given: String,
}

impl fmt::Display for SettingDifference {
    /// `seed 0 → 5`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} → {}", self.setting.key(), self.stored, self.given)
    }
}

/// The run's settings. If the run has a `run.toml`, they are the stored ones, which each
/// setting in `chosen` must agree with (`wanted` holds the values asked for; the settings
/// not chosen take the stored values): else [`PipelineError::OtherSettings`] lists every
/// difference. Without `run.toml`, `wanted` is stored and returned. `reach`, when given,
/// replaces how far the stored run goes (and is saved): a run may be taken further.
pub fn load_or_create(
    store: &Store,
    wanted: &RunConfig,
    chosen: &[Setting],
    reach: Option<Reach>,
) -> Result<RunConfig, PipelineError> {
    let Some(stored) = RunConfig::stored(store)? else {
        // A stored run's settings agreed with this when it was made; changes are refused.
        let first_player_settings = [
            ("--player-values true", wanted.player_values),
            ("--first-player-games", wanted.first_player_games.is_some()),
            ("--first-train", wanted.first_train.is_some()),
        ];
        if let (None, Some(option)) = (&wanted.first_player, given(&first_player_settings)) {
            return Err(PipelineError::WithoutFirstPlayer(option));
        }
        let network_settings = [
            ("--player-values true", wanted.player_values),
            ("--first-train", wanted.first_train.is_some()),
        ];
        if let (ModelKind::Evaluation, Some(option)) = (wanted.model, given(&network_settings)) {
            return Err(PipelineError::WithoutNetwork(option));
        }
        let evaluation_settings = [
            ("--square-l2", wanted.square_l2.is_some()),
            ("--value-target-mix", wanted.value_target_mix.is_some()),
        ];
        if let (ModelKind::Network, Some(option)) = (wanted.model, given(&evaluation_settings)) {
            return Err(PipelineError::WithoutEvaluation(option));
        }
        wanted.save_to(store)?;
        return Ok(wanted.clone());
    };
    let differences = differences(&stored, wanted, chosen)?;
    if !differences.is_empty() {
        return Err(PipelineError::OtherSettings {
            path: PathBuf::from(format!("{}/{CONFIG_KEY}", store.url())),
            differences,
        });
    }
    let reached = match reach {
        Some(Reach::Generations(generations)) => RunConfig {
            generations,
            hours: None,
            ..stored.clone()
        },
        Some(Reach::Hours(hours)) => RunConfig {
            hours: Some(hours),
            ..stored.clone()
        },
        None => stored.clone(),
    };
    if reached != stored {
        reached.save_to(store)?;
    }
    Ok(reached)
}

/// The first option of `options` (each with whether it was given) that was given.
fn given(options: &[(&'static str, bool)]) -> Option<&'static str> {
    options
        .iter()
        .find(|(_, given)| *given)
        .map(|(option, _)| *option)
}

/// How far to take a run: a number of generations, or as many as a wall-time budget in
/// hours allows ([`RunConfig::hours`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reach {
    Generations(u32),
    Hours(f64),
}

/// The largest budget a run may be given, in hours (a year).
pub const MAX_HOURS: f64 = 8760.0;

/// The settings among `settings` whose values differ between two configurations, with the
/// values as `run.toml` writes them.
pub fn differences(
    stored: &RunConfig,
    given: &RunConfig,
    settings: &[Setting],
) -> Result<Vec<SettingDifference>, PipelineError> {
    let table = |config: &RunConfig| {
        toml::Value::try_from(config).map_err(|e| PipelineError::Encode(e.to_string()))
    };
    let (stored, given) = (table(stored)?, table(given)?);
    let show = |value: Option<&toml::Value>| match value {
        Some(toml::Value::String(text)) => text.clone(),
        Some(value) => value.to_string(),
        None => "(none)".to_string(),
    };
    Ok(settings
        .iter()
        .filter(|setting| stored.get(setting.key()) != given.get(setting.key()))
        .map(|&setting| SettingDifference {
            setting,
            stored: show(stored.get(setting.key())),
            given: show(given.get(setting.key())),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stores `config` as `run.toml`, then each edit of it (a line replaced): refused where it
    /// is read, with the message naming the setting; then the unedited file again.
    fn assert_edits_refused(config: &RunConfig, edits: &[(&str, &str, &str)]) {
        let tmp = ninjazero_testkit::temp_dir();
        let store = Store::open(tmp.path().to_str().unwrap()).unwrap();
        config.save_to(&store).unwrap();
        let text = String::from_utf8(store.get(CONFIG_KEY).unwrap()).unwrap();
        for (line, edited, named) in edits {
            assert!(text.contains(line), "{line} not in {text}");
            store
                .put(CONFIG_KEY, text.replace(line, edited).into_bytes())
                .unwrap();
            let refused = RunConfig::load_from(&store).unwrap_err().to_string();
            assert!(refused.contains(named), "{edited}: {refused}");
        }
        store.put(CONFIG_KEY, text.into_bytes()).unwrap();
        assert_eq!(&RunConfig::load_from(&store).unwrap(), config);
    }

    #[test]
    fn an_edited_run_toml_with_a_number_out_of_range_is_refused_by_name() {
        let config = RunConfig::new(Variant::Chess, PipelinePreset::Smoke, 0, None);
        let edits = [
            (
                "generations = 2",
                "generations = 0",
                "generations must be 1 to 1000, got 0",
            ),
            (
                "arena_shards = 1",
                "arena_shards = 0",
                "arena_shards must be 1 to 10000",
            ),
            (
                "selfplay_shards = 1",
                "selfplay_shards = 0",
                "selfplay_shards must be 1",
            ),
            (
                "concurrency = 8",
                "concurrency = 0",
                "concurrency must be 2 to 65536",
            ),
            (
                "selfplay_games = 16",
                "selfplay_games = 0",
                "selfplay_games must be 1",
            ),
            (
                "arena_pairs = 2",
                "arena_pairs = 0",
                "arena_pairs must be 1",
            ),
        ];
        assert_edits_refused(&config, &edits);
    }

    #[test]
    fn an_edited_first_players_setting_is_refused_by_name() {
        let config = RunConfig {
            first_player: Some("alphabeta:depth=2".to_string()),
            first_player_games: Some(15_000),
            first_train: Some("imitate".to_string()),
            ..RunConfig::new(Variant::Chess, PipelinePreset::Demo, 0, None)
        };
        let edits = [
            (
                "first_player_games = 15000",
                "first_player_games = 0",
                "first_player_games must be 1 to 1000000000, got 0",
            ),
            (
                "first_train = \"imitate\"",
                "first_train = \"huge\"",
                "first_train: unknown training preset 'huge'",
            ),
        ];
        assert_edits_refused(&config, &edits);
    }

    #[test]
    fn an_edited_square_penalty_or_value_target_mix_is_refused_by_name() {
        let config = RunConfig {
            square_l2: Some(vec![0.01, 0.1]),
            value_target_mix: Some(0.5),
            ..RunConfig::new(Variant::Chess, PipelinePreset::Smoke, 0, None)
                .learning_an_evaluation()
        };
        let edits = [
            (
                "value_target_mix = 0.5",
                "value_target_mix = 1.5",
                "value_target_mix must be a number from 0 to 1, got 1.5",
            ),
            (
                "value_target_mix = 0.5",
                "value_target_mix = nan",
                "value_target_mix must be a number from 0 to 1, got NaN",
            ),
            (
                "    0.1,\n]",
                "    -1.0,\n]",
                "square_l2: a square penalty must be a number from 0 to 100, got -1",
            ),
            (
                "square_l2 = [\n    0.01,\n    0.1,\n]",
                "square_l2 = []",
                "square_l2: expected 1 to 16 square penalties, got 0",
            ),
        ];
        assert_edits_refused(&config, &edits);
    }

    #[test]
    fn asylums_evaluation_runs_choose_their_square_penalty_unless_one_is_named() {
        let evaluation = |variant, square_l2| {
            RunConfig {
                square_l2,
                ..RunConfig::new(variant, PipelinePreset::Cpu, 0, None)
            }
            .learning_an_evaluation()
            .square_l2
        };
        let auto = Some(ninjazero_train::AUTO_SQUARE_L2.to_vec());
        assert_eq!(evaluation(Variant::Asylum, None), auto);
        assert_eq!(
            evaluation(Variant::Asylum, Some(vec![0.1])),
            Some(vec![0.1])
        );
        for variant in [Variant::InsaneNinja, Variant::Chess] {
            assert_eq!(evaluation(variant, None), None);
            assert_eq!(evaluation(variant, auto.clone()), auto);
        }
        assert_eq!(
            RunConfig::new(Variant::Asylum, PipelinePreset::Cpu, 0, None).square_l2,
            None
        );
    }

    #[test]
    fn asylum_and_ninjutsu_evaluation_runs_take_half_the_search_value_unless_a_share_is_named() {
        let evaluation = |variant, value_target_mix| {
            RunConfig {
                value_target_mix,
                ..RunConfig::new(variant, PipelinePreset::Cpu, 0, None)
            }
            .learning_an_evaluation()
            .value_target_mix
        };
        for variant in [Variant::Asylum, Variant::Ninjutsu] {
            assert_eq!(evaluation(variant, None), Some(0.5));
            assert_eq!(evaluation(variant, Some(0.0)), Some(0.0));
        }
        for variant in [Variant::InsaneNinja, Variant::Palace, Variant::Chess] {
            assert_eq!(evaluation(variant, None), None);
            assert_eq!(evaluation(variant, Some(0.5)), Some(0.5));
        }
        assert_eq!(
            RunConfig::new(Variant::Asylum, PipelinePreset::Cpu, 0, None).value_target_mix,
            None
        );
    }

    #[test]
    fn a_network_run_refuses_square_penalties() {
        let tmp = ninjazero_testkit::temp_dir();
        let store = Store::open(tmp.path().to_str().unwrap()).unwrap();
        let network = RunConfig {
            square_l2: Some(vec![0.1]),
            ..RunConfig::new(Variant::Chess, PipelinePreset::Smoke, 0, None)
        };
        let refused = load_or_create(&store, &network, &Setting::ALL, None).unwrap_err();
        assert!(refused.to_string().contains("--square-l2"), "{refused}");
        assert!(RunConfig::stored(&store).unwrap().is_none());
    }

    #[test]
    fn a_run_refuses_other_chosen_settings_and_takes_more_generations() {
        let tmp = ninjazero_testkit::temp_dir();
        let store = Store::open(tmp.path().to_str().unwrap()).unwrap();
        let chess = |seed, generations| {
            RunConfig::new(Variant::Chess, PipelinePreset::Demo, seed, generations)
        };
        let created = load_or_create(&store, &chess(0, None), &Setting::ALL, None).unwrap();
        assert_eq!(created, chess(0, None));
        assert_eq!(RunConfig::load_from(&store).unwrap(), created);

        let refused = load_or_create(&store, &chess(5, None), &Setting::ALL, None).unwrap_err();
        let PipelineError::OtherSettings { differences, .. } = &refused else {
            panic!("{refused}");
        };
        assert_eq!(differences.len(), 1, "{refused}");
        assert_eq!(differences[0].to_string(), "seed 0 → 5");
        // A setting not chosen takes the stored value.
        let seed_not_chosen = [Setting::Variant, Setting::Preset];
        assert_eq!(
            load_or_create(&store, &chess(5, None), &seed_not_chosen, None).unwrap(),
            created
        );
        let extended =
            load_or_create(&store, &chess(0, None), &[], Some(Reach::Generations(7))).unwrap();
        assert_eq!(extended.generations, 7);
        assert_eq!(RunConfig::load_from(&store).unwrap(), extended);
        // A budget keeps the generations decided so far; a count replaces the budget.
        let budgeted =
            load_or_create(&store, &chess(0, None), &[], Some(Reach::Hours(1.5))).unwrap();
        assert_eq!((budgeted.generations, budgeted.hours), (7, Some(1.5)));
        assert_eq!(RunConfig::load_from(&store).unwrap(), budgeted);
        let counted =
            load_or_create(&store, &chess(0, None), &[], Some(Reach::Generations(8))).unwrap();
        assert_eq!((counted.generations, counted.hours), (8, None));
    }

    #[test]
    fn presets_read_their_names() {
        for preset in PipelinePreset::ALL {
            assert_eq!(preset.name().parse::<PipelinePreset>(), Ok(preset));
        }
        assert!("fast".parse::<PipelinePreset>().is_err());
    }
}
