//! Fits a [`PieceSquareEval`] to games' results: logistic regression of the side to move's
//! result on the position's piece-square features (the "Texel tuning" of chess engines,
//! here from self-play alone), optionally mixed with the player's search value of each
//! position ([`FitConfig::value_target_mix`]).
//!
//! Only quiet positions count — those whose move kept the material — so that a position in
//! the middle of an exchange does not teach that the side a capture ahead is winning; the
//! alpha-beta engine calls the evaluation where its quiescence search stands pat, which is
//! a quiet position too. Games that reached the ply cap are left out, whether adjudicated
//! or scored a draw: their result is a convention or the players' judgement, not the
//! rules'. One game in ten (by its id) is held out to
//! measure the fit. Three fits in a row, each from the one before: the tempo alone, then
//! piece values, hand and mobility, then the square bonuses and king zones too; the
//! held-out loss of each says what the next one adds. The last fit may try several square
//! penalties ([`FitConfig::square_l2`]) and keep the one with the lowest held-out loss.

use ninjazero_data::progress::Progress;
use ninjazero_data::{dataset_files_or_shards, read_file, DataError, GameRecord};
use ninjazero_model::score::win_probability_from_value;
use ninjazero_model::{FitSummary, PieceSquareError, PieceSquareEval, PieceSquareLayout};
use ninjazero_rules::{Position, Variant};
use rayon::prelude::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Settings of a fit.
#[derive(Clone, Debug, PartialEq)]
pub struct FitConfig {
    /// Full passes over the positions, per stage.
    pub epochs: usize,
    /// Adam's learning rate at the start (cosine decay to 0 over each stage).
    pub learning_rate: f64,
    /// L2 penalties on each square bonus and king-zone weight (per position of the mean
    /// loss) to try: a square seldom seen falls back to its piece's value. Each is fitted
    /// from the same material fit and the one with the lowest held-out loss is kept (the
    /// first among equals). The default, 0.1 alone, was the held-out loss's and the arena's
    /// choice on insane-ninja's games (docs/levers.md, "A learnt evaluation"); 0.001
    /// overfits 2,000 games, and no one penalty is best on every window
    /// ([`AUTO_SQUARE_L2`]).
    pub square_l2: Vec<f64>,
    /// The share of the player's search value in the target of each fitted position that
    /// has one (the rest the game's result): 0, the result alone, as Texel tuning; a
    /// searched position's value says more about it than one game's result does. The
    /// held-out loss always measures the results, so fits with different shares compare.
    pub value_target_mix: f64,
}

/// The penalties `fit-eval --square-l2 auto` tries: on the windows measured (asylum and
/// insane-ninja, 2,000 to 4,000 games) the held-out loss chose 0.01, 0.03 or 0.1, and its
/// choice was never the weaker evaluation at depth 2 (docs/levers.md, "The square penalty
/// chosen by the held-out loss").
pub const AUTO_SQUARE_L2: [f64; 4] = [0.01, 0.03, 0.1, 0.3];

/// The largest square penalty (100 leaves in effect the piece values alone).
pub const MAX_SQUARE_L2: f64 = 100.0;

/// The most square penalties one fit tries (each costs a third of a fit).
pub const MAX_SQUARE_L2_TRIED: usize = 16;

/// The square penalties of a fit as a person writes them: `auto` ([`AUTO_SQUARE_L2`]),
/// one number, or several separated by commas, each 0 to [`MAX_SQUARE_L2`].
#[derive(Clone, Debug, PartialEq)]
pub struct SquarePenalties(pub Vec<f64>);

impl SquarePenalties {
    /// Whether the penalties are ones a fit can try: 1 to [`MAX_SQUARE_L2_TRIED`] of them,
    /// each a number from 0 to [`MAX_SQUARE_L2`]; the reason if not.
    pub fn check(penalties: &[f64]) -> Result<(), String> {
        if penalties.is_empty() || penalties.len() > MAX_SQUARE_L2_TRIED {
            return Err(format!(
                "expected 1 to {MAX_SQUARE_L2_TRIED} square penalties, got {}",
                penalties.len()
            ));
        }
        match penalties
            .iter()
            .find(|p| !(0.0..=MAX_SQUARE_L2).contains(*p))
        {
            Some(p) => Err(format!(
                "a square penalty must be a number from 0 to {MAX_SQUARE_L2}, got {p}"
            )),
            None => Ok(()),
        }
    }
}

impl std::str::FromStr for SquarePenalties {
    type Err = String;

    fn from_str(text: &str) -> Result<SquarePenalties, String> {
        if text.trim() == "auto" {
            return Ok(SquarePenalties(AUTO_SQUARE_L2.to_vec()));
        }
        let penalties = text
            .split(',')
            .map(|item| {
                item.trim().parse::<f64>().map_err(|_| {
                    format!("'{item}' is not a number (expected auto, or numbers from 0 to {MAX_SQUARE_L2} separated by commas)")
                })
            })
            .collect::<Result<Vec<f64>, String>>()?;
        SquarePenalties::check(&penalties)?;
        Ok(SquarePenalties(penalties))
    }
}

impl std::fmt::Display for SquarePenalties {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let items: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&items.join(","))
    }
}

impl Default for FitConfig {
    fn default() -> FitConfig {
        FitConfig {
            epochs: 300,
            learning_rate: 0.05,
            square_l2: vec![0.1],
            value_target_mix: 0.0,
        }
    }
}

/// L2 penalty on the piece values: tiny, so that a role never seen gets 0.
const VALUE_L2: f64 = 1e-5;
/// Whether a game's result was decided by the rules, not at the ply cap (where self-play
/// and the arena adjudicate, "adjudication…", and a player's games are drawn, "max plies").
fn decided_by_the_rules(game: &GameRecord) -> bool {
    !(game.termination.starts_with("adjudication") || game.termination == "max plies")
}

/// The L2 penalty of weight `index`: `square_l2` on a square bonus or king-zone weight,
/// [`VALUE_L2`] on a piece value, none on the hand, tempo and mobility.
fn value_l2(layout: &PieceSquareLayout, index: usize, square_l2: f64) -> f64 {
    if layout.is_positional(index) {
        square_l2
    } else if index < layout.hand_index() {
        VALUE_L2
    } else {
        0.0
    }
}

/// One game in this many is held out.
const VALIDATION_EVERY: u64 = 10;

/// Why a fit failed.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    #[error("game {game_id}, ply {ply}: cannot read the position '{fen}': {reason}")]
    BadPosition {
        game_id: u64,
        ply: u16,
        fen: String,
        reason: String,
    },
    #[error("game {game_id}, ply {ply}: the search value {value} is no number")]
    BadSearchValue { game_id: u64, ply: u16, value: f32 },
    #[error("game {game_id} is {} game, the fit is for {expected}", ninjazero_rules::with_article(found.id()))]
    WrongVariant {
        game_id: u64,
        found: Variant,
        expected: Variant,
    },
    #[error("{found} quiet positions of games with a result by the rules to fit on and {held_out} held out; at least {needed} of each are needed")]
    TooFewPositions {
        found: usize,
        held_out: usize,
        needed: usize,
    },
    #[error(transparent)]
    Eval(#[from] PieceSquareError),
    #[error(transparent)]
    Data(#[from] DataError),
    /// A data directory that is missing, holds no games, or is listed twice (its games
    /// would count twice).
    #[error("data directory {dir}: {reason}")]
    DataDirectory { dir: PathBuf, reason: String },
}

/// Positions needed on each side of the split for a fit worth the name.
pub const MIN_FIT_POSITIONS: usize = 100;

/// Positions as sparse feature rows with their targets.
#[derive(Default)]
struct Rows {
    offsets: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f32>,
    /// The side to move's result: 1 won, 0.5 drawn, 0 lost.
    targets: Vec<f32>,
}

impl Rows {
    fn push(
        &mut self,
        layout: &PieceSquareLayout,
        position: &Position,
        mobility: i32,
        target: f32,
    ) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        layout.for_each_feature(position, mobility, |i, x| {
            self.indices.push(i as u32);
            self.values.push(x);
        });
        self.offsets.push(self.indices.len());
        self.targets.push(target);
    }

    fn len(&self) -> usize {
        self.targets.len()
    }

    fn log_odds(&self, row: usize, weights: &[f64]) -> f64 {
        let span = self.offsets[row]..self.offsets[row + 1];
        self.indices[span.clone()]
            .iter()
            .zip(&self.values[span])
            .map(|(&i, &x)| weights[i as usize] * f64::from(x))
            .sum()
    }

    /// The mean cross-entropy of the targets (nats), and its gradient into `gradient`
    /// when given.
    fn loss(&self, weights: &[f64], mut gradient: Option<&mut [f64]>) -> f64 {
        if let Some(g) = gradient.as_deref_mut() {
            g.fill(0.0);
        }
        let mut total = 0.0;
        for row in 0..self.len() {
            let z = self.log_odds(row, weights);
            let y = f64::from(self.targets[row]);
            // softplus(z) - y z, computed without overflow.
            total += z.max(0.0) + (-z.abs()).exp().ln_1p() - y * z;
            if let Some(g) = gradient.as_deref_mut() {
                let residual = 1.0 / (1.0 + (-z).exp()) - y;
                let span = self.offsets[row]..self.offsets[row + 1];
                for (&i, &x) in self.indices[span.clone()].iter().zip(&self.values[span]) {
                    g[i as usize] += residual * f64::from(x);
                }
            }
        }
        let n = self.len().max(1) as f64;
        if let Some(g) = gradient {
            g.iter_mut().for_each(|v| *v /= n);
        }
        total / n
    }
}

/// Whether the move played from position `index` kept the material as it was.
fn is_quiet(game: &GameRecord, index: usize) -> bool {
    let (now, next) = (&game.positions[index], game.positions.get(index + 1));
    next.is_none_or(|next| next.material == now.material && next.hand == now.hand)
}

/// Splits the games' quiet positions into rows to fit on, their targets the result mixed
/// with the search value by `value_target_mix`, and rows held out, their targets the result.
fn rows(
    games: &[GameRecord],
    layout: &PieceSquareLayout,
    value_target_mix: f32,
) -> Result<(Rows, Rows), FitError> {
    let variant = layout.shape().variant;
    let (mut fit, mut held_out) = (Rows::default(), Rows::default());
    // In game-id order (stable: one id in two datasets keeps the datasets' order), so that
    // the sums of the fit do not depend on how the games were spread over files.
    let mut decided: Vec<&GameRecord> = games.iter().filter(|g| decided_by_the_rules(g)).collect();
    decided.sort_by_key(|g| g.game_id);
    for game in decided {
        if game.variant != variant {
            return Err(FitError::WrongVariant {
                game_id: game.game_id,
                found: game.variant,
                expected: variant,
            });
        }
        let (rows, mix) = if splitmix(game.game_id) % VALIDATION_EVERY == 0 {
            (&mut held_out, 0.0)
        } else {
            (&mut fit, value_target_mix)
        };
        let mut parent_moves = None;
        for (index, record) in game.positions.iter().enumerate() {
            let position =
                Position::from_fen(variant, &record.fen).map_err(|e| FitError::BadPosition {
                    game_id: game.game_id,
                    ply: record.ply,
                    fen: record.fen.clone(),
                    reason: e.to_string(),
                })?;
            let moves = position.legal_moves().len() as i32;
            if is_quiet(game, index) {
                let result = match game.winner {
                    None => 0.5,
                    Some(winner) if winner == position.turn() => 1.0,
                    Some(_) => 0.0,
                };
                let target = if record.full_search && mix > 0.0 {
                    if !record.root_value.is_finite() {
                        return Err(FitError::BadSearchValue {
                            game_id: game.game_id,
                            ply: record.ply,
                            value: record.root_value,
                        });
                    }
                    let searched = win_probability_from_value(record.root_value);
                    (1.0 - mix) * result + mix * searched
                } else {
                    result
                };
                rows.push(
                    layout,
                    &position,
                    parent_moves.map_or(0, |p| moves - p),
                    target,
                );
            }
            parent_moves = Some(moves);
        }
    }
    Ok((fit, held_out))
}

/// A fixed bijective mix of a game id: which games are held out does not follow the ids'
/// order.
fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Full-batch Adam on the weights `free` allows (the others keep their values), L2 by
/// `l2(index)`, each weight kept within ±`bound(index)` (what an evaluation file may hold:
/// a piece seen only in won games would otherwise grow with every pass), for
/// `config.epochs` passes with a cosine learning rate. `report(epoch, loss)` after each pass.
fn descend(
    rows: &Rows,
    weights: &mut [f64],
    free: &dyn Fn(usize) -> bool,
    l2: &dyn Fn(usize) -> f64,
    bound: &dyn Fn(usize) -> f64,
    config: &FitConfig,
    report: &mut dyn FnMut(usize, f64),
) {
    let (beta1, beta2, epsilon) = (0.9, 0.999, 1e-8);
    let mut gradient = vec![0.0; weights.len()];
    let (mut m, mut v) = (vec![0.0; weights.len()], vec![0.0; weights.len()]);
    for epoch in 0..config.epochs {
        let loss = rows.loss(weights, Some(&mut gradient));
        let progress = epoch as f64 / config.epochs as f64;
        let rate = config.learning_rate * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos());
        let t = (epoch + 1) as i32;
        for i in (0..weights.len()).filter(|&i| free(i)) {
            let g = gradient[i] + l2(i) * weights[i];
            m[i] = beta1 * m[i] + (1.0 - beta1) * g;
            v[i] = beta2 * v[i] + (1.0 - beta2) * g * g;
            let (m_hat, v_hat) = (m[i] / (1.0 - beta1.powi(t)), v[i] / (1.0 - beta2.powi(t)));
            weights[i] -= rate * m_hat / (v_hat.sqrt() + epsilon);
            weights[i] = weights[i].clamp(-bound(i), bound(i));
        }
        report(epoch, loss);
    }
}

/// Reads the games of the dataset directories `data` (each of dataset files, or of shard
/// directories like a pipeline generation's; a corrupt or foreign file is an error naming
/// it, and so is a directory that is missing, holds no games or is listed twice) and fits
/// `variant`'s piece-square evaluation to them.
pub fn fit_piece_squares_on(
    variant: Variant,
    data: &[PathBuf],
    config: &FitConfig,
    progress: &dyn Progress,
) -> Result<PieceSquareEval, FitError> {
    let refused = |dir: &PathBuf, reason: String| FitError::DataDirectory {
        dir: dir.clone(),
        reason,
    };
    let mut seen = Vec::new();
    let mut games = Vec::new();
    for dir in data {
        let absolute = dir
            .canonicalize()
            .map_err(|e| refused(dir, e.to_string()))?;
        if seen.contains(&absolute) {
            return Err(refused(dir, "listed twice".to_string()));
        }
        seen.push(absolute);
        let files = dataset_files_or_shards(dir)?;
        if files.is_empty() {
            return Err(refused(
                dir,
                "holds no games (no *.arrow dataset files)".to_string(),
            ));
        }
        for file in files {
            games.extend(read_file(&file, Some(variant))?);
        }
    }
    let names: Vec<String> = data.iter().map(|d| d.display().to_string()).collect();
    fit_piece_squares(variant, &games, &names, config, progress)
}

/// Fits `variant`'s piece-square evaluation to `games` (read from `data`, named in the
/// summary), reporting each pass to `progress` as stage `fit-eval`.
pub fn fit_piece_squares(
    variant: Variant,
    games: &[GameRecord],
    data: &[String],
    config: &FitConfig,
    progress: &dyn Progress,
) -> Result<PieceSquareEval, FitError> {
    let layout = PieceSquareLayout::new(variant);
    let (fit, held_out) = rows(games, &layout, config.value_target_mix as f32)?;
    if fit.len() < MIN_FIT_POSITIONS || held_out.len() < MIN_FIT_POSITIONS {
        return Err(FitError::TooFewPositions {
            found: fit.len(),
            held_out: held_out.len(),
            needed: MIN_FIT_POSITIONS,
        });
    }
    let mut weights = vec![0.0; layout.len()];
    let tempo = layout.tempo_index();
    let stages: [(&str, &dyn Fn(usize) -> bool); 2] = [
        ("tempo", &|i| i == tempo),
        ("material", &|i| !layout.is_positional(i)),
    ];
    let penalties = if config.square_l2.is_empty() {
        FitConfig::default().square_l2
    } else {
        config.square_l2.clone()
    };
    let total = ((stages.len() + penalties.len()) * config.epochs) as u64;
    progress.stage_started("fit-eval", total);
    let passes = AtomicU64::new(0);
    let report = |name: &str, loss: f64| {
        let done = passes.fetch_add(1, Ordering::Relaxed) + 1;
        progress.stage_progress(done, total, &format!("{name}: loss {loss:.4}"));
    };
    let bound = |i| f64::from(layout.bound(i));
    let mut held_out_losses = Vec::with_capacity(stages.len());
    for (name, free) in stages {
        let l2 = |i| value_l2(&layout, i, 0.0);
        let mut each_pass = |_, loss| report(name, loss);
        descend(
            &fit,
            &mut weights,
            free,
            &l2,
            &bound,
            config,
            &mut each_pass,
        );
        held_out_losses.push(held_out.loss(&weights, None));
    }
    // The penalties' fits are independent: one a core.
    let positional: Vec<(Vec<f64>, f64)> = penalties
        .par_iter()
        .map(|&penalty| {
            let mut fitted = weights.clone();
            let l2 = |i| value_l2(&layout, i, penalty);
            let name = format!("squares (L2 {penalty})");
            let mut each_pass = |_, loss| report(&name, loss);
            descend(
                &fit,
                &mut fitted,
                &|_| true,
                &l2,
                &bound,
                config,
                &mut each_pass,
            );
            let loss = held_out.loss(&fitted, None);
            (fitted, loss)
        })
        .collect();
    progress.stage_finished();
    let chosen = (0..penalties.len())
        .min_by(|&a, &b| positional[a].1.total_cmp(&positional[b].1))
        .expect("at least one penalty");
    let summary = FitSummary {
        games: games.len(),
        positions: fit.len(),
        validation_positions: held_out.len(),
        validation_loss_tempo: held_out_losses[0],
        validation_loss_material: held_out_losses[1],
        validation_loss: positional[chosen].1,
        epochs: config.epochs,
        square_l2: penalties[chosen],
        value_target_mix: config.value_target_mix,
        square_l2_tried: if penalties.len() > 1 {
            penalties
                .iter()
                .zip(&positional)
                .map(|(&penalty, (_, loss))| [penalty, *loss])
                .collect()
        } else {
            Vec::new()
        },
        data: data.to_vec(),
    };
    let weights = positional[chosen].0.iter().map(|&w| w as f32).collect();
    Ok(PieceSquareEval::new(variant, weights, summary)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ninjazero_data::PositionRecord;
    use ninjazero_model::score::value_from_centipawns;
    use ninjazero_rules::{ByColor, ByRole, Color, Role};

    fn fit(
        variant: Variant,
        games: &[GameRecord],
        config: &FitConfig,
    ) -> Result<PieceSquareEval, FitError> {
        let silent = &ninjazero_data::progress::Silent;
        fit_piece_squares(variant, games, &[], config, silent)
    }

    /// A one-position game from `fen` with `winner`.
    fn game(game_id: u64, fen: &str, winner: Option<Color>) -> GameRecord {
        let position = Position::from_fen(Variant::Chess, fen).unwrap();
        let material = position.material();
        GameRecord {
            game_id,
            variant: Variant::Chess,
            start_fen: fen.into(),
            positions: vec![PositionRecord {
                ply: 0,
                fen: fen.into(),
                side_to_move: position.turn(),
                policy: Vec::new(),
                root_value: 0.0,
                full_search: false,
                material: ByColor::new(|c| ByRole::new(|r| material[c][r])),
                hand: [0, 0],
                move_played: String::new(),
            }],
            winner,
            termination: "checkmate".into(),
            model_id: "test".into(),
            resignation_disabled: false,
            would_resign: None,
        }
    }

    #[test]
    fn a_piece_seen_only_in_won_games_stays_within_what_a_file_may_hold() {
        // White a Queen up wins every game: the log-loss falls as the Queen's weights grow
        // without end, so only the bound stops those without an L2 penalty.
        let games: Vec<GameRecord> = (0..2000u64)
            .map(|id| {
                let fen = if id % 2 == 0 {
                    "4k3/8/8/8/8/8/8/3QK3 w - - 0 1"
                } else {
                    "4k3/8/8/8/8/8/8/3QK3 b - - 0 1"
                };
                game(id, fen, Some(Color::White))
            })
            .collect();
        let config = FitConfig {
            epochs: 200,
            learning_rate: 10.0,
            square_l2: vec![0.0],
            ..FitConfig::default()
        };
        let eval = fit(Variant::Chess, &games, &config).unwrap();
        let layout = eval.layout();
        for (i, w) in eval.weights().iter().enumerate() {
            assert!(w.abs() <= layout.bound(i), "weight {i}: {w}");
        }
        // The Queen's square on d1, without an L2 penalty, is held at its bound.
        let d1 = layout.square_index(Role::Queen, 3);
        assert_eq!(eval.weights()[d1], layout.bound(d1));
    }

    #[test]
    fn square_penalties_are_read_as_a_person_writes_them() {
        let read = |text: &str| text.parse::<SquarePenalties>().map(|p| p.0);
        assert_eq!(read("auto"), Ok(AUTO_SQUARE_L2.to_vec()));
        assert_eq!(read("0.1"), Ok(vec![0.1]));
        assert_eq!(read("0.01, 0.3,100"), Ok(vec![0.01, 0.3, 100.0]));
        for bad in ["", "x", "0.1,", "-0.1", "100.5", "NaN", "inf", "1e400"] {
            assert!(read(bad).is_err(), "{bad:?} accepted");
        }
        assert!(read(&vec!["0.1"; MAX_SQUARE_L2_TRIED + 1].join(",")).is_err());
        assert_eq!(SquarePenalties(vec![0.01, 0.1]).to_string(), "0.01,0.1");
    }

    #[test]
    fn of_several_square_penalties_the_one_with_the_lowest_held_out_loss_is_kept() {
        // The Queen wins 19 games in 20 from d1 but only half of them from a1: a square
        // bonus a heavy penalty suppresses.
        let fens = [
            "4k3/8/8/8/8/8/8/3QK3 w - - 0 1",
            "4k3/8/8/8/8/8/8/3QK3 b - - 0 1",
            "4k3/8/8/8/8/8/8/Q3K3 w - - 0 1",
            "4k3/8/8/8/8/8/8/Q3K3 b - - 0 1",
        ];
        let games: Vec<GameRecord> = (0..4000u64)
            .map(|id| {
                let on_d1 = id % 4 < 2;
                let white_wins = if on_d1 {
                    id / 4 % 20 != 0
                } else {
                    id / 4 % 2 == 0
                };
                let winner = if white_wins {
                    Color::White
                } else {
                    Color::Black
                };
                game(id, fens[(id % 4) as usize], Some(winner))
            })
            .collect();
        let with = |square_l2: Vec<f64>| {
            let config = FitConfig {
                epochs: 300,
                learning_rate: 0.1,
                square_l2,
                ..FitConfig::default()
            };
            fit(Variant::Chess, &games, &config).unwrap()
        };
        let chosen = with(vec![10.0, 0.01]);
        let light = with(vec![0.01]);
        let heavy = with(vec![10.0]);
        assert!(light.fit.validation_loss < heavy.fit.validation_loss - 0.01);
        assert_eq!(chosen.fit.square_l2, 0.01);
        assert_eq!(chosen.weights(), light.weights());
        assert_eq!(chosen.fit.validation_loss, light.fit.validation_loss);
        assert_eq!(
            chosen.fit.square_l2_tried,
            vec![
                [10.0, heavy.fit.validation_loss],
                [0.01, light.fit.validation_loss]
            ]
        );
        // A fit of one penalty records no choice.
        assert!(light.fit.square_l2_tried.is_empty());
    }

    #[test]
    fn the_side_with_the_extra_queen_wins_so_the_queen_gets_the_value() {
        // White a Queen up wins 90 % of its games, with either side to move; equal material
        // is a draw. The fit gives the Queen about ln 9 and the tempo about nothing.
        let queen_up = [
            "4k3/8/8/8/8/8/8/3QK3 w - - 0 1",
            "4k3/8/8/8/8/8/8/3QK3 b - - 0 1",
        ];
        let mut games = Vec::new();
        for id in 0..4000u64 {
            let fen = if id % 2 == 0 {
                queen_up[(id / 2 % 2) as usize]
            } else {
                "4k3/8/8/8/8/8/8/4K3 w - - 0 1"
            };
            // One game in ten of each queen-up position is lost.
            let winner = match (id % 2, id / 4 % 10) {
                (1, _) => None,
                (_, 0) => Some(Color::Black),
                _ => Some(Color::White),
            };
            games.push(game(id, fen, winner));
        }
        let config = FitConfig {
            epochs: 300,
            learning_rate: 0.1,
            square_l2: vec![1e-2],
            ..FitConfig::default()
        };
        let eval = fit(Variant::Chess, &games, &config).unwrap();
        let queen = eval.piece_values()[Role::Queen];
        assert!((queen - 9f32.ln()).abs() < 0.3, "queen {queen}");
        assert!(eval.tempo().abs() < 0.1, "tempo {}", eval.tempo());
        let summary = &eval.fit;
        assert!(
            summary.validation_loss < summary.validation_loss_tempo - 0.1,
            "{summary:?}"
        );
        let position = Position::from_fen(Variant::Chess, queen_up[1]).unwrap();
        assert!(
            eval.log_odds(&position, 0) < -1.5,
            "Black to move, a Queen down"
        );
        // The games in another order (as other files would hold them): the same weights.
        games.reverse();
        let again = fit(Variant::Chess, &games, &config).unwrap();
        assert_eq!(again.weights(), eval.weights());
    }

    #[test]
    fn a_share_of_the_search_value_teaches_what_the_results_do_not() {
        // A Queen up, either side to move; the games' results are coin flips, but the
        // player's search said the side with the Queen wins with log-odds 2 (450
        // centipawns). The results alone teach nothing about the Queen; the search values
        // alone teach log-odds 2.
        let fens = [
            "4k3/8/8/8/8/8/8/3QK3 w - - 0 1",
            "4k3/8/8/8/8/8/8/3QK3 b - - 0 1",
        ];
        let games: Vec<GameRecord> = (0..4000u64)
            .map(|id| {
                let winner = [Color::White, Color::Black][(id / 2 % 2) as usize];
                let mut g = game(id, fens[(id % 2) as usize], Some(winner));
                let record = &mut g.positions[0];
                let sign = if record.side_to_move == Color::White {
                    1
                } else {
                    -1
                };
                record.root_value = value_from_centipawns(sign * 450);
                record.full_search = true;
                g
            })
            .collect();
        let white_to_move = Position::from_fen(Variant::Chess, fens[0]).unwrap();
        let fitted = |value_target_mix| {
            let config = FitConfig {
                epochs: 300,
                learning_rate: 0.1,
                square_l2: vec![1e-2],
                value_target_mix,
            };
            fit(Variant::Chess, &games, &config).unwrap()
        };
        let (results, half, searched) = (fitted(0.0), fitted(0.5), fitted(1.0));
        let odds = |eval: &PieceSquareEval| eval.log_odds(&white_to_move, 0);
        assert!(odds(&results).abs() < 0.1, "{}", odds(&results));
        assert!((odds(&searched) - 2.0).abs() < 0.1, "{}", odds(&searched));
        // Half of each: the target 0.5 × 0.5 + 0.5 × sigmoid(2) on every fitted position.
        let target: f32 = 0.25 + 0.5 / (1.0 + (-2.0f32).exp());
        let expected = (target / (1.0 - target)).ln();
        assert!((odds(&half) - expected).abs() < 0.1, "{}", odds(&half));
        assert_eq!(half.fit.value_target_mix, 0.5);
        // The held-out loss measures the results, which the Queen does not predict: the
        // search values' fit scores worse on them than the results' own.
        assert!(searched.fit.validation_loss > results.fit.validation_loss);
        // A search value that is no number is refused where a share of it is asked for.
        let mut corrupt = games.clone();
        corrupt[7].positions[0].root_value = f32::NAN;
        assert_eq!(
            fit(
                Variant::Chess,
                &corrupt,
                &FitConfig {
                    value_target_mix: 0.5,
                    ..FitConfig::default()
                }
            )
            .unwrap_err()
            .to_string(),
            "game 7, ply 0: the search value NaN is no number"
        );
    }

    #[test]
    fn too_few_positions_are_refused_with_the_counts() {
        let games: Vec<GameRecord> = (0..20)
            .map(|id| game(id, "4k3/8/8/8/8/8/8/3QK3 w - - 0 1", Some(Color::White)))
            .collect();
        let error = fit(Variant::Chess, &games, &FitConfig::default()).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("at least 100 of each are needed"),
            "{error}"
        );
    }

    #[test]
    fn games_stopped_at_the_ply_cap_are_left_out() {
        // Enough positions, but every game ended at the cap: adjudicated or drawn there.
        let games: Vec<GameRecord> = (0..400)
            .map(|id| {
                let mut g = game(id, "4k3/8/8/8/8/8/8/3QK3 w - - 0 1", Some(Color::White));
                g.termination = ["adjudication", "adjudication (material)", "max plies"]
                    [id as usize % 3]
                    .into();
                g
            })
            .collect();
        let error = fit(Variant::Chess, &games, &FitConfig::default()).unwrap_err();
        assert!(
            matches!(
                error,
                FitError::TooFewPositions {
                    found: 0,
                    held_out: 0,
                    ..
                }
            ),
            "{error}"
        );
    }

    #[test]
    fn a_game_of_another_variant_is_refused() {
        let games = vec![game(1, "4k3/8/8/8/8/8/8/3QK3 w - - 0 1", None)];
        let error = fit(Variant::InsaneNinja, &games, &FitConfig::default()).unwrap_err();
        assert!(matches!(error, FitError::WrongVariant { .. }), "{error}");
    }
}
