//! Piece values in Pawns, measured three ways, each with a bootstrap 95 % interval:
//!
//! - [`regression`]: the game result against the material difference over self-play
//!   positions (Tomašev et al. 2020, "Assessing Game Balance with AlphaZero");
//! - [`matches`](mod@matches): the searcher against itself with a piece taken off one side, scored
//!   against Pawn odds (H. G. Muller's handicap matches);
//! - [`probe`]: how much the network's expected score drops when a piece is taken off.
//!
//! All three turn an effect on the log-odds of winning into Pawns by dividing by the
//! Pawn's effect, so they can be compared on one scale.
//!
//! A whole study (what `ninjazero values` runs) is [`study::run`]: the methods over one
//! dataset, the handicap matches in [`rounds`] (self-consistent rounds, results kept for a
//! rerun), and the report ([`report`]: Markdown, CSV, chart).

pub mod matches;
pub mod probe;
pub mod regression;
pub mod report;
pub mod rounds;
pub mod study;

pub use study::{Study, StudyReport, ValuesError};

use ninjazero_rules::{piece_values, Color, Position, Role, Variant};

/// A kind of material that gets a value: a piece on the board, or a Pawn in hand
/// (`insane-ninja-drops`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PieceKind {
    Board(Role),
    InHand,
}

impl PieceKind {
    pub fn name(self) -> String {
        match self {
            PieceKind::Board(role) => role.name().to_string(),
            PieceKind::InHand => "Ninja Pawn in hand".to_string(),
        }
    }

    /// The kinds that can stand on `variant`'s board — its starting armies', the pieces a
    /// Pawn promotes to (ninjutsu's Insane Ninja Knight comes no other way) and the Ninja
    /// Pawns dropped from the hand — the Pawn (the unit) first, then in the order of
    /// [`Role::ALL`], then the hand. Kings have no value.
    pub fn of_variant(variant: Variant) -> Vec<PieceKind> {
        let start = Position::start(variant);
        let drops = start.hand(Color::White) > 0;
        let reachable = |role: Role| {
            in_starting_army(variant, role)
                || variant.rules().promotions().contains(&role)
                || (drops && role == Role::NinjaPawn)
        };
        let mut kinds: Vec<PieceKind> = Role::ALL
            .iter()
            .filter(|&&role| role != Role::King && reachable(role))
            .map(|&role| PieceKind::Board(role))
            .collect();
        kinds.sort_by_key(|k| *k != PieceKind::Board(Role::Pawn));
        if drops {
            kinds.push(PieceKind::InHand);
        }
        kinds
    }
}

/// Whether `role` stands in `variant`'s starting army: only such a piece can be given as a
/// handicap.
pub fn in_starting_army(variant: Variant, role: Role) -> bool {
    Position::start(variant).count(Color::White, role) > 0
}

/// How a value was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Regression,
    Matches,
    Probe,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Regression => "outcome regression",
            Method::Matches => "handicap matches",
            Method::Probe => "value-network probe",
        }
    }

    /// What the sample counts of this method count.
    pub fn unit(self) -> &'static str {
        match self {
            Method::Regression | Method::Probe => "positions",
            Method::Matches => "games",
        }
    }

    /// What the bootstrap resamples: the independent samples of this method.
    pub fn resampled(self) -> &'static str {
        match self {
            Method::Regression | Method::Matches => "games",
            Method::Probe => "positions",
        }
    }

    /// What happens to a piece in a sample that tells about its value.
    fn varied(self) -> &'static str {
        match self {
            Method::Regression => "unbalanced",
            Method::Matches => "given as odds",
            Method::Probe => "taken off",
        }
    }
}

/// Fewest independent samples (what the bootstrap resamples: games, or positions for the
/// probe) in which a piece must vary for its value to be reported: below this a bootstrap
/// has so few distinct resamples that its 95 % interval means nothing.
pub const MIN_SAMPLES: usize = 10;

/// Fewest bootstrap replicates behind an interval.
pub const MIN_REPLICATES: usize = 20;

/// In how many of a method's independent samples a piece varied, out of how many.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Evidence {
    pub varied: usize,
    pub of: usize,
}

impl Evidence {
    /// Why these samples are too few to value `piece` by `method`, if they are.
    fn too_few(self, piece: PieceKind, method: Method) -> Option<String> {
        let (name, unit, varied) = (piece.name(), method.resampled(), method.varied());
        if self.varied == 0 {
            Some(format!("{} {unit}, {name} never {varied}", self.of))
        } else if self.varied < MIN_SAMPLES {
            Some(format!(
                "{} {unit}, {name} {varied} in {}; {MIN_SAMPLES} needed",
                self.of, self.varied
            ))
        } else {
            None
        }
    }

    /// An error unless these samples can set the scale: the Pawn's value, which every
    /// other value is measured in.
    pub fn require_scale(self, method: Method) -> Result<(), String> {
        match self.too_few(PieceKind::Board(Role::Pawn), method) {
            Some(reason) => Err(scale_error(&reason)),
            None => Ok(()),
        }
    }
}

fn scale_error(reason: &str) -> String {
    format!("not enough data to measure the Pawn, the unit ({reason})")
}

/// A piece a method could not value, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct NotEnoughData {
    pub piece: PieceKind,
    pub method: Method,
    pub reason: String,
}

impl NotEnoughData {
    /// `Queen: not enough data (2 games, Queen never unbalanced)`.
    pub fn line(&self) -> String {
        format!("{}: not enough data ({})", self.piece.name(), self.reason)
    }
}

/// One method's results: the values the data supports, and the pieces it cannot value.
#[derive(Clone, Debug, Default)]
pub struct Measurement {
    pub estimates: Vec<Estimate>,
    pub not_enough: Vec<NotEnoughData>,
}

impl Measurement {
    /// Reports each candidate value only if enough samples back it and its bootstrap is
    /// sound; the others become [`NotEnoughData`]. An error if the Pawn (the unit) is not
    /// backed: then no value is.
    pub(crate) fn judge(candidates: Vec<(Estimate, Evidence)>) -> Result<Measurement, String> {
        let mut measurement = Measurement::default();
        for (estimate, evidence) in candidates {
            match shortfall(&estimate, evidence) {
                None => measurement.estimates.push(estimate),
                Some(reason) if estimate.piece == PieceKind::Board(Role::Pawn) => {
                    return Err(scale_error(&reason))
                }
                Some(reason) => measurement.not_enough.push(NotEnoughData {
                    piece: estimate.piece,
                    method: estimate.method,
                    reason,
                }),
            }
        }
        Ok(measurement)
    }
}

/// Why `estimate` is not backed by the data, if it is not: too few samples in which the
/// piece varied; more than 2.5 % of the bootstrap replicates without a value (one tail of
/// the 95 % interval is then unknown); or, except for the Pawn, whose value is 1 by
/// definition, every replicate the same (the data never moves it: no interval at all).
fn shortfall(estimate: &Estimate, evidence: Evidence) -> Option<String> {
    let (piece, method) = (estimate.piece, estimate.method);
    if let Some(reason) = evidence.too_few(piece, method) {
        return Some(reason);
    }
    let samples = format!("{} {}", evidence.of, method.resampled());
    let replicates = estimate.replicates.len();
    let finite = estimate.replicates.iter().filter(|v| v.is_finite()).count();
    if replicates < MIN_REPLICATES || (replicates - finite) * 40 > replicates {
        return Some(format!(
            "{samples}: {finite} of {replicates} bootstrap replicates give the {} a value; at least {MIN_REPLICATES} and 97.5 % needed",
            piece.name()
        ));
    }
    if piece != PieceKind::Board(Role::Pawn) && estimate.high <= estimate.low {
        return Some(format!(
            "{samples}: every bootstrap replicate gives the {} the same value",
            piece.name()
        ));
    }
    None
}

/// One piece's value by one method.
#[derive(Clone, Debug)]
pub struct Estimate {
    pub piece: PieceKind,
    pub method: Method,
    /// Pawns.
    pub value: f64,
    /// 95 % bootstrap percentile interval.
    pub low: f64,
    pub high: f64,
    /// Positions or games behind the value (see [`Method::unit`]).
    pub samples: usize,
    /// Bootstrap replicates of the value. Replicate `i` of every piece of one method comes
    /// from the same resampling, so differences between pieces can be read off them.
    pub replicates: Vec<f64>,
}

impl Estimate {
    fn new(
        piece: PieceKind,
        method: Method,
        value: f64,
        samples: usize,
        replicates: Vec<f64>,
    ) -> Estimate {
        let (low, high) = percentile_interval(&replicates);
        Estimate {
            piece,
            method,
            value,
            low,
            high,
            samples,
            replicates,
        }
    }
}

/// The 2.5 % and 97.5 % percentiles (NaN, NaN without replicates).
pub fn percentile_interval(replicates: &[f64]) -> (f64, f64) {
    let mut sorted: Vec<f64> = replicates
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    if sorted.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    sorted.sort_by(f64::total_cmp);
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    (at(0.025), at(0.975))
}

/// Whether the data tells two pieces apart (same method): the 95 % interval of the
/// difference of their replicates.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub method: Method,
    pub first: PieceKind,
    pub second: PieceKind,
    /// Interval of `first - second`, Pawns.
    pub low: f64,
    pub high: f64,
}

impl Verdict {
    /// `Rook > Knight by 1.2 to 2.6 Pawns (outcome regression)` or `Knight ≈ Bishop:
    /// cannot tell apart (difference -0.3 to 0.4 Pawns, outcome regression)`.
    pub fn line(&self) -> String {
        let (a, b) = (self.first.name(), self.second.name());
        let method = self.method.name();
        if self.low > 0.0 {
            format!(
                "{a} > {b}: worth more by {:.2} to {:.2} Pawns ({method})",
                self.low, self.high
            )
        } else if self.high < 0.0 {
            format!(
                "{b} > {a}: worth more by {:.2} to {:.2} Pawns ({method})",
                -self.high, -self.low
            )
        } else {
            format!(
                "{a} vs {b}: cannot tell apart (difference {:+.2} to {:+.2} Pawns, {method})",
                self.low, self.high
            )
        }
    }
}

/// A verdict for every pair of pieces that one method measured (the Pawn, the unit, left
/// out). Give it only reported values ([`Measurement::estimates`]): a verdict needs both.
pub fn verdicts(estimates: &[Estimate]) -> Vec<Verdict> {
    let mut out = Vec::new();
    for (i, a) in estimates.iter().enumerate() {
        for b in &estimates[i + 1..] {
            let unit = PieceKind::Board(Role::Pawn);
            if a.method != b.method || a.piece == unit || b.piece == unit {
                continue;
            }
            let differences: Vec<f64> = a
                .replicates
                .iter()
                .zip(&b.replicates)
                .map(|(x, y)| x - y)
                .collect();
            let (low, high) = percentile_interval(&differences);
            if low.is_finite() {
                out.push(Verdict {
                    method: a.method,
                    first: a.piece,
                    second: b.piece,
                    low,
                    high,
                });
            }
        }
    }
    out
}

/// log(p / (1 - p)), with p kept inside [1e-4, 1 - 1e-4].
pub(crate) fn logit(p: f64) -> f64 {
    let p = p.clamp(1e-4, 1.0 - 1e-4);
    (p / (1.0 - p)).ln()
}

/// The published value a result can be compared with ([`piece_values::reference`]); none
/// for the hand.
pub fn reference(variant: Variant, piece: PieceKind) -> Option<&'static str> {
    match piece {
        PieceKind::Board(role) => piece_values::reference(variant, role),
        PieceKind::InHand => None,
    }
}
