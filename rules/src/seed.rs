//! Seeds: the SplitMix64 step and the derivation of per-game, per-opening and per-epoch
//! seeds from a run's seed. Here, in the crate every other one depends on, because the
//! Zobrist keys need SplitMix64 at compile time and every seeded stream (self-play games,
//! arena openings and players, the trainer's shuffle) derives its seed the same way.
//!
//! The numbers are part of what a seed means (the same seed gives the same games, openings
//! and shuffles as earlier builds), so neither function may change.

/// One step of SplitMix64 (Steele, Lea and Flood 2014): the next state and its output.
/// `const` for the Zobrist keys, which are computed at compile time.
pub const fn splitmix64(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (state, z ^ (z >> 31))
}

/// What a derived seed is for. Each stream multiplies the index by its own constant;
/// streams that share one never share a base seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeedStream {
    /// A self-play game (index: the game id), and a random player's game (base: the
    /// player's seed, index: the seed the game gives it).
    Game,
    /// An arena opening (index: the opening number + 1).
    Opening,
    /// A redraw of an arena opening that ended too early (base: the opening's seed, index:
    /// the attempt).
    OpeningAttempt,
    /// The seed a player is told before an arena series game (index: the game number + 1).
    SeriesGame,
    /// The trainer's shuffle of an epoch (index: the epoch).
    Epoch,
    /// The second player of an arena (index: 1), so that two random players differ.
    SecondPlayer,
    /// The self-play games of a pipeline generation (index: the generation).
    Generation,
}

impl SeedStream {
    const fn multiplier(self) -> u64 {
        match self {
            SeedStream::Game | SeedStream::Opening => 0x9e37_79b9_7f4a_7c15,
            SeedStream::OpeningAttempt | SeedStream::Epoch => 0xd1b5_4a32_d192_ed03,
            SeedStream::SeriesGame => 0xa076_1d64_78bd_642f,
            SeedStream::SecondPlayer => 0x5bd1_e995_5bd1_e995,
            SeedStream::Generation => 1 << 32,
        }
    }
}

/// The seed of item `index` of `stream`, derived from `base`: `base` XOR `index` times the
/// stream's constant. Index 0 gives `base` itself.
///
/// ```
/// use ninjazero_rules::seed::{derive_seed, SeedStream};
/// assert_eq!(derive_seed(7, SeedStream::Game, 0), 7);
/// assert_eq!(derive_seed(0, SeedStream::Game, 1), 0x9e37_79b9_7f4a_7c15);
/// ```
pub const fn derive_seed(base: u64, stream: SeedStream, index: u64) -> u64 {
    base ^ index.wrapping_mul(stream.multiplier())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stream_keeps_the_numbers_of_earlier_builds() {
        let (base, index) = (0x1234_5678_9abc_def0, 37u64);
        for (stream, multiplier) in [
            (SeedStream::Game, 0x9e37_79b9_7f4a_7c15u64),
            (SeedStream::Opening, 0x9e37_79b9_7f4a_7c15),
            (SeedStream::OpeningAttempt, 0xd1b5_4a32_d192_ed03),
            (SeedStream::SeriesGame, 0xa076_1d64_78bd_642f),
            (SeedStream::Epoch, 0xd1b5_4a32_d192_ed03),
            (SeedStream::SecondPlayer, 0x5bd1_e995_5bd1_e995),
        ] {
            let want = base ^ index.wrapping_mul(multiplier);
            assert_eq!(derive_seed(base, stream, index), want, "{stream:?}");
        }
        assert_eq!(
            derive_seed(base, SeedStream::Generation, 3),
            base ^ (3 << 32)
        );
    }

    #[test]
    fn splitmix64_gives_the_reference_outputs() {
        // The first outputs of SplitMix64 seeded with 1234567, as the reference C code gives.
        let mut state = 1234567;
        let mut outputs = [0; 3];
        for out in &mut outputs {
            let (next, value) = splitmix64(state);
            state = next;
            *out = value;
        }
        assert_eq!(
            outputs,
            [
                6457827717110365317,
                3203168211198807973,
                9817491932198370423
            ]
        );
    }
}
