//! Training hyper-parameters, presets and the learning-rate schedule.

use serde::{Deserialize, Serialize};

/// The optimizer. Both keep their state in tensors the trainer checkpoints.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum OptimizerKind {
    /// SGD with (heavy-ball) momentum; weight decay is an L2 term added to the gradient.
    Sgd { momentum: f64 },
    /// Adam with decoupled weight decay (Loshchilov & Hutter); epsilon 1e-8.
    AdamW { beta1: f64, beta2: f64 },
}

impl OptimizerKind {
    pub fn name(&self) -> &'static str {
        match self {
            OptimizerKind::Sgd { .. } => "sgd",
            OptimizerKind::AdamW { .. } => "adamw",
        }
    }

    /// SGD with momentum 0.9, or AdamW with betas (0.9, 0.999).
    pub fn from_name(name: &str) -> Option<OptimizerKind> {
        match name {
            "sgd" => Some(OptimizerKind::Sgd { momentum: 0.9 }),
            "adamw" => Some(OptimizerKind::AdamW {
                beta1: 0.9,
                beta2: 0.999,
            }),
            _ => None,
        }
    }
}

/// The learning rate after warm-up, as a function of the step.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Schedule {
    Constant,
    /// Half a cosine from the base rate (after warm-up) down to 0 at `steps`.
    Cosine,
    /// The base rate times `factor` for every `every` steps done.
    Step {
        every: u64,
        factor: f64,
    },
}

/// Everything that shapes a training run (the network comes from the initial checkpoint).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    /// Total optimizer steps of the job (a resumed job continues up to this number).
    pub steps: u64,
    pub batch_size: usize,
    pub optimizer: OptimizerKind,
    pub learning_rate: f64,
    pub schedule: Schedule,
    /// Steps of linear warm-up from `learning_rate / warmup_steps` to `learning_rate`.
    pub warmup_steps: u64,
    /// Applied to convolution and linear weights only (not to biases and batch norm).
    pub weight_decay: f64,
    /// Clip the gradients' global L2 norm to this; 0 disables clipping.
    pub grad_clip: f64,
    /// Write a resumable checkpoint every this many steps (and at the end); 0: only at the end.
    pub checkpoint_every: u64,
    /// Background threads building batches.
    pub loader_threads: usize,
    /// The replay window: at least this many positions (when there are that many) ...
    pub min_window: usize,
    /// ... and at most this many; in between it grows as `WINDOW_SCALE * total^0.75`.
    pub max_window: usize,
    /// Shuffling seed: the batches are a function of the seed, the window and the step.
    pub seed: u64,
    /// λ in [0, 1]: the value target is `(1 − λ) · result + λ · search value` on rows whose
    /// root value is a search value (MCTS games; a player's games with
    /// [`TrainConfig::player_values`], else they keep the result). The
    /// result of a short self-play game is one noisy outcome, often adjudicated; the root's
    /// search value is a lower-variance estimate of the same position, so mixing it in
    /// steadies the value head. 0 (the default, and what files written before the setting
    /// existed mean) trains on results alone; it is left out of the stored settings.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub value_target_mix: f64,
    /// H > 0: an auxiliary target for the network's material head (`model init
    /// --material-head`): per role, how much the side to move's count minus the opponent's
    /// changes from the position to the one H plies later (or the game's last). Dense signal
    /// about hanging pieces and exchanges, where a game result is one bit per game. 0 (the
    /// default, and what files written before the setting existed mean) trains no such head;
    /// it is left out of the stored settings.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub material_plies: u32,
    /// Whether a player's games that kept its search values (`selfplay --player`, the
    /// pipeline's first player) mix them into the value target as MCTS games do: the
    /// player's judgement of every position beside one result per game. Off (the default,
    /// and what files written before the setting existed mean) leaves it out of the stored
    /// settings.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub player_values: bool,
    /// k > 0: each policy target is raised to the power k and renormalised. On a player's
    /// `soft=T` targets (a softmax over its scores) that is the softmax at T / k: the
    /// teacher's temperature chosen at training time, from the same games (k < 1 flattens
    /// over the moves the player kept, within 4T of its best); a large k is its best move
    /// alone. 1 (the default, and what files written before the setting
    /// existed mean) trains on the stored policy as it is; it is left out of the stored
    /// settings.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub policy_target_power: f64,
}

/// Whether a setting is 0 (serde's `skip_serializing_if`).
fn is_zero<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

fn one() -> f64 {
    1.0
}

fn is_one(value: &f64) -> bool {
    *value == 1.0
}

/// The largest policy target power: the teacher's best move alone, in practice.
pub const MAX_POLICY_TARGET_POWER: f64 = 1_000.0;

/// The most plies ahead a material target may look.
pub const MAX_MATERIAL_PLIES: u32 = 1_000;

/// The `imitate` preset's window: every position of a player's games (15,000 games of
/// Asylum Chess hold 1.5 million).
const IMITATION_WINDOW: usize = 10_000_000;

/// The window grows as `WINDOW_SCALE * total_positions^WINDOW_EXPONENT` (KataGo's shape),
/// clamped to `[min_window, max_window]`: 100k positions seen give a window of 22k, 1M
/// give 126k, 10M give 711k.
pub const WINDOW_SCALE: f64 = 4.0;
pub const WINDOW_EXPONENT: f64 = 0.75;

impl TrainConfig {
    /// Named configurations: `demo` (tiny and fast on a CPU: tests and the README demo,
    /// whose ablation chose its value target mix of 0.5),
    /// `cpu` (a CPU machine, the `cpu` network), `gpu` (a GPU machine, the `gpu` network),
    /// `imitate` (a first network learning from a player's many games: all of them,
    /// 32,000 steps of 256)
    /// and `smoke` (seconds, for checking the machinery).
    pub fn preset(name: &str) -> Option<TrainConfig> {
        match name {
            "demo" => Some(TrainConfig {
                steps: 1_500,
                batch_size: 64,
                optimizer: OptimizerKind::AdamW {
                    beta1: 0.9,
                    beta2: 0.999,
                },
                learning_rate: 2e-3,
                schedule: Schedule::Cosine,
                warmup_steps: 10,
                weight_decay: 1e-4,
                grad_clip: 5.0,
                checkpoint_every: 50,
                loader_threads: 1,
                min_window: 5_000,
                max_window: 200_000,
                seed: 0,
                value_target_mix: 0.5,
                material_plies: 0,
                player_values: false,
                policy_target_power: 1.0,
            }),
            "cpu" => Some(TrainConfig {
                steps: 2_000,
                batch_size: 256,
                optimizer: OptimizerKind::Sgd { momentum: 0.9 },
                learning_rate: 0.02,
                schedule: Schedule::Cosine,
                warmup_steps: 100,
                weight_decay: 1e-4,
                grad_clip: 5.0,
                checkpoint_every: 200,
                loader_threads: 1,
                min_window: 50_000,
                max_window: 500_000,
                seed: 0,
                value_target_mix: 0.5,
                material_plies: 0,
                player_values: false,
                policy_target_power: 1.0,
            }),
            "gpu" => Some(TrainConfig {
                steps: 20_000,
                batch_size: 1024,
                optimizer: OptimizerKind::Sgd { momentum: 0.9 },
                learning_rate: 0.05,
                schedule: Schedule::Cosine,
                warmup_steps: 500,
                weight_decay: 1e-4,
                grad_clip: 5.0,
                checkpoint_every: 1_000,
                loader_threads: 6,
                min_window: 250_000,
                max_window: 5_000_000,
                seed: 0,
                value_target_mix: 0.0,
                material_plies: 0,
                player_values: false,
                policy_target_power: 1.0,
            }),
            // A first network imitating a strong player's many games (README: "A network
            // that imitates the learnt evaluation"): every position, many passes, and the
            // player's search values three quarters of the value target.
            "imitate" => Some(TrainConfig {
                steps: 32_000,
                batch_size: 256,
                learning_rate: 3e-3,
                checkpoint_every: 1_000,
                min_window: IMITATION_WINDOW,
                max_window: IMITATION_WINDOW,
                value_target_mix: 0.75,
                player_values: true,
                ..TrainConfig::preset("demo")?
            }),
            // Seconds: checks the machinery (tests, a cluster's set-up), learns nothing.
            "smoke" => Some(TrainConfig {
                steps: 20,
                batch_size: 32,
                checkpoint_every: 10,
                min_window: 500,
                ..TrainConfig::preset("demo")?
            }),
            _ => None,
        }
    }

    /// The preset `name`, or an error naming the known ones.
    pub fn preset_named(name: &str) -> Result<TrainConfig, String> {
        TrainConfig::preset(name).ok_or_else(|| {
            let known = TrainConfig::PRESETS.join(", ");
            format!("unknown training preset '{name}' (expected one of {known})")
        })
    }

    /// The preset names, in order.
    pub const PRESETS: [&'static str; 5] = ["demo", "cpu", "gpu", "imitate", "smoke"];

    /// The learning rate of step `step` (0-based): warm-up, then the schedule.
    pub fn learning_rate_at(&self, step: u64) -> f64 {
        let base = self.learning_rate;
        if step < self.warmup_steps {
            return base * (step + 1) as f64 / self.warmup_steps as f64;
        }
        match self.schedule {
            Schedule::Constant => base,
            Schedule::Cosine => {
                let span = self.steps.saturating_sub(self.warmup_steps).max(1) as f64;
                let progress = ((step - self.warmup_steps) as f64 / span).min(1.0);
                base * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos())
            }
            Schedule::Step { every, factor } => {
                base * factor.powi((step / every.max(1)).min(i32::MAX as u64) as i32)
            }
        }
    }

    /// Trains on the newest `positions` positions whatever the data's size (all of them
    /// when there are fewer; `usize::MAX`: every position) instead of the growing window.
    pub fn fix_window(&mut self, positions: usize) {
        self.min_window = positions;
        self.max_window = positions;
    }

    /// The window size for `total` positions available.
    pub fn window_size(&self, total: usize) -> usize {
        let grown = (WINDOW_SCALE * (total as f64).powf(WINDOW_EXPONENT)) as usize;
        grown.max(self.min_window).min(self.max_window).min(total)
    }

    /// Checks the values that would make training meaningless.
    pub fn validate(&self) -> Result<(), String> {
        if self.batch_size == 0 {
            return Err("batch size must be at least 1".into());
        }
        if !(self.learning_rate.is_finite() && self.learning_rate >= 0.0) {
            return Err(format!("bad learning rate {}", self.learning_rate));
        }
        if !(self.weight_decay.is_finite() && self.weight_decay >= 0.0) {
            return Err(format!("bad weight decay {}", self.weight_decay));
        }
        if !(self.grad_clip.is_finite() && self.grad_clip >= 0.0) {
            return Err(format!("bad gradient clip {}", self.grad_clip));
        }
        if !(0.0..=1.0).contains(&self.value_target_mix) {
            return Err(format!(
                "value target mix {} outside [0, 1]",
                self.value_target_mix
            ));
        }
        if !(self.policy_target_power > 0.0 && self.policy_target_power <= MAX_POLICY_TARGET_POWER)
        {
            return Err(format!(
                "policy target power {} outside (0, {MAX_POLICY_TARGET_POWER}]",
                self.policy_target_power
            ));
        }
        if self.material_plies > MAX_MATERIAL_PLIES {
            return Err(format!(
                "material target {} plies ahead: at most {MAX_MATERIAL_PLIES}",
                self.material_plies
            ));
        }
        if self.min_window > self.max_window || self.max_window == 0 {
            return Err(format!(
                "window bounds {}..{} are empty",
                self.min_window, self.max_window
            ));
        }
        match self.optimizer {
            OptimizerKind::Sgd { momentum } if !(0.0..1.0).contains(&momentum) => {
                Err(format!("SGD momentum {momentum} outside [0, 1)"))
            }
            OptimizerKind::AdamW { beta1, beta2 }
                if !(0.0..1.0).contains(&beta1) || !(0.0..1.0).contains(&beta2) =>
            {
                Err(format!("AdamW betas ({beta1}, {beta2}) outside [0, 1)"))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_exist_and_validate() {
        for name in TrainConfig::PRESETS {
            TrainConfig::preset(name).unwrap().validate().unwrap();
        }
        assert!(TrainConfig::preset("huge").is_none());
    }

    /// Checks that `key` is left out of `config`'s stored settings while at its default
    /// and reads back as it (so files written before the setting existed mean the
    /// default), and that after `set` it is stored and read back; returns the set config.
    fn assert_stored_only_when_set(
        mut config: TrainConfig,
        key: &str,
        set: impl FnOnce(&mut TrainConfig),
    ) -> TrainConfig {
        let json = serde_json::to_value(&config).unwrap();
        assert!(
            json.get(key).is_none(),
            "{key} at its default is not stored"
        );
        assert_eq!(serde_json::from_value::<TrainConfig>(json).unwrap(), config);
        set(&mut config);
        let json = serde_json::to_value(&config).unwrap();
        assert!(json.get(key).is_some(), "{key} once set is stored");
        assert_eq!(serde_json::from_value::<TrainConfig>(json).unwrap(), config);
        config
    }

    #[test]
    fn settings_stored_before_the_value_target_mix_read_as_no_mix() {
        let gpu = TrainConfig::preset("gpu").unwrap();
        assert_eq!(gpu.value_target_mix, 0.0);
        let mut config =
            assert_stored_only_when_set(gpu, "value_target_mix", |c| c.value_target_mix = 0.5);
        config.value_target_mix = 1.5;
        assert!(config.validate().is_err());
    }

    #[test]
    fn player_values_are_stored_only_when_used() {
        let demo = TrainConfig::preset("demo").unwrap();
        assert!(!demo.player_values);
        assert_stored_only_when_set(demo, "player_values", |c| c.player_values = true);
    }

    #[test]
    fn the_policy_target_power_is_stored_only_when_set_and_bounded() {
        let imitate = TrainConfig::preset("imitate").unwrap();
        assert_eq!(imitate.policy_target_power, 1.0);
        let mut config = assert_stored_only_when_set(imitate, "policy_target_power", |c| {
            c.policy_target_power = 2.0
        });
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1000.5] {
            config.policy_target_power = bad;
            let err = config.validate().unwrap_err();
            assert!(err.contains("policy target power"), "{err}");
        }
        config.policy_target_power = MAX_POLICY_TARGET_POWER;
        config.validate().unwrap();
    }

    #[test]
    fn the_material_target_is_stored_only_when_set_and_bounded() {
        let demo = TrainConfig::preset("demo").unwrap();
        let mut config =
            assert_stored_only_when_set(demo, "material_plies", |c| c.material_plies = 4);
        config.material_plies = MAX_MATERIAL_PLIES;
        assert!(config.validate().is_ok());
        config.material_plies = MAX_MATERIAL_PLIES + 1;
        assert!(config.validate().unwrap_err().contains("at most"));
    }

    #[test]
    fn schedules() {
        let mut c = TrainConfig::preset("demo").unwrap();
        c.steps = 110;
        c.warmup_steps = 10;
        c.learning_rate = 1.0;
        assert!((c.learning_rate_at(0) - 0.1).abs() < 1e-12);
        assert!((c.learning_rate_at(9) - 1.0).abs() < 1e-12);
        c.schedule = Schedule::Cosine;
        assert!((c.learning_rate_at(10) - 1.0).abs() < 1e-12);
        assert!((c.learning_rate_at(60) - 0.5).abs() < 1e-12);
        assert!(c.learning_rate_at(110).abs() < 1e-12);
        c.schedule = Schedule::Step {
            every: 50,
            factor: 0.1,
        };
        assert!((c.learning_rate_at(49) - 1.0).abs() < 1e-12);
        assert!((c.learning_rate_at(100) - 0.01).abs() < 1e-12);
        c.schedule = Schedule::Constant;
        assert_eq!(c.learning_rate_at(100), 1.0);
    }

    #[test]
    fn window_grows_with_the_data() {
        let c = TrainConfig {
            min_window: 1_000,
            max_window: 1_000_000,
            ..TrainConfig::preset("cpu").unwrap()
        };
        assert_eq!(c.window_size(500), 500);
        assert_eq!(c.window_size(1_200), 1_000);
        assert_eq!(c.window_size(2_000), 1_196);
        assert_eq!(c.window_size(1_000_000), 126_491);
        assert_eq!(c.window_size(1_000_000_000), 1_000_000);
    }
}
