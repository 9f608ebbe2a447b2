//! The NinjaZero self-play dataset: the Arrow schema, an atomic writer, the reader, a
//! summary and PGN export; and the [`store`] every stage keeps its files in (a run, a
//! ladder, a piece-value study: a path, `file://` or `s3://`).
//!
//! A dataset is a directory of Arrow IPC **files** (`*.arrow`, zstd-compressed), each
//! holding whole games, one row per position. A file appears atomically: it is written under
//! a temporary name ending in `.tmp`, synced and renamed (the [`atomic`] module), so readers
//! (which only look at `*.arrow`) never see a partial file, and a killed writer leaves at
//! most a `.tmp` that the next [`DatasetWriter::create`] removes (temporary names carry the
//! host and process id, so on a shared filesystem a live writer's file on another host is
//! spared). A writer holds an advisory lock on `DIR/.lock` for its
//! lifetime, so one directory has one writer at a time. File names carry the first game id,
//! the time and the process id, so a restarted writer never overwrites a finished file.
//!
//! Columns (one row per position; per-game values are repeated on each row of the game):
//!
//! | column | type | meaning |
//! | --- | --- | --- |
//! | `variant` | Utf8 | variant id (`insane-ninja`, ...) |
//! | `game_id` | UInt64 | |
//! | `ply` | UInt16 | |
//! | `fen` | Utf8 | the position |
//! | `side_to_move` | Utf8 | `w` or `b` |
//! | `policy_index`, `policy_move`, `policy_visits`, `policy_prob` | List of UInt32, Utf8, UInt32, Float32 | the search policy target, one entry per root move (may be empty) |
//! | `root_value` | Float32 | root value in \[-1, 1\], side to move's view |
//! | `full_search` | Boolean | whether the position got a full search |
//! | `result` | Float32 | final result from the side to move's view: 1, 0 or -1 |
//! | `winner` | Utf8 | `white`, `black` or `draw` |
//! | `termination` | Utf8 | `checkmate`, `stalemate`, `resignation`, ... |
//! | `white_<role>`, `black_<role>` | UInt8 | pieces on the board per colour and role (`white_pawn`, `black_super_loony_rook`, ...) |
//! | `white_hand`, `black_hand` | UInt8 | Ninja Pawns in hand |
//! | `move_played` | Utf8 | the move played from the position (RULES.md move text) |
//! | `model_id` | Utf8 | the model that played the game |
//! | `start_fen` | Utf8 | the game's start position |
//! | `resignation_disabled` | Boolean | |
//! | `would_resign_side`, `would_resign_ply` | Utf8, UInt16 (nullable) | with resignation disabled: who would have resigned, and when |
//!
//! Schema metadata: `ninjazero.schema_version`, `ninjazero.variant`,
//! `ninjazero.rules_version`, `ninjazero.encoding_version`, `ninjazero.search_settings`
//! (versioned JSON, [`settings`]), `ninjazero.seed`, `ninjazero.model_id`, `ninjazero.games` (games in the file).
//!
//! ```
//! use ninjazero_data::{read_games, DatasetWriter, FileMeta, GameRecord, PositionRecord};
//! use ninjazero_rules::{Color, Position, Variant};
//!
//! let dir = std::env::temp_dir().join(format!("ninjazero-data-doc-{}", std::process::id()));
//! let pos = Position::start(Variant::Asylum);
//! let record = PositionRecord {
//!     ply: 0,
//!     fen: pos.to_fen(),
//!     side_to_move: pos.turn(),
//!     policy: Vec::new(),
//!     root_value: 0.0,
//!     full_search: false,
//!     material: pos.material(),
//!     hand: [pos.hand(Color::White), pos.hand(Color::Black)],
//!     move_played: "e2e5".to_string(),
//! };
//! let game = GameRecord {
//!     game_id: 7,
//!     variant: Variant::Asylum,
//!     start_fen: pos.to_fen(),
//!     positions: vec![record],
//!     winner: None,
//!     termination: "adjudication".to_string(),
//!     model_id: "uniform".to_string(),
//!     resignation_disabled: false,
//!     would_resign: None,
//! };
//! let meta = FileMeta {
//!     variant: Variant::Asylum,
//!     search_settings: ninjazero_data::GameSettings::Synthetic,
//!     seed: 1,
//!     model_id: "uniform".to_string(),
//! };
//! let mut writer = DatasetWriter::create(&dir, meta, 100)?;
//! writer.add_game(game.clone())?;
//! writer.finish()?;
//! assert_eq!(read_games(&dir, Some(Variant::Asylum))?, vec![game]);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), ninjazero_data::DataError>(())
//! ```

pub mod atomic;
mod pgn;
pub mod progress;
mod reader;
mod replay;
mod result;
mod schema;
pub mod settings;
pub mod store;
mod summary;
mod writer;

use std::path::PathBuf;

use ninjazero_rules::{ByColor, ByRole, Color, Variant};

pub use pgn::export_pgn;
pub use reader::{
    dataset_files, dataset_files_or_shards, existing_dataset_files, finished_game_ids,
    read_dataset, read_file, read_file_meta, read_games,
};
pub use result::GameResult;
pub use schema::{
    column_names, ENCODING_VERSION, META_ENCODING_VERSION, META_GAMES, META_MODEL_ID,
    META_RULES_VERSION, META_SCHEMA_VERSION, META_SEARCH_SETTINGS, META_SEED, META_VARIANT,
    RULES_VERSION,
};
pub use settings::{GameSettings, RootSearch, SearchConfig};
pub use summary::{summarize, Summary};
pub use writer::{DatasetWriter, FlushPolicy, DEFAULT_FLUSH_SECONDS, LOCK_FILE};

/// Bump on any incompatible schema change.
pub const SCHEMA_VERSION: u32 = 1;

/// One entry of a search policy target: a root move, its visits and its target probability.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyEntry {
    /// The move's policy index (the model crate's move encoding).
    pub index: u32,
    /// The move in RULES.md move text.
    pub move_text: String,
    /// MCTS: the move's visits at the root. Another player's target (its move alone, or
    /// the policy it proposed): 1 on the move it played, 0 on the others.
    pub visits: u32,
    pub probability: f32,
}

/// One position of a game, with its training targets.
#[derive(Clone, Debug, PartialEq)]
pub struct PositionRecord {
    pub ply: u16,
    pub fen: String,
    pub side_to_move: Color,
    /// Search policy target over the root's moves (may be empty for positions without a full search).
    pub policy: Vec<PolicyEntry>,
    /// Root value in [-1, 1] from the side to move's view.
    pub root_value: f32,
    pub full_search: bool,
    /// Pieces on the board per colour and role.
    pub material: ByColor<ByRole<u8>>,
    pub hand: [u8; 2],
    /// The move played from this position, RULES.md move text.
    pub move_played: String,
}

/// A finished self-play game. It must hold at least one position (a game is stored as its
/// positions' rows).
#[derive(Clone, Debug, PartialEq)]
pub struct GameRecord {
    pub game_id: u64,
    pub variant: Variant,
    pub start_fen: String,
    pub positions: Vec<PositionRecord>,
    pub winner: Option<Color>,
    /// e.g. "checkmate", "stalemate", "scepter captured", "threefold repetition", "100-ply rule", "resignation", "adjudication"
    pub termination: String,
    pub model_id: String,
    pub resignation_disabled: bool,
    /// In a game with resignation disabled: the side that would have resigned and the ply, to measure false resignations.
    pub would_resign: Option<(Color, u16)>,
}

/// What a dataset file records about how its games were made (stored as schema metadata).
#[derive(Clone, Debug, PartialEq)]
pub struct FileMeta {
    pub variant: Variant,
    /// How the games were made (stored as versioned JSON under `ninjazero.search_settings`).
    pub search_settings: GameSettings,
    pub seed: u64,
    /// Checkpoint hash, or "uniform".
    pub model_id: String,
}

/// What went wrong reading or writing a dataset. Messages name the file and the problem.
/// Each message is complete, so no variant also reports the error it wraps as its
/// `source()`: a caller printing the chain (anyhow's `{:#}`) says nothing twice.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}: not a readable Arrow IPC file: {error}", path.display())]
    Arrow {
        path: PathBuf,
        error: arrow::error::ArrowError,
    },
    #[error("{}: schema version {found}, this build reads version {expected}", path.display())]
    SchemaVersion {
        path: PathBuf,
        found: String,
        expected: u32,
    },
    #[error("{}: holds {found} games, expected {expected}", path.display())]
    WrongVariant {
        path: PathBuf,
        found: Variant,
        expected: Variant,
    },
    /// A file of the dataset being continued was made with other settings: new games would
    /// not be the ones its game ids stand for.
    #[error(
        "{}: made with {setting} {found}, this run has {expected}; continue with the same settings or use another directory",
        path.display()
    )]
    OtherSettings {
        path: PathBuf,
        setting: &'static str,
        found: String,
        expected: String,
    },
    /// The output directory cannot be created or takes no new files.
    #[error("{}: cannot write the dataset there: {error}", dir.display())]
    Unwritable { dir: PathBuf, error: std::io::Error },
    /// Another writer holds the directory's lock.
    #[error("{} is being written by another selfplay process", dir.display())]
    Locked { dir: PathBuf },
    #[error("{}: no such directory", dir.display())]
    NoDirectory { dir: PathBuf },
    /// The file is readable Arrow but not a valid NinjaZero dataset file.
    #[error("{}: {reason}", path.display())]
    Invalid { path: PathBuf, reason: String },
    /// A game handed to the writer cannot be stored.
    #[error("game {game_id}: {reason}")]
    InvalidGame { game_id: u64, reason: String },
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Writing to the caller's output (PGN export) failed.
    #[error("writing the output: {0}")]
    Output(std::io::Error),
}

impl DataError {
    pub(crate) fn io(path: impl Into<PathBuf>, error: std::io::Error) -> DataError {
        DataError::Io {
            path: path.into(),
            error,
        }
    }

    pub(crate) fn invalid(path: impl Into<PathBuf>, reason: impl Into<String>) -> DataError {
        DataError::Invalid {
            path: path.into(),
            reason: reason.into(),
        }
    }
}
