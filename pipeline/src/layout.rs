//! Where a run keeps its objects: keys relative to the run's URL (a directory, `file://` or
//! `s3://`; see [`crate::Store`]).
//!
//! ```text
//! run.toml                                   the settings (RunConfig)
//! models/gen-NNNN.safetensors (+ .json)      each generation's network, written once
//! models/gen-NNNN.eval.json                  … or its learnt evaluation (`--model evaluation`)
//! selfplay/gen-NNNN/MANIFEST.json            the self-play of generation NNNN's best network
//! selfplay/gen-NNNN/shard-KKKK/…             its shards (see crate::worker)
//! train/gen-NNNN/window.json                 exactly which objects trained generation NNNN
//! arena/NAME/shard-SSSS.json                 a shard of arena NAME (gen-0002-vs-gen-0001)
//! arena/NAME.json                            the arena's merged result
//! promotion/gen-NNNN.json                    the decision on generation NNNN, written once
//! reports/gen-NNNN.md                        the report of the run taken to generation NNNN
//! cost/selfplay/gen-NNNN/shard-KKKK.json     what each job cost (crate::cost): self-play
//! cost/train/gen-NNNN/train.json             shards, trainings, arena shards
//! cost/arena/NAME/shard-SSSS.json
//! summary.md, elo.png                        the latest report (rewritten)
//! ```

use crate::ModelKind;
use ninjazero_search::PIECE_SQUARE_SUFFIX;

/// `gen-0007`: how keys and arenas name a generation.
pub fn generation_name(generation: u32) -> String {
    format!("gen-{generation:04}")
}

/// `run.toml`: the run's settings.
pub const CONFIG_KEY: &str = "run.toml";
/// `summary.md`: the latest report.
pub const SUMMARY_KEY: &str = "summary.md";
/// `elo.png`: each generation's Elo against generation 0.
pub const ELO_PLOT_KEY: &str = "elo.png";

/// The model of `generation` (0: the initial network; a run that learns an evaluation has
/// none for generation 0, whose player is the first player).
pub fn model_key(kind: ModelKind, generation: u32) -> String {
    let suffix = match kind {
        ModelKind::Network => ".safetensors",
        ModelKind::Evaluation => PIECE_SQUARE_SUFFIX,
    };
    format!("models/{}{suffix}", generation_name(generation))
}

/// The objects `generation` was trained on.
pub fn window_key(generation: u32) -> String {
    format!("train/{}/window.json", generation_name(generation))
}

/// Shard `shard` of arena `name`.
pub fn arena_shard_key(name: &str, shard: u32) -> String {
    format!("arena/{name}/shard-{shard:04}.json")
}

/// The merged result of arena `name`.
pub fn arena_key(name: &str) -> String {
    format!("arena/{name}.json")
}

/// The promotion decision on `generation`.
pub fn promotion_key(generation: u32) -> String {
    format!("promotion/{}.json", generation_name(generation))
}

/// The report of the run taken to `generations`.
pub fn report_key(generations: u32) -> String {
    format!("reports/{}.md", generation_name(generations))
}

/// Where every job's cost is kept.
pub const COST_PREFIX: &str = "cost/";

/// Where the costs of generation `generation`'s self-play shards are kept.
pub fn selfplay_cost_prefix(generation: u32) -> String {
    format!("cost/selfplay/{}/", generation_name(generation))
}

/// Where the cost of training generation `generation` is kept.
pub fn train_cost_prefix(generation: u32) -> String {
    format!("cost/train/{}/", generation_name(generation))
}

/// Where the costs of arena `name`'s shards are kept.
pub fn arena_cost_prefix(name: &str) -> String {
    format!("cost/arena/{name}/")
}
