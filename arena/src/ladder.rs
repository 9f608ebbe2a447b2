//! The strength ladder: one player rated on one Elo scale against fixed anchors of its
//! variant (the random mover at 0), all games fitted jointly by [`crate::rating`].
//!
//! - Anchors, weakest first: `random`, the model-free MCTS `uniform:ms=T`, alpha-beta at
//!   depths 1, 2 and 3, `alphabeta:ms=T`, and on chess Fairy-Stockfish at depth 1 with
//!   Skill Level 0, at depth 1, and at depth 5, in the order of a measured chess ladder
//!   (at T = 50) so that neighbours are close in strength. `T` is the ladder's time per
//!   move: the `ms=` anchors are time-limited, the others fixed-depth (so their strength
//!   does not depend on the machine).
//! - Pairings: the player against every anchor, and each anchor against the next one, so
//!   that the anchors' own scale is fitted from their games too.
//! - Storage: one JSON file per pairing in the ladder directory, named by the two spec texts,
//!   written atomically after every few pairs. A later ladder in the same directory reuses
//!   the anchors' games among themselves, and a killed ladder run again reuses every game
//!   already played: a pairing plays only the games it still lacks, with the openings of
//!   one long arena (pair `k` always gets opening `k`).

use crate::arena::{run_arena, ArenaConfig, ArenaGame};
use crate::rating::{fit_ratings, PairingScore, Rating, RatingError};
use ninjazero_rules::seed::{derive_seed, SeedStream};
use ninjazero_rules::Variant;
use ninjazero_search::{EngineSpec, SpecError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Virtual draws added to every pairing of the fit (see [`crate::rating`]): one keeps a
/// clean sweep finite while moving a score of 20 games by at most 2.5 %.
pub const VIRTUAL_DRAWS: f64 = 1.0;

/// How the ladder's games are played; stored with every pairing, and a pairing stored with
/// other settings is refused rather than mixed in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LadderSettings {
    /// Random legal plies from the start position that make an opening.
    pub opening_plies: usize,
    /// Games reaching this many plies are adjudicated on material.
    pub max_plies: u32,
    /// Seed of the openings.
    pub seed: u64,
}

/// A ladder run: the variant, the player, the time per move of the time-limited anchors,
/// games per pairing and the directory of the stored games.
#[derive(Clone, Debug)]
pub struct LadderJob {
    pub variant: Variant,
    pub player: EngineSpec,
    /// Milliseconds per move of the time-limited anchors.
    pub ms: u64,
    /// Games per pairing (rounded up to whole pairs of openings).
    pub games: usize,
    pub dir: PathBuf,
    pub settings: LadderSettings,
    /// Games played at once, one per thread.
    pub threads: usize,
    pub device: tch::Device,
}

/// The games of one pairing, as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairingGames {
    pub variant: String,
    /// Player A's spec text (`ArenaGame::a_is_white` and the results refer to it).
    pub a: String,
    pub b: String,
    pub settings: LadderSettings,
    pub games: Vec<ArenaGame>,
}

/// One line of the ladder's table.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderRow {
    pub spec: String,
    pub rating: Rating,
    pub games: usize,
    /// Points per game over all its ladder games.
    pub score: f64,
    /// The player being rated (not an anchor, or the anchor given as the player).
    pub is_player: bool,
}

/// The ladder's outcome: every player's rating, strongest first, and how many games were
/// played now and reused from the directory.
#[derive(Clone, Debug)]
pub struct LadderReport {
    pub rows: Vec<LadderRow>,
    pub played: usize,
    pub reused: usize,
}

/// Why a ladder cannot be run.
#[derive(Debug, thiserror::Error)]
pub enum LadderError {
    /// A player cannot be built (unknown engine, checkpoint of another variant, missing
    /// program); the message names the player.
    #[error(transparent)]
    Player(#[from] SpecError),
    #[error("{path}: {message}", path = .path.display())]
    File { path: PathBuf, message: String },
    #[error("{0}")]
    Arena(String),
    #[error(transparent)]
    Rating(#[from] RatingError),
}

/// The anchors of `variant` with `ms` milliseconds per move for the time-limited ones,
/// weakest first (see the module docs).
pub fn anchors(variant: Variant, ms: u64) -> Vec<EngineSpec> {
    let uniform = format!("uniform:ms={ms}");
    let timed = format!("alphabeta:ms={ms}");
    let texts: Vec<&str> = if variant == Variant::Chess {
        vec![
            "random",
            &uniform,
            "alphabeta:depth=1",
            "uci:fairy-stockfish:depth=1:Skill Level=0",
            "alphabeta:depth=2",
            "alphabeta:depth=3",
            "uci:fairy-stockfish:depth=1",
            &timed,
            "uci:fairy-stockfish:depth=5",
        ]
    } else {
        vec![
            "random",
            &uniform,
            "alphabeta:depth=1",
            "alphabeta:depth=2",
            "alphabeta:depth=3",
            &timed,
        ]
    };
    texts
        .iter()
        .map(|t| t.parse().expect("the anchors are valid specs"))
        .collect()
}

/// The pairings of a ladder as indexes into `players` (anchors first, the player last
/// unless it is an anchor): the player against every other, and adjacent anchors; each
/// unordered pair once.
fn pairings(players: &[String], anchors: usize, player: usize) -> Vec<(usize, usize)> {
    let mut pairs: Vec<(usize, usize)> = (1..anchors).map(|i| (i - 1, i)).collect();
    pairs.extend(
        (0..players.len())
            .filter(|&i| i != player)
            .map(|i| (player, i)),
    );
    let mut unique: Vec<(usize, usize)> = Vec::new();
    for (x, y) in pairs {
        // Stored and played with the two specs in text order, whoever asked for the pairing.
        let key = if players[x] <= players[y] {
            (x, y)
        } else {
            (y, x)
        };
        if !unique.contains(&key) {
            unique.push(key);
        }
    }
    unique
}

/// The file of the pairing of spec texts `a` and `b`: `A--vs--B.json`, with every
/// character but letters, digits and `.=-` written as `_`.
pub fn pairing_path(dir: &Path, a: &str, b: &str) -> PathBuf {
    let slug = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || ".=-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    dir.join(format!("{}--vs--{}.json", slug(a), slug(b)))
}

/// The stored games of a pairing (none if it has no file yet); a file of other specs,
/// another variant or other settings is an error.
fn load(path: &Path, expected: &PairingGames) -> Result<Vec<ArenaGame>, LadderError> {
    let file_error = |message: String| LadderError::File {
        path: path.to_path_buf(),
        message,
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(file_error(e.to_string())),
    };
    let stored: PairingGames =
        serde_json::from_str(&text).map_err(|e| file_error(format!("cannot read it: {e}")))?;
    if (&stored.variant, &stored.a, &stored.b) != (&expected.variant, &expected.a, &expected.b) {
        return Err(file_error(format!(
            "holds {} vs {} on {}, not {} vs {} on {}",
            stored.a, stored.b, stored.variant, expected.a, expected.b, expected.variant
        )));
    }
    if stored.settings != expected.settings {
        return Err(file_error(format!(
            "played with other settings ({:?}, now {:?}); use another ladder directory",
            stored.settings, expected.settings
        )));
    }
    Ok(stored.games)
}

fn save(path: &Path, pairing: &PairingGames) -> Result<(), LadderError> {
    let json = serde_json::to_string_pretty(pairing).map_err(|e| LadderError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    ninjazero_data::atomic::write_atomically(path, (json + "\n").as_bytes()).map_err(|e| {
        LadderError::File {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    })
}

/// Plays the games pairing `a` vs `b` still lacks, storing them after every batch of
/// `threads` pairs; returns all its games and how many were played now.
/// `progress(games)` is called after every pair with the pairing's games so far.
fn complete_pairing(
    job: &LadderJob,
    a: &EngineSpec,
    b: &EngineSpec,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(Vec<ArenaGame>, usize), LadderError> {
    let (a_text, b_text) = (a.to_string(), b.to_string());
    let path = pairing_path(&job.dir, &a_text, &b_text);
    let mut pairing = PairingGames {
        variant: job.variant.id().to_string(),
        a: a_text,
        b: b_text,
        settings: job.settings.clone(),
        games: Vec::new(),
    };
    pairing.games = load(&path, &pairing)?;
    // An odd game left by an older version is dropped: pairs stay whole.
    pairing.games.truncate(pairing.games.len() / 2 * 2);
    let stored = pairing.games.len();
    let pairs = job.games.div_ceil(2);
    let seed = job.settings.seed;
    let make_a = a.factory(job.variant, job.device, seed);
    let make_b = b.factory(
        job.variant,
        job.device,
        derive_seed(seed, SeedStream::SecondPlayer, 1),
    );
    while pairing.games.len() / 2 < pairs {
        let done = pairing.games.len() / 2;
        let config = ArenaConfig {
            pairs: (pairs - done).min(job.threads.max(1)),
            first_pair: done,
            opening_plies: job.settings.opening_plies,
            max_plies: job.settings.max_plies,
            seed,
            sprt: None,
        };
        let result = run_arena(
            &make_a,
            &make_b,
            job.variant,
            &config,
            job.threads,
            &|finished, _, _| progress(2 * done + finished),
        )
        .map_err(LadderError::Arena)?;
        pairing.games.extend(result.game_results);
        save(&path, &pairing)?;
    }
    let played = pairing.games.len() - stored;
    Ok((pairing.games, played))
}

/// Builds every player once before any game is played, so that a bad spec, a checkpoint
/// of another variant or a missing engine is reported at once, naming the player.
fn check_players(job: &LadderJob, players: &[EngineSpec]) -> Result<(), LadderError> {
    for spec in players {
        spec.build(job.variant, job.device, 0)?;
    }
    Ok(())
}

/// Runs the ladder: checks the players, plays (or reuses) every pairing's games, and fits
/// the ratings. `progress(done, total, pairing)` is called as games finish, counting the
/// reused ones as done.
pub fn run_ladder(
    job: &LadderJob,
    progress: &(dyn Fn(usize, usize, &str) + Sync),
) -> Result<LadderReport, LadderError> {
    let mut players = anchors(job.variant, job.ms);
    let anchor_count = players.len();
    let player = match players.iter().position(|p| *p == job.player) {
        Some(i) => i,
        None => {
            players.push(job.player.clone());
            anchor_count
        }
    };
    check_players(job, &players)?;
    std::fs::create_dir_all(&job.dir).map_err(|e| LadderError::File {
        path: job.dir.clone(),
        message: e.to_string(),
    })?;
    let texts: Vec<String> = players.iter().map(EngineSpec::to_string).collect();
    let pairs = pairings(&texts, anchor_count, player);
    let per_pairing = 2 * job.games.div_ceil(2);
    let total = per_pairing * pairs.len();
    let (mut scores, mut played, mut reused) = (Vec::new(), 0, 0);
    for &(a, b) in &pairs {
        let label = format!("{} vs {}", texts[a], texts[b]);
        let base = scores.len() * per_pairing;
        let (games, now) = complete_pairing(job, &players[a], &players[b], &|n| {
            progress(base + n.min(per_pairing), total, &label)
        })?;
        played += now;
        reused += games.len() - now;
        progress(base + per_pairing, total, &label);
        scores.push(score_of(a, b, &games));
    }
    let ratings = fit_ratings(players.len(), &scores, VIRTUAL_DRAWS)?;
    Ok(LadderReport {
        rows: rows(&texts, player, &scores, &ratings),
        played,
        reused,
    })
}

/// Wins, draws and losses of `a` against `b`.
fn score_of(a: usize, b: usize, games: &[ArenaGame]) -> PairingScore {
    let count = |points: f64| games.iter().filter(|g| g.score_a() == points).count();
    PairingScore {
        a,
        b,
        wins: count(1.0),
        draws: count(0.5),
        losses: count(0.0),
    }
}

/// The table's rows, strongest first.
fn rows(
    texts: &[String],
    player: usize,
    scores: &[PairingScore],
    ratings: &[Rating],
) -> Vec<LadderRow> {
    let mut rows: Vec<LadderRow> = texts
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let (mut games, mut points) = (0, 0.0);
            for s in scores.iter().filter(|s| s.a == i || s.b == i) {
                let (wins, losses) = if s.a == i {
                    (s.wins, s.losses)
                } else {
                    (s.losses, s.wins)
                };
                games += wins + s.draws + losses;
                points += wins as f64 + 0.5 * s.draws as f64;
            }
            LadderRow {
                spec: spec.clone(),
                rating: ratings[i],
                games,
                score: if games == 0 {
                    0.0
                } else {
                    points / games as f64
                },
                is_player: i == player,
            }
        })
        .collect();
    rows.sort_by(|x, y| y.rating.elo.total_cmp(&x.rating.elo));
    rows
}

impl LadderReport {
    /// The table: player (the rated one marked `*`), rating, 95 % interval, games, score.
    pub fn table(&self) -> String {
        let width = self
            .rows
            .iter()
            .map(|r| r.spec.len())
            .max()
            .unwrap_or(6)
            .max(6)
            + 2;
        let mut out = format!(
            "{:<width$} {:>7}  {:>17}  {:>6}  {:>6}\n",
            "player", "Elo", "95 % interval", "games", "score"
        );
        for row in &self.rows {
            let name = format!("{}{}", if row.is_player { "* " } else { "  " }, row.spec);
            let interval = format!("[{:+.0}, {:+.0}]", row.rating.low, row.rating.high);
            out += &format!(
                "{name:<width$} {:>+7.0}  {interval:>17}  {:>6}  {:>6.3}\n",
                row.rating.elo, row.games, row.score
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairings_chain_the_anchors_and_join_the_player_to_each() {
        let texts: Vec<String> = ["random", "b", "c", "p"].map(String::from).to_vec();
        assert_eq!(
            pairings(&texts, 3, 3),
            vec![(1, 0), (1, 2), (3, 0), (1, 3), (2, 3)]
        );
        // An anchor as the player: its pairings with its neighbours are not repeated.
        let anchors: Vec<String> = ["random", "b", "c"].map(String::from).to_vec();
        assert_eq!(pairings(&anchors, 3, 1), vec![(1, 0), (1, 2)]);
    }

    #[test]
    fn pairing_files_are_named_by_both_specs() {
        let path = pairing_path(
            Path::new("ladders/chess"),
            "alphabeta:depth=1",
            "uci:/usr/games/fairy-stockfish:depth=1:Skill Level=0",
        );
        assert_eq!(
            path,
            Path::new(
                "ladders/chess/alphabeta_depth=1--vs--uci__usr_games_fairy-stockfish_depth=1_Skill_Level=0.json"
            )
        );
    }

    #[test]
    fn every_anchor_is_a_valid_spec() {
        assert_eq!(anchors(Variant::InsaneNinja, 100).len(), 6);
        let chess = anchors(Variant::Chess, 50);
        assert_eq!(chess.len(), 9);
        assert_eq!(chess[1].to_string(), "uniform:ms=50");
        assert_eq!(chess[7].to_string(), "alphabeta:ms=50");
    }
}
