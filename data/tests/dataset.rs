//! Integration tests: round trips through real files, atomicity, refusals, summary, PGN and
//! reading the files with pyarrow.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ninjazero_data::{
    column_names, export_pgn, finished_game_ids, read_file_meta, read_games, summarize, DataError,
    DatasetWriter, FileMeta, FlushPolicy, GameRecord, SCHEMA_VERSION,
};
use ninjazero_rules::{Color, Position, Variant};
use ninjazero_testkit::{outcome, random_game, scripted_game, temp_dir, venv_python};

fn meta(variant: Variant) -> FileMeta {
    FileMeta {
        variant,
        search_settings: ninjazero_data::GameSettings::Player {
            player: "alphabeta:depth=2".to_string(),
            opening_plies: 4,
            max_plies: 300,
            search_values: true,
        },
        seed: 12345,
        model_id: "uniform".to_string(),
    }
}

/// A legal game of `plies` random moves from `start_fen` with synthetic search targets (a
/// full search every other ply) and the given result.
fn play_game(
    variant: Variant,
    start_fen: &str,
    game_id: u64,
    plies: u16,
    winner: Option<Color>,
    termination: &str,
    would_resign: Option<(Color, u16)>,
) -> GameRecord {
    let start = Position::from_fen(variant, start_fen).unwrap();
    GameRecord {
        winner,
        termination: termination.to_string(),
        model_id: "uniform".to_string(),
        resignation_disabled: would_resign.is_some(),
        would_resign,
        ..random_game(&start, game_id, plies, game_id)
    }
}

fn drops_games() -> Vec<GameRecord> {
    let v = Variant::InsaneNinjaDrops;
    vec![
        play_game(
            v,
            v.start_fen(),
            1,
            13,
            Some(Color::White),
            "resignation",
            None,
        ),
        // Black would have resigned and drew: a false resignation.
        play_game(
            v,
            v.start_fen(),
            2,
            9,
            None,
            "adjudication",
            Some((Color::Black, 5)),
        ),
        // White would have resigned and lost: a correct one.
        play_game(
            v,
            v.start_fen(),
            3,
            20,
            Some(Color::Black),
            "resignation",
            Some((Color::White, 7)),
        ),
    ]
}

/// Writes `games` into `dir` and returns the files this added, sorted.
fn write_dataset(dir: &Path, games: &[GameRecord], games_per_file: usize) -> Vec<PathBuf> {
    let before = if dir.exists() {
        arrow_files(dir)
    } else {
        Vec::new()
    };
    let mut writer = DatasetWriter::create(dir, meta(games[0].variant), games_per_file).unwrap();
    for game in games {
        writer.add_game(game.clone()).unwrap();
    }
    writer.finish().unwrap();
    arrow_files(dir)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect()
}

fn arrow_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "arrow"))
        .collect();
    files.sort();
    files
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn round_trip_ids_and_summary() {
    let tmp = temp_dir();
    let dir = tmp.path().join("round-trip");
    let games = drops_games();
    let files = write_dataset(&dir, &games, 2);
    assert_eq!(files.len(), 2, "2 games per file, 3 games: {files:?}");
    for f in &files {
        let name = file_name(f);
        assert!(name.starts_with("games-0000000"), "{name}");
        assert!(
            name.ends_with(&format!("-{}.arrow", std::process::id())),
            "{name}"
        );
    }
    assert!(file_name(&files[0]).starts_with("games-00000001-"));
    assert!(file_name(&files[1]).starts_with("games-00000003-"));
    assert!(fs::read_dir(&dir).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with(".tmp")));

    assert_eq!(
        read_games(&dir, Some(Variant::InsaneNinjaDrops)).unwrap(),
        games
    );
    assert_eq!(read_games(&dir, None).unwrap(), games);
    assert_eq!(
        finished_game_ids(&dir).unwrap(),
        HashSet::from([1u64, 2, 3])
    );
    assert!(finished_game_ids(&dir.join("missing")).unwrap().is_empty());
    assert!(read_games(&dir.join("missing"), None).unwrap().is_empty());

    let file_meta = read_file_meta(&files[0]).unwrap();
    assert_eq!(file_meta, meta(Variant::InsaneNinjaDrops));

    let s = summarize(&dir).unwrap();
    assert_eq!(s.files, 2);
    assert_eq!(s.variants, vec![(Variant::InsaneNinjaDrops, 3)]);
    assert_eq!(s.games, 3);
    assert_eq!(s.positions, 13 + 9 + 20);
    assert_eq!((s.white_wins, s.draws, s.black_wins), (1, 1, 1));
    assert_eq!((s.min_length, s.max_length), (9, 20));
    assert!((s.mean_length - 42.0 / 3.0).abs() < 1e-9);
    assert_eq!(
        s.terminations,
        vec![
            ("resignation".to_string(), 2),
            ("adjudication".to_string(), 1)
        ]
    );
    assert_eq!(s.full_search_positions, 7 + 5 + 10);
    assert!((s.full_search_share - 22.0 / 42.0).abs() < 1e-9);
    assert_eq!(s.resignation_disabled_games, 2);
    assert_eq!(s.would_resign_games, 2);
    assert_eq!(s.false_resignations, 1);
    assert_eq!(s.false_resignation_rate, Some(0.5));
    let report = s.to_string();
    for needle in [
        "games:        3",
        "positions:    42",
        "White wins 1",
        "min 9, mean 14.0, max 20",
        "resignation",
        "false resignations 1 (50.0 %)",
    ] {
        assert!(report.contains(needle), "{needle:?} not in\n{report}");
    }

    // A restarted writer never overwrites: it adds files next to the old ones.
    let more = vec![play_game(
        Variant::InsaneNinjaDrops,
        Variant::InsaneNinjaDrops.start_fen(),
        4,
        3,
        None,
        "100-ply rule",
        None,
    )];
    write_dataset(&dir, &more, 2);
    assert_eq!(arrow_files(&dir).len(), 3);
    assert_eq!(finished_game_ids(&dir).unwrap().len(), 4);
}

#[test]
fn writer_refuses_bad_games() {
    let tmp = temp_dir();
    let dir = tmp.path().join("refuse-games");
    let mut writer = DatasetWriter::create(&dir, meta(Variant::Asylum), 10).unwrap();
    let other = drops_games().remove(0);
    let err = writer.add_game(other).unwrap_err();
    assert!(
        matches!(err, DataError::InvalidGame { game_id: 1, .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("variant insane-ninja-drops in an asylum dataset"),
        "{err}"
    );
    let v = Variant::Asylum;
    let game = play_game(v, v.start_fen(), 9, 4, None, "adjudication", None);
    writer.add_game(game.clone()).unwrap();
    assert!(writer.add_game(game.clone()).is_err(), "duplicate id");
    let mut empty = game.clone();
    empty.game_id = 10;
    empty.positions.clear();
    assert!(writer.add_game(empty).is_err(), "no positions");
    assert_eq!(writer.buffered_games(), 1);
    writer.finish().unwrap();
    assert_eq!(read_games(&dir, Some(v)).unwrap(), vec![game]);
    assert!(DatasetWriter::create(&dir, meta(v), 0).is_err());
}

#[test]
fn dropped_writer_writes_its_buffer() {
    let tmp = temp_dir();
    let dir = tmp.path().join("drop");
    let v = Variant::Asylum;
    let game = play_game(v, v.start_fen(), 5, 3, None, "adjudication", None);
    {
        let mut writer = DatasetWriter::create(&dir, meta(v), 10).unwrap();
        writer.add_game(game.clone()).unwrap();
    }
    assert_eq!(read_games(&dir, Some(v)).unwrap(), vec![game]);
}

#[test]
fn stale_tmp_files_are_ignored_and_removed() {
    let tmp = temp_dir();
    let dir = tmp.path().join("stale");
    fs::create_dir_all(&dir).unwrap();
    let games = drops_games();
    write_dataset(&dir, &games[..1], 1);
    // Left by killed writers: whatever pid a name carries (pid 1 is alive; another host's
    // pids cannot be checked), the writer holding the lock is the only one.
    let stale = [
        dir.join("games-x.arrow.tmp"),
        dir.join("games-00000001-1700000000000-1.arrow.tmp"),
        dir.join(format!(
            "games-00000001-1700000000000-{}.arrow.tmp",
            std::process::id()
        )),
        dir.join("junk.tmp"),
    ];
    for path in &stale {
        fs::write(path, b"ARROW1 partial").unwrap();
    }
    assert_eq!(read_games(&dir, None).unwrap(), games[..1]);
    assert_eq!(finished_game_ids(&dir).unwrap().len(), 1);
    assert_eq!(summarize(&dir).unwrap().games, 1);

    write_dataset(&dir, &games[1..], 2);
    for path in &stale {
        assert!(!path.exists(), "{path:?} is still there");
    }
    assert_eq!(read_games(&dir, None).unwrap(), games);
}

#[test]
fn a_second_writer_on_a_directory_fails_at_once() {
    let tmp = temp_dir();
    let dir = tmp.path().join("lock");
    let v = Variant::Asylum;
    let first = DatasetWriter::create(&dir, meta(v), 10).unwrap();
    // From another thread too: the lock belongs to the open file, not to the process.
    let second = std::thread::scope(|s| {
        s.spawn(|| DatasetWriter::create(&dir, meta(v), 10))
            .join()
            .unwrap()
    });
    let Err(err) = second else {
        panic!("a second writer got the directory");
    };
    assert!(matches!(err, DataError::Locked { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "{} is being written by another selfplay process",
            dir.display()
        )
    );
    assert!(DatasetWriter::resume(&dir, meta(v), policy(10, None)).is_err());
    drop(first);
    // Released with the writer.
    DatasetWriter::create(&dir, meta(v), 10).unwrap();
}

fn policy(games_per_file: usize, max_age: Option<std::time::Duration>) -> FlushPolicy {
    FlushPolicy {
        games_per_file,
        max_age,
    }
}

#[test]
fn resume_returns_the_ids_and_refuses_files_made_otherwise() {
    let tmp = temp_dir();
    let dir = tmp.path().join("resume");
    let games = drops_games();
    let v = Variant::InsaneNinjaDrops;
    let (writer, ids) = DatasetWriter::resume(&dir, meta(v), policy(2, None)).unwrap();
    assert!(ids.is_empty());
    drop(writer);
    let files = write_dataset(&dir, &games, 2);
    let (writer, ids) = DatasetWriter::resume(&dir, meta(v), policy(2, None)).unwrap();
    assert_eq!(ids, HashSet::from([1, 2, 3]));
    drop(writer);

    let err = DatasetWriter::resume(&dir, meta(Variant::Chess), policy(2, None))
        .err()
        .unwrap();
    assert!(matches!(err, DataError::WrongVariant { .. }), "{err}");
    let text = err.to_string();
    for part in [file_name(&files[0]).as_str(), "insane-ninja-drops", "chess"] {
        assert!(text.contains(part), "{text}");
    }
    let other_seed = FileMeta {
        seed: 99,
        ..meta(v)
    };
    let err = DatasetWriter::resume(&dir, other_seed, policy(2, None))
        .err()
        .unwrap();
    assert!(
        matches!(
            err,
            DataError::OtherSettings {
                setting: "seed",
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("seed 12345, this run has 99"),
        "{err}"
    );
    let other_model = FileMeta {
        model_id: "abc".to_string(),
        ..meta(v)
    };
    assert!(matches!(
        DatasetWriter::resume(&dir, other_model, policy(2, None)),
        Err(DataError::OtherSettings {
            setting: "model",
            ..
        })
    ));
    let other_search = FileMeta {
        search_settings: ninjazero_data::GameSettings::Synthetic,
        ..meta(v)
    };
    assert!(matches!(
        DatasetWriter::resume(&dir, other_search, policy(2, None)),
        Err(DataError::OtherSettings {
            setting: "search settings",
            ..
        })
    ));
    // Refusals add nothing.
    assert_eq!(read_games(&dir, None).unwrap(), games);
}

#[test]
fn an_old_buffered_game_is_written_without_waiting_for_a_full_file() {
    let tmp = temp_dir();
    let dir = tmp.path().join("flush-age");
    let v = Variant::InsaneNinjaDrops;
    let games = drops_games();
    let policy = policy(64, Some(std::time::Duration::ZERO));
    let (mut writer, _) = DatasetWriter::resume(&dir, meta(v), policy).unwrap();
    writer.add_game(games[0].clone()).unwrap();
    writer.add_game(games[1].clone()).unwrap();
    // Adding only writes full files; the age is checked by flush_if_due.
    assert!(writer.files_written().is_empty());
    assert!(writer.flush_if_due().unwrap());
    assert_eq!(writer.files_written().len(), 1);
    assert_eq!(read_games(&dir, Some(v)).unwrap(), games[..2]);
    assert!(!writer.flush_if_due().unwrap(), "nothing left to write");
    writer.add_game(games[2].clone()).unwrap();
    assert!(writer.flush_if_due().unwrap());
    assert_eq!(read_games(&dir, Some(v)).unwrap(), games);
    drop(writer);

    // Without a maximum age only a full file is due.
    let dir2 = tmp.path().join("flush-count");
    let mut writer = DatasetWriter::create(&dir2, meta(v), 2).unwrap();
    writer.add_game(games[0].clone()).unwrap();
    assert!(!writer.flush_if_due().unwrap());
    writer.add_game(games[1].clone()).unwrap();
    assert_eq!(writer.files_written().len(), 1);
    drop(writer);
}

#[test]
fn a_missing_directory_is_an_error_for_summary_and_pgn() {
    let tmp = temp_dir();
    let missing = tmp.path().join("missing");
    let expected = format!("{}: no such directory", missing.display());
    let err = summarize(&missing).unwrap_err();
    assert!(matches!(err, DataError::NoDirectory { .. }), "{err}");
    assert_eq!(err.to_string(), expected);
    let mut out = Vec::new();
    assert_eq!(
        export_pgn(&missing, &mut out).unwrap_err().to_string(),
        expected
    );
    assert!(out.is_empty());
    // A file where a directory is expected.
    fs::write(&missing, b"not a directory").unwrap();
    assert!(summarize(&missing).is_err());
    assert!(export_pgn(&missing, &mut out).is_err());
    fs::remove_file(&missing).unwrap();
}

#[test]
fn an_unwritable_directory_fails_when_the_writer_is_made() {
    let tmp = temp_dir();
    let dir = tmp.path().join("unwritable");
    fs::write(&dir, b"a file, not a directory").unwrap();
    let err = DatasetWriter::create(&dir.join("data"), meta(Variant::Asylum), 1)
        .err()
        .unwrap();
    assert!(matches!(err, DataError::Unwritable { .. }), "{err}");
    assert!(err.to_string().contains(&*dir.to_string_lossy()), "{err}");
    fs::remove_file(&dir).unwrap();
    // A directory that exists but takes no new files, even for root.
    #[cfg(target_os = "linux")]
    {
        let proc_dir = Path::new("/proc/self");
        let err = DatasetWriter::create(proc_dir, meta(Variant::Asylum), 1)
            .err()
            .unwrap();
        assert!(matches!(err, DataError::Unwritable { .. }), "{err}");
        assert!(
            err.to_string()
                .starts_with("/proc/self: cannot write the dataset there"),
            "{err}"
        );
    }
}

#[test]
fn corrupt_files_are_errors_naming_the_file() {
    let tmp = temp_dir();
    let dir = tmp.path().join("corrupt");
    let games = drops_games();
    let files = write_dataset(&dir, &games, 2);
    let bytes = fs::read(&files[0]).unwrap();

    // Truncated: the footer is gone.
    let truncated = dir.join("games-00000099-0-0.arrow");
    fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    for err in [
        read_games(&dir, None).unwrap_err(),
        finished_game_ids(&dir).unwrap_err(),
        summarize(&dir).unwrap_err(),
    ] {
        assert!(
            err.to_string().contains("games-00000099-0-0.arrow"),
            "{err}"
        );
    }
    fs::remove_file(&truncated).unwrap();

    // Not Arrow at all.
    let garbage = dir.join("games-00000098-0-0.arrow");
    fs::write(&garbage, b"this is not an arrow file at all, just text").unwrap();
    let err = read_games(&dir, None).unwrap_err();
    assert!(
        err.to_string().contains("games-00000098-0-0.arrow"),
        "{err}"
    );
    fs::remove_file(&garbage).unwrap();

    // Damaged inside a compressed body: flip bytes in the middle.
    let mut damaged = bytes.clone();
    let mid = damaged.len() / 2;
    for b in &mut damaged[mid - 64..mid + 64] {
        *b ^= 0x5a;
    }
    let damaged_path = dir.join("games-00000097-0-0.arrow");
    fs::write(&damaged_path, &damaged).unwrap();
    let err = read_games(&dir, None).unwrap_err();
    assert!(
        err.to_string().contains("games-00000097-0-0.arrow"),
        "{err}"
    );
    fs::remove_file(&damaged_path).unwrap();

    assert_eq!(read_games(&dir, None).unwrap(), games);
}

#[test]
fn foreign_variant_and_schema_version_are_refused() {
    let tmp = temp_dir();
    let dir = tmp.path().join("foreign");
    let drops = drops_games();
    write_dataset(&dir, &drops, 2);

    // An asylum file in the same directory, from a start position with Black to move.
    let asylum_dir = tmp.path().join("foreign-asylum");
    let v = Variant::Asylum;
    let black_first =
        "sjbcqkcbjs/pppppppppp/10/10/10/4P5/10/10/PPPP1PPPPP/SJBCQKCBJS b KQkq e3,e4 0 1";
    let asylum = vec![play_game(
        v,
        black_first,
        50,
        7,
        Some(Color::Black),
        "resignation",
        None,
    )];
    let asylum_files = write_dataset(&asylum_dir, &asylum, 2);
    assert_eq!(read_games(&asylum_dir, Some(v)).unwrap(), asylum);
    let err = read_games(&asylum_dir, Some(Variant::InsaneNinjaDrops)).unwrap_err();
    assert!(matches!(err, DataError::WrongVariant { .. }), "{err}");
    assert!(
        err.to_string().contains(&file_name(&asylum_files[0])),
        "{err}"
    );
    assert!(err.to_string().contains("asylum"), "{err}");

    let foreign = dir.join(file_name(&asylum_files[0]));
    fs::copy(&asylum_files[0], &foreign).unwrap();
    let err = read_games(&dir, Some(Variant::InsaneNinjaDrops)).unwrap_err();
    assert!(err.to_string().contains(&file_name(&foreign)), "{err}");
    assert_eq!(read_games(&dir, None).unwrap().len(), 4);
    fs::remove_file(&foreign).unwrap();

    // The same file with another schema version in its metadata.
    let source = fs::File::open(&asylum_files[0]).unwrap();
    let reader = arrow::ipc::reader::FileReader::try_new(source, None).unwrap();
    let mut metadata = reader.schema().metadata().clone();
    assert_eq!(
        metadata["ninjazero.schema_version"],
        SCHEMA_VERSION.to_string()
    );
    metadata.insert("ninjazero.schema_version".into(), "999".into());
    let schema = Arc::new(reader.schema().as_ref().clone().with_metadata(metadata));
    let future = dir.join("games-00000077-0-0.arrow");
    let mut writer =
        arrow::ipc::writer::FileWriter::try_new(fs::File::create(&future).unwrap(), &schema)
            .unwrap();
    for batch in reader {
        let batch = arrow::record_batch::RecordBatch::try_new(
            schema.clone(),
            batch.unwrap().columns().to_vec(),
        )
        .unwrap();
        writer.write(&batch).unwrap();
    }
    writer.finish().unwrap();
    for err in [
        read_games(&dir, None).unwrap_err(),
        finished_game_ids(&dir).unwrap_err(),
    ] {
        assert!(matches!(err, DataError::SchemaVersion { .. }), "{err}");
        assert!(
            err.to_string().contains("games-00000077-0-0.arrow"),
            "{err}"
        );
        assert!(err.to_string().contains("999"), "{err}");
    }
    fs::remove_file(&future).unwrap();

    // PGN of the Black-first game numbers its first move "1...".
    let mut pgn = Vec::new();
    assert_eq!(export_pgn(&asylum_dir, &mut pgn).unwrap(), 1);
    let pgn = String::from_utf8(pgn).unwrap();
    let first_move = &asylum[0].positions[0].move_played;
    assert!(pgn.contains(&format!("\n1... {first_move} 2. ")), "{pgn}");
    assert!(pgn.contains("[Result \"0-1\"]"), "{pgn}");
}

/// One game read back from PGN text.
struct PgnGame {
    tags: Vec<(String, String)>,
    moves: Vec<String>,
    result: String,
}

/// Parses PGN text into its games.
fn parse_pgn(text: &str) -> Vec<PgnGame> {
    let mut games = Vec::new();
    for chunk in text.split("[Event ").skip(1) {
        let chunk = format!("[Event {chunk}");
        let mut tags = Vec::new();
        let mut movetext = String::new();
        for line in chunk.lines() {
            if let Some(tag) = line.strip_prefix('[') {
                let tag = tag.strip_suffix(']').unwrap();
                let (name, value) = tag.split_once(' ').unwrap();
                tags.push((name.to_string(), value.trim_matches('"').to_string()));
            } else if !line.trim().is_empty() {
                assert!(line.len() <= 80, "movetext line over 80 columns: {line}");
                movetext.push_str(line);
                movetext.push(' ');
            }
        }
        let mut tokens: Vec<String> = movetext.split_whitespace().map(String::from).collect();
        let result = tokens.pop().unwrap();
        let moves = tokens.into_iter().filter(|t| !t.ends_with('.')).collect();
        games.push(PgnGame {
            tags,
            moves,
            result,
        });
    }
    games
}

#[test]
fn pgn_export_replays_legally() {
    let tmp = temp_dir();
    let dir = tmp.path().join("pgn");
    let games = drops_games();
    write_dataset(&dir, &games, 2);
    let mut out = Vec::new();
    assert_eq!(export_pgn(&dir, &mut out).unwrap(), 3);
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("[Event \"NinjaZero self-play\"]"));
    assert!(text.contains("[Variant \"insane-ninja-drops\"]"));
    assert!(text.contains("\n\n1. "), "{text}");
    // Drops appear in RULES.md move text.
    assert!(text.contains("Y@"), "{text}");

    let parsed = parse_pgn(&text);
    assert_eq!(parsed.len(), 3);
    for (
        PgnGame {
            tags,
            moves,
            result,
        },
        game,
    ) in parsed.iter().zip(&games)
    {
        let tag = |name: &str| {
            tags.iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
                .unwrap_or_else(|| panic!("no {name} tag"))
        };
        let names: Vec<&str> = tags.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "Event",
                "Site",
                "Date",
                "Round",
                "White",
                "Black",
                "Result",
                "Variant",
                "FEN",
                "SetUp",
                "Termination"
            ]
        );
        assert_eq!(tag("Site"), "?");
        assert_eq!(tag("Date"), "????.??.??");
        assert_eq!(tag("Round"), game.game_id.to_string());
        assert_eq!(tag("White"), "NinjaZero");
        assert_eq!(tag("Black"), "NinjaZero");
        assert_eq!(tag("SetUp"), "1");
        assert_eq!(tag("Termination"), game.termination);
        let expected_result = match game.winner {
            Some(Color::White) => "1-0",
            Some(Color::Black) => "0-1",
            None => "1/2-1/2",
        };
        assert_eq!(tag("Result"), expected_result);
        assert_eq!(result, expected_result);

        let variant: Variant = tag("Variant").parse().unwrap();
        let mut pos = Position::from_fen(variant, tag("FEN")).unwrap();
        assert_eq!(moves.len(), game.positions.len());
        for (text, record) in moves.iter().zip(&game.positions) {
            assert_eq!(pos.to_fen(), record.fen);
            let m = pos
                .parse_move(text)
                .unwrap_or_else(|e| panic!("game {}: {e}", game.game_id));
            assert_eq!(text, &record.move_played);
            pos.play_unchecked(m);
        }
    }
    // The 20-ply game needs more than one movetext line.
    let third = text.split("[Event ").nth(3).unwrap();
    let movetext_lines = third
        .lines()
        .filter(|l| !l.starts_with('[') && !l.trim().is_empty())
        .count();
    assert!(movetext_lines >= 2, "{third}");
}

#[test]
fn pyarrow_reads_the_files() {
    let python = venv_python();
    let tmp = temp_dir();
    let dir = tmp.path().join("pyarrow");
    let games = drops_games();
    let files = write_dataset(&dir, &games, 2);
    let rows = games[0].positions.len() + games[1].positions.len();
    let script = r#"
import json, sys
import pyarrow.ipc as ipc
path, expected = sys.argv[1], json.loads(sys.argv[2])
with open(path, "rb") as f:
    reader = ipc.open_file(f)
    table = reader.read_all()
meta = {k.decode(): v.decode() for k, v in table.schema.metadata.items()}
assert table.column_names == expected["columns"], table.column_names
assert table.num_rows == expected["rows"], table.num_rows
assert meta["ninjazero.schema_version"] == str(expected["schema_version"]), meta
assert meta["ninjazero.variant"] == "insane-ninja-drops", meta
assert meta["ninjazero.rules_version"] == "1", meta
assert meta["ninjazero.encoding_version"] == "1", meta
assert json.loads(meta["ninjazero.search_settings"]) == {"version": 1, "kind": "player", "player": "alphabeta:depth=2", "opening_plies": 4, "max_plies": 300, "search_values": True}, meta
assert meta["ninjazero.seed"] == "12345", meta
assert meta["ninjazero.model_id"] == "uniform", meta
assert meta["ninjazero.games"] == "2", meta
rows = table.to_pylist()
first = rows[0]
assert first["game_id"] == 1 and first["ply"] == 0, first
assert first["fen"] == expected["fen0"], first["fen"]
assert first["side_to_move"] == "w"
assert first["move_played"] == expected["move0"], first["move_played"]
assert first["policy_move"] == expected["policy_moves0"], first["policy_move"]
assert abs(sum(first["policy_prob"]) - 1.0) < 1e-6
assert first["white_pawn"] == 10 and first["black_insane_ninja"] == 2, first
assert first["white_hand"] == 4 and first["black_hand"] == 4, first
assert first["result"] == 1.0 and first["winner"] == "white", first
assert rows[1]["result"] == -1.0, rows[1]
assert first["would_resign_side"] is None and first["would_resign_ply"] is None
second = [r for r in rows if r["game_id"] == 2]
assert all(r["result"] == 0.0 and r["winner"] == "draw" for r in second)
assert second[0]["would_resign_side"] == "black" and second[0]["would_resign_ply"] == 5
assert second[0]["resignation_disabled"] is True
assert str(table.schema.field("policy_index").type) == "list<item: uint32>"
assert str(table.schema.field("game_id").type) == "uint64"
assert str(table.schema.field("ply").type) == "uint16"
print("pyarrow ok", table.num_rows)
"#;
    let first = &games[0].positions[0];
    let policy_moves: Vec<&str> = first.policy.iter().map(|e| e.move_text.as_str()).collect();
    let expected = serde_json::json!({
        "columns": column_names(),
        "rows": rows,
        "schema_version": SCHEMA_VERSION,
        "fen0": first.fen,
        "move0": first.move_played,
        "policy_moves0": policy_moves,
    })
    .to_string();
    let (ok, report) = outcome(
        std::process::Command::new(&python)
            .arg("-c")
            .arg(script)
            .arg(&files[0])
            .arg(&expected)
            .output()
            .unwrap(),
    );
    assert!(
        ok,
        "pyarrow check failed (run scripts/setup.sh if pyarrow is missing):\n{report}"
    );
    assert!(report.contains(&format!("pyarrow ok {rows}")));
}

/// A chess game of `moves` from the start, stored with the given result.
fn chess_game(id: u64, moves: &[&str], winner: Option<Color>, termination: &str) -> GameRecord {
    GameRecord {
        winner,
        termination: termination.to_string(),
        ..scripted_game(Variant::Chess, id, moves)
    }
}

const FOOLS_MATE: [&str; 4] = ["f2f3", "e7e5", "g2g4", "d8h4"];

#[test]
fn a_game_its_moves_do_not_replay_is_refused_by_every_reader() {
    let v = Variant::Chess;
    let base = || play_game(v, v.start_fen(), 3, 6, None, "adjudication", None);
    let cases: [(&str, GameRecord, &str); 12] = [
        (
            "illegal move",
            {
                let mut g = base();
                g.positions[2].move_played = "a1a8".into();
                g
            },
            "ply 2: move 'a1a8'",
        ),
        (
            "edited FEN",
            {
                let mut g = base();
                g.positions[1].fen = v.start_fen().into();
                g
            },
            "ply 1: FEN",
        ),
        (
            "garbage start FEN",
            {
                let mut g = base();
                g.start_fen = "not a fen".into();
                g
            },
            "start FEN 'not a fen'",
        ),
        (
            "edited material",
            {
                let mut g = base();
                g.positions[4].material[Color::White][ninjazero_rules::Role::Queen] = 255;
                g
            },
            "ply 4: side_to_move or material",
        ),
        (
            "edited side",
            {
                let mut g = base();
                g.positions[3].side_to_move = Color::White;
                g
            },
            "ply 3: side_to_move or material",
        ),
        (
            "edited hand",
            {
                let mut g = base();
                g.positions[0].hand = [3, 0];
                g
            },
            "ply 0: hand",
        ),
        (
            "renumbered ply",
            {
                let mut g = base();
                g.positions[5].ply = 9;
                g
            },
            "ply 5: row numbered ply 9",
        ),
        (
            "root value",
            {
                let mut g = base();
                g.positions[1].root_value = 7.5;
                g
            },
            "ply 1: root_value 7.5",
        ),
        (
            "probability",
            {
                let mut g = base();
                g.positions[0].policy[0].probability = -0.5;
                g
            },
            "ply 0: policy probability -0.5",
        ),
        (
            "mate stored as a draw",
            chess_game(4, &FOOLS_MATE, None, "adjudication"),
            "the moves end in black wins by checkmate",
        ),
        (
            "checkmate that is none",
            {
                let mut g = base();
                g.winner = Some(Color::White);
                g.termination = "checkmate".into();
                g
            },
            "stored as ended by checkmate",
        ),
        (
            "resignation by the wrong side",
            {
                let mut g = base();
                g.winner = Some(Color::White);
                g.termination = "resignation".into();
                g
            },
            "white wins by resignation",
        ),
    ];
    let tmp = temp_dir();
    for (name, game, expected) in cases {
        let dir = tmp.path().join(name.replace(' ', "-"));
        write_dataset(&dir, &[game], 10);
        let mut out = Vec::new();
        for err in [
            read_games(&dir, None).unwrap_err(),
            summarize(&dir).unwrap_err(),
            export_pgn(&dir, &mut out).unwrap_err(),
        ] {
            let err = err.to_string();
            assert!(
                err.contains("game ") && err.contains(expected) && err.contains(".arrow"),
                "{name}: {err}"
            );
        }
        assert!(out.is_empty(), "{name}");
    }
    // The same game stored with the rules' verdict reads.
    let dir = tmp.path().join("fools-mate");
    let mate = chess_game(5, &FOOLS_MATE, Some(Color::Black), "checkmate");
    write_dataset(&dir, std::slice::from_ref(&mate), 10);
    assert_eq!(read_games(&dir, None).unwrap(), vec![mate]);
}
