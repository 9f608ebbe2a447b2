//! Encoding, policy map, network, checkpoints and the PyTorch reference.

use ninjazero_model::{
    decode_move, move_index, policy_len, BoardShape, EvalRequest, Evaluation, Evaluator, Model,
    ModelError, NetConfig, NetworkEvaluator, Preset, UniformEvaluator, PER_THREAD_AT_LEAST,
};
use ninjazero_rules::{MoveKind, Position, Variant};
use ninjazero_testkit::{outcome, random_positions, temp_dir, venv_python};
use std::collections::HashSet;
use std::path::Path;
use tch::{Device, Tensor};

#[test]
fn every_legal_move_has_its_own_policy_index_and_decodes_back() {
    for variant in Variant::ALL {
        let shape = BoardShape::of(variant);
        let mut special = HashSet::new();
        let positions = random_positions(variant, 40, 20..160, 7);
        assert!(
            positions.len() > 2000,
            "{variant}: {} positions",
            positions.len()
        );
        for pos in &positions {
            let moves = pos.legal_moves();
            let mut seen = HashSet::new();
            for &m in &moves {
                let index = move_index(&shape, pos, m);
                assert!(index < policy_len(&shape), "{variant} {m}");
                assert!(
                    seen.insert(index),
                    "{variant}: two moves share index {index} in {pos:?}"
                );
                assert_eq!(decode_move(&shape, pos, index), Some(m), "{variant} {m}");
                special.insert(std::mem::discriminant(&m.kind));
            }
        }
        let castles = std::mem::discriminant(&MoveKind::Castle {
            rook: "a1".parse().unwrap(),
        });
        assert_eq!(
            special.contains(&castles),
            variant != Variant::Ninjutsu,
            "{variant}"
        );
        let drops = std::mem::discriminant(&MoveKind::Drop);
        assert_eq!(
            special.contains(&drops),
            variant == Variant::InsaneNinjaDrops,
            "{variant}"
        );
    }
}

fn evaluate(evaluator: &mut dyn Evaluator, positions: &[Position]) -> Vec<Evaluation> {
    let moves: Vec<_> = positions.iter().map(|p| p.legal_moves()).collect();
    let requests = EvalRequest::first_occurrences(positions, &moves);
    let mut out = vec![Evaluation::default(); requests.len()];
    evaluator.evaluate(&requests, &mut out);
    out
}

#[test]
fn network_priors_cover_the_legal_moves_and_sum_to_one() {
    let variant = Variant::AsylumFriendlyFire;
    let positions = random_positions(variant, 2, 20..160, 3);
    let mut evaluator =
        NetworkEvaluator::new(Model::new(variant, &Preset::Tiny.config(), Device::Cpu));
    let results = evaluate(&mut evaluator, &positions[..16]);
    for (pos, result) in positions.iter().zip(&results) {
        assert_eq!(result.priors.len(), pos.legal_moves().len());
        let sum: f32 = result.priors.iter().sum();
        assert!((sum - 1.0).abs() < 1e-4, "priors sum to {sum}");
        assert!(result.priors.iter().all(|&p| p > 0.0));
        let wdl: f32 = result.wdl.iter().sum();
        assert!((wdl - 1.0).abs() < 1e-4);
    }
    let timings = evaluator.timings();
    assert_eq!((timings.positions, timings.batches), (16, 1));

    let uniform = evaluate(&mut UniformEvaluator::default(), &positions[..4]);
    for (pos, result) in positions.iter().zip(&uniform) {
        let n = pos.legal_moves().len() as f32;
        assert!(result.priors.iter().all(|&p| (p - 1.0 / n).abs() < 1e-6));
    }
}

/// Large batches are encoded and decoded on several threads: each position must still get
/// its own priors (as many as its legal moves, in their order) and value, as it does alone.
#[test]
fn a_batch_shared_out_among_threads_gives_each_position_its_own_evaluation() {
    let variant = Variant::InsaneNinja;
    let positions = random_positions(variant, 8, 10..120, 5);
    let positions = &positions[..2 * PER_THREAD_AT_LEAST];
    let mut evaluator = NetworkEvaluator::new(trained_looking_model(variant));
    let together = evaluate(&mut evaluator, positions);
    for (pos, batched) in positions.iter().zip(&together) {
        let alone = &evaluate(&mut evaluator, std::slice::from_ref(pos))[0];
        assert_eq!(batched.priors.len(), alone.priors.len());
        let differences = batched.priors.iter().zip(&alone.priors);
        let priors = differences.map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        let values = (batched.value() - alone.value()).abs();
        assert!(
            priors < 1e-4 && values < 1e-4,
            "{priors} {values} in {pos:?}"
        );
    }
}

/// A small network with squeeze-excitation whose batch-norm statistics are not trivial.
fn trained_looking_model(variant: Variant) -> Model {
    let config = NetConfig {
        squeeze_excitation: true,
        ..Preset::Tiny.config()
    };
    let model = Model::seeded(variant, &config, Device::Cpu, 11);
    let shape = model.net.shape;
    // Varied inputs not drawn from libtorch's process-wide generator, which tests running
    // beside this one rely on.
    let dims = shape.input_dims(8);
    let count = dims.iter().product::<i64>();
    let xs = Tensor::arange(count, (tch::Kind::Float, Device::Cpu))
        .sin()
        .abs()
        .reshape(dims);
    for _ in 0..3 {
        let _ = model.net.forward(&xs, true);
    }
    model
}

#[test]
fn folding_the_batch_norms_keeps_what_the_network_computes() {
    let config = NetConfig {
        squeeze_excitation: true,
        material_head: true,
        ..Preset::Tiny.config()
    };
    let mut model = Model::seeded(Variant::InsaneNinja, &config, Device::Cpu, 5);
    // Batch-norm scales, shifts and statistics far from their initial 1s and 0s, each
    // channel its own.
    tch::no_grad(|| {
        for (name, mut tensor) in model.vs.variables() {
            let varied = |low: f64, high: f64| {
                let n = tensor.size()[0];
                let unit = (Tensor::arange(n, (tch::Kind::Float, Device::Cpu)) * 0.7)
                    .sin()
                    .abs();
                unit * (high - low) + low
            };
            let value = match name.rsplit('.').next() {
                Some("running_var") => varied(0.2, 3.0),
                Some("running_mean") => varied(-1.0, 1.0),
                Some("weight") if name.contains(".bn.") => varied(0.3, 2.0),
                Some("bias") if name.contains(".bn.") => varied(-0.5, 0.5),
                _ => continue,
            };
            tensor.copy_(&value);
        }
    });
    let dims = model.net.shape.input_dims(3);
    let count = dims.iter().product::<i64>();
    let xs = (Tensor::arange(count, (tch::Kind::Float, Device::Cpu)) * 0.37)
        .cos()
        .abs()
        .reshape(dims);
    let outputs = |model: &Model| {
        let (policy, wdl, material) = tch::no_grad(|| model.net.forward_with_material(&xs, false));
        [policy, wdl, material.unwrap()]
    };
    let before = outputs(&model);
    model.net.fold_batch_norms();
    let after = outputs(&model);
    for (name, (a, b)) in ["policy", "wdl", "material"]
        .iter()
        .zip(before.iter().zip(&after))
    {
        let scale = a.abs().max().double_value(&[]);
        let difference = (a - b).abs().max().double_value(&[]);
        assert!(scale > 0.1, "{name} outputs are all near 0: a weak test");
        assert!(
            difference < 1e-4 * scale,
            "{name} differs by {difference} (scale {scale})"
        );
    }
}

#[test]
fn a_seeded_network_is_the_same_while_other_threads_build_networks() {
    let config = Preset::Tiny.config();
    let parameters = |model: &Model| -> Vec<(String, Vec<f32>)> {
        let mut named = model.vs.variables().into_iter().collect::<Vec<_>>();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        let values = |t: &Tensor| Vec::<f32>::try_from(t.flatten(0, -1)).unwrap();
        named
            .iter()
            .map(|(name, t)| (name.clone(), values(t)))
            .collect()
    };
    let reference = parameters(&Model::seeded(
        Variant::InsaneNinja,
        &config,
        Device::Cpu,
        3,
    ));
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..8 {
                    let _unseeded = Model::new(Variant::InsaneNinja, &config, Device::Cpu);
                    let seeded = Model::seeded(Variant::InsaneNinja, &config, Device::Cpu, 3);
                    assert!(
                        parameters(&seeded) == reference,
                        "a network seeded with 3 came out otherwise"
                    );
                }
            });
        }
    });
}

#[test]
fn checkpoints_round_trip_and_refuse_the_wrong_variant() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let path = dir.join("gen-0001.safetensors");
    let variant = Variant::Ninjutsu;
    let model = trained_looking_model(variant);
    model.save(&path).unwrap();
    let loaded = Model::load(&path, Some(variant), Device::Cpu).unwrap();
    assert_eq!(loaded.meta, model.meta);
    let positions = random_positions(variant, 1, 20..160, 5);
    let a = evaluate(&mut NetworkEvaluator::new(model), &positions[..8]);
    let b = evaluate(&mut NetworkEvaluator::new(loaded), &positions[..8]);
    assert_eq!(a, b);

    let wrong = Model::load(&path, Some(Variant::Chess), Device::Cpu).unwrap_err();
    assert!(matches!(wrong, ModelError::WrongVariant { .. }), "{wrong}");
    assert!(wrong.to_string().contains("ninjutsu"), "{wrong}");

    let sidecar = dir.join("gen-0001.json");
    let text = std::fs::read_to_string(&sidecar).unwrap();
    std::fs::write(
        &sidecar,
        text.replace("\"encoding_version\": 1", "\"encoding_version\": 99"),
    )
    .unwrap();
    let old = Model::load(&path, None, Device::Cpu).unwrap_err();
    assert!(
        matches!(old, ModelError::WrongEncoding { found: 99, .. }),
        "{old}"
    );
    std::fs::write(&sidecar, "{ not json").unwrap();
    let corrupt = Model::load(&path, None, Device::Cpu).unwrap_err();
    assert!(corrupt.to_string().contains("gen-0001.json"), "{corrupt}");
}

/// Each load error names the file the user gave once and says in words what is wrong,
/// with no libtorch backtrace.
#[test]
fn checkpoint_errors_name_the_file_once_and_say_what_is_wrong() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let load = |name: &str, variant| {
        let path = dir.join(name);
        let error = Model::load(&path, variant, Device::Cpu)
            .expect_err(name)
            .to_string();
        (path.display().to_string(), error)
    };
    let model = Model::new(Variant::InsaneNinja, &Preset::Tiny.config(), Device::Cpu);
    for name in ["good", "bad", "folder", "pickle"] {
        model
            .save(&dir.join(format!("{name}.safetensors")))
            .unwrap();
    }
    // A missing checkpoint is named, not the sidecar it would have.
    let (path, error) = load("nothing.safetensors", None);
    assert!(error.starts_with(&path), "{error}");
    assert!(!error.contains("nothing.json"), "{error}");
    let (path, error) = load("good.safetensors", Some(Variant::Chess));
    assert_eq!(
        error,
        format!("{path} is an insane-ninja model, but chess was asked for")
    );
    // Not safetensors at all (the first 8 bytes read as a header length of 2^64 - 1).
    std::fs::write(dir.join("bad.safetensors"), [0xff; 64]).unwrap();
    let (path, error) = load("bad.safetensors", None);
    assert_eq!(
        error,
        format!("{path}: not a safetensors checkpoint (header too large)")
    );
    let folder = dir.join("folder.safetensors");
    std::fs::remove_file(&folder).unwrap();
    std::fs::create_dir(&folder).unwrap();
    let (path, error) = load("folder.safetensors", None);
    assert_eq!(
        error,
        format!("{path} is a directory, not a checkpoint file")
    );
    // Another extension goes to libtorch's own (C++) reader, whose errors carry a
    // backtrace: only its first line is shown (pickle.json is the sidecar saved above).
    std::fs::write(dir.join("pickle.pt"), b"not a torch file").unwrap();
    let (path, error) = load("pickle.pt", None);
    assert!(error.starts_with(&format!("{path}: ")), "{error}");
    assert_eq!(error.lines().count(), 1, "{error}");
    assert!(
        !error.contains("Exception raised from") && !error.contains("frame #"),
        "{error}"
    );
    // The sidecar is named only when the checkpoint is there and the sidecar is not.
    std::fs::remove_file(dir.join("good.json")).unwrap();
    let (path, error) = load("good.safetensors", None);
    let sidecar = dir.join("good.json").display().to_string();
    assert_eq!(
        error,
        format!("{path} has no sidecar: {sidecar} is missing (every checkpoint is saved with one)")
    );
}

/// A sidecar is checked before a network is built from it: an architecture no network can
/// have (libtorch would panic, or abort allocating terabytes) and board or policy sizes that
/// are not the variant's encoding's (`model info` would print them as fact) are refused,
/// naming the sidecar and the field.
#[test]
fn sidecars_with_impossible_or_false_numbers_are_refused() {
    let tmp = temp_dir();
    let path = tmp.path().join("x.safetensors");
    let sidecar = tmp.path().join("x.json");
    let model = Model::new(Variant::InsaneNinja, &Preset::Tiny.config(), Device::Cpu);
    model.save(&path).unwrap();
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sidecar).unwrap()).unwrap();
    let refusal = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut file = saved.clone();
        edit(&mut file);
        std::fs::write(&sidecar, file.to_string()).unwrap();
        Model::load(&path, None, Device::Cpu)
            .unwrap_err()
            .to_string()
    };
    let policy = policy_len(&BoardShape::of(Variant::InsaneNinja));
    type Edit<'a> = &'a dyn Fn(&mut serde_json::Value);
    let cases: [(Edit, String); 11] = [
        (
            &|f| f["architecture"]["channels"] = 0.into(),
            "architecture channels must be 1 to 1024, got 0".into(),
        ),
        (
            &|f| f["architecture"]["channels"] = (-1).into(),
            "architecture channels must be 1 to 1024, got -1".into(),
        ),
        (
            &|f| f["architecture"]["blocks"] = 2_000_000_000.into(),
            "architecture blocks must be 1 to 64, got 2000000000".into(),
        ),
        (
            &|f| f["architecture"]["blocks"] = 0.into(),
            "architecture blocks must be 1 to 64, got 0".into(),
        ),
        (
            &|f| f["architecture"]["value_channels"] = 257.into(),
            "architecture value_channels must be 1 to 256, got 257".into(),
        ),
        (
            &|f| f["architecture"]["value_hidden"] = 0.into(),
            "architecture value_hidden must be 1 to 1024, got 0".into(),
        ),
        (
            &|f| {
                f["architecture"]["squeeze_excitation"] = true.into();
                f["architecture"]["channels"] = 2.into();
            },
            "architecture with squeeze_excitation needs at least 4 channels, got 2".into(),
        ),
        (
            &|f| f["policy_len"] = 99_999_999_999u64.into(),
            format!("says policy_len 99999999999, but insane-ninja's encoding has {policy}"),
        ),
        (
            &|f| f["board_height"] = 0.into(),
            "says board_height 0, but insane-ninja's encoding has 12".into(),
        ),
        (
            &|f| f["board_width"] = 8.into(),
            "says board_width 8, but insane-ninja's encoding has 10".into(),
        ),
        (
            &|f| f["input_planes"] = 41.into(),
            "says input_planes 41, but insane-ninja's encoding has 42".into(),
        ),
    ];
    let name = sidecar.display();
    for (edit, reason) in cases {
        let separator = if reason.starts_with("says") {
            " "
        } else {
            ": "
        };
        assert_eq!(refusal(edit), format!("{name}{separator}{reason}"));
    }
    // The untouched sidecar still loads.
    std::fs::write(&sidecar, saved.to_string()).unwrap();
    Model::load(&path, Some(Variant::InsaneNinja), Device::Cpu).unwrap();
}

/// The same checkpoint and inputs in plain PyTorch give the same outputs (within 1e-5).
#[test]
fn pytorch_reference_reproduces_the_outputs() {
    let python = venv_python();
    let tmp = temp_dir();
    let dir = tmp.path();
    let variant = Variant::InsaneNinjaDrops;
    let model = trained_looking_model(variant);
    let checkpoint = dir.join("model.safetensors");
    model.save(&checkpoint).unwrap();

    let shape = model.net.shape;
    let positions = random_positions(variant, 1, 20..160, 9);
    let mut input = vec![0.0f32; 12 * shape.input_len()];
    for (pos, slot) in positions
        .iter()
        .zip(input.chunks_exact_mut(shape.input_len()))
    {
        ninjazero_model::encode_position(&shape, pos, 1, slot);
    }
    let xs = Tensor::from_slice(&input).view(shape.input_dims(12));
    let (policy, wdl) = tch::no_grad(|| model.net.forward(&xs, false));
    let io = dir.join("io.safetensors");
    Tensor::write_safetensors(&[("input", &xs), ("policy", &policy), ("wdl", &wdl)], &io).unwrap();

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/reference_net.py");
    let (ok, report) = outcome(
        std::process::Command::new(&python)
            .arg(script)
            .args(["parity", "--checkpoint"])
            .arg(&checkpoint)
            .arg("--io")
            .arg(&io)
            .output()
            .unwrap(),
    );
    assert!(ok, "reference_net.py parity failed:\n{report}");
    assert!(report.contains("max abs difference"), "{report}");
}
