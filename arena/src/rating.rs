//! Ratings of many players on one Elo scale from all their games: a Bradley–Terry
//! maximum-likelihood fit, as BayesElo and Ordo make, with 95 % intervals.
//!
//! - Model: A scores against B with probability 1 / (1 + 10^((r_B - r_A) / 400)) (logistic
//!   Elo). A draw counts as half a win and half a loss (no separate draw model: with the
//!   few draws of weak players a draw parameter is poorly determined, and the half-point
//!   likelihood gives the same ratings as the score does).
//! - Prior: every pairing that played gets `virtual_draws` extra draws, as BayesElo's
//!   default prior does; it keeps the rating of a player that won or lost every game finite
//!   and pulls ratings from few games a little towards their opponents'.
//! - Player 0 is fixed at 0 (the ladder's random mover); the others are found by Newton's
//!   method on the concave log-likelihood.
//! - Intervals: ±1.96 standard errors from the observed Fisher information (the inverse of
//!   the negated Hessian at the optimum), relative to player 0.

use std::f64::consts::LN_10;

/// Games between players `a` and `b`, from `a`'s view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairingScore {
    pub a: usize,
    pub b: usize,
    pub wins: usize,
    pub draws: usize,
    pub losses: usize,
}

impl PairingScore {
    fn games(&self) -> usize {
        self.wins + self.draws + self.losses
    }
}

/// A fitted rating (Elo relative to player 0) with its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rating {
    pub elo: f64,
    pub low: f64,
    pub high: f64,
}

/// Why ratings cannot be fitted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RatingError {
    #[error("player {0} has no games connecting it to player 0, so it has no rating")]
    Unconnected(usize),
    #[error("pairing of player {0} with player {1}: no such player")]
    NoSuchPlayer(usize, usize),
}

/// Elo per unit of the logistic scale (400 / ln 10).
const ELO_PER_UNIT: f64 = 400.0 / LN_10;

/// Points and games (virtual draws included) of each pairing, as (a, b, points of a, games).
type Weighted = Vec<(usize, usize, f64, f64)>;

/// Ratings of players `0..players` from `pairings`, player 0 fixed at 0 (see the module
/// docs for the model, the prior and the intervals).
pub fn fit_ratings(
    players: usize,
    pairings: &[PairingScore],
    virtual_draws: f64,
) -> Result<Vec<Rating>, RatingError> {
    let weighted: Weighted = pairings
        .iter()
        .filter(|p| p.games() > 0)
        .map(|p| {
            if p.a >= players || p.b >= players {
                return Err(RatingError::NoSuchPlayer(p.a, p.b));
            }
            let points = p.wins as f64 + 0.5 * (p.draws as f64 + virtual_draws);
            Ok((p.a, p.b, points, p.games() as f64 + virtual_draws))
        })
        .collect::<Result<_, _>>()?;
    check_connected(players, &weighted)?;
    let mut x = vec![0.0; players];
    for _ in 0..200 {
        let (gradient, hessian) = derivatives(&x, &weighted);
        let step = solve(&hessian, &gradient);
        let before = log_likelihood(&x, &weighted);
        let mut scale = 1.0;
        let mut trial = x.clone();
        for _ in 0..50 {
            for i in 1..players {
                trial[i] = x[i] + scale * step[i - 1];
            }
            if log_likelihood(&trial, &weighted) >= before - 1e-12 {
                break;
            }
            scale /= 2.0;
        }
        let moved = step.iter().fold(0.0f64, |m, s| m.max((scale * s).abs()));
        x = trial;
        if moved < 1e-10 {
            break;
        }
    }
    let (_, hessian) = derivatives(&x, &weighted);
    let covariance = invert(&hessian);
    Ok((0..players)
        .map(|i| {
            let elo = ELO_PER_UNIT * x[i] + 0.0;
            let margin = if i == 0 {
                0.0
            } else {
                1.96 * ELO_PER_UNIT * covariance[i - 1][i - 1].max(0.0).sqrt()
            };
            Rating {
                elo,
                low: elo - margin,
                high: elo + margin,
            }
        })
        .collect())
}

/// Every player must reach player 0 through pairings, or its rating is undetermined.
fn check_connected(players: usize, weighted: &Weighted) -> Result<(), RatingError> {
    let mut reached = vec![false; players];
    if players == 0 {
        return Ok(());
    }
    reached[0] = true;
    let mut changed = true;
    while changed {
        changed = false;
        for &(a, b, _, _) in weighted {
            if reached[a] != reached[b] {
                reached[a] = true;
                reached[b] = true;
                changed = true;
            }
        }
    }
    match reached.iter().position(|r| !r) {
        Some(player) => Err(RatingError::Unconnected(player)),
        None => Ok(()),
    }
}

fn expected(x: &[f64], a: usize, b: usize) -> f64 {
    1.0 / (1.0 + (x[b] - x[a]).exp())
}

fn log_likelihood(x: &[f64], weighted: &Weighted) -> f64 {
    weighted
        .iter()
        .map(|&(a, b, points, games)| {
            let p = expected(x, a, b);
            points * p.ln() + (games - points) * (1.0 - p).ln()
        })
        .sum()
}

/// The gradient and the negated Hessian of the log-likelihood in players `1..`.
fn derivatives(x: &[f64], weighted: &Weighted) -> (Vec<f64>, Vec<Vec<f64>>) {
    let n = x.len().saturating_sub(1);
    let mut gradient = vec![0.0; n];
    let mut information = vec![vec![0.0; n]; n];
    for &(a, b, points, games) in weighted {
        let p = expected(x, a, b);
        let residual = points - games * p;
        let weight = games * p * (1.0 - p);
        for (i, sign) in [(a, 1.0), (b, -1.0)] {
            if i > 0 {
                gradient[i - 1] += sign * residual;
                information[i - 1][i - 1] += weight;
            }
        }
        if a > 0 && b > 0 {
            information[a - 1][b - 1] -= weight;
            information[b - 1][a - 1] -= weight;
        }
    }
    (gradient, information)
}

/// Solves `m y = v` (m symmetric positive definite) by Gauss–Jordan elimination.
fn solve(m: &[Vec<f64>], v: &[f64]) -> Vec<f64> {
    let inverse = invert(m);
    inverse
        .iter()
        .map(|row| row.iter().zip(v).map(|(a, b)| a * b).sum())
        .collect()
}

/// The inverse of a symmetric positive definite matrix, by Gauss–Jordan elimination with
/// partial pivoting.
fn invert(m: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = m.len();
    let mut a: Vec<Vec<f64>> = m.to_vec();
    let mut inverse: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| f64::from(u8::from(i == j))).collect())
        .collect();
    for col in 0..n {
        let pivot = (col..n)
            .max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))
            .unwrap_or(col);
        a.swap(col, pivot);
        inverse.swap(col, pivot);
        let d = a[col][col];
        for j in 0..n {
            a[col][j] /= d;
            inverse[col][j] /= d;
        }
        for row in 0..n {
            if row != col {
                let f = a[row][col];
                for j in 0..n {
                    a[row][j] -= f * a[col][j];
                    inverse[row][j] -= f * inverse[col][j];
                }
            }
        }
    }
    inverse
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(a: usize, b: usize, wins: usize, draws: usize, losses: usize) -> PairingScore {
        PairingScore {
            a,
            b,
            wins,
            draws,
            losses,
        }
    }

    #[test]
    fn a_score_of_three_quarters_is_190_8_elo() {
        let ratings = fit_ratings(2, &[score(1, 0, 300, 0, 100)], 0.0).unwrap();
        assert_eq!(ratings[0].elo, 0.0);
        assert!((ratings[1].elo - 190.848).abs() < 1e-3, "{:?}", ratings[1]);
        // Standard error: 400 / ln 10 / sqrt(n p (1 - p)) = 173.72 / sqrt(75).
        let margin = 1.96 * ELO_PER_UNIT / 75f64.sqrt();
        assert!((ratings[1].high - ratings[1].elo - margin).abs() < 1e-6);
        assert!((ratings[1].elo - ratings[1].low - margin).abs() < 1e-6);
        // Draws are half points: 200 wins and 200 draws score 0.75 too.
        let drawn = fit_ratings(2, &[score(0, 1, 100, 200, 100)], 0.0).unwrap();
        assert!(drawn[1].elo.abs() < 1e-9);
        let half = fit_ratings(2, &[score(1, 0, 200, 200, 0)], 0.0).unwrap();
        assert!((half[1].elo - 190.848).abs() < 1e-3);
    }

    #[test]
    fn three_consistent_players_are_fitted_exactly() {
        // Odds 3 : 1 for 1 over 0 and for 2 over 1, hence 9 : 1 for 2 over 0.
        let pairings = [
            score(1, 0, 75, 0, 25),
            score(2, 1, 30, 0, 10),
            score(0, 2, 5, 0, 45),
        ];
        let ratings = fit_ratings(3, &pairings, 0.0).unwrap();
        assert!((ratings[1].elo - 190.848).abs() < 1e-3, "{ratings:?}");
        assert!((ratings[2].elo - 381.697).abs() < 1e-3, "{ratings:?}");
        assert!(ratings[2].low < ratings[2].elo && ratings[2].elo < ratings[2].high);
    }

    #[test]
    fn a_clean_sweep_stays_finite_with_virtual_draws() {
        let ratings = fit_ratings(2, &[score(1, 0, 10, 0, 0)], 1.0).unwrap();
        // 10.5 of 11 points: 400 log10(10.5 / 0.5).
        let expected = 400.0 * (10.5f64 / 0.5).log10();
        assert!((ratings[1].elo - expected).abs() < 1e-3, "{ratings:?}");
        assert!(ratings[1].high.is_finite());
    }

    #[test]
    fn an_unconnected_player_is_an_error() {
        let result = fit_ratings(3, &[score(1, 0, 1, 0, 1)], 1.0);
        assert_eq!(result, Err(RatingError::Unconnected(2)));
    }
}
