//! `ninjazero selfplay` and `ninjazero data` on dataset directories that are missing,
//! empty, of another variant, unwritable or written by two processes at once.

use ninjazero_testkit::{outcome, sorted_game_ids, temp_dir, text as path, trained_window, Binary};
use std::path::{Path, PathBuf};

const NINJAZERO: Binary = Binary(env!("CARGO_BIN_EXE_ninjazero"));

/// A quick model-free self-play command line.
fn selfplay_args<'a>(variant: &'a str, games: &'a str, out: &'a Path) -> Vec<&'a str> {
    vec![
        "selfplay",
        "--variant",
        variant,
        "--games",
        games,
        "--sims",
        "4",
        "--cheap-sims",
        "2",
        "--max-plies",
        "20",
        "--concurrency",
        "4",
        "--threads",
        "1",
        "--device",
        "cpu",
        "--out",
        path(out),
    ]
}

#[test]
fn data_commands_refuse_a_missing_or_empty_directory() {
    let tmp = temp_dir();
    let missing = tmp.path().join("missing");
    for command in ["inspect", "pgn"] {
        let (ok, text) = NINJAZERO.run(&["data", command, path(&missing)]);
        assert!(!ok, "data {command}: {text}");
        assert!(
            text.contains(&format!("{}: no such directory", missing.display())),
            "data {command}: {text}"
        );
    }
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let pgn = empty.join("games.pgn");
    for args in [
        vec!["data", "inspect", path(&empty)],
        vec!["data", "pgn", path(&empty), "--out", path(&pgn)],
    ] {
        let (ok, text) = NINJAZERO.run(&args);
        assert!(!ok, "{args:?}: {text}");
        assert!(text.contains("holds no games"), "{args:?}: {text}");
    }
    assert!(!pgn.exists(), "no empty PGN file is left behind");
}

#[test]
fn a_directory_of_shard_directories_reads_as_one_dataset() {
    let tmp = temp_dir();
    let generation = tmp.path().join("gen-0000");
    for (shard, games) in [("shard-0000", "2"), ("shard-0001", "3")] {
        let (ok, text) = NINJAZERO.run(&selfplay_args("chess", games, &generation.join(shard)));
        assert!(ok, "{text}");
    }
    let (ok, text) = NINJAZERO.run(&["data", "inspect", path(&generation)]);
    assert!(ok, "{text}");
    assert!(text.contains("games:        5"), "{text}");
    // Files of its own come first: the shards are then not read.
    let (ok, text) = NINJAZERO.run(&selfplay_args("chess", "1", &generation));
    assert!(ok, "{text}");
    let (ok, text) = NINJAZERO.run(&["data", "inspect", path(&generation)]);
    assert!(ok, "{text}");
    assert!(text.contains("games:        1"), "{text}");
}

#[test]
fn selfplay_refuses_a_directory_of_another_variant() {
    let tmp = temp_dir();
    let dir = tmp.path().join("variant");
    let (ok, text) = NINJAZERO.run(&selfplay_args("chess", "2", &dir));
    assert!(ok, "{text}");
    let chess_files = ninjazero_data::dataset_files(&dir).unwrap();
    let (ok, text) = NINJAZERO.run(&selfplay_args("insane-ninja", "4", &dir));
    assert!(!ok, "{text}");
    let name = chess_files[0].file_name().unwrap().to_str().unwrap();
    for part in [name, "holds chess games, expected insane-ninja"] {
        assert!(text.contains(part), "{text}");
    }
    assert!(!text.contains("new games"), "{text}");
    assert_eq!(ninjazero_data::dataset_files(&dir).unwrap(), chess_files);
    let (ok, text) = NINJAZERO.run(&["data", "inspect", path(&dir)]);
    assert!(ok, "{text}");
    assert!(text.contains("games:        2"), "{text}");
}

#[test]
fn selfplay_refuses_an_unwritable_output_before_playing() {
    let tmp = temp_dir();
    let parent = tmp.path().join("unwritable");
    std::fs::write(&parent, b"a file where a directory should be").unwrap();
    let mut outputs = vec![parent.join("data")];
    if cfg!(target_os = "linux") {
        // Exists, and takes no new files even for root.
        outputs.push(PathBuf::from("/proc/self"));
    }
    for out in outputs {
        let (ok, text) = NINJAZERO.run(&selfplay_args("chess", "2", &out));
        assert!(!ok, "{text}");
        assert!(text.contains(path(&out)), "{text}");
    }
    std::fs::remove_file(parent).unwrap();
}

#[test]
fn two_selfplay_processes_on_one_directory_store_each_game_once() {
    let tmp = temp_dir();
    let dir = tmp.path().join("two");
    let games = 6;
    let count = games.to_string();
    let args = selfplay_args("ninjutsu", &count, &dir);
    let children: Vec<_> = (0..2)
        .map(|_| {
            NINJAZERO
                .command(&args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("the ninjazero binary starts")
        })
        .collect();
    for child in children {
        let (ok, text) = outcome(child.wait_with_output().unwrap());
        // Locked out at once, or (started apart) nothing left to play.
        assert!(
            ok || text.contains(&format!(
                "{} is being written by another selfplay process",
                dir.display()
            )),
            "{text}"
        );
    }
    assert_eq!(
        sorted_game_ids(&dir, None),
        (0..games).collect::<Vec<u64>>()
    );
}

#[test]
fn selfplay_help_documents_the_flush_interval() {
    let (ok, text) = NINJAZERO.run(&["selfplay", "--help"]);
    assert!(ok, "{text}");
    assert!(text.contains("--flush-seconds"), "{text}");
    assert!(text.contains("[default: 120]"), "{text}");
}

/// Eight quick insane-ninja games and an untrained tiny network in `dir`: what the
/// training tests train on and from.
fn games_and_tiny_network(dir: &Path) -> (PathBuf, PathBuf) {
    let data = dir.join("games");
    let (ok, text) = NINJAZERO.run(&selfplay_args("insane-ninja", "8", &data));
    assert!(ok, "{text}");
    let init = dir.join("init.safetensors");
    NINJAZERO.init_tiny_model("insane-ninja", &init);
    (data, init)
}

/// `train --preset smoke` for `steps` steps from `init` on `data`, into `dir/NAME` (work)
/// and `dir/NAME.safetensors`: the command line and the checkpoint it writes.
fn smoke_training(
    dir: &Path,
    data: &Path,
    init: &Path,
    name: &str,
    steps: &str,
) -> (Vec<String>, PathBuf) {
    let out = dir.join(format!("{name}.safetensors"));
    let work = dir.join(name);
    let args = [
        "train",
        "--variant",
        "insane-ninja",
        "--data",
        path(data),
        "--init",
        path(init),
        "--preset",
        "smoke",
        "--steps",
        steps,
        "--device",
        "cpu",
        "--out",
        path(&out),
        "--work",
        path(&work),
    ]
    .map(String::from)
    .to_vec();
    (args, out)
}

/// The binary pins libtorch's CPU kernels itself (`NINJAZERO_CPU_KERNELS`, AVX2 by default),
/// which only works if it does so before libtorch first runs a kernel: a network trained
/// with the switches set in the environment beforehand (and the binary told to leave them)
/// must be the same byte for byte. (On an AVX-512 machine the machine's own kernels train
/// another one.) A bad value is one error line.
#[test]
fn training_is_the_same_with_the_cpu_kernels_pinned_from_outside() {
    use ninjazero_model::kernels::AVX2_SWITCHES;
    use ninjazero_model::CPU_KERNELS_VAR;
    let tmp = temp_dir();
    let dir = tmp.path();
    let (data, init) = games_and_tiny_network(dir);
    let train = |name: &str, env: &[(&str, &str)]| {
        let (args, out) = smoke_training(dir, &data, &init, name, "10");
        let mut command = NINJAZERO.command(&args);
        command.env_remove(CPU_KERNELS_VAR);
        for (switch, _) in AVX2_SWITCHES {
            command.env_remove(switch);
        }
        command.envs(env.iter().copied());
        let (ok, text) = outcome(command.output().unwrap());
        assert!(ok, "{text}");
        std::fs::read(out).unwrap()
    };
    let pinned_inside = train("inside", &[]);
    let mut outside = AVX2_SWITCHES.to_vec();
    outside.push((CPU_KERNELS_VAR, "native"));
    assert!(pinned_inside == train("outside", &outside));

    let refused = NINJAZERO
        .command(&["model", "info", path(&init)])
        .env(CPU_KERNELS_VAR, "avx512")
        .output()
        .unwrap();
    assert_eq!(
        outcome(refused),
        (
            false,
            format!(
                "error: {CPU_KERNELS_VAR}=\"avx512\": expected avx2 (the default: the same results on every x86-64 machine with AVX2) or native (the machine's widest kernels)\n"
            )
        )
    );
}

/// `train --window N` trains on the newest N positions, or on all of them when there are
/// fewer; without it the preset's window (at least 500 positions for `smoke`) takes them all.
#[test]
fn train_takes_the_window_it_is_given() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let (data, init) = games_and_tiny_network(dir);
    let train = |name: &str, window: Option<&str>| {
        let (mut args, _) = smoke_training(dir, &data, &init, name, "2");
        args.extend(
            window
                .map(|w| ["--window".to_string(), w.to_string()])
                .into_iter()
                .flatten(),
        );
        let (ok, text) = NINJAZERO.run(&args);
        assert!(ok, "{text}");
        trained_window(&text).unwrap_or_else(|| panic!("no window in {text}"))
    };
    let (window, total) = train("preset", None);
    assert!(total > 50 && window == total, "{window} of {total}");
    assert_eq!(train("newest-50", Some("50")), (50, total));
    assert_eq!(train("more-than-all", Some("1000000")), (total, total));
}
