//! What the workspace's tests share (a dev-dependency only): temporary directories, seeded
//! random positions and games, the project's Python, and running the `ninjazero` binary.

use std::ffi::OsStr;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use ninjazero_data::GameRecord;
use ninjazero_rules::{Position, Variant};
use ninjazero_train::synthetic::{random_game as synthetic_game, FullSearch};
use ninjazero_train::SplitMix64;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

pub use ninjazero_train::synthetic::scripted_game;
pub use tempfile::TempDir;

/// A new empty directory, removed with everything in it when the value is dropped.
pub fn temp_dir() -> TempDir {
    tempfile::Builder::new()
        .prefix("ninjazero-test-")
        .tempdir()
        .expect("a temporary directory")
}

/// `path` as text, for a command line (temporary paths are UTF-8).
pub fn text(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

/// Positions from `games` seeded random games of `variant`, each of a length drawn from
/// `plies` (shorter if it ends): every position a move is played from, the start included.
pub fn random_positions(
    variant: Variant,
    games: usize,
    plies: Range<usize>,
    seed: u64,
) -> Vec<Position> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut positions = Vec::new();
    for _ in 0..games {
        let mut pos = Position::start(variant);
        for _ in 0..rng.random_range(plies.clone()) {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            positions.push(pos.clone());
            pos.play_unchecked(moves[rng.random_range(0..moves.len())]);
        }
    }
    positions
}

/// A seeded game of exactly `plies` random legal moves from `start`, with the synthetic
/// search targets of [`ninjazero_train::synthetic::random_game`], a full search at every
/// even ply (so a test knows their count). Panics if the game ends sooner.
pub fn random_game(start: &Position, game_id: u64, plies: u16, seed: u64) -> GameRecord {
    let mut rng = SplitMix64(seed);
    let game = synthetic_game(start, game_id, plies, FullSearch::EvenPlies, &mut rng);
    assert_eq!(
        game.positions.len(),
        usize::from(plies),
        "game {game_id} ended early"
    );
    game
}

/// The game ids in the dataset at `dir` (of `variant`, if given), sorted: a test compares
/// them with the ids it expects, each once.
pub fn sorted_game_ids(dir: &Path, variant: Option<Variant>) -> Vec<u64> {
    let mut ids: Vec<u64> = ninjazero_data::read_games(dir, variant)
        .expect("a readable dataset")
        .iter()
        .map(|g| g.game_id)
        .collect();
    ids.sort_unstable();
    ids
}

/// The project's Python (`.venv/bin/python`, made by scripts/setup.sh), for tests against
/// the PyTorch and pyarrow references.
pub fn venv_python() -> PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    assert!(
        python.exists(),
        "run scripts/setup.sh first: {} is missing",
        python.display()
    );
    python
}

/// A program under test. The `ninjazero` binary's path is known only to the root package's
/// own tests: `Binary(env!("CARGO_BIN_EXE_ninjazero"))`.
#[derive(Clone, Copy, Debug)]
pub struct Binary(pub &'static str);

impl Binary {
    /// A command that runs the program with `args`.
    pub fn command<S: AsRef<OsStr>>(self, args: &[S]) -> Command {
        let mut command = Command::new(self.0);
        command.args(args);
        command
    }

    /// Writes a freshly initialised tiny network for `variant` to `out` (`model init`);
    /// panics with the program's output if it fails.
    pub fn init_tiny_model(self, variant: &str, out: &Path) {
        let (ok, output) = self.try_init_tiny_model(variant, out);
        assert!(ok, "{output}");
    }

    /// `model init` of a tiny network for `variant` at `out`: whether it succeeded, and its
    /// output.
    pub fn try_init_tiny_model(self, variant: &str, out: &Path) -> (bool, String) {
        self.run(&[
            "model",
            "init",
            "--variant",
            variant,
            "--preset",
            "tiny",
            "--out",
            text(out),
        ])
    }

    /// Runs the program with `args` and nothing on its standard input.
    pub fn output<S: AsRef<OsStr>>(self, args: &[S]) -> Output {
        self.command(args).output().expect("the binary starts")
    }

    /// Runs the program with `args`: whether it succeeded, and its stdout then its stderr.
    pub fn run<S: AsRef<OsStr>>(self, args: &[S]) -> (bool, String) {
        outcome(self.output(args))
    }

    /// Runs the program with `args` and `input` on its standard input.
    pub fn output_with_input<S: AsRef<OsStr>>(self, args: &[S], input: &str) -> Output {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        child
            .stdin
            .take()
            .expect("a piped stdin")
            .write_all(input.as_bytes())
            .expect("the input is written");
        child.wait_with_output().expect("the binary ends")
    }
}

/// The `A of B` of the first "on A of B positions" in a training report (`train`'s line,
/// the pipeline's training log): the positions trained on, of those in the data.
pub fn trained_window(report: &str) -> Option<(usize, usize)> {
    let (_, rest) = report.split_once(" on ")?;
    let (counts, _) = rest.split_once(" positions")?;
    let (window, total) = counts.split_once(" of ")?;
    Some((window.parse().ok()?, total.parse().ok()?))
}

/// Whether a finished program succeeded, and its stdout then its stderr.
pub fn outcome(output: Output) -> (bool, String) {
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), text)
}
