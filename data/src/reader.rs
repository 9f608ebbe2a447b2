//! Reading dataset files back.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::BufReader;
use std::path::{Path, PathBuf};

use arrow::array::{
    Array, AsArray, BooleanArray, Float32Array, GenericListArray, StringArray, UInt16Array,
    UInt64Array, UInt8Array,
};
use arrow::datatypes::{Float32Type, Schema, UInt16Type, UInt32Type, UInt64Type, UInt8Type};
use arrow::ipc::reader::FileReader;
use arrow::record_batch::RecordBatch;
use ninjazero_rules::{ByColor, ByRole, Color, Variant};

use crate::replay::check_replay;
use crate::schema::{
    color_from_char, color_from_name, fields, material_column, META_GAMES, META_MODEL_ID,
    META_SCHEMA_VERSION, META_SEARCH_SETTINGS, META_SEED, META_VARIANT,
};
use crate::writer::FINISHED_SUFFIX;
use crate::{
    DataError, FileMeta, GameRecord, GameSettings, PolicyEntry, PositionRecord, SCHEMA_VERSION,
};

/// The finished files (`*.arrow`) of a dataset directory, sorted by name. Empty if `dir`
/// does not exist.
pub fn dataset_files(dir: &Path) -> Result<Vec<PathBuf>, DataError> {
    let finished = |path: &Path| {
        path.file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.ends_with(FINISHED_SUFFIX))
            && path.is_file()
    };
    sorted_entries(dir, finished)
}

/// The paths in `dir` that pass `keep`, sorted. Empty if `dir` does not exist.
fn sorted_entries(dir: &Path, keep: impl Fn(&Path) -> bool) -> Result<Vec<PathBuf>, DataError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(DataError::io(dir, e)),
    };
    let mut paths = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| DataError::io(dir, e))?.path();
        if keep(&path) {
            paths.push(path);
        }
    }
    paths.sort();
    Ok(paths)
}

/// The dataset files a reader of `dir` takes: [`dataset_files`], or where `dir` holds none
/// itself, those of its immediate subdirectories in name order (a pipeline generation's
/// `shard-NNNN` directories), so a generation reads as one dataset. Empty if `dir` does not
/// exist.
pub fn dataset_files_or_shards(dir: &Path) -> Result<Vec<PathBuf>, DataError> {
    let files = dataset_files(dir)?;
    if !files.is_empty() {
        return Ok(files);
    }
    let mut files = Vec::new();
    for subdir in sorted_entries(dir, Path::is_dir)? {
        files.extend(dataset_files(&subdir)?);
    }
    Ok(files)
}

/// Game ids already present in the finished files of `dir` (for a restarted worker to skip them). Empty if dir does not exist.
pub fn finished_game_ids(dir: &Path) -> Result<HashSet<u64>, DataError> {
    checked_game_ids(dir, None)
}

/// [`dataset_files_or_shards`] of a `dir` that must exist (for looking at a dataset, where a
/// mistyped path must not read as an empty dataset).
pub fn existing_dataset_files(dir: &Path) -> Result<Vec<PathBuf>, DataError> {
    match fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => dataset_files_or_shards(dir),
        Ok(_) => Err(DataError::invalid(dir, "not a directory")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(DataError::NoDirectory {
            dir: dir.to_path_buf(),
        }),
        Err(e) => Err(DataError::io(dir, e)),
    }
}

/// The games of the dataset directory `dir`, which must exist: its files, or a pipeline
/// generation's shards ([`existing_dataset_files`]), each checked as [`read_file`] does.
pub fn read_dataset(dir: &Path, expected: Option<Variant>) -> Result<Vec<GameRecord>, DataError> {
    read_files(&existing_dataset_files(dir)?, expected)
}

/// [`finished_game_ids`], checking each file's metadata against `expected` when given.
pub(crate) fn checked_game_ids(
    dir: &Path,
    expected: Option<&FileMeta>,
) -> Result<HashSet<u64>, DataError> {
    let mut ids = HashSet::new();
    for path in dataset_files(dir)? {
        let schema = open(&path, None)?.schema();
        let (meta, _) = check_meta(&path, &schema, expected.map(|m| m.variant))?;
        if let Some(expected) = expected {
            check_settings(&path, &meta, expected)?;
        }
        let index = schema.index_of("game_id").map_err(|_| {
            DataError::invalid(
                &path,
                "missing column game_id: not a NinjaZero dataset file",
            )
        })?;
        if schema.field(index).data_type() != &arrow::datatypes::DataType::UInt64 {
            return Err(DataError::invalid(
                &path,
                format!(
                    "column game_id has type {}, expected UInt64",
                    schema.field(index).data_type()
                ),
            ));
        }
        for batch in open(&path, Some(vec![index]))? {
            let batch = batch.map_err(|source| arrow_error(&path, source))?;
            ids.extend(batch.column(0).as_primitive::<UInt64Type>().values());
        }
    }
    Ok(ids)
}

/// Refuses a file whose seed, model or search settings differ from `expected`'s (the
/// variant is checked by [`check_meta`]).
fn check_settings(path: &Path, found: &FileMeta, expected: &FileMeta) -> Result<(), DataError> {
    let (found_search, expected_search) =
        found.search_settings.differences(&expected.search_settings);
    let settings = [
        ("seed", found.seed.to_string(), expected.seed.to_string()),
        ("model", found.model_id.clone(), expected.model_id.clone()),
        (
            "search settings",
            found_search.join(", "),
            expected_search.join(", "),
        ),
    ];
    for (setting, found, expected) in settings {
        if found != expected {
            return Err(DataError::OtherSettings {
                path: path.to_path_buf(),
                setting,
                found,
                expected,
            });
        }
    }
    Ok(())
}

/// Reads every finished file in `dir` (sorted by name), checking schema version and variant (when `expected` is Some); a corrupt or foreign file is an error naming the file.
pub fn read_games(dir: &Path, expected: Option<Variant>) -> Result<Vec<GameRecord>, DataError> {
    read_files(&dataset_files(dir)?, expected)
}

/// The games of `files`, in order, each file checked as [`read_file`] does.
pub(crate) fn read_files(
    files: &[PathBuf],
    expected: Option<Variant>,
) -> Result<Vec<GameRecord>, DataError> {
    let mut games = Vec::new();
    for path in files {
        games.extend(read_file(path, expected)?);
    }
    Ok(games)
}

/// The metadata of one dataset file (after checking its schema version).
pub fn read_file_meta(path: &Path) -> Result<FileMeta, DataError> {
    let schema = open(path, None)?.schema();
    Ok(check_meta(path, &schema, None)?.0)
}

/// Reads the games of one dataset file, checking it as [`read_games`] does, and each game
/// against a replay of its moves (see `replay`).
pub fn read_file(path: &Path, expected: Option<Variant>) -> Result<Vec<GameRecord>, DataError> {
    let reader = open(path, None)?;
    let schema = reader.schema();
    let (meta, declared_games) = check_meta(path, &schema, expected)?;
    check_columns(path, &schema)?;
    let mut decoder = Decoder {
        path,
        variant: meta.variant,
        games: Vec::new(),
    };
    for batch in reader {
        let batch = batch.map_err(|source| arrow_error(path, source))?;
        decoder.batch(&batch)?;
    }
    for game in &decoder.games {
        check_replay(game).map_err(|reason| {
            DataError::invalid(path, format!("game {}: {reason}", game.game_id))
        })?;
    }
    if decoder.games.len() != declared_games {
        return Err(DataError::invalid(
            path,
            format!(
                "metadata {META_GAMES} says {declared_games} games, the file holds {}",
                decoder.games.len()
            ),
        ));
    }
    Ok(decoder.games)
}

fn arrow_error(path: &Path, error: arrow::error::ArrowError) -> DataError {
    DataError::Arrow {
        path: path.to_path_buf(),
        error,
    }
}

fn open(
    path: &Path,
    projection: Option<Vec<usize>>,
) -> Result<FileReader<BufReader<File>>, DataError> {
    let file = File::open(path).map_err(|e| DataError::io(path, e))?;
    FileReader::try_new_buffered(file, projection).map_err(|source| arrow_error(path, source))
}

/// Checks the schema version (and the variant when `expected` is given); returns the file's
/// metadata and its declared number of games.
fn check_meta(
    path: &Path,
    schema: &Schema,
    expected: Option<Variant>,
) -> Result<(FileMeta, usize), DataError> {
    let metadata: &HashMap<String, String> = schema.metadata();
    let get = |key: &str| {
        metadata.get(key).ok_or_else(|| {
            DataError::invalid(
                path,
                format!("no {key} in the schema metadata: not a NinjaZero dataset file"),
            )
        })
    };
    let version = get(META_SCHEMA_VERSION)?;
    if version.parse::<u32>().ok() != Some(SCHEMA_VERSION) {
        return Err(DataError::SchemaVersion {
            path: path.to_path_buf(),
            found: version.clone(),
            expected: SCHEMA_VERSION,
        });
    }
    let variant_text = get(META_VARIANT)?;
    let variant: Variant = variant_text.parse().map_err(|_| {
        DataError::invalid(
            path,
            format!("unknown variant '{variant_text}' in {META_VARIANT}"),
        )
    })?;
    if let Some(expected) = expected {
        if variant != expected {
            return Err(DataError::WrongVariant {
                path: path.to_path_buf(),
                found: variant,
                expected,
            });
        }
    }
    let seed_text = get(META_SEED)?;
    let seed = seed_text
        .parse()
        .map_err(|_| DataError::invalid(path, format!("bad {META_SEED} '{seed_text}'")))?;
    let games_text = get(META_GAMES)?;
    let games = games_text
        .parse()
        .map_err(|_| DataError::invalid(path, format!("bad {META_GAMES} '{games_text}'")))?;
    let settings_text = get(META_SEARCH_SETTINGS)?;
    let search_settings = GameSettings::from_json(settings_text)
        .map_err(|why| DataError::invalid(path, format!("bad {META_SEARCH_SETTINGS}: {why}")))?;
    let meta = FileMeta {
        variant,
        search_settings,
        seed,
        model_id: get(META_MODEL_ID)?.clone(),
    };
    Ok((meta, games))
}

/// Checks that every column is present with its type, so the typed accessors below cannot
/// fail.
fn check_columns(path: &Path, schema: &Schema) -> Result<(), DataError> {
    for field in fields() {
        let found = schema
            .field_with_name(field.name())
            .map_err(|_| DataError::invalid(path, format!("missing column {}", field.name())))?;
        if !found.data_type().equals_datatype(field.data_type()) {
            return Err(DataError::invalid(
                path,
                format!(
                    "column {} has type {}, expected {}",
                    field.name(),
                    found.data_type(),
                    field.data_type()
                ),
            ));
        }
    }
    Ok(())
}

/// A game's winner and who would have resigned at which ply.
type GameOutcome = (Option<Color>, Option<(Color, u16)>);

/// Groups consecutive rows with the same game id into games.
struct Decoder<'a> {
    path: &'a Path,
    variant: Variant,
    games: Vec<GameRecord>,
}

/// The typed columns of one batch.
struct Columns<'b> {
    variant: &'b StringArray,
    game_id: &'b UInt64Array,
    ply: &'b UInt16Array,
    fen: &'b StringArray,
    side_to_move: &'b StringArray,
    policy_index: &'b GenericListArray<i32>,
    policy_move: &'b GenericListArray<i32>,
    policy_visits: &'b GenericListArray<i32>,
    policy_prob: &'b GenericListArray<i32>,
    root_value: &'b Float32Array,
    full_search: &'b BooleanArray,
    result: &'b Float32Array,
    winner: &'b StringArray,
    termination: &'b StringArray,
    material: ByColor<ByRole<&'b UInt8Array>>,
    white_hand: &'b UInt8Array,
    black_hand: &'b UInt8Array,
    move_played: &'b StringArray,
    model_id: &'b StringArray,
    start_fen: &'b StringArray,
    resignation_disabled: &'b BooleanArray,
    would_resign_side: &'b StringArray,
    would_resign_ply: &'b UInt16Array,
}

impl<'a> Decoder<'a> {
    fn invalid(&self, reason: String) -> DataError {
        DataError::invalid(self.path, reason)
    }

    fn batch(&mut self, batch: &RecordBatch) -> Result<(), DataError> {
        for field in fields() {
            let column = batch
                .column_by_name(field.name())
                .ok_or_else(|| self.invalid(format!("missing column {}", field.name())))?;
            if !field.is_nullable() && column.null_count() > 0 {
                return Err(self.invalid(format!("nulls in column {}", field.name())));
            }
        }
        let col = |name: &str| batch.column_by_name(name).expect("checked above");
        let c = Columns {
            variant: col("variant").as_string::<i32>(),
            game_id: col("game_id").as_primitive::<UInt64Type>(),
            ply: col("ply").as_primitive::<UInt16Type>(),
            fen: col("fen").as_string::<i32>(),
            side_to_move: col("side_to_move").as_string::<i32>(),
            policy_index: col("policy_index").as_list::<i32>(),
            policy_move: col("policy_move").as_list::<i32>(),
            policy_visits: col("policy_visits").as_list::<i32>(),
            policy_prob: col("policy_prob").as_list::<i32>(),
            root_value: col("root_value").as_primitive::<Float32Type>(),
            full_search: col("full_search").as_boolean(),
            result: col("result").as_primitive::<Float32Type>(),
            winner: col("winner").as_string::<i32>(),
            termination: col("termination").as_string::<i32>(),
            material: ByColor::new(|color| {
                ByRole::new(|role| col(&material_column(color, role)).as_primitive::<UInt8Type>())
            }),
            white_hand: col("white_hand").as_primitive::<UInt8Type>(),
            black_hand: col("black_hand").as_primitive::<UInt8Type>(),
            move_played: col("move_played").as_string::<i32>(),
            model_id: col("model_id").as_string::<i32>(),
            start_fen: col("start_fen").as_string::<i32>(),
            resignation_disabled: col("resignation_disabled").as_boolean(),
            would_resign_side: col("would_resign_side").as_string::<i32>(),
            would_resign_ply: col("would_resign_ply").as_primitive::<UInt16Type>(),
        };
        let policy_index = c.policy_index.values().as_primitive::<UInt32Type>();
        let policy_move = c.policy_move.values().as_string::<i32>();
        let policy_visits = c.policy_visits.values().as_primitive::<UInt32Type>();
        let policy_prob = c.policy_prob.values().as_primitive::<Float32Type>();

        for row in 0..batch.num_rows() {
            let id = c.game_id.value(row);
            let (winner, would_resign) = self.outcome_fields(&c, row)?;
            match self.games.last() {
                Some(last) if last.game_id == id => {
                    let same = last.start_fen == c.start_fen.value(row)
                        && last.winner == winner
                        && last.termination == c.termination.value(row)
                        && last.model_id == c.model_id.value(row)
                        && last.resignation_disabled == c.resignation_disabled.value(row)
                        && last.would_resign == would_resign;
                    if !same {
                        return Err(self.invalid(format!(
                            "row {row}: the rows of game {id} disagree on the game's fields"
                        )));
                    }
                }
                _ => self.games.push(GameRecord {
                    game_id: id,
                    variant: self.variant,
                    start_fen: c.start_fen.value(row).to_string(),
                    positions: Vec::new(),
                    winner,
                    termination: c.termination.value(row).to_string(),
                    model_id: c.model_id.value(row).to_string(),
                    resignation_disabled: c.resignation_disabled.value(row),
                    would_resign,
                }),
            }

            let side_text = c.side_to_move.value(row);
            let side_to_move = color_from_char(side_text).ok_or_else(|| {
                self.invalid(format!("row {row}: bad side_to_move '{side_text}'"))
            })?;
            let range = |list: &GenericListArray<i32>| {
                let offsets = list.value_offsets();
                offsets[row] as usize..offsets[row + 1] as usize
            };
            let entries = range(c.policy_index);
            if [c.policy_move, c.policy_visits, c.policy_prob]
                .iter()
                .any(|list| range(list) != entries)
            {
                return Err(self.invalid(format!(
                    "row {row}: the policy lists have different lengths"
                )));
            }
            let policy: Vec<PolicyEntry> = entries
                .map(|k| PolicyEntry {
                    index: policy_index.value(k),
                    move_text: policy_move.value(k).to_string(),
                    visits: policy_visits.value(k),
                    probability: policy_prob.value(k),
                })
                .collect();
            let material = c.material.map(|side| side.map(|counts| counts.value(row)));
            let game = self.games.last_mut().expect("pushed above");
            let expected_result = match game.winner {
                None => 0.0,
                Some(w) if w == side_to_move => 1.0,
                Some(_) => -1.0,
            };
            let result = c.result.value(row);
            if result != expected_result {
                return Err(DataError::invalid(
                    self.path,
                    format!(
                        "row {row}: result {result} does not match the winner and side to move"
                    ),
                ));
            }
            game.positions.push(PositionRecord {
                ply: c.ply.value(row),
                fen: c.fen.value(row).to_string(),
                side_to_move,
                policy,
                root_value: c.root_value.value(row),
                full_search: c.full_search.value(row),
                material,
                hand: [c.white_hand.value(row), c.black_hand.value(row)],
                move_played: c.move_played.value(row).to_string(),
            });
        }
        Ok(())
    }

    /// The variant, winner and would-resign fields of a row (checked).
    fn outcome_fields(&self, c: &Columns<'_>, row: usize) -> Result<GameOutcome, DataError> {
        let variant_text = c.variant.value(row);
        if variant_text != self.variant.id() {
            return Err(self.invalid(format!(
                "row {row}: variant '{variant_text}' in {} file",
                ninjazero_rules::with_article(self.variant.id())
            )));
        }
        let winner_text = c.winner.value(row);
        let winner =
            match winner_text {
                "draw" => None,
                other => Some(color_from_name(other).ok_or_else(|| {
                    self.invalid(format!("row {row}: bad winner '{winner_text}'"))
                })?),
            };
        let would_resign = match (
            c.would_resign_side.is_valid(row),
            c.would_resign_ply.is_valid(row),
        ) {
            (false, false) => None,
            (true, true) => {
                let text = c.would_resign_side.value(row);
                let side = color_from_name(text).ok_or_else(|| {
                    self.invalid(format!("row {row}: bad would_resign_side '{text}'"))
                })?;
                Some((side, c.would_resign_ply.value(row)))
            }
            _ => {
                return Err(self.invalid(format!(
                "row {row}: would_resign_side and would_resign_ply must both be null or both set"
            )))
            }
        };
        Ok((winner, would_resign))
    }
}
