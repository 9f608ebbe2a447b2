//! `play`: a game against NinjaZero in the terminal.

use super::numbers::whole;
use super::{parse_variant, CliResult};
use clap::Args;
use ninjazero_model::{parse_device, Evaluator, Model, NetworkEvaluator, UniformEvaluator};
use ninjazero_rules::{
    excerpt, Color, Game, Move, MoveError, MoveKind, Piece, Position, Square, Variant,
};
use ninjazero_search::engine::MAX_SIMULATIONS;
use ninjazero_search::{Engine, EngineSpec, Limits, MctsEngine, SearchInfo};
use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use tch::Device;

#[derive(Args, Debug)]
pub struct PlayArgs {
    /// Variant id (see `ninjazero perft --help`).
    #[arg(long, value_parser = parse_variant)]
    variant: Variant,
    /// Start from this position (FEN, RULES.md section 8) instead of the variant's start.
    #[arg(long)]
    fen: Option<String>,
    /// Checkpoint (`.safetensors` with its `.json` sidecar) for the variant. Without one,
    /// NinjaZero searches with uniform priors and a material value.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Play against this engine instead, in the arena's spec form (e.g. alphabeta:depth=4,
    /// uniform:ms=500, mcts:PATH.safetensors:sims=800); --sims or --movetime replace its
    /// own limits.
    #[arg(long, conflicts_with = "model")]
    engine: Option<EngineSpec>,
    /// cpu, cuda, cuda:N or auto (used with --model).
    #[arg(long, value_parser = parse_device, default_value = "auto")]
    device: Device,
    /// Simulations per engine move (and per hint); 200 unless --movetime or --engine is
    /// given [range: 1 to 2000000]
    #[arg(long, value_parser = whole::<u64>(1, MAX_SIMULATIONS), conflicts_with = "movetime")]
    sims: Option<u64>,
    /// Thinking time per engine move (and per hint) in milliseconds, instead of --sims. [range: 1 to 86400000]
    #[arg(long, value_parser = whole::<u64>(1, 86_400_000))]
    movetime: Option<u64>,
    /// Your colour, white or black; NinjaZero plays the other one.
    #[arg(long, value_parser = parse_color, default_value = "white")]
    color: Color,
}

/// Simulations per move of the default engine without --sims or --movetime.
const DEFAULT_SIMULATIONS: u64 = 200;

/// One libtorch thread for a one-position search: it evaluates one position per forward
/// pass, too little work to share, and threads that synchronise on every pass made `uci`
/// run 5–7 times slower on CPU than one thread. Says so in `--help` of `play` and `uci`.
pub(super) fn use_one_torch_thread() {
    tch::set_num_threads(1);
}

/// Parses `white` or `black` (or `w`, `b`).
fn parse_color(text: &str) -> Result<Color, String> {
    match text.to_ascii_lowercase().as_str() {
        "white" | "w" => Ok(Color::White),
        "black" | "b" => Ok(Color::Black),
        _ => Err(format!(
            "unknown colour '{}' (expected white or black)",
            excerpt(text)
        )),
    }
}

/// The evaluator for `variant`: the checkpoint's network, or uniform priors without one.
pub(super) fn load_evaluator(
    model: Option<&Path>,
    variant: Variant,
    device: Device,
) -> Result<Box<dyn Evaluator + Send>, String> {
    match model {
        Some(path) => {
            let model = Model::load(path, Some(variant), device).map_err(|e| e.to_string())?;
            Ok(Box::new(NetworkEvaluator::new(model)))
        }
        None => Ok(Box::new(UniformEvaluator::default())),
    }
}

const HELP: &str = "\
Moves are written as in RULES.md: e2e4, a7a8q (promotion), e1h1g1 (castling: King, Rook,
King's target), Y@e4 (Ninja Pawn drop). Commands:
  hint   ask NinjaZero for a move
  undo   take back your last move and NinjaZero's reply
  fen    print the position in FEN
  moves  list your legal moves
  help   show this text
  quit   end the game";

/// ANSI styles of the board (256-colour backgrounds).
mod style {
    pub const RESET: &str = "\x1b[0m";
    pub const LIGHT: &str = "\x1b[48;5;180m";
    pub const DARK: &str = "\x1b[48;5;137m";
    pub const LAST_MOVE: &str = "\x1b[48;5;185m";
    pub const CAPTURED: &str = "\x1b[48;5;167m";
    pub const WHITE_PIECE: &str = "\x1b[1;97m";
    pub const BLACK_PIECE: &str = "\x1b[1;30m";
    pub const EMPTY: &str = "\x1b[30m";
    pub const HIGHLIGHT: &str = "\x1b[1;31m";
}

/// A game in progress: the moves, what each move removed, and the engine.
struct Session {
    game: Game,
    human: Color,
    /// The pieces each move of the game removed, with their squares (parallel to the moves).
    removed: Vec<Vec<(Square, Piece)>>,
    engine: Box<dyn Engine>,
    limits: Limits,
    ansi: bool,
}

pub fn run(args: PlayArgs) -> CliResult {
    use_one_torch_thread();
    let start = match &args.fen {
        Some(fen) => Position::from_fen(args.variant, fen)
            .map_err(|e| format!("invalid FEN for {}: {e}", args.variant))?,
        None => Position::start(args.variant),
    };
    let engine: Box<dyn Engine> = match &args.engine {
        Some(spec) => spec
            .build(args.variant, args.device, 0)
            .map_err(|e| e.to_string())?,
        None => Box::new(MctsEngine::new(
            load_evaluator(args.model.as_deref(), args.variant, args.device)?,
            Limits::simulations(DEFAULT_SIMULATIONS),
            "NinjaZero".to_string(),
        )),
    };
    let limits = if args.sims.is_some() || args.movetime.is_some() {
        Limits {
            simulations: args.sims,
            time: args.movetime.map(Duration::from_millis),
            ..Limits::default()
        }
    } else {
        engine.limits()
    };
    let engine_name = match (&args.engine, &args.model) {
        (Some(_), _) => format!("NinjaZero ({})", engine.name()),
        (None, Some(path)) => format!("NinjaZero ({})", path.display()),
        (None, None) => "NinjaZero (no model: uniform priors and material)".to_string(),
    };
    let mut session = Session {
        game: Game::from_position(start),
        human: args.color,
        removed: Vec::new(),
        engine,
        limits,
        ansi: io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    println!(
        "{} ({}). You play {}; {engine_name} plays {}.",
        args.variant.name(),
        args.variant,
        args.color,
        !args.color
    );
    println!("Type a move (e2e4) or a command: hint, undo, fen, moves, help, quit.");
    if !session.ansi {
        println!("On the board, [X] marks the last move and x a piece it captured.");
    }
    session.show_board();
    session.main_loop()
}

impl Session {
    fn main_loop(&mut self) -> CliResult {
        let stdin = io::stdin();
        let mut lines = stdin.lock().lines();
        loop {
            if let Some(outcome) = self.game.outcome() {
                println!("Result: {outcome}");
                return Ok(());
            }
            let turn = self.game.position().turn();
            if turn != self.human {
                self.engine_move()?;
                self.show_board();
                continue;
            }
            print!("{turn} to move> ");
            io::stdout().flush().map_err(|e| e.to_string())?;
            let line = match lines.next() {
                None => {
                    println!();
                    println!("End of input: game left unfinished.");
                    return Ok(());
                }
                Some(line) => line.map_err(|e| format!("reading standard input: {e}"))?,
            };
            let input = normalize(line.trim());
            match input.as_str() {
                "" => {}
                "quit" | "exit" => {
                    println!("Game abandoned.");
                    return Ok(());
                }
                "help" | "?" => println!("{HELP}"),
                "fen" => println!("{}", self.game.position().to_fen()),
                "moves" => {
                    let moves: Vec<String> = self
                        .game
                        .position()
                        .legal_moves()
                        .iter()
                        .map(Move::to_string)
                        .collect();
                    println!("Legal moves: {}", moves.join(" "));
                }
                "hint" => {
                    let info = self.search()?;
                    println!(
                        "Hint: {} (expected score {} for you, {})",
                        info.best,
                        score(info.value()),
                        effort(&info)
                    );
                }
                "undo" => self.undo(),
                text => match self.game.position().parse_move(text) {
                    Ok(m) => {
                        self.play(m);
                        self.show_board();
                    }
                    Err(e @ MoveError::Malformed(_)) => {
                        println!("{e}");
                        println!("Type 'help' for the commands.");
                    }
                    Err(e) => println!("{e}"),
                },
            }
        }
    }

    /// Searches the current position with the session's limits.
    fn search(&mut self) -> Result<SearchInfo, String> {
        let stop = AtomicBool::new(false);
        self.engine
            .search(&self.game, &self.limits, &stop, &mut |_| {})
            .map_err(|e| e.to_string())
    }

    fn engine_move(&mut self) -> CliResult {
        if self.ansi {
            println!("NinjaZero is thinking...");
        }
        let info = self.search()?;
        println!(
            "NinjaZero plays {} (expected score {} for NinjaZero, {} in {:.1} s)",
            info.best,
            score(info.value()),
            effort(&info),
            info.elapsed.as_secs_f64()
        );
        self.play(info.best);
        Ok(())
    }

    /// Plays a legal move and records what it removed from the board.
    fn play(&mut self, m: Move) {
        let before = self.game.position().clone();
        self.game.play_unchecked(m);
        let after = self.game.position();
        let rook = match m.kind {
            MoveKind::Castle { rook } => Some(rook),
            _ => None,
        };
        let removed = before
            .pieces()
            .filter(|&(sq, _)| sq != m.from && Some(sq) != rook)
            .filter(|&(sq, piece)| after.piece_at(sq) != Some(piece))
            .collect();
        self.removed.push(removed);
    }

    /// Takes back the human's last move and the engine's reply to it.
    fn undo(&mut self) {
        let plies = self.game.moves().len();
        let human_moved = plies >= 2 || (plies == 1 && self.game.start().turn() == self.human);
        if !human_moved {
            println!("Nothing to undo: you have not moved yet.");
            return;
        }
        let mut taken = Vec::new();
        while let Some(m) = self.game.undo() {
            self.removed.pop();
            taken.push(m.to_string());
            if self.game.position().turn() == self.human {
                break;
            }
        }
        taken.reverse();
        println!("Took back {}.", taken.join(" "));
        self.show_board();
    }

    fn show_board(&self) {
        let pos = self.game.position();
        let last = self.game.moves().last().copied();
        let removed: &[(Square, Piece)] = self.removed.last().map_or(&[], |r| r);
        println!();
        print!(
            "{}",
            render_board(pos, self.human == Color::Black, last, removed, self.ansi)
        );
        if let Some(m) = last {
            let mover = !pos.turn();
            let taken: Vec<String> = removed
                .iter()
                .map(|(sq, piece)| format!("{} on {sq}", piece.char()))
                .collect();
            let taken = if taken.is_empty() {
                String::new()
            } else {
                format!(", capturing {}", taken.join(", "))
            };
            let text = format!("Last move: {mover} {m}{taken}");
            if self.ansi && !removed.is_empty() {
                println!("{}{text}{}", style::HIGHLIGHT, style::RESET);
            } else {
                println!("{text}");
            }
        }
        for color in Color::ALL {
            let lost: Vec<char> = self
                .removed
                .iter()
                .flatten()
                .filter(|(_, piece)| piece.color == color)
                .map(|(_, piece)| piece.char())
                .collect();
            if !lost.is_empty() {
                let list: Vec<String> = lost.iter().map(char::to_string).collect();
                println!("Captured {color} pieces: {}", list.join(" "));
            }
        }
        if pos.rules().has_drops() {
            println!(
                "In hand: white {}, black {}",
                pos.hand(Color::White),
                pos.hand(Color::Black)
            );
        }
        if pos.is_check() && !pos.legal_moves().is_empty() {
            println!("{} is in check.", pos.turn());
        }
    }
}

/// Input with square letters in lower case (`E2E4` is read as `e2e4`, `y@e4` as `Y@e4`).
fn normalize(input: &str) -> String {
    let lower = input.to_ascii_lowercase();
    match lower.strip_prefix("y@") {
        Some(square) => format!("Y@{square}"),
        None => lower,
    }
}

/// What a search did: `200 simulations` (MCTS), `depth 4, 12345 nodes` (alpha-beta).
fn effort(info: &SearchInfo) -> String {
    match info.simulations {
        Some(n) => format!("{n} simulations"),
        None => format!("depth {}, {} nodes", info.depth, info.nodes),
    }
}

/// A value in [-1, 1] with two decimals and a sign (no "-0.00").
fn score(value: f32) -> String {
    let rounded = (value * 100.0).round() / 100.0;
    if rounded == 0.0 {
        "0.00".to_string()
    } else {
        format!("{rounded:+.2}")
    }
}

/// The board as text, from White's side or (with `flip`) Black's: rank numbers on both
/// sides and file letters above and below; holes are blank, empty squares `.`. With `ansi`
/// the squares are coloured and the last move and its captures highlighted; without, the
/// last move's squares are bracketed and the squares of pieces it removed show `x`.
fn render_board(
    pos: &Position,
    flip: bool,
    last: Option<Move>,
    removed: &[(Square, Piece)],
    ansi: bool,
) -> String {
    let rules = pos.rules();
    let (low, high) = rules.rank_range();
    let ranks: Vec<u8> = if flip {
        (low..=high).collect()
    } else {
        (low..=high).rev().collect()
    };
    let files: Vec<u8> = if flip {
        (0..rules.width()).rev().collect()
    } else {
        (0..rules.width()).collect()
    };
    let letters: String = files
        .iter()
        .map(|&f| format!(" {} ", (b'a' + f) as char))
        .collect();
    let letters = format!("    {letters}");
    let mut out = String::new();
    out.push_str(letters.trim_end());
    out.push('\n');
    for &rank in &ranks {
        let mut line = format!("{rank:>3} ");
        for &file in &files {
            let sq = Square::new(file, rank).expect("variant boards lie inside a-j, 0-11");
            line.push_str(&render_cell(pos, sq, last, removed, ansi));
        }
        line.push_str(&format!(" {rank}"));
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(letters.trim_end());
    out.push('\n');
    out
}

fn render_cell(
    pos: &Position,
    sq: Square,
    last: Option<Move>,
    removed: &[(Square, Piece)],
    ansi: bool,
) -> String {
    if !pos.rules().is_square(sq) {
        return "   ".to_string();
    }
    let piece = pos.piece_at(sq);
    let was_removed = piece.is_none() && removed.iter().any(|&(s, _)| s == sq);
    let letter = match piece {
        Some(p) => p.char(),
        None if was_removed => 'x',
        None => '.',
    };
    let in_last = last.is_some_and(|m| m.from == sq || m.to == sq);
    if !ansi {
        return if in_last {
            format!("[{letter}]")
        } else {
            format!(" {letter} ")
        };
    }
    let background = if was_removed {
        style::CAPTURED
    } else if in_last {
        style::LAST_MOVE
    } else if (sq.file() + sq.rank()) % 2 == 1 {
        style::DARK // a1 is dark, as on a chessboard
    } else {
        style::LIGHT
    };
    let (foreground, shown) = match piece {
        Some(p) if p.color == Color::White => (style::WHITE_PIECE, letter),
        Some(_) => (style::BLACK_PIECE, letter),
        None if was_removed => (style::EMPTY, 'x'),
        None => (style::EMPTY, ' '),
    };
    format!("{background}{foreground} {shown} {}", style::RESET)
}
