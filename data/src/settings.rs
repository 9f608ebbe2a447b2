//! How a dataset's games were made, stored as versioned JSON in every file's metadata
//! (`ninjazero.search_settings`): a restart adds games only to a dataset made the same way,
//! and a reader can tell MCTS games (with search policies) from a player's games.
//!
//! The MCTS settings live here, beside the file format that records them, so that the
//! search crates and the dataset share one type.
//!
//! ```
//! use ninjazero_data::settings::{GameSettings, SearchConfig};
//!
//! let settings = GameSettings::Mcts { search: SearchConfig::default() };
//! let json = settings.to_json();
//! assert!(json.starts_with(r#"{"version":1,"kind":"mcts""#));
//! assert_eq!(GameSettings::from_json(&json), Ok(settings));
//! ```

use serde::{Deserialize, Serialize};

/// The version written with the settings. Files written before versions existed hold one
/// of three unversioned shapes, which [`GameSettings::from_json`] still reads.
pub const SETTINGS_VERSION: u32 = 1;

/// How the games of a dataset were made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum GameSettings {
    /// Batched MCTS self-play (the scheduler of `ninjazero-selfplay`).
    Mcts { search: SearchConfig },
    /// One player on both sides after random opening plies (`selfplay --player`): no search
    /// policies, games at `max_plies` drawn.
    Player {
        /// The player's spec, e.g. `alphabeta:depth=2`.
        player: String,
        opening_plies: usize,
        max_plies: u32,
        /// Whether each chosen position's root value is the player's own search value
        /// (its score as an expected score, side to move's view). Files written before
        /// the player's scores were kept store 0 there and read as `false`.
        #[serde(default)]
        search_values: bool,
    },
    /// Random legal moves (synthetic data for tests and benchmarks).
    Synthetic,
}

/// The stored form: the version beside the settings' own fields.
#[derive(Serialize)]
struct Versioned<'s> {
    version: u32,
    #[serde(flatten)]
    settings: &'s GameSettings,
}

#[derive(Deserialize)]
struct VersionedOwned {
    #[serde(flatten)]
    settings: GameSettings,
}

/// The shapes written before the settings had a version: `selfplay`'s, the pipeline's and
/// `selfplay --player`'s, and the trainer's synthetic data.
#[derive(Deserialize)]
#[serde(untagged)]
enum Unversioned {
    Selfplay {
        search: SearchConfig,
    },
    Pipeline(SearchConfig),
    Player {
        player: String,
        opening_plies: usize,
        max_plies: u32,
    },
    Synthetic {
        #[serde(rename = "synthetic")]
        _description: serde::de::IgnoredAny,
    },
}

impl GameSettings {
    /// The stored JSON: `{"version":1,"kind":...,...}`.
    pub fn to_json(&self) -> String {
        let versioned = Versioned {
            version: SETTINGS_VERSION,
            settings: self,
        };
        serde_json::to_string(&versioned).expect("settings are plain data")
    }

    /// The settings in which `self` and `other` differ, as `key=value` of each side (keys
    /// of nested settings joined by dots), e.g. `(["search.simulations=24"],
    /// ["search.simulations=25"])`.
    pub fn differences(&self, other: &GameSettings) -> (Vec<String>, Vec<String>) {
        let (mine, theirs) = (leaves(self), leaves(other));
        let differing = |a: &[(String, String)], b: &[(String, String)]| -> Vec<String> {
            a.iter()
                .filter(|leaf| !b.contains(leaf))
                .map(|(key, value)| format!("{key}={value}"))
                .collect()
        };
        (differing(&mine, &theirs), differing(&theirs, &mine))
    }

    /// Reads stored settings of any version so far; an error says what is wrong.
    pub fn from_json(text: &str) -> Result<GameSettings, String> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let Some(version) = value.get("version") else {
            return match serde_json::from_value(value) {
                Ok(Unversioned::Selfplay { search } | Unversioned::Pipeline(search)) => {
                    Ok(GameSettings::Mcts { search })
                }
                Ok(Unversioned::Player {
                    player,
                    opening_plies,
                    max_plies,
                }) => Ok(GameSettings::Player {
                    player,
                    opening_plies,
                    max_plies,
                    search_values: false,
                }),
                Ok(Unversioned::Synthetic { .. }) => Ok(GameSettings::Synthetic),
                Err(_) => Err("unversioned settings of an unknown shape".to_string()),
            };
        };
        match version.as_u64() {
            Some(v) if v == u64::from(SETTINGS_VERSION) => {
                serde_json::from_value::<VersionedOwned>(value)
                    .map(|stored| stored.settings)
                    .map_err(|e| format!("settings version {v}: {e}"))
            }
            Some(v) if v > u64::from(SETTINGS_VERSION) => Err(format!(
                "settings version {v}, written by a newer NinjaZero (this one reads up to {SETTINGS_VERSION})"
            )),
            _ => Err(format!("bad settings version {version}")),
        }
    }
}

/// How the root chooses which move to search next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RootSearch {
    /// PUCT with Dirichlet noise (AlphaZero).
    Puct,
    /// Gumbel top-k sampling with Sequential Halving (Danihelka et al., ICLR 2022): better
    /// policy targets at low simulation counts.
    Gumbel,
}

impl std::str::FromStr for RootSearch {
    type Err = String;
    fn from_str(text: &str) -> Result<RootSearch, String> {
        match text {
            "puct" => Ok(RootSearch::Puct),
            "gumbel" => Ok(RootSearch::Gumbel),
            _ => Err(format!(
                "unknown root search '{text}' (expected puct or gumbel)"
            )),
        }
    }
}

/// The range of [`SearchConfig::policy_temperature`]: below it the priors collapse onto
/// one move, above it they are uniform for every purpose.
pub const MIN_POLICY_TEMPERATURE: f32 = 0.1;
pub const MAX_POLICY_TEMPERATURE: f32 = 10.0;

/// The range of [`SearchConfig::fpu_reduction`]: values lie in [-1, 1], so a reduction
/// of 2 already values every unvisited move as lost.
pub const MIN_FPU_REDUCTION: f32 = -2.0;
pub const MAX_FPU_REDUCTION: f32 = 2.0;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchConfig {
    pub root_search: RootSearch,
    /// Simulations of a full search (its policy is a training target).
    pub simulations: u32,
    /// Simulations of a cheap search (playout cap randomization, KataGo).
    pub cheap_simulations: u32,
    /// Share of moves that get a full search.
    pub full_search_probability: f64,
    /// Exploration constant of PUCT.
    pub c_puct: f32,
    /// First-play urgency: an unvisited child is valued at the parent's value minus this.
    pub fpu_reduction: f32,
    /// Dirichlet noise at the root of full PUCT searches: alpha = total / legal moves.
    pub dirichlet_alpha_total: f64,
    pub dirichlet_epsilon: f32,
    /// Moves are sampled in proportion to visits for this many plies; after them, at
    /// [`SearchConfig::temperature_endgame`].
    pub temperature_plies: u32,
    /// The temperature after `temperature_plies`: moves sampled in proportion to
    /// visits^(1/T) (lc0's endgame temperature), so that games between two copies of one
    /// network do not settle into repeating the same moves; 0 plays the most visited move.
    #[serde(default)]
    pub temperature_endgame: f32,
    /// What moving into a threefold repetition costs the mover inside the search: the
    /// repetition is scored `-repetition_penalty` for the side that completes it instead of
    /// a draw (0). Self-play games of one network against itself otherwise settle into
    /// repeating moves whenever its value head calls the position even; the game itself
    /// is still a draw, and its training targets are unchanged. 0 scores it a draw.
    #[serde(default)]
    pub repetition_penalty: f32,
    /// Capture-resolved leaves: before a leaf's network value is backed up, a quiescence
    /// search over captures alone (every piece counted as 1, which the rules alone give)
    /// finds the pieces the side to move wins by force, and each adds this much to the
    /// log-odds of the leaf's expected score. A few hundred simulations of a young network
    /// do not see a piece left hanging two plies down; this does, at the cost of a few
    /// move generations per leaf. 0 leaves the network's value as it is.
    #[serde(default)]
    pub capture_logit: f32,
    /// The network's priors are flattened to `p^(1/T)` (renormalised) before the search
    /// uses them: lc0's policy softmax temperature. Above 1 a few hundred simulations look
    /// at more of the moves a small network ranks just below its favourite; 1 keeps the
    /// priors as they are.
    #[serde(default = "one")]
    pub policy_temperature: f32,
    /// Actions considered by the Gumbel root (top-k).
    pub gumbel_actions: usize,
    /// Resign when the root value stays below this for `resign_consecutive` own moves.
    pub resign_threshold: f32,
    pub resign_consecutive: u32,
    /// Share of games with resignation disabled (to measure false resignations).
    pub resign_disabled_fraction: f64,
    /// Games longer than this are adjudicated on the root value (or drawn, see below).
    pub max_plies: u32,
    /// Whether a game at `max_plies` is adjudicated on the mover's root value; when false
    /// it is a draw (for experiments that must not lean on the evaluator's judgement).
    #[serde(default = "adjudicate_by_default")]
    pub adjudicate_on_value: bool,
}

fn adjudicate_by_default() -> bool {
    true
}

fn one() -> f32 {
    1.0
}

impl SearchConfig {
    /// Checks every number against the range the search can work with (settings read from
    /// a file a person may edit); the first one out of range, named.
    pub fn validate(&self) -> Result<(), String> {
        let whole = |name: &str, value: u64, min: u64| {
            if value < min {
                Err(format!("{name} must be at least {min}, got {value}"))
            } else {
                Ok(())
            }
        };
        let real = |name: &str, value: f64, min: f64, max: f64| {
            if value.is_finite() && (min..=max).contains(&value) {
                Ok(())
            } else {
                Err(format!(
                    "{name} must be a number from {min} to {max}, got {value}"
                ))
            }
        };
        whole("simulations", self.simulations.into(), 1)?;
        whole("cheap_simulations", self.cheap_simulations.into(), 1)?;
        whole("gumbel_actions", self.gumbel_actions as u64, 1)?;
        whole("max_plies", self.max_plies.into(), 1)?;
        real(
            "full_search_probability",
            self.full_search_probability,
            0.0,
            1.0,
        )?;
        real("c_puct", self.c_puct.into(), 0.0, 100.0)?;
        real(
            "fpu_reduction",
            self.fpu_reduction.into(),
            MIN_FPU_REDUCTION.into(),
            MAX_FPU_REDUCTION.into(),
        )?;
        real(
            "dirichlet_alpha_total",
            self.dirichlet_alpha_total,
            1e-6,
            1e6,
        )?;
        real("dirichlet_epsilon", self.dirichlet_epsilon.into(), 0.0, 1.0)?;
        real(
            "temperature_endgame",
            self.temperature_endgame.into(),
            0.0,
            100.0,
        )?;
        real(
            "repetition_penalty",
            self.repetition_penalty.into(),
            0.0,
            1.0,
        )?;
        real("capture_logit", self.capture_logit.into(), 0.0, 10.0)?;
        real(
            "policy_temperature",
            self.policy_temperature.into(),
            MIN_POLICY_TEMPERATURE.into(),
            MAX_POLICY_TEMPERATURE.into(),
        )?;
        real("resign_threshold", self.resign_threshold.into(), -1.0, 1.0)?;
        real(
            "resign_disabled_fraction",
            self.resign_disabled_fraction,
            0.0,
            1.0,
        )
    }
}

impl Default for SearchConfig {
    fn default() -> SearchConfig {
        SearchConfig {
            root_search: RootSearch::Puct,
            simulations: 128,
            cheap_simulations: 32,
            full_search_probability: 0.25,
            c_puct: 1.5,
            fpu_reduction: 0.2,
            dirichlet_alpha_total: 10.0,
            dirichlet_epsilon: 0.25,
            temperature_plies: 20,
            temperature_endgame: 0.0,
            repetition_penalty: 0.0,
            capture_logit: 0.0,
            policy_temperature: 1.0,
            gumbel_actions: 16,
            resign_threshold: -0.9,
            resign_consecutive: 3,
            resign_disabled_fraction: 0.1,
            max_plies: 300,
            adjudicate_on_value: true,
        }
    }
}

/// Every scalar of the settings with its dotted key path.
fn leaves(settings: &GameSettings) -> Vec<(String, String)> {
    fn walk(prefix: &str, value: &serde_json::Value, out: &mut Vec<(String, String)>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, value) in map {
                    let path = if prefix.is_empty() {
                        key.clone()
                    } else {
                        format!("{prefix}.{key}")
                    };
                    walk(&path, value, out);
                }
            }
            scalar => out.push((prefix.to_string(), scalar.to_string())),
        }
    }
    let mut out = Vec::new();
    let value = serde_json::to_value(settings).expect("settings are plain data");
    walk("", &value, &mut out);
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn examples() -> [GameSettings; 3] {
        [
            GameSettings::Mcts {
                search: SearchConfig {
                    root_search: RootSearch::Gumbel,
                    simulations: 48,
                    ..SearchConfig::default()
                },
            },
            GameSettings::Player {
                player: "alphabeta:depth=2".to_string(),
                opening_plies: 4,
                max_plies: 200,
                search_values: true,
            },
            GameSettings::Synthetic,
        ]
    }

    #[test]
    fn search_settings_out_of_range_are_named() {
        assert_eq!(SearchConfig::default().validate(), Ok(()));
        let cases = [
            (
                SearchConfig {
                    simulations: 0,
                    ..SearchConfig::default()
                },
                "simulations must be at least 1, got 0",
            ),
            (
                SearchConfig {
                    repetition_penalty: 1.5,
                    ..SearchConfig::default()
                },
                "repetition_penalty must be a number from 0 to 1, got 1.5",
            ),
            (
                SearchConfig {
                    c_puct: f32::NAN,
                    ..SearchConfig::default()
                },
                "c_puct must be a number from 0 to 100, got NaN",
            ),
            (
                SearchConfig {
                    temperature_endgame: -1.0,
                    ..SearchConfig::default()
                },
                "temperature_endgame must be a number from 0 to 100, got -1",
            ),
        ];
        for (config, message) in cases {
            assert_eq!(config.validate(), Err(message.to_string()));
        }
    }

    #[test]
    fn every_kind_round_trips_with_its_version() {
        for settings in examples() {
            let json = settings.to_json();
            let value: serde_json::Value = serde_json::from_str(&json).unwrap();
            assert_eq!(value["version"], SETTINGS_VERSION, "{json}");
            assert_eq!(GameSettings::from_json(&json), Ok(settings));
        }
    }

    #[test]
    fn the_three_unversioned_shapes_are_still_read() {
        let search = SearchConfig {
            simulations: 32,
            cheap_simulations: 8,
            ..SearchConfig::default()
        };
        let config_json = serde_json::to_string(&search).unwrap();
        let mcts = GameSettings::Mcts {
            search: search.clone(),
        };
        // `selfplay` wrote {"search": config}; the pipeline wrote the config itself.
        let selfplay = format!(r#"{{"search":{config_json}}}"#);
        assert_eq!(GameSettings::from_json(&selfplay), Ok(mcts.clone()));
        assert_eq!(GameSettings::from_json(&config_json), Ok(mcts));
        let player = r#"{"player":"random","opening_plies":4,"max_plies":300}"#;
        assert_eq!(
            GameSettings::from_json(player),
            Ok(GameSettings::Player {
                player: "random".to_string(),
                opening_plies: 4,
                max_plies: 300,
                search_values: false,
            })
        );
        let synthetic = r#"{"synthetic":"random legal moves"}"#;
        assert_eq!(
            GameSettings::from_json(synthetic),
            Ok(GameSettings::Synthetic)
        );
    }

    #[test]
    fn differences_name_each_setting_on_both_sides() {
        let [mcts, player, _] = examples();
        let GameSettings::Mcts { search } = &mcts else {
            unreachable!()
        };
        let more = GameSettings::Mcts {
            search: SearchConfig {
                simulations: 49,
                c_puct: 2.0,
                ..search.clone()
            },
        };
        let (found, expected) = mcts.differences(&more);
        assert_eq!(found, ["search.c_puct=1.5", "search.simulations=48"]);
        assert_eq!(expected, ["search.c_puct=2.0", "search.simulations=49"]);
        assert_eq!(mcts.differences(&mcts), (vec![], vec![]));
        let (found, expected) = mcts.differences(&player);
        assert!(found.contains(&r#"kind="mcts""#.to_string()), "{found:?}");
        assert!(
            expected.contains(&r#"kind="player""#.to_string()),
            "{expected:?}"
        );
    }

    #[test]
    fn unreadable_settings_say_why() {
        let newer = r#"{"version":2,"kind":"mcts"}"#;
        assert!(GameSettings::from_json(newer)
            .unwrap_err()
            .contains("newer NinjaZero"));
        assert!(GameSettings::from_json("{")
            .unwrap_err()
            .starts_with("not JSON"));
        assert_eq!(
            GameSettings::from_json(r#"{"visits":64}"#),
            Err("unversioned settings of an unknown shape".to_string())
        );
        let unknown_kind = r#"{"version":1,"kind":"telepathy"}"#;
        assert!(GameSettings::from_json(unknown_kind)
            .unwrap_err()
            .contains("telepathy"));
        let bad_version = r#"{"version":"one","kind":"synthetic"}"#;
        assert!(GameSettings::from_json(bad_version)
            .unwrap_err()
            .contains("bad settings version"));
    }
}
