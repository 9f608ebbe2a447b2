//! The atomic dataset writer.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use arrow::array::{
    ArrayRef, BooleanArray, Float32Array, Float32Builder, ListBuilder, StringArray, StringBuilder,
    UInt16Array, UInt32Builder, UInt64Array, UInt8Array,
};
use arrow::ipc::writer::{FileWriter, IpcWriteOptions};
use arrow::ipc::CompressionType;
use arrow::record_batch::RecordBatch;
use ninjazero_rules::{ByColor, ByRole, Color, Role};

use crate::atomic::{remove_tmp_files, AtomicFile};
use crate::reader::checked_game_ids;
use crate::schema::{color_char, color_name, schema};
use crate::{DataError, FileMeta, GameRecord};

/// Suffix of finished files.
pub(crate) const FINISHED_SUFFIX: &str = ".arrow";
/// The file in a dataset directory that its writer holds locked.
pub const LOCK_FILE: &str = ".lock";

/// The default [`FlushPolicy::max_age`] of self-play runs, in seconds.
pub const DEFAULT_FLUSH_SECONDS: u64 = 120;

/// When a writer turns its buffered games into a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlushPolicy {
    /// Write a file when this many games are buffered (at least 1).
    pub games_per_file: usize,
    /// Also write one, at the next [`DatasetWriter::flush_if_due`], once the oldest buffered
    /// game has waited this long, so that a killed run loses little. None: only by count.
    pub max_age: Option<Duration>,
}

impl FlushPolicy {
    /// Whether buffered games are due to be written: `buffered` games, the oldest added at
    /// `oldest`, at time `now`.
    pub fn due(&self, buffered: usize, oldest: Option<Instant>, now: Instant) -> bool {
        if buffered >= self.games_per_file {
            return true;
        }
        match (oldest, self.max_age) {
            (Some(oldest), Some(max_age)) => {
                buffered > 0 && now.saturating_duration_since(oldest) >= max_age
            }
            _ => false,
        }
    }
}

/// Writes games to a dataset directory, each file appearing atomically (an
/// [`AtomicFile`](crate::atomic::AtomicFile) renamed to `NAME.arrow`), when its
/// [`FlushPolicy`] says so.
///
/// The writer holds an exclusive advisory lock on `DIR/.lock` until it is dropped: a second
/// writer on the same directory fails at once instead of writing every game twice.
///
/// Games still buffered when the writer is dropped without [`DatasetWriter::finish`] are
/// written on a best-effort basis (errors are ignored); call `finish` to see them.
pub struct DatasetWriter {
    dir: PathBuf,
    meta: FileMeta,
    policy: FlushPolicy,
    buffer: Vec<GameRecord>,
    buffered_ids: HashSet<u64>,
    /// When the oldest buffered game was added.
    oldest: Option<Instant>,
    files_written: Vec<PathBuf>,
    /// Holds the directory's lock while open.
    lock: File,
}

impl DatasetWriter {
    /// Creates `dir` if needed, locks it and removes the `*.tmp` files a killed writer left
    /// (with the lock held, no one else can be writing them). Files already in `dir` are
    /// kept and not looked at; to continue a dataset use [`DatasetWriter::resume`].
    pub fn create(
        dir: &Path,
        meta: FileMeta,
        games_per_file: usize,
    ) -> Result<DatasetWriter, DataError> {
        let policy = FlushPolicy {
            games_per_file,
            max_age: None,
        };
        DatasetWriter::open(dir, meta, policy)
    }

    /// Continues the dataset in `dir` (created if needed): locks it as [`create`] does,
    /// checks that every file in it was made with `meta`'s variant, seed, model and search
    /// settings (its game ids would stand for other games otherwise) and returns the writer
    /// with the game ids the directory already holds.
    ///
    /// [`create`]: DatasetWriter::create
    pub fn resume(
        dir: &Path,
        meta: FileMeta,
        policy: FlushPolicy,
    ) -> Result<(DatasetWriter, HashSet<u64>), DataError> {
        let writer = DatasetWriter::open(dir, meta, policy)?;
        // Read under the lock, so that no other writer adds games meanwhile.
        let ids = checked_game_ids(dir, Some(&writer.meta))?;
        Ok((writer, ids))
    }

    fn open(dir: &Path, meta: FileMeta, policy: FlushPolicy) -> Result<DatasetWriter, DataError> {
        if policy.games_per_file == 0 {
            return Err(DataError::InvalidArgument(
                "games_per_file must be at least 1".to_string(),
            ));
        }
        let unwritable = |error| DataError::Unwritable {
            dir: dir.to_path_buf(),
            error,
        };
        fs::create_dir_all(dir).map_err(unwritable)?;
        // Creating the lock file also proves that the directory is writable before any
        // game is played.
        let lock_path = dir.join(LOCK_FILE);
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(unwritable)?;
        // Called as a trait function: std's inherent `File::try_lock` (Rust 1.89) would
        // shadow the method on newer toolchains.
        match fs4::FileExt::try_lock(&lock) {
            Ok(()) => {}
            Err(fs4::TryLockError::WouldBlock) => {
                return Err(DataError::Locked {
                    dir: dir.to_path_buf(),
                })
            }
            Err(fs4::TryLockError::Error(e)) => return Err(DataError::io(&lock_path, e)),
        }
        remove_tmp_files(dir).map_err(|e| DataError::io(dir, e))?;
        Ok(DatasetWriter {
            dir: dir.to_path_buf(),
            meta,
            policy,
            buffer: Vec::with_capacity(policy.games_per_file),
            buffered_ids: HashSet::new(),
            oldest: None,
            files_written: Vec::new(),
            lock,
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
        self.oldest.get_or_insert_with(Instant::now);
        if self.buffer.len() >= self.policy.games_per_file {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered games if the [`FlushPolicy`] says they are due (by count or by
    /// the oldest one's age). Returns whether a file was written.
    pub fn flush_if_due(&mut self) -> Result<bool, DataError> {
        if !self
            .policy
            .due(self.buffer.len(), self.oldest, Instant::now())
        {
            return Ok(false);
        }
        self.flush()?;
        Ok(true)
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
        self.oldest = None;
        Ok(())
    }
}

impl Drop for DatasetWriter {
    fn drop(&mut self) {
        // Runs before the fields drop, so the lock is still held.
        let _ = self.flush();
        // Unlock explicitly rather than by closing: a child process spawned meanwhile may
        // still share the open file (until its exec closes it), and would keep the lock.
        let _ = fs4::FileExt::unlock(&self.lock);
    }
}

/// Writes `games` to a new file in `dir` and returns its path.
fn write_file(dir: &Path, meta: &FileMeta, games: &[GameRecord]) -> Result<PathBuf, DataError> {
    let first_id = games[0].game_id;
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let pid = std::process::id();
    // A name not yet finished (the directory is locked, so no one else is adding one).
    let final_path = (0u128..)
        .map(|attempt| {
            dir.join(format!(
                "games-{first_id:08}-{}-{pid}{FINISHED_SUFFIX}",
                millis + attempt
            ))
        })
        .find(|path| !path.exists())
        .expect("an unused file name");
    let mut file = AtomicFile::create(&final_path).map_err(|e| DataError::io(&final_path, e))?;
    write_batch(file.file(), &final_path, meta, games)?;
    file.commit().map_err(|e| DataError::io(&final_path, e))?;
    Ok(final_path)
}

fn write_batch(
    file: &mut File,
    path: &Path,
    meta: &FileMeta,
    games: &[GameRecord],
) -> Result<(), DataError> {
    let arrow_err = |error| DataError::Arrow {
        path: path.to_path_buf(),
        error,
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
    buffered
        .into_inner()
        .map(drop)
        .map_err(|e| DataError::io(path, e.into_error()))
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
    let mut material = ByColor::new(|_| ByRole::new(|_| Vec::with_capacity(rows)));
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
                    material[color][role].push(p.material[color][role]);
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
    for (_, side) in material {
        for (_, counts) in side {
            columns.push(Arc::new(UInt8Array::from(counts)));
        }
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
    fn files_are_due_by_count_or_by_the_oldest_games_age() {
        let t0 = Instant::now();
        let secs = Duration::from_secs;
        let timed = FlushPolicy {
            games_per_file: 4,
            max_age: Some(secs(120)),
        };
        // Nothing buffered: never due.
        assert!(!timed.due(0, None, t0 + secs(1000)));
        assert!(!timed.due(1, Some(t0), t0 + secs(119)));
        assert!(timed.due(1, Some(t0), t0 + secs(120)));
        assert!(timed.due(4, Some(t0), t0));
        // A clock that went backwards counts as no time passed.
        assert!(!timed.due(1, Some(t0 + secs(5)), t0));
        let immediate = FlushPolicy {
            max_age: Some(Duration::ZERO),
            ..timed
        };
        assert!(immediate.due(1, Some(t0), t0));
        let by_count = FlushPolicy {
            max_age: None,
            ..timed
        };
        assert!(!by_count.due(3, Some(t0), t0 + secs(1_000_000)));
        assert!(by_count.due(4, Some(t0), t0));
    }
}
