//! `ninjazero fit-eval` end to end: a player's games, the fitted evaluation file, an
//! alpha-beta player searching with it, and bad input.

use ninjazero_testkit::{temp_dir, text as path, Binary};

const NINJAZERO: Binary = Binary(env!("CARGO_BIN_EXE_ninjazero"));

#[test]
fn a_fitted_evaluation_is_written_and_played() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let data = dir.join("data");
    let (ok, text) = NINJAZERO.run(&[
        "selfplay",
        "--variant",
        "chess",
        "--player",
        "alphabeta:depth=1",
        "--games",
        "60",
        "--max-plies",
        "200",
        "--out",
        path(&data),
    ]);
    assert!(ok, "{text}");
    let eval = dir.join("chess.eval.json");
    let fit_with = |out: &std::path::Path, variant: &str, extra: &[&str]| {
        let mut args = vec!["fit-eval", "--variant", variant, "--data", path(&data)];
        args.extend(["--out", path(out), "--epochs", "30"]);
        args.extend(extra);
        NINJAZERO.run(&args)
    };
    let fit = |out: &std::path::Path, variant: &str| fit_with(out, variant, &[]);
    let (ok, report) = fit(&eval, "chess");
    assert!(ok, "{report}");
    assert!(report.contains("held-out loss: tempo alone"), "{report}");
    assert!(report.contains("Queen"), "{report}");
    assert!(eval.is_file());
    let (ok, arena) = NINJAZERO.run(&[
        "arena",
        "--variant",
        "chess",
        "--a",
        &format!("alphabeta:{}:depth=1", eval.display()),
        "--b",
        "random",
        "--pairs",
        "2",
        "--max-plies",
        "60",
    ]);
    assert!(ok, "{arena}");
    assert!(
        arena.contains("alphabeta:chess:depth=1 vs random"),
        "{arena}"
    );

    // Several square penalties: each fitted, the lowest held-out loss kept and reported.
    let auto = dir.join("auto.eval.json");
    let (ok, report) = fit_with(&auto, "chess", &["--square-l2", "auto"]);
    assert!(ok, "{report}");
    assert!(
        report.contains("kept (held-out loss by penalty: 0.01 "),
        "{report}"
    );
    assert!(report.contains(", 0.3 "), "{report}");
    // A share of the player's search values in the targets: said, and kept in the file.
    let mixed = dir.join("mixed.eval.json");
    let (ok, report) = fit_with(&mixed, "chess", &["--value-target-mix", "0.5"]);
    assert!(ok, "{report}");
    assert!(
        report.contains("fitted targets: 0.5 of the search value"),
        "{report}"
    );
    let stored = std::fs::read_to_string(&mixed).unwrap();
    assert!(stored.contains("\"value_target_mix\": 0.5"), "{stored}");
    let bad = dir.join("bad.eval.json");
    let (ok, refused) = fit_with(&bad, "chess", &["--square-l2", "0.1,-2"]);
    assert!(!ok);
    assert!(
        refused.contains("a square penalty must be a number from 0 to 100, got -2"),
        "{refused}"
    );

    // Refused before any work, saying why: the file name, the data's variant.
    let (ok, refused) = fit(&dir.join("chess.json"), "chess");
    assert!(!ok);
    assert!(refused.contains("must end in .eval.json"), "{refused}");
    let (ok, refused) = fit(&dir.join("ninja.eval.json"), "insane-ninja");
    assert!(!ok);
    assert!(refused.contains("chess"), "{refused}");
    assert!(!dir.join("ninja.eval.json").exists());
    // A directory named twice, a missing one, one without games, an unwritable --out.
    let fit_on = |data: &[&std::path::Path], out: &std::path::Path| {
        let mut args = vec!["fit-eval", "--variant", "chess", "--epochs", "30"];
        for d in data {
            args.extend(["--data", path(d)]);
        }
        args.extend(["--out", path(out)]);
        NINJAZERO.run(&args)
    };
    let empty = dir.join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = dir.join("x.eval.json");
    for (data, says) in [
        (vec![data.as_path(), data.as_path()], "listed twice"),
        (
            vec![data.as_path(), &dir.join("missing")],
            "missing: No such file",
        ),
        (vec![empty.as_path()], "holds no games"),
    ] {
        let (ok, refused) = fit_on(&data, &out);
        assert!(!ok, "{data:?}: {refused}");
        assert!(refused.contains(says), "{data:?}: {refused}");
        assert_eq!(refused.matches("error:").count(), 1, "said once: {refused}");
    }
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let (ok, refused) = fit_on(&[data.as_path()], &file.join("b.eval.json"));
    assert!(!ok);
    assert!(refused.contains("is a file, not a directory"), "{refused}");
    assert!(
        !refused.contains("fitted on"),
        "refused before the fit: {refused}"
    );
    assert!(!out.exists());
}
