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
//! - Storage: one JSON object per pairing in the ladder's [`Store`] (a directory,
//!   `file://` or `s3://`), named by the two spec texts, rewritten whole after every few
//!   pairs. A later ladder in the same directory reuses
//!   the anchors' games among themselves, and a killed ladder run again reuses every game
//!   already played: a pairing plays only the games it still lacks, with the openings of
//!   one long arena (pair `k` always gets opening `k`).
//! - Shards: many jobs (a Slurm array) can play one ladder, each [`Shard`] its slice of
//!   every pairing's pairs, stored as parts beside the pairing's file
//!   ([`crate::series`]); the ladder run without a shard merges them, plays only what no
//!   job stored, and fits the ratings.

use crate::arena::{run_arena, ArenaConfig, ArenaGame};
use crate::rating::{fit_ratings, PairingScore, Rating, RatingError};
use crate::series::{slice_key, slice_keys, Series, Shard};
use ninjazero_data::store::{Store, StoreError};
use ninjazero_rules::seed::{derive_seed, SeedStream};
use ninjazero_rules::Variant;
use ninjazero_search::{EngineSpec, SpecError};
use serde::{Deserialize, Serialize};

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
/// games per pairing and where the games are stored.
#[derive(Clone, Debug)]
pub struct LadderJob {
    pub variant: Variant,
    pub player: EngineSpec,
    /// Milliseconds per move of the time-limited anchors.
    pub ms: u64,
    /// Games per pairing (rounded up to whole pairs of openings).
    pub games: usize,
    /// Where the games are stored, one object per pairing: a directory, `file:///abs/path`
    /// or `s3://bucket/prefix` ([`Store::open`]).
    pub location: String,
    pub settings: LadderSettings,
    /// Games played at once, one per thread.
    pub threads: usize,
    pub device: tch::Device,
    /// Play only this shard's pairs of every pairing (one job of many); `None`: all of
    /// them, merging what the shards stored, and fit the ratings.
    pub shard: Option<Shard>,
}

/// The games of one pairing, as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairingGames {
    pub variant: String,
    /// Player A's spec text (`ArenaGame::a_is_white` and the results refer to it).
    pub a: String,
    pub b: String,
    pub settings: LadderSettings,
    /// The pair the games start at: 0 in the whole file, the shard's first in a part.
    #[serde(default)]
    pub first_pair: usize,
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

/// The rated player's games against one opponent, from the player's side.
#[derive(Clone, Debug, PartialEq)]
pub struct OpponentResult {
    pub opponent: String,
    pub wins: usize,
    pub draws: usize,
    pub losses: usize,
}

/// The ladder's outcome: every player's rating, strongest first, and the rated player's
/// results against each opponent (both empty for a shard's job), and how many games were
/// played now and reused from the store.
#[derive(Clone, Debug)]
pub struct LadderReport {
    pub rows: Vec<LadderRow>,
    pub opponents: Vec<OpponentResult>,
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
    /// A stored pairing that cannot be read, or holds other games.
    #[error("{object}: {message}")]
    Stored { object: String, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
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

/// The name of the pairing of spec texts `a` and `b`: `A--vs--B`, with every character
/// but letters, digits and `.=-` written as `_`. Its games are stored as the series of
/// pairs [`crate::series`] keeps under this stem: `A--vs--B.json`, and the parts of
/// shards `A--vs--B.part-F-L.json`.
pub fn pairing_stem(a: &str, b: &str) -> String {
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
    format!("{}--vs--{}", slug(a), slug(b))
}

/// The stored games of one object of a pairing, as pairs from its first pair on; an
/// object of other specs, another variant or other settings is an error.
fn load(store: &Store, key: &str, expected: &PairingGames) -> Result<PairingGames, LadderError> {
    let stored_error = |message: String| LadderError::Stored {
        object: format!("{}/{key}", store.url()),
        message,
    };
    let bytes = store.get(key)?;
    let stored: PairingGames =
        serde_json::from_slice(&bytes).map_err(|e| stored_error(format!("cannot read it: {e}")))?;
    if (&stored.variant, &stored.a, &stored.b) != (&expected.variant, &expected.a, &expected.b) {
        return Err(stored_error(format!(
            "holds {} vs {} on {}, not {} vs {} on {}",
            stored.a, stored.b, stored.variant, expected.a, expected.b, expected.variant
        )));
    }
    if stored.settings != expected.settings {
        return Err(stored_error(format!(
            "played with other settings ({:?}, now {:?}); use another ladder directory",
            stored.settings, expected.settings
        )));
    }
    Ok(stored)
}

fn save(store: &Store, key: &str, pairing: &PairingGames) -> Result<(), LadderError> {
    let json = serde_json::to_string_pretty(pairing).map_err(|e| LadderError::Stored {
        object: format!("{}/{key}", store.url()),
        message: e.to_string(),
    })?;
    Ok(store.put(key, (json + "\n").into_bytes())?)
}

/// The two games of one opening (player A as White, then as Black).
type Pair = [ArenaGame; 2];

/// Games in pair order as pairs; an odd last game is dropped.
fn whole_pairs(games: &[ArenaGame]) -> Vec<Pair> {
    games
        .chunks_exact(2)
        .map(|pair| [pair[0].clone(), pair[1].clone()])
        .collect()
}

/// Every stored pair of the pairing, from the whole series and the parts of shards (an odd
/// game left by an older version is dropped: pairs stay whole).
fn stored_pairs(
    store: &Store,
    pairing: &PairingGames,
    pairs: usize,
) -> Result<Series<Pair>, LadderError> {
    let stem = pairing_stem(&pairing.a, &pairing.b);
    let mut series = Series::new(pairs);
    for key in slice_keys(store, "", &stem)? {
        let stored = load(store, &key, pairing)?;
        series.insert(stored.first_pair, whole_pairs(&stored.games));
    }
    Ok(series)
}

/// Plays the pairs of pairing `a` vs `b` that `store` lacks among those this job plays
/// (all, or its shard's), storing them after every batch of `threads` pairs in the whole
/// series (or the shard's part); returns how many games were stored before and how
/// many were played now, and the pairing's games when every pair is known.
/// `progress(games)` is called after every pair with this job's games so far.
fn complete_pairing(
    job: &LadderJob,
    store: &Store,
    a: &EngineSpec,
    b: &EngineSpec,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<PairingOutcome, LadderError> {
    let mut pairing = PairingGames {
        variant: job.variant.id().to_string(),
        a: a.to_string(),
        b: b.to_string(),
        settings: job.settings.clone(),
        first_pair: 0,
        games: Vec::new(),
    };
    let pairs = job.games.div_ceil(2);
    let range = job.shard.map_or(0..pairs, |shard| shard.range(pairs));
    let mut series = stored_pairs(store, &pairing, pairs)?;
    let stored = 2 * series.known(range.clone());
    let key = slice_key(
        "",
        &pairing_stem(&pairing.a, &pairing.b),
        job.shard.is_some().then_some(&range),
    );
    pairing.first_pair = range.start;
    let seed = job.settings.seed;
    let make_a = a.factory(job.variant, job.device, seed);
    let make_b = b.factory(
        job.variant,
        job.device,
        derive_seed(seed, SeedStream::SecondPlayer, 1),
    );
    let played = series.complete(
        range.clone(),
        job.threads.max(1),
        &mut |chunk| {
            let config = ArenaConfig {
                pairs: chunk.len(),
                first_pair: chunk.start,
                opening_plies: job.settings.opening_plies,
                max_plies: job.settings.max_plies,
                seed,
                sprt: None,
            };
            let before = 2 * (chunk.start - range.start);
            let result = run_arena(
                &make_a,
                &make_b,
                job.variant,
                &config,
                job.threads,
                &|finished, _, _| progress(before + finished),
            )
            .map_err(LadderError::Arena)?;
            Ok(whole_pairs(&result.game_results))
        },
        &mut |prefix| {
            pairing.games = prefix.into_iter().flatten().collect();
            save(store, &key, &pairing)
        },
    )?;
    Ok(PairingOutcome {
        stored,
        played: 2 * played,
        games: series
            .games(0..pairs)
            .map(|pairs| pairs.into_iter().flatten().collect()),
    })
}

/// What a job did with one pairing.
struct PairingOutcome {
    /// Games of the job's pairs that were stored before.
    stored: usize,
    /// Games played now.
    played: usize,
    /// Every game of the pairing, once all are known.
    games: Option<Vec<ArenaGame>>,
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
/// the ratings. With [`LadderJob::shard`] it plays only that shard's pairs of every
/// pairing, stores them in the shard's parts, and fits nothing (no rows): a ladder run
/// without a shard then merges the parts. `progress(done, total, pairing)` is called as
/// games finish, counting the reused ones as done.
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
    let store = Store::open(&job.location)?;
    let texts: Vec<String> = players.iter().map(EngineSpec::to_string).collect();
    let pairs = pairings(&texts, anchor_count, player);
    let pairs_per_pairing = job.games.div_ceil(2);
    let per_pairing = 2 * job
        .shard
        .map_or(pairs_per_pairing, |s| s.range(pairs_per_pairing).len());
    let total = per_pairing * pairs.len();
    let (mut scores, mut played, mut reused) = (Vec::new(), 0, 0);
    for (index, &(a, b)) in pairs.iter().enumerate() {
        let label = format!("{} vs {}", texts[a], texts[b]);
        let base = index * per_pairing;
        let outcome = complete_pairing(job, &store, &players[a], &players[b], &|n| {
            progress(base + n.min(per_pairing), total, &label)
        })?;
        played += outcome.played;
        reused += outcome.stored;
        progress(base + per_pairing, total, &label);
        if job.shard.is_none() {
            let games = outcome.games.ok_or_else(|| {
                LadderError::Arena(format!("{label}: games are missing after playing"))
            })?;
            scores.push(score_of(a, b, &games));
        }
    }
    let rows = match job.shard {
        Some(_) => Vec::new(),
        None => {
            let ratings = fit_ratings(players.len(), &scores, VIRTUAL_DRAWS)?;
            rows(&texts, player, &scores, &ratings)
        }
    };
    Ok(LadderReport {
        rows,
        opponents: opponent_results(&texts, player, &scores),
        played,
        reused,
    })
}

/// The player's results against each opponent, in the pairings' order.
fn opponent_results(
    texts: &[String],
    player: usize,
    scores: &[PairingScore],
) -> Vec<OpponentResult> {
    scores
        .iter()
        .filter_map(|s| {
            let (opponent, wins, losses) = if s.a == player {
                (s.b, s.wins, s.losses)
            } else if s.b == player {
                (s.a, s.losses, s.wins)
            } else {
                return None;
            };
            Some(OpponentResult {
                opponent: texts[opponent].clone(),
                wins,
                draws: s.draws,
                losses,
            })
        })
        .collect()
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
    /// The table: player (the rated one marked `*`), rating, 95 % interval, games, score;
    /// then the rated player's wins, draws and losses against each opponent.
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
        if let Some(player) = self.rows.iter().find(|r| r.is_player) {
            out += &format!("\n{} against each opponent:\n", player.spec);
            for result in &self.opponents {
                out += &format!(
                    "  {:<width$} +{} ={} -{}\n",
                    result.opponent, result.wins, result.draws, result.losses
                );
            }
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
    fn the_players_results_are_counted_from_its_side() {
        let texts: Vec<String> = ["random", "b", "p"].map(String::from).to_vec();
        let score = |a, b, wins, draws, losses| PairingScore {
            a,
            b,
            wins,
            draws,
            losses,
        };
        let scores = [
            score(1, 0, 5, 0, 0),
            score(2, 0, 3, 1, 0),
            score(1, 2, 2, 1, 0),
        ];
        let result = |opponent: &str, wins, draws, losses| OpponentResult {
            opponent: opponent.to_string(),
            wins,
            draws,
            losses,
        };
        assert_eq!(
            opponent_results(&texts, 2, &scores),
            vec![result("random", 3, 1, 0), result("b", 0, 1, 2)]
        );
    }

    #[test]
    fn pairing_files_are_named_by_both_specs() {
        let stem = pairing_stem(
            "alphabeta:depth=1",
            "uci:/usr/games/fairy-stockfish:depth=1:Skill Level=0",
        );
        assert_eq!(
            stem,
            "alphabeta_depth=1--vs--uci__usr_games_fairy-stockfish_depth=1_Skill_Level=0"
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
