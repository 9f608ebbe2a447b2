//! `ninjazero values` end to end: a small self-play dataset, self-consistent handicap
//! rounds, the report files, a rerun that reuses the games, and bad input.

use ninjazero_testkit::{temp_dir, text as path, Binary};

const NINJAZERO: Binary = Binary(env!("CARGO_BIN_EXE_ninjazero"));

#[test]
fn values_writes_its_report_and_reuses_played_games() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let (data, out) = (dir.join("data"), dir.join("out"));
    let (ok, text) = NINJAZERO.run(&[
        "selfplay",
        "--variant",
        "chess",
        "--games",
        "24",
        "--sims",
        "8",
        "--cheap-sims",
        "4",
        "--max-plies",
        "80",
        "--out",
        path(&data),
        "--device",
        "cpu",
    ]);
    assert!(ok, "{text}");
    let values = [
        "values",
        "--variant",
        "chess",
        "--data",
        path(&data),
        "--out",
        path(&out),
        "--player",
        "alphabeta:depth=1",
        "--rounds",
        "2",
        // Enough long games for every value to pass the minimum of data.
        "--games",
        "30",
        "--max-plies",
        "300",
        "--bootstrap",
        "20",
        "--device",
        "cpu",
    ];
    let (ok, report) = NINJAZERO.run(&values);
    assert!(ok, "{report}");
    for file in ["values.md", "values.csv", "values.png", "match-values.txt"] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    let option = std::fs::read_to_string(out.join("match-values.txt")).unwrap();
    assert!(option.starts_with("P=1.00,Q="), "{option}");
    assert!(report.contains("| piece | method | value | 95 % interval | sample | reference |"));
    assert!(
        report.contains("Round 1: `alphabeta:depth=1:values=P=1.00,Q=1.00,R=1.00,B=1.00,N=1.00`")
    );
    assert!(report.contains("Round 2: `alphabeta:depth=1:values=P=1.00,"));
    assert!(report.contains("## Which pieces the data tells apart"));
    let csv = std::fs::read_to_string(out.join("values.csv")).unwrap();
    assert!(csv.starts_with("variant,piece,method,value,low,high,samples,unit,reference\n"));
    assert!(csv.contains("chess,Pawn,handicap matches,1.000"), "{csv}");
    // 3 Pawn odds and 4 pieces per round, saved.
    for round in ["round-1", "round-2"] {
        let saved = std::fs::read_dir(out.join("matches").join(round))
            .unwrap()
            .count();
        assert_eq!(saved, 7, "{round}");
    }
    // A rerun reads the games back: the same report.
    let (ok, again) = NINJAZERO.run(&values);
    assert!(ok, "{again}");
    let table = |r: &str| {
        r.lines()
            .filter(|l| l.starts_with("| "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(table(&again), table(&report));

    // A pipeline generation's layout (a directory of shards) and a second dataset read as
    // one: the regression counts both.
    let generation = dir.join("gen-0001");
    for (shard, file) in std::fs::read_dir(&data).unwrap().enumerate() {
        let file = file.unwrap().path();
        let shard_dir = generation.join(format!("shard-{shard:04}"));
        std::fs::create_dir_all(&shard_dir).unwrap();
        std::fs::copy(&file, shard_dir.join(file.file_name().unwrap())).unwrap();
    }
    let (ok, both) = NINJAZERO.run(&[
        "values",
        "--variant",
        "chess",
        "--data",
        path(&generation),
        "--data",
        path(&data),
        "--games",
        "0",
        "--bootstrap",
        "20",
        "--out",
        path(&dir.join("both")),
    ]);
    assert!(ok, "{both}");
    let named = format!("Data: {}, {} (48 games)", path(&generation), path(&data));
    assert!(both.contains(&named), "{both}");

    // The same matches shared by two jobs (`worker match values`, no dataset needed): one
    // wave of jobs per round, then `values` merges their parts into the same values.
    let shared = dir.join("shared");
    let mut matches_only: Vec<&str> = values[1..]
        .iter()
        .copied()
        .filter(|&a| a != "--data" && a != path(&data))
        .collect();
    let out_at = matches_only.iter().position(|&a| a == path(&out)).unwrap();
    matches_only[out_at] = path(&shared);
    for (wave, expected) in ["round 1: ", "round 2: ", "every round is complete"]
        .iter()
        .enumerate()
    {
        for shard in ["0", "1"] {
            let job = [
                &[
                    "worker", "match", "values", "--shard", shard, "--shards", "2",
                ],
                &matches_only[..],
            ]
            .concat();
            let (ok, said) = NINJAZERO.run(&job);
            assert!(ok, "wave {wave}: {said}");
            assert!(said.contains(expected), "wave {wave}: {said}");
        }
    }
    let parts = std::fs::read_dir(shared.join("matches/round-2"))
        .unwrap()
        .count();
    assert_eq!(parts, 14, "2 parts of each of the 7 handicaps");
    let (ok, merged) = NINJAZERO.run(&[&["values"], &matches_only[..]].concat());
    assert!(ok, "{merged}");
    assert!(merged.contains("Data: none (matches only)"), "{merged}");
    let match_rows = |r: &str| {
        r.lines()
            .filter(|l| l.contains("| handicap matches |"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(match_rows(&merged), match_rows(&report));
    assert_eq!(
        std::fs::read_to_string(shared.join("match-values.txt")).unwrap(),
        option
    );
}

#[test]
fn values_rejects_bad_input_with_clear_messages() {
    let tmp = temp_dir();
    let missing = tmp.path().join("no-such-dir");
    let out = tmp.path().join("out");
    let values = ["values", "--variant", "chess", "--data", path(&missing)];
    let (ok, text) = NINJAZERO.run(&[&values[..], &["--out", path(&out)]].concat());
    assert!(!ok);
    assert!(text.contains("no-such-dir"), "{text}");
    assert!(!out.exists(), "a failed study leaves no output directory");
    let (ok, text) = NINJAZERO.run(&[
        "values",
        "--variant",
        "chess",
        "--data",
        path(&missing),
        "--rounds",
        "2",
        "--player",
        "random",
    ]);
    assert!(!ok);
    assert!(
        text.contains("2 rounds feed measured values back into an alpha-beta player")
            && text.contains("(got 'random')"),
        "{text}"
    );
    // A share of matches that are not asked for, and a shard past the last.
    for (args, expected) in [
        (["--games", "0", "--shard", "0"], "nothing to measure"),
        (
            ["--games", "8", "--shard", "2"],
            "shard 2 of 2: the shard must be below",
        ),
    ] {
        let (ok, text) = NINJAZERO.run(
            &[
                &[
                    "worker",
                    "match",
                    "values",
                    "--variant",
                    "chess",
                    "--shards",
                    "2",
                ],
                &args[..],
                &["--out", path(&out)],
            ]
            .concat(),
        );
        assert!(!ok, "{text}");
        assert!(text.contains(expected), "{text}");
        assert!(!out.exists(), "{text}");
    }
}

#[test]
fn values_on_two_games_says_not_enough_data_and_gives_no_verdict() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let (data, out) = (dir.join("data"), dir.join("out"));
    let (ok, text) = NINJAZERO.run(&[
        "selfplay",
        "--variant",
        "chess",
        "--games",
        "2",
        "--sims",
        "8",
        "--cheap-sims",
        "4",
        "--max-plies",
        "80",
        "--out",
        path(&data),
        "--device",
        "cpu",
    ]);
    assert!(ok, "{text}");
    let (ok, report) = NINJAZERO.run(&[
        "values",
        "--variant",
        "chess",
        "--data",
        path(&data),
        "--out",
        path(&out),
        "--player",
        "alphabeta:depth=1",
        "--rounds",
        "2",
        "--games",
        "2",
        "--max-plies",
        "20",
        "--bootstrap",
        "20",
        "--device",
        "cpu",
    ]);
    // Every method says why it has no values, and the command still reports.
    assert!(ok, "{report}");
    assert!(
        report.contains("No result: not enough data to measure the Pawn, the unit (2 games, Pawn"),
        "{report}"
    );
    assert!(
        report.contains("No result: round 1: not enough data to measure the Pawn, the unit (6 games, Pawn given as odds in 6; 10 needed)"),
        "{report}"
    );
    assert!(!out.join("match-values.txt").exists());
    assert!(
        report.contains("No method has values for two pieces besides the Pawn"),
        "{report}"
    );
    for verdict in ["worth more by", "cannot tell apart"] {
        assert!(!report.contains(verdict), "{report}");
    }
    let csv = std::fs::read_to_string(out.join("values.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1, "{csv}");
}
