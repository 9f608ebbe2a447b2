//! PGN export.

use std::io::Write;
use std::path::Path;

use ninjazero_rules::{Color, Position};

use crate::reader::read_dataset;
use crate::{DataError, GameRecord, GameResult};

/// Movetext lines are wrapped before this many columns.
const LINE_WIDTH: usize = 80;

/// Writes the games as PGN: tags Event "NinjaZero self-play", Site "?", Date "????.??.??", Round = game id, White/Black "NinjaZero", Result ("1-0","0-1","1/2-1/2"), Variant = variant id, FEN = start FEN, SetUp "1", Termination = termination; the movetext uses RULES.md move text with move numbers ("1. f2f5 f9f6 2. ..."), wrapped at ~80 columns. Returns the number of games.
///
/// Move numbers start from the start FEN's fullmove number; a game whose start position has
/// Black to move begins with `N...`. A start FEN the rules cannot read is an error, and
/// so is a missing `dir`.
pub fn export_pgn(dir: &Path, out: &mut dyn Write) -> Result<usize, DataError> {
    let games = read_dataset(dir, None)?;
    for game in &games {
        let text = game_pgn(game)?;
        out.write_all(text.as_bytes()).map_err(DataError::Output)?;
    }
    out.flush().map_err(DataError::Output)?;
    Ok(games.len())
}

fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

/// One game as PGN text, followed by a blank line.
fn game_pgn(game: &GameRecord) -> Result<String, DataError> {
    let start =
        Position::from_fen(game.variant, &game.start_fen).map_err(|e| DataError::InvalidGame {
            game_id: game.game_id,
            reason: format!("start FEN '{}': {e}", game.start_fen),
        })?;
    let result = GameResult::from_winner(game.winner).as_str();
    let round = game.game_id.to_string();
    let tags = [
        ("Event", "NinjaZero self-play"),
        ("Site", "?"),
        ("Date", "????.??.??"),
        ("Round", round.as_str()),
        ("White", "NinjaZero"),
        ("Black", "NinjaZero"),
        ("Result", result),
        ("Variant", game.variant.id()),
        ("FEN", game.start_fen.as_str()),
        ("SetUp", "1"),
        ("Termination", game.termination.as_str()),
    ];
    let mut text = String::new();
    for (name, value) in tags {
        text.push_str(&format!("[{name} \"{}\"]\n", escape(value)));
    }
    text.push('\n');

    let mut tokens = Vec::with_capacity(game.positions.len() * 3 / 2 + 1);
    // The reader replayed the moves, so each is legal and each row's side is the mover.
    let mut number = start.fullmove_number();
    for (i, p) in game.positions.iter().enumerate() {
        let turn = p.side_to_move;
        match turn {
            Color::White => tokens.push(format!("{number}.")),
            Color::Black if i == 0 => tokens.push(format!("{number}...")),
            Color::Black => {}
        }
        tokens.push(p.move_played.clone());
        if turn == Color::Black {
            number += 1;
        }
    }
    tokens.push(result.to_string());

    let mut line_len = 0;
    for token in tokens {
        if line_len > 0 && line_len + 1 + token.len() > LINE_WIDTH {
            text.push('\n');
            line_len = 0;
        }
        if line_len > 0 {
            text.push(' ');
            line_len += 1;
        }
        text.push_str(&token);
        line_len += token.len();
    }
    text.push_str("\n\n");
    Ok(text)
}
