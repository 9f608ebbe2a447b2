//! The work directory: resumable checkpoints written atomically.
//!
//! ```text
//! WORK/state.json                      # what to resume from (replaced atomically)
//! WORK/ckpt-00000200/model.safetensors # + model.json sidecar
//! WORK/ckpt-00000200/optimizer.safetensors
//! WORK/metrics.jsonl, WORK/loss.png, WORK/data-index.json
//! ```
//!
//! A checkpoint directory is filled under a `.tmp` name, synced and renamed; only then does
//! `state.json` (written to a temporary file, synced and renamed) point at it, and older
//! checkpoint directories are removed. A kill at any moment leaves `state.json` naming a
//! complete checkpoint.

use crate::config::{OptimizerKind, TrainConfig};
use crate::window::WindowSnapshot;
use crate::SettingChange;
use crate::TrainError;
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

pub(crate) const STATE_FILE: &str = "state.json";
const FORMAT: &str = "ninjazero-train-state";
/// 2: the job's settings include the data directories; the window is ordered by the data.
const VERSION: u32 = 2;

/// Everything that decides what a job computes. A work directory resumes its job only
/// when asked for the same settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct JobSettings {
    pub variant: String,
    /// The initial checkpoint's file name ...
    pub init: String,
    /// ... and contents (FNV-1a 64 of the safetensors file, in hex).
    pub init_contents: String,
    /// The data directories (absolute), oldest generation first.
    pub data: Vec<PathBuf>,
    #[serde(flatten)]
    pub config: TrainConfig,
}

/// Settings that change how a run goes, not what it computes: they may differ on resume.
const RUN_OPTIONS: [&str; 2] = ["checkpoint_every", "loader_threads"];

impl JobSettings {
    /// The settings `new` asks for that differ from these, in name order. One comparison
    /// of the settings' JSON form, so a setting added later is compared too.
    pub fn changes_to(&self, new: &JobSettings) -> Vec<SettingChange> {
        let fields = |s: &JobSettings| match serde_json::to_value(s) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => unreachable!("job settings serialise to a JSON object"),
        };
        let (old, new) = (fields(self), fields(new));
        let mut changes: Vec<SettingChange> = new
            .iter()
            .filter(|(name, _)| !RUN_OPTIONS.contains(&name.as_str()))
            .filter_map(|(name, value)| {
                let before = old.get(name).unwrap_or(&serde_json::Value::Null);
                (before != value).then(|| SettingChange {
                    name: name.clone(),
                    old: show(before),
                    new: show(value),
                })
            })
            .collect();
        changes.sort_by(|a, b| a.name.cmp(&b.name));
        changes
    }
}

/// A setting's value as a user reads it: strings without quotes, lists joined by commas.
fn show(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) => items.iter().map(show).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// The loader's position and the shuffling generator's state: sample `i` of the job is
/// `permutation(seed, i / window)[i % window]`, so (seed, cursor) is the whole state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct RngState {
    pub algorithm: String,
    pub seed: u64,
    /// Samples consumed so far (the next batch starts here).
    pub samples_cursor: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct OptimizerState {
    pub kind: OptimizerKind,
    pub step: u64,
}

/// `state.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct TrainState {
    pub format: String,
    pub version: u32,
    pub job: JobSettings,
    /// Steps done in this job.
    pub step: u64,
    /// The checkpoint directory (relative to the work directory) holding `step`'s model
    /// and optimizer.
    pub checkpoint: String,
    pub init_training_step: u64,
    pub rng: RngState,
    pub optimizer: OptimizerState,
    pub window: WindowSnapshot,
}

impl TrainState {
    pub fn new(job: JobSettings, init_training_step: u64, window: WindowSnapshot) -> TrainState {
        let (seed, kind) = (job.config.seed, job.config.optimizer);
        TrainState {
            format: FORMAT.to_string(),
            version: VERSION,
            step: 0,
            checkpoint: String::new(),
            init_training_step,
            rng: RngState {
                algorithm: "splitmix64 Fisher-Yates per epoch".to_string(),
                seed,
                samples_cursor: 0,
            },
            optimizer: OptimizerState { kind, step: 0 },
            window,
            job,
        }
    }

    /// The state in `work_dir`, if there is a readable one.
    pub fn read(work_dir: &Path) -> Result<Option<TrainState>, TrainError> {
        let path = work_dir.join(STATE_FILE);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(TrainError::io(&path, e)),
        };
        let bad = |e: serde_json::Error| TrainError::State(format!("{}: {e}", path.display()));
        // The format first, so that an older layout is named as such.
        let value: serde_json::Value = serde_json::from_str(&text).map_err(bad)?;
        let (format, version) = (&value["format"], &value["version"]);
        if format.as_str() != Some(FORMAT) || version.as_u64() != Some(VERSION.into()) {
            return Err(TrainError::State(format!(
                "{}: format {format} version {version}, this build resumes {FORMAT} version \
                 {VERSION}; finish that job with the build that started it or use another \
                 work directory",
                path.display()
            )));
        }
        serde_json::from_value(value).map(Some).map_err(bad)
    }

    pub fn checkpoint_dir(&self, work_dir: &Path) -> PathBuf {
        work_dir.join(&self.checkpoint)
    }
}

/// [`ninjazero_data::atomic::write_atomically`], its error naming `path`.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), TrainError> {
    ninjazero_data::atomic::write_atomically(path, bytes).map_err(|e| TrainError::io(path, e))
}

fn sync_dir(dir: Option<&Path>) {
    if let Some(dir) = dir.filter(|d| !d.as_os_str().is_empty()) {
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
}

fn sync_file(path: &Path) -> Result<(), TrainError> {
    fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| TrainError::io(path, e))
}

/// Writes a checkpoint for `state.step` and makes `state.json` point at it; refuses one
/// with a non-finite weight or optimizer state (it could only poison a resumed job).
pub(crate) fn save_checkpoint(
    work_dir: &Path,
    state: &mut TrainState,
    model: &ninjazero_model::Model,
    optimizer: &crate::optim::Optimizer,
) -> Result<(), TrainError> {
    crate::ensure_finite(state.step, model, Some(optimizer))?;
    let name = format!("ckpt-{:08}", state.step);
    let dir = work_dir.join(&name);
    let tmp = work_dir.join(format!("{name}.tmp"));
    remove_dir_if_present(&tmp)?;
    fs::create_dir_all(&tmp).map_err(|e| TrainError::io(&tmp, e))?;
    let model_path = tmp.join("model.safetensors");
    model.save(&model_path).map_err(TrainError::Model)?;
    let optimizer_path = tmp.join("optimizer.safetensors");
    optimizer.save(&optimizer_path)?;
    for file in [
        model_path.clone(),
        ninjazero_model::checkpoint::sidecar_path(&model_path),
        optimizer_path,
    ] {
        sync_file(&file)?;
    }
    sync_dir(Some(&tmp));
    if state.checkpoint != name {
        // Left by a run killed between this rename and the state update: not referenced.
        remove_dir_if_present(&dir)?;
    } else {
        return Err(TrainError::State(format!(
            "checkpoint {name} is already the current one"
        )));
    }
    fs::rename(&tmp, &dir).map_err(|e| TrainError::io(&dir, e))?;
    sync_dir(Some(work_dir));
    state.checkpoint = name;
    let json = serde_json::to_string_pretty(state).expect("state serialises") + "\n";
    write_atomically(&work_dir.join(STATE_FILE), json.as_bytes())?;
    remove_stale(work_dir, &state.checkpoint)
}

/// Removes checkpoint directories and temporary files other than the current checkpoint.
pub(crate) fn remove_stale(work_dir: &Path, keep: &str) -> Result<(), TrainError> {
    let entries = fs::read_dir(work_dir).map_err(|e| TrainError::io(work_dir, e))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("ckpt-") && name != keep {
            remove_dir_if_present(&entry.path())?;
        }
    }
    // Best effort: a temporary file left over does no harm.
    let _ = ninjazero_data::atomic::remove_tmp_files(work_dir);
    Ok(())
}

fn remove_dir_if_present(dir: &Path) -> Result<(), TrainError> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(TrainError::io(dir, e)),
    }
}

/// FNV-1a 64 of a file's bytes.
pub(crate) fn fingerprint(path: &Path) -> Result<String, TrainError> {
    let bytes = fs::read(path).map_err(|e| TrainError::io(path, e))?;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in &bytes {
        hash ^= b as u64;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    Ok(format!("{hash:016x}"))
}
