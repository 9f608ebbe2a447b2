//! Known answers for the root choices of the search: PUCT with first-play urgency on a
//! three-move toy tree, and one Sequential Halving round and the improved policy of the
//! Gumbel root, each worked out by hand in the comments.

use ninjazero_rules::{Move, Position, Variant};
use ninjazero_search::gumbel::{improved_policy, GumbelRoot};
use ninjazero_search::tree::{Puct, Tree};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A root with three edges (the first three legal moves of chess) whose statistics are set
/// directly: the root's visits and mean value, and per edge its prior, its child's visits
/// and Q (the child's value from the root's side, so the child itself stores -Q).
fn toy_tree(root: (u32, f64), edges: [(f32, u32, f64); 3]) -> Tree {
    let position = Position::start(Variant::Chess);
    let moves: Vec<Move> = position.legal_moves().iter().take(3).copied().collect();
    assert_eq!(moves.len(), 3);
    let mut tree = Tree::new(position);
    let priors: Vec<f32> = edges.iter().map(|e| e.0).collect();
    tree.expand(0, &moves, &priors);
    tree.nodes[0].visits = root.0;
    tree.nodes[0].value_sum = root.1 * f64::from(root.0);
    for (i, &(_, visits, q)) in edges.iter().enumerate() {
        if visits > 0 {
            let child = tree.child(0, i) as usize;
            tree.nodes[child].visits = visits;
            tree.nodes[child].value_sum = -q * f64::from(visits);
        }
    }
    tree
}

/// First-play urgency decides for the unvisited edge.
///
/// Root: N = 9 (√N = 3), value 0.2; c_puct 1.5. Edges (prior, visits, Q):
///   e0 (0.5, 5, +0.1): U = 1.5·0.5·3/6 = 0.375,   Q + U = 0.475
///   e1 (0.3, 3, −0.2): U = 1.5·0.3·3/4 = 0.3375,  Q + U = 0.1375
///   e2 (0.2, 0, —):    U = 1.5·0.2·3/1 = 0.9,     Q = FPU = 0.2 − reduction
/// With reduction 0.3: FPU = −0.1, e2 scores 0.8 > 0.475: e2.
/// With reduction 1.0: FPU = −0.8, e2 scores 0.1 < 0.475: e0.
/// With reduction 0.7: FPU = −0.5, e2 scores 0.4 < 0.475: e0 (the Q of the unvisited
/// edge is the parent's value minus the reduction, not 0 and not the parent's value).
#[test]
fn first_play_urgency_decides_for_the_unvisited_edge() {
    let tree = toy_tree((9, 0.2), [(0.5, 5, 0.1), (0.3, 3, -0.2), (0.2, 0, 0.0)]);
    let puct = |fpu_reduction| Puct {
        c_puct: 1.5,
        fpu_reduction,
    };
    assert_eq!(tree.select_edge(0, puct(0.3), None), 2);
    assert_eq!(tree.select_edge(0, puct(1.0), None), 0);
    assert_eq!(tree.select_edge(0, puct(0.7), None), 0);
    // Without a reduction (FPU = 0.2) e2 would score 1.1; with the unvisited Q taken as 0
    // and reduction 0.7 it would score 0.9: both pick e2, unlike the code at 0.7.
}

/// Exploration beats a higher Q, until c_puct is small.
///
/// Root: N = 16 (√N = 4), value 0.3. Edges (prior, visits, Q):
///   e0 (0.1, 10, +0.5)
///   e1 (0.6,  3, +0.2)
///   e2 (0.3,  2, −0.4)
/// c_puct 2.0:  e0: 0.5 + 2·0.1·4/11 = 0.5727;  e1: 0.2 + 2·0.6·4/4 = 1.4;
///              e2: −0.4 + 2·0.3·4/3 = 0.4  →  e1, whose Q is lower than e0's.
/// c_puct 0.2:  e0: 0.5 + 0.0727 = 0.5073;  e1: 0.2 + 0.12 = 0.32;  e2: −0.4 + 0.08 = −0.32
///              →  e0.
/// Root priors overriding the stored ones (the noisy priors) at c_puct 2.0, (0.9, 0.05, 0.05):
///   e0: 0.5 + 2·0.9·4/11 = 1.1545;  e1: 0.2 + 2·0.05·4/4 = 0.3;  e2: −0.4 + 2·0.05·4/3 = −0.267
///   →  e0.
#[test]
fn exploration_beats_a_higher_q_until_c_puct_is_small() {
    let tree = toy_tree((16, 0.3), [(0.1, 10, 0.5), (0.6, 3, 0.2), (0.3, 2, -0.4)]);
    let puct = |c_puct| Puct {
        c_puct,
        fpu_reduction: 0.25,
    };
    assert_eq!(tree.select_edge(0, puct(2.0), None), 1);
    assert_eq!(tree.select_edge(0, puct(0.2), None), 0);
    assert_eq!(
        tree.select_edge(0, puct(2.0), Some(&[0.9, 0.05, 0.05])),
        0,
        "the given priors replace the stored ones"
    );
}

/// The seed of the Gumbel tests and its four uniform draws, as `GumbelRoot::new` draws them
/// (one per action, in action order, from [1e-9, 1)).
const SEED: u64 = 4;
const DRAWS: [f32; 4] = [0.694_280_74, 0.533_003_1, 0.083_615_54, 0.656_967_64];

/// The draws the hand computations below are based on: fails (rather than checking
/// against wrong figures) if the random number stream ever changes.
fn check_draws() {
    let mut rng = StdRng::seed_from_u64(SEED);
    for (i, want) in DRAWS.iter().enumerate() {
        let u: f32 = rng.random_range(1e-9..1.0);
        assert!(
            (u - want).abs() < 1e-7,
            "draw {i} of seed {SEED} is {u}, not {want}: redo the hand computation"
        );
    }
}

/// Gumbel noise g = −ln(−ln u) for the draws above, with priors (0.1, 0.2, 0.3, 0.4):
///   a0: ln u = −0.364879, g = 1.008190,  ln p = −2.302585, g + logit = −1.294395
///   a1: ln u = −0.629228, g = 0.463262,  ln p = −1.609438, g + logit = −1.146176
///   a2: ln u = −2.481526, g = −0.908874, ln p = −1.203973, g + logit = −2.112846
///   a3: ln u = −0.420121, g = 0.867214,  ln p = −0.916291, g + logit = −0.049077
/// Order by g + logit: a3, a1, a0, a2.
///
/// Top 4 of 4, budget 8: rounds = ⌈log2 4⌉ = 2; round 1 visits each action
/// ⌊8 / (2·4)⌋ = 1 time, in that order.
/// After it, with q = (0.9, 0.2, 1.0, 0.0) and 1 visit each, σ = (50 + 1)·0.1·(q − 0)/1
/// = (4.59, 1.02, 5.1, 0):
///   a0: −1.294395 + 4.59 = 3.295605;  a1: −1.146176 + 1.02 = −0.126176
///   a2: −2.112846 + 5.1  = 2.987154;  a3: −0.049077 + 0    = −0.049077
/// The better half is a0, a2 (a0 ahead of a2, whose q is higher, by its noise and prior);
/// round 2 visits each ⌊8 / (2·2)⌋ = 2 times: a0, a2, a0, a2.
/// The choice after it (a0 and a2 with 3 visits each, same q): σ is rescaled over all four
/// actions, as mctx does (q from 0.0 to 1.0, so q̂ = q), with the most visits 3:
/// σ = 5.3·q̂, a0: −1.294395 + 5.3·0.9 = 3.475605, a2: −2.112846 + 5.3 = 3.187154: a0.
/// (Rescaling over the two actions compared only would give a0 σ = 0 and choose a2.)
#[test]
fn sequential_halving_keeps_the_better_half_by_noise_logit_and_sigma() {
    check_draws();
    let priors = [0.1, 0.2, 0.3, 0.4];
    let mut root = GumbelRoot::new(&priors, 4, 8, &mut StdRng::seed_from_u64(SEED));
    let q_of = [0.9f32, 0.2, 1.0, 0.0];
    let mut visits = [0u32; 4];
    let mut order = Vec::new();
    for _ in 0..8 {
        let seen = visits;
        let a = root.next_action(|a| (seen[a] > 0).then_some(q_of[a]), |a| seen[a], 0.5);
        visits[a] += 1;
        order.push(a);
    }
    assert_eq!(order, [3, 1, 0, 2, 0, 2, 0, 2]);
    assert_eq!(visits, [3, 1, 3, 1]);
    let chosen = root.chosen(|a| Some(q_of[a]), |a| visits[a], 0.5);
    assert_eq!(chosen, 0);
}

/// Top 2 of 4 (same seed and priors): only a3 and a1, the two best by g + logit, are
/// searched, though a2 has the second highest prior; one round (⌈log2 2⌉ = 1) of
/// ⌊8 / (1·2)⌋ = 4 visits each.
#[test]
fn only_the_top_k_by_noise_and_logit_are_searched() {
    check_draws();
    let priors = [0.1, 0.2, 0.3, 0.4];
    let mut root = GumbelRoot::new(&priors, 2, 8, &mut StdRng::seed_from_u64(SEED));
    let order: Vec<usize> = (0..8)
        .map(|_| root.next_action(|_| Some(0.0), |_| 1, 0.0))
        .collect();
    assert_eq!(order, [3, 1, 3, 1, 3, 1, 3, 1]);
}

/// The improved policy softmax(logit + σ(completed q)) of mctx, σ(q) = (50 + max visits)·0.1·q̂
/// with q̂ the completed q min-max rescaled to [0, 1].
///
/// Priors (0.1, 0.2, 0.3, 0.4), visits (1, 3, 0, 4), q (−0.4, 0.1, —, 0.6), root value 0.2:
///   completed q = (−0.4, 0.1, 0.2, 0.6) (the unvisited action takes the root value)
///   rescaled (low −0.4, span 1.0): (0, 0.5, 0.6, 1.0)
///   σ = 5.4·(0, 0.5, 0.6, 1.0) = (0, 2.7, 3.24, 5.4)
///   exp(logit + σ) = p·e^σ = (0.1, 0.2·14.879732 = 2.975946, 0.3·25.533722 = 7.660117,
///                            0.4·221.406416 = 88.562566), sum 99.298629
///   policy = (0.001007063, 0.029969662, 0.077142218, 0.891881057)
#[test]
fn improved_policy_is_the_completed_q_softmax() {
    let policy = improved_policy(
        &[0.1, 0.2, 0.3, 0.4],
        &[Some(-0.4), Some(0.1), None, Some(0.6)],
        &[1, 3, 0, 4],
        0.2,
    );
    let expected = [0.001_007_063, 0.029_969_662, 0.077_142_218, 0.891_881_057];
    assert_eq!(policy.len(), expected.len());
    for (i, (&got, want)) in policy.iter().zip(expected).enumerate() {
        assert!(
            (f64::from(got) - want).abs() <= 1e-5 * want,
            "action {i}: {got}, expected {want} ({policy:?})"
        );
    }
    // Every q equal: no preference from σ, the policy is the prior.
    let flat = improved_policy(&[0.1, 0.2, 0.3, 0.4], &[Some(0.3); 4], &[2, 2, 2, 2], 0.0);
    for (got, want) in flat.iter().zip([0.1f32, 0.2, 0.3, 0.4]) {
        assert!((got - want).abs() < 1e-6, "{flat:?}");
    }
}
