//! `ninjazero play` driven through its standard input.

use ninjazero_testkit::{temp_dir, text, Binary};

const NINJAZERO: Binary = Binary(env!("CARGO_BIN_EXE_ninjazero"));

/// Runs `ninjazero play ARGS` with `input` on stdin; returns its exit success and stdout.
fn play(args: &[&str], input: &str) -> (bool, String) {
    let args: Vec<&str> = ["play"].iter().chain(args).copied().collect();
    let output = NINJAZERO.output_with_input(&args, input);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.is_empty(), "stderr: {stderr}");
    (output.status.success(), stdout)
}

#[test]
fn ninjutsu_session_with_bad_input() {
    let input = "zz\nc1c5\nfen\nhint\na2a3\nundo\nB2B3\nquit\n";
    let (ok, out) = play(&["--variant", "ninjutsu", "--sims", "20"], input);
    assert!(ok, "{out}");
    // No ANSI colours when the output is a pipe.
    assert!(!out.contains('\x1b'));
    // The board, with its holes blank and the protruding squares f1, f2, g2 drawn.
    for row in [
        "  8  w  w  n  g  g  k     8",
        "  6  .  .  .  .  .        6",
        "  3  .  .  .  .  .        3",
        "  2  P  P  P  P  P  M  N  2",
        "  1  W  W  N  G  G  K     1",
        "     a  b  c  d  e  f  g",
    ] {
        assert!(out.lines().any(|l| l == row), "missing {row:?} in\n{out}");
    }
    assert!(out.contains("cannot read 'zz' as a move"), "{out}");
    assert!(out.contains("illegal move 'c1c5'"), "{out}");
    assert!(out.contains("wwnggk*/pppppmn/5**/5**/5**/5**/PPPPPMN/WWNGGK* w - - 0 1"));
    let hint = out
        .split("Hint: ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .expect("a hint");
    let start = ninjazero_rules::Position::start(ninjazero_rules::Variant::Ninjutsu);
    assert!(start.parse_move(hint).is_ok(), "hint {hint}");
    // The last move bracketed on the board, then taken back with the reply.
    assert!(out.contains("  3 [P] .  .  .  .        3"), "{out}");
    assert!(out.contains("Last move: white a2a3"), "{out}");
    assert_eq!(out.matches("NinjaZero plays").count(), 2, "{out}");
    assert!(out.contains("Took back a2a3 "), "{out}");
    // Upper-case input is read too.
    assert!(out.contains("Last move: white b2b3"), "{out}");
    assert!(out.ends_with("Game abandoned.\n"), "{out}");
}

#[test]
fn mate_in_one_ends_the_game() {
    let fen = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1";
    let (ok, out) = play(
        &["--variant", "chess", "--fen", fen, "--sims", "20"],
        "undo\na1a8\n",
    );
    assert!(ok, "{out}");
    assert!(out.contains("Nothing to undo"), "{out}");
    assert!(out.contains("  8 [R] .  .  .  .  .  k  .  8"), "{out}");
    assert!(out.ends_with("Result: white wins by checkmate\n"), "{out}");
}

#[test]
fn captures_are_shown() {
    // White takes the d5 pawn; then the game is left at the end of input.
    let fen = "4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1";
    let (ok, out) = play(
        &["--variant", "chess", "--fen", fen, "--sims", "10"],
        "e4d5\n",
    );
    assert!(ok, "{out}");
    assert!(
        out.contains("Last move: white e4d5, capturing p on d5"),
        "{out}"
    );
    assert!(out.contains("Captured black pieces: p"), "{out}");
    assert!(out.contains("End of input"), "{out}");
}

#[test]
fn engine_opens_when_the_human_plays_black() {
    let (ok, out) = play(
        &[
            "--variant",
            "insane-ninja",
            "--color",
            "black",
            "--sims",
            "10",
        ],
        "fen\n",
    );
    assert!(ok, "{out}");
    // Drawn from Black's side: files from j to a, rank 0 at the top.
    assert!(
        out.contains("     j  i  h  g  f  e  d  c  b  a\n  0              L  L              0\n")
    );
    assert_eq!(out.matches("NinjaZero plays").count(), 1, "{out}");
    assert!(out.contains(" b KQkq "), "{out}");
}

/// Any engine can be played: alpha-beta from a spec, with its own depth limit, or with
/// --sims / --movetime replacing it (an MCTS engine from a spec with --sims).
#[test]
fn other_engines_play_through_the_same_interface() {
    let (ok, out) = play(
        &[
            "--variant",
            "chess",
            "--color",
            "black",
            "--engine",
            "alphabeta:depth=2",
        ],
        "hint\nquit\n",
    );
    assert!(ok, "{out}");
    assert!(
        out.contains("NinjaZero (alphabeta:depth=2) plays white"),
        "{out}"
    );
    assert!(out.contains(", depth 2, "), "{out}");
    assert!(out.contains("Hint: "), "{out}");
    assert_eq!(out.matches("NinjaZero plays").count(), 1, "{out}");

    let (ok, out) = play(
        &[
            "--variant",
            "palace",
            "--color",
            "black",
            "--engine",
            "uniform:sims=5000",
            "--sims",
            "12",
        ],
        "quit\n",
    );
    assert!(ok, "{out}");
    assert!(out.contains(", 12 simulations in "), "{out}");
}

#[test]
fn bad_arguments_are_errors() {
    let output = NINJAZERO.output(&[
        "play",
        "--variant",
        "chess",
        "--fen",
        "8/8/8/8/8/8/8/K6 w - -",
    ]);
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("invalid FEN"), "{stderr}");
}

#[test]
fn long_bad_input_is_repeated_shortened() {
    let long = "x".repeat(5000);
    let input = format!("{long}\ne2e4{long}\nquit\n");
    let (ok, out) = play(&["--variant", "chess", "--sims", "10"], &input);
    assert!(ok, "{out}");
    let head = "x".repeat(40);
    assert!(
        out.contains(&format!("cannot read '{head}…' as a move")),
        "{out}"
    );
    assert!(
        out.contains(&format!("cannot read 'e2e4{}…' as a move", &head[4..])),
        "{out}"
    );
    let longest = out.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(longest < 300, "a line of {longest} characters");
}

/// A network sized by hand (`model init --blocks --channels`) is described as made and
/// plays, here in an MCTS that keeps its tree between moves.
#[test]
fn a_hand_sized_network_plays_keeping_its_tree() {
    let dir = temp_dir();
    let model = dir.path().join("small.safetensors");
    let (ok, out) = NINJAZERO.run(&[
        "model",
        "init",
        "--variant",
        "chess",
        "--preset",
        "tiny",
        "--blocks",
        "1",
        "--channels",
        "16",
        "--out",
        text(&model),
    ]);
    assert!(ok, "{out}");
    assert!(
        out.contains("1 blocks x 16 channels, the rest of the tiny preset"),
        "{out}"
    );
    let (ok, info) = NINJAZERO.run(&["model", "info", text(&model)]);
    assert!(ok, "{info}");
    assert!(
        info.contains("\"blocks\": 1,") && info.contains("\"channels\": 16,"),
        "{info}"
    );
    let engine = format!("mcts:{}:sims=24:reuse=1", text(&model));
    let (ok, out) = play(
        &["--variant", "chess", "--engine", &engine],
        "e2e4\nd2d4\ng1f3\nquit\n",
    );
    assert!(ok, "{out}");
    assert_eq!(out.matches("NinjaZero plays").count(), 3, "{out}");
}
