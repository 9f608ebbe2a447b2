//! Integration tests of the trainer on small synthetic datasets (random legal games) and
//! the tiny network: learning, exact resume, foreign and corrupt files, metrics and plots.

use ninjazero_data::{read_games, DatasetWriter, FileMeta};
use ninjazero_model::{Model, NetConfig, Preset};
use ninjazero_rules::{Position, Variant};
use ninjazero_testkit::temp_dir;
use ninjazero_train::synthetic::{random_game, write_random_games, FullSearch};
use ninjazero_train::{
    read_metrics, train, OptimizerKind, RunControl, Schedule, SplitMix64, TrainConfig, TrainError,
    TrainJob, TrainReport, METRICS_FILE, PLOT_FILE,
};
use std::path::{Path, PathBuf};
use tch::Device;

const VARIANT: Variant = Variant::InsaneNinja;

/// A tiny freshly initialised network saved as `DIR/init.safetensors`.
fn init_model(dir: &Path) -> PathBuf {
    let model = Model::seeded(VARIANT, &Preset::Tiny.config(), Device::Cpu, 7);
    let path = dir.join("init.safetensors");
    model.save(&path).unwrap();
    path
}

fn config(steps: u64) -> TrainConfig {
    TrainConfig {
        steps,
        batch_size: 32,
        learning_rate: 3e-3,
        schedule: Schedule::Cosine,
        warmup_steps: 3,
        checkpoint_every: 5,
        loader_threads: 2,
        min_window: 100,
        max_window: 10_000,
        seed: 11,
        ..TrainConfig::preset("demo").unwrap()
    }
}

fn quiet(_: u64, _: u64, _: &str) {}

/// A job on `DIR/data` from a fresh tiny network (`DIR/init.safetensors`), writing
/// `DIR/out.safetensors` with its state in `DIR/work`.
fn job(dir: &Path, config: TrainConfig) -> TrainJob {
    TrainJob {
        variant: VARIANT,
        data_dirs: vec![dir.join("data")],
        init: init_model(dir),
        out: dir.join("out.safetensors"),
        work_dir: dir.join("work"),
        config,
        device: Device::Cpu,
    }
}

/// Runs a job to its end, quietly.
fn run(job: &TrainJob) -> Result<TrainReport, TrainError> {
    train(job, &quiet, &RunControl::default())
}

fn weights(path: &Path) -> Vec<(String, tch::Tensor)> {
    let mut named = tch::Tensor::read_safetensors(path).unwrap();
    named.sort_by(|a, b| a.0.cmp(&b.0));
    named
}

fn assert_same_weights(a: &Path, b: &Path) {
    let (wa, wb) = (weights(a), weights(b));
    assert_eq!(wa.len(), wb.len());
    for ((na, ta), (nb, tb)) in wa.iter().zip(&wb) {
        assert_eq!(na, nb);
        assert!(ta.equal(tb), "{na} differs between {a:?} and {b:?}");
    }
}

#[test]
fn overfits_a_tiny_dataset_and_writes_metrics_and_plot() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let data = dir.join("data");
    write_random_games(&data, VARIANT, 4, 16, 1, 2).unwrap();
    let config = TrainConfig {
        schedule: Schedule::Constant,
        ..config(80)
    };
    let job = TrainJob {
        out: dir.join("models/trained.safetensors"),
        ..job(dir, config)
    };
    let (init, out, work) = (&job.init, &job.out, &job.work_dir);
    let calls = std::cell::Cell::new(0u64);
    let progress = |step, total, line: &str| {
        assert_eq!(total, 80);
        assert_eq!(step, calls.get() + 1);
        assert!(line.contains("loss"), "{line}");
        calls.set(step);
    };
    let report = train(&job, &progress, &RunControl::default()).unwrap();
    assert_eq!(calls.get(), 80);
    assert_eq!(report.steps_done, 80);
    assert_eq!(report.steps_this_run, 80);
    assert_eq!(report.window_positions, 64);
    assert_eq!(&report.checkpoint, out);

    // One metrics line per step, with every field.
    let text = std::fs::read_to_string(work.join(METRICS_FILE)).unwrap();
    assert_eq!(text.lines().count(), 80);
    for (k, line) in text.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["step"], k as u64 + 1);
        for field in [
            "policy_loss",
            "value_loss",
            "loss",
            "policy_accuracy",
            "value_mse",
            "learning_rate",
            "samples_per_s",
            "loader_wait_s",
            "grad_norm",
        ] {
            assert!(v[field].as_f64().unwrap().is_finite(), "{field} in {line}");
        }
    }
    let records = read_metrics(&work.join(METRICS_FILE));
    assert_eq!(records.len(), 80);
    // The rates and waits agree with the steps' own times, which the run's time holds: each
    // step's rate is its 32 samples over its time, its wait is part of that time, and the
    // run's rate (80 × 32 = 2,560 samples over the run) is at most 2,560 over the steps'
    // summed times, its wait share at most their summed waits over that sum.
    for r in &records {
        assert!(r.step_s > 0.0 && r.loader_wait_s >= 0.0, "{r:?}");
        assert!(r.loader_wait_s <= r.step_s, "{r:?}");
        assert!(
            (r.samples_per_s * r.step_s - 32.0).abs() < 1e-6,
            "step {}: {} samples/s over {} s",
            r.step,
            r.samples_per_s,
            r.step_s
        );
    }
    let steps_s: f64 = records.iter().map(|r| r.step_s).sum();
    let wait_s: f64 = records.iter().map(|r| r.loader_wait_s).sum();
    let slack = 1.0 + 1e-9;
    assert!(
        report.samples_per_s > 0.0 && report.samples_per_s <= 2560.0 / steps_s * slack,
        "{} samples/s over a run whose steps took {steps_s} s",
        report.samples_per_s
    );
    assert!(
        report.loader_wait_share >= 0.0 && report.loader_wait_share <= wait_s / steps_s * slack,
        "wait share {} with {wait_s} s of {steps_s} s waited",
        report.loader_wait_share
    );
    let mean = |r: &[ninjazero_train::MetricsRecord],
                f: fn(&ninjazero_train::MetricsRecord) -> f64| {
        r.iter().map(f).sum::<f64>() / r.len() as f64
    };
    let (first, last) = (&records[..5], &records[75..]);
    let (p0, p1) = (
        mean(first, |r| r.stats.policy_loss),
        mean(last, |r| r.stats.policy_loss),
    );
    let (v0, v1) = (
        mean(first, |r| r.stats.value_loss),
        mean(last, |r| r.stats.value_loss),
    );
    assert!(p1 < 0.5 * p0, "policy loss {p0} -> {p1}");
    assert!(v1 < 0.8 * v0, "value loss {v0} -> {v1}");
    assert!(mean(last, |r| r.stats.policy_accuracy) > mean(first, |r| r.stats.policy_accuracy));
    assert!(
        (report.final_policy_loss - mean(&records[70..], |r| r.stats.policy_loss)).abs() < 1e-9
    );

    // The plot is a PNG of the documented size.
    let png = std::fs::read(work.join(PLOT_FILE)).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&png[12..16], b"IHDR");
    assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 1000);
    assert_eq!(u32::from_be_bytes(png[20..24].try_into().unwrap()), 800);
    assert!(png.len() > 5_000, "a plot with lines, {} bytes", png.len());

    // The output model: accumulated steps, parent, and different weights from the start.
    let trained = Model::load(out, Some(VARIANT), Device::Cpu).unwrap();
    assert_eq!(trained.meta.training_step, 80);
    assert_eq!(trained.meta.parent.as_deref(), Some("init.safetensors"));
    assert!(!weights(out)[0].1.equal(&weights(init)[0].1));
}

#[test]
fn resume_after_a_kill_gives_the_same_weights() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let data = dir.join("data");
    write_random_games(&data, VARIANT, 6, 20, 2, 2).unwrap();
    for optimizer in [
        OptimizerKind::Sgd { momentum: 0.9 },
        OptimizerKind::AdamW {
            beta1: 0.9,
            beta2: 0.999,
        },
    ] {
        let name = optimizer.name();
        let config = TrainConfig {
            optimizer,
            learning_rate: if name == "sgd" { 0.02 } else { 3e-3 },
            ..config(20)
        };
        let straight = TrainJob {
            out: dir.join(format!("{name}-straight.safetensors")),
            work_dir: dir.join(format!("{name}-work-straight")),
            ..job(dir, config.clone())
        };
        run(&straight).unwrap();
        let straight = straight.out;

        // Killed at step 12: the last checkpoint is step 10.
        let killed = TrainJob {
            out: dir.join(format!("{name}-resumed.safetensors")),
            work_dir: dir.join(format!("{name}-work-killed")),
            ..job(dir, config)
        };
        let (resumed, work) = (&killed.out, &killed.work_dir);
        let control = RunControl {
            max_steps_this_run: Some(12),
            stop: None,
        };
        let err = train(&killed, &quiet, &control).unwrap_err();
        assert!(
            matches!(
                err,
                TrainError::Interrupted {
                    step: 12,
                    checkpoint: 10
                }
            ),
            "{err}"
        );
        assert!(!resumed.exists());
        assert_eq!(read_metrics(&work.join(METRICS_FILE)).len(), 12);
        // More data arriving meanwhile must not change the resumed job's window.
        write_random_games(&data, VARIANT, 2, 20, 3, 2).unwrap();

        let report = run(&killed).unwrap();
        assert_eq!(report.steps_this_run, 10, "resumed from step 10");
        assert_eq!(report.steps_done, 20);
        assert_same_weights(&straight, resumed);
        let straight_metrics =
            read_metrics(&dir.join(format!("{name}-work-straight/{METRICS_FILE}")));
        let resumed_metrics = read_metrics(&work.join(METRICS_FILE));
        assert_eq!(straight_metrics.len(), 20);
        assert_eq!(resumed_metrics.len(), 20);
        for (a, b) in straight_metrics.iter().zip(&resumed_metrics) {
            assert_eq!(
                (a.step, a.stats.loss, a.learning_rate),
                (b.step, b.stats.loss, b.learning_rate)
            );
        }

        // A finished job is not trained again.
        let again = run(&killed).unwrap();
        assert_eq!(again.steps_this_run, 0);
        assert_same_weights(&straight, resumed);
        // Only the last checkpoint is kept.
        let checkpoints: Vec<String> = std::fs::read_dir(work)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("ckpt-"))
            .collect();
        assert_eq!(checkpoints, vec!["ckpt-00000020".to_string()]);
    }
}

#[test]
fn foreign_and_corrupt_files_are_skipped_with_a_reason() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let data = dir.join("data");
    write_random_games(&data, VARIANT, 3, 12, 4, 3).unwrap();
    let ours: usize = read_games(&data, Some(VARIANT))
        .unwrap()
        .iter()
        .map(|g| g.positions.len())
        .sum();
    // A chess file and a file that is not Arrow at all, in the same directory.
    let meta = FileMeta {
        variant: Variant::Chess,
        search_settings: ninjazero_data::GameSettings::Synthetic,
        seed: 5,
        model_id: "random".to_string(),
    };
    let mut writer = DatasetWriter::create(&data, meta, 10).unwrap();
    let mut rng = SplitMix64(9);
    writer
        .add_game(random_game(
            &Position::start(Variant::Chess),
            900,
            12,
            FullSearch::Random,
            &mut rng,
        ))
        .unwrap();
    writer.finish().unwrap();
    let chess_file = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| ninjazero_data::read_file_meta(p).is_ok_and(|m| m.variant == Variant::Chess))
        .unwrap();
    let corrupt = data.join("games-99999999-0-0.arrow");
    std::fs::write(&corrupt, b"not an arrow file").unwrap();

    let report = run(&job(dir, config(2))).unwrap();
    assert_eq!(report.window_positions, ours, "only {VARIANT} positions");
    assert_eq!(report.total_positions, ours);
    let mut skipped: Vec<_> = report
        .skipped_files
        .iter()
        .map(|s| s.path.clone())
        .collect();
    skipped.sort();
    let mut expected = vec![
        chess_file.canonicalize().unwrap(),
        corrupt.canonicalize().unwrap(),
    ];
    expected.sort();
    assert_eq!(skipped, expected);
    for s in &report.skipped_files {
        assert!(
            s.reason.contains("chess") || s.reason.contains("Arrow"),
            "{}: {}",
            s.path.display(),
            s.reason
        );
    }
}

#[test]
fn a_data_dir_without_usable_files_is_an_error() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let err = run(&job(dir, config(2))).unwrap_err();
    assert!(matches!(err, TrainError::NoData(_)), "{err}");
}

/// Every tensor of a safetensors file is finite.
fn all_finite(path: &Path) -> bool {
    weights(path)
        .iter()
        .all(|(_, t)| t.isfinite().all().int64_value(&[]) == 1)
}

/// The model and optimizer files of the checkpoint `state.json` names.
fn current_checkpoint(work: &Path) -> (PathBuf, PathBuf) {
    let text = std::fs::read_to_string(work.join("state.json")).unwrap();
    let state: serde_json::Value = serde_json::from_str(&text).unwrap();
    let dir = work.join(state["checkpoint"].as_str().unwrap());
    (
        dir.join("model.safetensors"),
        dir.join("optimizer.safetensors"),
    )
}

#[test]
fn a_huge_learning_rate_stops_at_the_first_non_finite_loss() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let data = dir.join("data");
    write_random_games(&data, VARIANT, 4, 16, 1, 2).unwrap();
    let config = TrainConfig {
        learning_rate: 1e30,
        schedule: Schedule::Constant,
        warmup_steps: 0,
        checkpoint_every: 1,
        ..config(20)
    };
    let job = job(dir, config);
    let (out, work) = (&job.out, &job.work_dir);
    let err = run(&job).unwrap_err();
    let TrainError::NonFinite { step, quantity } = &err else {
        panic!("expected a non-finite error, got {err}");
    };
    assert!((1..=20).contains(step), "{err}");
    assert!(
        ["policy loss", "value loss", "gradient norm"]
            .iter()
            .any(|q| quantity.starts_with(q)),
        "{err}"
    );
    assert!(err.to_string().contains(&format!("step {step}")), "{err}");
    // No output model; the resumable checkpoint is the last finite one, before the step.
    assert!(!out.exists());
    assert!(!ninjazero_model::checkpoint::sidecar_path(out).exists());
    let (model, optimizer) = current_checkpoint(work);
    assert!(all_finite(&model) && all_finite(&optimizer));
    let records = read_metrics(&work.join(METRICS_FILE));
    assert_eq!(
        records.len() as u64,
        step - 1,
        "no metrics line for the failed step"
    );
    assert!(records.iter().all(|r| r.stats.loss.is_finite()));
}

#[test]
fn a_checkpoint_with_non_finite_weights_is_never_written() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let data = dir.join("data");
    write_random_games(&data, VARIANT, 2, 8, 1, 2).unwrap();
    let model = Model::new(VARIANT, &Preset::Tiny.config(), Device::Cpu);
    let (name, mut tensor) = model.vs.variables().into_iter().next().unwrap();
    let _ = tch::no_grad(|| tensor.fill_(f64::NAN));
    let init = dir.join("nan.safetensors");
    model.save(&init).unwrap();
    let job = TrainJob {
        init,
        ..job(dir, config(2))
    };
    let err = run(&job).unwrap_err();
    assert!(
        matches!(&err, TrainError::NonFinite { step: 0, quantity } if quantity == &format!("weight {name}")),
        "{err}"
    );
    assert!(!job.work_dir.join("state.json").exists());
}

#[test]
fn a_work_dir_resumes_only_the_job_with_its_settings() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let data = dir.join("data");
    write_random_games(&data, VARIANT, 4, 12, 1, 2).unwrap();
    let base = job(dir, config(1));
    let (out, work) = (&base.out, &base.work_dir);
    let run = |config: &TrainConfig, data_dirs: &[PathBuf], control: &RunControl| {
        let job = TrainJob {
            data_dirs: data_dirs.to_vec(),
            config: config.clone(),
            ..base.clone()
        };
        train(&job, &quiet, control)
    };
    let first = TrainConfig {
        checkpoint_every: 2,
        ..config(6)
    };
    let data_dirs = std::slice::from_ref(&data);
    let stop_at_2 = RunControl {
        max_steps_this_run: Some(2),
        stop: None,
    };
    assert!(matches!(
        run(&first, data_dirs, &stop_at_2),
        Err(TrainError::Interrupted { step: 2, .. })
    ));

    // In progress, then finished: other settings are refused, each named with both values.
    let other = TrainConfig {
        learning_rate: 0.01,
        seed: 12,
        ..first.clone()
    };
    let changed = |result: Result<TrainReport, TrainError>| match result {
        Err(TrainError::OtherJob { work_dir, changes }) => {
            assert_eq!(&work_dir, work);
            changes
                .into_iter()
                .map(|c| (c.name, c.old, c.new))
                .collect::<Vec<_>>()
        }
        other => panic!("expected OtherJob, got {:?}", other.map(|r| r.steps_done)),
    };
    let s = |text: &str| text.to_string();
    assert_eq!(
        changed(run(&other, data_dirs, &RunControl::default())),
        vec![
            (s("learning_rate"), s("0.003"), s("0.01")),
            (s("seed"), s("11"), s("12"))
        ]
    );
    let report = run(&first, data_dirs, &RunControl::default()).unwrap();
    assert_eq!((report.steps_done, report.steps_this_run), (6, 4));
    let trained = weights(out);

    let more = TrainConfig {
        steps: 10,
        optimizer: OptimizerKind::Sgd { momentum: 0.9 },
        ..first.clone()
    };
    let names: Vec<String> = changed(run(&more, data_dirs, &RunControl::default()))
        .into_iter()
        .map(|c| c.0)
        .collect();
    assert_eq!(names, ["optimizer", "steps"]);
    let extra = dir.join("more-data");
    let changes = changed(run(&first, &[data.clone(), extra], &RunControl::default()));
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].0, "data");
    let message = run(&more, data_dirs, &RunControl::default())
        .unwrap_err()
        .to_string();
    assert!(message.contains("steps: 6 → 10"), "{message}");
    assert!(message.contains("another work directory"), "{message}");

    // The refusals left the finished job and its model alone; how often to checkpoint is
    // not a setting of the job.
    let same = TrainConfig {
        checkpoint_every: 1,
        ..first.clone()
    };
    let again = run(&same, data_dirs, &RunControl::default()).unwrap();
    assert_eq!((again.steps_done, again.steps_this_run), (6, 0));
    let now = weights(out);
    assert_eq!(trained.len(), now.len());
    for ((na, ta), (nb, tb)) in trained.iter().zip(&now) {
        assert_eq!(na, nb);
        assert!(ta.equal(tb), "{na}");
    }
}

#[test]
fn the_same_games_in_other_files_train_the_same_model() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let (one, split) = (dir.join("one"), dir.join("split"));
    let mut rng = SplitMix64(3);
    let games: Vec<_> = (0..6)
        .map(|id| {
            let start = Position::start(VARIANT);
            random_game(&start, id, 12, FullSearch::Random, &mut rng)
        })
        .collect();
    let meta = FileMeta {
        variant: VARIANT,
        search_settings: ninjazero_data::GameSettings::Synthetic,
        seed: 0,
        model_id: "random".to_string(),
    };
    // One file, or (as a killed and resumed self-play would) two, the later games first.
    for (target, groups) in [
        (&one, vec![&games[..]]),
        (&split, vec![&games[4..], &games[..4]]),
    ] {
        for group in groups {
            let mut writer = DatasetWriter::create(target, meta.clone(), 10).unwrap();
            for game in group {
                writer.add_game(game.clone()).unwrap();
            }
            writer.finish().unwrap();
        }
    }
    let config = TrainConfig {
        min_window: 40,
        max_window: 40,
        ..config(3)
    };
    for (name, data) in [("one", &one), ("split", &split)] {
        let report = run(&TrainJob {
            data_dirs: vec![data.clone()],
            out: dir.join(format!("{name}.safetensors")),
            work_dir: dir.join(format!("work-{name}")),
            ..job(dir, config.clone())
        })
        .unwrap();
        assert_eq!(report.window_positions, 40);
    }
    assert_same_weights(&dir.join("one.safetensors"), &dir.join("split.safetensors"));
}

/// Where the machine's memory size is known (elsewhere the loader reports the failed
/// allocation instead).
#[test]
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn an_absurd_batch_size_is_an_error_not_a_panic() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let data = dir.join("data");
    write_random_games(&data, VARIANT, 2, 8, 1, 2).unwrap();
    let config = TrainConfig {
        batch_size: 100_000_000,
        ..config(2)
    };
    let err = run(&job(dir, config)).unwrap_err();
    assert!(
        matches!(
            err,
            TrainError::BatchTooLarge {
                batch_size: 100_000_000,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("batch size 100000000"), "{err}");
}

#[test]
fn outputs_are_checked_before_any_work() {
    let tmp = temp_dir();
    let dir = tmp.path();
    // No data at all: reading it would fail with NoData, so each error below comes first.
    let data = dir.join("empty");
    std::fs::create_dir_all(&data).unwrap();
    let base = TrainJob {
        data_dirs: vec![data],
        ..job(dir, config(2))
    };
    let run = |out: &Path, work: &Path| {
        let job = TrainJob {
            out: out.to_path_buf(),
            work_dir: work.to_path_buf(),
            ..base.clone()
        };
        run(&job).unwrap_err()
    };

    let out_dir = dir.join("models");
    std::fs::create_dir_all(&out_dir).unwrap();
    let work = dir.join("work");
    let err = run(&out_dir, &work);
    assert!(
        matches!(&err, TrainError::BadPath { path, .. } if path == &out_dir),
        "{err}"
    );
    assert!(err.to_string().contains("is a directory"), "{err}");
    assert!(!work.exists(), "nothing was done");

    // A work directory (or the output's directory) that cannot be created: under a file.
    let file = dir.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let bad_work = file.join("work");
    let err = run(&dir.join("out.safetensors"), &bad_work);
    assert!(
        matches!(&err, TrainError::Io { path, .. } if path == &bad_work),
        "{err}"
    );
    let bad_out = file.join("out.safetensors");
    let err = run(&bad_out, &work);
    assert!(
        matches!(&err, TrainError::Io { path, .. } if path == &file),
        "{err}"
    );
    assert!(err.to_string().contains("a-file"), "{err}");

    // Valid paths: now the missing data is the error.
    let err = run(&dir.join("out.safetensors"), &work);
    assert!(matches!(err, TrainError::NoData(_)), "{err}");
}

#[test]
fn the_material_head_learns_its_target_and_a_network_without_it_is_refused() {
    let tmp = temp_dir();
    let dir = tmp.path();
    // Random games long enough for pieces to change hands.
    write_random_games(&dir.join("data"), VARIANT, 4, 60, 3, 4).unwrap();
    let config = TrainConfig {
        material_plies: 4,
        schedule: Schedule::Constant,
        ..config(60)
    };
    let refused = run(&job(dir, config.clone())).unwrap_err();
    assert!(
        matches!(&refused, TrainError::Config(m) if m.contains("model init --material-head")),
        "{refused}"
    );
    assert!(!dir.join("work").join(METRICS_FILE).exists());

    let init = dir.join("with-head.safetensors");
    let with_head = NetConfig {
        material_head: true,
        ..Preset::Tiny.config()
    };
    Model::seeded(VARIANT, &with_head, Device::Cpu, 7)
        .save(&init)
        .unwrap();
    let job = TrainJob {
        init,
        ..job(dir, config)
    };
    let report = run(&job).unwrap();
    let losses: Vec<f64> = read_metrics(&job.work_dir.join(METRICS_FILE))
        .iter()
        .map(|r| r.stats.material_loss)
        .collect();
    let mean = |part: &[f64]| part.iter().sum::<f64>() / part.len() as f64;
    let (first, last) = (mean(&losses[..10]), mean(&losses[50..]));
    assert!(first > 0.0, "the games hold captures: {losses:?}");
    assert!(last < 0.5 * first, "{first} -> {last}");
    assert!((report.final_material_loss - mean(&losses[50..])).abs() < 1e-9);
    // The trained network keeps its head, and plays as any other.
    let trained = Model::load(&job.out, Some(VARIANT), Device::Cpu).unwrap();
    assert!(trained.net.config.material_head);
}
