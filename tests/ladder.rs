//! `ninjazero ladder`: a tiny ladder completes with random at 0, a rerun reuses every
//! stored game, and a bad player is refused in one line naming it; an external engine that
//! dies mid-game loses its games in the binary's arena (whose SIGPIPE would otherwise kill
//! it on the next write to the dead engine).

use ninjazero_testkit::{temp_dir, text, Binary};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

const NINJAZERO: Binary = Binary(env!("CARGO_BIN_EXE_ninjazero"));

fn ladder(dir: &Path, player: &str) -> (bool, String) {
    NINJAZERO.run(&[
        "ladder",
        "--variant",
        "insane-ninja",
        "--player",
        player,
        "--games",
        "2",
        "--ms",
        "5",
        "--max-plies",
        "40",
        "--threads",
        "2",
        "--dir",
        text(dir),
    ])
}

/// Each stored pairing file with its modification time.
fn stored(dir: &Path) -> BTreeMap<String, SystemTime> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let modified = entry.metadata().unwrap().modified().unwrap();
            (entry.file_name().to_string_lossy().into_owned(), modified)
        })
        .collect()
}

#[test]
fn a_ladder_rates_the_player_and_a_rerun_reuses_its_games() {
    let tmp = temp_dir();
    let dir = tmp.path().join("ladder");
    let (ok, out) = ladder(&dir, "alphabeta:depth=1");
    assert!(ok, "{out}");
    eprintln!("{out}");
    // The six anchors' chain of five pairings, and alphabeta:depth=1 (itself an anchor)
    // against the three anchors that are not its neighbours: 8 pairings of 2 games.
    assert!(out.contains("16 games played now, 0 reused"), "{out}");
    let random = out
        .lines()
        .find(|l| l.trim_start().starts_with("random"))
        .unwrap_or_else(|| panic!("no random row: {out}"));
    assert!(
        random.contains(" +0 ") && random.contains("[+0, +0]"),
        "{random}"
    );
    assert!(out.contains("* alphabeta:depth=1"), "{out}");
    let files = stored(&dir);
    assert_eq!(files.len(), 8, "{files:?}");
    assert!(
        files.contains_key("alphabeta_depth=1--vs--random.json"),
        "{files:?}"
    );

    // The same ladder again plays nothing and writes nothing.
    let (ok, again) = ladder(&dir, "alphabeta:depth=1");
    assert!(ok, "{again}");
    assert!(again.contains("0 games played now, 16 reused"), "{again}");
    assert_eq!(stored(&dir), files);

    // A pairing whose games were lost (as if the ladder had been killed before storing
    // them): a rerun plays only its pair again.
    let cut = dir.join("alphabeta_depth=1--vs--random.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cut).unwrap()).unwrap();
    json["games"].as_array_mut().unwrap().truncate(0);
    std::fs::write(&cut, json.to_string()).unwrap();
    let (ok, resumed) = ladder(&dir, "alphabeta:depth=1");
    assert!(ok, "{resumed}");
    assert!(
        resumed.contains("2 games played now, 14 reused"),
        "{resumed}"
    );

    // Another player reuses the anchors' chain: only its own six pairings are played.
    let (ok, other) = ladder(&dir, "uniform:sims=8");
    assert!(ok, "{other}");
    assert!(other.contains("12 games played now, 10 reused"), "{other}");
    assert!(other.contains("* uniform:sims=8"), "{other}");
}

#[test]
fn a_bad_player_is_refused_in_one_line_naming_it() {
    let tmp = temp_dir();
    let dir = tmp.path().join("ladder");
    let chess = tmp.path().join("chess.safetensors");
    let (ok, out) = NINJAZERO.run(&[
        "model",
        "init",
        "--variant",
        "chess",
        "--preset",
        "tiny",
        "--out",
        text(&chess),
    ]);
    assert!(ok, "{out}");
    let other_variant = format!("mcts:{}:sims=4", text(&chess));
    for (player, expected) in [
        (
            other_variant.as_str(),
            format!("player '{other_variant}': "),
        ),
        (
            "minimax:depth=2",
            "error: player 'minimax:depth=2': unknown kind 'minimax'".to_string(),
        ),
        (
            "uci:nosuch-engine-xyz:depth=1",
            "player 'uci:nosuch-engine-xyz:depth=1': cannot start 'nosuch-engine-xyz': No such file or directory".to_string(),
        ),
        (
            "mcts:missing.safetensors:sims=4",
            "player 'mcts:missing.safetensors:sims=4': checkpoint file 'missing.safetensors' does not exist".to_string(),
        ),
    ] {
        let output = NINJAZERO.output(&[
            "ladder",
            "--variant",
            "insane-ninja",
            "--player",
            player,
            "--dir",
            text(&dir),
        ]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{player}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{player}: {stderr}");
        assert!(stderr.contains(&expected), "{player}: {stderr}");
        assert!(!dir.exists(), "{player}: no games are stored");
    }
}

#[test]
fn an_engine_that_dies_mid_game_loses_and_the_arena_finishes() {
    let tmp = temp_dir();
    // Answers the handshake, plays a Knight move, then exits at its second `go`.
    let script = r#"#!/bin/sh
moves=0
while read -r line; do
  case "$line" in
    uci) echo "id name fake"; echo uciok ;;
    isready) echo readyok ;;
    position*) set -- $line; words=$# ;;
    go*) moves=$((moves + 1))
      if [ $moves -gt 1 ]; then exit 3; fi
      if [ $words -eq 2 ]; then echo "bestmove g1f3"; else echo "bestmove g8f6"; fi ;;
  esac
done
"#;
    let engine = tmp.path().join("dies");
    std::fs::write(&engine, script).unwrap();
    let chmod = std::process::Command::new("chmod")
        .args(["+x", text(&engine)])
        .status();
    assert!(chmod.unwrap().success());
    let player = format!("uci:{}:depth=1", text(&engine));
    let out = tmp.path().join("result.json");
    let (ok, output) = NINJAZERO.run(&[
        "arena",
        "--variant",
        "chess",
        "--a",
        &player,
        "--b",
        "random",
        "--pairs",
        "2",
        "--opening-plies",
        "0",
        "--threads",
        "1",
        "--out",
        text(&out),
    ]);
    assert!(ok, "{output}");
    assert!(output.contains("+0 =0 -4"), "{output}");
    let json = std::fs::read_to_string(&out).unwrap();
    let reason = format!("{player} failed: the engine exited (exit status: 3)");
    assert_eq!(json.matches(&reason).count(), 4, "{json}");
}
