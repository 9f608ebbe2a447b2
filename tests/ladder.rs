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
    NINJAZERO.run(&[&["ladder"], &ladder_args(dir, player, "2")[..]].concat())
}

/// A tiny ladder's arguments, with `games` games per pairing.
fn ladder_args<'a>(dir: &'a Path, player: &'a str, games: &'a str) -> Vec<&'a str> {
    vec![
        "--variant",
        "insane-ninja",
        "--player",
        player,
        "--games",
        games,
        "--ms",
        "5",
        "--max-plies",
        "40",
        "--threads",
        "2",
        "--dir",
        text(dir),
    ]
}

/// The games of a pairing's files (the whole one, or the parts in pair order).
fn pairing_games(dir: &Path, stem: &str) -> Vec<serde_json::Value> {
    let mut files: Vec<(u64, Vec<serde_json::Value>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.starts_with(&format!("{stem}.")) && name.ends_with(".json")
        })
        .map(|path| {
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            let first = json["first_pair"].as_u64().unwrap();
            (first, json["games"].as_array().unwrap().clone())
        })
        .collect();
    files.sort_by_key(|(first, _)| *first);
    files.into_iter().flat_map(|(_, games)| games).collect()
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
    // Its games against each of the five other anchors, 2 each, from its side.
    let results: Vec<&str> = out
        .lines()
        .skip_while(|l| *l != "alphabeta:depth=1 against each opponent:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert_eq!(results.len(), 5, "{out}");
    for line in &results {
        let games: usize = line
            .split_whitespace()
            .skip(1)
            .map(|n| n[1..].parse::<usize>().unwrap())
            .sum();
        assert_eq!(games, 2, "{line}");
    }
    assert!(!results.iter().any(|l| l.contains("depth=1 ")), "{out}");
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

    // A stored game whose result is no result is refused, naming the object, not scored.
    let cut = dir.join("alphabeta_depth=1--vs--random.json");
    let kept = std::fs::read_to_string(&cut).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&kept).unwrap();
    json["games"][0]["result"] = "garbage".into();
    std::fs::write(&cut, json.to_string()).unwrap();
    let (ok, refused) = ladder(&dir, "alphabeta:depth=1");
    assert!(!ok, "{refused}");
    assert!(
        refused.contains("alphabeta_depth=1--vs--random.json") && refused.contains("garbage"),
        "{refused}"
    );
    std::fs::write(&cut, &kept).unwrap();

    // A pairing whose games were lost (as if the ladder had been killed before storing
    // them): a rerun plays only its pair again.
    let mut json: serde_json::Value = serde_json::from_str(&kept).unwrap();
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
fn shard_jobs_store_the_ladders_games_and_the_ladder_merges_them() {
    let tmp = temp_dir();
    let (shared, alone) = (tmp.path().join("shared"), tmp.path().join("alone"));
    let player = "alphabeta:depth=1";
    // 3 openings per pairing, one per job.
    for shard in ["0", "1", "2"] {
        let job = [
            &[
                "worker", "match", "ladder", "--shard", shard, "--shards", "3",
            ],
            &ladder_args(&shared, player, "6")[..],
        ]
        .concat();
        let (ok, said) = NINJAZERO.run(&job);
        assert!(ok, "{said}");
        assert!(
            said.contains(&format!(
                "ladder shard {shard} of 3: 16 games played now, 0 were stored"
            )),
            "{said}"
        );
        // Run again (a duplicated array task): nothing is played.
        if shard == "1" {
            let (ok, again) = NINJAZERO.run(&job);
            assert!(ok, "{again}");
            assert!(
                again.contains("0 games played now, 16 were stored"),
                "{again}"
            );
        }
    }
    let merge = [&["ladder"], &ladder_args(&shared, player, "6")[..]].concat();
    let (ok, merged) = NINJAZERO.run(&merge);
    assert!(ok, "{merged}");
    assert!(merged.contains("0 games played now, 48 reused"), "{merged}");
    assert!(merged.contains("* alphabeta:depth=1"), "{merged}");

    // One job alone plays the same games where the players are not limited by time.
    let (ok, single) =
        NINJAZERO.run(&[&["ladder"], &ladder_args(&alone, player, "6")[..]].concat());
    assert!(ok, "{single}");
    assert!(single.contains("48 games played now, 0 reused"), "{single}");
    for stem in [
        "alphabeta_depth=1--vs--random",
        "alphabeta_depth=2--vs--alphabeta_depth=3",
    ] {
        let games = pairing_games(&shared, stem);
        assert_eq!(games.len(), 6, "{stem}");
        assert_eq!(games, pairing_games(&alone, stem), "{stem}");
    }

    // A job that was killed before storing: the ladder plays only its games.
    std::fs::remove_file(shared.join("alphabeta_depth=1--vs--random.part-2-3.json")).unwrap();
    let (ok, resumed) = NINJAZERO.run(&merge);
    assert!(ok, "{resumed}");
    assert!(
        resumed.contains("2 games played now, 46 reused"),
        "{resumed}"
    );
}

#[test]
fn a_bad_player_is_refused_in_one_line_naming_it() {
    let tmp = temp_dir();
    let dir = tmp.path().join("ladder");
    let chess = tmp.path().join("chess.safetensors");
    NINJAZERO.init_tiny_model("chess", &chess);
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
