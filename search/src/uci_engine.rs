//! External UCI engines as players (`uci:COMMAND[:…]`), with Fairy-Stockfish's conventions
//! for variants: `setoption name UCI_Variant value <variant id>`.
//!
//! The engine runs as a child process. A reader thread turns its output into lines on a
//! channel, so that every wait has a deadline: an engine that hangs, crashes, replies
//! nonsense or names an illegal move fails the search ([`SearchError::Failed`], which loses
//! the game in the arena) and is started afresh for the next game, never blocking the
//! caller. The child is killed when the engine is dropped.

use crate::engine::{Engine, Limits, Score, SearchError, SearchInfo};
use ninjazero_rules::{Game, Move, MoveError, MoveKind, Position, Variant};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long an engine may take beyond its move time (or in all, under a depth or node
/// limit) before it counts as hung, and how long the handshake may take, unless the spec
/// sets `timeout=S`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest `timeout=S` a spec may set: a day. Longer is no timeout at all, and a
/// number of seconds near `u64::MAX` is more than an [`Instant`] can hold.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(86_400);

/// Where Debian installs game engines, which is not on every user's PATH.
const GAMES_DIR: &str = "/usr/games";

/// An external engine's settings, as a `uci:` spec gives them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UciSettings {
    /// The program (a path, or a name looked up on PATH and then in /usr/games).
    pub command: String,
    /// `setoption` name and value pairs, sent in this order after `UCI_Variant`.
    pub options: Vec<(String, String)>,
    /// The `go` limits of [`Engine::choose`].
    pub limits: Limits,
    /// Grace beyond the move time (see [`DEFAULT_TIMEOUT`]).
    pub timeout: Duration,
}

/// A running engine process: its input and the lines it writes.
struct Process {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = write_line(&mut self.stdin, "quit");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes `line` and a newline to the engine and flushes, with SIGPIPE blocked on this
/// thread: the `ninjazero` binary restores SIGPIPE's default action (to die quietly when
/// its own reader goes away), which would otherwise kill the whole process when an engine
/// has exited. A SIGPIPE raised by the write is consumed before the mask is restored, and
/// the write fails with "broken pipe" instead.
#[cfg(unix)]
fn write_line(stdin: &mut ChildStdin, line: &str) -> std::io::Result<()> {
    // SAFETY: plain signal-set and mask calls on local values, for this thread only.
    unsafe {
        let mut pipe: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut pipe);
        libc::sigaddset(&mut pipe, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, &mut old);
        let result = writeln!(stdin, "{line}").and_then(|()| stdin.flush());
        if result.is_err() {
            let now = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            libc::sigtimedwait(&pipe, std::ptr::null_mut(), &now);
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        result
    }
}

#[cfg(not(unix))]
fn write_line(stdin: &mut ChildStdin, line: &str) -> std::io::Result<()> {
    writeln!(stdin, "{line}").and_then(|()| stdin.flush())
}

/// The message of an I/O error without Rust's " (os error N)" suffix.
fn io_message(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Spawns `command` with piped standard input and output; a bare name missing from PATH
/// is tried in /usr/games.
fn spawn(command: &str) -> Result<Child, String> {
    let run = |program: &str| {
        Command::new(program)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
    };
    match run(command) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !command.contains('/') => {
            let games = format!("{GAMES_DIR}/{command}");
            run(&games).map_err(|_| format!("cannot start '{command}': {}", io_message(&e)))
        }
        other => other.map_err(|e| format!("cannot start '{command}': {}", io_message(&e))),
    }
}

impl Process {
    /// Starts the engine and sets it up: `uci` … `uciok`, `UCI_Variant` (when the engine
    /// has the option; required for any variant but chess), the spec's options, `isready`.
    fn start(settings: &UciSettings, variant: Variant) -> Result<Process, String> {
        let mut child = spawn(&settings.command)?;
        let stdin = child.stdin.take().ok_or("no standard input")?;
        let stdout = child.stdout.take().ok_or("no standard output")?;
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut process = Process {
            child,
            stdin,
            lines,
        };
        process.send("uci")?;
        let mut options = Vec::new();
        process.wait_for("uciok", settings.timeout, |line| {
            if let Some(option) = option_declaration(line) {
                options.push(option);
            }
            line.trim() == "uciok"
        })?;
        let has = |name: &str| options.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
        match options
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("UCI_Variant"))
        {
            Some((_, declaration)) => {
                if !combo_has(declaration, variant.id()) {
                    return Err(format!("the engine does not know the variant {variant}"));
                }
                process.send(&format!("setoption name UCI_Variant value {variant}"))?;
            }
            None if variant != Variant::Chess => {
                return Err(format!(
                    "the engine has no UCI_Variant option, so it cannot play {variant}"
                ));
            }
            None => {}
        }
        for (name, value) in &settings.options {
            if !has(name) {
                return Err(format!("the engine has no option '{name}'"));
            }
            process.send(&format!("setoption name {name} value {value}"))?;
        }
        process.ready(settings.timeout)?;
        Ok(process)
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        write_line(&mut self.stdin, line).map_err(|_| self.exit_description())
    }

    /// `isready` … `readyok`.
    fn ready(&mut self, timeout: Duration) -> Result<(), String> {
        self.send("isready")?;
        self.wait_for("readyok", timeout, |line| line.trim() == "readyok")
    }

    /// Reads lines until `done` accepts one, for at most `timeout` (a timeout beyond what an
    /// [`Instant`] can hold waits without end).
    fn wait_for(
        &mut self,
        what: &str,
        timeout: Duration,
        mut done: impl FnMut(&str) -> bool,
    ) -> Result<(), String> {
        let deadline = Instant::now().checked_add(timeout);
        loop {
            let left = deadline.map_or(timeout, |d| d.saturating_duration_since(Instant::now()));
            match self.lines.recv_timeout(left) {
                Ok(line) if done(&line) => return Ok(()),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("no {what} within {}", seconds(timeout)))
                }
                Err(RecvTimeoutError::Disconnected) => return Err(self.exit_description()),
            }
        }
    }

    /// Why the engine stopped talking: its exit status, if it has one yet.
    fn exit_description(&mut self) -> String {
        for _ in 0..20 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return format!("the engine exited ({status})");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        "the engine closed its output".to_string()
    }
}

/// `1.5 s`.
fn seconds(time: Duration) -> String {
    format!("{} s", time.as_secs_f64())
}

/// `option name NAME type …` as (NAME, the whole line).
fn option_declaration(line: &str) -> Option<(String, String)> {
    let rest = line.trim().strip_prefix("option name ")?;
    let name = rest.split(" type ").next()?.trim();
    Some((name.to_string(), line.to_string()))
}

/// Whether a combo option's declaration lists `value` (`… var chess var 3check …`).
fn combo_has(declaration: &str, value: &str) -> bool {
    let words: Vec<&str> = declaration.split_whitespace().collect();
    words.windows(2).any(|w| w == ["var", value])
}

/// A move in UCI's text: castling as the King's two squares (`e1g1`); every other move as
/// the rules crate writes it.
pub fn uci_move_text(m: Move) -> String {
    match m.kind {
        MoveKind::Castle { .. } => format!("{}{}", m.from, m.to),
        _ => m.to_string(),
    }
}

/// The legal move of `position` that `text` names in UCI's move text.
pub fn parse_uci_move(position: &Position, text: &str) -> Result<Move, String> {
    if let Some(&m) = position
        .legal_moves()
        .iter()
        .find(|&&m| uci_move_text(m) == text)
    {
        return Ok(m);
    }
    Err(match position.parse_move(text) {
        Err(MoveError::Malformed(_)) => format!("malformed move '{text}'"),
        _ => format!("illegal move '{text}'"),
    })
}

/// `go` with the limits that apply to a UCI engine: depth, nodes (or simulations), move
/// time; `go infinite` without any.
fn go_command(limits: &Limits) -> String {
    let mut go = String::from("go");
    if let Some(depth) = limits.depth {
        go += &format!(" depth {depth}");
    }
    if let Some(nodes) = [limits.nodes, limits.simulations]
        .into_iter()
        .flatten()
        .min()
    {
        go += &format!(" nodes {nodes}");
    }
    if let Some(time) = limits.time {
        go += &format!(" movetime {}", time.as_millis().max(1));
    }
    if go == "go" {
        go += " infinite";
    }
    go
}

/// `position startpos moves …`, or `position fen …` for a game from another position.
fn position_command(game: &Game, variant: Variant) -> String {
    let start = game.start();
    let mut line = if start.to_fen() == Position::start(variant).to_fen() {
        "position startpos".to_string()
    } else {
        format!("position fen {}", start.to_fen())
    };
    if !game.moves().is_empty() {
        let moves: Vec<String> = game.moves().iter().map(|&m| uci_move_text(m)).collect();
        line += &format!(" moves {}", moves.join(" "));
    }
    line
}

/// What is known before the engine's first `info` line (the game has a legal move).
fn blank_info(game: &Game) -> SearchInfo {
    SearchInfo {
        best: game.position().legal_moves()[0],
        score: Score::Centipawns(0),
        depth: 0,
        nodes: 0,
        simulations: None,
        elapsed: Duration::ZERO,
        pv: Vec::new(),
        root_visits: Vec::new(),
        root_policy: Vec::new(),
    }
}

/// Updates `info` from an `info …` line: depth, nodes, score and the PV (as far as its
/// moves are legal).
fn read_info(line: &str, game: &Game, info: &mut SearchInfo) {
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut i = 1;
    while i < words.len() {
        let next = words.get(i + 1).copied().unwrap_or("");
        match words[i] {
            "depth" => info.depth = next.parse().unwrap_or(info.depth),
            "nodes" => info.nodes = next.parse().unwrap_or(info.nodes),
            "score" => {
                let amount: Option<i32> = words.get(i + 2).and_then(|w| w.parse().ok());
                match (next, amount) {
                    ("cp", Some(cp)) => info.score = Score::Centipawns(cp),
                    ("mate", Some(m)) => {
                        info.score = Score::Mate(if m > 0 { 2 * m - 1 } else { 2 * m })
                    }
                    _ => {}
                }
                i += 1;
            }
            "pv" => {
                info.pv = legal_prefix(game, &words[i + 1..]);
                if let Some(&best) = info.pv.first() {
                    info.best = best;
                }
                return;
            }
            _ => {}
        }
        i += 1;
    }
}

/// The moves of `texts` from the game's position, up to the first that is not legal.
fn legal_prefix(game: &Game, texts: &[&str]) -> Vec<Move> {
    let mut line = game.clone();
    let mut moves = Vec::new();
    for text in texts {
        let Ok(m) = parse_uci_move(line.position(), text) else {
            break;
        };
        line.play_unchecked(m);
        moves.push(m);
    }
    moves
}

/// An external UCI engine (see the module docs).
pub struct UciEngine {
    name: String,
    settings: UciSettings,
    variant: Variant,
    /// None before the first start and after a failure (it is started again when needed).
    process: Option<Process>,
}

impl UciEngine {
    /// Starts the engine for `variant`, so that a missing program or an engine that does
    /// not know the variant is reported at once. `name` is the player's name in reports.
    pub fn start(
        name: String,
        settings: UciSettings,
        variant: Variant,
    ) -> Result<UciEngine, String> {
        let process = Process::start(&settings, variant)?;
        Ok(UciEngine {
            name,
            settings,
            variant,
            process: Some(process),
        })
    }

    /// The running process, started afresh if the last one failed.
    fn process(&mut self) -> Result<&mut Process, String> {
        if self.process.is_none() {
            self.process = Some(Process::start(&self.settings, self.variant)?);
        }
        Ok(self.process.as_mut().expect("just started"))
    }

    /// Sends the position and `go`, then reads until `bestmove`.
    fn run_search(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&SearchInfo),
    ) -> Result<SearchInfo, String> {
        let started = Instant::now();
        let grace = self.settings.timeout;
        let command = position_command(game, self.variant);
        let process = self.process()?;
        process.send(&command)?;
        process.send(&go_command(limits))?;
        let infinite = limits.time.is_none() && limits.depth.is_none() && limits.nodes.is_none();
        // A deadline beyond what an Instant can hold is none: the search waits for bestmove.
        let mut deadline = (!infinite)
            .then(|| {
                limits
                    .time
                    .unwrap_or_default()
                    .checked_add(grace)
                    .and_then(|t| started.checked_add(t))
            })
            .flatten();
        let mut stopped = false;
        let mut info = blank_info(game);
        loop {
            if !stopped && stop.load(Ordering::Relaxed) {
                stopped = true;
                process.send("stop")?;
                deadline = Instant::now().checked_add(grace);
            }
            let wait = deadline.map_or(Duration::from_millis(20), |d| {
                d.saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(20))
            });
            let line = match process.lines.recv_timeout(wait) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        let allowed = deadline.map_or(grace, |d| d - started);
                        return Err(format!("no bestmove within {}", seconds(allowed)));
                    }
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => return Err(process.exit_description()),
            };
            let mut words = line.split_whitespace();
            match words.next() {
                Some("info") => {
                    read_info(&line, game, &mut info);
                    info.elapsed = started.elapsed();
                    if !info.pv.is_empty() {
                        report(&info);
                    }
                }
                Some("bestmove") => {
                    let text = words.next().unwrap_or("");
                    let best = parse_uci_move(game.position(), text)
                        .map_err(|e| format!("bestmove: {e}"))?;
                    if info.pv.first() != Some(&best) {
                        info.pv = vec![best];
                    }
                    info.best = best;
                    info.elapsed = started.elapsed();
                    report(&info);
                    return Ok(info);
                }
                _ => {}
            }
        }
    }
}

impl Engine for UciEngine {
    fn name(&self) -> String {
        self.name.clone()
    }

    /// `ucinewgame` and `isready`; an engine that failed (or fails now) is started afresh
    /// at the next search.
    fn new_game(&mut self, _seed: u64) {
        let timeout = self.settings.timeout;
        if let Some(process) = self.process.as_mut() {
            if process
                .send("ucinewgame")
                .and_then(|()| process.ready(timeout))
                .is_err()
            {
                self.process = None;
            }
        }
    }

    fn limits(&self) -> Limits {
        self.settings.limits
    }

    /// The engine's search under `limits` (`go infinite` without any, until `stop`); a
    /// failure kills the process (see [`SearchError::Failed`]).
    fn search(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&SearchInfo),
    ) -> Result<SearchInfo, SearchError> {
        if game.position().legal_moves().is_empty() {
            return Err(SearchError::GameOver);
        }
        self.run_search(game, limits, stop, report)
            .map_err(|reason| {
                self.process = None;
                SearchError::Failed(reason)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A timeout or move time beyond what an [`Instant`] can hold (settings built in code:
    /// specs refuse them) waits without end instead of panicking.
    #[cfg(unix)]
    #[test]
    fn deadlines_beyond_an_instant_do_not_panic() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = ninjazero_testkit::temp_dir();
        let path = tmp.path().join("engine.sh");
        std::fs::write(
            &path,
            "#!/bin/sh\nwhile read -r line; do\n  case \"$line\" in\n    uci) echo uciok ;;\n    isready) echo readyok ;;\n    go*) echo 'bestmove e2e4' ;;\n    quit) exit 0 ;;\n  esac\ndone\n",
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let settings = UciSettings {
            command: path.display().to_string(),
            options: Vec::new(),
            limits: Limits {
                time: Some(Duration::MAX),
                ..Limits::default()
            },
            timeout: Duration::MAX,
        };
        let mut engine = UciEngine::start("fake".into(), settings, Variant::Chess).unwrap();
        let game = Game::new(Variant::Chess);
        assert_eq!(engine.choose(&game).unwrap().to_string(), "e2e4");
        // Stopped at once: the grace after `stop` is beyond an Instant too.
        let (limits, stopped) = (engine.limits(), AtomicBool::new(true));
        let info = engine
            .search(&game, &limits, &stopped, &mut |_| {})
            .unwrap();
        assert_eq!(info.best.to_string(), "e2e4");
    }

    #[test]
    fn castling_is_written_and_read_as_the_kings_move() {
        let mut game = Game::new(Variant::Chess);
        for m in ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"] {
            game.play_text(m).unwrap();
        }
        let castle = parse_uci_move(game.position(), "e1g1").unwrap();
        assert!(castle.is_castle());
        assert_eq!(uci_move_text(castle), "e1g1");
        assert_eq!(
            parse_uci_move(game.position(), "e1e3").unwrap_err(),
            "illegal move 'e1e3'"
        );
        assert_eq!(
            parse_uci_move(game.position(), "zz").unwrap_err(),
            "malformed move 'zz'"
        );
    }

    #[test]
    fn option_declarations_are_read_with_spaces_in_names() {
        let line = "option name Skill Level type spin default 20 min -20 max 20";
        assert_eq!(option_declaration(line).unwrap().0, "Skill Level");
        let variants = "option name UCI_Variant type combo default chess var 3check var chess";
        assert!(combo_has(variants, "chess") && combo_has(variants, "3check"));
        assert!(!combo_has(variants, "insane-ninja") && !combo_has(variants, "default"));
    }

    #[test]
    fn go_names_every_limit_and_is_infinite_without_one() {
        let limits = Limits {
            depth: Some(3),
            nodes: Some(500),
            time: Some(Duration::from_millis(40)),
            ..Limits::default()
        };
        assert_eq!(go_command(&limits), "go depth 3 nodes 500 movetime 40");
        assert_eq!(go_command(&Limits::default()), "go infinite");
    }

    #[test]
    fn info_lines_give_depth_nodes_score_and_pv() {
        let game = Game::new(Variant::Chess);
        let mut info = blank_info(&game);
        read_info(
            "info depth 4 seldepth 6 score mate 2 nodes 1234 pv e2e4 e7e5 zz",
            &game,
            &mut info,
        );
        assert_eq!((info.depth, info.nodes), (4, 1234));
        assert_eq!(info.score, Score::Mate(3));
        assert_eq!(info.pv.len(), 2);
        assert_eq!(info.best.to_string(), "e2e4");
    }
}
