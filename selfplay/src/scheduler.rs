//! Many games at once, one network batch per step.
//!
//! The games are split into two groups that take turns: while one group's leaves are being
//! evaluated (on another thread of the pool, so on a GPU one batch is on the device while the next is
//! prepared), the other group takes back its previous evaluations, searches on to its next
//! leaves (tree work in parallel with rayon), and hands finished games to the writer. Each
//! game has its own random stream and the groups always alternate in the same order, so
//! the same seed and settings give the same games.

use crate::game::SelfPlayGame;
use ninjazero_data::{DataError, DatasetWriter, FileMeta, FlushPolicy, GameSettings};
use ninjazero_model::{Evaluation, Evaluator};
use ninjazero_rules::{Color, Position};
use ninjazero_search::SearchConfig;
use rayon::prelude::*;
use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;
use std::time::{Duration, Instant};

/// The most games one dataset may ask for.
pub const MAX_GAMES: u64 = 1_000_000_000;
/// The fewest games played at once: one per group of the two that take turns.
pub const MIN_CONCURRENCY: usize = 2;
/// The most games played at once.
pub const MAX_CONCURRENCY: usize = 65_536;
/// The most simulations per self-play search.
pub const MAX_SIMULATIONS: u32 = 1_000_000;

/// What to play.
#[derive(Clone, Debug)]
pub struct SelfPlayOptions {
    pub start: Position,
    /// The game ids that make up the dataset (ids already written are skipped). Each game's
    /// random stream derives from `seed` and its id alone, so workers given disjoint ranges
    /// of one seed play disjoint games, the same ones a single run of the whole range plays.
    pub game_ids: Range<u64>,
    /// Games played at the same time (about twice the network batch size).
    pub concurrency: usize,
    pub seed: u64,
    pub config: SearchConfig,
    pub model_id: String,
}

/// Counts and the time breakdown of a run.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    pub games: u64,
    pub positions: u64,
    pub results: [u64; 3],
    pub wall: Duration,
    /// Forward passes (the evaluator's own measurement).
    pub network: Duration,
    /// Writing input planes and turning outputs into priors.
    pub encoding: Duration,
    /// Tree work on the scheduling thread (selection, expansion, backup, move choice, and
    /// the move generation at leaves), while the other group is being evaluated.
    pub search: Duration,
    /// Legal move generation at leaves, summed over worker threads.
    pub movegen: Duration,
    /// Writing data files.
    pub io: Duration,
}

impl RunStats {
    pub fn average_length(&self) -> f64 {
        self.positions as f64 / self.games.max(1) as f64
    }

    /// The time breakdown as shares of the wall time, one line.
    pub fn breakdown(&self) -> String {
        let share = |d: Duration| 100.0 * d.as_secs_f64() / self.wall.as_secs_f64().max(1e-9);
        format!(
            "wall {:.1} s: network forward {:.1} %, encoding/decoding {:.1} %, tree search {:.1} %, move generation {:.1} %, I/O {:.1} %",
            self.wall.as_secs_f64(),
            share(self.network),
            share(self.encoding),
            share(self.search),
            share(self.movegen),
            share(self.io)
        )
    }
}

/// Plays the missing games of a dataset and writes them. `progress` is called after
/// every step.
pub fn run_selfplay(
    options: &SelfPlayOptions,
    evaluator: &mut (dyn Evaluator + Send),
    writer: &mut DatasetWriter,
    already_written: &HashSet<u64>,
    progress: &dyn Fn(&RunStats),
) -> Result<RunStats, DataError> {
    let started = Instant::now();
    let config = &options.config;
    let mut ids = options
        .game_ids
        .clone()
        .filter(|id| !already_written.contains(id));
    let new_game = |ids: &mut dyn Iterator<Item = u64>| {
        ids.next()
            .map(|id| SelfPlayGame::new(id, options.start.clone(), options.seed, config))
    };
    let first_half = options.concurrency.div_ceil(2).max(1);
    let group_sizes = [first_half, options.concurrency.max(2) - first_half];
    let mut groups: [Vec<SelfPlayGame>; 2] =
        group_sizes.map(|size| (0..size).map_while(|_| new_game(&mut ids)).collect());
    let mut outputs: [Vec<Evaluation>; 2] = [Vec::new(), Vec::new()];
    let mut stats = RunStats::default();
    groups[0].par_iter_mut().for_each(|g| {
        g.prepare_leaf(config);
    });
    let mut turn = 0;
    while groups.iter().any(|g| !g.is_empty()) {
        let [g0, g1] = &mut groups;
        let [o0, o1] = &mut outputs;
        let (evaluating, working, eval_out, work_out) = if turn == 0 {
            (&*g0, g1, o0, &*o1)
        } else {
            (&*g1, g0, o1, &*o0)
        };
        // rayon's threads live for the whole run: libtorch keeps per-thread state (OpenMP
        // team, oneDNN primitive caches) that a fresh thread per batch would rebuild.
        let ((), (finished, tree_work)) = rayon::join(
            || evaluate(&mut *evaluator, evaluating, eval_out),
            || {
                let work_started = Instant::now();
                let finished = advance(working, work_out, config);
                (finished, work_started.elapsed())
            },
        );
        stats.search += tree_work;
        for game in finished {
            stats.games += 1;
            stats.positions += game.positions_played() as u64;
            stats.movegen += game.movegen();
            let record = game.into_record(&options.model_id);
            stats.results[match record.winner {
                Some(Color::White) => 0,
                None => 1,
                Some(Color::Black) => 2,
            }] += 1;
            let io_started = Instant::now();
            writer.add_game(record)?;
            stats.io += io_started.elapsed();
        }
        // Every step, not only when a game ends: buffered games get written on time even
        // when none finishes for a while.
        let io_started = Instant::now();
        writer.flush_if_due()?;
        stats.io += io_started.elapsed();
        let working = 1 - turn;
        while groups[working].len() < group_sizes[working] {
            let Some(mut game) = new_game(&mut ids) else {
                break;
            };
            game.prepare_leaf(config);
            groups[working].push(game);
        }
        let timings = evaluator.timings();
        stats.network = timings.forward;
        stats.encoding = timings.encode + timings.decode;
        stats.wall = started.elapsed();
        progress(&stats);
        turn ^= 1;
    }
    stats.wall = started.elapsed();
    Ok(stats)
}

/// Plays the games of `options` that the dataset in `dir` does not hold yet and adds them
/// to it, in files as `policy` says (the search settings go into the files' metadata).
/// `dir` is locked and checked (writable, files made with the same variant, seed, model and
/// settings; see [`DatasetWriter::resume`]) before any game is played.
/// `progress(already, &stats)` is called after every step, with the number of games found
/// in `dir` at the start. Returns that number and the run's counts.
pub fn play_dataset(
    dir: &Path,
    options: &SelfPlayOptions,
    evaluator: &mut (dyn Evaluator + Send),
    policy: FlushPolicy,
    progress: &dyn Fn(u64, &RunStats),
) -> Result<(u64, RunStats), DataError> {
    let meta = FileMeta {
        variant: options.start.variant(),
        search_settings: GameSettings::Mcts {
            search: options.config.clone(),
        },
        seed: options.seed,
        model_id: options.model_id.clone(),
    };
    let (mut writer, done) = DatasetWriter::resume(dir, meta, policy)?;
    let already = done
        .iter()
        .filter(|id| options.game_ids.contains(id))
        .count() as u64;
    let stats = run_selfplay(options, evaluator, &mut writer, &done, &|stats| {
        progress(already, stats)
    })?;
    writer.finish()?;
    Ok((already, stats))
}

/// One batch: the pending leaves of `games`, in game order.
fn evaluate(
    evaluator: &mut (dyn Evaluator + Send),
    games: &[SelfPlayGame],
    out: &mut Vec<Evaluation>,
) {
    let requests: Vec<_> = games.iter().filter_map(|g| g.request()).collect();
    if out.len() < requests.len() {
        out.resize_with(requests.len(), Evaluation::default);
    }
    evaluator.evaluate(&requests, out);
}

/// Gives each game its evaluation, searches on to the next leaf, and takes out the games
/// that ended.
fn advance(
    games: &mut Vec<SelfPlayGame>,
    results: &[Evaluation],
    config: &SearchConfig,
) -> Vec<SelfPlayGame> {
    let mut next = 0;
    let slots: Vec<Option<usize>> = games
        .iter()
        .map(|g| {
            g.request().map(|_| {
                next += 1;
                next - 1
            })
        })
        .collect();
    games.par_iter_mut().zip(slots).for_each(|(game, slot)| {
        if let Some(slot) = slot {
            game.complete_leaf(&results[slot]);
        }
        game.prepare_leaf(config);
    });
    let (finished, playing): (Vec<_>, Vec<_>) = std::mem::take(games)
        .into_iter()
        .partition(|g| g.is_finished());
    *games = playing;
    finished
}
