//! `ninjazero uci` driven through a real pipe, as a GUI or script would.

use ninjazero_rules::{Position, Variant};
use ninjazero_testkit::{temp_dir, Binary};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

const NINJAZERO: Binary = Binary(env!("CARGO_BIN_EXE_ninjazero"));
const TIMEOUT: Duration = Duration::from_secs(30);

/// A running engine: lines go in through its stdin, come out through a reader thread.
struct Engine {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Engine {
    fn start(args: &[&str]) -> Engine {
        let args: Vec<&str> = ["uci"].iter().chain(args).copied().collect();
        let mut child = NINJAZERO
            .command(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the ninjazero binary starts");
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if sender.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Engine {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line, failing the test if none comes in time.
    fn line(&self) -> String {
        match self.lines.recv_timeout(TIMEOUT) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("no output within {TIMEOUT:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the engine closed its output"),
        }
    }

    /// Lines up to and including the first that starts with `prefix`.
    fn until(&self, prefix: &str) -> Vec<String> {
        let mut seen = Vec::new();
        loop {
            let line = self.line();
            let done = line.starts_with(prefix);
            seen.push(line);
            if done {
                return seen;
            }
        }
    }

    /// The move of the next `bestmove` line, checking the `info` lines before it.
    fn bestmove(&self) -> String {
        let lines = self.until("bestmove");
        for info in lines.iter().filter(|l| l.starts_with("info depth")) {
            for field in [" nodes ", " nps ", " score cp ", " pv "] {
                assert!(info.contains(field), "{field:?} missing in {info:?}");
            }
        }
        assert!(
            lines.iter().any(|l| l.starts_with("info depth")),
            "no info line before bestmove: {lines:?}"
        );
        let last = lines.last().unwrap();
        last.split_whitespace().nth(1).unwrap().to_string()
    }

    /// `go infinite` from the start position of `variant`: `isready` is answered while it
    /// runs, with no bestmove before `stop`, and `stop` ends it with a legal move.
    fn infinite_search_until_stop(&mut self, variant: Variant) {
        self.send("position startpos");
        self.send("go infinite");
        std::thread::sleep(Duration::from_millis(300));
        self.send("isready");
        let lines = self.until("readyok");
        assert!(
            lines.iter().all(|l| !l.starts_with("bestmove")),
            "{lines:?}"
        );
        self.send("stop");
        let best = self.bestmove();
        assert_legal(variant, variant.start_fen(), &[], &best);
    }

    /// Checks that the engine said nothing before answering `isready`.
    fn expect_silence(&mut self) {
        self.send("isready");
        assert_eq!(self.line(), "readyok");
    }

    /// Closes stdin (unless `quit` already did) and waits for a successful exit.
    fn finish(mut self) -> Vec<String> {
        drop(self.stdin.take());
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "exit status {status}");
                break;
            }
            assert!(started.elapsed() < TIMEOUT, "the engine did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
        self.lines.try_iter().collect()
    }
}

fn assert_legal(variant: Variant, fen: &str, moves: &[&str], best: &str) {
    let mut pos = Position::from_fen(variant, fen).unwrap();
    for m in moves {
        pos = pos.play(pos.parse_move(m).unwrap()).unwrap();
    }
    assert!(
        pos.parse_move(best).is_ok(),
        "bestmove {best} is not legal in {}",
        pos.to_fen()
    );
}

#[test]
fn scripted_session() {
    let mut engine = Engine::start(&[]);
    engine.send("uci");
    let lines = engine.until("uciok");
    assert!(lines[0].starts_with("id name NinjaZero "), "{lines:?}");
    assert!(lines.contains(&"id author NinjaZero developers".to_string()));
    let combo = lines
        .iter()
        .find(|l| l.starts_with("option name UCI_Variant type combo default chess"))
        .expect("the UCI_Variant option");
    let vars: Vec<&str> = combo
        .split(" var ")
        .skip(1)
        .map(|v| v.split_whitespace().next().unwrap())
        .collect();
    let ids: Vec<&str> = Variant::ALL.iter().map(|v| v.id()).collect();
    assert_eq!(vars, ids);

    engine.send("isready");
    assert_eq!(engine.line(), "readyok");

    let insane = Variant::InsaneNinja;
    engine.send("setoption name UCI_Variant value insane-ninja");
    engine.send("position fen garbage");
    let report = engine.line();
    assert!(report.starts_with("info string "), "{report}");
    assert!(report.contains("FEN"), "{report}");
    // The previous (start) position is kept.
    engine.send("go nodes 50");
    let best = engine.bestmove();
    assert_legal(insane, insane.start_fen(), &[], &best);

    engine.send("position startpos moves f2f5 f9f6");
    engine.send("go nodes 50");
    let best = engine.bestmove();
    assert_legal(insane, insane.start_fen(), &["f2f5", "f9f6"], &best);
    let pos = Position::from_fen(insane, insane.start_fen()).unwrap();
    let white = pos.play(pos.parse_move("f2f5").unwrap()).unwrap();
    let white = white.play(white.parse_move("f9f6").unwrap()).unwrap();
    assert_eq!(white.turn(), ninjazero_rules::Color::White);

    // An illegal move in the list: reported, and the position stays after f2f5 f9f6.
    engine.send("position startpos moves f2f5 f9f5");
    let report = engine.line();
    assert!(report.starts_with("info string "), "{report}");
    assert!(report.contains("illegal move 'f9f5'"), "{report}");
    engine.send("go nodes 50");
    let best = engine.bestmove();
    assert_legal(insane, insane.start_fen(), &["f2f5", "f9f6"], &best);

    // Unknown commands are ignored without a word.
    engine.send("frobnicate the engine");
    engine.send("xyzzy 42");
    engine.expect_silence();
    // An unknown setoption name is reported but harmless; so is an unknown variant.
    engine.send("setoption name UCI_Variant value shogi");
    assert!(engine
        .line()
        .starts_with("info string unknown variant 'shogi'"));

    // An infinite search answers isready while running and ends on stop.
    engine.infinite_search_until_stop(insane);

    // A clock: a thirtieth of the remaining time, 100 ms (the budget's arithmetic is
    // pinned by the unit test `clock_budgets`). The search ends by itself, on the clock
    // rather than the simulation cap, and only once its 100 ms have passed.
    engine.send("go wtime 3000 btime 3000 winc 0 binc 0");
    let lines = engine.until("bestmove");
    let last_info = lines
        .iter()
        .rev()
        .find(|l| l.starts_with("info depth"))
        .unwrap_or_else(|| panic!("no info line: {lines:?}"));
    let field = |name: &str| -> u64 {
        let mut words = last_info.split_whitespace();
        words.find(|&w| w == name);
        words.next().unwrap().parse().unwrap()
    };
    assert!(field("time") >= 100, "{last_info}");
    assert!(field("nodes") < 2_000_000, "{last_info}");
    let best = lines.last().unwrap().split_whitespace().nth(1).unwrap();
    assert_legal(insane, insane.start_fen(), &[], best);

    engine.send("ucinewgame");
    engine.expect_silence();
    engine.send("quit");
    let rest = engine.finish();
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn finds_mate_in_one() {
    let mut engine = Engine::start(&[]);
    engine.send("position fen 6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1");
    engine.send("go nodes 400");
    let lines = engine.until("bestmove");
    assert_eq!(lines.last().unwrap(), "bestmove a1a8");
    let info = &lines[lines.len() - 2];
    let cp: i32 = info
        .split(" score cp ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(cp > 1000, "{info}");
    // A finished game has no move: said so, with `bestmove (none)`.
    engine.send("position fen 6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1 moves a1a8");
    engine.send("go nodes 10");
    let lines = engine.until("bestmove");
    assert_eq!(lines.last().unwrap(), "bestmove (none)");
    assert!(lines.iter().any(|l| l.contains("white wins by checkmate")));
    engine.finish();
}

/// `--engine` puts any engine behind the protocol: alpha-beta reports each iteration, stops
/// at `go depth` or `go nodes`, gives mates as `score mate`, and waits for `stop` in
/// `go infinite`.
#[test]
fn alphabeta_behind_the_protocol() {
    let mut engine = Engine::start(&["--engine", "alphabeta:depth=1"]);
    engine.send("position startpos moves e2e4");
    engine.send("go depth 3");
    let lines = engine.until("bestmove");
    let depths: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("info depth "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(depths, ["1", "2", "3"], "{lines:?}");
    assert!(lines
        .iter()
        .all(|l| !l.starts_with("info depth") || l.contains(" score cp ")));
    let best = lines.last().unwrap().split_whitespace().nth(1).unwrap();
    assert_legal(Variant::Chess, Variant::Chess.start_fen(), &["e2e4"], best);

    engine.send("setoption name UCI_Variant value palace");
    engine.send("go nodes 3000");
    let best = engine.bestmove();
    assert_legal(Variant::Palace, Variant::Palace.start_fen(), &[], &best);

    engine.send("setoption name UCI_Variant value chess");
    engine.send("position fen 6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1");
    engine.send("go depth 4");
    let lines = engine.until("bestmove");
    assert_eq!(lines.last().unwrap(), "bestmove a1a8");
    assert!(
        lines[lines.len() - 2].contains(" score mate 1 "),
        "{lines:?}"
    );

    engine.infinite_search_until_stop(Variant::Chess);
    engine.send("quit");
    engine.finish();
}

#[test]
fn end_of_input_lets_a_limited_search_finish() {
    let mut engine = Engine::start(&[]);
    engine.send("setoption name UCI_Variant value insane-ninja-drops");
    // In insane-ninja-drops the hand is glued to the board field.
    let fen = "****ll****/irnbqkbnri/pppppppppp/10/10/10/10/10/10/PPPPPPPPPP/IRNBQKBNRI/****LL****[YYYYyyyy] w KQkq - 0 1";
    engine.send(&format!("position fen {fen} moves e2e4 e9e7 Y@e3"));
    engine.send("go nodes 100");
    let rest = engine.finish();
    assert!(
        !rest.iter().any(|l| l.starts_with("info string")),
        "{rest:?}"
    );
    let best = rest
        .last()
        .and_then(|l| l.strip_prefix("bestmove "))
        .unwrap_or_else(|| panic!("no bestmove in {rest:?}"));
    assert_legal(
        Variant::InsaneNinjaDrops,
        fen,
        &["e2e4", "e9e7", "Y@e3"],
        best,
    );
}

#[test]
fn model_of_another_variant_falls_back_to_uniform() {
    let tmp = temp_dir();
    let checkpoint = tmp.path().join("palace.safetensors");
    NINJAZERO.init_tiny_model("palace", &checkpoint);

    let mut engine = Engine::start(&["--device", "cpu", "--model", checkpoint.to_str().unwrap()]);
    // chess (the default variant) does not match the palace model.
    engine.send("isready");
    let report = engine.line();
    assert!(report.starts_with("info string error: "), "{report}");
    assert!(report.contains("palace model"), "{report}");
    assert_eq!(engine.line(), "readyok");
    engine.send("go nodes 20");
    let best = engine.bestmove();
    assert_legal(Variant::Chess, Variant::Chess.start_fen(), &[], &best);

    // With the matching variant the network searches.
    engine.send("setoption name UCI_Variant value palace");
    engine.send("isready");
    assert!(engine.line().starts_with("info string loaded model"));
    assert_eq!(engine.line(), "readyok");
    engine.send("go nodes 20");
    let best = engine.bestmove();
    assert_legal(Variant::Palace, Variant::Palace.start_fen(), &[], &best);

    // Clearing the model goes back to the uniform evaluator, silently.
    engine.send("setoption name Model value <empty>");
    engine.expect_silence();
    engine.send("quit");
    engine.finish();
}

/// Limits a GUI may send that are negative, zero or not numbers: each `go` answers with a
/// legal move by itself (a limit that cannot be read means "move now"), never a search that
/// waits for `stop`.
#[test]
fn unreadable_or_negative_limits_answer_at_once() {
    let mut engine = Engine::start(&[]);
    engine.send("position startpos moves e2e4");
    let start = Position::start(Variant::Chess).to_fen();
    for go in [
        "go wtime -100 btime -100",
        "go movetime -1",
        "go movetime 0",
        "go nodes -5",
        "go nodes 0",
        "go nodes abc",
        "go depth -3",
        "go wtime abc",
        "go movetime",
        "go nodes 99999999999999999999999 movetime 50",
    ] {
        engine.send(go);
        let lines = engine.until("bestmove");
        let best = lines.last().unwrap().split_whitespace().nth(1).unwrap();
        assert_legal(Variant::Chess, &start, &["e2e4"], best);
        let malformed = ["abc", "go movetime"].iter().any(|m| go.ends_with(m));
        if malformed {
            assert!(
                lines.iter().any(|l| l.starts_with("info string go ")),
                "{go}: no warning in {lines:?}"
            );
        }
    }
    engine.send("quit");
    engine.finish();
}

#[test]
fn long_bad_input_is_repeated_shortened() {
    let mut engine = Engine::start(&[]);
    let long = "z".repeat(5000);
    let head = "z".repeat(40);
    let cases = [
        (
            format!("position startpos moves e2e4 {long}"),
            format!("info string move 2 of the list: cannot read '{head}…' as a move"),
        ),
        (
            format!("setoption name {long} value 1"),
            format!("info string unknown option '{head}…'"),
        ),
        (
            format!("setoption name UCI_Variant value {long}"),
            format!("info string unknown variant '{head}…'"),
        ),
    ];
    for (command, expected) in cases {
        engine.send(&command);
        let line = engine.line();
        assert!(line.starts_with(&expected), "{line}");
        assert!(line.len() < 400, "{} characters", line.len());
    }
    engine.send("quit");
    engine.finish();
}
