//! The atomic dataset writer.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use arrow::array::{
    ArrayRef, BooleanArray, Float32Array, Float32Builder, ListBuilder, StringArray, StringBuilder,
    UInt16Array, UInt32Builder, UInt64Array, UInt8Array,
};
use arrow::ipc::writer::{FileWriter, IpcWriteOptions};
use arrow::ipc::CompressionType;
use arrow::record_batch::RecordBatch;
use ninjazero_rules::{Color, Role};

use crate::schema::{color_char, color_name, schema};
use crate::{DataError, FileMeta, GameRecord};

/// Suffix of finished files.
pub(crate) const FINISHED_SUFFIX: &str = ".arrow";
/// Suffix of files being written.
pub(crate) const TMP_SUFFIX: &str = ".arrow.tmp";

/// Writes games to a dataset directory, `games_per_file` games per file, each file appearing
/// atomically (written as `NAME.arrow.tmp`, synced, renamed to `NAME.arrow`).
///
/// Games still buffered when the writer is dropped without [`DatasetWriter::finish`] are
/// written on a best-effort basis (errors are ignored); call `finish` to see them.
pub struct DatasetWriter {
    dir: PathBuf,
    meta: FileMeta,
    games_per_file: usize,
    buffer: Vec<GameRecord>,
    buffered_ids: HashSet<u64>,
    files_written: Vec<PathBuf>,
}

impl DatasetWriter {
    /// Creates `dir` if needed and removes stale `*.tmp` files left by a killed writer.
    ///
    /// A `.tmp` file whose name carries the process id of another live process is left
    /// alone (another writer may be filling it); every other `.tmp` is removed.
    pub fn create(
        dir: &Path,
        meta: FileMeta,
        games_per_file: usize,
    ) -> Result<DatasetWriter, DataError> {
        if games_per_file == 0 {
            return Err(DataError::InvalidArgument(
                "games_per_file must be at least 1".to_string(),
            ));
        }
        fs::create_dir_all(dir).map_err(|e| DataError::io(dir, e))?;
        remove_stale_tmp_files(dir)?;
        Ok(DatasetWriter {
            dir: dir.to_path_buf(),
            meta,
            games_per_file,
            buffer: Vec::with_capacity(games_per_file),
            buffered_ids: HashSet::new(),
            files_written: Vec::new(),
        })
    }

    /// Buffers a game; writes a file when `games_per_file` games are buffered.
    ///
    /// Refused (with nothing buffered): a game of another variant than the writer's, a
    /// game without positions, a game id already buffered.
    pub fn add_game(&mut self, game: GameRecord) -> Result<(), DataError> {
        let invalid = |reason: String| DataError::InvalidGame {
            game_id: game.game_id,
            reason,
        };
        if game.variant != self.meta.variant {
            return Err(invalid(format!(
                "variant {} in {} dataset",
                game.variant.id(),
                ninjazero_rules::with_article(self.meta.variant.id())
            )));
        }
        if game.positions.is_empty() {
            return Err(invalid("a game needs at least one position".to_string()));
        }
        if self.buffered_ids.contains(&game.game_id) {
            return Err(invalid("game id already buffered".to_string()));
        }
        self.buffered_ids.insert(game.game_id);
        self.buffer.push(game);
        if self.buffer.len() >= self.games_per_file {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes any buffered games.
    pub fn finish(mut self) -> Result<(), DataError> {
        self.flush()
    }

    /// The files this writer has finished, in order.
    pub fn files_written(&self) -> &[PathBuf] {
        &self.files_written
    }

    /// The number of games buffered and not yet written.
    pub fn buffered_games(&self) -> usize {
        self.buffer.len()
    }

    fn flush(&mut self) -> Result<(), DataError> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let path = write_file(&self.dir, &self.meta, &self.buffer)?;
        self.files_written.push(path);
        self.buffer.clear();
        self.buffered_ids.clear();
        Ok(())
    }
}

impl Drop for DatasetWriter {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// Removes `*.arrow.tmp` (and any other `*.tmp`) files in `dir` unless their name carries
/// the pid of another live process.
fn remove_stale_tmp_files(dir: &Path) -> Result<(), DataError> {
    let entries = fs::read_dir(dir).map_err(|e| DataError::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| DataError::io(dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.ends_with(".tmp") {
            continue;
        }
        if let Some(pid) = writer_pid(name) {
            if pid != std::process::id() && process_alive(pid) {
                continue;
            }
        }
        let path = entry.path();
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(DataError::io(path, e)),
        }
    }
    Ok(())
}

/// The pid in a `games-<id>-<millis>-<pid>.arrow.tmp` name.
fn writer_pid(name: &str) -> Option<u32> {
    let stem = name.strip_suffix(TMP_SUFFIX)?.strip_prefix("games-")?;
    let parts: Vec<&str> = stem.split('-').collect();
    if parts.len() != 3 {
        return None;
    }
    parts[2].parse().ok()
}

/// Whether a process with this pid exists (Linux `/proc`; elsewhere assume it does not,
/// since the name's pid cannot be checked).
fn process_alive(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}

/// Writes `games` to a new file in `dir` and returns its path.
fn write_file(dir: &Path, meta: &FileMeta, games: &[GameRecord]) -> Result<PathBuf, DataError> {
    let first_id = games[0].game_id;
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let pid = std::process::id();
    // A name neither finished nor being written; the tmp file is created exclusively.
    let mut attempt = 0u128;
    let (tmp_path, final_path, file) = loop {
        let stem = format!("games-{first_id:08}-{}-{pid}", millis + attempt);
        let final_path = dir.join(format!("{stem}{FINISHED_SUFFIX}"));
        let tmp_path = dir.join(format!("{stem}{TMP_SUFFIX}"));
        attempt += 1;
        if final_path.exists() {
            continue;
        }
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp_path)
        {
            Ok(file) => break (tmp_path, final_path, file),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(DataError::io(tmp_path, e)),
        }
    };
    let result = write_and_sync(file, &tmp_path, meta, games)
        .and_then(|()| fs::rename(&tmp_path, &final_path).map_err(|e| DataError::io(&tmp_path, e)));
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp_path);
        return Err(e);
    }
    // Make the rename durable; not every platform or filesystem can sync a directory.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(final_path)
}

fn write_and_sync(
    file: File,
    path: &Path,
    meta: &FileMeta,
    games: &[GameRecord],
) -> Result<(), DataError> {
    let arrow_err = |source| DataError::Arrow {
        path: path.to_path_buf(),
        source,
    };
    let schema = Arc::new(schema(meta, games.len()));
    let batch = build_batch(schema.clone(), games).map_err(arrow_err)?;
    let options = IpcWriteOptions::default()
        .try_with_compression(Some(CompressionType::ZSTD))
        .map_err(arrow_err)?;
    let mut writer = FileWriter::try_new_with_options(BufWriter::new(file), &schema, options)
        .map_err(arrow_err)?;
    writer.write(&batch).map_err(arrow_err)?;
    writer.finish().map_err(arrow_err)?;
    let buffered = writer.into_inner().map_err(arrow_err)?;
    let file = buffered
        .into_inner()
        .map_err(|e| DataError::io(path, e.into_error()))?;
    file.sync_all().map_err(|e| DataError::io(path, e))
}

fn build_batch(
    schema: arrow::datatypes::SchemaRef,
    games: &[GameRecord],
) -> Result<RecordBatch, arrow::error::ArrowError> {
    let rows: usize = games.iter().map(|g| g.positions.len()).sum();

    let mut variant = Vec::with_capacity(rows);
    let mut game_id = Vec::with_capacity(rows);
    let mut ply = Vec::with_capacity(rows);
    let mut fen = Vec::with_capacity(rows);
    let mut side = Vec::with_capacity(rows);
    let mut policy_index = ListBuilder::new(UInt32Builder::new());
    let mut policy_move = ListBuilder::new(StringBuilder::new());
    let mut policy_visits = ListBuilder::new(UInt32Builder::new());
    let mut policy_prob = ListBuilder::new(Float32Builder::new());
    let mut root_value = Vec::with_capacity(rows);
    let mut full_search = Vec::with_capacity(rows);
    let mut result = Vec::with_capacity(rows);
    let mut winner = Vec::with_capacity(rows);
    let mut termination = Vec::with_capacity(rows);
    let mut material: Vec<Vec<u8>> = (0..30).map(|_| Vec::with_capacity(rows)).collect();
    let mut hand: [Vec<u8>; 2] = [Vec::with_capacity(rows), Vec::with_capacity(rows)];
    let mut move_played = Vec::with_capacity(rows);
    let mut model_id = Vec::with_capacity(rows);
    let mut start_fen = Vec::with_capacity(rows);
    let mut resignation_disabled = Vec::with_capacity(rows);
    let mut would_resign_side = Vec::with_capacity(rows);
    let mut would_resign_ply = Vec::with_capacity(rows);

    for g in games {
        let winner_text = g.winner.map_or("draw", color_name);
        for p in &g.positions {
            variant.push(g.variant.id());
            game_id.push(g.game_id);
            ply.push(p.ply);
            fen.push(p.fen.as_str());
            side.push(color_char(p.side_to_move));
            for e in &p.policy {
                policy_index.values().append_value(e.index);
                policy_move.values().append_value(&e.move_text);
                policy_visits.values().append_value(e.visits);
                policy_prob.values().append_value(e.probability);
            }
            policy_index.append(true);
            policy_move.append(true);
            policy_visits.append(true);
            policy_prob.append(true);
            root_value.push(p.root_value);
            full_search.push(p.full_search);
            result.push(match g.winner {
                None => 0.0f32,
                Some(w) if w == p.side_to_move => 1.0,
                Some(_) => -1.0,
            });
            winner.push(winner_text);
            termination.push(g.termination.as_str());
            for color in Color::ALL {
                for role in Role::ALL {
                    material[color.index() * 15 + role.index()]
                        .push(p.material[color.index()][role.index()]);
                }
                hand[color.index()].push(p.hand[color.index()]);
            }
            move_played.push(p.move_played.as_str());
            model_id.push(g.model_id.as_str());
            start_fen.push(g.start_fen.as_str());
            resignation_disabled.push(g.resignation_disabled);
            would_resign_side.push(g.would_resign.map(|(c, _)| color_name(c)));
            would_resign_ply.push(g.would_resign.map(|(_, ply)| ply));
        }
    }

    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(variant)),
        Arc::new(UInt64Array::from(game_id)),
        Arc::new(UInt16Array::from(ply)),
        Arc::new(StringArray::from(fen)),
        Arc::new(StringArray::from(side)),
        Arc::new(policy_index.finish()),
        Arc::new(policy_move.finish()),
        Arc::new(policy_visits.finish()),
        Arc::new(policy_prob.finish()),
        Arc::new(Float32Array::from(root_value)),
        Arc::new(BooleanArray::from(full_search)),
        Arc::new(Float32Array::from(result)),
        Arc::new(StringArray::from(winner)),
        Arc::new(StringArray::from(termination)),
    ];
    for counts in material {
        columns.push(Arc::new(UInt8Array::from(counts)));
    }
    let [white_hand, black_hand] = hand;
    columns.extend([
        Arc::new(UInt8Array::from(white_hand)) as ArrayRef,
        Arc::new(UInt8Array::from(black_hand)),
        Arc::new(StringArray::from(move_played)),
        Arc::new(StringArray::from(model_id)),
        Arc::new(StringArray::from(start_fen)),
        Arc::new(BooleanArray::from(resignation_disabled)),
        Arc::new(StringArray::from(would_resign_side)),
        Arc::new(UInt16Array::from(would_resign_ply)),
    ]);
    RecordBatch::try_new(schema, columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pid_is_read_from_tmp_names() {
        assert_eq!(
            writer_pid("games-00000012-1700000000000-4242.arrow.tmp"),
            Some(4242)
        );
        assert_eq!(writer_pid("games-00000012-17-4242.arrow"), None);
        assert_eq!(writer_pid("junk.arrow.tmp"), None);
        assert!(process_alive(std::process::id()) || !Path::new("/proc").exists());
    }
}
