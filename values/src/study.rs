//! A whole piece-value study: the three methods over one dataset (the matches and the
//! probe when asked for), each as a [`MethodRun`], and the report written as Markdown, CSV
//! and a chart.

use crate::report::{csv, markdown, plot, MethodRun};
use crate::rounds::handicap_matches;
use crate::{probe::probe, regression::outcome_regression, Estimate, Method, PieceKind};
use ninjazero_data::store::{Store, StoreError};
use ninjazero_data::{read_dataset, DataError, GameRecord};
use ninjazero_model::{load_evaluator, Evaluator, ModelError};
use ninjazero_rules::{Position, Variant};
use ninjazero_search::EngineSpec;
use rand::rngs::StdRng;
use rand::seq::index::sample;
use rand::SeedableRng;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tch::Device;

/// What a study measures, and how.
#[derive(Clone, Debug)]
pub struct Study {
    pub variant: Variant,
    /// Self-play datasets (directories, or a pipeline generation's) for the outcome
    /// regression and the probe's positions, read as one; none: the handicap matches alone.
    pub data: Vec<PathBuf>,
    /// Checkpoint for the value-network probe (none: no probe).
    pub model: Option<PathBuf>,
    /// Player spec of the handicap matches, as for the arena (see
    /// [`rounds::default_player`](crate::rounds::default_player)). With more than one
    /// round, an alpha-beta spec without `values=` ([`rounds::tunable`](crate::rounds::tunable)).
    pub player: EngineSpec,
    /// Games per handicap, half with each colour handicapped; 0: no matches.
    pub games: usize,
    /// Self-consistent rounds of the matches (see [`handicap_matches`]).
    pub rounds: usize,
    /// Random plies from the handicap position that open each match game.
    pub opening_plies: usize,
    /// Match games longer than this are drawn.
    pub max_plies: u32,
    /// Match games played at once, one per thread.
    pub threads: usize,
    /// Positions sampled from the data for the probe.
    pub positions: usize,
    /// Bootstrap replicates behind each interval (at least [`crate::MIN_REPLICATES`]).
    pub bootstrap: usize,
    pub seed: u64,
    /// Where the networks run.
    pub device: Device,
}

/// Why a study failed. Each message is complete, so no variant also reports the error it
/// wraps as its `source()`: a chain printed with anyhow's `{:#}` says nothing twice.
#[derive(Debug, thiserror::Error)]
pub enum ValuesError {
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(transparent)]
    Data(#[from] DataError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("{}: no games in the dataset", data.display())]
    NoGames { data: PathBuf },
    #[error(
        "{given} bootstrap replicates: at least {} are needed for a 95 % interval",
        crate::MIN_REPLICATES
    )]
    TooFewReplicates { given: usize },
    /// Self-consistent rounds feed measured values back into an alpha-beta player.
    #[error("{rounds} rounds feed measured values back into an alpha-beta player: the player must be alphabeta:... without values= (got '{player}')")]
    NotTunable { rounds: usize, player: String },
    /// A player could not be made, or a handicap game could not be set up.
    #[error("{0}")]
    Matches(String),
    /// A study that cannot give a result as asked.
    #[error("{0}")]
    Setup(String),
    #[error("cannot encode the match results: {0}")]
    Encode(String),
    #[error("{}: {message}", path.display())]
    Plot { path: PathBuf, message: String },
}

impl ValuesError {
    pub(crate) fn io(path: &Path, error: std::io::Error) -> ValuesError {
        ValuesError::Io {
            path: path.to_path_buf(),
            error,
        }
    }
}

/// Where a study reports the progress of its long steps (each handicap's games, the probe).
pub use ninjazero_data::progress::{Progress, Silent};

/// What a study found.
#[derive(Debug)]
pub struct StudyReport {
    /// Each method's run, in the order regression, matches, probe.
    pub runs: Vec<MethodRun>,
    /// The values the data backs, of every method.
    pub estimates: Vec<Estimate>,
    /// The report as written to `values.md`.
    pub markdown: String,
}

/// Runs `study` and writes into `out` (a directory, created, or a `file://` or `s3://` URL):
/// `values.md`, `values.csv`, `values.png`, and from the matches `match-values.txt` (their
/// values as an alpha-beta `values=` option) and the match results under `matches/` (a
/// rerun keeps the games already played with the same settings).
pub fn run(study: &Study, out: &str, progress: &dyn Progress) -> Result<StudyReport, ValuesError> {
    study.check()?;
    let variant = study.variant;
    let kinds = PieceKind::of_variant(variant);
    let mut games = Vec::new();
    for data in &study.data {
        let read = read_dataset(data, Some(variant))?;
        if read.is_empty() {
            return Err(ValuesError::NoGames { data: data.clone() });
        }
        games.extend(read);
    }
    // Only once the data is there: a mistyped --data leaves no empty output directory.
    let store = Store::open(out)?;
    let mut runs = Vec::new();
    if !study.data.is_empty() {
        runs.push(regression(&games, &kinds, study));
    }
    if study.games > 0 {
        runs.push(handicap_matches(&kinds, study, &store, progress)?);
    }
    if let Some(model) = &study.model {
        let (mut evaluator, _) = load_evaluator(Some(model), variant, study.device)?;
        runs.push(network_probe(
            &games,
            &kinds,
            study,
            evaluator.as_mut(),
            progress,
        ));
    }
    // Only the values the data backs go on: into the CSV, the chart and the verdicts.
    let estimates: Vec<Estimate> = runs
        .iter()
        .filter_map(|r| r.estimates.as_ref().ok())
        .flat_map(|m| m.estimates.iter().cloned())
        .collect();
    store.put("values.csv", csv(variant, &estimates).into_bytes())?;
    let markdown = markdown(study, games.len(), &runs, &estimates);
    store.put("values.md", markdown.clone().into_bytes())?;
    store.put("values.png", chart(variant, &kinds, &estimates)?)?;
    Ok(StudyReport {
        runs,
        estimates,
        markdown,
    })
}

/// `values.png`'s bytes: the chart is drawn into a temporary file (the PNG encoder writes
/// to a path), which the store then keeps wherever it is.
fn chart(
    variant: Variant,
    kinds: &[PieceKind],
    estimates: &[Estimate],
) -> Result<Vec<u8>, ValuesError> {
    let dir = tempfile::tempdir().map_err(|e| ValuesError::io(&std::env::temp_dir(), e))?;
    let path = dir.path().join("values.png");
    plot(&path, variant, kinds, estimates)?;
    std::fs::read(&path).map_err(|e| ValuesError::io(&path, e))
}

impl Study {
    /// Refuses a study that cannot give a result: too few bootstrap replicates, rounds
    /// with a player that cannot take measured values, nothing to measure, or a probe
    /// without positions.
    pub fn check(&self) -> Result<(), ValuesError> {
        if self.bootstrap < crate::MIN_REPLICATES {
            return Err(ValuesError::TooFewReplicates {
                given: self.bootstrap,
            });
        }
        if self.rounds > 1 && !crate::rounds::tunable(&self.player) {
            return Err(ValuesError::NotTunable {
                rounds: self.rounds,
                player: self.player.to_string(),
            });
        }
        if self.data.is_empty() && self.model.is_some() {
            return Err(ValuesError::Setup(
                "the value-network probe takes its positions from a dataset: give one with the model".into(),
            ));
        }
        if self.data.is_empty() && self.games == 0 {
            return Err(ValuesError::Setup(
                "nothing to measure: give a dataset (outcome regression) or match games".into(),
            ));
        }
        Ok(())
    }
}

/// The outcome regression over `games`, those of [`Study::data`].
pub fn regression(games: &[GameRecord], kinds: &[PieceKind], study: &Study) -> MethodRun {
    let started = Instant::now();
    let estimates = outcome_regression(games, kinds, study.bootstrap, study.seed);
    MethodRun {
        method: Method::Regression,
        estimates,
        seconds: started.elapsed().as_secs_f64(),
        notes: vec![format!(
            "{} games from {} (quiet positions only: the move played kept the material).",
            games.len(),
            datasets(study)
        )],
    }
}

/// The datasets of `study`, as a report names them: `a, b`.
pub fn datasets(study: &Study) -> String {
    let names: Vec<String> = study.data.iter().map(|d| d.display().to_string()).collect();
    names.join(", ")
}

/// The probe over [`Study::positions`] positions sampled (seeded) from the dataset.
pub fn network_probe(
    games: &[GameRecord],
    kinds: &[PieceKind],
    study: &Study,
    evaluator: &mut dyn Evaluator,
    progress: &dyn Progress,
) -> MethodRun {
    let started = Instant::now();
    let fens: Vec<&str> = games
        .iter()
        .flat_map(|g| g.positions.iter().map(|p| p.fen.as_str()))
        .collect();
    let mut rng = StdRng::seed_from_u64(study.seed);
    let picked = sample(&mut rng, fens.len(), study.positions.min(fens.len()));
    let positions: Vec<Position> = picked
        .iter()
        .filter_map(|i| Position::from_fen(study.variant, fens[i]).ok())
        .collect();
    progress.stage_started("probe", 0);
    let estimates = probe(
        evaluator,
        &positions,
        kinds,
        study.bootstrap,
        study.seed,
        &|done, total| progress.stage_progress(done as u64, total as u64, ""),
    );
    progress.stage_finished();
    MethodRun {
        method: Method::Probe,
        estimates,
        seconds: started.elapsed().as_secs_f64(),
        notes: vec![format!(
            "{} positions sampled from the data; a piece of the side to move taken off.",
            positions.len()
        )],
    }
}
