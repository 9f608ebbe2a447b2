//! The pipeline's stored objects: every generation holds exactly K shards and K·M distinct
//! game ids, each training window lists exactly those objects, the promotion decisions
//! follow one another, a rerun does nothing, and a run through another scheduler equals a
//! local run of the same seed object for object. The local run is checked here;
//! `scripts/cluster-test.sh` runs the ignored test against Slurm runs on `file://` and
//! `s3://` with faults injected.

use ninjazero_data::read_file;
use ninjazero_pipeline::layout::{model_key, promotion_key, window_key};
use ninjazero_pipeline::stages::{latest_best, Promotion, TrainingWindow, PLAYER_MAX_PLIES};
use ninjazero_pipeline::worker::{done_key, generation_prefix, part_key, Manifest};
use ninjazero_pipeline::ModelKind;
use ninjazero_pipeline::{RunConfig, Store};
use ninjazero_search::EngineSpec;
use ninjazero_testkit::{temp_dir, text, trained_window, Binary};
use std::collections::HashSet;
use std::path::Path;

const NINJAZERO: Binary = Binary(env!("CARGO_BIN_EXE_ninjazero"));

/// The smoke pipeline of the cluster test: 2 generations × 4 self-play shards, arenas in 2
/// shards.
const SMOKE: [&str; 10] = [
    "--preset",
    "smoke",
    "--device",
    "cpu",
    "--selfplay-shards",
    "4",
    "--arena-shards",
    "2",
    "--seed",
    "3",
];

/// Runs the binary: (success, output).
fn run(args: &[&str]) -> (bool, String) {
    ninjazero_testkit::outcome(NINJAZERO.command(args).output().expect("the binary starts"))
}

/// Checks that `status --best` on the finished run at `dir` names its best model after the
/// last generation, as the user spelled the run, or refuses while generation 0 is best.
fn assert_status_best(dir: &Path, store: &Store) {
    let config = RunConfig::load_from(store).expect("the run has settings");
    let (decided, best) = latest_best(store, config.generations).unwrap().unwrap();
    assert_eq!(decided, config.generations);
    let (ok, out) = run(&["status", "--run", text(dir), "--best"]);
    assert_eq!(ok, best > 0, "{out}");
    if ok {
        let expected = format!("{}/{}", text(dir), model_key(config.model, best));
        assert_eq!(out.trim(), expected);
    } else {
        assert!(out.contains("no trained model beat generation 0's player by generation"));
    }
}

/// Checks the run's objects; returns the keys the run is made of (its data, networks,
/// windows, arenas and decisions).
fn check_run(store: &Store) -> Vec<String> {
    let config = RunConfig::load_from(store).expect("the run has settings");
    let mut keys = Vec::new();
    for generation in 0..config.generations {
        let manifest = Manifest::load(store, generation).expect("each generation is planned");
        assert_eq!(manifest.shards, config.selfplay_shards);
        let mut expected: Vec<String> = vec![Manifest::key(generation)];
        for shard in 0..manifest.shards {
            expected.push(done_key(generation, shard));
            expected.extend((0..manifest.parts()).map(|p| part_key(generation, shard, p)));
        }
        expected.sort();
        let stored: Vec<String> = store
            .list(&generation_prefix(generation))
            .unwrap()
            .into_iter()
            .map(|o| o.key)
            .collect();
        assert_eq!(
            stored, expected,
            "generation {generation}: exactly K shards"
        );
        let mut ids = Vec::new();
        let scratch = temp_dir();
        for key in stored.iter().filter(|k| k.ends_with(".arrow")) {
            let file = scratch.path().join(key.replace('/', "-"));
            std::fs::write(&file, store.get(key).unwrap()).unwrap();
            ids.extend(read_file(&file, None).unwrap().iter().map(|g| g.game_id));
        }
        let games = u64::from(manifest.shards) * manifest.games_per_shard;
        let distinct: HashSet<u64> = ids.iter().copied().collect();
        assert_eq!(
            ids.len() as u64,
            games,
            "generation {generation}: no duplicate rows"
        );
        assert_eq!(
            distinct,
            (0..games).collect(),
            "generation {generation}: K·M ids"
        );
        keys.extend(stored);
    }
    let mut best = 0;
    for generation in 1..=config.generations {
        let window: TrainingWindow =
            serde_json::from_slice(&store.get(&window_key(generation)).unwrap()).unwrap();
        let listed: Vec<String> = window.data.iter().flat_map(|d| d.objects.clone()).collect();
        let parts: Vec<String> = keys
            .iter()
            .filter(|k| k.ends_with(".arrow"))
            .filter(|k| {
                window
                    .data
                    .iter()
                    .any(|d| k.starts_with(&generation_prefix(d.generation)))
            })
            .cloned()
            .collect();
        assert_eq!(
            listed, parts,
            "generation {generation}'s window lists exactly its parts"
        );
        assert_eq!(window.parent, best);
        let promotion = Promotion::load(store, generation)
            .unwrap()
            .expect("decided");
        assert_eq!(promotion.parent, best, "decisions in order");
        assert!(promotion.best == generation || promotion.best == best);
        best = promotion.best;
        keys.extend([
            window_key(generation),
            promotion_key(generation),
            model_key(config.model, generation),
        ]);
    }
    if config.model == ModelKind::Network {
        keys.push(model_key(ModelKind::Network, 0));
    }
    keys.extend(store.list("arena/").unwrap().into_iter().map(|o| o.key));
    keys.extend(store.list("reports/").unwrap().into_iter().map(|o| o.key));
    keys.sort();
    keys
}

/// Asserts that two runs hold the same objects with the same bytes, but for the reports'
/// compute sections (timings).
fn assert_same_objects(run: &Store, reference: &Store, keys: &[String]) {
    let bytes = |store: &Store, key: &str| {
        let mut bytes = store.get(key).unwrap();
        if key.starts_with("reports/") {
            let text = String::from_utf8(bytes).unwrap();
            let cut = text
                .find("\n## Compute")
                .expect("a report has a compute section");
            bytes = text.as_bytes()[..cut].to_vec();
        }
        bytes
    };
    for key in keys {
        assert!(
            bytes(run, key) == bytes(reference, key),
            "{key} differs between {} and {}",
            run.url(),
            reference.url()
        );
    }
}

/// Every object of the run and its bytes.
fn snapshot(store: &Store) -> Vec<(String, Vec<u8>)> {
    let keys = check_run(store);
    keys.into_iter()
        .map(|k| {
            let bytes = store.get(&k).unwrap();
            (k, bytes)
        })
        .collect()
}

#[test]
fn a_local_run_holds_every_object_once_and_a_rerun_does_nothing() {
    let tmp = temp_dir();
    let dir = tmp.path().join("run");
    let (ok, out) = run(&[&["pipeline", "--run", text(&dir)][..], &SMOKE].concat());
    assert!(ok, "{out}");
    assert!(out.contains("best generation"), "{out}");
    let store = Store::open(text(&dir)).unwrap();
    assert_status_best(&dir, &store);
    let before = snapshot(&store);
    assert!(before.iter().any(|(k, _)| k == "reports/gen-0002.md"));
    let summary = String::from_utf8(store.get("summary.md").unwrap()).unwrap();
    assert!(
        summary.contains("against the alphabeta baseline"),
        "{summary}"
    );
    // Every generation on the scale with random at 0, and against the compute it took.
    assert!(summary.contains("| Elo, random = 0 (95 %) |"), "{summary}");
    let compute = summary
        .split("## Compute")
        .nth(1)
        .expect("a compute section");
    let mut hours = Vec::new();
    for generation in 0..=2 {
        let row = compute
            .lines()
            .find(|l| l.starts_with(&format!("| {generation} | ")))
            .unwrap_or_else(|| panic!("generation {generation}: {compute}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        hours.push(cells[2].parse::<f64>().expect("CPU hours"));
        assert!(cells[5].starts_with(['+', '-']), "a rating: {row}");
    }
    // Cumulative, shown to 0.001 h (a fast machine plays a smoke generation in less: that
    // each job's cost is stored is checked below).
    assert!(
        hours[0] == 0.0 && hours.windows(2).all(|pair| pair[1] >= pair[0]),
        "{hours:?}"
    );
    let costs: Vec<String> = store
        .list("cost/")
        .unwrap()
        .into_iter()
        .map(|o| o.key)
        .collect();
    let count = |prefix: &str| costs.iter().filter(|k| k.starts_with(prefix)).count();
    assert_eq!(
        count("cost/selfplay/"),
        8,
        "4 shards × 2 generations: {costs:?}"
    );
    assert_eq!(count("cost/train/"), 2, "{costs:?}");
    assert!(count("cost/arena/gen-0002-vs-gen-0001/") > 0, "{costs:?}");

    let (ok, out) = run(&["pipeline", "--run", text(&dir), "--device", "cpu"]);
    assert!(ok, "{out}");
    assert!(
        !out.contains("self-play gen"),
        "a rerun plays nothing: {out}"
    );
    assert_eq!(snapshot(&store), before, "a rerun changes nothing");

    // Another shard count is another run.
    let (ok, out) = run(&["pipeline", "--run", text(&dir), "--selfplay-shards", "2"]);
    assert!(!ok);
    assert!(out.contains("--selfplay-shards 4 → 2"), "{out}");
}

#[test]
fn the_slurm_driver_names_what_is_missing_or_refused() {
    let tmp = temp_dir();
    let dir = tmp.path().join("run");
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let slurm = |path: &str| {
        let out = NINJAZERO
            .command(
                &[
                    &["pipeline", "--run", text(&dir), "--scheduler", "slurm"][..],
                    &SMOKE,
                ]
                .concat(),
            )
            .env("PATH", path)
            .output()
            .expect("the binary starts");
        ninjazero_testkit::outcome(out)
    };
    let (ok, out) = slurm(text(&bin));
    assert!(!ok);
    assert!(out.contains("squeue: not found on PATH"), "{out}");

    // A cluster that refuses every job: the refusal is reported, nothing is stored beyond
    // the settings and generation 0.
    for (name, script) in [
        ("squeue", "#!/bin/sh\nexit 0\n"),
        (
            "sbatch",
            "#!/bin/sh\necho 'sbatch: error: invalid partition specified: gpu' >&2\nexit 1\n",
        ),
    ] {
        let path = bin.join(name);
        std::fs::write(&path, script).unwrap();
        make_executable(&path);
    }
    let (ok, out) = slurm(text(&bin));
    assert!(!ok);
    assert!(out.contains("sbatch refused"), "{out}");
    assert!(out.contains("invalid partition specified: gpu"), "{out}");
    let store = Store::open(text(&dir)).unwrap();
    assert!(store.list("selfplay/").unwrap().is_empty());
    assert!(store.exists(&model_key(ModelKind::Network, 0)).unwrap());
}

#[test]
fn workers_run_a_pipeline_stage_by_stage_after_init_only() {
    let tmp = temp_dir();
    let dir = tmp.path().join("run");
    let url = format!("file://{}", text(&dir));
    let (ok, out) = run(&[&["pipeline", "--run", &url, "--init-only"][..], &SMOKE].concat());
    assert!(ok, "{out}");
    let store = Store::open(&url).unwrap();
    let keys: Vec<String> = store.list("").unwrap().into_iter().map(|o| o.key).collect();
    assert_eq!(
        keys,
        [
            "models/gen-0000.json",
            "models/gen-0000.safetensors",
            "run.toml"
        ]
    );

    let worker =
        |args: &[&str]| run(&[&["worker"], args, &["--run", &url, "--device", "cpu"]].concat());
    let (ok, out) = worker(&["train", "--generation", "1"]);
    assert!(!ok, "training before its self-play must fail: {out}");
    assert!(
        out.contains("gen-0000/MANIFEST.json: no such manifest"),
        "{out}"
    );
    let (ok, out) = worker(&["selfplay", "--generation", "1", "--shard", "0"]);
    assert!(!ok);
    assert!(
        out.contains("promotion/gen-0001.json: generation 1 is not decided yet"),
        "{out}"
    );
    let (ok, out) = worker(&["selfplay", "--generation", "0", "--shard", "0"]);
    assert!(ok, "{out}");
    let (ok, out) = worker(&["train", "--generation", "1"]);
    assert!(!ok);
    assert!(
        out.contains("shard-0001/DONE: generation 1 trains on this shard, which is not done yet"),
        "{out}"
    );
    // A training job started before its shards (as Kubernetes Jobs start together) waits
    // for them with --wait, and trains once the last one is stored.
    let waiting_train = NINJAZERO
        .command(
            &[
                "worker",
                "train",
                "--generation",
                "1",
                "--wait",
                "300",
                "--run",
                &url,
                "--device",
                "cpu",
            ][..],
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    for shard in ["1", "2", "3"] {
        assert!(worker(&["selfplay", "--generation", "0", "--shard", shard]).0);
    }
    let (ok, out) = ninjazero_testkit::outcome(waiting_train.wait_with_output().unwrap());
    assert!(ok, "{out}");
    assert!(
        out.contains("waiting up to 300 s for") && out.contains("which is not done yet"),
        "{out}"
    );
    assert!(out.contains("train gen-0001 (job 0): done"), "{out}");
    assert!(store.exists(&model_key(ModelKind::Network, 1)).unwrap());
    // Waiting does not hide a refusal that time cannot mend.
    let (ok, out) = worker(&["arena", "--generation", "1", "--shard", "4", "--wait", "60"]);
    assert!(!ok);
    assert!(!out.contains("waiting"), "{out}");
    assert!(
        out.contains("arena job 4 asked for, this stage has jobs 0 to 3"),
        "{out}"
    );
    let (ok, out) = worker(&["promote", "--generation", "1"]);
    assert!(!ok);
    assert!(
        out.contains("shard-0000.json: this arena shard is not played yet"),
        "{out}"
    );
}

#[test]
fn a_first_player_plays_generation_zeros_games() {
    let tmp = temp_dir();
    let dir = tmp.path().join("run");
    let given = "alphabeta:depth=1:values=P=1,N=1,B=1,R=1,Q=1,I=1,L=1";
    let base = ["pipeline", "--run", text(&dir), "--generations", "1"];
    let player_values = [
        "--first-player",
        given,
        "--player-values",
        "true",
        "--first-player-games",
        "24",
    ];
    let (ok, out) = run(&[&base[..], &SMOKE, &player_values].concat());
    // Stored as the spec writes itself (Pawn = 1 is the unit, left out).
    let player = &given.parse::<EngineSpec>().unwrap().to_string();
    assert!(ok, "{out}");
    let store = Store::open(text(&dir)).unwrap();
    let manifest = Manifest::load(&store, 0).unwrap();
    assert_eq!(manifest.player.as_ref(), Some(player));
    // The player's games run to the long cap, not the smoke preset's 40 plies, and are
    // --first-player-games many (the smoke preset plays 16 per generation).
    assert_eq!(manifest.search.max_plies, PLAYER_MAX_PLIES);
    assert_eq!((manifest.shards, manifest.games_per_shard), (4, 6));
    let file = tmp.path().join("part.arrow");
    std::fs::write(&file, store.get(&part_key(0, 1, 0)).unwrap()).unwrap();
    let games = read_file(&file, None).unwrap();
    assert_eq!(games.len(), 6);
    assert!(
        games.iter().all(|g| &g.model_id == player),
        "{:?}",
        games[0].model_id
    );
    // After the random opening plies the player's move is the policy target.
    let targets = &games[0].positions[4].policy;
    assert_eq!((targets.len(), targets[0].probability), (1, 1.0));
    assert!(store.exists(&model_key(ModelKind::Network, 1)).unwrap());
    // The first network learns from every position of the player's games (the smoke
    // preset's growing window would take 500 of them).
    let trained = out
        .lines()
        .find(|line| line.contains("training generation 1 from 0"))
        .unwrap_or_else(|| panic!("no training line in {out}"));
    let (window, total) =
        trained_window(trained).unwrap_or_else(|| panic!("no window in {trained}"));
    assert_eq!(window, total, "{trained}");
    assert!(total > 500, "{trained}");
    // --player-values reaches the training job's settings.
    let job = std::fs::read_to_string(dir.join("train/gen-0001/work/state.json")).unwrap();
    assert!(job.contains("\"player_values\": true"), "{job}");
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains(&format!("generation 0's 24 games by {player}, the first network trained with the smoke preset on the player's search values too")),
        "{summary}"
    );

    let other = tmp.path().join("other");
    let missing = "uci:/nonexistent/engine:depth=1";
    let (ok, out) = run(&["pipeline", "--run", text(&other), "--first-player", missing]);
    assert!(!ok);
    assert_eq!(out.trim().lines().count(), 1, "{out}");
    assert!(out.contains("cannot start '/nonexistent/engine'"), "{out}");
    assert!(
        !other.join("run.toml").exists(),
        "nothing stored for a player that cannot play"
    );
    let (ok, out) = run(&[
        "pipeline",
        "--run",
        text(&other),
        "--first-player",
        "alphabeta:depth=x",
    ]);
    assert!(!ok);
    assert!(out.contains("--first-player"), "{out}");
}

#[test]
fn a_run_that_learns_an_evaluation_plays_alpha_beta_with_its_fits() {
    let tmp = temp_dir();
    let dir = tmp.path().join("run");
    let base = [
        "pipeline",
        "--run",
        text(&dir),
        "--model",
        "evaluation",
        "--value-target-mix",
        "0.5",
    ];
    let (ok, out) = run(&[&base[..], &SMOKE].concat());
    assert!(ok, "{out}");
    let store = Store::open(text(&dir)).unwrap();
    check_run(&store);
    let config = RunConfig::load_from(&store).unwrap();
    assert_eq!(config.model, ModelKind::Evaluation);
    // The first player's search values are not fitted: generation 0's games are its.
    assert!(
        out.contains(
            "results alone (the window holds the first player's games: self-play generation 0)"
        ),
        "{out}"
    );
    // Generation 0 is the first player: alpha-beta at depth 1 with every piece worth one.
    let counting = EngineSpec::alphabeta_counting(1).to_string();
    assert_eq!(config.first_player.as_ref(), Some(&counting));
    assert!(!store.exists(&model_key(ModelKind::Evaluation, 0)).unwrap());
    assert!(!store.exists(&model_key(ModelKind::Network, 1)).unwrap());
    let first = Manifest::load(&store, 0).unwrap();
    assert_eq!(
        (first.player.as_ref(), first.model.as_ref()),
        (Some(&counting), None)
    );
    // Generation 1's games: alpha-beta at depth 2 searching with generation 1's fit, or
    // the first player's again if generation 1 was not promoted.
    let second = Manifest::load(&store, 1).unwrap();
    let promoted = Promotion::load(&store, 1).unwrap().unwrap().promoted;
    let fit = model_key(ModelKind::Evaluation, 1);
    let file = tmp.path().join("part.arrow");
    std::fs::write(&file, store.get(&part_key(1, 0, 0)).unwrap()).unwrap();
    let players: HashSet<String> = read_file(&file, None)
        .unwrap()
        .into_iter()
        .map(|g| g.model_id)
        .collect();
    let [player] = Vec::from_iter(players).try_into().unwrap();
    if promoted {
        assert_eq!(second.model.as_ref(), Some(&fit));
        assert_eq!(second.player.as_deref(), Some("alphabeta:depth=2"));
        assert!(player.ends_with("gen-0001.eval.json:depth=2"), "{player}");
        // The fit is a learnt evaluation a person can play against.
        let local = tmp.path().join("gen-0001.eval.json");
        std::fs::write(&local, store.get(&fit).unwrap()).unwrap();
        let spec: EngineSpec = format!("alphabeta:{}:depth=1", text(&local))
            .parse()
            .unwrap();
        assert!(spec.factory(ninjazero_rules::Variant::InsaneNinja, tch::Device::Cpu, 0)().is_ok());
    } else {
        assert_eq!(
            (second.player.as_ref(), second.model.as_ref()),
            (Some(&counting), None)
        );
        assert_eq!(player, counting);
    }
    assert!(out.contains("fitting generation 2's evaluation"), "{out}");
    assert_status_best(&dir, &store);
    // Asking about a run that is not there creates nothing.
    let missing = tmp.path().join("none");
    let (ok, out) = run(&["status", "--run", text(&missing), "--best"]);
    assert!(!ok);
    assert!(out.contains("none: no such directory"), "{out}");
    assert!(!missing.exists());
    std::fs::create_dir(&missing).unwrap();
    // A directory that holds no run is said to be one, not an empty run.
    for best in [&["--best"][..], &[]] {
        let (ok, out) = run(&[&["status", "--run", text(&missing)][..], best].concat());
        assert!(!ok);
        assert!(out.contains("none/run.toml: no run here"), "{out}");
    }
    let summary = String::from_utf8(store.get("summary.md").unwrap()).unwrap();
    assert!(
        summary.contains("a learnt piece-square evaluation searched by alpha-beta at depth 2"),
        "{summary}"
    );
    // A rerun continues (nothing left to do); other settings and player values are refused.
    let before = snapshot(&store);
    let (ok, out) = run(&[&base[..], &SMOKE].concat());
    assert!(ok, "{out}");
    assert_eq!(snapshot(&store), before);
    let (ok, out) = run(&["pipeline", "--run", text(&dir), "--model", "network"]);
    assert!(!ok);
    assert!(out.contains("--model evaluation → network"), "{out}");
    let other = tmp.path().join("other");
    let (ok, out) = run(&[
        "pipeline",
        "--run",
        text(&other),
        "--model",
        "evaluation",
        "--first-player",
        "random",
        "--player-values",
        "true",
    ]);
    assert!(!ok);
    assert!(
        out.contains("--player-values true is a setting of a network's training"),
        "{out}"
    );
    assert!(!other.join("run.toml").exists());
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Run by `scripts/cluster-test.sh` after a Slurm run: `NINJAZERO_CLUSTER_RUN` (its URL)
/// must hold a complete run equal to the local run `NINJAZERO_CLUSTER_REFERENCE`.
#[test]
#[ignore = "needs a run made by scripts/cluster-test.sh"]
fn a_cluster_run_holds_every_object_once_and_equals_the_local_run() {
    let url = std::env::var("NINJAZERO_CLUSTER_RUN").expect("NINJAZERO_CLUSTER_RUN");
    let reference =
        std::env::var("NINJAZERO_CLUSTER_REFERENCE").expect("NINJAZERO_CLUSTER_REFERENCE");
    let (run, reference) = (Store::open(&url).unwrap(), Store::open(&reference).unwrap());
    let keys = check_run(&run);
    assert_eq!(
        keys,
        check_run(&reference),
        "the same objects as the local run"
    );
    assert_same_objects(&run, &reference, &keys);
}

/// A budget too small for a second generation: the run trains one, plays the baselines,
/// writes its report and remembers the budget; a rerun does nothing, and Slurm, which
/// cannot keep a budget, is refused.
#[test]
fn a_budgeted_run_stops_when_the_next_generation_would_not_fit() {
    let tmp = temp_dir();
    let dir = tmp.path().join("run");
    let base = ["pipeline", "--run", text(&dir), "--hours", "0.0001"];
    let (ok, out) = run(&[&base[..], &SMOKE].concat());
    assert!(ok, "{out}");
    assert!(out.contains("generations while 0.0001 h last"), "{out}");
    assert!(
        out.contains("after generation 1;") && out.contains("stopping here"),
        "{out}"
    );
    let store = Store::open(text(&dir)).unwrap();
    let config = RunConfig::load_from(&store).unwrap();
    assert_eq!((config.generations, config.hours), (1, Some(0.0001)));
    assert!(store.exists(&promotion_key(1)).unwrap());
    assert!(!store.exists(&model_key(ModelKind::Network, 2)).unwrap());
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("1 generation (as many as fitted a budget of 0.0001 wall hours"),
        "{summary}"
    );

    let objects = store.list("").unwrap().len();
    let (ok, out) = run(&["pipeline", "--run", text(&dir), "--device", "cpu"]);
    assert!(ok, "{out}");
    assert_eq!(
        store.list("").unwrap().len(),
        objects,
        "a rerun stores nothing"
    );
    let (ok, out) = run(&["pipeline", "--run", text(&dir), "--scheduler", "slurm"]);
    assert!(!ok);
    assert!(
        out.contains("budget of 0.0001 hours") && out.contains("--generations"),
        "{out}"
    );
}
