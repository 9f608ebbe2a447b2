//! The handicap matches of a study: every handicap's games played (or read back from an
//! earlier run with the same settings), in one round with the study's player, or in
//! self-consistent rounds of an alpha-beta player that is told nothing about the answer.
//! Many jobs can share the games ([`play_match_shard`]), each storing its slice of every
//! handicap; the study merges them.

use crate::matches::{
    match_estimates, play_handicap_games, Handicap, HandicapScores, HandicapSettings,
};
use crate::report::MethodRun;
use crate::study::{Progress, Study, ValuesError};
use crate::{in_starting_army, Estimate, Measurement, Method, PieceKind};
use ninjazero_arena::series::{slice_key, slice_keys, Series, Shard};
use ninjazero_data::store::Store;
use ninjazero_model::OneTorchThread;
use ninjazero_rules::{Color, Position, Role, Variant};
use ninjazero_search::{AlphaBetaConfig, EngineSpec, MctsBudget, MAX_PIECE_VALUE};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The matches' values as an alpha-beta spec's `values=` option, in the study's store.
pub const MATCH_VALUES: &str = "match-values.txt";

/// Pawn odds are played with 1 to this many Pawns, which sets the scale.
pub const PAWN_ODDS: usize = 3;

/// The match player when none is named: MCTS with `model` at `sims` simulations, or the
/// model-free MCTS without one.
pub fn default_player(model: Option<&Path>, sims: u64) -> EngineSpec {
    match model {
        Some(model) => EngineSpec::mcts(model, sims),
        None => EngineSpec::Uniform(MctsBudget::simulations(sims)),
    }
}

/// Whether measured values can be fed back into `player`: an alpha-beta spec that does not
/// set its own values (nor evaluates with a learnt table, which holds its own).
pub fn tunable(player: &EngineSpec) -> bool {
    matches!(
        player,
        EngineSpec::AlphaBeta { config, piece_squares: None, .. }
            if config.piece_values == AlphaBetaConfig::default().piece_values
    )
}

/// The games of one handicap as saved under `matches/`: reused when the settings match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedMatch {
    pub settings: HandicapSettings,
    /// The game the scores start at: 0 in the whole file, the shard's first in a part.
    #[serde(default)]
    pub first_game: usize,
    pub scores: HandicapScores,
}

/// Pawn odds (Pawns given, scores) and each other board kind's scores, from one round.
pub type RoundScores = (
    Vec<(usize, HandicapScores)>,
    Vec<(PieceKind, HandicapScores)>,
);

/// What one job did with a round.
pub enum RoundOutcome {
    /// Every handicap's games are known (played now or stored before).
    Complete(RoundScores),
    /// A shard's job played (this many of) its games of a round that was not complete.
    Played(usize),
}

/// The handicaps of a round, Pawn odds first, then each other piece of the starting army.
fn handicaps(kinds: &[PieceKind], variant: Variant) -> Vec<Handicap> {
    let pawn = PieceKind::Board(Role::Pawn);
    let pawns_in_army = Position::start(variant).count(Color::White, Role::Pawn) as usize;
    (1..=PAWN_ODDS.min(pawns_in_army))
        .map(|count| Handicap { kind: pawn, count })
        .chain(
            kinds
                .iter()
                .filter(|&&k| k != pawn && has_handicap(k, variant))
                .map(|&kind| Handicap { kind, count: 1 }),
        )
        .collect()
}

/// Whether `kind` can be taken off the start position: a piece of the starting army.
fn has_handicap(kind: PieceKind, variant: Variant) -> bool {
    matches!(kind, PieceKind::Board(role) if in_starting_army(variant, role))
}

/// The stored games of one handicap played with `settings`: the whole series and the parts
/// of shards under the key prefix `dir` (an object that cannot be parsed, or holds games of
/// other settings, is played again and overwritten; a store that cannot be read is an
/// error).
fn stored_games(
    store: &Store,
    dir: &str,
    stem: &str,
    settings: &HandicapSettings,
) -> Result<Series<f64>, ValuesError> {
    let mut series = Series::new(settings.games);
    for key in slice_keys(store, dir, stem)? {
        let saved = serde_json::from_slice::<SavedMatch>(&store.get(&key)?)
            .ok()
            .filter(|saved| saved.settings == *settings);
        if let Some(saved) = saved {
            series.insert(saved.first_game, saved.scores.points);
        }
    }
    Ok(series)
}

/// A round's player, and its spec text as saved with the games and shown in progress (a
/// round's values written out in full: `alphabeta:depth=2:values=P=1.00,N=1.00,...`).
pub struct RoundPlayer {
    pub spec: EngineSpec,
    pub label: String,
}

/// Plays (or reads back from `dir` in `store`) the handicap games of every board kind, Pawn
/// odds of 1 to [`PAWN_ODDS`] Pawns included, with `player` on both sides. Each handicap's
/// games are saved under `dir` as `KIND-xCOUNT.json` ([`SavedMatch`]), a few at a time. With `shard`, a round that is
/// not complete gets only that shard's games of each handicap, saved as parts
/// `KIND-xCOUNT.part-F-L.json` ([`crate::series`] describes the merge).
pub fn play_round(
    kinds: &[PieceKind],
    study: &Study,
    store: &Store,
    dir: &str,
    player: &RoundPlayer,
    shard: Option<Shard>,
    progress: &dyn Progress,
) -> Result<RoundOutcome, ValuesError> {
    let label = &player.label;
    let settings = HandicapSettings {
        player: label.clone(),
        games: study.games,
        opening_plies: study.opening_plies,
        max_plies: study.max_plies,
        seed: study.seed,
    };
    let make_player = player.spec.factory(study.variant, study.device, study.seed);
    let threads = study.threads.max(1);
    // Batch-1 searches: one libtorch thread per game, for these matches only.
    let _one_thread = (threads > 1).then(OneTorchThread::new);
    let handicaps = handicaps(kinds, study.variant);
    let stem = |handicap: &Handicap| {
        let kind = handicap.kind.name().to_lowercase().replace(' ', "-");
        format!("{kind}-x{}", handicap.count)
    };
    let mut stored = handicaps
        .iter()
        .map(|handicap| stored_games(store, dir, &stem(handicap), &settings))
        .collect::<Result<Vec<_>, _>>()?;
    let was_complete = stored.iter().all(Series::is_complete);
    let range = shard.map_or(0..study.games, |s| s.range(study.games));
    let mut played = 0;
    let incomplete = handicaps
        .iter()
        .zip(&mut stored)
        .filter(|(_, series)| !series.is_complete());
    for (handicap, series) in incomplete {
        let Handicap { kind, count } = *handicap;
        let key = slice_key(dir, &stem(handicap), shard.is_some().then_some(&range));
        let message = format!("{count} x {} odds, {label}", kind.name());
        let total = range.len() as u64;
        let done = AtomicU64::new(series.known(range.clone()) as u64);
        progress.stage_started("matches", total);
        played += series.complete(
            range.clone(),
            MATCH_CHUNK * threads,
            &mut |games| {
                play_handicap_games(
                    &make_player,
                    study.variant,
                    *handicap,
                    &settings,
                    games,
                    threads,
                    &|| {
                        let done = done.fetch_add(1, Ordering::Relaxed) + 1;
                        progress.stage_progress(done, total, &message);
                    },
                )
                .map(|scores| scores.points)
                .map_err(ValuesError::Matches)
            },
            &mut |points| {
                let saved = SavedMatch {
                    settings: settings.clone(),
                    first_game: range.start,
                    scores: HandicapScores { points },
                };
                let json = serde_json::to_string_pretty(&saved)
                    .map_err(|e| ValuesError::Encode(e.to_string()))?;
                Ok(store.put(&key, json.into_bytes())?)
            },
        )?;
        progress.stage_finished();
    }
    if shard.is_some() && !was_complete {
        return Ok(RoundOutcome::Played(played));
    }
    let (mut pawn_odds, mut scores) = (Vec::new(), Vec::new());
    for (Handicap { kind, count }, series) in handicaps.into_iter().zip(stored) {
        let points = series.games(0..study.games).ok_or_else(|| {
            ValuesError::Matches(format!(
                "{count} x {} odds: games are missing after playing",
                kind.name()
            ))
        })?;
        let points = HandicapScores { points };
        if kind == PieceKind::Board(Role::Pawn) {
            pawn_odds.push((count, points));
        } else {
            scores.push((kind, points));
        }
    }
    Ok(RoundOutcome::Complete((pawn_odds, scores)))
}

/// Games per thread between two saves of a handicap's games: a killed run loses at most
/// these, and each save rewrites the object.
const MATCH_CHUNK: usize = 16;

/// The values a round's alpha-beta player plays with, in Pawns to two decimals: flat
/// (every piece 1) before the first round, else the previous round's values (a piece
/// without one at 1).
pub fn round_values(kinds: &[PieceKind], previous: Option<&[Estimate]>) -> Vec<(Role, f32)> {
    kinds
        .iter()
        .filter_map(|&kind| {
            let PieceKind::Board(role) = kind else {
                return None;
            };
            let value = previous
                .and_then(|estimates| estimates.iter().find(|e| e.piece == kind))
                .map_or(1.0, |e| e.value);
            // Within the engine's range (a noisy round's estimate beyond it plays at the
            // bound), in whole hundredths divided in f32: the value `P=3.05` parses to.
            let value = value.clamp(0.0, f64::from(MAX_PIECE_VALUE));
            Some((role, (value * 100.0).round() as f32 / 100.0))
        })
        .collect()
}

/// `base` (a [`tunable`] alpha-beta spec) playing with `values`.
fn with_values(base: &EngineSpec, values: &[(Role, f32)]) -> EngineSpec {
    let mut spec = base.clone();
    if let EngineSpec::AlphaBeta { config, .. } = &mut spec {
        for &(role, value) in values {
            config.piece_values[role] = value;
        }
    }
    spec
}

/// `P=1,N=3.05,...`: `values` as an alpha-beta spec's `values=` option takes them.
pub fn values_text(values: &[(Role, f32)]) -> String {
    let values: Vec<String> = values
        .iter()
        .map(|(role, value)| format!("{}={value:.2}", role.upper_char()))
        .collect();
    values.join(",")
}

/// How far the rounds of the matches went.
enum Rounds {
    /// Every round's games are known: the last round's values (or why there are none),
    /// and one note per round.
    Measured {
        estimates: Result<Measurement, String>,
        notes: Vec<String>,
    },
    /// A shard's job played its games of this round (the first one not complete).
    Played { round: usize, games: usize },
}

/// Plays the rounds of the matches (see [`handicap_matches`]): each round's games,
/// reused where stored; with `shard`, only that shard's games of the first round that is
/// not complete.
fn play_rounds(
    kinds: &[PieceKind],
    study: &Study,
    store: &Store,
    shard: Option<Shard>,
    progress: &dyn Progress,
) -> Result<Rounds, ValuesError> {
    let base = &study.player;
    let rounds = study.rounds.max(1);
    let mut notes = Vec::new();
    let mut previous: Option<Vec<Estimate>> = None;
    let mut round = 1;
    loop {
        let (player, dir) = if rounds > 1 {
            let values = round_values(kinds, previous.as_deref());
            let player = RoundPlayer {
                spec: with_values(base, &values),
                label: format!("{base}:values={}", values_text(&values)),
            };
            (player, format!("matches/round-{round}"))
        } else {
            let player = RoundPlayer {
                spec: base.clone(),
                label: base.to_string(),
            };
            (player, "matches".to_string())
        };
        let label = &player.label;
        let (pawn_odds, scores) =
            match play_round(kinds, study, store, &dir, &player, shard, progress)? {
                RoundOutcome::Complete(scores) => scores,
                RoundOutcome::Played(games) => return Ok(Rounds::Played { round, games }),
            };
        let odds: Vec<String> = pawn_odds
            .iter()
            .map(|(count, s)| (format!("{count} Pawn(s)"), s))
            .chain(scores.iter().map(|(k, s)| (k.name(), s)))
            .map(|(name, s)| format!("{name} {:.3}", s.score()))
            .collect();
        let estimates = match_estimates(&scores, &pawn_odds, study.bootstrap, study.seed);
        let measured = match &estimates {
            Ok(measured) => measured
                .estimates
                .iter()
                .map(|e| format!("{} {:.2}", e.piece.name(), e.value))
                .chain(measured.not_enough.iter().map(|n| n.line()))
                .collect::<Vec<_>>()
                .join(", "),
            Err(why) => why.clone(),
        };
        notes.push(format!(
            "Round {round}: `{label}`; score of the side that kept the material: {}; values: {measured}.",
            odds.join(", ")
        ));
        // The last round's values are the result; a round without them ends the rounds
        // (the next would have no values to play with) and is the result too.
        let estimates = match estimates {
            Ok(measured) if round < rounds => {
                // A piece without a value plays the next round at 1, as in round 1.
                previous = Some(measured.estimates);
                round += 1;
                continue;
            }
            Err(why) if rounds > 1 => Err(format!("round {round}: {why}")),
            last => last,
        };
        return Ok(Rounds::Measured { estimates, notes });
    }
}

/// The handicap matches: one round with [`Study::player`] (results under `matches/` in
/// `store`), or with [`Study::rounds`] `R > 1` the self-consistent values of an alpha-beta
/// player: round 1 with every piece worth 1, each later round with the values the previous
/// one measured (results under `matches/round-N/`). The values of the last round are the
/// result, and are written as `match-values.txt` (the `values=` of an alpha-beta spec) when every
/// piece has one; else that file is removed. Games that shards' jobs stored
/// ([`play_match_shard`]) are merged, and only the missing ones played.
pub fn handicap_matches(
    kinds: &[PieceKind],
    study: &Study,
    store: &Store,
    progress: &dyn Progress,
) -> Result<MethodRun, ValuesError> {
    let started = Instant::now();
    let Rounds::Measured {
        estimates,
        notes: round_notes,
    } = play_rounds(kinds, study, store, None, progress)?
    else {
        unreachable!("without a shard every round is played to the end");
    };
    let mut notes = vec![format!(
        "{} games per handicap, half with each colour handicapped, {} random opening plies, a draw at {} plies; the scale is the log-odds per Pawn fitted over Pawn odds of 1 to {PAWN_ODDS} Pawns.",
        study.games, study.opening_plies, study.max_plies
    )];
    let unmatched: Vec<String> = kinds
        .iter()
        .filter(|&&kind| !has_handicap(kind, study.variant))
        .map(|kind| kind.name())
        .collect();
    if !unmatched.is_empty() {
        notes.push(format!(
            "No handicap for {} (not in the starting army): the other methods value it{}.",
            unmatched.join(", "),
            if study.rounds > 1 {
                "; the rounds' player counts it as 1 Pawn, as in round 1"
            } else {
                ""
            }
        ));
    }
    notes.extend(round_notes);
    // The measured values in the form an alpha-beta spec takes, for the next experiment
    // (e.g. `selfplay --player alphabeta:depth=2:values=...`): only when every piece
    // has one, else an old file would pass for this run's values.
    match &estimates {
        Ok(measured) if measured.not_enough.is_empty() => {
            let values = round_values(kinds, Some(&measured.estimates));
            store.put(
                MATCH_VALUES,
                format!("{}\n", values_text(&values)).into_bytes(),
            )?;
        }
        _ => {
            store.delete(MATCH_VALUES)?;
            notes.push(format!(
                "No {}/{MATCH_VALUES} written: not every piece has a value.",
                store.url()
            ));
        }
    }
    Ok(MethodRun {
        method: Method::Matches,
        estimates,
        seconds: started.elapsed().as_secs_f64(),
        notes,
    })
}

/// What one shard's job of the matches did: the round whose games it played, and how
/// many; `None` when every round was already complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardRound {
    pub round: usize,
    pub played: usize,
}

/// One job of many ([`Shard`]) that share the handicap matches of `study` in `out` (a
/// directory, `file://` or `s3://` URL): it
/// plays its games of every handicap of the first round that is not complete, stores
/// them as parts, and measures nothing. Self-consistent rounds need the previous round's
/// values, so R rounds take R waves of jobs (each after the last); `values` on the same
/// `out` then merges the parts and reports. Returns `None` when every round is complete.
pub fn play_match_shard(
    study: &Study,
    out: &str,
    shard: Shard,
    progress: &dyn Progress,
) -> Result<Option<ShardRound>, ValuesError> {
    study.check()?;
    let store = Store::open(out)?;
    let kinds = PieceKind::of_variant(study.variant);
    Ok(
        match play_rounds(&kinds, study, &store, Some(shard), progress)? {
            Rounds::Played { round, games } => Some(ShardRound {
                round,
                played: games,
            }),
            Rounds::Measured { .. } => None,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Method;
    use ninjazero_rules::Variant;

    fn estimate(piece: PieceKind, value: f64) -> Estimate {
        Estimate {
            piece,
            method: Method::Matches,
            value,
            low: value - 0.5,
            high: value + 0.5,
            samples: 100,
            replicates: Vec::new(),
        }
    }

    /// The engine a round builds plays with the values its saved label names.
    #[test]
    fn a_round_player_plays_the_values_its_label_names() {
        let kinds = PieceKind::of_variant(Variant::Chess);
        let base: EngineSpec = "alphabeta:depth=2".parse().unwrap();
        assert!(tunable(&base));
        let knight = PieceKind::Board(Role::Knight);
        let measured = [
            estimate(knight, 3.0512),
            estimate(PieceKind::Board(Role::Queen), 8.996),
        ];
        let values = round_values(&kinds, Some(&measured));
        let label = format!("{base}:values={}", values_text(&values));
        assert!(label.contains("N=3.05"), "{label}");
        assert!(label.contains("Q=9.00"), "{label}");
        assert!(
            label.contains("R=1.00"),
            "a piece without a value plays at 1: {label}"
        );
        let player = with_values(&base, &values);
        assert_eq!(label.parse::<EngineSpec>().unwrap(), player);
        assert!(!tunable(&player), "a player with values is not tuned again");
    }

    /// Ninjutsu's Insane Ninja Knight is in no starting army: no handicap gives it, and the
    /// rounds' player counts it as 1 in every round rather than at a hand-set value.
    #[test]
    fn a_piece_without_a_handicap_plays_every_round_at_one() {
        let kinds = PieceKind::of_variant(Variant::Ninjutsu);
        let knight = PieceKind::Board(Role::InsaneNinjaKnight);
        assert!(kinds.contains(&knight));
        assert!(handicaps(&kinds, Variant::Ninjutsu)
            .iter()
            .all(|h| h.kind != knight));
        let measured = [estimate(PieceKind::Board(Role::NinjaGuard), 4.0)];
        for previous in [None, Some(&measured[..])] {
            let values = round_values(&kinds, previous);
            assert!(
                values.contains(&(Role::InsaneNinjaKnight, 1.0)),
                "{values:?}"
            );
        }
    }

    #[test]
    fn the_first_round_plays_every_piece_at_one() {
        let kinds = PieceKind::of_variant(Variant::Chess);
        let values = round_values(&kinds, None);
        assert!(values.iter().all(|&(_, v)| v == 1.0), "{values:?}");
        assert_eq!(
            values.len(),
            kinds
                .iter()
                .filter(|k| matches!(k, PieceKind::Board(_)))
                .count()
        );
    }
}
