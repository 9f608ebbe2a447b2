//! Helpers shared by the arena's test files.

use ninjazero_arena::ArenaGame;

/// Games from pairs of results (White's view): in each pair A is White in the first game
/// and Black in the second.
pub fn games_from_pairs(results: &[(&str, &str)]) -> Vec<ArenaGame> {
    results
        .iter()
        .flat_map(|&(first, second)| [(first, true), (second, false)])
        .map(|(result, a_is_white)| ArenaGame {
            opening: vec!["e2e4".into()],
            a_is_white,
            result: result.parse().unwrap(),
            termination: "checkmate".into(),
            plies: 40,
        })
        .collect()
}
