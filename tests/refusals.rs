//! Commands refuse bad files and settings up front, naming what is wrong in words: the
//! checkpoint of `model info`, an existing `model init --out`, the `arena --out` path, a
//! `pipeline` run's settings.

use ninjazero_testkit::{temp_dir, text, Binary};
use std::path::Path;

const NINJAZERO: Binary = Binary(env!("CARGO_BIN_EXE_ninjazero"));

#[test]
fn model_info_names_the_file_once_and_says_what_is_wrong() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let good = dir.join("good.safetensors");
    NINJAZERO.init_tiny_model("insane-ninja", &good);
    let (ok, out) = NINJAZERO.run(&["model", "info", text(&good)]);
    assert!(ok && out.contains("\"variant\": \"insane-ninja\""), "{out}");

    // Not safetensors, beside a valid sidecar.
    let bad = dir.join("bad.safetensors");
    std::fs::write(&bad, [0xff; 64]).unwrap();
    std::fs::copy(dir.join("good.json"), dir.join("bad.json")).unwrap();
    // A directory where the checkpoint should be, also with a sidecar.
    let folder = dir.join("folder.safetensors");
    std::fs::create_dir(&folder).unwrap();
    std::fs::copy(dir.join("good.json"), dir.join("folder.json")).unwrap();
    let missing = dir.join("nonexistent.safetensors");
    for (path, expected) in [
        (
            &bad,
            format!(
                "error: {}: not a safetensors checkpoint (header too large)\n",
                bad.display()
            ),
        ),
        (
            &folder,
            format!(
                "error: {} is a directory, not a checkpoint file\n",
                folder.display()
            ),
        ),
        (
            &missing,
            format!(
                "error: {}: No such file or directory (os error 2)\n",
                missing.display()
            ),
        ),
    ] {
        let (ok, out) = NINJAZERO.run(&["model", "info", text(path)]);
        assert!(!ok);
        assert_eq!(out, expected);
    }
}

#[test]
fn model_init_never_replaces_a_file() {
    let tmp = temp_dir();
    let trained = tmp.path().join("trained.safetensors");
    NINJAZERO.init_tiny_model("insane-ninja", &trained);
    let before = std::fs::read(&trained).unwrap();
    let (ok, out) = NINJAZERO.try_init_tiny_model("chess", &trained);
    assert!(!ok);
    assert_eq!(
        out,
        format!(
            "error: {}: already exists; model init writes an untrained network and never replaces a file (remove it or give another --out)\n",
            trained.display()
        )
    );
    assert_eq!(std::fs::read(&trained).unwrap(), before);
}

#[test]
fn arena_checks_its_out_path_before_playing() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let arena = |out: &Path| {
        NINJAZERO.run(&[
            "arena",
            "--variant",
            "chess",
            "--a",
            "random",
            "--b",
            "random",
            "--pairs",
            "2",
            "--max-plies",
            "40",
            "--out",
            text(out),
        ])
    };
    let (ok, out) = arena(&file.join("result.json"));
    assert!(!ok);
    assert_eq!(
        out,
        format!(
            "error: --out {}: {} is a file, not a directory\n",
            file.join("result.json").display(),
            file.display()
        )
    );
    let (ok, out) = arena(dir);
    assert!(!ok);
    assert!(out.contains("a directory is in the way"), "{out}");
    // A path whose folders do not exist yet is fine: they are made.
    let nested = dir.join("new").join("result.json");
    let (ok, out) = arena(&nested);
    assert!(ok, "{out}");
    assert!(out.contains("random vs random"), "{out}");
    let saved = std::fs::read_to_string(&nested).unwrap();
    assert!(saved.contains("\"games\": 4"), "{saved}");
    // Nothing left behind by the check or the save.
    let names: Vec<_> = std::fs::read_dir(dir.join("new")).unwrap().collect();
    assert_eq!(names.len(), 1);
}

#[test]
fn pipeline_refuses_settings_other_than_its_runs() {
    let tmp = temp_dir();
    let run = tmp.path().join("run");
    // A file where the models folder goes stops every pipeline right after the settings
    // check, before any work.
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("models"), "").unwrap();
    let pipeline = |extra: &[&str]| {
        let mut args = vec!["pipeline", "--run", text(&run), "--device", "cpu"];
        args.extend(extra);
        NINJAZERO.run(&args)
    };
    // The error line (the log lines before it carry the time).
    let error = |out: String| {
        out.lines()
            .find(|l| l.starts_with("error: "))
            .unwrap_or_default()
            .to_string()
    };
    let (ok, first) = pipeline(&["--variant", "chess", "--seed", "0"]);
    assert!(!ok);
    let first = error(first);
    assert!(first.contains("models"), "{first}");
    assert!(run.join("run.toml").is_file());

    let (ok, out) = pipeline(&["--variant", "chess", "--seed", "5"]);
    assert!(!ok);
    assert!(out.contains("--seed 0 → 5"), "{out}");
    assert!(out.contains("another --run"), "{out}");
    let (ok, out) = pipeline(&["--variant", "asylum", "--preset", "cpu"]);
    assert!(!ok);
    assert!(
        out.contains("--variant chess → asylum, --preset demo → cpu"),
        "{out}"
    );
    // The same settings, or none, continue the run (as far as the blocked models folder).
    for extra in [&["--variant", "chess", "--seed", "0"][..], &[]] {
        let (ok, out) = pipeline(extra);
        assert!(!ok);
        assert_eq!(error(out), first);
    }
    // A search number edited out of range in run.toml is named, before any work.
    let settings = std::fs::read_to_string(run.join("run.toml")).unwrap();
    let edited: String = settings
        .lines()
        .map(|line| {
            if line.starts_with("repetition_penalty = ") {
                "repetition_penalty = -0.5\n".to_string()
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    assert_ne!(edited, settings);
    std::fs::write(run.join("run.toml"), edited).unwrap();
    let (ok, out) = pipeline(&[]);
    assert!(!ok);
    let line = error(out);
    assert!(
        line.contains("run.toml")
            && line.contains("repetition_penalty must be a number from 0 to 1, got -0.5"),
        "{line}"
    );
    // So is a budget that no run can keep.
    let budget = settings.replace("[search]", "hours = -1.0\n\n[search]");
    assert_ne!(budget, settings);
    std::fs::write(run.join("run.toml"), budget).unwrap();
    let (ok, out) = pipeline(&[]);
    assert!(!ok);
    let line = error(out);
    assert!(
        line.contains("run.toml") && line.contains("hours must be a number above 0"),
        "{line}"
    );
}

#[test]
fn bad_engine_specs_are_usage_errors() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["arena", "--variant", "chess", "--b", "random", "--a"],
            "alphabeta:depth=0",
        ),
        (
            &["arena", "--variant", "chess", "--a", "random", "--b"],
            "minimax:depth=3",
        ),
        (
            &[
                "selfplay",
                "--variant",
                "chess",
                "--games",
                "1",
                "--out",
                "unused",
                "--player",
            ],
            "uniform:sims=x",
        ),
        (&["play", "--variant", "chess", "--engine"], "alphabeta"),
        (&["uci", "--engine"], "random:depth=2"),
    ];
    for (args, spec) in cases {
        let args: Vec<&str> = args.iter().copied().chain([spec]).collect();
        let output = NINJAZERO.output(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("invalid value"), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("player '{spec}': ")),
            "{args:?}: {stderr}"
        );
    }
    assert!(!Path::new("unused").exists());
}
