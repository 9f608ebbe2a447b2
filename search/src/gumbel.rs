//! Gumbel root search with Sequential Halving (Danihelka, Guez, Schrittwieser, Silver:
//! "Policy improvement by planning with Gumbel", ICLR 2022).
//!
//! The root samples Gumbel noise g(a), keeps the top-k actions by g(a) + logit(a), and
//! spends the simulation budget in halving rounds: each round visits every remaining action
//! equally, then keeps the better half by g(a) + logit(a) + sigma(q(a)). The improved policy
//! target is softmax(logit + sigma(completed q)).
//!
//! sigma follows mctx (`qtransform_completed_by_mix_value`): the completed Q of *every* root
//! action (an unvisited one takes the root value) is min-max rescaled to [0, 1] over all root
//! actions, and scaled by (50 + the most visits of any root action) · 0.1, for the halving
//! rounds, the final choice and the policy target alike. One difference remains: mctx
//! completes unvisited actions with a value mixing the network's value and the visited
//! actions' Q by their priors, this search with the root's mean value.

use rand::Rng;
use std::collections::VecDeque;

/// sigma(q) = (C_VISIT + max visits) * C_SCALE * q, with q in [0, 1] (the paper's defaults).
const C_VISIT: f32 = 50.0;
const C_SCALE: f32 = 0.1;

#[derive(Clone, Debug)]
pub struct GumbelRoot {
    /// g(a) + logit(a) per root edge.
    base: Vec<f32>,
    remaining: Vec<usize>,
    queue: VecDeque<usize>,
    rounds: u32,
    budget: u32,
}

/// sigma of the completed Q values of all root actions, rescaled to [0, 1] over them (as
/// mctx does): without the rescaling a clearly winning move can lose a halving round to the
/// Gumbel noise.
fn sigmas(completed_q: &[f32], max_visits: u32) -> Vec<f32> {
    let low = completed_q.iter().copied().fold(f32::INFINITY, f32::min);
    let high = completed_q
        .iter()
        .copied()
        .fold(f32::NEG_INFINITY, f32::max);
    let span = (high - low).max(1e-6);
    completed_q
        .iter()
        .map(|&q| (C_VISIT + max_visits as f32) * C_SCALE * (q - low) / span)
        .collect()
}

fn logit(prior: f32) -> f32 {
    prior.max(1e-12).ln()
}

impl GumbelRoot {
    /// Starts a search over actions with these priors and `budget` simulations.
    pub fn new<R: Rng + ?Sized>(
        priors: &[f32],
        actions: usize,
        budget: u32,
        rng: &mut R,
    ) -> GumbelRoot {
        let base: Vec<f32> = priors
            .iter()
            .map(|&p| {
                let u: f32 = rng.random_range(1e-9..1.0);
                logit(p) - (-u.ln()).ln()
            })
            .collect();
        let mut order: Vec<usize> = (0..priors.len()).collect();
        order.sort_by(|&a, &b| base[b].total_cmp(&base[a]));
        order.truncate(actions.max(1));
        let rounds = (order.len() as f32).log2().ceil().max(1.0) as u32;
        let mut root = GumbelRoot {
            base,
            remaining: order,
            queue: VecDeque::new(),
            rounds,
            budget,
        };
        root.fill_round();
        root
    }

    fn fill_round(&mut self) {
        let per_action = (self.budget / (self.rounds * self.remaining.len() as u32)).max(1);
        for _ in 0..per_action {
            self.queue.extend(self.remaining.iter().copied());
        }
    }

    /// g + logit + sigma(completed q) of each remaining action, in `remaining` order, with
    /// sigma over all root actions (the rescaling's range and the most visits included).
    /// `q(a)` is the action's value if visited; unvisited actions take the root value `v`.
    fn scores(
        &self,
        q: &impl Fn(usize) -> Option<f32>,
        visits: &impl Fn(usize) -> u32,
        v: f32,
    ) -> Vec<f32> {
        let actions = 0..self.base.len();
        let max_visits = actions.clone().map(visits).max().unwrap_or(0);
        let completed: Vec<f32> = actions.map(|a| q(a).unwrap_or(v)).collect();
        let sigma = sigmas(&completed, max_visits);
        self.remaining
            .iter()
            .map(|&a| self.base[a] + sigma[a])
            .collect()
    }

    /// Whether this round's visits are all handed out: the next action halves the
    /// remaining ones on the tree's statistics, which must hold the round's results.
    pub fn round_spent(&self) -> bool {
        self.queue.is_empty()
    }

    /// The root action to simulate next, given the tree's statistics now.
    pub fn next_action(
        &mut self,
        q: impl Fn(usize) -> Option<f32>,
        visits: impl Fn(usize) -> u32,
        v: f32,
    ) -> usize {
        if self.queue.is_empty() {
            if self.remaining.len() > 1 {
                let scores = self.scores(&q, &visits, v);
                let mut ranked: Vec<(f32, usize)> = scores
                    .into_iter()
                    .zip(self.remaining.iter().copied())
                    .collect();
                ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
                ranked.truncate(ranked.len().div_ceil(2));
                self.remaining = ranked.into_iter().map(|(_, a)| a).collect();
            }
            self.fill_round();
        }
        self.queue.pop_front().unwrap_or(self.remaining[0])
    }

    /// The action to play: the best remaining one by g + logit + sigma(completed q).
    pub fn chosen(
        &self,
        q: impl Fn(usize) -> Option<f32>,
        visits: impl Fn(usize) -> u32,
        v: f32,
    ) -> usize {
        let scores = self.scores(&q, &visits, v);
        let best = (0..scores.len())
            .max_by(|&i, &j| scores[i].total_cmp(&scores[j]))
            .unwrap_or(0);
        self.remaining[best]
    }
}

/// The improved policy softmax(logit + sigma(completed q)); unvisited actions take the
/// root value `v` as their q.
pub fn improved_policy(priors: &[f32], q: &[Option<f32>], visits: &[u32], v: f32) -> Vec<f32> {
    let max_visits = visits.iter().copied().max().unwrap_or(0);
    let completed: Vec<f32> = q.iter().map(|q| q.unwrap_or(v)).collect();
    let scores: Vec<f32> = priors
        .iter()
        .zip(sigmas(&completed, max_visits))
        .map(|(&p, s)| logit(p) + s)
        .collect();
    let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exps: Vec<f32> = scores.iter().map(|s| (s - max).exp()).collect();
    let sum: f32 = exps.iter().sum();
    exps.into_iter().map(|e| e / sum).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    #[test]
    fn halving_keeps_the_best_action_and_improves_its_policy() {
        let mut rng = StdRng::seed_from_u64(3);
        let priors = vec![0.1; 10];
        let mut root = GumbelRoot::new(&priors, 10, 64, &mut rng);
        let mut counts = vec![0u32; 10];
        // Action 7 is much better than the rest: it must survive every round.
        let q = |a: usize| Some(if a == 7 { 0.9 } else { -0.5 });
        for _ in 0..64 {
            let visits = counts.clone();
            let a = root.next_action(q, |a| visits[a], 0.0);
            counts[a] += 1;
        }
        assert!(
            counts.iter().all(|&c| c > 0),
            "every action is tried: {counts:?}"
        );
        assert_eq!(counts.iter().max(), Some(&counts[7]), "{counts:?}");
        assert_eq!(root.chosen(q, |a| counts[a], 0.0), 7);
        let policy = improved_policy(&priors, &(0..10).map(q).collect::<Vec<_>>(), &counts, 0.0);
        assert!((policy.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(policy[7] > 0.5, "{policy:?}");
    }
}
