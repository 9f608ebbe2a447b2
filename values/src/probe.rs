//! The value-network probe: over sampled positions, how much the network's expected score
//! for the side to move drops (in log-odds) when one of its pieces of a kind is taken off;
//! the mean drop over the Pawn's mean drop is the value in Pawns.

use crate::{logit, Estimate, Evidence, Measurement, Method, PieceKind};
use ninjazero_model::{EvalRequest, Evaluation, Evaluator};
use ninjazero_rules::{MoveList, Position, Role};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Positions evaluated per network batch.
const BATCH: usize = 256;

/// Expected scores in [0, 1] of `positions` for their sides to move.
fn expected_scores(evaluator: &mut dyn Evaluator, positions: &[Position]) -> Vec<f64> {
    let mut scores = Vec::with_capacity(positions.len());
    let mut out = vec![Evaluation::default(); BATCH];
    for chunk in positions.chunks(BATCH) {
        let moves: Vec<MoveList> = chunk.iter().map(Position::legal_moves).collect();
        let requests: Vec<EvalRequest> = chunk
            .iter()
            .zip(&moves)
            .map(|(position, moves)| EvalRequest {
                position,
                moves,
                repetitions: 0,
            })
            .collect();
        evaluator.evaluate(&requests, &mut out[..chunk.len()]);
        scores.extend(out[..chunk.len()].iter().map(|e| {
            let [win, draw, _] = e.wdl;
            f64::from(win) + f64::from(draw) / 2.0
        }));
    }
    scores
}

/// The probe over `positions` (positions with no legal move are skipped). For each
/// position and each board kind the side to move has, one piece of it (picked at random,
/// seeded) is taken off; a kind is valued only if taken off in at least
/// [`crate::MIN_SAMPLES`] positions. `progress(done, total)` follows the evaluations.
pub fn probe(
    evaluator: &mut dyn Evaluator,
    positions: &[Position],
    kinds: &[PieceKind],
    bootstrap: usize,
    seed: u64,
    progress: &dyn Fn(usize, usize),
) -> Result<Measurement, String> {
    let pawn = kinds
        .iter()
        .position(|&k| k == PieceKind::Board(Role::Pawn))
        .ok_or("the variant has no Pawns to measure in")?;
    let mut rng = StdRng::seed_from_u64(seed);
    let positions: Vec<&Position> = positions
        .iter()
        .filter(|p| !p.legal_moves().is_empty())
        .collect();
    // Every position, then each edited one, remembering (position, kind) of the edits.
    let mut batch: Vec<Position> = positions.iter().map(|&p| p.clone()).collect();
    let mut edits: Vec<(usize, usize)> = Vec::new();
    for (i, position) in positions.iter().enumerate() {
        for (k, kind) in kinds.iter().enumerate() {
            let PieceKind::Board(role) = *kind else {
                continue;
            };
            let squares: Vec<_> = position
                .pieces()
                .filter(|(_, piece)| piece.color == position.turn() && piece.role == role)
                .map(|(square, _)| square)
                .collect();
            if squares.is_empty() {
                continue;
            }
            let square = squares[rng.random_range(0..squares.len())];
            if let Ok(edited) = position.without_piece(square) {
                batch.push(edited);
                edits.push((i, k));
            }
        }
    }
    let mut scores = Vec::with_capacity(batch.len());
    for chunk in batch.chunks(BATCH * 4) {
        scores.extend(expected_scores(evaluator, chunk));
        progress(scores.len(), batch.len());
    }
    // drops[k] holds (position, log-odds drop) for kind k.
    let mut drops: Vec<Vec<(usize, f64)>> = vec![Vec::new(); kinds.len()];
    for (&(i, k), &after) in edits.iter().zip(&scores[positions.len()..]) {
        drops[k].push((i, logit(scores[i]) - logit(after)));
    }
    let mean = |rows: &[(usize, f64)], weights: &[f64]| {
        let (sum, n) = rows.iter().fold((0.0, 0.0), |(s, n), &(i, d)| {
            (s + weights[i] * d, n + weights[i])
        });
        sum / n
    };
    let evidence = |k: usize| Evidence {
        varied: drops[k].len(),
        of: positions.len(),
    };
    evidence(pawn).require_scale(Method::Probe)?;
    let ones = vec![1.0; positions.len()];
    let unit = mean(&drops[pawn], &ones);
    if unit <= 0.0 {
        return Err(format!(
            "taking off a Pawn does not lower the network's expected score (mean drop {unit:.4} log-odds over {} positions): the network has not learnt material",
            drops[pawn].len()
        ));
    }
    // Per replicate, the resampled Pawn drop: the unit, NaN where it is no positive scale.
    let units: Vec<(Vec<f64>, f64)> = (0..bootstrap)
        .map(|_| {
            let mut weights = vec![0.0; positions.len()];
            for _ in 0..positions.len() {
                weights[rng.random_range(0..positions.len())] += 1.0;
            }
            let unit = mean(&drops[pawn], &weights);
            (weights, if unit > 0.0 { unit } else { f64::NAN })
        })
        .collect();
    Measurement::judge(
        kinds
            .iter()
            .enumerate()
            .filter(|&(_, kind)| matches!(kind, PieceKind::Board(_)))
            .map(|(k, &kind)| {
                let replicates = units
                    .iter()
                    .map(|(w, unit)| mean(&drops[k], w) / unit)
                    .collect();
                let value = mean(&drops[k], &ones) / unit;
                let estimate =
                    Estimate::new(kind, Method::Probe, value, drops[k].len(), replicates);
                (estimate, evidence(k))
            })
            .collect(),
    )
}
