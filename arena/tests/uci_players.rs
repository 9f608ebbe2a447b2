//! External UCI engines in the arena: Fairy-Stockfish plays legal games, and a broken
//! engine (garbage, an illegal move, a crash, a hang) loses its games with the reason
//! recorded, promptly, instead of stopping the arena.

use ninjazero_arena::arena::play_game;
use ninjazero_arena::{run_arena, ArenaConfig, ArenaResult};
use ninjazero_rules::{Game, Position, Variant};
use ninjazero_search::EngineSpec;
use ninjazero_testkit::{temp_dir, text};
use std::path::Path;
use std::time::{Duration, Instant};

fn spec(text: &str) -> EngineSpec {
    text.parse().unwrap_or_else(|e| panic!("{e}"))
}

/// Fairy-Stockfish at `depth`, or None (with a loud SKIPPED line) where it is not
/// installed; under CI a missing engine fails the test instead.
fn fairy_stockfish(depth: u32) -> Option<EngineSpec> {
    let spec = spec(&format!("uci:fairy-stockfish:depth={depth}"));
    match spec.build(Variant::Chess, tch::Device::Cpu, 0) {
        Ok(_) => Some(spec),
        Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{e} (scripts/setup.sh installs the fairy-stockfish package)")
        }
        Err(e) => {
            eprintln!("SKIPPED: {e} (install the fairy-stockfish package to run this test)");
            None
        }
    }
}

fn arena(a: &EngineSpec, b: &EngineSpec, pairs: usize, opening_plies: usize) -> ArenaResult {
    let config = ArenaConfig {
        pairs,
        first_pair: 0,
        opening_plies,
        max_plies: 120,
        seed: 3,
        sprt: None,
    };
    let make_a = a.factory(Variant::Chess, tch::Device::Cpu, 1);
    let make_b = b.factory(Variant::Chess, tch::Device::Cpu, 2);
    run_arena(&make_a, &make_b, Variant::Chess, &config, 1, &|_, _, _| {}).unwrap()
}

#[test]
fn fairy_stockfish_plays_legal_chess_against_the_random_mover() {
    let Some(stockfish) = fairy_stockfish(2) else {
        return;
    };
    let start = Position::start(Variant::Chess);
    let mut white = stockfish
        .build(Variant::Chess, tch::Device::Cpu, 0)
        .unwrap();
    let mut black = spec("random")
        .build(Variant::Chess, tch::Device::Cpu, 5)
        .unwrap();
    white.new_game(1);
    black.new_game(1);
    let played = play_game(white.as_mut(), black.as_mut(), &start, &[], 200, true);
    assert!(
        !played.termination.contains("failed"),
        "{}",
        played.termination
    );
    // Every move, castling and promotions included, is legal when replayed.
    let mut replay = Game::new(Variant::Chess);
    for &m in played.game.moves() {
        replay.play(m).unwrap_or_else(|e| panic!("{m}: {e}"));
    }
    eprintln!(
        "fairy-stockfish depth 2 vs random: {} after {} plies",
        played.termination,
        played.game.moves().len()
    );
    // Through the arena, both colours.
    let result = arena(&stockfish, &spec("random"), 1, 4);
    assert_eq!(result.games, 2);
    assert!(result
        .game_results
        .iter()
        .all(|g| !g.termination.contains("failed")));
    eprintln!("{}", result.summary_line());
}

/// A fake UCI engine: a shell script that answers the handshake, plays a legal first move
/// from the start position (a Knight), and then misbehaves as `fault` says.
fn fake_engine(dir: &Path, name: &str, fault: &str) -> String {
    let script = format!(
        r#"#!/bin/sh
moves=0
while read -r line; do
  case "$line" in
    uci) echo "id name fake"; echo "option name Hash type spin default 16 min 1 max 64"; echo uciok ;;
    isready) echo readyok ;;
    position*) set -- $line; words=$# ;;
    go*)
      moves=$((moves + 1))
      if [ $moves -eq 1 ] && [ "{fault}" != hang ]; then
        if [ $words -eq 2 ]; then echo "bestmove g1f3"; else echo "bestmove g8f6"; fi
        continue
      fi
      case "{fault}" in
        garbage) echo "info depth 1 score cp 0"; echo "bestmove banana" ;;
        illegal) echo "bestmove e2e5" ;;
        exit) exit 3 ;;
        hang) ;;
      esac ;;
    quit) exit 0 ;;
  esac
done
"#
    );
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    let status = std::process::Command::new("chmod")
        .args(["+x", text(&path)])
        .status()
        .unwrap();
    assert!(status.success());
    text(&path).to_string()
}

#[test]
fn a_broken_engine_loses_with_the_reason_and_the_arena_goes_on() {
    let tmp = temp_dir();
    let cases = [
        ("garbage", "bestmove: malformed move 'banana'"),
        ("illegal", "bestmove: illegal move 'e2e5'"),
        ("exit", "the engine exited (exit status: 3)"),
        ("hang", "no bestmove within 1 s"),
    ];
    for (fault, reason) in cases {
        let command = fake_engine(tmp.path(), &format!("fake-{fault}"), fault);
        let fake = spec(&format!("uci:{command}:depth=1:timeout=1:Hash=8"));
        // Against an MCTS player the arena plays its games in lockstep, the fake's moves
        // among the network steps; against the random mover one game at a time.
        for opponent in ["random", "uniform:sims=4"] {
            let started = Instant::now();
            let result = arena(&fake, &spec(opponent), 2, 0);
            assert!(started.elapsed() < Duration::from_secs(15), "{fault}");
            assert_eq!((result.games, result.losses), (4, 4), "{fault}: {result:?}");
            for game in &result.game_results {
                assert_eq!(
                    game.termination,
                    format!("{fake} failed: {reason}"),
                    "{fault} against {opponent}"
                );
            }
            // A crash or hang comes mid-game, after the fake's first (legal) move.
            if fault != "hang" {
                assert!(result.game_results.iter().all(|g| g.plies >= 2), "{fault}");
            }
        }
    }
}

#[test]
fn a_missing_program_or_unknown_option_is_one_clear_error() {
    let error = |text: &str| match spec(text).build(Variant::Chess, tch::Device::Cpu, 0) {
        Ok(engine) => panic!("{text} was built as {}", engine.name()),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        error("uci:nosuch-engine-xyz:depth=1"),
        "player 'uci:nosuch-engine-xyz:depth=1': cannot start 'nosuch-engine-xyz': No such file or directory"
    );
    let tmp = temp_dir();
    let command = fake_engine(tmp.path(), "fake", "garbage");
    assert_eq!(
        error(&format!("uci:{command}:depth=1:Skil Level=3")),
        format!(
            "player 'uci:{command}:depth=1:Skil Level=3': the engine has no option 'Skil Level'"
        )
    );
    // The fake has no UCI_Variant option, so it plays chess only.
    let variant_error = spec(&format!("uci:{command}:depth=1"))
        .build(Variant::InsaneNinja, tch::Device::Cpu, 0)
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        variant_error.as_deref(),
        Some(
            format!(
                "player 'uci:{command}:depth=1': the engine has no UCI_Variant option, so it cannot play insane-ninja"
            )
            .as_str()
        )
    );
}
