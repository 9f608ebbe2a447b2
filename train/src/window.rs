//! The replay window: the newest positions of one or more dataset directories, checked and
//! held compactly in memory, plus the snapshot that lets a resumed job rebuild exactly the
//! same window.

use crate::TrainError;
use ninjazero_data::{dataset_files, read_file, GameRecord};
use ninjazero_model::{policy_len, BoardShape};
use ninjazero_rules::{Position, Variant};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// One file of a window: its newest `positions` positions are used (the first `skip`
/// positions of the file are older than the window).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowFile {
    pub path: PathBuf,
    /// File size when the window was taken (a changed file is refused on resume).
    pub bytes: u64,
    pub skip: usize,
    pub positions: usize,
}

/// The positions a job trains on, fixed when the job starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowSnapshot {
    /// Newest file first.
    pub files: Vec<WindowFile>,
    /// Positions in all usable files when the window was taken.
    pub total_positions: usize,
    /// Positions in the window.
    pub size: usize,
}

/// A file that was not used, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct SkippedFile {
    pub path: PathBuf,
    pub reason: String,
}

/// The window's positions, stored flat: FEN text, sparse policy, targets.
#[derive(Debug, Default)]
pub(crate) struct Samples {
    fens: String,
    fen_ends: Vec<usize>,
    policy_index: Vec<u32>,
    policy_prob: Vec<f32>,
    policy_ends: Vec<usize>,
    /// Whether the policy target is used: a full search with a non-empty policy.
    pub full_search: Vec<bool>,
    /// 0 win, 1 draw, 2 loss for the side to move.
    pub wdl: Vec<u8>,
    /// How often the position has occurred in its game, itself included.
    pub repetitions: Vec<u8>,
}

impl Samples {
    pub fn len(&self) -> usize {
        self.wdl.len()
    }

    pub fn fen(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.fen_ends[i - 1] };
        &self.fens[start..self.fen_ends[i]]
    }

    /// Policy indices and probabilities (normalised to sum 1).
    pub fn policy(&self, i: usize) -> (&[u32], &[f32]) {
        let start = if i == 0 { 0 } else { self.policy_ends[i - 1] };
        let end = self.policy_ends[i];
        (
            &self.policy_index[start..end],
            &self.policy_prob[start..end],
        )
    }

    /// Appends the positions of `games` after the first `skip`, checking every position
    /// parsed. On error nothing is appended.
    fn extend_from_games(
        &mut self,
        variant: Variant,
        games: &[GameRecord],
        skip: usize,
    ) -> Result<(), String> {
        let mut staged = Samples::default();
        let policy_size = policy_len(&BoardShape::of(variant)) as u32;
        let mut k = 0usize;
        for game in games {
            let mut seen: HashMap<u64, u8> = HashMap::new();
            for record in &game.positions {
                let pos = Position::from_fen(variant, &record.fen).map_err(|e| {
                    format!("game {} ply {}: bad FEN: {e}", game.game_id, record.ply)
                })?;
                if pos.turn() != record.side_to_move {
                    return Err(format!(
                        "game {} ply {}: side_to_move disagrees with the FEN",
                        game.game_id, record.ply
                    ));
                }
                let count = seen.entry(pos.hash()).or_insert(0);
                *count = count.saturating_add(1);
                let repetitions = *count;
                k += 1;
                if k <= skip {
                    continue;
                }
                let mut sum = 0.0f64;
                for entry in &record.policy {
                    if entry.index >= policy_size {
                        return Err(format!(
                            "game {} ply {}: policy index {} outside the policy ({policy_size})",
                            game.game_id, record.ply, entry.index
                        ));
                    }
                    if !(entry.probability.is_finite() && entry.probability >= 0.0) {
                        return Err(format!(
                            "game {} ply {}: policy probability {}",
                            game.game_id, record.ply, entry.probability
                        ));
                    }
                    sum += entry.probability as f64;
                }
                let use_policy = record.full_search && sum > 0.0;
                if use_policy {
                    for entry in &record.policy {
                        staged.policy_index.push(entry.index);
                        staged
                            .policy_prob
                            .push((entry.probability as f64 / sum) as f32);
                    }
                }
                staged.policy_ends.push(staged.policy_index.len());
                staged.fens.push_str(&record.fen);
                staged.fen_ends.push(staged.fens.len());
                staged.full_search.push(use_policy);
                staged.wdl.push(match game.winner {
                    None => 1,
                    Some(w) if w == record.side_to_move => 0,
                    Some(_) => 2,
                });
                staged.repetitions.push(repetitions);
            }
        }
        self.append(staged);
        Ok(())
    }

    fn append(&mut self, other: Samples) {
        let fen_base = self.fens.len();
        let policy_base = self.policy_index.len();
        self.fens.push_str(&other.fens);
        self.fen_ends
            .extend(other.fen_ends.iter().map(|e| e + fen_base));
        self.policy_index.extend_from_slice(&other.policy_index);
        self.policy_prob.extend_from_slice(&other.policy_prob);
        self.policy_ends
            .extend(other.policy_ends.iter().map(|e| e + policy_base));
        self.full_search.extend_from_slice(&other.full_search);
        self.wdl.extend_from_slice(&other.wdl);
        self.repetitions.extend_from_slice(&other.repetitions);
    }
}

fn positions_in(games: &[GameRecord]) -> usize {
    games.iter().map(|g| g.positions.len()).sum()
}

/// What the work directory remembers about data files it has read, so that a new job does
/// not re-read old files just to count their positions.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct DataIndex {
    files: BTreeMap<String, IndexEntry>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct IndexEntry {
    bytes: u64,
    modified_ns: u128,
    variant: String,
    /// Positions, or why the file is unusable.
    outcome: Result<usize, String>,
}

impl DataIndex {
    pub fn load(path: &Path) -> DataIndex {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    pub fn save(&self, path: &Path) -> Result<(), TrainError> {
        let text = serde_json::to_string(self).expect("index serialises");
        crate::state::write_atomically(path, text.as_bytes())
    }
}

struct Candidate {
    path: PathBuf,
    bytes: u64,
    modified_ns: u128,
}

fn candidates(data_dirs: &[PathBuf]) -> Result<Vec<Candidate>, TrainError> {
    let mut out = Vec::new();
    for dir in data_dirs {
        if !dir.is_dir() {
            eprintln!(
                "warning: data directory {} does not exist (no positions from it)",
                dir.display()
            );
            continue;
        }
        for path in dataset_files(dir).map_err(|e| TrainError::Data(e.to_string()))? {
            let meta = std::fs::metadata(&path).map_err(|e| TrainError::io(&path, e))?;
            let modified_ns = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            out.push(Candidate {
                // Absolute, so that a job resumed from another directory finds its files.
                path: path.canonicalize().unwrap_or(path),
                bytes: meta.len(),
                modified_ns,
            });
        }
    }
    // Newest first; the name breaks ties (names carry the first game id and the time).
    out.sort_by(|a, b| {
        b.modified_ns
            .cmp(&a.modified_ns)
            .then_with(|| b.path.cmp(&a.path))
    });
    out.dedup_by(|a, b| a.path == b.path);
    Ok(out)
}

/// Takes a new window over `data_dirs`: counts the positions of every usable file (from the
/// index where it knows the file), sizes the window from the total, and loads the newest
/// positions. Unusable files are reported through `warn` and skipped.
pub(crate) fn take_window(
    variant: Variant,
    data_dirs: &[PathBuf],
    config: &crate::TrainConfig,
    index: &mut DataIndex,
    warn: &mut dyn FnMut(&SkippedFile),
) -> Result<(WindowSnapshot, Samples, Vec<SkippedFile>), TrainError> {
    let files = candidates(data_dirs)?;
    let mut skipped = Vec::new();
    let mut skip = |path: &Path, reason: String, skipped: &mut Vec<SkippedFile>| {
        let s = SkippedFile {
            path: path.to_path_buf(),
            reason,
        };
        warn(&s);
        skipped.push(s);
    };
    // Pass 1: positions per usable file; games of the newest files are kept for pass 2.
    let mut counts: Vec<(usize, usize)> = Vec::new(); // (candidate, positions)
    let mut kept: HashMap<usize, Vec<GameRecord>> = HashMap::new();
    let mut kept_positions = 0usize;
    for (i, file) in files.iter().enumerate() {
        let key = file.path.to_string_lossy().into_owned();
        let cached = index.files.get(&key).filter(|e| {
            e.bytes == file.bytes && e.modified_ns == file.modified_ns && e.variant == variant.id()
        });
        let outcome = match cached {
            Some(entry) => entry.outcome.clone(),
            None => {
                let outcome = match read_file(&file.path, Some(variant)) {
                    Ok(games) => {
                        let n = positions_in(&games);
                        if kept_positions < config.max_window {
                            kept_positions += n;
                            kept.insert(i, games);
                        }
                        Ok(n)
                    }
                    Err(e) => Err(e.to_string()),
                };
                index.files.insert(
                    key,
                    IndexEntry {
                        bytes: file.bytes,
                        modified_ns: file.modified_ns,
                        variant: variant.id().to_string(),
                        outcome: outcome.clone(),
                    },
                );
                outcome
            }
        };
        match outcome {
            Ok(n) => counts.push((i, n)),
            Err(reason) => skip(&file.path, reason, &mut skipped),
        }
    }
    let total: usize = counts.iter().map(|&(_, n)| n).sum();
    let size = config.window_size(total);
    // Pass 2: the newest positions, newest file first.
    let mut samples = Samples::default();
    let mut window_files = Vec::new();
    for &(i, n) in &counts {
        if samples.len() >= size {
            break;
        }
        let file = &files[i];
        let need = size - samples.len();
        let skip_count = n.saturating_sub(need);
        let games = match kept.remove(&i) {
            Some(games) => Ok(games),
            None => read_file(&file.path, Some(variant)).map_err(|e| e.to_string()),
        };
        let result = games.and_then(|games| {
            if positions_in(&games) != n {
                return Err("the file changed while being read".to_string());
            }
            samples.extend_from_games(variant, &games, skip_count)
        });
        match result {
            Ok(()) => window_files.push(WindowFile {
                path: file.path.clone(),
                bytes: file.bytes,
                skip: skip_count,
                positions: n - skip_count,
            }),
            Err(reason) => {
                if let Some(entry) = index.files.get_mut(&*file.path.to_string_lossy()) {
                    entry.outcome = Err(reason.clone());
                }
                skip(&file.path, reason, &mut skipped);
            }
        }
    }
    if samples.len() == 0 {
        return Err(TrainError::NoData(format!(
            "no usable {} positions in {}",
            variant.id(),
            data_dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let snapshot = WindowSnapshot {
        files: window_files,
        total_positions: total,
        size: samples.len(),
    };
    Ok((snapshot, samples, skipped))
}

/// Rebuilds the positions of a window recorded in a checkpoint.
pub(crate) fn load_window(
    variant: Variant,
    snapshot: &WindowSnapshot,
) -> Result<Samples, TrainError> {
    let mut samples = Samples::default();
    for file in &snapshot.files {
        let bytes = std::fs::metadata(&file.path)
            .map_err(|e| TrainError::io(&file.path, e))?
            .len();
        if bytes != file.bytes {
            return Err(TrainError::Data(format!(
                "{}: the file changed since the window was taken ({} bytes, then {})",
                file.path.display(),
                bytes,
                file.bytes
            )));
        }
        let games =
            read_file(&file.path, Some(variant)).map_err(|e| TrainError::Data(e.to_string()))?;
        let n = positions_in(&games);
        if n != file.skip + file.positions {
            return Err(TrainError::Data(format!(
                "{}: holds {n} positions, the window recorded {}",
                file.path.display(),
                file.skip + file.positions
            )));
        }
        samples
            .extend_from_games(variant, &games, file.skip)
            .map_err(|reason| TrainError::Data(format!("{}: {reason}", file.path.display())))?;
    }
    if samples.len() != snapshot.size {
        return Err(TrainError::Data(format!(
            "the window holds {} positions, the checkpoint recorded {}",
            samples.len(),
            snapshot.size
        )));
    }
    Ok(samples)
}
