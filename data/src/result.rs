//! A game's result as PGN writes it, the one text every stored game result uses.

use ninjazero_rules::Color;
use serde::{Deserialize, Serialize};

/// A game's result from White's view, written as in PGN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GameResult {
    #[serde(rename = "1-0")]
    WhiteWins,
    #[serde(rename = "0-1")]
    BlackWins,
    #[serde(rename = "1/2-1/2")]
    Draw,
}

impl GameResult {
    /// The result of a game won by `winner` (`None`: drawn).
    pub fn from_winner(winner: Option<Color>) -> GameResult {
        match winner {
            Some(Color::White) => GameResult::WhiteWins,
            Some(Color::Black) => GameResult::BlackWins,
            None => GameResult::Draw,
        }
    }

    /// `1-0`, `0-1` or `1/2-1/2`.
    pub fn as_str(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
        }
    }
}

impl std::str::FromStr for GameResult {
    type Err = String;

    fn from_str(text: &str) -> Result<GameResult, String> {
        [
            GameResult::WhiteWins,
            GameResult::BlackWins,
            GameResult::Draw,
        ]
        .into_iter()
        .find(|r| r.as_str() == text)
        .ok_or_else(|| format!("'{text}' is not a result (1-0, 0-1 or 1/2-1/2)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_reads_back_from_its_text_and_nothing_else_reads() {
        for result in [
            GameResult::WhiteWins,
            GameResult::BlackWins,
            GameResult::Draw,
        ] {
            assert_eq!(result.as_str().parse(), Ok(result));
            let json = serde_json::to_string(&result).unwrap();
            assert_eq!(json, format!("\"{}\"", result.as_str()));
            assert_eq!(serde_json::from_str::<GameResult>(&json).unwrap(), result);
        }
        assert!("garbage".parse::<GameResult>().is_err());
        assert!(serde_json::from_str::<GameResult>("\"1-1\"").is_err());
    }
}
