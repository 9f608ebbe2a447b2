//! The replay window: the newest positions of one or more dataset directories, checked and
//! held compactly in memory, plus the snapshot that lets a resumed job rebuild exactly the
//! same window.
//!
//! "Newest" is what the data says, never file names, file boundaries or modification
//! times: games are ordered by the position of their directory in the data list (later
//! directories are newer generations), then by game id. The same games therefore give the
//! same window, in the same order, however self-play split them into files.

use crate::TrainError;
use ninjazero_data::{
    dataset_files_or_shards, read_file, read_file_meta, GameRecord, GameSettings, PolicyEntry,
};
use ninjazero_model::{move_index, BoardShape};
use ninjazero_rules::{Color, Position, Role, Variant};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// A game's place in the data's order: older generations (earlier data directories)
/// first, then game ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct GameKey {
    /// Position of the game's directory in the data directory list.
    pub generation: usize,
    pub game_id: u64,
}

/// A file holding games of a window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowFile {
    pub path: PathBuf,
    /// File size when the window was taken (a changed file is refused on resume).
    pub bytes: u64,
    /// Position of the file's directory in the data directory list.
    pub generation: usize,
    /// How many of the file's games are in the window.
    pub games: usize,
}

/// The positions a job trains on, fixed when the job starts: every game from `first_game`
/// on (in the data's order), less the first `skip` positions of `first_game`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowSnapshot {
    /// The files holding the window's games.
    pub files: Vec<WindowFile>,
    /// The window's oldest game.
    pub first_game: GameKey,
    pub skip: usize,
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
#[derive(Debug, Default, PartialEq)]
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
    /// The root's search value in [-1, 1] for the side to move, where the row has one (see
    /// [`has_search_values`]).
    pub search_value: Vec<Option<f32>>,
    /// How often the position has occurred in its game, itself included.
    pub repetitions: Vec<u8>,
    /// Per role ([`Role::index`]), White's count on the board minus Black's.
    white_material: Vec<[i8; Role::COUNT]>,
    white_to_move: Vec<bool>,
    /// The sample index of the last stored position of the sample's game.
    game_last: Vec<usize>,
}

impl Samples {
    pub fn len(&self) -> usize {
        self.wdl.len()
    }

    pub fn fen(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.fen_ends[i - 1] };
        &self.fens[start..self.fen_ends[i]]
    }

    /// The material target of sample `i` (`TrainConfig::material_plies`): per role, how much
    /// the side to move's count minus the opponent's changes from sample `i` to the
    /// position `plies` later in its game, or its game's last stored position.
    pub fn material_swing(&self, i: usize, plies: usize) -> [f32; Role::COUNT] {
        let later = i.saturating_add(plies).min(self.game_last[i]);
        let sign = if self.white_to_move[i] { 1.0 } else { -1.0 };
        let (now, then) = (&self.white_material[i], &self.white_material[later]);
        std::array::from_fn(|r| sign * (f32::from(then[r]) - f32::from(now[r])))
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

    /// The positions of `game` after its first `skip`, checking every position parsed.
    /// `searched`: whether the game's root values are search values.
    pub(crate) fn from_game(
        variant: Variant,
        game: &GameRecord,
        skip: usize,
        searched: bool,
    ) -> Result<Samples, String> {
        let mut samples = Samples::default();
        let shape = BoardShape::of(variant);
        // Repetitions count from the game's start, skipped positions included.
        let mut seen: HashMap<u64, u8> = HashMap::new();
        for (k, record) in game.positions.iter().enumerate() {
            let pos = Position::from_fen(variant, &record.fen)
                .map_err(|e| format!("game {} ply {}: bad FEN: {e}", game.game_id, record.ply))?;
            if pos.turn() != record.side_to_move {
                return Err(format!(
                    "game {} ply {}: side_to_move disagrees with the FEN",
                    game.game_id, record.ply
                ));
            }
            let count = seen.entry(pos.hash()).or_insert(0);
            *count = count.saturating_add(1);
            let repetitions = *count;
            if k < skip {
                continue;
            }
            check_policy_moves(&shape, &pos, &record.policy)
                .map_err(|e| format!("game {} ply {}: {e}", game.game_id, record.ply))?;
            let mut sum = 0.0f64;
            for entry in &record.policy {
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
                    samples.policy_index.push(entry.index);
                    samples
                        .policy_prob
                        .push((entry.probability as f64 / sum) as f32);
                }
            }
            samples.policy_ends.push(samples.policy_index.len());
            samples.fens.push_str(&record.fen);
            samples.fen_ends.push(samples.fens.len());
            samples.full_search.push(use_policy);
            samples.wdl.push(match game.winner {
                None => 1,
                Some(w) if w == record.side_to_move => 0,
                Some(_) => 2,
            });
            samples.repetitions.push(repetitions);
            samples.white_material.push(std::array::from_fn(|r| {
                let count = |color| i16::from(record.material[color][Role::ALL[r]]);
                // Counts are bytes; a corrupt one is clamped, not wrapped.
                (count(Color::White) - count(Color::Black)).clamp(-127, 127) as i8
            }));
            samples
                .white_to_move
                .push(record.side_to_move == Color::White);
            let search_value = searched
                .then(|| search_value(record.root_value))
                .transpose()
                .map_err(|why| format!("game {} ply {}: {why}", game.game_id, record.ply))?;
            samples.search_value.push(search_value);
        }
        samples.game_last = vec![samples.len().saturating_sub(1); samples.len()];
        Ok(samples)
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
        self.search_value.extend_from_slice(&other.search_value);
        self.white_material.extend_from_slice(&other.white_material);
        self.white_to_move.extend_from_slice(&other.white_to_move);
        let base = self.game_last.len();
        self.game_last
            .extend(other.game_last.iter().map(|last| last + base));
    }
}

/// A stored root value as a search value: finite, and clamped to [-1, 1] (a mean of values
/// in [-1, 1] can stray past the bounds by rounding).
fn search_value(root_value: f32) -> Result<f32, String> {
    if !root_value.is_finite() {
        return Err(format!("root value {root_value}"));
    }
    Ok(root_value.clamp(-1.0, 1.0))
}

/// Whether the root values of the games in `path` are search values to train on: MCTS
/// self-play stores the root's mean value (after the move's search, full or cheap, from
/// the side to move's view), a player's games (`selfplay --player`, the pipeline's first
/// player) its search value where it kept them, used with `player_values`; older player
/// games and synthetic games store 0, which says nothing about the position.
fn has_search_values(path: &Path, player_values: bool) -> Result<bool, String> {
    let meta = read_file_meta(path).map_err(|e| e.to_string())?;
    Ok(match meta.search_settings {
        GameSettings::Mcts { .. } => true,
        GameSettings::Player { search_values, .. } => search_values && player_values,
        GameSettings::Synthetic => false,
    })
}

/// The games of a file, and whether their root values are search values.
type FileGames = (Vec<GameRecord>, bool);

/// The games of a file as (game id, positions), in file order.
type GameList = Vec<(u64, usize)>;

fn game_list(games: &[GameRecord]) -> GameList {
    games
        .iter()
        .map(|g| (g.game_id, g.positions.len()))
        .collect()
}

/// What the work directory remembers about data files it has read, so that a new job does
/// not re-read old files just to list their games. An entry is used while the file's size
/// and modification time are unchanged; a touched file is read again, and since the window
/// depends only on the games, that cannot change it.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct DataIndex {
    files: BTreeMap<String, IndexEntry>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct IndexEntry {
    bytes: u64,
    modified_ns: u128,
    variant: String,
    /// The file's games, or why the file is unusable.
    outcome: Result<GameList, String>,
}

impl DataIndex {
    /// The index at `path`; empty when absent or unreadable (an index written by an older
    /// build included), which only costs reading the files again.
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
    generation: usize,
}

/// The data directories as absolute paths, in order. A directory listed twice is refused:
/// its place in the list is the generation of its games.
pub(crate) fn absolute_dirs(data_dirs: &[PathBuf]) -> Result<Vec<PathBuf>, TrainError> {
    let mut out: Vec<PathBuf> = Vec::with_capacity(data_dirs.len());
    for dir in data_dirs {
        let absolute = dir
            .canonicalize()
            .or_else(|_| std::path::absolute(dir))
            .unwrap_or_else(|_| dir.clone());
        if out.contains(&absolute) {
            return Err(TrainError::Config(format!(
                "data directory {} is listed twice",
                dir.display()
            )));
        }
        out.push(absolute);
    }
    Ok(out)
}

fn candidates(data_dirs: &[PathBuf]) -> Result<Vec<Candidate>, TrainError> {
    let mut out = Vec::new();
    for (generation, dir) in absolute_dirs(data_dirs)?.into_iter().enumerate() {
        if !dir.is_dir() {
            eprintln!(
                "warning: data directory {} does not exist (no positions from it)",
                dir.display()
            );
            continue;
        }
        for path in dataset_files_or_shards(&dir).map_err(|e| TrainError::Data(e.to_string()))? {
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
                generation,
            });
        }
    }
    // The newest generation first, then names (they start with the first game id): the
    // order of reading, which only decides which games pass 1 keeps in memory.
    out.sort_by(|a, b| {
        b.generation
            .cmp(&a.generation)
            .then_with(|| b.path.cmp(&a.path))
    });
    Ok(out)
}

/// A game found in pass 1: its key, positions and file (index into the candidates).
struct GameEntry {
    key: GameKey,
    positions: usize,
    file: usize,
}

/// Takes a new window over `data_dirs`: lists the games of every usable file (from the
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
    // Pass 1: the games of every usable file; those of the first files read are kept for
    // pass 2 (up to a window's worth).
    let mut games: Vec<GameEntry> = Vec::new();
    let mut lists: HashMap<usize, GameList> = HashMap::new();
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
                    Ok(read) => {
                        let list = game_list(&read);
                        if kept_positions < config.max_window {
                            kept_positions += list.iter().map(|&(_, n)| n).sum::<usize>();
                            kept.insert(i, read);
                        }
                        Ok(list)
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
            Ok(list) => {
                games.extend(list.iter().map(|&(game_id, positions)| GameEntry {
                    key: GameKey {
                        generation: file.generation,
                        game_id,
                    },
                    positions,
                    file: i,
                }));
                lists.insert(i, list);
            }
            Err(reason) => skip(&file.path, reason, &mut skipped),
        }
    }
    games.sort_by_key(|g| g.key);
    // Two games with one key would have no order of their own (only their files'), so the
    // window would depend on file names.
    if let Some(pair) = games.windows(2).find(|w| w[0].key == w[1].key) {
        return Err(TrainError::Data(format!(
            "game {} is in both {} and {}: a game id may appear only once in a data directory",
            pair[0].key.game_id,
            files[pair[0].file].path.display(),
            files[pair[1].file].path.display()
        )));
    }

    // Pass 2: the newest positions. A file that fails now is skipped and the window taken
    // again without it.
    loop {
        let total: usize = games.iter().map(|g| g.positions).sum();
        let Some((snapshot, window_files)) = select(&games, &files, config.window_size(total))
        else {
            return Err(TrainError::NoData(format!(
                "no usable {} positions in {}",
                variant.id(),
                data_dirs
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let mut read = |f: usize| -> Result<FileGames, String> {
            let i = window_files[f];
            let read = match kept.remove(&i) {
                Some(read) => read,
                None => read_file(&files[i].path, Some(variant)).map_err(|e| e.to_string())?,
            };
            if lists.get(&i) != Some(&game_list(&read)) {
                return Err("the file changed while being read".to_string());
            }
            Ok((
                read,
                has_search_values(&files[i].path, config.player_values)?,
            ))
        };
        match collect(variant, &snapshot, &mut read) {
            Ok(samples) => return Ok((snapshot, samples, skipped)),
            Err((f, reason)) => {
                let i = window_files[f];
                if let Some(entry) = index.files.get_mut(&*files[i].path.to_string_lossy()) {
                    entry.outcome = Err(reason.clone());
                }
                skip(&files[i].path, reason, &mut skipped);
                games.retain(|g| g.file != i);
            }
        }
    }
}

/// The window of the newest `size` positions of `games` (sorted, `size` at most their
/// total), and the candidate index of each of its files; None when `size` is 0.
fn select(
    games: &[GameEntry],
    files: &[Candidate],
    size: usize,
) -> Option<(WindowSnapshot, Vec<usize>)> {
    let mut taken = 0usize;
    let mut first = games.len();
    while taken < size && first > 0 {
        first -= 1;
        taken += games[first].positions;
    }
    if size == 0 {
        return None;
    }
    let mut per_file: BTreeMap<usize, usize> = BTreeMap::new();
    for g in &games[first..] {
        *per_file.entry(g.file).or_default() += 1;
    }
    let mut window_files: Vec<usize> = per_file.keys().copied().collect();
    window_files.sort_by(|&a, &b| {
        (files[a].generation, &files[a].path).cmp(&(files[b].generation, &files[b].path))
    });
    let snapshot = WindowSnapshot {
        files: window_files
            .iter()
            .map(|&i| WindowFile {
                path: files[i].path.clone(),
                bytes: files[i].bytes,
                generation: files[i].generation,
                games: per_file[&i],
            })
            .collect(),
        first_game: games[first].key,
        skip: taken - size,
        total_positions: games.iter().map(|g| g.positions).sum(),
        size,
    };
    Some((snapshot, window_files))
}

/// The samples of `snapshot` in the data's order: the games from `first_game` on in its
/// files, less `skip` positions at the start of `first_game`. `read(f)` gives the games of
/// `snapshot.files[f]` (and whether their root values are search values); an error comes
/// with the index of the file it concerns.
fn collect(
    variant: Variant,
    snapshot: &WindowSnapshot,
    read: &mut dyn FnMut(usize) -> Result<FileGames, String>,
) -> Result<Samples, (usize, String)> {
    let mut parts: Vec<(GameKey, Samples)> = Vec::new();
    for (f, file) in snapshot.files.iter().enumerate() {
        let (games, searched) = read(f).map_err(|reason| (f, reason))?;
        let before = parts.len();
        for game in &games {
            let key = GameKey {
                generation: file.generation,
                game_id: game.game_id,
            };
            if key < snapshot.first_game {
                continue;
            }
            let skip = if key == snapshot.first_game {
                snapshot.skip
            } else {
                0
            };
            let part =
                Samples::from_game(variant, game, skip, searched).map_err(|reason| (f, reason))?;
            parts.push((key, part));
        }
        let taken = parts.len() - before;
        if taken != file.games {
            return Err((
                f,
                format!(
                    "holds {taken} games of the window, the window recorded {}",
                    file.games
                ),
            ));
        }
    }
    parts.sort_by_key(|(key, _)| *key);
    let mut samples = Samples::default();
    for (_, part) in parts {
        samples.append(part);
    }
    Ok(samples)
}

/// Rebuilds the positions of a window recorded in a checkpoint (`player_values`:
/// [`crate::TrainConfig::player_values`] of its job).
pub(crate) fn load_window(
    variant: Variant,
    snapshot: &WindowSnapshot,
    player_values: bool,
) -> Result<Samples, TrainError> {
    let mut read = |f: usize| -> Result<FileGames, String> {
        let file = &snapshot.files[f];
        let bytes = std::fs::metadata(&file.path)
            .map_err(|e| e.to_string())?
            .len();
        if bytes != file.bytes {
            return Err(format!(
                "the file changed since the window was taken ({bytes} bytes, then {})",
                file.bytes
            ));
        }
        let games = read_file(&file.path, Some(variant)).map_err(|e| e.to_string())?;
        Ok((games, has_search_values(&file.path, player_values)?))
    };
    let samples = collect(variant, snapshot, &mut read).map_err(|(f, reason)| {
        TrainError::Data(format!("{}: {reason}", snapshot.files[f].path.display()))
    })?;
    if samples.len() != snapshot.size {
        return Err(TrainError::Data(format!(
            "the window holds {} positions, the checkpoint recorded {}",
            samples.len(),
            snapshot.size
        )));
    }
    Ok(samples)
}

/// Each policy entry's index must be its move's under this build's move encoding: a
/// dataset written under another encoding (or edited) would otherwise train the policy
/// towards other moves than the ones searched, silently.
fn check_policy_moves(
    shape: &BoardShape,
    pos: &Position,
    policy: &[PolicyEntry],
) -> Result<(), String> {
    if policy.is_empty() {
        return Ok(());
    }
    let legal = pos.legal_moves();
    let indices: Vec<u32> = legal
        .iter()
        .map(|&m| move_index(shape, pos, m) as u32)
        .collect();
    for entry in policy {
        let encoded = indices
            .iter()
            .position(|&index| index == entry.index)
            .map(|k| legal[k].to_string());
        if encoded.as_deref() != Some(entry.move_text.as_str()) {
            let found = encoded.map_or("no legal move".to_string(), |text| format!("'{text}'"));
            return Err(format!(
                "policy move '{}' is stored with index {}, which this build's move encoding gives to {found} (data of another encoding?)",
                entry.move_text, entry.index
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::{random_game, scripted_game, FullSearch};
    use crate::{SplitMix64, TrainConfig};
    use ninjazero_data::{DatasetWriter, FileMeta};
    use ninjazero_testkit::temp_dir;
    use std::time::{Duration, SystemTime};

    const VARIANT: Variant = Variant::InsaneNinja;

    /// Games of random legal moves with the given ids.
    fn games(ids: impl IntoIterator<Item = u64>) -> Vec<GameRecord> {
        ids.into_iter()
            .map(|id| {
                let start = Position::start(VARIANT);
                random_game(&start, id, 12, FullSearch::Random, &mut SplitMix64(id))
            })
            .collect()
    }

    /// Writes one file per group, in the order given.
    fn write_files(dir: &Path, groups: &[Vec<GameRecord>]) -> Vec<PathBuf> {
        let meta = FileMeta {
            variant: VARIANT,
            search_settings: ninjazero_data::GameSettings::Synthetic,
            seed: 0,
            model_id: "random".to_string(),
        };
        let mut files = Vec::new();
        for group in groups {
            let mut writer = DatasetWriter::create(dir, meta.clone(), group.len()).unwrap();
            for game in group {
                writer.add_game(game.clone()).unwrap();
            }
            files.extend_from_slice(writer.files_written());
            writer.finish().unwrap();
        }
        files
    }

    /// A window of exactly `size` positions (when there are that many).
    fn take(dirs: &[PathBuf], size: usize, index: &mut DataIndex) -> (WindowSnapshot, Samples) {
        take_with(dirs, size, index, false)
    }

    /// [`take`], with a player's search values used or not.
    fn take_with(
        dirs: &[PathBuf],
        size: usize,
        index: &mut DataIndex,
        player_values: bool,
    ) -> (WindowSnapshot, Samples) {
        let config = TrainConfig {
            min_window: size,
            max_window: size,
            player_values,
            ..TrainConfig::preset("demo").unwrap()
        };
        let (snapshot, samples, skipped) =
            take_window(VARIANT, dirs, &config, index, &mut |_| {}).unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        assert_eq!(samples.len(), size);
        (snapshot, samples)
    }

    fn set_mtime(path: &Path, time: SystemTime) {
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(time)
            .unwrap();
    }

    #[test]
    fn touching_a_file_leaves_the_window_alone() {
        let tmp = temp_dir();
        let dir = tmp.path().to_path_buf();
        let all = games(0..8);
        let files = write_files(
            &dir,
            &[all[..3].to_vec(), all[3..6].to_vec(), all[6..].to_vec()],
        );
        let dirs = [dir.clone()];
        let mut index = DataIndex::default();
        let (snapshot, samples) = take(&dirs, 30, &mut index);
        // The newest games by id, ending with the last position of game 7.
        let last = &all[7].positions;
        assert_eq!(samples.fen(samples.len() - 1), last[last.len() - 1].fen);
        assert!(snapshot.first_game.game_id >= 4, "{snapshot:?}");

        // The oldest games' file becomes the newest by time, the newest games' the oldest.
        let now = SystemTime::now();
        set_mtime(&files[0], now + Duration::from_secs(3600));
        set_mtime(&files[2], SystemTime::UNIX_EPOCH + Duration::from_secs(1));
        assert_eq!(take(&dirs, 30, &mut index), (snapshot.clone(), samples));
        let mut fresh = DataIndex::default();
        assert_eq!(take(&dirs, 30, &mut fresh).0, snapshot);
    }

    #[test]
    fn the_same_games_in_other_files_give_the_same_window() {
        let tmp = temp_dir();
        let dir = tmp.path().to_path_buf();
        let (one, split) = (dir.join("one"), dir.join("split"));
        let all = games(0..8);
        write_files(&one, std::slice::from_ref(&all));
        // Odd ids first (so the even file is newer by name and time), interleaved ids.
        let odd: Vec<_> = all.iter().filter(|g| g.game_id % 2 == 1).cloned().collect();
        let even: Vec<_> = all.iter().filter(|g| g.game_id % 2 == 0).cloned().collect();
        write_files(&split, &[odd, even]);

        let (a, samples_a) = take(&[one], 30, &mut DataIndex::default());
        let (b, samples_b) = take(&[split], 30, &mut DataIndex::default());
        assert_eq!(samples_a, samples_b);
        assert_eq!((a.first_game, a.skip), (b.first_game, b.skip));
        assert_eq!(b.files.len(), 2, "the window spans both files");
        // A resumed job rebuilds the same positions from the snapshot.
        assert_eq!(load_window(VARIANT, &b, false).unwrap(), samples_b);
    }

    #[test]
    fn later_directories_are_newer_whatever_their_ids() {
        let tmp = temp_dir();
        let dir = tmp.path().to_path_buf();
        let (old, new) = (dir.join("gen-0"), dir.join("gen-1"));
        write_files(&old, &[games(100..104)]);
        write_files(&new, &[games(0..4)]);
        let (snapshot, samples) = take(&[old, new], 20, &mut DataIndex::default());
        assert_eq!(snapshot.first_game.generation, 1);
        assert!(snapshot.files.iter().all(|f| f.generation == 1));
        let last = &games([3])[0].positions;
        assert_eq!(samples.fen(19), last[last.len() - 1].fen);
    }

    /// Four random plies won by White, with the root values `ROOT_VALUES` (the side to
    /// move's view).
    const ROOT_VALUES: [f32; 4] = [0.8, -0.6, 0.4, 0.8];

    #[test]
    fn a_policy_entry_whose_index_is_not_its_moves_is_refused() {
        let game = games([1]).remove(0);
        assert!(Samples::from_game(VARIANT, &game, 0, false).is_ok());
        let k = game
            .positions
            .iter()
            .position(|p| p.policy.len() >= 2)
            .expect("a position with two policy moves");
        let ply = game.positions[k].ply;
        // Another move's index under the first move's text, as data written under another
        // move encoding would hold.
        let mut swapped = game.clone();
        let other = swapped.positions[k].policy[1].index;
        swapped.positions[k].policy[0].index = other;
        let text = swapped.positions[k].policy[0].move_text.clone();
        let error = Samples::from_game(VARIANT, &swapped, 0, false).unwrap_err();
        let other_text = &game.positions[k].policy[1].move_text;
        assert_eq!(
            error,
            format!("game 1 ply {ply}: policy move '{text}' is stored with index {other}, which this build's move encoding gives to '{other_text}' (data of another encoding?)")
        );

        let mut illegal = game.clone();
        illegal.positions[k].policy[0].move_text = "a1a1".to_string();
        let index = illegal.positions[k].policy[0].index;
        let error = Samples::from_game(VARIANT, &illegal, 0, false).unwrap_err();
        assert!(
            error.starts_with(&format!("game 1 ply {ply}: policy move 'a1a1' is stored with index {index}, which this build's move encoding gives to '")),
            "{error}"
        );

        let mut beyond = game.clone();
        beyond.positions[k].policy[0].index = u32::MAX;
        let error = Samples::from_game(VARIANT, &beyond, 0, false).unwrap_err();
        assert!(
            error.ends_with("gives to no legal move (data of another encoding?)"),
            "{error}"
        );
    }

    fn won_game_with_root_values(id: u64) -> GameRecord {
        let start = Position::start(VARIANT);
        let mut game = random_game(&start, id, 4, FullSearch::Random, &mut SplitMix64(id));
        game.winner = Some(ninjazero_rules::Color::White);
        assert_eq!(game.positions.len(), ROOT_VALUES.len());
        for (record, value) in game.positions.iter_mut().zip(ROOT_VALUES) {
            record.root_value = value;
        }
        game
    }

    #[test]
    fn the_material_target_is_the_swing_from_the_movers_side_within_its_game() {
        // 1. e4 d5 2. exd5 Qxd5 3. Nc3: White wins a Pawn at ply 2, Black wins one back at
        // ply 3; the second game is all quiet moves.
        let mut samples = Samples::from_game(
            Variant::Chess,
            &scripted_game(Variant::Chess, 1, &["e2e4", "d7d5", "e4d5", "d8d5", "b1c3"]),
            0,
            false,
        )
        .unwrap();
        let quiet = scripted_game(Variant::Chess, 2, &["g1f3", "g8f6", "f3g1", "f6g8"]);
        samples.append(Samples::from_game(Variant::Chess, &quiet, 0, false).unwrap());
        let pawn = |i, plies| samples.material_swing(i, plies)[Role::Pawn.index()];
        // From White's first move, two plies ahead: a Pawn up.
        assert_eq!(pawn(0, 3), 1.0);
        // Four plies ahead (the exchange over): even again.
        assert_eq!(pawn(0, 4), 0.0);
        // From Black's first move, to the position after exdxd5: a Pawn down for Black.
        assert_eq!(pawn(1, 2), -1.0);
        // Black to move after exd5: Qxd5 wins it back.
        assert_eq!(pawn(3, 1), 1.0);
        // Past the game's end the target stops at its last position, never the next game's.
        assert_eq!(pawn(2, 100), 0.0);
        assert_eq!(pawn(3, 100), 1.0);
        assert_eq!(samples.material_swing(5, 100), [0.0; Role::COUNT]);
        let others: f32 = (0..Role::COUNT)
            .filter(|&r| r != Role::Pawn.index())
            .map(|r| samples.material_swing(0, 4)[r].abs())
            .sum();
        assert_eq!(others, 0.0, "only Pawns changed hands");
        // The batch carries the same rows (as a [B, roles] tensor) only when asked.
        let n = samples.len();
        let source = crate::loader::BatchSource::new(
            std::sync::Arc::new(samples),
            Variant::Chess,
            0,
            crate::loader::TargetSettings {
                material_plies: 2,
                ..Default::default()
            },
        );
        let material = source
            .build(0, n, tch::Device::Cpu)
            .unwrap()
            .material
            .unwrap();
        assert_eq!(material.size(), [n as i64, Role::COUNT as i64]);
        // Two plies ahead only Black's moves see a Pawn change hands: −1 (d5, then exd5)
        // and +1 (Qxd5 recaptures); every other row is 0.
        let sum = f32::try_from(material.abs().sum(tch::Kind::Float)).unwrap();
        assert_eq!(sum, 2.0);
    }

    /// The value targets of a batch of the whole window with search value weight `mix`,
    /// sorted (a batch is shuffled).
    fn batch_value_targets(samples: Samples, mix: f64) -> Vec<[f32; 3]> {
        let n = samples.len();
        let targets = crate::loader::TargetSettings {
            value_target_mix: mix,
            ..Default::default()
        };
        let source =
            crate::loader::BatchSource::new(std::sync::Arc::new(samples), VARIANT, 0, targets);
        let batch = source.build(0, n, tch::Device::Cpu).unwrap();
        let tensor = batch.value_target.expect("a mix gives soft targets");
        assert_eq!(tensor.size(), [n as i64, 3]);
        let flat = Vec::<f32>::try_from(tensor.reshape([-1])).unwrap();
        let mut rows: Vec<[f32; 3]> = flat.chunks(3).map(|r| [r[0], r[1], r[2]]).collect();
        rows.sort_by(|a, b| a.partial_cmp(b).unwrap());
        rows
    }

    fn assert_close(found: &[[f32; 3]], mut expected: Vec<[f32; 3]>) {
        expected.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(found.len(), expected.len());
        for (f, e) in found.iter().flatten().zip(expected.iter().flatten()) {
            assert!((f - e).abs() < 1e-6, "{found:?} vs {expected:?}");
        }
    }

    #[test]
    fn the_value_target_mixes_in_search_values_where_the_games_hold_them() {
        let tmp = temp_dir();
        let (mcts, player) = (tmp.path().join("mcts"), tmp.path().join("player"));
        let scored_player = tmp.path().join("scored-player");
        let player_settings = |search_values| ninjazero_data::GameSettings::Player {
            player: "alphabeta:depth=1".to_string(),
            opening_plies: 0,
            max_plies: 300,
            search_values,
        };
        let settings = [
            (
                &mcts,
                ninjazero_data::GameSettings::Mcts {
                    search: ninjazero_data::SearchConfig::default(),
                },
            ),
            (&player, player_settings(false)),
            (&scored_player, player_settings(true)),
        ];
        for (dir, search_settings) in settings {
            let meta = FileMeta {
                variant: VARIANT,
                search_settings,
                seed: 0,
                model_id: "test".to_string(),
            };
            let mut writer = DatasetWriter::create(dir, meta, 1).unwrap();
            writer.add_game(won_game_with_root_values(1)).unwrap();
            writer.finish().unwrap();
        }
        // White wins; plies 0 and 2 are White's (a win), 1 and 3 Black's (a loss).
        let (_, samples) = take(std::slice::from_ref(&mcts), 4, &mut DataIndex::default());
        assert_eq!(samples.search_value, ROOT_VALUES.map(Some));
        let expected = vec![
            // A win, q = 0.8: (1, 0, 0) / 2 + (0.8, 0.2, 0) / 2.
            [0.9, 0.1, 0.0],
            // A loss, q = -0.6: (0, 0, 1) / 2 + (0, 0.4, 0.6) / 2.
            [0.0, 0.2, 0.8],
            // A win, q = 0.4: (1, 0, 0) / 2 + (0.4, 0.6, 0) / 2.
            [0.7, 0.3, 0.0],
            // A loss the search thought won, q = 0.8: (0, 0, 1) / 2 + (0.8, 0.2, 0) / 2.
            [0.4, 0.1, 0.5],
        ];
        assert_close(&batch_value_targets(samples, 0.5), expected.clone());
        // A player that kept its search values: the same, where the training asks for it.
        let scored_player = [scored_player];
        let (_, samples) = take_with(&scored_player, 4, &mut DataIndex::default(), true);
        assert_eq!(samples.search_value, ROOT_VALUES.map(Some));
        assert_close(&batch_value_targets(samples, 0.5), expected);
        let (_, samples) = take(&scored_player, 4, &mut DataIndex::default());
        assert_eq!(samples.search_value, [None; 4]);

        // An older player's root values are no search values: the result alone.
        let (_, samples) = take(std::slice::from_ref(&player), 4, &mut DataIndex::default());
        assert_eq!(samples.search_value, [None; 4]);
        let results = vec![
            [1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0],
            [1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0],
        ];
        assert_close(&batch_value_targets(samples, 0.5), results);
    }

    #[test]
    fn without_a_mix_the_target_is_the_result() {
        let samples = Samples::from_game(VARIANT, &won_game_with_root_values(1), 0, true).unwrap();
        let source = crate::loader::BatchSource::new(
            std::sync::Arc::new(samples),
            VARIANT,
            0,
            Default::default(),
        );
        assert!(source
            .build(0, 4, tch::Device::Cpu)
            .unwrap()
            .value_target
            .is_none());
        assert_eq!(
            crate::loader::value_target(0, Some(-1.0), 0.0),
            [1.0, 0.0, 0.0]
        );
        assert_eq!(
            crate::loader::value_target(1, Some(0.5), 1.0),
            [0.5, 0.5, 0.0]
        );
        assert_eq!(crate::loader::value_target(2, None, 1.0), [0.0, 0.0, 1.0]);
    }

    #[test]
    fn a_game_id_twice_in_a_directory_is_refused() {
        let tmp = temp_dir();
        let dir = tmp.path().to_path_buf();
        write_files(&dir, &[games(0..3), games(2..5)]);
        let config = TrainConfig::preset("demo").unwrap();
        let err = take_window(
            VARIANT,
            std::slice::from_ref(&dir),
            &config,
            &mut DataIndex::default(),
            &mut |_| {},
        )
        .unwrap_err();
        assert!(
            matches!(&err, TrainError::Data(m) if m.contains("game 2 is in both")),
            "{err}"
        );
    }

    #[test]
    fn a_directory_of_shard_directories_is_one_data_directory() {
        let tmp = temp_dir();
        let generation = tmp.path().join("gen-0000");
        let (first, second) = (games(0..3), games(3..5));
        let positions: usize = first.iter().chain(&second).map(|g| g.positions.len()).sum();
        write_files(&generation.join("shard-0000"), &[first]);
        write_files(&generation.join("shard-0001"), &[second]);
        // `take` asserts that nothing was skipped and that every position is in the window.
        let (snapshot, _) = take(
            std::slice::from_ref(&generation),
            positions,
            &mut DataIndex::default(),
        );
        assert_eq!(snapshot.files.len(), 2);
        assert_eq!(snapshot.files.iter().map(|f| f.games).sum::<usize>(), 5);
        assert!(snapshot.files.iter().all(|f| f.generation == 0));
    }
}
