//! Dataset summary.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use ninjazero_rules::{Color, Variant};

use crate::reader::{existing_dataset_files, read_file};
use crate::{DataError, GameRecord};

/// Dataset summary (games, positions, results W/D/L from White's view, lengths min/mean/max, termination reasons with counts, full-search share, false-resignation rate among games with resignation disabled where some side would have resigned: that side did not lose). impl Display for a readable multi-line report.
///
/// A game's length is its number of recorded positions (plies played).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Summary {
    pub files: usize,
    /// Games per variant, in [`Variant::ALL`] order (only variants present).
    pub variants: Vec<(Variant, usize)>,
    pub games: usize,
    pub positions: usize,
    pub white_wins: usize,
    pub draws: usize,
    pub black_wins: usize,
    /// Shortest game in plies (0 for an empty dataset).
    pub min_length: usize,
    /// Mean game length in plies (0 for an empty dataset).
    pub mean_length: f64,
    pub max_length: usize,
    /// Termination reasons with their counts, most frequent first (ties by name).
    pub terminations: Vec<(String, usize)>,
    /// Positions that got a full search.
    pub full_search_positions: usize,
    /// `full_search_positions / positions` (0 for an empty dataset).
    pub full_search_share: f64,
    /// Games played with resignation disabled.
    pub resignation_disabled_games: usize,
    /// Of those, games where some side would have resigned.
    pub would_resign_games: usize,
    /// Of those, games where that side did not lose (won or drew).
    pub false_resignations: usize,
    /// `false_resignations / would_resign_games`; None when no such game.
    pub false_resignation_rate: Option<f64>,
}

impl Summary {
    /// Summarizes games (with `files` the number of files they came from).
    pub fn of_games<'a>(games: impl IntoIterator<Item = &'a GameRecord>, files: usize) -> Summary {
        let mut s = Summary {
            files,
            min_length: usize::MAX,
            ..Summary::default()
        };
        let mut variants: HashMap<Variant, usize> = HashMap::new();
        let mut terminations: HashMap<String, usize> = HashMap::new();
        let mut total_length = 0usize;
        for game in games {
            s.games += 1;
            *variants.entry(game.variant).or_default() += 1;
            let length = game.positions.len();
            s.positions += length;
            total_length += length;
            s.min_length = s.min_length.min(length);
            s.max_length = s.max_length.max(length);
            match game.winner {
                Some(Color::White) => s.white_wins += 1,
                Some(Color::Black) => s.black_wins += 1,
                None => s.draws += 1,
            }
            *terminations.entry(game.termination.clone()).or_default() += 1;
            s.full_search_positions += game.positions.iter().filter(|p| p.full_search).count();
            if game.resignation_disabled {
                s.resignation_disabled_games += 1;
                if let Some((side, _)) = game.would_resign {
                    s.would_resign_games += 1;
                    if game.winner != Some(!side) {
                        s.false_resignations += 1;
                    }
                }
            }
        }
        if s.games == 0 {
            s.min_length = 0;
        } else {
            s.mean_length = total_length as f64 / s.games as f64;
        }
        if s.positions > 0 {
            s.full_search_share = s.full_search_positions as f64 / s.positions as f64;
        }
        if s.would_resign_games > 0 {
            s.false_resignation_rate =
                Some(s.false_resignations as f64 / s.would_resign_games as f64);
        }
        s.variants = Variant::ALL
            .into_iter()
            .filter_map(|v| variants.get(&v).map(|&n| (v, n)))
            .collect();
        let mut terminations: Vec<(String, usize)> = terminations.into_iter().collect();
        terminations.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        s.terminations = terminations;
        s
    }
}

/// Summarizes the finished files of `dir` (any variant). A missing `dir` is an error.
pub fn summarize(dir: &Path) -> Result<Summary, DataError> {
    let files = existing_dataset_files(dir)?;
    let mut games = Vec::new();
    for path in &files {
        // Keep only what the summary needs: positions' policies can be large.
        for mut game in read_file(path, None)? {
            for p in &mut game.positions {
                p.policy = Vec::new();
                p.fen = String::new();
            }
            games.push(game);
        }
    }
    Ok(Summary::of_games(&games, files.len()))
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let variants: Vec<String> = self
            .variants
            .iter()
            .map(|(v, n)| format!("{} ({n})", v.id()))
            .collect();
        writeln!(
            f,
            "files:        {}{}",
            self.files,
            if variants.is_empty() {
                String::new()
            } else {
                format!(", variant {}", variants.join(", "))
            }
        )?;
        writeln!(f, "games:        {}", self.games)?;
        writeln!(f, "positions:    {}", self.positions)?;
        writeln!(
            f,
            "results:      White wins {} ({:.1} %), draws {} ({:.1} %), Black wins {} ({:.1} %)",
            self.white_wins,
            percent(self.white_wins, self.games),
            self.draws,
            percent(self.draws, self.games),
            self.black_wins,
            percent(self.black_wins, self.games),
        )?;
        writeln!(
            f,
            "length:       min {}, mean {:.1}, max {} plies",
            self.min_length, self.mean_length, self.max_length
        )?;
        writeln!(f, "terminations:")?;
        for (reason, count) in &self.terminations {
            writeln!(
                f,
                "  {reason:<22} {count:>8} ({:.1} %)",
                percent(*count, self.games)
            )?;
        }
        writeln!(
            f,
            "full search:  {} of {} positions ({:.1} %)",
            self.full_search_positions,
            self.positions,
            100.0 * self.full_search_share
        )?;
        write!(
            f,
            "resignation:  disabled in {} games, a side would have resigned in {}, ",
            self.resignation_disabled_games, self.would_resign_games
        )?;
        match self.false_resignation_rate {
            Some(rate) => writeln!(
                f,
                "false resignations {} ({:.1} %)",
                self.false_resignations,
                100.0 * rate
            ),
            None => writeln!(f, "false resignation rate n/a"),
        }
    }
}
