//! Outcome regression: a logistic model of White's score on the material difference per
//! piece kind, over self-play positions (Tomašev et al. 2020). A piece's value is its
//! coefficient over the Pawn's.
//!
//! Only quiet positions count — those whose move kept the material as it was — so that a
//! position in the middle of an exchange (a piece just taken, the recapture to come) does
//! not count as an imbalance. Positions with the same material difference are pooled,
//! which keeps the fit small; the bootstrap resamples whole games (Poisson weights), since
//! positions of one game share its result. A piece is valued only if it is unbalanced in
//! at least [`crate::MIN_SAMPLES`] games.

use crate::{Estimate, Evidence, Measurement, Method, PieceKind};
use ninjazero_data::{GameRecord, PositionRecord};
use ninjazero_rules::{Color, Role};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Poisson};
use std::collections::HashMap;

/// Positions pooled by material difference.
struct Pooled {
    /// Difference (White - Black) per kind, one row per distinct difference.
    keys: Vec<Vec<i32>>,
    /// Per game: (key, positions, White's points over those positions).
    games: Vec<Vec<(usize, f64, f64)>>,
}

fn difference(position: &PositionRecord, kind: PieceKind) -> i32 {
    match kind {
        PieceKind::Board(role) => {
            let count = |color: Color| i32::from(position.material[color][role]);
            count(Color::White) - count(Color::Black)
        }
        PieceKind::InHand => i32::from(position.hand[0]) - i32::from(position.hand[1]),
    }
}

fn is_quiet(game: &GameRecord, index: usize) -> bool {
    let (now, next) = (&game.positions[index], game.positions.get(index + 1));
    next.is_none_or(|next| next.material == now.material && next.hand == now.hand)
}

fn pool(games: &[GameRecord], kinds: &[PieceKind]) -> Pooled {
    let mut index: HashMap<Vec<i32>, usize> = HashMap::new();
    let mut keys = Vec::new();
    let mut per_game = Vec::with_capacity(games.len());
    for game in games {
        let white_points = match game.winner {
            Some(Color::White) => 1.0,
            Some(Color::Black) => 0.0,
            None => 0.5,
        };
        let mut rows: HashMap<usize, f64> = HashMap::new();
        for (i, position) in game.positions.iter().enumerate() {
            if !is_quiet(game, i) {
                continue;
            }
            let key: Vec<i32> = kinds.iter().map(|&k| difference(position, k)).collect();
            let next = keys.len();
            let id = *index.entry(key.clone()).or_insert(next);
            if id == next {
                keys.push(key);
            }
            *rows.entry(id).or_default() += 1.0;
        }
        let mut rows: Vec<(usize, f64, f64)> = rows
            .into_iter()
            .map(|(id, n)| (id, n, n * white_points))
            .collect();
        rows.sort_by_key(|r| r.0);
        per_game.push(rows);
    }
    Pooled {
        keys,
        games: per_game,
    }
}

/// Fits logit P(White scores) = b0 + sum_k b_k d_k by Newton's method on pooled rows
/// (`counts[r]` positions with `points[r]` of White's points), with a tiny ridge on the
/// piece terms so that a kind that never differs gets 0. Returns [b0, b_1, ...].
fn fit(keys: &[Vec<i32>], counts: &[f64], points: &[f64]) -> Vec<f64> {
    let dims = keys.first().map_or(0, Vec::len) + 1;
    let row = |r: usize| std::iter::once(1.0).chain(keys[r].iter().map(|&d| f64::from(d)));
    let mut beta = vec![0.0; dims];
    let ridge = 1e-3;
    for _ in 0..50 {
        let mut gradient = vec![0.0; dims];
        let mut hessian = vec![vec![0.0; dims]; dims];
        for r in 0..keys.len() {
            if counts[r] == 0.0 {
                continue;
            }
            let x: Vec<f64> = row(r).collect();
            let z: f64 = x.iter().zip(&beta).map(|(a, b)| a * b).sum();
            let p = 1.0 / (1.0 + (-z).exp());
            let w = counts[r] * p * (1.0 - p);
            for i in 0..dims {
                gradient[i] += x[i] * (points[r] - counts[r] * p);
                for j in 0..dims {
                    hessian[i][j] += w * x[i] * x[j];
                }
            }
        }
        for i in 1..dims {
            gradient[i] -= ridge * beta[i];
            hessian[i][i] += ridge;
        }
        hessian[0][0] += 1e-9;
        let step = solve(hessian, gradient);
        let largest = step.iter().fold(0.0f64, |m, s| m.max(s.abs()));
        for (b, s) in beta.iter_mut().zip(&step) {
            *b += s;
        }
        if largest < 1e-9 {
            break;
        }
    }
    beta
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting (a is small and
/// positive definite here).
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n)
            .max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))
            .unwrap_or(col);
        a.swap(col, pivot);
        b.swap(col, pivot);
        let diagonal = a[col][col];
        if diagonal.abs() < 1e-300 {
            continue;
        }
        let (done, below) = a.split_at_mut(col + 1);
        let pivot_row = &done[col];
        for (offset, row) in below.iter_mut().enumerate() {
            let factor = row[col] / diagonal;
            for (x, p) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                *x -= factor * p;
            }
            b[col + 1 + offset] -= factor * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let rest: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = if a[row][row].abs() < 1e-300 {
            0.0
        } else {
            (b[row] - rest) / a[row][row]
        };
    }
    x
}

/// Per-kind values in Pawns (coefficient over the Pawn's) from pooled rows weighted by
/// per-game weights; the Pawn's coefficient (log-odds) where it is not positive.
fn values(pooled: &Pooled, weights: &[f64], pawn: usize) -> Result<Vec<f64>, f64> {
    let mut counts = vec![0.0; pooled.keys.len()];
    let mut points = vec![0.0; pooled.keys.len()];
    for (rows, &w) in pooled.games.iter().zip(weights) {
        for &(id, n, p) in rows {
            counts[id] += w * n;
            points[id] += w * p;
        }
    }
    let beta = fit(&pooled.keys, &counts, &points);
    let unit = beta[pawn + 1];
    if unit > 1e-6 {
        Ok(beta[1..].iter().map(|b| b / unit).collect())
    } else {
        Err(unit)
    }
}

/// The outcome regression over `games`: the value of each kind that varies in enough games
/// (the Pawn, the unit, with value 1), the others as not enough data. An error when the
/// data has too few Pawn imbalances to set the scale.
pub fn outcome_regression(
    games: &[GameRecord],
    kinds: &[PieceKind],
    bootstrap: usize,
    seed: u64,
) -> Result<Measurement, String> {
    let pawn = kinds
        .iter()
        .position(|&k| k == PieceKind::Board(Role::Pawn))
        .ok_or("the variant has no Pawns to measure in")?;
    let pooled = pool(games, kinds);
    // Per kind, the games with a quiet position where it is unbalanced.
    let evidence: Vec<Evidence> = (0..kinds.len())
        .map(|k| Evidence {
            varied: pooled
                .games
                .iter()
                .filter(|rows| rows.iter().any(|&(id, _, _)| pooled.keys[id][k] != 0))
                .count(),
            of: games.len(),
        })
        .collect();
    evidence[pawn].require_scale(Method::Regression)?;
    let positions: usize = pooled
        .games
        .iter()
        .flatten()
        .map(|&(_, n, _)| n as usize)
        .sum();
    let point = values(&pooled, &vec![1.0; games.len()], pawn).map_err(|unit| {
        format!(
            "the Pawn's coefficient is not positive ({unit:+.3} log-odds): in these games a Pawn more does not score better, so the Pawn cannot be the unit"
        )
    })?;
    let mut rng = StdRng::seed_from_u64(seed);
    let poisson = Poisson::new(1.0).expect("a positive rate");
    let replicates: Vec<Vec<f64>> = (0..bootstrap)
        .map(|_| {
            let weights: Vec<f64> = games.iter().map(|_| poisson.sample(&mut rng)).collect();
            values(&pooled, &weights, pawn).unwrap_or_else(|_| vec![f64::NAN; kinds.len()])
        })
        .collect();
    Measurement::judge(
        kinds
            .iter()
            .enumerate()
            .map(|(k, &kind)| {
                let column = replicates.iter().map(|r| r[k]).collect();
                let estimate = Estimate::new(kind, Method::Regression, point[k], positions, column);
                (estimate, evidence[k])
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newton_recovers_known_coefficients() {
        // Rows with exactly the probabilities of b0 = 0.2, b1 = 0.5, b2 = 1.5.
        let keys: Vec<Vec<i32>> = (-3..=3)
            .flat_map(|a| (-2..=2).map(move |b| vec![a, b]))
            .collect();
        let counts = vec![1000.0; keys.len()];
        let points: Vec<f64> = keys
            .iter()
            .map(|k| {
                let z = 0.2 + 0.5 * f64::from(k[0]) + 1.5 * f64::from(k[1]);
                1000.0 / (1.0 + (-z).exp())
            })
            .collect();
        let beta = fit(&keys, &counts, &points);
        assert_eq!(beta.len(), 3, "{beta:?}");
        for (got, want) in beta.iter().zip([0.2, 0.5, 1.5]) {
            assert!((got - want).abs() < 1e-3, "{beta:?}");
        }
    }
}
