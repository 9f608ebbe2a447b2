//! Known answers for the arena's statistics: logistic Elo, its 95 % interval from per-pair
//! scores (with the documented shrinkage of the variance towards 0.125 with the weight of
//! two pairs), and fishtest's normal-approximation GSPRT with its bounds. Every expected
//! figure is worked out in the comments from the published formulas, not with the code's
//! helpers.

mod common;

use common::games_from_pairs;
use ninjazero_arena::arena::{
    elo_from_score, score_from_elo, sprt_llr, sprt_verdict, ArenaGame, ArenaResult, SprtConfig,
    SprtVerdict,
};

fn close(what: &str, got: f64, want: f64, tolerance: f64) {
    assert!(
        (got - want).abs() <= tolerance,
        "{what}: {got}, expected {want}"
    );
}

/// Logistic Elo: E(s) = −400·log10(1/s − 1), s(E) = 1/(1 + 10^(−E/400)).
///   E(0.75) = 400·log10 3 = 190.848502;  E(0.9) = 400·log10 9 = 381.697004
///   E(0.25) = −190.848502;  E(0.5) = 0
///   s(100) = 1/(1 + 10^−0.25) = 1/1.562341 = 0.640065
///   s(−200) = 1/(1 + 10^0.5) = 1/4.162278 = 0.240253
#[test]
fn logistic_elo_known_answers() {
    close("E(0.75)", elo_from_score(0.75), 190.848_502, 1e-6);
    close("E(0.9)", elo_from_score(0.9), 381.697_004, 1e-6);
    close("E(0.25)", elo_from_score(0.25), -190.848_502, 1e-6);
    assert_eq!(elo_from_score(0.5), 0.0);
    assert!(elo_from_score(0.5).is_sign_positive(), "prints as +0");
    close("s(100)", score_from_elo(100.0), 0.640_065_000, 1e-9);
    close("s(-200)", score_from_elo(-200.0), 0.240_253_073, 1e-9);
    close("s(0)", score_from_elo(0.0), 0.5, 0.0);
}

/// Three pairs (White's results, A White first): 1-0 0-1, 1-0 ½-½, 0-1 0-1.
///   A: won both; won and drew; lost as White and won as Black → 4 wins, 1 draw, 1 loss,
///   points 4.5 of 6, score 0.75, Elo E(0.75) = 190.848502.
///   Pair scores (1, 0.75, 0.5): mean 0.75, variance (0.0625 + 0 + 0.0625)/3 = 0.0416667,
///   shrunk: (3·0.0416667 + 2·0.125)/(3 + 2) = 0.375/5 = 0.075.
///   Margin 1.96·√(0.075/3) = 1.96·0.158114 = 0.309903.
///   Low: 0.75 − 0.309903 = 0.440097 → E = −400·log10(1.272227) = −41.825903.
///   High: 1.059903, beyond 1 − 0.25/7 = 27/28 → E(27/28) = 400·log10 27 = 572.545506.
#[test]
fn elo_interval_of_three_pairs() {
    let r = ArenaResult::from_games(
        "chess",
        "A",
        "B",
        games_from_pairs(&[("1-0", "0-1"), ("1-0", "1/2-1/2"), ("0-1", "0-1")]),
        None,
    );
    assert_eq!((r.games, r.wins, r.draws, r.losses), (6, 4, 1, 1));
    close("score", r.score, 0.75, 1e-12);
    close("elo", r.elo, 190.848_502, 1e-6);
    close("elo_low", r.elo_low, -41.825_903, 1e-6);
    close("elo_high", r.elo_high, 572.545_506, 1e-6);
    assert_eq!(
        r.summary_line(),
        "A vs B: +4 =1 -1, score 0.750, Elo +191 [-42, +573] (95 %)"
    );
}

/// Four pairs: 1-0 0-1, ½-½ ½-½, 1-0 1-0, 0-1 0-1: pair scores (1, 0.5, 0.5, 0.5),
///   points 5 of 8, score 0.625, Elo −400·log10(0.6) = 88.739500.
///   Mean 0.625, variance (0.140625 + 3·0.015625)/4 = 0.046875,
///   shrunk: (4·0.046875 + 0.25)/6 = 0.4375/6 = 0.0729167.
///   Margin 1.96·√(0.0729167/4) = 1.96·0.135015 = 0.264630.
///   Low 0.360370 → −99.672263; high 0.889630 → 362.543785 (both inside [1/36, 35/36]).
#[test]
fn elo_interval_of_four_pairs() {
    let r = ArenaResult::from_games(
        "chess",
        "A",
        "B",
        games_from_pairs(&[
            ("1-0", "0-1"),
            ("1/2-1/2", "1/2-1/2"),
            ("1-0", "1-0"),
            ("0-1", "0-1"),
        ]),
        None,
    );
    assert_eq!((r.wins, r.draws, r.losses), (4, 2, 2));
    close("score", r.score, 0.625, 1e-12);
    close("elo", r.elo, 88.739_500, 1e-6);
    close("elo_low", r.elo_low, -99.672_263, 1e-6);
    close("elo_high", r.elo_high, 362.543_785, 1e-6);
}

/// Five pairs all won: score 1, corrected to (10 + 0.5)/(10 + 1) = 21/22, Elo
///   400·log10 21 = 528.887718.
///   Pair scores all 1: variance 0, shrunk (0 + 0.25)/7 = 0.0357143;
///   margin 1.96·√(0.0357143/5) = 1.96·0.0845154 = 0.165650.
///   Low 21/22 − 0.165650 = 0.788895 → 229.008504; high beyond 1 − 0.25/11 = 43/44 →
///   400·log10 43 = 653.387382.
#[test]
fn a_clean_sweep_has_a_finite_corrected_elo() {
    let r = ArenaResult::from_games(
        "chess",
        "A",
        "B",
        games_from_pairs(&[("1-0", "0-1"); 5]),
        None,
    );
    assert_eq!(r.score, 1.0);
    close("elo", r.elo, 528.887_718, 1e-6);
    close("elo_low", r.elo_low, 229.008_504, 1e-6);
    close("elo_high", r.elo_high, 653.387_382, 1e-6);
    // And all lost: the mirror image.
    let r = ArenaResult::from_games(
        "chess",
        "A",
        "B",
        games_from_pairs(&[("0-1", "1-0"); 5]),
        None,
    );
    assert_eq!(r.score, 0.0);
    close("elo", r.elo, -528.887_718, 1e-6);
    close("elo_low", r.elo_low, -653.387_382, 1e-6);
    close("elo_high", r.elo_high, -229.008_504, 1e-6);
}

/// Three games, the last pair incomplete: 1-0 ½-½, then 1-0 with A White.
///   Points 2.5 of 3: score 0.833333, Elo 400·log10 5 = 279.588002.
///   Units (0.75, 1) (the odd game counts as a unit of its own): mean 0.875, variance
///   0.015625, shrunk (2·0.015625 + 0.25)/4 = 0.0703125; margin 1.96·√(0.0703125/2)
///   = 1.96·0.1875 = 0.3675.
///   Low 0.465833 → −23.778489; high beyond 1 − 0.25/4 = 15/16 → 400·log10 15 = 470.436504.
#[test]
fn an_incomplete_pair_counts_as_a_unit() {
    let mut games = games_from_pairs(&[("1-0", "1/2-1/2"), ("1-0", "0-1")]);
    games.pop();
    let r = ArenaResult::from_games("chess", "A", "B", games, None);
    assert_eq!((r.games, r.wins, r.draws, r.losses), (3, 2, 1, 0));
    close("elo", r.elo, 279.588_002, 1e-6);
    close("elo_low", r.elo_low, -23.778_489, 1e-6);
    close("elo_high", r.elo_high, 470.436_504, 1e-6);
}

/// fishtest's bounds: ln(β/(1 − α)) and ln((1 − β)/α).
///   α = β = 0.05: ln(0.05/0.95) = −ln 19 = −2.944439, ln 19 = 2.944439.
///   α = 0.05, β = 0.1: ln(0.1/0.95) = −2.251292, ln(0.9/0.05) = ln 18 = 2.890372.
#[test]
fn sprt_bounds() {
    let (lower, upper) = SprtConfig::new(0.0, 5.0).bounds();
    close("lower", lower, -2.944_439, 1e-6);
    close("upper", upper, 2.944_439, 1e-6);
    let config = SprtConfig {
        beta: 0.1,
        ..SprtConfig::new(0.0, 5.0)
    };
    let (lower, upper) = config.bounds();
    close("lower", lower, -2.251_292, 1e-6);
    close("upper", upper, 2.890_372, 1e-6);
}

/// The normal-approximation GSPRT LLR of N pair scores with mean μ and (shrunk) variance
/// σ²: N·(s1 − s0)·(2μ − s0 − s1)/(2σ²).
///
/// Pair scores (1, 0.75, 0.5), elo0 0, elo1 100: s0 = 0.5, s1 = 0.640065, μ = 0.75,
///   σ² = 0.075 (as in `elo_interval_of_three_pairs`):
///   3·0.140065·(1.5 − 1.140065)/0.15 = 3·0.140065·0.359935/0.15 = 1.008286.
/// N pairs of 0.75, elo0 0, elo1 50: s1 = 1/(1 + 10^−0.125) = 0.571463, variance 0 shrunk to
///   0.25/(N + 2), LLR = N·(N + 2)·2·0.071463·(1.5 − 1.071463)
///   = N·(N + 2)·0.0612492 = 2.939960 for N = 6 (just inside 2.944439: continue) and
///   3.858697 for N = 7 (H1).
/// N pairs of 0.5 (elo1 50): LLR = −N·(N + 2)·2·0.071463² = −2.941619 for N = 16 (continue)
///   and −3.299107 for N = 17 (H0).
#[test]
fn sprt_llr_and_verdicts() {
    close(
        "llr",
        sprt_llr(&[1.0, 0.75, 0.5], 0.0, 100.0),
        1.008_286,
        1e-6,
    );
    close("llr", sprt_llr(&[0.75; 6], 0.0, 50.0), 2.939_960, 1e-6);
    close("llr", sprt_llr(&[0.75; 7], 0.0, 50.0), 3.858_697, 1e-6);
    close("llr", sprt_llr(&[0.5; 16], 0.0, 50.0), -2.941_619, 1e-6);
    close("llr", sprt_llr(&[0.5; 17], 0.0, 50.0), -3.299_107, 1e-6);
    assert_eq!(sprt_llr(&[], 0.0, 50.0), 0.0);

    let config = SprtConfig::new(0.0, 50.0);
    let win_draw = games_from_pairs(&[("1-0", "1/2-1/2"); 7]);
    let (verdict, llr) = sprt_verdict(&win_draw[..12], &config);
    assert_eq!(verdict, SprtVerdict::Continue);
    close("llr", llr, 2.939_960, 1e-6);
    assert_eq!(sprt_verdict(&win_draw, &config).0, SprtVerdict::AcceptH1);
    // The SPRT counts complete pairs only: a 13th game (a win) changes nothing.
    assert_eq!(
        sprt_verdict(&win_draw[..13], &config),
        (SprtVerdict::Continue, llr)
    );
    let draws = games_from_pairs(&[("1/2-1/2", "1/2-1/2"); 17]);
    assert_eq!(sprt_verdict(&draws[..32], &config).0, SprtVerdict::Continue);
    assert_eq!(sprt_verdict(&draws, &config).0, SprtVerdict::AcceptH0);

    let line = |games: &[ArenaGame]| {
        ArenaResult::from_games("chess", "A", "B", games.to_vec(), Some(&config))
            .sprt
            .unwrap()
    };
    assert_eq!(
        line(&win_draw[..12]),
        "continue (LLR 2.94 in [-2.94, 2.94])"
    );
    assert_eq!(line(&win_draw), "H1 accepted (LLR 3.86 >= 2.94)");
    assert_eq!(line(&draws), "H0 accepted (LLR -3.30 <= -2.94)");
}
