//! `uci`: a UCI engine with the Fairy-Stockfish conventions for variants (`UCI_Variant`),
//! so that scripts and GUIs that drive variant engines can drive NinjaZero.
//!
//! The engine is NinjaZero's MCTS with `--model` (or the model-free evaluator), or any
//! engine named by `--engine`. Searches run on their own thread, so `stop` and `isready`
//! are answered while searching.
//! Every line written is flushed at once. Unknown commands are ignored; a `position` line
//! that cannot be read is reported with `info string` and the previous position is kept.

use super::play::load_evaluator;
use super::CliResult;
use clap::Args;
use ninjazero_model::parse_device;
use ninjazero_rules::{excerpt, Game, Position, Variant};
use ninjazero_search::{Engine, EngineSpec, Limits, MctsEngine, SearchError, SearchInfo};
use std::io::{self, BufRead, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use tch::Device;

#[derive(Args, Debug)]
pub struct UciArgs {
    /// Checkpoint (`.safetensors` with its `.json` sidecar) for the chosen UCI_Variant (also
    /// `setoption name Model value PATH`). A checkpoint of another variant is reported with
    /// `info string` and the search falls back to uniform priors and a material value.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Search with this engine instead, in the arena's spec form (e.g. alphabeta:ms=1000,
    /// built for each UCI_Variant); `go` sets how long it searches, not the spec's own
    /// limits. The Model option is then ignored.
    #[arg(long, conflicts_with = "model")]
    engine: Option<EngineSpec>,
    /// cpu, cuda, cuda:N or auto (used with a model).
    #[arg(long, value_parser = parse_device, default_value = "auto")]
    device: Device,
}

type BoxedEngine = Box<dyn Engine>;

/// Writes one line to standard output and flushes it (errors are ignored: a reader that went
/// away ends the process through SIGPIPE).
fn send(line: &str) {
    let mut out = io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// The commands this engine knows; a line's first known token starts its command (UCI: an
/// unknown token is skipped and the rest of the line parsed).
const COMMANDS: [&str; 11] = [
    "uci",
    "debug",
    "isready",
    "setoption",
    "register",
    "ucinewgame",
    "position",
    "go",
    "stop",
    "ponderhit",
    "quit",
];

/// The `go` parameters that take a number.
const GO_LIMITS: [&str; 8] = [
    "nodes",
    "movetime",
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "depth",
];

/// A `go` number: a negative one (a GUI's clock after a flag fall) counts as 0, one too large
/// for 64 bits as the largest; None for anything that is not a whole number.
fn go_number(text: &str) -> Option<u64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(match (negative, digits.parse::<u64>()) {
        (true, _) => 0,
        (false, Ok(n)) => n,
        (false, Err(_)) => u64::MAX,
    })
}

/// Milliseconds to spend on a move with `remaining` ms on the clock: a thirtieth of it (or
/// of `movestogo`, counted as 2 to 30), plus half the increment, but leaving 30 ms on the
/// clock, and at least 5 ms.
fn clock_budget(remaining: u64, increment: u64, moves_to_go: Option<u64>) -> u64 {
    let divisor = moves_to_go.map_or(30, |m| m.clamp(2, 30));
    (remaining / divisor + increment / 2)
        .min(remaining.saturating_sub(30))
        .max(5)
}

/// A search running on its own thread; it hands the engine back when joined.
struct RunningSearch {
    stop: Arc<AtomicBool>,
    /// Runs until `stop` (`go infinite`, `go` without limits).
    infinite: bool,
    handle: JoinHandle<BoxedEngine>,
}

/// The protocol's state: the position, the options and the engine.
struct Uci {
    variant: Variant,
    game: Game,
    model: Option<PathBuf>,
    spec: Option<EngineSpec>,
    device: Device,
    /// None while a search holds it, or before the first one is built.
    engine: Option<BoxedEngine>,
    /// The variant and model the engine was built for.
    built_for: Option<(Variant, Option<PathBuf>)>,
    search: Option<RunningSearch>,
}

pub fn run(args: UciArgs) -> CliResult {
    // A model of another variant may suit a later UCI_Variant; a missing one never will.
    if let Some(model) = args.model.as_ref().filter(|m| !m.is_file()) {
        return Err(format!(
            "--model {}: no such checkpoint file",
            model.display()
        ));
    }
    super::play::use_one_torch_thread();
    let mut engine = Uci {
        variant: Variant::Chess,
        game: Game::new(Variant::Chess),
        model: args.model,
        spec: args.engine,
        device: args.device,
        engine: None,
        built_for: None,
        search: None,
    };
    for line in io::stdin().lock().lines() {
        let line = line.map_err(|e| format!("reading standard input: {e}"))?;
        if !engine.command(&line) {
            engine.finish_search(true);
            return Ok(());
        }
    }
    // End of input: let a limited search finish (a script may pipe `go nodes 800` and
    // close), stop one that would never end.
    let infinite = engine.search.as_ref().is_some_and(|s| s.infinite);
    engine.finish_search(infinite);
    Ok(())
}

impl Uci {
    /// Runs one command line; false after `quit`.
    fn command(&mut self, line: &str) -> bool {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some(at) = tokens.iter().position(|t| COMMANDS.contains(t)) else {
            return true;
        };
        let rest = &tokens[at + 1..];
        match tokens[at] {
            "uci" => self.uci(),
            "isready" => {
                // Heavy initialisation (loading a model) happens here, as UCI intends; a
                // running search keeps its engine and readiness is answered at once.
                self.reap_finished_search();
                if self.search.is_none() {
                    self.ensure_engine();
                }
                send("readyok");
            }
            "setoption" => self.set_option(rest),
            "ucinewgame" => {
                self.finish_search(true);
                self.game = Game::new(self.variant);
            }
            "position" => match self.parse_position(rest) {
                Ok(game) => self.game = game,
                Err(e) => send(&format!("info string {e}; the position is unchanged")),
            },
            "go" => self.go(rest),
            "stop" => self.finish_search(true),
            "quit" => return false,
            _ => {} // debug, register, ponderhit: nothing to do
        }
        true
    }

    fn uci(&self) {
        send(&format!("id name NinjaZero {}", env!("CARGO_PKG_VERSION")));
        send("id author NinjaZero developers");
        let vars: Vec<String> = Variant::ALL.iter().map(|v| format!("var {v}")).collect();
        send(&format!(
            "option name UCI_Variant type combo default {} {}",
            self.variant,
            vars.join(" ")
        ));
        let model = self
            .model
            .as_ref()
            .map_or("<empty>".to_string(), |p| p.display().to_string());
        send(&format!("option name Model type string default {model}"));
        send("uciok");
    }

    /// `setoption name <id> [value <x>]`.
    fn set_option(&mut self, rest: &[&str]) {
        let value_at = rest.iter().position(|&t| t == "value");
        let name_end = value_at.unwrap_or(rest.len());
        let name = match rest.first() {
            Some(&"name") => rest[1..name_end].join(" "),
            _ => {
                send("info string expected 'setoption name <id> [value <x>]'");
                return;
            }
        };
        let value = value_at.map_or(String::new(), |i| rest[i + 1..].join(" "));
        match name.to_ascii_lowercase().as_str() {
            "uci_variant" => match value.parse::<Variant>() {
                Ok(variant) => {
                    self.finish_search(true);
                    self.variant = variant;
                    self.game = Game::new(variant);
                }
                Err(e) => send(&format!("info string {e}")),
            },
            "model" => {
                self.finish_search(true);
                self.model = match value.as_str() {
                    "" | "<empty>" => None,
                    path => Some(PathBuf::from(path)),
                };
            }
            _ => send(&format!("info string unknown option '{}'", excerpt(&name))),
        }
    }

    /// `startpos [moves ...]` or `fen <FEN fields> [moves ...]`, in the current variant.
    fn parse_position(&self, rest: &[&str]) -> Result<Game, String> {
        let (setup, moves) = match rest.iter().position(|&t| t == "moves") {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &[][..]),
        };
        let start =
            match setup {
                ["startpos"] => Position::start(self.variant),
                ["fen", fen @ ..] => Position::from_fen(self.variant, &fen.join(" "))
                    .map_err(|e| format!("invalid FEN for {}: {e}", self.variant))?,
                _ => return Err(
                    "expected 'position startpos [moves ...]' or 'position fen <FEN> [moves ...]'"
                        .to_string(),
                ),
            };
        let mut game = Game::from_position(start);
        for (i, text) in moves.iter().enumerate() {
            game.play_text(text)
                .map_err(|e| format!("move {} of the list: {e}", i + 1))?;
        }
        Ok(game)
    }

    /// Builds the engine for the current variant and model if it is not built yet.
    /// Must not be called while a search holds the engine.
    fn ensure_engine(&mut self) {
        let wanted = (self.variant, self.model.clone());
        if self.engine.is_some() && self.built_for.as_ref() == Some(&wanted) {
            return;
        }
        let built = match &self.spec {
            Some(spec) => spec
                .build(self.variant, self.device, 0)
                .map_err(|e| e.to_string()),
            None => {
                load_evaluator(self.model.as_deref(), self.variant, self.device).map(|evaluator| {
                    if let Some(path) = &self.model {
                        send(&format!(
                            "info string loaded model {} for {}",
                            path.display(),
                            self.variant
                        ));
                    }
                    mcts_engine(evaluator)
                })
            }
        };
        let engine = built.unwrap_or_else(|e| {
            send(&format!(
                "info string error: {e}; searching without a model (uniform priors)"
            ));
            mcts_engine(load_evaluator(None, self.variant, self.device).expect("no model to load"))
        });
        self.engine = Some(engine);
        self.built_for = Some(wanted);
    }

    fn go(&mut self, rest: &[&str]) {
        self.finish_search(true);
        let mut limits = Limits::default();
        let mut clock = [None, None];
        let mut increment = [0u64, 0];
        let mut moves_to_go = None;
        let mut unreadable = None;
        let mut i = 0;
        while i < rest.len() {
            let key = rest[i];
            i += 1;
            if !GO_LIMITS.contains(&key) {
                continue; // infinite, ponder, searchmoves and its moves, mate: no limit
            }
            let value = rest.get(i).copied().unwrap_or("");
            let Some(n) = go_number(value) else {
                unreadable.get_or_insert((key, value));
                continue;
            };
            i += 1;
            match key {
                "nodes" => limits.nodes = Some(n.max(1)),
                "movetime" => limits.time = Some(Duration::from_millis(n.max(1))),
                "wtime" => clock[0] = Some(n),
                "btime" => clock[1] = Some(n),
                "winc" => increment[0] = n,
                "binc" => increment[1] = n,
                "movestogo" => moves_to_go = Some(n),
                _ => limits.depth = Some(n.clamp(1, u64::from(u32::MAX)) as u32),
            }
        }
        // A GUI waits for `bestmove`: a limit that cannot be read means "move now", never
        // "search until stop".
        if let Some((key, value)) = unreadable {
            send(&format!(
                "info string go {key}: expected a number, got '{}'; moving at once",
                excerpt(value)
            ));
            limits.nodes = Some(1);
        }
        let side = self.game.position().turn().index();
        if let Some(remaining) = clock[side] {
            let budget =
                Duration::from_millis(clock_budget(remaining, increment[side], moves_to_go));
            limits.time = Some(limits.time.map_or(budget, |t| t.min(budget)));
        }
        let infinite = limits == Limits::default();
        self.ensure_engine();
        let engine = self.engine.take().expect("built above");
        let stop = Arc::new(AtomicBool::new(false));
        let game = self.game.clone();
        let flag = Arc::clone(&stop);
        let handle =
            std::thread::spawn(move || search_thread(game, limits, infinite, &flag, engine));
        self.search = Some(RunningSearch {
            stop,
            infinite,
            handle,
        });
    }

    /// Joins a search that has ended by itself, taking its engine back.
    fn reap_finished_search(&mut self) {
        if self.search.as_ref().is_some_and(|s| s.handle.is_finished()) {
            self.finish_search(false);
        }
    }

    /// Waits for the running search (stopping it first when `stop`), which prints its
    /// `bestmove`, and takes the engine back.
    fn finish_search(&mut self, stop: bool) {
        if let Some(search) = self.search.take() {
            if stop {
                search.stop.store(true, Ordering::Relaxed);
            }
            match search.handle.join() {
                Ok(engine) => self.engine = Some(engine),
                Err(_) => {
                    send("info string the search failed");
                    self.built_for = None;
                }
            }
        }
    }
}

/// NinjaZero's MCTS with `evaluator` (its limits come from `go`).
fn mcts_engine(evaluator: Box<dyn ninjazero_model::Evaluator + Send>) -> BoxedEngine {
    Box::new(MctsEngine::new(
        evaluator,
        Limits::default(),
        "NinjaZero".to_string(),
    ))
}

/// Searches, reporting `info` lines, prints `bestmove` and returns the engine. With a depth
/// limit, the search also stops once the reported depth (for MCTS, the PV's length) reaches
/// it or the PV ends the game. An `infinite` search that ends by itself (MCTS at
/// [`ninjazero_search::engine::MAX_SIMULATIONS`]) holds its `bestmove` until `stop`, as UCI requires.
fn search_thread(
    game: Game,
    limits: Limits,
    infinite: bool,
    stop: &AtomicBool,
    mut engine: BoxedEngine,
) -> BoxedEngine {
    let result = {
        let depth = limits.depth;
        let mut report = |info: &SearchInfo| {
            // Before the first child is searched there is no line to show: GUIs expect a
            // `pv` with every `info depth`.
            if !info.pv.is_empty() {
                send(&info_line(info));
            }
            if depth.is_some_and(|d| info.depth >= d || ends_game(&game, &info.pv)) {
                stop.store(true, Ordering::Relaxed);
            }
        };
        let mut result = engine.search(&game, &limits, stop, &mut report);
        if matches!(result, Err(SearchError::GameOver)) && !game.position().legal_moves().is_empty()
        {
            // Drawn by repetition or the 100-ply rule but moves remain: a GUI still wants a
            // move, so search the position as if it were new.
            if let Some(fresh) = fresh_game(game.position()) {
                send("info string the game is drawn by rule; searching on regardless");
                result = engine.search(&fresh, &limits, stop, &mut report);
            }
        }
        result
    };
    while infinite && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(5));
    }
    match result {
        Ok(info) => send(&format!("bestmove {}", info.best)),
        Err(SearchError::Failed(reason)) => {
            send(&format!("info string {} failed: {reason}", engine.name()));
            send("bestmove (none)");
        }
        Err(SearchError::GameOver) => {
            if let Some(outcome) = game.outcome() {
                send(&format!("info string the game is over: {outcome}"));
            }
            send("bestmove (none)");
        }
    }
    engine
}

/// Whether playing `pv` from the game's position finishes the game.
fn ends_game(game: &Game, pv: &[ninjazero_rules::Move]) -> bool {
    let mut game = game.clone();
    for &m in pv {
        game.play_unchecked(m);
    }
    game.outcome().is_some()
}

/// The same position with no history and the 100-ply clock at zero.
fn fresh_game(pos: &Position) -> Option<Game> {
    let fen = pos.to_fen();
    let mut fields: Vec<&str> = fen.split_whitespace().collect();
    if fields.len() == 6 {
        fields[4] = "0";
    }
    Position::from_fen(pos.variant(), &fields.join(" "))
        .ok()
        .map(Game::from_position)
}

/// `info depth D score cp C nodes N nps X time T pv ...` (`score mate M` for a mate found
/// by alpha-beta; MCTS reports the PV length as its depth and simulations as its nodes;
/// never called with an empty PV).
fn info_line(info: &SearchInfo) -> String {
    let millis = info.elapsed.as_millis();
    let nps = info.nodes as u128 * 1_000_000 / info.elapsed.as_micros().max(1);
    let pv: Vec<String> = info.pv.iter().map(|m| m.to_string()).collect();
    format!(
        "info depth {} score {} nodes {} nps {nps} time {millis} pv {}",
        info.depth,
        info.score.uci(),
        info.nodes,
        pv.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_budgets() {
        // 3000 ms: 3000 / 30 = 100 ms.
        assert_eq!(clock_budget(3000, 0, None), 100);
        // Plus half the increment: 100 + 2000 / 2 = 1100 ms.
        assert_eq!(clock_budget(3000, 2000, None), 1100);
        // movestogo 10: 3000 / 10 = 300 ms; 1 counts as 2 (1500 ms), 100 as 30 (100 ms).
        assert_eq!(clock_budget(3000, 0, Some(10)), 300);
        assert_eq!(clock_budget(3000, 0, Some(1)), 1500);
        assert_eq!(clock_budget(3000, 0, Some(100)), 100);
        // A big increment cannot spend the clock: 1000 / 30 + 5000 / 2 = 2533 ms, capped
        // at 1000 - 30 = 970 ms.
        assert_eq!(clock_budget(1000, 5000, None), 970);
        // Nearly flagged: at least 5 ms (40 / 30 + 0 = 1, capped at 10, raised to 5).
        assert_eq!(clock_budget(40, 0, None), 5);
        assert_eq!(clock_budget(0, 0, None), 5);
    }
}
