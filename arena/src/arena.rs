//! The arena: two players over paired openings (every opening twice, colours swapped),
//! with the score, an Elo difference with its 95 % interval and an optional SPRT.
//!
//! Statistics are per pair of games (the pentanomial model fishtest uses for paired
//! openings): a pair's score is the mean of A's two results, so the unbalance of a random
//! opening cancels out of the variance.

use crate::lockstep;
use ninjazero_data::GameResult;
use ninjazero_model::OneTorchThread;
use ninjazero_rules::seed::{derive_seed, SeedStream};
use ninjazero_rules::{Color, Game, Move, Position, Variant};
use ninjazero_search::{Engine, EngineFactory, SearchError, SearchInfo};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// The most pairs one arena may play.
pub const MAX_PAIRS: usize = 1_000_000;

/// How an arena is played.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArenaConfig {
    /// Openings; every one is played twice with colours swapped, so games = 2 * pairs.
    pub pairs: usize,
    /// The number of the first opening: pairs `first_pair..first_pair + pairs` are played,
    /// so that a long match can be played (and stored) a few pairs at a time with the
    /// openings of one long arena.
    #[serde(default)]
    pub first_pair: usize,
    /// Random legal plies from the start position that make an opening (seeded).
    pub opening_plies: usize,
    /// Games reaching this many plies (opening included) are adjudicated on material (see
    /// [`ADJUDICATION_MARGIN`]).
    pub max_plies: u32,
    pub seed: u64,
    /// Stop as soon as this test is decided.
    pub sprt: Option<SprtConfig>,
}

impl Default for ArenaConfig {
    fn default() -> ArenaConfig {
        ArenaConfig {
            pairs: 50,
            first_pair: 0,
            opening_plies: 6,
            max_plies: 300,
            seed: 0,
            sprt: None,
        }
    }
}

/// A sequential probability ratio test of H0: Elo = elo0 against H1: Elo = elo1 (logistic
/// Elo), with false positive rate `alpha` and false negative rate `beta`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtConfig {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

impl SprtConfig {
    /// The test with alpha = beta = 0.05 (fishtest's choice).
    pub fn new(elo0: f64, elo1: f64) -> SprtConfig {
        SprtConfig {
            elo0,
            elo1,
            alpha: 0.05,
            beta: 0.05,
        }
    }

    /// (lower, upper) LLR bounds: ln(beta / (1 - alpha)) and ln((1 - beta) / alpha).
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }
}

/// The verdict of an SPRT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtVerdict {
    AcceptH1,
    AcceptH0,
    Continue,
}

/// One game of an arena.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArenaGame {
    /// The opening's moves, in move text.
    pub opening: Vec<String>,
    pub a_is_white: bool,
    /// `1-0`, `0-1` or `1/2-1/2` in the file; any other text is refused where it is read.
    pub result: GameResult,
    /// `checkmate`, `threefold repetition`, …, `adjudication (material)`, `max plies`,
    /// `illegal move …` or `PLAYER failed: …` (an external engine's fault).
    pub termination: String,
    /// Plies of the whole game, opening included.
    pub plies: usize,
}

impl ArenaGame {
    /// The record of `game`, played from `opening` with A as White or Black, ended by `end`.
    pub(crate) fn new(
        opening: Vec<String>,
        a_is_white: bool,
        end: GameEnd,
        game: &Game,
    ) -> ArenaGame {
        let (winner, termination) = end;
        ArenaGame {
            opening,
            a_is_white,
            result: GameResult::from_winner(winner),
            termination,
            plies: game.moves().len(),
        }
    }

    /// A's points in this game: 1, 0.5 or 0.
    pub fn score_a(&self) -> f64 {
        let white = match self.result {
            GameResult::WhiteWins => 1.0,
            GameResult::BlackWins => 0.0,
            GameResult::Draw => 0.5,
        };
        if self.a_is_white {
            white
        } else {
            1.0 - white
        }
    }
}

/// The outcome of an arena, from player A's view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArenaResult {
    pub variant: String,
    pub player_a: String,
    pub player_b: String,
    pub games: usize,
    pub wins: usize,
    pub draws: usize,
    pub losses: usize,
    /// A's points per game.
    pub score: f64,
    /// Elo difference A - B and its 95 % interval (see [`ArenaResult::from_games`]).
    pub elo: f64,
    pub elo_low: f64,
    pub elo_high: f64,
    /// `H1 accepted (LLR …)`, `H0 accepted (LLR …)` or `continue (LLR …)` when an SPRT was
    /// asked for.
    pub sprt: Option<String>,
    pub game_results: Vec<ArenaGame>,
}

/// Pseudo-pairs of prior variance mixed into the per-pair variance (see
/// [`ArenaResult::from_games`]).
const PRIOR_PAIRS: f64 = 2.0;
/// The variance of a pair's score when both games are decisive coin flips.
const PRIOR_VARIANCE: f64 = 0.125;

/// Logistic Elo of a score in (0, 1): -400 log10(1/s - 1).
pub fn elo_from_score(score: f64) -> f64 {
    // `+ 0.0` turns -0 into 0, so that an even score prints as +0.
    -400.0 * (1.0 / score - 1.0).log10() + 0.0
}

/// The expected score at a logistic Elo difference.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Mean and regularised variance of per-pair scores: the sample variance is shrunk towards
/// [`PRIOR_VARIANCE`] with the weight of [`PRIOR_PAIRS`] pairs, so that a few identical
/// results (all wins, all draws) cannot give a zero variance.
fn mean_and_variance(units: &[f64]) -> (f64, f64) {
    let n = units.len() as f64;
    if units.is_empty() {
        return (0.5, PRIOR_VARIANCE);
    }
    let mean = units.iter().sum::<f64>() / n;
    let sample = units.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    (
        mean,
        (n * sample + PRIOR_PAIRS * PRIOR_VARIANCE) / (n + PRIOR_PAIRS),
    )
}

/// The normal-approximation generalised log-likelihood ratio of fishtest's GSPRT for
/// per-pair scores (each the mean of A's two results):
/// N (s1 - s0) (2 mu - s0 - s1) / (2 var), with s0, s1 the scores at elo0 and elo1 and the
/// variance regularised as in [`mean_and_variance`].
pub fn sprt_llr(pair_scores: &[f64], elo0: f64, elo1: f64) -> f64 {
    if pair_scores.is_empty() {
        return 0.0;
    }
    let (s0, s1) = (score_from_elo(elo0), score_from_elo(elo1));
    let (mean, variance) = mean_and_variance(pair_scores);
    pair_scores.len() as f64 * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * variance)
}

/// The SPRT verdict on the complete pairs of `games`, with the LLR.
pub fn sprt_verdict(games: &[ArenaGame], config: &SprtConfig) -> (SprtVerdict, f64) {
    let pairs: Vec<f64> = games
        .chunks_exact(2)
        .map(|pair| (pair[0].score_a() + pair[1].score_a()) / 2.0)
        .collect();
    let llr = sprt_llr(&pairs, config.elo0, config.elo1);
    let (lower, upper) = config.bounds();
    let verdict = if llr >= upper {
        SprtVerdict::AcceptH1
    } else if llr <= lower {
        SprtVerdict::AcceptH0
    } else {
        SprtVerdict::Continue
    };
    (verdict, llr)
}

impl ArenaResult {
    /// The statistics of a list of games, consecutive games forming the pairs.
    ///
    /// - `score` is A's points per game; the Elo comes from it through
    ///   [`elo_from_score`]. When A won or lost every game the score is corrected to
    ///   (points + 0.5) / (games + 1), which keeps the Elo finite.
    /// - The 95 % interval is score ± 1.96 standard errors, from the variance of the
    ///   per-pair scores (an incomplete last pair counts as a unit of its own), shrunk
    ///   towards 0.125 with the weight of two pairs; its ends are kept within
    ///   [0.25 / (games + 1), 1 - 0.25 / (games + 1)] (beyond the corrected score of a clean
    ///   sweep) and mapped through the same formula.
    /// - The SPRT uses complete pairs only (see [`sprt_llr`]).
    pub fn from_games(
        variant: &str,
        player_a: &str,
        player_b: &str,
        game_results: Vec<ArenaGame>,
        sprt: Option<&SprtConfig>,
    ) -> ArenaResult {
        let games = game_results.len();
        let count = |points: f64| {
            game_results
                .iter()
                .filter(|g| g.score_a() == points)
                .count()
        };
        let (wins, draws, losses) = (count(1.0), count(0.5), count(0.0));
        let points = wins as f64 + draws as f64 / 2.0;
        let score = if games == 0 {
            0.5
        } else {
            points / games as f64
        };
        let corrected = if games == 0 || points == 0.0 || points == games as f64 {
            (points + 0.5) / (games as f64 + 1.0)
        } else {
            score
        };
        let units: Vec<f64> = game_results
            .chunks(2)
            .map(|unit| unit.iter().map(ArenaGame::score_a).sum::<f64>() / unit.len() as f64)
            .collect();
        let (_, variance) = mean_and_variance(&units);
        let margin = 1.96 * (variance / units.len().max(1) as f64).sqrt();
        let edge = 0.25 / (games as f64 + 1.0);
        let bounded = |s: f64| elo_from_score(s.clamp(edge, 1.0 - edge));
        let sprt = sprt.map(|config| {
            let (verdict, llr) = sprt_verdict(&game_results, config);
            let (lower, upper) = config.bounds();
            match verdict {
                SprtVerdict::AcceptH1 => format!("H1 accepted (LLR {llr:.2} >= {upper:.2})"),
                SprtVerdict::AcceptH0 => format!("H0 accepted (LLR {llr:.2} <= {lower:.2})"),
                SprtVerdict::Continue => {
                    format!("continue (LLR {llr:.2} in [{lower:.2}, {upper:.2}])")
                }
            }
        });
        ArenaResult {
            variant: variant.to_string(),
            player_a: player_a.to_string(),
            player_b: player_b.to_string(),
            games,
            wins,
            draws,
            losses,
            score,
            elo: elo_from_score(corrected),
            elo_low: bounded(corrected - margin),
            elo_high: bounded(corrected + margin),
            sprt,
            game_results,
        }
    }

    /// Writes the result as pretty JSON, atomically, creating the directory if needed.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        ninjazero_data::atomic::write_atomically(path, (json + "\n").as_bytes())
    }

    /// `A vs B: +12 =5 -3, score 0.725, Elo +168 [+71, +298] (95 %)`, and the SPRT verdict
    /// when there is one.
    pub fn summary_line(&self) -> String {
        let mut line = format!(
            "{} vs {}: +{} ={} -{}, score {:.3}, Elo {:+.0} [{:+.0}, {:+.0}] (95 %)",
            self.player_a,
            self.player_b,
            self.wins,
            self.draws,
            self.losses,
            self.score,
            self.elo,
            self.elo_low,
            self.elo_high
        );
        if let Some(sprt) = &self.sprt {
            line += &format!(", SPRT: {sprt}");
        }
        line
    }
}

/// Opening number `index`: `plies` random legal moves from `start`, drawn again (up to 100
/// times) while the game ends within them.
pub fn opening(start: &Position, plies: usize, seed: u64, index: usize) -> Vec<Move> {
    let mut moves = Vec::new();
    for attempt in 0..100u64 {
        let opening_seed = derive_seed(seed, SeedStream::Opening, index as u64 + 1);
        let mut rng = StdRng::seed_from_u64(derive_seed(
            opening_seed,
            SeedStream::OpeningAttempt,
            attempt,
        ));
        let mut game = Game::from_position(start.clone());
        moves.clear();
        while moves.len() < plies && game.outcome().is_none() {
            let legal = game.position().legal_moves();
            let m = legal[rng.random_range(0..legal.len())];
            game.play_unchecked(m);
            moves.push(m);
        }
        if game.outcome().is_none() {
            break;
        }
    }
    moves
}

/// Material lead (in Pawns, by the rough values of `material_balance`) that wins a game
/// stopped at the ply cap.
pub const ADJUDICATION_MARGIN: f32 = 3.0;

/// A game stopped at the ply cap: won by a side at least [`ADJUDICATION_MARGIN`] ahead in
/// material, as engine matches adjudicate, else a draw. Without it, short arena games of
/// weak players end in draws and cannot tell the players apart.
fn adjudicate(position: &Position) -> (Option<Color>, String) {
    let lead = ninjazero_model::material_balance(position);
    let winner = if lead >= ADJUDICATION_MARGIN {
        Some(position.turn())
    } else if lead <= -ADJUDICATION_MARGIN {
        Some(!position.turn())
    } else {
        None
    };
    let termination = match winner {
        Some(_) => "adjudication (material)",
        None => "max plies",
    };
    (winner, termination.to_string())
}

/// How a game ended: the winner (None for a draw) and the termination.
pub(crate) type GameEnd = (Option<Color>, String);

/// The game's end, if it is over before the next ply: by the rules, or at `max_plies`
/// (adjudicated on material when `adjudicate_material` is set, else drawn).
pub(crate) fn game_over(game: &Game, max_plies: u32, adjudicate_material: bool) -> Option<GameEnd> {
    if let Some(outcome) = game.outcome() {
        return Some((outcome.winner, outcome.termination.to_string()));
    }
    if game.moves().len() < max_plies as usize {
        return None;
    }
    Some(if adjudicate_material {
        adjudicate(game.position())
    } else {
        (None, "max plies".to_string())
    })
}

/// Plays the mover's searched move and returns its search; a failed search or an illegal
/// move instead ends the game, lost by the mover (named by `name`).
pub(crate) fn play_searched(
    game: &mut Game,
    searched: Result<SearchInfo, SearchError>,
    name: impl FnOnce() -> String,
) -> Result<SearchInfo, GameEnd> {
    let mover = game.position().turn();
    let lost = |why: String| (Some(!mover), why);
    match searched {
        Err(e) => Err(lost(format!("{} failed: {e}", name()))),
        Ok(info) => match game.play(info.best) {
            Ok(_) => Ok(info),
            Err(_) => Err(lost(format!("illegal move {} by {}", info.best, name()))),
        },
    }
}

/// Plays `player`'s move, searched with its own limits ([`play_searched`]).
pub(crate) fn play_own_move(
    game: &mut Game,
    player: &mut dyn Engine,
) -> Result<SearchInfo, GameEnd> {
    let limits = player.limits();
    let searched = player.search(game, &limits, &AtomicBool::new(false), &mut |_| {});
    play_searched(game, searched, || player.name())
}

/// A game played to its end by two players.
pub struct PlayedGame {
    /// The moves from the start position, opening included.
    pub game: Game,
    /// None for a draw.
    pub winner: Option<Color>,
    /// `checkmate`, …, `adjudication (material)`, `max plies`, `illegal move …` or
    /// `PLAYER failed: …`.
    pub termination: String,
    /// The players' search values of their moves (expected score in [-1, 1], the mover's
    /// view), in the order played after the opening.
    pub values: Vec<f32>,
    /// The policies the players proposed for their moves ([`SearchInfo::root_policy`];
    /// empty where a player proposed none), in the same order.
    pub policies: Vec<Vec<(Move, f32)>>,
}

/// Plays one game from `start` after the `opening` moves. At `max_plies` the game is
/// adjudicated on material when `adjudicate_material` is set (see
/// [`ADJUDICATION_MARGIN`]), else drawn. A player whose search fails (an external
/// engine's crash, hang or nonsense) loses, with the reason as the termination.
pub fn play_game(
    white: &mut dyn Engine,
    black: &mut dyn Engine,
    start: &Position,
    opening: &[Move],
    max_plies: u32,
    adjudicate_material: bool,
) -> PlayedGame {
    let mut game = Game::from_position(start.clone());
    for &m in opening {
        game.play_unchecked(m);
    }
    let (mut values, mut policies) = (Vec::new(), Vec::new());
    let (winner, termination) = loop {
        if let Some(end) = game_over(&game, max_plies, adjudicate_material) {
            break end;
        }
        let player: &mut dyn Engine = match game.position().turn() {
            Color::White => &mut *white,
            Color::Black => &mut *black,
        };
        match play_own_move(&mut game, player) {
            Ok(searched) => {
                values.push(searched.value());
                policies.push(searched.root_policy);
            }
            Err(end) => break end,
        }
    };
    PlayedGame {
        game,
        winner,
        termination,
        values,
        policies,
    }
}

/// Hands the jobs `0..jobs` out to `threads` worker threads, each with its own state from
/// `init` (its players). `finish(job, result)` runs under a lock, in the order jobs end;
/// once it returns true no more jobs are handed out.
pub fn run_on_workers<S, R>(
    jobs: usize,
    threads: usize,
    init: &(dyn Fn() -> Result<S, String> + Sync),
    work: &(dyn Fn(&mut S, usize) -> R + Sync),
    finish: &mut (dyn FnMut(usize, R) -> bool + Send),
) -> Result<(), String> {
    let next = AtomicUsize::new(0);
    let finish = Mutex::new(finish);
    let worker = || -> Result<(), String> {
        let mut state = init()?;
        loop {
            let job = next.fetch_add(1, Ordering::Relaxed);
            if job >= jobs {
                return Ok(());
            }
            let result = work(&mut state, job);
            let mut finish = finish.lock().expect("a worker panicked");
            if finish(job, result) {
                next.store(jobs, Ordering::Relaxed);
            }
        }
    };
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.clamp(1, jobs.max(1)))
            .map(|_| scope.spawn(worker))
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a worker panicked"))
            .collect::<Result<Vec<()>, String>>()
    })?;
    Ok(())
}

/// The seed a player gets before game `index` of a series (see [`Engine::new_game`]).
fn game_seed(series_seed: u64, index: usize) -> u64 {
    derive_seed(series_seed, SeedStream::SeriesGame, index as u64 + 1)
}

/// Game `index` of a seeded series from `start`: `opening_plies` random plies, then
/// `white` and `black` (each told the game's seed), drawn at `max_plies`. The same
/// arguments give the same game, whatever the players played before.
pub fn play_series_game(
    white: &mut dyn Engine,
    black: &mut dyn Engine,
    start: &Position,
    opening_plies: usize,
    max_plies: u32,
    seed: u64,
    index: usize,
) -> PlayedGame {
    let moves = opening(start, opening_plies, seed, index);
    white.new_game(game_seed(seed, index));
    black.new_game(game_seed(seed, index) ^ 1);
    play_game(white, black, start, &moves, max_plies, false)
}

/// The seed both players get before game `a_is_white` of pair `pair` (the opening's
/// number), whichever way the arena is played.
pub(crate) fn pair_game_seed(config: &ArenaConfig, pair: usize, a_is_white: bool) -> u64 {
    game_seed(config.seed, 2 * pair + usize::from(!a_is_white))
}

/// Plays pair `pair` (the opening's number): A as White, then A as Black, from the same
/// opening.
fn play_pair(
    a: &mut dyn Engine,
    b: &mut dyn Engine,
    variant: Variant,
    config: &ArenaConfig,
    pair: usize,
) -> [ArenaGame; 2] {
    let start = Position::start(variant);
    let moves = opening(&start, config.opening_plies, config.seed, pair);
    let opening_text: Vec<String> = moves.iter().map(|m| m.to_string()).collect();
    [true, false].map(|a_is_white| {
        let seed = pair_game_seed(config, pair, a_is_white);
        a.new_game(seed);
        b.new_game(seed);
        let played = if a_is_white {
            play_game(a, b, &start, &moves, config.max_plies, true)
        } else {
            play_game(b, a, &start, &moves, config.max_plies, true)
        };
        ArenaGame::new(
            opening_text.clone(),
            a_is_white,
            (played.winner, played.termination),
            &played.game,
        )
    })
}

/// Finished pairs, collected from the worker threads.
struct Collected {
    pairs: Vec<Option<[ArenaGame; 2]>>,
    /// Pairs `0..complete` are all finished.
    complete: usize,
    /// The number of pairs after which the SPRT was decided.
    decided_after: Option<usize>,
    /// Every finished game, in the order they finished (for progress reports).
    finished: Vec<ArenaGame>,
}

impl Collected {
    /// Stores a pair; checks the SPRT on each longer prefix of complete pairs, in order, so
    /// that the stopping point does not depend on which thread finished first.
    fn add(&mut self, pair: usize, games: [ArenaGame; 2], sprt: Option<&SprtConfig>) {
        self.finished.extend(games.iter().cloned());
        self.pairs[pair] = Some(games);
        while self.decided_after.is_none()
            && self.pairs.get(self.complete).is_some_and(Option::is_some)
        {
            self.complete += 1;
            if let Some(sprt) = sprt {
                if sprt_verdict(&self.prefix(self.complete), sprt).0 != SprtVerdict::Continue {
                    self.decided_after = Some(self.complete);
                }
            }
        }
    }

    fn prefix(&self, pairs: usize) -> Vec<ArenaGame> {
        self.pairs[..pairs]
            .iter()
            .flatten()
            .flatten()
            .cloned()
            .collect()
    }
}

/// Plays the arena (openings `first_pair..first_pair + pairs`): for each pair, one game
/// with A as White and one with A as Black, from the same opening, on `threads` worker
/// threads (each with its own players). Results do not depend on the thread count. Calls `progress(done, total, &partial)` after each pair
/// and stops early once an SPRT (if given) is decided on the first complete pairs.
pub fn run_arena(
    make_a: &EngineFactory,
    make_b: &EngineFactory,
    variant: Variant,
    config: &ArenaConfig,
    threads: usize,
    progress: &(dyn Fn(usize, usize, &ArenaResult) + Sync),
) -> Result<ArenaResult, String> {
    let (mut a, mut b) = (make_a()?, make_b()?);
    let (name_a, name_b) = (a.name(), b.name());
    let total = 2 * config.pairs;
    let summarize = |games: Vec<ArenaGame>| {
        ArenaResult::from_games(variant.id(), &name_a, &name_b, games, config.sprt.as_ref())
    };
    let mut collected = Collected {
        pairs: vec![None; config.pairs],
        complete: 0,
        decided_after: None,
        finished: Vec::new(),
    };
    let mut on_pair = |pair: usize, games: [ArenaGame; 2]| {
        collected.add(pair, games, config.sprt.as_ref());
        let finished = collected.finished.clone();
        progress(finished.len(), total, &summarize(finished));
        collected.decided_after.is_some()
    };
    if lockstep::suits(a.as_mut(), b.as_mut()) {
        lockstep::play([(a, make_a), (b, make_b)], variant, config, &mut on_pair)?;
    } else {
        // Batch-1 searches, one game per core: one libtorch thread each beats threads that
        // synchronise for every small operation.
        let _one_thread = (threads > 1).then(OneTorchThread::new);
        run_on_workers(
            config.pairs,
            threads,
            &|| Ok((make_a()?, make_b()?)),
            &|(a, b), pair| {
                play_pair(
                    a.as_mut(),
                    b.as_mut(),
                    variant,
                    config,
                    config.first_pair + pair,
                )
            },
            &mut on_pair,
        )?;
    }
    let pairs = collected.decided_after.unwrap_or(config.pairs);
    Ok(summarize(collected.prefix(pairs)))
}
