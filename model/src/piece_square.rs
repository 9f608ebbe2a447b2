//! A learnt piece-square evaluation: a linear model of the game result for the side to
//! move, the smallest relative of NNUE, fast enough for alpha-beta at full speed.
//!
//! The log-odds that the side to move wins is a sum of weights over a position's
//! [features](PieceSquareLayout::for_each_feature): for every piece a value by its role and
//! a bonus by its role and square (as its owner sees the board, so one table serves both
//! colours and the model is colour-symmetric), for every piece but a King a weight by its
//! role and its distance from either King (attackers and defenders: king safety), the
//! Ninja Pawns in hand, a tempo for having the move, and the mobility difference the
//! alpha-beta engine measures. The trainer fits the weights to the games' results
//! (`ninjazero fit-eval`); `alphabeta:PATH.eval.json` searches with them. Everything in
//! it comes from the games: no human piece value.
//!
//! ```
//! use ninjazero_model::{PieceSquareEval, PieceSquareLayout};
//! use ninjazero_rules::{Position, Role, Variant};
//!
//! let layout = PieceSquareLayout::new(Variant::Chess);
//! let mut weights = vec![0.0; layout.len()];
//! weights[layout.value_index(Role::Queen)] = 2.0; // a Queen up: e^2 to 1 to win
//! let eval = PieceSquareEval::new(Variant::Chess, weights, Default::default()).unwrap();
//! let queen_odds = Position::from_fen(Variant::Chess, "4k3/8/8/8/8/8/8/3QK3 w - - 0 1").unwrap();
//! assert_eq!(eval.log_odds(&queen_odds, 0), 2.0);
//! // The same position, Black to move: Black is a Queen down.
//! let flipped = Position::from_fen(Variant::Chess, "4k3/8/8/8/8/8/8/3QK3 b - - 0 1").unwrap();
//! assert_eq!(eval.log_odds(&flipped, 0), -2.0);
//! ```

use crate::encoding::BoardShape;
use ninjazero_data::atomic;
use ninjazero_rules::{with_article, ByRole, Color, Position, Role, Square, Variant};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

const FORMAT: &str = "ninjazero-piece-square-eval";
/// Bump when the meaning of a weight changes; files record it. Version 1 had no king
/// zones; its files read as version 2 files with every king-zone weight 0 (the same
/// evaluation).
pub const PIECE_SQUARE_VERSION: u32 = 2;

/// How far from a King a piece counts as near it (Chebyshev distance, in squares).
pub const KING_ZONE_RADIUS: u8 = 3;
/// King-zone weights per role: each distance from the enemy King, then from its own.
const KING_ZONE_WEIGHTS: usize = 2 * KING_ZONE_RADIUS as usize;

/// The largest magnitude of a piece value, the hand weight and the tempo, in log-odds per
/// feature. Real fits stay below 5 (a Queen of insane-ninja, 4.63, the largest seen); the
/// default fit (300 epochs per stage at Adam's rate 0.05, cosine-decayed) moves a weight at
/// most about 7.5 per stage, 15 over the two stages that fit the values.
pub const MAX_VALUE_WEIGHT: f32 = 16.0;
/// The largest magnitude of a square bonus or a king-zone weight: ten times the largest real
/// one (0.79, from a fit with a hundredth of the default `square_l2`; the default keeps
/// them below 0.1).
pub const MAX_POSITIONAL_WEIGHT: f32 = 4.0;
/// The largest magnitude of the mobility weight, in log-odds per legal move: fifteen times
/// the largest real one (0.017). Small because the mobility difference runs to
/// [`MAX_MOVES`](ninjazero_rules::MAX_MOVES).
pub const MAX_MOBILITY_WEIGHT: f32 = 0.25;
/// The largest log-odds any position can get with every weight within its bound, so that
/// alpha-beta's score (225 centipawns per log-odds) stays far from its mate scores
/// (1,000,000 centipawns) and from `i32` overflow. The largest army is insane-ninja-drops',
/// 26 pieces a side (Ninja Pawns in hand included), so a position has at most 52 pieces:
/// each adds a piece value or a unit of hand, and the tempo one more, 53 × 16 = 848; each
/// on the board a square bonus and each but the Kings two king-zone weights at most,
/// (52 + 2 × 50) × 4 = 608; a mobility difference of at most 1024 moves, 1024 × 0.25 = 256.
/// In all 1712 log-odds, 385,200 centipawns.
pub const MAX_LOG_ODDS: f32 = 1712.0;

fn chebyshev(a: Square, b: Square) -> u8 {
    a.file().abs_diff(b.file()).max(a.rank().abs_diff(b.rank()))
}

/// Where each weight of a variant's piece-square evaluation sits in one flat vector, and
/// the features of a position over it: the one definition the trainer fits and the engine
/// evaluates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PieceSquareLayout {
    shape: BoardShape,
}

impl PieceSquareLayout {
    pub fn new(variant: Variant) -> PieceSquareLayout {
        PieceSquareLayout {
            shape: BoardShape::of(variant),
        }
    }

    pub fn shape(&self) -> &BoardShape {
        &self.shape
    }

    fn squares(&self) -> usize {
        Role::COUNT * self.shape.cells()
    }

    /// The square bonuses and the king-zone weights: the detail the trainer regularises.
    fn details(&self) -> usize {
        self.squares() + (Role::COUNT - 1) * KING_ZONE_WEIGHTS
    }

    /// The weights in all: square bonuses, king zones, piece values, hand, tempo, mobility.
    pub fn len(&self) -> usize {
        self.details() + Role::COUNT + 3
    }

    /// Never empty; here for the `len` convention.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The bonus of `role` on plane cell `cell` (rows from its owner's back edge).
    pub fn square_index(&self, role: Role, cell: usize) -> usize {
        role.index() * self.shape.cells() + cell
    }

    /// The weight of a piece of `role` (not the King) at Chebyshev distance `distance` (1
    /// to [`KING_ZONE_RADIUS`]) from the enemy King (`near_own: false`) or from its own
    /// (`true`).
    pub fn king_zone_index(&self, role: Role, near_own: bool, distance: u8) -> usize {
        debug_assert!(role != Role::King && (1..=KING_ZONE_RADIUS).contains(&distance));
        let side = if near_own {
            KING_ZONE_RADIUS as usize
        } else {
            0
        };
        // The King is role 0 and has no king-zone weights.
        self.squares() + (role.index() - 1) * KING_ZONE_WEIGHTS + side + distance as usize - 1
    }

    /// The square bonuses of `role`, one per plane cell.
    fn square_range(&self, role: Role) -> Range<usize> {
        let start = self.square_index(role, 0);
        start..start + self.shape.cells()
    }

    /// The king-zone weights of `role` in file order (none for the King).
    fn king_zone_range(&self, role: Role) -> Option<Range<usize>> {
        let start = (role != Role::King).then(|| self.king_zone_index(role, false, 1))?;
        Some(start..start + KING_ZONE_WEIGHTS)
    }

    /// Whether weight `index` is a square bonus or a king-zone weight: where a piece stands
    /// rather than what it is (the trainer regularises those harder: a square seldom seen
    /// should fall back to the piece's value).
    pub fn is_positional(&self, index: usize) -> bool {
        index < self.details()
    }

    pub fn value_index(&self, role: Role) -> usize {
        self.details() + role.index()
    }

    pub fn hand_index(&self) -> usize {
        self.details() + Role::COUNT
    }

    pub fn tempo_index(&self) -> usize {
        self.hand_index() + 1
    }

    pub fn mobility_index(&self) -> usize {
        self.hand_index() + 2
    }

    /// The largest magnitude weight `index` may have: [`MAX_POSITIONAL_WEIGHT`],
    /// [`MAX_MOBILITY_WEIGHT`] or [`MAX_VALUE_WEIGHT`] (see [`MAX_LOG_ODDS`]).
    pub fn bound(&self, index: usize) -> f32 {
        if self.is_positional(index) {
            MAX_POSITIONAL_WEIGHT
        } else if index == self.mobility_index() {
            MAX_MOBILITY_WEIGHT
        } else {
            MAX_VALUE_WEIGHT
        }
    }

    /// What weight `index` is, in the file's terms ("Queen value", "Rook square 12"), for
    /// error messages.
    fn weight_name(&self, index: usize) -> String {
        let role = |i: usize| Role::ALL.get(i).map_or("?", |r| r.name());
        let cells = self.shape.cells();
        if index < self.squares() {
            format!("{} square {}", role(index / cells), index % cells)
        } else if index < self.details() {
            let zone = index - self.squares();
            // The King (role 0) has no king-zone weights.
            let name = role(zone / KING_ZONE_WEIGHTS + 1);
            format!("{name} king zone {}", zone % KING_ZONE_WEIGHTS)
        } else if index < self.hand_index() {
            format!("{} value", role(index - self.details()))
        } else if index == self.hand_index() {
            "hand".to_string()
        } else if index == self.tempo_index() {
            "tempo".to_string()
        } else {
            "mobility".to_string()
        }
    }

    /// Calls `feature(index, x)` for every non-zero feature of `position` from the side to
    /// move's view: +1 for each of its pieces (value, square, and king zones within
    /// [`KING_ZONE_RADIUS`] of either King), −1 for each of the opponent's, the hands'
    /// difference, 1 for the tempo and `mobility` (our legal moves less the opponent's one
    /// ply earlier). An index may come more than once.
    #[inline]
    pub fn for_each_feature(
        &self,
        position: &Position,
        mobility: i32,
        mut feature: impl FnMut(usize, f32),
    ) {
        let us = position.turn();
        let kings = [position.king(Color::White), position.king(Color::Black)];
        for (square, piece) in position.pieces() {
            let (sign, owner) = if piece.color == us {
                (1.0, us)
            } else {
                (-1.0, !us)
            };
            let cell = self.shape.view_cell(square, owner);
            feature(self.square_index(piece.role, cell), sign);
            feature(self.value_index(piece.role), sign);
            if piece.role != Role::King {
                for near_own in [false, true] {
                    let king = kings[if near_own { owner } else { !owner }.index()];
                    let distance = chebyshev(square, king);
                    if distance <= KING_ZONE_RADIUS {
                        feature(self.king_zone_index(piece.role, near_own, distance), sign);
                    }
                }
            }
        }
        let hand = f32::from(position.hand(us)) - f32::from(position.hand(!us));
        if hand != 0.0 {
            feature(self.hand_index(), hand);
        }
        feature(self.tempo_index(), 1.0);
        if mobility != 0 {
            feature(self.mobility_index(), mobility as f32);
        }
    }
}

/// How a piece-square evaluation was fitted: the data and the fit's quality, each loss the
/// mean cross-entropy of the result (nats) on games held out of the fit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FitSummary {
    pub games: usize,
    pub positions: usize,
    pub validation_positions: usize,
    /// Tempo alone (how often the side to move wins): the floor to beat.
    pub validation_loss_tempo: f64,
    /// Piece values, hand, tempo and mobility, without square bonuses or king zones.
    pub validation_loss_material: f64,
    /// The whole model.
    pub validation_loss: f64,
    pub epochs: usize,
    /// The L2 penalty of the square bonuses and king zones that was kept.
    pub square_l2: f64,
    /// Each penalty tried and its held-out loss, when the fit chose among several (the
    /// kept one's is [`FitSummary::validation_loss`]; chosen on the held-out games, so that
    /// loss is a little optimistic).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub square_l2_tried: Vec<[f64; 2]>,
    /// The share of the search value in the fitted positions' targets (0, the results alone,
    /// in files written before it was recorded).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub value_target_mix: f64,
    /// The dataset directories, newest last.
    pub data: Vec<String>,
}

fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

/// A fitted piece-square evaluation for one variant.
#[derive(Clone, Debug, PartialEq)]
pub struct PieceSquareEval {
    variant: Variant,
    layout: PieceSquareLayout,
    weights: Vec<f32>,
    pub fit: FitSummary,
}

/// Why an evaluation file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum PieceSquareError {
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path}: not a NinjaZero piece-square evaluation: {reason}")]
    Format { path: PathBuf, reason: String },
    #[error(
        "{path} is {} evaluation, but {expected} was asked for",
        with_article(found)
    )]
    WrongVariant {
        path: PathBuf,
        found: String,
        expected: Variant,
    },
    #[error("{0}")]
    Invalid(String),
}

/// The file: weights by name, so that it can be read (and checked) by a person.
#[derive(Serialize, Deserialize)]
struct EvalFile {
    format: String,
    version: u32,
    variant: String,
    board_height: usize,
    board_width: usize,
    /// Log-odds per piece by role name (side to move's pieces count +, the opponent's −).
    values: BTreeMap<String, f32>,
    /// Per role name, the bonus of each plane cell, rows from the owner's back edge.
    squares: BTreeMap<String, Vec<f32>>,
    /// Per role name (not the King), the weight of a piece at distance 1, 2, … from the
    /// enemy King, then at distance 1, 2, … from its own. Absent in version 1 files.
    #[serde(default)]
    king_zone: BTreeMap<String, Vec<f32>>,
    hand: f32,
    tempo: f32,
    mobility: f32,
    fit: FitSummary,
}

impl PieceSquareEval {
    /// The evaluation with `weights` in [`PieceSquareLayout`] order; an error unless there
    /// are as many as the layout has, each finite and within its
    /// [bound](PieceSquareLayout::bound) (beyond, alpha-beta's scores could reach its mate
    /// scores).
    pub fn new(
        variant: Variant,
        weights: Vec<f32>,
        fit: FitSummary,
    ) -> Result<PieceSquareEval, PieceSquareError> {
        let layout = PieceSquareLayout::new(variant);
        if weights.len() != layout.len() {
            return Err(PieceSquareError::Invalid(format!(
                "{} weights for {variant}'s piece-square evaluation, which has {}",
                weights.len(),
                layout.len()
            )));
        }
        if let Some(i) = weights.iter().position(|w| !w.is_finite()) {
            return Err(PieceSquareError::Invalid(format!(
                "weight {i} is not finite ({})",
                weights[i]
            )));
        }
        if let Some(i) = (0..weights.len()).find(|&i| weights[i].abs() > layout.bound(i)) {
            let weight = weights[i];
            // 1e30 rather than thirty-one digits.
            let shown = if weight.abs() >= 1e6 {
                format!("{weight:e}")
            } else {
                weight.to_string()
            };
            return Err(PieceSquareError::Invalid(format!(
                "weight {i} ({}) is {shown}, beyond ±{}",
                layout.weight_name(i),
                layout.bound(i)
            )));
        }
        Ok(PieceSquareEval {
            variant,
            layout,
            weights,
            fit,
        })
    }

    pub fn variant(&self) -> Variant {
        self.variant
    }

    pub fn layout(&self) -> &PieceSquareLayout {
        &self.layout
    }

    pub fn weights(&self) -> &[f32] {
        &self.weights
    }

    /// The log-odds that the side to move wins; `mobility` is its legal moves less the
    /// opponent's one ply earlier.
    #[inline]
    pub fn log_odds(&self, position: &Position, mobility: i32) -> f32 {
        let mut sum = 0.0;
        self.layout
            .for_each_feature(position, mobility, |i, x| sum += self.weights[i] * x);
        sum
    }

    /// Each role's value in log-odds: its value weight plus its mean square bonus over the
    /// board's squares (where a piece stands on average counts as much as the piece).
    pub fn piece_values(&self) -> ByRole<f32> {
        let rules = self.variant.rules();
        let cells: Vec<usize> = rules
            .squares()
            .iter()
            .map(|&s| self.layout.shape.view_cell(s, Color::White))
            .collect();
        ByRole::new(|role| {
            let bonus: f32 = cells
                .iter()
                .map(|&c| self.weights[self.layout.square_index(role, c)])
                .sum();
            self.weights[self.layout.value_index(role)] + bonus / cells.len().max(1) as f32
        })
    }

    pub fn hand_value(&self) -> f32 {
        self.weights[self.layout.hand_index()]
    }

    pub fn tempo(&self) -> f32 {
        self.weights[self.layout.tempo_index()]
    }

    pub fn mobility(&self) -> f32 {
        self.weights[self.layout.mobility_index()]
    }

    /// Writes the evaluation as JSON (atomically: a reader never sees half a file).
    pub fn save(&self, path: &Path) -> Result<(), PieceSquareError> {
        let by_role = |f: &dyn Fn(Role) -> f32| -> BTreeMap<String, f32> {
            Role::ALL
                .iter()
                .map(|&r| (r.name().to_string(), f(r)))
                .collect()
        };
        // A role's block of weights by its name; roles without one are left out.
        let blocks = |range: &dyn Fn(Role) -> Option<Range<usize>>| -> BTreeMap<String, Vec<f32>> {
            Role::ALL
                .iter()
                .filter_map(|&r| Some((r.name().to_string(), self.weights[range(r)?].to_vec())))
                .collect()
        };
        let file = EvalFile {
            format: FORMAT.into(),
            version: PIECE_SQUARE_VERSION,
            variant: self.variant.id().into(),
            board_height: self.layout.shape.height,
            board_width: self.layout.shape.width,
            values: by_role(&|r| self.weights[self.layout.value_index(r)]),
            squares: blocks(&|r| Some(self.layout.square_range(r))),
            king_zone: blocks(&|r| self.layout.king_zone_range(r)),
            hand: self.hand_value(),
            tempo: self.tempo(),
            mobility: self.mobility(),
            fit: self.fit.clone(),
        };
        let json = serde_json::to_string_pretty(&file).expect("an evaluation serializes");
        atomic::write_atomically(path, (json + "\n").as_bytes()).map_err(|error| {
            PieceSquareError::Io {
                path: path.to_path_buf(),
                error,
            }
        })
    }

    /// Reads an evaluation file, refusing one of another variant than `expected` (when
    /// given), of another format version, or with missing or malformed weights.
    pub fn load(
        path: &Path,
        expected: Option<Variant>,
    ) -> Result<PieceSquareEval, PieceSquareError> {
        let format = |reason: String| PieceSquareError::Format {
            path: path.to_path_buf(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|error| PieceSquareError::Io {
            path: path.to_path_buf(),
            error,
        })?;
        let file: EvalFile = serde_json::from_str(&text).map_err(|e| format(e.to_string()))?;
        if file.format != FORMAT {
            return Err(format(format!("format is '{}'", file.format)));
        }
        if !(1..=PIECE_SQUARE_VERSION).contains(&file.version) {
            return Err(format(format!(
                "version {}; this build reads versions 1 to {PIECE_SQUARE_VERSION}",
                file.version
            )));
        }
        let variant: Variant = file
            .variant
            .parse()
            .map_err(|_| format(format!("unknown variant '{}'", file.variant)))?;
        if let Some(expected) = expected.filter(|&v| v != variant) {
            return Err(PieceSquareError::WrongVariant {
                path: path.to_path_buf(),
                found: file.variant,
                expected,
            });
        }
        let layout = PieceSquareLayout::new(variant);
        let shape = layout.shape;
        if (file.board_height, file.board_width) != (shape.height, shape.width) {
            return Err(format(format!(
                "board {}x{} where {variant} has {}x{}",
                file.board_height, file.board_width, shape.height, shape.width
            )));
        }
        let mut weights = vec![0.0; layout.len()];
        for role in Role::ALL {
            let name = role.name();
            let value = file
                .values
                .get(name)
                .ok_or_else(|| format(format!("no value for the {name}")))?;
            weights[layout.value_index(role)] = *value;
            let squares = file
                .squares
                .get(name)
                .ok_or_else(|| format(format!("no squares for the {name}")))?;
            if squares.len() != shape.cells() {
                return Err(format(format!(
                    "{} squares for the {name}, the board has {} cells",
                    squares.len(),
                    shape.cells()
                )));
            }
            weights[layout.square_range(role)].copy_from_slice(squares);
            let Some(zone_range) = layout.king_zone_range(role).filter(|_| file.version >= 2)
            else {
                continue;
            };
            let zone = file
                .king_zone
                .get(name)
                .ok_or_else(|| format(format!("no king-zone weights for the {name}")))?;
            if zone.len() != zone_range.len() {
                return Err(format(format!(
                    "{} king-zone weights for the {name}, where there are {}",
                    zone.len(),
                    zone_range.len()
                )));
            }
            weights[zone_range].copy_from_slice(zone);
        }
        weights[layout.hand_index()] = file.hand;
        weights[layout.tempo_index()] = file.tempo;
        weights[layout.mobility_index()] = file.mobility;
        PieceSquareEval::new(variant, weights, file.fit).map_err(|e| format(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ninjazero_testkit::temp_dir;

    /// An evaluation whose every weight differs, so that a misplaced one shows.
    fn distinct(variant: Variant) -> PieceSquareEval {
        let layout = PieceSquareLayout::new(variant);
        // Exact binary fractions within ±0.125, inside every weight's bound.
        let weights = (0..layout.len())
            .map(|i| i as f32 / 8192.0 - 0.125)
            .collect();
        PieceSquareEval::new(variant, weights, FitSummary::default()).unwrap()
    }

    #[test]
    fn a_saved_evaluation_reads_back_weight_for_weight() {
        let tmp = temp_dir();
        let path = tmp.path().join("e.eval.json");
        for variant in Variant::ALL {
            let eval = distinct(variant);
            eval.save(&path).unwrap();
            assert_eq!(PieceSquareEval::load(&path, Some(variant)).unwrap(), eval);
        }
    }

    #[test]
    fn the_evaluation_is_the_same_for_either_colour() {
        // The start position is symmetric: both sides to move see the same features, so
        // the evaluation is the tempo alone.
        let eval = distinct(Variant::InsaneNinja);
        for fen in [
            Position::start(Variant::InsaneNinja).to_fen(),
            Position::start(Variant::InsaneNinja)
                .to_fen()
                .replacen(" w ", " b ", 1),
        ] {
            let position = Position::from_fen(Variant::InsaneNinja, &fen).unwrap();
            assert!(
                (eval.log_odds(&position, 0) - eval.tempo()).abs() < 1e-5,
                "{fen}"
            );
            let with_mobility = eval.log_odds(&position, 3) - eval.log_odds(&position, 0);
            assert!((with_mobility - 3.0 * eval.mobility()).abs() < 1e-5);
        }
    }

    #[test]
    fn bad_files_are_refused_with_the_reason() {
        let tmp = temp_dir();
        let path = tmp.path().join("e.eval.json");
        distinct(Variant::Chess).save(&path).unwrap();
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let refusal = |edit: &dyn Fn(&mut serde_json::Value)| {
            let mut file = saved.clone();
            edit(&mut file);
            std::fs::write(&path, file.to_string()).unwrap();
            PieceSquareEval::load(&path, Some(Variant::Chess))
                .unwrap_err()
                .to_string()
        };
        type Edit<'a> = &'a dyn Fn(&mut serde_json::Value);
        let cases: [(Edit, &str); 9] = [
            (&|f| f["format"] = "other".into(), "format is 'other'"),
            (
                &|f| f["version"] = 99.into(),
                "version 99; this build reads versions 1 to 2",
            ),
            (&|f| f["variant"] = "go".into(), "unknown variant 'go'"),
            (
                &|f| f["variant"] = "insane-ninja".into(),
                "is an insane-ninja evaluation, but chess was asked for",
            ),
            (
                &|f| {
                    f["values"].as_object_mut().unwrap().remove("Queen");
                },
                "no value for the Queen",
            ),
            (
                &|f| {
                    f["squares"]["Rook"].as_array_mut().unwrap().pop();
                },
                "63 squares for the Rook, the board has 64 cells",
            ),
            (
                &|f| {
                    f["king_zone"].as_object_mut().unwrap().remove("Queen");
                },
                "no king-zone weights for the Queen",
            ),
            (
                &|f| {
                    f["king_zone"]["Rook"].as_array_mut().unwrap().pop();
                },
                "5 king-zone weights for the Rook, where there are 6",
            ),
            (
                &|f| f["values"]["Queen"] = 1e30.into(),
                "(Queen value) is 1e30, beyond ±16",
            ),
        ];
        for (edit, message) in cases {
            let error = refusal(edit);
            assert!(error.contains(message), "{error}");
            assert!(error.starts_with(&path.display().to_string()), "{error}");
        }
        std::fs::write(&path, "{\"format\": ").unwrap();
        let error = PieceSquareEval::load(&path, None).unwrap_err().to_string();
        assert!(
            error.contains("not a NinjaZero piece-square evaluation"),
            "{error}"
        );
        let error = PieceSquareEval::load(&tmp.path().join("none.eval.json"), None)
            .unwrap_err()
            .to_string();
        assert!(error.contains("none.eval.json"), "{error}");
    }

    #[test]
    fn a_piece_near_a_king_counts_by_its_distance_from_either_king() {
        let layout = PieceSquareLayout::new(Variant::Chess);
        let mut weights = vec![0.0; layout.len()];
        weights[layout.king_zone_index(Role::Knight, false, 1)] = 0.5;
        weights[layout.king_zone_index(Role::Rook, true, 2)] = 0.25;
        weights[layout.king_zone_index(Role::Rook, false, 3)] = 4.0;
        let eval = PieceSquareEval::new(Variant::Chess, weights, FitSummary::default()).unwrap();
        let odds = |fen: &str| eval.log_odds(&Position::from_fen(Variant::Chess, fen).unwrap(), 0);
        // A White Knight beside the Black King counts 0.5, a White Rook two files from
        // its own King 0.25 more, pieces far from both Kings nothing (the Rook's weight
        // near the enemy King never applies: a swapped index would show).
        assert_eq!(odds("4k3/3N4/8/8/8/8/8/R3K3 w - - 0 1"), 0.5);
        assert_eq!(odds("8/3N4/8/8/7k/8/8/R3K3 w - - 0 1"), 0.0);
        assert_eq!(odds("4k3/3N4/8/8/8/8/8/2R1K3 w - - 0 1"), 0.75);
        // The same for Black to move, and for the colours swapped.
        assert_eq!(odds("4k3/3N4/8/8/8/8/8/2R1K3 b - - 0 1"), -0.75);
        assert_eq!(odds("2r1k3/8/8/8/8/8/3n4/4K3 b - - 0 1"), 0.75);
    }

    #[test]
    fn a_version_1_file_reads_with_no_king_zones() {
        let tmp = temp_dir();
        let path = tmp.path().join("e.eval.json");
        let eval = distinct(Variant::Asylum);
        eval.save(&path).unwrap();
        let mut file: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        file["version"] = 1.into();
        file.as_object_mut().unwrap().remove("king_zone");
        std::fs::write(&path, file.to_string()).unwrap();
        let old = PieceSquareEval::load(&path, Some(Variant::Asylum)).unwrap();
        for (i, (&read, &saved)) in old.weights().iter().zip(eval.weights()).enumerate() {
            let in_zone = i >= eval.layout().king_zone_index(Role::Queen, false, 1)
                && i < eval.layout().value_index(Role::King);
            assert_eq!(read, if in_zone { 0.0 } else { saved }, "weight {i}");
        }
    }

    #[test]
    fn weights_must_fit_the_layout_and_be_finite() {
        let layout = PieceSquareLayout::new(Variant::Chess);
        let error = PieceSquareEval::new(Variant::Chess, vec![0.0; 3], FitSummary::default())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains(&format!(
                "3 weights for chess's piece-square evaluation, which has {}",
                layout.len()
            )),
            "{error}"
        );
        let mut weights = vec![0.0; layout.len()];
        weights[layout.tempo_index()] = f32::NAN;
        let error = PieceSquareEval::new(Variant::Chess, weights, FitSummary::default())
            .unwrap_err()
            .to_string();
        assert!(error.contains("is not finite"), "{error}");
    }

    /// Every weight is bounded (by kind: see [`MAX_LOG_ODDS`]), and the one beyond is named
    /// as the file names it.
    #[test]
    fn weights_beyond_their_bound_are_refused_naming_them() {
        let layout = PieceSquareLayout::new(Variant::Chess);
        let refusal = |index: usize, weight: f32| {
            let mut weights = vec![0.0; layout.len()];
            weights[index] = weight;
            PieceSquareEval::new(Variant::Chess, weights, FitSummary::default())
                .unwrap_err()
                .to_string()
        };
        let queen = layout.value_index(Role::Queen);
        let rook = layout.square_index(Role::Rook, 3);
        let knight = layout.king_zone_index(Role::Knight, true, 2);
        let cases = [
            (
                queen,
                1e30,
                format!("weight {queen} (Queen value) is 1e30, beyond ±16"),
            ),
            (
                queen,
                -17.0,
                format!("weight {queen} (Queen value) is -17, beyond ±16"),
            ),
            (
                rook,
                5000.0,
                format!("weight {rook} (Rook square 3) is 5000, beyond ±4"),
            ),
            (
                knight,
                4.5,
                format!("weight {knight} (Knight king zone 4) is 4.5, beyond ±4"),
            ),
            (
                layout.hand_index(),
                20.0,
                format!("weight {} (hand) is 20, beyond ±16", layout.hand_index()),
            ),
            (
                layout.tempo_index(),
                -20.0,
                format!("weight {} (tempo) is -20, beyond ±16", layout.tempo_index()),
            ),
            (
                layout.mobility_index(),
                0.5,
                format!(
                    "weight {} (mobility) is 0.5, beyond ±0.25",
                    layout.mobility_index()
                ),
            ),
        ];
        for (index, weight, message) in cases {
            assert_eq!(refusal(index, weight), message);
        }
        // At the bounds is fine.
        let mut weights: Vec<f32> = (0..layout.len()).map(|i| layout.bound(i)).collect();
        weights[queen] = -MAX_VALUE_WEIGHT;
        PieceSquareEval::new(Variant::Chess, weights, FitSummary::default()).unwrap();
    }

    /// [`MAX_LOG_ODDS`]'s arithmetic holds for every variant's army: no position can score
    /// more with every weight at its bound.
    #[test]
    fn no_position_can_exceed_max_log_odds() {
        for variant in Variant::ALL {
            let start = Position::start(variant);
            // Both armies, hands included: captures only ever remove pieces, promotions and
            // drops only change their role or place.
            let pieces = start.pieces().count()
                + usize::from(start.hand(Color::White))
                + usize::from(start.hand(Color::Black));
            let values = (pieces + 1) as f32 * MAX_VALUE_WEIGHT;
            let positional = (pieces + 2 * (pieces - 2)) as f32 * MAX_POSITIONAL_WEIGHT;
            let mobility = ninjazero_rules::MAX_MOVES as f32 * MAX_MOBILITY_WEIGHT;
            let worst = values + positional + mobility;
            assert!(worst <= MAX_LOG_ODDS, "{variant}: {worst}");
            if variant == Variant::InsaneNinjaDrops {
                assert_eq!(worst, MAX_LOG_ODDS);
            }
        }
    }
}
