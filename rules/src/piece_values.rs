//! Every hand-set piece value, in Pawns. They are opinions, not measurements (measuring the
//! values is `ninjazero values`' job), and there are two sets, distinct on purpose:
//!
//! - [`rough`]: what a search without a model needs for a sense of material. The model-free
//!   evaluator's material value, the arena's material adjudication and the alpha-beta
//!   engine's default values all use it.
//! - [`reference()`]: published values shown beside the measured ones in the values report,
//!   used by no search and no measuring method.
//!
//! ```
//! use ninjazero_rules::{piece_values, ByRole, Role, Variant};
//!
//! let rough = ByRole::new(piece_values::rough);
//! assert_eq!(rough[Role::Queen], 9.0);
//! assert_eq!(piece_values::reference(Variant::Chess, Role::Queen), Some("9.5 (AlphaZero)"));
//! ```

use crate::{Role, Variant};

/// The rough value of `role` in Pawns: the orthodox 1/3/3/5/9 and, for the new pieces,
/// guesses from how they move. The King's is 0 (it is never traded); a Ninja Pawn is worth
/// the same on the board and in hand.
pub const fn rough(role: Role) -> f32 {
    match role {
        Role::King => 0.0,
        Role::Queen => 9.0,
        Role::Rook => 5.0,
        Role::Bishop => 3.0,
        Role::Knight => 3.0,
        Role::Pawn => 1.0,
        // One step in any direction.
        Role::QueenGuard => 3.0,
        // Diagonal step or ninja leap.
        Role::NinjaGuard => 3.0,
        // Orthogonal step or ninja leap.
        Role::NinjaWarrior => 3.0,
        // Step or ninja leap in all 8 directions.
        Role::InsaneNinja => 5.0,
        // Insane Ninja plus Knight.
        Role::InsaneNinjaKnight => 8.0,
        // Ninja Guard plus Camel.
        Role::LeapingNinjaGuard => 3.5,
        // Bishop plus Camel.
        Role::MadLeapingBishop => 6.0,
        Role::LoonyRook => 7.0,
        Role::NinjaPawn => 1.0,
    }
}

/// A published value of `role` in `variant` to compare a measured one with: AlphaZero's
/// chess values (Tomašev et al. 2020) and the inventor's guesses from the rules pages.
/// None for pieces without one.
pub fn reference(variant: Variant, role: Role) -> Option<&'static str> {
    if variant == Variant::Chess {
        return Some(match role {
            Role::Pawn => "1 (AlphaZero)",
            Role::Knight => "3.05 (AlphaZero)",
            Role::Bishop => "3.33 (AlphaZero)",
            Role::Rook => "5.63 (AlphaZero)",
            Role::Queen => "9.5 (AlphaZero)",
            _ => return None,
        });
    }
    match role {
        Role::InsaneNinja => Some("slightly more than a Rook (inventor's guess)"),
        Role::LeapingNinjaGuard => {
            Some("a little less to a little more than a Bishop (inventor's guess)")
        }
        Role::NinjaGuard => Some("close to a Bishop or a Knight (inventor's guess)"),
        _ => None,
    }
}
