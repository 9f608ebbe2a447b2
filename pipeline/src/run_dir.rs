//! Where a run keeps its files.

use std::path::{Path, PathBuf};

/// The layout of a run directory: every stage reads and writes its files here, so a run
/// can be continued by any process (or machine) that sees the directory.
///
/// ```text
/// run.toml                         the settings (RunConfig)
/// models/gen-NNNN.safetensors      each generation's network (+ .json sidecar)
/// selfplay/gen-NNNN/               self-play games of generation NNNN's best network
/// train/gen-NNNN/                  the training work directory of generation NNNN
/// arena/NAME.json                  each arena's result, NAME as gen-0002-vs-gen-0001
/// summary.md, elo.png              the report, rewritten at the end of a run
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    pub fn new(root: impl Into<PathBuf>) -> RunDir {
        RunDir { root: root.into() }
    }

    /// The run directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `run.toml`: the run's settings.
    pub fn config(&self) -> PathBuf {
        self.root.join("run.toml")
    }

    /// The checkpoint of `generation` (0: the initial network).
    pub fn model(&self, generation: u32) -> PathBuf {
        self.root
            .join("models")
            .join(format!("{}.safetensors", generation_name(generation)))
    }

    /// The dataset of games played by `generation`'s network, which trains `generation + 1`.
    pub fn selfplay(&self, generation: u32) -> PathBuf {
        self.root.join("selfplay").join(generation_name(generation))
    }

    /// The training work directory of `generation` (checkpoints, metrics, loss plot).
    pub fn train_work(&self, generation: u32) -> PathBuf {
        self.root.join("train").join(generation_name(generation))
    }

    /// The saved result of arena `name`.
    pub fn arena(&self, name: &str) -> PathBuf {
        self.root.join("arena").join(format!("{name}.json"))
    }

    /// `summary.md`: the run's report.
    pub fn summary(&self) -> PathBuf {
        self.root.join("summary.md")
    }

    /// `elo.png`: each generation's Elo against generation 0.
    pub fn elo_plot(&self) -> PathBuf {
        self.root.join("elo.png")
    }
}

/// `gen-0007`: how files and arenas name a generation.
pub fn generation_name(generation: u32) -> String {
    format!("gen-{generation:04}")
}
