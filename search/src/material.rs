//! Material counted with a table of piece values: what a position holds, what a move wins
//! at once, and what captures alone win by force. The alpha-beta engine evaluates with it,
//! and the MCTS resolves captures at its leaves with it
//! ([`SearchConfig::capture_logit`](crate::SearchConfig::capture_logit)).

use ninjazero_rules::{ByRole, Color, Move, MoveKind, MoveList, Position, Role, Square, Variant};

/// Piece values in whole units (centipawns for the alpha-beta engine).
#[derive(Clone, Debug, PartialEq)]
pub struct MaterialTable {
    values: ByRole<i32>,
}

impl MaterialTable {
    /// `values` in Pawns, `scale` units per Pawn (rounded to whole units).
    pub fn new(values: &ByRole<f32>, scale: f32) -> MaterialTable {
        MaterialTable {
            values: values.map(|v| (v * scale).round() as i32),
        }
    }

    /// Every piece worth one unit: material counted by pieces, which the rules alone give.
    pub fn counting() -> MaterialTable {
        MaterialTable {
            values: ByRole::new(|_| 1),
        }
    }

    /// The material balance for the side to move: pieces on the board and in hand (as
    /// Ninja Pawns).
    pub fn balance(&self, position: &Position) -> i32 {
        let material = position.material();
        let side = |color: Color| -> i32 {
            let board: i32 = material[color]
                .iter()
                .map(|(role, &n)| n as i32 * self.values[role])
                .sum();
            board + position.hand(color) as i32 * self.values[Role::NinjaPawn]
        };
        let us = position.turn();
        side(us) - side(!us)
    }

    /// What the side to move wins by force with captures alone (`moves` are the position's
    /// legal moves): a quiescence search in which either side may stop capturing when that
    /// suits it better, `max_plies` captures deep at most. 0 when no capture pays; checks,
    /// mates and quiet threats are not seen.
    pub fn capture_sequence_gain(
        &self,
        position: &Position,
        moves: &MoveList,
        max_plies: u32,
    ) -> i32 {
        self.quiesce(position, moves, 0, i32::MAX, max_plies)
    }

    /// Negamax over captures relative to this node's material, standing pat at 0, within
    /// the window (`alpha`, `beta`).
    fn quiesce(
        &self,
        position: &Position,
        moves: &MoveList,
        alpha: i32,
        beta: i32,
        plies: u32,
    ) -> i32 {
        if plies == 0 || beta <= 0 {
            return 0;
        }
        let mut captures: Vec<(i32, Move)> = moves
            .iter()
            .filter_map(|&m| {
                let gain = self.capture_gain(position, m);
                (gain > 0).then_some((gain, m))
            })
            .collect();
        // Most valuable victim first, cheapest attacker first among equals.
        captures
            .sort_by_key(|&(gain, m)| (std::cmp::Reverse(gain), self.attacker_value(position, m)));
        let (mut best, mut alpha) = (0, alpha.max(0));
        for (gain, m) in captures {
            let mut child = position.clone();
            child.play_unchecked(m);
            let replies = child.legal_moves();
            let score = gain
                - self.quiesce(
                    &child,
                    &replies,
                    gain.saturating_sub(beta),
                    gain - alpha,
                    plies - 1,
                );
            best = best.max(score);
            alpha = alpha.max(score);
            if alpha >= beta {
                break;
            }
        }
        best
    }

    /// A piece's value.
    pub fn value(&self, role: Role) -> i32 {
        self.values[role]
    }

    /// The value of the piece that makes move `m`.
    pub fn attacker_value(&self, position: &Position, m: Move) -> i32 {
        position.piece_at(m.from).map_or(0, |p| self.value(p.role))
    }

    /// The material a move wins at once (captured pieces, promotion), in the table's units,
    /// from the geometry of the move; 0 for a quiet move. Pieces a Loony Rook fires through count
    /// for or against the mover by colour.
    pub fn capture_gain(&self, position: &Position, m: Move) -> i32 {
        let us = position.turn();
        let mut gain = 0;
        match m.kind {
            MoveKind::Drop | MoveKind::Castle { .. } => return 0,
            MoveKind::EnPassant => return self.value(Role::Pawn),
            MoveKind::Promotion(role) => gain += self.value(role) - self.value(Role::Pawn),
            MoveKind::Normal => {}
        }
        if let Some(victim) = position.piece_at(m.to).filter(|p| p.color != us) {
            gain += self.value(victim.role);
        }
        let Some(mover) = position.piece_at(m.from) else {
            return gain;
        };
        if matches!(mover.role, Role::NinjaGuard | Role::NinjaWarrior)
            && position.variant() == Variant::Ninjutsu
            && position.rules().scepter_squares(us).contains(&m.to)
        {
            // A Ninja Guard or Warrior entering the opponent's palace becomes an Insane
            // Ninja Knight (in ninjutsu a side's promotion squares are its scepter squares).
            gain += self.value(Role::InsaneNinjaKnight) - self.value(mover.role);
        }
        let (df, dr) = (
            m.to.file() as i32 - m.from.file() as i32,
            m.to.rank() as i32 - m.from.rank() as i32,
        );
        let is_ninja = matches!(
            mover.role,
            Role::NinjaGuard
                | Role::NinjaWarrior
                | Role::InsaneNinja
                | Role::InsaneNinjaKnight
                | Role::LeapingNinjaGuard
        );
        if is_ninja && matches!(df, -2 | 0 | 2) && matches!(dr, -2 | 0 | 2) && (df, dr) != (0, 0) {
            let middle = square_at(m.from, df / 2, dr / 2);
            if let Some(p) = middle
                .and_then(|s| position.piece_at(s))
                .filter(|p| p.color != us)
            {
                gain += self.value(p.role);
            }
        } else if mover.role == Role::LoonyRook && (df == 0 || dr == 0) {
            let (sf, sr) = (df.signum(), dr.signum());
            for k in 1..df.abs().max(dr.abs()) {
                if let Some(p) =
                    square_at(m.from, sf * k, sr * k).and_then(|s| position.piece_at(s))
                {
                    gain += if p.color == us {
                        -self.value(p.role)
                    } else {
                        self.value(p.role)
                    };
                }
            }
        }
        gain
    }
}

fn square_at(from: Square, df: i32, dr: i32) -> Option<Square> {
    let (file, rank) = (from.file() as i32 + df, from.rank() as i32 + dr);
    if file < 0 || rank < 0 {
        return None;
    }
    Square::new(file as u8, rank as u8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AlphaBetaConfig;

    /// The geometric capture estimate equals the material a move really wins, in random
    /// games of every variant.
    /// Pieces won by captures alone, every piece counted as 1, White to move.
    fn sequence_gain(fen: &str) -> i32 {
        let position = Position::from_fen(Variant::Chess, fen).unwrap();
        let moves = position.legal_moves();
        MaterialTable::counting().capture_sequence_gain(&position, &moves, 8)
    }

    #[test]
    fn captures_alone_win_what_the_exchanges_leave() {
        // A hanging pawn is won; a defended one is not (the queen would be taken back).
        assert_eq!(sequence_gain("4k3/8/8/3p4/8/8/8/3QK3 w - - 0 1"), 1);
        assert_eq!(sequence_gain("4k3/8/4p3/3p4/8/8/8/3QK3 w - - 0 1"), 0);
        // Two attackers against one defender: Rxd5 exd5 Qxd5 (or Black stops at a pawn
        // down).
        assert_eq!(sequence_gain("4k3/8/4p3/3p4/8/8/3R4/3QK3 w - - 0 1"), 1);
        // Two pieces hang, but only one can be taken before the other side moves.
        assert_eq!(sequence_gain("4k3/8/8/3p4/p7/8/8/3QK3 w - - 0 1"), 1);
        // Nothing to capture, or a capture that only loses.
        assert_eq!(sequence_gain("4k3/8/8/8/8/8/8/3QK3 w - - 0 1"), 0);
        // No ply to look ahead: nothing is resolved.
        let position =
            Position::from_fen(Variant::Chess, "4k3/8/8/3p4/8/8/8/3QK3 w - - 0 1").unwrap();
        let moves = position.legal_moves();
        assert_eq!(
            MaterialTable::counting().capture_sequence_gain(&position, &moves, 0),
            0
        );
    }

    #[test]
    fn capture_gain_matches_the_material_change() {
        let table = MaterialTable::new(&AlphaBetaConfig::default().piece_values, 100.0);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut captures = 0;
        for variant in Variant::ALL {
            for _ in 0..20 {
                let mut pos = Position::start(variant);
                for _ in 0..120 {
                    let moves = pos.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    for &m in &moves {
                        let mut child = pos.clone();
                        child.play_unchecked(m);
                        let actual = -table.balance(&child) - table.balance(&pos);
                        assert_eq!(
                            table.capture_gain(&pos, m),
                            actual,
                            "{variant} {} {m}",
                            pos.to_fen()
                        );
                        captures += usize::from(actual != 0);
                    }
                    pos.play_unchecked(moves[next() as usize % moves.len()]);
                }
            }
        }
        assert!(captures > 1000, "only {captures} captures seen");
    }
}
