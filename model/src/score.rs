//! A position's value on the scales the searchers report it in: an expected score in
//! [-1, 1] for the side to move (networks, MCTS, the root values datasets store) and
//! centipawns (alpha-beta, engine protocols), with the learnt evaluation's log-odds tied to
//! centipawns by [`CENTIPAWNS_PER_LOG_ODDS`].
//!
//! ```
//! use ninjazero_model::score::{centipawns_from_value, value_from_centipawns, win_probability_from_value};
//!
//! assert_eq!(value_from_centipawns(0), 0.0);
//! assert_eq!(centipawns_from_value(value_from_centipawns(450)), 450);
//! // 450 centipawns are 2 log-odds of a learnt evaluation: it meant a win 88 % of the time.
//! let p = win_probability_from_value(value_from_centipawns(450));
//! assert!((p - 1.0 / (1.0 + (-2.0f32).exp())).abs() < 1e-3);
//! ```

/// Centipawns per unit of log-odds of a learnt evaluation: the slope at 0 of the mapping
/// from an expected score to centipawns ([`centipawns_from_value`]), so that a learnt score
/// reported in centipawns reads back as about the expected score the evaluation meant.
pub const CENTIPAWNS_PER_LOG_ODDS: f32 = 225.0;

/// The expected score in [-1, 1] of `centipawns` (the inverse of [`centipawns_from_value`]).
pub fn value_from_centipawns(centipawns: i32) -> f32 {
    ((centipawns as f32 / 290.68).atan() / 1.548).clamp(-1.0, 1.0)
}

/// Centipawns of an expected score by the usual logistic-style mapping (a score within
/// 0.001 of a certain result counts as that close to it, so that the answer stays finite).
pub fn centipawns_from_value(value: f32) -> i32 {
    let value = value.clamp(-0.999, 0.999);
    (290.68 * (1.548 * value).tan()).round() as i32
}

/// How often a learnt evaluation meant the side to move to win (draws counting half) when
/// alpha-beta searching with it reported the expected score `value`: its centipawns read
/// back as log-odds.
pub fn win_probability_from_value(value: f32) -> f32 {
    let log_odds = centipawns_from_value(value) as f32 / CENTIPAWNS_PER_LOG_ODDS;
    1.0 / (1.0 + (-log_odds).exp())
}
